//===- StubTest.cpp - The runtime library over the libcuda stub -----------===//
//
// Calls every C entry point of libjoint_cuda_runtime.so with the toolkit's
// libcuda stub loaded (every driver call returns CUDA_ERROR_STUB_LIBRARY, 34)
// and prints, per entry point, the status and the recorded error, which must
// name the entry point and the failing driver call. Exits non-zero when an
// entry point leaves the status at 0.
//
//===----------------------------------------------------------------------===//

#include "joint_cuda_runtime.h"

#include <cstdio>
#include <cstring>

extern "C" {
void *mgpuModuleLoad(void *data, size_t bytes);
void *mgpuModuleLoadJIT(void *data, int optLevel);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *fn, intptr_t gx, intptr_t gy, intptr_t gz,
                      intptr_t bx, intptr_t by, intptr_t bz, int32_t smem,
                      void *stream, void **params, void **extra, size_t count);
void mgpuLaunchClusterKernel(void *fn, intptr_t cx, intptr_t cy, intptr_t cz,
                             intptr_t gx, intptr_t gy, intptr_t gz, intptr_t bx,
                             intptr_t by, intptr_t bz, int32_t smem,
                             void *stream, void **params, void **extra);
void *mgpuStreamCreate();
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void mgpuStreamWaitEvent(void *stream, void *event);
void *mgpuEventCreate();
void mgpuEventDestroy(void *event);
void mgpuEventRecord(void *event, void *stream);
void mgpuEventSynchronize(void *event);
void *mgpuMemAlloc(uint64_t bytes, void *stream, bool isHostShared);
void mgpuMemFree(void *ptr, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream);
void mgpuMemset32(void *dst, unsigned value, size_t count, void *stream);
void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream);
void mgpuMemHostRegister(void *ptr, uint64_t bytes);
void mgpuMemHostUnregister(void *ptr);
void mgpuSetDefaultDevice(int32_t device);
void mgpuMemHostRegisterMemRef(int64_t rank, void *desc, int64_t elemBytes);
void mgpuMemHostUnregisterMemRef(int64_t rank, void *desc, int64_t elemBytes);
}

/// A rank-2 memref descriptor as MLIR lays it out.
struct MemRef2 {
  float *base, *data;
  int64_t offset, sizes[2], strides[2];
};

namespace {

int silent = 0;

/// Prints the status and error of the call just made, then clears them.
void report(const char *what) {
  int32_t status = joint_runtime_status();
  std::printf("%s: status %d: %s\n", what, status, joint_runtime_last_error());
  if (status == 0) {
    std::printf("FAIL: %s left the status at 0\n", what);
    ++silent;
  }
  joint_runtime_clear_error();
}

} // namespace

int main() {
  // Fake handles: with the stub nothing reaches them.
  void *h = reinterpret_cast<void *>(0x1000);
  char cubin[16] = {};
  float host[4] = {};

  mgpuModuleLoad(cubin, sizeof(cubin));
  report("mgpuModuleLoad");
  mgpuModuleLoadJIT(cubin, 2);
  report("mgpuModuleLoadJIT");
  mgpuModuleUnload(h);
  report("mgpuModuleUnload");
  joint_runtime_set_node("mm_3");
  mgpuModuleGetFunction(h, "main_kernel");
  report("mgpuModuleGetFunction");
  mgpuLaunchKernel(h, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr, 0);
  report("mgpuLaunchKernel");
  mgpuLaunchClusterKernel(h, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr,
                          nullptr);
  report("mgpuLaunchClusterKernel");
  joint_runtime_set_node(nullptr);
  mgpuStreamCreate();
  report("mgpuStreamCreate");
  mgpuStreamDestroy(h);
  report("mgpuStreamDestroy");
  mgpuStreamSynchronize(h);
  report("mgpuStreamSynchronize");
  mgpuStreamWaitEvent(h, h);
  report("mgpuStreamWaitEvent");
  mgpuEventCreate();
  report("mgpuEventCreate");
  mgpuEventDestroy(h);
  report("mgpuEventDestroy");
  mgpuEventRecord(h, h);
  report("mgpuEventRecord");
  mgpuEventSynchronize(h);
  report("mgpuEventSynchronize");
  if (mgpuMemAlloc(64, h, false))
    std::printf("FAIL: mgpuMemAlloc returned a pointer\n");
  report("mgpuMemAlloc");
  mgpuMemFree(h, h);
  report("mgpuMemFree");
  mgpuMemcpy(h, h, 16, h);
  report("mgpuMemcpy");
  mgpuMemset32(h, 0, 4, h);
  report("mgpuMemset32");
  mgpuMemset16(h, 0, 4, h);
  report("mgpuMemset16");
  mgpuMemHostRegister(host, sizeof(host));
  report("mgpuMemHostRegister");
  mgpuMemHostUnregister(host);
  report("mgpuMemHostUnregister");
  float grid[6] = {};
  MemRef2 dense = {grid, grid, 0, {2, 3}, {3, 1}};
  mgpuMemHostRegisterMemRef(2, &dense, sizeof(float));
  report("mgpuMemHostRegisterMemRef");
  MemRef2 strided = {grid, grid, 0, {2, 2}, {3, 1}};
  mgpuMemHostRegisterMemRef(2, &strided, sizeof(float));
  report("mgpuMemHostRegisterMemRef of a strided memref");
  mgpuMemHostUnregisterMemRef(2, &dense, sizeof(float));
  report("mgpuMemHostUnregisterMemRef");
  uint64_t freeBytes = 1, totalBytes = 1;
  joint_runtime_mem_info(&freeBytes, &totalBytes);
  report("joint_runtime_mem_info");
  mgpuSetDefaultDevice(1);
  mgpuStreamCreate();
  report("mgpuStreamCreate on device 1");
  mgpuSetDefaultDevice(0);

  joint_runtime_compute_stream();
  report("joint_runtime_compute_stream");
  joint_runtime_transfer_stream();
  report("joint_runtime_transfer_stream");
  joint_runtime_synchronize();
  report("joint_runtime_synchronize");
  if (joint_ao_offload(h, 4096, "relu_3"))
    std::printf("FAIL: joint_ao_offload returned a handle\n");
  report("joint_ao_offload");
  joint_ao_offload(nullptr, 4096, "relu_3");
  report("joint_ao_offload of null");
  joint_ao_wait(h);
  report("joint_ao_wait");
  joint_ao_reload(h, "relu_3");
  report("joint_ao_reload");
  joint_ao_reload_into(h, h, "relu_3");
  report("joint_ao_reload_into");
  joint_ao_release(h);
  report("joint_ao_release");

  joint_cublas_gemm("mm_3", JOINT_DTYPE_BF16, 0, 0, 2, 3, 4, 1.0f, h, 4, h, 3,
                    0.0f, h, 3);
  report("joint_cublas_gemm");
  joint_cublas_gemm("mm_3", JOINT_DTYPE_BF16, 0, 1, 2, 3, 4, 1.0f, h, 4, h, 3,
                    0.0f, h, 3);
  report("joint_cublas_gemm with short ldb");
  joint_cublas_gemm("mm_3", 7, 0, 0, 2, 3, 4, 1.0f, h, 4, h, 3, 0.0f, h, 3);
  report("joint_cublas_gemm with bad dtype");
  joint_cublas_gemm("mm_4", JOINT_DTYPE_BF16_F32, 0, 0, 2, 3, 4, 1.0f, h, 4, h,
                    3, 1.0f, h, 3);
  report("joint_cublas_gemm bf16 into f32");
  joint_cublas_gemm_strided_batched("bmm_1", JOINT_DTYPE_F32, 1, 0, 2, 3, 4,
                                    1.0f, h, 2, 8, h, 3, 12, 0.0f, h, 3, 6, 5);
  report("joint_cublas_gemm_strided_batched");

  // Attention: argument checks first, then the driver (stub) fails.
  int64_t s[4] = {4 * 16 * 64, 16 * 64, 64, 1};
  float lse[4 * 16];
  std::printf("sdpa available %d\n", joint_cudnn_sdpa_available());
  joint_cudnn_sdpa_forward("sdpa_1", JOINT_DTYPE_BF16, 1, 4, 2, 16, 16, 64,
                           0.125f, 1, h, s, h, s, h, s, h, s, lse, nullptr,
                           nullptr, nullptr);
  report("joint_cudnn_sdpa_forward");
  joint_cudnn_sdpa_forward("sdpa_1", JOINT_DTYPE_F32, 1, 4, 2, 16, 16, 64,
                           0.125f, 1, h, s, h, s, h, s, h, s, lse, nullptr,
                           nullptr, nullptr);
  report("joint_cudnn_sdpa_forward in f32");
  joint_cudnn_sdpa_forward("sdpa_1", JOINT_DTYPE_BF16, 1, 4, 2, 16, 16, 72 + 1,
                           0.125f, 1, h, s, h, s, h, s, h, s, lse, nullptr,
                           nullptr, nullptr);
  report("joint_cudnn_sdpa_forward with head_dim 73");
  joint_cudnn_sdpa_forward("sdpa_1", JOINT_DTYPE_BF16, 1, 4, 3, 16, 16, 64,
                           0.125f, 1, h, s, h, s, h, s, h, s, lse, nullptr,
                           nullptr, nullptr);
  report("joint_cudnn_sdpa_forward with 4 over 3 heads");
  joint_cudnn_sdpa_backward("sdpa_1_bwd", JOINT_DTYPE_BF16, 1, 4, 2, 16, 16, 64,
                            0.125f, 1, h, s, h, s, h, s, h, s, h, s, lse, h, s,
                            h, s, h, s, nullptr, nullptr, nullptr);
  report("joint_cudnn_sdpa_backward");
  joint_cudnn_sdpa_backward("sdpa_1_bwd", JOINT_DTYPE_BF16, 1, 4, 2, 16, 16, 64,
                            0.125f, 1, h, s, h, s, h, s, h, s, h, s, nullptr, h,
                            s, h, s, h, s, nullptr, nullptr, nullptr);
  report("joint_cudnn_sdpa_backward without stats");
  // An additive mask [batch, 1, seq_q, seq_kv] (torch's float attn_mask).
  int64_t maskDims[4] = {1, 1, 16, 16}, maskStrides[4] = {256, 256, 16, 1};
  joint_cudnn_sdpa_forward("sdpa_2", JOINT_DTYPE_BF16, 1, 4, 2, 16, 16, 64,
                           0.125f, 0, h, s, h, s, h, s, h, s, lse, h, maskDims,
                           maskStrides);
  report("joint_cudnn_sdpa_forward with a mask");
  maskDims[3] = 8;
  joint_cudnn_sdpa_backward("sdpa_2_bwd", JOINT_DTYPE_BF16, 1, 4, 2, 16, 16, 64,
                            0.125f, 0, h, s, h, s, h, s, h, s, h, s, lse, h, s,
                            h, s, h, s, h, maskDims, maskStrides);
  report("joint_cudnn_sdpa_backward with a mask of 8 keys");
  joint_cudnn_sdpa_forward("sdpa_2", JOINT_DTYPE_BF16, 1, 4, 2, 16, 16, 64,
                           0.125f, 0, h, s, h, s, h, s, h, s, lse, h, nullptr,
                           maskStrides);
  report("joint_cudnn_sdpa_forward with a mask without dims");

  JointRuntimeStats stats;
  joint_runtime_get_stats(&stats);
  std::printf("live %llu peak %llu pinned %llu transfers %llu\n",
              (unsigned long long)stats.live_bytes,
              (unsigned long long)stats.peak_bytes,
              (unsigned long long)stats.pinned_fresh_allocations,
              (unsigned long long)stats.live_transfers);
  std::printf("shutdown status %d\n", joint_runtime_shutdown());
  std::printf("%s\n", silent ? "FAILED" : "PASSED");
  return silent ? 1 : 0;
}

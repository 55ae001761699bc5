//===- EmulatedCApiTest.cpp - The C ABI on the emulated device ------------===//
//
// Runs a tiny offload/reload round trip, one kernel, one race (an offload
// without its wait) and the library shims' CPU references through the C ABI of
// libjoint_cuda_runtime.so (mgpu*, joint_ao_*, joint_cublas_*, joint_cudnn_*,
// joint_emu_*) as the lowered step would, for lit to run with
// JOINT_CUDA_DEVICE=emulated and the libcuda stub loaded: any call that
// reached libcuda would fail with CUDA_ERROR_STUB_LIBRARY, so a zero status
// proves the emulated path never calls the driver. Prints values and
// counters; exits non-zero on a wrong value or an unexpected status.
//
//===----------------------------------------------------------------------===//

#include "joint_cuda_emulator.h"
#include "joint_cuda_runtime.h"

#include <cstdio>
#include <vector>

extern "C" {
void *mgpuModuleLoad(void *data, size_t bytes);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *fn, intptr_t gx, intptr_t gy, intptr_t gz,
                      intptr_t bx, intptr_t by, intptr_t bz, int32_t smem,
                      void *stream, void **params, void **extra, size_t count);
void *mgpuStreamCreate();
void mgpuStreamSynchronize(void *stream);
void *mgpuMemAlloc(uint64_t bytes, void *stream, bool isHostShared);
void mgpuMemFree(void *ptr, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream);
void mgpuMemset32(void *dst, unsigned value, size_t count, void *stream);
}

namespace {

/// x[i] += 1 for i < n.
void increment(void **params, const JointEmuLaunch *l) {
  float *x = *static_cast<float **>(params[0]);
  uint64_t n = *static_cast<uint64_t *>(params[1]);
  uint64_t i = uint64_t(l->block_idx[0]) * l->block_dim[0] + l->thread_idx[0];
  if (i < n)
    x[i] += 1.0f;
}

const JointEmuKernel kKernels[] = {{"increment", increment, "p8", 0}};
const JointEmuModuleImage kImage = {JOINT_EMU_IMAGE_MAGIC,
                                    JOINT_EMU_IMAGE_VERSION, 1, kKernels};

int bad = 0;

void status(const char *what) {
  int32_t s = joint_runtime_status();
  std::printf("%s: status %d %s\n", what, s, joint_runtime_last_error());
  bad += s != 0;
}

} // namespace

int main() {
  int32_t active = joint_emu_active();
  std::printf("emulated %d, status %d %s\n", active, joint_runtime_status(),
              joint_runtime_last_error());
  joint_runtime_clear_error();
  const uint64_t n = 1000;
  std::vector<float> host(n);
  for (uint64_t i = 0; i < n; ++i)
    host[i] = float(i);

  void *stream = mgpuStreamCreate();
  joint_runtime_set_node("input");
  auto *x = static_cast<float *>(mgpuMemAlloc(n * 4, stream, false));
  mgpuMemcpy(x, host.data(), n * 4, stream);
  void *module = mgpuModuleLoad(const_cast<JointEmuModuleImage *>(&kImage),
                                sizeof(kImage));
  void *fn = mgpuModuleGetFunction(module, "increment");
  uint64_t count = n;
  void *params[] = {&x, &count};
  joint_runtime_set_node("add_1");
  mgpuLaunchKernel(fn, 8, 1, 1, 128, 1, 1, 0, stream, params, nullptr, 2);

  // ao.offload, the forward wait, the source's last use (a free), then the
  // reload into the step's own allocation and the backward wait.
  void *t = joint_ao_offload(x, n * 4, "add_1");
  joint_ao_wait(t);
  mgpuMemset32(x, 0, n, stream);
  mgpuMemFree(x, stream);
  auto *y = static_cast<float *>(mgpuMemAlloc(n * 4, stream, false));
  joint_ao_reload_into(t, y, "add_1_reload");
  joint_ao_wait(t);
  joint_ao_release(t);
  std::vector<float> back(n, -1.0f);
  mgpuMemcpy(back.data(), y, n * 4, stream);
  mgpuStreamSynchronize(stream);
  status("round trip");
  int wrong = 0;
  for (uint64_t i = 0; i < n; ++i)
    wrong += back[i] != float(i) + 1.0f;
  std::printf("values %g %g %g, wrong %d\n", back[0], back[1], back[n - 1],
              wrong);

  // The same offload without the forward wait: the overwrite races with the
  // D2H copy, and the status says so.
  joint_runtime_set_node("add_2");
  void *t2 = joint_ao_offload(y, n * 4, "add_2");
  joint_runtime_set_node("zero_3");
  mgpuMemset32(y, 0, n, stream);
  std::printf("no wait: status %d %s\n", joint_runtime_status(),
              joint_runtime_last_error());
  bad += joint_runtime_status() != JOINT_STATUS_DEVICE_CHECK;
  joint_runtime_clear_error();
  joint_ao_release(t2);
  mgpuStreamSynchronize(stream);
  joint_runtime_synchronize();
  mgpuMemFree(y, stream);
  mgpuModuleUnload(module);

  JointRuntimeStats rs;
  joint_runtime_get_stats(&rs);
  JointEmuStats es;
  joint_emu_get_stats(&es);
  std::printf("runtime peak %llu live %llu transfers %llu\n",
              (unsigned long long)rs.peak_bytes,
              (unsigned long long)rs.live_bytes,
              (unsigned long long)rs.live_transfers);
  std::printf("emulator peak %llu live %llu kernels %llu copies %llu races "
              "%llu\n",
              (unsigned long long)es.peak_bytes,
              (unsigned long long)es.live_bytes,
              (unsigned long long)es.kernel_launches,
              (unsigned long long)es.copies, (unsigned long long)es.races);
  // The two offloads and the reload ran on the transfer stream, the
  // argument and result copies on the compute stream.
  std::printf(
      "copies on the transfer stream %lld, on the compute stream "
      "%lld\n",
      (long long)joint_emu_stream_copies(joint_runtime_transfer_stream()),
      (long long)joint_emu_stream_copies(stream));
  // A caller's output buffer counts from its first write.
  void *z = mgpuMemAlloc(4096, stream, false);
  int32_t inside = joint_emu_count_from_first_write(static_cast<char *>(z) + 4);
  int32_t lazy = joint_emu_count_from_first_write(z);
  JointEmuStats unwritten, written;
  joint_emu_get_stats(&unwritten);
  mgpuMemset32(z, 0, 1024, stream);
  joint_emu_get_stats(&written);
  mgpuMemFree(z, stream);
  mgpuStreamSynchronize(stream);
  std::printf("from first write: %d (inside: %d), live %llu, after the "
              "write %llu\n",
              lazy, inside, (unsigned long long)unwritten.live_bytes,
              (unsigned long long)written.live_bytes);
  // The library shims run their CPU references on the emulated device:
  // a bf16 GEMM [1, 2] x [2, 2] into f32 and a bf16 SDPA of one query on
  // one key (its output is the value row), without libcuda.
  std::vector<uint16_t> ab = {0x3f80, 0x4000, 0x3f80, 0x4040, 0x4080, 0x40a0};
  auto *dab = static_cast<uint16_t *>(mgpuMemAlloc(12, stream, false));
  auto *dc = static_cast<float *>(mgpuMemAlloc(8, stream, false));
  mgpuMemcpy(dab, ab.data(), 12, stream);
  joint_cublas_gemm("mm_2", JOINT_DTYPE_BF16_F32, 0, 0, 1, 2, 2, 1.0f, dab, 2,
                    dab + 2, 2, 0.0f, dc, 2);
  float c[2] = {0, 0};
  mgpuMemcpy(c, dc, 8, stream);
  mgpuStreamSynchronize(stream);
  std::printf("gemm: status %d %s, c %g %g\n", joint_runtime_status(),
              joint_runtime_last_error(), c[0], c[1]);
  bad += joint_runtime_status() != 0 || c[0] != 9.0f || c[1] != 13.0f;
  joint_runtime_clear_error();
  std::vector<uint16_t> qkv(24, 0x3f80); // q, k, v: 8 ones each
  for (int d = 0; d < 8; ++d)
    qkv[16 + d] = uint16_t(0x4000 + 0x10 * d); // v = 2, 2.25, ..., 3.75
  auto *dqkv = static_cast<uint16_t *>(mgpuMemAlloc(48, stream, false));
  auto *dout = static_cast<uint16_t *>(mgpuMemAlloc(16, stream, false));
  auto *dstats = static_cast<float *>(mgpuMemAlloc(4, stream, false));
  mgpuMemcpy(dqkv, qkv.data(), 48, stream);
  int64_t strides[4] = {8, 8, 8, 1};
  joint_cudnn_sdpa_forward("sdpa_3", JOINT_DTYPE_BF16, 1, 1, 1, 1, 1, 8, 0.5f,
                           1, dqkv, strides, dqkv + 8, strides, dqkv + 16,
                           strides, dout, strides, dstats, nullptr, nullptr,
                           nullptr);
  std::vector<uint16_t> out(8);
  float lse = 0;
  mgpuMemcpy(out.data(), dout, 16, stream);
  mgpuMemcpy(&lse, dstats, 4, stream);
  mgpuStreamSynchronize(stream);
  std::printf("sdpa: status %d %s, out", joint_runtime_status(),
              joint_runtime_last_error());
  for (uint16_t h : out)
    std::printf(" %04x", h);
  std::printf(", lse %g\n", lse);
  bad += joint_runtime_status() != 0 ||
         out != std::vector<uint16_t>(qkv.begin() + 16, qkv.end());
  joint_runtime_clear_error();
  for (void *p : {static_cast<void *>(dab), static_cast<void *>(dc),
                  static_cast<void *>(dqkv), static_cast<void *>(dout),
                  static_cast<void *>(dstats)})
    mgpuMemFree(p, stream);
  joint_emu_get_stats(&es);
  std::printf("library calls %llu\n", (unsigned long long)es.library_calls);
  std::printf("shutdown status %d\n", joint_runtime_shutdown());
  bad += wrong != 0;
  std::printf("%s\n", bad ? "FAILED" : "PASSED");
  return bad ? 1 : 0;
}

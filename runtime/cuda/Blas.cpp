//===- Blas.cpp - cuBLAS GEMM shim on the compute stream ------------------===//
//
// joint_cublas_gemm and its strided-batched form: row-major GEMMs as torch
// writes them, run by cublasGemmEx / cublasGemmStridedBatchedEx on the
// runtime's compute stream. A row-major C = op(A) op(B) is the column-major
// C^T = op(B)^T op(A)^T, so the operands swap and no copy is made. bf16 and
// f16 accumulate in f32 (CUBLAS_COMPUTE_32F), as torch's at::cuda::blas
// does; f32 uses the default math mode (no TF32), torch's default for
// matmul. One cuBLAS handle per device, created on first use. The argument
// checks, and the CPU reference that runs instead on the emulated device,
// are shared with the runtime core (Libraries.h).
//
//===----------------------------------------------------------------------===//

#include "Global.h"
#include "Libraries.h"
#include "joint_cuda_runtime.h"

#include <cublas_v2.h>

#include <map>

using namespace joint::cuda;

namespace {

/// cuBLAS's workspace per handle: torch's default on Hopper
/// (CUBLAS_WORKSPACE_CONFIG=:4096:8, 8 x 4 MiB), allocated by the runtime so
/// that it counts in the device peak as it does in torch's allocator.
constexpr uint64_t kWorkspaceBytes = 32ull << 20;

struct BlasHandle {
  cublasHandle_t handle = nullptr;
  void *workspace = nullptr;
};

std::map<int, BlasHandle> &handles() {
  static std::map<int, BlasHandle> perDevice;
  return perDevice;
}

std::string blasFailure(const char *call, cublasStatus_t status) {
  return std::string(call) + " failed: " + cublasGetStatusName(status) + " (" +
         std::to_string(static_cast<int>(status)) + ")";
}

cudaDataType_t dataType(int32_t dtype) {
  switch (dtype) {
  case JOINT_DTYPE_BF16:
  case JOINT_DTYPE_BF16_F32:
    return CUDA_R_16BF;
  case JOINT_DTYPE_F16:
  case JOINT_DTYPE_F16_F32:
    return CUDA_R_16F;
  default:
    return CUDA_R_32F;
  }
}

/// cublasGemmEx / cublasGemmStridedBatchedEx on the compute stream
/// (arguments already checked, product not empty).
int32_t cublasGemm(Runtime &rt, const GemmArgs &g) {
  Runtime::ContextScope scope(rt, g.entry);
  if (!scope)
    return rt.status();
  CUstream stream = rt.computeStream();
  if (!stream)
    return rt.status();
  BlasHandle &blas = handles()[rt.defaultDevice()];
  if (!blas.handle) {
    cublasStatus_t status = cublasCreate(&blas.handle);
    if (status != CUBLAS_STATUS_SUCCESS) {
      blas.handle = nullptr;
      rt.recordError(kStatusBlasFailure, g.entry,
                     blasFailure("cublasCreate", status));
      return rt.status();
    }
    blas.workspace = rt.memAlloc(kWorkspaceBytes, stream, false);
    if (!blas.workspace)
      return rt.status();
    status = cublasSetWorkspace(blas.handle, blas.workspace, kWorkspaceBytes);
    if (status != CUBLAS_STATUS_SUCCESS) {
      rt.recordError(kStatusBlasFailure, g.entry,
                     blasFailure("cublasSetWorkspace", status));
      return rt.status();
    }
  }
  cublasHandle_t handle = blas.handle;
  // CUstream and cudaStream_t are the same handle type.
  cublasStatus_t status =
      cublasSetStream(handle, reinterpret_cast<cudaStream_t>(stream));
  if (status != CUBLAS_STATUS_SUCCESS) {
    rt.recordError(kStatusBlasFailure, g.entry,
                   blasFailure("cublasSetStream", status));
    return rt.status();
  }
  cudaDataType_t type = dataType(g.dtype);
  // Mixed forms: 16-bit A and B into an f32 C (the lowering's accumulator).
  cudaDataType_t typeC =
      g.dtype == JOINT_DTYPE_BF16_F32 || g.dtype == JOINT_DTYPE_F16_F32
          ? CUDA_R_32F
          : type;
  cublasOperation_t opA = g.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = g.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  const char *call = "cublasGemmEx";
  if (g.batch == 1) {
    status = cublasGemmEx(handle, opB, opA, g.n, g.m, g.k, &g.alpha, g.b, type,
                          g.ldb, g.a, type, g.lda, &g.beta, g.c, typeC, g.ldc,
                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  } else {
    call = "cublasGemmStridedBatchedEx";
    status = cublasGemmStridedBatchedEx(
        handle, opB, opA, g.n, g.m, g.k, &g.alpha, g.b, type, g.ldb, g.strideB,
        g.a, type, g.lda, g.strideA, &g.beta, g.c, typeC, g.ldc, g.strideC,
        g.batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  }
  if (status != CUBLAS_STATUS_SUCCESS) {
    rt.recordError(kStatusBlasFailure, g.entry, blasFailure(call, status),
                   ", m=" + std::to_string(g.m) + " n=" + std::to_string(g.n) +
                       " k=" + std::to_string(g.k));
    return rt.status();
  }
  return kStatusOk;
}

int32_t gemm(const GemmArgs &g, const char *node) {
  GlobalLock rt;
  return runGemm(*rt, g, node, cublasGemm);
}

} // namespace

void joint::cuda::shutdownBlas(Runtime &rt) {
  int saved = rt.defaultDevice();
  for (auto &[device, blas] : handles()) {
    rt.setDefaultDevice(device);
    Runtime::ContextScope scope(rt, "joint_runtime_shutdown");
    if (!scope)
      continue;
    cublasStatus_t status = cublasDestroy(blas.handle);
    if (status != CUBLAS_STATUS_SUCCESS)
      rt.recordError(kStatusBlasFailure, "joint_runtime_shutdown",
                     blasFailure("cublasDestroy", status));
    rt.memFree(blas.workspace, nullptr);
  }
  handles().clear();
  rt.setDefaultDevice(saved);
}

extern "C" __attribute__((visibility("default"))) int32_t
joint_cublas_gemm(const char *node, int32_t dtype, int32_t trans_a,
                  int32_t trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                  const void *a, int64_t lda, const void *b, int64_t ldb,
                  float beta, void *c, int64_t ldc) {
  GemmArgs g{"joint_cublas_gemm",
             dtype,
             trans_a != 0,
             trans_b != 0,
             m,
             n,
             k,
             a,
             b,
             c,
             lda,
             ldb,
             ldc,
             alpha,
             beta};
  return gemm(g, node);
}

extern "C" __attribute__((visibility("default"))) int32_t
joint_cublas_gemm_strided_batched(const char *node, int32_t dtype,
                                  int32_t trans_a, int32_t trans_b, int64_t m,
                                  int64_t n, int64_t k, float alpha,
                                  const void *a, int64_t lda, int64_t stride_a,
                                  const void *b, int64_t ldb, int64_t stride_b,
                                  float beta, void *c, int64_t ldc,
                                  int64_t stride_c, int64_t batch) {
  GemmArgs g{"joint_cublas_gemm_strided_batched",
             dtype,
             trans_a != 0,
             trans_b != 0,
             m,
             n,
             k,
             a,
             b,
             c,
             lda,
             ldb,
             ldc,
             alpha,
             beta,
             stride_a,
             stride_b,
             stride_c,
             batch};
  return gemm(g, node);
}

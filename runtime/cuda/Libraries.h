//===- Libraries.h - Arguments and dispatch of the shims --------*- C++ -*-===//
//
// The cuBLAS GEMM and cuDNN SDPA shims (Blas.cpp, Attention.cpp) share one
// path with the emulated device: the node is named, the arguments are checked
// (the first violation is recorded as JOINT_STATUS_INVALID_ARGUMENT, before
// any driver call), and then either the library runs on the GPU (the shim's
// `onDevice`) or, on the emulated device, a CPU reference runs as stream work
// on the compute stream (EmulatedLibraries.cpp). Both live in the runtime
// core, so the emulator's tests run the same checks as the real library.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_RUNTIME_CUDA_LIBRARIES_H
#define JOINT_RUNTIME_CUDA_LIBRARIES_H

#include "Runtime.h"

#include <cstdint>
#include <string>

namespace joint::cuda {

/// One row-major GEMM as the shim takes it: C[m, n] = alpha op(A) op(B) +
/// beta C, op(A) = A[m, k] or (trans_a) the transpose of A[k, m], likewise
/// B; `ld*` are row strides and `stride*` batch strides, in elements.
struct GemmArgs {
  const char *entry;
  int32_t dtype; ///< JOINT_DTYPE_*
  bool transA, transB;
  int64_t m, n, k;
  const void *a, *b;
  void *c;
  int64_t lda, ldb, ldc;
  float alpha, beta;
  int64_t strideA = 0, strideB = 0, strideC = 0, batch = 1;
};

/// Runs the GEMM on a GPU; returns 0 or the status it recorded.
using GemmOnDevice = int32_t (*)(Runtime &rt, const GemmArgs &g);

/// Checks shapes, leading dimensions, dtype and pointers; records the first
/// violation (kStatusInvalidArgument, under `g.entry`) and returns false.
bool validateGemm(Runtime &rt, const GemmArgs &g);

/// The shims' path: names `node`, checks, returns 0 for an empty product
/// (m, n or batch 0), then runs the CPU reference on the emulated device and
/// `onDevice` otherwise. Returns 0 or the failure status.
int32_t runGemm(Runtime &rt, const GemmArgs &g, const char *node,
                GemmOnDevice onDevice);

/// Scaled dot-product attention sizes and layouts: operands [batch, heads,
/// seq, head_dim] with four element strides each (q k v o dO dQ dK dV; k, v,
/// dK, dV have `headsKV` heads).
struct SdpaArgs {
  const char *entry;
  int32_t dtype; ///< JOINT_DTYPE_BF16 or JOINT_DTYPE_F16
  int64_t batch, headsQ, headsKV, seqQ, seqKV, headDim;
  const int64_t *strides[9]; // q k v o dO dQ dK dV (unused ones null)
  float scale;
  bool causal; ///< torch's is_causal (top-left)
  /// Additive bias (torch's float attn_mask): dims [1|batch, 1|heads_q,
  /// seq_q, seq_kv] and element strides; null dims when there is none.
  const int64_t *biasDims = nullptr, *biasStrides = nullptr;
  const char *missing = nullptr; ///< first null operand or stride array
};

/// The device pointers of one SDPA call. `stats` is the f32 logsumexp
/// [batch, heads_q, seq_q] (contiguous): written by the forward (null: not
/// generated), read by the backward. The backward uses dO, dQ, dK, dV.
struct SdpaBuffers {
  const void *q = nullptr, *k = nullptr, *v = nullptr;
  void *o = nullptr; ///< written by the forward, read by the backward
  const void *dO = nullptr;
  float *stats = nullptr;
  void *dQ = nullptr, *dK = nullptr, *dV = nullptr;
  const void *bias = nullptr;
};

/// Runs the SDPA on a GPU; returns 0 or the status it recorded.
using SdpaOnDevice = int32_t (*)(Runtime &rt, const SdpaArgs &a,
                                 const SdpaBuffers &buffers, bool backward);

/// ", batch=B heads=H/Hkv seq=L/S head_dim=D", appended to SDPA messages.
std::string sdpaDims(const SdpaArgs &a);

/// The support rule of cuDNN's fused flash attention (cuDNN 9 frontend docs:
/// f16/bf16, head_dim a multiple of 8 up to 256, grouped heads allowed) and
/// null checks; records the first violation and returns false.
bool validateSdpa(Runtime &rt, const SdpaArgs &a);

/// As `runGemm`, for the SDPA forward or backward.
int32_t runSdpa(Runtime &rt, const SdpaArgs &a, const SdpaBuffers &buffers,
                bool backward, const char *node, SdpaOnDevice onDevice);

/// CPU references on the emulated device's compute stream (arguments
/// already checked): f32 accumulation, one rounding on store, the exact
/// byte ranges of every operand given to the race checker.
int32_t emulateGemm(Runtime &rt, const GemmArgs &g);
int32_t emulateSdpa(Runtime &rt, const SdpaArgs &a, const SdpaBuffers &buffers,
                    bool backward);

} // namespace joint::cuda

#endif // JOINT_RUNTIME_CUDA_LIBRARIES_H

//===- Libraries.cpp - Checks and dispatch of the library shims -----------===//
//
// Argument checks of the cuBLAS GEMM and cuDNN SDPA shims, and the choice
// between the GPU library and the emulated device's CPU reference
// (Libraries.h).
//
//===----------------------------------------------------------------------===//

#include "Libraries.h"
#include "EmulatedDriver.h"
#include "joint_cuda_runtime.h"

#include <algorithm>
#include <climits>

using namespace joint::cuda;

bool joint::cuda::validateGemm(Runtime &rt, const GemmArgs &g) {
  auto fail = [&](const std::string &why) {
    rt.recordError(kStatusInvalidArgument, g.entry, why);
    return false;
  };
  if (g.dtype != JOINT_DTYPE_F32 && g.dtype != JOINT_DTYPE_BF16 &&
      g.dtype != JOINT_DTYPE_F16 && g.dtype != JOINT_DTYPE_BF16_F32 &&
      g.dtype != JOINT_DTYPE_F16_F32)
    return fail("unsupported dtype " + std::to_string(g.dtype));
  if (g.m < 0 || g.n < 0 || g.k < 0 || g.batch < 0)
    return fail("negative size (m=" + std::to_string(g.m) +
                ", n=" + std::to_string(g.n) + ", k=" + std::to_string(g.k) +
                ", batch=" + std::to_string(g.batch) + ")");
  if (g.m > INT_MAX || g.n > INT_MAX || g.k > INT_MAX || g.batch > INT_MAX ||
      g.lda > INT_MAX || g.ldb > INT_MAX || g.ldc > INT_MAX)
    return fail("size or leading dimension exceeds cuBLAS's int range");
  // Row-major storage: rows x cols with row stride ld >= max(1, cols).
  auto ldOk = [](int64_t ld, int64_t cols) {
    return ld >= std::max<int64_t>(1, cols);
  };
  if (!ldOk(g.lda, g.transA ? g.m : g.k))
    return fail("lda " + std::to_string(g.lda) + " is below the row length " +
                std::to_string(g.transA ? g.m : g.k));
  if (!ldOk(g.ldb, g.transB ? g.k : g.n))
    return fail("ldb " + std::to_string(g.ldb) + " is below the row length " +
                std::to_string(g.transB ? g.k : g.n));
  if (!ldOk(g.ldc, g.n))
    return fail("ldc " + std::to_string(g.ldc) + " is below the row length " +
                std::to_string(g.n));
  bool empty = g.m == 0 || g.n == 0 || g.batch == 0;
  if (!empty && (!g.c || (g.k > 0 && (!g.a || !g.b))))
    return fail("null operand pointer");
  return true;
}

int32_t joint::cuda::runGemm(Runtime &rt, const GemmArgs &g, const char *node,
                             GemmOnDevice onDevice) {
  rt.setNode(node);
  if (!validateGemm(rt, g))
    return rt.status();
  if (g.m == 0 || g.n == 0 || g.batch == 0)
    return kStatusOk;
  if (isEmulated(rt.driverApi()))
    return emulateGemm(rt, g);
  if (!onDevice) {
    rt.recordError(kStatusBlasFailure, g.entry,
                   "this runtime has no cuBLAS for this device");
    return rt.status();
  }
  return onDevice(rt, g);
}

std::string joint::cuda::sdpaDims(const SdpaArgs &a) {
  return ", batch=" + std::to_string(a.batch) +
         " heads=" + std::to_string(a.headsQ) + "/" +
         std::to_string(a.headsKV) + " seq=" + std::to_string(a.seqQ) + "/" +
         std::to_string(a.seqKV) + " head_dim=" + std::to_string(a.headDim);
}

bool joint::cuda::validateSdpa(Runtime &rt, const SdpaArgs &a) {
  auto fail = [&](const std::string &why) {
    rt.recordError(kStatusInvalidArgument, a.entry, why, sdpaDims(a));
    return false;
  };
  if (a.missing)
    return fail(std::string("null ") + a.missing);
  if (a.dtype != JOINT_DTYPE_BF16 && a.dtype != JOINT_DTYPE_F16)
    return fail("dtype " + std::to_string(a.dtype) +
                " is outside cuDNN SDPA support (bf16 or f16)");
  if (a.batch <= 0 || a.headsQ <= 0 || a.headsKV <= 0 || a.seqQ <= 0 ||
      a.seqKV <= 0 || a.headDim <= 0)
    return fail("sizes must be positive");
  if (a.headDim > 256 || a.headDim % 8 != 0)
    return fail("head_dim is outside cuDNN SDPA support (a multiple of 8, "
                "at most 256)");
  if (a.headsQ % a.headsKV != 0)
    return fail("query heads are not a multiple of key/value heads");
  if (a.biasDims && ((a.biasDims[0] != 1 && a.biasDims[0] != a.batch) ||
                     (a.biasDims[1] != 1 && a.biasDims[1] != a.headsQ) ||
                     a.biasDims[2] != a.seqQ || a.biasDims[3] != a.seqKV))
    return fail("bias dims must be [1|batch, 1|heads_q, seq_q, seq_kv]");
  return true;
}

int32_t joint::cuda::runSdpa(Runtime &rt, const SdpaArgs &a,
                             const SdpaBuffers &buffers, bool backward,
                             const char *node, SdpaOnDevice onDevice) {
  rt.setNode(node);
  if (!validateSdpa(rt, a))
    return rt.status();
  if (isEmulated(rt.driverApi()))
    return emulateSdpa(rt, a, buffers, backward);
  if (!onDevice) {
    rt.recordError(kStatusDnnFailure, a.entry,
                   "this runtime has no cuDNN SDPA for this device",
                   sdpaDims(a));
    return rt.status();
  }
  return onDevice(rt, a, buffers, backward);
}

//===- AttentionCalls.h - SDPA through the runtime's cuDNN shim -*- C++ -*-===//
//
// The conversion pattern behind `joint-gpu-attention-calls`, which turns the
// recorded SDPA calls of the joint graphs that cuDNN supports into calls to
// the runtime's shim (AttentionCalls.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_CONVERSION_LOWERTOCUDA_ATTENTIONCALLS_H
#define JOINT_CONVERSION_LOWERTOCUDA_ATTENTIONCALLS_H

namespace mlir {
class RewritePatternSet;
namespace joint {

/// Adds the pattern that replaces each SDPA forward or backward call cuDNN
/// supports by `joint_cudnn_sdpa_forward` / `_backward`; with `remarks`, one
/// says why another SDPA call stays. A forward's bookkeeping results may
/// still feed its backward when it is replaced (by nothing), so the pattern
/// needs the dialect conversion driver.
void populateSdpaToCudnnCallPatterns(RewritePatternSet &patterns,
                                     bool remarks = false);

} // namespace joint
} // namespace mlir

#endif // JOINT_CONVERSION_LOWERTOCUDA_ATTENTIONCALLS_H

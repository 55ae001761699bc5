//===- Offload.h - ao ops as transfers on CUDA streams ----------*- C++ -*-===//
//
// The conversion patterns behind `joint-gpu-offload`, which turn the ao
// chains of a step on tensors into calls of the CUDA runtime's transfer
// protocol (Offload.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_CONVERSION_LOWERTOCUDA_OFFLOAD_H
#define JOINT_CONVERSION_LOWERTOCUDA_OFFLOAD_H

namespace mlir {
class RewritePatternSet;
namespace joint {

/// Adds the patterns that replace `ao.offload`, `ao.wait_tensor` and
/// `ao.reload` by `joint_ao_*` calls. A transfer's handle (and the offloaded
/// tensor's `?` sizes) reach the next op of its chain as the 1:N replacement
/// of the op before, so they need the dialect conversion driver; chains
/// must be in the top-level block of a func.func, with only ao users.
void populateAOToTransferCallPatterns(RewritePatternSet &patterns);

} // namespace joint
} // namespace mlir

#endif // JOINT_CONVERSION_LOWERTOCUDA_OFFLOAD_H

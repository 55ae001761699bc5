//===- Collectives.h - Functional collectives as NCCL calls -----*- C++ -*-===//
//
// The conversion patterns behind `joint-gpu-collectives`, which turn torch's
// functional collectives in the joint graphs into calls of the CUDA
// runtime's NCCL entry points (Collectives.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_CONVERSION_LOWERTOCUDA_COLLECTIVES_H
#define JOINT_CONVERSION_LOWERTOCUDA_COLLECTIVES_H

#include "llvm/ADT/StringRef.h"

namespace mlir {
class RewritePatternSet;
namespace joint {

/// Adds the patterns that replace each collective by a `joint_nccl_*` call
/// (its result becomes the output allocation and the call's handle, a 1:N
/// replacement) and its `wait_tensor` by `joint_nccl_wait` (its result is
/// the output allocation): they need the dialect conversion driver, and each
/// collective's only user must be its wait.
void populateCollectiveToNcclCallPatterns(RewritePatternSet &patterns);

/// Module attribute set by `joint-gpu-collectives`: each torch group name of
/// the module's collectives to its size in ranks as the ops state it
/// (all-gather and reduce-scatter group_size, all-to-all split count; 0 when
/// only all-reduces use it), a dictionary of i64.
inline constexpr llvm::StringLiteral kCollectiveGroupsAttr =
    "joint.collective_groups";

} // namespace joint
} // namespace mlir

#endif // JOINT_CONVERSION_LOWERTOCUDA_COLLECTIVES_H

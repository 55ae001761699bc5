//===- UnshardChain.h - FSDP unshard chains of a joint graph ----*- C++ -*-===//
//
// An FSDP unshard chain is the forward work that rebuilds parameters from
// their shards: a forward all-gather (OpSet::ForwardAllGather), its wait, and
// every forward op computed from parameters alone that feeds it (the flat
// copy-in) or reads it (the copy-out views and copies). Replaying a chain
// reads only resident parameters, so re-gathering in the backward is the
// `reshard_after_forward=True` choice and saving it is `False`; its values
// are never offloaded (torchtitan graph trainer's FSDP rules).
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_ANALYSIS_UNSHARDCHAIN_H
#define JOINT_ANALYSIS_UNSHARDCHAIN_H

#include "joint/Dialect/Joint/IR/JointOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir {
namespace joint {

class UnshardChain {
public:
  /// One walk over `graph`'s ops in block order: O(ops + operands).
  explicit UnshardChain(GraphOp graph);

  /// Whether `op` belongs to an unshard chain (all-gathers and waits
  /// included).
  bool contains(Operation *op) const { return chain.contains(op); }
  bool empty() const { return chain.empty(); }

private:
  llvm::DenseSet<Operation *> chain;
};

} // namespace joint
} // namespace mlir

#endif // JOINT_ANALYSIS_UNSHARDCHAIN_H

//===- RecomputeEligibility.h - What may be recomputed ----------*- C++ -*-===//
//
// The recompute policy of every forward joint.call_function under a set of
// checkpoint options, computed by the rules of joint-tag-recompute-policy
// (mode policy with structural exceptions, in-place saves, cross-unit saves,
// transparent ops inheriting their producer's policy) without writing to
// the graph. The tag pass writes these policies; the memory planner reads
// the full-checkpointing ones as the set it may replay.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_ANALYSIS_RECOMPUTEELIGIBILITY_H
#define JOINT_ANALYSIS_RECOMPUTEELIGIBILITY_H

#include "joint/Analysis/StorageAliasAnalysis.h"
#include "joint/Dialect/Joint/IR/JointOps.h"
#include "joint/Dialect/Joint/Transforms/ActivationCheckpoint.h"
#include "llvm/ADT/DenseMap.h"
#include <optional>

namespace mlir {
namespace joint {

/// The policies the tagging rules give the forward ops of one graph.
class RecomputeEligibility {
public:
  /// Whether policies the graph already carries take part (the tag pass:
  /// they are kept, inherited and checked) or are ignored (the planner: as
  /// if the graph carried none).
  enum class ExistingPolicies { Honour, Ignore };

  /// Applies the rules to `graph`. Fails with one error naming the option or
  /// the node for invalid options, a missing scope, or (Honour) a
  /// must_recompute request on a random or in-place op. mode=off gives no
  /// policies. O(#ops + #uses) after the O(#distinct module stacks) scope.
  static FailureOr<RecomputeEligibility>
  compute(GraphOp graph, const StorageAliasAnalysis &aliases,
          const CheckpointOptions &options, ExistingPolicies existing);

  /// The policy of forward op `op` under the rules; std::nullopt when the
  /// rules give it none (untagged).
  std::optional<CheckpointPolicy> getPolicy(Operation *op) const {
    auto it = policies.find(op);
    return it == policies.end() ? std::nullopt : it->second;
  }
  /// True when the rules tag `op` must_recompute.
  bool isMustRecompute(Operation *op) const {
    return getPolicy(op) == CheckpointPolicy::must_recompute;
  }
  /// The forward joint.call_functions in program order.
  ArrayRef<CallFunctionOp> getForwardOps() const { return forwardOps; }
  /// Block counts and per-policy counts, as the tag pass reports them.
  const TagSummary &getSummary() const { return summary; }

private:
  llvm::DenseMap<Operation *, std::optional<CheckpointPolicy>> policies;
  SmallVector<CallFunctionOp> forwardOps;
  TagSummary summary;
  friend class RecomputeRules;
};

} // namespace joint
} // namespace mlir

#endif // JOINT_ANALYSIS_RECOMPUTEELIGIBILITY_H

//===- PlanMemory.h - The memory planner on a joint.graph -------*- C++ -*-===//
//
// The IR side of joint-plan-memory: a MemoryPlanProblem built from one graph
// and its analyses (lifetimes from MemoryModel, seconds from CostModel, what
// may be recomputed from RecomputeEligibility, what may move to host from
// OffloadEligibility), the policies a plan writes, and the plan simulator
// that prices a plan by applying it to a copy with the real appliers and
// models.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_DIALECT_JOINT_TRANSFORMS_PLANMEMORY_H
#define JOINT_DIALECT_JOINT_TRANSFORMS_PLANMEMORY_H

#include "joint/Analysis/CostModel.h"
#include "joint/Analysis/MemoryModel.h"
#include "joint/Analysis/StorageAliasAnalysis.h"
#include "joint/Dialect/Joint/IR/JointOps.h"
#include "joint/Planning/MemoryPlanSolvers.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir {
namespace joint {

/// A problem built from one graph and the IR its indices name.
struct GraphPlanProblem {
  MemoryPlanProblem problem;
  /// Body ops by position (MemoryModel::getOps()).
  ArrayRef<Operation *> ops;
  /// The storage behind each problem storage.
  std::vector<const Storage *> storages;
  /// The policy full checkpointing gives each forward op (by position),
  /// collectives kept saved: what a plan writes where it replays.
  std::vector<std::optional<CheckpointPolicy>> fullPolicies;
  /// The graph has no transformer blocks: nothing is recomputable.
  bool noBlocks = false;
};

/// Builds the problem of `graph` under a device budget and a host budget (0:
/// none), bytes. Fails with one error when the recompute rules reject the
/// graph. O(#ops + #uses + sum of replay closures).
FailureOr<GraphPlanProblem>
buildGraphPlanProblem(GraphOp graph, const StorageAliasAnalysis &aliases,
                      const MemoryModel &memory, const CostModel &cost,
                      const HardwareModel &hw, int64_t budgetBytes,
                      int64_t hostBudgetBytes);

/// Policies by body position under `plan`: full checkpointing's where the
/// plan replays, must_save for the other recomputable ops, must_cpu_offload
/// on chosen offloads.
std::vector<std::optional<CheckpointPolicy>>
getPlanPolicies(const GraphPlanProblem &gp, const MemoryPlan &plan);
/// (joint.prefetch, joint.defer) by body position of each chosen offload.
llvm::DenseMap<unsigned, std::pair<unsigned, unsigned>>
getPlanDistances(const MemoryPlan &plan);
/// Writes `policies` and `distances` (by body position) on the forward
/// joint.call_functions of `graph`, removing any other policy and distance.
void applyPlanPolicies(
    GraphOp graph, ArrayRef<std::optional<CheckpointPolicy>> policies,
    const llvm::DenseMap<unsigned, std::pair<unsigned, unsigned>> &distances);

/// What a plan costs once applied.
struct PlanMeasurement {
  int64_t peakBytes = 0;
  double stepSeconds = 0, recomputeSeconds = 0, exposedSeconds = 0;
  std::string peakNode;
  /// The largest device storages live at the peak op (bytes, owner's
  /// name), largest first, at most five.
  SmallVector<std::pair<int64_t, std::string>, 5> peakLive;
  /// Positions of the ops defining the storages whose copies stall the
  /// compute stream, and of every offload target in those stalls' blocks.
  SmallVector<unsigned> exposedOffloads, exposedBlockOffloads;
};

/// Prices `plan` by applying it to a copy of `module` (offload applier,
/// remat) and modelling the copy (MemoryModel, CostModel under `hw`). Fails
/// after an applier's error. O(#ops + #uses) plus the module copy.
FailureOr<PlanMeasurement> simulateMemoryPlan(ModuleOp module, GraphOp graph,
                                              const GraphPlanProblem &gp,
                                              const MemoryPlan &plan,
                                              const HardwareModel &hw);

/// The node name of `op` (a joint.call_function), else its op name.
std::string planNodeName(Operation *op);

} // namespace joint
} // namespace mlir

#endif // JOINT_DIALECT_JOINT_TRANSFORMS_PLANMEMORY_H

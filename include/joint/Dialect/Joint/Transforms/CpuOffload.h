//===- CpuOffload.h - Offload decisions and their applier -------*- C++ -*-===//
//
// The library behind joint-tag-cpu-offload (decide), joint-apply-cpu-offload
// (apply) and the joint-cpu-offload pipeline (both). The decision contract,
// shared with every other decider (the memory planner): `policy =
// must_cpu_offload` on the forward joint.call_function whose result is a
// saved activation (a view or not), plus the optional discardable integer
// attributes `joint.prefetch` and `joint.defer` (regions) on that op. The
// applier offloads the base storage of every saved result of a tagged op
// once, after re-checking every safety rule (Analysis/OffloadEligibility), so
// hand tags are safe. Rules follow torchtitan graph_trainer's cpu_offload pass
// and torch's ao offload ops (docs/passes.md, "CPU offload").
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_DIALECT_JOINT_TRANSFORMS_CPUOFFLOAD_H
#define JOINT_DIALECT_JOINT_TRANSFORMS_CPUOFFLOAD_H

#include "joint/Analysis/ModelStructure.h"
#include "joint/Analysis/OffloadEligibility.h"
#include "joint/Analysis/StorageAliasAnalysis.h"
#include "joint/Dialect/Joint/IR/JointOps.h"
#include "joint/Dialect/Joint/IR/OpSets.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/AnalysisManager.h"
#include "llvm/ADT/DenseMap.h"
#include <memory>
#include <optional>
#include <string>

namespace mlir {
namespace joint {

/// Applier defaults for tagged ops without `joint.prefetch`/`joint.defer`.
struct OffloadApplyOptions {
  unsigned prefetchRegions = 0;
  unsigned deferRegions = 0;
};

/// What the applier did.
struct OffloadApplySummary {
  unsigned numStorages = 0;
  int64_t numBytes = 0;
  unsigned numPrefetched = 0;
  unsigned numDeferred = 0;
};

/// What the applier decided on the unchanged graph (the storages, where
/// each op goes, fresh storage ids), and the ops it has made so far.
struct OffloadPlan;
struct OffloadMade;

/// The applier of `must_cpu_offload`: two patterns that read `plan`: the
/// first tagged op of a storage (offload its base storage, forward wait
/// after the last forward use or deferred); the first backward reader of
/// offloaded storages (reload and its wait before it, moved `joint.prefetch`
/// regions earlier when planned, view replay, backward readers redirected).
/// Meant for one walkAndApplyPatterns in program order.
void populateCpuOffloadPatterns(RewritePatternSet &patterns,
                                const OffloadPlan &plan, OffloadMade &made);

/// Applies every `must_cpu_offload` tag of `graph`. Fails, changing
/// nothing, with one error naming the node and the reason when a tagged op
/// breaks a safety rule. Storages already offloaded are left as they are.
/// `eligibility` (with its alias analysis) and `model` describe `graph` as
/// it is (the pass gets them from the analysis manager). O(#ops + #uses).
FailureOr<OffloadApplySummary>
applyCpuOffload(GraphOp graph, OffloadEligibility &eligibility,
                ModelStructure &model, const OffloadApplyOptions &options);

/// Registers the joint-cpu-offload pipeline (joint-tag-cpu-offload, then
/// joint-apply-cpu-offload).
void registerCpuOffloadPipeline();

} // namespace joint
} // namespace mlir

#endif // JOINT_DIALECT_JOINT_TRANSFORMS_CPUOFFLOAD_H

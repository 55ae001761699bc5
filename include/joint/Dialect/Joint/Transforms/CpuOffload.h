//===- CpuOffload.h - Offload decisions and their applier -------*- C++ -*-===//
//
// The library behind joint-tag-cpu-offload (decide), joint-apply-cpu-offload
// (apply) and the joint-cpu-offload pipeline (both). The decision contract,
// shared with every other decider (the memory planner): `policy =
// must_cpu_offload` on the forward joint.call_function whose result is a
// saved activation (a view or not), plus the optional discardable integer
// attributes `joint.prefetch` and `joint.defer` (regions) on that op. The
// applier offloads the base storage of every saved result of a tagged op
// once, after re-checking every safety rule (OffloadEligibility), so hand
// tags are safe. Rules follow torchtitan graph_trainer's cpu_offload pass
// and torch's ao offload ops (docs/passes.md, "CPU offload").
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_DIALECT_JOINT_TRANSFORMS_CPUOFFLOAD_H
#define JOINT_DIALECT_JOINT_TRANSFORMS_CPUOFFLOAD_H

#include "joint/Analysis/ModelStructure.h"
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

/// One storage the applier would offload: its base (owner) value and
/// everything the rewrite needs, resolved on the unchanged graph.
struct OffloadTarget {
  const Storage *storage = nullptr;
  /// The owner of the storage (the allocation that is copied to host).
  Value base;
  CallFunctionOp producer;
  /// Bytes of the whole storage (trace-time hints).
  int64_t bytes = 0;
  /// The device the reload goes back to.
  StringRef device;
  /// Static sizes/strides of a base that is not contiguous; the reload
  /// rebuilds that layout (torch.ops.ao.reload's original_size/stride).
  std::optional<SmallVector<int64_t>> reloadSizes, reloadStrides;
  /// Last forward reader of the whole storage (the producer when none) and
  /// the tensor result of it the forward wait depends on.
  Operation *lastForwardUse = nullptr;
  Value lastUseValue;
  /// First backward reader of the storage (base or a view of it).
  Operation *firstBackwardUse = nullptr;
  /// Backward uses of the base, and of forward views (rewired to replays).
  SmallVector<OpOperand *> directBackwardUses;
  SmallVector<OpOperand *> viewBackwardUses;
  /// Forward views the backward reads, in forward order; replayed on the
  /// reloaded base.
  SmallVector<Operation *> replayOps;
};

/// Whether the saved results of a forward op can move to host, answered on
/// the unchanged graph. Rules (each refusal says which): not an ao op,
/// collective or wait; writes nothing in place (a random op's result may
/// move: offload copies its bits and never replays it); its storage is no graph
/// input or output, is never written in place, and is allocated by a forward
/// joint.call_function; no alias is tagged for recompute; the storage is not on
/// the host while the graph computes on an accelerator (an all-CPU graph
/// offloads); sizes have trace-time hints (no data-dependent size); a
/// non-contiguous base is dense with static strides; the backward reads it,
/// every forward view it reads can be replayed from the base, and the forward
/// is done with it before the backward starts. Built in O(#ops); each query is
/// O(uses of the storage), memoized per storage but for the recompute rule
/// (O(members) per query).
class OffloadEligibility {
public:
  OffloadEligibility(GraphOp graph, const StorageAliasAnalysis &aliases);
  /// As an analysis of a joint.graph, on the manager's StorageAliasAnalysis.
  /// Like every analysis it memoizes nothing read from decision attributes
  /// (the recompute rule reads policy tags at each query), so the deciders
  /// preserve it and the applier reuses its answers.
  OffloadEligibility(Operation *graph, AnalysisManager &am);
  /// Invalid once the graph changes or its alias analysis goes.
  bool isInvalidated(const AnalysisManager::PreservedAnalyses &pa) {
    return !pa.isPreserved<OffloadEligibility>() ||
           !pa.isPreserved<StorageAliasAnalysis>();
  }

  /// The storages `op`'s saved results live in, or failure with `why` set
  /// to the first rule that refuses one of them. An op none of whose
  /// results the backward reads fails ("not read by the backward").
  FailureOr<SmallVector<const OffloadTarget *>> check(CallFunctionOp op,
                                                      std::string &why);
  /// The target of one storage; null with `why` set when refused.
  const OffloadTarget *targetOf(const Storage *s, std::string &why);
  /// True when some member of `s` already has an ao.offload reader.
  bool isOffloaded(const Storage *s) const;
  /// Position of an op of the unchanged graph body (the index is built on
  /// first use; the rules themselves order ops with isBeforeInBlock).
  unsigned position(Operation *op) {
    if (positions.empty())
      for (auto [i, o] : llvm::enumerate(graph.getBody().front()))
        positions[&o] = i;
    return positions.lookup(op);
  }
  /// True when the graph computes on an accelerator (some tensor is on a
  /// non-CPU device): then host values are never offloaded.
  bool hasAccelerator() const { return accelerator; }
  const StorageAliasAnalysis &getAliases() const { return aliases; }

private:
  /// The rules that read no policy tag, memoized per storage.
  struct Resolved {
    OffloadTarget target;
    std::string refusal; // "" when none
    /// The refusal comes from a rule ordered before the recompute rule.
    bool refusedBeforeRecompute = false;
  };
  std::optional<std::string> resolve(const Storage *s, OffloadTarget &t,
                                     bool &checkedBeforeRecompute);

  GraphOp graph;
  const StorageAliasAnalysis &aliases;
  llvm::DenseMap<Operation *, unsigned> positions;
  bool accelerator = false;
  /// Per storage, boxed so returned pointers stay valid while the map grows.
  llvm::DenseMap<const Storage *, std::unique_ptr<Resolved>> cache;
  OpSetCache opSets;
};

/// Convenience for callers with one op: builds an OffloadEligibility
/// (O(#ops)) and checks `op`. Succeeds when every saved result of `op` can
/// be offloaded; else `why` holds the reason.
LogicalResult checkOffloadable(CallFunctionOp op,
                               const StorageAliasAnalysis &aliases,
                               std::string &why);

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

/// The state the offload patterns share (the plan per storage, names in
/// use, fresh storage ids); built by applyCpuOffload.
class OffloadApplyState;

/// The applier of `must_cpu_offload`: three patterns, one per root: a
/// forward op tagged must_cpu_offload (offload its base storage, forward
/// wait after the last forward use or deferred); an offload's forward wait
/// with no reload yet (reload before the first backward reader, view
/// replay, backward readers redirected); a reload to prefetch (moved
/// `joint.prefetch` regions earlier). Meant for walkAndApplyPatterns.
void populateCpuOffloadPatterns(RewritePatternSet &patterns,
                                OffloadApplyState &state);

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

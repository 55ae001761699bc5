//===- OffloadEligibility.h - What may move to host -------------*- C++ -*-===//
//
// The safety rules of CPU offload, as an analysis of a joint.graph that the
// deciders (joint-tag-cpu-offload, joint-plan-memory) and the applier
// (joint-apply-cpu-offload) share, so a hand tag and a planned one are held
// to the same rules (docs/passes.md, "CPU offload").
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_ANALYSIS_OFFLOADELIGIBILITY_H
#define JOINT_ANALYSIS_OFFLOADELIGIBILITY_H

#include "joint/Analysis/StorageAliasAnalysis.h"
#include "joint/Analysis/UnshardChain.h"
#include "joint/Dialect/Joint/IR/JointOps.h"
#include "joint/Dialect/Joint/IR/OpSets.h"
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
/// Which kind of rule refused a storage, for callers that act on the kind
/// (the reason text is for people).
enum class OffloadRefusal { None, NotReadByBackward, RecomputeTagged, Other };

class OffloadEligibility {
public:
  OffloadEligibility(GraphOp graph, const StorageAliasAnalysis &aliases);
  /// As an analysis of a joint.graph, on the manager's StorageAliasAnalysis.
  /// Like every analysis it memoizes nothing read from decision attributes
  /// (the recompute rule reads policy tags at each query), so the deciders
  /// preserve it and the applier reuses its answers.
  OffloadEligibility(Operation *graph, AnalysisManager &am);
  /// Answer as if no forward op carried a policy (the planner's view: it
  /// replaces every policy), so the recompute rule refuses nothing.
  void setIgnoreForwardPolicies(bool ignore) { ignoreForwardPolicies = ignore; }
  /// Invalid once the graph changes or its alias analysis goes.
  bool isInvalidated(const AnalysisManager::PreservedAnalyses &pa) {
    return !pa.isPreserved<OffloadEligibility>() ||
           !pa.isPreserved<StorageAliasAnalysis>();
  }

  /// The storages `op`'s saved results live in, or failure with `why` set
  /// to the first rule that refuses one of them. An op none of whose
  /// results the backward reads fails ("not read by the backward").
  /// `kind`, when given, is set to the refusing rule's kind.
  FailureOr<SmallVector<const OffloadTarget *>>
  check(CallFunctionOp op, std::string &why, OffloadRefusal *kind = nullptr);
  /// The target of one storage; null with `why` (and `kind`) set when
  /// refused.
  const OffloadTarget *targetOf(const Storage *s, std::string &why,
                                OffloadRefusal *kind = nullptr);
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
    OffloadRefusal kind = OffloadRefusal::None;
    /// The refusal comes from a rule ordered before the recompute rule.
    bool refusedBeforeRecompute = false;
  };
  std::optional<std::string> resolve(const Storage *s, OffloadTarget &t,
                                     bool &checkedBeforeRecompute,
                                     OffloadRefusal &kind);

  GraphOp graph;
  const StorageAliasAnalysis &aliases;
  UnshardChain unshard;
  llvm::DenseMap<Operation *, unsigned> positions;
  bool accelerator = false;
  bool ignoreForwardPolicies = false;
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

} // namespace joint
} // namespace mlir

#endif // JOINT_ANALYSIS_OFFLOADELIGIBILITY_H

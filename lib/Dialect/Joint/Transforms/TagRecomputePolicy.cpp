//===- TagRecomputePolicy.cpp - Decide save/recompute per forward op ------===//
//
// joint-tag-recompute-policy: writes on forward joint.ops the `policy` that
// RecomputeEligibility's rules give them (the rules live in the analysis,
// which the memory planner reads too).
//
//===----------------------------------------------------------------------===//

#include "joint/Analysis/RecomputeEligibility.h"
#include "joint/Dialect/Joint/IR/OpSets.h"
#include "joint/Dialect/Joint/Transforms/Passes.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTTAGRECOMPUTEPOLICY
#include "joint/Dialect/Joint/Transforms/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

StringRef mlir::joint::stringifyCheckpointMode(CheckpointMode mode) {
  // In CheckpointMode's order.
  static constexpr llvm::StringLiteral kNames[] = {"off", "full", "selective"};
  return kNames[static_cast<size_t>(mode)];
}

FailureOr<TagSummary>
mlir::joint::tagRecomputePolicy(GraphOp graph,
                                const StorageAliasAnalysis &aliases,
                                const CheckpointOptions &options) {
  FailureOr<RecomputeEligibility> rules = RecomputeEligibility::compute(
      graph, aliases, options, RecomputeEligibility::ExistingPolicies::Honour);
  if (failed(rules))
    return failure();
  MLIRContext *ctx = graph.getContext();
  for (CallFunctionOp op : rules->getForwardOps())
    if (std::optional<CheckpointPolicy> p = rules->getPolicy(op);
        p && p != op.getPolicy())
      op.setPolicyAttr(CheckpointPolicyAttr::get(ctx, *p));
  return rules->getSummary();
}

/// CheckpointOptions from pass options. `layer-count` is unset when it holds
/// its default -1 and was not given; any other negative count is kept so
/// that CheckpointScope::resolve rejects it.
static CheckpointOptions
makeCheckpointOptions(CheckpointMode mode, int64_t layerCount,
                      bool layerCountGiven, ArrayRef<int64_t> layerIndices,
                      ArrayRef<std::string> regionPatterns,
                      ArrayRef<std::string> excludePatterns,
                      bool saveForwardAllGather, bool replayRandom) {
  CheckpointOptions options;
  options.mode = mode;
  if (layerCountGiven || layerCount != -1)
    options.layerCount = layerCount;
  options.layerIndices.assign(layerIndices.begin(), layerIndices.end());
  options.regionPatterns.assign(regionPatterns.begin(), regionPatterns.end());
  options.excludePatterns.assign(excludePatterns.begin(),
                                 excludePatterns.end());
  options.saveForwardAllGather = saveForwardAllGather;
  options.replayRandom = replayRandom;
  return options;
}

/// The policy counts of `summary` as "must_save N, must_recompute N,
/// prefer_recompute N", plus the block scope.
static std::string describeTagSummary(const CheckpointOptions &options,
                                      const TagSummary &summary) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "mode=" << stringifyCheckpointMode(options.mode) << ", "
     << summary.numSelectedBlocks << " of " << summary.numBlocks
     << " blocks selected; must_save " << summary.numMustSave
     << ", must_recompute " << summary.numMustRecompute << ", prefer_recompute "
     << summary.numPreferRecompute;
  return text;
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

struct TagRecomputePolicyPass
    : joint::impl::JointTagRecomputePolicyBase<TagRecomputePolicyPass> {
  using Base::Base;

  void runOnOperation() override {
    CheckpointOptions options = makeCheckpointOptions(
        mode, layerCount, layerCount.hasValue(), layerIndices, regionPatterns,
        excludePatterns, saveForwardAllGather, replayRandom);
    if (options.mode == CheckpointMode::off)
      return markAllAnalysesPreserved();
    GraphOp graph = getOperation();
    StorageAliasAnalysis &aliases = getAnalysis<StorageAliasAnalysis>();
    FailureOr<TagSummary> summary = tagRecomputePolicy(graph, aliases, options);
    if (failed(summary))
      return signalPassFailure();
    if (options.replayRandom)
      graph->setAttr(kReplayRandomAttr, UnitAttr::get(graph.getContext()));
    numMustSave = summary->numMustSave;
    numMustRecompute = summary->numMustRecompute;
    numPreferRecompute = summary->numPreferRecompute;
    if (summary->numSelectedBlocks == 0)
      emitRemark(graph.getLoc())
          << "activation checkpointing: the layer selection matched zero of "
          << summary->numBlocks << " blocks; nothing is tagged";
    else
      emitRemark(graph.getLoc()) << "joint-tag-recompute-policy: "
                                 << describeTagSummary(options, *summary);
    // Only policy tags changed, and no analysis reads them: remat reuses the
    // alias analysis, and MLIR does not re-verify unchanged ops and types.
    markAllAnalysesPreserved();
  }
};

} // namespace

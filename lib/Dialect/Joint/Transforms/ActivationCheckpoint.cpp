//===- ActivationCheckpoint.cpp - Tag, then rematerialize -----------------===//
//
// joint-activation-checkpoint: joint-tag-recompute-policy followed by
// joint-remat on one StorageAliasAnalysis (tagging changes no storage), with
// one summary remark and the seed's warning when the scope matched but
// nothing was recomputed.
//
//===----------------------------------------------------------------------===//

#include "CheckpointScope.h"
#include "joint/Dialect/Joint/Transforms/Passes.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTACTIVATIONCHECKPOINT
#include "joint/Dialect/Joint/Transforms/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

namespace {

struct ActivationCheckpointPass
    : joint::impl::JointActivationCheckpointBase<ActivationCheckpointPass> {
  using Base::Base;

  void runOnOperation() override {
    CheckpointOptions options = makeCheckpointOptions(
        mode, layerCount, layerCount.hasValue(), layerIndices, regionPatterns,
        excludePatterns, saveForwardAllGather);
    if (options.mode == CheckpointMode::off)
      return markAllAnalysesPreserved();
    StorageAliasAnalysis &aliases = getAnalysis<StorageAliasAnalysis>();
    GraphOp graph = aliases.getGraph();
    if (!graph)
      return markAllAnalysesPreserved();
    FailureOr<TagSummary> tags = tagRecomputePolicy(graph, aliases, options);
    if (failed(tags))
      return signalPassFailure();
    numMustSave = tags->numMustSave;
    numMustRecompute = tags->numMustRecompute;
    numPreferRecompute = tags->numPreferRecompute;
    if (tags->numSelectedBlocks == 0) {
      emitRemark(graph.getLoc())
          << "activation checkpointing: the layer selection matched zero of "
          << tags->numBlocks << " blocks; nothing is tagged";
      return markAllAnalysesPreserved();
    }
    FailureOr<RematSummary> remat = rematerialize(graph, aliases);
    if (failed(remat))
      return signalPassFailure();
    numClones = remat->numClones;
    numErased = remat->numErased;
    numReloadsMoved = remat->numReloadsMoved;
    if (tags->scopeMatched && !remat->numClones &&
        !remat->alreadyRematerialized)
      emitWarning(graph.getLoc())
          << "activation checkpointing matched " << tags->numSelectedBlocks
          << " blocks but recomputed no op; the graph may already contain "
             "eager activation checkpointing, so graph-mode recompute is "
             "inactive";
    emitRemark(graph.getLoc())
        << "activation checkpointing: " << describeTagSummary(options, *tags)
        << "; " << remat->numClones << " ops recomputed, " << remat->numErased
        << " originals erased";
  }
};

} // namespace

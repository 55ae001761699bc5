//===- ActivationCheckpoint.cpp - The tag + remat pipeline ----------------===//
//
// joint-activation-checkpoint: a registered pass pipeline, the decider
// joint-tag-recompute-policy followed by the applier joint-remat, with the
// tag pass's options (the ActivationCheckpointConfig vocabulary). Each pass
// emits its own summary remark; mode=off adds no pass, so the pipeline then
// changes nothing, not even hand-written tags.
//
//===----------------------------------------------------------------------===//

#include "joint/Dialect/Joint/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::joint;

namespace {

/// The options of joint-tag-recompute-policy (Passes.td), repeated because a
/// pipeline's options are a C++ struct.
struct ActivationCheckpointOptions
    : PassPipelineOptions<ActivationCheckpointOptions> {
  Option<CheckpointMode> mode{
      *this, "mode",
      llvm::cl::desc("off: change nothing; full: recompute every scoped op; "
                     "selective: save the compute-intensive set, recompute "
                     "the rest"),
      llvm::cl::init(CheckpointMode::full),
      llvm::cl::values(clEnumValN(CheckpointMode::off, "off", "change nothing"),
                       clEnumValN(CheckpointMode::full, "full",
                                  "every scoped op must_recompute"),
                       clEnumValN(CheckpointMode::selective, "selective",
                                  "must_save for compute/communication ops, "
                                  "prefer_recompute otherwise"))};
  Option<int64_t> layerCount{
      *this, "layer-count",
      llvm::cl::desc("Checkpoint the first N blocks in flattened order "
                     "(default: all blocks)"),
      llvm::cl::init(-1)};
  ListOption<int64_t> layerIndices{
      *this, "layer-indices",
      llvm::cl::desc("Checkpoint these flattened block indices (0-based)")};
  ListOption<std::string> regionPatterns{
      *this, "region-patterns",
      llvm::cl::desc("Glob patterns on module FQNs: recompute only the "
                     "outermost matching modules inside the selected blocks")};
  ListOption<std::string> excludePatterns{
      *this, "exclude-patterns",
      llvm::cl::desc("Glob patterns on module FQNs whose subtrees stay saved")};
  Option<bool> saveForwardAllGather{
      *this, "save-forward-all-gather",
      llvm::cl::desc("Save forward all-gathers instead of replaying them"),
      llvm::cl::init(false)};
};

/// Adds the tag pass, given the pipeline's option string verbatim (so every
/// option is validated by the tag pass as if given to it), then remat.
LogicalResult buildActivationCheckpointPipeline(
    OpPassManager &pm, StringRef optionString,
    function_ref<LogicalResult(const Twine &)> errorHandler) {
  ActivationCheckpointOptions options;
  if (failed(options.parseFromString(optionString)))
    return failure();
  if (options.mode == CheckpointMode::off)
    return success();
  std::unique_ptr<Pass> tag = createJointTagRecomputePolicy();
  if (failed(tag->initializeOptions(optionString, errorHandler)))
    return failure();
  pm.addPass(std::move(tag));
  pm.addPass(createJointRemat());
  return success();
}

} // namespace

void mlir::joint::registerJointPipelines() {
  registerPassPipeline(
      "joint-activation-checkpoint",
      "Activation checkpointing: joint-tag-recompute-policy (decide), then "
      "joint-remat (apply), with the tag pass's options",
      buildActivationCheckpointPipeline,
      [](function_ref<void(const mlir::detail::PassOptions &)> printOptions) {
        printOptions(ActivationCheckpointOptions());
      });
  registerOptimizeMemoryPipeline();
}

//===- ActivationCheckpoint.cpp - The tag + remat pipeline ----------------===//
//
// joint-activation-checkpoint: a registered pass pipeline, the decider
// joint-tag-recompute-policy followed by the applier joint-remat (both per
// joint.graph), with the tag pass's options (the ActivationCheckpointConfig
// vocabulary). Each pass emits its own summary remark; mode=off adds no pass,
// so the pipeline then changes nothing, not even hand-written tags.
//
//===----------------------------------------------------------------------===//

#include "joint/Dialect/Joint/Transforms/CpuOffload.h"
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

/// Adds the tag pass, then remat, both on joint.graph: nested under `pm`
/// unless `pm` already runs on graphs (or on any op), so the pipeline works
/// in explicit-nesting pass managers too.
void buildActivationCheckpointPipeline(
    OpPassManager &pm, const ActivationCheckpointOptions &options,
    std::unique_ptr<Pass> tag) {
  if (options.mode == CheckpointMode::off)
    return;
  OpPassManager &graphPM = nestOnGraphs(pm);
  graphPM.addPass(std::move(tag));
  graphPM.addPass(createJointRemat());
}

} // namespace

OpPassManager &mlir::joint::nestOnGraphs(OpPassManager &pm) {
  std::optional<StringRef> anchor = pm.getOpName();
  return !anchor || *anchor == GraphOp::getOperationName() ? pm
                                                           : pm.nest<GraphOp>();
}

void mlir::joint::registerDeciderPipeline(
    StringRef argument, StringRef description,
    std::unique_ptr<Pass> (*createDecider)(), DeciderPipelineBuilder build,
    PipelineOptionsPrinter printOptions) {
  if (!printOptions) // --help lists the options under the decider
    printOptions = [](function_ref<void(const mlir::detail::PassOptions &)>) {};
  registerPassPipeline(
      argument, description,
      [createDecider,
       build](OpPassManager &pm, StringRef optionString,
              function_ref<LogicalResult(const Twine &)> errorHandler)
          -> LogicalResult {
        std::unique_ptr<Pass> decider = createDecider();
        if (failed(decider->initializeOptions(optionString, errorHandler)))
          return failure();
        return build(pm, optionString, std::move(decider));
      },
      printOptions);
}

void mlir::joint::registerDeciderPipeline(
    StringRef argument, StringRef description,
    std::unique_ptr<Pass> (*createDecider)(),
    ArrayRef<std::unique_ptr<Pass> (*)()> appliers) {
  std::vector<std::unique_ptr<Pass> (*)()> list(appliers.begin(),
                                                appliers.end());
  registerDeciderPipeline(
      argument, description, createDecider,
      [list](OpPassManager &pm, StringRef,
             std::unique_ptr<Pass> decider) -> LogicalResult {
        bool onGraphs = decider->getOpName() == GraphOp::getOperationName();
        if (!onGraphs) // before the nested graph pass manager
          pm.addPass(std::move(decider));
        OpPassManager &graphPM = nestOnGraphs(pm);
        if (onGraphs)
          graphPM.addPass(std::move(decider));
        for (auto create : list)
          graphPM.addPass(create());
        return success();
      });
}

void mlir::joint::registerJointPipelines() {
  registerDeciderPipeline(
      "joint-activation-checkpoint",
      "Activation checkpointing: joint-tag-recompute-policy (decide), then "
      "joint-remat (apply), with the tag pass's options",
      createJointTagRecomputePolicy,
      [](OpPassManager &pm, StringRef optionString,
         std::unique_ptr<Pass> tag) -> LogicalResult {
        ActivationCheckpointOptions options; // for `mode=off`
        if (failed(options.parseFromString(optionString)))
          return failure();
        buildActivationCheckpointPipeline(pm, options, std::move(tag));
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> print) {
        print(ActivationCheckpointOptions());
      });
  registerCpuOffloadPipeline();
  registerOptimizeMemoryPipeline();
}

LogicalResult mlir::joint::addJointPassPipeline(StringRef pipeline,
                                                OpPassManager &pm,
                                                raw_ostream &errors) {
  StringRef text = pipeline.trim();
  if (text.consume_front("builtin.module(") && !text.consume_back(")")) {
    errors << "missing ')' after builtin.module(";
    return failure();
  }
  // Split at top-level commas.
  SmallVector<StringRef> elements;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0, e = text.size(); i <= e; ++i) {
    char c = i < e ? text[i] : ',';
    if (c == '{' || c == '(')
      ++depth;
    else if (c == '}' || c == ')')
      --depth;
    if (depth < 0) {
      errors << "unbalanced '" << c << "' in '" << text << "'";
      return failure();
    }
    if (c == ',' && depth == 0) {
      if (StringRef element = text.slice(start, i).trim(); !element.empty())
        elements.push_back(element);
      start = i + 1;
    }
  }
  if (depth != 0) {
    errors << "unbalanced brackets in '" << text << "'";
    return failure();
  }
  auto handler = [&](const Twine &message) {
    errors << message;
    return failure();
  };
  for (StringRef element : elements) {
    size_t cut = element.find_first_of("{(");
    StringRef name = element.take_front(cut).trim();
    if (cut != StringRef::npos && element[cut] == '(') {
      // Anchored: MLIR's parser nests it explicitly.
      if (failed(parsePassPipeline(element, pm, errors)))
        return failure();
      continue;
    }
    StringRef options;
    if (cut != StringRef::npos) {
      if (!element.ends_with("}")) {
        errors << "options of '" << name << "' must end with '}'";
        return failure();
      }
      options = element.drop_front(cut + 1).drop_back();
    }
    // The registry's builders add to `pm`, whose implicit nesting puts
    // per-graph passes under joint.graph.
    const PassRegistryEntry *entry = PassPipelineInfo::lookup(name);
    if (!entry)
      entry = PassInfo::lookup(name);
    if (!entry) {
      errors << "'" << name
             << "' does not refer to a registered pass or pass pipeline";
      return failure();
    }
    if (failed(entry->addToPipeline(pm, options, handler))) {
      // The same trailer as MLIR's textual parser.
      errors << "\nfailed to add `" << name << "` with options `" << options
             << "`";
      return failure();
    }
  }
  return success();
}

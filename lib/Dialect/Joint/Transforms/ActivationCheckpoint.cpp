//===- ActivationCheckpoint.cpp - The decide-then-apply pipelines ---------===//
//
// joint-activation-checkpoint: a registered pass pipeline, the decider
// joint-tag-recompute-policy followed by the applier joint-remat (both per
// joint.graph), taking the tag pass's options (generated from its Passes.td
// record). Each pass emits its own summary remark; mode=off adds no pass,
// so the pipeline then changes nothing, not even hand-written tags. Also
// registerDeciderPipeline, which the offload and planner pipelines use, and
// registerJointPipelines.
//
//===----------------------------------------------------------------------===//

#include "joint/Dialect/Joint/Transforms/CpuOffload.h"
#include "joint/Dialect/Joint/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::joint;

namespace {
/// The options of joint-activation-checkpoint: joint-tag-recompute-policy's,
/// generated from its Passes.td record
/// (JointTagRecomputePolicyPipelineOptions).
#define GEN_PASS_PIPELINE_OPTIONS_JOINTTAGRECOMPUTEPOLICY
#include "joint/Support/PassOptions.h.inc"
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
  // PassPipelineRegistration<JointTagRecomputePolicyPipelineOptions>, with
  // option errors given to the handler (the template prints them to stderr).
  registerPassPipeline(
      "joint-activation-checkpoint",
      "Activation checkpointing: joint-tag-recompute-policy (decide), then "
      "joint-remat (apply), with the tag pass's options",
      [](OpPassManager &pm, StringRef optionString,
         function_ref<LogicalResult(const Twine &)> errorHandler)
          -> LogicalResult {
        JointTagRecomputePolicyPipelineOptions options;
        std::string why;
        llvm::raw_string_ostream whyStream(why);
        if (failed(options.parseFromString(optionString, whyStream)))
          return errorHandler(why);
        // The tag pass parses the same text: it checks which options were
        // given (layer-count with layer-indices) when it runs.
        std::unique_ptr<Pass> tag = createJointTagRecomputePolicy();
        if (failed(tag->initializeOptions(optionString, errorHandler)))
          return failure();
        // mode=off adds no pass: not even hand-written tags are applied.
        if (options.mode == CheckpointMode::off)
          return success();
        OpPassManager &graphPM = nestOnGraphs(pm);
        graphPM.addPass(std::move(tag));
        graphPM.addPass(createJointRemat());
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> print) {
        print(JointTagRecomputePolicyPipelineOptions());
      });
  registerCpuOffloadPipeline();
  registerOptimizeMemoryPipeline();
}

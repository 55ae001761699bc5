//===- Passes.h - Passes on joint graphs ------------------------*- C++ -*-===//
//
// Declarations and registration of the joint-graph passes (Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_DIALECT_JOINT_TRANSFORMS_PASSES_H
#define JOINT_DIALECT_JOINT_TRANSFORMS_PASSES_H

#include "joint/Dialect/AO/IR/AOOps.h"
#include "joint/Dialect/Joint/IR/JointOps.h"
#include "joint/Dialect/Joint/Transforms/ActivationCheckpoint.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include <functional>
#include <string>

namespace mlir {
namespace joint {

/// `format` of joint-memory-report.
enum class ReportFormat { text, json };

/// `scope` of joint-cpu-offload: which forward activations are candidates.
enum class OffloadScope { attention, block, all };

#define GEN_PASS_DECL
#include "joint/Dialect/Joint/Transforms/Passes.h.inc"

/// A number option's value as an option error quotes it: `%g`, so -1, 0.5,
/// 1e+30, inf and nan read as the user would write them.
inline std::string formatOptionValue(double value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", value);
  return text;
}

/// Writes the joint-memory-report of `module` (one joint.graph) to `os`, in
/// process: the pass's numbers and warnings, with `options.output` ignored.
/// Emits an error and fails on bad options or a module without exactly one
/// graph. Used by the Python bindings (joint_mlir._core).
LogicalResult writeMemoryReport(ModuleOp module,
                                const JointMemoryReportOptions &options,
                                llvm::raw_ostream &os);

#define GEN_PASS_REGISTRATION
#include "joint/Dialect/Joint/Transforms/Passes.h.inc"

/// Registers the pass pipelines: joint-activation-checkpoint
/// (joint-tag-recompute-policy, then joint-remat) and joint-cpu-offload
/// (joint-tag-cpu-offload, then joint-apply-cpu-offload) and
/// joint-optimize-memory.
void registerJointPipelines();

/// Registers decide-then-apply pipeline `argument` whose options are its
/// decider's (declared once, in Passes.td): the option string is given
/// verbatim to the decider `createDecider` makes, which validates it, then
/// to `build`, which adds the decider and the appliers. `printOptions` lists
/// options for --help; without it --help points to the decider's entry.
using DeciderPipelineBuilder = std::function<LogicalResult(
    OpPassManager &, StringRef optionString, std::unique_ptr<Pass> decider)>;
using PipelineOptionsPrinter =
    std::function<void(function_ref<void(const mlir::detail::PassOptions &)>)>;
void registerDeciderPipeline(StringRef argument, StringRef description,
                             std::unique_ptr<Pass> (*createDecider)(),
                             DeciderPipelineBuilder build,
                             PipelineOptionsPrinter printOptions = {});
/// The same for a pipeline that is the decider, then `appliers` on each
/// joint.graph (the decider too, unless it runs on the module).
void registerDeciderPipeline(StringRef argument, StringRef description,
                             std::unique_ptr<Pass> (*createDecider)(),
                             ArrayRef<std::unique_ptr<Pass> (*)()> appliers);

/// Registers joint-optimize-memory (joint-plan-memory, then
/// joint-apply-cpu-offload and joint-remat),
/// with the planner's options; called by registerJointPipelines.
void registerOptimizeMemoryPipeline();

/// The pass manager a pipeline builder adds per-graph passes to: `pm`
/// itself when it runs on joint.graph or on any op, else a joint.graph pass
/// manager nested under it (explicit-nesting pass managers need it).
OpPassManager &nestOnGraphs(OpPassManager &pm);

} // namespace joint
} // namespace mlir

#endif // JOINT_DIALECT_JOINT_TRANSFORMS_PASSES_H

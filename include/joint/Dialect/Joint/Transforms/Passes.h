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

namespace mlir {
namespace joint {

/// `format` of joint-memory-report.
enum class ReportFormat { text, json };

/// `scope` of joint-cpu-offload: which forward activations are candidates.
enum class OffloadScope { attention };

#define GEN_PASS_DECL
#include "joint/Dialect/Joint/Transforms/Passes.h.inc"

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
/// (joint-tag-recompute-policy, then joint-remat) and joint-optimize-memory.
void registerJointPipelines();

/// Registers joint-optimize-memory (joint-plan-memory, then joint-remat),
/// with the planner's options; called by registerJointPipelines.
void registerOptimizeMemoryPipeline();

} // namespace joint
} // namespace mlir

#endif // JOINT_DIALECT_JOINT_TRANSFORMS_PASSES_H

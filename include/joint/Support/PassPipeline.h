//===- PassPipeline.h - Pass pipelines from text and flags ------*- C++ -*-===//
//
// The one place where joint-mlir turns a pass pipeline written as text
// (joint-opt's --pass-pipeline and pass flags, joint-compile --pipeline, the
// Python extension's run_pipeline) into passes. MLIR's own parser
// (mlir::parsePassPipeline) builds them; on top of it this module nests
// per-graph passes written at the top level on each joint.graph, and, when
// MLIR rejects a pass's options, names the pass, the option and the options
// it takes (declared once, in the pass's Passes.td; see PassOptions.h.inc).
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_SUPPORT_PASSPIPELINE_H
#define JOINT_SUPPORT_PASSPIPELINE_H

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"
#include <optional>

namespace mlir {
namespace joint {

/// Adds `pipeline` to the module pass manager `pm`: MLIR's pipeline text
/// (`pass{options},anchor(pass,...)`), bare or inside `builtin.module(...)`;
/// a per-graph pass outside any anchor runs on each joint.graph. An empty
/// text adds nothing. On error writes one message to `errors` (an unknown
/// pass, or the bad option with the pass's valid options) and fails.
LogicalResult addPassPipeline(OpPassManager &pm, StringRef pipeline,
                              raw_ostream &errors);

/// Checks `pipeline` as `--pass-pipeline` takes it (anchored, e.g.
/// `builtin.module(joint.graph(joint-remat))`) without running anything;
/// on error writes the message addPassPipeline would and fails.
LogicalResult verifyAnchoredPassPipeline(StringRef pipeline,
                                         raw_ostream &errors);

/// Adds the registered pass or pass pipeline `name` with `options` (the text
/// inside `{...}`) to `pm`. On bad options writes one message to `errors`
/// naming the pass, the bad option and the valid ones; fails too when `name`
/// is not registered.
LogicalResult addRegisteredPass(OpPassManager &pm, StringRef name,
                                StringRef options, raw_ostream &errors);

/// The options of the registered pass or pipeline `name` that messages list:
/// ", "-joined and sorted, without removed spellings (options flagged
/// `::llvm::cl::Hidden` in Passes.td); a decide-then-apply pipeline's are its
/// first pass's. std::nullopt for a pass no joint Passes.td declares.
std::optional<std::string> getListedOptionNames(StringRef name);

} // namespace joint
} // namespace mlir

#endif // JOINT_SUPPORT_PASSPIPELINE_H

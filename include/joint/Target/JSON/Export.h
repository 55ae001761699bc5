//===- Export.h - The joint dialect to joint-graph JSON ---------*- C++ -*-===//
//
// Writes a module holding one joint.graph back as a format v1 document.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_TARGET_JSON_EXPORT_H
#define JOINT_TARGET_JSON_EXPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir {
namespace joint {

/// Writes `module` (one joint.graph plus its joint.schema table) as a
/// format v1 document: FX getitem nodes are re-created with their original
/// names after multi-output ops, and ao ops become `ao::*` nodes. Emits an
/// error and returns failure for IR the format cannot hold (no graph, several
/// graphs, ops of other dialects).
LogicalResult exportJointGraph(ModuleOp module, llvm::raw_ostream &os);

/// Registers `--export-joint-json` for joint-translate.
void registerExportJointJSONTranslation();

} // namespace joint
} // namespace mlir

#endif // JOINT_TARGET_JSON_EXPORT_H

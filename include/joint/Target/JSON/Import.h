//===- Import.h - joint-graph JSON to the joint dialect ---------*- C++ -*-===//
//
// Reads a joint-graph file written by the exporter (docs/format.md) into a
// module holding one joint.graph and the joint.schema table.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_TARGET_JSON_IMPORT_H
#define JOINT_TARGET_JSON_IMPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
namespace joint {

/// Imports a format v1 document (plain JSON, or gzip detected by its magic
/// bytes) into a new module. `filename` names the input in diagnostics, which
/// carry line:column for syntax errors and a JSON pointer plus the node name
/// for everything else. Returns null after emitting a diagnostic on any bad
/// input (malformed JSON, unknown version, missing or mistyped fields,
/// dangling or forward references, duplicate names, unknown dtype, sizes out
/// of range, operator-table mismatches). When no node carries an
/// `autograd_backward` tag, tags are reconstructed structurally (loss
/// ancestors are forward, producers of the gradients without a module stack
/// are backward, as torch's autograd records them) and a remark says so.
OwningOpRef<ModuleOp> importJointGraph(llvm::StringRef buffer,
                                       MLIRContext *context,
                                       llvm::StringRef filename = "<input>");

/// True when a tool input is joint-graph JSON rather than MLIR: by the name
/// (`.json`, `.json.gz`), else by the first byte (`{` or the gzip magic), as
/// for stdin.
bool isJointJSON(llvm::StringRef filename, llvm::StringRef buffer);

/// Registers `--import-joint-json` for joint-translate.
void registerImportJointJSONTranslation();

} // namespace joint
} // namespace mlir

#endif // JOINT_TARGET_JSON_IMPORT_H

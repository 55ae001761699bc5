//===- BuiltinSchemas.h - Operator-table entries passes create --*- C++ -*-===//
//
// The joint.schema entries of the aten ops a pass may create in a graph whose
// operator table (written by the exporter for the ops it traced) lacks them.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_DIALECT_JOINT_IR_BUILTINSCHEMAS_H
#define JOINT_DIALECT_JOINT_IR_BUILTINSCHEMAS_H

#include "joint/Dialect/Joint/IR/JointOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace joint {

/// Adds to `module` torch's operator-table entry (schema, arguments with
/// alias sets and defaults, tags; as format.py's operator_entry writes them)
/// of each of `targets` it lacks. Known: aten::slice.Tensor, t, add.Tensor,
/// div.Tensor, addmm, mm, cat. Fails with an error naming an unknown target.
LogicalResult addBuiltinSchemas(ModuleOp module, ArrayRef<StringRef> targets);

} // namespace joint
} // namespace mlir

#endif // JOINT_DIALECT_JOINT_IR_BUILTINSCHEMAS_H

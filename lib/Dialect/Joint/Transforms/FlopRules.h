//===- FlopRules.h - Ops the cost model has no FLOP rule for ----*- C++ -*-===//
//
// The consumers that price a graph (joint-memory-report, joint-plan-memory)
// name the ops whose FLOPs the cost model only guesses
// (CostModel::getGuessedFlopOps), e.g. a typo'd `aten::addmn.default` or a
// custom kernel; such an op counts one FLOP per element of its largest
// tensor.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_LIB_DIALECT_JOINT_TRANSFORMS_FLOPRULES_H
#define JOINT_LIB_DIALECT_JOINT_TRANSFORMS_FLOPRULES_H

#include "joint/Dialect/Joint/IR/JointOps.h"

namespace mlir {
namespace joint {

/// One warning at the first of `ops` (none when empty): `<pass>: N op(s)
/// have no FLOP rule ...`, naming the first three nodes and their targets.
void warnOpsWithoutFlopRule(ArrayRef<CallFunctionOp> ops, StringRef pass);

} // namespace joint
} // namespace mlir

#endif // JOINT_LIB_DIALECT_JOINT_TRANSFORMS_FLOPRULES_H

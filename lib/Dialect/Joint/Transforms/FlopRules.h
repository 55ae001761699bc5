//===- FlopRules.h - Ops the cost model has no FLOP rule for ----*- C++ -*-===//
//
// The consumers that price a graph (joint-memory-report, joint-plan-memory)
// name the ops whose FLOPs the cost model only guesses: a target that is not
// one of its formula, data-movement or element-priced families (docs/
// cost-model.md), e.g. a typo'd `aten::addmn.default` or a custom kernel.
// Such an op still counts one FLOP per element of its largest tensor.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_LIB_DIALECT_JOINT_TRANSFORMS_FLOPRULES_H
#define JOINT_LIB_DIALECT_JOINT_TRANSFORMS_FLOPRULES_H

#include "joint/Analysis/StorageAliasAnalysis.h"

namespace mlir {
namespace joint {

/// The joint.call_functions of the analysed graph, in program order, that
/// have a `joint.schema` entry but no FLOP rule. Free ops are never listed:
/// views, ops without tensors (size queries, SymInt arithmetic), ao ops.
/// Element-priced ops are those torch tags `pointwise` or `reduction` plus
/// the norm, softmax, loss, scan, sort and scatter families. O(#ops).
SmallVector<CallFunctionOp>
getOpsWithoutFlopRule(const StorageAliasAnalysis &aliases);

/// One warning at the first of `ops` (none when empty): `<pass>: N op(s)
/// have no FLOP rule ...`, naming the first three nodes and their targets.
void warnOpsWithoutFlopRule(ArrayRef<CallFunctionOp> ops, StringRef pass);

} // namespace joint
} // namespace mlir

#endif // JOINT_LIB_DIALECT_JOINT_TRANSFORMS_FLOPRULES_H

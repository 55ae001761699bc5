//===- JointOps.h - The joint dialect ---------------------------*- C++ -*-===//
//
// Declares the joint dialect, its attributes (policy, phase, tensor facts,
// SymInt expressions, operator-schema arguments) and its operations.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_DIALECT_JOINT_IR_JOINTOPS_H
#define JOINT_DIALECT_JOINT_IR_JOINTOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace joint {

/// A torch SymInt as recorded at trace time: a static integer (`expr` null)
/// or a symbolic expression such as `s0*2` with its trace-time hint. Unbacked
/// (data-dependent) symbols have no hint (`kNoHint`).
struct SymInt {
  static constexpr int64_t kNoHint = INT64_MIN;
  int64_t hint = 0;
  StringAttr expr;

  static SymInt getStatic(int64_t v) { return SymInt{v, nullptr}; }
  bool isStatic() const { return !expr; }
  bool hasHint() const { return hint != kNoHint; }
  bool operator==(const SymInt &o) const {
    return hint == o.hint && expr == o.expr;
  }
};
inline llvm::hash_code hash_value(const SymInt &s) {
  return llvm::hash_combine(s.hint, s.expr);
}
/// Prints `8`, `sym("s0*2", 16)` or `sym("u0")`.
AsmPrinter &operator<<(AsmPrinter &printer, const SymInt &value);

/// The RNG state that ops tagged `nondeterministic_seeded` read and advance
/// (torch's generator): two random ops are never merged, reordered or dropped.
struct RandomStateResource
    : public SideEffects::Resource::Base<RandomStateResource> {
  StringRef getName() final { return "joint.random_state"; }
};

/// The process group a collective (`_c10d_functional::`, `c10d::`) talks to:
/// every rank must issue the same collectives in the same order.
struct CommunicationResource
    : public SideEffects::Resource::Base<CommunicationResource> {
  StringRef getName() final { return "joint.communication"; }
};

/// An operator whose kernel writes arguments that its schema does not mark
/// `Tensor(a!)` (batch norm's running statistics), optionally only when a
/// bool argument is true. The table is data in JointOps.cpp, listed in
/// docs/passes.md with how it was found.
struct HiddenWrite {
  /// Operator packet (`aten::native_batch_norm`): matches every overload.
  llvm::StringLiteral target;
  /// Names of the schema arguments the kernel writes (in place, when given).
  llvm::StringLiteral args[2];
  /// Name of the bool argument that enables the write (`training`); empty
  /// when the op always writes.
  llvm::StringLiteral when;
};

/// Every entry of the hidden-write table.
ArrayRef<HiddenWrite> getHiddenWrites();

/// The hidden-write entry of `target` (`ns::op.overload`), or null.
const HiddenWrite *lookupHiddenWrite(StringRef target);

} // namespace joint

template <>
struct FieldParser<joint::SymInt> {
  static FailureOr<joint::SymInt> parse(AsmParser &parser);
};

} // namespace mlir

#include "joint/Dialect/Joint/IR/JointDialect.h.inc"
#include "joint/Dialect/Joint/IR/JointEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "joint/Dialect/Joint/IR/JointAttrs.h.inc"

#define GET_OP_CLASSES
#include "joint/Dialect/Joint/IR/JointOps.h.inc"

namespace mlir {
namespace joint {
// Argument/result attribute names on joint.graph.
inline constexpr llvm::StringLiteral kRoleAttr = "joint.role";
inline constexpr llvm::StringLiteral kFQNAttr = "joint.fqn";
inline constexpr llvm::StringLiteral kPathAttr = "joint.path";
inline constexpr llvm::StringLiteral kKeyAttr = "joint.key";
inline constexpr llvm::StringLiteral kMetaAttr = "joint.meta";

/// Graph attribute holding the exporter's model structure (docs/format.md,
/// "model"); verified by the dialect, read through ModelStructure.
inline constexpr llvm::StringLiteral kModelAttr = "joint.model";
/// Discardable op attributes of the offload decision contract (integers
/// >= 0, regions; docs/passes.md, "CPU offload"): issue the reload this
/// many regions before its first backward reader, place the forward wait
/// this many regions after the last forward use.
inline constexpr llvm::StringLiteral kPrefetchAttr = "joint.prefetch";
inline constexpr llvm::StringLiteral kDeferAttr = "joint.defer";
/// On an ao.reload: the storage id of the reloaded copy. The offload applier
/// renumbers the storage's backward aliases and view replays to a fresh id;
/// this attribute ties that id to the reload (StorageAliasAnalysis places
/// them in the reload's storage by it).
inline constexpr llvm::StringLiteral kReloadStorageAttr = "joint.storage";

/// Checks the shape of a `joint.model` value: a dictionary whose optional
/// `block_containers` is a list of dictionaries with a `blocks` list of
/// non-empty strings, and whose optional `attention` is a list of
/// dictionaries with a string `fqn`. `emitError` starts the diagnostic.
LogicalResult
verifyModelAttr(Attribute model,
                llvm::function_ref<InFlightDiagnostic()> emitError);
} // namespace joint
} // namespace mlir

#endif // JOINT_DIALECT_JOINT_IR_JOINTOPS_H

//===- JointDialect.cpp - The joint dialect -------------------------------===//
//
// Registers the joint dialect's operations and attributes, and verifies the
// dialect's discardable attributes: `joint.model` on a graph (its shape, once,
// so every reader can trust it) and the offload distances `joint.prefetch` /
// `joint.defer` (non-negative integers).
//
//===----------------------------------------------------------------------===//

#include "joint/Dialect/AO/IR/AOOps.h"
#include "joint/Dialect/Joint/IR/JointOps.h"

using namespace mlir;
using namespace mlir::joint;

#include "joint/Dialect/Joint/IR/JointDialect.cpp.inc"

void JointDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "joint/Dialect/Joint/IR/JointOps.cpp.inc"
      >();
  registerAttributes();
}

/// Verifies the optional list `dict[key]` of `joint.model`: a list (else
/// "must be a list of <what>") whose entries `verifyEntry` accepts, given
/// each entry's index.
static LogicalResult
verifyModelList(DictionaryAttr dict, StringRef key, StringRef what,
                function_ref<InFlightDiagnostic()> emitError,
                function_ref<LogicalResult(size_t, Attribute)> verifyEntry) {
  Attribute value = dict.get(key);
  if (!value)
    return success();
  auto list = dyn_cast<ArrayAttr>(value);
  if (!list)
    return emitError() << "'" << kModelAttr << "' entry '" << key
                       << "' must be a list of " << what;
  for (auto [i, entry] : llvm::enumerate(list))
    if (failed(verifyEntry(i, entry)))
      return failure();
  return success();
}

LogicalResult
mlir::joint::verifyModelAttr(Attribute model,
                             function_ref<InFlightDiagnostic()> emitError) {
  auto dict = dyn_cast<DictionaryAttr>(model);
  if (!dict)
    return emitError() << "'" << kModelAttr
                       << "' must be a dictionary (docs/format.md, model)";
  auto verifyContainer = [&](size_t i, Attribute entry) -> LogicalResult {
    auto container = dyn_cast<DictionaryAttr>(entry);
    auto blocks =
        container ? container.getAs<ArrayAttr>("blocks") : ArrayAttr();
    if (!blocks)
      return emitError() << "'" << kModelAttr << "' block_containers[" << i
                         << "] must be a dictionary with a 'blocks' list "
                            "of module FQNs";
    for (Attribute b : blocks) {
      auto fqn = dyn_cast<StringAttr>(b);
      if (!fqn || fqn.getValue().empty())
        return emitError() << "'" << kModelAttr << "' block_containers[" << i
                           << "].blocks must hold non-empty strings";
    }
    return success();
  };
  auto verifyAttention = [&](size_t i, Attribute entry) -> LogicalResult {
    auto e = dyn_cast<DictionaryAttr>(entry);
    if (!e || !e.getAs<StringAttr>("fqn"))
      return emitError() << "'" << kModelAttr << "' attention entry " << i
                         << " has no string 'fqn'";
    return success();
  };
  if (failed(verifyModelList(dict, "block_containers", "dictionaries",
                             emitError, verifyContainer)))
    return failure();
  return verifyModelList(dict, "attention", "{fqn, class}", emitError,
                         verifyAttention);
}

LogicalResult JointDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kPrefetchAttr || name == kDeferAttr) {
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!value || value.getValue().isNegative() ||
        value.getValue().getActiveBits() > 31)
      return op->emitOpError()
             << "'" << name
             << "' must be a non-negative integer number of regions";
    return success();
  }
  if (name == kReloadStorageAttr) {
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!isa<ao::ReloadOp>(op) || !value || value.getValue().isNegative())
      return op->emitOpError()
             << "'" << name
             << "' must be a non-negative storage id on an ao.reload";
    return success();
  }
  if (name != kModelAttr)
    return success();
  // On a joint.graph (or the function a lowering made of it). Not
  // emitOpError: its note would print the whole graph.
  auto symbol = op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
  return verifyModelAttr(attr.getValue(), [&]() {
    InFlightDiagnostic d = emitError(op->getLoc());
    if (symbol)
      d << (isa<GraphOp>(op) ? "graph @" : "@") << symbol.getValue() << ": ";
    return d;
  });
}

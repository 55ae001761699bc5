//===- PrintStorageGroups.cpp - Report storage groups ---------------------===//
//
// joint-print-storage-groups: one remark per interesting storage group, so a
// user (and the lit suite) can see the aliasing the memory passes rely on.
//
//===----------------------------------------------------------------------===//

#include "joint/Analysis/StorageAliasAnalysis.h"
#include "joint/Dialect/Joint/Transforms/Passes.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTPRINTSTORAGEGROUPS
#include "joint/Dialect/Joint/Transforms/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

namespace {

/// The FX node name of a value (graph argument name, op name, getitem name).
std::string nameOf(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto graph = dyn_cast<GraphOp>(arg.getOwner()->getParentOp());
    if (graph)
      if (DictionaryAttr attrs = graph.getArgAttrDict(arg.getArgNumber())) {
        for (StringRef key : {"joint.name", "joint.fqn", "joint.path"})
          if (auto s = attrs.getAs<StringAttr>(key))
            return s.str();
      }
    return "arg" + std::to_string(arg.getArgNumber());
  }
  Operation *op = v.getDefiningOp();
  if (auto aten = dyn_cast<CallFunctionOp>(op)) {
    unsigned i = cast<OpResult>(v).getResultNumber();
    if (ArrayAttr names = aten.getResultNamesAttr())
      if (!cast<StringAttr>(names[i]).getValue().empty())
        return cast<StringAttr>(names[i]).str();
    return aten.getName().str();
  }
  return op->getName().getStringRef().str();
}

std::string nameOf(Operation *op) {
  if (auto aten = dyn_cast<CallFunctionOp>(op))
    return aten.getName().str();
  return op->getName().getStringRef().str();
}

struct PrintStorageGroups
    : joint::impl::JointPrintStorageGroupsBase<PrintStorageGroups> {
  void runOnOperation() override {
    StorageAliasAnalysis &analysis = getAnalysis<StorageAliasAnalysis>();
    for (const Storage *s : analysis.getStorages()) {
      if (s->members.size() < 2 && !s->isWritten())
        continue;
      InFlightDiagnostic d = emitRemark(s->owner.getLoc());
      d << "storage " << s->id << " owner " << nameOf(s->owner) << " members [";
      llvm::interleaveComma(s->members, d, [&](Value v) { d << nameOf(v); });
      d << "]";
      if (s->isWritten()) {
        d << " writers [";
        llvm::interleaveComma(s->writers, d,
                              [&](Operation *op) { d << nameOf(op); });
        d << "]";
      }
      if (s->isGraphInput)
        d << " graph-input";
      if (s->isGraphOutput)
        d << " graph-output";
    }
    markAllAnalysesPreserved();
  }
};

} // namespace

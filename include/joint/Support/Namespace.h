//===- Namespace.h - Fresh FX node names for one graph ----------*- C++ -*-===//
//
// The one generator of fresh node names (in the manner of CIRCT's Namespace):
// it knows every FX node name a joint.graph uses (argument `joint.name`s,
// joint.call_function names and result names, names of ao ops) and hands out
// names derived from a base, `base`, then `base_1`, `base_2`, ..., each once.
// Remat clones, offload replays and the JSON exporter draw from it, so no two
// FX nodes of a transformed graph share a name.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_SUPPORT_NAMESPACE_H
#define JOINT_SUPPORT_NAMESPACE_H

#include "joint/Dialect/AO/IR/AOOps.h"
#include "joint/Dialect/Joint/IR/JointOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir {
namespace joint {

class Namespace {
public:
  explicit Namespace(MLIRContext *context) : context(context) {}

  /// Records every node name of `graph`. O(#ops + #arguments); names are
  /// kept as the context's uniqued StringAttrs (pointer hashing, no copy).
  void addGraph(GraphOp graph) {
    used.reserve(used.size() + graph.getNumArguments() +
                 2 * graph.getBody().front().getOperations().size());
    for (unsigned i = 0, e = graph.getNumArguments(); i < e; ++i)
      if (DictionaryAttr attrs = graph.getArgAttrDict(i))
        if (auto n = attrs.getAs<StringAttr>("joint.name"))
          used.insert(n);
    for (Operation &op : graph.getBody().front()) {
      if (auto aten = dyn_cast<CallFunctionOp>(op)) {
        used.insert(aten.getNameAttr());
        if (ArrayAttr names = aten.getResultNamesAttr())
          for (Attribute n : names)
            used.insert(cast<StringAttr>(n));
        continue;
      }
      if (isa_and_nonnull<ao::AODialect>(op.getDialect()))
        if (auto n = op.getAttrOfType<StringAttr>("name"))
          used.insert(n);
    }
  }
  /// Marks `name` as used.
  void add(StringRef name) { used.insert(StringAttr::get(context, name)); }
  /// `base` when unused, else `base_<i>` for the smallest free i >= 1; the
  /// result is recorded as used.
  std::string newName(const Twine &base) {
    std::string name = base.str();
    for (unsigned i = 1; used.contains(StringAttr::get(context, name)); ++i)
      name = (base + "_" + Twine(i)).str();
    add(name);
    return name;
  }
  /// Names `clone` (a copy of `original`: a remat clone or an offload view
  /// replay) `<name><suffix>` and each result `<result name><suffix>`, each
  /// made fresh by newName. Call inside the rewriter's modifyOpInPlace.
  void nameClone(CallFunctionOp clone, CallFunctionOp original,
                 StringRef suffix) {
    clone.setNameAttr(
        StringAttr::get(context, newName(original.getName() + suffix)));
    ArrayAttr results = original.getResultNamesAttr();
    if (!results)
      return;
    SmallVector<Attribute> fresh;
    for (Attribute n : results)
      fresh.push_back(StringAttr::get(
          context, newName(cast<StringAttr>(n).getValue() + suffix)));
    clone.setResultNamesAttr(ArrayAttr::get(context, fresh));
  }

private:
  MLIRContext *context;
  llvm::DenseSet<StringAttr> used;
};

} // namespace joint
} // namespace mlir

#endif // JOINT_SUPPORT_NAMESPACE_H

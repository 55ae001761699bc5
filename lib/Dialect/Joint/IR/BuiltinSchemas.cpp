//===- BuiltinSchemas.cpp - Operator-table entries passes create ----------===//
//
// torch's schemas of the aten ops passes create (joint-chunk-loss's slices,
// sums, accumulations and concatenation), as the exporter records them.
//
//===----------------------------------------------------------------------===//

#include "joint/Dialect/Joint/IR/BuiltinSchemas.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::joint;

LogicalResult mlir::joint::addBuiltinSchemas(ModuleOp module,
                                             ArrayRef<StringRef> targets) {
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  b.setInsertionPointToStart(module.getBody());
  auto arg = [&](StringRef name, StringRef type, bool kwargOnly = false,
                 StringRef alias = "", StringRef def = "") {
    return SchemaArgAttr::get(ctx, name, type, kwargOnly, alias, "", false,
                              def.empty() ? StringAttr()
                                          : StringAttr::get(ctx, def));
  };
  auto tensorReturn = [&](StringRef alias = "") {
    return SchemaArgAttr::get(ctx, "", "Tensor", false, alias, "", false,
                              StringAttr());
  };
  struct Entry {
    StringRef target, schema;
    SmallVector<Attribute> args;
    StringRef alias;
    SmallVector<StringRef> tags;
  };
  SmallVector<Entry> entries;
  entries.push_back(
      {"aten::slice.Tensor",
       "aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, "
       "SymInt? end=None, SymInt step=1) -> Tensor(a)",
       {arg("self", "Tensor", false, "a"), arg("dim", "int", false, "", "0"),
        arg("start", "SymInt?", false, "", "None"),
        arg("end", "SymInt?", false, "", "None"),
        arg("step", "SymInt", false, "", "1")},
       "a",
       {"core", "pt2_compliant_tag"}});
  entries.push_back({"aten::t.default",
                     "aten::t(Tensor(a) self) -> Tensor(a)",
                     {arg("self", "Tensor", false, "a")},
                     "a",
                     {"pt2_compliant_tag"}});
  entries.push_back({"aten::add.Tensor",
                     "aten::add.Tensor(Tensor self, Tensor other, *, Scalar "
                     "alpha=1) -> Tensor",
                     {arg("self", "Tensor"), arg("other", "Tensor"),
                      arg("alpha", "Scalar", true, "", "1")},
                     "",
                     {"core", "pointwise", "pt2_compliant_tag"}});
  entries.push_back({"aten::div.Tensor",
                     "aten::div.Tensor(Tensor self, Tensor other) -> Tensor",
                     {arg("self", "Tensor"), arg("other", "Tensor")},
                     "",
                     {"core", "pointwise", "pt2_compliant_tag"}});
  entries.push_back(
      {"aten::addmm.default",
       "aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, "
       "Scalar alpha=1) -> Tensor",
       {arg("self", "Tensor"), arg("mat1", "Tensor"), arg("mat2", "Tensor"),
        arg("beta", "Scalar", true, "", "1"),
        arg("alpha", "Scalar", true, "", "1")},
       "",
       {"core", "pt2_compliant_tag"}});
  entries.push_back({"aten::mm.default",
                     "aten::mm(Tensor self, Tensor mat2) -> Tensor",
                     {arg("self", "Tensor"), arg("mat2", "Tensor")},
                     "",
                     {"core", "pt2_compliant_tag"}});
  entries.push_back(
      {"aten::cat.default",
       "aten::cat(Tensor[] tensors, int dim=0) -> Tensor",
       {arg("tensors", "Tensor[]"), arg("dim", "int", false, "", "0")},
       "",
       {"core", "pt2_compliant_tag"}});
  for (StringRef target : targets) {
    if (SymbolTable::lookupSymbolIn(module, target))
      continue;
    Entry *found = llvm::find_if(
        entries, [&](const Entry &e) { return e.target == target; });
    if (found == entries.end())
      return emitError(module.getLoc())
             << "no built-in operator-table entry for '" << target << "'";
    Entry &e = *found;
    SmallVector<Attribute> tags;
    for (StringRef t : e.tags)
      tags.push_back(StringAttr::get(ctx, t));
    SmallVector<NamedAttribute> attrs{
        b.getNamedAttr(SymbolTable::getSymbolAttrName(),
                       b.getStringAttr(e.target)),
        b.getNamedAttr("schema", b.getStringAttr(e.schema)),
        b.getNamedAttr("arguments", b.getArrayAttr(e.args)),
        b.getNamedAttr("returns", b.getArrayAttr({tensorReturn(e.alias)})),
        b.getNamedAttr("tags", b.getArrayAttr(tags))};
    SchemaOp::create(b, module.getLoc(), TypeRange(), ValueRange(), attrs);
  }
  return success();
}

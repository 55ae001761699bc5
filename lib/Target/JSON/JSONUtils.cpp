//===- JSONUtils.cpp - Generic JSON <-> attribute conversion --------------===//
//
// Lossless conversion used for metadata the passes keep but do not read.
//
//===----------------------------------------------------------------------===//

#include "JSONUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::joint::json_detail;

Attribute mlir::joint::json_detail::jsonToAttr(MLIRContext *ctx,
                                               const json &value, int depth) {
  if (depth > kMaxValueDepth)
    return {};
  Builder b(ctx);
  switch (value.type()) {
  case json::value_t::null:
    return UnitAttr::get(ctx);
  case json::value_t::boolean:
    return b.getBoolAttr(value.get<bool>());
  case json::value_t::number_integer:
    return b.getI64IntegerAttr(value.get<int64_t>());
  case json::value_t::number_unsigned: {
    uint64_t u = value.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX))
      return {};
    return b.getI64IntegerAttr(static_cast<int64_t>(u));
  }
  case json::value_t::number_float:
    return b.getF64FloatAttr(value.get<double>());
  case json::value_t::string:
    return b.getStringAttr(value.get_ref<const std::string &>());
  case json::value_t::array: {
    SmallVector<Attribute> elements;
    for (const json &e : value) {
      Attribute a = jsonToAttr(ctx, e, depth + 1);
      if (!a)
        return {};
      elements.push_back(a);
    }
    return b.getArrayAttr(elements);
  }
  case json::value_t::object: {
    SmallVector<NamedAttribute> entries;
    for (auto it = value.begin(); it != value.end(); ++it) {
      Attribute a = jsonToAttr(ctx, it.value(), depth + 1);
      if (!a)
        return {};
      entries.push_back(b.getNamedAttr(it.key(), a));
    }
    return b.getDictionaryAttr(entries);
  }
  default:
    return {};
  }
}

json mlir::joint::json_detail::attrToJson(Attribute attr) {
  if (!attr || isa<UnitAttr>(attr))
    return nullptr;
  if (auto b = dyn_cast<BoolAttr>(attr))
    return b.getValue();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return i.getInt();
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto s = dyn_cast<StringAttr>(attr))
    return s.str();
  if (auto a = dyn_cast<ArrayAttr>(attr)) {
    json out = json::array();
    for (Attribute e : a)
      out.push_back(attrToJson(e));
    return out;
  }
  if (auto d = dyn_cast<DictionaryAttr>(attr)) {
    json out = json::object();
    for (NamedAttribute e : d)
      out[e.getName().str()] = attrToJson(e.getValue());
    return out;
  }
  return nullptr;
}

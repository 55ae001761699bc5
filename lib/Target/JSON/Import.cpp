//===- Import.cpp - joint-graph JSON (format v1) to MLIR ------------------===//
//
// Reads a format v1 document (docs/format.md) with nlohmann/json's
// non-throwing API (exceptions are off) and builds one joint.graph plus the
// joint.schema table. Every rejection names the position (line:column for
// syntax errors, a JSON pointer otherwise) and the node.
//
//===----------------------------------------------------------------------===//

#include "joint/Target/JSON/Import.h"
#include "JSONUtils.h"
#include "joint/Dialect/AO/IR/AOOps.h"
#include "joint/Dialect/Joint/IR/JointOps.h"
#include "joint/Dialect/Joint/IR/TensorMeta.h"
#include "joint/Support/NamedDiagnostics.h"
#include "joint/Target/JSON/Diagnostics.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/SourceMgr.h"
#include <zlib.h>

using namespace mlir;
using namespace mlir::joint;
using namespace mlir::joint::json_detail;

namespace {

//===----------------------------------------------------------------------===//
// Input: gzip and JSON syntax
//===----------------------------------------------------------------------===//

/// Inflates a gzip stream; returns false (with `error` set) when it is
/// corrupt or truncated.
bool gunzip(StringRef in, std::string &out, std::string &error) {
  z_stream strm{};
  if (inflateInit2(&strm, 15 + 16) != Z_OK) {
    error = "cannot initialize zlib";
    return false;
  }
  strm.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(in.data()));
  strm.avail_in = static_cast<uInt>(in.size());
  char chunk[1 << 16];
  int rc = Z_OK;
  while (rc == Z_OK) {
    strm.next_out = reinterpret_cast<Bytef *>(chunk);
    strm.avail_out = sizeof(chunk);
    rc = inflate(&strm, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END)
      break;
    out.append(chunk, sizeof(chunk) - strm.avail_out);
    if (rc == Z_OK && strm.avail_in == 0 && strm.avail_out != 0) {
      rc = Z_BUF_ERROR; // input ended before the stream did
      break;
    }
  }
  inflateEnd(&strm);
  if (rc == Z_STREAM_END)
    return true;
  error = rc == Z_BUF_ERROR ? "gzip stream is truncated"
                            : std::string("gzip stream is corrupt (") +
                                  (strm.msg ? strm.msg : "zlib error") + ")";
  return false;
}

/// DOM-building SAX handler that keeps the byte position of a syntax error.
class LocatingSax : public nlohmann::detail::json_sax_dom_parser<json> {
public:
  explicit LocatingSax(json &result)
      : json_sax_dom_parser(result, /*allow_exceptions_=*/false) {}

  template <class Exception>
  bool parse_error(std::size_t position, const std::string &,
                   const Exception &ex) {
    failed = true;
    errorPosition = position;
    message = ex.what();
    // nlohmann prefixes "[json.exception.parse_error.101] parse error at
    // line L, column C: "; the location is printed by MLIR instead.
    // Other kinds ("[json.exception.out_of_range.406] number overflow
    // parsing '...'") lose the bracketed prefix only.
    size_t colon = message.find(": ");
    size_t bracket = message.find("] ");
    if (message.rfind("[json.exception.parse_error", 0) == 0 &&
        colon != std::string::npos)
      message = message.substr(colon + 2);
    else if (message.rfind("[json.exception", 0) == 0 &&
             bracket != std::string::npos)
      message = message.substr(bracket + 2);
    shortenToken("last read: '");
    shortenToken("parsing '");
    return false;
  }

  bool failed = false;
  std::size_t errorPosition = 0;
  std::string message;

private:
  /// nlohmann quotes the token it stopped in after `marker` (up to `'` at the
  /// end or before "; expected"); an unterminated string makes that token
  /// the rest of the file. Keep its last kMaxToken bytes, where parsing
  /// stopped, so the message stays one short line.
  void shortenToken(StringRef marker) {
    static constexpr size_t kMaxToken = 64;
    size_t start = message.find(marker.str());
    if (start == std::string::npos)
      return;
    start += marker.size();
    size_t end = message.rfind("'; expected ");
    if (end == std::string::npos || end < start)
      end = message.rfind('\'');
    if (end == std::string::npos || end < start || end - start <= kMaxToken)
      return;
    message.replace(start, end - start,
                    "..." + message.substr(end - kMaxToken, kMaxToken));
  }
};

//===----------------------------------------------------------------------===//
// The importer
//===----------------------------------------------------------------------===//

/// What a node name stands for while importing.
struct NodeEntry {
  SmallVector<Value, 1> results;
  CallFunctionOp op; // null for placeholders
  const json *node = nullptr;
  unsigned index = 0; // position in "nodes"
};

class Importer {
public:
  Importer(MLIRContext *ctx, StringRef filename)
      : ctx(ctx), filename(filename.str()), b(ctx) {}

  OwningOpRef<ModuleOp> run(StringRef buffer);

private:
  // Diagnostics ------------------------------------------------------------
  /// line:column of the node (or top-level field) that `pointer` is in, so
  /// editors jump there; the pointer itself goes into the message.
  Location locFor(const std::string &pointer) {
    size_t offset = 0;
    StringRef p(pointer);
    if (p.consume_front("/nodes/")) {
      unsigned index;
      if (!p.take_until([](char c) {
              return c == '/';
            }).getAsInteger(10, index) &&
          index < nodeOffsets.size())
        offset = nodeOffsets[index];
    } else if (p.consume_front("/")) {
      auto it = keyOffsets.find(p.take_until([](char c) { return c == '/'; }));
      if (it != keyOffsets.end())
        offset = it->second;
    }
    auto [line, col] = lineAndColumn(offset);
    return FileLineColLoc::get(ctx, filename, line, col);
  }
  /// 1-based line and column of a byte offset: a binary search over the
  /// line starts recorded by scanOffsets (O(log lines) per location).
  std::pair<unsigned, unsigned> lineAndColumn(size_t offset) {
    offset = std::min(offset, text.size());
    auto it = std::upper_bound(lineStarts.begin(), lineStarts.end(), offset);
    size_t line = it - lineStarts.begin(); // >= 1: lineStarts[0] == 0
    return {static_cast<unsigned>(line),
            static_cast<unsigned>(offset - lineStarts[line - 1] + 1)};
  }
  /// Emits "[node 'x' ]<pointer>: message" (marked as naming node 'x') and
  /// returns failure.
  LogicalResult fail(const std::string &pointer, const Twine &message,
                     StringRef node = {}) {
    InFlightDiagnostic d = emitError(locFor(pointer));
    if (!node.empty())
      markNamed(d, node) << "node '" << node << "' ";
    d << "(" << (pointer.empty() ? "/" : pointer) << "): " << message;
    return failure();
  }
  void scanOffsets();

  // Typed field access -------------------------------------------------------
  enum class Kind { Object, Array, String, Int, Bool, Number };
  /// Per Kind (in enum order): the nlohmann type test and the name used in
  /// diagnostics.
  struct KindInfo {
    bool (json::*test)() const noexcept;
    const char *name;
  };
  static constexpr KindInfo kKinds[] = {
      {&json::is_object, "an object"},
      {&json::is_array, "an array"},
      {&json::is_string, "a string"},
      {&json::is_number_integer, "an integer"},
      {&json::is_boolean, "a boolean"},
      {&json::is_number, "a number"}};
  static bool is(const json &v, Kind kind) {
    return (v.*kKinds[static_cast<size_t>(kind)].test)();
  }
  static const char *kindName(Kind kind) {
    return kKinds[static_cast<size_t>(kind)].name;
  }
  /// The `t` tag of typed object `v` (at `pointer`); null and an error
  /// (`notObject` when `v` is no object) otherwise.
  const std::string *typeTag(const json &v, const std::string &pointer,
                             StringRef node, StringRef notObject) {
    if (!v.is_object()) {
      (void)fail(pointer, notObject, node);
      return nullptr;
    }
    const json *t = field(v, pointer, "t", Kind::String, node);
    return t ? &t->get_ref<const std::string &>() : nullptr;
  }
  /// Field `key` of object `obj` (at `pointer`) of `kind`; null and an error
  /// when missing or mistyped. `nullable` accepts JSON null (returns it).
  const json *field(const json &obj, const std::string &pointer, StringRef key,
                    Kind kind, StringRef node = {}, bool nullable = false) {
    auto it = obj.find(key.str());
    if (it == obj.end()) {
      (void)fail(pointer, "missing field '" + key + "'", node);
      return nullptr;
    }
    if ((nullable && it->is_null()) || is(*it, kind))
      return &*it;
    (void)fail(pointer + "/" + key.str(),
               "field '" + key + "' must be " + kindName(kind) +
                   (nullable ? " or null" : ""),
               node);
    return nullptr;
  }
  /// Integer value of `v`, rejecting unsigned values past INT64_MAX.
  static bool getInt(const json &v, int64_t &out) {
    if (v.is_number_unsigned()) {
      uint64_t u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX))
        return false;
      out = static_cast<int64_t>(u);
      return true;
    }
    if (!v.is_number_integer())
      return false;
    out = v.get<int64_t>();
    return true;
  }

  // Pieces
  // ---------------------------------------------------------------------
  LogicalResult importOperators(const json &doc);
  LogicalResult importSchemaArgs(const json &list, const std::string &pointer,
                                 StringRef target, bool returns,
                                 SmallVectorImpl<Attribute> &out);
  FailureOr<SymInt> importSymInt(const json &v, const std::string &pointer,
                                 StringRef node, bool allowNegative);
  LogicalResult importResult(const json &fact, const std::string &pointer,
                             StringRef node, Type &type, Attribute &meta);
  FailureOr<Attribute> importValue(const json &v, const std::string &pointer,
                                   StringRef node,
                                   SmallVectorImpl<Value> &operands, int depth);
  LogicalResult checkAgainstSchema(SchemaOp entry, ArrayAttr args,
                                   DictionaryAttr kwargs,
                                   ArrayRef<Value> operands,
                                   const std::string &pointer, StringRef node);
  LogicalResult importCallFunction(const json &node, unsigned index,
                                   StringRef name);
  LogicalResult importGetItem(const json &node, unsigned index, StringRef name);
  LogicalResult importAONode(const json &node, unsigned index, StringRef name,
                             StringRef target);
  LogicalResult importArgs(const json &args, const std::string &pointer,
                           StringRef name, SmallVectorImpl<Value> &operands,
                           SmallVectorImpl<Attribute> &values);
  void reconstructBackwardTags(GraphOp graph);

  MLIRContext *ctx;
  std::string filename;
  OpBuilder b;
  OwningOpRef<ModuleOp> module;
  Block *body = nullptr;
  llvm::StringMap<NodeEntry> values;
  llvm::StringMap<unsigned> nodeIndex; // every node name -> position
  llvm::StringMap<SchemaOp> operators;
  StringRef text;                     // the (inflated) document
  std::vector<size_t> nodeOffsets;    // byte offset of each /nodes element
  std::vector<size_t> lineStarts{0};  // byte offset where each line starts
  llvm::StringMap<size_t> keyOffsets; // byte offset of each top-level key
};

} // namespace

/// One pass over the text: where each top-level key and each element of
/// the top-level "nodes" array starts. Strings and escapes are skipped, so
/// this is exact for any valid document.
void Importer::scanOffsets() {
  int depth = 0;
  bool inNodes = false, expectElement = false;
  std::string lastKey;
  size_t keyStart = 0;
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n')
      lineStarts.push_back(i + 1);
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      size_t start = i++;
      std::string value;
      for (; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\')
          ++i;
        else if (depth == 1)
          value += text[i];
      }
      if (depth == 1) {
        lastKey = value;
        keyStart = start;
      }
      if (inNodes && depth == 2 && expectElement) {
        nodeOffsets.push_back(start);
        expectElement = false;
      }
      continue;
    }
    if (c == ':' && depth == 1) {
      keyOffsets.try_emplace(lastKey, keyStart);
      continue;
    }
    if (c == '{' || c == '[') {
      if (inNodes && depth == 2 && expectElement) {
        nodeOffsets.push_back(i);
        expectElement = false;
      }
      if (depth == 1 && c == '[' && lastKey == "nodes") {
        inNodes = true;
        expectElement = true;
      }
      ++depth;
      continue;
    }
    if (c == '}' || c == ']') {
      --depth;
      if (depth == 1)
        inNodes = false;
      continue;
    }
    if (c == ',' && inNodes && depth == 2) {
      expectElement = true;
      continue;
    }
    if (inNodes && depth == 2 && expectElement && !isspace(c)) {
      nodeOffsets.push_back(i);
      expectElement = false;
    }
  }
}

//===----------------------------------------------------------------------===//
// Operator table
//===----------------------------------------------------------------------===//

static std::string joinAliasSet(const json &list) {
  std::string out;
  for (const json &m : list) {
    if (!out.empty())
      out += "|";
    out += m.get_ref<const std::string &>();
  }
  return out;
}

LogicalResult Importer::importSchemaArgs(const json &list,
                                         const std::string &pointer,
                                         StringRef target, bool returns,
                                         SmallVectorImpl<Attribute> &out) {
  for (size_t i = 0; i < list.size(); ++i) {
    const json &a = list[i];
    std::string p = pointer + "/" + std::to_string(i);
    if (!a.is_object())
      return fail(p, "schema entry of '" + target + "' must be an object");
    const json *name = field(a, p, "name", Kind::String);
    const json *type = field(a, p, "type", Kind::String);
    const json *alias = field(a, p, "alias", Kind::Array);
    const json *write = field(a, p, "is_write", Kind::Bool);
    if (!name || !type || !alias || !write)
      return failure();
    const json *aliasAfter = nullptr;
    if (a.contains("alias_after") &&
        !(aliasAfter = field(a, p, "alias_after", Kind::Array)))
      return failure();
    for (const json *set : {alias, aliasAfter})
      if (set)
        for (const json &m : *set)
          if (!m.is_string())
            return fail(p, "alias set members must be strings");
    bool kwargOnly = false;
    StringAttr defaultValue;
    if (!returns) {
      const json *ko = field(a, p, "kwarg_only", Kind::Bool);
      const json *def = field(a, p, "default", Kind::String, {}, true);
      if (!ko || !def)
        return failure();
      kwargOnly = ko->get<bool>();
      if (def->is_string())
        defaultValue = b.getStringAttr(def->get_ref<const std::string &>());
    }
    out.push_back(SchemaArgAttr::get(
        ctx, name->get_ref<const std::string &>(),
        type->get_ref<const std::string &>(), kwargOnly, joinAliasSet(*alias),
        aliasAfter ? joinAliasSet(*aliasAfter) : std::string(),
        write->get<bool>(), defaultValue));
  }
  return success();
}

LogicalResult Importer::importOperators(const json &doc) {
  const json *table = field(doc, "", "operators", Kind::Object);
  if (!table)
    return failure();
  for (auto it = table->begin(); it != table->end(); ++it) {
    const std::string &target = it.key();
    std::string p = "/operators/" + target;
    const json &e = it.value();
    if (!e.is_object())
      return fail(p, "operator entry must be an object");
    if (target.find("::") == std::string::npos)
      return fail(p, "operator '" + target +
                         "' is not of the form 'namespace::name.overload'");
    const json *schema = field(e, p, "schema", Kind::String);
    const json *args = field(e, p, "args", Kind::Array);
    const json *rets = field(e, p, "returns", Kind::Array);
    const json *mutableFlag = field(e, p, "is_mutable", Kind::Bool);
    const json *tags = field(e, p, "tags", Kind::Array);
    if (!schema || !args || !rets || !mutableFlag || !tags)
      return failure();
    SmallVector<Attribute> argAttrs, retAttrs, tagAttrs;
    if (failed(importSchemaArgs(*args, p + "/args", target, false, argAttrs)) ||
        failed(importSchemaArgs(*rets, p + "/returns", target, true, retAttrs)))
      return failure();
    for (const json &t : *tags) {
      if (!t.is_string())
        return fail(p + "/tags", "tags must be strings");
      tagAttrs.push_back(b.getStringAttr(t.get_ref<const std::string &>()));
    }
    SmallVector<NamedAttribute> attrs;
    attrs.push_back(b.getNamedAttr(SymbolTable::getSymbolAttrName(),
                                   b.getStringAttr(target)));
    attrs.push_back(b.getNamedAttr(
        "schema", b.getStringAttr(schema->get_ref<const std::string &>())));
    attrs.push_back(b.getNamedAttr("arguments", b.getArrayAttr(argAttrs)));
    attrs.push_back(b.getNamedAttr("returns", b.getArrayAttr(retAttrs)));
    if (mutableFlag->get<bool>())
      attrs.push_back(b.getNamedAttr("is_mutable", b.getUnitAttr()));
    attrs.push_back(b.getNamedAttr("tags", b.getArrayAttr(tagAttrs)));
    if (auto module = e.find("python_module"); module != e.end()) {
      if (!module->is_string())
        return fail(p + "/python_module", "python_module must be a string");
      attrs.push_back(b.getNamedAttr(
          "python_module",
          b.getStringAttr(module->get_ref<const std::string &>())));
    }
    auto op = SchemaOp::create(b, locFor(p), TypeRange(), ValueRange(), attrs);
    if (failed(op.verify()))
      return failure();
    operators[target] = op;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Values and tensor facts
//===----------------------------------------------------------------------===//

FailureOr<SymInt> Importer::importSymInt(const json &v,
                                         const std::string &pointer,
                                         StringRef node, bool allowNegative) {
  // Sizes past 2^62 cannot be multiplied by an element size safely.
  constexpr int64_t kMax = int64_t(1) << 62;
  int64_t value;
  if (getInt(v, value)) {
    if (!allowNegative && value < 0)
      return fail(pointer, "negative size/stride " + Twine(value), node);
    if (value >= kMax || value <= -kMax)
      return fail(pointer, "size/stride " + Twine(value) + " overflows", node);
    return SymInt::getStatic(value);
  }
  if (v.is_object()) {
    const json *expr = field(v, pointer, "expr", Kind::String, node);
    const json *hint = field(v, pointer, "hint", Kind::Int, node, true);
    if (!expr || !hint)
      return failure();
    if (expr->get_ref<const std::string &>().empty())
      return fail(pointer, "empty symbolic expression", node);
    SymInt s;
    s.expr = b.getStringAttr(expr->get_ref<const std::string &>());
    s.hint = SymInt::kNoHint;
    if (hint->is_number()) {
      if (!getInt(*hint, s.hint) || s.hint >= kMax || s.hint <= -kMax)
        return fail(pointer, "hint overflows", node);
      if (!allowNegative && s.hint < 0)
        return fail(pointer, "negative hint " + Twine(s.hint), node);
    }
    return s;
  }
  return fail(pointer, "must be an integer or {expr, hint}", node);
}

LogicalResult Importer::importResult(const json &fact,
                                     const std::string &pointer, StringRef node,
                                     Type &type, Attribute &meta) {
  const std::string *tag =
      typeTag(fact, pointer, node, "output facts must be an object");
  if (!tag)
    return failure();
  const std::string &kind = *tag;
  if (kind == "tensor") {
    const json *sizes = field(fact, pointer, "sizes", Kind::Array, node);
    const json *strides = field(fact, pointer, "strides", Kind::Array, node);
    const json *dtype = field(fact, pointer, "dtype", Kind::String, node);
    const json *device = field(fact, pointer, "device", Kind::String, node);
    const json *storage = field(fact, pointer, "storage", Kind::Int, node);
    auto offsetIt = fact.find("offset");
    if (!sizes || !strides || !dtype || !device || !storage)
      return failure();
    if (offsetIt == fact.end())
      return fail(pointer, "missing field 'offset'", node);
    if (sizes->size() != strides->size())
      return fail(pointer,
                  "has " + Twine(sizes->size()) + " sizes but " +
                      Twine(strides->size()) + " strides",
                  node);
    std::optional<ScalarType> st =
        symbolizeScalarType(dtype->get_ref<const std::string &>());
    if (!st)
      return fail(pointer + "/dtype",
                  "unknown dtype '" + dtype->get_ref<const std::string &>() +
                      "'",
                  node);
    if (device->get_ref<const std::string &>().empty())
      return fail(pointer + "/device", "empty device", node);
    int64_t storageId;
    if (!getInt(*storage, storageId) || storageId < 0)
      return fail(pointer + "/storage", "storage id must be >= 0", node);
    SmallVector<SymInt> sizeVals, strideVals;
    SmallVector<int64_t> shape;
    int64_t numel = 1;
    for (size_t i = 0; i < sizes->size(); ++i) {
      FailureOr<SymInt> s = importSymInt(
          (*sizes)[i], pointer + "/sizes/" + std::to_string(i), node, false);
      if (failed(s))
        return failure();
      sizeVals.push_back(*s);
      shape.push_back(s->isStatic() ? s->hint : ShapedType::kDynamic);
      if (s->hasHint() && llvm::MulOverflow(numel, s->hint, numel))
        return fail(pointer + "/sizes", "number of elements overflows int64",
                    node);
    }
    for (size_t i = 0; i < strides->size(); ++i) {
      FailureOr<SymInt> s =
          importSymInt((*strides)[i], pointer + "/strides/" + std::to_string(i),
                       node, false);
      if (failed(s))
        return failure();
      strideVals.push_back(*s);
    }
    FailureOr<SymInt> offset =
        importSymInt(*offsetIt, pointer + "/offset", node, false);
    if (failed(offset))
      return failure();
    type = RankedTensorType::get(shape, getElementType(ctx, *st));
    meta =
        TensorMetaAttr::get(ctx, sizeVals, strideVals, *offset,
                            device->get_ref<const std::string &>(), storageId);
    return success();
  }
  if (kind == "none") {
    type = NoneType::get(ctx);
    meta = UnitAttr::get(ctx);
    return success();
  }
  if (kind == "int" || kind == "bool") {
    const json *v =
        field(fact, pointer, "v", kind == "int" ? Kind::Int : Kind::Bool, node);
    if (!v)
      return failure();
    int64_t value = 0;
    if (kind == "int" && !getInt(*v, value))
      return fail(pointer + "/v", "integer overflows int64", node);
    if (kind == "bool")
      value = v->get<bool>();
    type = kind == "int" ? b.getI64Type() : b.getI1Type();
    meta = SymExprAttr::get(ctx, SymInt::getStatic(value));
    return success();
  }
  if (kind == "float") {
    const json *v = field(fact, pointer, "v", Kind::Number, node);
    if (!v)
      return failure();
    type = b.getF64Type();
    meta = b.getF64FloatAttr(v->get<double>());
    return success();
  }
  if (kind == "symint" || kind == "symbool") {
    const json *expr = field(fact, pointer, "expr", Kind::String, node);
    auto hintIt = fact.find("hint");
    if (!expr)
      return failure();
    if (hintIt == fact.end())
      return fail(pointer, "missing field 'hint'", node);
    SymInt s;
    s.expr = b.getStringAttr(expr->get_ref<const std::string &>());
    s.hint = SymInt::kNoHint;
    if (s.expr.getValue().empty())
      return fail(pointer + "/expr", "empty symbolic expression", node);
    if (kind == "symint" && !hintIt->is_null() && !getInt(*hintIt, s.hint))
      return fail(pointer + "/hint", "hint must be an integer or null", node);
    if (kind == "symbool" && !hintIt->is_null()) {
      if (!hintIt->is_boolean())
        return fail(pointer + "/hint", "hint must be a boolean or null", node);
      s.hint = hintIt->get<bool>();
    }
    type = kind == "symint" ? b.getI64Type() : b.getI1Type();
    meta = SymExprAttr::get(ctx, s);
    return success();
  }
  return fail(pointer + "/t", "unsupported output kind '" + kind + "'", node);
}

FailureOr<Attribute>
Importer::importValue(const json &v, const std::string &pointer, StringRef node,
                      SmallVectorImpl<Value> &operands, int depth) {
  if (depth > kMaxValueDepth)
    return fail(pointer, "argument lists nest too deeply", node);
  const std::string *tag =
      typeTag(v, pointer, node, "argument must be a typed value object");
  if (!tag)
    return failure();
  const std::string &kind = *tag;
  if (kind == "none")
    return Attribute(UnitAttr::get(ctx));
  if (kind == "list") {
    const json *items = field(v, pointer, "v", Kind::Array, node);
    if (!items)
      return failure();
    SmallVector<Attribute> elements;
    for (size_t i = 0; i < items->size(); ++i) {
      FailureOr<Attribute> e =
          importValue((*items)[i], pointer + "/v/" + std::to_string(i), node,
                      operands, depth + 1);
      if (failed(e))
        return failure();
      elements.push_back(*e);
    }
    return Attribute(b.getArrayAttr(elements));
  }
  if (kind == "node") {
    const json *ref = field(v, pointer, "v", Kind::String, node);
    const json *idx = field(v, pointer, "i", Kind::Int, node);
    if (!ref || !idx)
      return failure();
    const std::string &target = ref->get_ref<const std::string &>();
    auto it = values.find(target);
    if (it == values.end()) {
      if (nodeIndex.count(target))
        return fail(pointer,
                    "refers to node '" + target +
                        "', which is defined later (a cycle or a "
                        "forward reference)",
                    node);
      return fail(pointer, "refers to undefined node '" + target + "'", node);
    }
    int64_t i;
    if (!getInt(*idx, i) || i != 0)
      return fail(pointer + "/i",
                  "only getitem may select an output of '" + target + "'",
                  node);
    if (it->second.results.size() != 1 ||
        (it->second.op && it->second.op.getResultNames()))
      return fail(pointer,
                  "uses multi-output node '" + target +
                      "' directly; its outputs are read through getitem",
                  node);
    operands.push_back(it->second.results[0]);
    return Attribute(OperandRefAttr::get(ctx, operands.size() - 1));
  }
  if (kind == "bool") {
    const json *x = field(v, pointer, "v", Kind::Bool, node);
    if (!x)
      return failure();
    return Attribute(b.getBoolAttr(x->get<bool>()));
  }
  if (kind == "int") {
    const json *x = field(v, pointer, "v", Kind::Int, node);
    int64_t value;
    if (!x)
      return failure();
    if (!getInt(*x, value))
      return fail(pointer + "/v", "integer overflows int64", node);
    return Attribute(b.getI64IntegerAttr(value));
  }
  if (kind == "float") {
    auto x = v.find("v");
    if (x == v.end())
      return fail(pointer, "missing field 'v'", node);
    if (x->is_number())
      return Attribute(b.getF64FloatAttr(x->get<double>()));
    if (x->is_string()) {
      const std::string &s = x->get_ref<const std::string &>();
      if (s == "nan")
        return Attribute(
            b.getF64FloatAttr(std::numeric_limits<double>::quiet_NaN()));
      if (s == "inf" || s == "-inf")
        return Attribute(b.getF64FloatAttr(
            (s == "inf" ? 1 : -1) * std::numeric_limits<double>::infinity()));
    }
    return fail(pointer + "/v",
                "float must be a number, \"nan\", \"inf\" or "
                "\"-inf\"",
                node);
  }
  if (kind == "str" || kind == "dtype" || kind == "device" ||
      kind == "layout" || kind == "memory_format") {
    const json *x = field(v, pointer, "v", Kind::String, node);
    if (!x)
      return failure();
    const std::string &s = x->get_ref<const std::string &>();
    if (kind == "str")
      return Attribute(b.getStringAttr(s));
    if (kind == "device") {
      if (s.empty())
        return fail(pointer + "/v", "empty device", node);
      return Attribute(DeviceAttr::get(ctx, s));
    }
    if (kind == "dtype") {
      if (auto st = symbolizeScalarType(s))
        return Attribute(ScalarTypeAttr::get(ctx, *st));
      return fail(pointer + "/v", "unknown dtype '" + s + "'", node);
    }
    if (kind == "layout") {
      StringRef name = StringRef(s).ltrim('_'); // torch._mkldnn
      if (auto l = symbolizeLayout(name))
        return Attribute(LayoutAttr::get(ctx, *l));
      return fail(pointer + "/v", "unknown layout '" + s + "'", node);
    }
    if (auto m = symbolizeMemoryFormat(s))
      return Attribute(MemoryFormatAttr::get(ctx, *m));
    return fail(pointer + "/v", "unknown memory format '" + s + "'", node);
  }
  if (kind == "symint") {
    FailureOr<SymInt> s = importSymInt(v, pointer, node, true);
    if (failed(s))
      return failure();
    return Attribute(SymExprAttr::get(ctx, *s));
  }
  return fail(pointer + "/t", "unsupported argument kind '" + kind + "'", node);
}

//===----------------------------------------------------------------------===//
// Operator-table checks
//===----------------------------------------------------------------------===//

/// True when `value` (an argument attribute) may be passed for a schema
/// argument of type `type`. Unknown schema types accept anything.
static bool matchesSchemaType(StringRef type, Attribute value,
                              ArrayRef<Value> operands) {
  bool optional = type.consume_back("?");
  if (isa<UnitAttr>(value))
    return optional;
  auto operandType = [&](Attribute a) -> Type {
    if (auto ref = dyn_cast<OperandRefAttr>(a))
      return operands[ref.getIndex()].getType();
    return {};
  };
  auto isTensorRef = [&](Attribute a) {
    Type t = operandType(a);
    return t && isa<RankedTensorType>(t);
  };
  auto isScalarRef = [&](Attribute a, bool allowTensor) {
    Type t = operandType(a);
    return t && (t.isInteger(64) || t.isInteger(1) || t.isF64() ||
                 (allowTensor && isa<RankedTensorType>(t)));
  };
  auto isInt = [&](Attribute a) {
    return (isa<IntegerAttr>(a) && !isa<BoolAttr>(a)) || isa<SymExprAttr>(a) ||
           isScalarRef(a, false);
  };
  // torch wraps Python numbers passed for Tensor arguments.
  if (type == "Tensor")
    return isTensorRef(value) || isScalarRef(value, false) ||
           isa<IntegerAttr, FloatAttr>(value);
  if (type.starts_with("Tensor") && type.ends_with("]")) {
    auto list = dyn_cast<ArrayAttr>(value);
    bool elementsOptional = type.starts_with("Tensor?");
    return list && llvm::all_of(list, [&](Attribute e) {
             return isTensorRef(e) || (elementsOptional && isa<UnitAttr>(e));
           });
  }
  if (type == "int" || type == "SymInt")
    return isInt(value) || isa<BoolAttr>(value);
  if (type.starts_with("int[") || type.starts_with("SymInt[")) {
    if (isInt(value)) // int[N] accepts one int
      return true;
    auto list = dyn_cast<ArrayAttr>(value);
    return list && llvm::all_of(list, isInt);
  }
  if (type == "float" || type == "SymFloat")
    return isa<FloatAttr, IntegerAttr>(value) || isScalarRef(value, false);
  if (type == "bool" || type == "SymBool")
    return isa<BoolAttr>(value) || isScalarRef(value, false);
  if (type == "Scalar")
    return isa<IntegerAttr, FloatAttr, SymExprAttr>(value) ||
           isScalarRef(value, false);
  if (type == "str")
    return isa<StringAttr>(value);
  if (type == "ScalarType")
    return isa<ScalarTypeAttr>(value);
  if (type == "Layout")
    return isa<LayoutAttr>(value);
  if (type == "Device")
    return isa<DeviceAttr>(value);
  if (type == "MemoryFormat")
    return isa<MemoryFormatAttr>(value);
  return true;
}

LogicalResult Importer::checkAgainstSchema(SchemaOp entry, ArrayAttr args,
                                           DictionaryAttr kwargs,
                                           ArrayRef<Value> operands,
                                           const std::string &pointer,
                                           StringRef node) {
  ArrayAttr schema = entry.getArguments();
  unsigned numPositional = entry.getNumPositional();
  if (args.size() > numPositional)
    return fail(pointer + "/args",
                "passes " + Twine(args.size()) +
                    " positional arguments but the schema of '" +
                    entry.getSymName() + "' takes at most " +
                    Twine(numPositional),
                node);
  llvm::SmallBitVector given(schema.size());
  for (auto [i, value] : llvm::enumerate(args)) {
    auto arg = cast<SchemaArgAttr>(schema[i]);
    given.set(i);
    if (!matchesSchemaType(arg.getType(), value, operands))
      return fail(pointer + "/args/" + std::to_string(i),
                  "argument '" + arg.getName() + "' of '" + entry.getSymName() +
                      "' expects " + arg.getType() + " but got " +
                      (isa<OperandRefAttr>(value) ? "a node" : "a literal"),
                  node);
  }
  for (NamedAttribute kw : kwargs) {
    std::optional<unsigned> index = entry.getArgIndex(kw.getName());
    if (!index)
      return fail(pointer + "/kwargs",
                  "kwarg '" + kw.getName().getValue() +
                      "' is not an argument of '" + entry.getSymName() + "'",
                  node);
    if (given.test(*index))
      return fail(pointer + "/kwargs",
                  "argument '" + kw.getName().getValue() +
                      "' is passed both positionally and as a kwarg",
                  node);
    given.set(*index);
    auto arg = cast<SchemaArgAttr>(schema[*index]);
    if (!matchesSchemaType(arg.getType(), kw.getValue(), operands))
      return fail(pointer + "/kwargs/" + kw.getName().getValue().str(),
                  "argument '" + arg.getName() + "' of '" + entry.getSymName() +
                      "' expects " + arg.getType(),
                  node);
  }
  for (auto [i, attr] : llvm::enumerate(schema)) {
    auto arg = cast<SchemaArgAttr>(attr);
    if (!given.test(i) && arg.isRequired())
      return fail(pointer + "/args",
                  "missing required argument '" + arg.getName() + "' of '" +
                      entry.getSymName() + "'",
                  node);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

static bool isBuiltinNamespace(StringRef target) {
  return target.starts_with("operator::") || target.starts_with("math::") ||
         target.starts_with("torch::") || target.starts_with("python::");
}

LogicalResult Importer::importGetItem(const json &node, unsigned index,
                                      StringRef name) {
  std::string p = "/nodes/" + std::to_string(index);
  const json *args = field(node, p, "args", Kind::Array, name);
  if (!args)
    return failure();
  if (args->size() != 2 || !(*args)[0].is_object() ||
      (*args)[0].value("t", "") != "node")
    return fail(p + "/args", "getitem takes (node, index)", name);
  const json &ref = (*args)[0];
  const json *src = field(ref, p + "/args/0", "v", Kind::String, name);
  const json *idx = field(ref, p + "/args/0", "i", Kind::Int, name);
  if (!src || !idx)
    return failure();
  const std::string &srcName = src->get_ref<const std::string &>();
  auto it = values.find(srcName);
  if (it == values.end())
    return fail(p + "/args/0",
                nodeIndex.count(srcName)
                    ? "refers to node '" + srcName +
                          "', which is defined later (a cycle or a forward "
                          "reference)"
                    : "refers to undefined node '" + srcName + "'",
                name);
  NodeEntry &producer = it->second;
  int64_t i;
  if (!producer.op)
    return fail(p, "getitem of '" + srcName + "', which is not an operator",
                name);
  if (!getInt(*idx, i) || i < 0 ||
      i >= static_cast<int64_t>(producer.results.size()))
    return fail(p + "/args/0/i",
                "getitem index out of range for '" + srcName + "' with " +
                    Twine(producer.results.size()) + " outputs",
                name);
  // The getitem's own facts are those of the selected output.
  const json *outputs = field(node, p, "outputs", Kind::Array, name);
  if (!outputs)
    return failure();
  const json &srcOutputs = (*producer.node)["outputs"];
  if (outputs->size() != 1 || (*outputs)[0] != srcOutputs[i])
    return fail(p + "/outputs",
                "getitem facts differ from output " + Twine(i) + " of '" +
                    srcName + "'",
                name);
  CallFunctionOp op = producer.op;
  SmallVector<Attribute> names;
  if (ArrayAttr existing = op.getResultNamesAttr())
    names.assign(existing.begin(), existing.end());
  else
    names.assign(op.getNumResults(), b.getStringAttr(""));
  if (!cast<StringAttr>(names[i]).getValue().empty())
    return fail(p,
                "output " + Twine(i) + " of '" + srcName +
                    "' is already read by getitem '" +
                    cast<StringAttr>(names[i]).getValue() + "'",
                name);
  names[i] = b.getStringAttr(name);
  op.setResultNamesAttr(b.getArrayAttr(names));
  NodeEntry entry;
  entry.results.push_back(op.getResult(i));
  entry.node = &node;
  entry.index = index;
  values[name] = entry;
  return success();
}

/// The positional arguments of the node at `pointer`, in order; node
/// references become operands.
LogicalResult Importer::importArgs(const json &args, const std::string &pointer,
                                   StringRef name,
                                   SmallVectorImpl<Value> &operands,
                                   SmallVectorImpl<Attribute> &values) {
  for (size_t i = 0; i < args.size(); ++i) {
    FailureOr<Attribute> a = importValue(
        args[i], pointer + "/args/" + std::to_string(i), name, operands, 0);
    if (failed(a))
      return failure();
    values.push_back(*a);
  }
  return success();
}

/// `ao::offload.default(t)`, `ao::reload.default(t, device, size?, stride?)`
/// and `ao::wait_tensor.default(t, keepalive?, last_use?)` (the nodes the
/// exporter writes for the ao dialect, mirroring torch.ops.ao). The protocol
/// itself is checked by the ao verifiers once the graph is built.
LogicalResult Importer::importAONode(const json &node, unsigned index,
                                     StringRef name, StringRef target) {
  std::string p = "/nodes/" + std::to_string(index);
  const json *args = field(node, p, "args", Kind::Array, name);
  if (!args)
    return failure();
  SmallVector<Value> operands;
  SmallVector<Attribute> argValues;
  if (failed(importArgs(*args, p, name, operands, argValues)))
    return failure();
  auto operandAt = [&](size_t i) -> Value {
    if (i >= argValues.size())
      return {};
    auto ref = dyn_cast<OperandRefAttr>(argValues[i]);
    return ref ? operands[ref.getIndex()] : Value();
  };
  auto expect = [&](bool ok, const Twine &what) {
    return ok ? success() : fail(p + "/args", target + " takes " + what, name);
  };
  // Argument i is a tensor, None, or left out (a schema default of None).
  auto optionalTensorOrNone = [&](size_t i) {
    return i >= argValues.size() || operandAt(i) || isa<UnitAttr>(argValues[i]);
  };
  Value input = operandAt(0);
  if (!input || !isa<RankedTensorType>(input.getType()))
    return fail(p + "/args/0", target + " needs a tensor node first", name);
  Location loc = locFor(p);
  StringAttr nameAttr = b.getStringAttr(name);
  Operation *op = nullptr;
  if (target == "ao::offload.default") {
    if (failed(expect(argValues.size() == 1, "(Tensor)")))
      return failure();
    op = ao::OffloadOp::create(b, loc, input.getType(), input, nameAttr);
  } else if (target == "ao::wait_tensor.default") {
    // Trailing optional arguments may be left out, as torch's schema
    // defaults allow (torchtitan writes `wait_tensor(t)`).
    if (failed(expect(argValues.size() <= 3 && optionalTensorOrNone(1) &&
                          optionalTensorOrNone(2),
                      "(Tensor, Tensor? keepalive, Tensor? last_use)")))
      return failure();
    op = ao::WaitTensorOp::create(b, loc, input.getType(), input, operandAt(1),
                                  operandAt(2), nameAttr);
  } else if (target == "ao::reload.default") {
    auto device = argValues.size() >= 2 && argValues.size() <= 4
                      ? dyn_cast<DeviceAttr>(argValues[1])
                      : DeviceAttr();
    // size and stride default to None when left out.
    while (device && argValues.size() < 4)
      argValues.push_back(b.getUnitAttr());
    auto listOrNone = [&](Attribute a) {
      return isa<UnitAttr>(a) ||
             (isa<ArrayAttr>(a) &&
              llvm::all_of(cast<ArrayAttr>(a), [](Attribute e) {
                return isa<IntegerAttr, SymExprAttr>(e);
              }));
    };
    if (failed(expect(device && listOrNone(argValues[2]) &&
                          listOrNone(argValues[3]),
                      "(Tensor, Device, int[]? size, int[]? stride)")))
      return failure();
    op = ao::ReloadOp::create(b, loc, input.getType(), input, device.getName(),
                              dyn_cast<ArrayAttr>(argValues[2]),
                              dyn_cast<ArrayAttr>(argValues[3]), nameAttr);
    // The copy's storage id, which its replayed views share (the exporter
    // writes `joint.storage` there).
    if (const json *outs =
            node.contains("outputs") ? &node["outputs"] : nullptr;
        outs && outs->is_array() && outs->size() == 1 &&
        (*outs)[0].is_object() && (*outs)[0].contains("storage") &&
        (*outs)[0]["storage"].is_number_integer() &&
        (*outs)[0]["storage"].get<int64_t>() >= 0)
      op->setAttr(kReloadStorageAttr,
                  b.getI64IntegerAttr((*outs)[0]["storage"].get<int64_t>()));
  } else {
    return fail(p + "/target", "unknown ao operator '" + target + "'", name);
  }
  NodeEntry e;
  e.results.push_back(op->getResult(0));
  e.node = &node;
  e.index = index;
  values[name] = e;
  return success();
}

LogicalResult Importer::importCallFunction(const json &node, unsigned index,
                                           StringRef name) {
  std::string p = "/nodes/" + std::to_string(index);
  const json *target = field(node, p, "target", Kind::String, name);
  const json *args = field(node, p, "args", Kind::Array, name);
  const json *kwargs = field(node, p, "kwargs", Kind::Object, name);
  const json *outputs = field(node, p, "outputs", Kind::Array, name);
  if (!target || !args || !kwargs || !outputs)
    return failure();
  StringRef targetName = target->get_ref<const std::string &>();
  if (targetName == "getitem")
    return importGetItem(node, index, name);
  if (targetName.starts_with("ao::"))
    return importAONode(node, index, name, targetName);
  if (targetName.find("::") == StringRef::npos)
    return fail(p + "/target",
                "target '" + targetName +
                    "' is not of the form 'namespace::name.overload'",
                name);
  SchemaOp entry = operators.lookup(targetName);
  if (!entry && !isBuiltinNamespace(targetName))
    return fail(p + "/target",
                "unknown operator '" + targetName +
                    "': it has no entry in the operator table",
                name);

  SmallVector<Value> operands;
  SmallVector<Attribute> argAttrs;
  if (failed(importArgs(*args, p, name, operands, argAttrs)))
    return failure();
  SmallVector<NamedAttribute> kwAttrs;
  for (auto it = kwargs->begin(); it != kwargs->end(); ++it) {
    FailureOr<Attribute> a =
        importValue(it.value(), p + "/kwargs/" + it.key(), name, operands, 0);
    if (failed(a))
      return failure();
    kwAttrs.push_back(b.getNamedAttr(it.key(), *a));
  }
  ArrayAttr argsAttr = b.getArrayAttr(argAttrs);
  DictionaryAttr kwargsAttr = b.getDictionaryAttr(kwAttrs);
  if (entry && failed(checkAgainstSchema(entry, argsAttr, kwargsAttr, operands,
                                         p, name)))
    return failure();

  SmallVector<Type> types;
  SmallVector<Attribute> metas;
  for (size_t i = 0; i < outputs->size(); ++i) {
    Type t;
    Attribute m;
    if (failed(importResult((*outputs)[i], p + "/outputs/" + std::to_string(i),
                            name, t, m)))
      return failure();
    types.push_back(t);
    metas.push_back(m);
  }
  if (entry && !entry.returnsTensorList() &&
      types.size() != entry.getReturns().size())
    return fail(p + "/outputs",
                "has " + Twine(types.size()) + " outputs but '" + targetName +
                    "' returns " + Twine(entry.getReturns().size()),
                name);

  // `args` is elided when the operands are exactly the positional arguments.
  bool trivialArgs = kwAttrs.empty() && argAttrs.size() == operands.size() &&
                     llvm::all_of(llvm::enumerate(argAttrs), [](auto it) {
                       auto ref = dyn_cast<OperandRefAttr>(it.value());
                       return ref && ref.getIndex() == it.index();
                     });
  SmallVector<NamedAttribute> attrs;
  attrs.push_back(b.getNamedAttr("target", b.getStringAttr(targetName)));
  attrs.push_back(b.getNamedAttr("name", b.getStringAttr(name)));
  if (!trivialArgs)
    attrs.push_back(b.getNamedAttr("args", argsAttr));
  if (!kwAttrs.empty())
    attrs.push_back(b.getNamedAttr("kwargs", kwargsAttr));
  attrs.push_back(b.getNamedAttr("result_meta", b.getArrayAttr(metas)));
  auto op = CallFunctionOp::create(b, locFor(p), types, operands, attrs);
  // Phase, seq_nr, module stack, policy and stack trace.
  auto bw = node.find("backward");
  if (bw != node.end() && !bw->is_boolean() && !bw->is_null())
    return fail(p + "/backward", "field 'backward' must be a boolean", name);
  if (bw != node.end() && bw->is_boolean() && bw->get<bool>())
    op.setPhase(Phase::backward);
  auto seq = node.find("seq_nr");
  if (seq != node.end() && !seq->is_null()) {
    int64_t s;
    if (!getInt(*seq, s))
      return fail(p + "/seq_nr", "field 'seq_nr' must be an integer or null",
                  name);
    op.setSeqNrAttr(b.getI64IntegerAttr(s));
  }
  auto stack = node.find("module_stack");
  if (stack != node.end()) {
    if (!stack->is_array())
      return fail(p + "/module_stack", "field 'module_stack' must be an array",
                  name);
    SmallVector<Attribute> frames;
    for (size_t i = 0; i < stack->size(); ++i) {
      const json &f = (*stack)[i];
      std::string fp = p + "/module_stack/" + std::to_string(i);
      if (!f.is_object())
        return fail(fp, "module stack entry must be an object", name);
      const json *fqn = field(f, fp, "fqn", Kind::String, name);
      const json *cls = field(f, fp, "class", Kind::String, name);
      if (!fqn || !cls)
        return failure();
      frames.push_back(
          ModuleFrameAttr::get(ctx, fqn->get_ref<const std::string &>(),
                               cls->get_ref<const std::string &>()));
    }
    if (!frames.empty())
      op.setModuleStackAttr(b.getArrayAttr(frames));
  }
  auto recompute = node.find("recompute");
  if (recompute != node.end() && !recompute->is_null()) {
    std::optional<CheckpointPolicy> policy;
    if (recompute->is_string())
      policy =
          symbolizeCheckpointPolicy(recompute->get_ref<const std::string &>());
    if (!policy)
      return fail(p + "/recompute",
                  "field 'recompute' must be a CheckpointPolicy name "
                  "(must_save, prefer_save, must_recompute, "
                  "prefer_recompute, must_cpu_offload, prefer_cpu_offload)",
                  name);
    op.setPolicyAttr(CheckpointPolicyAttr::get(ctx, *policy));
  }
  auto trace = node.find("stack_trace");
  if (trace != node.end() && !trace->is_null()) {
    if (!trace->is_string())
      return fail(p + "/stack_trace", "field 'stack_trace' must be a string",
                  name);
    op.setStackTraceAttr(
        b.getStringAttr(trace->get_ref<const std::string &>()));
  }
  auto from = node.find("recomputed_from");
  if (from != node.end() && !from->is_null()) {
    if (!from->is_string())
      return fail(p + "/recomputed_from",
                  "field 'recomputed_from' must be a string", name);
    op.setRecomputedFromAttr(
        b.getStringAttr(from->get_ref<const std::string &>()));
  }
  NodeEntry e;
  e.results.assign(op->result_begin(), op->result_end());
  e.op = op;
  e.node = &node;
  e.index = index;
  values[name] = e;
  return success();
}

//===----------------------------------------------------------------------===//
// Structural backward tags (for exports without autograd_backward metadata)
//===----------------------------------------------------------------------===//

void Importer::reconstructBackwardTags(GraphOp graph) {
  OutputOp output = graph.getOutputOp();
  if (output.getNumOperands() < 2)
    return;
  // Forward loss chain: the loss and all of its producers.
  llvm::DenseSet<Operation *> lossChain;
  SmallVector<Operation *> work;
  if (Operation *loss = output.getOperand(0).getDefiningOp())
    work.push_back(loss);
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!lossChain.insert(op).second)
      continue;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp())
        work.push_back(def);
  }
  // Backward: stack-less producers of the gradients, stopping at module
  // boundaries and at the loss chain.
  auto hasStack = [](Operation *op) {
    auto aten = dyn_cast<CallFunctionOp>(op);
    return aten && aten.getModuleStack() && !aten.getModuleStackAttr().empty();
  };
  llvm::DenseSet<Operation *> backward;
  for (Value grad : output.getOperands().drop_front())
    if (Operation *def = grad.getDefiningOp())
      if (!hasStack(def) && !lossChain.contains(def) &&
          backward.insert(def).second)
        work.push_back(def);
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (!def || lossChain.contains(def) || hasStack(def) ||
          !backward.insert(def).second)
        continue;
      work.push_back(def);
    }
  }
  for (Operation *op : backward)
    if (auto aten = dyn_cast<CallFunctionOp>(op))
      aten.setPhase(Phase::backward);
  emitRemark(graph.getLoc())
      << "the file has no autograd_backward tags; reconstructed them "
         "structurally for "
      << backward.size() << " of "
      << std::distance(graph.getBody().op_begin<CallFunctionOp>(),
                       graph.getBody().op_end<CallFunctionOp>())
      << " ops (loss producers forward, stack-less gradient producers "
         "backward)";
  graph->setAttr(kBackwardTagsAttr, b.getStringAttr("structural"));
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> Importer::run(StringRef buffer) {
  std::string inflated;
  if (buffer.size() >= 2 && static_cast<unsigned char>(buffer[0]) == 0x1f &&
      static_cast<unsigned char>(buffer[1]) == 0x8b) {
    std::string error;
    if (!gunzip(buffer, inflated, error)) {
      emitError(FileLineColLoc::get(ctx, filename, 0, 0)) << error;
      return {};
    }
    buffer = inflated;
    // Line:column refer to the inflated text; a name that is not the file on
    // disk keeps diagnostic printers from quoting gzip bytes as source.
    filename += "[inflated]";
  }
  json doc;
  {
    LocatingSax sax(doc);
    json::sax_parse(buffer.begin(), buffer.end(), &sax);
    if (sax.failed) {
      // Line and column of the byte where parsing stopped.
      StringRef before =
          buffer.take_front(std::min<size_t>(sax.errorPosition, buffer.size()));
      unsigned line = 1 + before.count('\n');
      size_t lastNewline = before.rfind('\n');
      unsigned col = lastNewline == StringRef::npos
                         ? before.size()
                         : before.size() - lastNewline - 1;
      emitError(FileLineColLoc::get(ctx, filename, line, std::max(col, 1u)))
          << "malformed JSON: " << sax.message;
      return {};
    }
  }
  text = buffer;
  scanOffsets();
  if (!doc.is_object()) {
    (void)fail("", "the document must be a JSON object");
    return {};
  }
  const json *format = field(doc, "", "format", Kind::String);
  if (!format)
    return {};
  if (format->get_ref<const std::string &>() != "joint-graph") {
    (void)fail("/format", "not a joint-graph document (format '" +
                              format->get_ref<const std::string &>() + "')");
    return {};
  }
  const json *version = field(doc, "", "version", Kind::Object);
  if (!version)
    return {};
  const json *major = field(*version, "/version", "major", Kind::Int);
  const json *minor = field(*version, "/version", "minor", Kind::Int);
  if (!major || !minor)
    return {};
  if (*major != 1) {
    (void)fail("/version/major", "unsupported format major version " +
                                     major->dump() +
                                     "; this reader supports 1");
    return {};
  }
  const json *name = field(doc, "", "name", Kind::String);
  const json *nodes = field(doc, "", "nodes", Kind::Array);
  const json *state = field(doc, "", "state", Kind::Array);
  const json *inputs = field(doc, "", "inputs", Kind::Array);
  const json *outputs = field(doc, "", "outputs", Kind::Array);
  if (!name || !nodes || !state || !inputs || !outputs)
    return {};
  if (name->get_ref<const std::string &>().empty()) {
    (void)fail("/name", "graph name must not be empty");
    return {};
  }
  if (nodes->empty()) {
    (void)fail("/nodes", "empty graph: no nodes");
    return {};
  }

  module = ModuleOp::create(UnknownLoc::get(ctx));
  b.setInsertionPointToEnd(module->getBody());
  if (failed(importOperators(doc)))
    return {};

  // Names first: duplicates and forward references are told apart.
  for (size_t i = 0; i < nodes->size(); ++i) {
    const json &n = (*nodes)[i];
    std::string p = "/nodes/" + std::to_string(i);
    if (!n.is_object()) {
      (void)fail(p, "node must be an object");
      return {};
    }
    const json *nn = field(n, p, "name", Kind::String);
    if (!nn)
      return {};
    const std::string &s = nn->get_ref<const std::string &>();
    if (s.empty()) {
      (void)fail(p + "/name", "empty node name");
      return {};
    }
    if (!nodeIndex.try_emplace(s, i).second) {
      (void)fail(p + "/name",
                 "duplicate node name (first at /nodes/" +
                     std::to_string(nodeIndex[s]) + ")",
                 s);
      return {};
    }
  }

  // Placeholders: state (params, buffers) then user inputs; each entry names
  // its placeholder node once.
  llvm::StringMap<std::pair<const json *, std::string>> placeholderInfo;
  auto collect = [&](const json &list, StringRef section, StringRef what,
                     ArrayRef<std::pair<StringRef, Kind>> fields) {
    for (size_t i = 0; i < list.size(); ++i) {
      std::string p = ("/" + section + "/" + Twine(i)).str();
      const json &e = list[i];
      if (!e.is_object())
        return fail(p, what + " entry must be an object");
      const json *in = field(e, p, "input", Kind::String);
      if (!in)
        return failure();
      for (auto [key, kind] : fields)
        if (!field(e, p, key, kind))
          return failure();
      const std::string &name = in->get_ref<const std::string &>();
      if (!placeholderInfo.try_emplace(name, &e, p).second)
        return fail(p + "/input", "placeholder '" + name + "' is listed twice");
    }
    return success();
  };
  if (failed(collect(*state, "state", "state",
                     {{"fqn", Kind::String},
                      {"is_param", Kind::Bool},
                      {"requires_grad", Kind::Bool}})) ||
      failed(collect(*inputs, "inputs", "input", {{"path", Kind::String}})))
    return {};

  // Node `i`: the node, its JSON pointer, its name (checked above) and its
  // `kind` (null after a diagnostic).
  struct NodeAt {
    const json &node;
    std::string pointer;
    const std::string &name;
    const json *kind;
  };
  auto nodeAt = [&](size_t i) -> NodeAt {
    const json &n = (*nodes)[i];
    std::string p = "/nodes/" + std::to_string(i);
    const std::string &name = n["name"].get_ref<const std::string &>();
    const json *kind = field(n, p, "kind", Kind::String, name);
    return {n, std::move(p), name, kind};
  };

  auto *block = new Block();
  std::unique_ptr<Block> blockOwner(block);
  SmallVector<DictionaryAttr> argAttrs;
  llvm::DenseSet<StringRef> paramFQNs;
  size_t i = 0;
  for (; i < nodes->size(); ++i) {
    auto [n, p, nodeName, kind] = nodeAt(i);
    if (!kind)
      return {};
    if (*kind != "placeholder")
      break;
    auto info = placeholderInfo.find(nodeName);
    if (info == placeholderInfo.end()) {
      (void)fail(p, "placeholder is in neither 'state' nor 'inputs'", nodeName);
      return {};
    }
    const json *outs = field(n, p, "outputs", Kind::Array, nodeName);
    if (!outs)
      return {};
    if (outs->size() != 1) {
      (void)fail(p + "/outputs", "a placeholder has exactly one output",
                 nodeName);
      return {};
    }
    Type type;
    Attribute meta;
    if (failed(
            importResult((*outs)[0], p + "/outputs/0", nodeName, type, meta)))
      return {};
    const json &e = *info->second.first;
    SmallVector<NamedAttribute> attrs;
    attrs.push_back(b.getNamedAttr(kNodeNameAttr, b.getStringAttr(nodeName)));
    if (auto fqn = e.find("fqn"); fqn != e.end()) {
      bool isParam = e["is_param"].get<bool>();
      attrs.push_back(b.getNamedAttr(
          kRoleAttr, RoleAttr::get(ctx, isParam ? Role::param : Role::buffer)));
      attrs.push_back(b.getNamedAttr(
          kFQNAttr, b.getStringAttr(fqn->get_ref<const std::string &>())));
      attrs.push_back(b.getNamedAttr(
          kRequiresGradAttr, b.getBoolAttr(e["requires_grad"].get<bool>())));
      if (isParam &&
          !paramFQNs.insert(fqn->get_ref<const std::string &>()).second) {
        (void)fail(info->second.second + "/fqn",
                   "parameter '" + fqn->get_ref<const std::string &>() +
                       "' appears twice (tied tensors are one input)",
                   nodeName);
        return {};
      }
    } else {
      attrs.push_back(
          b.getNamedAttr(kRoleAttr, RoleAttr::get(ctx, Role::input)));
      attrs.push_back(b.getNamedAttr(
          kPathAttr,
          b.getStringAttr(e["path"].get_ref<const std::string &>())));
    }
    if (isa<TensorMetaAttr>(meta))
      attrs.push_back(b.getNamedAttr(kMetaAttr, meta));
    argAttrs.push_back(b.getDictionaryAttr(attrs));
    NodeEntry entry;
    entry.results.push_back(block->addArgument(type, locFor(p)));
    entry.node = &n;
    entry.index = i;
    values[nodeName] = entry;
  }
  if (argAttrs.size() != placeholderInfo.size()) {
    (void)fail("/nodes",
               "'state' and 'inputs' name " + Twine(placeholderInfo.size()) +
                   " placeholders but the graph has " + Twine(argAttrs.size()));
    return {};
  }

  b.setInsertionPointToEnd(block);
  const json *outputNode = nullptr;
  size_t outputIndex = 0;
  for (; i < nodes->size(); ++i) {
    auto [n, p, nodeName, kind] = nodeAt(i);
    if (!kind)
      return {};
    const std::string &k = kind->get_ref<const std::string &>();
    if (outputNode) {
      (void)fail(p, "node after the output node", nodeName);
      return {};
    }
    if (k == "call_function") {
      if (failed(importCallFunction(n, i, nodeName)))
        return {};
    } else if (k == "output") {
      outputNode = &n;
      outputIndex = i;
    } else if (k == "placeholder") {
      (void)fail(p, "placeholder after the first operator", nodeName);
      return {};
    } else {
      (void)fail(p + "/kind", "unsupported node kind '" + k + "'", nodeName);
      return {};
    }
  }
  if (!outputNode) {
    (void)fail("/nodes", "the graph has no output node");
    return {};
  }

  // Outputs: one role per output value.
  std::string op = "/nodes/" + std::to_string(outputIndex);
  const std::string &outputName =
      (*outputNode)["name"].get_ref<const std::string &>();
  const json *outArgs = field(*outputNode, op, "args", Kind::Array, outputName);
  if (!outArgs)
    return {};
  if (outArgs->size() != outputs->size()) {
    (void)fail("/outputs", "lists " + Twine(outputs->size()) +
                               " roles but the output node returns " +
                               Twine(outArgs->size()) + " values");
    return {};
  }
  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resAttrs;
  for (size_t r = 0; r < outArgs->size(); ++r) {
    std::string p = op + "/args/" + std::to_string(r);
    SmallVector<Value> operands;
    FailureOr<Attribute> ref =
        importValue((*outArgs)[r], p, outputName, operands, 0);
    if (failed(ref))
      return {};
    if (operands.size() != 1 || !isa<OperandRefAttr>(*ref)) {
      (void)fail(p, "graph outputs must be nodes", outputName);
      return {};
    }
    results.push_back(operands[0]);
    std::string rp = "/outputs/" + std::to_string(r);
    const json &role = (*outputs)[r];
    if (!role.is_object()) {
      (void)fail(rp, "output role must be an object");
      return {};
    }
    const json *roleName = field(role, rp, "role", Kind::String);
    const json *fqn = field(role, rp, "fqn", Kind::String, {}, true);
    const json *key = field(role, rp, "key", Kind::String, {}, true);
    const json *node = field(role, rp, "node", Kind::String, {}, true);
    if (!roleName || !fqn || !key || !node)
      return {};
    if (node->is_string() && *node != (*outArgs)[r]["v"]) {
      (void)fail(rp + "/node",
                 "names '" + node->get_ref<const std::string &>() +
                     "' but the output node returns '" +
                     (*outArgs)[r]["v"].get_ref<const std::string &>() + "'");
      return {};
    }
    std::optional<Role> parsed =
        symbolizeRole(roleName->get_ref<const std::string &>());
    if (!parsed || *parsed == Role::param || *parsed == Role::buffer ||
        *parsed == Role::input) {
      (void)fail(rp + "/role", "unknown output role '" +
                                   roleName->get_ref<const std::string &>() +
                                   "' (loss, grad or loss_dict)");
      return {};
    }
    SmallVector<NamedAttribute> attrs;
    attrs.push_back(b.getNamedAttr(kRoleAttr, RoleAttr::get(ctx, *parsed)));
    if (fqn->is_string())
      attrs.push_back(b.getNamedAttr(
          kFQNAttr, b.getStringAttr(fqn->get_ref<const std::string &>())));
    if (key->is_string())
      attrs.push_back(b.getNamedAttr(
          kKeyAttr, b.getStringAttr(key->get_ref<const std::string &>())));
    resAttrs.push_back(b.getDictionaryAttr(attrs));
  }
  OutputOp::create(b, locFor(op), results);

  // The graph.
  b.setInsertionPointToEnd(module->getBody());
  SmallVector<Type> argTypes(block->getArgumentTypes());
  SmallVector<Type> resultTypes;
  for (Value v : results)
    resultTypes.push_back(v.getType());
  auto graph = GraphOp::create(
      b, locFor(""), name->get_ref<const std::string &>(),
      b.getFunctionType(argTypes, resultTypes),
      b.getArrayAttr(SmallVector<Attribute>(argAttrs.begin(), argAttrs.end())),
      b.getArrayAttr(SmallVector<Attribute>(resAttrs.begin(), resAttrs.end())));
  graph.getBody().push_back(blockOwner.release());

  // Graph-level metadata, kept for the exporter and the passes.
  graph->setAttr(kFormatMinorAttr, b.getI64IntegerAttr(minor->get<int64_t>()));
  if (outputName != "output")
    graph->setAttr(kOutputNameAttr, b.getStringAttr(outputName));
  for (auto [key, attrName] :
       {std::pair<const char *, StringRef>{"producer", kProducerAttr},
        {"backward_tags", kBackwardTagsAttr},
        {"symbols", kSymbolsAttr},
        {"model", kModelAttr}}) {
    auto it = doc.find(key);
    if (it == doc.end())
      continue;
    Attribute a = jsonToAttr(ctx, *it);
    if (!a) {
      (void)fail(std::string("/") + key, "value nests too deeply");
      return {};
    }
    graph->setAttr(attrName, a);
  }

  bool anyBackward =
      llvm::any_of(graph.getBody().getOps<CallFunctionOp>(),
                   [](CallFunctionOp op) { return op.isBackward(); });
  if (!anyBackward)
    reconstructBackwardTags(graph);

  if (failed(verify(*module)))
    return {};
  return std::move(module);
}

bool mlir::joint::isJointJSON(StringRef filename, StringRef buffer) {
  if (filename.ends_with(".json") || filename.ends_with(".json.gz"))
    return true;
  StringRef head = buffer.ltrim();
  return (!head.empty() && head.front() == '{') ||
         (buffer.size() >= 2 && static_cast<unsigned char>(buffer[0]) == 0x1f &&
          static_cast<unsigned char>(buffer[1]) == 0x8b);
}

OwningOpRef<ModuleOp> mlir::joint::importJointGraph(StringRef buffer,
                                                    MLIRContext *context,
                                                    StringRef filename) {
  context->loadDialect<JointDialect, ao::AODialect>();
  return Importer(context, filename).run(buffer);
}

void mlir::joint::registerImportJointJSONTranslation() {
  TranslateToMLIRRegistration reg(
      "import-joint-json", "joint-graph JSON (format v1) to the joint dialect",
      [](llvm::SourceMgr &sourceMgr,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        const llvm::MemoryBuffer *buf =
            sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
        // A graph written without indentation is one line: quote a window.
        ExcerptDiagnostics excerpts;
        excerpts.addBuffer(buf->getBufferIdentifier(), buf->getBuffer());
        ScopedDiagnosticHandler handler(
            context, [&](Diagnostic &diag) { return excerpts.handle(diag); });
        OwningOpRef<ModuleOp> module = importJointGraph(
            buf->getBuffer(), context, buf->getBufferIdentifier());
        if (!module)
          return {};
        return OwningOpRef<Operation *>(module.release());
      },
      [](DialectRegistry &registry) {
        registry.insert<JointDialect, ao::AODialect>();
      });
}

//===- Export.cpp - The joint dialect to joint-graph JSON -----------------===//
//
// Writes a module with one joint.graph as a format v1 document: placeholders
// from the graph arguments, one node per joint.call_function (FX getitem nodes
// re-created after multi-output ops with their original names), `ao::` nodes
// for the ao ops, the output node, and the operator table. Nodes (the bulk of
// a document) are written straight to text by a small streaming writer that
// produces nlohmann::json's compact dump byte for byte; the few graph-level
// entries are built as nlohmann::json values.
//
//===----------------------------------------------------------------------===//

#include "joint/Target/JSON/Export.h"
#include "JSONUtils.h"
#include "joint/Dialect/AO/IR/AOOps.h"
#include "joint/Dialect/Joint/IR/JointOps.h"
#include "joint/Dialect/Joint/IR/TensorMeta.h"
#include "joint/Support/NamedDiagnostics.h"
#include "joint/Support/Namespace.h"
#include "joint/Target/JSON/Diagnostics.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/StringSet.h"

#include <charconv>

using namespace mlir;
using namespace mlir::joint;
using namespace mlir::joint::json_detail;

/// Compact JSON; invalid UTF-8 is replaced rather than aborting (nlohmann
/// would throw, and exceptions are off).
static std::string dump(const json &v) {
  return v.dump(-1, ' ', /*ensure_ascii=*/false,
                json::error_handler_t::replace);
}

namespace {

/// Compact JSON appended straight to a string, byte for byte what `dump`
/// writes for the same value, without building a tree: a 200k-node graph as
/// nlohmann objects costs more in allocation and teardown than its text.
/// Callers write object keys in the order nlohmann's std::map keeps (byte
/// order; checked in debug builds). Strings with bytes >= 0x80 (UTF-8
/// validation and U+FFFD replacement) and doubles (shortest round-trip
/// digits) are formatted by nlohmann itself.
class JsonWriter {
public:
  explicit JsonWriter(std::string &out) : out(out) {}

  JsonWriter &key(StringRef k) {
    assert(!frames.empty() && frames.back().isObject && "key outside object");
    Frame &f = frames.back();
    assert((f.count == 0 || f.lastKey < k) && "keys out of std::map order");
    if (f.count++)
      out += ',';
#ifndef NDEBUG
    f.lastKey = k;
#endif
    writeString(k);
    out += ':';
    afterKey = true;
    return *this;
  }
  void str(StringRef s) {
    separate();
    writeString(s);
  }
  void integer(int64_t v) {
    separate();
    char digits[24]; // INT64_MIN is 20 characters
    out.append(digits, std::to_chars(digits, digits + sizeof(digits), v).ptr);
  }
  void boolean(bool b) {
    separate();
    out += b ? "true" : "false";
  }
  void null() {
    separate();
    out += "null";
  }
  void strOrNull(std::optional<StringRef> s) {
    if (s)
      str(*s);
    else
      null();
  }
  void integerOrNull(std::optional<int64_t> v) {
    if (v)
      integer(*v);
    else
      null();
  }
  /// A double as nlohmann writes it (NaN and infinities as null).
  void number(double d) {
    separate();
    out += dump(json(d));
  }
  /// JSON text written by another JsonWriter (or `dump`).
  void raw(StringRef text) {
    separate();
    out += text;
  }
  void beginObject() { begin('{', /*isObject=*/true); }
  void endObject() { end('}'); }
  void beginArray() { begin('[', /*isObject=*/false); }
  void endArray() { end(']'); }

private:
  struct Frame {
    bool isObject;
    unsigned count = 0;
#ifndef NDEBUG
    StringRef lastKey;
#endif
  };
  /// The comma before a value: none after a key or at the top level.
  void separate() {
    if (afterKey) {
      afterKey = false;
      return;
    }
    if (!frames.empty()) {
      assert(!frames.back().isObject && "object value without a key");
      if (frames.back().count++)
        out += ',';
    }
  }
  void begin(char open, bool isObject) {
    separate();
    out += open;
    frames.push_back(Frame{isObject});
  }
  void end(char close) {
    assert(!afterKey && "key without a value");
    frames.pop_back();
    out += close;
  }
  void writeString(StringRef s);

  std::string &out;
  SmallVector<Frame, 8> frames;
  bool afterKey = false;
};

void JsonWriter::writeString(StringRef s) {
  if (llvm::any_of(
          s, [](char c) { return static_cast<unsigned char>(c) >= 0x80; })) {
    out += dump(json(s.str()));
    return;
  }
  // nlohmann's escapes: the two-character ones, \u00xx (lower-case hex) for
  // the other control characters, everything else (DEL, '/') as is.
  out += '"';
  size_t run = 0;
  for (size_t i = 0, e = s.size(); i < e; ++i) {
    char c = s[i];
    const char *escape = nullptr;
    switch (c) {
    case '"':
      escape = "\\\"";
      break;
    case '\\':
      escape = "\\\\";
      break;
    case '\b':
      escape = "\\b";
      break;
    case '\f':
      escape = "\\f";
      break;
    case '\n':
      escape = "\\n";
      break;
    case '\r':
      escape = "\\r";
      break;
    case '\t':
      escape = "\\t";
      break;
    default:
      if (static_cast<unsigned char>(c) >= 0x20)
        continue;
    }
    out += s.slice(run, i);
    if (escape)
      out += escape;
    else
      out.append({'\\', 'u', '0', '0', "0123456789abcdef"[(c >> 4) & 0xf],
                  "0123456789abcdef"[c & 0xf]});
    run = i + 1;
  }
  out += s.drop_front(run);
  out += '"';
}

/// The fields of a node besides its arguments and outputs, written in the
/// key order of format v1 documents (nlohmann's sorted keys).
struct NodeFields {
  StringRef name;
  StringRef kind;
  std::optional<StringRef> target; // null for placeholder and output nodes
  bool backward = false;
  std::optional<int64_t> seqNr;
  ArrayAttr moduleStack; // of ModuleFrameAttr; null: []
  std::optional<StringRef> recompute;
  std::optional<StringRef> recomputedFrom; // absent when unset
  std::optional<StringRef> stackTrace;
};

class Exporter {
public:
  explicit Exporter(GraphOp graph) : graph(graph), w(nodesText) {}
  /// Fills `doc` (with a null `nodes` entry) and writes the elements of the
  /// `nodes` array, one per line, to nodeLines().
  LogicalResult run(ModuleOp module, json &doc);
  /// The `nodes` elements, joined by ",\n"; empty for no node.
  StringRef nodeLines() const { return nodesText; }

private:
  /// A fresh node name derived from `base`.
  std::string uniqueName(StringRef base) { return usedNames.newName(base); }
  /// A size, stride or offset: an integer, or {"expr", "hint"}.
  static void writeSymInt(JsonWriter &out, const SymInt &s) {
    if (s.isStatic()) {
      out.integer(s.hint);
      return;
    }
    out.beginObject();
    out.key("expr").str(s.expr.getValue());
    out.key("hint").integerOrNull(s.hasHint() ? std::optional(s.hint)
                                              : std::nullopt);
    out.endObject();
  }
  /// Writes the facts of tensor `v`: `meta` when present (else contiguous,
  /// static), `device` when not empty, storage id `storage` when given.
  void writeFacts(JsonWriter &out, Value v, TensorMetaAttr meta,
                  StringRef device, std::optional<int64_t> storage);
  /// Storage ids for tensors without facts, numbered in program order before
  /// any ao copy, so export -> import -> export is stable.
  void assignMissingStorage(Block &body);
  void writeResult(JsonWriter &out, Value v, Attribute meta);
  LogicalResult writeValue(JsonWriter &out, Attribute value, Operation *op);
  void writeRef(JsonWriter &out, Value v) {
    writeNodeRef(out, valueNames.lookup(v), 0);
  }
  static void writeNodeRef(JsonWriter &out, StringRef name, int64_t index) {
    out.beginObject();
    out.key("i").integer(index);
    out.key("t").str("node");
    out.key("v").str(name);
    out.endObject();
  }
  /// Writes one node; `args`, `kwargs` and `outputs` are JSON text.
  void writeNode(const NodeFields &f, StringRef args, StringRef kwargs,
                 StringRef outputs);
  LogicalResult exportCallFunctionOp(CallFunctionOp op);
  LogicalResult exportAOOp(Operation *op);

  GraphOp graph;
  Namespace usedNames{graph.getContext()};
  /// The module's symbol table, built once, for schema lookups.
  SymbolTableCollection symbolTables;
  DenseMap<Value, std::string> valueNames;
  DenseMap<Value, int64_t> assignedStorage;
  DenseMap<Value, std::string> aoFacts; // facts of each ao result, as text
  int64_t nextStorage = 0;

  // The nodes' text and its writer; the other strings hold one node's
  // arguments, keyword arguments and outputs while it is written, reused
  // from node to node.
  std::string nodesText;
  JsonWriter w;
  std::string argsText, kwargsText, outputsText;
  SmallVector<std::string> resultTexts;
};

} // namespace

void Exporter::writeFacts(JsonWriter &out, Value v, TensorMetaAttr meta,
                          StringRef device, std::optional<int64_t> storage) {
  auto type = cast<RankedTensorType>(v.getType());
  StringRef dev = device;
  int64_t id = storage ? *storage : assignedStorage.lookup(v);
  if (meta) {
    if (dev.empty())
      dev = meta.getDevice();
    if (!storage)
      id = meta.getStorage();
  } else if (dev.empty()) {
    dev = "cpu";
  }
  // Hand-written IR without facts: contiguous, static.
  SmallVector<int64_t> contiguous;
  if (!meta) {
    contiguous.resize(type.getRank());
    int64_t stride = 1;
    for (int64_t i = type.getRank() - 1; i >= 0; --i) {
      contiguous[i] = stride;
      stride *=
          ShapedType::isDynamic(type.getDimSize(i)) ? 1 : type.getDimSize(i);
    }
  }
  std::optional<ScalarType> dtype = getScalarType(type.getElementType());
  out.beginObject();
  out.key("device").str(dev);
  out.key("dtype").str(dtype ? stringifyScalarType(*dtype) : "unknown");
  out.key("offset");
  if (meta)
    writeSymInt(out, meta.getOffset());
  else
    out.integer(0);
  out.key("sizes").beginArray();
  if (meta) {
    for (const SymInt &s : meta.getSizes())
      writeSymInt(out, s);
  } else {
    for (int64_t size : type.getShape())
      out.integer(size);
  }
  out.endArray();
  out.key("storage").integer(id);
  out.key("strides").beginArray();
  if (meta) {
    for (const SymInt &s : meta.getStrides())
      writeSymInt(out, s);
  } else {
    for (int64_t stride : contiguous)
      out.integer(stride);
  }
  out.endArray();
  out.key("t").str("tensor");
  out.endObject();
}

void Exporter::assignMissingStorage(Block &body) {
  auto assign = [&](Value v) {
    if (isa<RankedTensorType>(v.getType()) && !getTensorMeta(v))
      assignedStorage[v] = nextStorage++;
  };
  for (BlockArgument arg : body.getArguments())
    assign(arg);
  for (CallFunctionOp op : body.getOps<CallFunctionOp>())
    for (Value r : op->getResults())
      assign(r);
}

void Exporter::writeResult(JsonWriter &out, Value v, Attribute meta) {
  if (isa<RankedTensorType>(v.getType()))
    return writeFacts(out, v, dyn_cast_or_null<TensorMetaAttr>(meta), "",
                      std::nullopt);
  out.beginObject();
  auto s = dyn_cast_or_null<SymExprAttr>(meta);
  if (isa<NoneType>(v.getType()) || (!s && !isa_and_nonnull<FloatAttr>(meta))) {
    out.key("t").str("none");
  } else if (auto f = dyn_cast<FloatAttr>(meta)) {
    out.key("t").str("float");
    out.key("v").number(f.getValueAsDouble());
  } else {
    bool isBool = v.getType().isInteger(1);
    const SymInt &value = s.getValue();
    if (value.isStatic()) {
      out.key("t").str(isBool ? "bool" : "int");
      out.key("v");
      if (isBool)
        out.boolean(value.hint != 0);
      else
        out.integer(value.hint);
    } else {
      out.key("expr").str(value.expr.getValue());
      out.key("hint");
      if (!value.hasHint())
        out.null();
      else if (isBool)
        out.boolean(value.hint != 0);
      else
        out.integer(value.hint);
      out.key("t").str(isBool ? "symbool" : "symint");
    }
  }
  out.endObject();
}

LogicalResult Exporter::writeValue(JsonWriter &out, Attribute value,
                                   Operation *op) {
  if (auto r = dyn_cast<OperandRefAttr>(value)) {
    writeRef(out, op->getOperand(r.getIndex()));
    return success();
  }
  // {"t": kind, "v": ...} with the value written by `v`.
  auto tagged = [&](StringRef kind, auto &&v) {
    out.beginObject();
    out.key("t").str(kind);
    out.key("v");
    v();
    out.endObject();
    return success();
  };
  if (isa<UnitAttr>(value)) {
    out.beginObject();
    out.key("t").str("none");
    out.endObject();
    return success();
  }
  if (auto bv = dyn_cast<BoolAttr>(value))
    return tagged("bool", [&] { out.boolean(bv.getValue()); });
  if (auto i = dyn_cast<IntegerAttr>(value))
    return tagged("int", [&] { out.integer(i.getInt()); });
  if (auto f = dyn_cast<FloatAttr>(value)) {
    double d = f.getValueAsDouble();
    return tagged("float", [&] {
      if (std::isnan(d))
        out.str("nan");
      else if (std::isinf(d))
        out.str(d > 0 ? "inf" : "-inf");
      else
        out.number(d);
    });
  }
  if (auto s = dyn_cast<StringAttr>(value))
    return tagged("str", [&] { out.str(s.getValue()); });
  if (auto d = dyn_cast<ScalarTypeAttr>(value))
    return tagged("dtype", [&] { out.str(stringifyScalarType(d.getValue())); });
  if (auto d = dyn_cast<DeviceAttr>(value))
    return tagged("device", [&] { out.str(d.getName()); });
  if (auto l = dyn_cast<LayoutAttr>(value)) {
    std::string name = stringifyLayout(l.getValue()).str();
    if (l.getValue() == Layout::mkldnn)
      name = "_" + name;
    return tagged("layout", [&] { out.str(name); });
  }
  if (auto m = dyn_cast<MemoryFormatAttr>(value))
    return tagged("memory_format",
                  [&] { out.str(stringifyMemoryFormat(m.getValue())); });
  if (auto s = dyn_cast<SymExprAttr>(value)) {
    const SymInt &v = s.getValue();
    std::string expr = v.isStatic() ? std::to_string(v.hint) : v.expr.str();
    out.beginObject();
    out.key("expr").str(expr);
    out.key("hint").integerOrNull(v.hasHint() ? std::optional(v.hint)
                                              : std::nullopt);
    out.key("t").str("symint");
    out.endObject();
    return success();
  }
  if (auto a = dyn_cast<ArrayAttr>(value)) {
    out.beginObject();
    out.key("t").str("list");
    out.key("v").beginArray();
    for (Attribute e : a)
      if (failed(writeValue(out, e, op)))
        return failure();
    out.endArray();
    out.endObject();
    return success();
  }
  return op->emitError() << "cannot write argument value " << value
                         << " in format v1";
}

void Exporter::writeNode(const NodeFields &f, StringRef args, StringRef kwargs,
                         StringRef outputs) {
  if (!nodesText.empty())
    nodesText += ",\n";
  w.beginObject();
  w.key("args").raw(args);
  w.key("backward").boolean(f.backward);
  w.key("kind").str(f.kind);
  w.key("kwargs").raw(kwargs);
  w.key("module_stack").beginArray();
  if (f.moduleStack)
    for (Attribute a : f.moduleStack) {
      auto frame = cast<ModuleFrameAttr>(a);
      w.beginObject();
      w.key("class").str(frame.getCls());
      w.key("fqn").str(frame.getFqn());
      w.endObject();
    }
  w.endArray();
  w.key("name").str(f.name);
  w.key("outputs").raw(outputs);
  w.key("recompute").strOrNull(f.recompute);
  if (f.recomputedFrom)
    w.key("recomputed_from").str(*f.recomputedFrom);
  w.key("seq_nr").integerOrNull(f.seqNr);
  w.key("stack_trace").strOrNull(f.stackTrace);
  w.key("target").strOrNull(f.target);
  w.endObject();
}

LogicalResult Exporter::exportCallFunctionOp(CallFunctionOp op) {
  argsText.clear();
  kwargsText.clear();
  outputsText.clear();
  JsonWriter args(argsText), kwargs(kwargsText), outputs(outputsText);
  args.beginArray();
  if (ArrayAttr a = op.getArgsAttr()) {
    for (Attribute v : a)
      if (failed(writeValue(args, v, op)))
        return failure();
  } else if (!op.getKwargs()) {
    // No recorded args (hand-written IR): the operands are the positional
    // arguments, which must cover the schema's required ones, or the
    // importer (and torch) refuse the document this writes.
    if (SchemaOp entry = op.lookupSchema(&symbolTables))
      for (auto [i, attr] : llvm::enumerate(entry.getArguments())) {
        auto arg = cast<SchemaArgAttr>(attr);
        if (i >= op.getNumOperands() && arg.isRequired())
          return markNamed(op.emitError(), op.getName())
                 << "node '" << op.getName() << "' (" << op.getTarget()
                 << ") records no args and its " << op.getNumOperands()
                 << " operand(s) leave required argument '" << arg.getName()
                 << "' unset: give it in args or kwargs";
      }
    for (Value v : op.getInputs())
      writeRef(args, v);
  }
  args.endArray();
  // A DictionaryAttr is sorted by name: nlohmann's key order.
  kwargs.beginObject();
  if (DictionaryAttr kw = op.getKwargsAttr())
    for (NamedAttribute e : kw)
      if (failed(writeValue(kwargs.key(e.getName()), e.getValue(), op)))
        return failure();
  kwargs.endObject();
  resultTexts.resize(op.getNumResults());
  outputs.beginArray();
  for (OpResult r : op->getResults()) {
    std::string &text = resultTexts[r.getResultNumber()];
    text.clear();
    JsonWriter result(text);
    writeResult(result, r, op.getResultMetaAt(r.getResultNumber()));
    outputs.raw(text);
  }
  outputs.endArray();

  NodeFields fields;
  fields.name = op.getName();
  fields.kind = "call_function";
  fields.target = op.getTarget();
  fields.backward = op.isBackward();
  if (IntegerAttr s = op.getSeqNrAttr())
    fields.seqNr = s.getInt();
  fields.moduleStack = op.getModuleStackAttr();
  if (auto p = op.getPolicyAttr())
    fields.recompute = stringifyCheckpointPolicy(p.getValue());
  if (StringAttr t = op.getStackTraceAttr())
    fields.stackTrace = t.getValue();
  if (StringAttr from = op.getRecomputedFromAttr())
    fields.recomputedFrom = from.getValue();
  writeNode(fields, argsText, kwargsText, outputsText);

  // Results: a single-output op is referenced by its name; outputs of
  // multi-output ops through getitem nodes, re-created here with the
  // parent's fields (but no recomputed_from).
  ArrayAttr names = op.getResultNamesAttr();
  if (!names && op.getNumResults() == 1) {
    valueNames[op.getResult(0)] = op.getName().str();
    return success();
  }
  fields.target = "getitem";
  fields.recomputedFrom = std::nullopt;
  for (OpResult r : op->getResults()) {
    unsigned i = r.getResultNumber();
    StringRef given = names ? cast<StringAttr>(names[i]).getValue() : "";
    if (given.empty() && r.use_empty())
      continue;
    std::string name = given.empty()
                           ? uniqueName((op.getName() + "_getitem").str())
                           : given.str();
    usedNames.add(name);
    valueNames[r] = name;
    argsText.clear();
    args.beginArray();
    writeNodeRef(args, op.getName(), i);
    args.beginObject();
    args.key("t").str("int");
    args.key("v").integer(i);
    args.endObject();
    args.endArray();
    outputsText.clear();
    outputs.beginArray();
    outputs.raw(resultTexts[i]);
    outputs.endArray();
    fields.name = name;
    writeNode(fields, argsText, "{}", outputsText);
  }
  return success();
}

LogicalResult Exporter::exportAOOp(Operation *op) {
  std::string name;
  if (auto given = op->getAttrOfType<StringAttr>("name"))
    name = given.str();
  else
    name = uniqueName(("ao_" + op->getName().stripDialect()).str());
  usedNames.add(name);
  Value result = op->getResult(0);
  valueNames[result] = name;
  TensorMetaAttr meta = getTensorMeta(result);
  NodeFields fields;
  fields.name = name;
  fields.kind = "call_function";
  argsText.clear();
  outputsText.clear();
  std::string facts;
  JsonWriter args(argsText), factsWriter(facts);
  auto none = [&] {
    args.beginObject();
    args.key("t").str("none");
    args.endObject();
  };
  args.beginArray();
  if (auto offload = dyn_cast<ao::OffloadOp>(op)) {
    fields.target = "ao::offload.default";
    writeRef(args, offload.getInput());
    writeFacts(factsWriter, result, meta, "cpu", nextStorage++);
  } else if (auto reload = dyn_cast<ao::ReloadOp>(op)) {
    fields.target = "ao::reload.default";
    fields.backward = true;
    writeRef(args, reload.getInput());
    args.beginObject();
    args.key("t").str("device");
    args.key("v").str(reload.getDevice());
    args.endObject();
    for (ArrayAttr attr : {reload.getSizeAttr(), reload.getStrideAttr()}) {
      if (!attr)
        none();
      else if (failed(writeValue(args, attr, op)))
        return failure();
    }
    // The reloaded copy keeps the id the applier gave its views and
    // backward aliases (`joint.storage`), else a fresh one.
    auto id = reload->getAttrOfType<IntegerAttr>(kReloadStorageAttr);
    writeFacts(factsWriter, result, meta, reload.getDevice(),
               id ? id.getInt() : nextStorage++);
  } else {
    auto wait = cast<ao::WaitTensorOp>(op);
    fields.target = "ao::wait_tensor.default";
    fields.backward = wait.isReloadWait();
    writeRef(args, wait.getInput());
    for (Value v : {wait.getKeepalive(), wait.getLastUseOfStorage()}) {
      if (v)
        writeRef(args, v);
      else
        none();
    }
    // The wait aliases its input: same facts, same storage.
    auto it = aoFacts.find(wait.getInput());
    facts = it == aoFacts.end() ? "null" : it->second;
  }
  args.endArray();
  outputsText = "[" + facts + "]";
  writeNode(fields, argsText, "{}", outputsText);
  aoFacts[result] = std::move(facts);
  return success();
}

/// The schema facts of torch.ops.ao.{offload,reload,wait_tensor} (torch
/// 2.12+, torch/_functorch/_activation_offloading/offload_ops.py).
static json aoOperatorEntry(StringRef target) {
  auto arg = [](const char *name, const char *type, json def = nullptr,
                json alias = json::array()) {
    return json{{"name", name},        {"type", type},
                {"kwarg_only", false}, {"default", def},
                {"alias", alias},      {"alias_after", json::array()},
                {"is_write", false}};
  };
  auto ret = [](json alias = json::array()) {
    return json{{"name", ""},
                {"type", "Tensor"},
                {"alias", alias},
                {"alias_after", json::array()},
                {"is_write", false}};
  };
  if (target == "ao::offload.default")
    return {{"schema", "ao::offload(Tensor tensor) -> Tensor"},
            {"args", json::array({arg("tensor", "Tensor")})},
            {"returns", json::array({ret()})},
            {"is_mutable", false},
            {"tags", json::array({"pt2_compliant_tag"})}};
  if (target == "ao::reload.default")
    return {
        {"schema", "ao::reload(Tensor tensor, Device device, SymInt[]? "
                   "original_size=None, SymInt[]? original_stride=None) "
                   "-> Tensor"},
        {"args", json::array({arg("tensor", "Tensor"), arg("device", "Device"),
                              arg("original_size", "SymInt[]?", "None"),
                              arg("original_stride", "SymInt[]?", "None")})},
        {"returns", json::array({ret()})},
        {"is_mutable", false},
        {"tags", json::array({"pt2_compliant_tag"})}};
  return {{"schema",
           "ao::wait_tensor(Tensor(a) tensor, Tensor? keepalive=None, "
           "Tensor? last_use_of_storage=None) -> Tensor(a)"},
          {"args",
           json::array({arg("tensor", "Tensor", nullptr, json::array({"a"})),
                        arg("keepalive", "Tensor?", "None"),
                        arg("last_use_of_storage", "Tensor?", "None")})},
          {"returns", json::array({ret(json::array({"a"}))})},
          {"is_mutable", false},
          {"tags", json::array()}};
}

LogicalResult Exporter::run(ModuleOp module, json &doc) {
  Block &body = graph.getBody().front();
  // Storage ids for new host/device copies start past every recorded one.
  auto noteStorage = [&](TensorMetaAttr m) {
    if (m)
      nextStorage = std::max(nextStorage, m.getStorage() + 1);
  };
  for (BlockArgument arg : body.getArguments())
    noteStorage(getTensorMeta(arg));
  usedNames.addGraph(graph);
  for (CallFunctionOp op : body.getOps<CallFunctionOp>()) {
    if (ArrayAttr metas = op.getResultMetaAttr())
      for (Attribute m : metas)
        noteStorage(dyn_cast<TensorMetaAttr>(m));
  }

  assignMissingStorage(body);
  json state = json::array(), inputs = json::array();
  for (BlockArgument arg : body.getArguments()) {
    unsigned i = arg.getArgNumber();
    DictionaryAttr attrs = graph.getArgAttrDict(i);
    std::string name;
    if (auto n = attrs.getAs<StringAttr>(kNodeNameAttr))
      name = n.str();
    else
      name = uniqueName(("arg" + Twine(i) + "_1").str());
    usedNames.add(name);
    valueNames[arg] = name;
    Role role = graph.getArgRole(i);
    if (role == Role::input) {
      inputs.push_back({{"input", name},
                        {"path", attrs.getAs<StringAttr>(kPathAttr).str()}});
    } else {
      auto rg = attrs.getAs<BoolAttr>(kRequiresGradAttr);
      state.push_back(
          {{"input", name},
           {"fqn", graph.getArgFQN(i).str()},
           {"is_param", role == Role::param},
           {"requires_grad", rg ? rg.getValue() : role == Role::param}});
    }
    outputsText.clear();
    JsonWriter outputs(outputsText);
    outputs.beginArray();
    if (isa<RankedTensorType>(arg.getType()))
      writeFacts(outputs, arg, getTensorMeta(arg), "", std::nullopt);
    else
      writeResult(outputs, arg, Attribute());
    outputs.endArray();
    NodeFields fields;
    fields.name = name;
    fields.kind = "placeholder";
    writeNode(fields, "[]", "{}", outputsText);
  }

  for (Operation &op : body.without_terminator()) {
    if (auto aten = dyn_cast<CallFunctionOp>(op)) {
      if (failed(exportCallFunctionOp(aten)))
        return failure();
    } else if (isa<ao::OffloadOp, ao::ReloadOp, ao::WaitTensorOp>(op)) {
      if (failed(exportAOOp(&op)))
        return failure();
    } else {
      return op.emitError() << "cannot be written in format v1";
    }
  }

  OutputOp output = graph.getOutputOp();
  json roles = json::array();
  argsText.clear();
  JsonWriter outArgs(argsText);
  outArgs.beginArray();
  for (auto [i, v] : llvm::enumerate(output.getOperands())) {
    writeRef(outArgs, v);
    DictionaryAttr attrs = graph.getResultAttrDict(i);
    auto key = attrs.getAs<StringAttr>(kKeyAttr);
    auto fqn = attrs.getAs<StringAttr>(kFQNAttr);
    roles.push_back({{"role", stringifyRole(graph.getResultRole(i)).str()},
                     {"fqn", fqn ? json(fqn.str()) : json(nullptr)},
                     {"key", key ? json(key.str()) : json(nullptr)},
                     {"node", valueNames.lookup(v)}});
  }
  std::string outputName = "output";
  if (auto n = graph->getAttrOfType<StringAttr>(kOutputNameAttr))
    outputName = n.str();
  outArgs.endArray();
  NodeFields fields;
  fields.name = outputName;
  fields.kind = "output";
  writeNode(fields, argsText, "{}", "[]");

  json operators = json::object();
  for (SchemaOp entry : module.getOps<SchemaOp>()) {
    auto schemaArgs = [](ArrayAttr list, bool returns) {
      json out = json::array();
      auto split = [](StringRef set) {
        json members = json::array();
        if (set.empty())
          return members;
        SmallVector<StringRef> parts;
        set.split(parts, '|');
        for (StringRef p : parts)
          members.push_back(p.str());
        return members;
      };
      for (Attribute a : list) {
        auto arg = cast<SchemaArgAttr>(a);
        json e = {{"name", arg.getName().str()},
                  {"type", arg.getType().str()},
                  {"alias", split(arg.getAlias())},
                  {"alias_after", split(arg.getAliasAfter())},
                  {"is_write", arg.getWrite()}};
        if (!returns) {
          e["kwarg_only"] = arg.getKwargOnly();
          e["default"] = arg.getDefaultValue()
                             ? json(arg.getDefaultValue().str())
                             : json(nullptr);
        }
        out.push_back(std::move(e));
      }
      return out;
    };
    json tags = json::array();
    for (Attribute t : entry.getTags())
      tags.push_back(cast<StringAttr>(t).str());
    json &out = operators[entry.getSymName().str()];
    out = {{"schema", entry.getSchema().str()},
           {"args", schemaArgs(entry.getArguments(), false)},
           {"returns", schemaArgs(entry.getReturns(), true)},
           {"is_mutable", entry.getIsMutable()},
           {"tags", tags}};
    if (std::optional<StringRef> module = entry.getPythonModule())
      out["python_module"] = module->str();
  }

  // Operator-table entries for the ao nodes (torch.ops.ao schemas), so the
  // document stays self-describing like any traced graph.
  for (Operation &op : body) {
    StringRef target;
    if (isa<ao::OffloadOp>(op))
      target = "ao::offload.default";
    else if (isa<ao::ReloadOp>(op))
      target = "ao::reload.default";
    else if (isa<ao::WaitTensorOp>(op))
      target = "ao::wait_tensor.default";
    if (!target.empty() && !operators.contains(target.str()))
      operators[target.str()] = aoOperatorEntry(target);
  }

  auto minor = graph->getAttrOfType<IntegerAttr>(kFormatMinorAttr);
  doc = json::object();
  doc["format"] = "joint-graph";
  doc["version"] = {{"major", 1}, {"minor", minor ? minor.getInt() : 0}};
  doc["name"] = graph.getSymName().str();
  for (auto [key, attrName] :
       {std::pair<const char *, StringRef>{"producer", kProducerAttr},
        {"backward_tags", kBackwardTagsAttr},
        {"symbols", kSymbolsAttr},
        {"model", kModelAttr}})
    if (Attribute a = graph->getAttr(attrName))
      doc[key] = attrToJson(a);
  doc["state"] = std::move(state);
  doc["inputs"] = std::move(inputs);
  doc["outputs"] = std::move(roles);
  doc["nodes"] = nullptr; // written from `nodes` by exportJointGraph
  doc["operators"] = std::move(operators);
  return success();
}

LogicalResult mlir::joint::exportJointGraph(ModuleOp module,
                                            llvm::raw_ostream &os) {
  SmallVector<GraphOp> graphs(module.getOps<GraphOp>());
  if (graphs.size() != 1)
    return module.emitError() << "format v1 holds exactly one joint.graph, "
                                 "but the module has "
                              << graphs.size();
  json doc;
  Exporter exporter(graphs.front());
  if (failed(exporter.run(module, doc)))
    return failure();
  // One node / table entry per line keeps diffs readable; the layout is not
  // part of the format.
  os << "{\n";
  bool first = true;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (!first)
      os << ",\n";
    first = false;
    os << dump(json(it.key())) << ":";
    const json &v = it.value();
    if (it.key() == "nodes") {
      StringRef lines = exporter.nodeLines();
      if (lines.empty())
        os << "[]";
      else
        os << "[\n" << lines << "\n]";
    } else if (v.is_array() && !v.empty()) {
      os << "[\n";
      for (size_t i = 0; i < v.size(); ++i)
        os << (i ? ",\n" : "") << dump(v[i]);
      os << "\n]";
    } else if (it.key() == "operators" && !v.empty()) {
      os << "{\n";
      bool firstEntry = true;
      for (auto e = v.begin(); e != v.end(); ++e) {
        os << (firstEntry ? "" : ",\n") << dump(json(e.key())) << ":"
           << dump(e.value());
        firstEntry = false;
      }
      os << "\n}";
    } else {
      os << dump(v);
    }
  }
  os << "\n}\n";
  return success();
}

void mlir::joint::registerExportJointJSONTranslation() {
  // Parsed here rather than by TranslateFromMLIRRegistration so that parser
  // and verifier diagnostics on ops located in one-line JSON (printed with
  // debug locations) quote a window of that line, as export errors do.
  TranslateRegistration reg(
      "export-joint-json", "the joint dialect to joint-graph JSON (format v1)",
      [](const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
         llvm::raw_ostream &os, MLIRContext *context) -> LogicalResult {
        DialectRegistry registry;
        registry.insert<JointDialect, ao::AODialect>();
        context->appendDialectRegistry(registry);
        ExcerptDiagnostics excerpts;
        ScopedDiagnosticHandler handler(
            context, [&](Diagnostic &d) { return excerpts.handle(d); });
        OwningOpRef<ModuleOp> module =
            parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(context));
        if (!module || failed(verify(*module)))
          return failure();
        return exportJointGraph(*module, os);
      });
}

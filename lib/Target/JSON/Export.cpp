//===- Export.cpp - The joint dialect to joint-graph JSON -------*- C++ -*-===//
//
// Writes a module with one joint.graph as a format v1 document: placeholders
// from the graph arguments, one node per joint.call_function (FX getitem nodes
// re-created after multi-output ops with their original names), `ao::` nodes
// for the ao ops, the output node, and the operator table.
//
//===----------------------------------------------------------------------===//

#include "joint/Target/JSON/Export.h"
#include "JSONUtils.h"
#include "joint/Dialect/AO/IR/AOOps.h"
#include "joint/Dialect/Joint/IR/JointOps.h"
#include "joint/Dialect/Joint/IR/TensorMeta.h"
#include "joint/Support/Namespace.h"
#include "joint/Target/JSON/Diagnostics.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/StringSet.h"

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

/// The `nodes` array, each node serialized as soon as it is complete: a
/// 200k-node graph never exists as one JSON tree (its allocations and
/// teardown cost more than writing the text).
struct NodeLines {
  std::vector<std::string> lines;
  void push_back(const json &node) { lines.push_back(dump(node)); }
};

class Exporter {
public:
  explicit Exporter(GraphOp graph) : graph(graph) {}
  /// Fills `doc` (with a null `nodes` entry) and the serialized `nodes`.
  LogicalResult run(ModuleOp module, json &doc, NodeLines &nodes);

private:
  /// A fresh node name derived from `base`.
  std::string uniqueName(StringRef base) { return usedNames.newName(base); }
  json symIntToJson(const SymInt &s) {
    if (s.isStatic())
      return s.hint;
    return {{"expr", s.expr.str()},
            {"hint", s.hasHint() ? json(s.hint) : json(nullptr)}};
  }
  json factsToJson(Value v, TensorMetaAttr meta, StringRef device,
                   std::optional<int64_t> storage);
  /// Storage ids for tensors without facts, numbered in program order before
  /// any ao copy, so export -> import -> export is stable.
  void assignMissingStorage(Block &body);
  json resultToJson(Value v, Attribute meta);
  FailureOr<json> valueToJson(Attribute value, Operation *op);
  json ref(Value v) {
    return {{"t", "node"}, {"v", valueNames.lookup(v)}, {"i", 0}};
  }
  json node(StringRef name, StringRef kind, json target, json args, json kwargs,
            json outputs) {
    return {{"name", name.str()},
            {"kind", kind.str()},
            {"target", target},
            {"args", std::move(args)},
            {"kwargs", std::move(kwargs)},
            {"outputs", std::move(outputs)},
            {"backward", false},
            {"seq_nr", nullptr},
            {"module_stack", json::array()},
            {"recompute", nullptr},
            {"stack_trace", nullptr}};
  }
  LogicalResult exportCallFunctionOp(CallFunctionOp op, NodeLines &nodes);
  LogicalResult exportAOOp(Operation *op, NodeLines &nodes);

  GraphOp graph;
  Namespace usedNames;
  DenseMap<Value, std::string> valueNames;
  DenseMap<Value, int64_t> assignedStorage;
  DenseMap<Value, json> aoFacts; // facts of each ao result, by value
  int64_t nextStorage = 0;
};

} // namespace

json Exporter::factsToJson(Value v, TensorMetaAttr meta, StringRef device,
                           std::optional<int64_t> storage) {
  auto type = cast<RankedTensorType>(v.getType());
  json sizes = json::array(), strides = json::array();
  json offset = 0;
  std::string dev = device.str();
  int64_t id = storage ? *storage : assignedStorage.lookup(v);
  if (meta) {
    for (const SymInt &s : meta.getSizes())
      sizes.push_back(symIntToJson(s));
    for (const SymInt &s : meta.getStrides())
      strides.push_back(symIntToJson(s));
    offset = symIntToJson(meta.getOffset());
    if (dev.empty())
      dev = meta.getDevice().str();
    if (!storage)
      id = meta.getStorage();
  } else {
    // Hand-written IR without facts: contiguous, static.
    int64_t stride = 1;
    SmallVector<int64_t> st(type.getRank());
    for (int64_t i = type.getRank() - 1; i >= 0; --i) {
      st[i] = stride;
      stride *=
          ShapedType::isDynamic(type.getDimSize(i)) ? 1 : type.getDimSize(i);
    }
    for (int64_t i = 0; i < type.getRank(); ++i) {
      sizes.push_back(type.getDimSize(i));
      strides.push_back(st[i]);
    }
    if (dev.empty())
      dev = "cpu";
  }
  std::optional<ScalarType> dtype = getScalarType(type.getElementType());
  return {{"t", "tensor"},
          {"sizes", sizes},
          {"strides", strides},
          {"offset", offset},
          {"dtype", dtype ? stringifyScalarType(*dtype).str() : "unknown"},
          {"device", dev},
          {"storage", id}};
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

json Exporter::resultToJson(Value v, Attribute meta) {
  if (isa<RankedTensorType>(v.getType()))
    return factsToJson(v, dyn_cast_or_null<TensorMetaAttr>(meta), "",
                       std::nullopt);
  if (isa<NoneType>(v.getType()))
    return {{"t", "none"}};
  if (auto f = dyn_cast_or_null<FloatAttr>(meta))
    return {{"t", "float"}, {"v", f.getValueAsDouble()}};
  bool isBool = v.getType().isInteger(1);
  if (auto s = dyn_cast_or_null<SymExprAttr>(meta)) {
    const SymInt &value = s.getValue();
    if (value.isStatic())
      return isBool ? json{{"t", "bool"}, {"v", value.hint != 0}}
                    : json{{"t", "int"}, {"v", value.hint}};
    json hint = nullptr;
    if (value.hasHint())
      hint = isBool ? json(value.hint != 0) : json(value.hint);
    return {{"t", isBool ? "symbool" : "symint"},
            {"expr", value.expr.str()},
            {"hint", hint}};
  }
  return {{"t", "none"}};
}

FailureOr<json> Exporter::valueToJson(Attribute value, Operation *op) {
  if (isa<UnitAttr>(value))
    return json{{"t", "none"}};
  if (auto r = dyn_cast<OperandRefAttr>(value))
    return ref(op->getOperand(r.getIndex()));
  if (auto bv = dyn_cast<BoolAttr>(value))
    return json{{"t", "bool"}, {"v", bv.getValue()}};
  if (auto i = dyn_cast<IntegerAttr>(value))
    return json{{"t", "int"}, {"v", i.getInt()}};
  if (auto f = dyn_cast<FloatAttr>(value)) {
    double d = f.getValueAsDouble();
    if (std::isnan(d))
      return json{{"t", "float"}, {"v", "nan"}};
    if (std::isinf(d))
      return json{{"t", "float"}, {"v", d > 0 ? "inf" : "-inf"}};
    return json{{"t", "float"}, {"v", d}};
  }
  if (auto s = dyn_cast<StringAttr>(value))
    return json{{"t", "str"}, {"v", s.str()}};
  if (auto d = dyn_cast<ScalarTypeAttr>(value))
    return json{{"t", "dtype"}, {"v", stringifyScalarType(d.getValue()).str()}};
  if (auto d = dyn_cast<DeviceAttr>(value))
    return json{{"t", "device"}, {"v", d.getName().str()}};
  if (auto l = dyn_cast<LayoutAttr>(value)) {
    std::string name = stringifyLayout(l.getValue()).str();
    if (l.getValue() == Layout::mkldnn)
      name = "_" + name;
    return json{{"t", "layout"}, {"v", name}};
  }
  if (auto m = dyn_cast<MemoryFormatAttr>(value))
    return json{{"t", "memory_format"},
                {"v", stringifyMemoryFormat(m.getValue()).str()}};
  if (auto s = dyn_cast<SymExprAttr>(value)) {
    json out = {{"t", "symint"}};
    const SymInt &v = s.getValue();
    out["expr"] = v.isStatic() ? std::to_string(v.hint) : v.expr.str();
    out["hint"] = v.hasHint() ? json(v.hint) : json(nullptr);
    return out;
  }
  if (auto a = dyn_cast<ArrayAttr>(value)) {
    json items = json::array();
    for (Attribute e : a) {
      FailureOr<json> j = valueToJson(e, op);
      if (failed(j))
        return failure();
      items.push_back(std::move(*j));
    }
    return json{{"t", "list"}, {"v", std::move(items)}};
  }
  op->emitError() << "cannot write argument value " << value << " in format v1";
  return failure();
}

LogicalResult Exporter::exportCallFunctionOp(CallFunctionOp op,
                                             NodeLines &nodes) {
  json args = json::array();
  json kwargs = json::object();
  if (ArrayAttr a = op.getArgsAttr()) {
    for (Attribute v : a) {
      FailureOr<json> j = valueToJson(v, op);
      if (failed(j))
        return failure();
      args.push_back(std::move(*j));
    }
  } else if (!op.getKwargs()) {
    for (Value v : op.getInputs())
      args.push_back(ref(v));
  }
  if (DictionaryAttr kw = op.getKwargsAttr())
    for (NamedAttribute e : kw) {
      FailureOr<json> j = valueToJson(e.getValue(), op);
      if (failed(j))
        return failure();
      kwargs[e.getName().str()] = std::move(*j);
    }
  json outputs = json::array();
  for (OpResult r : op->getResults())
    outputs.push_back(resultToJson(r, op.getResultMetaAt(r.getResultNumber())));

  // Results: a single-output op is referenced by its name; outputs of
  // multi-output ops through getitem nodes, re-created below.
  ArrayAttr names = op.getResultNamesAttr();
  bool tuple = names || op.getNumResults() != 1;
  json n =
      node(op.getName(), "call_function", op.getTarget().str(), std::move(args),
           std::move(kwargs), tuple ? outputs : std::move(outputs));
  n["backward"] = op.isBackward();
  if (auto s = op.getSeqNrAttr())
    n["seq_nr"] = s.getInt();
  if (ArrayAttr stack = op.getModuleStackAttr())
    for (Attribute f : stack) {
      auto frame = cast<ModuleFrameAttr>(f);
      n["module_stack"].push_back(
          {{"fqn", frame.getFqn().str()}, {"class", frame.getCls().str()}});
    }
  if (auto p = op.getPolicyAttr())
    n["recompute"] = stringifyCheckpointPolicy(p.getValue()).str();
  if (auto t = op.getStackTraceAttr())
    n["stack_trace"] = t.str();
  if (auto from = op.getRecomputedFromAttr())
    n["recomputed_from"] = from.str();
  if (!tuple) {
    nodes.push_back(std::move(n));
    valueNames[op.getResult(0)] = op.getName().str();
    return success();
  }
  nodes.push_back(n);
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
    json g = n;
    g["name"] = name;
    g["target"] = "getitem";
    g["args"] =
        json::array({json{{"t", "node"}, {"v", op.getName().str()}, {"i", i}},
                     json{{"t", "int"}, {"v", i}}});
    g["kwargs"] = json::object();
    g["outputs"] = json::array({outputs[i]});
    g.erase("recomputed_from");
    nodes.push_back(std::move(g));
  }
  return success();
}

LogicalResult Exporter::exportAOOp(Operation *op, NodeLines &nodes) {
  std::string name;
  if (auto given = op->getAttrOfType<StringAttr>("name"))
    name = given.str();
  else
    name = uniqueName(("ao_" + op->getName().stripDialect()).str());
  usedNames.add(name);
  Value result = op->getResult(0);
  valueNames[result] = name;
  TensorMetaAttr meta = getTensorMeta(result);
  json n;
  if (auto offload = dyn_cast<ao::OffloadOp>(op)) {
    n = node(name, "call_function", "ao::offload.default",
             json::array({ref(offload.getInput())}), json::object(),
             json::array({factsToJson(result, meta, "cpu", nextStorage++)}));
  } else if (auto reload = dyn_cast<ao::ReloadOp>(op)) {
    json size = nullptr, stride = nullptr;
    for (auto [attr, out] :
         {std::pair<ArrayAttr, json *>{reload.getSizeAttr(), &size},
          {reload.getStrideAttr(), &stride}})
      if (attr) {
        FailureOr<json> j = valueToJson(attr, op);
        if (failed(j))
          return failure();
        *out = std::move(*j);
      }
    n = node(
        name, "call_function", "ao::reload.default",
        json::array({ref(reload.getInput()),
                     json{{"t", "device"}, {"v", reload.getDevice().str()}},
                     size, stride}),
        json::object(),
        json::array(
            {factsToJson(result, meta, reload.getDevice(), nextStorage++)}));
    for (json *v : {&n["args"][2], &n["args"][3]})
      if (v->is_null())
        *v = json{{"t", "none"}};
  } else {
    auto wait = cast<ao::WaitTensorOp>(op);
    json keepalive = json{{"t", "none"}}, last = json{{"t", "none"}};
    if (wait.getKeepalive())
      keepalive = ref(wait.getKeepalive());
    if (wait.getLastUseOfStorage())
      last = ref(wait.getLastUseOfStorage());
    // The wait aliases its input: same facts, same storage.
    json facts = aoFacts.lookup(wait.getInput());
    n = node(name, "call_function", "ao::wait_tensor.default",
             json::array({ref(wait.getInput()), keepalive, last}),
             json::object(), json::array({facts}));
    n["backward"] = wait.isReloadWait();
  }
  if (isa<ao::ReloadOp>(op))
    n["backward"] = true;
  aoFacts[result] = n["outputs"][0];
  nodes.push_back(std::move(n));
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

LogicalResult Exporter::run(ModuleOp module, json &doc, NodeLines &nodes) {
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
    json facts = isa<RankedTensorType>(arg.getType())
                     ? factsToJson(arg, getTensorMeta(arg), "", std::nullopt)
                     : resultToJson(arg, Attribute());
    nodes.push_back(node(name, "placeholder", nullptr, json::array(),
                         json::object(), json::array({facts})));
  }

  for (Operation &op : body.without_terminator()) {
    if (auto aten = dyn_cast<CallFunctionOp>(op)) {
      if (failed(exportCallFunctionOp(aten, nodes)))
        return failure();
    } else if (isa<ao::OffloadOp, ao::ReloadOp, ao::WaitTensorOp>(op)) {
      if (failed(exportAOOp(&op, nodes)))
        return failure();
    } else {
      return op.emitError() << "cannot be written in format v1";
    }
  }

  OutputOp output = graph.getOutputOp();
  json outArgs = json::array(), roles = json::array();
  for (auto [i, v] : llvm::enumerate(output.getOperands())) {
    outArgs.push_back(ref(v));
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
  nodes.push_back(node(outputName, "output", nullptr, outArgs, json::object(),
                       json::array()));

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
  NodeLines nodes;
  if (failed(Exporter(graphs.front()).run(module, doc, nodes)))
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
      if (nodes.lines.empty()) {
        os << "[]";
        continue;
      }
      os << "[\n";
      for (size_t i = 0; i < nodes.lines.size(); ++i)
        os << (i ? ",\n" : "") << nodes.lines[i];
      os << "\n]";
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
        LongLineDiagnostics longLines;
        ScopedDiagnosticHandler handler(
            context, [&](Diagnostic &d) { return longLines.handle(d); });
        OwningOpRef<ModuleOp> module =
            parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(context));
        if (!module || failed(verify(*module)))
          return failure();
        return exportJointGraph(*module, os);
      });
}

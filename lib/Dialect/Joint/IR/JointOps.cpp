//===- JointOps.cpp - Operations of the joint dialect ---------------------===//
//
// Assembly and verifiers of joint.graph, joint.output, joint.call_function and
// joint.schema. The verifiers enforce the invariants passes rely on: roles
// on every graph argument and result, operand references in argument lists,
// one tensor-fact entry per result that agrees with the result type, and
// arity against the operator table when the module has an entry.
//
//===----------------------------------------------------------------------===//

#include "joint/Dialect/Joint/IR/JointOps.h"
#include "joint/Dialect/Joint/IR/OpSets.h"
#include "joint/Dialect/Joint/IR/TensorMeta.h"
#include "joint/Support/NamedDiagnostics.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::joint;

#define GET_OP_CLASSES
#include "joint/Dialect/Joint/IR/JointOps.cpp.inc"

//===----------------------------------------------------------------------===//
// GraphOp
//===----------------------------------------------------------------------===//

ParseResult GraphOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildFuncType =
      [](Builder &builder, ArrayRef<Type> argTypes, ArrayRef<Type> results,
         function_interface_impl::VariadicFlag,
         std::string &) { return builder.getFunctionType(argTypes, results); };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false,
      getFunctionTypeAttrName(result.name), buildFuncType,
      getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void GraphOp::print(OpAsmPrinter &p) {
  function_interface_impl::printFunctionOp(
      p, *this, /*isVariadic=*/false, getFunctionTypeAttrName(),
      getArgAttrsAttrName(), getResAttrsAttrName());
}

static RoleAttr getRoleAttr(DictionaryAttr attrs) {
  return attrs ? attrs.getAs<RoleAttr>(kRoleAttr) : RoleAttr();
}

static StringRef getStringEntry(DictionaryAttr attrs, StringRef name) {
  if (!attrs)
    return {};
  if (auto s = attrs.getAs<StringAttr>(name))
    return s.getValue();
  return {};
}

/// Block arguments print as their state FQN or input path (`%fc1.weight`).
void GraphOp::getAsmBlockArgumentNames(Region &region,
                                       OpAsmSetValueNameFn setNameFn) {
  for (BlockArgument arg : region.getArguments()) {
    DictionaryAttr attrs = getArgAttrDict(arg.getArgNumber());
    StringRef name = getStringEntry(attrs, kFQNAttr);
    if (name.empty())
      name = getStringEntry(attrs, kPathAttr);
    if (name.empty())
      continue;
    // `args[0]` -> `args_0`: keep SSA names readable.
    std::string clean;
    for (char c : name)
      clean += (llvm::isAlnum(c) || c == '_' || c == '.') ? c : '_';
    while (!clean.empty() && clean.back() == '_')
      clean.pop_back();
    setNameFn(arg, clean);
  }
}

Role GraphOp::getArgRole(unsigned i) {
  return getRoleAttr(getArgAttrDict(i)).getValue();
}
Role GraphOp::getResultRole(unsigned i) {
  return getRoleAttr(getResultAttrDict(i)).getValue();
}
StringRef GraphOp::getArgFQN(unsigned i) {
  return getStringEntry(getArgAttrDict(i), kFQNAttr);
}
StringRef GraphOp::getResultFQN(unsigned i) {
  return getStringEntry(getResultAttrDict(i), kFQNAttr);
}
OutputOp GraphOp::getOutputOp() {
  return cast<OutputOp>(getBody().front().getTerminator());
}

/// Checks that `meta` agrees with `type`: same rank, equal static sizes, and
/// `?` exactly where the size is symbolic.
static LogicalResult
verifyMetaAgainstType(function_ref<InFlightDiagnostic()> emitError,
                      TensorMetaAttr meta, Type type) {
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return emitError() << "has tensor facts but type " << type
                       << " is not a ranked tensor";
  if (meta.getSizes().size() != static_cast<size_t>(tensorType.getRank()))
    return emitError() << "tensor facts have rank " << meta.getSizes().size()
                       << " but the type " << type << " has rank "
                       << tensorType.getRank();
  for (auto [i, size] : llvm::enumerate(meta.getSizes())) {
    int64_t dim = tensorType.getDimSize(i);
    if (size.isStatic() && dim != size.hint)
      return emitError() << "dimension " << i << " is " << size.hint
                         << " in the tensor facts but "
                         << (ShapedType::isDynamic(dim) ? std::string("?")
                                                        : std::to_string(dim))
                         << " in the type";
    if (!size.isStatic() && !ShapedType::isDynamic(dim))
      return emitError() << "dimension " << i << " is symbolic (" << size.expr
                         << ") but static in the type";
  }
  return success();
}

/// A torch value type: a ranked tensor of a torch dtype, a SymInt (i64), a
/// SymBool (i1), a SymFloat (f64) or None.
static bool isTorchValueType(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return getScalarType(tensor.getElementType()).has_value();
  return type.isInteger(64) || type.isInteger(1) || type.isF64() ||
         isa<NoneType>(type);
}

/// The `joint.role` in `attrs` of argument or result `i` (`what`); emits an
/// error naming the roles it may have (`allowed`) when there is none.
static FailureOr<Role> requireRole(GraphOp graph, DictionaryAttr attrs,
                                   StringRef what, unsigned i,
                                   StringRef allowed) {
  if (RoleAttr role = getRoleAttr(attrs))
    return role.getValue();
  return graph.emitOpError() << what << " " << i << " has no '" << kRoleAttr
                             << "' (" << allowed << ")";
}

LogicalResult GraphOp::verify() {
  FunctionType type = getFunctionType();
  llvm::DenseSet<StringRef> paramFQNs;
  for (unsigned i = 0, e = type.getNumInputs(); i < e; ++i) {
    DictionaryAttr attrs = getArgAttrDict(i);
    FailureOr<Role> role =
        requireRole(*this, attrs, "argument", i, "param, buffer or input");
    if (failed(role))
      return failure();
    Role r = *role;
    if (r != Role::param && r != Role::buffer && r != Role::input)
      return emitOpError() << "argument " << i << " has role '"
                           << stringifyRole(r)
                           << "'; arguments are param, buffer or input";
    if (r == Role::input) {
      if (getStringEntry(attrs, kPathAttr).empty())
        return emitOpError()
               << "input argument " << i << " has no '" << kPathAttr << "'";
    } else if (getStringEntry(attrs, kFQNAttr).empty()) {
      return emitOpError() << stringifyRole(r) << " argument " << i
                           << " has no '" << kFQNAttr << "'";
    } else if (r == Role::param &&
               !paramFQNs.insert(getStringEntry(attrs, kFQNAttr)).second) {
      return emitOpError() << "parameter '" << getStringEntry(attrs, kFQNAttr)
                           << "' appears twice (tied tensors are one input)";
    }
    if (!isTorchValueType(type.getInput(i)))
      return emitOpError() << "argument " << i << " has type "
                           << type.getInput(i) << ", not a torch value type";
    if (attrs)
      if (Attribute meta = attrs.get(kMetaAttr)) {
        auto tensorMeta = dyn_cast<TensorMetaAttr>(meta);
        if (!tensorMeta)
          return emitOpError() << "argument " << i << " '" << kMetaAttr
                               << "' must be a #joint.tensor";
        if (failed(verifyMetaAgainstType(
                [&]() { return emitOpError() << "argument " << i << " "; },
                tensorMeta, type.getInput(i))))
          return failure();
      }
  }
  bool sawLoss = false;
  for (unsigned i = 0, e = type.getNumResults(); i < e; ++i) {
    DictionaryAttr attrs = getResultAttrDict(i);
    FailureOr<Role> role = requireRole(*this, attrs, "result", i,
                                       "loss, grad, loss_dict or output");
    if (failed(role))
      return failure();
    switch (*role) {
    case Role::loss:
      if (sawLoss)
        return emitOpError() << "result " << i << " is a second loss";
      sawLoss = true;
      break;
    case Role::grad: {
      StringRef fqn = getStringEntry(attrs, kFQNAttr);
      if (fqn.empty())
        return emitOpError()
               << "grad result " << i << " has no '" << kFQNAttr << "'";
      if (!paramFQNs.contains(fqn))
        return emitOpError() << "grad result " << i << " is for '" << fqn
                             << "', which is not a parameter argument";
      break;
    }
    case Role::loss_dict:
      if (getStringEntry(attrs, kKeyAttr).empty())
        return emitOpError()
               << "loss_dict result " << i << " has no '" << kKeyAttr << "'";
      break;
    case Role::output:
      break;
    default:
      return emitOpError() << "result " << i << " has role '"
                           << stringifyRole(*role)
                           << "'; results are loss, grad, loss_dict or output";
    }
  }
  return success();
}

static LogicalResult verifyAgainstSchema(CallFunctionOp op, SchemaOp entry);

LogicalResult GraphOp::verifyRegions() {
  Block &body = getBody().front();
  if (!isa<OutputOp>(body.getTerminator()))
    return emitOpError() << "body must end with joint.output";
  // Each call against its schema, the module's schemas indexed once per
  // graph. Here, not as a SymbolUserOpInterface: MLIR repeats those checks
  // over the whole module after every nested pass pipeline, also after
  // passes that change nothing. Only joint.schema ops of the module are
  // read, which no pass on another graph modifies.
  llvm::DenseMap<Attribute, SchemaOp> schemas;
  if (auto module = dyn_cast_or_null<ModuleOp>((*this)->getParentOp()))
    for (SchemaOp entry : module.getOps<SchemaOp>())
      schemas.try_emplace(entry.getSymNameAttr(), entry);
  for (Operation &op : body.without_terminator()) {
    auto call = dyn_cast<CallFunctionOp>(op);
    if (!call) {
      if (op.getDialect() == getOperation()->getDialect())
        return op.emitOpError() << "is not allowed inside joint.graph";
      continue;
    }
    // The table is optional for hand-written IR.
    if (SchemaOp entry = schemas.lookup(call.getTargetAttr()))
      if (failed(verifyAgainstSchema(call, entry)))
        return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// OutputOp
//===----------------------------------------------------------------------===//

LogicalResult OutputOp::verify() {
  auto graph = cast<GraphOp>((*this)->getParentOp());
  ArrayRef<Type> results = graph.getResultTypes();
  if (getNumOperands() != results.size())
    return emitOpError() << "has " << getNumOperands()
                         << " operands but the graph has " << results.size()
                         << " results";
  for (auto [i, value, expected] : llvm::enumerate(getOperands(), results))
    if (value.getType() != expected)
      return emitOpError() << "operand " << i << " has type " << value.getType()
                           << " but graph result " << i << " is " << expected;
  return success();
}

//===----------------------------------------------------------------------===//
// CallFunctionOp
//===----------------------------------------------------------------------===//

namespace {
/// Prefixes an op diagnostic with the FX node name (marked as naming it).
InFlightDiagnostic emitNodeError(CallFunctionOp op) {
  return markNamed(op.emitOpError(), op.getName())
         << "'" << op.getName() << "' (" << op.getTarget() << "): ";
}
} // namespace

/// Allowed non-operand argument values: the torch argument kinds.
static bool isArgumentValue(Attribute attr) {
  if (isa<IntegerAttr, FloatAttr, StringAttr, UnitAttr, ScalarTypeAttr,
          DeviceAttr, LayoutAttr, MemoryFormatAttr, OperandRefAttr,
          SymExprAttr>(attr))
    return true;
  if (auto array = dyn_cast<ArrayAttr>(attr))
    return llvm::all_of(array, isArgumentValue);
  return false;
}

/// Visits every #joint.operand<i> inside `attr`.
static void forEachOperandRef(Attribute attr,
                              function_ref<void(OperandRefAttr)> fn) {
  if (auto ref = dyn_cast<OperandRefAttr>(attr))
    return fn(ref);
  if (auto array = dyn_cast<ArrayAttr>(attr))
    for (Attribute element : array)
      forEachOperandRef(element, fn);
}

LogicalResult CallFunctionOp::verify() {
  if (getName().empty())
    return emitOpError() << "has an empty node name";
  StringRef target = getTarget();
  size_t sep = target.find("::");
  if (sep == StringRef::npos || sep == 0 || sep + 2 >= target.size())
    return emitNodeError(*this)
           << "target is not of the form 'namespace::name.overload'";

  unsigned numOperands = getNumOperands();
  if (getArgs() || getKwargs()) {
    SmallVector<unsigned> uses(numOperands, 0);
    bool outOfRange = false;
    // `where` names the argument; built only for an error.
    auto visit = [&](Attribute value,
                     function_ref<std::string()> where) -> LogicalResult {
      if (!isArgumentValue(value))
        return emitNodeError(*this)
               << where() << " has unsupported value " << value;
      forEachOperandRef(value, [&](OperandRefAttr ref) {
        if (ref.getIndex() >= numOperands)
          outOfRange = true;
        else
          ++uses[ref.getIndex()];
      });
      if (outOfRange)
        return emitNodeError(*this)
               << where() << " refers to an operand past the " << numOperands
               << " operands";
      return success();
    };
    if (ArrayAttr args = getArgsAttr())
      for (auto [i, value] : llvm::enumerate(args))
        if (failed(visit(value,
                         [i = i] { return "argument " + std::to_string(i); })))
          return failure();
    if (DictionaryAttr kwargs = getKwargsAttr())
      for (NamedAttribute kw : kwargs)
        if (failed(visit(kw.getValue(), [&] {
              return ("kwarg '" + kw.getName().getValue() + "'").str();
            })))
          return failure();
    for (auto [i, n] : llvm::enumerate(uses))
      if (n != 1)
        return emitNodeError(*this)
               << "operand " << i << " is referenced " << n
               << " times by args/kwargs; each operand stands for exactly "
                  "one argument";
  }

  for (auto [i, type] : llvm::enumerate(getOperandTypes()))
    if (!isTorchValueType(type))
      return emitNodeError(*this) << "operand " << i << " has type " << type
                                  << ", not a torch value type";
  for (auto [i, type] : llvm::enumerate(getResultTypes()))
    if (!isTorchValueType(type))
      return emitNodeError(*this) << "result " << i << " has type " << type
                                  << ", not a torch value type";

  if (ArrayAttr metas = getResultMetaAttr()) {
    if (metas.size() != getNumResults())
      return emitNodeError(*this)
             << "has " << metas.size() << " result_meta entries for "
             << getNumResults() << " results";
    for (auto [i, meta, type] : llvm::enumerate(metas, getResultTypes())) {
      if (auto tensorMeta = dyn_cast<TensorMetaAttr>(meta)) {
        if (failed(verifyMetaAgainstType(
                [&, i = i]() {
                  return emitNodeError(*this) << "result " << i << " ";
                },
                tensorMeta, type)))
          return failure();
      } else if (isa<SymExprAttr>(meta)) {
        if (!type.isInteger(64) && !type.isInteger(1) && !type.isF64())
          return emitNodeError(*this)
                 << "result " << i << " has a SymInt expression but type "
                 << type;
      } else if (!isa<UnitAttr>(meta)) {
        return emitNodeError(*this)
               << "result_meta entry " << i
               << " must be #joint.tensor, #joint.sym or unit";
      }
    }
  }
  if (ArrayAttr names = getResultNamesAttr())
    if (names.size() != getNumResults())
      return emitNodeError(*this)
             << "has " << names.size() << " result_names for "
             << getNumResults() << " results";
  if (getRecomputedFrom() && !isBackward())
    return emitNodeError(*this)
           << "is a remat duplicate (recomputed_from) but not in backward";
  return success();
}

/// Results print as their FX node names (`%addmm`), getitem names for
/// multi-output ops.
void CallFunctionOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  ArrayAttr names = getResultNamesAttr();
  for (OpResult result : getResults()) {
    StringRef name;
    if (names && result.getResultNumber() < names.size())
      name = cast<StringAttr>(names[result.getResultNumber()]).getValue();
    if (name.empty())
      name = getName();
    if (!name.empty())
      setNameFn(result, name);
  }
}

//===----------------------------------------------------------------------===//
// Hidden writes
//===----------------------------------------------------------------------===//

namespace {
/// Ops whose kernels update running statistics in place although the schema
/// marks no argument written (torch 2.x native_functions.yaml; found by
/// running every aten op with snapshot-compared arguments, see
/// docs/passes.md "Hidden writers").
/// Every entry writes batch norm's running statistics; `when` as in
/// HiddenWrite.
constexpr HiddenWrite writesRunningStats(llvm::StringLiteral target,
                                         llvm::StringLiteral when) {
  return {target, {"running_mean", "running_var"}, when};
}
const HiddenWrite kHiddenWrites[] = {
    writesRunningStats("aten::native_batch_norm", "training"),
    writesRunningStats("aten::cudnn_batch_norm", "training"),
    writesRunningStats("aten::miopen_batch_norm", "training"),
    writesRunningStats("aten::_batch_norm_impl_index", "training"),
    writesRunningStats("aten::batch_norm", "training"),
    writesRunningStats("aten::instance_norm", "use_input_stats"),
    writesRunningStats("aten::batch_norm_update_stats", ""),
    writesRunningStats("aten::batch_norm_gather_stats", ""),
    writesRunningStats("aten::batch_norm_gather_stats_with_counts", ""),
};
} // namespace

ArrayRef<HiddenWrite> mlir::joint::getHiddenWrites() { return kHiddenWrites; }

const HiddenWrite *mlir::joint::lookupHiddenWrite(StringRef target) {
  // `ns::op.overload` -> `ns::op`; the namespace never contains a dot.
  size_t ns = target.find("::");
  StringRef packet =
      target.take_front(target.find('.', ns == StringRef::npos ? 0 : ns + 2));
  for (const HiddenWrite &h : kHiddenWrites)
    if (h.target == packet)
      return &h;
  return nullptr;
}

/// Whether bool schema argument `name` of `op` is (or may be) true: its
/// literal in args/kwargs, else the schema default. Anything else (an
/// operand, no args recorded) counts as true, the conservative answer.
static bool mayBeTrue(CallFunctionOp op, SchemaOp entry, StringRef name) {
  std::optional<unsigned> index = entry.getArgIndex(name);
  if (!index)
    return true;
  Attribute value;
  if (ArrayAttr args = op.getArgsAttr(); args && *index < args.size())
    value = args[*index];
  else if (DictionaryAttr kwargs = op.getKwargsAttr())
    value = kwargs.get(name);
  if (!value && (op.getArgsAttr() || op.getKwargsAttr()))
    if (StringAttr d =
            cast<SchemaArgAttr>(entry.getArguments()[*index]).getDefaultValue())
      return d.getValue() != "False";
  if (auto b = dyn_cast_or_null<BoolAttr>(value))
    return b.getValue();
  return true;
}

SchemaOp CallFunctionOp::lookupSchema(SymbolTableCollection *tables) {
  StringAttr name = getTargetAttr();
  if (tables) {
    // In a joint.graph (no symbol table) the nearest symbol table is the
    // graph's parent: no upward search per call.
    Operation *graph = (*this)->getParentOp();
    Operation *table = graph ? graph->getParentOp() : nullptr;
    // isa<ModuleOp> first: a class test, where hasTrait is a trait-list
    // search (the verifier asks this for every op of every graph).
    if (isa_and_nonnull<GraphOp>(graph) && table &&
        (isa<ModuleOp>(table) || table->hasTrait<OpTrait::SymbolTable>()))
      return dyn_cast_or_null<SchemaOp>(tables->lookupSymbolIn(table, name));
    return tables->lookupNearestSymbolFrom<SchemaOp>(*this, name);
  }
  return SymbolTable::lookupNearestSymbolFrom<SchemaOp>(*this, name);
}

/// `op` against its operator-table entry (torch's FunctionSchema): no more
/// positional arguments than the schema has, kwargs it names, not passed
/// twice, every argument without a default (and not optional, `T?`) passed
/// when the op records its args (as the JSON importer requires), and its
/// return count. Called by
/// GraphOp::verifyRegions.
static LogicalResult verifyAgainstSchema(CallFunctionOp op, SchemaOp entry) {
  unsigned numPositional =
      op.getArgs()
          ? op.getArgsAttr().size()
          : (op.getKwargs() ? 0u : static_cast<unsigned>(op.getNumOperands()));
  if (numPositional > entry.getNumPositional())
    return emitNodeError(op)
           << "passes " << numPositional
           << " positional arguments but the schema takes at most "
           << entry.getNumPositional();
  ArrayAttr arguments = entry.getArguments();
  llvm::BitVector given(arguments.size());
  given.set(0, std::min<unsigned>(numPositional, arguments.size()));
  if (DictionaryAttr kwargs = op.getKwargsAttr())
    for (NamedAttribute kw : kwargs) {
      std::optional<unsigned> index = entry.getArgIndex(kw.getName());
      if (!index)
        return emitNodeError(op) << "kwarg '" << kw.getName().getValue()
                                 << "' is not in the schema";
      if (*index < numPositional)
        return emitNodeError(op)
               << "argument '" << kw.getName().getValue()
               << "' is passed both positionally and as a kwarg";
      given.set(*index);
    }
  // Without recorded args or kwargs (hand-written IR) the operands are the
  // positional arguments and the rest is unknown, not missing.
  bool recorded = op.getArgs() || op.getKwargs();
  for (auto [i, attr] : llvm::enumerate(arguments)) {
    auto arg = cast<SchemaArgAttr>(attr);
    if (recorded && !given.test(i) && arg.isRequired())
      return emitNodeError(op) << "is missing required argument '"
                               << arg.getName() << "' of the schema";
  }
  if (!entry.returnsTensorList() &&
      op.getNumResults() != entry.getReturns().size())
    return emitNodeError(op)
           << "has " << op.getNumResults() << " results but the schema returns "
           << entry.getReturns().size();
  return success();
}

Attribute CallFunctionOp::getResultMetaAt(unsigned i) {
  ArrayAttr metas = getResultMetaAttr();
  if (!metas || i >= metas.size())
    return {};
  return metas[i];
}

LogicalResult
CallFunctionOp::getOperandsOfSchemaArg(SchemaOp entry, unsigned argIndex,
                                       SmallVectorImpl<unsigned> &out) {
  if (!entry || argIndex >= entry.getArguments().size())
    return failure();
  if (!getArgs() && !getKwargs()) {
    if (argIndex < getNumOperands())
      out.push_back(argIndex);
    return success();
  }
  Attribute value;
  if (ArrayAttr args = getArgsAttr(); args && argIndex < args.size())
    value = args[argIndex];
  else if (DictionaryAttr kwargs = getKwargsAttr())
    value = kwargs.get(
        cast<SchemaArgAttr>(entry.getArguments()[argIndex]).getName());
  if (value)
    forEachOperandRef(
        value, [&](OperandRefAttr ref) { out.push_back(ref.getIndex()); });
  return success();
}

std::optional<SmallVector<unsigned>>
CallFunctionOp::getWrittenOperands(SchemaOp entry) {
  const HiddenWrite *hidden = lookupHiddenWrite(getTarget());
  if (!entry) {
    // No schema: a hidden writer, or an aten-style in-place name (`add_`),
    // may write any tensor operand. Python SymInt arithmetic writes nothing.
    StringRef name = getTarget().split("::").second.split('.').first;
    if (hidden || (name.ends_with("_") && !name.ends_with("__")))
      return std::nullopt;
    return SmallVector<unsigned>();
  }
  SmallVector<unsigned> written = entry.getWrittenArgs();
  if (hidden && (hidden->when.empty() || mayBeTrue(*this, entry, hidden->when)))
    for (StringRef name : hidden->args) {
      std::optional<unsigned> index =
          name.empty() ? std::nullopt : entry.getArgIndex(name);
      if (index && !llvm::is_contained(written, *index))
        written.push_back(*index);
    }
  if (written.empty()) {
    if (entry.getIsMutable())
      return std::nullopt; // mutable without a resolvable write mark
    return written;
  }
  SmallVector<unsigned> operands;
  for (unsigned argIndex : written)
    if (failed(getOperandsOfSchemaArg(entry, argIndex, operands)))
      return std::nullopt;
  return operands;
}

void CallFunctionOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  SchemaOp entry = lookupSchema();
  for (OpOperand &operand : getOperation()->getOpOperands())
    if (isa<TensorType>(operand.get().getType()))
      effects.emplace_back(MemoryEffects::Read::get(), &operand);
  std::optional<SmallVector<unsigned>> written = getWrittenOperands(entry);
  for (OpOperand &operand : getOperation()->getOpOperands()) {
    if (!isa<TensorType>(operand.get().getType()))
      continue;
    if (!written || llvm::is_contained(*written, operand.getOperandNumber()))
      effects.emplace_back(MemoryEffects::Write::get(), &operand);
  }
  if (entry && entry.isRandom()) {
    effects.emplace_back(MemoryEffects::Read::get(),
                         RandomStateResource::get());
    effects.emplace_back(MemoryEffects::Write::get(),
                         RandomStateResource::get());
  }
  if (isCollective(getTarget()))
    effects.emplace_back(MemoryEffects::Write::get(),
                         CommunicationResource::get());
}

//===----------------------------------------------------------------------===//
// SchemaOp
//===----------------------------------------------------------------------===//

LogicalResult SchemaOp::verify() {
  StringRef name = getSymName();
  if (name.find("::") == StringRef::npos)
    return emitOpError() << "'" << name
                         << "' is not of the form 'namespace::name.overload'";
  bool sawKwargOnly = false;
  llvm::DenseSet<StringRef> names;
  for (auto [i, attr] : llvm::enumerate(getArguments())) {
    auto arg = cast<SchemaArgAttr>(attr);
    if (arg.getName().empty())
      return emitOpError() << "'" << name << "': argument " << i
                           << " has no name";
    if (!names.insert(arg.getName()).second)
      return emitOpError() << "'" << name << "': argument '" << arg.getName()
                           << "' appears twice";
    if (sawKwargOnly && !arg.getKwargOnly())
      return emitOpError() << "'" << name << "': positional argument '"
                           << arg.getName() << "' after a kwarg-only one";
    sawKwargOnly |= arg.getKwargOnly();
    if (arg.getWrite() && arg.getAlias().empty())
      return emitOpError() << "'" << name << "': argument '" << arg.getName()
                           << "' is written but has no alias set";
  }
  for (auto [i, attr] : llvm::enumerate(getReturns()))
    if (cast<SchemaArgAttr>(attr).getKwargOnly())
      return emitOpError() << "'" << name << "': return " << i
                           << " cannot be kwarg-only";
  return success();
}

bool SchemaOp::hasTag(StringRef tag) {
  return llvm::any_of(getTags(), [&](Attribute t) {
    return cast<StringAttr>(t).getValue() == tag;
  });
}

SmallVector<unsigned> SchemaOp::getWrittenArgs() {
  SmallVector<unsigned> written;
  for (auto [i, attr] : llvm::enumerate(getArguments()))
    if (cast<SchemaArgAttr>(attr).getWrite())
      written.push_back(i);
  return written;
}

bool SchemaOp::returnsTensorList() {
  ArrayAttr returns = getReturns();
  return returns.size() == 1 &&
         cast<SchemaArgAttr>(returns[0]).getType().starts_with("Tensor[]");
}

unsigned SchemaOp::getNumPositional() {
  unsigned n = 0;
  for (Attribute attr : getArguments())
    if (!cast<SchemaArgAttr>(attr).getKwargOnly())
      ++n;
  return n;
}

std::optional<unsigned> SchemaOp::getArgIndex(StringRef name) {
  for (auto [i, attr] : llvm::enumerate(getArguments()))
    if (cast<SchemaArgAttr>(attr).getName() == name)
      return i;
  return std::nullopt;
}

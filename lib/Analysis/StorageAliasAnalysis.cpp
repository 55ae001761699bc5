//===- StorageAliasAnalysis.cpp - Storage groups of a joint graph -*- C++ -*-//
//
// Groups values by storage, finds each group's owner and in-place writers.
// Write detection follows seeds/cpu_offload.py: schema `Tensor(a!)`
// arguments, resolved positionally or by name through the op's args/kwargs,
// with a conservative fallback (every tensor operand) when the written
// argument cannot be resolved or the op has no schema and looks in-place.
// Kernels that write arguments their schema leaves unmarked (batch norm's
// running statistics in training) come from one table here, so every pass
// that asks "does this op write" sees them.
//
//===----------------------------------------------------------------------===//

#include "joint/Analysis/StorageAliasAnalysis.h"
#include "joint/Dialect/AO/IR/AOOps.h"
#include "joint/Dialect/Joint/IR/TensorFacts.h"

using namespace mlir;
using namespace mlir::joint;

//===----------------------------------------------------------------------===//
// OperatorTable
//===----------------------------------------------------------------------===//

OperatorTable::OperatorTable(Operation *op) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    module = op->getParentOfType<ModuleOp>();
  if (!module)
    return;
  for (OperatorOp entry : module.getOps<OperatorOp>())
    entries[entry.getSymName()] = entry;
}

bool OperatorTable::isRandom(AtenOp op) const {
  OperatorOp entry = lookup(op);
  return entry && entry.isRandom();
}

//===----------------------------------------------------------------------===//
// StorageAliasAnalysis
//===----------------------------------------------------------------------===//

static GraphOp findGraph(Operation *op) {
  if (auto graph = dyn_cast<GraphOp>(op))
    return graph;
  GraphOp found;
  if (auto module = dyn_cast<ModuleOp>(op))
    for (GraphOp g : module.getOps<GraphOp>())
      if (!found)
        found = g;
  return found;
}

Storage &StorageAliasAnalysis::storageFor(int64_t id, Value owner) {
  Storage *&slot = byId[id];
  if (!slot) {
    storages.emplace_back();
    slot = &storages.back();
    slot->id = id;
    slot->owner = owner;
    slot->isGraphInput = isa<BlockArgument>(owner);
    ordered.push_back(slot);
  }
  return *slot;
}

void StorageAliasAnalysis::addMember(Storage &s, Value v) {
  s.members.push_back(v);
  storageOf[v] = &s;
}

/// Schema index -> does return `r` alias argument `a`? (alias sets meet, a
/// wildcard, or the argument is written: in-place results alias it).
static bool returnAliasesArg(SchemaArgAttr ret, SchemaArgAttr arg) {
  if (arg.getWrite())
    return true;
  auto members = [](SchemaArgAttr s) {
    SmallVector<StringRef> out;
    for (StringRef set : {s.getAlias(), s.getAliasAfter()})
      if (!set.empty())
        set.split(out, '|');
    return out;
  };
  SmallVector<StringRef> argSets = members(arg);
  if (argSets.empty())
    return false;
  SmallVector<StringRef> retSets = members(ret);
  // Multi-output views (split, unbind) mark only the argument's after-set.
  if (retSets.empty())
    return !arg.getAliasAfter().empty();
  for (StringRef r : retSets)
    for (StringRef a : argSets)
      if (r == a || r == "*" || a == "*")
        return true;
  return false;
}

//===----------------------------------------------------------------------===//
// Hidden writes
//===----------------------------------------------------------------------===//

namespace {
/// Ops whose kernels update running statistics in place although the schema
/// marks no argument written (torch 2.x native_functions.yaml; found by
/// running every aten op with snapshot-compared arguments, see
/// docs/passes.md "Hidden writers").
const HiddenWrite kHiddenWrites[] = {
    {"aten::native_batch_norm", {"running_mean", "running_var"}, "training"},
    {"aten::cudnn_batch_norm", {"running_mean", "running_var"}, "training"},
    {"aten::miopen_batch_norm", {"running_mean", "running_var"}, "training"},
    {"aten::_batch_norm_impl_index",
     {"running_mean", "running_var"},
     "training"},
    {"aten::batch_norm", {"running_mean", "running_var"}, "training"},
    {"aten::instance_norm", {"running_mean", "running_var"}, "use_input_stats"},
    {"aten::batch_norm_update_stats", {"running_mean", "running_var"}, ""},
    {"aten::batch_norm_gather_stats", {"running_mean", "running_var"}, ""},
    {"aten::batch_norm_gather_stats_with_counts",
     {"running_mean", "running_var"},
     ""},
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
static bool mayBeTrue(AtenOp op, OperatorOp entry, StringRef name) {
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

void StorageAliasAnalysis::noteWrite(AtenOp op, Storage &s) {
  if (s.writers.empty() || s.writers.back() != op)
    s.writers.push_back(op);
}

void StorageAliasAnalysis::noteWrites(AtenOp op) {
  OperatorOp entry = table.lookup(op);
  auto markAllTensorOperands = [&]() {
    for (Value v : op.getInputs())
      if (Storage *s = storageOf.lookup(v))
        noteWrite(op, *s);
  };
  const HiddenWrite *hidden = lookupHiddenWrite(op.getTarget());
  if (!entry) {
    // No schema: a hidden writer, or an aten-style in-place name (`add_`),
    // may write any tensor operand. Python SymInt arithmetic writes nothing.
    StringRef name = op.getTarget().split("::").second.split('.').first;
    if (hidden || (name.ends_with("_") && !name.ends_with("__")))
      markAllTensorOperands();
    return;
  }
  SmallVector<unsigned> written = entry.getWrittenArgs();
  if (hidden && (hidden->when.empty() || mayBeTrue(op, entry, hidden->when)))
    for (StringRef name : hidden->args) {
      std::optional<unsigned> index =
          name.empty() ? std::nullopt : entry.getArgIndex(name);
      if (index && !llvm::is_contained(written, *index))
        written.push_back(*index);
    }
  if (written.empty()) {
    if (entry.getIsMutable())
      markAllTensorOperands(); // mutable without a resolvable write mark
    return;
  }
  for (unsigned argIndex : written) {
    SmallVector<unsigned> operands;
    if (failed(op.getOperandsOfSchemaArg(entry, argIndex, operands))) {
      markAllTensorOperands();
      return;
    }
    for (unsigned i : operands) {
      Storage *s = storageOf.lookup(op.getOperand(i));
      if (!s) {
        markAllTensorOperands();
        return;
      }
      noteWrite(op, *s);
    }
  }
}

StorageAliasAnalysis::StorageAliasAnalysis(Operation *op)
    : graph(findGraph(op)), table(op) {
  if (!graph)
    return;
  Block &body = graph.getBody().front();
  auto place = [&](Value v, TensorMetaAttr meta, Value aliasOf) {
    if (!isa<RankedTensorType>(v.getType()))
      return;
    if (meta) {
      addMember(storageFor(meta.getStorage(), v), v);
      return;
    }
    if (aliasOf)
      if (Storage *s = storageOf.lookup(aliasOf)) {
        addMember(*s, v);
        return;
      }
    addMember(storageFor(nextSynthesizedId--, v), v);
  };
  for (BlockArgument arg : body.getArguments())
    place(arg, getTensorMeta(arg), Value());

  for (Operation &o : body) {
    if (auto aten = dyn_cast<AtenOp>(o)) {
      OperatorOp entry = table.lookup(aten);
      for (OpResult r : aten->getResults()) {
        auto meta = dyn_cast_or_null<TensorMetaAttr>(
            aten.getResultMetaAt(r.getResultNumber()));
        Value aliasOf;
        if (!meta && entry) {
          // Schema aliasing for hand-written IR without facts.
          ArrayAttr rets = entry.getReturns();
          auto ret = cast<SchemaArgAttr>(
              rets[std::min<size_t>(r.getResultNumber(), rets.size() - 1)]);
          for (auto [i, a] : llvm::enumerate(entry.getArguments())) {
            if (!returnAliasesArg(ret, cast<SchemaArgAttr>(a)))
              continue;
            SmallVector<unsigned> operands;
            if (succeeded(aten.getOperandsOfSchemaArg(entry, i, operands)) &&
                !operands.empty()) {
              aliasOf = aten.getOperand(operands.front());
              break;
            }
          }
        }
        // Structural identity: a result recorded in the storage of a value
        // it reads views (or writes) that value, so it lives wherever that
        // value lives now, also after a rewrite moved the value to another
        // allocation (a reload, a recompute clone).
        if (meta && !aliasOf)
          for (Value v : aten.getInputs())
            if (std::optional<int64_t> id = getStorageId(v);
                id && *id == meta.getStorage() && storageOf.count(v)) {
              aliasOf = v;
              meta = TensorMetaAttr();
              break;
            }
        place(r, meta, aliasOf);
      }
      noteWrites(aten);
      continue;
    }
    if (auto wait = dyn_cast<ao::WaitTensorOp>(o)) {
      place(wait.getResult(), TensorMetaAttr(), wait.getInput());
      continue;
    }
    if (isa<ao::OffloadOp, ao::ReloadOp>(o)) {
      // A new allocation (host copy / device copy).
      addMember(storageFor(nextSynthesizedId--, o.getResult(0)),
                o.getResult(0));
      continue;
    }
    if (auto output = dyn_cast<OutputOp>(o))
      for (Value v : output.getOperands())
        if (Storage *s = storageOf.lookup(v))
          s->isGraphOutput = true;
  }
}

//===- StorageAliasAnalysis.cpp - Storage groups of a joint graph ---------===//
//
// Groups values by storage, finds each group's owner and in-place writers.
// Write detection follows torch's FunctionSchema alias annotations (as
// torchtitan graph_trainer's cpu_offload pass reads them): `Tensor(a!)`
// arguments, resolved positionally or by name through the op's args/kwargs,
// with a conservative fallback (every tensor operand) when the written
// argument cannot be resolved or the op has no schema and looks in-place.
// Which operands an op writes comes from CallFunctionOp::getWrittenOperands
// (schema marks plus the dialect's hidden-write table for kernels such as
// training batch norm), the same answer the op's memory effects give upstream
// passes.
//
//===----------------------------------------------------------------------===//

#include "joint/Analysis/StorageAliasAnalysis.h"
#include "joint/Dialect/AO/IR/AOOps.h"
#include "joint/Dialect/Joint/IR/TensorMeta.h"

using namespace mlir;
using namespace mlir::joint;

//===----------------------------------------------------------------------===//
// SchemaTable
//===----------------------------------------------------------------------===//

SchemaTable::SchemaTable(Operation *op) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    module = op->getParentOfType<ModuleOp>();
  if (!module)
    return;
  for (SchemaOp entry : module.getOps<SchemaOp>()) {
    entries[entry.getSymName()] = entry;
    byTarget[entry.getSymNameAttr()] = entry;
  }
}

bool SchemaTable::isRandom(CallFunctionOp op) const {
  SchemaOp entry = lookup(op);
  return entry && entry.isRandom();
}

//===----------------------------------------------------------------------===//
// StorageAliasAnalysis
//===----------------------------------------------------------------------===//

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

/// The storage id recorded for `v`: its tensor facts, or for a reloaded
/// copy (an ao.reload, or the wait on it) the id the offload applier gave
/// it (`joint.storage`); ao results otherwise keep their source's facts.
static std::optional<int64_t> getRecordedStorageId(Value v) {
  Operation *def = v.getDefiningOp();
  if (auto wait = dyn_cast_or_null<ao::WaitTensorOp>(def))
    def = wait.getInput().getDefiningOp();
  if (auto reload = dyn_cast_or_null<ao::ReloadOp>(def))
    if (auto id = reload->getAttrOfType<IntegerAttr>(kReloadStorageAttr))
      return id.getInt();
  return getStorageId(v);
}

/// The operand that result `result` of `op` aliases by the schema (its
/// alias set or a written argument), or null.
static Value getSchemaAliasedOperand(CallFunctionOp op, SchemaOp entry,
                                     unsigned result) {
  ArrayAttr rets = entry.getReturns();
  if (rets.empty())
    return Value();
  auto ret =
      cast<SchemaArgAttr>(rets[std::min<size_t>(result, rets.size() - 1)]);
  for (auto [i, a] : llvm::enumerate(entry.getArguments())) {
    if (!returnAliasesArg(ret, cast<SchemaArgAttr>(a)))
      continue;
    SmallVector<unsigned> operands;
    if (succeeded(op.getOperandsOfSchemaArg(entry, i, operands)) &&
        !operands.empty())
      return op.getOperand(operands.front());
  }
  return Value();
}

void StorageAliasAnalysis::noteWrite(CallFunctionOp op, Storage &s) {
  if (s.writers.empty() || s.writers.back() != op)
    s.writers.push_back(op);
  writerOps.insert(op);
}

bool StorageAliasAnalysis::isView(Operation *op) const {
  if (isWriter(op))
    return false;
  bool anyTensor = false;
  for (Value r : op->getResults()) {
    const Storage *s = lookup(r);
    if (!s)
      continue;
    anyTensor = true;
    if (!llvm::any_of(op->getOperands(),
                      [&](Value v) { return lookup(v) == s; }))
      return false;
  }
  return anyTensor;
}

void StorageAliasAnalysis::noteWrites(CallFunctionOp op) {
  auto markAllTensorOperands = [&]() {
    for (Value v : op.getInputs())
      if (Storage *s = storageOf.lookup(v))
        noteWrite(op, *s);
  };
  auto [known, inserted] = writesNothing.try_emplace(op.getTargetAttr());
  if (!inserted && known->second)
    return;
  SchemaOp entry = table.lookup(op);
  std::optional<SmallVector<unsigned>> written = op.getWrittenOperands(entry);
  if (inserted)
    known->second = entry && written && written->empty() &&
                    !lookupHiddenWrite(op.getTarget());
  if (!written)
    return markAllTensorOperands();
  for (unsigned i : *written) {
    Storage *s = storageOf.lookup(op.getOperand(i));
    if (!s)
      return markAllTensorOperands();
    noteWrite(op, *s);
  }
}

StorageAliasAnalysis::StorageAliasAnalysis(GraphOp graph)
    : graph(graph), table(graph) {
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
  // Whether some value so far lives outside the storage its recorded id
  // names (an ao copy or wait, or a result moved by the identity rule).
  // Until one does, the identity rule below places every result exactly
  // where its recorded id does, so it is skipped (graphs without transfers).
  bool displaced = false;

  for (Operation &o : body) {
    if (auto aten = dyn_cast<CallFunctionOp>(o)) {
      SchemaOp entry = table.lookup(aten);
      for (OpResult r : aten->getResults()) {
        auto meta = dyn_cast_or_null<TensorMetaAttr>(
            aten.getResultMetaAt(r.getResultNumber()));
        Value aliasOf;
        if (!meta && entry) // schema aliasing for hand-written IR
          aliasOf = getSchemaAliasedOperand(aten, entry, r.getResultNumber());
        // Structural identity: a result recorded in the storage of a value
        // it reads views (or writes) that value, so it lives wherever that
        // value lives now, also after a rewrite moved the value to another
        // allocation (a reload, a recompute clone).
        if (meta && !aliasOf && displaced)
          for (Value v : aten.getInputs())
            if (std::optional<int64_t> id = getRecordedStorageId(v);
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
      displaced = true;
      continue;
    }
    if (isa<ao::OffloadOp, ao::ReloadOp>(o)) {
      displaced = true;
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

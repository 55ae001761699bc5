//===- StorageAliasAnalysis.h - Storage groups of a joint graph -*- C++ -*-===//
//
// Which values share an allocation, who owns it, and who writes it in place.
// The remat, offload and memory-model passes all query this one analysis so
// they agree on storage, alias and mutation.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_ANALYSIS_STORAGEALIASANALYSIS_H
#define JOINT_ANALYSIS_STORAGEALIASANALYSIS_H

#include "joint/Dialect/Joint/IR/JointOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include <deque>

namespace mlir {
namespace joint {

/// Target -> joint.schema entry of a module, built once (O(#entries)).
class SchemaTable {
public:
  /// The entries of `op` when it is a module, else of its parent module.
  explicit SchemaTable(Operation *moduleOrGraph);
  /// The entry for `target`, or null when the table has none.
  SchemaOp lookup(StringRef target) const { return entries.lookup(target); }
  /// The entry of `op`'s target (a pointer lookup: attributes are uniqued).
  SchemaOp lookup(CallFunctionOp op) const {
    return byTarget.lookup(op.getTargetAttr());
  }
  /// torch.Tag nondeterministic_seeded (an RNG op).
  bool isRandom(CallFunctionOp op) const;

private:
  llvm::StringMap<SchemaOp> entries;
  llvm::DenseMap<Attribute, SchemaOp> byTarget;
};

/// One allocation and every value that lives in it.
struct Storage {
  /// The recorded storage id (#joint.tensor), or a negative id synthesized
  /// for values without facts.
  int64_t id = 0;
  /// The value that allocated it: a graph argument or the first op result
  /// holding it, in program order.
  Value owner;
  /// Every value in this storage, owner first, in program order.
  SmallVector<Value, 2> members;
  /// Ops that write this storage in place (CallFunctionOp::getWrittenOperands:
  /// schema `Tensor(a!)` or the hidden-write table), including ops that return
  /// nothing and ops whose written argument could not be resolved (then every
  /// tensor operand counts as written).
  SmallVector<Operation *, 1> writers;
  bool isGraphInput = false; // owner is a graph argument (param, buffer, input)
  bool isGraphOutput = false; // some member is returned by joint.output
  bool isWritten() const { return !writers.empty(); }
};

/// Storage groups of one joint.graph. Built in one walk over the ops
/// (O(#ops + #operands)). Storage identity comes from the tracer's facts
/// (so schema-less views such as `_unsafe_view` group correctly), derived
/// structurally: a result recorded in the storage id of an operand joins
/// that operand's storage, wherever a rewrite placed it; values
/// without facts alias an operand when the schema says so (return alias set
/// meets an argument's, `*`, or a written argument), else own new storage.
/// ao.offload and ao.reload results are new storage; ao.wait_tensor results
/// alias their input.
class StorageAliasAnalysis {
public:
  /// Groups the values of `graph`; the operator table is the joint.schema
  /// entries of its parent module. Analyses of other graphs are separate.
  explicit StorageAliasAnalysis(GraphOp graph);

  /// The storage of a tensor value; null for SymInts, None and values
  /// outside the graph.
  const Storage *lookup(Value value) const { return storageOf.lookup(value); }
  /// True when `a` and `b` are in one storage.
  bool mayAlias(Value a, Value b) const {
    const Storage *s = lookup(a);
    return s && s == lookup(b);
  }
  /// True when `value` is in a storage some other value allocated (a view,
  /// an in-place result or a getitem-like projection).
  bool isAlias(Value value) const {
    const Storage *s = lookup(value);
    return s && s->owner != value;
  }
  /// True when `op` writes some storage in place (it is in a `writers`
  /// list: schema `Tensor(a!)`, hidden writes, unresolved mutable ops).
  bool isWriter(Operation *op) const { return writerOps.contains(op); }
  /// True when `op` writes nothing and every tensor result lives in an
  /// operand's storage: a view (t, view, expand, alias, split, ...).
  bool isView(Operation *op) const;
  /// The first operand of `op` in storage `s` (a view's source when `s` is
  /// the view's storage); null when no operand is.
  Value getOperandIn(Operation *op, const Storage *s) const {
    for (Value operand : op->getOperands())
      if (lookup(operand) == s)
        return operand;
    return {};
  }
  /// Storages in order of their owners.
  ArrayRef<Storage *> getStorages() const { return ordered; }
  const SchemaTable &getSchemaTable() const { return table; }
  GraphOp getGraph() const { return graph; }

private:
  Storage &storageFor(int64_t id, Value owner);
  void addMember(Storage &s, Value v);
  void noteWrites(CallFunctionOp op);
  void noteWrite(CallFunctionOp op, Storage &s);

  GraphOp graph;
  SchemaTable table;
  std::deque<Storage> storages;
  SmallVector<Storage *> ordered;
  llvm::DenseMap<int64_t, Storage *> byId;
  llvm::DenseMap<Value, Storage *> storageOf;
  llvm::DenseSet<Operation *> writerOps;
  /// Per target: true when no op of it writes (no write mark, no hidden
  /// write, not mutable), so noteWrites asks the schema once per target.
  llvm::DenseMap<Attribute, bool> writesNothing;
  int64_t nextSynthesizedId = -1;
};

} // namespace joint
} // namespace mlir

#endif // JOINT_ANALYSIS_STORAGEALIASANALYSIS_H

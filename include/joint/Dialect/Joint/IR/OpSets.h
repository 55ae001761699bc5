//===- OpSets.h - Operator sets of activation checkpointing -----*- C++ -*-===//
//
// The operator sets that decide checkpoint policies, kept as data in one
// place (OpSets.cpp) and listed with their sources in docs/passes.md:
// compute-intensive ops saved under `selective`, ops forced to recompute,
// collectives saved in every mode (one definition: isCollective), forward
// all-gathers (saved with
// `save-forward-all-gather`), transparent ops that inherit their
// producer's policy, and size queries that read only metadata.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_DIALECT_JOINT_IR_OPSETS_H
#define JOINT_DIALECT_JOINT_IR_OPSETS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
namespace joint {

enum class OpSet {
  /// Saved under mode=selective (matmuls, convolutions, attention, max).
  ComputeIntensive,
  /// Always recomputed under mode=selective (aten::topk).
  ForceRecompute,
  /// Saved in every mode: every collective (isCollective) that is neither a
  /// forward all-gather nor a wait, and MoE dispatch/combine.
  Communication,
  /// Forward all-gathers: saved only with `save-forward-all-gather`.
  ForwardAllGather,
  /// Await or extract their producer's value and inherit its policy
  /// (_c10d_functional::wait_tensor).
  Transparent,
  /// Read only a tensor's metadata (sym_size, sym_stride, sym_numel): a
  /// backward query of a forward tensor reads the forward SymInt instead.
  SizeQuery,
};

/// One entry of a set: either an operator packet (`aten::mm`, matching every
/// overload) or one overload (`aten::max.default`).
struct OpSetEntry {
  llvm::StringLiteral name;
  /// Where the entry comes from (torch / torchtitan / hyper_parallel).
  llvm::StringLiteral source;
};

/// The entries of `set`, in documentation order.
llvm::ArrayRef<OpSetEntry> getOpSetEntries(OpSet set);

/// True when `target` (`namespace::op.overload`) is in `set`: equal to an
/// overload entry, or its packet (`namespace::op`) is a packet entry; for
/// Communication also any other collective that is neither a forward
/// all-gather nor a wait.
bool isInOpSet(OpSet set, llvm::StringRef target);

/// The one definition of a collective, used by the checkpoint tagger, the
/// planner, offload, the cost model and the op's memory effects: every op
/// of a process-group namespace (`_c10d_functional`,
/// `_c10d_functional_autograd`, `c10d_functional`, `c10d`), its wait
/// included, and every entry of the Communication, ForwardAllGather and
/// Transparent tables (aten spellings, expert-parallel dispatch/combine).
bool isCollective(llvm::StringRef target);

/// isInOpSet for a pass that asks about every op of a graph: each distinct
/// target is classified once (two string hashes per set), later queries are
/// a pointer lookup on the uniqued target attribute. One per pass run; not
/// shared between threads.
class OpSetCache {
public:
  bool contains(OpSet set, mlir::StringAttr target);

private:
  /// Per target: bit 2*i set when known, bit 2*i+1 when in OpSet i.
  llvm::DenseMap<mlir::Attribute, unsigned> bits;
};

} // namespace joint
} // namespace mlir

#endif // JOINT_DIALECT_JOINT_IR_OPSETS_H

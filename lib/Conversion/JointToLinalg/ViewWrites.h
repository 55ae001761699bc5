//===- ViewWrites.h - In-place writes through views as values ---*- C++ -*-===//
//
// Value semantics for torch's in-place writes into a storage that views
// share (`x[:, 1:] = y`, `x[:, 0].fill_(v)`, `copy_` into a slice): the
// written view's new value is scattered back through the view chain into a
// new value of the storage's base (slice_scatter, select_scatter, the
// inverse reshape or permutation), and every later read of any value of that
// storage reads a view regenerated from the new base. This is what torch's
// functionalization does (torch-mlir's MaximizeValueSemantics on tensors).
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_LIB_CONVERSION_JOINTTOLINALG_VIEWWRITES_H
#define JOINT_LIB_CONVERSION_JOINTTOLINALG_VIEWWRITES_H

#include "joint/Dialect/Joint/IR/JointOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::joint::lowering {

/// The values of one graph body grouped by storage (tracer storage ids),
/// updated as writes are carried.
class ViewWrites {
public:
  /// `tables` (the caller's, kept) resolves operator-table entries.
  ViewWrites(Block &body, SymbolTableCollection &tables);

  /// Carries the write of `writer` into `target`, whose new value is
  /// `result` (same type): every read after `writer` of a value sharing
  /// `target`'s storage reads the new contents (new ops are inserted right
  /// after `writer`). Returns {old base, new base} of the storage (a graph
  /// argument's final value is its new base). Fails with one error on
  /// `writer` naming the view op when a view on the way cannot be written
  /// back (expand, as_strided, a reshape of dynamic shape, ...).
  FailureOr<std::pair<Value, Value>> carry(CallFunctionOp writer, Value target,
                                           Value result, RewriterBase &rw);

private:
  std::optional<int64_t> storageOf(Value v) const;
  SymbolTableCollection &tables;
  llvm::DenseMap<int64_t, SmallVector<Value, 4>> members;
  llvm::DenseMap<Value, int64_t> created; ///< storage of values made here
};

} // namespace mlir::joint::lowering

#endif // JOINT_LIB_CONVERSION_JOINTTOLINALG_VIEWWRITES_H

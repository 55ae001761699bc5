//===- LossHeadRegion.h - The token rows of a loss head ---------*- C++ -*-===//
//
// The facts joint-chunk-loss rewrites: from a linear head's [T, V] logits,
// the ops whose results keep the T tokens as their leading dims ("row
// values") up to the reductions over the tokens, each with the rule by which
// it can run on a chunk of rows.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_ANALYSIS_LOSSHEADREGION_H
#define JOINT_ANALYSIS_LOSSHEADREGION_H

#include "joint/Dialect/Joint/IR/JointOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include <string>

namespace mlir {
namespace joint {

/// How an op of the region treats its token rows.
enum class RowRule {
  RowWise,    // output rows from input rows; runs per chunk
  View,       // regroups the token dims only (dropped when chunked)
  Transpose,  // t() of a [T, F] row value, read by a MatmulRows op
  SumAll,     // sum over everything: partial sums add up
  SumRows,    // sum over dim 0: partial sums add up
  MatmulRows, // mm contracting the tokens: partial products add up
  NllLoss,    // nll_loss_forward (mean or sum): sums of loss and weight
};

/// The region of one loss head (an `mm`/`addmm` of [T, D] tokens by a
/// [D, V] weight, as F.cross_entropy over nn.Linear traces). Row values are
/// handled as [rows, features...]: a value's leading `k` dims hold the
/// tokens. The region ends at reductions over the tokens and at the backward
/// matmul that gives the head's input gradient. Rules: docs/passes.md,
/// "Chunked loss". O(ops after the head).
class LossHeadRegion {
public:
  /// The heads of `graph`: each `mm`/`addmm` under an `nll_loss_forward`'s
  /// log-softmax (through views and casts), in block order.
  static SmallVector<CallFunctionOp> findHeads(GraphOp graph);
  /// The region of `head`, or failure with `getReason()` and `getCulprit()`
  /// saying which op has no chunking rule and why.
  LogicalResult analyze(CallFunctionOp head);

  StringRef getReason() const { return reason; }
  Operation *getCulprit() const { return culprit; }
  CallFunctionOp getHead() const { return head; }
  /// Token count T of the head's [T, V] logits.
  int64_t getTokens() const { return tokens; }
  /// Region ops in block order with their rules.
  ArrayRef<std::pair<Operation *, RowRule>> getOps() const {
    return rules.getArrayRef();
  }
  RowRule getRule(Operation *op) const { return rules.lookup(op); }
  bool isRow(Value v) const { return rows.count(v); }
  /// Leading token dims of a row value.
  unsigned getLeading(Value v) const { return rows.lookup(v); }
  /// The row value a Transpose result transposes, or null.
  Value getTransposedSource(Value v) const { return transposed.lookup(v); }
  /// Non-row operands (by index) of `op` aligned with the tokens: sliced
  /// per chunk.
  ArrayRef<unsigned> getSlicedOperands(Operation *op) const {
    auto it = sliced.find(op);
    return it == sliced.end() ? ArrayRef<unsigned>() : it->second;
  }
  /// Backward matmul results (the head's input gradient), concatenated.
  bool isConcatenated(Value v) const { return concatenated.contains(v); }
  /// Canonical dim of actual dim `d` (normalised) of a row value with `k`
  /// leading token dims; std::nullopt for a token dim.
  static std::optional<int64_t> canonicalDim(int64_t d, unsigned k) {
    if (d < int64_t(k))
      return std::nullopt;
    return d - k + 1;
  }

private:
  LogicalResult fail(Operation *op, const Twine &why) {
    culprit = op;
    reason = why.str();
    return failure();
  }
  LogicalResult classify(CallFunctionOp op);
  LogicalResult classifyElementwise(CallFunctionOp op);
  /// A non-row operand aligned with the tokens (static, dim 0 of size T).
  bool isTokenAligned(Value v) const;
  unsigned leading(Value v) const { return rows.lookup(v); }

  CallFunctionOp head;
  int64_t tokens = 0;
  std::string reason;
  Operation *culprit = nullptr;
  DenseMap<Value, unsigned> rows;
  DenseMap<Value, Value> transposed;
  llvm::MapVector<Operation *, RowRule> rules;
  DenseMap<Operation *, SmallVector<unsigned>> sliced;
  llvm::SetVector<Value> concatenated;
};

/// Positional argument `i` of `op` (null when absent), as an integer, as a
/// list of static integers, and as the operand it refers to.
Attribute getPositionalArg(CallFunctionOp op, unsigned i);
std::optional<int64_t> getIntArg(CallFunctionOp op, unsigned i);
std::optional<SmallVector<int64_t>> getIntListArg(CallFunctionOp op,
                                                  unsigned i);
/// True for an in-place overload name (`masked_fill_.Scalar`).
bool isInPlaceTarget(StringRef target);

} // namespace joint
} // namespace mlir

#endif // JOINT_ANALYSIS_LOSSHEADREGION_H

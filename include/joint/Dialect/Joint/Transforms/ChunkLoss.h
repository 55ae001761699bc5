//===- ChunkLoss.h - The loss head in token chunks --------------*- C++ -*-===//
//
// joint-chunk-loss's rewrite as a function: the output projection and the
// cross-entropy that reads it, forward and backward, computed in chunks of
// tokens so the whole logits tensor is never live.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_DIALECT_JOINT_TRANSFORMS_CHUNKLOSS_H
#define JOINT_DIALECT_JOINT_TRANSFORMS_CHUNKLOSS_H

#include "joint/Dialect/Joint/IR/JointOps.h"
#include <string>

namespace mlir {
namespace joint {

/// What chunkLoss did to one graph.
struct ChunkLossSummary {
  /// Loss heads rewritten, and heads left whole (one remark each).
  unsigned numChunked = 0, numLeftWhole = 0;
  /// Ops of the rewritten regions before and after the rewrite.
  unsigned numOriginalOps = 0, numChunkOps = 0;
};

/// Splits every `aten::nll_loss_forward` over the log-softmax of a linear
/// head (`mm`/`addmm` of [T, D] tokens by a [D, V] weight, as torch emits
/// F.cross_entropy, with ignore_index, class weights and label smoothing;
/// reduction mean or sum) and the backward of that head into `chunks` runs of
/// about T / chunks tokens. Forward chunk values the backward reads are
/// tagged `must_recompute`, so joint-remat replays each chunk's logits in
/// the backward instead of saving them. Partial sums (loss, total weight,
/// weight gradient) change summation order: the result matches torch within
/// rounding, not bitwise. A head whose region holds an op without a chunking
/// rule, or whose logits are read outside the loss, stays whole with a remark
/// naming the node and the reason. Fails only for `chunks` == 0.
FailureOr<ChunkLossSummary> chunkLoss(GraphOp graph, unsigned chunks);

} // namespace joint
} // namespace mlir

#endif // JOINT_DIALECT_JOINT_TRANSFORMS_CHUNKLOSS_H

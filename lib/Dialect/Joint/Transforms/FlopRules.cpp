//===- FlopRules.cpp - Ops the cost model has no FLOP rule for ------------===//
//
// Classifies each joint.call_function the way CostModel prices it
// (docs/cost-model.md, "FLOPs per op"): a formula (matmul, convolution,
// attention), no FLOPs (views, data movement, size queries), or one FLOP per
// element for the families torch tags `pointwise`/`reduction` and the norms,
// softmaxes and losses the table names. The rest is what the consumers
// warn about: their FLOPs are a guess. The family names mirror the lists in
// lib/Analysis/CostModel.cpp.
//
//===----------------------------------------------------------------------===//

#include "FlopRules.h"
#include "joint/Dialect/Joint/Transforms/OpSets.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::joint;

namespace {

/// aten operators (no overload) the cost model prices by a formula, as no
/// FLOPs (data movement) or by elements without torch tagging them
/// `pointwise` or `reduction`.
const llvm::StringSet<> &atenWithRule() {
  static const llvm::StringSet<> set = {
      // Formulas (torch.utils.flop_counter).
      "mm", "bmm", "matmul", "linear", "mv", "dot", "addmm", "baddbmm",
      "_addmm_activation", "addmv", "convolution", "_convolution", "conv1d",
      "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
      "conv_transpose3d", "convolution_backward",
      "scaled_dot_product_attention", "_scaled_dot_product_flash_attention",
      "_scaled_dot_product_flash_attention_for_cpu",
      "_scaled_dot_product_efficient_attention",
      "_scaled_dot_product_cudnn_attention",
      "_scaled_dot_product_fused_attention_overrideable",
      "_flash_attention_forward", "_efficient_attention_forward",
      "_scaled_dot_product_flash_attention_backward",
      "_scaled_dot_product_flash_attention_for_cpu_backward",
      "_scaled_dot_product_efficient_attention_backward",
      "_scaled_dot_product_cudnn_attention_backward",
      "_scaled_dot_product_fused_attention_overrideable_backward",
      "_flash_attention_backward", "_efficient_attention_backward",
      // Data movement and creation: no FLOPs.
      "clone", "_to_copy", "copy", "copy_", "contiguous", "cat", "stack",
      "index", "index_select", "gather", "embedding", "slice_backward",
      "select_backward", "constant_pad_nd", "new_ones", "new_zeros",
      "new_empty", "new_empty_strided", "ones_like", "zeros_like", "empty_like",
      "full_like", "zeros", "ones", "empty", "empty_strided", "full", "arange",
      "scalar_tensor", "fill", "fill_", "zero_", "lift_fresh_copy", "repeat",
      "_unsafe_index", "masked_fill",
      // Elements: reductions (for tables without torch's `reduction` tag),
      // softmax, norms, losses, scans, sorts, scatters, RNG.
      "sum", "mean", "prod", "all", "any", "logsumexp", "_softmax",
      "_log_softmax", "softmax", "log_softmax", "_safe_softmax",
      "_softmax_backward_data", "_log_softmax_backward_data",
      "native_layer_norm", "native_layer_norm_backward", "layer_norm",
      "native_group_norm", "native_group_norm_backward", "group_norm",
      "native_batch_norm", "native_batch_norm_backward", "batch_norm",
      "_native_batch_norm_legit", "_native_batch_norm_legit_no_training",
      "_native_batch_norm_legit_functional", "cudnn_batch_norm",
      "cudnn_batch_norm_backward", "miopen_batch_norm",
      "miopen_batch_norm_backward", "batch_norm_stats", "batch_norm_elemt",
      "batch_norm_gather_stats", "batch_norm_gather_stats_with_counts",
      "batch_norm_update_stats", "batch_norm_backward_reduce",
      "batch_norm_backward_elemt", "instance_norm", "_fused_rms_norm",
      "_fused_rms_norm_backward", "rms_norm", "var", "var_mean", "std",
      "std_mean", "norm", "linalg_vector_norm", "nll_loss_forward",
      "nll_loss_backward", "nll_loss2d_forward", "nll_loss2d_backward",
      "nll_loss", "cross_entropy_loss", "mse_loss", "mse_loss_backward",
      "l1_loss", "smooth_l1_loss", "smooth_l1_loss_backward", "huber_loss",
      "huber_loss_backward", "binary_cross_entropy",
      "binary_cross_entropy_backward", "binary_cross_entropy_with_logits",
      "kl_div", "cumsum", "cumprod", "logcumsumexp", "sort", "topk", "argmax",
      "argmin", "max", "min", "amax", "amin", "embedding_dense_backward",
      "scatter", "scatter_add", "scatter_reduce", "index_add", "index_put",
      "index_put_", "_index_put_impl", "_index_put_impl_", "index_copy",
      "masked_scatter", "one_hot", "native_dropout", "native_dropout_backward",
      "bernoulli", "bernoulli_", "rand_like", "randn_like", "rand", "randn",
      "randint", "randint_like", "normal", "uniform", "uniform_", "tril",
      "triu", "flip", "roll", "nonzero", "_local_scalar_dense", "equal"};
  return set;
}

/// True when the cost model prices `op` by one of its rules (or it is free).
bool hasFlopRule(CallFunctionOp op, SchemaOp entry,
                 const StorageAliasAnalysis &aliases) {
  bool anyTensor =
      llvm::any_of(llvm::concat<Value>(op->getOperands(), op->getResults()),
                   [](Value v) { return isa<RankedTensorType>(v.getType()); });
  if (!anyTensor || aliases.isView(op))
    return true;
  StringRef target = op.getTarget();
  if (entry.hasTag("pointwise") || entry.hasTag("reduction"))
    return true;
  for (OpSet set : {OpSet::Communication, OpSet::ForwardAllGather,
                    OpSet::Transparent, OpSet::SizeQuery})
    if (isInOpSet(set, target))
      return true;
  auto [ns, rest] = target.split("::");
  return ns == "aten" && atenWithRule().contains(rest.split('.').first);
}

} // namespace

SmallVector<CallFunctionOp>
mlir::joint::getOpsWithoutFlopRule(const StorageAliasAnalysis &aliases) {
  SmallVector<CallFunctionOp> ops;
  const OperatorTable &table = aliases.getOperatorTable();
  for (auto op : aliases.getGraph().getBody().front().getOps<CallFunctionOp>())
    // Without an entry (hand-written IR) there are no tags to judge by.
    if (SchemaOp entry = table.lookup(op);
        entry && !hasFlopRule(op, entry, aliases))
      ops.push_back(op);
  return ops;
}

void mlir::joint::warnOpsWithoutFlopRule(ArrayRef<CallFunctionOp> ops,
                                         StringRef pass) {
  if (ops.empty())
    return;
  InFlightDiagnostic d = emitWarning(ops.front()->getLoc());
  d << pass << ": " << ops.size()
    << " op(s) have no FLOP rule and count one FLOP per element of their "
       "largest tensor: ";
  constexpr size_t kNamed = 3;
  llvm::interleaveComma(ops.take_front(kNamed), d, [&](CallFunctionOp op) {
    d << "'" << op.getName() << "' (" << op.getTarget() << ")";
  });
  if (ops.size() > kNamed)
    d << " and " << ops.size() - kNamed << " more";
}

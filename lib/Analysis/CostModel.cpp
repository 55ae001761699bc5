//===- CostModel.cpp - FLOPs, op time and transfer overlap ----------------===//
//-*-===//
//
// FLOP formulas follow torch.utils.flop_counter (mm_flop, addmm_flop,
// bmm_flop, baddbmm_flop, conv_flop_count, conv_backward_flop,
// sdpa_flop_count, sdpa_backward_flop_count, the flash/efficient attention
// variants with their (batch, seq, heads, dim) layout); ops torch does not
// count get one FLOP per element of their largest tensor, views and pure
// data movement get none. Then one walk simulates the compute stream and the
// two host-link copy streams. docs/cost-model.md has the table.
//
//===----------------------------------------------------------------------===//

#include "joint/Analysis/CostModel.h"
#include "joint/Dialect/AO/IR/AOOps.h"
#include "joint/Dialect/Joint/IR/OpSets.h"
#include "joint/Dialect/Joint/IR/TensorMeta.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::joint;

namespace {

using Shape = SmallVector<uint64_t, 4>;

/// Sizes of a tensor value by trace-time hints (static type as fallback).
std::optional<Shape> shapeOf(Value v) {
  if (!v)
    return std::nullopt;
  Shape shape;
  if (TensorMetaAttr meta = getTensorMeta(v)) {
    for (const SymInt &s : meta.getSizes()) {
      if (!s.hasHint() || s.hint < 0)
        return std::nullopt;
      shape.push_back(s.hint);
    }
    return shape;
  }
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  for (int64_t d : type.getShape())
    shape.push_back(d);
  return shape;
}

uint64_t mul(uint64_t a, uint64_t b) { return llvm::SaturatingMultiply(a, b); }
uint64_t add(uint64_t a, uint64_t b) { return llvm::SaturatingAdd(a, b); }
uint64_t product(ArrayRef<uint64_t> dims) {
  uint64_t p = 1;
  for (uint64_t d : dims)
    p = mul(p, d);
  return p;
}

std::optional<uint64_t> numelOf(Value v) {
  std::optional<Shape> s = shapeOf(v);
  return s ? std::optional<uint64_t>(product(*s)) : std::nullopt;
}

/// The attribute of positional argument `i` (schema order).
Attribute argAttr(CallFunctionOp op, unsigned i) {
  ArrayAttr args = op.getArgsAttr();
  return args && i < args.size() ? args[i] : Attribute();
}

/// The tensor passed as positional argument `i`: through `#joint.operand`
/// refs, or operand `i` when the op records no args (hand-written IR).
Value tensorArg(CallFunctionOp op, unsigned i) {
  if (!op.getArgsAttr() && !op.getKwargsAttr())
    return i < op->getNumOperands() ? op->getOperand(i) : Value();
  if (auto ref = dyn_cast_or_null<OperandRefAttr>(argAttr(op, i)))
    if (ref.getIndex() < op->getNumOperands())
      return op->getOperand(ref.getIndex());
  return {};
}

/// A bool argument; `dflt` when absent or not a literal.
bool boolArg(CallFunctionOp op, unsigned i, bool dflt) {
  Attribute a = argAttr(op, i);
  if (auto b = dyn_cast_or_null<BoolAttr>(a))
    return b.getValue();
  if (auto n = dyn_cast_or_null<IntegerAttr>(a))
    return n.getValue().getBoolValue();
  return dflt;
}

/// Matmul family: 2 * numel(out) * K, K = the contracted (last) dim of the
/// left operand at argument `lhs` (mm_flop, bmm_flop, addmm_flop,
/// baddbmm_flop; matmul/linear by their decomposition).
std::optional<uint64_t> matmulFlops(CallFunctionOp op, unsigned lhs) {
  std::optional<Shape> a = shapeOf(tensorArg(op, lhs));
  std::optional<uint64_t> out =
      op->getNumResults() ? numelOf(op->getResult(0)) : std::nullopt;
  if (!a || a->empty() || !out)
    return std::nullopt;
  return mul(2, mul(*out, a->back()));
}

/// conv_flop_count: 2 * batch * prod(spatial of (transposed ? x : out)) *
/// prod(weight shape) (= c_out * c_in/groups * kernel).
std::optional<uint64_t> convFlops(Value x, Value w, Value out,
                                  bool transposed) {
  std::optional<Shape> xs = shapeOf(x), ws = shapeOf(w), os = shapeOf(out);
  if (!xs || !ws || !os || xs->size() < 2 || os->size() < 2)
    return std::nullopt;
  ArrayRef<uint64_t> spatial =
      ArrayRef<uint64_t>(transposed ? *xs : *os).drop_front(2);
  return mul(2, mul((*xs)[0], mul(product(spatial), product(*ws))));
}

/// sdpa_flop_count: QK^T plus PV, 2*B*H*Sq*Sk*(Dq + Dv). `bshd` marks the
/// flash/efficient kernels' (batch, seq, heads, dim) layout; otherwise
/// (..., seq, dim) with every leading dim a batch/head dim.
std::optional<uint64_t> attentionFlops(Value q, Value k, Value v, bool bshd) {
  std::optional<Shape> qs = shapeOf(q), ks = shapeOf(k), vs = shapeOf(v);
  if (!qs || !ks || !vs || qs->size() < 2 || ks->size() < 2 || vs->empty())
    return std::nullopt;
  uint64_t batchHeads, sq, sk, dq = qs->back(), dv = vs->back();
  if (bshd) {
    if (qs->size() != 4 || ks->size() != 4)
      return std::nullopt;
    batchHeads = mul((*qs)[0], (*qs)[2]);
    sq = (*qs)[1];
    sk = (*ks)[1];
  } else {
    batchHeads = product(ArrayRef<uint64_t>(*qs).drop_back(2));
    sq = (*qs)[qs->size() - 2];
    sk = (*ks)[ks->size() - 2];
  }
  return mul(2, mul(mul(batchHeads, mul(sq, sk)), add(dq, dv)));
}

/// Targets that move or create data without arithmetic (0 FLOPs; their time
/// is the bytes they move).
const llvm::StringSet<> &dataMovementOps() {
  static const llvm::StringSet<> set = {
      "clone",           "_to_copy",        "copy",
      "copy_",           "contiguous",      "cat",
      "stack",           "index",           "index_select",
      "gather",          "embedding",       "slice_backward",
      "select_backward", "constant_pad_nd", "new_ones",
      "new_zeros",       "new_empty",       "new_empty_strided",
      "ones_like",       "zeros_like",      "empty_like",
      "full_like",       "zeros",           "ones",
      "empty",           "empty_strided",   "full",
      "arange",          "scalar_tensor",   "fill",
      "fill_",           "zero_",           "lift_fresh_copy",
      "repeat",          "_unsafe_index",   "masked_fill"};
  return set;
}

/// aten operators priced one FLOP per element although torch tags them
/// neither `pointwise` nor `reduction` (or tables lack the tag): reductions,
/// softmax, norms, losses, scans, sorts, scatters, RNG.
const llvm::StringSet<> &elementPricedOps() {
  static const llvm::StringSet<> set = {"sum",
                                        "mean",
                                        "prod",
                                        "all",
                                        "any",
                                        "logsumexp",
                                        "_softmax",
                                        "_log_softmax",
                                        "softmax",
                                        "log_softmax",
                                        "_safe_softmax",
                                        "_softmax_backward_data",
                                        "_log_softmax_backward_data",
                                        "native_layer_norm",
                                        "native_layer_norm_backward",
                                        "layer_norm",
                                        "native_group_norm",
                                        "native_group_norm_backward",
                                        "group_norm",
                                        "native_batch_norm",
                                        "native_batch_norm_backward",
                                        "batch_norm",
                                        "_native_batch_norm_legit",
                                        "_native_batch_norm_legit_no_training",
                                        "_native_batch_norm_legit_functional",
                                        "cudnn_batch_norm",
                                        "cudnn_batch_norm_backward",
                                        "miopen_batch_norm",
                                        "miopen_batch_norm_backward",
                                        "batch_norm_stats",
                                        "batch_norm_elemt",
                                        "batch_norm_gather_stats",
                                        "batch_norm_gather_stats_with_counts",
                                        "batch_norm_update_stats",
                                        "batch_norm_backward_reduce",
                                        "batch_norm_backward_elemt",
                                        "instance_norm",
                                        "_fused_rms_norm",
                                        "_fused_rms_norm_backward",
                                        "rms_norm",
                                        "var",
                                        "var_mean",
                                        "std",
                                        "std_mean",
                                        "norm",
                                        "linalg_vector_norm",
                                        "nll_loss_forward",
                                        "nll_loss_backward",
                                        "nll_loss2d_forward",
                                        "nll_loss2d_backward",
                                        "nll_loss",
                                        "cross_entropy_loss",
                                        "mse_loss",
                                        "mse_loss_backward",
                                        "l1_loss",
                                        "smooth_l1_loss",
                                        "smooth_l1_loss_backward",
                                        "huber_loss",
                                        "huber_loss_backward",
                                        "binary_cross_entropy",
                                        "binary_cross_entropy_backward",
                                        "binary_cross_entropy_with_logits",
                                        "kl_div",
                                        "cumsum",
                                        "cumprod",
                                        "logcumsumexp",
                                        "sort",
                                        "topk",
                                        "argmax",
                                        "argmin",
                                        "max",
                                        "min",
                                        "amax",
                                        "amin",
                                        "embedding_dense_backward",
                                        "scatter",
                                        "scatter_add",
                                        "scatter_reduce",
                                        "index_add",
                                        "index_put",
                                        "index_put_",
                                        "_index_put_impl",
                                        "_index_put_impl_",
                                        "index_copy",
                                        "masked_scatter",
                                        "one_hot",
                                        "native_dropout",
                                        "native_dropout_backward",
                                        "bernoulli",
                                        "bernoulli_",
                                        "rand_like",
                                        "randn_like",
                                        "rand",
                                        "randn",
                                        "randint",
                                        "randint_like",
                                        "normal",
                                        "uniform",
                                        "uniform_",
                                        "tril",
                                        "triu",
                                        "flip",
                                        "roll",
                                        "nonzero",
                                        "_local_scalar_dense",
                                        "equal"};
  return set;
}

/// For an attention kernel, whether its q, k, v are (batch, seq, heads,
/// dim) (true) or (batch, heads, seq, dim) (false); nullopt for other ops.
/// Backward kernels are looked up by their forward's name.
std::optional<bool> isSeqFirstAttention(StringRef name) {
  static const llvm::StringMap<bool> kernels = {
      {"scaled_dot_product_attention", false},
      {"_scaled_dot_product_flash_attention", false},
      {"_scaled_dot_product_flash_attention_for_cpu", false},
      {"_scaled_dot_product_efficient_attention", false},
      {"_scaled_dot_product_cudnn_attention", false},
      {"_scaled_dot_product_fused_attention_overrideable", false},
      {"_flash_attention_forward", true},
      {"_efficient_attention_forward", true}};
  auto it = kernels.find(name);
  if (it == kernels.end())
    return std::nullopt;
  return it->second;
}

/// "aten::mm.default" -> "mm"; empty for other namespaces.
StringRef atenName(CallFunctionOp op) {
  auto [ns, rest] = op.getTarget().split("::");
  if (ns != "aten")
    return {};
  return rest.split('.').first;
}

/// One FLOP per element of the op's largest tensor operand or result
/// (elementwise ops: output elements; reductions: input elements).
std::optional<uint64_t> elementFlops(CallFunctionOp op) {
  uint64_t most = 0;
  for (Value v : llvm::concat<Value>(op->getOperands(), op->getResults())) {
    if (!isa<RankedTensorType>(v.getType()))
      continue;
    std::optional<uint64_t> n = numelOf(v);
    if (!n)
      return std::nullopt;
    most = std::max(most, *n);
  }
  return most;
}

/// True when one FLOP per element is a rule for `op`, not a guess: torch
/// tags it `pointwise` or `reduction`, it is an element-priced family, or it
/// moves data (collectives, transparent ops, size queries). Without an
/// operator-table entry (hand-written IR) there are no tags to judge by.
bool isElementPriced(CallFunctionOp op, const SchemaTable &table) {
  SchemaOp entry = table.lookup(op);
  if (!entry || entry.hasTag("pointwise") || entry.hasTag("reduction"))
    return true;
  StringRef target = op.getTarget();
  if (isCollective(target) || isInOpSet(OpSet::SizeQuery, target))
    return true;
  StringRef name = atenName(op);
  return elementPricedOps().contains(name) || dataMovementOps().contains(name);
}

/// FLOPs of `op` (a view when `view`) by torch.utils.flop_counter's
/// formulas, 0 for views and data movement, else one per element;
/// `byElementCount` is set when that last rule priced it (whether it is a
/// rule or a guess is isElementPriced's answer).
std::optional<uint64_t> computeFlops(CallFunctionOp op, bool view,
                                     bool &byElementCount) {
  byElementCount = false;
  auto byElements = [&] {
    byElementCount = true;
    return elementFlops(op);
  };
  bool anyTensor =
      llvm::any_of(llvm::concat<Value>(op->getOperands(), op->getResults()),
                   [](Value v) { return isa<RankedTensorType>(v.getType()); });
  // Collectives move data between ranks; their time is not FLOPs.
  if (!anyTensor || view || isCollective(op.getTarget()))
    return 0;
  StringRef name = atenName(op);
  if (name.empty())
    return byElements();
  if (llvm::is_contained({"mm", "bmm", "matmul", "linear", "mv", "dot"}, name))
    return matmulFlops(op, 0);
  if (llvm::is_contained({"addmm", "baddbmm", "_addmm_activation", "addmv"},
                         name))
    return matmulFlops(op, 1);
  if (llvm::is_contained({"convolution", "_convolution"}, name))
    return convFlops(tensorArg(op, 0), tensorArg(op, 1), op->getResult(0),
                     boolArg(op, 6, false));
  if (llvm::is_contained({"conv1d", "conv2d", "conv3d"}, name))
    return convFlops(tensorArg(op, 0), tensorArg(op, 1), op->getResult(0),
                     false);
  if (llvm::is_contained(
          {"conv_transpose1d", "conv_transpose2d", "conv_transpose3d"}, name))
    return convFlops(tensorArg(op, 0), tensorArg(op, 1), op->getResult(0),
                     true);
  if (name == "convolution_backward") {
    // conv_backward_flop: grad_input and grad_weight each cost the forward.
    std::optional<uint64_t> fwd =
        convFlops(tensorArg(op, 1), tensorArg(op, 2), tensorArg(op, 0),
                  boolArg(op, 7, false));
    if (!fwd)
      return std::nullopt;
    uint64_t parts = 2;
    if (auto mask = dyn_cast_or_null<ArrayAttr>(argAttr(op, 10)))
      if (mask.size() >= 2) {
        parts = 0;
        for (Attribute m : mask.getValue().take_front(2))
          if (auto b = dyn_cast<BoolAttr>(m); b && b.getValue())
            ++parts;
      }
    return mul(*fwd, parts);
  }
  if (std::optional<bool> seqFirst = isSeqFirstAttention(name))
    return attentionFlops(tensorArg(op, 0), tensorArg(op, 1), tensorArg(op, 2),
                          *seqFirst);
  if (name.consume_back("_backward")) {
    // sdpa_backward_flop_count: dQ, dK, dV and dP, twice the forward.
    // Arguments are (grad_out, query, key, value, ...);
    // "_flash_attention_backward" is the backward of
    // "_flash_attention_forward".
    std::optional<bool> seqFirst = isSeqFirstAttention(name);
    if (!seqFirst)
      seqFirst = isSeqFirstAttention((name + "_forward").str());
    if (!seqFirst)
      return byElements();
    std::optional<uint64_t> fwd = attentionFlops(
        tensorArg(op, 1), tensorArg(op, 2), tensorArg(op, 3), *seqFirst);
    return fwd ? std::optional<uint64_t>(mul(2, *fwd)) : std::nullopt;
  }
  if (dataMovementOps().contains(name))
    return 0;
  return byElements();
}

/// Bytes an op reads and writes in HBM: its distinct tensor operands and its
/// results (logical elements); 0 for views and for size queries (sym_size,
/// ...), which read a tensor's metadata, not its data.
uint64_t bytesMoved(CallFunctionOp op, bool view) {
  if (view || isInOpSet(OpSet::SizeQuery, op.getTarget()))
    return 0;
  uint64_t bytes = 0;
  llvm::SmallDenseSet<Value, 8> seen;
  for (Value v : llvm::concat<Value>(op->getOperands(), op->getResults()))
    if (seen.insert(v).second)
      bytes = add(bytes, getNumBytesHint(v).value_or(0));
  return bytes;
}

/// Bytes one rank sends for collective `op` (ring algorithms, NCCL's bus
/// bandwidth convention): all-gather (n-1)/n of its result, reduce-scatter
/// (n-1)/n of its input, all-reduce 2(n-1)/n of its input (n unknown: 2x),
/// other collectives their input; waits 0. n is the op's group_size.
uint64_t collectiveBytes(CallFunctionOp op) {
  StringRef target = op.getTarget();
  if (isInOpSet(OpSet::Transparent, target) || op->getNumOperands() == 0)
    return 0;
  auto ranks = [&](unsigned i) -> uint64_t {
    auto n = dyn_cast_or_null<IntegerAttr>(argAttr(op, i));
    return n && n.getInt() > 0 ? uint64_t(n.getInt()) : 0;
  };
  auto share = [](uint64_t bytes, uint64_t n) {
    return n ? bytes / n * (n - 1) : bytes;
  };
  uint64_t in = getNumBytesHint(op->getOperand(0)).value_or(0);
  StringRef name = target.split("::").second.split('.').first;
  if (name == "all_gather_into_tensor" && op->getNumResults())
    return share(getNumBytesHint(op->getResult(0)).value_or(0), ranks(1));
  if (name == "reduce_scatter_tensor")
    return share(in, ranks(2));
  if (name == "all_reduce" || name == "allreduce_")
    return add(in, in);
  return in;
}

} // namespace

CostModel::CostModel(const StorageAliasAnalysis &aliases,
                     const HardwareModel &hw) {
  GraphOp graph = aliases.getGraph();
  llvm::DenseMap<Operation *, unsigned> transferOf;
  llvm::DenseMap<Attribute, bool> elementPricedByTarget;
  double now = 0, toHostFree = 0, toDeviceFree = 0;
  for (Operation &o : graph.getBody().front()) {
    if (auto op = dyn_cast<CallFunctionOp>(o)) {
      bool view = aliases.isView(op);
      bool byElementCount = false;
      std::optional<uint64_t> flops = computeFlops(op, view, byElementCount);
      if (!flops) {
        unknownFlops.push_back(op);
      } else if (byElementCount) {
        // Whether the element count is a rule depends on the target only.
        auto [it, inserted] =
            elementPricedByTarget.try_emplace(op.getTargetAttr(), false);
        if (inserted)
          it->second = isElementPriced(op, aliases.getSchemaTable());
        if (!it->second)
          guessedFlops.push_back(op);
      }
      uint64_t f = flops.value_or(0);
      double seconds =
          isCollective(op.getTarget())
              ? double(collectiveBytes(op)) / hw.collectiveBytesPerSecond
              : std::max(double(f) / hw.flopsPerSecond,
                         double(bytesMoved(op, view)) / hw.hbmBytesPerSecond);
      flopsOf[op] = f;
      secondsOf[op] = seconds;
      totalFlops = add(totalFlops, f);
      computeSeconds += seconds;
      if (op.getRecomputedFrom()) {
        recomputeFlops = add(recomputeFlops, f);
        recomputeSeconds += seconds;
      }
      now += seconds;
      continue;
    }
    if (isa<ao::OffloadOp, ao::ReloadOp>(o)) {
      Transfer t;
      t.copy = &o;
      t.toHost = isa<ao::OffloadOp>(o);
      t.bytes = getNumBytesHint(o.getResult(0)).value_or(0);
      t.seconds = double(t.bytes) / hw.linkBytesPerSecond;
      double &linkFree = t.toHost ? toHostFree : toDeviceFree;
      linkFree = std::max(now, linkFree) + t.seconds;
      t.doneAt = linkFree;
      (t.toHost ? offloadBytes : reloadBytes) += t.bytes;
      transferSeconds += t.seconds;
      transferOf[&o] = transfers.size();
      transfers.push_back(t);
      continue;
    }
    if (auto wait = dyn_cast<ao::WaitTensorOp>(o)) {
      Operation *copy = wait.getInput().getDefiningOp();
      auto it = copy ? transferOf.find(copy) : transferOf.end();
      if (it == transferOf.end())
        continue;
      Transfer &t = transfers[it->second];
      t.wait = wait;
      t.exposedSeconds = std::max(0.0, t.doneAt - now);
      now += t.exposedSeconds;
      exposedSeconds += t.exposedSeconds;
    }
  }
}

//===- JointToLinalg.h - Lower joint graphs to linalg -----------*- C++ -*-===//
//
// The pattern families of convert-joint-to-linalg, one per file in
// lib/Conversion/JointToLinalg (torch-mlir's TorchToLinalg layout). Each
// `populate<Family>Patterns` adds the family's patterns; the driver
// (JointToLinalg.cpp) owns the legality: the joint and ao dialects illegal,
// the upstream dialects the families emit (arith, linalg, math, scf, tensor)
// legal.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_CONVERSION_JOINTTOLINALG_JOINTTOLINALG_H
#define JOINT_CONVERSION_JOINTTOLINALG_JOINTTOLINALG_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir {
namespace joint {

class CallFunctionOp;

/// The operands and constant arguments of one recorded SDPA call, read from
/// its `args`/`kwargs` by the schema positions of its variant (`_for_cpu`,
/// flash, efficient, cuDNN, math; forward or backward).
struct SdpaCall {
  bool backward = false;
  bool math = false;   ///< `_scaled_dot_product_attention_math` (returns P)
  Value q, k, v;       ///< [B, H, L, E], [B, Hk, S, E], [B, Hk, S, Ev]
  Value mask;          ///< attn_mask / attn_bias; null when None
  Value gradOut, out;  ///< backward: dO and the forward's output
  Value logsumexp;     ///< backward: the saved statistics
  bool causal = false; ///< torch's is_causal (top-left)
  double scale = 0;    ///< NaN when None (torch's default 1/sqrt(E))
};

/// Reads `op` (its operands as `operands`, e.g. a conversion's remapped
/// values) when its target is an SDPA variant. Failure with `reason` when it
/// is not one, or an argument is outside what the lowering supports: 4-D
/// q/k/v, dropout_p 0 (no RNG), constant is_causal/scale, a mask of rank <= 4,
/// no dropout_mask, tensor dO/out/logsumexp.
FailureOr<SdpaCall> readSdpaCall(CallFunctionOp op, ValueRange operands,
                                 std::string &reason);

/// Adds one family's patterns (JointOpConversion rows for the aten targets
/// it lowers) to `patterns`; every family below has this signature.
using PopulateFamilyPatternsFn = void(const TypeConverter &typeConverter,
                                      RewritePatternSet &patterns);

// Core families (lower-core).

/// Pointwise aten ops (arithmetic, math, comparisons, bitwise, where, casts)
/// through one pattern and one table of scalar bodies; torch promotion and
/// broadcasting.
PopulateFamilyPatternsFn populateElementwisePatterns;
/// arange, fills (`ones_like`, `full`, `zeros`, `scalar_tensor`, ...).
PopulateFamilyPatternsFn populateTensorConstructorsPatterns;
/// Views as tensor ops, cat, pad, slice_backward, split, clone, copies.
PopulateFamilyPatternsFn populateDataMovementPatterns;
/// `sym_size`, `sym_numel` and SymInt arithmetic (`operator::mul`, ...).
PopulateFamilyPatternsFn populateSymIntPatterns;
/// `ao.offload` / `ao.reload` / `ao.wait_tensor` as real host copies.
PopulateFamilyPatternsFn populateOffloadPatterns;

// Op families (lower-ops).

/// mm, bmm, addmm and matmul pieces (bf16 accumulated in f32).
PopulateFamilyPatternsFn populateLinearPatterns;
/// sum, mean, amax, max.dim/min.dim/argmax/argmin, var/var_mean, cumsum,
/// softmax / log_softmax (+ backward), nll_loss forward / backward.
PopulateFamilyPatternsFn populateReductionPatterns;
/// Layer norm forward / backward.
PopulateFamilyPatternsFn populateNormalizationPatterns;
/// Batch norm forward (training / eval, running-statistic updates as
/// results) / backward.
PopulateFamilyPatternsFn populateBatchNormPatterns;
/// Scaled dot product attention forward / backward (every recorded variant);
/// `rowBlock` > 0: in loops over (batch, key/value head, blocks of up to
/// `rowBlock` query rows), so [L, S] temporaries exist one block at a time.
void populateAttentionPatterns(const TypeConverter &typeConverter,
                               RewritePatternSet &patterns,
                               int64_t rowBlock = 0);
/// embedding (+ backward), index.Tensor, index_select, index_put, gather,
/// scatter (src, value, add), index_add, topk.
PopulateFamilyPatternsFn populateIndirectDataMovementPatterns;
/// convolution (+ backward): 1-3 spatial dims, groups, stride, padding,
/// dilation; static shapes; not transposed.
PopulateFamilyPatternsFn populateConvolutionPatterns;
/// max_pool2d_with_indices, avg_pool2d, _adaptive_avg_pool2d (+ backward):
/// static [N, C, H, W], padding, stride, dilation, ceil_mode.
PopulateFamilyPatternsFn populatePoolingPatterns;
/// native_dropout, bernoulli, rand/randn(_like), uniform_, normal_: Philox
/// 4x32-10 draws from the step's rng_state argument (Random.cpp).
PopulateFamilyPatternsFn populateRandomPatterns;

/// Discardable attribute of an RNG op: its draw index d (i64), unique per
/// original op; a remat clone keeps its original's, so it replays the draw.
inline constexpr llvm::StringLiteral kRngDrawAttr = "joint.rng_draw";
/// Argument attribute marking the step's `rng_state` argument
/// (tensor<2xi64>: seed, offset; draw d uses offset + d): the number of
/// draws per step, by which a caller advances the offset between steps.
inline constexpr llvm::StringLiteral kRngDrawsAttr = "joint.rng_draws";

} // namespace joint
} // namespace mlir

#endif // JOINT_CONVERSION_JOINTTOLINALG_JOINTTOLINALG_H

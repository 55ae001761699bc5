//===- JointToLinalg.h - Lower joint graphs to linalg -----------*- C++ -*-===//
//
// The pattern families of convert-joint-to-linalg, one per file in
// lib/Conversion/JointToLinalg (torch-mlir's TorchToLinalg layout). Each
// `populate<Family>PatternsAndLegality` adds the family's patterns and marks
// whatever the family needs legal; the driver (JointToLinalg.cpp) marks the
// joint and ao dialects illegal and the upstream tensor dialects legal.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_CONVERSION_JOINTTOLINALG_JOINTTOLINALG_H
#define JOINT_CONVERSION_JOINTTOLINALG_JOINTTOLINALG_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir {
namespace joint {

// Core families (lower-core).

/// Pointwise aten ops (arithmetic, math, comparisons, bitwise, where, casts)
/// through one pattern and one table of scalar bodies; torch promotion and
/// broadcasting.
void populateElementwisePatternsAndLegality(TypeConverter &typeConverter,
                                            RewritePatternSet &patterns,
                                            ConversionTarget &target);
/// arange, fills (`ones_like`, `full`, `zeros`, `scalar_tensor`, ...).
void populateTensorConstructorsPatternsAndLegality(TypeConverter &typeConverter,
                                                   RewritePatternSet &patterns,
                                                   ConversionTarget &target);
/// Views as tensor ops, cat, pad, slice_backward, split, clone, copies.
void populateDataMovementPatternsAndLegality(TypeConverter &typeConverter,
                                             RewritePatternSet &patterns,
                                             ConversionTarget &target);
/// `sym_size`, `sym_numel` and SymInt arithmetic (`operator::mul`, ...).
void populateSymIntPatternsAndLegality(TypeConverter &typeConverter,
                                       RewritePatternSet &patterns,
                                       ConversionTarget &target);
/// `ao.offload` / `ao.reload` / `ao.wait_tensor` as real host copies.
void populateOffloadPatternsAndLegality(TypeConverter &typeConverter,
                                        RewritePatternSet &patterns,
                                        ConversionTarget &target);

// Op families (lower-ops).

/// mm, bmm, addmm and matmul pieces (bf16 accumulated in f32).
void populateLinearPatternsAndLegality(TypeConverter &typeConverter,
                                       RewritePatternSet &patterns,
                                       ConversionTarget &target);
/// sum, mean, amax, var/var_mean, cumsum, softmax / log_softmax (+ backward),
/// nll_loss forward / backward.
void populateReductionPatternsAndLegality(TypeConverter &typeConverter,
                                          RewritePatternSet &patterns,
                                          ConversionTarget &target);
/// Layer norm forward / backward.
void populateNormalizationPatternsAndLegality(TypeConverter &typeConverter,
                                              RewritePatternSet &patterns,
                                              ConversionTarget &target);
/// Batch norm forward (training / eval, running-statistic updates as
/// results) / backward.
void populateBatchNormPatternsAndLegality(TypeConverter &typeConverter,
                                          RewritePatternSet &patterns,
                                          ConversionTarget &target);
/// Scaled dot product attention forward / backward (every recorded variant).
void populateAttentionPatternsAndLegality(TypeConverter &typeConverter,
                                          RewritePatternSet &patterns,
                                          ConversionTarget &target);
/// embedding, embedding_dense_backward, index.Tensor.
void populateIndirectDataMovementPatternsAndLegality(
    TypeConverter &typeConverter, RewritePatternSet &patterns,
    ConversionTarget &target);

} // namespace joint
} // namespace mlir

#endif // JOINT_CONVERSION_JOINTTOLINALG_JOINTTOLINALG_H

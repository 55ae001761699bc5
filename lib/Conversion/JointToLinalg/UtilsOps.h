//===- UtilsOps.h - Helpers of the ops families -----------------*- C++ -*-===//
//
// Building blocks shared by the "ops" families of convert-joint-to-linalg
// (Linear, Reduction, Normalization, Attention, IndirectDataMovement): the
// schema-argument reader of their lowering functions (OpArgs, which a
// LoweringTable row hands them),
// schema-argument readers that do not need the operator table, accumulator
// types (bf16/f16 accumulate in f32 as torch's CPU kernels do), scalar casts,
// filled tensors, and reductions as one `linalg.generic` with reduction
// iterators.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_LIB_CONVERSION_JOINTTOLINALG_UTILSOPS_H
#define JOINT_LIB_CONVERSION_JOINTTOLINALG_UTILSOPS_H

#include "Utils.h"
#include "joint/Dialect/Joint/IR/JointOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir {
namespace joint {
namespace lowering {

//===----------------------------------------------------------------------===//
// Schema arguments
//===----------------------------------------------------------------------===//

/// A converted tensor operand whose type is known ranked: `getType()` gives
/// its RankedTensorType (rank, sizes, element type) without a cast.
using RankedTensor = TypedValue<RankedTensorType>;

/// Reads the schema arguments of one `joint.call_function` through getArgAttr
/// (Utils.h) as plain values, leaving the reason for a failure to the caller's
/// notifyMatchFailure; `#joint.operand<i>` resolves to the converted operand
/// `i`.
class OpArgs {
public:
  OpArgs(CallFunctionOp op, ValueRange operands) : op(op), operands(operands) {}

  /// The argument's attribute; null when not passed (schema default).
  Attribute get(unsigned index, StringRef name) const;
  /// True when the argument is absent or None (`unit`).
  bool isNone(unsigned index, StringRef name) const;
  /// The converted ranked tensor operand; failure when the argument is not
  /// one.
  FailureOr<RankedTensor> tensor(unsigned index, StringRef name) const;
  /// A constant int (failure for a SymInt operand or another kind); `dflt`
  /// when absent.
  FailureOr<int64_t> getInt(unsigned index, StringRef name,
                            std::optional<int64_t> dflt = std::nullopt) const;
  FailureOr<double> getFloat(unsigned index, StringRef name,
                             std::optional<double> dflt = std::nullopt) const;
  FailureOr<bool> getBool(unsigned index, StringRef name,
                          std::optional<bool> dflt = std::nullopt) const;
  FailureOr<SmallVector<int64_t>> getIntList(unsigned index,
                                             StringRef name) const;
  FailureOr<SmallVector<bool>> getBoolList(unsigned index,
                                           StringRef name) const;
  /// The converted operands of the op (`#joint.operand<i>` indexes them).
  ValueRange getOperands() const { return operands; }

private:
  mutable CallFunctionOp op;
  ValueRange operands;
};

/// The arguments of a `(Tensor a, Tensor b) -> Tensor` lowering (mm, bmm,
/// embedding): two ranked tensor operands and result 0's ranked type.
struct BinaryTensorArgs {
  RankedTensor lhs, rhs;
  RankedTensorType resultType;
};

/// Reads tensor arguments 0 (`lhsName`) and 1 (`rhsName`) of `op` and its
/// result type; failure, after `rw.notifyMatchFailure` naming both arguments,
/// when either is not a ranked tensor or the result is not one.
FailureOr<BinaryTensorArgs> readBinaryTensorArgs(CallFunctionOp op,
                                                 const OpArgs &args,
                                                 ConversionPatternRewriter &rw,
                                                 StringRef lhsName,
                                                 StringRef rhsName);

/// The arguments of a `(Tensor self, int dim, ...) -> Tensor` lowering
/// (softmax, log_softmax, cumsum): `dim` as written, not yet normalized.
struct TensorDimArgs {
  RankedTensor self;
  int64_t dim;
  RankedTensorType resultType;
};

/// Reads argument 0 `self` (ranked tensor), argument 1 `dim` (constant int;
/// a SymInt dim is refused) and result 0's ranked type; failure after
/// `rw.notifyMatchFailure` otherwise.
FailureOr<TensorDimArgs> readTensorDimArgs(CallFunctionOp op,
                                           const OpArgs &args,
                                           ConversionPatternRewriter &rw);

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

/// Lowers one `joint.call_function` of an ops family, its schema arguments
/// read through `args`; says why it cannot through `rw.notifyMatchFailure`.
/// A LoweringTable (Utils.h) row registers it.
using LowerFn = LogicalResult (*)(CallFunctionOp op, const OpArgs &args,
                                  ConversionPatternRewriter &rw);

//===----------------------------------------------------------------------===//
// Types and scalars
//===----------------------------------------------------------------------===//

/// The type torch's CPU kernels accumulate `elem` in: f32 for bf16/f16
/// (at::opmath_type), i64 for integers and bool, else `elem`.
Type getAccumulatorType(Type elem);

/// `index` value `v` as a scalar of float or integer type `type`.
Value indexToScalar(OpBuilder &b, Location loc, Value v, Type type);

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

/// `tensor.empty` of `sizes` filled with the constant `fill`.
Value createFilledTensor(OpBuilder &b, Location loc,
                         ArrayRef<OpFoldResult> sizes, Type elem, double fill);

/// `t` with its elements cast to `elem` (convertScalar); `t` itself when equal.
Value convertElements(OpBuilder &b, Location loc, Value t, Type elem);

/// `t` as type `type` (a `tensor.cast` when only static sizes differ).
Value castToType(OpBuilder &b, Location loc, Value t, Type type);

/// Product of the sizes of `t` over the dims where `mask` is true, as index.
Value getNumElements(OpBuilder &b, Location loc, Value t, ArrayRef<bool> mask);

/// Sizes of `t` with the dims where `dropped` is true removed.
SmallVector<OpFoldResult> getKeptSizes(OpBuilder &b, Location loc, Value t,
                                       ArrayRef<bool> dropped);

/// Identity map over `rank` loops with the loops where `dropped` is true
/// removed from the results (a projection).
AffineMap getProjectionMap(MLIRContext *ctx, unsigned rank,
                           ArrayRef<bool> dropped);

/// Map reading an operand of shape `shape` broadcast (right-aligned, torch
/// rules) onto `loopShape`: static size-1 dims read index 0.
AffineMap getBroadcastMap(MLIRContext *ctx, ArrayRef<int64_t> shape,
                          unsigned numLoops, ArrayRef<unsigned> loopsOfDims);

/// Body of a reduction: combines the (already loaded) input elements with the
/// accumulators and returns the new accumulators.
using ReduceBody = function_ref<SmallVector<Value>(
    OpBuilder &, Location, ValueRange inputs, ValueRange accs)>;

/// One `linalg.generic` over the loops of `inputs[0]` (rank r) reducing the
/// loops where `reduced` is true. `inputMaps` index each input by the r loops;
/// each result i is a tensor of `inputs[0]`'s kept sizes, of type
/// `accTypes[i]`, initialised to `inits[i]`.
SmallVector<Value> buildReduction(OpBuilder &b, Location loc, ValueRange inputs,
                                  ArrayRef<AffineMap> inputMaps,
                                  ArrayRef<bool> reduced,
                                  ArrayRef<Type> accTypes,
                                  ArrayRef<double> inits, ReduceBody body);

/// `input` (rank r, read whole) reduced over the loops where `reduced` is
/// true by `acc = CombineOp(acc, x)`, each element x converted to `accType`
/// first, from `init`: a buildReduction for a plain sum (arith::AddFOp) or
/// max (arith::MaximumFOp).
template <typename CombineOp>
Value buildReductionOf(OpBuilder &b, Location loc, Value input,
                       ArrayRef<bool> reduced, Type accType, double init) {
  AffineMap id = b.getMultiDimIdentityMap(reduced.size());
  return buildReduction(
             b, loc, {input}, {id}, reduced, {accType}, {init},
             [&](OpBuilder &nb, Location nl, ValueRange in, ValueRange accs) {
               return SmallVector<Value>{CombineOp::create(
                   nb, nl, accs[0], convertScalar(nb, nl, in[0], accType))};
             })
      .front();
}

/// A parallel linalg.generic over the dims of `like` (rank r) producing
/// `elem`: `inputs` read through `maps` (r dims each), `fn` gives the value.
Value buildElementwiseMap(
    OpBuilder &b, Location loc, Value like, Type elem, ValueRange inputs,
    ArrayRef<AffineMap> maps,
    function_ref<Value(OpBuilder &, Location, ValueRange)> fn);

/// `t` (the kept dims of a rank-r tensor) reshaped with unit dims inserted at
/// the dims where `reduced` is true (torch's keepdim=True).
Value insertUnitDims(OpBuilder &b, Location loc, Value t,
                     ArrayRef<bool> reduced);

/// Converts `t` to the element type of `resultType`, then casts it to
/// `resultType` (static/dynamic sizes only).
Value finishResult(OpBuilder &b, Location loc, Value t, Type resultType);

/// A mask of `rank` bits with `dims` set (normalised); failure when a dim is
/// out of range. An empty `dims` sets every bit (torch's full reduction).
FailureOr<SmallVector<bool>> getReductionMask(ArrayRef<int64_t> dims,
                                              int64_t rank);

/// The converted type of result `i` as a ranked tensor, or null.
RankedTensorType getResultTensorType(const TypeConverter *converter,
                                     CallFunctionOp op, unsigned i);

/// Replaces `op` by a call of `target` with its operands and attributes
/// (but the per-result `result_meta` / `result_names`) and `op`'s result
/// types plus `extraResults`; `op`'s uses take the new op's first results.
/// Sets `op` to the new op. For writes a schema does not return, made
/// explicit as the extra results of a functional form.
void replaceByFunctionalForm(CallFunctionOp &op, StringRef target,
                             TypeRange extraResults, RewriterBase &rewriter);

/// Batch norm in training writes its running statistics although torch's
/// schema declares no write (`Tensor? running_mean`): replaces such an `op`
/// (`native_batch_norm`, `_native_batch_norm_legit`) by
/// `_native_batch_norm_legit_functional` (results 3 and 4: the updated
/// statistics; `op` is set to it) and returns (written operand, updated
/// value) pairs; none for any other op (BatchNorm.cpp).
SmallVector<std::pair<Value, Value>>
functionalizeBatchNormStats(CallFunctionOp &op, RewriterBase &rewriter);

/// rrelu_with_noise writes its `noise` argument without returning it:
/// replaces such an `op` by `rrelu_with_noise_functional` (result 1: the new
/// noise; `op` is set to it) and returns the (noise operand, new noise)
/// pair; none for any other op (Random.cpp).
SmallVector<std::pair<Value, Value>>
functionalizeRReluNoise(CallFunctionOp &op, RewriterBase &rewriter);

} // namespace lowering
} // namespace joint
} // namespace mlir

#endif // JOINT_LIB_CONVERSION_JOINTTOLINALG_UTILSOPS_H

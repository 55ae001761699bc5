//===- TensorConstructors.cpp - arange and fills to linalg ----------------===//
//
// The TensorConstructors family of convert-joint-to-linalg: arange as a
// `linalg.generic` over `linalg.index` (computed in f64 for float results,
// i64 for integers, as torch's CPU kernel accumulates), and every fill
// (ones/zeros/full/empty, their `_like` and `new_` forms, scalar_tensor,
// fill) as `tensor.empty` + `linalg.fill` of the recorded result dtype.
// Empty constructors are filled with zeros, so their contents are defined.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "joint/Conversion/JointToLinalg/JointToLinalg.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::joint;

namespace {

/// arange.default(end), arange.start(start, end), arange.start_step(start,
/// end, step): element i is start + i * step.
static LogicalResult lowerArange(CallFunctionOp op,
                                 CallFunctionOp::Adaptor adaptor,
                                 ConversionPatternRewriter &rewriter) {
  RankedTensorType resultType = getResultTensorType(op);
  if (!resultType || resultType.getRank() != 1)
    return rewriter.notifyMatchFailure(op, "expects a 1-D result");
  Type elementType = resultType.getElementType();
  Type computeType = isa<FloatType>(elementType) ? Type(rewriter.getF64Type())
                                                 : Type(rewriter.getI64Type());
  Location loc = op.getLoc();
  StringRef target = op.getTarget();
  Value start, end, step;
  auto scalar = [&](ArgRef arg) {
    return getScalarArg(op, adaptor, rewriter, arg, computeType);
  };
  if (target == "aten::arange.default") {
    start = createScalarConstant(rewriter, loc, computeType, 0);
    FailureOr<Value> e = scalar({0, "end"});
    if (failed(e))
      return failure();
    end = *e;
    step = createScalarConstant(rewriter, loc, computeType, 1);
  } else {
    FailureOr<Value> s = scalar({0, "start"}), e = scalar({1, "end"});
    if (failed(s) || failed(e))
      return failure();
    start = *s;
    end = *e;
    if (target == "aten::arange.start_step") {
      FailureOr<Value> st = scalar({2, "step"});
      if (failed(st))
        return failure();
      step = *st;
    } else {
      step = createScalarConstant(rewriter, loc, computeType, 1);
    }
  }
  SmallVector<OpFoldResult> sizes;
  if (!resultType.isDynamicDim(0)) {
    sizes.push_back(rewriter.getIndexAttr(resultType.getDimSize(0)));
  } else {
    // ceil((end - start) / step), in the compute type.
    Value length;
    if (isa<FloatType>(computeType)) {
      Value q = arith::DivFOp::create(
          rewriter, loc, arith::SubFOp::create(rewriter, loc, end, start),
          step);
      length = math::CeilOp::create(rewriter, loc, q);
    } else {
      length = arith::CeilDivSIOp::create(
          rewriter, loc, arith::SubIOp::create(rewriter, loc, end, start),
          step);
    }
    sizes.push_back(
        convertScalar(rewriter, loc, length, rewriter.getIndexType()));
  }
  Value result = createElementwiseGeneric(
      rewriter, loc, ValueRange{}, resultType, sizes,
      [&](OpBuilder &b, Location l, ValueRange) {
        Value i = linalg::IndexOp::create(b, l, 0);
        Value index = convertScalar(b, l, i, computeType);
        Value value =
            isa<FloatType>(computeType)
                ? Value(arith::AddFOp::create(
                      b, l, start, arith::MulFOp::create(b, l, index, step)))
                : Value(arith::AddIOp::create(
                      b, l, start, arith::MulIOp::create(b, l, index, step)));
        return convertScalar(b, l, value, elementType);
      });
  rewriter.replaceOp(op, result);
  return success();
}

/// one_hot(self, num_classes): result[..., c] = (self[...] == c), i64;
/// the class count comes from the recorded result type.
static LogicalResult lowerOneHot(CallFunctionOp op,
                                 CallFunctionOp::Adaptor adaptor,
                                 ConversionPatternRewriter &rewriter) {
  FailureOr<Value> input = getTensorArg(op, adaptor, rewriter, {0, "self"});
  RankedTensorType resultType = getResultTensorType(op);
  if (failed(input) || !resultType || resultType.getRank() < 1 ||
      resultType.isDynamicDim(resultType.getRank() - 1))
    return rewriter.notifyMatchFailure(
        op, "expects a result with a static class dim");
  auto inputType = cast<RankedTensorType>(input->getType());
  int64_t rank = resultType.getRank();
  if (inputType.getRank() != rank - 1 ||
      !isa<IntegerType>(inputType.getElementType()))
    return rewriter.notifyMatchFailure(op, "expects an integer input");
  Location loc = op.getLoc();
  SmallVector<OpFoldResult> sizes = getTensorSizes(rewriter, loc, *input);
  sizes.push_back(rewriter.getIndexAttr(resultType.getDimSize(rank - 1)));
  Value init =
      createEmptyTensor(rewriter, loc, sizes, resultType.getElementType());
  MLIRContext *context = rewriter.getContext();
  AffineMap inputMap =
      AffineMap::getMultiDimIdentityMap(rank, context).getMajorSubMap(rank - 1);
  SmallVector<AffineMap> maps = {inputMap,
                                 rewriter.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  Type elementType = resultType.getElementType();
  Value result =
      linalg::GenericOp::create(
          rewriter, loc, TypeRange{init.getType()}, ValueRange{*input},
          ValueRange{init}, maps, iterators,
          [&](OpBuilder &b, Location l, ValueRange args) {
            Value c =
                convertScalar(b, l, linalg::IndexOp::create(b, l, rank - 1),
                              args[0].getType());
            Value eq = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                             args[0], c);
            linalg::YieldOp::create(b, l, convertScalar(b, l, eq, elementType));
          })
          .getResult(0);
  return replaceWithResult(rewriter, op, result, resultType);
}

/// Where a fill takes its sizes and its value from.
struct FillInfo {
  StringRef target;
  /// Sizes: -1 from tensor argument 0 (`_like`, fill), else the index of
  /// the size-list argument; -2 for 0-d (scalar_tensor).
  int sizeArg;
  /// Fill value: 0 or 1, or -1 when it is argument `valueArg`.
  double value;
  int valueArg;
  StringRef valueName;
};

constexpr FillInfo kFills[] = {
    {"aten::ones_like.default", -1, 1, -1, ""},
    {"aten::zeros_like.default", -1, 0, -1, ""},
    {"aten::empty_like.default", -1, 0, -1, ""},
    {"aten::full_like.default", -1, 0, 1, "fill_value"},
    {"aten::fill.Scalar", -1, 0, 1, "value"},
    {"aten::fill_.Scalar", -1, 0, 1, "value"},
    {"aten::zero_.default", -1, 0, -1, ""},
    {"aten::zero.default", -1, 0, -1, ""},
    {"aten::new_ones.default", 1, 1, -1, ""},
    {"aten::new_zeros.default", 1, 0, -1, ""},
    {"aten::new_empty.default", 1, 0, -1, ""},
    {"aten::new_empty_strided.default", 1, 0, -1, ""},
    {"aten::new_full.default", 1, 0, 2, "fill_value"},
    {"aten::ones.default", 0, 1, -1, ""},
    {"aten::zeros.default", 0, 0, -1, ""},
    {"aten::empty.memory_format", 0, 0, -1, ""},
    {"aten::empty_strided.default", 0, 0, -1, ""},
    {"aten::full.default", 0, 0, 1, "fill_value"},
    {"aten::scalar_tensor.default", -2, 0, 0, "s"},
};

/// Every fill of kFills: `tensor.empty` + `linalg.fill`.
static LogicalResult lowerFill(CallFunctionOp op,
                               CallFunctionOp::Adaptor adaptor,
                               ConversionPatternRewriter &rewriter) {
  const FillInfo *info = nullptr;
  for (const FillInfo &fill : kFills)
    if (fill.target == op.getTarget())
      info = &fill;
  RankedTensorType resultType = getResultTensorType(op);
  if (!info || !resultType || op->getNumResults() != 1)
    return rewriter.notifyMatchFailure(op, "expects one tensor result");
  Location loc = op.getLoc();
  Type elementType = resultType.getElementType();
  SmallVector<OpFoldResult> requested;
  if (info->sizeArg == -1) {
    FailureOr<Value> like = getTensorArg(op, adaptor, rewriter, {0, "self"});
    if (failed(like))
      return failure();
    requested = getTensorSizes(rewriter, loc, *like);
  } else if (info->sizeArg >= 0) {
    FailureOr<SmallVector<OpFoldResult>> sizes = getIntListArg(
        op, adaptor, rewriter, {static_cast<unsigned>(info->sizeArg), "size"});
    if (failed(sizes))
      return failure();
    requested = *sizes;
  }
  if (requested.size() != static_cast<size_t>(resultType.getRank()))
    return rewriter.notifyMatchFailure(op, "sizes do not match the result");
  SmallVector<OpFoldResult> sizes;
  for (int64_t i = 0, e = resultType.getRank(); i < e; ++i)
    sizes.push_back(resultType.isDynamicDim(i)
                        ? requested[i]
                        : rewriter.getIndexAttr(resultType.getDimSize(i)));
  // No elements, no fill (batch norm's uint8 `empty(0)` reserve).
  if (resultType.hasStaticShape() && resultType.getNumElements() == 0)
    return replaceWithResult(
        rewriter, op,
        tensor::EmptyOp::create(rewriter, loc, sizes, elementType), resultType);
  if (elementType.isUnsignedInteger())
    return rewriter.notifyMatchFailure(op,
                                       "unsigned result dtypes are refused");
  Value value;
  if (info->valueArg >= 0) {
    FailureOr<Value> v = getScalarArg(
        op, adaptor, rewriter,
        {static_cast<unsigned>(info->valueArg), info->valueName}, elementType);
    if (failed(v))
      return failure();
    value = *v;
  } else {
    value = createScalarConstant(rewriter, loc, elementType, info->value);
  }
  Value result = createInitTensor(rewriter, loc, sizes, elementType, value);
  return replaceWithResult(rewriter, op, result, resultType);
}

} // namespace

void mlir::joint::populateTensorConstructorsPatterns(
    const TypeConverter &typeConverter, RewritePatternSet &patterns) {
  LoweringTable table(typeConverter, patterns);
  table.add(
      {"aten::arange.default", "aten::arange.start", "aten::arange.start_step"},
      lowerArange);
  table.add({"aten::one_hot.default"}, lowerOneHot);
  SmallVector<StringRef> fills;
  for (const FillInfo &fill : kFills)
    fills.push_back(fill.target);
  table.add(fills, lowerFill);
}

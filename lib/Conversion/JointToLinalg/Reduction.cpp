//===- Reduction.cpp - Reductions, softmax and nll_loss to linalg ---------===//
//-*-===//
//
// Reductions become one `linalg.generic` with reduction iterators into an
// accumulator of torch's CPU accumulation type (f32 for bf16/f16, i64 for
// integers), cast once to the result dtype: `sum` (dim list or full), `mean`,
// `amax`, `var`/`var_mean` (two passes: mean, then the sum of squared
// deviations divided by max(N - correction, 0)). `_softmax`/`_log_softmax`
// compute max, then sum(exp(x - max)), then the normalised values; their
// backward ops use the saved output (`g - exp(out) * sum(g)` and
// `out * (g - sum(g * out))`). `cumsum` is a scan: an `scf.for` over the
// scanned dim in increasing order carrying the running sum (the order torch's
// CPU kernel adds in). `nll_loss_forward`/`nll_loss_backward` (weight None,
// reduction none/mean/sum, ignore_index) gather the target column inside the
// generic's body.
//
//===----------------------------------------------------------------------===//

#include "UtilsOps.h"
#include "joint/Conversion/JointToLinalg/JointToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace mlir::joint;
using namespace mlir::joint::lowering;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// The reduced dims of argument `index` (`int[1]? dim`): None or [] reduce
/// every dim.
static FailureOr<SmallVector<bool>> getDimsArg(const OpArgs &args,
                                               unsigned index, int64_t rank) {
  SmallVector<int64_t> dims;
  if (!args.isNone(index, "dim")) {
    FailureOr<SmallVector<int64_t>> list = args.getIntList(index, "dim");
    if (failed(list)) {
      FailureOr<int64_t> one = args.getInt(index, "dim");
      if (failed(one))
        return failure();
      list = SmallVector<int64_t>{*one};
    }
    dims = *list;
  }
  return getReductionMask(dims, rank);
}

static Value addValues(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::AddFOp::create(b, loc, x, y);
  return arith::AddIOp::create(b, loc, x, y);
}

/// Shape of the reduction result: the kept sizes, with unit dims when
/// `keepdim`; converted to `resultType`.
static Value finishReduction(OpBuilder &b, Location loc, Value reduced,
                             ArrayRef<bool> mask, bool keepdim,
                             RankedTensorType resultType) {
  Value v = convertElements(b, loc, reduced, resultType.getElementType());
  if (keepdim)
    v = insertUnitDims(b, loc, v, mask);
  return castToType(b, loc, v, resultType);
}

/// `sum / n` elementwise on the kept-dims accumulator (float).
static Value divideByCount(OpBuilder &b, Location loc, Value sum, Value n) {
  auto type = cast<RankedTensorType>(sum.getType());
  Type elem = type.getElementType();
  unsigned rank = type.getRank();
  Value count = indexToScalar(b, loc, n, elem);
  AffineMap id = b.getMultiDimIdentityMap(rank);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  Value init =
      tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, sum), elem);
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{sum}, ValueRange{init},
             ArrayRef<AffineMap>{id, id}, iters,
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               linalg::YieldOp::create(
                   nb, nl,
                   arith::DivFOp::create(nb, nl, a[0], count).getResult());
             })
      .getResult(0);
}

/// What a reduction over a dim list reads first: `self` (argument 0) and
/// its ranked result 0.
struct ReductionOperand {
  RankedTensor input;
  RankedTensorType resultType;
};

/// The ReductionOperand of `op`; refuses when either is not a ranked tensor.
static FailureOr<ReductionOperand>
readReductionOperand(CallFunctionOp op, const OpArgs &args,
                     ConversionPatternRewriter &rw) {
  FailureOr<RankedTensor> input = args.tensor(0, "self");
  RankedTensorType resultType = getResultTensorType(op, 0);
  if (failed(input) || !resultType)
    return rw.notifyMatchFailure(op, "expected a ranked tensor operand");
  return ReductionOperand{*input, resultType};
}

/// aten::sum.dim_IntList(self, int[1]? dim, bool keepdim=False, *, dtype),
/// aten::sum.default(self, *, dtype), aten::mean.dim(self, dim, keepdim, *,
/// dtype), aten::mean.default(self, *, dtype), aten::amax.default(self,
/// int[1] dim=[], bool keepdim=False).
static LogicalResult lowerReduce(CallFunctionOp op, const OpArgs &args,
                                 ConversionPatternRewriter &rw) {
  StringRef target = op.getTarget();
  FailureOr<ReductionOperand> operand = readReductionOperand(op, args, rw);
  if (failed(operand))
    return failure();
  RankedTensor input = operand->input;
  int64_t rank = input.getType().getRank();
  bool full = target == "aten::sum.default" || target == "aten::mean.default";
  FailureOr<SmallVector<bool>> mask =
      full ? getReductionMask({}, rank) : getDimsArg(args, 1, rank);
  FailureOr<bool> keepdim =
      full ? FailureOr<bool>(false) : args.getBool(2, "keepdim", false);
  if (failed(mask) || failed(keepdim))
    return rw.notifyMatchFailure(op, "dim/keepdim must be constants");

  Type resultElem = operand->resultType.getElementType();
  Type acc = getAccumulatorType(resultElem);
  bool isMax = target == "aten::amax.default";
  bool isMean = target.starts_with("aten::mean");
  if (isMean && !isa<FloatType>(acc))
    return rw.notifyMatchFailure(op, "mean of a non-float dtype");
  if (isMax)
    acc = resultElem;
  if (isMax && !isa<FloatType>(acc) && !acc.isInteger(64) && !acc.isInteger(32))
    return rw.notifyMatchFailure(op, "amax of an unsupported dtype");

  Location loc = op.getLoc();
  double init = 0.0;
  if (isMax)
    init = isa<FloatType>(acc)
               ? -kInf
               : static_cast<double>(acc.isInteger(64)
                                         ? std::numeric_limits<int64_t>::min()
                                         : std::numeric_limits<int32_t>::min());
  AffineMap id = rw.getMultiDimIdentityMap(rank);
  Value reduced =
      buildReduction(
          rw, loc, {input}, {id}, *mask, {acc}, {init},
          [&](OpBuilder &b, Location l, ValueRange in, ValueRange accs) {
            Value x = convertScalar(b, l, in[0], acc);
            if (!isMax)
              return SmallVector<Value>{addValues(b, l, accs[0], x)};
            if (isa<FloatType>(acc))
              return SmallVector<Value>{
                  arith::MaximumFOp::create(b, l, accs[0], x)};
            return SmallVector<Value>{arith::MaxSIOp::create(b, l, accs[0], x)};
          })
          .front();
  if (isMean)
    reduced =
        divideByCount(rw, loc, reduced, getNumElements(rw, loc, input, *mask));
  rw.replaceOp(op, finishReduction(rw, loc, reduced, *mask, *keepdim,
                                   operand->resultType));
  return success();
}

/// aten::var.correction(self, int[1]? dim=None, *, Scalar? correction=None,
/// bool keepdim=False) and aten::var_mean.correction (same arguments,
/// returns (var, mean)). var = sum((x - mean)^2) / max(N - correction, 0),
/// correction defaulting to 1.
static LogicalResult lowerVar(CallFunctionOp op, const OpArgs &args,
                              ConversionPatternRewriter &rw) {
  FailureOr<ReductionOperand> operand = readReductionOperand(op, args, rw);
  if (failed(operand))
    return failure();
  RankedTensor input = operand->input;
  RankedTensorType varType = operand->resultType;
  int64_t rank = input.getType().getRank();
  FailureOr<SmallVector<bool>> mask = getDimsArg(args, 1, rank);
  FailureOr<double> correction = args.getFloat(2, "correction", 1.0);
  FailureOr<bool> keepdim = args.getBool(3, "keepdim", false);
  if (failed(mask) || failed(correction) || failed(keepdim))
    return rw.notifyMatchFailure(op, "dim/correction/keepdim not constant");
  Type acc = getAccumulatorType(varType.getElementType());
  if (!isa<FloatType>(acc))
    return rw.notifyMatchFailure(op, "var of a non-float dtype");

  Location loc = op.getLoc();
  MLIRContext *ctx = rw.getContext();
  AffineMap id = rw.getMultiDimIdentityMap(rank);
  Value n = getNumElements(rw, loc, input, *mask);
  Value sum = buildReductionOf<arith::AddFOp>(rw, loc, input, *mask, acc, 0.0);
  Value mean = divideByCount(rw, loc, sum, n);
  AffineMap proj = getProjectionMap(ctx, rank, *mask);
  Value sq =
      buildReduction(
          rw, loc, {input, mean}, {id, proj}, *mask, {acc}, {0.0},
          [&](OpBuilder &b, Location l, ValueRange in, ValueRange accs) {
            Value d = arith::SubFOp::create(
                b, l, convertScalar(b, l, in[0], acc), in[1]);
            Value d2 = arith::MulFOp::create(b, l, d, d);
            return SmallVector<Value>{arith::AddFOp::create(b, l, accs[0], d2)};
          })
          .front();
  // divisor = max(N - correction, 0) in the accumulator type.
  Value nf = indexToScalar(rw, loc, n, acc);
  Value divisor = arith::MaximumFOp::create(
      rw, loc,
      arith::SubFOp::create(rw, loc, nf,
                            createScalarConstant(rw, loc, acc, *correction)),
      createScalarConstant(rw, loc, acc, 0.0));
  auto sqType = cast<RankedTensorType>(sq.getType());
  unsigned keptRank = sqType.getRank();
  AffineMap kid = rw.getMultiDimIdentityMap(keptRank);
  SmallVector<utils::IteratorType> iters(keptRank,
                                         utils::IteratorType::parallel);
  Value init =
      tensor::EmptyOp::create(rw, loc, tensor::getMixedSizes(rw, loc, sq), acc);
  Value var =
      linalg::GenericOp::create(
          rw, loc, sqType, ValueRange{sq}, ValueRange{init},
          ArrayRef<AffineMap>{kid, kid}, iters,
          [&](OpBuilder &b, Location l, ValueRange a) {
            linalg::YieldOp::create(
                b, l, arith::DivFOp::create(b, l, a[0], divisor).getResult());
          })
          .getResult(0);
  SmallVector<Value> results{
      finishReduction(rw, loc, var, *mask, *keepdim, varType)};
  if (op.getTarget() == "aten::var_mean.correction") {
    RankedTensorType meanType = getResultTensorType(op, 1);
    if (!meanType)
      return rw.notifyMatchFailure(op, "mean result is not a tensor");
    results.push_back(
        finishReduction(rw, loc, mean, *mask, *keepdim, meanType));
  }
  rw.replaceOp(op, results);
  return success();
}

/// The one dim the softmax ops (forward and backward) reduce, over a
/// rank-r operand: `mask` marks it, `acc` is the float type the result dtype
/// accumulates in, `id` reads a whole operand and `proj` one reduced over it.
struct SoftmaxDim {
  SmallVector<bool> mask;
  Type acc;
  AffineMap id, proj;
};

/// The SoftmaxDim of `dim` over a rank-`rank` operand; refuses a dim out of
/// range or a non-float result dtype.
static FailureOr<SoftmaxDim> getSoftmaxDim(CallFunctionOp op,
                                           ConversionPatternRewriter &rw,
                                           int64_t dim, int64_t rank,
                                           RankedTensorType resultType) {
  FailureOr<SmallVector<bool>> mask = getReductionMask({dim}, rank);
  Type acc = getAccumulatorType(resultType.getElementType());
  if (failed(mask) || !isa<FloatType>(acc))
    return rw.notifyMatchFailure(op, "bad dim or non-float dtype");
  return SoftmaxDim{*mask, acc, rw.getMultiDimIdentityMap(rank),
                    getProjectionMap(rw.getContext(), rank, *mask)};
}

/// Replaces softmax op `op` by its elementwise epilogue: a map over the dims
/// of `like` reading `inputs` through `maps`, `fn` giving each element in the
/// accumulator type, cast once to the dtype of `resultType`.
static LogicalResult replaceWithSoftmaxMap(
    CallFunctionOp op, ConversionPatternRewriter &rw, Value like,
    ValueRange inputs, ArrayRef<AffineMap> maps, RankedTensorType resultType,
    function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
  Type resultElem = resultType.getElementType();
  Value result =
      buildElementwiseMap(rw, op.getLoc(), like, resultElem, inputs, maps,
                          [&](OpBuilder &b, Location l, ValueRange a) {
                            return convertScalar(b, l, fn(b, l, a), resultElem);
                          });
  return replaceWithResult(rw, op, result, resultType);
}

/// aten::_softmax.default(self, int dim, bool half_to_float),
/// aten::_log_softmax.default (same arguments) and
/// aten::_safe_softmax.default(self, int dim, ScalarType? dtype): softmax,
/// but 0 along a row that is all -inf (its max is -inf), as torch's
/// definition of _safe_softmax (the math SDPA's masked rows).
static LogicalResult lowerSoftmax(CallFunctionOp op, const OpArgs &args,
                                  ConversionPatternRewriter &rw) {
  FailureOr<TensorDimArgs> in = readTensorDimArgs(op, args, rw);
  if (failed(in))
    return failure();
  auto [input, dim, resultType] = *in;
  FailureOr<SoftmaxDim> sd =
      getSoftmaxDim(op, rw, dim, input.getType().getRank(), resultType);
  if (failed(sd))
    return failure();
  bool isLog = op.getTarget() == "aten::_log_softmax.default";
  bool isSafe = op.getTarget() == "aten::_safe_softmax.default";
  Location loc = op.getLoc();
  Type acc = sd->acc;
  Value max =
      buildReductionOf<arith::MaximumFOp>(rw, loc, input, sd->mask, acc, -kInf);
  Value sum =
      buildReduction(
          rw, loc, {input, max}, {sd->id, sd->proj}, sd->mask, {acc}, {0.0},
          [&](OpBuilder &b, Location l, ValueRange in, ValueRange accs) {
            Value d = arith::SubFOp::create(
                b, l, convertScalar(b, l, in[0], acc), in[1]);
            return SmallVector<Value>{arith::AddFOp::create(
                b, l, accs[0], math::ExpOp::create(b, l, d))};
          })
          .front();
  return replaceWithSoftmaxMap(
      op, rw, input, {input, max, sum}, {sd->id, sd->proj, sd->proj},
      resultType, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value d =
            arith::SubFOp::create(b, l, convertScalar(b, l, a[0], acc), a[1]);
        if (isLog)
          return arith::SubFOp::create(b, l, d,
                                       math::LogOp::create(b, l, a[2]));
        Value p =
            arith::DivFOp::create(b, l, math::ExpOp::create(b, l, d), a[2]);
        if (!isSafe)
          return p;
        Value masked = arith::CmpFOp::create(
            b, l, arith::CmpFPredicate::OEQ, a[1],
            arith::ConstantOp::create(b, l, b.getFloatAttr(acc, -kInf)));
        Value zero = arith::ConstantOp::create(b, l, b.getFloatAttr(acc, 0.0));
        return arith::SelectOp::create(b, l, masked, zero, p);
      });
}

/// aten::_softmax_backward_data.default(grad_output, output, int dim,
/// ScalarType input_dtype): output * (grad - sum(grad * output));
/// aten::_log_softmax_backward_data.default (same arguments):
/// grad - exp(output) * sum(grad).
static LogicalResult lowerSoftmaxBackward(CallFunctionOp op, const OpArgs &args,
                                          ConversionPatternRewriter &rw) {
  FailureOr<RankedTensor> grad = args.tensor(0, "grad_output");
  FailureOr<RankedTensor> output = args.tensor(1, "output");
  FailureOr<int64_t> dim = args.getInt(2, "dim");
  RankedTensorType resultType = getResultTensorType(op, 0);
  if (failed(grad) || failed(output) || failed(dim) || !resultType)
    return rw.notifyMatchFailure(op, "expected (tensor, tensor, int, dtype)");
  FailureOr<SoftmaxDim> sd =
      getSoftmaxDim(op, rw, *dim, grad->getType().getRank(), resultType);
  if (failed(sd))
    return failure();
  bool isLog = op.getTarget() == "aten::_log_softmax_backward_data.default";
  Type acc = sd->acc;
  Value sum =
      buildReduction(
          rw, op.getLoc(), {*grad, *output}, {sd->id, sd->id}, sd->mask, {acc},
          {0.0},
          [&](OpBuilder &b, Location l, ValueRange in, ValueRange accs) {
            Value g = convertScalar(b, l, in[0], acc);
            if (!isLog)
              g = arith::MulFOp::create(b, l, g,
                                        convertScalar(b, l, in[1], acc));
            return SmallVector<Value>{arith::AddFOp::create(b, l, accs[0], g)};
          })
          .front();
  return replaceWithSoftmaxMap(
      op, rw, *grad, {*grad, *output, sum}, {sd->id, sd->id, sd->proj},
      resultType, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value g = convertScalar(b, l, a[0], acc);
        Value o = convertScalar(b, l, a[1], acc);
        if (isLog)
          return arith::SubFOp::create(
              b, l, g,
              arith::MulFOp::create(b, l, math::ExpOp::create(b, l, o), a[2]));
        return arith::MulFOp::create(b, l, o,
                                     arith::SubFOp::create(b, l, g, a[2]));
      });
}

/// aten::cumsum.default(self, int dim, *, ScalarType? dtype=None): an
/// `scf.for` over `dim` in increasing order; iteration k adds slice k to the
/// running sum (accumulator type) and stores it, cast, at position k.
static LogicalResult lowerCumsum(CallFunctionOp op, const OpArgs &args,
                                 ConversionPatternRewriter &rw) {
  FailureOr<TensorDimArgs> in = readTensorDimArgs(op, args, rw);
  if (failed(in))
    return failure();
  int64_t rank = in->self.getType().getRank();
  if (rank == 0)
    return rw.notifyMatchFailure(op, "cumsum of a 0-d tensor");
  FailureOr<int64_t> dim = normalizeDim(in->dim, rank);
  if (failed(dim))
    return rw.notifyMatchFailure(op, "dim out of range");
  // Plain locals, not structured bindings: the loop body captures them.
  RankedTensor input = in->self;
  RankedTensorType inputType = input.getType();
  Type resultElem = in->resultType.getElementType();
  Type acc = getAccumulatorType(resultElem);
  Location loc = op.getLoc();

  SmallVector<bool> dropped(rank, false);
  dropped[*dim] = true;
  SmallVector<OpFoldResult> sliceSizes = getKeptSizes(rw, loc, input, dropped);
  Value accInit = createFilledTensor(rw, loc, sliceSizes, acc, 0.0);
  Value outInit = tensor::EmptyOp::create(
      rw, loc, tensor::getMixedSizes(rw, loc, input), resultElem);
  Value lb = arith::ConstantIndexOp::create(rw, loc, 0);
  Value ub = getValueOrCreateConstantIndexOp(
      rw, loc, tensor::getMixedSize(rw, loc, input, *dim));
  Value step = arith::ConstantIndexOp::create(rw, loc, 1);
  auto loop = scf::ForOp::create(
      rw, loc, lb, ub, step, ValueRange{accInit, outInit},
      [&](OpBuilder &b, Location l, Value k, ValueRange iter) {
        SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
        SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, l, input);
        SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
        offsets[*dim] = k;
        sizes[*dim] = b.getIndexAttr(1);
        auto sliceType = cast<RankedTensorType>(iter[0].getType());
        auto inSliceType = RankedTensorType::get(sliceType.getShape(),
                                                 inputType.getElementType());
        Value slice = tensor::ExtractSliceOp::create(b, l, inSliceType, input,
                                                     offsets, sizes, strides);
        unsigned sliceRank = sliceType.getRank();
        AffineMap id = b.getMultiDimIdentityMap(sliceRank);
        SmallVector<utils::IteratorType> iters(sliceRank,
                                               utils::IteratorType::parallel);
        Value next =
            linalg::GenericOp::create(
                b, l, sliceType, ValueRange{slice}, ValueRange{iter[0]},
                ArrayRef<AffineMap>{id, id}, iters,
                [&](OpBuilder &nb, Location nl, ValueRange a) {
                  linalg::YieldOp::create(
                      nb, nl,
                      addValues(nb, nl, a[1],
                                convertScalar(nb, nl, a[0], acc)));
                })
                .getResult(0);
        Value stored = convertElements(b, l, next, resultElem);
        Value out = tensor::InsertSliceOp::create(b, l, stored, iter[1],
                                                  offsets, sizes, strides);
        scf::YieldOp::create(b, l, ValueRange{next, out});
      });
  return replaceWithResult(rw, op, loop.getResult(1), in->resultType);
}

/// (self, target, weight, reduction, ignore_index) of the nll_loss ops; 1-D
/// `self` is treated as one row. `targetElem` is the target's integer type.
struct NllArgs {
  Value self, target;
  Type targetElem;
  /// The float type the loss is computed in (getAccumulatorType of the
  /// result's element type).
  FloatType acc;
  int64_t reduction = 1, ignoreIndex = -100;
  bool oneRow = false;
};

/// Reads NllArgs starting at argument `first` for a result of element type
/// `resultElem`; refuses class weights, an unknown reduction, other shapes, a
/// non-integer target and a non-float result.
static FailureOr<NllArgs> readNllArgs(CallFunctionOp op,
                                      ConversionPatternRewriter &rw,
                                      const OpArgs &args, unsigned first,
                                      Type resultElem) {
  Location loc = op.getLoc();
  NllArgs r;
  r.acc = dyn_cast<FloatType>(getAccumulatorType(resultElem));
  if (!r.acc)
    return rw.notifyMatchFailure(op, "non-float result dtype");
  FailureOr<RankedTensor> self = args.tensor(first, "self");
  FailureOr<RankedTensor> target = args.tensor(first + 1, "target");
  FailureOr<int64_t> reduction = args.getInt(first + 3, "reduction");
  FailureOr<int64_t> ignore = args.getInt(first + 4, "ignore_index");
  if (failed(self) || failed(target) || failed(reduction) || failed(ignore))
    return rw.notifyMatchFailure(
        op, "expected (self, target, weight, int reduction, int ignore_index)");
  if (!args.isNone(first + 2, "weight"))
    return rw.notifyMatchFailure(
        op, "class weights are not supported (weight must be None)");
  if (*reduction < 0 || *reduction > 2)
    return rw.notifyMatchFailure(op, "unknown reduction");
  r.self = *self;
  r.target = *target;
  r.reduction = *reduction;
  r.ignoreIndex = *ignore;
  RankedTensorType selfType = self->getType();
  RankedTensorType targetType = target->getType();
  if (selfType.getRank() == 1 && targetType.getRank() == 0) {
    r.oneRow = true;
    r.self = tensor::ExpandShapeOp::create(
        rw, loc,
        RankedTensorType::get({1, selfType.getDimSize(0)},
                              selfType.getElementType()),
        r.self, ArrayRef<ReassociationIndices>{{0, 1}},
        ArrayRef<OpFoldResult>{rw.getIndexAttr(1),
                               tensor::getMixedSize(rw, loc, r.self, 0)});
    r.target = tensor::ExpandShapeOp::create(
        rw, loc, RankedTensorType::get({1}, targetType.getElementType()),
        r.target, ArrayRef<ReassociationIndices>{},
        ArrayRef<OpFoldResult>{rw.getIndexAttr(1)});
  } else if (selfType.getRank() != 2 || targetType.getRank() != 1) {
    return rw.notifyMatchFailure(
        op, "expected self [N, C] with target [N], or self [C] with target []");
  }
  r.targetElem = targetType.getElementType();
  if (!isa<IntegerType>(r.targetElem))
    return rw.notifyMatchFailure(op, "target must be an integer tensor");
  return r;
}

/// `t != ignore_index` for target value `t`: the rows nll_loss counts.
static Value isCounted(OpBuilder &b, Location l, const NllArgs &nll, Value t) {
  return arith::CmpIOp::create(
      b, l, arith::CmpIPredicate::ne, t,
      createScalarConstant(b, l, nll.targetElem, nll.ignoreIndex));
}

/// -self[n, t] (0 when t == ignore_index) for target value `t`, in `acc`.
static Value gatherNegLogProb(OpBuilder &b, Location l, Value self, Value n,
                              Value t, Value valid, Type acc) {
  Value zero = createScalarConstant(b, l, t.getType(), 0.0);
  Value safe = arith::SelectOp::create(b, l, valid, t, zero);
  Value c = arith::IndexCastOp::create(b, l, b.getIndexType(), safe);
  Value x = tensor::ExtractOp::create(b, l, self, ValueRange{n, c});
  Value neg = arith::NegFOp::create(b, l, convertScalar(b, l, x, acc));
  return arith::SelectOp::create(b, l, valid, neg,
                                 createScalarConstant(b, l, acc, 0.0));
}

/// aten::nll_loss_forward.default(self, target, weight, int reduction,
/// int ignore_index) -> (output, total_weight).
static LogicalResult lowerNllLossForward(CallFunctionOp op, const OpArgs &args,
                                         ConversionPatternRewriter &rw) {
  Location loc = op.getLoc();
  RankedTensorType outType = getResultTensorType(op, 0);
  RankedTensorType twType = getResultTensorType(op, 1);
  if (!outType || !twType)
    return rw.notifyMatchFailure(op, "results must be ranked tensors");
  FailureOr<NllArgs> nll =
      readNllArgs(op, rw, args, 0, outType.getElementType());
  if (failed(nll))
    return failure();
  Type acc = nll->acc;
  Value self = nll->self;
  AffineMap id = rw.getMultiDimIdentityMap(1);

  if (nll->reduction == 0) {
    Value out = buildElementwiseMap(
        rw, loc, nll->target, acc, {nll->target}, {id},
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value n = linalg::IndexOp::create(b, l, 0);
          Value valid = isCounted(b, l, *nll, a[0]);
          return gatherNegLogProb(b, l, self, n, a[0], valid, acc);
        });
    out = convertElements(rw, loc, out, outType.getElementType());
    if (nll->oneRow)
      out = tensor::CollapseShapeOp::create(
          rw, loc, RankedTensorType::get({}, outType.getElementType()), out,
          ArrayRef<ReassociationIndices>{});
    Value tw = createFilledTensor(rw, loc, {}, twType.getElementType(), 0.0);
    rw.replaceOp(op, {castToType(rw, loc, out, outType),
                      castToType(rw, loc, tw, twType)});
    return success();
  }

  // One reduction over n: the summed loss and the number of counted rows.
  SmallVector<Value> sums = buildReduction(
      rw, loc, {nll->target}, {id}, {true}, {acc, acc}, {0.0, 0.0},
      [&](OpBuilder &b, Location l, ValueRange in, ValueRange accs) {
        Value n = linalg::IndexOp::create(b, l, 0);
        Value valid = isCounted(b, l, *nll, in[0]);
        Value loss = gatherNegLogProb(b, l, self, n, in[0], valid, acc);
        Value one = arith::SelectOp::create(
            b, l, valid, createScalarConstant(b, l, acc, 1.0),
            createScalarConstant(b, l, acc, 0.0));
        return SmallVector<Value>{arith::AddFOp::create(b, l, accs[0], loss),
                                  arith::AddFOp::create(b, l, accs[1], one)};
      });
  Value loss = sums[0];
  if (nll->reduction == 1) {
    AffineMap scalarMap = AffineMap::get(0, 0, rw.getContext());
    loss = buildElementwiseMap(
        rw, loc, sums[0], acc, {sums[0], sums[1]}, {scalarMap, scalarMap},
        [&](OpBuilder &b, Location l, ValueRange a) {
          return arith::DivFOp::create(b, l, a[0], a[1]).getResult();
        });
  }
  rw.replaceOp(op, {finishResult(rw, loc, loss, outType),
                    finishResult(rw, loc, sums[1], twType)});
  return success();
}

/// aten::nll_loss_backward.default(grad_output, self, target, weight,
/// int reduction, int ignore_index, total_weight): grad_input[n, c] =
/// -g(n) where c == target[n] != ignore_index, else 0; g is grad_output
/// (sum), grad_output / total_weight (mean) or grad_output[n] (none).
static LogicalResult lowerNllLossBackward(CallFunctionOp op, const OpArgs &args,
                                          ConversionPatternRewriter &rw) {
  Location loc = op.getLoc();
  RankedTensorType resultType = getResultTensorType(op, 0);
  FailureOr<RankedTensor> gradOut = args.tensor(0, "grad_output");
  FailureOr<RankedTensor> totalWeight = args.tensor(6, "total_weight");
  if (!resultType || failed(gradOut) || failed(totalWeight))
    return rw.notifyMatchFailure(op, "expected tensor operands");
  RankedTensorType gradType = gradOut->getType();
  FailureOr<NllArgs> nll =
      readNllArgs(op, rw, args, 1, resultType.getElementType());
  if (failed(nll))
    return failure();
  Type acc = nll->acc;

  // The per-row upstream gradient.
  Value scale;
  Value grad = *gradOut;
  if (nll->reduction != 0) {
    if (gradType.getRank() != 0)
      return rw.notifyMatchFailure(op, "reduced loss grad must be 0-d");
    scale =
        convertScalar(rw, loc, tensor::ExtractOp::create(rw, loc, grad), acc);
    if (nll->reduction == 1) {
      Value tw = convertScalar(
          rw, loc, tensor::ExtractOp::create(rw, loc, *totalWeight), acc);
      scale = arith::DivFOp::create(rw, loc, scale, tw);
    }
  } else if (nll->oneRow) {
    grad = tensor::ExpandShapeOp::create(
        rw, loc, RankedTensorType::get({1}, gradType.getElementType()), grad,
        ArrayRef<ReassociationIndices>{},
        ArrayRef<OpFoldResult>{rw.getIndexAttr(1)});
  }

  MLIRContext *ctx = rw.getContext();
  AffineMap rowMap = AffineMap::get(2, 0, {getAffineDimExpr(0, ctx)}, ctx);
  SmallVector<Value> inputs{nll->target};
  SmallVector<AffineMap> maps{rowMap};
  if (!scale) {
    inputs.push_back(grad);
    maps.push_back(rowMap);
  }
  Type resultElem = resultType.getElementType();
  Value result = buildElementwiseMap(
      rw, loc, nll->self, resultElem, inputs, maps,
      [&](OpBuilder &b, Location l, ValueRange a) {
        Value c = linalg::IndexOp::create(b, l, 1);
        Value cI = arith::IndexCastOp::create(b, l, nll->targetElem, c);
        Value hit = arith::AndIOp::create(
            b, l,
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, a[0], cI),
            isCounted(b, l, *nll, a[0]));
        Value g = scale ? scale : convertScalar(b, l, a[1], acc);
        Value v =
            arith::SelectOp::create(b, l, hit, arith::NegFOp::create(b, l, g),
                                    createScalarConstant(b, l, acc, 0.0));
        return convertScalar(b, l, v, resultElem);
      });
  if (nll->oneRow)
    result = tensor::CollapseShapeOp::create(
        rw, loc,
        RankedTensorType::get(
            {cast<RankedTensorType>(result.getType()).getDimSize(1)},
            resultElem),
        result, ArrayRef<ReassociationIndices>{{0, 1}});
  return replaceWithResult(rw, op, result, resultType);
}

/// aten::max.dim / aten::min.dim (self, int dim, bool keepdim=False) ->
/// (values, indices) and aten::argmax / aten::argmin (self, int? dim=None,
/// bool keepdim=False) -> indices (None: over the flattened tensor). As
/// torch: NaN wins (the first NaN's index), ties give the first index. The
/// combine compares indices too, so it does not depend on the order in
/// which a tiled or vectorized reduction visits the elements.
static LogicalResult lowerArgReduce(CallFunctionOp op, const OpArgs &args,
                                    ConversionPatternRewriter &rw) {
  StringRef target = op.getTarget();
  FailureOr<ReductionOperand> operand = readReductionOperand(op, args, rw);
  if (failed(operand))
    return failure();
  RankedTensor input = operand->input;
  int64_t rank = input.getType().getRank();
  bool withValues = target.ends_with(".dim");
  bool isMax =
      target.starts_with("aten::max") || target.starts_with("aten::argmax");
  FailureOr<SmallVector<bool>> mask = getDimsArg(args, 1, rank);
  FailureOr<bool> keepdim = args.getBool(2, "keepdim", false);
  if (failed(mask) || failed(keepdim))
    return rw.notifyMatchFailure(op, "dim/keepdim must be constants");
  bool flat = args.isNone(1, "dim");
  if (withValues && flat)
    return rw.notifyMatchFailure(op, "max.dim/min.dim need a dim");
  RankedTensorType indexType = getResultTensorType(op, withValues ? 1 : 0);
  if (!indexType || !indexType.getElementType().isInteger(64))
    return rw.notifyMatchFailure(op, "expects int64 indices");
  Type elem = input.getType().getElementType();
  bool isFloat = isa<FloatType>(elem);
  if (!isFloat && !elem.isInteger(64) && !elem.isInteger(32))
    return rw.notifyMatchFailure(op, "unsupported dtype");
  Location loc = op.getLoc();
  double init = isFloat
                    ? (isMax ? -kInf : kInf)
                    : static_cast<double>(
                          elem.isInteger(64)
                              ? (isMax ? std::numeric_limits<int64_t>::min()
                                       : std::numeric_limits<int64_t>::max())
                              : (isMax ? std::numeric_limits<int32_t>::min()
                                       : std::numeric_limits<int32_t>::max()));
  // "Nothing taken yet": larger than any index.
  double noIndex = static_cast<double>(int64_t(1) << 62);
  Type i64 = rw.getI64Type();
  AffineMap id = rw.getMultiDimIdentityMap(rank);
  SmallVector<bool> reducedDims = *mask;
  Value src = input;
  SmallVector<Value> reduced = buildReduction(
      rw, loc, {input}, {id}, *mask, {elem, i64}, {init, noIndex},
      [&](OpBuilder &b, Location l, ValueRange in, ValueRange accs) {
        // The element's index along the reduced dims (row-major).
        Value idx = arith::ConstantIntOp::create(b, l, i64, 0);
        for (int64_t d = 0; d < rank; ++d) {
          if (!reducedDims[d])
            continue;
          Value size = arith::IndexCastOp::create(
              b, l, i64, tensor::DimOp::create(b, l, src, d));
          Value at = arith::IndexCastOp::create(
              b, l, i64, linalg::IndexOp::create(b, l, d));
          idx = arith::AddIOp::create(
              b, l, arith::MulIOp::create(b, l, idx, size), at);
        }
        Value x = in[0], acc = accs[0];
        Value better, same;
        if (isFloat) {
          Value xNan =
              arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, x, x);
          Value aNan =
              arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, acc, acc);
          Value notANan = arith::XOrIOp::create(
              b, l, aNan, arith::ConstantIntOp::create(b, l, 1, 1));
          better = arith::OrIOp::create(
              b, l,
              arith::CmpFOp::create(b, l,
                                    isMax ? arith::CmpFPredicate::OGT
                                          : arith::CmpFPredicate::OLT,
                                    x, acc),
              arith::AndIOp::create(b, l, xNan, notANan));
          same = arith::OrIOp::create(
              b, l,
              arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, x, acc),
              arith::AndIOp::create(b, l, xNan, aNan));
        } else {
          better = arith::CmpIOp::create(b, l,
                                         isMax ? arith::CmpIPredicate::sgt
                                               : arith::CmpIPredicate::slt,
                                         x, acc);
          same = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, x, acc);
        }
        Value earlier = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                              idx, accs[1]);
        // Nothing taken yet: the initial value (which for int64 minimum
        // cannot be written as a double) never competes.
        Value none = arith::CmpIOp::create(
            b, l, arith::CmpIPredicate::eq, accs[1],
            arith::ConstantIntOp::create(b, l, i64, int64_t(1) << 62));
        Value take =
            arith::OrIOp::create(b, l, arith::OrIOp::create(b, l, better, none),
                                 arith::AndIOp::create(b, l, same, earlier));
        return SmallVector<Value>{
            arith::SelectOp::create(b, l, take, x, acc),
            arith::SelectOp::create(b, l, take, idx, accs[1])};
      });
  Value indices =
      finishReduction(rw, loc, reduced[1], *mask, *keepdim, indexType);
  if (!withValues) {
    rw.replaceOp(op, indices);
    return success();
  }
  rw.replaceOp(op, {finishReduction(rw, loc, reduced[0], *mask, *keepdim,
                                    operand->resultType),
                    indices});
  return success();
}

} // namespace

void mlir::joint::populateReductionPatterns(const TypeConverter &typeConverter,
                                            RewritePatternSet &patterns) {
  LoweringTable table(typeConverter, patterns);
  table.add({"aten::sum.dim_IntList", "aten::sum.default", "aten::mean.dim",
             "aten::mean.default", "aten::amax.default"},
            lowerReduce);
  table.add({"aten::var.correction", "aten::var_mean.correction"}, lowerVar);
  table.add({"aten::_softmax.default", "aten::_log_softmax.default",
             "aten::_safe_softmax.default"},
            lowerSoftmax);
  table.add({"aten::_softmax_backward_data.default",
             "aten::_log_softmax_backward_data.default"},
            lowerSoftmaxBackward);
  table.add({"aten::cumsum.default"}, lowerCumsum);
  table.add({"aten::max.dim", "aten::min.dim", "aten::argmax.default",
             "aten::argmin.default"},
            lowerArgReduce);
  table.add({"aten::nll_loss_forward.default"}, lowerNllLossForward);
  table.add({"aten::nll_loss_backward.default"}, lowerNllLossBackward);
}

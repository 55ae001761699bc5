//===- Normalization.cpp - Layer norm forward/backward to linalg ----------===//
//-*-===//
//
// `aten::native_layer_norm` and `aten::native_layer_norm_backward` over the
// trailing `normalized_shape` dims, computed in torch's CPU accumulation type
// (f32 for bf16/f16) and cast once. Forward: mean = sum(x) / M, rstd =
// rsqrt(sum((x - mean)^2) / M + eps) (biased variance), out = (x - mean) *
// rstd * w + b; mean/rstd keep unit normalized dims. Backward (torch's
// formula): with xhat = (x - mean) * rstd and g = dy * w,
// dx = rstd / M * (M * g - sum(g) - xhat * sum(g * xhat)),
// dw = sum_outer(dy * xhat), db = sum_outer(dy); results not requested by
// `output_mask` are dropped (they must be unused).
//
//===----------------------------------------------------------------------===//

#include "UtilsOps.h"
#include "joint/Conversion/JointToLinalg/JointToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::joint;
using namespace mlir::joint::lowering;

namespace {

/// Map of a keepdim statistic ([outer..., 1...]) read over all `rank` loops.
static AffineMap getStatMap(MLIRContext *ctx, unsigned rank, unsigned axis) {
  SmallVector<AffineExpr> exprs;
  for (unsigned i = 0; i < rank; ++i)
    exprs.push_back(i < axis ? getAffineDimExpr(i, ctx)
                             : getAffineConstantExpr(0, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

/// Map of weight/bias ([normalized...]) read over all `rank` loops.
static AffineMap getParamMap(MLIRContext *ctx, unsigned rank, unsigned axis) {
  SmallVector<AffineExpr> exprs;
  for (unsigned i = axis; i < rank; ++i)
    exprs.push_back(getAffineDimExpr(i, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

/// Elementwise generic with `numOutputs` results shaped like `like`.
static SmallVector<Value> buildElementwise(
    OpBuilder &b, Location loc, Value like, ArrayRef<Type> elems,
    ValueRange inputs, ArrayRef<AffineMap> maps,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)> fn) {
  unsigned rank = cast<RankedTensorType>(like.getType()).getRank();
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, like);
  SmallVector<Value> inits;
  SmallVector<Type> types;
  for (Type e : elems) {
    inits.push_back(tensor::EmptyOp::create(b, loc, sizes, e));
    types.push_back(inits.back().getType());
  }
  SmallVector<AffineMap> allMaps(maps);
  allMaps.append(elems.size(), b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  unsigned numInputs = inputs.size();
  auto generic = linalg::GenericOp::create(
      b, loc, types, inputs, inits, allMaps, iters,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        linalg::YieldOp::create(nb, nl, fn(nb, nl, a.take_front(numInputs)));
      });
  return SmallVector<Value>(generic.getResults());
}

/// aten::native_layer_norm.default(input, SymInt[] normalized_shape,
/// Tensor? weight, Tensor? bias, float eps) -> (out, mean, rstd).
static LogicalResult lowerLayerNorm(CallFunctionOp op, const OpArgs &args,
                                    ConversionPatternRewriter &rw) {
  FailureOr<RankedTensor> input = args.tensor(0, "input");
  FailureOr<SmallVector<int64_t>> normShape =
      args.getIntList(1, "normalized_shape");
  FailureOr<double> eps = args.getFloat(4, "eps");
  SmallVector<RankedTensorType> types;
  for (unsigned i = 0; i < 3; ++i)
    types.push_back(getResultTensorType(op, i));
  if (failed(input) || failed(normShape) || failed(eps) ||
      llvm::is_contained(types, RankedTensorType()))
    return rw.notifyMatchFailure(
        op, "expected (tensor, int[] normalized_shape, weight?, bias?, "
            "float eps) and three tensor results");
  int64_t rank = input->getType().getRank();
  int64_t numNorm = normShape->size();
  if (numNorm == 0 || numNorm > rank)
    return rw.notifyMatchFailure(op, "normalized_shape longer than input");
  FailureOr<RankedTensor> weight = args.tensor(2, "weight");
  FailureOr<RankedTensor> bias = args.tensor(3, "bias");
  if ((failed(weight) && !args.isNone(2, "weight")) ||
      (failed(bias) && !args.isNone(3, "bias")))
    return rw.notifyMatchFailure(op, "weight/bias must be tensors or None");
  Type acc = getAccumulatorType(types[0].getElementType());
  if (!isa<FloatType>(acc))
    return rw.notifyMatchFailure(op, "non-float dtype");

  Location loc = op.getLoc();
  MLIRContext *ctx = rw.getContext();
  unsigned axis = rank - numNorm;
  SmallVector<bool> mask(rank, false);
  for (unsigned i = axis; i < rank; ++i)
    mask[i] = true;
  AffineMap id = rw.getMultiDimIdentityMap(rank);
  AffineMap proj = getProjectionMap(ctx, rank, mask);
  Value m = getNumElements(rw, loc, *input, mask);
  Value mf = indexToScalar(rw, loc, m, acc);
  Value sum = buildReductionOf<arith::AddFOp>(rw, loc, *input, mask, acc, 0.0);
  // mean = sum / M, as its own tensor (read by the variance pass).
  Value mean =
      buildElementwise(
          rw, loc, sum, {acc}, {sum}, {rw.getMultiDimIdentityMap(axis)},
          [&](OpBuilder &b, Location l, ValueRange a) {
            return SmallVector<Value>{arith::DivFOp::create(b, l, a[0], mf)};
          })
          .front();
  Value sq = buildReduction(
                 rw, loc, {*input, mean}, {id, proj}, mask, {acc}, {0.0},
                 [&](OpBuilder &b, Location l, ValueRange in, ValueRange accs) {
                   Value d = arith::SubFOp::create(
                       b, l, convertScalar(b, l, in[0], acc), in[1]);
                   return SmallVector<Value>{arith::AddFOp::create(
                       b, l, accs[0], arith::MulFOp::create(b, l, d, d))};
                 })
                 .front();
  Value epsV = createScalarConstant(rw, loc, acc, *eps);
  Value rstd = buildElementwise(
                   rw, loc, sq, {acc}, {sq}, {rw.getMultiDimIdentityMap(axis)},
                   [&](OpBuilder &b, Location l, ValueRange a) {
                     Value var = arith::DivFOp::create(b, l, a[0], mf);
                     return SmallVector<Value>{math::RsqrtOp::create(
                         b, l, arith::AddFOp::create(b, l, var, epsV))};
                   })
                   .front();
  SmallVector<Value> inputs{*input, mean, rstd};
  SmallVector<AffineMap> maps{id, proj, proj};
  bool hasW = succeeded(weight), hasB = succeeded(bias);
  if (hasW) {
    inputs.push_back(*weight);
    maps.push_back(getParamMap(ctx, rank, axis));
  }
  if (hasB) {
    inputs.push_back(*bias);
    maps.push_back(getParamMap(ctx, rank, axis));
  }
  Type outElem = types[0].getElementType();
  Value out =
      buildElementwise(
          rw, loc, *input, {outElem}, inputs, maps,
          [&](OpBuilder &b, Location l, ValueRange a) {
            Value v = arith::MulFOp::create(
                b, l,
                arith::SubFOp::create(b, l, convertScalar(b, l, a[0], acc),
                                      a[1]),
                a[2]);
            unsigned next = 3;
            if (hasW)
              v = arith::MulFOp::create(b, l, v,
                                        convertScalar(b, l, a[next++], acc));
            if (hasB)
              v = arith::AddFOp::create(b, l, v,
                                        convertScalar(b, l, a[next++], acc));
            return SmallVector<Value>{convertScalar(b, l, v, outElem)};
          })
          .front();
  Value meanOut = convertElements(rw, loc, mean, types[1].getElementType());
  Value rstdOut = convertElements(rw, loc, rstd, types[2].getElementType());
  rw.replaceOp(
      op,
      {castToType(rw, loc, out, types[0]),
       castToType(rw, loc, insertUnitDims(rw, loc, meanOut, mask), types[1]),
       castToType(rw, loc, insertUnitDims(rw, loc, rstdOut, mask), types[2])});
  return success();
}

/// aten::native_layer_norm_backward.default(grad_out, input,
/// SymInt[] normalized_shape, mean, rstd, Tensor? weight, Tensor? bias,
/// bool[3] output_mask) -> (grad_input, grad_weight, grad_bias).
static LogicalResult lowerLayerNormBackward(CallFunctionOp op,
                                            const OpArgs &args,
                                            ConversionPatternRewriter &rw) {
  FailureOr<RankedTensor> dy = args.tensor(0, "grad_out");
  FailureOr<RankedTensor> input = args.tensor(1, "input");
  FailureOr<SmallVector<int64_t>> normShape =
      args.getIntList(2, "normalized_shape");
  FailureOr<RankedTensor> mean = args.tensor(3, "mean");
  FailureOr<RankedTensor> rstd = args.tensor(4, "rstd");
  FailureOr<RankedTensor> weight = args.tensor(5, "weight");
  FailureOr<SmallVector<bool>> outMask = args.getBoolList(7, "output_mask");
  if (failed(dy) || failed(input) || failed(normShape) || failed(mean) ||
      failed(rstd) || failed(outMask) || outMask->size() != 3)
    return rw.notifyMatchFailure(op, "unexpected arguments");
  if (failed(weight) && !args.isNone(5, "weight"))
    return rw.notifyMatchFailure(op, "weight must be a tensor or None");
  if (op->getNumResults() != 3)
    return rw.notifyMatchFailure(op, "expected three results");
  SmallVector<RankedTensorType> types;
  for (unsigned i = 0; i < 3; ++i) {
    types.push_back(getResultTensorType(op, i));
    if ((*outMask)[i] && !types.back())
      return rw.notifyMatchFailure(op, "requested result is not a tensor");
    if (!(*outMask)[i] && !op->getResult(i).use_empty())
      return rw.notifyMatchFailure(op, "result not in output_mask is used");
  }
  int64_t rank = input->getType().getRank();
  int64_t numNorm = normShape->size();
  if (numNorm == 0 || numNorm > rank)
    return rw.notifyMatchFailure(op, "normalized_shape longer than input");
  Type elem = input->getType().getElementType();
  Type acc = getAccumulatorType(elem);
  if (!isa<FloatType>(acc))
    return rw.notifyMatchFailure(op, "non-float dtype");

  Location loc = op.getLoc();
  MLIRContext *ctx = rw.getContext();
  unsigned axis = rank - numNorm;
  SmallVector<bool> inner(rank, false), outer(rank, false);
  for (unsigned i = 0; i < rank; ++i)
    (i < axis ? outer : inner)[i] = true;
  AffineMap id = rw.getMultiDimIdentityMap(rank);
  AffineMap stat = getStatMap(ctx, rank, axis);
  AffineMap param = getParamMap(ctx, rank, axis);
  bool hasW = succeeded(weight);
  auto load = [&](OpBuilder &b, Location l, Value v) {
    return convertScalar(b, l, v, acc);
  };
  // xhat and g from (dy, x, mean, rstd[, w]).
  auto xhatAndG = [&](OpBuilder &b, Location l, ValueRange in) {
    Value xhat = arith::MulFOp::create(
        b, l, arith::SubFOp::create(b, l, load(b, l, in[1]), load(b, l, in[2])),
        load(b, l, in[3]));
    Value g = load(b, l, in[0]);
    if (hasW)
      g = arith::MulFOp::create(b, l, g, load(b, l, in[4]));
    return std::make_pair(xhat, g);
  };
  SmallVector<Value> inputs{*dy, *input, *mean, *rstd};
  SmallVector<AffineMap> maps{id, id, stat, stat};
  if (hasW) {
    inputs.push_back(*weight);
    maps.push_back(param);
  }
  SmallVector<Value> results(3);
  if ((*outMask)[0]) {
    SmallVector<Value> sums = buildReduction(
        rw, loc, inputs, maps, inner, {acc, acc}, {0.0, 0.0},
        [&](OpBuilder &b, Location l, ValueRange in, ValueRange accs) {
          auto [xhat, g] = xhatAndG(b, l, in);
          return SmallVector<Value>{
              arith::AddFOp::create(b, l, accs[0], g),
              arith::AddFOp::create(b, l, accs[1],
                                    arith::MulFOp::create(b, l, g, xhat))};
        });
    Value mf =
        indexToScalar(rw, loc, getNumElements(rw, loc, *input, inner), acc);
    SmallVector<Value> dxInputs(inputs);
    SmallVector<AffineMap> dxMaps(maps);
    AffineMap proj = getProjectionMap(ctx, rank, inner);
    dxInputs.append({sums[0], sums[1]});
    dxMaps.append({proj, proj});
    unsigned numIn = inputs.size();
    Type dxElem = types[0].getElementType();
    Value dx =
        buildElementwise(
            rw, loc, *input, {dxElem}, dxInputs, dxMaps,
            [&](OpBuilder &b, Location l, ValueRange a) {
              auto [xhat, g] = xhatAndG(b, l, a);
              Value t = arith::SubFOp::create(
                  b, l,
                  arith::SubFOp::create(
                      b, l, arith::MulFOp::create(b, l, mf, g), a[numIn]),
                  arith::MulFOp::create(b, l, xhat, a[numIn + 1]));
              Value scale = arith::DivFOp::create(b, l, load(b, l, a[3]), mf);
              return SmallVector<Value>{convertScalar(
                  b, l, arith::MulFOp::create(b, l, scale, t), dxElem)};
            })
            .front();
    results[0] = castToType(rw, loc, dx, types[0]);
  }
  if ((*outMask)[1] || (*outMask)[2]) {
    // Reduce over the outer dims, iterating with the normalized dims first
    // so the kept sizes come out as [normalized...].
    SmallVector<Value> sums = buildReduction(
        rw, loc, inputs, maps, outer, {acc, acc}, {0.0, 0.0},
        [&](OpBuilder &b, Location l, ValueRange in, ValueRange accs) {
          auto [xhat, g] = xhatAndG(b, l, in);
          Value d = load(b, l, in[0]);
          return SmallVector<Value>{
              arith::AddFOp::create(b, l, accs[0],
                                    arith::MulFOp::create(b, l, d, xhat)),
              arith::AddFOp::create(b, l, accs[1], d)};
        });
    if ((*outMask)[1]) {
      if (!types[1])
        return rw.notifyMatchFailure(op, "grad_weight is not a tensor");
      results[1] = finishResult(rw, loc, sums[0], types[1]);
    }
    if ((*outMask)[2])
      results[2] = finishResult(rw, loc, sums[1], types[2]);
  }
  rw.replaceOp(op, results);
  return success();
}

} // namespace

void mlir::joint::populateNormalizationPatterns(
    const TypeConverter &typeConverter, RewritePatternSet &patterns) {
  LoweringTable table(typeConverter, patterns);
  table.add({"aten::native_layer_norm.default"}, lowerLayerNorm);
  table.add({"aten::native_layer_norm_backward.default"},
            lowerLayerNormBackward);
}

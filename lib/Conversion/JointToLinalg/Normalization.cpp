//===- Normalization.cpp - Layer and group norm and backwards to linalg ---===//
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
// `aten::native_group_norm` and its backward over a static input [N, C, *]
// viewed as [N, G, C/G, HxW], following torch's CPU kernels
// (group_norm_kernel.cpp) in the same accumulation type: mean and rstd =
// 1 / sqrt(var + eps) per (n, g) over M = C/G * HxW elements (biased
// variance, two passes), out = x * scale + bias with scale = rstd * w[c],
// bias = b[c] - scale * mean (out = (x - mean) * rstd without weight and
// bias). Backward: ds = sum_hw(dy * x), db = sum_hw(dy) per (n, c); with
// sums over the group of ds * w and db * w, c2 = (db_g * mean - ds_g) *
// rstd^3 / M, c3 = -c2 * mean - db_g * rstd / M, dx = rstd * w * dy + c2 * x
// + c3; dw = sum_n((ds - db * mean) * rstd), db = sum_n(db).
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

/// `t` (static [N, C, *]) viewed as [N, G, C / G, HxW].
static Value toGroups(OpBuilder &b, Location loc, Value t, int64_t groups) {
  auto type = cast<RankedTensorType>(t.getType());
  ArrayRef<int64_t> shape = type.getShape();
  int64_t hw = 1;
  for (int64_t s : shape.drop_front(2))
    hw *= s;
  SmallVector<int64_t> grouped{shape[0], groups, shape[1] / groups, hw};
  Type elem = type.getElementType();
  if (type.getRank() == 2)
    return tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(grouped, elem), t,
        ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}});
  if (type.getRank() > 3) {
    ReassociationIndices spatial;
    for (int64_t i = 2; i < type.getRank(); ++i)
      spatial.push_back(i);
    t = tensor::CollapseShapeOp::create(
        b, loc, t, ArrayRef<ReassociationIndices>{{0}, {1}, spatial});
  }
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(grouped, elem), t,
      ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}});
}

/// `t` [N, G, C / G, HxW] back to the static shape of `type` ([N, C, *]).
static Value fromGroups(OpBuilder &b, Location loc, Value t,
                        RankedTensorType type) {
  if (type.getRank() == 2)
    return tensor::CollapseShapeOp::create(
        b, loc, t, ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}});
  t = tensor::CollapseShapeOp::create(
      b, loc, t, ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}});
  if (type.getRank() == 3)
    return t;
  ReassociationIndices spatial;
  for (int64_t i = 2; i < type.getRank(); ++i)
    spatial.push_back(i);
  return tensor::ExpandShapeOp::create(
      b, loc,
      RankedTensorType::get(
          type.getShape(),
          cast<RankedTensorType>(t.getType()).getElementType()),
      t, ArrayRef<ReassociationIndices>{{0}, {1}, spatial});
}

/// A per-channel [C] tensor viewed as [G, C / G].
static Value channelsToGroups(OpBuilder &b, Location loc, Value t,
                              int64_t groups) {
  auto type = cast<RankedTensorType>(t.getType());
  int64_t c = type.getDimSize(0);
  return tensor::ExpandShapeOp::create(
      b, loc,
      RankedTensorType::get({groups, c / groups}, type.getElementType()), t,
      ArrayRef<ReassociationIndices>{{0, 1}});
}

/// Checks the static [N, C, *] `input` against N, C, HxW and group (schema
/// arguments `first`..`first + 3`); sets `groups`.
static LogicalResult readGroupNormSizes(CallFunctionOp op, const OpArgs &args,
                                        RankedTensor input, unsigned first,
                                        int64_t &groups,
                                        ConversionPatternRewriter &rw) {
  RankedTensorType type = input.getType();
  if (type.getRank() < 2 || !type.hasStaticShape())
    return rw.notifyMatchFailure(
        op, "expects a static [N, C, *] input (dynamic shapes are not "
            "lowered)");
  if (!isa<FloatType>(type.getElementType()))
    return rw.notifyMatchFailure(op, "non-float dtype");
  FailureOr<int64_t> n = args.getInt(first, "N");
  FailureOr<int64_t> c = args.getInt(first + 1, "C");
  FailureOr<int64_t> hw = args.getInt(first + 2, "HxW");
  FailureOr<int64_t> g = args.getInt(first + 3, "group");
  if (failed(n) || failed(c) || failed(hw) || failed(g))
    return rw.notifyMatchFailure(op, "N, C, HxW and group must be constant");
  int64_t size = 1;
  for (int64_t s : type.getShape().drop_front(2))
    size *= s;
  if (*n != type.getDimSize(0) || *c != type.getDimSize(1) || *hw != size)
    return rw.notifyMatchFailure(op, "N, C, HxW differ from the input shape");
  if (*g < 1 || *c % *g != 0)
    return rw.notifyMatchFailure(op, "C must be a multiple of group");
  groups = *g;
  return success();
}

/// aten::native_group_norm.default(input, Tensor? weight, Tensor? bias,
/// SymInt N, SymInt C, SymInt HxW, int group, float eps)
/// -> (out, mean [N, G], rstd [N, G]).
static LogicalResult lowerGroupNorm(CallFunctionOp op, const OpArgs &args,
                                    ConversionPatternRewriter &rw) {
  FailureOr<RankedTensor> input = args.tensor(0, "input");
  FailureOr<double> eps = args.getFloat(7, "eps");
  SmallVector<RankedTensorType> types;
  for (unsigned i = 0; i < op->getNumResults(); ++i)
    types.push_back(getResultTensorType(op, i));
  if (failed(input) || failed(eps) || types.size() != 3 ||
      llvm::is_contained(types, RankedTensorType()))
    return rw.notifyMatchFailure(
        op, "expected (tensor, weight?, bias?, N, C, HxW, group, float eps) "
            "and three tensor results");
  int64_t groups;
  if (failed(readGroupNormSizes(op, args, *input, 3, groups, rw)))
    return failure();
  FailureOr<RankedTensor> weight = args.tensor(1, "weight");
  FailureOr<RankedTensor> bias = args.tensor(2, "bias");
  if ((failed(weight) && !args.isNone(1, "weight")) ||
      (failed(bias) && !args.isNone(2, "bias")))
    return rw.notifyMatchFailure(op, "weight/bias must be tensors or None");

  Location loc = op.getLoc();
  MLIRContext *ctx = rw.getContext();
  Type acc = getAccumulatorType(input->getType().getElementType());
  Value x = toGroups(rw, loc, *input, groups);
  SmallVector<bool> inner{false, false, true, true};
  AffineMap id = rw.getMultiDimIdentityMap(4);
  AffineMap stat = getProjectionMap(ctx, 4, inner);
  AffineMap param = AffineMap::get(
      4, 0, {getAffineDimExpr(1, ctx), getAffineDimExpr(2, ctx)}, ctx);
  AffineMap id2 = rw.getMultiDimIdentityMap(2);
  Value mf = indexToScalar(rw, loc, getNumElements(rw, loc, x, inner), acc);
  Value sum = buildReductionOf<arith::AddFOp>(rw, loc, x, inner, acc, 0.0);
  Value mean =
      buildElementwiseMap(rw, loc, sum, acc, {sum}, {id2},
                          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                            return arith::DivFOp::create(b, l, a[0], mf);
                          });
  Value sq = buildReduction(
                 rw, loc, {x, mean}, {id, stat}, inner, {acc}, {0.0},
                 [&](OpBuilder &b, Location l, ValueRange in, ValueRange accs) {
                   Value d = arith::SubFOp::create(
                       b, l, convertScalar(b, l, in[0], acc), in[1]);
                   return SmallVector<Value>{arith::AddFOp::create(
                       b, l, accs[0], arith::MulFOp::create(b, l, d, d))};
                 })
                 .front();
  Value epsV = createScalarConstant(rw, loc, acc, *eps);
  Value one = createScalarConstant(rw, loc, acc, 1.0);
  Value rstd =
      buildElementwiseMap(rw, loc, sq, acc, {sq}, {id2},
                          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                            Value var = arith::DivFOp::create(b, l, a[0], mf);
                            Value s = math::SqrtOp::create(
                                b, l, arith::AddFOp::create(b, l, var, epsV));
                            return arith::DivFOp::create(b, l, one, s);
                          });
  SmallVector<Value> inputs{x, mean, rstd};
  SmallVector<AffineMap> maps{id, stat, stat};
  bool hasW = succeeded(weight), hasB = succeeded(bias);
  if (hasW) {
    inputs.push_back(channelsToGroups(rw, loc, *weight, groups));
    maps.push_back(param);
  }
  if (hasB) {
    inputs.push_back(channelsToGroups(rw, loc, *bias, groups));
    maps.push_back(param);
  }
  Type outElem = types[0].getElementType();
  Value out = buildElementwiseMap(
      rw, loc, x, outElem, inputs, maps,
      [&](OpBuilder &b, Location l, ValueRange a) {
        Value xv = convertScalar(b, l, a[0], acc);
        Value v;
        if (!hasW && !hasB) {
          v = arith::MulFOp::create(b, l, arith::SubFOp::create(b, l, xv, a[1]),
                                    a[2]);
        } else {
          unsigned next = 3;
          Value scale = a[2];
          if (hasW)
            scale = arith::MulFOp::create(b, l, scale,
                                          convertScalar(b, l, a[next++], acc));
          Value shift = arith::NegFOp::create(
              b, l, arith::MulFOp::create(b, l, scale, a[1]));
          if (hasB)
            shift = arith::AddFOp::create(b, l, shift,
                                          convertScalar(b, l, a[next++], acc));
          v = arith::AddFOp::create(
              b, l, arith::MulFOp::create(b, l, scale, xv), shift);
        }
        return convertScalar(b, l, v, outElem);
      });
  rw.replaceOp(
      op, {castToType(rw, loc, fromGroups(rw, loc, out, types[0]), types[0]),
           finishResult(rw, loc, mean, types[1]),
           finishResult(rw, loc, rstd, types[2])});
  return success();
}

/// aten::native_group_norm_backward.default(grad_out, input, mean, rstd,
/// Tensor? weight, SymInt N, SymInt C, SymInt HxW, int group,
/// bool[3] output_mask) -> (grad_input, grad_weight, grad_bias).
static LogicalResult lowerGroupNormBackward(CallFunctionOp op,
                                            const OpArgs &args,
                                            ConversionPatternRewriter &rw) {
  FailureOr<RankedTensor> dy = args.tensor(0, "grad_out");
  FailureOr<RankedTensor> input = args.tensor(1, "input");
  FailureOr<RankedTensor> mean = args.tensor(2, "mean");
  FailureOr<RankedTensor> rstd = args.tensor(3, "rstd");
  FailureOr<RankedTensor> weight = args.tensor(4, "weight");
  FailureOr<SmallVector<bool>> outMask = args.getBoolList(9, "output_mask");
  if (failed(dy) || failed(input) || failed(mean) || failed(rstd) ||
      failed(outMask) || outMask->size() != 3 || op->getNumResults() != 3)
    return rw.notifyMatchFailure(op, "unexpected arguments");
  if (failed(weight) && !args.isNone(4, "weight"))
    return rw.notifyMatchFailure(op, "weight must be a tensor or None");
  SmallVector<RankedTensorType> types;
  for (unsigned i = 0; i < 3; ++i) {
    types.push_back(getResultTensorType(op, i));
    if ((*outMask)[i] && !types.back())
      return rw.notifyMatchFailure(op, "requested result is not a tensor");
    if (!(*outMask)[i] && !op->getResult(i).use_empty())
      return rw.notifyMatchFailure(op, "result not in output_mask is used");
  }
  int64_t groups;
  if (failed(readGroupNormSizes(op, args, *input, 5, groups, rw)))
    return failure();
  if (dy->getType().getShape() != input->getType().getShape())
    return rw.notifyMatchFailure(op, "grad_out and input differ in shape");

  Location loc = op.getLoc();
  MLIRContext *ctx = rw.getContext();
  Type acc = getAccumulatorType(input->getType().getElementType());
  auto load = [&](OpBuilder &b, Location l, Value v) {
    return convertScalar(b, l, v, acc);
  };
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  Value x = toGroups(rw, loc, *input, groups);
  Value g = toGroups(rw, loc, *dy, groups);
  bool hasW = succeeded(weight);
  Value w = hasW ? channelsToGroups(rw, loc, *weight, groups) : Value();
  AffineMap id = rw.getMultiDimIdentityMap(4);
  // ds = sum_hw(dy * x), db = sum_hw(dy), per (n, g, c / G).
  SmallVector<Value> sums = buildReduction(
      rw, loc, {g, x}, {id, id}, {false, false, false, true}, {acc, acc},
      {0.0, 0.0},
      [&](OpBuilder &b, Location l, ValueRange in, ValueRange accs) {
        Value dyv = load(b, l, in[0]);
        return SmallVector<Value>{
            arith::AddFOp::create(
                b, l, accs[0],
                arith::MulFOp::create(b, l, dyv, load(b, l, in[1]))),
            arith::AddFOp::create(b, l, accs[1], dyv)};
      });
  Value ds = sums[0], db = sums[1];
  SmallVector<Value> results(3);
  if ((*outMask)[0]) {
    // The group sums of ds * w and db * w.
    SmallVector<Value> gIn{ds, db};
    AffineMap id3 = rw.getMultiDimIdentityMap(3);
    SmallVector<AffineMap> gMaps{id3, id3};
    if (hasW) {
      gIn.push_back(w);
      gMaps.push_back(AffineMap::get(3, 0, {d(1), d(2)}, ctx));
    }
    SmallVector<Value> gs = buildReduction(
        rw, loc, gIn, gMaps, {false, false, true}, {acc, acc}, {0.0, 0.0},
        [&](OpBuilder &b, Location l, ValueRange in, ValueRange accs) {
          Value a = in[0], c = in[1];
          if (hasW) {
            Value wv = load(b, l, in[2]);
            a = arith::MulFOp::create(b, l, a, wv);
            c = arith::MulFOp::create(b, l, c, wv);
          }
          return SmallVector<Value>{arith::AddFOp::create(b, l, accs[0], a),
                                    arith::AddFOp::create(b, l, accs[1], c)};
        });
    Value mf = indexToScalar(
        rw, loc, getNumElements(rw, loc, x, {false, false, true, true}), acc);
    AffineMap stat = AffineMap::get(4, 0, {d(0), d(1)}, ctx);
    SmallVector<Value> dxIn{g, x, *mean, *rstd, gs[0], gs[1]};
    SmallVector<AffineMap> dxMaps{id, id, stat, stat, stat, stat};
    if (hasW) {
      dxIn.push_back(w);
      dxMaps.push_back(AffineMap::get(4, 0, {d(1), d(2)}, ctx));
    }
    Type dxElem = types[0].getElementType();
    Value dx = buildElementwiseMap(
        rw, loc, x, dxElem, dxIn, dxMaps,
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value m = load(b, l, a[2]), r = load(b, l, a[3]);
          Value dsG = a[4], dbG = a[5];
          Value r3 =
              arith::MulFOp::create(b, l, arith::MulFOp::create(b, l, r, r), r);
          Value c2 = arith::DivFOp::create(
              b, l,
              arith::MulFOp::create(
                  b, l,
                  arith::SubFOp::create(
                      b, l, arith::MulFOp::create(b, l, dbG, m), dsG),
                  r3),
              mf);
          Value c3 = arith::SubFOp::create(
              b, l,
              arith::NegFOp::create(b, l, arith::MulFOp::create(b, l, c2, m)),
              arith::DivFOp::create(b, l, arith::MulFOp::create(b, l, dbG, r),
                                    mf));
          Value c1 =
              hasW
                  ? arith::MulFOp::create(b, l, r, load(b, l, a[6])).getResult()
                  : r;
          Value v = arith::AddFOp::create(
              b, l,
              arith::AddFOp::create(
                  b, l, arith::MulFOp::create(b, l, c1, load(b, l, a[0])),
                  arith::MulFOp::create(b, l, c2, load(b, l, a[1]))),
              c3);
          return convertScalar(b, l, v, dxElem);
        });
    results[0] =
        castToType(rw, loc, fromGroups(rw, loc, dx, types[0]), types[0]);
  }
  // dw and db: sums over n, kept as [G, C / G] and collapsed to [C].
  auto perChannel = [&](Value t, RankedTensorType type) {
    Value c = tensor::CollapseShapeOp::create(
        rw, loc, t, ArrayRef<ReassociationIndices>{{0, 1}});
    return finishResult(rw, loc, c, type);
  };
  if ((*outMask)[1]) {
    AffineMap id3 = rw.getMultiDimIdentityMap(3);
    AffineMap stat = AffineMap::get(3, 0, {d(0), d(1)}, ctx);
    Value dw =
        buildReduction(
            rw, loc, {ds, db, *mean, *rstd}, {id3, id3, stat, stat},
            {true, false, false}, {acc}, {0.0},
            [&](OpBuilder &b, Location l, ValueRange in, ValueRange accs) {
              Value t = arith::SubFOp::create(
                  b, l, in[0],
                  arith::MulFOp::create(b, l, in[1], load(b, l, in[2])));
              return SmallVector<Value>{arith::AddFOp::create(
                  b, l, accs[0],
                  arith::MulFOp::create(b, l, t, load(b, l, in[3])))};
            })
            .front();
    results[1] = perChannel(dw, types[1]);
  }
  if ((*outMask)[2]) {
    Value dbSum = buildReductionOf<arith::AddFOp>(
        rw, loc, db, {true, false, false}, acc, 0.0);
    results[2] = perChannel(dbSum, types[2]);
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
  table.add({"aten::native_group_norm.default"}, lowerGroupNorm);
  table.add({"aten::native_group_norm_backward.default"},
            lowerGroupNormBackward);
}

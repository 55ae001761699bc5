//===- BatchNorm.cpp - Batch norm forward/backward to linalg --------------===//
//
// `aten::native_batch_norm`, its `_native_batch_norm_legit*` forms and
// `aten::native_batch_norm_backward` over input [N, C, *], per channel C, in
// torch's CPU accumulation type (f32 for bf16/f16) and cast once (aten
// Normalization.cpp, batch_norm_cpu). Training: mean = sum(x) / M, var =
// sum((x - mean)^2) / M (biased), invstd = 1 / sqrt(var + eps), M = N *
// prod(*); eval: mean, var = the running statistics. out = x * alpha + beta
// with alpha = invstd * w, beta = b - mean * alpha (torch's transform); in
// training with bf16/f16 save_mean / save_invstd, mean, var + eps and invstd
// are rounded to that dtype first (torch normalizes with the kept values).
// Training with running statistics writes them although torch's schema
// declares no write (`Tensor? running_mean`): the driver first rewrites such
// a call into `_native_batch_norm_legit_functional`, whose results 3 and 4
// are (1 - momentum) * running + momentum * batch statistic (the variance
// unbiased, * M / (M - 1)); they become step outputs like every buffer write.
// Backward (torch's formulas): with d = x - mean, sum_dy = sum(dy), dot =
// sum(dy * d); training: dx = (dy - sum_dy / M - d * dot * invstd^2 / M) *
// invstd * w; eval: dx = dy * invstd * w; dw = dot * invstd, db = sum_dy;
// results outside `output_mask` are dropped (they must be unused).
//
//===----------------------------------------------------------------------===//

#include "UtilsOps.h"
#include "joint/Conversion/JointToLinalg/JointToLinalg.h"
#include "llvm/ADT/SmallVectorExtras.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::joint;
using namespace mlir::joint::lowering;

static constexpr llvm::StringLiteral kFunctional =
    "aten::_native_batch_norm_legit_functional.default";

namespace {

/// Where each argument of a forward variant sits in its schema (-1: absent;
/// `training` -1 means eval).
struct BatchNormSchema {
  StringRef target;
  int runningMean, runningVar, training, momentum, eps;
};

const BatchNormSchema kSchemas[] = {
    {"aten::native_batch_norm.default", 3, 4, 5, 6, 7},
    {"aten::_native_batch_norm_legit.default", 3, 4, 5, 6, 7},
    {kFunctional, 3, 4, 5, 6, 7},
    {"aten::_native_batch_norm_legit.no_stats", -1, -1, 3, 4, 5},
    {"aten::_native_batch_norm_legit_no_training.default", 3, 4, -1, 5, 6},
};

const BatchNormSchema *lookup(StringRef target) {
  for (const BatchNormSchema &s : kSchemas)
    if (s.target == target)
      return &s;
  return nullptr;
}

/// Loops of a rank-r input: every dim but the channel (1) is reduced.
SmallVector<bool> reducedDims(int64_t rank) {
  SmallVector<bool> mask(rank, true);
  mask[1] = false;
  return mask;
}

/// Map of a per-channel [C] tensor read over the r loops of the input.
AffineMap channelMap(MLIRContext *ctx, int64_t rank) {
  return AffineMap::get(rank, 0, getAffineDimExpr(1, ctx));
}

/// The loops of input [N, C, *]: the accumulation type, the reduced dims
/// (all but C), the identity map and the per-channel map.
struct Frame {
  Type acc;
  SmallVector<bool> reduced;
  AffineMap id, chan;
};

/// Frame of `input`, or the reason it cannot be lowered (rank < 2,
/// non-float dtype).
FailureOr<Frame> getFrame(Value input, std::string &why) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  Frame f;
  f.acc = getAccumulatorType(type.getElementType());
  why = rank < 2                 ? "input must be [N, C, *]"
        : !isa<FloatType>(f.acc) ? "non-float dtype"
                                 : "";
  if (!why.empty())
    return failure();
  MLIRContext *ctx = input.getContext();
  f.reduced = reducedDims(rank);
  f.id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  f.chan = channelMap(ctx, rank);
  return f;
}

/// A parallel generic over [C] computing `fn` of `inputs` (all [C]).
Value perChannel(OpBuilder &b, Location loc, Value like, Type elem,
                 ValueRange inputs,
                 function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
  SmallVector<AffineMap> maps(inputs.size(), b.getMultiDimIdentityMap(1));
  return buildElementwiseMap(b, loc, like, elem, inputs, maps, fn);
}

/// Per-channel mean and biased variance of `input` over `f.reduced`, in two
/// passes (sum / M, then sum((x - mean)^2) / M); `m` is M in `f.acc`.
std::pair<Value, Value> batchStats(OpBuilder &b, Location loc, Value input,
                                   const Frame &f, Value m) {
  auto divByM = [&](Value t) {
    return perChannel(
        b, loc, t, f.acc, {t}, [&](OpBuilder &nb, Location nl, ValueRange a) {
          return arith::DivFOp::create(nb, nl, a[0], m).getResult();
        });
  };
  using Term = function_ref<Value(OpBuilder &, Location, ValueRange)>;
  auto sumOf = [&](ValueRange ins, ArrayRef<AffineMap> maps, Term term) {
    auto body = [&](OpBuilder &nb, Location nl, ValueRange in,
                    ValueRange accs) {
      Value t = term(nb, nl, in);
      return SmallVector<Value>{arith::AddFOp::create(nb, nl, accs[0], t)};
    };
    return buildReduction(b, loc, ins, maps, f.reduced, {f.acc}, {0.0}, body)
        .front();
  };
  Value mean = divByM(
      sumOf({input}, {f.id}, [&](OpBuilder &nb, Location nl, ValueRange in) {
        return convertScalar(nb, nl, in[0], f.acc);
      }));
  Value var =
      divByM(sumOf({input, mean}, {f.id, f.chan},
                   [&](OpBuilder &nb, Location nl, ValueRange in) {
                     Value x = convertScalar(nb, nl, in[0], f.acc);
                     Value d = arith::SubFOp::create(nb, nl, x, in[1]);
                     return arith::MulFOp::create(nb, nl, d, d).getResult();
                   }));
  return {mean, var};
}

/// 1 / sqrt(var + eps) over [C], from an `acc`-typed or stored variance;
/// var + eps rounded to `rounding` first when given.
Value invStd(OpBuilder &b, Location loc, Value var, Type acc, double eps,
             Type rounding = {}) {
  Value epsV = createScalarConstant(b, loc, acc, eps);
  Value one = createScalarConstant(b, loc, acc, 1.0);
  return perChannel(
      b, loc, var, acc, {var}, [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value v = arith::AddFOp::create(nb, nl,
                                        convertScalar(nb, nl, a[0], acc), epsV);
        if (rounding)
          v = convertScalar(nb, nl, convertScalar(nb, nl, v, rounding), acc);
        return arith::DivFOp::create(nb, nl, one,
                                     math::SqrtOp::create(nb, nl, v))
            .getResult();
      });
}

/// A result of type `type`: `t` converted, or an empty tensor when `type` has
/// no elements (torch's CPU eval returns empty save_mean / save_invstd).
Value finishStat(OpBuilder &b, Location loc, Value t, RankedTensorType type) {
  if (type.hasStaticShape() && type.getNumElements() == 0)
    return tensor::EmptyOp::create(b, loc, type.getShape(),
                                   type.getElementType());
  return finishResult(b, loc, t, type);
}

/// The forward variants in kSchemas (-> out, save_mean, save_invstd[,
/// running_mean, running_var] for the functional form).
LogicalResult lowerBatchNorm(CallFunctionOp op, const OpArgs &args,
                             ConversionPatternRewriter &rw) {
  const BatchNormSchema &schema = *lookup(op.getTarget());
  FailureOr<RankedTensor> input = args.tensor(0, "input");
  FailureOr<double> eps = args.getFloat(schema.eps, "eps");
  FailureOr<double> momentum = args.getFloat(schema.momentum, "momentum");
  FailureOr<bool> training = schema.training < 0
                                 ? FailureOr<bool>(false)
                                 : args.getBool(schema.training, "training");
  if (failed(input) || failed(eps) || failed(momentum) || failed(training))
    return rw.notifyMatchFailure(
        op, "expected (tensor, weight?, bias?, ..., constant training, "
            "momentum and eps)");
  std::string why;
  FailureOr<Frame> frame = getFrame(*input, why);
  if (failed(frame))
    return rw.notifyMatchFailure(op, why);
  FailureOr<RankedTensor> weight = args.tensor(1, "weight");
  FailureOr<RankedTensor> bias = args.tensor(2, "bias");
  if ((failed(weight) && !args.isNone(1, "weight")) ||
      (failed(bias) && !args.isNone(2, "bias")))
    return rw.notifyMatchFailure(op, "weight/bias must be tensors or None");
  Value runMean, runVar;
  if (schema.runningMean >= 0 &&
      !args.isNone(schema.runningMean, "running_mean")) {
    FailureOr<RankedTensor> m = args.tensor(schema.runningMean, "running_mean");
    FailureOr<RankedTensor> v = args.tensor(schema.runningVar, "running_var");
    if (failed(m) || failed(v))
      return rw.notifyMatchFailure(op, "running statistics must be tensors");
    runMean = *m;
    runVar = *v;
  }
  bool functional = op.getTarget() == kFunctional;
  if (!*training && !runMean)
    return rw.notifyMatchFailure(op, "eval needs running statistics");
  if (*training && runMean && !functional)
    return rw.notifyMatchFailure(
        op, "running statistics written in place were not functionalized");
  unsigned numResults = functional ? 5 : 3;
  SmallVector<RankedTensorType> types;
  for (unsigned i = 0; i < op->getNumResults(); ++i)
    types.push_back(getResultTensorType(op, i));
  if (types.size() != numResults ||
      llvm::is_contained(types, RankedTensorType()))
    return rw.notifyMatchFailure(op, "unexpected results");

  Location loc = op.getLoc();
  auto [acc, reduced, id, chan] = *frame;
  Value mf =
      indexToScalar(rw, loc, getNumElements(rw, loc, *input, reduced), acc);
  Value mean, var, invstd;
  if (*training) {
    std::tie(mean, var) = batchStats(rw, loc, *input, *frame, mf);
  } else {
    mean = convertElements(rw, loc, runMean, acc);
    var = runVar;
  }
  // torch keeps the batch statistics in save_mean / save_invstd's dtype and
  // normalizes with the kept values: when that is bf16/f16, mean and
  // var + eps are rounded to it, and so is invstd (checked bitwise against
  // torch's bf16 BatchNorm2d).
  auto reducedOf = [&](RankedTensorType type) -> Type {
    Type elem = type.getElementType();
    if (!*training || elem == acc ||
        (type.hasStaticShape() && !type.getNumElements()))
      return {};
    return elem;
  };
  auto roundTrip = [&](Value t, Type elem) {
    return elem ? convertElements(rw, loc, convertElements(rw, loc, t, elem),
                                  acc)
                : t;
  };
  Type keptMean = reducedOf(types[1]), keptInv = reducedOf(types[2]);
  mean = roundTrip(mean, keptMean);
  invstd = roundTrip(invStd(rw, loc, var, acc, *eps, keptInv), keptInv);

  // out = x * alpha + beta, alpha = invstd * w, beta = b - mean * alpha.
  bool hasW = succeeded(weight), hasB = succeeded(bias);
  SmallVector<Value> ab{mean, invstd};
  if (hasW)
    ab.push_back(*weight);
  SmallVector<AffineMap> abMaps(ab.size(), rw.getMultiDimIdentityMap(1));
  Value alpha = buildElementwiseMap(
      rw, loc, mean, acc, ab, abMaps,
      [&](OpBuilder &b, Location l, ValueRange a) {
        return hasW ? arith::MulFOp::create(b, l, a[1],
                                            convertScalar(b, l, a[2], acc))
                          .getResult()
                    : a[1];
      });
  SmallVector<Value> betaIn{mean, alpha};
  if (hasB)
    betaIn.push_back(*bias);
  Value beta = buildElementwiseMap(
      rw, loc, mean, acc, betaIn,
      SmallVector<AffineMap>(betaIn.size(), rw.getMultiDimIdentityMap(1)),
      [&](OpBuilder &b, Location l, ValueRange a) {
        Value m = arith::MulFOp::create(b, l, a[0], a[1]);
        if (!hasB)
          return arith::NegFOp::create(b, l, m).getResult();
        return arith::SubFOp::create(b, l, convertScalar(b, l, a[2], acc), m)
            .getResult();
      });
  Type outElem = types[0].getElementType();
  Value out = buildElementwiseMap(
      rw, loc, *input, outElem, {*input, alpha, beta}, {id, chan, chan},
      [&](OpBuilder &b, Location l, ValueRange a) {
        Value v =
            arith::MulFOp::create(b, l, convertScalar(b, l, a[0], acc), a[1]);
        v = arith::AddFOp::create(b, l, v, a[2]);
        return convertScalar(b, l, v, outElem);
      });

  SmallVector<Value> results{castToType(rw, loc, out, types[0]),
                             finishStat(rw, loc, mean, types[1]),
                             finishStat(rw, loc, invstd, types[2])};
  if (functional) {
    if (!*training) {
      results.push_back(castToType(rw, loc, runMean, types[3]));
      results.push_back(castToType(rw, loc, runVar, types[4]));
    } else {
      Value mom = createScalarConstant(rw, loc, acc, *momentum);
      Value keep = createScalarConstant(rw, loc, acc, 1.0 - *momentum);
      Value one = createScalarConstant(rw, loc, acc, 1.0);
      auto blend = [&](Value running, Value stat, bool unbiased) {
        return perChannel(
            rw, loc, running, acc, {running, stat},
            [&](OpBuilder &b, Location l, ValueRange a) {
              Value s = a[1];
              // Ops in a fixed order (argument order is unspecified).
              if (unbiased) {
                Value n = arith::MulFOp::create(b, l, s, mf);
                Value dof = arith::SubFOp::create(b, l, mf, one);
                s = arith::DivFOp::create(b, l, n, dof);
              }
              Value batch = arith::MulFOp::create(b, l, mom, s);
              Value old = arith::MulFOp::create(b, l, keep,
                                                convertScalar(b, l, a[0], acc));
              return arith::AddFOp::create(b, l, batch, old).getResult();
            });
      };
      results.push_back(
          finishResult(rw, loc, blend(runMean, mean, false), types[3]));
      results.push_back(
          finishResult(rw, loc, blend(runVar, var, true), types[4]));
    }
  }
  rw.replaceOp(op, results);
  return success();
}

/// The operands of native_batch_norm_backward: `mean` and `stat` are
/// save_mean / save_invstd in training, running_mean / running_var in eval;
/// `weight` null for None; `types` of the results (null outside `mask`).
struct BackwardArgs {
  Value dy, input, weight, mean, stat;
  bool train;
  double eps;
  SmallVector<bool> mask;
  SmallVector<RankedTensorType> types;
};

FailureOr<BackwardArgs> readBackwardArgs(CallFunctionOp op, const OpArgs &args,
                                         ConversionPatternRewriter &rw) {
  FailureOr<bool> train = args.getBool(7, "train");
  FailureOr<double> eps = args.getFloat(8, "eps");
  FailureOr<SmallVector<bool>> mask = args.getBoolList(9, "output_mask");
  if (failed(train) || failed(eps) || failed(mask) || mask->size() != 3 ||
      op->getNumResults() != 3)
    return rw.notifyMatchFailure(op, "unexpected arguments");
  BackwardArgs a{{}, {}, {}, {}, {}, *train, *eps, *mask, {}};
  int statArg = *train ? 5 : 3;
  FailureOr<RankedTensor> tensors[] = {
      args.tensor(0, "grad_out"), args.tensor(1, "input"),
      args.tensor(statArg, "mean"), args.tensor(statArg + 1, "invstd/var")};
  if (llvm::any_of(tensors, [](auto &t) { return failed(t); }))
    return rw.notifyMatchFailure(
        op, "expected grad_out and input tensors, with save_mean/save_invstd "
            "in training, the running statistics in eval");
  a.dy = *tensors[0];
  a.input = *tensors[1];
  a.mean = *tensors[2];
  a.stat = *tensors[3];
  if (FailureOr<RankedTensor> w = args.tensor(2, "weight"); succeeded(w))
    a.weight = *w;
  else if (!args.isNone(2, "weight"))
    return rw.notifyMatchFailure(op, "weight must be a tensor or None");
  for (unsigned i = 0; i < 3; ++i) {
    a.types.push_back(getResultTensorType(op, i));
    bool wanted = a.mask[i];
    if (wanted != static_cast<bool>(a.types.back()) ||
        (!wanted && !op->getResult(i).use_empty()))
      return rw.notifyMatchFailure(
          op, "results must be tensors exactly where output_mask is set "
              "(and unused elsewhere)");
  }
  return a;
}

/// aten::native_batch_norm_backward.default(grad_out, input, weight?,
/// running_mean?, running_var?, save_mean?, save_invstd?, bool train,
/// float eps, bool[3] output_mask) -> (grad_input, grad_weight, grad_bias).
LogicalResult lowerBatchNormBackward(CallFunctionOp op, const OpArgs &args,
                                     ConversionPatternRewriter &rw) {
  FailureOr<BackwardArgs> a = readBackwardArgs(op, args, rw);
  if (failed(a))
    return failure();
  std::string why;
  FailureOr<Frame> frame = getFrame(a->input, why);
  if (failed(frame))
    return rw.notifyMatchFailure(op, why);
  Location loc = op.getLoc();
  auto [acc, reduced, id, chan] = *frame;
  Value invstd = a->train ? convertElements(rw, loc, a->stat, acc)
                          : invStd(rw, loc, a->stat, acc, a->eps);
  auto load = [&](OpBuilder &b, Location l, Value v) {
    return convertScalar(b, l, v, acc);
  };
  // sum_dy and dot = sum(dy * (x - mean)) per channel.
  SmallVector<Value> sums = buildReduction(
      rw, loc, {a->dy, a->input, a->mean}, {id, id, chan}, reduced, {acc, acc},
      {0.0, 0.0},
      [&](OpBuilder &b, Location l, ValueRange in, ValueRange accs) {
        Value g = load(b, l, in[0]);
        Value d =
            arith::SubFOp::create(b, l, load(b, l, in[1]), load(b, l, in[2]));
        return SmallVector<Value>{
            arith::AddFOp::create(b, l, accs[0], g),
            arith::AddFOp::create(b, l, accs[1],
                                  arith::MulFOp::create(b, l, g, d))};
      });
  SmallVector<Value> results(3);
  if (a->mask[0]) {
    Value mf =
        indexToScalar(rw, loc, getNumElements(rw, loc, a->input, reduced), acc);
    bool hasW = static_cast<bool>(a->weight);
    SmallVector<Value> inputs{a->dy,  a->input, a->mean,
                              invstd, sums[0],  sums[1]};
    SmallVector<AffineMap> maps{id, id, chan, chan, chan, chan};
    if (hasW) {
      inputs.push_back(a->weight);
      maps.push_back(chan);
    }
    bool isTrain = a->train;
    Type dxElem = a->types[0].getElementType();
    Value dx = buildElementwiseMap(
        rw, loc, a->input, dxElem, inputs, maps,
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value g = load(b, l, a[0]);
          Value is = a[3];
          if (isTrain) {
            Value d =
                arith::SubFOp::create(b, l, load(b, l, a[1]), load(b, l, a[2]));
            // k = dot * invstd^2 / M, grad_mean = sum_dy / M.
            Value k = arith::DivFOp::create(
                b, l,
                arith::MulFOp::create(b, l, a[5],
                                      arith::MulFOp::create(b, l, is, is)),
                mf);
            Value gm = arith::DivFOp::create(b, l, a[4], mf);
            Value centered = arith::SubFOp::create(b, l, g, gm);
            Value proj = arith::MulFOp::create(b, l, d, k);
            g = arith::SubFOp::create(b, l, centered, proj);
          }
          Value v = arith::MulFOp::create(b, l, g, is);
          if (hasW)
            v = arith::MulFOp::create(b, l, v, load(b, l, a[6]));
          return convertScalar(b, l, v, dxElem);
        });
    results[0] = castToType(rw, loc, dx, a->types[0]);
  }
  if (a->mask[1]) {
    Value dw =
        perChannel(rw, loc, sums[1], acc, {sums[1], invstd},
                   [&](OpBuilder &b, Location l, ValueRange a) {
                     return arith::MulFOp::create(b, l, a[0], a[1]).getResult();
                   });
    results[1] = finishResult(rw, loc, dw, a->types[1]);
  }
  if (a->mask[2])
    results[2] = finishResult(rw, loc, sums[0], a->types[2]);
  rw.replaceOp(op, results);
  return success();
}

} // namespace

SmallVector<std::pair<Value, Value>>
mlir::joint::lowering::functionalizeBatchNormStats(CallFunctionOp &op,
                                                   RewriterBase &rewriter) {
  const BatchNormSchema *schema = lookup(op.getTarget());
  if (!schema || op.getTarget() == kFunctional || schema->training < 0 ||
      schema->runningMean < 0 || op->getNumResults() != 3)
    return {};
  OpArgs args(op, op->getOperands());
  FailureOr<bool> training = args.getBool(schema->training, "training");
  FailureOr<RankedTensor> mean =
      args.tensor(schema->runningMean, "running_mean");
  FailureOr<RankedTensor> var = args.tensor(schema->runningVar, "running_var");
  if (failed(training) || !*training || failed(mean) || failed(var))
    return {};
  replaceByFunctionalForm(op, kFunctional,
                          TypeRange{mean->getType(), var->getType()}, rewriter);
  return {{*mean, op->getResult(3)}, {*var, op->getResult(4)}};
}

void mlir::joint::populateBatchNormPatterns(const TypeConverter &typeConverter,
                                            RewritePatternSet &patterns) {
  LoweringTable table(typeConverter, patterns);
  table.add(llvm::map_to_vector(
                kSchemas, [](const BatchNormSchema &s) { return s.target; }),
            lowerBatchNorm);
  table.add({"aten::native_batch_norm_backward.default"},
            lowerBatchNormBackward);
}

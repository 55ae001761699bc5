//===- Random.cpp - RNG ops to counter-based Philox draws
//------------------===//
//
// The Random family of convert-joint-to-linalg: native_dropout, bernoulli,
// rand/randn (and their `_like` forms), uniform_, normal_ and rrelu (with
// its backward) as parallel
// `linalg.generic`s that draw from Philox 4x32-10 (Salmon et al., SC'11; the
// generator torch uses on CUDA). Element i of draw d reads the block
// philox(key = seed, counter = (i, offset + d)), where `seed` and `offset`
// are the step's `rng_state` argument (tensor<2xi64>) and `d` is the op's
// `joint.rng_draw` index. A remat clone carries its original's index, so it
// replays the same numbers. Draws are deterministic, independent of the
// target and of how the loops are tiled or mapped to threads.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "UtilsOps.h"
#include "joint/Conversion/JointToLinalg/JointToLinalg.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include <array>
#include <cmath>

using namespace mlir;
using namespace mlir::joint;
using lowering::OpArgs;

namespace {

/// The generator's inputs inside one op's generic: 0-d i64 tensors read
/// through broadcast maps.
struct DrawState {
  Value seed;   // tensor<i64>
  Value offset; // tensor<i64>: the step's offset plus the op's draw index
};

/// The step's `rng_state` argument and `op`'s draw index as the generic's
/// inputs; failure when the driver did not give `op` a draw.
static FailureOr<DrawState> getDrawState(CallFunctionOp op,
                                         ConversionPatternRewriter &rw) {
  auto draw = op->getAttrOfType<IntegerAttr>(kRngDrawAttr);
  auto func = op->getParentOfType<func::FuncOp>();
  if (!draw || !func)
    return rw.notifyMatchFailure(op, "has no RNG draw index");
  Value state;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (func.getArgAttr(i, kRngDrawsAttr))
      state = func.getArgument(i);
  if (!state)
    return rw.notifyMatchFailure(op, "the step has no rng_state argument");
  Location loc = op.getLoc();
  Type i64 = rw.getI64Type();
  auto scalarType = RankedTensorType::get({}, i64);
  auto element = [&](int64_t i) -> Value {
    return tensor::ExtractSliceOp::create(
        rw, loc, scalarType, state, ValueRange{}, ValueRange{}, ValueRange{},
        rw.getDenseI64ArrayAttr({i}), rw.getDenseI64ArrayAttr({1}),
        rw.getDenseI64ArrayAttr({1}));
  };
  Value offset = element(1);
  if (int64_t d = draw.getInt()) {
    Value c = arith::ConstantOp::create(
        rw, loc, DenseElementsAttr::get(scalarType, rw.getI64IntegerAttr(d)));
    offset = createElementwiseGeneric(
        rw, loc, ValueRange{offset, c}, scalarType, {},
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          return arith::AddIOp::create(b, l, a[0], a[1]);
        });
  }
  return DrawState{element(0), offset};
}

/// Philox 4x32-10: the four 32-bit words of `counter` under `key` (ten
/// rounds, the key bumped by the Weyl constants between rounds).
static std::array<Value, 4> philox(OpBuilder &b, Location loc,
                                   std::array<Value, 4> c,
                                   std::array<Value, 2> k) {
  Type i32 = b.getI32Type();
  auto cst = [&](uint32_t v) -> Value {
    return arith::ConstantOp::create(
        b, loc, b.getIntegerAttr(i32, static_cast<int32_t>(v)));
  };
  Value m0 = cst(0xD2511F53), m1 = cst(0xCD9E8D57);
  Value w0 = cst(0x9E3779B9), w1 = cst(0xBB67AE85);
  for (int round = 0; round < 10; ++round) {
    if (round) {
      k[0] = arith::AddIOp::create(b, loc, k[0], w0);
      k[1] = arith::AddIOp::create(b, loc, k[1], w1);
    }
    auto p0 = arith::MulUIExtendedOp::create(b, loc, m0, c[0]);
    auto p1 = arith::MulUIExtendedOp::create(b, loc, m1, c[2]);
    auto x3 = [&](Value a, Value x, Value y) -> Value {
      return arith::XOrIOp::create(b, loc, arith::XOrIOp::create(b, loc, a, x),
                                   y);
    };
    c = {x3(p1.getHigh(), c[1], k[0]), p1.getLow(),
         x3(p0.getHigh(), c[3], k[1]), p0.getLow()};
  }
  return c;
}

/// The low and high 32-bit words of i64 `v`.
static std::array<Value, 2> splitWords(OpBuilder &b, Location loc, Value v) {
  Type i32 = b.getI32Type();
  Value shift = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(32));
  return {arith::TruncIOp::create(b, loc, i32, v),
          arith::TruncIOp::create(b, loc, i32,
                                  arith::ShRUIOp::create(b, loc, v, shift))};
}

/// The row-major linear index (i64) of the current element of a generic
/// over a tensor of `sizes`.
static Value linearIndex(OpBuilder &b, Location loc,
                         ArrayRef<OpFoldResult> sizes) {
  Value index = arith::ConstantIndexOp::create(b, loc, 0);
  for (auto [d, size] : llvm::enumerate(sizes)) {
    Value extent = getValueOrCreateConstantIndexOp(b, loc, size);
    index = arith::AddIOp::create(b, loc,
                                  arith::MulIOp::create(b, loc, index, extent),
                                  linalg::IndexOp::create(b, loc, d));
  }
  return arith::IndexCastUIOp::create(b, loc, b.getI64Type(), index);
}

/// The Philox block of the current element: key = seed, counter = (linear
/// index, offset).
static std::array<Value, 4> drawBlock(OpBuilder &b, Location loc, Value seed,
                                      Value offset,
                                      ArrayRef<OpFoldResult> sizes) {
  auto [i0, i1] = splitWords(b, loc, linearIndex(b, loc, sizes));
  auto [o0, o1] = splitWords(b, loc, offset);
  auto [k0, k1] = splitWords(b, loc, seed);
  return philox(b, loc, {i0, i1, o0, o1}, {k0, k1});
}

/// The float type a uniform of `type` is computed in: f64 for f64, else f32.
static FloatType uniformComputeType(OpBuilder &b, Type type) {
  return type.isF64() ? cast<FloatType>(b.getF64Type()) : b.getF32Type();
}

/// A uniform sample in [0, 1) of `type` (a float type) from 32-bit `word`:
/// its top p bits times 2^-p, p the significand width of `type` (at most
/// 32), so every sample is exact in `type` and 1 is never drawn.
static Value uniformOf(OpBuilder &b, Location loc, Value word, Type type) {
  unsigned bits = std::min(32u, cast<FloatType>(type).getFPMantissaWidth());
  FloatType compute = uniformComputeType(b, type);
  Value shift = arith::ConstantOp::create(
      b, loc, b.getI32IntegerAttr(static_cast<int32_t>(32 - bits)));
  Value top = arith::ShRUIOp::create(b, loc, word, shift);
  Value f = arith::UIToFPOp::create(b, loc, compute, top);
  Value scale = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(compute, std::ldexp(1.0, -int(bits))));
  return arith::MulFOp::create(b, loc, f, scale);
}

/// A standard normal sample (in f32, or f64 for f64 `type`) from two words,
/// by Box-Muller: sqrt(-2 ln u1) cos(2 pi u2), u1 in (0, 1], u2 in [0, 1).
static Value normalOf(OpBuilder &b, Location loc, Value w0, Value w1,
                      Type type) {
  FloatType compute = uniformComputeType(b, type);
  Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(compute, 1.0));
  Value u1 = arith::SubFOp::create(b, loc, one, uniformOf(b, loc, w0, compute));
  Value u2 = uniformOf(b, loc, w1, compute);
  Value minusTwo =
      arith::ConstantOp::create(b, loc, b.getFloatAttr(compute, -2.0));
  Value twoPi =
      arith::ConstantOp::create(b, loc, b.getFloatAttr(compute, 2.0 * M_PI));
  Value radius = math::SqrtOp::create(
      b, loc,
      arith::MulFOp::create(b, loc, minusTwo, math::LogOp::create(b, loc, u1)));
  Value angle = arith::MulFOp::create(b, loc, twoPi, u2);
  return arith::MulFOp::create(b, loc, radius,
                               math::CosOp::create(b, loc, angle));
}

/// Element builder of a draw: gets the Philox block of the element and the
/// other inputs' elements.
using DrawBody = function_ref<Value(OpBuilder &, Location,
                                    std::array<Value, 4> block, ValueRange)>;

/// One parallel generic of `resultType` (sizes `sizes`) drawing from
/// `state`, its other inputs `inputs` broadcast to the result.
static Value buildDraw(OpBuilder &b, Location loc, const DrawState &state,
                       ValueRange inputs, RankedTensorType resultType,
                       ArrayRef<OpFoldResult> sizes, DrawBody body) {
  SmallVector<Value> all{state.seed, state.offset};
  all.append(inputs.begin(), inputs.end());
  return createElementwiseGeneric(
      b, loc, all, resultType, sizes,
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        std::array<Value, 4> block = drawBlock(nb, l, a[0], a[1], sizes);
        return body(nb, l, block, a.drop_front(2));
      });
}

/// Refuses an explicit `generator` (the step has one generator: its
/// rng_state).
static LogicalResult checkNoGenerator(CallFunctionOp op, const OpArgs &args,
                                      ConversionPatternRewriter &rw,
                                      unsigned index) {
  if (!args.isNone(index, "generator"))
    return rw.notifyMatchFailure(
        op, "an explicit generator is not supported (the step draws from "
            "its rng_state)");
  return success();
}

/// The sizes of result `i` of `op`, static from its type, `?` from `like`.
static FailureOr<SmallVector<OpFoldResult>>
resultSizes(CallFunctionOp op, ConversionPatternRewriter &rw,
            RankedTensorType type, Value like) {
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0, e = type.getRank(); d < e; ++d) {
    if (!type.isDynamicDim(d)) {
      sizes.push_back(rw.getIndexAttr(type.getDimSize(d)));
      continue;
    }
    if (!like)
      return rw.notifyMatchFailure(op, "a symbolic size needs a tensor to "
                                       "take it from");
    sizes.push_back(
        tensor::DimOp::create(rw, op.getLoc(), like, d).getResult());
  }
  return sizes;
}

/// native_dropout(input, p, train): mask = u < 1 - p, out = mask ? input *
/// (1 / (1 - p)) : 0 in input's compute type (torch's input * mask * scale);
/// p = 1 drops everything; train = false returns input and an all-true mask.
static LogicalResult lowerNativeDropout(CallFunctionOp op, const OpArgs &args,
                                        ConversionPatternRewriter &rw) {
  FailureOr<lowering::RankedTensor> input = args.tensor(0, "input");
  FailureOr<double> p = args.getFloat(1, "p");
  RankedTensorType outType = getResultTensorType(op, 0);
  RankedTensorType maskType = getResultTensorType(op, 1);
  if (failed(input) || failed(p) || !outType || !maskType ||
      op->getNumResults() != 2)
    return rw.notifyMatchFailure(
        op, "expects a tensor input, a constant p and two tensor results");
  if (*p < 0.0 || *p > 1.0)
    return rw.notifyMatchFailure(op, "dropout probability outside [0, 1]");
  Location loc = op.getLoc();
  SmallVector<OpFoldResult> sizes = getTensorSizes(rw, loc, *input);
  Type elem = outType.getElementType();
  bool train = true;
  if (!args.isNone(2, "train")) {
    FailureOr<bool> t = args.getBool(2, "train");
    if (failed(t))
      return rw.notifyMatchFailure(op, "expects a constant train flag");
    train = *t;
  }
  if (!train) {
    Value out = broadcastToShape(rw, loc, *input, outType, sizes);
    Value mask =
        createInitTensor(rw, loc, sizes, maskType.getElementType(),
                         createScalarConstant(rw, loc, rw.getI1Type(), 1.0));
    rw.replaceOp(op, ValueRange{out, mask});
    return success();
  }
  FailureOr<DrawState> state = getDrawState(op, rw);
  if (failed(state))
    return failure();
  // One generic with two results would be clearer, but two generics reading
  // the same block keep every helper single-result; the mask's generic is
  // dead when only the output is read.
  Type compute = getComputeType(elem);
  float keepProb = static_cast<float>(1.0 - *p);
  auto keepOf = [&](OpBuilder &b, Location l,
                    std::array<Value, 4> block) -> Value {
    Value u = uniformOf(b, l, block[0], b.getF32Type());
    Value threshold =
        arith::ConstantOp::create(b, l, b.getF32FloatAttr(keepProb));
    return arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, u, threshold);
  };
  Value mask = buildDraw(
      rw, loc, *state, {}, maskType, sizes,
      [&](OpBuilder &b, Location l, std::array<Value, 4> block, ValueRange) {
        return convertScalar(b, l, keepOf(b, l, block),
                             maskType.getElementType());
      });
  double scale = *p == 1.0 ? 0.0 : 1.0 / (1.0 - *p);
  Value out = buildDraw(
      rw, loc, *state, ValueRange{*input}, outType, sizes,
      [&](OpBuilder &b, Location l, std::array<Value, 4> block, ValueRange a) {
        Value x = convertScalar(b, l, a[0], compute);
        Value s = createScalarConstant(b, l, compute, scale);
        Value scaled = arith::MulFOp::create(b, l, x, s);
        Value zero = createScalarConstant(b, l, compute, 0.0);
        Value kept =
            arith::SelectOp::create(b, l, keepOf(b, l, block), scaled, zero);
        return convertScalar(b, l, kept, elem);
      });
  rw.replaceOp(op, ValueRange{out, mask});
  return success();
}

/// bernoulli(self) (probabilities from self), bernoulli.p(self, p),
/// bernoulli_.float(self, p) and bernoulli_.Tensor(self, p): 1 where
/// u < p, else 0, of the result's type (the in-place forms are values
/// here: the driver made their writes explicit).
static LogicalResult lowerBernoulli(CallFunctionOp op, const OpArgs &args,
                                    ConversionPatternRewriter &rw) {
  StringRef target = op.getTarget();
  FailureOr<lowering::RankedTensor> self = args.tensor(0, "self");
  RankedTensorType resultType = getResultTensorType(op);
  if (failed(self) || !resultType)
    return rw.notifyMatchFailure(op, "expects a tensor self and result");
  bool tensorP = target == "aten::bernoulli.default" ||
                 target == "aten::bernoulli_.Tensor";
  unsigned generatorIndex = target == "aten::bernoulli.default" ? 1 : 2;
  if (failed(checkNoGenerator(op, args, rw, generatorIndex)))
    return failure();
  Location loc = op.getLoc();
  SmallVector<Value> inputs;
  double constantP = 0.5;
  if (target == "aten::bernoulli.default") {
    inputs.push_back(*self);
  } else if (tensorP) {
    FailureOr<lowering::RankedTensor> p = args.tensor(1, "p");
    if (failed(p))
      return rw.notifyMatchFailure(op, "expects a tensor p");
    inputs.push_back(*p);
  } else {
    FailureOr<double> p = args.getFloat(1, "p", 0.5);
    if (failed(p))
      return rw.notifyMatchFailure(op, "expects a constant p");
    constantP = *p;
  }
  for (Value v : inputs)
    if (!isa<FloatType>(cast<RankedTensorType>(v.getType()).getElementType()))
      return rw.notifyMatchFailure(op, "expects floating-point "
                                       "probabilities");
  FailureOr<DrawState> state = getDrawState(op, rw);
  if (failed(state))
    return failure();
  SmallVector<OpFoldResult> sizes = getTensorSizes(rw, loc, *self);
  Type elem = resultType.getElementType();
  Value out = buildDraw(
      rw, loc, *state, inputs, resultType, sizes,
      [&](OpBuilder &b, Location l, std::array<Value, 4> block, ValueRange a) {
        // Compared exactly: in f32 against a probability tensor of a
        // narrower or equal type, else in f64.
        Type cmpType = b.getF64Type();
        if (!a.empty() && !a[0].getType().isF64())
          cmpType = b.getF32Type();
        Value u = uniformOf(b, l, block[0], b.getF32Type());
        if (cmpType != u.getType())
          u = arith::ExtFOp::create(b, l, cmpType, u);
        Value p = a.empty() ? createScalarConstant(b, l, cmpType, constantP)
                            : convertScalar(b, l, a[0], cmpType);
        Value hit =
            arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, u, p);
        return convertScalar(b, l, hit, elem);
      });
  return replaceWithResult(rw, op, out, resultType);
}

/// rand/randn(size, ...), rand_like/randn_like(self, ...), uniform_(self,
/// from, to) and normal_(self, mean, std): uniform [0, 1) samples exact in
/// the result's type, or Box-Muller normals rounded to it; uniform_ is
/// from + (to - from) u and normal_ mean + std z, in f32 (f64 for f64).
static LogicalResult lowerRand(CallFunctionOp op, const OpArgs &args,
                               ConversionPatternRewriter &rw) {
  StringRef target = op.getTarget();
  RankedTensorType resultType = getResultTensorType(op);
  if (!resultType || op->getNumResults() != 1)
    return rw.notifyMatchFailure(op, "expects one tensor result");
  Type elem = resultType.getElementType();
  if (!isa<FloatType>(elem))
    return rw.notifyMatchFailure(op, "expects a floating-point result");
  bool normal = target.contains("randn") || target.contains("normal_");
  bool like = target.contains("_like") || target.contains("_.");
  Location loc = op.getLoc();
  Value source;
  if (like) {
    FailureOr<lowering::RankedTensor> self = args.tensor(0, "self");
    if (failed(self))
      return rw.notifyMatchFailure(op, "expects a tensor self");
    source = *self;
  }
  bool inPlace = target.contains("_.");
  if (inPlace && failed(checkNoGenerator(op, args, rw, 3)))
    return failure();
  FailureOr<SmallVector<OpFoldResult>> sizes =
      resultSizes(op, rw, resultType, source);
  if (failed(sizes))
    return failure();
  double a = 0.0, b = 1.0; // uniform_: from, to; normal_: mean, std
  if (inPlace) {
    FailureOr<double> x = args.getFloat(1, normal ? "mean" : "from", 0.0);
    FailureOr<double> y = args.getFloat(2, normal ? "std" : "to", 1.0);
    if (failed(x) || failed(y))
      return rw.notifyMatchFailure(op, "expects constant distribution "
                                       "parameters");
    a = *x;
    b = *y;
  }
  FailureOr<DrawState> state = getDrawState(op, rw);
  if (failed(state))
    return failure();
  FloatType compute = uniformComputeType(rw, elem);
  bool affine = a != 0.0 || b != 1.0;
  Value out = buildDraw(
      rw, loc, *state, {}, resultType, *sizes,
      [&](OpBuilder &nb, Location l, std::array<Value, 4> block, ValueRange) {
        Value v = normal ? normalOf(nb, l, block[0], block[1], elem)
                         : uniformOf(nb, l, block[0], elem);
        if (affine) {
          // uniform_: from + (to - from) u; normal_: mean + std z.
          Value lo = createScalarConstant(nb, l, compute, a);
          Value span = createScalarConstant(nb, l, compute, normal ? b : b - a);
          v = arith::AddFOp::create(nb, l, lo,
                                    arith::MulFOp::create(nb, l, span, v));
        }
        return convertScalar(nb, l, v, elem);
      });
  return replaceWithResult(rw, op, out, resultType);
}

static constexpr llvm::StringLiteral kRReluFunctional =
    "aten::rrelu_with_noise_functional.default";

/// rrelu_with_noise_functional(self, noise, lower, upper, training) ->
/// (out, noise_out), torch's CPU kernel: training, x <= 0 draws
/// r = lower + (upper - lower) u (in f64, then the compute type), out = x r,
/// noise = r; x > 0 keeps x with noise 1. Not training: leaky_relu with
/// slope (lower + upper) / 2, noise unchanged.
static LogicalResult lowerRRelu(CallFunctionOp op, const OpArgs &args,
                                ConversionPatternRewriter &rw) {
  FailureOr<lowering::RankedTensor> self = args.tensor(0, "self");
  FailureOr<lowering::RankedTensor> noise = args.tensor(1, "noise");
  FailureOr<double> lower = args.getFloat(2, "lower", 0.125);
  FailureOr<double> upper = args.getFloat(3, "upper", 1.0 / 3.0);
  FailureOr<bool> training = args.getBool(4, "training", false);
  RankedTensorType outType = getResultTensorType(op, 0);
  RankedTensorType noiseType = getResultTensorType(op, 1);
  if (failed(self) || failed(noise) || failed(lower) || failed(upper) ||
      failed(training) || !outType || !noiseType)
    return rw.notifyMatchFailure(op, "expects tensors self and noise, "
                                     "constant bounds and training flag, "
                                     "and two tensor results");
  if (failed(checkNoGenerator(op, args, rw, 5)))
    return failure();
  Location loc = op.getLoc();
  SmallVector<OpFoldResult> sizes = getTensorSizes(rw, loc, *self);
  Type elem = outType.getElementType();
  Type compute = getComputeType(elem);
  if (!*training) {
    double slope = (*lower + *upper) / 2;
    Value out = createElementwiseGeneric(
        rw, loc, ValueRange{*self}, outType, sizes,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value x = convertScalar(b, l, a[0], compute);
          Value zero = createScalarConstant(b, l, compute, 0.0);
          Value pos =
              arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x, zero);
          Value neg = arith::MulFOp::create(
              b, l, x, createScalarConstant(b, l, compute, slope));
          return convertScalar(b, l, arith::SelectOp::create(b, l, pos, x, neg),
                               elem);
        });
    Value kept = lowering::castToType(rw, loc, *noise, noiseType);
    rw.replaceOp(op, ValueRange{out, kept});
    return success();
  }
  FailureOr<DrawState> state = getDrawState(op, rw);
  if (failed(state))
    return failure();
  // r where x <= 0, else 1, in the compute type.
  auto factor = [&](OpBuilder &b, Location l, std::array<Value, 4> block,
                    Value x) -> Value {
    Value u = arith::ExtFOp::create(b, l, b.getF64Type(),
                                    uniformOf(b, l, block[0], b.getF32Type()));
    Value r = arith::AddFOp::create(
        b, l, createScalarConstant(b, l, b.getF64Type(), *lower),
        arith::MulFOp::create(
            b, l, createScalarConstant(b, l, b.getF64Type(), *upper - *lower),
            u));
    r = convertScalar(b, l, r, compute);
    Value zero = createScalarConstant(b, l, compute, 0.0);
    Value nonPositive =
        arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLE, x, zero);
    return arith::SelectOp::create(b, l, nonPositive, r,
                                   createScalarConstant(b, l, compute, 1.0));
  };
  Value out = buildDraw(
      rw, loc, *state, ValueRange{*self}, outType, sizes,
      [&](OpBuilder &b, Location l, std::array<Value, 4> block, ValueRange a) {
        Value x = convertScalar(b, l, a[0], compute);
        Value f = factor(b, l, block, x);
        Value one = createScalarConstant(b, l, compute, 1.0);
        Value kept =
            arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, f, one);
        // x * 1 would be x anyway; select keeps -0.0 and NaN as torch does.
        Value y = arith::SelectOp::create(b, l, kept, x,
                                          arith::MulFOp::create(b, l, x, f));
        return convertScalar(b, l, y, elem);
      });
  Value newNoise = buildDraw(
      rw, loc, *state, ValueRange{*self}, noiseType, sizes,
      [&](OpBuilder &b, Location l, std::array<Value, 4> block, ValueRange a) {
        Value x = convertScalar(b, l, a[0], compute);
        return convertScalar(b, l, factor(b, l, block, x),
                             noiseType.getElementType());
      });
  rw.replaceOp(op, ValueRange{out, newNoise});
  return success();
}

/// rrelu_with_noise_backward(grad, self, noise, lower, upper, training,
/// self_is_result), torch's rule: training with upper - lower > 1e-6 gives
/// grad * noise; otherwise leaky_relu_backward with slope (lower + upper) / 2
/// (grad where self > 0, else grad * slope).
static LogicalResult lowerRReluBackward(CallFunctionOp op, const OpArgs &args,
                                        ConversionPatternRewriter &rw) {
  FailureOr<lowering::RankedTensor> grad = args.tensor(0, "grad_output");
  FailureOr<lowering::RankedTensor> self = args.tensor(1, "self");
  FailureOr<lowering::RankedTensor> noise = args.tensor(2, "noise");
  FailureOr<double> lower = args.getFloat(3, "lower");
  FailureOr<double> upper = args.getFloat(4, "upper");
  FailureOr<bool> training = args.getBool(5, "training");
  RankedTensorType resultType = getResultTensorType(op);
  if (failed(grad) || failed(self) || failed(noise) || failed(lower) ||
      failed(upper) || failed(training) || !resultType)
    return rw.notifyMatchFailure(op, "expects tensors grad_output, self and "
                                     "noise, constant bounds and training "
                                     "flag, and a tensor result");
  Location loc = op.getLoc();
  Type elem = resultType.getElementType();
  Type compute = getComputeType(elem);
  SmallVector<OpFoldResult> sizes = getTensorSizes(rw, loc, *grad);
  bool noiseGrad = *training && *upper - *lower > 1e-6;
  double slope = (*lower + *upper) / 2;
  Value out = createElementwiseGeneric(
      rw, loc, ValueRange{*grad, noiseGrad ? Value(*noise) : Value(*self)},
      resultType, sizes, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value g = convertScalar(b, l, a[0], compute);
        Value v = convertScalar(b, l, a[1], compute);
        if (noiseGrad)
          return convertScalar(b, l, arith::MulFOp::create(b, l, g, v), elem);
        Value zero = createScalarConstant(b, l, compute, 0.0);
        Value pos =
            arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, v, zero);
        Value scaled = arith::MulFOp::create(
            b, l, g, createScalarConstant(b, l, compute, slope));
        return convertScalar(
            b, l, arith::SelectOp::create(b, l, pos, g, scaled), elem);
      });
  return replaceWithResult(rw, op, out, resultType);
}

} // namespace

SmallVector<std::pair<Value, Value>>
mlir::joint::lowering::functionalizeRReluNoise(CallFunctionOp &op,
                                               RewriterBase &rewriter) {
  if (op.getTarget() != "aten::rrelu_with_noise.default" ||
      op->getNumResults() != 1)
    return {};
  OpArgs args(op, op->getOperands());
  FailureOr<lowering::RankedTensor> noise = args.tensor(1, "noise");
  if (failed(noise))
    return {};
  lowering::replaceByFunctionalForm(op, kRReluFunctional,
                                    TypeRange{noise->getType()}, rewriter);
  return {{*noise, op->getResult(1)}};
}

void mlir::joint::populateRandomPatterns(const TypeConverter &typeConverter,
                                         RewritePatternSet &patterns) {
  LoweringTable table(typeConverter, patterns);
  table.add({"aten::native_dropout.default"}, lowerNativeDropout);
  table.add({"aten::bernoulli.default", "aten::bernoulli.p",
             "aten::bernoulli_.float", "aten::bernoulli_.Tensor"},
            lowerBernoulli);
  table.add({"aten::rand.default", "aten::rand_like.default",
             "aten::randn.default", "aten::randn_like.default",
             "aten::uniform_.default", "aten::normal_.default"},
            lowerRand);
  table.add({kRReluFunctional}, lowerRRelu);
  table.add({"aten::rrelu_with_noise_backward.default"}, lowerRReluBackward);
}

//===- Elementwise.cpp - Pointwise aten ops to linalg.generic -------------===//
//
// One pattern and one table of scalar bodies for every pointwise aten op:
// arithmetic, math functions, activations and their backward, comparisons,
// bitwise and logical ops, where and masked_fill. Operands broadcast with
// torch's rules; tensor operands are cast to the op's recorded result dtype
// (torch's common dtype), the body computes in its CPU "opmath" type (bf16
// and f16 in f32, as torch's CPU kernels do) and rounds once to the result.
// Comparisons compute in the promoted operand type (torch's result_type).
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "joint/Conversion/JointToLinalg/JointToLinalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/StringMap.h"
#include <cmath>

using namespace mlir;
using namespace mlir::joint;

namespace {

/// How an op's computation type is chosen.
enum class ComputeKind {
  /// Opmath of the result dtype (arithmetic, math, activations).
  Result,
  /// The promoted operand type (torch.result_type); the result is bool.
  Compare,
  /// The result dtype itself (bitwise ops, where, masked_fill: exact ops).
  Exact,
  /// Operands as bool (logical ops); the body returns i1.
  Logical,
};

/// Scalar parameters of an op that are not broadcast operands.
struct BodyParams {
  Type computeType;
  Value alpha;            // add/sub
  StringRef roundingMode; // div: "", "trunc", "floor"
  StringRef approximate;  // gelu: "none", "tanh"
  Value threshold;        // threshold_backward
  Value lower, upper;     // clamp, clamp_min, clamp_max (null: no bound)
  Value scale;            // native_dropout_backward, elu
  Value slope;            // leaky_relu; elu: alpha * scale
  Value inputScale;       // elu, elu_backward
  bool isResult = false;  // elu_backward: the operand is elu's result
};

using BodyFn = Value (*)(OpBuilder &, Location, ValueRange, const BodyParams &);

/// The overload of most pointwise ops.
constexpr StringRef kDefault[] = {"default"};

/// One entry of the table: the aten name (without overload), the kinds of
/// its broadcast operands in schema order ('v' value, 'b' bool condition),
/// the scalar body, the overloads, whether each has an in-place form, and
/// the compute kind. A row states only what differs from the usual
/// (`.default`, in place too, computed in the result type).
struct ElementwiseOpInfo {
  StringRef name;
  StringRef operandKinds;
  BodyFn body;
  /// Overloads lowered (e.g. "Tensor", "Scalar"); each also in place
  /// (`name_.overload`) when `hasInPlace`.
  ArrayRef<StringRef> overloads = kDefault;
  bool hasInPlace = true;
  ComputeKind kind = ComputeKind::Result;
};

bool isFloat(Type type) { return isa<FloatType>(type); }

Value constant(OpBuilder &b, Location loc, Type type, double value) {
  return createScalarConstant(b, loc, type, value);
}

/// `x op y` on a float, bool or integer scalar (torch adds bools as `or`
/// and multiplies them as `and`).
template <typename FloatOp, typename BoolOp, typename IntOp>
Value binary(OpBuilder &b, Location loc, Value x, Value y) {
  if (isFloat(x.getType()))
    return FloatOp::create(b, loc, x, y);
  if (x.getType().isInteger(1))
    return BoolOp::create(b, loc, x, y);
  return IntOp::create(b, loc, x, y);
}
constexpr auto *add = &binary<arith::AddFOp, arith::OrIOp, arith::AddIOp>;
constexpr auto *mul = &binary<arith::MulFOp, arith::AndIOp, arith::MulIOp>;
Value sub(OpBuilder &b, Location loc, Value x, Value y) {
  if (isFloat(x.getType()))
    return arith::SubFOp::create(b, loc, x, y);
  return arith::SubIOp::create(b, loc, x, y);
}
Value divf(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::DivFOp::create(b, loc, x, y);
}
/// 1 / (1 + exp(-x)), torch's sigmoid.
Value sigmoid(OpBuilder &b, Location loc, Value x) {
  Type t = x.getType();
  Value one = constant(b, loc, t, 1.0);
  Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
  return divf(b, loc, one, arith::AddFOp::create(b, loc, one, e));
}

// Scalar bodies. Operands arrive in the compute type (bool for 'b').

Value bodyAdd(OpBuilder &b, Location loc, ValueRange a, const BodyParams &p) {
  Value y = p.alpha ? mul(b, loc, p.alpha, a[1]) : a[1];
  return add(b, loc, a[0], y);
}
Value bodySub(OpBuilder &b, Location loc, ValueRange a, const BodyParams &p) {
  Value y = p.alpha ? mul(b, loc, p.alpha, a[1]) : a[1];
  return sub(b, loc, a[0], y);
}
Value bodyRsub(OpBuilder &b, Location loc, ValueRange a, const BodyParams &p) {
  Value x = p.alpha ? mul(b, loc, p.alpha, a[0]) : a[0];
  return sub(b, loc, a[1], x);
}
Value bodyMul(OpBuilder &b, Location loc, ValueRange a, const BodyParams &) {
  return mul(b, loc, a[0], a[1]);
}
Value bodyDiv(OpBuilder &b, Location loc, ValueRange a, const BodyParams &p) {
  if (!isFloat(a[0].getType())) {
    if (p.roundingMode == "floor")
      return arith::FloorDivSIOp::create(b, loc, a[0], a[1]);
    return arith::DivSIOp::create(b, loc, a[0], a[1]);
  }
  Value q = divf(b, loc, a[0], a[1]);
  if (p.roundingMode == "trunc")
    return math::TruncOp::create(b, loc, q);
  if (p.roundingMode == "floor")
    return math::FloorOp::create(b, loc, q);
  return q;
}
/// torch's remainder (Python's %): the C remainder (fmod for floats), plus
/// b when it is nonzero and its sign differs from b's.
Value bodyRemainder(OpBuilder &b, Location loc, ValueRange a,
                    const BodyParams &) {
  Value x = a[0], y = a[1];
  bool f = isFloat(x.getType());
  Value zero = constant(b, loc, x.getType(), 0.0);
  auto less = [&](Value u, Value w) -> Value {
    if (f)
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, u, w);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, u, w);
  };
  Value r = f ? arith::RemFOp::create(b, loc, x, y).getResult()
              : arith::RemSIOp::create(b, loc, x, y).getResult();
  Value nonzero =
      f ? arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, r, zero)
              .getResult()
        : arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, r, zero)
              .getResult();
  Value fix = arith::AndIOp::create(
      b, loc, nonzero,
      arith::XOrIOp::create(b, loc, less(r, zero), less(y, zero)));
  Value shifted = f ? arith::AddFOp::create(b, loc, r, y).getResult()
                    : arith::AddIOp::create(b, loc, r, y).getResult();
  return arith::SelectOp::create(b, loc, fix, shifted, r);
}
/// torch's floor_divide: div with rounding_mode="floor".
Value bodyFloorDivide(OpBuilder &b, Location loc, ValueRange a,
                      const BodyParams &p) {
  BodyParams floor = p;
  floor.roundingMode = "floor";
  return bodyDiv(b, loc, a, floor);
}
Value bodyNeg(OpBuilder &b, Location loc, ValueRange a, const BodyParams &) {
  if (isFloat(a[0].getType()))
    return arith::NegFOp::create(b, loc, a[0]);
  return arith::SubIOp::create(b, loc, constant(b, loc, a[0].getType(), 0),
                               a[0]);
}
/// torch's pow with the special exponents of its CPU kernel (0.5, 2, 3,
/// -0.5, -1, -2 use sqrt / products / reciprocals).
Value bodyPow(OpBuilder &b, Location loc, ValueRange a, const BodyParams &) {
  Value x = a[0], y = a[1];
  Type t = x.getType();
  if (!isFloat(t))
    return math::IPowIOp::create(b, loc, x, y);
  if (auto c = y.getDefiningOp<arith::ConstantOp>()) {
    double e = cast<FloatAttr>(c.getValue()).getValueAsDouble();
    auto one = [&] { return constant(b, loc, t, 1.0); };
    if (e == 0.5)
      return math::SqrtOp::create(b, loc, x);
    if (e == 2.0)
      return arith::MulFOp::create(b, loc, x, x);
    if (e == 3.0)
      return arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, x, x),
                                   x);
    if (e == -0.5)
      return math::RsqrtOp::create(b, loc, x);
    if (e == -1.0)
      return divf(b, loc, one(), x);
    if (e == -2.0)
      return divf(b, loc, one(), arith::MulFOp::create(b, loc, x, x));
  }
  return math::PowFOp::create(b, loc, x, y);
}
/// A body that is one unary `math` op on the (float) operand.
template <typename MathOp>
Value bodyUnaryMath(OpBuilder &b, Location loc, ValueRange a,
                    const BodyParams &) {
  return MathOp::create(b, loc, a[0]);
}
Value bodyTanh(OpBuilder &b, Location loc, ValueRange a, const BodyParams &) {
  return math::TanhOp::create(b, loc, a[0]);
}
Value bodyAbs(OpBuilder &b, Location loc, ValueRange a, const BodyParams &) {
  if (isFloat(a[0].getType()))
    return math::AbsFOp::create(b, loc, a[0]);
  return math::AbsIOp::create(b, loc, a[0]);
}
Value bodyReciprocal(OpBuilder &b, Location loc, ValueRange a,
                     const BodyParams &) {
  return divf(b, loc, constant(b, loc, a[0].getType(), 1.0), a[0]);
}
Value bodySigmoid(OpBuilder &b, Location loc, ValueRange a,
                  const BodyParams &) {
  return sigmoid(b, loc, a[0]);
}
/// x / (1 + exp(-x)), torch's silu.
Value bodySilu(OpBuilder &b, Location loc, ValueRange a, const BodyParams &) {
  Value x = a[0];
  Value one = constant(b, loc, x.getType(), 1.0);
  Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
  return divf(b, loc, x, arith::AddFOp::create(b, loc, one, e));
}
/// grad * s * (1 + x * (1 - s)), s = sigmoid(x).
Value bodySiluBackward(OpBuilder &b, Location loc, ValueRange a,
                       const BodyParams &) {
  Value grad = a[0], x = a[1];
  Value one = constant(b, loc, x.getType(), 1.0);
  Value s = sigmoid(b, loc, x);
  Value inner = arith::AddFOp::create(
      b, loc, one,
      arith::MulFOp::create(b, loc, x, arith::SubFOp::create(b, loc, one, s)));
  return arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, grad, s),
                               inner);
}
/// grad * (1 - y * y).
Value bodyTanhBackward(OpBuilder &b, Location loc, ValueRange a,
                       const BodyParams &) {
  Value grad = a[0], y = a[1];
  Value one = constant(b, loc, y.getType(), 1.0);
  return arith::MulFOp::create(
      b, loc, grad,
      arith::SubFOp::create(b, loc, one, arith::MulFOp::create(b, loc, y, y)));
}
/// torch's sigmoid_backward kernel: grad * (1 - y) * y, y the output.
Value bodySigmoidBackward(OpBuilder &b, Location loc, ValueRange a,
                          const BodyParams &) {
  Value grad = a[0], y = a[1];
  Value one = constant(b, loc, y.getType(), 1.0);
  Value g = arith::MulFOp::create(b, loc, grad,
                                  arith::SubFOp::create(b, loc, one, y));
  return arith::MulFOp::create(b, loc, g, y);
}
/// torch's gelu: x * 0.5 * (1 + erf(x / sqrt(2))), or the tanh form
/// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))).
Value bodyGelu(OpBuilder &b, Location loc, ValueRange a, const BodyParams &p) {
  Value x = a[0];
  Type t = x.getType();
  Value half = constant(b, loc, t, 0.5), one = constant(b, loc, t, 1.0);
  if (p.approximate == "tanh") {
    Value beta = constant(b, loc, t, M_SQRT2 * M_2_SQRTPI * 0.5);
    Value kappa = constant(b, loc, t, 0.044715);
    Value cube =
        arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, x, x), x);
    Value inner = arith::MulFOp::create(
        b, loc, beta,
        arith::AddFOp::create(b, loc, x,
                              arith::MulFOp::create(b, loc, kappa, cube)));
    Value th = math::TanhOp::create(b, loc, inner);
    return arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, half, x),
                                 arith::AddFOp::create(b, loc, one, th));
  }
  Value erf = math::ErfOp::create(
      b, loc, arith::MulFOp::create(b, loc, x, constant(b, loc, t, M_SQRT1_2)));
  return arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, x, half),
                               arith::AddFOp::create(b, loc, one, erf));
}
/// torch's gelu_backward (both approximations, formulas of its CPU kernel).
Value bodyGeluBackward(OpBuilder &b, Location loc, ValueRange a,
                       const BodyParams &p) {
  Value grad = a[0], x = a[1];
  Type t = x.getType();
  auto c = [&](double v) { return constant(b, loc, t, v); };
  auto mulf = [&](Value l, Value r) -> Value {
    return arith::MulFOp::create(b, loc, l, r);
  };
  auto addf = [&](Value l, Value r) -> Value {
    return arith::AddFOp::create(b, loc, l, r);
  };
  if (p.approximate == "tanh") {
    double kBeta = M_SQRT2 * M_2_SQRTPI * 0.5, kKappa = 0.044715;
    Value xSq = mulf(x, x);
    Value xCube = mulf(xSq, x);
    Value inner = mulf(c(kBeta), addf(x, mulf(c(kKappa), xCube)));
    Value th = math::TanhOp::create(b, loc, inner);
    Value left = mulf(c(0.5), x);
    Value right = addf(c(1.0), th);
    Value leftDerivative = mulf(c(0.5), right);
    Value tanhDerivative = arith::SubFOp::create(b, loc, c(1.0), mulf(th, th));
    Value innerDerivative =
        mulf(c(kBeta), addf(c(1.0), mulf(c(3.0 * kKappa), xSq)));
    Value rightDerivative = mulf(mulf(left, tanhDerivative), innerDerivative);
    return mulf(grad, addf(leftDerivative, rightDerivative));
  }
  double kAlpha = M_SQRT1_2, kBeta = M_2_SQRTPI * M_SQRT1_2 * 0.5;
  Value cdf = mulf(
      c(0.5), addf(c(1.0), math::ErfOp::create(b, loc, mulf(x, c(kAlpha)))));
  Value pdf =
      mulf(math::ExpOp::create(b, loc, mulf(c(-0.5), mulf(x, x))), c(kBeta));
  return mulf(grad, addf(cdf, mulf(x, pdf)));
}
/// max(x, 0), NaN propagating (torch's clamp_min(0)).
Value bodyRelu(OpBuilder &b, Location loc, ValueRange a, const BodyParams &) {
  Value zero = constant(b, loc, a[0].getType(), 0.0);
  if (isFloat(a[0].getType()))
    return arith::MaximumFOp::create(b, loc, a[0], zero);
  return arith::MaxSIOp::create(b, loc, a[0], zero);
}
/// self <= threshold ? 0 : grad.
Value bodyThresholdBackward(OpBuilder &b, Location loc, ValueRange a,
                            const BodyParams &p) {
  Value grad = a[0], x = a[1];
  Value zero = constant(b, loc, grad.getType(), 0.0);
  Value le = isFloat(x.getType())
                 ? Value(arith::CmpFOp::create(
                       b, loc, arith::CmpFPredicate::OLE, x, p.threshold))
                 : Value(arith::CmpIOp::create(
                       b, loc, arith::CmpIPredicate::sle, x, p.threshold));
  return arith::SelectOp::create(b, loc, le, zero, grad);
}

/// min(max(x, lower), upper) with NaN propagating (torch's clamp).
Value bodyClamp(OpBuilder &b, Location loc, ValueRange a, const BodyParams &p) {
  Value x = a[0];
  bool f = isFloat(x.getType());
  if (p.lower)
    x = f ? Value(arith::MaximumFOp::create(b, loc, x, p.lower))
          : Value(arith::MaxSIOp::create(b, loc, x, p.lower));
  if (p.upper)
    x = f ? Value(arith::MinimumFOp::create(b, loc, x, p.upper))
          : Value(arith::MinSIOp::create(b, loc, x, p.upper));
  return x;
}
Value bodyMinimum(OpBuilder &b, Location loc, ValueRange a,
                  const BodyParams &) {
  if (isFloat(a[0].getType()))
    return arith::MinimumFOp::create(b, loc, a[0], a[1]);
  return arith::MinSIOp::create(b, loc, a[0], a[1]);
}
Value bodyMaximum(OpBuilder &b, Location loc, ValueRange a,
                  const BodyParams &) {
  if (isFloat(a[0].getType()))
    return arith::MaximumFOp::create(b, loc, a[0], a[1]);
  return arith::MaxSIOp::create(b, loc, a[0], a[1]);
}
/// torch's round: half to even.
Value bodyRound(OpBuilder &b, Location loc, ValueRange a, const BodyParams &) {
  return math::RoundEvenOp::create(b, loc, a[0]);
}
/// x <= 0 ? (exp(x * input_scale) - 1) * alpha * scale : x * scale.
Value bodyElu(OpBuilder &b, Location loc, ValueRange a, const BodyParams &p) {
  Value x = a[0];
  Type t = x.getType();
  Value zero = constant(b, loc, t, 0.0), one = constant(b, loc, t, 1.0);
  Value le = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, x, zero);
  Value e = math::ExpOp::create(b, loc,
                                arith::MulFOp::create(b, loc, x, p.inputScale));
  Value negative = arith::MulFOp::create(
      b, loc, arith::SubFOp::create(b, loc, e, one), p.slope);
  Value positive = arith::MulFOp::create(b, loc, x, p.scale);
  return arith::SelectOp::create(b, loc, le, negative, positive);
}
/// torch's elu_backward kernel, y being elu's input or (is_result) output:
/// y <= 0 ? g * input_scale * (y + alpha * scale)            (is_result)
///        : g * input_scale * alpha * scale * exp(y * input_scale),
/// else g * scale.
Value bodyEluBackward(OpBuilder &b, Location loc, ValueRange a,
                      const BodyParams &p) {
  Value g = a[0], y = a[1];
  Value zero = constant(b, loc, y.getType(), 0.0);
  Value le = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, y, zero);
  Value gi = arith::MulFOp::create(b, loc, g, p.inputScale);
  Value negative =
      p.isResult
          ? arith::MulFOp::create(b, loc, gi,
                                  arith::AddFOp::create(b, loc, y, p.slope))
          : arith::MulFOp::create(
                b, loc, arith::MulFOp::create(b, loc, gi, p.slope),
                math::ExpOp::create(
                    b, loc, arith::MulFOp::create(b, loc, y, p.inputScale)));
  Value positive = arith::MulFOp::create(b, loc, g, p.scale);
  return arith::SelectOp::create(b, loc, le, negative, positive);
}
/// x > 0 ? x : x * negative_slope.
Value bodyLeakyRelu(OpBuilder &b, Location loc, ValueRange a,
                    const BodyParams &p) {
  Value x = a[0];
  Value zero = constant(b, loc, x.getType(), 0.0);
  Value gt = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
  return arith::SelectOp::create(b, loc, gt, x,
                                 arith::MulFOp::create(b, loc, x, p.slope));
}
/// grad * mask * scale (the mask cast to the gradient's dtype).
Value bodyDropoutBackward(OpBuilder &b, Location loc, ValueRange a,
                          const BodyParams &p) {
  return arith::MulFOp::create(
      b, loc, arith::MulFOp::create(b, loc, a[0], a[1]), p.scale);
}

/// A comparison as torch computes it: float predicate `F` (ordered, but
/// unordered for `ne` so that NaN != NaN), signed predicate `S` on integers
/// and unsigned `U` on bools.
template <arith::CmpFPredicate F, arith::CmpIPredicate S,
          arith::CmpIPredicate U = S>
Value bodyCompare(OpBuilder &b, Location loc, ValueRange a,
                  const BodyParams &) {
  Type t = a[0].getType();
  if (isFloat(t))
    return arith::CmpFOp::create(b, loc, F, a[0], a[1]);
  return arith::CmpIOp::create(b, loc, t.isInteger(1) ? U : S, a[0], a[1]);
}
using FP = arith::CmpFPredicate;
using IP = arith::CmpIPredicate;
Value bodyAnd(OpBuilder &b, Location loc, ValueRange a, const BodyParams &) {
  return arith::AndIOp::create(b, loc, a[0], a[1]);
}
Value bodyOr(OpBuilder &b, Location loc, ValueRange a, const BodyParams &) {
  return arith::OrIOp::create(b, loc, a[0], a[1]);
}
Value bodyXor(OpBuilder &b, Location loc, ValueRange a, const BodyParams &) {
  return arith::XOrIOp::create(b, loc, a[0], a[1]);
}
Value bodyNot(OpBuilder &b, Location loc, ValueRange a, const BodyParams &) {
  Type t = a[0].getType();
  Value ones = arith::ConstantOp::create(
      b, loc,
      b.getIntegerAttr(t, APInt::getAllOnes(t.getIntOrFloatBitWidth())));
  return arith::XOrIOp::create(b, loc, a[0], ones);
}
/// where(cond, self, other); masked_fill(self, mask, value) is
/// where(mask, value, self).
Value bodyWhere(OpBuilder &b, Location loc, ValueRange a, const BodyParams &) {
  return arith::SelectOp::create(b, loc, a[0], a[1], a[2]);
}
Value bodyMaskedFill(OpBuilder &b, Location loc, ValueRange a,
                     const BodyParams &) {
  return arith::SelectOp::create(b, loc, a[1], a[2], a[0]);
}

constexpr StringRef kTensorScalar[] = {"Tensor", "Scalar"};
constexpr StringRef kDefaultScalar[] = {"default", "Scalar"};
constexpr StringRef kDiv[] = {"Tensor", "Scalar", "Tensor_mode", "Scalar_mode"};
constexpr StringRef kPow[] = {"Tensor_Scalar", "Tensor_Tensor", "Scalar"};
constexpr StringRef kWhere[] = {"self", "ScalarOther", "ScalarSelf", "Scalar"};
constexpr StringRef kRsub[] = {"Tensor", "Scalar"};

/// The table: every pointwise op the lowering knows.
const ElementwiseOpInfo kElementwiseOps[] = {
    {"add", "vv", bodyAdd, kTensorScalar},
    {"sub", "vv", bodySub, kTensorScalar},
    {"rsub", "vv", bodyRsub, kRsub, false},
    {"mul", "vv", bodyMul, kTensorScalar},
    {"div", "vv", bodyDiv, kDiv},
    {"remainder", "vv", bodyRemainder, kTensorScalar},
    {"floor_divide", "vv", bodyFloorDivide, kDefaultScalar},
    {"neg", "v", bodyNeg},
    {"pow", "vv", bodyPow, kPow},
    {"rsqrt", "v", bodyUnaryMath<math::RsqrtOp>},
    {"exp", "v", bodyUnaryMath<math::ExpOp>},
    {"log", "v", bodyUnaryMath<math::LogOp>},
    {"sin", "v", bodyUnaryMath<math::SinOp>},
    {"cos", "v", bodyUnaryMath<math::CosOp>},
    {"sqrt", "v", bodyUnaryMath<math::SqrtOp>},
    {"erf", "v", bodyUnaryMath<math::ErfOp>},
    {"log1p", "v", bodyUnaryMath<math::Log1pOp>},
    {"expm1", "v", bodyUnaryMath<math::ExpM1Op>},
    {"floor", "v", bodyUnaryMath<math::FloorOp>},
    {"ceil", "v", bodyUnaryMath<math::CeilOp>},
    {"tanh", "v", bodyTanh},
    {"abs", "v", bodyAbs},
    {"reciprocal", "v", bodyReciprocal},
    {"sigmoid", "v", bodySigmoid},
    {"silu", "v", bodySilu},
    {"silu_backward", "vv", bodySiluBackward, kDefault, false},
    {"tanh_backward", "vv", bodyTanhBackward, kDefault, false},
    {"sigmoid_backward", "vv", bodySigmoidBackward, kDefault, false},
    {"gelu", "v", bodyGelu},
    {"gelu_backward", "vv", bodyGeluBackward, kDefault, false},
    {"relu", "v", bodyRelu},
    {"threshold_backward", "vv", bodyThresholdBackward, kDefault, false},
    {"clamp", "v", bodyClamp},
    {"clamp_min", "v", bodyClamp},
    {"clamp_max", "v", bodyClamp},
    {"minimum", "vv", bodyMinimum, kDefault, false},
    {"maximum", "vv", bodyMaximum, kDefault, false},
    {"round", "v", bodyRound},
    {"elu", "v", bodyElu},
    {"elu_backward", "vv", bodyEluBackward, kDefault, false},
    {"leaky_relu", "v", bodyLeakyRelu},
    {"native_dropout_backward", "vv", bodyDropoutBackward, kDefault, false},
    {"eq", "vv", bodyCompare<FP::OEQ, IP::eq>, kTensorScalar, true,
     ComputeKind::Compare},
    {"ne", "vv", bodyCompare<FP::UNE, IP::ne>, kTensorScalar, true,
     ComputeKind::Compare},
    {"lt", "vv", bodyCompare<FP::OLT, IP::slt, IP::ult>, kTensorScalar, true,
     ComputeKind::Compare},
    {"le", "vv", bodyCompare<FP::OLE, IP::sle, IP::ule>, kTensorScalar, true,
     ComputeKind::Compare},
    {"gt", "vv", bodyCompare<FP::OGT, IP::sgt, IP::ugt>, kTensorScalar, true,
     ComputeKind::Compare},
    {"ge", "vv", bodyCompare<FP::OGE, IP::sge, IP::uge>, kTensorScalar, true,
     ComputeKind::Compare},
    {"bitwise_and", "vv", bodyAnd, kTensorScalar, true, ComputeKind::Exact},
    {"bitwise_or", "vv", bodyOr, kTensorScalar, true, ComputeKind::Exact},
    {"bitwise_xor", "vv", bodyXor, kTensorScalar, true, ComputeKind::Exact},
    {"bitwise_not", "v", bodyNot, kDefault, true, ComputeKind::Exact},
    {"logical_and", "vv", bodyAnd, kDefault, true, ComputeKind::Logical},
    {"logical_or", "vv", bodyOr, kDefault, true, ComputeKind::Logical},
    {"logical_xor", "vv", bodyXor, kDefault, true, ComputeKind::Logical},
    {"logical_not", "v", bodyNot, kDefault, true, ComputeKind::Logical},
    {"where", "bvv", bodyWhere, kWhere, false, ComputeKind::Exact},
    {"masked_fill", "vbv", bodyMaskedFill, kTensorScalar, true,
     ComputeKind::Exact},
};

/// Schema names of the broadcast operands, for keyword lookups.
StringRef getOperandName(StringRef op, unsigned i) {
  if (op == "where")
    return std::array<StringRef, 3>{"condition", "self", "other"}[i];
  if (op == "masked_fill")
    return std::array<StringRef, 3>{"self", "mask", "value"}[i];
  if (op == "native_dropout_backward")
    return i == 0 ? "grad_output" : "mask";
  if (op.ends_with("_backward"))
    return i == 0
               ? "grad_output"
               : (op == "tanh_backward" || op == "sigmoid_backward" ? "output"
                                                                    : "self");
  if (op == "pow")
    return i == 0 ? "self" : "exponent";
  return i == 0 ? "self" : "other";
}

/// Broadcast operand `i` of `op` (schema index and name).
ArgRef getOperandRef(StringRef op, unsigned i) {
  if (op == "elu_backward" && i == 1)
    return {5, "self_or_result"};
  return {i, getOperandName(op, i)};
}

/// torch's result_type over the broadcast operands: dimensioned tensors
/// first, then 0-d tensors, then Python scalars, each lifting the result
/// only to a higher category (c10 `ResultTypeState`). Python floats count
/// as the default dtype f32, ints as i64.
Type getPromotedType(ArrayRef<Value> tensors, ArrayRef<Type> scalarTypes) {
  Type dim, zero, wrapped;
  auto promote = [](Type acc, Type t) {
    return acc ? promoteTypes(acc, t) : t;
  };
  for (Value v : tensors) {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getRank() == 0)
      zero = promote(zero, type.getElementType());
    else
      dim = promote(dim, type.getElementType());
  }
  for (Type t : scalarTypes)
    wrapped = promote(wrapped, t);
  auto combine = [](Type higher, Type lower) -> Type {
    if (!higher)
      return lower;
    if (!lower)
      return higher;
    if (isa<FloatType>(higher))
      return higher;
    if (higher.isInteger(1) || isa<FloatType>(lower))
      return promoteTypes(higher, lower);
    return higher;
  };
  return combine(dim, combine(zero, wrapped));
}

/// The pattern: one for every target of the table.
class ElementwiseConversion : public JointOpConversion {
public:
  ElementwiseConversion(const TypeConverter &typeConverter,
                        MLIRContext *context, ArrayRef<StringRef> targets,
                        llvm::StringMap<const ElementwiseOpInfo *> infos)
      : JointOpConversion(typeConverter, context, targets),
        infos(std::move(infos)) {}

  LogicalResult rewrite(CallFunctionOp op, OpAdaptor adaptor,
                        ConversionPatternRewriter &rewriter) const override {
    const ElementwiseOpInfo *info = infos.lookup(op.getTarget());
    RankedTensorType resultType = getResultTensorType(op);
    if (!info || !resultType || op->getNumResults() != 1)
      return rewriter.notifyMatchFailure(op, "expects one tensor result");
    Location loc = op.getLoc();
    Type resultElement = resultType.getElementType();
    if (resultElement.isUnsignedInteger() || !resultElement.isIntOrFloat())
      return rewriter.notifyMatchFailure(op, "unsupported result dtype");

    // Broadcast operands: tensors, or scalars (attributes / SymInts).
    unsigned numOperands = info->operandKinds.size();
    SmallVector<Value> tensors;
    SmallVector<int> tensorIndex(numOperands, -1);
    SmallVector<Type> scalarTypes;
    for (unsigned i = 0; i < numOperands; ++i) {
      ArgRef arg = getOperandRef(info->name, i);
      Attribute attr = getArgAttr(op, arg);
      if (auto ref = dyn_cast_if_present<OperandRefAttr>(attr)) {
        if (ref.getIndex() >= adaptor.getInputs().size())
          return rewriter.notifyMatchFailure(op, "operand out of range");
        Value value = adaptor.getInputs()[ref.getIndex()];
        if (isa<RankedTensorType>(value.getType())) {
          tensorIndex[i] = tensors.size();
          tensors.push_back(value);
          continue;
        }
        scalarTypes.push_back(value.getType().isInteger(1)
                                  ? value.getType()
                                  : rewriter.getI64Type());
        continue;
      }
      if (isa_and_present<FloatAttr>(attr))
        scalarTypes.push_back(rewriter.getF32Type());
      else if (isa_and_present<BoolAttr>(attr))
        scalarTypes.push_back(rewriter.getI1Type());
      else if (isa_and_present<IntegerAttr>(attr))
        scalarTypes.push_back(rewriter.getI64Type());
      else
        return rewriter.notifyMatchFailure(
            op, "operand " + Twine(i) + " is neither a tensor nor a number");
    }

    // The common type operands are cast to, and the type computed in.
    Type common = resultElement;
    if (info->kind == ComputeKind::Compare)
      common = getPromotedType(tensors, scalarTypes);
    if (info->kind == ComputeKind::Logical)
      common = rewriter.getI1Type();
    if (!common || common.isUnsignedInteger())
      return rewriter.notifyMatchFailure(op, "unsupported operand dtypes");
    Type computeType =
        info->kind == ComputeKind::Exact || info->kind == ComputeKind::Logical
            ? common
            : getComputeType(common);

    BodyParams params;
    params.computeType = computeType;
    if (failed(readParams(op, adaptor, rewriter, *info, params)))
      return failure();

    // Scalars are converted outside the generic, in the compute type.
    SmallVector<Value> scalars(numOperands);
    for (unsigned i = 0; i < numOperands; ++i) {
      if (tensorIndex[i] >= 0)
        continue;
      Type type =
          info->operandKinds[i] == 'b' ? rewriter.getI1Type() : computeType;
      FailureOr<Value> scalar = getScalarArg(
          op, adaptor, rewriter, getOperandRef(info->name, i), type);
      if (failed(scalar))
        return failure();
      scalars[i] = *scalar;
    }

    FailureOr<SmallVector<OpFoldResult>> sizes =
        getBroadcastResultSizes(rewriter, loc, tensors, resultType);
    if (failed(sizes))
      return rewriter.notifyMatchFailure(
          op, "a symbolic result size has no operand to read it from");
    StringRef operandKinds = info->operandKinds;
    BodyFn body = info->body;
    Value result = createElementwiseGeneric(
        rewriter, loc, tensors, resultType, *sizes,
        [&](OpBuilder &b, Location l, ValueRange elements) {
          SmallVector<Value> args;
          for (unsigned i = 0; i < numOperands; ++i) {
            if (tensorIndex[i] < 0) {
              args.push_back(scalars[i]);
              continue;
            }
            Value element = elements[tensorIndex[i]];
            if (operandKinds[i] == 'b') {
              args.push_back(convertScalar(b, l, element, b.getI1Type()));
              continue;
            }
            // Round to the common dtype first, as torch's iterator does.
            element = convertScalar(b, l, element, common);
            args.push_back(convertScalar(b, l, element, computeType));
          }
          return convertScalar(b, l, body(b, l, args, params), resultElement);
        });
    rewriter.replaceOp(op, result);
    return success();
  }

private:
  /// Reads the non-broadcast scalar parameters of `info`'s op.
  LogicalResult readParams(CallFunctionOp op, OpAdaptor adaptor,
                           ConversionPatternRewriter &rewriter,
                           const ElementwiseOpInfo &info,
                           BodyParams &params) const {
    StringRef name = info.name;
    if (name == "add" || name == "sub" || name == "rsub") {
      if (!isNoneArg(op, {2, "alpha"})) {
        FailureOr<double> alpha =
            getConstantArg<double>(op, rewriter, {2, "alpha"});
        if (failed(alpha))
          return failure();
        if (*alpha != 1.0)
          params.alpha = createScalarConstant(rewriter, op.getLoc(),
                                              params.computeType, *alpha);
      }
    } else if (name == "div") {
      if (!isNoneArg(op, {2, "rounding_mode"})) {
        FailureOr<StringRef> mode =
            getConstantArg<StringRef>(op, rewriter, {2, "rounding_mode"});
        if (failed(mode))
          return failure();
        if (*mode != "trunc" && *mode != "floor")
          return rewriter.notifyMatchFailure(op, "unknown rounding_mode '" +
                                                     *mode + "'");
        params.roundingMode = *mode;
      }
    } else if (name == "gelu" || name == "gelu_backward") {
      unsigned index = name == "gelu" ? 1 : 2;
      FailureOr<StringRef> approximate = getConstantArg<StringRef>(
          op, rewriter, {index, "approximate"}, "none");
      if (failed(approximate))
        return failure();
      if (*approximate != "none" && *approximate != "tanh")
        return rewriter.notifyMatchFailure(op, "unknown approximate '" +
                                                   *approximate + "'");
      params.approximate = *approximate;
    } else if (name == "threshold_backward") {
      FailureOr<Value> threshold = getScalarArg(
          op, adaptor, rewriter, {2, "threshold"}, params.computeType);
      if (failed(threshold))
        return failure();
      params.threshold = *threshold;
    } else if (name == "clamp" || name == "clamp_min" || name == "clamp_max") {
      auto bound = [&](ArgRef arg, Value &out) -> LogicalResult {
        if (isNoneArg(op, arg))
          return success();
        FailureOr<Value> v =
            getScalarArg(op, adaptor, rewriter, arg, params.computeType);
        if (failed(v))
          return failure();
        out = *v;
        return success();
      };
      if (name != "clamp_max" && failed(bound({1, "min"}, params.lower)))
        return failure();
      ArgRef upper = name == "clamp" ? ArgRef{2, "max"} : ArgRef{1, "max"};
      if (name != "clamp_min" && failed(bound(upper, params.upper)))
        return failure();
    } else if (name == "native_dropout_backward") {
      FailureOr<Value> scale =
          getScalarArg(op, adaptor, rewriter, {2, "scale"}, params.computeType);
      if (failed(scale))
        return failure();
      params.scale = *scale;
    } else if (name == "leaky_relu") {
      FailureOr<Value> slope =
          getScalarArg(op, adaptor, rewriter, {1, "negative_slope"},
                       params.computeType, 0.01);
      if (failed(slope))
        return failure();
      params.slope = *slope;
    } else if (name == "elu" || name == "elu_backward") {
      FailureOr<double> alpha =
          getConstantArg<double>(op, rewriter, {1, "alpha"}, 1.0);
      FailureOr<double> scale =
          getConstantArg<double>(op, rewriter, {2, "scale"}, 1.0);
      FailureOr<double> inputScale =
          getConstantArg<double>(op, rewriter, {3, "input_scale"}, 1.0);
      if (failed(alpha) || failed(scale) || failed(inputScale))
        return failure();
      if (name == "elu_backward") {
        FailureOr<bool> isResult =
            getConstantArg<bool>(op, rewriter, {4, "is_result"}, false);
        if (failed(isResult))
          return failure();
        params.isResult = *isResult;
      }
      Location loc = op.getLoc();
      params.slope = createScalarConstant(rewriter, loc, params.computeType,
                                          *alpha * *scale);
      params.scale =
          createScalarConstant(rewriter, loc, params.computeType, *scale);
      params.inputScale =
          createScalarConstant(rewriter, loc, params.computeType, *inputScale);
    }
    return success();
  }

  llvm::StringMap<const ElementwiseOpInfo *> infos;
};

} // namespace

void mlir::joint::populateElementwisePatterns(
    const TypeConverter &typeConverter, RewritePatternSet &patterns) {
  llvm::StringMap<const ElementwiseOpInfo *> infos;
  for (const ElementwiseOpInfo &info : kElementwiseOps) {
    for (StringRef overload : info.overloads) {
      infos[("aten::" + info.name + "." + overload).str()] = &info;
      if (info.hasInPlace)
        infos[("aten::" + info.name + "_." + overload).str()] = &info;
    }
  }
  SmallVector<StringRef> targets;
  for (auto &entry : infos)
    targets.push_back(entry.getKey());
  patterns.add<ElementwiseConversion>(typeConverter, patterns.getContext(),
                                      targets, std::move(infos));
}

//===- Pooling.cpp - 2-d pooling, upsampling, backwards to linalg ---------===//
//
// Max, average and adaptive average pooling over the two trailing dims of a
// static [N, C, H, W] tensor, with torch's CPU semantics (NCHW kernels):
// - `max_pool2d_with_indices`: one `linalg.generic` over (n, c, oh, ow, kh,
//   kw) reading the input at oh * stride + kh * dilation of its padded copy,
//   carrying the maximum and its int64 index ih * W + iw; padded positions
//   are skipped, NaN wins (the last NaN, as torch's `val > max || isnan`),
//   ties keep the first index, compared explicitly so that the visiting order
//   does not matter;
// - `avg_pool2d`: `linalg.pooling_nchw_sum` over the zero-padded input into
//   an f32 (bf16/f16) accumulator, then a generic dividing each sum by its
//   window's divisor (torch's: the window clipped to the padded input, or to
//   the input without count_include_pad, or divisor_override);
// - `_adaptive_avg_pool2d`: bins [floor(i * H / O), ceil((i + 1) * H / O));
//   `linalg.pooling_nchw_sum` when O divides H, else a generic over the
//   largest bin with the smaller bins masked; sum / kh / kw as torch;
// - the three backwards are gathers, one generic over (n, c, ih, iw) with
//   reduction loops over the windows that cover the input position (each
//   element is written once), visiting them in torch's increasing output
//   order: max pool adds grad_output where `indices` names the position (the
//   scatter-add of torch, for indices the forward with the same arguments
//   produced), average pooling adds grad_output / divisor.
// bf16/f16 sums accumulate in f32 and round once.
//
// Nearest 2-d upsampling (torch's UpSample.h `nearest_idx`): output position
// o reads input min(floor(o * scale), in - 1), scale = in / out, or 1 /
// scales_h|w when given, in f32 (identity when out == in, o / 2 when out ==
// 2 * in). The forward is a copy through `d floordiv k` when every position
// maps so (out = k * in), else a gather of the computed indices; the backward
// sums grad_output over the k x k windows (`linalg.pooling_nchw_sum`), or
// gathers, for each input position, the output positions mapping to it
// (found at compile time, visited in increasing order as torch adds them).
//
// Bilinear 2-d upsampling (torch's UpSample.h linear tables in f32: source
// index `area_pixel_compute_source_index`, i0 = min(floor(src), in - 1),
// i1 = i0 + (i0 < in - 1), l1 = src - i0 clamped to [0, 1], l0 = 1 - l1,
// computed at compile time as constant operands): the forward is one
// generic reading four inputs, (x00 * w0 + x01 * w1) * h0 + (x10 * w0 + x11
// * w1) * h1; the backward gathers, for each input position, the output
// positions touching it in row-major order, adding h * w * g for i00, i01,
// i10, i11 in turn as torch's `cpu_upsample_linear_backward`.
//
//===----------------------------------------------------------------------===//

#include "UtilsOps.h"
#include "joint/Conversion/JointToLinalg/JointToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::joint;
using namespace mlir::joint::lowering;

namespace {

/// Kernel, stride, padding and dilation of a 2-d pooling (one entry per
/// spatial dim), ceil_mode, and the static sizes it pools: input [N, C, H, W]
/// (`in`) into [N, C, OH, OW] (`out`).
struct PoolParams {
  int64_t kernel[2], stride[2], padding[2], dilation[2] = {1, 1};
  bool ceilMode = false;
  SmallVector<int64_t> in, out;
};

/// A 2-entry int list argument `name` (a single value applies to both dims);
/// `dflt` when absent or empty (torch's `stride=[]` means the kernel size).
static LogicalResult readPair(CallFunctionOp op, const OpArgs &args,
                              unsigned index, StringRef name,
                              ArrayRef<int64_t> dflt, int64_t (&out)[2],
                              ConversionPatternRewriter &rw) {
  SmallVector<int64_t> list(dflt);
  if (!args.isNone(index, name)) {
    FailureOr<SmallVector<int64_t>> read = args.getIntList(index, name);
    if (failed(read)) {
      FailureOr<int64_t> one = args.getInt(index, name);
      if (failed(one))
        return rw.notifyMatchFailure(op, Twine(name) + " must be constant");
      read = SmallVector<int64_t>{*one};
    }
    if (!read->empty())
      list = *read;
  }
  if (list.size() == 1)
    list.push_back(list.front());
  if (list.size() != 2)
    return rw.notifyMatchFailure(op, Twine(name) + " must have 1 or 2 entries");
  out[0] = list[0];
  out[1] = list[1];
  return success();
}

/// Static [N, C, H, W] `input` and [N, C, OH, OW] `result`, or a refusal.
static LogicalResult readPoolShapes(CallFunctionOp op, RankedTensorType input,
                                    RankedTensorType result, PoolParams &p,
                                    ConversionPatternRewriter &rw) {
  if (!input || !result || input.getRank() != 4 || result.getRank() != 4 ||
      !input.hasStaticShape() || !result.hasStaticShape() ||
      input.getDimSize(0) != result.getDimSize(0) ||
      input.getDimSize(1) != result.getDimSize(1))
    return rw.notifyMatchFailure(
        op, "expects static [N, C, H, W] input and output (3-d [C, H, W] and "
            "dynamic shapes are not lowered)");
  if (!isa<FloatType>(input.getElementType()))
    return rw.notifyMatchFailure(op, "expects floating-point tensors");
  p.in.assign(input.getShape().begin(), input.getShape().end());
  p.out.assign(result.getShape().begin(), result.getShape().end());
  return success();
}

/// Reads kernel_size, stride, padding (at `first`, `first + 1`, `first + 2`),
/// dilation (at `dilation` when set) and ceil_mode (at `ceil`) and checks
/// them against torch's output size.
static LogicalResult readPoolParams(CallFunctionOp op, const OpArgs &args,
                                    unsigned first,
                                    std::optional<unsigned> dilation,
                                    unsigned ceil, PoolParams &p,
                                    ConversionPatternRewriter &rw) {
  if (failed(readPair(op, args, first, "kernel_size", {}, p.kernel, rw)) ||
      failed(readPair(op, args, first + 1, "stride", p.kernel, p.stride, rw)) ||
      failed(readPair(op, args, first + 2, "padding", {0}, p.padding, rw)) ||
      (dilation &&
       failed(readPair(op, args, *dilation, "dilation", {1}, p.dilation, rw))))
    return failure();
  FailureOr<bool> ceilMode = args.getBool(ceil, "ceil_mode", false);
  if (failed(ceilMode))
    return rw.notifyMatchFailure(op, "ceil_mode must be constant");
  p.ceilMode = *ceilMode;
  for (unsigned i = 0; i < 2; ++i) {
    if (p.kernel[i] < 1 || p.stride[i] < 1 || p.dilation[i] < 1 ||
        p.padding[i] < 0 ||
        2 * p.padding[i] > (p.kernel[i] - 1) * p.dilation[i] + 1)
      return rw.notifyMatchFailure(
          op, "bad kernel_size, stride, padding or dilation");
    // torch's pooling_output_shape.
    int64_t span =
        p.in[2 + i] + 2 * p.padding[i] - p.dilation[i] * (p.kernel[i] - 1) - 1;
    int64_t o = (span + (p.ceilMode ? p.stride[i] - 1 : 0)) / p.stride[i] + 1;
    if (p.ceilMode && (o - 1) * p.stride[i] >= p.in[2 + i] + p.padding[i])
      --o;
    if (span < 0 || o != p.out[2 + i])
      return rw.notifyMatchFailure(
          op, "output size does not match kernel_size, stride, padding, "
              "dilation and ceil_mode");
  }
  return success();
}

/// The high padding that keeps every window read of `p` in bounds (padding,
/// plus what ceil_mode's last window reaches past it).
static int64_t highPadding(const PoolParams &p, unsigned i) {
  int64_t reach =
      (p.out[2 + i] - 1) * p.stride[i] + (p.kernel[i] - 1) * p.dilation[i] + 1;
  return std::max(p.padding[i], reach - p.in[2 + i] - p.padding[i]);
}

/// `x` [N, C, H, W] padded with `fill` by `low` and `high` in H and W.
static Value padHW(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> low,
                   ArrayRef<int64_t> high, double fill) {
  if (llvm::all_of(low, [](int64_t q) { return q == 0; }) &&
      llvm::all_of(high, [](int64_t q) { return q == 0; }))
    return x;
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape(type.getShape());
  SmallVector<OpFoldResult> lo(2, b.getIndexAttr(0)), hi(2, b.getIndexAttr(0));
  for (unsigned i = 0; i < 2; ++i) {
    shape[2 + i] += low[i] + high[i];
    lo.push_back(b.getIndexAttr(low[i]));
    hi.push_back(b.getIndexAttr(high[i]));
  }
  Value v = createScalarConstant(b, loc, type.getElementType(), fill);
  return tensor::PadOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), x, lo, hi,
      v);
}

static Value indexConst(OpBuilder &b, Location l, int64_t v) {
  return arith::ConstantIndexOp::create(b, l, v);
}

/// torch's adaptive bin bounds: start = floor(i * in / out),
/// end = ceil((i + 1) * in / out).
static int64_t binStart(int64_t i, int64_t out, int64_t in) {
  return i * in / out;
}
static int64_t binEnd(int64_t i, int64_t out, int64_t in) {
  return ((i + 1) * in + out - 1) / out;
}
static Value binStart(OpBuilder &b, Location l, Value i, int64_t out,
                      int64_t in) {
  return arith::DivUIOp::create(
      b, l, arith::MulIOp::create(b, l, i, indexConst(b, l, in)),
      indexConst(b, l, out));
}
static Value binEnd(OpBuilder &b, Location l, Value i, int64_t out, int64_t in);
/// The length of adaptive bin `i`: a constant when `out` divides `in`.
static Value binLength(OpBuilder &b, Location l, Value i, int64_t out,
                       int64_t in) {
  if (in % out == 0)
    return indexConst(b, l, in / out);
  Value start = binStart(b, l, i, out, in);
  Value end = binEnd(b, l, i, out, in);
  return arith::SubIOp::create(b, l, end, start);
}
static Value binEnd(OpBuilder &b, Location l, Value i, int64_t out,
                    int64_t in) {
  Value next = arith::AddIOp::create(b, l, i, indexConst(b, l, 1));
  return arith::DivUIOp::create(
      b, l,
      arith::AddIOp::create(
          b, l, arith::MulIOp::create(b, l, next, indexConst(b, l, in)),
          indexConst(b, l, out - 1)),
      indexConst(b, l, out));
}

/// The reading of input position (ih, iw) by the windows of a gather: the
/// output position (oh, ow) of one window, clamped to 0 where `valid` is
/// false.
struct WindowRead {
  Value n, c, ih, iw, oh, ow, valid;
};

/// Produces the new accumulator of a gather from one window read and the
/// current accumulator.
using GatherBody =
    function_ref<Value(OpBuilder &, Location, const WindowRead &, Value acc)>;

/// The windows covering input position `inPos` along one dim, as `reach`
/// reduction steps: for step r, the output position and whether it is one.
using WindowStep = function_ref<std::pair<Value, Value>(OpBuilder &, Location,
                                                        Value inPos, Value r)>;

/// One generic over (n, c, ih, iw, rh, rw) into a zero-filled `acc`-typed
/// [N, C, H, W] tensor: for each reduction step, `stepH` / `stepW` give the
/// covering output position, and `body` the new accumulator.
static Value buildWindowGather(OpBuilder &b, Location loc, ArrayRef<int64_t> in,
                               Type acc, const int64_t (&reach)[2],
                               WindowStep stepH, WindowStep stepW,
                               GatherBody body) {
  SmallVector<OpFoldResult> sizes;
  for (int64_t s : in)
    sizes.push_back(b.getIndexAttr(s));
  Value init = createFilledTensor(b, loc, sizes, acc, 0.0);
  MLIRContext *ctx = b.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  AffineMap out = AffineMap::get(6, 0, {d(0), d(1), d(2), d(3)}, ctx);
  SmallVector<utils::IteratorType> iters(4, utils::IteratorType::parallel);
  iters.append(2, utils::IteratorType::reduction);
  // The reduction loops' extents come from a [reach_h, reach_w] operand.
  Value shape = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{reach[0], reach[1]}, acc);
  AffineMap shapeMap = AffineMap::get(6, 0, {d(4), d(5)}, ctx);
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{shape}, ValueRange{init},
             ArrayRef<AffineMap>{shapeMap, out}, iters,
             [&](OpBuilder &nb, Location l, ValueRange a) {
               WindowRead w;
               w.n = linalg::IndexOp::create(nb, l, 0);
               w.c = linalg::IndexOp::create(nb, l, 1);
               w.ih = linalg::IndexOp::create(nb, l, 2);
               w.iw = linalg::IndexOp::create(nb, l, 3);
               auto [oh, vh] =
                   stepH(nb, l, w.ih, linalg::IndexOp::create(nb, l, 4));
               auto [ow, vw] =
                   stepW(nb, l, w.iw, linalg::IndexOp::create(nb, l, 5));
               w.valid = arith::AndIOp::create(nb, l, vh, vw);
               Value zero = indexConst(nb, l, 0);
               w.oh = arith::SelectOp::create(nb, l, w.valid, oh, zero);
               w.ow = arith::SelectOp::create(nb, l, w.valid, ow, zero);
               linalg::YieldOp::create(nb, l, body(nb, l, w, a[1]));
             })
      .getResult(0);
}

/// The strided windows of `p` along dim `i` (0: H, 1: W) covering an input
/// position: step r visits kernel offset k = K - 1 - r (so the output
/// position increases with r, torch's order), output (pos + pad - k * dil) /
/// stride where exact and in range.
static std::pair<Value, Value> stridedStep(OpBuilder &b, Location l,
                                           const PoolParams &p, unsigned i,
                                           Value pos, Value r) {
  Value zero = indexConst(b, l, 0);
  Value k = arith::SubIOp::create(b, l, indexConst(b, l, p.kernel[i] - 1), r);
  Value padded =
      arith::AddIOp::create(b, l, pos, indexConst(b, l, p.padding[i]));
  Value offset =
      arith::MulIOp::create(b, l, k, indexConst(b, l, p.dilation[i]));
  Value t = arith::SubIOp::create(b, l, padded, offset);
  Value s = indexConst(b, l, p.stride[i]);
  Value o = arith::DivSIOp::create(b, l, t, s);
  Value nonNegative =
      arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, t, zero);
  Value rem = arith::RemSIOp::create(b, l, t, s);
  Value exact =
      arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, rem, zero);
  Value ok = arith::AndIOp::create(b, l, nonNegative, exact);
  ok = arith::AndIOp::create(
      b, l, ok,
      arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, o,
                            indexConst(b, l, p.out[2 + i])));
  return {o, ok};
}

/// buildWindowGather over the strided windows of `p` (kernel, stride,
/// padding, dilation): the gather of both strided pooling backwards.
static Value buildStridedWindowGather(OpBuilder &b, Location loc,
                                      const PoolParams &p, Type acc,
                                      GatherBody body) {
  int64_t reach[2] = {p.kernel[0], p.kernel[1]};
  return buildWindowGather(
      b, loc, p.in, acc, reach,
      [&](OpBuilder &nb, Location l, Value pos, Value r) {
        return stridedStep(nb, l, p, 0, pos, r);
      },
      [&](OpBuilder &nb, Location l, Value pos, Value r) {
        return stridedStep(nb, l, p, 1, pos, r);
      },
      body);
}

/// torch's avg_pool2d divisor of output position (oh, ow) as an `acc` float:
/// divisor_override, else the window clipped to the padded input
/// (count_include_pad), else to the input; at least 1 (an empty window's sum
/// is 0, and torch writes 0).
static Value avgDivisor(OpBuilder &b, Location l, const PoolParams &p,
                        bool countIncludePad,
                        std::optional<int64_t> divisorOverride, Value oh,
                        Value ow, Type acc) {
  if (divisorOverride)
    return createScalarConstant(b, l, acc, *divisorOverride);
  Value size = indexConst(b, l, 1);
  Value at[2] = {oh, ow};
  for (unsigned i = 0; i < 2; ++i) {
    Value start = arith::SubIOp::create(
        b, l, arith::MulIOp::create(b, l, at[i], indexConst(b, l, p.stride[i])),
        indexConst(b, l, p.padding[i]));
    Value end = arith::MinSIOp::create(
        b, l, arith::AddIOp::create(b, l, start, indexConst(b, l, p.kernel[i])),
        indexConst(b, l, p.in[2 + i] + p.padding[i]));
    if (!countIncludePad) {
      start = arith::MaxSIOp::create(b, l, start, indexConst(b, l, 0));
      end = arith::MinSIOp::create(b, l, end, indexConst(b, l, p.in[2 + i]));
    }
    Value len = arith::MaxSIOp::create(
        b, l, arith::SubIOp::create(b, l, end, start), indexConst(b, l, 0));
    size = arith::MulIOp::create(b, l, size, len);
  }
  size = arith::MaxSIOp::create(b, l, size, indexConst(b, l, 1));
  return indexToScalar(b, l, size, acc);
}

/// `t` [N, C, OH, OW] mapped elementwise by `fn(b, l, x, oh, ow)` into a
/// tensor of `elem`.
static Value
mapOutput(OpBuilder &b, Location loc, Value t, Type elem,
          function_ref<Value(OpBuilder &, Location, Value, Value, Value)> fn) {
  AffineMap id = b.getMultiDimIdentityMap(4);
  return buildElementwiseMap(
      b, loc, t, elem, {t}, {id}, [&](OpBuilder &nb, Location l, ValueRange a) {
        return fn(nb, l, a[0], linalg::IndexOp::create(nb, l, 2),
                  linalg::IndexOp::create(nb, l, 3));
      });
}

/// `linalg.pooling_nchw_sum` of `x` (already padded) with `kernel` and
/// `stride` into a zero-filled `acc` tensor of `out`.
static Value poolingSum(OpBuilder &b, Location loc, Value x,
                        ArrayRef<int64_t> kernel, ArrayRef<int64_t> stride,
                        ArrayRef<int64_t> out, Type acc) {
  SmallVector<OpFoldResult> sizes;
  for (int64_t s : out)
    sizes.push_back(b.getIndexAttr(s));
  Value init = createFilledTensor(b, loc, sizes, acc, 0.0);
  Value window = tensor::EmptyOp::create(b, loc, kernel, acc);
  return linalg::PoolingNchwSumOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{x, window},
             ValueRange{init}, b.getI64TensorAttr(stride),
             b.getI64TensorAttr({1, 1}))
      .getResult(0);
}

/// aten::max_pool2d_with_indices.default(self, kernel_size, stride=[],
/// padding=0, dilation=1, ceil_mode=False) -> (values, int64 indices).
static LogicalResult lowerMaxPool(CallFunctionOp op, const OpArgs &args,
                                  ConversionPatternRewriter &rw) {
  FailureOr<RankedTensor> input = args.tensor(0, "self");
  RankedTensorType valuesType = getResultTensorType(op, 0);
  RankedTensorType indicesType = getResultTensorType(op, 1);
  if (failed(input) || !indicesType ||
      !indicesType.getElementType().isInteger(64))
    return rw.notifyMatchFailure(op, "expects a tensor input, values and "
                                     "int64 indices");
  PoolParams p;
  if (failed(readPoolShapes(op, input->getType(), valuesType, p, rw)) ||
      failed(readPoolParams(op, args, 1, 4, 5, p, rw)))
    return failure();
  Location loc = op.getLoc();
  MLIRContext *ctx = rw.getContext();
  Type elem = valuesType.getElementType();
  Type i64 = rw.getI64Type();
  double inf = std::numeric_limits<double>::infinity();
  Value x = padHW(rw, loc, *input, {p.padding[0], p.padding[1]},
                  {highPadding(p, 0), highPadding(p, 1)}, -inf);
  SmallVector<OpFoldResult> sizes;
  for (int64_t s : p.out)
    sizes.push_back(rw.getIndexAttr(s));
  // "Nothing taken yet": larger than any index.
  int64_t noIndex = int64_t(1) << 62;
  Value values0 = createFilledTensor(rw, loc, sizes, elem, -inf);
  Value indices0 =
      createFilledTensor(rw, loc, sizes, i64, static_cast<double>(noIndex));
  // Loops: n, c, oh, ow, kh, kw.
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  AffineMap inMap =
      AffineMap::get(6, 0,
                     {d(0), d(1), d(2) * p.stride[0] + d(4) * p.dilation[0],
                      d(3) * p.stride[1] + d(5) * p.dilation[1]},
                     ctx);
  AffineMap windowMap = AffineMap::get(6, 0, {d(4), d(5)}, ctx);
  AffineMap outMap = AffineMap::get(6, 0, {d(0), d(1), d(2), d(3)}, ctx);
  Value window = tensor::EmptyOp::create(
      rw, loc, ArrayRef<int64_t>{p.kernel[0], p.kernel[1]}, elem);
  SmallVector<utils::IteratorType> iters(4, utils::IteratorType::parallel);
  iters.append(2, utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      rw, loc, TypeRange{values0.getType(), indices0.getType()},
      ValueRange{x, window}, ValueRange{values0, indices0},
      ArrayRef<AffineMap>{inMap, windowMap, outMap, outMap}, iters,
      [&](OpBuilder &b, Location l, ValueRange a) {
        Value xv = a[0], acc = a[2], accIdx = a[3];
        // The unpadded position and whether it is inside the input.
        Value valid = arith::ConstantIntOp::create(b, l, 1, 1);
        Value pos[2];
        for (unsigned i = 0; i < 2; ++i) {
          Value o = linalg::IndexOp::create(b, l, 2 + i);
          Value k = linalg::IndexOp::create(b, l, 4 + i);
          Value start =
              arith::MulIOp::create(b, l, o, indexConst(b, l, p.stride[i]));
          Value offset =
              arith::MulIOp::create(b, l, k, indexConst(b, l, p.dilation[i]));
          Value at = arith::AddIOp::create(b, l, start, offset);
          pos[i] =
              arith::SubIOp::create(b, l, at, indexConst(b, l, p.padding[i]));
          Value above = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge,
                                              pos[i], indexConst(b, l, 0));
          Value below =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, pos[i],
                                    indexConst(b, l, p.in[2 + i]));
          Value inside = arith::AndIOp::create(b, l, above, below);
          valid = arith::AndIOp::create(b, l, valid, inside);
        }
        Value flat = arith::AddIOp::create(
            b, l,
            arith::MulIOp::create(b, l, pos[0], indexConst(b, l, p.in[3])),
            pos[1]);
        Value idx = arith::IndexCastOp::create(b, l, i64, flat);
        Value xNan =
            arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, xv, xv);
        Value aNan =
            arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, acc, acc);
        Value notANan = arith::XOrIOp::create(
            b, l, aNan, arith::ConstantIntOp::create(b, l, 1, 1));
        Value later =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, idx, accIdx);
        Value earlier =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, idx, accIdx);
        Value none = arith::CmpIOp::create(
            b, l, arith::CmpIPredicate::eq, accIdx,
            arith::ConstantIntOp::create(b, l, i64, noIndex));
        // NaN replaces any number and an earlier NaN; a number replaces a
        // smaller one, or an equal one at a later index.
        Value nanWins = arith::AndIOp::create(
            b, l, xNan, arith::OrIOp::create(b, l, notANan, later));
        Value greater =
            arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, xv, acc);
        Value tie = arith::AndIOp::create(
            b, l,
            arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, xv, acc),
            earlier);
        Value first = arith::OrIOp::create(b, l, none, nanWins);
        Value larger = arith::OrIOp::create(b, l, greater, tie);
        Value take = arith::OrIOp::create(b, l, first, larger);
        take = arith::AndIOp::create(b, l, valid, take);
        linalg::YieldOp::create(
            b, l,
            ValueRange{arith::SelectOp::create(b, l, take, xv, acc),
                       arith::SelectOp::create(b, l, take, idx, accIdx)});
      });
  rw.replaceOp(op, generic.getResults());
  return success();
}

/// aten::max_pool2d_with_indices_backward.default(grad_output, self,
/// kernel_size, stride, padding, dilation, ceil_mode, indices).
static LogicalResult lowerMaxPoolBackward(CallFunctionOp op, const OpArgs &args,
                                          ConversionPatternRewriter &rw) {
  FailureOr<RankedTensor> gradOut = args.tensor(0, "grad_output");
  FailureOr<RankedTensor> input = args.tensor(1, "self");
  FailureOr<RankedTensor> indices = args.tensor(7, "indices");
  RankedTensorType resultType = getResultTensorType(op, 0);
  if (failed(gradOut) || failed(input) || failed(indices) || !resultType)
    return rw.notifyMatchFailure(
        op, "expects grad_output, self and indices tensors");
  PoolParams p;
  if (failed(readPoolShapes(op, input->getType(), gradOut->getType(), p, rw)) ||
      failed(readPoolParams(op, args, 2, 5, 6, p, rw)))
    return failure();
  if (indices->getType().getShape() != ArrayRef<int64_t>(p.out) ||
      !indices->getType().getElementType().isInteger(64))
    return rw.notifyMatchFailure(op, "indices must be int64 of grad_output's "
                                     "shape");
  Location loc = op.getLoc();
  Type acc = getAccumulatorType(resultType.getElementType());
  Type i64 = rw.getI64Type();
  Value go = *gradOut, ix = *indices;
  Value sum = buildStridedWindowGather(
      rw, loc, p, acc,
      [&](OpBuilder &b, Location l, const WindowRead &w, Value accv) -> Value {
        SmallVector<Value> at{w.n, w.c, w.oh, w.ow};
        Value flat = arith::AddIOp::create(
            b, l, arith::MulIOp::create(b, l, w.ih, indexConst(b, l, p.in[3])),
            w.iw);
        Value flatI64 = arith::IndexCastOp::create(b, l, i64, flat);
        Value argmax = tensor::ExtractOp::create(b, l, ix, at);
        Value match = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                            argmax, flatI64);
        Value hit = arith::AndIOp::create(b, l, w.valid, match);
        Value g =
            convertScalar(b, l, tensor::ExtractOp::create(b, l, go, at), acc);
        return arith::SelectOp::create(
            b, l, hit, arith::AddFOp::create(b, l, accv, g), accv);
      });
  return replaceWithResult(rw, op, finishResult(rw, loc, sum, resultType),
                           resultType);
}

/// count_include_pad and divisor_override of avg_pool2d (+ backward).
static LogicalResult readAvgOptions(CallFunctionOp op, const OpArgs &args,
                                    unsigned first, bool &countIncludePad,
                                    std::optional<int64_t> &divisorOverride,
                                    ConversionPatternRewriter &rw) {
  FailureOr<bool> include = args.getBool(first, "count_include_pad", true);
  if (failed(include))
    return rw.notifyMatchFailure(op, "count_include_pad must be constant");
  countIncludePad = *include;
  if (!args.isNone(first + 1, "divisor_override")) {
    FailureOr<int64_t> d = args.getInt(first + 1, "divisor_override");
    if (failed(d) || *d == 0)
      return rw.notifyMatchFailure(
          op, "divisor_override must be a non-zero constant or None");
    divisorOverride = *d;
  }
  return success();
}

/// aten::avg_pool2d.default(self, kernel_size, stride=[], padding=0,
/// ceil_mode=False, count_include_pad=True, divisor_override=None).
static LogicalResult lowerAvgPool(CallFunctionOp op, const OpArgs &args,
                                  ConversionPatternRewriter &rw) {
  FailureOr<RankedTensor> input = args.tensor(0, "self");
  RankedTensorType resultType = getResultTensorType(op, 0);
  if (failed(input))
    return rw.notifyMatchFailure(op, "expects a tensor input");
  PoolParams p;
  bool countIncludePad;
  std::optional<int64_t> divisorOverride;
  if (failed(readPoolShapes(op, input->getType(), resultType, p, rw)) ||
      failed(readPoolParams(op, args, 1, std::nullopt, 4, p, rw)) ||
      failed(readAvgOptions(op, args, 5, countIncludePad, divisorOverride, rw)))
    return failure();
  Location loc = op.getLoc();
  Type elem = resultType.getElementType();
  Type acc = getAccumulatorType(elem);
  Value x = padHW(rw, loc, *input, {p.padding[0], p.padding[1]},
                  {highPadding(p, 0), highPadding(p, 1)}, 0.0);
  Value sum = poolingSum(rw, loc, x, {p.kernel[0], p.kernel[1]},
                         {p.stride[0], p.stride[1]}, p.out, acc);
  Value result = mapOutput(
      rw, loc, sum, elem,
      [&](OpBuilder &b, Location l, Value s, Value oh, Value ow) {
        Value div =
            avgDivisor(b, l, p, countIncludePad, divisorOverride, oh, ow, acc);
        return convertScalar(b, l, arith::DivFOp::create(b, l, s, div), elem);
      });
  return replaceWithResult(rw, op, result, resultType);
}

/// aten::avg_pool2d_backward.default(grad_output, self, kernel_size, stride,
/// padding, ceil_mode, count_include_pad, divisor_override).
static LogicalResult lowerAvgPoolBackward(CallFunctionOp op, const OpArgs &args,
                                          ConversionPatternRewriter &rw) {
  FailureOr<RankedTensor> gradOut = args.tensor(0, "grad_output");
  FailureOr<RankedTensor> input = args.tensor(1, "self");
  RankedTensorType resultType = getResultTensorType(op, 0);
  if (failed(gradOut) || failed(input) || !resultType)
    return rw.notifyMatchFailure(op, "expects grad_output and self tensors");
  PoolParams p;
  bool countIncludePad;
  std::optional<int64_t> divisorOverride;
  if (failed(readPoolShapes(op, input->getType(), gradOut->getType(), p, rw)) ||
      failed(readPoolParams(op, args, 2, std::nullopt, 5, p, rw)) ||
      failed(readAvgOptions(op, args, 6, countIncludePad, divisorOverride, rw)))
    return failure();
  Location loc = op.getLoc();
  Type acc = getAccumulatorType(resultType.getElementType());
  // grad_output / divisor per window, then each input position gathers the
  // windows that cover it.
  Value delta = mapOutput(
      rw, loc, *gradOut, acc,
      [&](OpBuilder &b, Location l, Value g, Value oh, Value ow) -> Value {
        Value div =
            avgDivisor(b, l, p, countIncludePad, divisorOverride, oh, ow, acc);
        return arith::DivFOp::create(b, l, convertScalar(b, l, g, acc), div);
      });
  Value sum = buildStridedWindowGather(
      rw, loc, p, acc,
      [&](OpBuilder &b, Location l, const WindowRead &w, Value accv) -> Value {
        Value g = tensor::ExtractOp::create(b, l, delta,
                                            ValueRange{w.n, w.c, w.oh, w.ow});
        return arith::SelectOp::create(
            b, l, w.valid, arith::AddFOp::create(b, l, accv, g), accv);
      });
  return replaceWithResult(rw, op, finishResult(rw, loc, sum, resultType),
                           resultType);
}

/// The largest adaptive bin of `out` bins over `in` elements.
static int64_t largestBin(int64_t out, int64_t in) {
  int64_t largest = 0;
  for (int64_t i = 0; i < out; ++i)
    largest = std::max(largest, binEnd(i, out, in) - binStart(i, out, in));
  return largest;
}

/// sum / (bin height) / (bin width) of adaptive output position (oh, ow), as
/// torch divides.
static Value divideByBins(OpBuilder &b, Location l, Value s, Value oh, Value ow,
                          const PoolParams &p, Type acc) {
  Value at[2] = {oh, ow};
  for (unsigned i = 0; i < 2; ++i) {
    Value len = binLength(b, l, at[i], p.out[2 + i], p.in[2 + i]);
    s = arith::DivFOp::create(b, l, s, indexToScalar(b, l, len, acc));
  }
  return s;
}

/// Reads the static [N, C, H, W] input and [N, C, OH, OW] pooled shapes of
/// an adaptive pooling (forward: its result; backward: grad_output).
static LogicalResult readAdaptive(CallFunctionOp op, RankedTensorType input,
                                  RankedTensorType pooled, PoolParams &p,
                                  ConversionPatternRewriter &rw) {
  if (failed(readPoolShapes(op, input, pooled, p, rw)))
    return failure();
  if (p.out[2] < 1 || p.out[3] < 1)
    return rw.notifyMatchFailure(op, "output_size must be positive");
  return success();
}

/// aten::_adaptive_avg_pool2d.default(self, output_size).
static LogicalResult lowerAdaptiveAvgPool(CallFunctionOp op, const OpArgs &args,
                                          ConversionPatternRewriter &rw) {
  FailureOr<RankedTensor> input = args.tensor(0, "self");
  RankedTensorType resultType = getResultTensorType(op, 0);
  FailureOr<SmallVector<int64_t>> size = args.getIntList(1, "output_size");
  if (failed(input) || failed(size))
    return rw.notifyMatchFailure(
        op, "expects a tensor input and a constant output_size");
  PoolParams p;
  if (failed(readAdaptive(op, input->getType(), resultType, p, rw)))
    return failure();
  if (ArrayRef<int64_t>(*size) != ArrayRef<int64_t>(p.out).drop_front(2))
    return rw.notifyMatchFailure(op, "output_size differs from the result");
  Location loc = op.getLoc();
  MLIRContext *ctx = rw.getContext();
  Type elem = resultType.getElementType();
  Type acc = getAccumulatorType(elem);
  Value sum;
  if (p.in[2] % p.out[2] == 0 && p.in[3] % p.out[3] == 0) {
    int64_t k[2] = {p.in[2] / p.out[2], p.in[3] / p.out[3]};
    sum = poolingSum(rw, loc, *input, k, k, p.out, acc);
  } else {
    // Loops: n, c, oh, ow, kh, kw over the largest bin; the input padded so
    // that every read is in bounds, smaller bins masked.
    int64_t reach[2] = {largestBin(p.out[2], p.in[2]),
                        largestBin(p.out[3], p.in[3])};
    int64_t high[2];
    for (unsigned i = 0; i < 2; ++i)
      high[i] = std::max<int64_t>(
          0, binStart(p.out[2 + i] - 1, p.out[2 + i], p.in[2 + i]) + reach[i] -
                 p.in[2 + i]);
    Value x = padHW(rw, loc, *input, {0, 0}, high, 0.0);
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    AffineMap inMap =
        AffineMap::get(6, 0,
                       {d(0), d(1), (d(2) * p.in[2]).floorDiv(p.out[2]) + d(4),
                        (d(3) * p.in[3]).floorDiv(p.out[3]) + d(5)},
                       ctx);
    AffineMap windowMap = AffineMap::get(6, 0, {d(4), d(5)}, ctx);
    AffineMap outMap = AffineMap::get(6, 0, {d(0), d(1), d(2), d(3)}, ctx);
    SmallVector<OpFoldResult> sizes;
    for (int64_t s : p.out)
      sizes.push_back(rw.getIndexAttr(s));
    Value init = createFilledTensor(rw, loc, sizes, acc, 0.0);
    Value window = tensor::EmptyOp::create(
        rw, loc, ArrayRef<int64_t>{reach[0], reach[1]}, acc);
    SmallVector<utils::IteratorType> iters(4, utils::IteratorType::parallel);
    iters.append(2, utils::IteratorType::reduction);
    sum = linalg::GenericOp::create(
              rw, loc, init.getType(), ValueRange{x, window}, ValueRange{init},
              ArrayRef<AffineMap>{inMap, windowMap, outMap}, iters,
              [&](OpBuilder &b, Location l, ValueRange a) {
                Value in = arith::ConstantIntOp::create(b, l, 1, 1);
                for (unsigned i = 0; i < 2; ++i) {
                  Value o = linalg::IndexOp::create(b, l, 2 + i);
                  Value k = linalg::IndexOp::create(b, l, 4 + i);
                  Value len = binLength(b, l, o, p.out[2 + i], p.in[2 + i]);
                  in = arith::AndIOp::create(
                      b, l, in,
                      arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, k,
                                            len));
                }
                Value next = arith::AddFOp::create(
                    b, l, a[2], convertScalar(b, l, a[0], acc));
                linalg::YieldOp::create(
                    b, l,
                    arith::SelectOp::create(b, l, in, next, a[2]).getResult());
              })
              .getResult(0);
  }
  Value result = mapOutput(
      rw, loc, sum, elem,
      [&](OpBuilder &b, Location l, Value s, Value oh, Value ow) {
        return convertScalar(b, l, divideByBins(b, l, s, oh, ow, p, acc), elem);
      });
  return replaceWithResult(rw, op, result, resultType);
}

/// aten::_adaptive_avg_pool2d_backward.default(grad_output, self).
static LogicalResult
lowerAdaptiveAvgPoolBackward(CallFunctionOp op, const OpArgs &args,
                             ConversionPatternRewriter &rw) {
  FailureOr<RankedTensor> gradOut = args.tensor(0, "grad_output");
  FailureOr<RankedTensor> input = args.tensor(1, "self");
  RankedTensorType resultType = getResultTensorType(op, 0);
  if (failed(gradOut) || failed(input) || !resultType)
    return rw.notifyMatchFailure(op, "expects grad_output and self tensors");
  PoolParams p;
  if (failed(readAdaptive(op, input->getType(), gradOut->getType(), p, rw)))
    return failure();
  Location loc = op.getLoc();
  MLIRContext *ctx = rw.getContext();
  Type acc = getAccumulatorType(resultType.getElementType());
  // grad_output / kh / kw per bin (torch's grad_delta).
  Value delta = mapOutput(
      rw, loc, *gradOut, acc,
      [&](OpBuilder &b, Location l, Value g, Value oh, Value ow) {
        return divideByBins(b, l, convertScalar(b, l, g, acc), oh, ow, p, acc);
      });
  Value sum;
  if (p.in[2] % p.out[2] == 0 && p.in[3] % p.out[3] == 0) {
    // One bin per input position: a copy through floordiv.
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    AffineMap read =
        AffineMap::get(4, 0,
                       {d(0), d(1), d(2).floorDiv(p.in[2] / p.out[2]),
                        d(3).floorDiv(p.in[3] / p.out[3])},
                       ctx);
    Value like = tensor::EmptyOp::create(rw, loc, p.in, acc);
    sum = buildElementwiseMap(
        rw, loc, like, acc, {delta}, {read},
        [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  } else {
    // The bins covering input position i are [floor(i * O / H),
    // ceil((i + 1) * O / H)).
    int64_t reach[2];
    for (unsigned i = 0; i < 2; ++i) {
      reach[i] = 0;
      for (int64_t j = 0; j < p.in[2 + i]; ++j)
        reach[i] =
            std::max(reach[i], binEnd(j, p.in[2 + i], p.out[2 + i]) -
                                   binStart(j, p.in[2 + i], p.out[2 + i]));
    }
    auto step = [&](unsigned i) {
      return [&, i](OpBuilder &b, Location l, Value pos,
                    Value r) -> std::pair<Value, Value> {
        Value o = arith::AddIOp::create(
            b, l, binStart(b, l, pos, p.in[2 + i], p.out[2 + i]), r);
        Value ok =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, o,
                                  binEnd(b, l, pos, p.in[2 + i], p.out[2 + i]));
        return {o, ok};
      };
    };
    sum = buildWindowGather(
        rw, loc, p.in, acc, reach, step(0), step(1),
        [&](OpBuilder &b, Location l, const WindowRead &w,
            Value accv) -> Value {
          Value g = tensor::ExtractOp::create(b, l, delta,
                                              ValueRange{w.n, w.c, w.oh, w.ow});
          return arith::SelectOp::create(
              b, l, w.valid, arith::AddFOp::create(b, l, accv, g), accv);
        });
  }
  return replaceWithResult(rw, op, finishResult(rw, loc, sum, resultType),
                           resultType);
}

/// torch's nearest source index of each of `out` positions over `in`
/// (`nearest_idx`, scale in f32), computed at compile time.
static SmallVector<int64_t> nearestIndices(int64_t in, int64_t out,
                                           std::optional<double> scales) {
  SmallVector<int64_t> idx;
  float scale = scales && *scales > 0
                    ? static_cast<float>(1.0 / *scales)
                    : static_cast<float>(in) / static_cast<float>(out);
  for (int64_t o = 0; o < out; ++o) {
    if (out == in)
      idx.push_back(o);
    else if (out == 2 * in)
      idx.push_back(o >> 1);
    else
      idx.push_back(std::min<int64_t>(
          static_cast<int64_t>(std::floor(static_cast<float>(o) * scale)),
          in - 1));
  }
  return idx;
}

/// The factor k when `idx` is o / k for every o, else 0.
static int64_t uniformFactor(ArrayRef<int64_t> idx, int64_t in) {
  int64_t out = idx.size();
  if (out % in != 0)
    return 0;
  int64_t k = out / in;
  for (int64_t o = 0; o < out; ++o)
    if (idx[o] != o / k)
      return 0;
  return k;
}

/// The nearest index of output position `o` in IR, as nearestIndices.
static Value nearestIndex(OpBuilder &b, Location l, Value o, int64_t in,
                          int64_t out, std::optional<double> scales) {
  if (out == in)
    return o;
  if (out == 2 * in)
    return arith::DivUIOp::create(b, l, o, indexConst(b, l, 2));
  float scale = scales && *scales > 0
                    ? static_cast<float>(1.0 / *scales)
                    : static_cast<float>(in) / static_cast<float>(out);
  Type f32 = b.getF32Type();
  Value of = arith::UIToFPOp::create(
      b, l, f32, arith::IndexCastUIOp::create(b, l, b.getI64Type(), o));
  Value prod = arith::MulFOp::create(
      b, l, of, arith::ConstantOp::create(b, l, b.getF32FloatAttr(scale)));
  Value i = arith::IndexCastUIOp::create(
      b, l, b.getIndexType(),
      arith::FPToUIOp::create(b, l, b.getI64Type(), prod));
  return arith::MinUIOp::create(b, l, i, indexConst(b, l, in - 1));
}

/// The sizes and scales of a nearest 2-d upsampling: input [N, C, H, W]
/// (`in`), output [N, C, OH, OW] (`out`), scales_h and scales_w.
struct UpsampleParams {
  SmallVector<int64_t> in, out;
  std::optional<double> scales[2];
};

/// Reads the shapes, `output_size` (at `sizeArg`, checked against `out`) and
/// the optional scales (at `scalesArg`, `scalesArg + 1`).
static LogicalResult readUpsample(CallFunctionOp op, const OpArgs &args,
                                  RankedTensorType input,
                                  RankedTensorType output, unsigned sizeArg,
                                  unsigned scalesArg, UpsampleParams &u,
                                  ConversionPatternRewriter &rw) {
  if (!input || !output || input.getRank() != 4 || output.getRank() != 4 ||
      !input.hasStaticShape() || !output.hasStaticShape())
    return rw.notifyMatchFailure(
        op, "expects static [N, C, H, W] input and output (other ranks, such "
            "as a volumetric [N, C, D, H, W] input, and dynamic shapes are "
            "not lowered)");
  PoolParams p;
  if (failed(readPoolShapes(op, input, output, p, rw)))
    return failure();
  u.in = p.in;
  u.out = p.out;
  FailureOr<SmallVector<int64_t>> size =
      args.getIntList(sizeArg, "output_size");
  if (failed(size) ||
      ArrayRef<int64_t>(*size) != ArrayRef<int64_t>(u.out).drop_front(2))
    return rw.notifyMatchFailure(
        op, "output_size must be constant and match the upsampled shape");
  for (unsigned i = 0; i < 2; ++i) {
    StringRef name = i ? "scales_w" : "scales_h";
    if (args.isNone(scalesArg + i, name))
      continue;
    FailureOr<double> sc = args.getFloat(scalesArg + i, name);
    if (failed(sc))
      return rw.notifyMatchFailure(op, Twine(name) +
                                           " must be a constant float or None");
    u.scales[i] = *sc;
  }
  return success();
}

/// aten::upsample_nearest2d.default(self, SymInt[2] output_size,
/// float? scales_h=None, float? scales_w=None).
static LogicalResult lowerUpsampleNearest(CallFunctionOp op, const OpArgs &args,
                                          ConversionPatternRewriter &rw) {
  FailureOr<RankedTensor> input = args.tensor(0, "self");
  RankedTensorType resultType = getResultTensorType(op, 0);
  if (failed(input))
    return rw.notifyMatchFailure(op, "expects a tensor input");
  UpsampleParams u;
  if (failed(readUpsample(op, args, input->getType(), resultType, 1, 2, u, rw)))
    return failure();
  Location loc = op.getLoc();
  MLIRContext *ctx = rw.getContext();
  Type elem = resultType.getElementType();
  int64_t k[2];
  for (unsigned i = 0; i < 2; ++i)
    k[i] = uniformFactor(nearestIndices(u.in[2 + i], u.out[2 + i], u.scales[i]),
                         u.in[2 + i]);
  Value like = tensor::EmptyOp::create(rw, loc, u.out, elem);
  Value result;
  if (k[0] && k[1]) {
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    AffineMap read = AffineMap::get(
        4, 0, {d(0), d(1), d(2).floorDiv(k[0]), d(3).floorDiv(k[1])}, ctx);
    result = buildElementwiseMap(
        rw, loc, like, elem, {*input}, {read},
        [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  } else {
    Value x = *input;
    result = buildElementwiseMap(
        rw, loc, like, elem, {}, {}, [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> at{linalg::IndexOp::create(b, l, 0),
                                linalg::IndexOp::create(b, l, 1)};
          for (unsigned i = 0; i < 2; ++i)
            at.push_back(nearestIndex(b, l,
                                      linalg::IndexOp::create(b, l, 2 + i),
                                      u.in[2 + i], u.out[2 + i], u.scales[i]));
          return tensor::ExtractOp::create(b, l, x, at).getResult();
        });
  }
  return replaceWithResult(rw, op, result, resultType);
}

/// aten::upsample_nearest2d_backward.default(grad_output,
/// SymInt[2] output_size, SymInt[4] input_size, float? scales_h=None,
/// float? scales_w=None).
static LogicalResult
lowerUpsampleNearestBackward(CallFunctionOp op, const OpArgs &args,
                             ConversionPatternRewriter &rw) {
  FailureOr<RankedTensor> gradOut = args.tensor(0, "grad_output");
  RankedTensorType resultType = getResultTensorType(op, 0);
  FailureOr<SmallVector<int64_t>> inputSize = args.getIntList(2, "input_size");
  if (failed(gradOut) || !resultType || failed(inputSize))
    return rw.notifyMatchFailure(
        op, "expects a grad_output tensor and a constant input_size");
  UpsampleParams u;
  if (failed(
          readUpsample(op, args, resultType, gradOut->getType(), 1, 3, u, rw)))
    return failure();
  if (ArrayRef<int64_t>(*inputSize) != ArrayRef<int64_t>(u.in))
    return rw.notifyMatchFailure(op, "input_size differs from the result");
  Location loc = op.getLoc();
  Type acc = getAccumulatorType(resultType.getElementType());
  SmallVector<int64_t> idx[2];
  int64_t k[2];
  for (unsigned i = 0; i < 2; ++i) {
    idx[i] = nearestIndices(u.in[2 + i], u.out[2 + i], u.scales[i]);
    k[i] = uniformFactor(idx[i], u.in[2 + i]);
  }
  Value sum;
  if (k[0] && k[1]) {
    sum = poolingSum(rw, loc, *gradOut, k, k, u.in, acc);
  } else {
    // Output positions mapping to input i are contiguous from first(i)
    // (indices are monotone); step r visits o = lo(i) + r with lo(i) =
    // max(i * out / in - 1, 0), or 0 for all when that misses a first(i).
    int64_t reach[2];
    bool fromZero[2];
    for (unsigned i = 0; i < 2; ++i) {
      int64_t in = u.in[2 + i], out = u.out[2 + i];
      auto lo = [&](int64_t pos) {
        return std::max<int64_t>(pos * out / in - 1, 0);
      };
      fromZero[i] = false;
      for (int64_t o = 0; o < out; ++o)
        if (lo(idx[i][o]) > o)
          fromZero[i] = true;
      reach[i] = 1;
      for (int64_t o = 0; o < out; ++o)
        reach[i] =
            std::max(reach[i], o - (fromZero[i] ? 0 : lo(idx[i][o])) + 1);
    }
    auto step = [&](unsigned i) {
      return [&, i](OpBuilder &b, Location l, Value pos,
                    Value r) -> std::pair<Value, Value> {
        int64_t in = u.in[2 + i], out = u.out[2 + i];
        Value start = indexConst(b, l, 0);
        if (!fromZero[i]) {
          Value scaled = arith::DivUIOp::create(
              b, l, arith::MulIOp::create(b, l, pos, indexConst(b, l, out)),
              indexConst(b, l, in));
          start = arith::SubIOp::create(
              b, l, arith::MaxUIOp::create(b, l, scaled, indexConst(b, l, 1)),
              indexConst(b, l, 1));
        }
        Value o = arith::AddIOp::create(b, l, start, r);
        Value inRange = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult,
                                              o, indexConst(b, l, out));
        // Out-of-range steps read position 0 (masked by `inRange`).
        Value safe =
            arith::SelectOp::create(b, l, inRange, o, indexConst(b, l, 0));
        Value src = nearestIndex(b, l, safe, in, out, u.scales[i]);
        Value hit =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, src, pos);
        return {o, arith::AndIOp::create(b, l, inRange, hit)};
      };
    };
    Value go = *gradOut;
    sum = buildWindowGather(
        rw, loc, u.in, acc, reach, step(0), step(1),
        [&](OpBuilder &b, Location l, const WindowRead &w,
            Value accv) -> Value {
          Value g =
              convertScalar(b, l,
                            tensor::ExtractOp::create(
                                b, l, go, ValueRange{w.n, w.c, w.oh, w.ow}),
                            acc);
          return arith::SelectOp::create(
              b, l, w.valid, arith::AddFOp::create(b, l, accv, g), accv);
        });
  }
  return replaceWithResult(rw, op, finishResult(rw, loc, sum, resultType),
                           resultType);
}

/// torch's linear interpolation table along one dim (UpSample.h, in f32 as
/// its opmath): scale = (in - 1) / (out - 1) with align_corners (0 when
/// out == 1), else 1 / scales when given, else in / out; source index
/// `area_pixel_compute_source_index` (scale * o, or scale * (o + 0.5) - 0.5
/// clamped at 0); i0 = min(floor(src), in - 1), i1 = i0 + (i0 < in - 1),
/// l1 = clamp(src - i0, 0, 1), l0 = 1 - l1 (out == in: i0 = i1 = o, l1 = 0).
struct LinearTable {
  SmallVector<int64_t> i0, i1;
  SmallVector<float> l0, l1;
};

static LinearTable linearTable(int64_t in, int64_t out, bool alignCorners,
                               std::optional<double> scales) {
  float scale;
  if (alignCorners)
    scale = out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                    : 0.0f;
  else
    scale = scales && *scales > 0
                ? static_cast<float>(1.0 / *scales)
                : static_cast<float>(in) / static_cast<float>(out);
  LinearTable t;
  for (int64_t o = 0; o < out; ++o) {
    if (out == in) {
      t.i0.push_back(o);
      t.i1.push_back(o);
      t.l0.push_back(1.0f);
      t.l1.push_back(0.0f);
      continue;
    }
    float src;
    if (alignCorners) {
      src = scale * static_cast<float>(o);
    } else {
      src = scale * (static_cast<float>(o) + 0.5f) - 0.5f;
      src = src < 0 ? 0.0f : src;
    }
    int64_t i0 =
        std::min<int64_t>(static_cast<int64_t>(std::floor(src)), in - 1);
    float l1 = std::min(std::max(src - static_cast<float>(i0), 0.0f), 1.0f);
    t.i0.push_back(i0);
    t.i1.push_back(i0 + (i0 < in - 1 ? 1 : 0));
    t.l1.push_back(l1);
    t.l0.push_back(1.0f - l1);
  }
  return t;
}

static Value indexTable(OpBuilder &b, Location l, ArrayRef<int64_t> v) {
  auto type =
      RankedTensorType::get({static_cast<int64_t>(v.size())}, b.getIndexType());
  return arith::ConstantOp::create(
      b, l, DenseElementsAttr::get(type, ArrayRef<int64_t>(v)));
}

static Value weightTable(OpBuilder &b, Location l, ArrayRef<float> v) {
  auto type =
      RankedTensorType::get({static_cast<int64_t>(v.size())}, b.getF32Type());
  return arith::ConstantOp::create(b, l, DenseElementsAttr::get(type, v));
}

/// aten::upsample_bilinear2d.default(self, SymInt[2] output_size,
/// bool align_corners, float? scales_h=None, float? scales_w=None): torch's
/// CPU kernel (NCHW `upsample_generic_Nd_kernel_impl`): f32 weights from
/// linearTable, out = (x00 * w0 + x01 * w1) * h0 + (x10 * w0 + x11 * w1) *
/// h1 in f32, rounded once; one generic over the output reading the four
/// inputs. Matches torch to f32 roundoff (its vectorized loop contracts
/// differently), so a bf16 result can differ from torch's by one ulp.
static LogicalResult lowerUpsampleBilinear(CallFunctionOp op,
                                           const OpArgs &args,
                                           ConversionPatternRewriter &rw) {
  FailureOr<RankedTensor> input = args.tensor(0, "self");
  RankedTensorType resultType = getResultTensorType(op, 0);
  FailureOr<bool> alignCorners = args.getBool(2, "align_corners");
  if (failed(input) || failed(alignCorners))
    return rw.notifyMatchFailure(
        op, "expects a tensor input and a constant align_corners");
  UpsampleParams u;
  if (failed(readUpsample(op, args, input->getType(), resultType, 1, 3, u, rw)))
    return failure();
  Type elem = resultType.getElementType();
  if (!isa<FloatType>(elem))
    return rw.notifyMatchFailure(op, "non-float tensors are not supported");
  Location loc = op.getLoc();
  MLIRContext *ctx = rw.getContext();
  SmallVector<Value> tables;
  SmallVector<AffineMap> maps;
  for (unsigned i = 0; i < 2; ++i) {
    LinearTable t =
        linearTable(u.in[2 + i], u.out[2 + i], *alignCorners, u.scales[i]);
    tables.append({indexTable(rw, loc, t.i0), indexTable(rw, loc, t.i1),
                   weightTable(rw, loc, t.l0), weightTable(rw, loc, t.l1)});
    maps.append(4, AffineMap::get(4, 0, {getAffineDimExpr(2 + i, ctx)}, ctx));
  }
  Value like = tensor::EmptyOp::create(rw, loc, u.out, elem);
  Value x = *input;
  Type f32 = rw.getF32Type();
  Value result = buildElementwiseMap(
      rw, loc, like, elem, tables, maps,
      [&](OpBuilder &b, Location l, ValueRange a) {
        Value n = linalg::IndexOp::create(b, l, 0);
        Value c = linalg::IndexOp::create(b, l, 1);
        auto read = [&](Value h, Value w) {
          return convertScalar(
              b, l, tensor::ExtractOp::create(b, l, x, ValueRange{n, c, h, w}),
              f32);
        };
        // Sequenced: argument order is unspecified.
        auto mix = [&](Value h) {
          Value x0 = arith::MulFOp::create(b, l, read(h, a[4]), a[6]);
          Value x1 = arith::MulFOp::create(b, l, read(h, a[5]), a[7]);
          return arith::AddFOp::create(b, l, x0, x1).getResult();
        };
        Value top = arith::MulFOp::create(b, l, mix(a[0]), a[2]);
        Value bottom = arith::MulFOp::create(b, l, mix(a[1]), a[3]);
        Value v = arith::AddFOp::create(b, l, top, bottom);
        return convertScalar(b, l, v, elem);
      });
  return replaceWithResult(rw, op, result, resultType);
}

/// aten::upsample_bilinear2d_backward.default(grad_output,
/// SymInt[2] output_size, SymInt[4] input_size, bool align_corners,
/// float? scales_h=None, float? scales_w=None): torch's CPU
/// `cpu_upsample_linear_backward` adds, per output (oh, ow) in row-major
/// order, h * w * g (f32 weights, f32 accumulator) to i00, i01, i10, i11 in
/// turn. Here a gather over (ih, iw): the output positions touching each
/// input position (a range found at compile time) visited in the same
/// order, each adding its up to four matching terms in torch's order; one
/// rounding to bf16/f16 at the end.
static LogicalResult
lowerUpsampleBilinearBackward(CallFunctionOp op, const OpArgs &args,
                              ConversionPatternRewriter &rw) {
  FailureOr<RankedTensor> gradOut = args.tensor(0, "grad_output");
  RankedTensorType resultType = getResultTensorType(op, 0);
  FailureOr<SmallVector<int64_t>> inputSize = args.getIntList(2, "input_size");
  FailureOr<bool> alignCorners = args.getBool(3, "align_corners");
  if (failed(gradOut) || !resultType || failed(inputSize) ||
      failed(alignCorners))
    return rw.notifyMatchFailure(op, "expects a grad_output tensor, a "
                                     "constant input_size and align_corners");
  UpsampleParams u;
  if (failed(
          readUpsample(op, args, resultType, gradOut->getType(), 1, 4, u, rw)))
    return failure();
  if (ArrayRef<int64_t>(*inputSize) != ArrayRef<int64_t>(u.in))
    return rw.notifyMatchFailure(op, "input_size differs from the result");
  if (!isa<FloatType>(resultType.getElementType()))
    return rw.notifyMatchFailure(op, "non-float tensors are not supported");
  Location loc = op.getLoc();
  Type f32 = rw.getF32Type();
  // Per dim: the tables, and for each input position the first output
  // position touching it and how many follow (`reach` the largest).
  Value i0[2], i1[2], l0[2], l1[2], first[2], count[2];
  int64_t reach[2];
  for (unsigned i = 0; i < 2; ++i) {
    int64_t in = u.in[2 + i], out = u.out[2 + i];
    LinearTable t = linearTable(in, out, *alignCorners, u.scales[i]);
    SmallVector<int64_t> lo(in, out), hi(in, -1);
    for (int64_t o = 0; o < out; ++o)
      for (int64_t src : {t.i0[o], t.i1[o]}) {
        lo[src] = std::min(lo[src], o);
        hi[src] = std::max(hi[src], o);
      }
    SmallVector<int64_t> n(in, 0);
    reach[i] = 1;
    for (int64_t p = 0; p < in; ++p) {
      if (hi[p] < 0)
        lo[p] = 0;
      else
        n[p] = hi[p] - lo[p] + 1;
      reach[i] = std::max(reach[i], n[p]);
    }
    i0[i] = indexTable(rw, loc, t.i0);
    i1[i] = indexTable(rw, loc, t.i1);
    l0[i] = weightTable(rw, loc, t.l0);
    l1[i] = weightTable(rw, loc, t.l1);
    first[i] = indexTable(rw, loc, lo);
    count[i] = indexTable(rw, loc, n);
  }
  auto step = [&](unsigned i) {
    return [&, i](OpBuilder &b, Location l, Value pos,
                  Value r) -> std::pair<Value, Value> {
      Value o = arith::AddIOp::create(
          b, l, tensor::ExtractOp::create(b, l, first[i], pos), r);
      Value valid =
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, r,
                                tensor::ExtractOp::create(b, l, count[i], pos));
      return {o, valid};
    };
  };
  Value go = *gradOut;
  Value sum = buildWindowGather(
      rw, loc, u.in, f32, reach, step(0), step(1),
      [&](OpBuilder &b, Location l, const WindowRead &w, Value acc) -> Value {
        Value g = convertScalar(b, l,
                                tensor::ExtractOp::create(
                                    b, l, go, ValueRange{w.n, w.c, w.oh, w.ow}),
                                f32);
        auto at = [&](Value t, Value o) {
          return tensor::ExtractOp::create(b, l, t, o).getResult();
        };
        Value hIdx[2] = {at(i0[0], w.oh), at(i1[0], w.oh)};
        Value hW[2] = {at(l0[0], w.oh), at(l1[0], w.oh)};
        Value wIdx[2] = {at(i0[1], w.ow), at(i1[1], w.ow)};
        Value wW[2] = {at(l0[1], w.ow), at(l1[1], w.ow)};
        for (unsigned a = 0; a < 2; ++a)
          for (unsigned c = 0; c < 2; ++c) {
            Value hHit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                               hIdx[a], w.ih);
            Value wHit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                               wIdx[c], w.iw);
            Value hit = arith::AndIOp::create(
                b, l, w.valid, arith::AndIOp::create(b, l, hHit, wHit));
            Value hw = arith::MulFOp::create(b, l, hW[a], wW[c]);
            Value term = arith::MulFOp::create(b, l, hw, g);
            acc = arith::SelectOp::create(
                b, l, hit, arith::AddFOp::create(b, l, acc, term), acc);
          }
        return acc;
      });
  return replaceWithResult(rw, op, finishResult(rw, loc, sum, resultType),
                           resultType);
}

} // namespace

void mlir::joint::populatePoolingPatterns(const TypeConverter &typeConverter,
                                          RewritePatternSet &patterns) {
  LoweringTable table(typeConverter, patterns);
  table.add({"aten::max_pool2d_with_indices.default"}, lowerMaxPool);
  table.add({"aten::max_pool2d_with_indices_backward.default"},
            lowerMaxPoolBackward);
  table.add({"aten::avg_pool2d.default"}, lowerAvgPool);
  table.add({"aten::avg_pool2d_backward.default"}, lowerAvgPoolBackward);
  table.add({"aten::_adaptive_avg_pool2d.default"}, lowerAdaptiveAvgPool);
  table.add({"aten::_adaptive_avg_pool2d_backward.default"},
            lowerAdaptiveAvgPoolBackward);
  table.add({"aten::upsample_nearest2d.default"}, lowerUpsampleNearest);
  table.add({"aten::upsample_nearest2d_backward.default"},
            lowerUpsampleNearestBackward);
  table.add({"aten::upsample_bilinear2d.default"}, lowerUpsampleBilinear);
  table.add({"aten::upsample_bilinear2d_backward.default"},
            lowerUpsampleBilinearBackward);
}

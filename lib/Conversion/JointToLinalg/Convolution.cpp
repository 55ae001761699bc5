//===- Convolution.cpp - convolution and its backward to linalg -----------===//
//
// `aten::convolution` and `aten::convolution_backward` (1-d, 2-d and 3-d,
// groups, stride, padding, dilation, transposed with output_padding; static
// shapes) as `linalg.generic`s in the form of linalg's named convolutions,
// with channels split into (group, channel in group) by
// `tensor.expand_shape`. The rules are torch's semantics:
// - forward: out[n, g, f, o] += x[n, g, c, o * stride + k * dilation] *
//   w[g, f, c, k] over the zero-padded input, bias added in the accumulator;
// - grad_weight: the same product reduced over (n, o);
// - grad_input: for each padded input position p, the sum over (f, k) of
//   grad_out[n, g, f, (p - k * dilation) / stride] * w[g, f, c, k] where the
//   division is exact and in range (a gather, so every element is written
//   once), then the padding cropped;
// - grad_bias: grad_out summed over every dim but the channel.
// A transposed convolution (weight [C_in, C_out / groups, k...]) is the
// adjoint of the convolution with the same weight: its forward is that
// convolution's grad_input gather (output_padding only lengthens the
// output), its grad_input that convolution of the padded grad_out, its
// grad_weight the product above with input and grad_out swapped.
// bf16/f16 accumulate in f32 and round once (torch's oneDNN CPU kernels;
// torch's slow transposed kernel, used when output_padding >= stride, rounds
// per kernel tap instead).
//
//===----------------------------------------------------------------------===//

#include "UtilsOps.h"
#include "joint/Conversion/JointToLinalg/JointToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::joint;
using namespace mlir::joint::lowering;

namespace {

/// The shared arguments of convolution (first = 3) and its backward
/// (first = 4): stride, padding, dilation, transposed, output_padding,
/// groups. outputPadding is read (and used) for transposed ones only, as
/// torch ignores it otherwise.
struct ConvParams {
  SmallVector<int64_t> stride, padding, dilation, outputPadding;
  bool transposed = false;
  int64_t groups = 1;
};

/// Reads ConvParams for `spatial` spatial dims (torch expands a single value
/// to every dim).
static FailureOr<ConvParams> readConvParams(CallFunctionOp op,
                                            const OpArgs &args, unsigned first,
                                            unsigned spatial,
                                            ConversionPatternRewriter &rw) {
  ConvParams p;
  SmallVector<int64_t> *lists[] = {&p.stride, &p.padding, &p.dilation};
  StringRef names[] = {"stride", "padding", "dilation"};
  for (unsigned i = 0; i < 3; ++i) {
    FailureOr<SmallVector<int64_t>> list = args.getIntList(first + i, names[i]);
    if (failed(list))
      return rw.notifyMatchFailure(op, Twine(names[i]) + " must be constant");
    if (list->size() == 1)
      list->assign(spatial, list->front());
    if (list->size() != spatial)
      return rw.notifyMatchFailure(op, Twine(names[i]) + " has the wrong rank");
    *lists[i] = *list;
  }
  FailureOr<bool> transposed = args.getBool(first + 3, "transposed");
  FailureOr<int64_t> groups = args.getInt(first + 5, "groups");
  if (failed(transposed) || failed(groups) || *groups < 1)
    return rw.notifyMatchFailure(op, "transposed and groups must be constant");
  p.transposed = *transposed;
  p.outputPadding.assign(spatial, 0);
  if (p.transposed) {
    FailureOr<SmallVector<int64_t>> list =
        args.getIntList(first + 4, "output_padding");
    if (failed(list))
      return rw.notifyMatchFailure(op, "output_padding must be constant");
    if (list->size() == 1)
      list->assign(spatial, list->front());
    if (list->size() != spatial)
      return rw.notifyMatchFailure(op, "output_padding has the wrong rank");
    p.outputPadding = *list;
  }
  if (llvm::any_of(p.stride, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(p.dilation, [](int64_t d) { return d < 1; }) ||
      llvm::any_of(p.padding, [](int64_t q) { return q < 0; }))
    return rw.notifyMatchFailure(op, "bad stride, dilation or padding");
  // torch: output padding must be smaller than either stride or dilation.
  for (unsigned i = 0; i < spatial; ++i)
    if (p.outputPadding[i] < 0 ||
        p.outputPadding[i] >= std::max(p.stride[i], p.dilation[i]))
      return rw.notifyMatchFailure(
          op, "output_padding must be smaller than stride or dilation");
  p.groups = *groups;
  return p;
}

/// Checks the shapes of a transposed convolution with input `in`
/// [N, C_in, S...], weight `w` [C_in, C_out / groups, K...] and output `out`
/// [N, C_out, O...] where O = (S - 1) * stride - 2 * padding +
/// dilation * (K - 1) + output_padding + 1 (torch's rule).
static LogicalResult
checkTransposedShapes(CallFunctionOp op, ArrayRef<int64_t> in,
                      ArrayRef<int64_t> w, ArrayRef<int64_t> out,
                      const ConvParams &p, ConversionPatternRewriter &rw) {
  if (in[1] != w[0] || w[0] % p.groups || out[1] != w[1] * p.groups ||
      out[0] != in[0])
    return rw.notifyMatchFailure(
        op, "transposed convolution expects weight [C_in, C_out / groups, "
            "k...] with C_in divisible by groups");
  for (unsigned i = 0; i + 2 < in.size(); ++i)
    if (out[2 + i] != (in[2 + i] - 1) * p.stride[i] - 2 * p.padding[i] +
                          p.dilation[i] * (w[2 + i] - 1) + p.outputPadding[i] +
                          1)
      return rw.notifyMatchFailure(
          op, "transposed convolution output size does not match its "
              "arguments");
  return success();
}

/// `t` [A, B, rest...] as [A, B / groups... ] split at dim `dim` into
/// (groups, size / groups).
static Value splitDim(OpBuilder &b, Location loc, Value t, unsigned dim,
                      int64_t groups) {
  auto type = cast<RankedTensorType>(t.getType());
  SmallVector<int64_t> shape(type.getShape());
  int64_t size = shape[dim];
  shape[dim] = size / groups;
  shape.insert(shape.begin() + dim, groups);
  SmallVector<ReassociationIndices> reassoc;
  for (unsigned i = 0, r = 0; i < type.getRank(); ++i) {
    if (i == dim) {
      reassoc.push_back({r, r + 1});
      r += 2;
    } else {
      reassoc.push_back({r++});
    }
  }
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), t, reassoc);
}

/// Inverse of splitDim: merges dims `dim` and `dim + 1`.
static Value mergeDims(OpBuilder &b, Location loc, Value t, unsigned dim) {
  auto type = cast<RankedTensorType>(t.getType());
  SmallVector<ReassociationIndices> reassoc;
  for (unsigned i = 0; i < type.getRank(); ++i) {
    if (i == dim) {
      reassoc.push_back({i, i + 1});
      ++i;
    } else {
      reassoc.push_back({i});
    }
  }
  return tensor::CollapseShapeOp::create(b, loc, t, reassoc);
}

/// `x` [N, C, S...] zero-padded by `padding` on both sides of each spatial
/// dim.
static Value padSpatial(OpBuilder &b, Location loc, Value x,
                        ArrayRef<int64_t> padding) {
  if (llvm::all_of(padding, [](int64_t q) { return q == 0; }))
    return x;
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape(type.getShape());
  SmallVector<OpFoldResult> pads(2, b.getIndexAttr(0));
  for (auto [i, q] : llvm::enumerate(padding)) {
    shape[2 + i] += 2 * q;
    pads.push_back(b.getIndexAttr(q));
  }
  Value zero = createScalarConstant(b, loc, type.getElementType(), 0.0);
  return tensor::PadOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), x, pads,
      pads, zero);
}

/// Static ranked tensor with at least one spatial dim, or failure.
static bool isStaticConvOperand(Value v, int64_t rank) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.hasStaticShape() && type.getRank() == rank;
}

/// The maps of the product x[n, g, c, o * s + k * d] * w[g, f, c, k] over
/// loops laid out by `pos` (loop positions of n, g, f, c, o_i, k_i).
struct ConvLoops {
  unsigned n, g, f, c, o, k, numLoops, spatial;
  AffineMap input(MLIRContext *ctx, const ConvParams &p) const {
    SmallVector<AffineExpr> e{getAffineDimExpr(n, ctx),
                              getAffineDimExpr(g, ctx),
                              getAffineDimExpr(c, ctx)};
    for (unsigned i = 0; i < spatial; ++i)
      e.push_back(getAffineDimExpr(o + i, ctx) * p.stride[i] +
                  getAffineDimExpr(k + i, ctx) * p.dilation[i]);
    return AffineMap::get(numLoops, 0, e, ctx);
  }
  AffineMap weight(MLIRContext *ctx) const {
    SmallVector<AffineExpr> e{getAffineDimExpr(g, ctx),
                              getAffineDimExpr(f, ctx),
                              getAffineDimExpr(c, ctx)};
    for (unsigned i = 0; i < spatial; ++i)
      e.push_back(getAffineDimExpr(k + i, ctx));
    return AffineMap::get(numLoops, 0, e, ctx);
  }
  AffineMap output(MLIRContext *ctx) const {
    SmallVector<AffineExpr> e{getAffineDimExpr(n, ctx),
                              getAffineDimExpr(g, ctx),
                              getAffineDimExpr(f, ctx)};
    for (unsigned i = 0; i < spatial; ++i)
      e.push_back(getAffineDimExpr(o + i, ctx));
    return AffineMap::get(numLoops, 0, e, ctx);
  }
};

/// acc += convert(a) * convert(b) in `acc`'s type.
static Value multiplyAdd(OpBuilder &b, Location l, Value x, Value y,
                         Value acc) {
  Type t = acc.getType();
  Value prod = arith::MulFOp::create(b, l, convertScalar(b, l, x, t),
                                     convertScalar(b, l, y, t));
  return arith::AddFOp::create(b, l, acc, prod);
}

/// Iterator types: parallel up to loop `firstReduction`, reductions after.
static SmallVector<utils::IteratorType> convIterators(unsigned numLoops,
                                                      unsigned firstReduction) {
  SmallVector<utils::IteratorType> iters(numLoops,
                                         utils::IteratorType::parallel);
  for (unsigned i = firstReduction; i < numLoops; ++i)
    iters[i] = utils::IteratorType::reduction;
  return iters;
}

/// out[n, g, f, o] = sum over (c, k) of x[n, g, c, o * stride + k * dilation]
/// * w[g, f, c, k] for `x` the zero-padded input split into groups
/// [N, G, C/G, S...] and `w` [G, F/G, C/G, K...]; returns [N, F, O...] in
/// `acc` with O = `outSpatial`.
static Value convolve(OpBuilder &b, Location loc, Value x, Value w,
                      int64_t batch, int64_t channels,
                      ArrayRef<int64_t> outSpatial, const ConvParams &p,
                      Type acc) {
  MLIRContext *ctx = b.getContext();
  unsigned spatial = outSpatial.size();
  // Loops: n, g, f, o..., c, k...
  ConvLoops loops{0,      1, 2, 3 + spatial, 3, 4 + spatial, 4 + 2 * spatial,
                  spatial};
  SmallVector<OpFoldResult> sizes{b.getIndexAttr(batch),
                                  b.getIndexAttr(p.groups),
                                  b.getIndexAttr(channels / p.groups)};
  for (int64_t o : outSpatial)
    sizes.push_back(b.getIndexAttr(o));
  Value init = createFilledTensor(b, loc, sizes, acc, 0.0);
  Value sum = linalg::GenericOp::create(
                  b, loc, init.getType(), ValueRange{x, w}, ValueRange{init},
                  ArrayRef<AffineMap>{loops.input(ctx, p), loops.weight(ctx),
                                      loops.output(ctx)},
                  convIterators(loops.numLoops, loops.c),
                  [&](OpBuilder &nb, Location l, ValueRange a) {
                    linalg::YieldOp::create(
                        nb, l, multiplyAdd(nb, l, a[0], a[1], a[2]));
                  })
                  .getResult(0);
  return mergeDims(b, loc, sum, 1);
}

/// The adjoint of convolve: for each padded input position q, the sum over
/// (f, k) of go[n, g, f, (q - k * dilation) / stride] * w[g, f, c, k] where
/// the division is exact and in range (a gather, so every element is written
/// once), then the padding cropped. `go` is [N, G, F/G, O...], `w`
/// [G, F/G, C/G, K...]; returns `inShape` = [N, C, S...] (unpadded) in `acc`.
static Value convolveAdjoint(OpBuilder &b, Location loc, Value go, Value w,
                             ArrayRef<int64_t> inShape, const ConvParams &p,
                             Type acc) {
  MLIRContext *ctx = b.getContext();
  unsigned spatial = inShape.size() - 2;
  ArrayRef<int64_t> goShape = cast<RankedTensorType>(go.getType()).getShape();
  // Loops: n, g, c, q..., f, k...
  unsigned nl = 4 + 2 * spatial;
  SmallVector<OpFoldResult> sizes{b.getIndexAttr(inShape[0]),
                                  b.getIndexAttr(p.groups),
                                  b.getIndexAttr(inShape[1] / p.groups)};
  for (unsigned i = 0; i < spatial; ++i)
    sizes.push_back(b.getIndexAttr(inShape[2 + i] + 2 * p.padding[i]));
  Value init = createFilledTensor(b, loc, sizes, acc, 0.0);
  SmallVector<AffineExpr> wExprs{getAffineDimExpr(1, ctx),
                                 getAffineDimExpr(3 + spatial, ctx),
                                 getAffineDimExpr(2, ctx)};
  for (unsigned i = 0; i < spatial; ++i)
    wExprs.push_back(getAffineDimExpr(4 + spatial + i, ctx));
  AffineMap wMap = AffineMap::get(nl, 0, wExprs, ctx);
  SmallVector<AffineExpr> outExprs;
  for (unsigned i = 0; i < 3 + spatial; ++i)
    outExprs.push_back(getAffineDimExpr(i, ctx));
  AffineMap outMap = AffineMap::get(nl, 0, outExprs, ctx);
  Value sum =
      linalg::GenericOp::create(
          b, loc, init.getType(), ValueRange{w}, ValueRange{init},
          ArrayRef<AffineMap>{wMap, outMap}, convIterators(nl, 3 + spatial),
          [&](OpBuilder &nb, Location l, ValueRange a) {
            Value zero = arith::ConstantIndexOp::create(nb, l, 0);
            Value valid = arith::ConstantIntOp::create(nb, l, 1, 1);
            SmallVector<Value> at{linalg::IndexOp::create(nb, l, 0),
                                  linalg::IndexOp::create(nb, l, 1),
                                  linalg::IndexOp::create(nb, l, 3 + spatial)};
            for (unsigned i = 0; i < spatial; ++i) {
              Value pos = linalg::IndexOp::create(nb, l, 3 + i);
              Value k = linalg::IndexOp::create(nb, l, 4 + spatial + i);
              Value t = arith::SubIOp::create(
                  nb, l, pos,
                  arith::MulIOp::create(
                      nb, l, k,
                      arith::ConstantIndexOp::create(nb, l, p.dilation[i])));
              Value s = arith::ConstantIndexOp::create(nb, l, p.stride[i]);
              Value o = arith::DivSIOp::create(nb, l, t, s);
              Value ok = arith::AndIOp::create(
                  nb, l,
                  arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, t,
                                        zero),
                  arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq,
                                        arith::RemSIOp::create(nb, l, t, s),
                                        zero));
              ok = arith::AndIOp::create(
                  nb, l, ok,
                  arith::CmpIOp::create(
                      nb, l, arith::CmpIPredicate::slt, o,
                      arith::ConstantIndexOp::create(nb, l, goShape[3 + i])));
              valid = arith::AndIOp::create(nb, l, valid, ok);
              at.push_back(o);
            }
            // Out-of-range positions read element 0 and add nothing.
            for (unsigned i = 0; i < spatial; ++i)
              at[3 + i] =
                  arith::SelectOp::create(nb, l, valid, at[3 + i], zero);
            Value g = tensor::ExtractOp::create(nb, l, go, at);
            Value next = multiplyAdd(nb, l, g, a[0], a[1]);
            linalg::YieldOp::create(
                nb, l,
                arith::SelectOp::create(nb, l, valid, next, a[1]).getResult());
          })
          .getResult(0);
  Value merged = mergeDims(b, loc, sum, 1);
  SmallVector<OpFoldResult> offsets(2, b.getIndexAttr(0)), lens, strides;
  lens.push_back(b.getIndexAttr(inShape[0]));
  lens.push_back(b.getIndexAttr(inShape[1]));
  for (unsigned i = 0; i < spatial; ++i) {
    offsets.push_back(b.getIndexAttr(p.padding[i]));
    lens.push_back(b.getIndexAttr(inShape[2 + i]));
  }
  strides.assign(inShape.size(), b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, loc,
                                        RankedTensorType::get(inShape, acc),
                                        merged, offsets, lens, strides);
}

/// The weight gradient of convolve: w[g, f, c, k] = sum over (n, o) of
/// x[n, g, c, o * stride + k * dilation] * go[n, g, f, o] for `x` the
/// zero-padded input [N, G, C/G, S...] and `go` [N, G, F/G, O...]; returns
/// `wShape` = [F, C/G, K...] in `acc`.
static Value convolveWeight(OpBuilder &b, Location loc, Value x, Value go,
                            ArrayRef<int64_t> wShape, const ConvParams &p,
                            Type acc) {
  MLIRContext *ctx = b.getContext();
  unsigned spatial = wShape.size() - 2;
  // Loops: g, f, c, k..., n, o...
  unsigned nl = 4 + 2 * spatial;
  ConvLoops loops{3 + spatial, 0, 1, 2, 4 + spatial, 3, nl, spatial};
  SmallVector<OpFoldResult> sizes{b.getIndexAttr(p.groups),
                                  b.getIndexAttr(wShape[0] / p.groups),
                                  b.getIndexAttr(wShape[1])};
  for (unsigned i = 0; i < spatial; ++i)
    sizes.push_back(b.getIndexAttr(wShape[2 + i]));
  Value init = createFilledTensor(b, loc, sizes, acc, 0.0);
  Value sum = linalg::GenericOp::create(
                  b, loc, init.getType(), ValueRange{x, go}, ValueRange{init},
                  ArrayRef<AffineMap>{loops.input(ctx, p), loops.output(ctx),
                                      loops.weight(ctx)},
                  convIterators(nl, 3 + spatial),
                  [&](OpBuilder &nb, Location l, ValueRange a) {
                    linalg::YieldOp::create(
                        nb, l, multiplyAdd(nb, l, a[0], a[1], a[2]));
                  })
                  .getResult(0);
  return mergeDims(b, loc, sum, 0);
}

/// `sum` [N, C, S...] in the accumulator type plus `bias` [C] (when set),
/// rounded once to `resultType`'s element type.
static Value addBiasAndRound(OpBuilder &b, Location loc, Value sum, Value bias,
                             RankedTensorType resultType) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = resultType.getRank();
  Type elem = resultType.getElementType();
  Type acc = cast<RankedTensorType>(sum.getType()).getElementType();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  Value outInit = tensor::EmptyOp::create(b, loc, resultType.getShape(), elem);
  SmallVector<Value> inputs{sum};
  SmallVector<AffineMap> maps{id};
  if (bias) {
    inputs.push_back(bias);
    maps.push_back(AffineMap::get(rank, 0, getAffineDimExpr(1, ctx)));
  }
  maps.push_back(id);
  return linalg::GenericOp::create(
             b, loc, outInit.getType(), inputs, ValueRange{outInit}, maps,
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location l, ValueRange a) {
               Value v = a[0];
               if (bias)
                 v = arith::AddFOp::create(nb, l, v,
                                           convertScalar(nb, l, a[1], acc));
               linalg::YieldOp::create(nb, l, convertScalar(nb, l, v, elem));
             })
      .getResult(0);
}

/// aten::convolution.default(input, weight, bias?, stride, padding,
/// dilation, transposed, output_padding, groups).
static LogicalResult lowerConvolution(CallFunctionOp op, const OpArgs &args,
                                      ConversionPatternRewriter &rw) {
  FailureOr<RankedTensor> input = args.tensor(0, "input");
  FailureOr<RankedTensor> weight = args.tensor(1, "weight");
  RankedTensorType resultType = getResultTensorType(op, 0);
  if (failed(input) || failed(weight) || !resultType)
    return rw.notifyMatchFailure(op, "expected input and weight tensors");
  int64_t rank = input->getType().getRank();
  if (rank < 3 || rank > 5 || !isStaticConvOperand(*input, rank) ||
      !isStaticConvOperand(*weight, rank) || !resultType.hasStaticShape())
    return rw.notifyMatchFailure(
        op, "expects static [N, C, spatial...] input with 1-3 spatial dims");
  unsigned spatial = rank - 2;
  FailureOr<ConvParams> p = readConvParams(op, args, 3, spatial, rw);
  if (failed(p))
    return failure();
  Value bias;
  if (FailureOr<RankedTensor> t = args.tensor(2, "bias"); succeeded(t))
    bias = *t;
  else if (!args.isNone(2, "bias"))
    return rw.notifyMatchFailure(op, "bias must be a tensor or None");
  Location loc = op.getLoc();
  Type acc = getAccumulatorType(resultType.getElementType());
  if (!isa<FloatType>(acc))
    return rw.notifyMatchFailure(op, "expects floating-point tensors");
  int64_t groups = p->groups;
  ArrayRef<int64_t> out = resultType.getShape();
  Value sum;
  if (p->transposed) {
    // The grad_input of a convolution whose output is `input`.
    if (failed(checkTransposedShapes(op, input->getType().getShape(),
                                     weight->getType().getShape(), out, *p,
                                     rw)))
      return failure();
    Value x = splitDim(rw, loc, *input, 1, groups);
    Value w = splitDim(rw, loc, *weight, 0, groups);
    sum = convolveAdjoint(rw, loc, x, w, out, *p, acc);
  } else {
    if (input->getType().getDimSize(1) % groups || out[1] % groups)
      return rw.notifyMatchFailure(op, "channels not divisible by groups");
    Value x =
        splitDim(rw, loc, padSpatial(rw, loc, *input, p->padding), 1, groups);
    Value w = splitDim(rw, loc, *weight, 0, groups);
    sum = convolve(rw, loc, x, w, out[0], out[1], out.drop_front(2), *p, acc);
  }
  return replaceWithResult(
      rw, op, addBiasAndRound(rw, loc, sum, bias, resultType), resultType);
}

/// aten::convolution_backward.default(grad_output, input, weight,
/// bias_sizes?, stride, padding, dilation, transposed, output_padding,
/// groups, output_mask) -> (grad_input, grad_weight, grad_bias).
static LogicalResult lowerConvolutionBackward(CallFunctionOp op,
                                              const OpArgs &args,
                                              ConversionPatternRewriter &rw) {
  FailureOr<RankedTensor> gradOut = args.tensor(0, "grad_output");
  FailureOr<RankedTensor> input = args.tensor(1, "input");
  FailureOr<RankedTensor> weight = args.tensor(2, "weight");
  FailureOr<SmallVector<bool>> mask = args.getBoolList(10, "output_mask");
  if (failed(gradOut) || failed(input) || failed(weight) || failed(mask) ||
      mask->size() != 3 || op->getNumResults() != 3)
    return rw.notifyMatchFailure(
        op, "expected grad_output, input, weight and a 3-entry output_mask");
  int64_t rank = input->getType().getRank();
  if (rank < 3 || rank > 5 || !isStaticConvOperand(*input, rank) ||
      !isStaticConvOperand(*weight, rank) ||
      !isStaticConvOperand(*gradOut, rank))
    return rw.notifyMatchFailure(
        op, "expects static [N, C, spatial...] tensors with 1-3 spatial dims");
  SmallVector<RankedTensorType> types;
  for (unsigned i = 0; i < 3; ++i) {
    types.push_back(getResultTensorType(op, i));
    if ((*mask)[i] != static_cast<bool>(types.back()) ||
        (!(*mask)[i] && !op->getResult(i).use_empty()))
      return rw.notifyMatchFailure(
          op, "results must be tensors exactly where output_mask is set "
              "(and unused elsewhere)");
  }
  unsigned spatial = rank - 2;
  FailureOr<ConvParams> p = readConvParams(op, args, 4, spatial, rw);
  if (failed(p))
    return failure();
  Location loc = op.getLoc();
  RankedTensorType inType = input->getType();
  Type acc = getAccumulatorType(inType.getElementType());
  if (!isa<FloatType>(acc))
    return rw.notifyMatchFailure(op, "expects floating-point tensors");
  int64_t groups = p->groups;
  ArrayRef<int64_t> inShape = inType.getShape();
  ArrayRef<int64_t> wShape = weight->getType().getShape();
  SmallVector<Value> results(3);
  if (p->transposed) {
    // input plays grad_output's part in convolve's adjoint and the other way
    // round: grad_input is a convolution of the padded grad_output with the
    // same weight, grad_weight the same product reduced over (n, positions).
    if (failed(checkTransposedShapes(op, inShape, wShape,
                                     gradOut->getType().getShape(), *p, rw)))
      return failure();
    Value w = splitDim(rw, loc, *weight, 0, groups);
    Value go =
        splitDim(rw, loc, padSpatial(rw, loc, *gradOut, p->padding), 1, groups);
    if ((*mask)[0])
      results[0] = finishResult(rw, loc,
                                convolve(rw, loc, go, w, inShape[0], inShape[1],
                                         inShape.drop_front(2), *p, acc),
                                types[0]);
    if ((*mask)[1]) {
      Value x = splitDim(rw, loc, *input, 1, groups);
      results[1] = finishResult(
          rw, loc, convolveWeight(rw, loc, go, x, wShape, *p, acc), types[1]);
    }
  } else {
    if (inShape[1] % groups || wShape[0] % groups)
      return rw.notifyMatchFailure(op, "channels not divisible by groups");
    Value go = splitDim(rw, loc, *gradOut, 1, groups);
    Value w = splitDim(rw, loc, *weight, 0, groups);
    if ((*mask)[0])
      results[0] = finishResult(
          rw, loc, convolveAdjoint(rw, loc, go, w, inShape, *p, acc), types[0]);
    if ((*mask)[1]) {
      Value x =
          splitDim(rw, loc, padSpatial(rw, loc, *input, p->padding), 1, groups);
      results[1] = finishResult(
          rw, loc, convolveWeight(rw, loc, x, go, wShape, *p, acc), types[1]);
    }
  }
  if ((*mask)[2]) {
    SmallVector<bool> reduced(rank, true);
    reduced[1] = false;
    Value sum =
        buildReductionOf<arith::AddFOp>(rw, loc, *gradOut, reduced, acc, 0.0);
    results[2] = finishResult(rw, loc, sum, types[2]);
  }
  rw.replaceOp(op, results);
  return success();
}

} // namespace

void mlir::joint::populateConvolutionPatterns(
    const TypeConverter &typeConverter, RewritePatternSet &patterns) {
  LoweringTable table(typeConverter, patterns);
  table.add({"aten::convolution.default"}, lowerConvolution);
  table.add({"aten::convolution_backward.default"}, lowerConvolutionBackward);
}

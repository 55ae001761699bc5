//===- Attention.cpp - Scaled dot product attention to linalg -------------===//
//
// Every SDPA variant the exporter records (`_for_cpu`, flash, efficient,
// cuDNN and math, forward and backward) decomposes into the same contractions
// in f32 (bf16/f16 operands are extended, results cast once), with query
// heads grouped as [B, Hk, G, L, E] so grouped-query attention (Hk key/value
// heads, G = H / Hk) reads key/value head h / G without copies:
//   x   = scale * q.k^T (+ attn_mask, always added: the aten kernels take
//         float masks, and the math kernel adds a bool mask as 0/1 since
//         its caller converts bool masks first; is_causal keeps s <= l)
//   lse = max_s x + log(sum_s exp(x - max_s x))   (saved as torch does, f32)
//   P   = exp(x - lse),  out = P.v
// Backward from the saved logsumexp (the flash-attention formulas):
//   dP = dO.v^T, D = rowsum(dO * O), dS = P * (dP - D),
//   dQ = scale * dS.k, dK = scale * dS^T.q (summed over the group),
//   dV = P^T.dO (summed over the group).
// With bf16/f16 operands the flash variants round where torch's flash
// kernels feed a reduced-precision matmul (aten FlashAttentionKernel.cpp,
// checked bitwise against torch 2.15): the forward computes
// out = round(exp(x - max)).v / sum_s exp(x - max), and the backward uses
// round(P) for dV and round(dS) for dQ and dK; the math variant, a
// composite of bf16 ops, keeps the f32 formulas. The `_for_cpu` forward with
// bf16/f16 operands also computes exp(x - max) as torch's CPU kernel does:
// its vectorised loop over 16-float lanes uses ATen's `fexp_u20` (a degree-3
// polynomial on the fraction of x*log2(e), assembled in the exponent bits;
// about 1e-4 relative, e.g. 1 - 5.3e-5 at 0), and the last S % 16 keys of a
// row (its scalar tail) use exact exp. Matching it makes the bf16 forward
// bitwise equal to torch's for kv lengths up to its 512-key block (longer
// rows rescale per block, which this single pass does not repeat).
// Dropout (dropout_p != 0) is refused: it needs the RNG. The extra results
// of the CUDA variants (cumulative sequence lengths, RNG state, debug mask)
// become zero tensors; max_q/max_k the sequence lengths.
//
//===----------------------------------------------------------------------===//

#include "UtilsOps.h"
#include "joint/Conversion/JointToLinalg/JointToLinalg.h"
#include "llvm/ADT/SmallVectorExtras.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "llvm/ADT/bit.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::joint;
using namespace mlir::joint::lowering;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// Where each argument of a variant sits in its schema (-1: absent).
struct SdpaSchema {
  StringRef target;
  bool backward;
  int gradOut, q, k, v, out, lse, mask, dropout, causal, scale;
  const char *maskName;
};

// clang-format off
const SdpaSchema kSchemas[] = {
  {"aten::_scaled_dot_product_flash_attention_for_cpu.default", false,
   -1, 0, 1, 2, -1, -1, 5, 3, 4, 6, "attn_mask"},
  {"aten::_scaled_dot_product_flash_attention_for_cpu_backward.default", true,
   0, 1, 2, 3, 4, 5, 8, 6, 7, 9, "attn_mask"},
  {"aten::_scaled_dot_product_flash_attention.default", false,
   -1, 0, 1, 2, -1, -1, -1, 3, 4, 6, ""},
  {"aten::_scaled_dot_product_flash_attention_backward.default", true,
   0, 1, 2, 3, 4, 5, -1, 10, 11, 14, ""},
  {"aten::_scaled_dot_product_efficient_attention.default", false,
   -1, 0, 1, 2, -1, -1, 3, 5, 6, 7, "attn_bias"},
  {"aten::_scaled_dot_product_efficient_attention_backward.default", true,
   0, 1, 2, 3, 5, 6, 4, 9, 11, 12, "attn_bias"},
  {"aten::_scaled_dot_product_cudnn_attention.default", false,
   -1, 0, 1, 2, -1, -1, 3, 5, 6, 8, "attn_bias"},
  {"aten::_scaled_dot_product_cudnn_attention_backward.default", true,
   0, 1, 2, 3, 4, 5, 8, 13, 14, 15, "attn_bias"},
  {"aten::_scaled_dot_product_attention_math.default", false,
   -1, 0, 1, 2, -1, -1, 3, 4, 5, 7, "attn_mask"},
};
// clang-format on

const char *kArgNames[] = {"grad_out", "query", "key",
                           "value",    "out",   "logsumexp"};

const SdpaSchema *lookupSchema(CallFunctionOp op) {
  for (const SdpaSchema &s : kSchemas)
    if (s.target == op.getTarget())
      return &s;
  return nullptr;
}

/// The pieces shared by the forward and backward decompositions.
struct Sdpa {
  OpBuilder &b;
  Location loc;
  MLIRContext *ctx;
  Type f32;
  // Grouped operands: q [B,Hk,G,L,E], k [B,Hk,S,E], v [B,Hk,S,Ev].
  Value q, k, v, mask;
  int64_t groups = 1;
  bool causal = false;
  Value scale; // f32 scalar
  /// bf16/f16 where the variant rounds probabilities like torch's flash
  /// kernels (see the file comment); null for f32 and the math variant.
  Type reduced;
  /// exp(x - max) of the forward as torch's CPU flash kernel computes it
  /// (`fastExp` on the vectorised keys, see the file comment).
  bool cpuExp = false;
  /// The first query row of q (index) when q holds a block of rows (see
  /// forEachRowBlock), for the causal mask; null: row 0.
  Value rowOffset;

  Sdpa(OpBuilder &b, Location loc)
      : b(b), loc(loc), ctx(b.getContext()), f32(b.getF32Type()) {}

  AffineExpr d(unsigned i) { return getAffineDimExpr(i, ctx); }
  AffineMap map(unsigned n, ArrayRef<AffineExpr> e) {
    return AffineMap::get(n, 0, e, ctx);
  }

  /// [B,H,L,X] -> [B,Hk,G,L,X].
  Value group(Value t) {
    auto type = cast<RankedTensorType>(t.getType());
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, t);
    int64_t h = type.getDimSize(1);
    OpFoldResult hk =
        groups == 1 ? sizes[1] : OpFoldResult(b.getIndexAttr(h / groups));
    SmallVector<int64_t> shape{type.getDimSize(0), groups == 1 ? h : h / groups,
                               groups, type.getDimSize(2), type.getDimSize(3)};
    return tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), t,
        ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}},
        ArrayRef<OpFoldResult>{sizes[0], hk, b.getIndexAttr(groups), sizes[2],
                               sizes[3]});
  }

  /// [B,Hk,G,...] -> [B,H,...].
  Value ungroup(Value t) {
    auto type = cast<RankedTensorType>(t.getType());
    SmallVector<ReassociationIndices> re{{0}, {1, 2}};
    for (int64_t i = 3; i < type.getRank(); ++i)
      re.push_back({i});
    return tensor::CollapseShapeOp::create(b, loc, t, re);
  }

  Value load(Value v) { return convertScalar(b, loc, v, f32); }

  /// A contraction: out[numOut loops] += lhs * rhs over the remaining loops,
  /// into `init` (f32, `outSizes`), or into zeros when it is null.
  Value contract(Value lhs, AffineMap lhsMap, Value rhs, AffineMap rhsMap,
                 ArrayRef<OpFoldResult> outSizes, unsigned numLoops,
                 Value init = Value()) {
    unsigned numOut = outSizes.size();
    if (!init)
      init = createFilledTensor(b, loc, outSizes, f32, 0.0);
    SmallVector<AffineExpr> outExprs;
    SmallVector<utils::IteratorType> iters;
    for (unsigned i = 0; i < numLoops; ++i) {
      if (i < numOut)
        outExprs.push_back(d(i));
      iters.push_back(i < numOut ? utils::IteratorType::parallel
                                 : utils::IteratorType::reduction);
    }
    return linalg::GenericOp::create(
               b, loc, init.getType(), ValueRange{lhs, rhs}, ValueRange{init},
               ArrayRef<AffineMap>{lhsMap, rhsMap, map(numLoops, outExprs)},
               iters,
               [&](OpBuilder &nb, Location nl, ValueRange a) {
                 Value x = convertScalar(nb, nl, a[0], f32);
                 Value y = convertScalar(nb, nl, a[1], f32);
                 Value p = arith::MulFOp::create(nb, nl, x, y);
                 linalg::YieldOp::create(
                     nb, nl,
                     arith::AddFOp::create(nb, nl, a[2], p).getResult());
               })
        .getResult(0);
  }

  /// out[b,hk,g,l,n] = sum_r lhs[b,hk,g,l,r] * rhs, with rhs [b,hk,n,r]
  /// (`rhsNR`) or [b,hk,r,n]; loops (b,hk,g,l,n,r).
  Value contractRows(Value lhs, Value rhs, bool rhsNR) {
    AffineMap rhsMap = rhsNR ? map(6, {d(0), d(1), d(4), d(5)})
                             : map(6, {d(0), d(1), d(5), d(4)});
    return contract(lhs, map(6, {d(0), d(1), d(2), d(3), d(5)}), rhs, rhsMap,
                    {size(lhs, 0), size(lhs, 1), size(lhs, 2), size(lhs, 3),
                     size(rhs, rhsNR ? 2 : 3)},
                    6);
  }

  /// Elementwise generic over the 5 (or `rank`) loops of `like`.
  Value elementwise(Value like, Type elem, ValueRange inputs,
                    ArrayRef<AffineMap> maps,
                    function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
    return buildElementwiseMap(b, loc, like, elem, inputs, maps, fn);
  }

  OpFoldResult size(Value t, unsigned i) {
    return tensor::getMixedSize(b, loc, t, i);
  }

  /// x[b,hk,g,l,s] = scale * sum_e q.k + mask, causal entries -inf.
  Value logits() {
    // loops (b, hk, g, l, s, e)
    Value dot = contractRows(q, k, /*rhsNR=*/true);
    SmallVector<Value> inputs{dot};
    AffineMap id5 = b.getMultiDimIdentityMap(5);
    SmallVector<AffineMap> maps{id5};
    if (mask) {
      auto mType = cast<RankedTensorType>(mask.getType());
      // Mask dims align right-most with [B, H, L, S]; h = hk * G + g.
      AffineExpr targets[] = {d(0), d(1) * groups + d(2), d(3), d(4)};
      SmallVector<AffineExpr> exprs;
      int64_t off = 4 - mType.getRank();
      for (int64_t i = 0; i < mType.getRank(); ++i)
        exprs.push_back(mType.getDimSize(i) == 1 ? getAffineConstantExpr(0, ctx)
                                                 : targets[off + i]);
      inputs.push_back(mask);
      maps.push_back(map(5, exprs));
    }
    bool hasMask = static_cast<bool>(mask);
    bool isCausal = causal;
    Value sc = scale, rowOffset = this->rowOffset;
    return elementwise(
        dot, f32, inputs, maps, [&](OpBuilder &nb, Location nl, ValueRange a) {
          Value x = arith::MulFOp::create(nb, nl, a[0], sc);
          Value negInf = createScalarConstant(nb, nl, f32, -kInf);
          if (hasMask)
            x = arith::AddFOp::create(nb, nl, x,
                                      convertScalar(nb, nl, a[1], f32));
          if (isCausal) {
            Value l = linalg::IndexOp::create(nb, nl, 3);
            if (rowOffset)
              l = arith::AddIOp::create(nb, nl, l, rowOffset);
            Value s = linalg::IndexOp::create(nb, nl, 4);
            Value keep =
                arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ule, s, l);
            x = arith::SelectOp::create(nb, nl, keep, x, negInf);
          }
          return x;
        });
  }

  /// ATen's `fexp_u20` on f32 (vec512_float.h / vec256_float.h): with
  /// s = x * log2(e), f = s - floor(s), p = ((c3 f + c2) f + c1) f + c0 (FMAs),
  /// the result has the bits of int(2^23 (s - p) + 127 * 2^23) (truncated);
  /// x below ln(FLT_MIN) gives 0, above ln(FLT_MAX) +inf, NaN stays NaN.
  static Value fastExp(OpBuilder &nb, Location nl, Value x) {
    Type f32 = nb.getF32Type();
    // Constants in a fixed order (C++ leaves argument order unspecified).
    auto bits = [&](uint32_t u) {
      return createScalarConstant(nb, nl, f32, llvm::bit_cast<float>(u));
    };
    auto cst = [&](float v) { return createScalarConstant(nb, nl, f32, v); };
    Value log2e = bits(0x3fb8aa3b), lnMin = bits(0xc2aeac50),
          lnMax = bits(0x42b17218);
    Value c0 = cst(0.00010703434948458272f), c1 = cst(0.30354260500649682f),
          c2 = cst(-0.22433836478672356f), c3 = cst(-0.079204240219773236f);
    Value scale = cst(8388608.0f), bias = cst(8388608.0f * 127.0f);
    Value zero = cst(0.0f), inf = cst(std::numeric_limits<float>::infinity());

    Value s = arith::MulFOp::create(nb, nl, x, log2e);
    Value floor = math::FloorOp::create(nb, nl, s);
    Value f = arith::SubFOp::create(nb, nl, s, floor);
    Value p = math::FmaOp::create(nb, nl, f, c3, c2);
    p = math::FmaOp::create(nb, nl, f, p, c1);
    p = math::FmaOp::create(nb, nl, f, p, c0);
    Value e = arith::SubFOp::create(nb, nl, s, p);
    Value t = math::FmaOp::create(nb, nl, scale, e, bias);
    Value i = arith::FPToSIOp::create(nb, nl, nb.getI32Type(), t);
    Value r = arith::BitcastOp::create(nb, nl, f32, i);
    Value small =
        arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OLT, x, lnMin);
    r = arith::SelectOp::create(nb, nl, small, zero, r);
    Value large =
        arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGT, x, lnMax);
    r = arith::SelectOp::create(nb, nl, large, inf, r);
    Value nan = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::UNO, x, x);
    return arith::SelectOp::create(nb, nl, nan, x, r);
  }

  /// The first key of the scalar tail of torch's CPU kernel, S - S % 16
  /// (index), or null when every key is vectorised (static S % 16 == 0).
  Value vectorEnd(Value x) {
    int64_t s = cast<RankedTensorType>(x.getType()).getDimSize(4);
    if (!ShapedType::isDynamic(s))
      return s % 16 == 0
                 ? Value()
                 : Value(arith::ConstantIndexOp::create(b, loc, s - s % 16));
    Value dim = tensor::DimOp::create(b, loc, x, 4);
    Value c16 = arith::ConstantIndexOp::create(b, loc, 16);
    return arith::SubIOp::create(b, loc, dim,
                                 arith::RemUIOp::create(b, loc, dim, c16));
  }

  /// exp(x - row) in a body over the logits' loops: torch's CPU kernel's
  /// (fastExp on the keys before `vecEnd`) when `cpuExp`, else math.exp.
  Value expDiff(OpBuilder &nb, Location nl, Value x, Value row, Value vecEnd) {
    Value d = arith::SubFOp::create(nb, nl, x, row);
    Value exact = math::ExpOp::create(nb, nl, d);
    if (!cpuExp)
      return exact;
    Value fast = fastExp(nb, nl, d);
    if (!vecEnd)
      return fast;
    Value key = linalg::IndexOp::create(nb, nl, 4);
    Value vec =
        arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ult, key, vecEnd);
    return arith::SelectOp::create(nb, nl, vec, fast, exact);
  }

  /// Row maximum and sum_s exp(x - max) of the logits, [b,hk,g,l] each.
  struct RowStats {
    Value max, sum;
  };
  RowStats rowStats(Value x) {
    AffineMap id5 = b.getMultiDimIdentityMap(5);
    SmallVector<bool> lastDim{false, false, false, false, true};
    AffineMap proj = getProjectionMap(ctx, 5, lastDim);
    Value max =
        buildReduction(
            b, loc, {x}, {id5}, lastDim, {f32}, {-kInf},
            [&](OpBuilder &nb, Location nl, ValueRange in, ValueRange acc) {
              return SmallVector<Value>{
                  arith::MaximumFOp::create(nb, nl, acc[0], in[0])};
            })
            .front();
    Value vecEnd = cpuExp ? vectorEnd(x) : Value();
    Value sum =
        buildReduction(
            b, loc, {x, max}, {id5, proj}, lastDim, {f32}, {0.0},
            [&](OpBuilder &nb, Location nl, ValueRange in, ValueRange acc) {
              Value e = expDiff(nb, nl, in[0], in[1], vecEnd);
              return SmallVector<Value>{
                  arith::AddFOp::create(nb, nl, acc[0], e)};
            })
            .front();
    return {max, sum};
  }

  /// lse[b,hk,g,l] = max + log(sum).
  Value logsumexp(RowStats stats) {
    AffineMap id4 = b.getMultiDimIdentityMap(4);
    return elementwise(stats.max, f32, {stats.max, stats.sum}, {id4, id4},
                       [&](OpBuilder &nb, Location nl, ValueRange a) {
                         return arith::AddFOp::create(
                                    nb, nl, a[0],
                                    math::LogOp::create(nb, nl, a[1]))
                             .getResult();
                       });
  }

  /// exp(x - row) as `elem` (P for row = lse; unnormalized for row = max,
  /// through expDiff).
  Value probs(Value x, Value row, Type elem) {
    AffineMap id5 = b.getMultiDimIdentityMap(5);
    AffineMap proj = map(5, {d(0), d(1), d(2), d(3)});
    Value vecEnd = cpuExp ? vectorEnd(x) : Value();
    return elementwise(x, elem, {x, row}, {id5, proj},
                       [&](OpBuilder &nb, Location nl, ValueRange a) {
                         Value e = expDiff(nb, nl, a[0], a[1], vecEnd);
                         return convertScalar(nb, nl, e, elem);
                       });
  }

  /// `t` (f32) rounded to `reduced`, or `t` itself when there is none.
  Value roundToReduced(Value t) {
    if (!reduced)
      return t;
    Type elem = reduced;
    unsigned rank = cast<RankedTensorType>(t.getType()).getRank();
    return elementwise(t, elem, {t}, {b.getMultiDimIdentityMap(rank)},
                       [&](OpBuilder &nb, Location nl, ValueRange a) {
                         return convertScalar(nb, nl, a[0], elem);
                       });
  }

  /// out[b,hk,g,l,ev] / sum[b,hk,g,l], cast to `elem`.
  Value normalize(Value out, Value sum, Type elem) {
    AffineMap id5 = b.getMultiDimIdentityMap(5);
    AffineMap proj = map(5, {d(0), d(1), d(2), d(3)});
    return elementwise(out, elem, {out, sum}, {id5, proj},
                       [&](OpBuilder &nb, Location nl, ValueRange a) {
                         Value q = arith::DivFOp::create(nb, nl, a[0], a[1]);
                         return convertScalar(nb, nl, q, elem);
                       });
  }

  /// out[b,hk,g,l,ev] = sum_s P * v.
  Value attend(Value p) { return contractRows(p, v, /*rhsNR=*/false); }

  /// `t` * scale (when given), cast to `elem`.
  Value finish(Value t, Type elem, bool scaled) {
    Value sc = scale;
    unsigned rank = cast<RankedTensorType>(t.getType()).getRank();
    return elementwise(t, elem, {t}, {b.getMultiDimIdentityMap(rank)},
                       [&](OpBuilder &nb, Location nl, ValueRange a) {
                         Value x = a[0];
                         if (scaled)
                           x = arith::MulFOp::create(nb, nl, x, sc);
                         return convertScalar(nb, nl, x, elem);
                       });
  }
};

/// Query rows per block for a `rowBlock` option: the largest divisor of a
/// static length up to `rowBlock` (at least 8 rows), else the whole length
/// (0 = no row loop; dynamic lengths too).
int64_t pickRowBlock(int64_t len, int64_t rowBlock) {
  if (rowBlock <= 0 || ShapedType::isDynamic(len) || len <= rowBlock)
    return 0;
  for (int64_t rows = rowBlock; rows >= 8; --rows)
    if (len % rows == 0)
      return rows;
  return 0;
}

/// One block of attention: batch `b`, key/value head `hk`, query rows
/// [l0, l0 + rows).
struct RowBlock {
  Value b, hk, l0;
  OpFoldResult rows;
};

/// The block's slice of `t`, rank kept: [B,Hk,G,L,...] (`rowsAt` = 3) to
/// [1,1,G,rows,...], or [B,Hk,S,...] (`rowsAt` = -1) to [1,1,S,...].
Value sliceBlock(OpBuilder &b, Location loc, Value t, const RowBlock &blk,
                 int rowsAt) {
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, t);
  SmallVector<OpFoldResult> offsets(sizes.size(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(sizes.size(), b.getIndexAttr(1));
  offsets[0] = blk.b;
  offsets[1] = blk.hk;
  sizes[0] = sizes[1] = b.getIndexAttr(1);
  if (rowsAt >= 0) {
    offsets[rowsAt] = blk.l0;
    sizes[rowsAt] = blk.rows;
  }
  return tensor::ExtractSliceOp::create(b, loc, t, offsets, sizes, strides);
}

/// `part` (a sliceBlock of `into`'s shape) written back at the block.
Value insertBlock(OpBuilder &b, Location loc, Value part, Value into,
                  const RowBlock &blk, int rowsAt) {
  unsigned rank = cast<RankedTensorType>(into.getType()).getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  offsets[0] = blk.b;
  offsets[1] = blk.hk;
  if (rowsAt >= 0)
    offsets[rowsAt] = blk.l0;
  return tensor::InsertSliceOp::create(b, loc, part, into, offsets,
                                       tensor::getMixedSizes(b, loc, part),
                                       strides);
}

/// The mask (dims aligned right with [B, H, L, S], size-1 dims broadcast)
/// sliced to the block's batch, its G query heads and rows.
Value sliceMask(OpBuilder &b, Location loc, Value mask, const RowBlock &blk,
                int64_t groups) {
  auto type = cast<RankedTensorType>(mask.getType());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, mask);
  SmallVector<OpFoldResult> offsets(sizes.size(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(sizes.size(), b.getIndexAttr(1));
  int64_t off = 4 - type.getRank();
  for (int64_t i = 0; i < type.getRank(); ++i) {
    if (type.getDimSize(i) == 1 || off + i == 3)
      continue; // broadcast, or keys (whole rows)
    if (off + i == 0) {
      offsets[i] = blk.b;
      sizes[i] = b.getIndexAttr(1);
    } else if (off + i == 1) {
      offsets[i] = getAsOpFoldResult(arith::MulIOp::create(
          b, loc, blk.hk, arith::ConstantIndexOp::create(b, loc, groups)));
      sizes[i] = b.getIndexAttr(groups);
    } else {
      offsets[i] = blk.l0;
      sizes[i] = blk.rows;
    }
  }
  return tensor::ExtractSliceOp::create(b, loc, mask, offsets, sizes, strides);
}

/// Per (batch, key/value head, block of query rows): `body` gets `sdpa`
/// narrowed to the block (q, k, v, mask, rowOffset) and the head's f32
/// accumulators (zeros at the head's first block, [1,1,S,...] like the
/// `headOuts`), and returns the block's finished row results ([1,1,G,rows,
/// ...], written into `rowOuts` [B,Hk,G,L,...]) then the new accumulators;
/// after the head's last block `finishHead(acc, i)` gives what is written
/// into `headOuts[i]` [B,Hk,S,...]. Returns the row tensors, then the heads.
/// Once bufferized, temporaries of `body` exist one block at a time and the
/// f32 accumulators one head at a time.
SmallVector<Value> forEachRowBlock(
    Sdpa &sdpa, int64_t rowBlock, ValueRange rowOuts, ValueRange headOuts,
    function_ref<SmallVector<Value>(Sdpa &, const RowBlock &, ValueRange)> body,
    function_ref<Value(Value, unsigned)> finishHead) {
  OpBuilder &b = sdpa.b;
  Location loc = sdpa.loc;
  int64_t len = cast<RankedTensorType>(sdpa.q.getType()).getDimSize(3);
  int64_t rows = pickRowBlock(len, rowBlock);
  auto dim = [&](Value t, unsigned i) {
    return getValueOrCreateConstantIndexOp(b, loc, sdpa.size(t, i));
  };
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> outs(rowOuts);
  llvm::append_range(outs, headOuts);
  unsigned numRows = rowOuts.size();
  // The rows of one head: one block, or a loop over blocks of `rows`.
  auto headRows = [&](Value bIv, Value hkIv, ValueRange rowArgs,
                      ValueRange accs) -> SmallVector<Value> {
    auto step = [&](Value l0, ValueRange rowArgs,
                    ValueRange accs) -> SmallVector<Value> {
      RowBlock blk{bIv, hkIv, l0,
                   rows ? OpFoldResult(b.getIndexAttr(rows))
                        : sdpa.size(sdpa.q, 3)};
      Sdpa narrow = sdpa;
      narrow.q = sliceBlock(b, loc, sdpa.q, blk, 3);
      narrow.k = sliceBlock(b, loc, sdpa.k, blk, -1);
      narrow.v = sliceBlock(b, loc, sdpa.v, blk, -1);
      if (sdpa.mask)
        narrow.mask = sliceMask(b, loc, sdpa.mask, blk, sdpa.groups);
      if (rows)
        narrow.rowOffset = l0;
      SmallVector<Value> parts = body(narrow, blk, accs);
      SmallVector<Value> next;
      for (unsigned i = 0; i < numRows; ++i)
        next.push_back(insertBlock(b, loc, parts[i], rowArgs[i], blk, 3));
      llvm::append_range(next, ArrayRef<Value>(parts).drop_front(numRows));
      return next;
    };
    if (!rows)
      return step(c0, rowArgs, accs);
    SmallVector<Value> inits(rowArgs);
    llvm::append_range(inits, accs);
    scf::LoopNest loop = scf::buildLoopNest(
        b, loc, {c0}, {dim(sdpa.q, 3)},
        {arith::ConstantIndexOp::create(b, loc, rows)}, inits,
        [&](OpBuilder &, Location, ValueRange ivs,
            ValueRange args) -> scf::ValueVector {
          SmallVector<Value> r =
              step(ivs[0], args.take_front(numRows), args.drop_front(numRows));
          return scf::ValueVector(r.begin(), r.end());
        });
    return SmallVector<Value>(loop.results);
  };
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, {c0, c0}, {dim(sdpa.q, 0), dim(sdpa.q, 1)}, {c1, c1}, outs,
      [&](OpBuilder &, Location, ValueRange ivs,
          ValueRange args) -> scf::ValueVector {
        RowBlock head{ivs[0], ivs[1], c0, OpFoldResult()};
        SmallVector<Value> accs;
        for (Value h : args.drop_front(numRows)) {
          SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, h);
          sizes[0] = sizes[1] = b.getIndexAttr(1);
          accs.push_back(createFilledTensor(b, loc, sizes, sdpa.f32, 0.0));
        }
        SmallVector<Value> r =
            headRows(ivs[0], ivs[1], args.take_front(numRows), accs);
        scf::ValueVector next(r.begin(), r.begin() + numRows);
        for (auto [i, h] : llvm::enumerate(args.drop_front(numRows)))
          next.push_back(
              insertBlock(b, loc, finishHead(r[numRows + i], i), h, head, -1));
        return next;
      });
  return SmallVector<Value>(nest.results);
}

bool isMathVariant(CallFunctionOp op) {
  return op.getTarget() == "aten::_scaled_dot_product_attention_math.default";
}

/// lse [B,H,L] in the layout the variant saves: [B,H,L] (flash, for_cpu),
/// [B,H,L,1] (cuDNN) or [B,H,Lpad] (efficient, padded with zeros).
Value fitLogsumexp(OpBuilder &b, Location loc, Value lse,
                   RankedTensorType type) {
  auto lType = cast<RankedTensorType>(lse.getType());
  if (type.getRank() == 4 && type.getDimSize(3) == 1) {
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, lse);
    sizes.push_back(b.getIndexAttr(1));
    lse = tensor::ExpandShapeOp::create(
        b, loc,
        RankedTensorType::get(
            {lType.getDimSize(0), lType.getDimSize(1), lType.getDimSize(2), 1},
            lType.getElementType()),
        lse, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}}, sizes);
  } else if (type.getRank() != 3) {
    return Value();
  } else if (type.getDimSize(2) != lType.getDimSize(2) &&
             !ShapedType::isDynamic(type.getDimSize(2))) {
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, lse);
    sizes[2] = b.getIndexAttr(type.getDimSize(2));
    Value padded =
        createFilledTensor(b, loc, sizes, lType.getElementType(), 0.0);
    SmallVector<OpFoldResult> zeros(3, b.getIndexAttr(0));
    SmallVector<OpFoldResult> ones(3, b.getIndexAttr(1));
    lse = tensor::InsertSliceOp::create(
        b, loc, lse, padded, zeros, tensor::getMixedSizes(b, loc, lse), ones);
  }
  return finishResult(b, loc, lse, type);
}

/// Sizes of a [B,Hk,G,L,`last`] tensor of `sdpa`'s grouped query.
SmallVector<OpFoldResult> rowSizes(Sdpa &sdpa, OpFoldResult last) {
  SmallVector<OpFoldResult> sizes;
  for (unsigned i = 0; i < 4; ++i)
    sizes.push_back(sdpa.size(sdpa.q, i));
  if (last)
    sizes.push_back(last);
  return sizes;
}

LogicalResult rewriteForward(CallFunctionOp op, ConversionPatternRewriter &rw,
                             Sdpa &sdpa, int64_t rowBlock) {
  Location loc = op.getLoc();
  RankedTensorType outType = getResultTensorType(op, 0);
  if (!outType || op->getNumResults() < 2)
    return rw.notifyMatchFailure(op, "unexpected results");
  bool isMath = isMathVariant(op);
  Type outElem = outType.getElementType();
  // Every result is per query row: out, lse (and P for the math variant).
  auto rowsOf = [&](Sdpa &s, const RowBlock &, ValueRange) {
    Value x = s.logits();
    Sdpa::RowStats stats = s.rowStats(x);
    Value lse = s.logsumexp(stats);
    Value p, out;
    if (s.reduced) {
      Value unnormalized = s.probs(x, stats.max, s.reduced);
      out = s.normalize(s.attend(unnormalized), stats.sum, outElem);
    } else {
      p = s.probs(x, lse, s.f32);
      out = s.finish(s.attend(p), outElem, false);
    }
    SmallVector<Value> rows{out, lse};
    if (isMath)
      rows.push_back(p);
    return rows;
  };
  SmallVector<Value> rows;
  if (rowBlock <= 0) {
    rows = rowsOf(sdpa, RowBlock{}, {});
  } else {
    SmallVector<Value> inits{
        tensor::EmptyOp::create(rw, loc, rowSizes(sdpa, sdpa.size(sdpa.v, 3)),
                                outElem),
        tensor::EmptyOp::create(rw, loc, rowSizes(sdpa, {}), sdpa.f32)};
    if (isMath)
      inits.push_back(tensor::EmptyOp::create(
          rw, loc, rowSizes(sdpa, sdpa.size(sdpa.k, 2)), sdpa.f32));
    rows = forEachRowBlock(sdpa, rowBlock, inits, {}, rowsOf,
                           [](Value acc, unsigned) { return acc; });
  }
  Value out = rows[0], lse = rows[1], p = isMath ? rows[2] : Value();
  SmallVector<Value> results{castToType(rw, loc, sdpa.ungroup(out), outType)};
  RankedTensorType second = getResultTensorType(op, 1);
  if (isMath) {
    if (!second)
      return rw.notifyMatchFailure(op, "attention weights not a tensor");
    results.push_back(castToType(
        rw, loc, sdpa.ungroup(sdpa.finish(p, second.getElementType(), false)),
        second));
  } else if (!second) {
    if (!op->getResult(1).use_empty())
      return rw.notifyMatchFailure(op, "logsumexp result is not a tensor");
    results.push_back(Value());
  } else {
    results.push_back(fitLogsumexp(rw, loc, sdpa.ungroup(lse), second));
    if (!results.back())
      return rw.notifyMatchFailure(op, "unexpected logsumexp shape");
  }
  // The CUDA variants' bookkeeping results.
  for (unsigned i = 2; i < op->getNumResults(); ++i) {
    Value r = op->getResult(i);
    Type type = r.getType();
    auto tType = dyn_cast_or_null<RankedTensorType>(type);
    if (tType && tType.hasStaticShape()) {
      // A dense zero constant (valid for ui64 RNG state too, unlike a fill
      // with an arith scalar).
      Type elem = tType.getElementType();
      if (tType.getNumElements() == 0) {
        results.push_back(
            tensor::EmptyOp::create(rw, loc, tType.getShape(), elem));
        continue;
      }
      Attribute zero = isa<FloatType>(elem)
                           ? Attribute(rw.getFloatAttr(elem, 0.0))
                           : Attribute(rw.getIntegerAttr(elem, 0));
      results.push_back(arith::ConstantOp::create(
          rw, loc, DenseElementsAttr::get(tType, zero)));
    } else if (type && type.isIntOrIndex() &&
               (i == 4 || i == 5)) { // max_q, max_k
      Value len = getValueOrCreateConstantIndexOp(
          rw, loc,
          i == 4 ? tensor::getMixedSize(rw, loc, sdpa.q, 3)
                 : tensor::getMixedSize(rw, loc, sdpa.k, 2));
      results.push_back(indexToScalar(rw, loc, len, type));
    } else if (r.use_empty()) {
      results.push_back(Value());
    } else {
      return rw.notifyMatchFailure(op, "cannot produce result " +
                                           std::to_string(i));
    }
  }
  rw.replaceOp(op, results);
  return success();
}

LogicalResult rewriteBackward(CallFunctionOp op, const OpArgs &args,
                              const SdpaCall &call,
                              ConversionPatternRewriter &rw, Sdpa &sdpa,
                              int64_t rowBlock) {
  Location loc = op.getLoc();
  Value dO = call.gradOut, o = call.out, lseIn = call.logsumexp;
  if (op.getTarget() ==
      "aten::_scaled_dot_product_efficient_attention_backward.default") {
    FailureOr<SmallVector<bool>> gradMask =
        args.getBoolList(10, "grad_input_mask");
    if (failed(gradMask) || gradMask->size() != 4)
      return rw.notifyMatchFailure(op, "expected bool[4] grad_input_mask");
    if ((*gradMask)[3] && !op->getResult(3).use_empty())
      return rw.notifyMatchFailure(
          op, "the gradient of attn_bias is not supported");
  }
  SmallVector<RankedTensorType> types;
  for (unsigned i = 0; i < 3; ++i) {
    types.push_back(getResultTensorType(op, i));
    if (!types.back())
      return rw.notifyMatchFailure(op, "gradients must be tensors");
  }
  // Saved lse back to [B,H,L] f32: drop cuDNN's unit dim or efficient's
  // padding.
  Value lse = lseIn;
  auto lType = cast<RankedTensorType>(lse.getType());
  if (lType.getRank() == 4)
    lse = tensor::CollapseShapeOp::create(
        rw, loc, lse, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
  else if (lType.getRank() != 3)
    return rw.notifyMatchFailure(op, "unexpected logsumexp rank");
  OpFoldResult qLen = tensor::getMixedSize(rw, loc, sdpa.q, 3);
  if (getConstantIntValue(qLen) !=
      getConstantIntValue(tensor::getMixedSize(rw, loc, lse, 2))) {
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rw, loc, lse);
    sizes[2] = qLen;
    SmallVector<OpFoldResult> zeros(3, rw.getIndexAttr(0));
    SmallVector<OpFoldResult> ones(3, rw.getIndexAttr(1));
    lse = tensor::ExtractSliceOp::create(rw, loc, lse, zeros, sizes, ones);
  }
  lse = convertElements(rw, loc, lse, sdpa.f32);
  // [B,H,L] -> [B,Hk,G,L].
  {
    auto t = cast<RankedTensorType>(lse.getType());
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rw, loc, lse);
    int64_t g = sdpa.groups;
    SmallVector<int64_t> shape{t.getDimSize(0),
                               g == 1 ? t.getDimSize(1) : t.getDimSize(1) / g,
                               g, t.getDimSize(2)};
    OpFoldResult hk =
        g == 1 ? sizes[1] : OpFoldResult(rw.getIndexAttr(shape[1]));
    lse = tensor::ExpandShapeOp::create(
        rw, loc, RankedTensorType::get(shape, sdpa.f32), lse,
        ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}},
        ArrayRef<OpFoldResult>{sizes[0], hk, rw.getIndexAttr(g), sizes[2]});
  }
  Value gdO = sdpa.group(dO);
  Value gO = sdpa.group(o);
  // dQ per query row; dK and dV summed over the rows and the group into
  // `heads` (zeros when null).
  auto gradsOf = [&](Sdpa &s, const RowBlock &blk,
                     ValueRange heads) -> SmallVector<Value> {
    bool whole = heads.empty();
    Value bdO = whole ? gdO : sliceBlock(rw, loc, gdO, blk, 3);
    Value bO = whole ? gO : sliceBlock(rw, loc, gO, blk, 3);
    Value blse = whole ? lse : sliceBlock(rw, loc, lse, blk, 3);
    Value x = s.logits();
    Value p = s.probs(x, blse, s.f32);
    auto d = [&](unsigned i) { return s.d(i); };
    // dP[b,hk,g,l,s] = sum_ev dO * v; loops (b,hk,g,l,s,ev).
    Value dP = s.contractRows(bdO, s.v, /*rhsNR=*/true);
    // D[b,hk,g,l] = sum_ev dO * O.
    AffineMap id5 = rw.getMultiDimIdentityMap(5);
    Value rowDot =
        buildReduction(
            rw, loc, {bdO, bO}, {id5, id5}, {false, false, false, false, true},
            {s.f32}, {0.0},
            [&](OpBuilder &nb, Location nl, ValueRange in, ValueRange acc) {
              Value prod = arith::MulFOp::create(
                  nb, nl, convertScalar(nb, nl, in[0], s.f32),
                  convertScalar(nb, nl, in[1], s.f32));
              return SmallVector<Value>{
                  arith::AddFOp::create(nb, nl, acc[0], prod)};
            })
            .front();
    // dS = P * (dP - D), computed into dP (its only reader): bufferized, dS
    // takes dP's buffer, one [L, S] buffer less at the peak of the backward
    // (the memory model counts no SDPA workspace).
    Value dS =
        linalg::GenericOp::create(
            rw, loc, dP.getType(), ValueRange{p, rowDot}, ValueRange{dP},
            ArrayRef<AffineMap>{id5, s.map(5, {d(0), d(1), d(2), d(3)}), id5},
            SmallVector<utils::IteratorType>(5, utils::IteratorType::parallel),
            [&](OpBuilder &nb, Location nl, ValueRange a) {
              Value diff = arith::SubFOp::create(nb, nl, a[2], a[1]);
              Value prod = arith::MulFOp::create(nb, nl, a[0], diff);
              linalg::YieldOp::create(nb, nl, prod);
            })
            .getResult(0);
    // The matmul operands torch's flash kernels round (file comment).
    Value pm = s.roundToReduced(p);
    dS = s.roundToReduced(dS);
    // dQ[b,hk,g,l,e] = sum_s dS * k; loops (b,hk,g,l,e,s).
    Value dQ = s.contractRows(dS, s.k, /*rhsNR=*/false);
    // dK[b,hk,s,e] = sum_{g,l} dS * q; loops (b,hk,s,e,g,l).
    Value dK = s.contract(
        dS, s.map(6, {d(0), d(1), d(4), d(5), d(2)}), s.q,
        s.map(6, {d(0), d(1), d(4), d(5), d(3)}),
        {s.size(s.k, 0), s.size(s.k, 1), s.size(s.k, 2), s.size(s.k, 3)}, 6,
        whole ? Value() : heads[0]);
    // dV[b,hk,s,ev] = sum_{g,l} P * dO; loops (b,hk,s,ev,g,l).
    Value dV = s.contract(
        pm, s.map(6, {d(0), d(1), d(4), d(5), d(2)}), bdO,
        s.map(6, {d(0), d(1), d(4), d(5), d(3)}),
        {s.size(s.v, 0), s.size(s.v, 1), s.size(s.v, 2), s.size(s.v, 3)}, 6,
        whole ? Value() : heads[1]);
    return {dQ, dK, dV};
  };
  SmallVector<Value> results;
  Type e0 = types[0].getElementType(), e1 = types[1].getElementType(),
       e2 = types[2].getElementType();
  if (rowBlock <= 0) {
    SmallVector<Value> g = gradsOf(sdpa, RowBlock{}, {});
    results = {castToType(rw, loc, sdpa.ungroup(sdpa.finish(g[0], e0, true)),
                          types[0]),
               castToType(rw, loc, sdpa.finish(g[1], e1, true), types[1]),
               castToType(rw, loc, sdpa.finish(g[2], e2, false), types[2])};
  } else {
    // dQ finished per block, dK and dV per head.
    auto blockGrads = [&](Sdpa &s, const RowBlock &blk, ValueRange accs) {
      SmallVector<Value> g = gradsOf(s, blk, accs);
      g[0] = s.finish(g[0], e0, true);
      return g;
    };
    auto emptyOf = [&](SmallVector<OpFoldResult> sizes, Type elem) -> Value {
      return tensor::EmptyOp::create(rw, loc, sizes, elem);
    };
    SmallVector<Value> g = forEachRowBlock(
        sdpa, rowBlock, {emptyOf(rowSizes(sdpa, sdpa.size(sdpa.k, 3)), e0)},
        {emptyOf(tensor::getMixedSizes(rw, loc, sdpa.k), e1),
         emptyOf(tensor::getMixedSizes(rw, loc, sdpa.v), e2)},
        blockGrads, [&](Value acc, unsigned i) {
          return sdpa.finish(acc, i == 0 ? e1 : e2, i == 0);
        });
    results = {castToType(rw, loc, sdpa.ungroup(g[0]), types[0]),
               castToType(rw, loc, g[1], types[1]),
               castToType(rw, loc, g[2], types[2])};
  }
  for (unsigned i = 3; i < op->getNumResults(); ++i)
    results.push_back(Value()); // unused attn_bias gradient (checked above)
  rw.replaceOp(op, results);
  return success();
}

/// Forward and backward of every SDPA variant in kSchemas.
LogicalResult lowerSdpa(CallFunctionOp op, const OpArgs &args,
                        ConversionPatternRewriter &rw, int64_t rowBlock) {
  const SdpaSchema *schema = lookupSchema(op);
  std::string reason;
  FailureOr<SdpaCall> call = readSdpaCall(op, args.getOperands(), reason);
  if (failed(call))
    return rw.notifyMatchFailure(op, reason);
  Value q = call->q, k = call->k, v = call->v;

  Location loc = op.getLoc();
  Sdpa sdpa(rw, loc);
  auto qType = cast<RankedTensorType>(q.getType());
  auto kType = cast<RankedTensorType>(k.getType());
  int64_t h = qType.getDimSize(1), hk = kType.getDimSize(1);
  if (h != hk) {
    if (ShapedType::isDynamic(h) || ShapedType::isDynamic(hk) || hk == 0 ||
        h % hk != 0)
      return rw.notifyMatchFailure(
          op, "query heads must be a static multiple of key/value heads");
    sdpa.groups = h / hk;
  }
  sdpa.causal = call->causal;
  sdpa.mask = call->mask;
  Type elem = qType.getElementType();
  if (!isMathVariant(op) && (elem.isBF16() || elem.isF16()))
    sdpa.reduced = elem;
  // Fewer than 16 keys: all in torch's scalar tail (exact exp).
  int64_t keys = kType.getDimSize(2);
  sdpa.cpuExp = sdpa.reduced && !schema->backward &&
                op.getTarget() == kSchemas[0].target &&
                (ShapedType::isDynamic(keys) || keys >= 16);
  double scale = call->scale;
  if (!std::isnan(scale)) {
    sdpa.scale = createScalarConstant(rw, loc, sdpa.f32, scale);
  } else {
    // torch's default: 1 / sqrt(E).
    Value e = indexToScalar(rw, loc,
                            getValueOrCreateConstantIndexOp(
                                rw, loc, tensor::getMixedSize(rw, loc, q, 3)),
                            sdpa.f32);
    sdpa.scale = math::RsqrtOp::create(rw, loc, e);
  }
  sdpa.q = sdpa.group(q);
  sdpa.k = k;
  sdpa.v = v;

  if (!schema->backward)
    return rewriteForward(op, rw, sdpa, rowBlock);
  return rewriteBackward(op, args, *call, rw, sdpa, rowBlock);
}

} // namespace

FailureOr<SdpaCall> mlir::joint::readSdpaCall(CallFunctionOp op,
                                              ValueRange operands,
                                              std::string &reason) {
  auto refuse = [&](const char *why) -> FailureOr<SdpaCall> {
    reason = why;
    return failure();
  };
  const SdpaSchema *schema = lookupSchema(op);
  if (!schema)
    return refuse("not a scaled dot product attention variant");
  OpArgs args(op, operands);
  SdpaCall call;
  call.backward = schema->backward;
  call.math =
      op.getTarget() == "aten::_scaled_dot_product_attention_math.default";
  auto tensorAt = [&](int index, const char *name, Value &into) {
    FailureOr<RankedTensor> t = args.tensor(index, name);
    if (succeeded(t))
      into = *t;
    return succeeded(t);
  };
  if (!tensorAt(schema->q, kArgNames[1], call.q) ||
      !tensorAt(schema->k, kArgNames[2], call.k) ||
      !tensorAt(schema->v, kArgNames[3], call.v))
    return refuse("query/key/value must be tensors");
  for (Value t : {call.q, call.k, call.v})
    if (cast<RankedTensorType>(t.getType()).getRank() != 4)
      return refuse("expected 4-D [B, H, L, E] operands");
  FailureOr<double> dropout = args.getFloat(schema->dropout, "dropout_p", 0.0);
  if (failed(dropout) || *dropout != 0.0)
    return refuse("dropout_p != 0 needs the RNG and is not supported");
  FailureOr<bool> causal = args.getBool(schema->causal, "is_causal", false);
  if (failed(causal))
    return refuse("is_causal must be a constant");
  call.causal = *causal;
  if (schema->mask >= 0 && !args.isNone(schema->mask, schema->maskName)) {
    if (!tensorAt(schema->mask, schema->maskName, call.mask) ||
        cast<RankedTensorType>(call.mask.getType()).getRank() > 4)
      return refuse("attention mask must be a tensor broadcastable to "
                    "[B, H, L, S]");
  }
  if (call.math && !args.isNone(6, "dropout_mask"))
    return refuse("dropout_mask is not supported");
  FailureOr<double> scale = args.getFloat(schema->scale, "scale", NAN);
  if (failed(scale))
    return refuse("scale must be a constant or None");
  call.scale = *scale;
  if (schema->backward &&
      (!tensorAt(schema->gradOut, kArgNames[0], call.gradOut) ||
       !tensorAt(schema->out, kArgNames[4], call.out) ||
       !tensorAt(schema->lse, kArgNames[5], call.logsumexp)))
    return refuse("grad_out/out/logsumexp must be tensors");
  return call;
}

void mlir::joint::populateAttentionPatterns(const TypeConverter &typeConverter,
                                            RewritePatternSet &patterns,
                                            int64_t rowBlock) {
  LoweringTable table(typeConverter, patterns);
  table.add(llvm::map_to_vector(kSchemas,
                                [](const SdpaSchema &s) { return s.target; }),
            [rowBlock](CallFunctionOp op, CallFunctionOp::Adaptor adaptor,
                       ConversionPatternRewriter &rw) {
              return lowerSdpa(op, OpArgs(op, adaptor.getOperands()), rw,
                               rowBlock);
            });
}

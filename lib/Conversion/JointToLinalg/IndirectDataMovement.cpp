//===- IndirectDataMovement.cpp - Gathers and scatters to linalg -*- C++
//-*-===//
//
// Data movement through index tensors. `aten::embedding` and
// `aten::index.Tensor` (advanced indexing: index tensors broadcast together,
// None entries keep a dim; adjacent index tensors put the broadcast dims in
// place, separated ones put them first, as torch does; negative indices wrap)
// are gathers: one parallel `linalg.generic` over the result that reads the
// source with `tensor.extract`. `aten::index_select` is the same gather on
// one dim. `aten::embedding_dense_backward` is a scatter-add: an `scf.for`
// over the flattened indices in order (deterministic, like torch's CPU
// kernel) adding each gradient row into row `index` of the result, rows
// equal to `padding_idx` skipped; bf16/f16 rows add in f32 and round after
// every addition, as torch's CPU kernel (its add_stub per index), so no f32
// [num_weights, D] accumulator outlives the op.
// Indices are not range-checked at run time (torch raises an error there).
//
//===----------------------------------------------------------------------===//

#include "UtilsOps.h"
#include "joint/Conversion/JointToLinalg/JointToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::joint;
using namespace mlir::joint::lowering;

namespace {

/// Index value `idx` (any integer type) as `index`, wrapped by `size` when
/// negative (torch's negative indexing).
static Value wrapIndex(OpBuilder &b, Location l, Value idx, Value size) {
  Value i = convertScalar(b, l, idx, b.getI64Type());
  i = arith::IndexCastOp::create(b, l, b.getIndexType(), i);
  Value zero = arith::ConstantIndexOp::create(b, l, 0);
  Value neg = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i, zero);
  return arith::SelectOp::create(b, l, neg,
                                 arith::AddIOp::create(b, l, i, size), i);
}

/// aten::embedding.default(weight, indices, padding_idx=-1,
/// scale_grad_by_freq=False, sparse=False): out[i..., d] =
/// weight[indices[i...], d].
static LogicalResult lowerEmbedding(CallFunctionOp op, const OpArgs &args,
                                    ConversionPatternRewriter &rw) {
  FailureOr<BinaryTensorArgs> in =
      readBinaryTensorArgs(op, args, rw, "weight", "indices");
  if (failed(in))
    return failure();
  auto [weight, indices, resultType] = *in;
  RankedTensorType wType = weight.getType();
  RankedTensorType iType = indices.getType();
  if (wType.getRank() != 2 || !isa<IntegerType>(iType.getElementType()))
    return rw.notifyMatchFailure(op, "expected 2-D weight, integer indices");
  Location loc = op.getLoc();
  unsigned rank = iType.getRank() + 1;
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rw, loc, indices);
  sizes.push_back(tensor::getMixedSize(rw, loc, weight, 1));
  Value init = tensor::EmptyOp::create(rw, loc, sizes, wType.getElementType());
  MLIRContext *ctx = rw.getContext();
  SmallVector<bool> dropLast(rank, false);
  dropLast.back() = true;
  SmallVector<AffineMap> maps{getProjectionMap(ctx, rank, dropLast),
                              rw.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  Value w = weight;
  Value result =
      linalg::GenericOp::create(
          rw, loc, init.getType(), ValueRange{indices}, ValueRange{init}, maps,
          iters,
          [&](OpBuilder &b, Location l, ValueRange a) {
            Value row = arith::IndexCastOp::create(
                b, l, b.getIndexType(),
                convertScalar(b, l, a[0], b.getI64Type()));
            Value col = linalg::IndexOp::create(b, l, rank - 1);
            linalg::YieldOp::create(
                b, l,
                tensor::ExtractOp::create(b, l, w, ValueRange{row, col})
                    .getResult());
          })
          .getResult(0);
  return replaceWithResult(rw, op, result, resultType);
}

/// aten::embedding_dense_backward.default(grad_output, indices,
/// SymInt num_weights, SymInt padding_idx, bool scale_grad_by_freq).
static LogicalResult lowerEmbeddingBackward(CallFunctionOp op,
                                            const OpArgs &args,
                                            ConversionPatternRewriter &rw) {
  FailureOr<RankedTensor> grad = args.tensor(0, "grad_output");
  FailureOr<RankedTensor> indices = args.tensor(1, "indices");
  FailureOr<int64_t> numWeights = args.getInt(2, "num_weights");
  FailureOr<int64_t> paddingIdx = args.getInt(3, "padding_idx");
  FailureOr<bool> byFreq = args.getBool(4, "scale_grad_by_freq");
  RankedTensorType resultType = getResultTensorType(op, 0);
  if (failed(grad) || failed(indices) || !resultType)
    return rw.notifyMatchFailure(op, "expected (grad, indices) tensors");
  if (failed(numWeights) || failed(paddingIdx) || failed(byFreq))
    return rw.notifyMatchFailure(
        op, "num_weights/padding_idx/scale_grad_by_freq must be constants");
  if (*byFreq)
    return rw.notifyMatchFailure(op, "scale_grad_by_freq is not supported");
  RankedTensorType gType = grad->getType();
  RankedTensorType iType = indices->getType();
  if (gType.getRank() != iType.getRank() + 1 ||
      !isa<IntegerType>(iType.getElementType()))
    return rw.notifyMatchFailure(op, "grad must be indices' shape + [D]");
  Type resultElem = resultType.getElementType();
  Type acc = getAccumulatorType(resultElem);
  if (!isa<FloatType>(acc))
    return rw.notifyMatchFailure(op, "non-float gradient dtype");

  Location loc = op.getLoc();
  // Flatten indices to [N] and grad to [N, D].
  unsigned iRank = iType.getRank();
  SmallVector<ReassociationIndices> flatI(1), flatG(1);
  for (unsigned i = 0; i < iRank; ++i) {
    flatI[0].push_back(i);
    flatG[0].push_back(i);
  }
  Value idx = *indices, g = *grad;
  if (iRank != 1) {
    if (iRank == 0) {
      idx = tensor::ExpandShapeOp::create(
          rw, loc, RankedTensorType::get({1}, iType.getElementType()), idx,
          ArrayRef<ReassociationIndices>{},
          ArrayRef<OpFoldResult>{rw.getIndexAttr(1)});
      g = tensor::ExpandShapeOp::create(
          rw, loc,
          RankedTensorType::get({1, gType.getDimSize(0)},
                                gType.getElementType()),
          g, ArrayRef<ReassociationIndices>{{0, 1}},
          ArrayRef<OpFoldResult>{rw.getIndexAttr(1),
                                 tensor::getMixedSize(rw, loc, g, 0)});
    } else {
      idx = tensor::CollapseShapeOp::create(rw, loc, idx, flatI);
      flatG.push_back({iRank});
      g = tensor::CollapseShapeOp::create(rw, loc, g, flatG);
    }
  }
  OpFoldResult dSize = tensor::getMixedSize(rw, loc, g, 1);
  Value out = createFilledTensor(rw, loc, {rw.getIndexAttr(*numWeights), dSize},
                                 resultElem, 0.0);
  Value lb = arith::ConstantIndexOp::create(rw, loc, 0);
  Value ub = getValueOrCreateConstantIndexOp(
      rw, loc, tensor::getMixedSize(rw, loc, idx, 0));
  Value step = arith::ConstantIndexOp::create(rw, loc, 1);
  Type idxElem = iType.getElementType();
  int64_t pad = *paddingIdx;
  auto rowType = RankedTensorType::get(
      {cast<RankedTensorType>(g.getType()).getDimSize(1)}, resultElem);
  auto gRowType =
      RankedTensorType::get(rowType.getShape(), gType.getElementType());
  auto loop = scf::ForOp::create(
      rw, loc, lb, ub, step, ValueRange{out},
      [&](OpBuilder &b, Location l, Value n, ValueRange iter) {
        Value i = tensor::ExtractOp::create(b, l, idx, ValueRange{n});
        Value keep = arith::CmpIOp::create(
            b, l, arith::CmpIPredicate::ne, i,
            createScalarConstant(b, l, idxElem, static_cast<double>(pad)));
        auto ifOp = scf::IfOp::create(
            b, l, keep,
            [&](OpBuilder &tb, Location tl) {
              Value row = arith::IndexCastOp::create(
                  tb, tl, tb.getIndexType(),
                  convertScalar(tb, tl, i, tb.getI64Type()));
              SmallVector<OpFoldResult> strides(2, tb.getIndexAttr(1));
              SmallVector<OpFoldResult> gOff{n, tb.getIndexAttr(0)};
              SmallVector<OpFoldResult> oOff{row, tb.getIndexAttr(0)};
              SmallVector<OpFoldResult> rowSizes{tb.getIndexAttr(1), dSize};
              Value gRow = tensor::ExtractSliceOp::create(
                  tb, tl, gRowType, g, gOff, rowSizes, strides);
              Value oRow = tensor::ExtractSliceOp::create(
                  tb, tl, rowType, iter[0], oOff, rowSizes, strides);
              AffineMap id = tb.getMultiDimIdentityMap(1);
              Value sum =
                  linalg::GenericOp::create(
                      tb, tl, rowType, ValueRange{gRow}, ValueRange{oRow},
                      ArrayRef<AffineMap>{id, id},
                      {utils::IteratorType::parallel},
                      [&](OpBuilder &nb, Location nl, ValueRange a) {
                        // Sequenced: argument order is unspecified.
                        Value row = convertScalar(nb, nl, a[1], acc);
                        Value add = convertScalar(nb, nl, a[0], acc);
                        Value sum = arith::AddFOp::create(nb, nl, row, add);
                        linalg::YieldOp::create(
                            nb, nl, convertScalar(nb, nl, sum, resultElem));
                      })
                      .getResult(0);
              Value updated = tensor::InsertSliceOp::create(
                  tb, tl, sum, iter[0], oOff, rowSizes, strides);
              scf::YieldOp::create(tb, tl, updated);
            },
            [&](OpBuilder &eb, Location el) {
              scf::YieldOp::create(eb, el, iter[0]);
            });
        scf::YieldOp::create(b, l, ifOp.getResults());
      });
  rw.replaceOp(op, finishResult(rw, loc, loop.getResult(0), resultType));
  return success();
}

/// aten::index.Tensor(self, Tensor?[] indices) (advanced indexing) and
/// aten::index_select.default(self, int dim, Tensor index).
static LogicalResult lowerIndex(CallFunctionOp op, const OpArgs &args,
                                ConversionPatternRewriter &rw) {
  FailureOr<RankedTensor> self = args.tensor(0, "self");
  RankedTensorType resultType = getResultTensorType(op, 0);
  if (failed(self) || !resultType)
    return rw.notifyMatchFailure(op, "expected a tensor self");
  RankedTensorType selfType = self->getType();
  int64_t selfRank = selfType.getRank();

  // One entry per indexed dim of self: the index tensor or null (None).
  SmallVector<Value> indexOf(selfRank);
  if (op.getTarget() == "aten::index_select.default") {
    FailureOr<int64_t> dimArg = args.getInt(1, "dim");
    FailureOr<RankedTensor> index = args.tensor(2, "index");
    if (failed(dimArg) || failed(index))
      return rw.notifyMatchFailure(op, "expected (self, int dim, index)");
    FailureOr<int64_t> dim = normalizeDim(*dimArg, selfRank);
    if (failed(dim) || selfRank == 0 || index->getType().getRank() > 1)
      return rw.notifyMatchFailure(op, "bad dim or index rank");
    indexOf[*dim] = *index;
  } else {
    auto list = dyn_cast_or_null<ArrayAttr>(args.get(1, "indices"));
    if (!list || static_cast<int64_t>(list.size()) > selfRank)
      return rw.notifyMatchFailure(op, "expected a list of indices");
    for (auto [i, entry] : llvm::enumerate(list)) {
      if (isa<UnitAttr>(entry))
        continue;
      auto ref = dyn_cast<OperandRefAttr>(entry);
      if (!ref || ref.getIndex() >= args.getOperands().size())
        return rw.notifyMatchFailure(op, "index entry is not a tensor");
      Value v = args.getOperands()[ref.getIndex()];
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type || !isa<IntegerType>(type.getElementType()) ||
          type.getElementType().isInteger(1))
        return rw.notifyMatchFailure(
            op, "boolean or non-integer index tensors are not supported");
      indexOf[i] = v;
    }
  }

  // Broadcast shape of the index tensors (static sizes only where they
  // differ; dynamic sizes are taken as equal).
  SmallVector<unsigned> indexed;
  int64_t bRank = 0;
  for (auto [i, v] : llvm::enumerate(indexOf))
    if (v) {
      indexed.push_back(i);
      bRank = std::max<int64_t>(bRank,
                                cast<RankedTensorType>(v.getType()).getRank());
    }
  if (indexed.empty())
    return rw.notifyMatchFailure(op, "no index tensor");
  bool adjacent = indexed.back() - indexed.front() + 1 == indexed.size();
  Location loc = op.getLoc();
  SmallVector<OpFoldResult> bSizes(bRank, rw.getIndexAttr(1));
  for (Value v : indexOf) {
    if (!v)
      continue;
    auto type = cast<RankedTensorType>(v.getType());
    int64_t off = bRank - type.getRank();
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (type.getDimSize(d) == 1)
        continue;
      bSizes[off + d] = tensor::getMixedSize(rw, loc, v, d);
    }
  }
  // Result dims: [before..., B..., after...] when adjacent, else
  // [B..., non-indexed dims...].
  unsigned firstIdx = adjacent ? indexed.front() : 0;
  SmallVector<OpFoldResult> outSizes;
  SmallVector<int64_t> loopOfSelfDim(selfRank, -1);
  unsigned loop = 0;
  for (int64_t d = 0; d < selfRank && d < firstIdx; ++d) {
    if (indexOf[d])
      continue;
    outSizes.push_back(tensor::getMixedSize(rw, loc, *self, d));
    loopOfSelfDim[d] = loop++;
  }
  unsigned bStart = loop;
  outSizes.append(bSizes.begin(), bSizes.end());
  loop += bRank;
  for (int64_t d = firstIdx; d < selfRank; ++d) {
    if (indexOf[d])
      continue;
    outSizes.push_back(tensor::getMixedSize(rw, loc, *self, d));
    loopOfSelfDim[d] = loop++;
  }
  unsigned numLoops = loop;
  MLIRContext *ctx = rw.getContext();
  SmallVector<unsigned> bLoops;
  for (int64_t i = 0; i < bRank; ++i)
    bLoops.push_back(bStart + i);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (unsigned d : indexed) {
    inputs.push_back(indexOf[d]);
    maps.push_back(getBroadcastMap(
        ctx, cast<RankedTensorType>(indexOf[d].getType()).getShape(), numLoops,
        bLoops));
  }
  maps.push_back(rw.getMultiDimIdentityMap(numLoops));
  Value init =
      tensor::EmptyOp::create(rw, loc, outSizes, selfType.getElementType());
  SmallVector<utils::IteratorType> iters(numLoops,
                                         utils::IteratorType::parallel);
  Value src = *self;
  Value result =
      linalg::GenericOp::create(
          rw, loc, init.getType(), inputs, ValueRange{init}, maps, iters,
          [&](OpBuilder &b, Location l, ValueRange a) {
            SmallVector<Value> coords(selfRank);
            for (int64_t d = 0; d < selfRank; ++d)
              if (loopOfSelfDim[d] >= 0)
                coords[d] = linalg::IndexOp::create(b, l, loopOfSelfDim[d]);
            for (auto [k, d] : llvm::enumerate(indexed)) {
              Value size = tensor::DimOp::create(b, l, src, d);
              coords[d] = wrapIndex(b, l, a[k], size);
            }
            linalg::YieldOp::create(
                b, l, tensor::ExtractOp::create(b, l, src, coords).getResult());
          })
          .getResult(0);
  return replaceWithResult(rw, op, result, resultType);
}

} // namespace

void mlir::joint::populateIndirectDataMovementPatterns(
    const TypeConverter &typeConverter, RewritePatternSet &patterns) {
  LoweringTable table(typeConverter, patterns);
  table.add({"aten::embedding.default"}, lowerEmbedding);
  table.add({"aten::embedding_dense_backward.default"}, lowerEmbeddingBackward);
  table.add({"aten::index.Tensor", "aten::index_select.default"}, lowerIndex);
}

//===- IndirectDataMovement.cpp - Gathers and scatters --------------------===//
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
// `aten::gather` is a gather over the index. `aten::index_put`,
// `aten::scatter(.src|.value|_add)`, `aten::scatter_reduce.two` and
// `aten::index_add` are row-major `scf.for` nests carrying the result,
// combining repeated indices in order as torch's serial CPU kernels do.
// `aten::topk` ranks each element in its row and writes those of rank < k
// at their rank; `aten::sort` ranks the same way and reads, for each output
// position, the element of that rank.
// Indices are not range-checked at run time (torch raises an error there).
//
//===----------------------------------------------------------------------===//

#include "UtilsOps.h"
#include "joint/Conversion/JointToLinalg/JointToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>

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

/// Advanced indexing `self[indices]` (aten::index.Tensor's rule): the index
/// tensors broadcast to B; the result is [before..., B..., after...] when the
/// indexed dims are adjacent, else [B..., non-indexed dims...].
struct AdvancedIndex {
  /// Per dim of self: its index tensor, or null (a kept dim).
  SmallVector<Value> indexOf;
  /// The indexed dims of self, in order.
  SmallVector<unsigned> indexed;
  /// Sizes of the indexed result, and the loops of B in it.
  SmallVector<OpFoldResult> outSizes;
  SmallVector<unsigned> bLoops;
  /// Per dim of self: the result loop that walks it, or -1 (indexed).
  SmallVector<int64_t> loopOfSelfDim;

  unsigned numLoops() const { return outSizes.size(); }

  /// The coordinate in `self` of the result element at `ivs`, given the
  /// index values read there (one per indexed dim, any integer type).
  SmallVector<Value> selfCoords(OpBuilder &b, Location l, Value self,
                                ValueRange ivs, ValueRange indexValues) const {
    SmallVector<Value> coords(indexOf.size());
    for (auto [d, loop] : llvm::enumerate(loopOfSelfDim))
      if (loop >= 0)
        coords[d] = ivs[loop];
    for (auto [k, d] : llvm::enumerate(indexed)) {
      Value size = tensor::DimOp::create(b, l, self, d);
      coords[d] = wrapIndex(b, l, indexValues[k], size);
    }
    return coords;
  }

  /// Reads index tensor `k` at result position `ivs` (broadcast: size-1
  /// dims read 0).
  Value readIndex(OpBuilder &b, Location l, unsigned k, ValueRange ivs) const {
    Value index = indexOf[indexed[k]];
    auto type = cast<RankedTensorType>(index.getType());
    int64_t off = bLoops.size() - type.getRank();
    SmallVector<Value> at;
    for (int64_t d = 0; d < type.getRank(); ++d)
      at.push_back(type.getDimSize(d) == 1
                       ? arith::ConstantIndexOp::create(b, l, 0).getResult()
                       : ivs[bLoops[off + d]]);
    return tensor::ExtractOp::create(b, l, index, at);
  }
};

/// Plans `self[indices]` for the `Tensor?[]` argument `listArg`; failure
/// with the reason.
static FailureOr<AdvancedIndex> planAdvancedIndex(CallFunctionOp op,
                                                  const OpArgs &args,
                                                  ConversionPatternRewriter &rw,
                                                  RankedTensor self,
                                                  unsigned listArg) {
  int64_t selfRank = self.getType().getRank();
  AdvancedIndex plan;
  plan.indexOf.assign(selfRank, Value());
  if (op.getTarget() == "aten::index_select.default") {
    FailureOr<int64_t> dimArg = args.getInt(1, "dim");
    FailureOr<RankedTensor> index = args.tensor(2, "index");
    if (failed(dimArg) || failed(index))
      return rw.notifyMatchFailure(op, "expected (self, int dim, index)");
    FailureOr<int64_t> dim = normalizeDim(*dimArg, selfRank);
    if (failed(dim) || selfRank == 0 || index->getType().getRank() > 1)
      return rw.notifyMatchFailure(op, "bad dim or index rank");
    plan.indexOf[*dim] = *index;
  } else {
    auto list = dyn_cast_or_null<ArrayAttr>(args.get(listArg, "indices"));
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
      plan.indexOf[i] = v;
    }
  }

  // Broadcast shape of the index tensors (static sizes only where they
  // differ; dynamic sizes are taken as equal).
  int64_t bRank = 0;
  for (auto [i, v] : llvm::enumerate(plan.indexOf))
    if (v) {
      plan.indexed.push_back(i);
      bRank = std::max<int64_t>(bRank,
                                cast<RankedTensorType>(v.getType()).getRank());
    }
  if (plan.indexed.empty())
    return rw.notifyMatchFailure(op, "no index tensor");
  ArrayRef<unsigned> indexed = plan.indexed;
  bool adjacent = indexed.back() - indexed.front() + 1 == indexed.size();
  Location loc = op.getLoc();
  SmallVector<OpFoldResult> bSizes(bRank, rw.getIndexAttr(1));
  for (Value v : plan.indexOf) {
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
  unsigned firstIdx = adjacent ? indexed.front() : 0;
  plan.loopOfSelfDim.assign(selfRank, -1);
  unsigned loop = 0;
  for (int64_t d = 0; d < selfRank && d < firstIdx; ++d) {
    if (plan.indexOf[d])
      continue;
    plan.outSizes.push_back(tensor::getMixedSize(rw, loc, self, d));
    plan.loopOfSelfDim[d] = loop++;
  }
  for (int64_t i = 0; i < bRank; ++i)
    plan.bLoops.push_back(loop + i);
  plan.outSizes.append(bSizes.begin(), bSizes.end());
  loop += bRank;
  for (int64_t d = firstIdx; d < selfRank; ++d) {
    if (plan.indexOf[d])
      continue;
    plan.outSizes.push_back(tensor::getMixedSize(rw, loc, self, d));
    plan.loopOfSelfDim[d] = loop++;
  }
  return plan;
}

/// aten::index.Tensor(self, Tensor?[] indices) (advanced indexing) and
/// aten::index_select.default(self, int dim, Tensor index): one parallel
/// gather over the result.
static LogicalResult lowerIndex(CallFunctionOp op, const OpArgs &args,
                                ConversionPatternRewriter &rw) {
  FailureOr<RankedTensor> self = args.tensor(0, "self");
  RankedTensorType resultType = getResultTensorType(op, 0);
  if (failed(self) || !resultType)
    return rw.notifyMatchFailure(op, "expected a tensor self");
  FailureOr<AdvancedIndex> plan = planAdvancedIndex(op, args, rw, *self, 1);
  if (failed(plan))
    return failure();
  Location loc = op.getLoc();
  unsigned numLoops = plan->numLoops();
  MLIRContext *ctx = rw.getContext();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (unsigned d : plan->indexed) {
    inputs.push_back(plan->indexOf[d]);
    maps.push_back(getBroadcastMap(
        ctx, cast<RankedTensorType>(plan->indexOf[d].getType()).getShape(),
        numLoops, plan->bLoops));
  }
  maps.push_back(rw.getMultiDimIdentityMap(numLoops));
  Value init = tensor::EmptyOp::create(rw, loc, plan->outSizes,
                                       self->getType().getElementType());
  SmallVector<utils::IteratorType> iters(numLoops,
                                         utils::IteratorType::parallel);
  Value src = *self;
  Value result =
      linalg::GenericOp::create(
          rw, loc, init.getType(), inputs, ValueRange{init}, maps, iters,
          [&](OpBuilder &b, Location l, ValueRange a) {
            // Only the loops of kept dims are read.
            SmallVector<Value> ivs(numLoops);
            for (int64_t loop : plan->loopOfSelfDim)
              if (loop >= 0)
                ivs[loop] = linalg::IndexOp::create(b, l, loop);
            SmallVector<Value> coords = plan->selfCoords(
                b, l, src, ivs, a.take_front(plan->indexed.size()));
            linalg::YieldOp::create(
                b, l, tensor::ExtractOp::create(b, l, src, coords).getResult());
          })
          .getResult(0);
  return replaceWithResult(rw, op, result, resultType);
}

/// A row-major loop nest of `scf.for`s over `sizes` carrying one tensor
/// (`init`): the order torch's serial CPU scatter kernels visit elements in,
/// so accumulations into one element happen in torch's order.
static Value buildSerialNest(
    OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes, Value init,
    function_ref<Value(OpBuilder &, Location, ValueRange, Value)> body) {
  SmallVector<Value> ivs;
  std::function<Value(OpBuilder &, Location, unsigned, Value)> level =
      [&](OpBuilder &nb, Location l, unsigned d, Value acc) -> Value {
    if (d == sizes.size())
      return body(nb, l, ivs, acc);
    Value lb = arith::ConstantIndexOp::create(nb, l, 0);
    Value ub = getValueOrCreateConstantIndexOp(nb, l, sizes[d]);
    Value step = arith::ConstantIndexOp::create(nb, l, 1);
    auto loop = scf::ForOp::create(
        nb, l, lb, ub, step, ValueRange{acc},
        [&](OpBuilder &fb, Location fl, Value iv, ValueRange iter) {
          ivs.push_back(iv);
          Value next = level(fb, fl, d + 1, iter[0]);
          ivs.pop_back();
          scf::YieldOp::create(fb, fl, next);
        });
    return loop.getResult(0);
  };
  return level(b, loc, 0, init);
}

/// `old + value` in the accumulator type of `elem`, rounded back once (one
/// torch CPU add: bf16/f16 compute in f32); integers add exactly.
static Value addElement(OpBuilder &b, Location l, Value old, Value value,
                        Type elem) {
  Type acc = getAccumulatorType(elem);
  Value x = convertScalar(b, l, old, acc), y = convertScalar(b, l, value, acc);
  Value sum = isa<FloatType>(acc)
                  ? arith::AddFOp::create(b, l, x, y).getResult()
                  : arith::AddIOp::create(b, l, x, y).getResult();
  return convertScalar(b, l, sum, elem);
}

/// Writes `v` at `coords` of `out`, or adds it to the element there
/// (addElement) when `accumulate`; returns the updated tensor.
static Value storeElement(OpBuilder &b, Location l, Value out,
                          ValueRange coords, Value v, bool accumulate,
                          Type elem) {
  if (accumulate)
    v = addElement(b, l, tensor::ExtractOp::create(b, l, out, coords), v, elem);
  return tensor::InsertOp::create(b, l, v, out, coords);
}

/// The `(self, int dim, index)` head of gather, scatter and index_add, with
/// dim normalized against self's rank (>= 1).
struct DimIndexArgs {
  RankedTensor self, index;
  int64_t dim;
  RankedTensorType resultType;
};

static FailureOr<DimIndexArgs> readDimIndexArgs(CallFunctionOp op,
                                                const OpArgs &args,
                                                ConversionPatternRewriter &rw) {
  FailureOr<RankedTensor> self = args.tensor(0, "self");
  FailureOr<int64_t> dimArg = args.getInt(1, "dim");
  FailureOr<RankedTensor> index = args.tensor(2, "index");
  RankedTensorType resultType = getResultTensorType(op, 0);
  if (failed(self) || failed(dimArg) || failed(index) || !resultType)
    return rw.notifyMatchFailure(op, "expected (self, int dim, index)");
  int64_t rank = self->getType().getRank();
  FailureOr<int64_t> dim = normalizeDim(*dimArg, std::max<int64_t>(rank, 1));
  if (failed(dim) || rank == 0)
    return rw.notifyMatchFailure(op, "bad dim for self's rank");
  return DimIndexArgs{*self, *index, *dim, resultType};
}

/// aten::index_put.default(self, Tensor?[] indices, values, accumulate):
/// `self[indices] = values` (or `+=` with accumulate, duplicates adding in
/// order, as torch's serial CPU kernel); values broadcast to the indexed
/// shape.
static LogicalResult lowerIndexPut(CallFunctionOp op, const OpArgs &args,
                                   ConversionPatternRewriter &rw) {
  FailureOr<RankedTensor> self = args.tensor(0, "self");
  FailureOr<RankedTensor> values = args.tensor(2, "values");
  FailureOr<bool> accumulate = args.getBool(3, "accumulate", false);
  RankedTensorType resultType = getResultTensorType(op, 0);
  if (failed(self) || failed(values) || !resultType)
    return rw.notifyMatchFailure(op, "expected (self, indices, values)");
  if (failed(accumulate))
    return rw.notifyMatchFailure(op, "accumulate must be a constant bool");
  FailureOr<AdvancedIndex> plan = planAdvancedIndex(op, args, rw, *self, 1);
  if (failed(plan))
    return failure();
  RankedTensorType vType = values->getType();
  int64_t vOff = static_cast<int64_t>(plan->numLoops()) - vType.getRank();
  if (vOff < 0)
    return rw.notifyMatchFailure(op, "values have more dims than the index");
  Type elem = self->getType().getElementType();
  Value src = *self, vals = *values;
  bool acc = *accumulate;
  Value result = buildSerialNest(
      rw, op.getLoc(), plan->outSizes, src,
      [&](OpBuilder &b, Location l, ValueRange ivs, Value out) -> Value {
        SmallVector<Value> idx;
        for (unsigned k = 0; k < plan->indexed.size(); ++k)
          idx.push_back(plan->readIndex(b, l, k, ivs));
        SmallVector<Value> coords = plan->selfCoords(b, l, src, ivs, idx);
        SmallVector<Value> at;
        for (int64_t d = 0; d < vType.getRank(); ++d)
          at.push_back(vType.getDimSize(d) == 1
                           ? arith::ConstantIndexOp::create(b, l, 0).getResult()
                           : ivs[vOff + d]);
        Value v = convertScalar(b, l, tensor::ExtractOp::create(b, l, vals, at),
                                elem);
        return storeElement(b, l, out, coords, v, acc, elem);
      });
  return replaceWithResult(rw, op, result, resultType);
}

/// aten::gather.default(self, dim, index, sparse_grad=False): out has
/// index's shape, out[i] = self[i with dim replaced by index[i]].
static LogicalResult lowerGather(CallFunctionOp op, const OpArgs &args,
                                 ConversionPatternRewriter &rw) {
  FailureOr<DimIndexArgs> in = readDimIndexArgs(op, args, rw);
  if (failed(in))
    return failure();
  RankedTensor self = in->self, index = in->index;
  int64_t d = in->dim;
  RankedTensorType resultType = in->resultType;
  int64_t rank = self.getType().getRank();
  if (index.getType().getRank() != rank)
    return rw.notifyMatchFailure(op, "index must have self's rank");
  Location loc = op.getLoc();
  Value init =
      tensor::EmptyOp::create(rw, loc, tensor::getMixedSizes(rw, loc, index),
                              self.getType().getElementType());
  AffineMap id = rw.getMultiDimIdentityMap(rank);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  Value src = self;
  Value result =
      linalg::GenericOp::create(
          rw, loc, init.getType(), ValueRange{index}, ValueRange{init},
          ArrayRef<AffineMap>{id, id}, iters,
          [&](OpBuilder &b, Location l, ValueRange a) {
            SmallVector<Value> coords;
            for (int64_t i = 0; i < rank; ++i)
              coords.push_back(linalg::IndexOp::create(b, l, i));
            coords[d] =
                wrapIndex(b, l, a[0], tensor::DimOp::create(b, l, src, d));
            linalg::YieldOp::create(
                b, l, tensor::ExtractOp::create(b, l, src, coords).getResult());
          })
          .getResult(0);
  return replaceWithResult(rw, op, result, resultType);
}

/// aten::scatter.src / scatter.value / scatter_add.default (self, dim,
/// index, src|value): a copy of self where, for every element i of index,
/// out[i with dim replaced by index[i]] = src[i] (value), or += src[i]
/// (scatter_add, in order, as torch's serial CPU kernel).
static LogicalResult lowerScatter(CallFunctionOp op, const OpArgs &args,
                                  ConversionPatternRewriter &rw) {
  FailureOr<DimIndexArgs> in = readDimIndexArgs(op, args, rw);
  if (failed(in))
    return failure();
  RankedTensor base = in->self, idx = in->index;
  int64_t d = in->dim;
  RankedTensorType resultType = in->resultType;
  StringRef target = op.getTarget();
  bool add = target == "aten::scatter_add.default";
  Value src;
  double value = 0;
  if (target == "aten::scatter.value") {
    FailureOr<double> v = args.getFloat(3, "value");
    if (failed(v))
      return rw.notifyMatchFailure(op, "value must be a constant number");
    value = *v;
  } else {
    FailureOr<RankedTensor> s = args.tensor(3, "src");
    if (failed(s))
      return rw.notifyMatchFailure(op, "expected a tensor src");
    src = *s;
  }
  if (idx.getType().getRank() != base.getType().getRank())
    return rw.notifyMatchFailure(op, "index must have self's rank");
  Location loc = op.getLoc();
  Type elem = base.getType().getElementType();
  Value result = buildSerialNest(
      rw, loc, tensor::getMixedSizes(rw, loc, idx), base,
      [&](OpBuilder &b, Location l, ValueRange ivs, Value out) -> Value {
        SmallVector<Value> coords(ivs.begin(), ivs.end());
        coords[d] = wrapIndex(b, l, tensor::ExtractOp::create(b, l, idx, ivs),
                              tensor::DimOp::create(b, l, base, d));
        Value v =
            src ? convertScalar(b, l, tensor::ExtractOp::create(b, l, src, ivs),
                                elem)
                : createScalarConstant(b, l, elem, value);
        return storeElement(b, l, out, coords, v, add, elem);
      });
  return replaceWithResult(rw, op, result, resultType);
}

/// aten::scatter_reduce.two(self, dim, index, src, reduce, *,
/// include_self=True): torch's scatter_reduce_two CPU path. out = self;
/// without include_self the indexed positions first get the reduction's
/// identity (torch's scatter_reduce_exclude_self_helper: 0, 1, -inf, +inf);
/// then a row-major `scf.for` nest over index combines src[i] into
/// out[i with dim replaced by index[i]] in order (sum/mean add, prod
/// multiplies, amax/amin propagate NaN; signed integers in i64, stored
/// back wrapped, mean a floor division), bf16/f16 in f32 rounded after each
/// step as torch's serial kernel; mean then divides by count = (1 with
/// include_self) + #hits, positions without hits divided by 1 (left as is).
static LogicalResult lowerScatterReduce(CallFunctionOp op, const OpArgs &args,
                                        ConversionPatternRewriter &rw) {
  FailureOr<DimIndexArgs> in = readDimIndexArgs(op, args, rw);
  if (failed(in))
    return failure();
  RankedTensor base = in->self, idx = in->index;
  int64_t d = in->dim;
  RankedTensorType resultType = in->resultType;
  FailureOr<RankedTensor> srcArg = args.tensor(3, "src");
  FailureOr<StringRef> reduceArg =
      getConstantArg<StringRef>(op, rw, {4, "reduce"});
  FailureOr<bool> includeSelf = args.getBool(5, "include_self", true);
  if (failed(srcArg) || failed(reduceArg) || failed(includeSelf))
    return rw.notifyMatchFailure(
        op, "expected a tensor src, a constant reduce and include_self");
  StringRef reduce = *reduceArg;
  if (reduce != "sum" && reduce != "prod" && reduce != "mean" &&
      reduce != "amax" && reduce != "amin")
    return rw.notifyMatchFailure(op, "unknown reduce '" + reduce + "'");
  Type elem = base.getType().getElementType();
  bool isFloat = isa<FloatType>(elem);
  if (!isFloat && (!elem.isSignlessInteger() || elem.isInteger(1)))
    return rw.notifyMatchFailure(
        op, "expects float or signed integer tensors (not bool)");
  if (idx.getType().getRank() != base.getType().getRank() ||
      srcArg->getType().getRank() != base.getType().getRank())
    return rw.notifyMatchFailure(op, "index and src must have self's rank");
  Location loc = op.getLoc();
  Type acc = getAccumulatorType(elem);
  Value src = *srcArg;
  SmallVector<OpFoldResult> idxSizes = tensor::getMixedSizes(rw, loc, idx);
  auto targetCoords = [&](OpBuilder &b, Location l, ValueRange ivs) {
    SmallVector<Value> coords(ivs.begin(), ivs.end());
    coords[d] = wrapIndex(b, l, tensor::ExtractOp::create(b, l, idx, ivs),
                          tensor::DimOp::create(b, l, base, d));
    return coords;
  };
  Value out = base;
  if (!*includeSelf) {
    // The reduction's identity; for integers the type's lowest and highest
    // values stand for -inf and +inf (std::numeric_limits in torch).
    auto identity = [&](OpBuilder &b, Location l) -> Value {
      if (isFloat || (reduce != "amax" && reduce != "amin"))
        return createScalarConstant(b, l, elem,
                                    reduce == "prod"   ? 1.0
                                    : reduce == "amax" ? -INFINITY
                                    : reduce == "amin" ? INFINITY
                                                       : 0.0);
      unsigned width = elem.getIntOrFloatBitWidth();
      return arith::ConstantOp::create(
          b, l,
          b.getIntegerAttr(elem, reduce == "amax"
                                     ? APInt::getSignedMinValue(width)
                                     : APInt::getSignedMaxValue(width)));
    };
    out = buildSerialNest(
        rw, loc, idxSizes, out,
        [&](OpBuilder &b, Location l, ValueRange ivs, Value o) -> Value {
          return tensor::InsertOp::create(b, l, identity(b, l), o,
                                          targetCoords(b, l, ivs));
        });
  }
  out = buildSerialNest(
      rw, loc, idxSizes, out,
      [&](OpBuilder &b, Location l, ValueRange ivs, Value o) -> Value {
        SmallVector<Value> coords = targetCoords(b, l, ivs);
        Value old = convertScalar(
            b, l, tensor::ExtractOp::create(b, l, o, coords), acc);
        Value v =
            convertScalar(b, l, tensor::ExtractOp::create(b, l, src, ivs), acc);
        Value r;
        if (!isFloat) { // in i64; the store wraps as torch's int add
          if (reduce == "prod")
            r = arith::MulIOp::create(b, l, old, v);
          else if (reduce == "amax")
            r = arith::MaxSIOp::create(b, l, old, v);
          else if (reduce == "amin")
            r = arith::MinSIOp::create(b, l, old, v);
          else
            r = arith::AddIOp::create(b, l, old, v);
        } else if (reduce == "prod")
          r = arith::MulFOp::create(b, l, old, v);
        else if (reduce == "amax")
          r = arith::MaximumFOp::create(b, l, old, v);
        else if (reduce == "amin")
          r = arith::MinimumFOp::create(b, l, old, v);
        else
          r = arith::AddFOp::create(b, l, old, v);
        return tensor::InsertOp::create(b, l, convertScalar(b, l, r, elem), o,
                                        coords);
      });
  if (reduce == "mean") {
    // count in self's dtype, as torch's ones_like/zeros_like + scatter_add_.
    Value count =
        createFilledTensor(rw, loc, tensor::getMixedSizes(rw, loc, base), elem,
                           *includeSelf ? 1.0 : 0.0);
    count = buildSerialNest(
        rw, loc, idxSizes, count,
        [&](OpBuilder &b, Location l, ValueRange ivs, Value c) -> Value {
          return storeElement(b, l, c, targetCoords(b, l, ivs),
                              createScalarConstant(b, l, elem, 1.0), true,
                              elem);
        });
    int64_t rank = base.getType().getRank();
    AffineMap id = rw.getMultiDimIdentityMap(rank);
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    out = linalg::GenericOp::create(
              rw, loc, out.getType(), ValueRange{count}, ValueRange{out},
              ArrayRef<AffineMap>{id, id}, iters,
              [&](OpBuilder &b, Location l, ValueRange a) {
                Value c = convertScalar(b, l, a[0], acc);
                Value zero = createScalarConstant(b, l, acc, 0.0);
                Value none = isFloat
                                 ? arith::CmpFOp::create(
                                       b, l, arith::CmpFPredicate::OEQ, c, zero)
                                       .getResult()
                                 : arith::CmpIOp::create(
                                       b, l, arith::CmpIPredicate::eq, c, zero)
                                       .getResult();
                c = arith::SelectOp::create(
                    b, l, none, createScalarConstant(b, l, acc, 1.0), c);
                Value x = convertScalar(b, l, a[1], acc);
                // Integers: torch divides with rounding_mode="floor".
                Value q =
                    isFloat
                        ? arith::DivFOp::create(b, l, x, c).getResult()
                        : arith::FloorDivSIOp::create(b, l, x, c).getResult();
                linalg::YieldOp::create(b, l, convertScalar(b, l, q, elem));
              })
              .getResult(0);
  }
  return replaceWithResult(rw, op, out, resultType);
}

/// aten::index_add.default(self, dim, index, source, alpha=1): a copy of
/// self where slice index[i] along dim += alpha * source's slice i, in
/// order of i (torch's CPU loop).
static LogicalResult lowerIndexAdd(CallFunctionOp op, const OpArgs &args,
                                   ConversionPatternRewriter &rw) {
  FailureOr<DimIndexArgs> in = readDimIndexArgs(op, args, rw);
  if (failed(in))
    return failure();
  RankedTensor base = in->self, idx = in->index;
  int64_t d = in->dim;
  RankedTensorType resultType = in->resultType;
  FailureOr<RankedTensor> source = args.tensor(3, "source");
  FailureOr<double> alpha = args.getFloat(4, "alpha", 1.0);
  if (failed(source) || failed(alpha))
    return rw.notifyMatchFailure(
        op, "expected a tensor source and a constant alpha");
  if (source->getType().getRank() != base.getType().getRank() ||
      idx.getType().getRank() > 1)
    return rw.notifyMatchFailure(op, "bad index or source rank");
  Location loc = op.getLoc();
  Type elem = base.getType().getElementType();
  Value srcT = *source;
  double scale = *alpha;
  bool vector = idx.getType().getRank() == 1;
  Value result = buildSerialNest(
      rw, loc, tensor::getMixedSizes(rw, loc, srcT), base,
      [&](OpBuilder &b, Location l, ValueRange ivs, Value out) -> Value {
        SmallVector<Value> coords(ivs.begin(), ivs.end());
        Value i = tensor::ExtractOp::create(
            b, l, idx, vector ? ValueRange{ivs[d]} : ValueRange{});
        coords[d] = wrapIndex(b, l, i, tensor::DimOp::create(b, l, base, d));
        Value v = tensor::ExtractOp::create(b, l, srcT, ivs);
        if (scale != 1.0) {
          Type acc = getAccumulatorType(elem);
          Value a = createScalarConstant(b, l, acc, scale);
          v = convertScalar(b, l, v, acc);
          v = isa<FloatType>(acc)
                  ? arith::MulFOp::create(b, l, v, a).getResult()
                  : arith::MulIOp::create(b, l, v, a).getResult();
        }
        return storeElement(b, l, out, coords, v, true, elem);
      });
  return replaceWithResult(rw, op, result, resultType);
}

/// rank[i] = #{j : row[j] comes before row[i]} along dim `d` of the float or
/// integer tensor `x` (integers signed, bool and uint8 unsigned), as an index
/// tensor of x's shape: larger first when `descending`, else smaller first;
/// NaN counts as larger than every number (torch's order) and ties keep the
/// lower index first (stable), so the ranks of a row are a permutation of
/// 0..n-1. O(n^2) per row.
static Value buildRowRanks(OpBuilder &b0, Location loc, Value x, int64_t d,
                           bool descending) {
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  Value init = tensor::EmptyOp::create(
      b0, loc, tensor::getMixedSizes(b0, loc, x), b0.getIndexType());
  AffineMap id = b0.getMultiDimIdentityMap(rank);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b0, loc, init.getType(), ValueRange{x}, ValueRange{init},
             ArrayRef<AffineMap>{id, id}, iters,
             [&](OpBuilder &b, Location l, ValueRange a) {
               SmallVector<Value> at;
               for (int64_t i = 0; i < rank; ++i)
                 at.push_back(linalg::IndexOp::create(b, l, i));
               Value self = at[d];
               Value xi = a[0];
               Type elem = xi.getType();
               bool isFloat = isa<FloatType>(elem);
               // Integers: signed order (unsigned for bool and uint8).
               bool isUnsigned =
                   !isFloat && (elem.isInteger(1) || elem.isUnsignedInteger());
               Value nanI =
                   isFloat
                       ? arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO,
                                               xi, xi)
                             .getResult()
                       : arith::ConstantIntOp::create(b, l, 0, 1).getResult();
               Value zero = arith::ConstantIndexOp::create(b, l, 0);
               Value one = arith::ConstantIndexOp::create(b, l, 1);
               Value n = tensor::DimOp::create(b, l, x, d);
               auto count = scf::ForOp::create(
                   b, l, zero, n, one, ValueRange{zero},
                   [&](OpBuilder &fb, Location fl, Value j, ValueRange iter) {
                     SmallVector<Value> other = at;
                     other[d] = j;
                     Value xj = tensor::ExtractOp::create(fb, fl, x, other);
                     if (!isFloat) {
                       using P = arith::CmpIPredicate;
                       P order = descending ? (isUnsigned ? P::ugt : P::sgt)
                                            : (isUnsigned ? P::ult : P::slt);
                       Value better =
                           arith::CmpIOp::create(fb, fl, order, xj, xi);
                       Value same =
                           arith::CmpIOp::create(fb, fl, P::eq, xj, xi);
                       Value earlier =
                           arith::CmpIOp::create(fb, fl, P::ult, j, self);
                       Value before = arith::OrIOp::create(
                           fb, fl, better,
                           arith::AndIOp::create(fb, fl, same, earlier));
                       Value next = arith::AddIOp::create(fb, fl, iter[0], one);
                       scf::YieldOp::create(fb, fl,
                                            arith::SelectOp::create(
                                                fb, fl, before, next, iter[0])
                                                .getResult());
                       return;
                     }
                     Value nanJ = arith::CmpFOp::create(
                         fb, fl, arith::CmpFPredicate::UNO, xj, xj);
                     // better: NaN first when largest, last when smallest.
                     Value cmp = arith::CmpFOp::create(
                         fb, fl,
                         descending ? arith::CmpFPredicate::OGT
                                    : arith::CmpFPredicate::OLT,
                         xj, xi);
                     Value notNanJ = arith::XOrIOp::create(
                         fb, fl, nanJ,
                         arith::ConstantIntOp::create(fb, fl, 1, 1));
                     Value notNanI = arith::XOrIOp::create(
                         fb, fl, nanI,
                         arith::ConstantIntOp::create(fb, fl, 1, 1));
                     Value nanOrder =
                         descending
                             ? arith::AndIOp::create(fb, fl, nanJ, notNanI)
                                   .getResult()
                             : arith::AndIOp::create(fb, fl, notNanJ, nanI)
                                   .getResult();
                     Value better = arith::OrIOp::create(fb, fl, cmp, nanOrder);
                     Value same = arith::OrIOp::create(
                         fb, fl,
                         arith::CmpFOp::create(
                             fb, fl, arith::CmpFPredicate::OEQ, xj, xi),
                         arith::AndIOp::create(fb, fl, nanJ, nanI));
                     Value earlier = arith::CmpIOp::create(
                         fb, fl, arith::CmpIPredicate::ult, j, self);
                     Value before = arith::OrIOp::create(
                         fb, fl, better,
                         arith::AndIOp::create(fb, fl, same, earlier));
                     Value next = arith::AddIOp::create(fb, fl, iter[0], one);
                     scf::YieldOp::create(
                         fb, fl,
                         arith::SelectOp::create(fb, fl, before, next, iter[0])
                             .getResult());
                   });
               linalg::YieldOp::create(b, l, count.getResult(0));
             })
      .getResult(0);
}

/// aten::topk.default(self, k, dim=-1, largest=True, sorted=True): the k
/// largest (smallest) elements along dim, sorted, and their int64 indices.
/// NaN counts as larger than every number, as in torch; ties keep the lower
/// index first. Each element's rank is counted against its whole row
/// (O(n^2) per row: meant for router-sized dims, e.g. experts), then the
/// elements of rank < k are written to their rank's position.
static LogicalResult lowerTopk(CallFunctionOp op, const OpArgs &args,
                               ConversionPatternRewriter &rw) {
  FailureOr<RankedTensor> self = args.tensor(0, "self");
  FailureOr<int64_t> k = args.getInt(1, "k");
  FailureOr<int64_t> dimArg = args.getInt(2, "dim", -1);
  FailureOr<bool> largest = args.getBool(3, "largest", true);
  RankedTensorType valuesType = getResultTensorType(op, 0);
  RankedTensorType indicesType = getResultTensorType(op, 1);
  if (failed(self) || failed(k) || failed(dimArg) || failed(largest) ||
      !valuesType || !indicesType)
    return rw.notifyMatchFailure(
        op, "expected (self, constant k, dim, largest) and two tensors");
  RankedTensorType selfType = self->getType();
  int64_t rank = selfType.getRank();
  Type elem = selfType.getElementType();
  FailureOr<int64_t> dim = normalizeDim(*dimArg, std::max<int64_t>(rank, 1));
  if (!elem.isIntOrFloat() || failed(dim) || rank == 0)
    return rw.notifyMatchFailure(
        op, "expects a float or integer tensor of rank >= 1");
  Location loc = op.getLoc();
  int64_t d = *dim;
  bool top = *largest;
  Value x = *self;

  // rank[i] = #{j : row[j] comes before row[i]}.
  Value ranks = buildRowRanks(rw, loc, x, d, top);

  // Scatter the elements of rank < k to their rank's position.
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rw, loc, x);
  SmallVector<OpFoldResult> outSizes = sizes;
  outSizes[d] = rw.getIndexAttr(*k);
  auto place = [&](Value out, bool indices) {
    return buildSerialNest(
        rw, loc, sizes, out,
        [&](OpBuilder &b, Location l, ValueRange ivs, Value acc) -> Value {
          Value r = tensor::ExtractOp::create(b, l, ranks, ivs);
          Value keep =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, r,
                                    arith::ConstantIndexOp::create(b, l, *k));
          auto ifOp = scf::IfOp::create(
              b, l, keep,
              [&](OpBuilder &tb, Location tl) {
                SmallVector<Value> at(ivs.begin(), ivs.end());
                at[d] = r;
                Value v =
                    indices
                        ? arith::IndexCastOp::create(tb, tl, tb.getI64Type(),
                                                     ivs[d])
                              .getResult()
                        : tensor::ExtractOp::create(tb, tl, x, ivs).getResult();
                scf::YieldOp::create(
                    tb, tl,
                    tensor::InsertOp::create(tb, tl, v, acc, at).getResult());
              },
              [&](OpBuilder &eb, Location el) {
                scf::YieldOp::create(eb, el, acc);
              });
          return ifOp.getResult(0);
        });
  };
  Value values = place(tensor::EmptyOp::create(rw, loc, outSizes, elem), false);
  Value indices =
      place(tensor::EmptyOp::create(rw, loc, outSizes, rw.getI64Type()), true);
  rw.replaceOp(op, {finishResult(rw, loc, values, valuesType),
                    finishResult(rw, loc, indices, indicesType)});
  return success();
}

/// aten::sort.default(self, dim=-1, descending=False) and
/// aten::sort.stable(self, *, stable, dim=-1, descending=False): values and
/// int64 indices along dim, always stable (ties keep the lower index first,
/// as torch's stable CPU sort; any order is valid for stable=False), NaN as
/// the largest value. Ranks as topk's, then out[p] is the element whose rank
/// is p: a parallel generic with an O(n) search per output, no scatter.
static LogicalResult lowerSort(CallFunctionOp op, const OpArgs &args,
                               ConversionPatternRewriter &rw) {
  bool stableOverload = op.getTarget() == "aten::sort.stable";
  unsigned dimAt = stableOverload ? 2 : 1;
  FailureOr<RankedTensor> self = args.tensor(0, "self");
  FailureOr<int64_t> dimArg = args.getInt(dimAt, "dim", -1);
  FailureOr<bool> descending = args.getBool(dimAt + 1, "descending", false);
  RankedTensorType valuesType = getResultTensorType(op, 0);
  RankedTensorType indicesType = getResultTensorType(op, 1);
  if (failed(self) || failed(dimArg) || failed(descending) || !valuesType ||
      !indicesType)
    return rw.notifyMatchFailure(
        op, "expected (self, constant dim, descending) and two tensors");
  if (stableOverload && !args.isNone(1, "stable") &&
      failed(args.getBool(1, "stable")))
    return rw.notifyMatchFailure(op, "stable must be a constant bool");
  RankedTensorType selfType = self->getType();
  int64_t rank = selfType.getRank();
  Type elem = selfType.getElementType();
  FailureOr<int64_t> dim = normalizeDim(*dimArg, std::max<int64_t>(rank, 1));
  if (!elem.isIntOrFloat() || failed(dim) || rank == 0)
    return rw.notifyMatchFailure(
        op, "expects a float or integer tensor of rank >= 1");
  Location loc = op.getLoc();
  int64_t d = *dim;
  Value x = *self;
  Value ranks = buildRowRanks(rw, loc, x, d, *descending);

  // out[.., p, ..] = x[.., j, ..] for the j with ranks[.., j, ..] == p.
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rw, loc, x);
  Value valuesInit = tensor::EmptyOp::create(rw, loc, sizes, elem);
  Value indicesInit = tensor::EmptyOp::create(rw, loc, sizes, rw.getI64Type());
  AffineMap id = rw.getMultiDimIdentityMap(rank);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto sorted = linalg::GenericOp::create(
      rw, loc, TypeRange{valuesInit.getType(), indicesInit.getType()},
      ValueRange{}, ValueRange{valuesInit, indicesInit},
      ArrayRef<AffineMap>{id, id}, iters,
      [&](OpBuilder &b, Location l, ValueRange) {
        SmallVector<Value> at;
        for (int64_t i = 0; i < rank; ++i)
          at.push_back(linalg::IndexOp::create(b, l, i));
        Value p = at[d];
        Value zero = arith::ConstantIndexOp::create(b, l, 0);
        Value one = arith::ConstantIndexOp::create(b, l, 1);
        Value n = tensor::DimOp::create(b, l, x, d);
        auto search = scf::ForOp::create(
            b, l, zero, n, one, ValueRange{zero},
            [&](OpBuilder &fb, Location fl, Value j, ValueRange iter) {
              SmallVector<Value> other = at;
              other[d] = j;
              Value r = tensor::ExtractOp::create(fb, fl, ranks, other);
              Value hit =
                  arith::CmpIOp::create(fb, fl, arith::CmpIPredicate::eq, r, p);
              scf::YieldOp::create(
                  fb, fl,
                  arith::SelectOp::create(fb, fl, hit, j, iter[0]).getResult());
            });
        SmallVector<Value> src = at;
        src[d] = search.getResult(0);
        Value v = tensor::ExtractOp::create(b, l, x, src);
        Value i = arith::IndexCastOp::create(b, l, b.getI64Type(), src[d]);
        linalg::YieldOp::create(b, l, ValueRange{v, i});
      });
  rw.replaceOp(op, {finishResult(rw, loc, sorted.getResult(0), valuesType),
                    finishResult(rw, loc, sorted.getResult(1), indicesType)});
  return success();
}

} // namespace

void mlir::joint::populateIndirectDataMovementPatterns(
    const TypeConverter &typeConverter, RewritePatternSet &patterns) {
  LoweringTable table(typeConverter, patterns);
  table.add({"aten::embedding.default"}, lowerEmbedding);
  table.add({"aten::embedding_dense_backward.default"}, lowerEmbeddingBackward);
  table.add({"aten::index.Tensor", "aten::index_select.default"}, lowerIndex);
  table.add({"aten::index_put.default"}, lowerIndexPut);
  table.add({"aten::gather.default"}, lowerGather);
  table.add(
      {"aten::scatter.src", "aten::scatter.value", "aten::scatter_add.default"},
      lowerScatter);
  table.add({"aten::scatter_reduce.two"}, lowerScatterReduce);
  table.add({"aten::index_add.default"}, lowerIndexAdd);
  table.add({"aten::topk.default"}, lowerTopk);
  table.add({"aten::sort.default", "aten::sort.stable"}, lowerSort);
}

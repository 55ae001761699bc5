//===- DataMovement.cpp - Views, slices, cat, pad and copies --------------===//
//
// The DataMovement family of convert-joint-to-linalg. Views lower to value
// semantics tensor ops (the joint graph's aliasing is already explicit, see
// the driver): view / reshape / squeeze / unsqueeze to collapse, expand or
// reshape; t / transpose / permute to `linalg.transpose`; expand to a
// broadcasting `linalg.generic`; slice / select / split to
// `tensor.extract_slice` with torch's clamping of start and end; cat to
// `tensor.insert_slice`s into one `tensor.empty`; constant_pad_nd to
// `tensor.pad` (negative pads crop); slice_backward to an insert into
// zeros; `_to_copy` / `copy_` to a casting, broadcasting copy.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "joint/Conversion/JointToLinalg/JointToLinalg.h"
#include "joint/Dialect/Joint/IR/TensorMeta.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::joint;

namespace {

/// Product of `sizes`.
OpFoldResult getNumElements(OpBuilder &b, Location loc,
                            ArrayRef<OpFoldResult> sizes) {
  IndexArith ix(b, loc);
  OpFoldResult n = b.getIndexAttr(1);
  for (OpFoldResult size : sizes)
    n = ix.mul(n, size);
  return n;
}

/// Sizes of `resultType`: static dims from the type, `?` dims from
/// `requested` (a torch size list, where -1 is inferred from `input`'s
/// element count).
FailureOr<SmallVector<OpFoldResult>>
getViewSizes(OpBuilder &b, Location loc, Value input,
             RankedTensorType resultType, ArrayRef<OpFoldResult> requested) {
  if (requested.size() != static_cast<size_t>(resultType.getRank()))
    return failure();
  SmallVector<OpFoldResult> sizes;
  int inferred = -1;
  for (int64_t i = 0, e = resultType.getRank(); i < e; ++i) {
    if (!resultType.isDynamicDim(i)) {
      sizes.push_back(b.getIndexAttr(resultType.getDimSize(i)));
      continue;
    }
    if (isConstantIntValue(requested[i], -1)) {
      inferred = i;
      sizes.push_back(b.getIndexAttr(1));
      continue;
    }
    sizes.push_back(requested[i]);
  }
  if (inferred >= 0) {
    OpFoldResult total = getNumElements(b, loc, getTensorSizes(b, loc, input));
    OpFoldResult known = getNumElements(b, loc, sizes);
    sizes[inferred] = IndexArith(b, loc).div(total, known);
  }
  return sizes;
}

/// The sizes argument 1 asks for: `other`'s sizes for the `*_as` ops
/// (view_as, reshape_as, expand_as), else the `size` list (torch's
/// `SymInt[] size`, -1 still unresolved).
FailureOr<SmallVector<OpFoldResult>>
getRequestedSizes(CallFunctionOp op, CallFunctionOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) {
  if (!op.getTarget().ends_with("_as.default"))
    return getIntListArg(op, adaptor, rewriter, {1, "size"});
  FailureOr<Value> other = getTensorArg(op, adaptor, rewriter, {1, "other"});
  if (failed(other))
    return failure();
  return getTensorSizes(rewriter, op.getLoc(), *other);
}

} // namespace

namespace {
/// as_strided over a contiguous input with contiguous strides reads a
/// contiguous window: flatten, slice at storage_offset, reshape.
static LogicalResult rewriteAsStrided(CallFunctionOp op,
                                      CallFunctionOp::Adaptor adaptor,
                                      ConversionPatternRewriter &rewriter,
                                      Value input,
                                      RankedTensorType resultType) {
  auto inputType = cast<RankedTensorType>(input.getType());
  FailureOr<SmallVector<int64_t>> size =
      getConstantIntListArg(op, rewriter, {1, "size"});
  FailureOr<SmallVector<int64_t>> stride =
      getConstantIntListArg(op, rewriter, {2, "stride"});
  FailureOr<int64_t> offset =
      getConstantArg<int64_t>(op, rewriter, {3, "storage_offset"}, 0);
  if (failed(size) || failed(stride) || failed(offset) ||
      !inputType.hasStaticShape() || !resultType.hasStaticShape())
    return rewriter.notifyMatchFailure(
        op, "as_strided needs static sizes, strides and offset");
  TensorMetaAttr meta = getTracedMeta(op->getOperand(0));
  if (meta && (!meta.isContiguous() || !meta.getOffset().isStatic() ||
               meta.getOffset().hint != 0))
    return rewriter.notifyMatchFailure(
        op, "as_strided of a non-contiguous input is not expressible as a "
            "tensor op");
  int64_t expected = 1, numel = 1;
  for (int64_t i = size->size() - 1; i >= 0; --i) {
    if ((*size)[i] != 1 && (*stride)[i] != expected)
      return rewriter.notifyMatchFailure(
          op, "as_strided with non-contiguous strides is not expressible "
              "as a tensor op");
    expected *= (*size)[i];
  }
  numel = expected;
  if (*offset + numel > inputType.getNumElements())
    return rewriter.notifyMatchFailure(op, "as_strided reads out of bounds");
  Location loc = op.getLoc();
  Value flat = input;
  if (inputType.getRank() != 1) {
    auto flatType = RankedTensorType::get({inputType.getNumElements()},
                                          inputType.getElementType());
    flat = reshapeTo(rewriter, loc, input, flatType,
                     {rewriter.getIndexAttr(inputType.getNumElements())});
  }
  if (*offset != 0 || numel != inputType.getNumElements())
    flat = tensor::ExtractSliceOp::create(
        rewriter, loc, flat, {rewriter.getIndexAttr(*offset)},
        {rewriter.getIndexAttr(numel)}, {rewriter.getIndexAttr(1)});
  SmallVector<OpFoldResult> sizes;
  for (int64_t s : resultType.getShape())
    sizes.push_back(rewriter.getIndexAttr(s));
  rewriter.replaceOp(op, reshapeTo(rewriter, loc, flat, resultType, sizes));
  return success();
}

/// view, _unsafe_view, reshape, _reshape_alias, view_as, squeeze, unsqueeze,
/// as_strided (contiguous only) and the identities alias / detach / clone /
/// lift_fresh_copy.
static LogicalResult lowerView(CallFunctionOp op,
                               CallFunctionOp::Adaptor adaptor, Value input,
                               RankedTensorType resultType,
                               ConversionPatternRewriter &rewriter) {
  auto inputType = cast<RankedTensorType>(input.getType());
  if (inputType.getElementType() != resultType.getElementType())
    return rewriter.notifyMatchFailure(op, "a view keeps the dtype");
  Location loc = op.getLoc();
  StringRef target = op.getTarget();
  SmallVector<OpFoldResult> sizes;

  if (target == "aten::alias.default" || target == "aten::detach.default" ||
      target == "aten::clone.default" ||
      target == "aten::lift_fresh_copy.default" ||
      target == "aten::contiguous.default") {
    if (inputType != resultType)
      return rewriter.notifyMatchFailure(op, "result type differs");
    rewriter.replaceOp(op, input);
    return success();
  }
  if (target == "aten::as_strided.default")
    return rewriteAsStrided(op, adaptor, rewriter, input, resultType);

  if (target.starts_with("aten::squeeze") ||
      target == "aten::unsqueeze.default") {
    // The result's dims are the input's with size-1 dims removed or one
    // inserted: map each result dim to its input dim.
    SmallVector<OpFoldResult> inputSizes = getTensorSizes(rewriter, loc, input);
    if (target == "aten::unsqueeze.default") {
      FailureOr<int64_t> d =
          getDimArg(op, rewriter, {1, "dim"}, inputType.getRank() + 1);
      if (failed(d))
        return failure();
      sizes = inputSizes;
      sizes.insert(sizes.begin() + *d, rewriter.getIndexAttr(1));
    } else {
      SmallVector<int64_t> dims;
      if (target == "aten::squeeze.default") {
        for (int64_t i = 0, e = inputType.getRank(); i < e; ++i)
          dims.push_back(i);
      } else {
        FailureOr<SmallVector<int64_t>> list =
            getConstantIntListArg(op, rewriter, {1, "dim"});
        if (failed(list))
          return failure();
        for (int64_t dim : *list) {
          FailureOr<int64_t> d =
              normalizeDim(op, rewriter, dim, inputType.getRank());
          if (failed(d))
            return failure();
          dims.push_back(*d);
        }
      }
      for (int64_t i = 0, e = inputType.getRank(); i < e; ++i) {
        // torch squeezes only dims of size 1 (symbolic dims are >= 2).
        bool squeezed =
            llvm::is_contained(dims, i) && inputType.getDimSize(i) == 1;
        if (!squeezed)
          sizes.push_back(inputSizes[i]);
      }
    }
  } else {
    FailureOr<SmallVector<OpFoldResult>> requested =
        getRequestedSizes(op, adaptor, rewriter);
    if (failed(requested))
      return failure();
    sizes = *requested;
  }
  FailureOr<SmallVector<OpFoldResult>> viewSizes =
      getViewSizes(rewriter, loc, input, resultType, sizes);
  if (failed(viewSizes))
    return rewriter.notifyMatchFailure(op, "size list does not match result");
  rewriter.replaceOp(op,
                     reshapeTo(rewriter, loc, input, resultType, *viewSizes));
  return success();
}

} // namespace

namespace {
/// t, transpose.int, permute: `linalg.transpose` into a `tensor.empty`.
static LogicalResult lowerTranspose(CallFunctionOp op,
                                    CallFunctionOp::Adaptor adaptor,
                                    Value input, RankedTensorType resultType,
                                    ConversionPatternRewriter &rewriter) {
  int64_t rank = resultType.getRank();
  SmallVector<int64_t> permutation;
  for (int64_t i = 0; i < rank; ++i)
    permutation.push_back(i);
  StringRef target = op.getTarget();
  if (target == "aten::t.default" || target == "aten::numpy_T.default") {
    std::reverse(permutation.begin(), permutation.end());
  } else if (target == "aten::transpose.int") {
    FailureOr<int64_t> d0 = getConstantArg<int64_t>(op, rewriter, {1, "dim0"});
    FailureOr<int64_t> d1 = getConstantArg<int64_t>(op, rewriter, {2, "dim1"});
    if (failed(d0) || failed(d1))
      return failure();
    FailureOr<int64_t> a = normalizeDim(op, rewriter, *d0, rank);
    FailureOr<int64_t> b = normalizeDim(op, rewriter, *d1, rank);
    if (failed(a) || failed(b))
      return failure();
    if (rank > 0)
      std::swap(permutation[*a], permutation[*b]);
  } else {
    FailureOr<SmallVector<int64_t>> dims =
        getConstantIntListArg(op, rewriter, {1, "dims"});
    if (failed(dims) || dims->size() != static_cast<size_t>(rank))
      return rewriter.notifyMatchFailure(op, "dims must list every dim");
    for (int64_t i = 0; i < rank; ++i) {
      FailureOr<int64_t> d = normalizeDim(op, rewriter, (*dims)[i], rank);
      if (failed(d))
        return failure();
      permutation[i] = *d;
    }
  }
  if (llvm::is_sorted(permutation)) {
    rewriter.replaceOp(op, input);
    return success();
  }
  Location loc = op.getLoc();
  SmallVector<OpFoldResult> inputSizes = getTensorSizes(rewriter, loc, input);
  SmallVector<OpFoldResult> sizes;
  for (int64_t d : permutation)
    sizes.push_back(inputSizes[d]);
  Value init =
      createEmptyTensor(rewriter, loc, sizes, resultType.getElementType());
  Value result =
      linalg::TransposeOp::create(rewriter, loc, input, init, permutation)
          .getResult()[0];
  return replaceWithResult(rewriter, op, result, resultType);
}

/// expand / expand_as: a broadcasting copy (torch: -1 keeps the dim).
static LogicalResult lowerExpand(CallFunctionOp op,
                                 CallFunctionOp::Adaptor adaptor, Value input,
                                 RankedTensorType resultType,
                                 ConversionPatternRewriter &rewriter) {
  FailureOr<SmallVector<OpFoldResult>> requested =
      getRequestedSizes(op, adaptor, rewriter);
  if (failed(requested))
    return failure();
  int64_t rank = resultType.getRank();
  if (requested->size() != static_cast<size_t>(rank))
    return rewriter.notifyMatchFailure(op, "size does not match result");
  Location loc = op.getLoc();
  auto inputType = cast<RankedTensorType>(input.getType());
  SmallVector<OpFoldResult> inputSizes = getTensorSizes(rewriter, loc, input);
  int64_t lead = rank - inputType.getRank();
  SmallVector<OpFoldResult> sizes;
  for (int64_t i = 0; i < rank; ++i) {
    if (!resultType.isDynamicDim(i))
      sizes.push_back(rewriter.getIndexAttr(resultType.getDimSize(i)));
    else if (isConstantIntValue((*requested)[i], -1) && i >= lead)
      sizes.push_back(inputSizes[i - lead]);
    else
      sizes.push_back((*requested)[i]);
  }
  rewriter.replaceOp(op,
                     broadcastToShape(rewriter, loc, input, resultType, sizes));
  return success();
}

/// torch's clamping of a slice bound against dim size `size`: negative
/// values wrap once, then the result is clamped to [`lower`, `size`].
OpFoldResult clampBound(OpBuilder &b, Location loc, OpFoldResult value,
                        OpFoldResult size, OpFoldResult lower) {
  IndexArith ix(b, loc);
  std::optional<int64_t> c = getConstantIntValue(value);
  OpFoldResult wrapped = value;
  if (c && *c < 0) {
    wrapped = ix.add(size, value);
  } else if (!c) {
    Value v = getValueOrCreateConstantIndexOp(b, loc, value);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value negative =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v, zero);
    Value plus = getValueOrCreateConstantIndexOp(b, loc, ix.add(size, v));
    wrapped = arith::SelectOp::create(b, loc, negative, plus, v).getResult();
  }
  return ix.min(ix.max(wrapped, lower), size);
}

/// An optional int argument (None / absent gives std::nullopt) as a mixed
/// value; INT64_MAX (torch's open end) stays a constant.
FailureOr<std::optional<OpFoldResult>>
getOptionalIndexArg(CallFunctionOp op, CallFunctionOp::Adaptor adaptor,
                    ConversionPatternRewriter &rewriter, ArgRef arg) {
  if (isNoneArg(op, arg))
    return std::optional<OpFoldResult>();
  Attribute attr = getArgAttr(op, arg);
  if (auto intAttr = dyn_cast<IntegerAttr>(attr);
      intAttr && !isa<BoolAttr>(attr))
    return std::optional<OpFoldResult>(
        rewriter.getIndexAttr(intAttr.getValue().getSExtValue()));
  FailureOr<Value> value = getIntArg(op, adaptor, rewriter, arg);
  if (failed(value))
    return failure();
  return std::optional<OpFoldResult>(OpFoldResult(*value));
}

/// The `SymInt? start, SymInt? end, SymInt step=1` arguments of slice.Tensor
/// and slice_backward (start and end as passed; None is 0 / the dim size).
struct SliceArgs {
  std::optional<OpFoldResult> start, end;
  int64_t step;
};

/// Reads SliceArgs from arguments `first` to `first + 2`; failure (with the
/// reader's reason) when one is not an int. The step is not checked.
FailureOr<SliceArgs> getSliceArgs(CallFunctionOp op,
                                  CallFunctionOp::Adaptor adaptor,
                                  ConversionPatternRewriter &rewriter,
                                  unsigned first) {
  FailureOr<std::optional<OpFoldResult>> start =
      getOptionalIndexArg(op, adaptor, rewriter, {first, "start"});
  FailureOr<std::optional<OpFoldResult>> end =
      getOptionalIndexArg(op, adaptor, rewriter, {first + 1, "end"});
  FailureOr<int64_t> step =
      getConstantArg<int64_t>(op, rewriter, {first + 2, "step"}, 1);
  if (failed(start) || failed(end) || failed(step))
    return failure();
  return SliceArgs{*start, *end, *step};
}

/// Start and length of torch's slice(dim, start, end, step) over a dim of
/// `size`.
std::pair<OpFoldResult, OpFoldResult> getSliceRange(OpBuilder &b, Location loc,
                                                    OpFoldResult size,
                                                    const SliceArgs &slice) {
  OpFoldResult zero = b.getIndexAttr(0);
  OpFoldResult s =
      slice.start ? clampBound(b, loc, *slice.start, size, zero) : zero;
  OpFoldResult e = slice.end ? clampBound(b, loc, *slice.end, size, s) : size;
  IndexArith ix(b, loc);
  OpFoldResult length = ix.ceilDiv(ix.sub(e, s), b.getIndexAttr(slice.step));
  return {s, length};
}

/// slice.Tensor, select.int, split.Tensor, split_with_sizes, chunk,
/// unbind.int, narrow: `tensor.extract_slice`s.
static LogicalResult lowerSlice(CallFunctionOp op,
                                CallFunctionOp::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) {
  FailureOr<Value> input = getTensorArg(op, adaptor, rewriter, {0, "self"});
  if (failed(input))
    return failure();
  for (Type type : op->getResultTypes())
    if (!isa<RankedTensorType>(type))
      return rewriter.notifyMatchFailure(op, "expects tensor results");
  auto inputType = cast<RankedTensorType>(input->getType());
  int64_t rank = inputType.getRank();
  Location loc = op.getLoc();
  StringRef target = op.getTarget();
  // dim is argument 1 for slice/select/narrow/unbind, 2 for the splits.
  bool isSplit =
      target.starts_with("aten::split") || target == "aten::chunk.default";
  ArgRef dimArg = isSplit ? ArgRef{2, "dim"} : ArgRef{1, "dim"};
  FailureOr<int64_t> d = getDimArg(op, rewriter, dimArg, rank, 0);
  if (failed(d))
    return failure();
  SmallVector<OpFoldResult> sizes = getTensorSizes(rewriter, loc, *input);
  OpFoldResult dimSize = sizes[*d];

  // (offset, length, stride) of each result along `d`.
  SmallVector<std::tuple<OpFoldResult, OpFoldResult, int64_t>> ranges;
  bool reduceRank = false;
  if (target == "aten::slice.Tensor") {
    FailureOr<SliceArgs> slice = getSliceArgs(op, adaptor, rewriter, 2);
    if (failed(slice))
      return failure();
    if (slice->step <= 0)
      return rewriter.notifyMatchFailure(op, "slice step must be positive");
    auto [offset, length] = getSliceRange(rewriter, loc, dimSize, *slice);
    ranges.push_back({offset, length, slice->step});
  } else if (target == "aten::narrow.default") {
    FailureOr<Value> start = getIntArg(op, adaptor, rewriter, {2, "start"});
    FailureOr<Value> length = getIntArg(op, adaptor, rewriter, {3, "length"});
    if (failed(start) || failed(length))
      return failure();
    ranges.push_back(
        {clampBound(rewriter, loc, *start, dimSize, rewriter.getIndexAttr(0)),
         *length, 1});
  } else if (target == "aten::select.int") {
    FailureOr<Value> index = getIntArg(op, adaptor, rewriter, {2, "index"});
    if (failed(index))
      return failure();
    ranges.push_back(
        {clampBound(rewriter, loc, *index, dimSize, rewriter.getIndexAttr(0)),
         rewriter.getIndexAttr(1), 1});
    reduceRank = true;
  } else if (target == "aten::unbind.int") {
    for (unsigned i = 0; i < op->getNumResults(); ++i)
      ranges.push_back({rewriter.getIndexAttr(i), rewriter.getIndexAttr(1), 1});
    reduceRank = true;
  } else {
    // Splits: consecutive pieces; the last one may be shorter.
    SmallVector<OpFoldResult> lengths;
    if (target == "aten::split_with_sizes.default") {
      FailureOr<SmallVector<OpFoldResult>> list =
          getIntListArg(op, adaptor, rewriter, {1, "split_sizes"});
      if (failed(list))
        return failure();
      lengths = *list;
    } else {
      OpFoldResult piece;
      if (target == "aten::chunk.default") {
        FailureOr<Value> chunks =
            getIntArg(op, adaptor, rewriter, {1, "chunks"});
        if (failed(chunks))
          return failure();
        piece = IndexArith(rewriter, loc).ceilDiv(dimSize, *chunks);
      } else {
        FailureOr<Value> splitSize =
            getIntArg(op, adaptor, rewriter, {1, "split_size"});
        if (failed(splitSize))
          return failure();
        piece = *splitSize;
        if (std::optional<int64_t> c = getConstantIntValue(*splitSize))
          piece = rewriter.getIndexAttr(*c);
      }
      for (unsigned i = 0; i < op->getNumResults(); ++i)
        lengths.push_back(piece);
    }
    IndexArith ix(rewriter, loc);
    OpFoldResult offset = rewriter.getIndexAttr(0);
    for (OpFoldResult length : lengths) {
      OpFoldResult clamped = ix.min(length, ix.sub(dimSize, offset));
      ranges.push_back({offset, clamped, 1});
      offset = ix.add(offset, length);
    }
  }
  if (ranges.size() != op->getNumResults())
    return rewriter.notifyMatchFailure(op, "result count does not match");

  SmallVector<Value> results;
  for (auto [i, range] : llvm::enumerate(ranges)) {
    auto resultType = cast<RankedTensorType>(op->getResult(i).getType());
    auto [offset, length, stride] = range;
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> lengths = sizes;
    SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
    offsets[*d] = offset;
    // The traced result type knows a static length; trust it.
    int64_t resultDim = reduceRank ? -1 : *d;
    lengths[*d] = resultDim >= 0 && !resultType.isDynamicDim(resultDim)
                      ? rewriter.getIndexAttr(resultType.getDimSize(resultDim))
                      : length;
    strides[*d] = rewriter.getIndexAttr(stride);
    Value slice = tensor::ExtractSliceOp::create(
        rewriter, loc, resultType, *input, offsets, lengths, strides);
    results.push_back(slice);
  }
  rewriter.replaceOp(op, results);
  return success();
}

/// cat.default: `tensor.insert_slice`s into one `tensor.empty`, operands
/// cast to the result dtype (torch promotes cat's inputs).
static LogicalResult lowerCat(CallFunctionOp op,
                              CallFunctionOp::Adaptor adaptor,
                              ConversionPatternRewriter &rewriter) {
  RankedTensorType resultType = getResultTensorType(op);
  auto list = dyn_cast_if_present<ArrayAttr>(getArgAttr(op, {0, "tensors"}));
  if (!resultType || !list)
    return rewriter.notifyMatchFailure(op, "expects a tensor list");
  Location loc = op.getLoc();
  int64_t rank = resultType.getRank();
  FailureOr<int64_t> d = getDimArg(op, rewriter, {1, "dim"}, rank, 0);
  if (failed(d))
    return failure();
  SmallVector<Value> inputs;
  for (Attribute element : list) {
    auto ref = dyn_cast<OperandRefAttr>(element);
    if (!ref || ref.getIndex() >= adaptor.getInputs().size())
      return rewriter.notifyMatchFailure(op, "list holds a non-tensor");
    Value input = adaptor.getInputs()[ref.getIndex()];
    auto type = dyn_cast<RankedTensorType>(input.getType());
    if (!type)
      return rewriter.notifyMatchFailure(op, "list holds a non-tensor");
    // torch skips legacy empty 1-D inputs (shape [0]) of other ranks.
    if (type.getRank() != rank) {
      if (type.getRank() == 1 && type.getDimSize(0) == 0)
        continue;
      return rewriter.notifyMatchFailure(op, "inputs differ in rank");
    }
    if (type.getElementType() != resultType.getElementType()) {
      auto castType = type.clone(resultType.getElementType());
      input = broadcastToShape(rewriter, loc, input, castType,
                               getTensorSizes(rewriter, loc, input));
    }
    inputs.push_back(input);
  }
  if (inputs.empty())
    return rewriter.notifyMatchFailure(op, "no inputs");
  // Result sizes: the first input's, with the cat dim summed.
  SmallVector<OpFoldResult> sizes = getTensorSizes(rewriter, loc, inputs[0]);
  SmallVector<OpFoldResult> offsets;
  OpFoldResult total = rewriter.getIndexAttr(0);
  for (Value input : inputs) {
    offsets.push_back(total);
    total = IndexArith(rewriter, loc)
                .add(total, getTensorSizes(rewriter, loc, input)[*d]);
  }
  sizes[*d] = total;
  for (int64_t i = 0; i < rank; ++i)
    if (!resultType.isDynamicDim(i))
      sizes[i] = rewriter.getIndexAttr(resultType.getDimSize(i));
  Value result =
      createEmptyTensor(rewriter, loc, sizes, resultType.getElementType());
  for (auto [input, offset] : llvm::zip(inputs, offsets)) {
    SmallVector<OpFoldResult> at(rank, rewriter.getIndexAttr(0));
    at[*d] = offset;
    SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
    result = tensor::InsertSliceOp::create(rewriter, loc, input, result, at,
                                           getTensorSizes(rewriter, loc, input),
                                           strides);
  }
  return replaceWithResult(rewriter, op, result, resultType);
}

/// constant_pad_nd: `tensor.pad` with the fill value; negative pads crop
/// first with `tensor.extract_slice` (torch semantics).
static LogicalResult lowerPad(CallFunctionOp op,
                              CallFunctionOp::Adaptor adaptor,
                              ConversionPatternRewriter &rewriter) {
  FailureOr<Value> input = getTensorArg(op, adaptor, rewriter, {0, "self"});
  RankedTensorType resultType = getResultTensorType(op);
  FailureOr<SmallVector<int64_t>> pad =
      getConstantIntListArg(op, rewriter, {1, "pad"});
  if (failed(input) || !resultType || failed(pad))
    return rewriter.notifyMatchFailure(op, "expects a tensor and pads");
  Type elementType = resultType.getElementType();
  FailureOr<Value> value =
      getScalarArg(op, adaptor, rewriter, {2, "value"}, elementType, 0.0);
  if (failed(value))
    return failure();
  int64_t rank = resultType.getRank();
  if (pad->size() % 2 != 0 || static_cast<int64_t>(pad->size()) > 2 * rank)
    return rewriter.notifyMatchFailure(op, "pad length must be even and at "
                                           "most twice the rank");
  Location loc = op.getLoc();
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  for (size_t i = 0; i < pad->size() / 2; ++i) {
    low[rank - 1 - i] = (*pad)[2 * i];
    high[rank - 1 - i] = (*pad)[2 * i + 1];
  }
  Value source = *input;
  if (llvm::any_of(low, [](int64_t p) { return p < 0; }) ||
      llvm::any_of(high, [](int64_t p) { return p < 0; })) {
    SmallVector<OpFoldResult> sizes = getTensorSizes(rewriter, loc, source);
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
    for (int64_t i = 0; i < rank; ++i) {
      int64_t cropLow = std::max<int64_t>(-low[i], 0);
      int64_t cropHigh = std::max<int64_t>(-high[i], 0);
      offsets[i] = rewriter.getIndexAttr(cropLow);
      sizes[i] = IndexArith(rewriter, loc)
                     .sub(sizes[i], rewriter.getIndexAttr(cropLow + cropHigh));
      low[i] = std::max<int64_t>(low[i], 0);
      high[i] = std::max<int64_t>(high[i], 0);
    }
    source = tensor::ExtractSliceOp::create(rewriter, loc, source, offsets,
                                            sizes, strides);
  }
  SmallVector<OpFoldResult> lowSizes, highSizes;
  for (int64_t i = 0; i < rank; ++i) {
    lowSizes.push_back(rewriter.getIndexAttr(low[i]));
    highSizes.push_back(rewriter.getIndexAttr(high[i]));
  }
  Value result = tensor::PadOp::create(rewriter, loc, resultType, source,
                                       lowSizes, highSizes, *value);
  rewriter.replaceOp(op, result);
  return success();
}

/// `src` inserted into `dest` along dim `d` at the select (`index` is
/// argument 3) or the slice (start, end, step from argument 3) of `op`,
/// bounds clamped as select.int / slice.Tensor clamp them; failure when the
/// bounds are bad or a static `src` does not fit the slice.
static FailureOr<Value> insertAtSlice(CallFunctionOp op,
                                      CallFunctionOp::Adaptor adaptor,
                                      ConversionPatternRewriter &rewriter,
                                      Value src, Value dest, int64_t d,
                                      bool select) {
  Location loc = op.getLoc();
  auto destType = cast<RankedTensorType>(dest.getType());
  auto srcType = cast<RankedTensorType>(src.getType());
  int64_t rank = destType.getRank();
  OpFoldResult size = getTensorSizes(rewriter, loc, dest)[d];
  OpFoldResult offset;
  int64_t step = 1;
  if (select) {
    FailureOr<Value> index = getIntArg(op, adaptor, rewriter, {3, "index"});
    if (failed(index))
      return failure();
    offset = clampBound(rewriter, loc, *index, size, rewriter.getIndexAttr(0));
  } else {
    FailureOr<SliceArgs> slice = getSliceArgs(op, adaptor, rewriter, 3);
    if (failed(slice) || slice->step <= 0)
      return rewriter.notifyMatchFailure(op, "bad slice bounds");
    step = slice->step;
    OpFoldResult length;
    std::tie(offset, length) = getSliceRange(rewriter, loc, size, *slice);
    std::optional<int64_t> n = getConstantIntValue(length);
    if (srcType.getRank() == rank && n && !srcType.isDynamicDim(d) &&
        srcType.getDimSize(d) != *n)
      return rewriter.notifyMatchFailure(op, "src does not fit the slice");
  }
  SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
  SmallVector<OpFoldResult> srcSizes = getTensorSizes(rewriter, loc, src);
  if (select)
    srcSizes.insert(srcSizes.begin() + d, rewriter.getIndexAttr(1));
  if (srcSizes.size() != static_cast<size_t>(rank))
    return rewriter.notifyMatchFailure(op, "src rank does not match");
  offsets[d] = offset;
  strides[d] = rewriter.getIndexAttr(step);
  return tensor::InsertSliceOp::create(rewriter, loc, src, dest, offsets,
                                       srcSizes, strides)
      .getResult();
}

/// slice_backward / select_backward: the gradient inserted into zeros of
/// the input's shape at the forward slice.
static LogicalResult lowerSliceBackward(CallFunctionOp op,
                                        CallFunctionOp::Adaptor adaptor,
                                        ConversionPatternRewriter &rewriter) {
  FailureOr<Value> grad =
      getTensorArg(op, adaptor, rewriter, {0, "grad_output"});
  RankedTensorType resultType = getResultTensorType(op);
  FailureOr<SmallVector<OpFoldResult>> inputSizes =
      getIntListArg(op, adaptor, rewriter, {1, "input_sizes"});
  FailureOr<int64_t> dim = getConstantArg<int64_t>(op, rewriter, {2, "dim"});
  if (failed(grad) || !resultType || failed(inputSizes) || failed(dim))
    return rewriter.notifyMatchFailure(op, "expects grad, sizes and dim");
  int64_t rank = resultType.getRank();
  FailureOr<int64_t> d = normalizeDim(op, rewriter, *dim, rank);
  if (failed(d) || inputSizes->size() != static_cast<size_t>(rank))
    return rewriter.notifyMatchFailure(op, "sizes do not match the result");
  Location loc = op.getLoc();
  SmallVector<OpFoldResult> sizes = *inputSizes;
  for (int64_t i = 0; i < rank; ++i)
    if (!resultType.isDynamicDim(i))
      sizes[i] = rewriter.getIndexAttr(resultType.getDimSize(i));
  bool select = op.getTarget() == "aten::select_backward.default";
  Value zeros =
      createZeroInitTensor(rewriter, loc, sizes, resultType.getElementType());
  FailureOr<Value> result =
      insertAtSlice(op, adaptor, rewriter, *grad, zeros, *d, select);
  if (failed(result))
    return failure();
  return replaceWithResult(rewriter, op, *result, resultType);
}

/// slice_scatter(self, src, dim, start, end, step) / select_scatter(self,
/// src, dim, index): `self` with `src` inserted at the slice (torch's
/// bounds clamping, as slice.Tensor / select.int read them).
static LogicalResult lowerSliceScatter(CallFunctionOp op,
                                       CallFunctionOp::Adaptor adaptor,
                                       ConversionPatternRewriter &rewriter) {
  FailureOr<Value> self = getTensorArg(op, adaptor, rewriter, {0, "self"});
  FailureOr<Value> src = getTensorArg(op, adaptor, rewriter, {1, "src"});
  RankedTensorType resultType = getResultTensorType(op);
  if (failed(self) || failed(src) || !resultType ||
      self->getType() != resultType)
    return rewriter.notifyMatchFailure(op, "expects self and src tensors");
  auto srcType = cast<RankedTensorType>(src->getType());
  if (srcType.getElementType() != resultType.getElementType())
    return rewriter.notifyMatchFailure(op, "src and self differ in dtype");
  int64_t rank = resultType.getRank();
  bool select = op.getTarget() == "aten::select_scatter.default";
  FailureOr<int64_t> d = getDimArg(op, rewriter, {2, "dim"}, rank, 0);
  if (failed(d))
    return failure();
  FailureOr<Value> result =
      insertAtSlice(op, adaptor, rewriter, *src, *self, *d, select);
  if (failed(result))
    return failure();
  return replaceWithResult(rewriter, op, *result, resultType);
}

/// _to_copy / to.dtype (a cast), copy / copy_ (src broadcast and cast into
/// self's shape and dtype; the driver already made the write explicit).
static LogicalResult lowerCopy(CallFunctionOp op,
                               CallFunctionOp::Adaptor adaptor, Value self,
                               RankedTensorType resultType,
                               ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value source = self;
  StringRef target = op.getTarget();
  if (target == "aten::copy_.default" || target == "aten::copy.default") {
    FailureOr<Value> src = getTensorArg(op, adaptor, rewriter, {1, "src"});
    if (failed(src))
      return failure();
    source = *src;
  }
  if (source.getType() == resultType) {
    rewriter.replaceOp(op, source);
    return success();
  }
  SmallVector<OpFoldResult> sizes = getTensorSizes(rewriter, loc, self);
  rewriter.replaceOp(
      op, broadcastToShape(rewriter, loc, source, resultType, sizes));
  return success();
}
} // namespace

void mlir::joint::populateDataMovementPatterns(
    const TypeConverter &typeConverter, RewritePatternSet &patterns) {
  LoweringTable table(typeConverter, patterns);
  table.addSelf({"aten::view.default", "aten::_unsafe_view.default",
                 "aten::reshape.default", "aten::_reshape_alias.default",
                 "aten::view_as.default", "aten::reshape_as.default",
                 "aten::squeeze.dim", "aten::squeeze.dims",
                 "aten::squeeze.default", "aten::unsqueeze.default",
                 "aten::alias.default", "aten::detach.default",
                 "aten::clone.default", "aten::lift_fresh_copy.default",
                 "aten::contiguous.default", "aten::as_strided.default"},
                lowerView);
  table.addSelf({"aten::t.default", "aten::transpose.int",
                 "aten::permute.default", "aten::numpy_T.default"},
                lowerTranspose);
  table.addSelf({"aten::expand.default", "aten::expand_as.default",
                 "aten::broadcast_to.default"},
                lowerExpand);
  table.add({"aten::slice.Tensor", "aten::select.int", "aten::split.Tensor",
             "aten::split_with_sizes.default", "aten::chunk.default",
             "aten::unbind.int", "aten::narrow.default"},
            lowerSlice);
  table.add({"aten::cat.default"}, lowerCat);
  table.add({"aten::constant_pad_nd.default"}, lowerPad);
  table.add({"aten::slice_backward.default", "aten::select_backward.default"},
            lowerSliceBackward);
  table.add({"aten::slice_scatter.default", "aten::select_scatter.default"},
            lowerSliceScatter);
  table.addSelf({"aten::_to_copy.default", "aten::to.dtype",
                 "aten::to.dtype_layout", "aten::copy_.default",
                 "aten::copy.default", "aten::type_as.default"},
                lowerCopy);
}

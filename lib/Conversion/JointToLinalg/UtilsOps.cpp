//===- UtilsOps.cpp - Helpers of the linear/reduction/attention families --===//
//
// Implements the argument readers, scalar casts and reduction builders that
// the Linear, Reduction, Normalization, Attention and IndirectDataMovement
// families of convert-joint-to-linalg share (see UtilsOps.h).
//
//===----------------------------------------------------------------------===//

#include "UtilsOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"

namespace mlir {
namespace joint {
namespace lowering {

//===----------------------------------------------------------------------===//
// OpArgs
//===----------------------------------------------------------------------===//

Attribute OpArgs::get(unsigned index, StringRef name) const {
  return getArgAttr(op, ArgRef{index, name});
}

bool OpArgs::isNone(unsigned index, StringRef name) const {
  Attribute attr = get(index, name);
  return !attr || isa<UnitAttr>(attr);
}

FailureOr<RankedTensor> OpArgs::tensor(unsigned index, StringRef name) const {
  auto ref = dyn_cast_or_null<OperandRefAttr>(get(index, name));
  if (!ref || ref.getIndex() >= operands.size())
    return failure();
  auto v = dyn_cast<RankedTensor>(operands[ref.getIndex()]);
  if (!v)
    return failure();
  return v;
}

/// `parse`'s value of argument attribute `attr`; `dflt` when it is absent
/// or None. Failure when `parse` finds none.
template <typename T>
static FailureOr<T>
readConstant(Attribute attr, std::optional<T> dflt,
             function_ref<std::optional<T>(Attribute)> parse) {
  if (!attr || isa<UnitAttr>(attr)) {
    if (dflt)
      return *dflt;
    return failure();
  }
  if (std::optional<T> value = parse(attr))
    return *value;
  return failure();
}

/// The elements of list attribute `attr`, each an IntegerAttr read by
/// `convert`; failure when `attr` is not such a list.
template <typename T>
static FailureOr<SmallVector<T>>
readIntList(Attribute attr, function_ref<T(IntegerAttr)> convert) {
  auto list = dyn_cast_or_null<ArrayAttr>(attr);
  if (!list)
    return failure();
  SmallVector<T> values;
  for (Attribute a : list) {
    auto i = dyn_cast<IntegerAttr>(a);
    if (!i)
      return failure();
    values.push_back(convert(i));
  }
  return values;
}

/// Argument attribute readers: the value, or none for another kind.
static std::optional<int64_t> readInt(Attribute attr) {
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return i.getInt();
  return std::nullopt;
}
static std::optional<double> readFloat(Attribute attr) {
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return static_cast<double>(i.getInt());
  return std::nullopt;
}
static std::optional<bool> readBool(Attribute attr) {
  if (auto bAttr = dyn_cast<BoolAttr>(attr))
    return bAttr.getValue();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return i.getInt() != 0;
  return std::nullopt;
}

FailureOr<int64_t> OpArgs::getInt(unsigned index, StringRef name,
                                  std::optional<int64_t> dflt) const {
  return readConstant<int64_t>(get(index, name), dflt, readInt);
}

FailureOr<double> OpArgs::getFloat(unsigned index, StringRef name,
                                   std::optional<double> dflt) const {
  return readConstant<double>(get(index, name), dflt, readFloat);
}

FailureOr<bool> OpArgs::getBool(unsigned index, StringRef name,
                                std::optional<bool> dflt) const {
  return readConstant<bool>(get(index, name), dflt, readBool);
}

FailureOr<SmallVector<int64_t>> OpArgs::getIntList(unsigned index,
                                                   StringRef name) const {
  return readIntList<int64_t>(get(index, name),
                              [](IntegerAttr i) { return i.getInt(); });
}

FailureOr<SmallVector<bool>> OpArgs::getBoolList(unsigned index,
                                                 StringRef name) const {
  return readIntList<bool>(get(index, name),
                           [](IntegerAttr i) { return i.getInt() != 0; });
}

FailureOr<BinaryTensorArgs> readBinaryTensorArgs(CallFunctionOp op,
                                                 const OpArgs &args,
                                                 ConversionPatternRewriter &rw,
                                                 StringRef lhsName,
                                                 StringRef rhsName) {
  FailureOr<RankedTensor> lhs = args.tensor(0, lhsName);
  FailureOr<RankedTensor> rhs = args.tensor(1, rhsName);
  RankedTensorType resultType = getResultTensorType(op, 0);
  if (succeeded(lhs) && succeeded(rhs) && resultType)
    return BinaryTensorArgs{*lhs, *rhs, resultType};
  return rw.notifyMatchFailure(op, [&](Diagnostic &diag) {
    diag << "expected ranked tensors (" << lhsName << ", " << rhsName
         << ") and a ranked tensor result";
  });
}

FailureOr<TensorDimArgs> readTensorDimArgs(CallFunctionOp op,
                                           const OpArgs &args,
                                           ConversionPatternRewriter &rw) {
  FailureOr<RankedTensor> self = args.tensor(0, "self");
  FailureOr<int64_t> dim = args.getInt(1, "dim");
  RankedTensorType resultType = getResultTensorType(op, 0);
  if (succeeded(self) && succeeded(dim) && resultType)
    return TensorDimArgs{*self, *dim, resultType};
  return rw.notifyMatchFailure(
      op, "expected (ranked tensor self, constant int dim) and a ranked "
          "tensor result");
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

} // namespace lowering

void LoweringTable::add(ArrayRef<StringRef> targets, lowering::LowerFn lower) {
  add(targets, [lower](CallFunctionOp op, CallFunctionOp::Adaptor adaptor,
                       ConversionPatternRewriter &rw) {
    return lower(op, lowering::OpArgs(op, adaptor.getOperands()), rw);
  });
}

namespace lowering {

//===----------------------------------------------------------------------===//
// Types and scalars
//===----------------------------------------------------------------------===//

Type getAccumulatorType(Type elem) {
  if (elem.isBF16() || elem.isF16())
    return Float32Type::get(elem.getContext());
  if (isa<IntegerType>(elem))
    return IntegerType::get(elem.getContext(), 64);
  return elem;
}

Value indexToScalar(OpBuilder &b, Location loc, Value v, Type type) {
  return convertScalar(b, loc, v, type);
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

Value createFilledTensor(OpBuilder &b, Location loc,
                         ArrayRef<OpFoldResult> sizes, Type elem, double fill) {
  return createInitTensor(b, loc, sizes, elem,
                          createScalarConstant(b, loc, elem, fill));
}

Value convertElements(OpBuilder &b, Location loc, Value t, Type elem) {
  auto type = cast<RankedTensorType>(t.getType());
  if (type.getElementType() == elem)
    return t;
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, t);
  Value init = tensor::EmptyOp::create(b, loc, sizes, elem);
  unsigned rank = type.getRank();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{t}, ValueRange{init},
             ArrayRef<AffineMap>{id, id}, iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl,
                                       convertScalar(nb, nl, args[0], elem));
             })
      .getResult(0);
}

Value castToType(OpBuilder &b, Location loc, Value t, Type type) {
  if (t.getType() == type)
    return t;
  return tensor::CastOp::create(b, loc, type, t);
}

Value getNumElements(OpBuilder &b, Location loc, Value t, ArrayRef<bool> mask) {
  Value n = arith::ConstantIndexOp::create(b, loc, 1);
  for (auto [i, on] : llvm::enumerate(mask)) {
    if (!on)
      continue;
    Value d = getValueOrCreateConstantIndexOp(
        b, loc, tensor::getMixedSize(b, loc, t, i));
    n = arith::MulIOp::create(b, loc, n, d);
  }
  return n;
}

SmallVector<OpFoldResult> getKeptSizes(OpBuilder &b, Location loc, Value t,
                                       ArrayRef<bool> dropped) {
  SmallVector<OpFoldResult> sizes;
  for (auto [i, drop] : llvm::enumerate(dropped))
    if (!drop)
      sizes.push_back(tensor::getMixedSize(b, loc, t, i));
  return sizes;
}

AffineMap getProjectionMap(MLIRContext *ctx, unsigned rank,
                           ArrayRef<bool> dropped) {
  SmallVector<AffineExpr> exprs;
  for (unsigned i = 0; i < rank; ++i)
    if (!dropped[i])
      exprs.push_back(getAffineDimExpr(i, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

AffineMap getBroadcastMap(MLIRContext *ctx, ArrayRef<int64_t> shape,
                          unsigned numLoops, ArrayRef<unsigned> loopsOfDims) {
  // loopsOfDims are the loops of the broadcast result dims; `shape` aligns
  // with their trailing part.
  SmallVector<AffineExpr> exprs;
  unsigned offset = loopsOfDims.size() - shape.size();
  for (auto [i, size] : llvm::enumerate(shape)) {
    if (size == 1)
      exprs.push_back(getAffineConstantExpr(0, ctx));
    else
      exprs.push_back(getAffineDimExpr(loopsOfDims[offset + i], ctx));
  }
  return AffineMap::get(numLoops, 0, exprs, ctx);
}

SmallVector<Value> buildReduction(OpBuilder &b, Location loc, ValueRange inputs,
                                  ArrayRef<AffineMap> inputMaps,
                                  ArrayRef<bool> reduced,
                                  ArrayRef<Type> accTypes,
                                  ArrayRef<double> inits, ReduceBody body) {
  MLIRContext *ctx = b.getContext();
  unsigned rank = reduced.size();
  SmallVector<OpFoldResult> sizes = getKeptSizes(b, loc, inputs[0], reduced);
  SmallVector<Value> outs;
  SmallVector<Type> outTypes;
  for (auto [type, init] : llvm::zip_equal(accTypes, inits)) {
    outs.push_back(createFilledTensor(b, loc, sizes, type, init));
    outTypes.push_back(outs.back().getType());
  }
  SmallVector<AffineMap> maps(inputMaps);
  AffineMap outMap = getProjectionMap(ctx, rank, reduced);
  maps.append(outs.size(), outMap);
  SmallVector<utils::IteratorType> iters;
  for (bool r : reduced)
    iters.push_back(r ? utils::IteratorType::reduction
                      : utils::IteratorType::parallel);
  unsigned numInputs = inputs.size();
  auto generic = linalg::GenericOp::create(
      b, loc, outTypes, inputs, outs, maps, iters,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        SmallVector<Value> results = body(nb, nl, args.take_front(numInputs),
                                          args.drop_front(numInputs));
        linalg::YieldOp::create(nb, nl, results);
      });
  return SmallVector<Value>(generic.getResults());
}

Value insertUnitDims(OpBuilder &b, Location loc, Value t,
                     ArrayRef<bool> reduced) {
  auto type = cast<RankedTensorType>(t.getType());
  SmallVector<int64_t> shape;
  SmallVector<ReassociationIndices> groups;
  unsigned kept = 0;
  for (auto [i, r] : llvm::enumerate(reduced)) {
    if (r) {
      shape.push_back(1);
    } else {
      shape.push_back(type.getDimSize(kept++));
      groups.emplace_back();
    }
    if (groups.empty())
      continue;
    groups.back().push_back(i);
  }
  // Leading unit dims join the first group.
  if (!groups.empty()) {
    ReassociationIndices &first = groups.front();
    SmallVector<int64_t> lead;
    for (int64_t i = 0; i < first.front(); ++i)
      lead.push_back(i);
    first.insert(first.begin(), lead.begin(), lead.end());
  }
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  SmallVector<OpFoldResult> outShape;
  unsigned k = 0;
  for (bool r : reduced)
    outShape.push_back(r ? b.getIndexAttr(1)
                         : tensor::getMixedSize(b, loc, t, k++));
  return tensor::ExpandShapeOp::create(b, loc, resultType, t, groups, outShape);
}

Value finishResult(OpBuilder &b, Location loc, Value t, Type resultType) {
  auto type = cast<RankedTensorType>(resultType);
  Value v = convertElements(b, loc, t, type.getElementType());
  return castToType(b, loc, v, type);
}

FailureOr<SmallVector<bool>> getReductionMask(ArrayRef<int64_t> dims,
                                              int64_t rank) {
  SmallVector<bool> mask(rank, dims.empty());
  for (int64_t d : dims) {
    FailureOr<int64_t> n = normalizeDim(d, rank);
    if (failed(n))
      return failure();
    if (rank > 0)
      mask[*n] = true;
  }
  return mask;
}

Value buildElementwiseMap(
    OpBuilder &b, Location loc, Value like, Type elem, ValueRange inputs,
    ArrayRef<AffineMap> maps,
    function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
  unsigned rank = cast<RankedTensorType>(like.getType()).getRank();
  Value init = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, like), elem);
  SmallVector<AffineMap> allMaps(maps);
  allMaps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, init.getType(), inputs, ValueRange{init}, allMaps, iters,
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               linalg::YieldOp::create(nb, nl, fn(nb, nl, a.drop_back()));
             })
      .getResult(0);
}

} // namespace lowering
} // namespace joint
} // namespace mlir

void mlir::joint::lowering::replaceByFunctionalForm(CallFunctionOp &op,
                                                    StringRef target,
                                                    TypeRange extraResults,
                                                    RewriterBase &rewriter) {
  SmallVector<Type> types(op->getResultTypes());
  types.append(extraResults.begin(), extraResults.end());
  SmallVector<NamedAttribute> attrs;
  for (NamedAttribute attr : op->getAttrs()) {
    StringRef name = attr.getName().getValue();
    // Per-result lists would no longer match the results.
    if (name == "result_meta" || name == "result_names")
      continue;
    if (name == "target")
      attr = rewriter.getNamedAttr(name, rewriter.getStringAttr(target));
    attrs.push_back(attr);
  }
  rewriter.setInsertionPoint(op);
  auto functional = CallFunctionOp::create(rewriter, op.getLoc(), types,
                                           op->getOperands(), attrs);
  rewriter.replaceOp(op,
                     functional->getResults().take_front(op->getNumResults()));
  op = functional;
}

//===- Utils.cpp - Helpers shared by the JointToLinalg families -----------===//
//
// Implements the base pattern (target matching and refusal reporting) and
// the registration of lowering functions,
// schema-argument access, torch's scalar casts and promotion, broadcasting
// maps and the init-tensor / elementwise-generic builders of Utils.h.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "joint/Dialect/Joint/IR/TensorMeta.h"
#include "joint/Support/NamedDiagnostics.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"

using namespace mlir;
using namespace mlir::joint;

std::string mlir::joint::describeOp(CallFunctionOp op) {
  return ("'" + op.getTarget() + "' (node '" + op.getName() + "')").str();
}

InFlightDiagnostic mlir::joint::emitNodeError(CallFunctionOp op) {
  return markNamed(op.emitError(), op.getName());
}

TensorMetaAttr mlir::joint::getTracedMeta(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    auto func =
        dyn_cast_if_present<FunctionOpInterface>(arg.getOwner()->getParentOp());
    if (func && !isa<GraphOp>(func.getOperation()))
      return func.getArgAttrOfType<TensorMetaAttr>(arg.getArgNumber(),
                                                   kMetaAttr);
  }
  return getTensorMeta(value);
}

RankedTensorType mlir::joint::getResultTensorType(CallFunctionOp op,
                                                  unsigned i) {
  if (i >= op->getNumResults())
    return {};
  return dyn_cast<RankedTensorType>(op->getResult(i).getType());
}

//===----------------------------------------------------------------------===//
// Base pattern
//===----------------------------------------------------------------------===//

namespace {
/// Forwards every notification to the conversion's own listener and keeps
/// the last match-failure reason (the conversion driver only records reasons
/// in debug builds).
struct ReasonCapture : public RewriterBase::ForwardingListener {
  using ForwardingListener::ForwardingListener;
  void
  notifyMatchFailure(Location loc,
                     function_ref<void(Diagnostic &)> reasonCallback) override {
    Diagnostic diag(loc, DiagnosticSeverity::Remark);
    reasonCallback(diag);
    reason = diag.str();
    ForwardingListener::notifyMatchFailure(loc, reasonCallback);
  }
  std::string reason;
};
} // namespace

LoweringTypeConverter::LoweringTypeConverter() {
  addConversion([](Type type) { return type; });
}

void LoweringTypeConverter::recordRefusal(Operation *op,
                                          StringRef reason) const {
  refusals[op] = reason.str();
}

StringRef LoweringTypeConverter::getRefusal(Operation *op) const {
  auto it = refusals.find(op);
  return it == refusals.end() ? StringRef() : StringRef(it->second);
}

JointOpConversion::JointOpConversion(const TypeConverter &typeConverter,
                                     MLIRContext *context,
                                     ArrayRef<StringRef> targetNames,
                                     PatternBenefit benefit)
    : OpConversionPattern<CallFunctionOp>(typeConverter, context, benefit) {
  for (StringRef target : targetNames)
    targets.insert(target);
}

LogicalResult
JointOpConversion::matchAndRewrite(CallFunctionOp op, OpAdaptor adaptor,
                                   ConversionPatternRewriter &rewriter) const {
  if (!targets.contains(op.getTarget()))
    return failure();
  // ConversionPatternRewriter hides setListener; the capture forwards every
  // notification to the conversion's own listener, so nothing is lost.
  OpBuilder &builder = rewriter;
  OpBuilder::Listener *previous = builder.getListener();
  ReasonCapture capture(previous);
  builder.setListener(&capture);
  LogicalResult result = rewrite(op, adaptor, rewriter);
  builder.setListener(previous);
  if (failed(result))
    getTypeConverter<LoweringTypeConverter>()->recordRefusal(
        op,
        capture.reason.empty() ? "its pattern did not apply" : capture.reason);
  return result;
}

namespace {
/// The pattern behind one LoweringTable row.
class LoweringPattern : public JointOpConversion {
public:
  LoweringPattern(const TypeConverter &typeConverter, MLIRContext *context,
                  ArrayRef<StringRef> targets, LowerOpFn lower)
      : JointOpConversion(typeConverter, context, targets),
        lower(std::move(lower)) {}

  LogicalResult rewrite(CallFunctionOp op, OpAdaptor adaptor,
                        ConversionPatternRewriter &rewriter) const override {
    return lower(op, adaptor, rewriter);
  }

private:
  LowerOpFn lower;
};
} // namespace

void mlir::joint::LoweringTable::add(ArrayRef<StringRef> targets,
                                     LowerOpFn lower) {
  patterns.add<LoweringPattern>(typeConverter, patterns.getContext(), targets,
                                std::move(lower));
}

void mlir::joint::LoweringTable::addSelf(ArrayRef<StringRef> targets,
                                         LowerSelfOpFn lower) {
  auto lowerFromSelf = [lower = std::move(lower)](
                           CallFunctionOp op, CallFunctionOp::Adaptor adaptor,
                           ConversionPatternRewriter &rewriter) {
    FailureOr<Value> self = getTensorArg(op, adaptor, rewriter, {0, "self"});
    RankedTensorType resultType = getResultTensorType(op);
    if (failed(self) || !resultType)
      return rewriter.notifyMatchFailure(op, "expects a tensor and a result");
    return lower(op, adaptor, *self, resultType, rewriter);
  };
  add(targets, std::move(lowerFromSelf));
}

//===----------------------------------------------------------------------===//
// Schema arguments
//===----------------------------------------------------------------------===//

Attribute mlir::joint::getArgAttr(CallFunctionOp op, ArgRef arg) {
  ArrayAttr args = op.getArgsAttr();
  DictionaryAttr kwargs = op.getKwargsAttr();
  if (!args && !kwargs) {
    if (arg.index < op.getInputs().size())
      return OperandRefAttr::get(op.getContext(), arg.index);
    return {};
  }
  if (args && arg.index < args.size())
    return args[arg.index];
  if (kwargs && !arg.name.empty())
    return kwargs.get(arg.name);
  return {};
}

bool mlir::joint::isNoneArg(CallFunctionOp op, ArgRef arg) {
  Attribute attr = getArgAttr(op, arg);
  return !attr || isa<UnitAttr>(attr);
}

/// Describes `arg` for failure reasons: "argument 1 ('other')".
static std::string argName(ArgRef arg) {
  return ("argument " + Twine(arg.index) + " ('" + arg.name + "')").str();
}

FailureOr<Value> mlir::joint::getTensorArg(CallFunctionOp op,
                                           CallFunctionOp::Adaptor adaptor,
                                           ConversionPatternRewriter &rewriter,
                                           ArgRef arg) {
  auto ref = dyn_cast_if_present<OperandRefAttr>(getArgAttr(op, arg));
  if (!ref || ref.getIndex() >= adaptor.getInputs().size())
    return rewriter.notifyMatchFailure(op, argName(arg) + " is not a tensor");
  Value value = adaptor.getInputs()[ref.getIndex()];
  if (!isa<RankedTensorType>(value.getType()))
    return rewriter.notifyMatchFailure(op, argName(arg) +
                                               " is not a ranked tensor");
  return value;
}

/// The integer constant in `attr` (bools excluded), if any.
static std::optional<int64_t> getIntConstant(Attribute attr) {
  if (isa_and_present<BoolAttr>(attr))
    return std::nullopt;
  if (auto intAttr = dyn_cast_if_present<IntegerAttr>(attr))
    return intAttr.getValue().getSExtValue();
  return std::nullopt;
}

/// `value` (an integer of any width, or index) as an index value.
static Value toIndex(OpBuilder &b, Location loc, Value value) {
  if (value.getType().isIndex())
    return value;
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), value);
}

FailureOr<Value> mlir::joint::getIntArg(CallFunctionOp op,
                                        CallFunctionOp::Adaptor adaptor,
                                        ConversionPatternRewriter &rewriter,
                                        ArgRef arg,
                                        std::optional<int64_t> defaultValue) {
  Attribute attr = getArgAttr(op, arg);
  Location loc = op.getLoc();
  if (!attr && defaultValue)
    return Value(arith::ConstantIndexOp::create(rewriter, loc, *defaultValue));
  if (std::optional<int64_t> constant = getIntConstant(attr))
    return Value(arith::ConstantIndexOp::create(rewriter, loc, *constant));
  if (auto ref = dyn_cast_if_present<OperandRefAttr>(attr)) {
    if (ref.getIndex() < adaptor.getInputs().size()) {
      Value value = adaptor.getInputs()[ref.getIndex()];
      if (value.getType().isSignlessInteger() || value.getType().isIndex())
        return toIndex(rewriter, loc, value);
    }
  }
  return rewriter.notifyMatchFailure(op, argName(arg) + " is not an int");
}

/// The number in `attr` (float, int, or bool as 0/1), if any.
static std::optional<double> getNumberConstant(Attribute attr) {
  if (auto floatAttr = dyn_cast_if_present<FloatAttr>(attr))
    return floatAttr.getValueAsDouble();
  if (auto boolAttr = dyn_cast_if_present<BoolAttr>(attr))
    return boolAttr.getValue() ? 1.0 : 0.0;
  if (std::optional<int64_t> constant = getIntConstant(attr))
    return static_cast<double>(*constant);
  return std::nullopt;
}
/// The value of `attr` when it is an `AttrT` (BoolAttr, StringAttr).
template <typename AttrT>
static auto getAttrValue(Attribute attr)
    -> std::optional<decltype(std::declval<AttrT>().getValue())> {
  if (auto typed = dyn_cast_if_present<AttrT>(attr))
    return typed.getValue();
  return std::nullopt;
}

template <typename T>
FailureOr<T> mlir::joint::getConstantArg(CallFunctionOp op,
                                         ConversionPatternRewriter &rewriter,
                                         ArgRef arg,
                                         std::optional<T> defaultValue) {
  constexpr bool isBool = std::is_same_v<T, bool>;
  Attribute attr = getArgAttr(op, arg);
  bool absent = !attr || (isBool && isa<UnitAttr>(attr));
  if (absent && defaultValue)
    return *defaultValue;
  std::optional<T> value;
  StringRef expected;
  if constexpr (std::is_same_v<T, int64_t>) {
    value = getIntConstant(attr);
    expected = "a constant int";
  } else if constexpr (std::is_same_v<T, double>) {
    value = getNumberConstant(attr);
    expected = "a constant number";
  } else if constexpr (isBool) {
    value = getAttrValue<BoolAttr>(attr);
    expected = "a constant bool";
  } else {
    static_assert(std::is_same_v<T, StringRef>, "no constant reader for T");
    value = getAttrValue<StringAttr>(attr);
    expected = "a string";
  }
  if (value)
    return *value;
  return rewriter.notifyMatchFailure(op, argName(arg) + " is not " + expected);
}

// The argument types torch schemas pass as constants.
#define INSTANTIATE_GET_CONSTANT_ARG(T)                                        \
  template FailureOr<T> mlir::joint::getConstantArg(                           \
      CallFunctionOp, ConversionPatternRewriter &, ArgRef, std::optional<T>);
INSTANTIATE_GET_CONSTANT_ARG(int64_t)
INSTANTIATE_GET_CONSTANT_ARG(double)
INSTANTIATE_GET_CONSTANT_ARG(bool)
INSTANTIATE_GET_CONSTANT_ARG(StringRef)
#undef INSTANTIATE_GET_CONSTANT_ARG

/// The elements of list argument `arg` (a scalar counts as a one-element
/// list, as torch's int[] accepts), each read with `readElement`; fails when
/// the argument is not passed or `readElement` refuses an element (it says
/// why through notifyMatchFailure).
template <typename T>
static FailureOr<SmallVector<T>>
readListArg(CallFunctionOp op, ConversionPatternRewriter &rewriter, ArgRef arg,
            function_ref<FailureOr<T>(Attribute)> readElement) {
  Attribute attr = getArgAttr(op, arg);
  SmallVector<Attribute> elements;
  if (auto array = dyn_cast_if_present<ArrayAttr>(attr))
    elements.assign(array.begin(), array.end());
  else if (attr && !isa<UnitAttr>(attr))
    elements.push_back(attr);
  else
    return rewriter.notifyMatchFailure(op, argName(arg) + " is not passed");
  SmallVector<T> result;
  for (Attribute element : elements) {
    FailureOr<T> value = readElement(element);
    if (failed(value))
      return failure();
    result.push_back(*value);
  }
  return result;
}

FailureOr<SmallVector<OpFoldResult>>
mlir::joint::getIntListArg(CallFunctionOp op, CallFunctionOp::Adaptor adaptor,
                           ConversionPatternRewriter &rewriter, ArgRef arg) {
  auto readElement = [&](Attribute element) -> FailureOr<OpFoldResult> {
    if (std::optional<int64_t> constant = getIntConstant(element))
      return OpFoldResult(rewriter.getIndexAttr(*constant));
    auto ref = dyn_cast<OperandRefAttr>(element);
    if (!ref || ref.getIndex() >= adaptor.getInputs().size())
      return rewriter.notifyMatchFailure(op,
                                         argName(arg) + " is not an int list");
    Value value = adaptor.getInputs()[ref.getIndex()];
    if (!value.getType().isSignlessInteger() && !value.getType().isIndex())
      return rewriter.notifyMatchFailure(op, argName(arg) +
                                                 " holds a non-int operand");
    return OpFoldResult(toIndex(rewriter, op.getLoc(), value));
  };
  return readListArg<OpFoldResult>(op, rewriter, arg, readElement);
}

FailureOr<SmallVector<int64_t>> mlir::joint::getConstantIntListArg(
    CallFunctionOp op, ConversionPatternRewriter &rewriter, ArgRef arg) {
  auto readElement = [&](Attribute element) -> FailureOr<int64_t> {
    if (std::optional<int64_t> constant = getIntConstant(element))
      return *constant;
    return rewriter.notifyMatchFailure(
        op, argName(arg) + " is not a list of constant ints");
  };
  return readListArg<int64_t>(op, rewriter, arg, readElement);
}

FailureOr<Type>
mlir::joint::getOptionalDtype(CallFunctionOp op,
                              ConversionPatternRewriter &rewriter, ArgRef arg) {
  Attribute attr = getArgAttr(op, arg);
  if (!attr || isa<UnitAttr>(attr))
    return Type();
  if (auto dtype = dyn_cast<ScalarTypeAttr>(attr))
    return getElementType(op.getContext(), dtype.getValue());
  return rewriter.notifyMatchFailure(op, argName(arg) + " is not a dtype");
}

FailureOr<Value> mlir::joint::getScalarArg(CallFunctionOp op,
                                           CallFunctionOp::Adaptor adaptor,
                                           ConversionPatternRewriter &rewriter,
                                           ArgRef arg, Type type,
                                           std::optional<double> defaultValue) {
  Attribute attr = getArgAttr(op, arg);
  Location loc = op.getLoc();
  if (auto ref = dyn_cast_if_present<OperandRefAttr>(attr)) {
    if (ref.getIndex() >= adaptor.getInputs().size())
      return rewriter.notifyMatchFailure(op, argName(arg) +
                                                 " refers to no operand");
    Value value = adaptor.getInputs()[ref.getIndex()];
    if (auto tensorType = dyn_cast<RankedTensorType>(value.getType())) {
      if (tensorType.getRank() != 0)
        return rewriter.notifyMatchFailure(op, argName(arg) +
                                                   " is not a 0-d tensor");
      value = tensor::ExtractOp::create(rewriter, loc, value, ValueRange{});
    }
    return convertScalar(rewriter, loc, value, type);
  }
  // Integer scalars stay exact when the target is an integer type.
  if (std::optional<int64_t> constant = getIntConstant(attr)) {
    if (isa<IntegerType>(type) && type.getIntOrFloatBitWidth() > 1)
      return Value(arith::ConstantOp::create(
          rewriter, loc, rewriter.getIntegerAttr(type, *constant)));
  }
  FailureOr<double> number =
      getConstantArg<double>(op, rewriter, arg, defaultValue);
  if (failed(number))
    return failure();
  return createScalarConstant(rewriter, loc, type, *number);
}

FailureOr<int64_t> mlir::joint::normalizeDim(int64_t dim, int64_t rank) {
  int64_t bound = std::max<int64_t>(rank, 1);
  if (dim < -bound || dim >= bound)
    return failure();
  return dim < 0 ? dim + bound : dim;
}

FailureOr<int64_t>
mlir::joint::normalizeDim(CallFunctionOp op,
                          ConversionPatternRewriter &rewriter, int64_t dim,
                          int64_t rank) {
  FailureOr<int64_t> normalized = normalizeDim(dim, rank);
  if (failed(normalized))
    return rewriter.notifyMatchFailure(op, "dimension " + Twine(dim) +
                                               " out of range for rank " +
                                               Twine(rank));
  return normalized;
}

FailureOr<int64_t> mlir::joint::getDimArg(CallFunctionOp op,
                                          ConversionPatternRewriter &rewriter,
                                          ArgRef arg, int64_t rank,
                                          std::optional<int64_t> defaultValue) {
  FailureOr<int64_t> dim =
      getConstantArg<int64_t>(op, rewriter, arg, defaultValue);
  if (failed(dim))
    return failure();
  return normalizeDim(op, rewriter, *dim, rank);
}

//===----------------------------------------------------------------------===//
// Types and scalars
//===----------------------------------------------------------------------===//

/// 0 for bool, 1 for integers, 2 for floats (torch's promotion categories).
static int getCategory(Type type) {
  if (type.isInteger(1))
    return 0;
  if (isa<FloatType>(type))
    return 2;
  return 1;
}

Type mlir::joint::promoteTypes(Type a, Type b) {
  if (a == b)
    return a;
  int ca = getCategory(a), cb = getCategory(b);
  if (ca != cb)
    return ca > cb ? a : b;
  unsigned wa = a.getIntOrFloatBitWidth(), wb = b.getIntOrFloatBitWidth();
  // bf16 with f16 (same width, different formats) promotes to f32.
  if (ca == 2 && wa == wb)
    return Float32Type::get(a.getContext());
  return wa >= wb ? a : b;
}

Type mlir::joint::getComputeType(Type type) {
  if (type.isBF16() || type.isF16())
    return Float32Type::get(type.getContext());
  return type;
}

Value mlir::joint::convertScalar(OpBuilder &b, Location loc, Value value,
                                 Type toType) {
  Type from = value.getType();
  if (from == toType)
    return value;
  if (from.isIndex())
    return convertScalar(
        b, loc, arith::IndexCastOp::create(b, loc, b.getI64Type(), value),
        toType);
  if (toType.isIndex())
    return arith::IndexCastOp::create(
        b, loc, toType, convertScalar(b, loc, value, b.getI64Type()));
  if (toType.isInteger(1)) {
    Value zero = createScalarConstant(b, loc, from, 0.0);
    if (isa<FloatType>(from))
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, value,
                                   zero);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, value, zero);
  }
  if (from.isInteger(1)) {
    if (isa<FloatType>(toType))
      return arith::UIToFPOp::create(b, loc, toType, value);
    return arith::ExtUIOp::create(b, loc, toType, value);
  }
  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(toType);
  if (fromFloat && toFloat) {
    if (fromFloat.getWidth() < toFloat.getWidth())
      return arith::ExtFOp::create(b, loc, toType, value);
    if (fromFloat.getWidth() > toFloat.getWidth())
      return arith::TruncFOp::create(b, loc, toType, value);
    // bf16 <-> f16: through f32, as torch does.
    Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
    return arith::TruncFOp::create(b, loc, toType, wide);
  }
  if (toFloat)
    return arith::SIToFPOp::create(b, loc, toType, value);
  if (fromFloat)
    return arith::FPToSIOp::create(b, loc, toType, value);
  unsigned fromWidth = from.getIntOrFloatBitWidth();
  unsigned toWidth = toType.getIntOrFloatBitWidth();
  if (fromWidth < toWidth)
    return arith::ExtSIOp::create(b, loc, toType, value);
  return arith::TruncIOp::create(b, loc, toType, value);
}

Value mlir::joint::createScalarConstant(OpBuilder &b, Location loc, Type type,
                                        double value) {
  if (isa<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
  if (type.isIndex())
    return arith::ConstantIndexOp::create(b, loc, static_cast<int64_t>(value));
  if (type.isInteger(1))
    return arith::ConstantOp::create(b, loc, b.getBoolAttr(value != 0.0));
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

//===----------------------------------------------------------------------===//
// Shapes and builders
//===----------------------------------------------------------------------===//

SmallVector<OpFoldResult>
mlir::joint::getTensorSizes(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<OpFoldResult> sizes;
  for (int64_t i = 0, e = type.getRank(); i < e; ++i) {
    if (type.isDynamicDim(i))
      sizes.push_back(tensor::DimOp::create(b, loc, tensor, i).getResult());
    else
      sizes.push_back(b.getIndexAttr(type.getDimSize(i)));
  }
  return sizes;
}

SmallVector<Value> mlir::joint::getDynamicSizes(OpBuilder &b, Location loc,
                                                Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<Value> sizes;
  for (int64_t i = 0, e = type.getRank(); i < e; ++i)
    if (type.isDynamicDim(i))
      sizes.push_back(tensor::DimOp::create(b, loc, tensor, i));
  return sizes;
}

Value mlir::joint::createEmptyTensor(OpBuilder &b, Location loc,
                                     ArrayRef<OpFoldResult> sizes,
                                     Type elementType) {
  return tensor::EmptyOp::create(b, loc, sizes, elementType);
}

Value mlir::joint::createInitTensor(OpBuilder &b, Location loc,
                                    ArrayRef<OpFoldResult> sizes,
                                    Type elementType, Value fillValue) {
  Value empty = createEmptyTensor(b, loc, sizes, elementType);
  Value fill = convertScalar(b, loc, fillValue, elementType);
  return linalg::FillOp::create(b, loc, ValueRange{fill}, ValueRange{empty})
      .getResult(0);
}

Value mlir::joint::createZeroInitTensor(OpBuilder &b, Location loc,
                                        ArrayRef<OpFoldResult> sizes,
                                        Type elementType) {
  return createInitTensor(b, loc, sizes, elementType,
                          createScalarConstant(b, loc, elementType, 0.0));
}

AffineMap mlir::joint::getBroadcastIndexingMap(RankedTensorType operandType,
                                               RankedTensorType resultType) {
  int64_t rank = operandType.getRank(), resultRank = resultType.getRank();
  MLIRContext *context = operandType.getContext();
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t resultDim = resultRank - rank + i;
    if (operandType.getDimSize(i) == 1 && resultType.getDimSize(resultDim) != 1)
      exprs.push_back(getAffineConstantExpr(0, context));
    else
      exprs.push_back(getAffineDimExpr(resultDim, context));
  }
  return AffineMap::get(resultRank, 0, exprs, context);
}

FailureOr<SmallVector<OpFoldResult>>
mlir::joint::getBroadcastResultSizes(OpBuilder &b, Location loc,
                                     ValueRange operands,
                                     RankedTensorType resultType) {
  int64_t resultRank = resultType.getRank();
  SmallVector<OpFoldResult> sizes;
  for (int64_t j = 0; j < resultRank; ++j) {
    if (!resultType.isDynamicDim(j)) {
      sizes.push_back(b.getIndexAttr(resultType.getDimSize(j)));
      continue;
    }
    OpFoldResult size;
    for (Value operand : operands) {
      auto type = dyn_cast<RankedTensorType>(operand.getType());
      if (!type || j < resultRank - type.getRank())
        continue;
      int64_t i = j - (resultRank - type.getRank());
      if (type.isDynamicDim(i)) {
        size = tensor::DimOp::create(b, loc, operand, i).getResult();
        break;
      }
      if (type.getDimSize(i) != 1) {
        size = b.getIndexAttr(type.getDimSize(i));
        break;
      }
    }
    if (!size)
      return failure();
    sizes.push_back(size);
  }
  return sizes;
}

Value mlir::joint::createElementwiseGeneric(OpBuilder &b, Location loc,
                                            ValueRange inputs,
                                            RankedTensorType resultType,
                                            ArrayRef<OpFoldResult> resultSizes,
                                            ElementwiseBodyBuilder body) {
  SmallVector<Value> dynamicSizes;
  for (int64_t i = 0, e = resultType.getRank(); i < e; ++i)
    if (resultType.isDynamicDim(i))
      dynamicSizes.push_back(
          getValueOrCreateConstantIndexOp(b, loc, resultSizes[i]));
  Value init = tensor::EmptyOp::create(b, loc, resultType, dynamicSizes);
  SmallVector<AffineMap> maps;
  for (Value input : inputs)
    maps.push_back(getBroadcastIndexingMap(
        cast<RankedTensorType>(input.getType()), resultType));
  maps.push_back(b.getMultiDimIdentityMap(resultType.getRank()));
  SmallVector<utils::IteratorType> iterators(resultType.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value result = body(nested, nestedLoc, args.drop_back());
        linalg::YieldOp::create(nested, nestedLoc, result);
      });
  return generic.getResult(0);
}

Value mlir::joint::broadcastToShape(OpBuilder &b, Location loc, Value input,
                                    RankedTensorType resultType,
                                    ArrayRef<OpFoldResult> resultSizes) {
  Type elementType = resultType.getElementType();
  return createElementwiseGeneric(
      b, loc, ValueRange{input}, resultType, resultSizes,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        return convertScalar(nested, nestedLoc, args[0], elementType);
      });
}

Value mlir::joint::reshapeTo(OpBuilder &b, Location loc, Value input,
                             RankedTensorType resultType,
                             ArrayRef<OpFoldResult> resultSizes) {
  auto inputType = cast<RankedTensorType>(input.getType());
  if (inputType.getShape() == resultType.getShape() &&
      inputType.getNumDynamicDims() <= 1) {
    // Equal numel and all other dims equal: the `?` dim is equal too.
    if (inputType.getElementType() == resultType.getElementType())
      return input;
  }
  if (inputType.getRank() != resultType.getRank()) {
    bool collapse = inputType.getRank() > resultType.getRank();
    std::optional<SmallVector<ReassociationIndices>> reassociation =
        collapse ? getReassociationIndicesForReshape(inputType, resultType)
                 : getReassociationIndicesForReshape(resultType, inputType);
    // With more than one `?` per group the regrouping is ambiguous.
    auto unambiguous = [&](RankedTensorType wide) {
      for (const ReassociationIndices &group : *reassociation) {
        int dynamic = 0;
        for (int64_t i : group)
          dynamic += wide.isDynamicDim(i);
        if (dynamic > 1)
          return false;
      }
      return true;
    };
    if (reassociation && unambiguous(collapse ? inputType : resultType)) {
      if (collapse)
        return tensor::CollapseShapeOp::create(b, loc, resultType, input,
                                               *reassociation);
      return tensor::ExpandShapeOp::create(b, loc, resultType, input,
                                           *reassociation, resultSizes);
    }
  }
  SmallVector<Value> shape;
  for (OpFoldResult size : resultSizes)
    shape.push_back(getValueOrCreateConstantIndexOp(b, loc, size));
  Value shapeTensor = tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({resultType.getRank()}, b.getIndexType()),
      shape);
  return tensor::ReshapeOp::create(b, loc, resultType, input, shapeTensor);
}

template <typename Op, typename Fn>
OpFoldResult IndexArith::foldOrCreate(OpFoldResult x, OpFoldResult y, Fn fn) {
  std::optional<int64_t> cx = getConstantIntValue(x),
                         cy = getConstantIntValue(y);
  if (cx && cy)
    return b.getIndexAttr(fn(*cx, *cy));
  return Op::create(b, loc, getValueOrCreateConstantIndexOp(b, loc, x),
                    getValueOrCreateConstantIndexOp(b, loc, y))
      .getResult();
}

OpFoldResult IndexArith::add(OpFoldResult x, OpFoldResult y) {
  if (isZeroInteger(y))
    return x;
  return foldOrCreate<arith::AddIOp>(
      x, y, [](int64_t l, int64_t r) { return l + r; });
}
OpFoldResult IndexArith::sub(OpFoldResult x, OpFoldResult y) {
  if (isZeroInteger(y))
    return x;
  return foldOrCreate<arith::SubIOp>(
      x, y, [](int64_t l, int64_t r) { return l - r; });
}
OpFoldResult IndexArith::mul(OpFoldResult x, OpFoldResult y) {
  if (isOneInteger(y))
    return x;
  if (isOneInteger(x))
    return y;
  return foldOrCreate<arith::MulIOp>(
      x, y, [](int64_t l, int64_t r) { return l * r; });
}
OpFoldResult IndexArith::div(OpFoldResult x, OpFoldResult y) {
  if (isOneInteger(y))
    return x;
  return foldOrCreate<arith::DivSIOp>(
      x, y, [](int64_t l, int64_t r) { return l / r; });
}
OpFoldResult IndexArith::ceilDiv(OpFoldResult x, OpFoldResult y) {
  if (isOneInteger(y))
    return x;
  return foldOrCreate<arith::CeilDivSIOp>(
      x, y, [](int64_t l, int64_t r) { return (l + r - 1) / r; });
}
OpFoldResult IndexArith::min(OpFoldResult x, OpFoldResult y) {
  return foldOrCreate<arith::MinSIOp>(
      x, y, [](int64_t l, int64_t r) { return std::min(l, r); });
}
OpFoldResult IndexArith::max(OpFoldResult x, OpFoldResult y) {
  return foldOrCreate<arith::MaxSIOp>(
      x, y, [](int64_t l, int64_t r) { return std::max(l, r); });
}

LogicalResult
mlir::joint::replaceWithResult(ConversionPatternRewriter &rewriter,
                               Operation *op, Value result,
                               RankedTensorType resultType) {
  if (result.getType() != resultType)
    result = tensor::CastOp::create(rewriter, op->getLoc(), resultType, result);
  rewriter.replaceOp(op, result);
  return success();
}

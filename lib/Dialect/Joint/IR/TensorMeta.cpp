//===- TensorMeta.cpp - Per-value tensor facts ----------------------------===//
//
// torch dtype <-> MLIR element type mapping and the one query API passes use
// for sizes, strides, storage and bytes of any value.
//
//===----------------------------------------------------------------------===//

#include "joint/Dialect/Joint/IR/TensorMeta.h"
#include "joint/Dialect/AO/IR/AOOps.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::joint;

namespace {

/// The builtin type class of a dtype's element type.
enum class TypeKind { integer, floating, complex };

/// One torch dtype: its MLIR element type (built, and recognised without
/// building it), its element size in bytes (c10::elementSize) and its class.
struct DTypeInfo {
  ScalarType dtype;
  Type (*make)(MLIRContext *);
  bool (*is)(Type);
  int64_t bytes;
  TypeKind kind;
};

template <unsigned Width, IntegerType::SignednessSemantics Sign>
Type makeInt(MLIRContext *ctx) {
  return IntegerType::get(ctx, Width, Sign);
}
template <unsigned Width, IntegerType::SignednessSemantics Sign>
bool isInt(Type t) {
  auto i = dyn_cast<IntegerType>(t);
  return i && i.getWidth() == Width && i.getSignedness() == Sign;
}
template <typename FloatT>
Type makeFloat(MLIRContext *ctx) {
  return FloatT::get(ctx);
}
template <typename FloatT>
bool isFloat(Type t) {
  return isa<FloatT>(t);
}
template <typename FloatT>
Type makeComplex(MLIRContext *ctx) {
  return ComplexType::get(FloatT::get(ctx));
}
template <typename FloatT>
bool isComplex(Type t) {
  auto c = dyn_cast<ComplexType>(t);
  return c && isa<FloatT>(c.getElementType());
}

template <unsigned Width, IntegerType::SignednessSemantics Sign>
constexpr DTypeInfo intDType(ScalarType dtype) {
  return {dtype, makeInt<Width, Sign>, isInt<Width, Sign>,
          Width < 8 ? 1 : Width / 8, TypeKind::integer};
}
template <typename FloatT>
constexpr DTypeInfo floatDType(ScalarType dtype, int64_t bytes) {
  return {dtype, makeFloat<FloatT>, isFloat<FloatT>, bytes, TypeKind::floating};
}
template <typename FloatT>
constexpr DTypeInfo complexDType(ScalarType dtype, int64_t bytes) {
  return {dtype, makeComplex<FloatT>, isComplex<FloatT>, bytes,
          TypeKind::complex};
}

constexpr auto kSignless = IntegerType::Signless;
constexpr auto kUnsigned = IntegerType::Unsigned;
const DTypeInfo kDTypes[] = {
    intDType<1, kSignless>(ScalarType::bool_),
    intDType<8, kUnsigned>(ScalarType::uint8),
    intDType<16, kUnsigned>(ScalarType::uint16),
    intDType<32, kUnsigned>(ScalarType::uint32),
    intDType<64, kUnsigned>(ScalarType::uint64),
    intDType<8, kSignless>(ScalarType::int8),
    intDType<16, kSignless>(ScalarType::int16),
    intDType<32, kSignless>(ScalarType::int32),
    intDType<64, kSignless>(ScalarType::int64),
    floatDType<Float16Type>(ScalarType::float16, 2),
    floatDType<BFloat16Type>(ScalarType::bfloat16, 2),
    floatDType<Float32Type>(ScalarType::float32, 4),
    floatDType<Float64Type>(ScalarType::float64, 8),
    floatDType<Float8E5M2Type>(ScalarType::float8_e5m2, 1),
    floatDType<Float8E4M3FNType>(ScalarType::float8_e4m3fn, 1),
    floatDType<Float8E5M2FNUZType>(ScalarType::float8_e5m2fnuz, 1),
    floatDType<Float8E4M3FNUZType>(ScalarType::float8_e4m3fnuz, 1),
    complexDType<Float16Type>(ScalarType::complex32, 4),
    complexDType<Float32Type>(ScalarType::complex64, 8),
    complexDType<Float64Type>(ScalarType::complex128, 16),
};

const DTypeInfo &infoOf(ScalarType dtype) {
  for (const DTypeInfo &info : kDTypes)
    if (info.dtype == dtype)
      return info;
  llvm_unreachable("unhandled ScalarType");
}

} // namespace

Type mlir::joint::getElementType(MLIRContext *ctx, ScalarType dtype) {
  return infoOf(dtype).make(ctx);
}

std::optional<ScalarType> mlir::joint::getScalarType(Type t) {
  // One class test, then only the rows of that class (verifiers ask this
  // for every value of a graph). Not isa<FloatType>: an interface test is
  // slower than the concrete float types the floating rows compare.
  TypeKind kind = isa<IntegerType>(t)   ? TypeKind::integer
                  : isa<ComplexType>(t) ? TypeKind::complex
                                        : TypeKind::floating;
  for (const DTypeInfo &info : kDTypes)
    if (info.kind == kind && info.is(t))
      return info.dtype;
  return std::nullopt;
}

int64_t mlir::joint::getElementBytes(ScalarType dtype) {
  return infoOf(dtype).bytes;
}

TensorMetaAttr mlir::joint::getTensorMeta(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    auto graph = dyn_cast_or_null<GraphOp>(arg.getOwner()->getParentOp());
    if (!graph)
      return {};
    DictionaryAttr attrs = graph.getArgAttrDict(arg.getArgNumber());
    return attrs ? attrs.getAs<TensorMetaAttr>(kMetaAttr) : TensorMetaAttr();
  }
  Operation *def = value.getDefiningOp();
  if (auto op = dyn_cast<CallFunctionOp>(def))
    return dyn_cast_or_null<TensorMetaAttr>(
        op.getResultMetaAt(cast<OpResult>(value).getResultNumber()));
  // ao ops keep their source's layout; the first operand is the source.
  if (def && isa_and_nonnull<ao::AODialect>(def->getDialect()) &&
      def->getNumOperands() > 0)
    return getTensorMeta(def->getOperand(0));
  return {};
}

std::optional<int64_t> mlir::joint::getStorageId(Value value) {
  if (TensorMetaAttr meta = getTensorMeta(value))
    return meta.getStorage();
  return std::nullopt;
}

void mlir::joint::followStorage(Value value, int64_t oldId) {
  std::optional<int64_t> newId = getStorageId(value);
  if (!newId || *newId == oldId)
    return;
  SmallVector<Value> worklist{value};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      auto op = dyn_cast<CallFunctionOp>(user);
      ArrayAttr metas = op ? op.getResultMetaAttr() : ArrayAttr();
      if (!metas)
        continue;
      SmallVector<Attribute> updated(metas.begin(), metas.end());
      bool changed = false;
      for (auto [i, a] : llvm::enumerate(updated)) {
        auto m = dyn_cast_or_null<TensorMetaAttr>(a);
        if (!m || m.getStorage() != oldId || i >= op->getNumResults())
          continue;
        a = TensorMetaAttr::get(m.getContext(), m.getSizes(), m.getStrides(),
                                m.getOffset(), m.getDevice(), *newId);
        worklist.push_back(op->getResult(i));
        changed = true;
      }
      if (changed)
        op.setResultMetaAttr(ArrayAttr::get(op.getContext(), updated));
    }
  }
}

std::optional<int64_t> mlir::joint::getNumBytesHint(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return std::nullopt;
  std::optional<ScalarType> dtype = getScalarType(type.getElementType());
  if (!dtype)
    return std::nullopt;
  std::optional<int64_t> numel;
  if (TensorMetaAttr meta = getTensorMeta(value))
    numel = meta.getNumElementsHint();
  else if (type.hasStaticShape())
    numel = type.getNumElements();
  if (!numel)
    return std::nullopt;
  return *numel * getElementBytes(*dtype);
}

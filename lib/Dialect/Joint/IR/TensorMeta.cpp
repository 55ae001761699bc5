//===- TensorMeta.cpp - Per-value tensor facts -----------------*- C++ -*-===//
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

Type mlir::joint::getElementType(MLIRContext *ctx, ScalarType dtype) {
  Builder b(ctx);
  switch (dtype) {
  case ScalarType::uint8:
    return IntegerType::get(ctx, 8, IntegerType::Unsigned);
  case ScalarType::uint16:
    return IntegerType::get(ctx, 16, IntegerType::Unsigned);
  case ScalarType::uint32:
    return IntegerType::get(ctx, 32, IntegerType::Unsigned);
  case ScalarType::uint64:
    return IntegerType::get(ctx, 64, IntegerType::Unsigned);
  case ScalarType::int8:
    return b.getI8Type();
  case ScalarType::int16:
    return b.getI16Type();
  case ScalarType::int32:
    return b.getI32Type();
  case ScalarType::int64:
    return b.getI64Type();
  case ScalarType::bool_:
    return b.getI1Type();
  case ScalarType::float16:
    return b.getF16Type();
  case ScalarType::bfloat16:
    return b.getBF16Type();
  case ScalarType::float32:
    return b.getF32Type();
  case ScalarType::float64:
    return b.getF64Type();
  case ScalarType::complex32:
    return ComplexType::get(b.getF16Type());
  case ScalarType::complex64:
    return ComplexType::get(b.getF32Type());
  case ScalarType::complex128:
    return ComplexType::get(b.getF64Type());
  case ScalarType::float8_e5m2:
    return Float8E5M2Type::get(ctx);
  case ScalarType::float8_e4m3fn:
    return Float8E4M3FNType::get(ctx);
  case ScalarType::float8_e5m2fnuz:
    return Float8E5M2FNUZType::get(ctx);
  case ScalarType::float8_e4m3fnuz:
    return Float8E4M3FNUZType::get(ctx);
  }
  llvm_unreachable("unhandled ScalarType");
}

std::optional<ScalarType> mlir::joint::getScalarType(Type t) {
  if (auto i = dyn_cast<IntegerType>(t)) {
    if (i.getWidth() == 1 && i.isSignless())
      return ScalarType::bool_;
    if (i.isUnsigned()) {
      switch (i.getWidth()) {
      case 8:
        return ScalarType::uint8;
      case 16:
        return ScalarType::uint16;
      case 32:
        return ScalarType::uint32;
      case 64:
        return ScalarType::uint64;
      }
      return std::nullopt;
    }
    if (!i.isSignless())
      return std::nullopt;
    switch (i.getWidth()) {
    case 8:
      return ScalarType::int8;
    case 16:
      return ScalarType::int16;
    case 32:
      return ScalarType::int32;
    case 64:
      return ScalarType::int64;
    }
    return std::nullopt;
  }
  if (t.isF16())
    return ScalarType::float16;
  if (t.isBF16())
    return ScalarType::bfloat16;
  if (t.isF32())
    return ScalarType::float32;
  if (t.isF64())
    return ScalarType::float64;
  if (isa<Float8E5M2Type>(t))
    return ScalarType::float8_e5m2;
  if (isa<Float8E4M3FNType>(t))
    return ScalarType::float8_e4m3fn;
  if (isa<Float8E5M2FNUZType>(t))
    return ScalarType::float8_e5m2fnuz;
  if (isa<Float8E4M3FNUZType>(t))
    return ScalarType::float8_e4m3fnuz;
  if (auto c = dyn_cast<ComplexType>(t)) {
    Type e = c.getElementType();
    if (e.isF16())
      return ScalarType::complex32;
    if (e.isF32())
      return ScalarType::complex64;
    if (e.isF64())
      return ScalarType::complex128;
  }
  return std::nullopt;
}

int64_t mlir::joint::getElementBytes(ScalarType dtype) {
  switch (dtype) {
  case ScalarType::uint8:
  case ScalarType::int8:
  case ScalarType::bool_:
  case ScalarType::float8_e5m2:
  case ScalarType::float8_e4m3fn:
  case ScalarType::float8_e5m2fnuz:
  case ScalarType::float8_e4m3fnuz:
    return 1;
  case ScalarType::int16:
  case ScalarType::uint16:
  case ScalarType::float16:
  case ScalarType::bfloat16:
    return 2;
  case ScalarType::int32:
  case ScalarType::uint32:
  case ScalarType::float32:
  case ScalarType::complex32:
    return 4;
  case ScalarType::int64:
  case ScalarType::uint64:
  case ScalarType::float64:
  case ScalarType::complex64:
    return 8;
  case ScalarType::complex128:
    return 16;
  }
  llvm_unreachable("unhandled ScalarType");
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

//===- SymInt.cpp - SymInt queries and arithmetic -------------------------===//
//
// The SymInt family of convert-joint-to-linalg. SymInt values are `i64`:
// `sym_size.int` is `tensor.dim` (a constant for static dims), `sym_numel`
// the product of the dims, `sym_stride` / `sym_storage_offset` the traced
// value when it is static (refused naming the symbol otherwise), and the
// Python arithmetic FX records on SymInts (`operator::mul`, `_operator::add`,
// floordiv and mod with Python's floor semantics, comparisons as `i1`)
// `arith` ops.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "joint/Conversion/JointToLinalg/JointToLinalg.h"
#include "joint/Dialect/Joint/IR/TensorMeta.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::joint;

namespace {

/// An int argument of a SymInt op as an i64 value: a constant or a SymInt
/// operand.
FailureOr<Value> getI64Arg(CallFunctionOp op, CallFunctionOp::Adaptor adaptor,
                           ConversionPatternRewriter &rewriter, ArgRef arg) {
  Attribute attr = getArgAttr(op, arg);
  if (auto constant = dyn_cast_if_present<IntegerAttr>(attr);
      constant && !isa<BoolAttr>(attr))
    return Value(arith::ConstantOp::create(
        rewriter, op.getLoc(),
        rewriter.getI64IntegerAttr(constant.getValue().getSExtValue())));
  if (auto ref = dyn_cast_if_present<OperandRefAttr>(attr);
      ref && ref.getIndex() < adaptor.getInputs().size() &&
      adaptor.getInputs()[ref.getIndex()].getType().isInteger(64))
    return adaptor.getInputs()[ref.getIndex()];
  FailureOr<Value> index = getIntArg(op, adaptor, rewriter, arg);
  if (failed(index))
    return failure();
  return convertScalar(rewriter, op.getLoc(), *index, rewriter.getI64Type());
}

/// sym_size.int, sym_numel, sym_stride.int, sym_storage_offset.
static LogicalResult lowerSymSize(CallFunctionOp op,
                                  CallFunctionOp::Adaptor adaptor,
                                  ConversionPatternRewriter &rewriter) {
  FailureOr<Value> input = getTensorArg(op, adaptor, rewriter, {0, "self"});
  if (failed(input) || op->getNumResults() != 1 ||
      !op->getResult(0).getType().isInteger(64))
    return rewriter.notifyMatchFailure(op, "expects a tensor and an i64");
  auto type = cast<RankedTensorType>(input->getType());
  Location loc = op.getLoc();
  Type i64 = rewriter.getI64Type();
  StringRef target = op.getTarget();
  if (target == "aten::sym_size.int") {
    FailureOr<int64_t> d = getDimArg(op, rewriter, {1, "dim"}, type.getRank());
    if (failed(d))
      return failure();
    if (!type.isDynamicDim(*d)) {
      rewriter.replaceOp(
          op,
          arith::ConstantOp::create(
              rewriter, loc, rewriter.getI64IntegerAttr(type.getDimSize(*d))));
      return success();
    }
    Value size = tensor::DimOp::create(rewriter, loc, *input, *d);
    rewriter.replaceOp(op, convertScalar(rewriter, loc, size, i64));
    return success();
  }
  if (target == "aten::sym_numel.default") {
    OpFoldResult n = rewriter.getIndexAttr(1);
    for (OpFoldResult size : getTensorSizes(rewriter, loc, *input))
      n = IndexArith(rewriter, loc).mul(n, size);
    rewriter.replaceOp(
        op,
        convertScalar(rewriter, loc,
                      getValueOrCreateConstantIndexOp(rewriter, loc, n), i64));
    return success();
  }
  // Strides and offsets exist only in the traced facts.
  TensorMetaAttr meta = getTracedMeta(op->getOperand(0));
  if (!meta)
    return rewriter.notifyMatchFailure(op, "no traced strides for the input");
  SymInt value = meta.getOffset();
  if (target == "aten::sym_stride.int") {
    FailureOr<int64_t> d = getDimArg(op, rewriter, {1, "dim"}, type.getRank());
    if (failed(d))
      return failure();
    value = meta.getStrides()[*d];
  }
  if (!value.isStatic())
    return rewriter.notifyMatchFailure(
        op, "symbolic value '" + value.expr.getValue() +
                "' has no lowering (only sizes lower through tensor.dim)");
  rewriter.replaceOp(
      op, arith::ConstantOp::create(rewriter, loc,
                                    rewriter.getI64IntegerAttr(value.hint)));
  return success();
}

/// Python arithmetic and comparisons on SymInts (`operator::` and
/// `_operator::` targets, as FX records them).
static LogicalResult lowerSymArithmetic(CallFunctionOp op,
                                        CallFunctionOp::Adaptor adaptor,
                                        ConversionPatternRewriter &rewriter) {
  StringRef name = op.getTarget();
  name = name.drop_front(name.find("::") + 2);
  if (op->getNumResults() != 1)
    return rewriter.notifyMatchFailure(op, "expects one result");
  Type resultType = op->getResult(0).getType();
  Location loc = op.getLoc();
  FailureOr<Value> lhs = getI64Arg(op, adaptor, rewriter, {0, "a"});
  if (failed(lhs))
    return failure();
  if (name == "neg") {
    Value zero =
        arith::ConstantOp::create(rewriter, loc, rewriter.getI64IntegerAttr(0));
    rewriter.replaceOp(op, arith::SubIOp::create(rewriter, loc, zero, *lhs));
    return success();
  }
  FailureOr<Value> rhs = getI64Arg(op, adaptor, rewriter, {1, "b"});
  if (failed(rhs))
    return failure();
  Value a = *lhs, b = *rhs, result;
  if (name == "add")
    result = arith::AddIOp::create(rewriter, loc, a, b);
  else if (name == "sub")
    result = arith::SubIOp::create(rewriter, loc, a, b);
  else if (name == "mul")
    result = arith::MulIOp::create(rewriter, loc, a, b);
  else if (name == "floordiv")
    result = arith::FloorDivSIOp::create(rewriter, loc, a, b);
  else if (name == "mod") {
    // Python's mod takes the divisor's sign: r + b when r and b differ.
    Value r = arith::RemSIOp::create(rewriter, loc, a, b);
    Value zero =
        arith::ConstantOp::create(rewriter, loc, rewriter.getI64IntegerAttr(0));
    Value rNeg = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt,
                                       r, zero);
    Value bNeg = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt,
                                       b, zero);
    Value rNonZero =
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne, r, zero);
    Value fix =
        arith::AndIOp::create(rewriter, loc, rNonZero,
                              arith::XOrIOp::create(rewriter, loc, rNeg, bNeg));
    result = arith::SelectOp::create(
        rewriter, loc, fix, arith::AddIOp::create(rewriter, loc, r, b), r);
  } else if (name == "max" || name == "sym_max")
    result = arith::MaxSIOp::create(rewriter, loc, a, b);
  else if (name == "min" || name == "sym_min")
    result = arith::MinSIOp::create(rewriter, loc, a, b);
  else {
    std::optional<arith::CmpIPredicate> predicate =
        llvm::StringSwitch<std::optional<arith::CmpIPredicate>>(name)
            .Case("eq", arith::CmpIPredicate::eq)
            .Case("ne", arith::CmpIPredicate::ne)
            .Case("lt", arith::CmpIPredicate::slt)
            .Case("le", arith::CmpIPredicate::sle)
            .Case("gt", arith::CmpIPredicate::sgt)
            .Case("ge", arith::CmpIPredicate::sge)
            .Default(std::nullopt);
    if (!predicate)
      return rewriter.notifyMatchFailure(op, "unknown SymInt operator");
    result = arith::CmpIOp::create(rewriter, loc, *predicate, a, b);
  }
  if (!resultType.isSignlessInteger())
    return rewriter.notifyMatchFailure(op, "expects an integer result");
  rewriter.replaceOp(op, convertScalar(rewriter, loc, result, resultType));
  return success();
}

} // namespace

void mlir::joint::populateSymIntPatterns(const TypeConverter &typeConverter,
                                         RewritePatternSet &patterns) {
  LoweringTable table(typeConverter, patterns);
  table.add({"aten::sym_size.int", "aten::sym_numel.default",
             "aten::sym_stride.int", "aten::sym_storage_offset.default"},
            lowerSymSize);
  SmallVector<std::string> names;
  for (StringRef prefix : {"operator::", "_operator::"})
    for (StringRef op : {"add", "sub", "mul", "floordiv", "mod", "neg", "eq",
                         "ne", "lt", "le", "gt", "ge"})
      names.push_back((prefix + op).str());
  names.push_back("torch::sym_max");
  names.push_back("torch::sym_min");
  SmallVector<StringRef> targets(names.begin(), names.end());
  table.add(targets, lowerSymArithmetic);
}

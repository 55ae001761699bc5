//===- Utils.h - Helpers shared by the JointToLinalg families ---*- C++ -*-===//
//
// The base pattern of every family (`JointOpConversion`: one pattern, a set
// of aten targets) and `LoweringTable`, whose rows register a lowering
// function for their targets, schema-argument access through a
// `joint.call_function`'s `args`/`kwargs` (with `#joint.operand<i>` resolved to
// the converted operand), torch's scalar casts and type promotion,
// broadcasting, and builders for init tensors and elementwise
// `linalg.generic`s. Every accessor reports why it failed through
// `notifyMatchFailure`, which the driver turns into the one "no lowering"
// diagnostic.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_LIB_CONVERSION_JOINTTOLINALG_UTILS_H
#define JOINT_LIB_CONVERSION_JOINTTOLINALG_UTILS_H

#include "joint/Dialect/AO/IR/AOOps.h"
#include "joint/Dialect/Joint/IR/JointOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/StringSet.h"
#include <functional>
#include <optional>

namespace mlir {
namespace joint {

/// The lowering's type converter: the identity on types, and the record of
/// why a pattern refused an op (its last `notifyMatchFailure` reason), which
/// the driver's contract check reports for every op left unconverted.
/// Patterns built on JointOpConversion must be given one.
class LoweringTypeConverter : public TypeConverter {
public:
  LoweringTypeConverter();
  /// Keeps `reason` as the latest refusal of `op` (an original op).
  void recordRefusal(Operation *op, StringRef reason) const;
  /// The latest refusal of `op`; empty when no pattern said why.
  StringRef getRefusal(Operation *op) const;

private:
  mutable llvm::DenseMap<Operation *, std::string> refusals;
};

/// "'aten::mm.default' (node 'mm')": how every diagnostic names an op.
std::string describeOp(CallFunctionOp op);

/// An error on `op` whose message names it with describeOp: marked as
/// naming its node (NamedDiagnostics.h).
InFlightDiagnostic emitNodeError(CallFunctionOp op);

//===----------------------------------------------------------------------===//
// Base pattern
//===----------------------------------------------------------------------===//

/// One conversion pattern for a set of aten targets (target with overload,
/// e.g. "aten::mm.default"). Families implement `rewrite`; the base matches
/// the target and, when `rewrite` fails, records its last match-failure
/// reason in the LoweringTypeConverter.
class JointOpConversion : public OpConversionPattern<CallFunctionOp> {
public:
  JointOpConversion(const TypeConverter &typeConverter, MLIRContext *context,
                    ArrayRef<StringRef> targets, PatternBenefit benefit = 1);

  LogicalResult
  matchAndRewrite(CallFunctionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const final;

  /// Lowers `op`, whose target is one of `getTargets()`.
  virtual LogicalResult rewrite(CallFunctionOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const = 0;

  const llvm::StringSet<> &getTargets() const { return targets; }

private:
  llvm::StringSet<> targets;
};

/// Lowers one `joint.call_function` whose target is one of its registered
/// targets; says why it cannot through `rewriter.notifyMatchFailure`.
using LowerOpFn = std::function<LogicalResult(
    CallFunctionOp op, CallFunctionOp::Adaptor adaptor,
    ConversionPatternRewriter &rewriter)>;

/// Lowers an op from its converted `self` tensor (schema argument 0) and its
/// ranked result type, which the pattern read before calling it.
using LowerSelfOpFn = std::function<LogicalResult(
    CallFunctionOp op, CallFunctionOp::Adaptor adaptor, Value self,
    RankedTensorType resultType, ConversionPatternRewriter &rewriter)>;

namespace lowering {
class OpArgs;
} // namespace lowering

/// A family's registration table (targets -> lowering): each row adds one
/// JointOpConversion that lowers the ops of its targets.
class LoweringTable {
public:
  LoweringTable(const TypeConverter &typeConverter, RewritePatternSet &patterns)
      : typeConverter(typeConverter), patterns(patterns) {}

  /// A row whose lowering reads its arguments from the adaptor.
  void add(ArrayRef<StringRef> targets, LowerOpFn lower);
  /// A row whose lowering reads its arguments through lowering::OpArgs
  /// (UtilsOps.h).
  void add(ArrayRef<StringRef> targets,
           LogicalResult (*lower)(CallFunctionOp, const lowering::OpArgs &,
                                  ConversionPatternRewriter &));
  /// A row lowering one `self` tensor into one ranked result (views,
  /// transposes, expands, copies): an op without both is refused with
  /// "expects a tensor and a result".
  void addSelf(ArrayRef<StringRef> targets, LowerSelfOpFn lower);

private:
  const TypeConverter &typeConverter;
  RewritePatternSet &patterns;
};

/// Traced tensor facts of `value` (an original, unconverted value): op
/// results' `result_meta`, and graph arguments' `joint.meta` also after the
/// driver turned the graph into a `func.func`. Null when not recorded.
TensorMetaAttr getTracedMeta(Value value);

/// The first result type of `op` as a ranked tensor (null when it is not).
RankedTensorType getResultTensorType(CallFunctionOp op, unsigned i = 0);

//===----------------------------------------------------------------------===//
// Schema arguments
//===----------------------------------------------------------------------===//

/// A schema argument: its positional index and its keyword name (FX passes
/// an argument either way). Lookups check `args[index]` first, then
/// `kwargs[name]`; when `args` and `kwargs` are both absent the operands are
/// the positional arguments in order.
struct ArgRef {
  unsigned index;
  StringRef name;
};

/// Replaces `op` by `result`, through a tensor.cast to `resultType` when
/// the two differ only in static size information; returns success.
LogicalResult replaceWithResult(ConversionPatternRewriter &rewriter,
                                Operation *op, Value result,
                                RankedTensorType resultType);

/// The attribute passed for `arg` (`#joint.operand<i>`, i64, f64, bool,
/// string, dtype, array, or `unit` for None); null when not passed.
Attribute getArgAttr(CallFunctionOp op, ArgRef arg);

/// True when `arg` is not passed or is None.
bool isNoneArg(CallFunctionOp op, ArgRef arg);

/// The converted tensor operand passed for `arg`.
FailureOr<Value> getTensorArg(CallFunctionOp op,
                              CallFunctionOp::Adaptor adaptor,
                              ConversionPatternRewriter &rewriter, ArgRef arg);

/// An int argument as an `index` value: a constant, or a SymInt operand
/// (i64) cast to index. `defaultValue` is used when the argument is absent.
FailureOr<Value> getIntArg(CallFunctionOp op, CallFunctionOp::Adaptor adaptor,
                           ConversionPatternRewriter &rewriter, ArgRef arg,
                           std::optional<int64_t> defaultValue = std::nullopt);

/// A trace-time constant argument: `int64_t` (an int), `double` (a float,
/// int or bool), `bool` (None also reads as `defaultValue`, as torch passes
/// None for an omitted flag) or `StringRef` (e.g. gelu's `approximate`).
/// `defaultValue` is used when the argument is absent.
template <typename T>
FailureOr<T> getConstantArg(CallFunctionOp op,
                            ConversionPatternRewriter &rewriter, ArgRef arg,
                            std::optional<T> defaultValue = std::nullopt);

/// An int list (`int[]`, `SymInt[]`; a single int is a list of one) as mixed
/// static/dynamic sizes: IntegerAttr for constants, `index` values for
/// SymInt operands.
FailureOr<SmallVector<OpFoldResult>>
getIntListArg(CallFunctionOp op, CallFunctionOp::Adaptor adaptor,
              ConversionPatternRewriter &rewriter, ArgRef arg);

/// An int list whose elements are all trace-time constants.
FailureOr<SmallVector<int64_t>>
getConstantIntListArg(CallFunctionOp op, ConversionPatternRewriter &rewriter,
                      ArgRef arg);

/// A `ScalarType?` argument as an MLIR element type; a null Type when None
/// or absent.
FailureOr<Type> getOptionalDtype(CallFunctionOp op,
                                 ConversionPatternRewriter &rewriter,
                                 ArgRef arg);

/// A `Scalar` argument (number attribute, SymInt/SymFloat operand or 0-d
/// tensor operand) as a scalar of `type`, cast with torch's rules.
FailureOr<Value>
getScalarArg(CallFunctionOp op, CallFunctionOp::Adaptor adaptor,
             ConversionPatternRewriter &rewriter, ArgRef arg, Type type,
             std::optional<double> defaultValue = std::nullopt);

/// Normalizes a possibly negative dimension `dim` of a rank-`rank` tensor
/// (torch's maybe_wrap_dim; rank 0 accepts -1 and 0); failure when out of
/// range.
FailureOr<int64_t> normalizeDim(int64_t dim, int64_t rank);

/// normalizeDim that refuses an out-of-range `dim` with "dimension D out of
/// range for rank R".
FailureOr<int64_t> normalizeDim(CallFunctionOp op,
                                ConversionPatternRewriter &rewriter,
                                int64_t dim, int64_t rank);

/// A constant dim argument normalized against a rank-`rank` tensor
/// (getConstantArg<int64_t>, then normalizeDim; `defaultValue` when absent).
FailureOr<int64_t>
getDimArg(CallFunctionOp op, ConversionPatternRewriter &rewriter, ArgRef arg,
          int64_t rank, std::optional<int64_t> defaultValue = std::nullopt);

//===----------------------------------------------------------------------===//
// Types and scalars
//===----------------------------------------------------------------------===//

/// torch's type promotion of two element types of the same participation
/// (both tensors, or both scalars): bool < integers < floats; within floats
/// the wider wins and bf16 with f16 gives f32; within integers the wider.
Type promoteTypes(Type a, Type b);

/// The type torch computes `type` in on CPU (its "opmath" type): bf16 and
/// f16 compute in f32, everything else in itself.
Type getComputeType(Type type);

/// Casts scalar `value` to `toType` with torch's semantics: to bool is
/// `!= 0`; bool to number is 0/1; float to int truncates toward zero; float
/// narrowing rounds to nearest even. Index values cast as i64.
Value convertScalar(OpBuilder &b, Location loc, Value value, Type toType);

/// A scalar constant `value` of `type` (float, integer or i1).
Value createScalarConstant(OpBuilder &b, Location loc, Type type, double value);

//===----------------------------------------------------------------------===//
// Shapes and builders
//===----------------------------------------------------------------------===//

/// Sizes of ranked tensor `tensor`: IntegerAttr for static dims, `tensor.dim`
/// values for `?` dims.
SmallVector<OpFoldResult> getTensorSizes(OpBuilder &b, Location loc,
                                         Value tensor);

/// `tensor.dim` values of the `?` dims of `tensor`, in order.
SmallVector<Value> getDynamicSizes(OpBuilder &b, Location loc, Value tensor);

/// `tensor.empty` of `sizes` (static ones folded into the type).
Value createEmptyTensor(OpBuilder &b, Location loc,
                        ArrayRef<OpFoldResult> sizes, Type elementType);

/// `tensor.empty` + `linalg.fill` with `fillValue` (cast to `elementType`).
Value createInitTensor(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                       Type elementType, Value fillValue);

/// `createInitTensor` filled with zero.
Value createZeroInitTensor(OpBuilder &b, Location loc,
                           ArrayRef<OpFoldResult> sizes, Type elementType);

/// The indexing map that reads a rank-`operandType` operand broadcast
/// (torch rules, right-aligned) into the iteration space of `resultType`:
/// an operand dim of static size 1 against a result dim that is not 1
/// reads index 0. `?` dims are taken equal to the result's (torch
/// specializes size-1 dims at trace time, so a symbolic dim is never a
/// broadcast).
AffineMap getBroadcastIndexingMap(RankedTensorType operandType,
                                  RankedTensorType resultType);

/// Sizes of the broadcast result of `operands` with type `resultType`:
/// static dims from the type, `?` dims from an operand that has the dim
/// unbroadcast. Fails when a `?` dim has no such operand.
FailureOr<SmallVector<OpFoldResult>>
getBroadcastResultSizes(OpBuilder &b, Location loc, ValueRange operands,
                        RankedTensorType resultType);

/// Builds the body of an elementwise `linalg.generic`: gets the scalar
/// elements of the inputs (already in their element types) and returns the
/// result element.
using ElementwiseBodyBuilder =
    function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// One parallel `linalg.generic` producing `resultType` of `resultSizes`
/// from `inputs` (ranked tensors, each broadcast to the result with
/// getBroadcastIndexingMap) and `body`.
Value createElementwiseGeneric(OpBuilder &b, Location loc, ValueRange inputs,
                               RankedTensorType resultType,
                               ArrayRef<OpFoldResult> resultSizes,
                               ElementwiseBodyBuilder body);

/// `input` broadcast (torch rules) to `resultType` with `resultSizes`, as a
/// copying `linalg.generic`; element type converted with convertScalar.
Value broadcastToShape(OpBuilder &b, Location loc, Value input,
                       RankedTensorType resultType,
                       ArrayRef<OpFoldResult> resultSizes);

/// `input` reshaped (row-major, torch's view/reshape) to `resultType` with
/// `resultSizes`: `tensor.collapse_shape` / `tensor.expand_shape` when the
/// dims regroup, else `tensor.reshape`; `input` itself when nothing changes.
Value reshapeTo(OpBuilder &b, Location loc, Value input,
                RankedTensorType resultType,
                ArrayRef<OpFoldResult> resultSizes);

/// Index arithmetic on mixed static/dynamic sizes at one insertion point:
/// folds when both sides are constants, else emits `arith` ops on `index`.
class IndexArith {
public:
  IndexArith(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  OpFoldResult add(OpFoldResult x, OpFoldResult y);
  OpFoldResult sub(OpFoldResult x, OpFoldResult y);
  OpFoldResult mul(OpFoldResult x, OpFoldResult y);
  /// Exact division (`x` a multiple of `y`, both non-negative).
  OpFoldResult div(OpFoldResult x, OpFoldResult y);
  /// Ceiling division for non-negative `x` and positive `y`.
  OpFoldResult ceilDiv(OpFoldResult x, OpFoldResult y);
  OpFoldResult min(OpFoldResult x, OpFoldResult y);
  OpFoldResult max(OpFoldResult x, OpFoldResult y);

private:
  /// Folds `fn` over two constants, else builds `Op` on index values.
  template <typename Op, typename Fn>
  OpFoldResult foldOrCreate(OpFoldResult x, OpFoldResult y, Fn fn);

  OpBuilder &b;
  Location loc;
};

} // namespace joint
} // namespace mlir

#endif // JOINT_LIB_CONVERSION_JOINTTOLINALG_UTILS_H

//===- Linear.cpp - mm, bmm, addmm to linalg ------------------------------===//
//
// The matmul family: `aten::mm`, `aten::bmm` and `aten::addmm` become
// `linalg.matmul` / `linalg.batch_matmul` on a zero-filled accumulator. bf16
// and f16 operands accumulate in f32 (linalg extends each operand to the
// accumulator type) and the result is truncated once, as torch's CPU gemm
// does (at::opmath_type). `addmm` adds `beta * self + alpha * (mat1 @ mat2)`
// in the accumulator type before that single truncation; `beta == 0` ignores
// `self` (torch does not read it then).
//
//===----------------------------------------------------------------------===//

#include "UtilsOps.h"
#include "joint/Conversion/JointToLinalg/JointToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::joint;
using namespace mlir::joint::lowering;

namespace {

/// `a @ b` (rank 2 or 3) into a zero-filled accumulator of `accType`.
static Value buildMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                         Type accType) {
  unsigned rank = cast<RankedTensorType>(lhs.getType()).getRank();
  SmallVector<OpFoldResult> sizes;
  for (unsigned i = 0; i + 1 < rank; ++i)
    sizes.push_back(tensor::getMixedSize(b, loc, lhs, i));
  sizes.push_back(tensor::getMixedSize(b, loc, rhs, rank - 1));
  Value init = createFilledTensor(b, loc, sizes, accType, 0.0);
  if (rank == 2)
    return linalg::MatmulOp::create(b, loc, ValueRange{lhs, rhs},
                                    ValueRange{init})
        .getResult(0);
  return linalg::BatchMatmulOp::create(b, loc, ValueRange{lhs, rhs},
                                       ValueRange{init})
      .getResult(0);
}

/// aten::mm.default(Tensor self, Tensor mat2) and
/// aten::bmm.default(Tensor self, Tensor mat2).
static LogicalResult lowerMatmul(CallFunctionOp op, const OpArgs &args,
                                 ConversionPatternRewriter &rw) {
  unsigned rank = op.getTarget() == "aten::mm.default" ? 2 : 3;
  FailureOr<BinaryTensorArgs> in =
      readBinaryTensorArgs(op, args, rw, "self", "mat2");
  if (failed(in))
    return failure();
  auto [lhs, rhs, resultType] = *in;
  if (lhs.getType().getRank() != rank || rhs.getType().getRank() != rank)
    return rw.notifyMatchFailure(op, "operands of the wrong rank");
  Type acc = getAccumulatorType(resultType.getElementType());
  Location loc = op.getLoc();
  Value product = buildMatmul(rw, loc, lhs, rhs, acc);
  rw.replaceOp(op, finishResult(rw, loc, product, resultType));
  return success();
}

/// aten::addmm.default(Tensor self, Tensor mat1, Tensor mat2, *,
/// Scalar beta=1, Scalar alpha=1): beta * self + alpha * (mat1 @ mat2), self
/// broadcast to [M, N].
static LogicalResult lowerAddmm(CallFunctionOp op, const OpArgs &args,
                                ConversionPatternRewriter &rw) {
  FailureOr<RankedTensor> bias = args.tensor(0, "self");
  FailureOr<RankedTensor> lhs = args.tensor(1, "mat1");
  FailureOr<RankedTensor> rhs = args.tensor(2, "mat2");
  FailureOr<double> beta = args.getFloat(3, "beta", 1.0);
  FailureOr<double> alpha = args.getFloat(4, "alpha", 1.0);
  RankedTensorType resultType = getResultTensorType(op, 0);
  if (failed(bias) || failed(lhs) || failed(rhs) || !resultType)
    return rw.notifyMatchFailure(op, "expected three tensor operands");
  if (failed(beta) || failed(alpha))
    return rw.notifyMatchFailure(op, "beta/alpha must be constants");
  RankedTensorType biasType = bias->getType();
  if (biasType.getRank() > 2 || lhs->getType().getRank() != 2 ||
      rhs->getType().getRank() != 2)
    return rw.notifyMatchFailure(op, "operands of the wrong rank");

  Location loc = op.getLoc();
  Type acc = getAccumulatorType(resultType.getElementType());
  if (!isa<FloatType>(acc))
    return rw.notifyMatchFailure(op, "addmm of a non-float dtype");
  Type resultElem = resultType.getElementType();
  Value product = buildMatmul(rw, loc, *lhs, *rhs, acc);

  // Epilogue: one elementwise generic adds the scaled bias and truncates.
  MLIRContext *ctx = rw.getContext();
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rw, loc, product);
  Value init = tensor::EmptyOp::create(rw, loc, sizes, resultElem);
  AffineMap id = rw.getMultiDimIdentityMap(2);
  SmallVector<Value> inputs{product};
  SmallVector<AffineMap> maps{id};
  bool useBias = *beta != 0.0;
  if (useBias) {
    inputs.push_back(*bias);
    maps.push_back(getBroadcastMap(ctx, biasType.getShape(), 2, {0, 1}));
  }
  maps.push_back(id);
  SmallVector<utils::IteratorType> iters(2, utils::IteratorType::parallel);
  double alphaV = *alpha, betaV = *beta;
  Value result =
      linalg::GenericOp::create(
          rw, loc, init.getType(), inputs, ValueRange{init}, maps, iters,
          [&](OpBuilder &b, Location l, ValueRange blockArgs) {
            Value v = blockArgs[0];
            if (alphaV != 1.0)
              v = arith::MulFOp::create(
                  b, l, createScalarConstant(b, l, acc, alphaV), v);
            if (useBias) {
              Value c = convertScalar(b, l, blockArgs[1], acc);
              if (betaV != 1.0)
                c = arith::MulFOp::create(
                    b, l, createScalarConstant(b, l, acc, betaV), c);
              v = arith::AddFOp::create(b, l, v, c);
            }
            linalg::YieldOp::create(b, l, convertScalar(b, l, v, resultElem));
          })
          .getResult(0);
  return replaceWithResult(rw, op, result, resultType);
}

} // namespace

void mlir::joint::populateLinearPatterns(const TypeConverter &typeConverter,
                                         RewritePatternSet &patterns) {
  LoweringTable table(typeConverter, patterns);
  table.add({"aten::mm.default", "aten::bmm.default"}, lowerMatmul);
  table.add({"aten::addmm.default"}, lowerAddmm);
}

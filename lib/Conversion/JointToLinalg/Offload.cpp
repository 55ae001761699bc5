//===- Offload.cpp - ao ops as host copies on the CPU target --------------===//
//
// The Offload family of convert-joint-to-linalg. On the CPU target "host"
// and "device" are one memory, but the protocol must still run: ao.offload
// and ao.reload copy their input into a separately allocated buffer
// (`bufferization.alloc_tensor` + `bufferization.materialize_in_destination`,
// which bufferization keeps as a real copy; canonicalization cannot fold it
// into its source as it can a `linalg.copy`), so values stay identical.
// ao.wait_tensor is a no-op: the copies are synchronous.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "joint/Conversion/JointToLinalg/JointToLinalg.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"

using namespace mlir;
using namespace mlir::joint;

namespace {

/// `input` copied into a fresh buffer of its type.
Value copyToFreshBuffer(OpBuilder &b, Location loc, Value input) {
  auto type = cast<RankedTensorType>(input.getType());
  Value buffer = bufferization::AllocTensorOp::create(
      b, loc, type, getDynamicSizes(b, loc, input));
  return bufferization::MaterializeInDestinationOp::create(b, loc, type, input,
                                                           buffer)
      .getResult();
}

template <typename OpTy>
class TransferConversion : public OpConversionPattern<OpTy> {
public:
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, copyToFreshBuffer(rewriter, op.getLoc(), adaptor.getInput()));
    return success();
  }
};

class WaitConversion : public OpConversionPattern<ao::WaitTensorOp> {
public:
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ao::WaitTensorOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, adaptor.getInput());
    return success();
  }
};

} // namespace

void mlir::joint::populateOffloadPatterns(const TypeConverter &typeConverter,
                                          RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<TransferConversion<ao::OffloadOp>,
               TransferConversion<ao::ReloadOp>, WaitConversion>(typeConverter,
                                                                 context);
}

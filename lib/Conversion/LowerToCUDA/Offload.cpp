//===- Offload.cpp - ao ops as transfers on CUDA streams ------------------===//
//
// Implements `joint-gpu-offload`: on the tensor form of the step (after
// convert-joint-to-linalg{keep-ao}), every `ao` chain becomes calls into the
// CUDA runtime's transfer protocol, which mirrors torch's activation
// offloading (docs/lowering.md, "CUDA"):
// `ao.offload` is `joint_ao_offload` (event on the compute stream, D2H copy
// into a pooled pinned buffer on the transfer stream), its forward
// `ao.wait_tensor` is `joint_ao_wait` (the compute stream waits on the
// copy's event on the device), `ao.reload` is a step allocation (a
// `memref.alloc`, later a stream-ordered `gpu.alloc` on the compute stream)
// filled by `joint_ao_reload_into` (H2D on the transfer stream), and its
// backward wait is `joint_ao_wait` then `joint_ao_release`. Buffers reach the
// calls as raw pointers of identity-layout memrefs; the offload call is
// marked joint.reads_until_result_use, so the offloaded source stays alive
// until the forward wait (BufferLiveness.h).
//
// Each ao op is one conversion pattern (populateAOToTransferCallPatterns):
// the offload is replaced by its handle and the tensor's `?` sizes, the
// forward wait passes them on to the reload, and the reload is replaced by
// its tensor and the handle its wait releases. The pass first checks the
// chains (diagnostics naming the node), then runs applyPartialConversion
// with the ao ops illegal, so any op left over fails the pass.
//
//===----------------------------------------------------------------------===//

#include "joint/Conversion/LowerToCUDA/Offload.h"
#include "RuntimeCalls.h"
#include "joint/Conversion/LowerToCUDA/Passes.h"
#include "joint/Dialect/AO/IR/AOOps.h"
#include "joint/Support/NamedDiagnostics.h"
#include "joint/Transforms/BufferLiveness.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTGPUOFFLOAD
#include "joint/Conversion/LowerToCUDA/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

namespace {

constexpr llvm::StringLiteral kOffloadFn = "joint_ao_offload",
                              kWaitFn = "joint_ao_wait",
                              kReloadFn = "joint_ao_reload_into",
                              kReleaseFn = "joint_ao_release";

/// The transfer protocol's entry point `name` in the module of `op`. The
/// first look-up declares all four, in protocol order, so the declarations
/// do not depend on which ops a step has.
func::FuncOp lookupOrDeclareTransferFunction(OpBuilder &b, Operation *op,
                                             StringRef name) {
  MLIRContext *ctx = b.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  Type i64 = b.getI64Type(), i32 = b.getI32Type();
  std::pair<StringRef, FunctionType> entries[] = {
      {kOffloadFn, FunctionType::get(ctx, {ptr, i64, ptr}, ptr)},
      {kWaitFn, FunctionType::get(ctx, {ptr}, i32)},
      {kReloadFn, FunctionType::get(ctx, {ptr, ptr, ptr}, i32)},
      {kReleaseFn, FunctionType::get(ctx, {ptr}, i32)}};
  auto module = op->getParentOfType<ModuleOp>();
  func::FuncOp result;
  for (auto [entry, type] : entries) {
    func::FuncOp fn = lookupOrDeclareRuntimeFunction(b, module, entry, type);
    if (entry == name)
      result = fn;
  }
  return result;
}

std::string nodeSuffix(Operation *op) {
  if (auto name = op->getAttrOfType<StringAttr>("name"))
    return (" (node '" + name.getValue() + "')").str();
  return "";
}

/// `op`'s error, marked as naming its node when its message ends with
/// nodeSuffix(op).
InFlightDiagnostic emitTransferError(Operation *op) {
  InFlightDiagnostic d = op->emitOpError();
  if (auto name = op->getAttrOfType<StringAttr>("name"))
    markNamed(d, name.getValue());
  return d;
}

/// A pointer to the NUL-terminated node name of `op` (a private constant
/// global per distinct name), for the runtime's error messages.
Value nodeName(OpBuilder &b, Location loc, Operation *op) {
  auto attr = op->getAttrOfType<StringAttr>("name");
  return getNodeNamePointer(b, loc, attr ? attr.getValue() : StringRef());
}

void callTransfer(OpBuilder &b, Operation *op, StringRef name,
                  ValueRange args) {
  func::CallOp::create(b, op->getLoc(),
                       lookupOrDeclareTransferFunction(b, op, name), args);
}

/// `ao.offload %t` -> `joint_ao_offload(ptr(t), bytes, node)` (D2H on the
/// transfer stream); replaced by the handle and the `?` sizes of `t`.
struct OffloadToTransferCall : public OpConversionPattern<ao::OffloadOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ao::OffloadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto type = cast<RankedTensorType>(input.getType());
    if (!type.getElementType().isIntOrFloat())
      return rewriter.notifyMatchFailure(op, "element type is not int/float");
    SmallVector<Value> handleAndSizes = {Value()};
    Value bytes = byteSize(rewriter, loc, input, handleAndSizes);
    auto bufferType = MemRefType::get(type.getShape(), type.getElementType());
    Value buffer = bufferization::ToBufferOp::create(rewriter, loc, bufferType,
                                                     input, /*read_only=*/true);
    Value src = getBufferPointer(rewriter, loc, buffer);
    Value node = nodeName(rewriter, loc, op);
    auto call = func::CallOp::create(
        rewriter, loc,
        lookupOrDeclareTransferFunction(rewriter, op, kOffloadFn),
        ValueRange{src, bytes, node});
    // The D2H copy reads the source until the forward wait.
    call->setAttr(kReadsUntilResultUseAttr, rewriter.getUnitAttr());
    handleAndSizes[0] = call.getResult(0);
    SmallVector<SmallVector<Value>> replacement = {std::move(handleAndSizes)};
    rewriter.replaceOpWithMultiple(op, std::move(replacement));
    return success();
  }

  /// Bytes of `tensor` (elements times the storage size of its element
  /// type; i1 takes one byte) as an i64; its `?` sizes go to `dynamic`.
  static Value byteSize(OpBuilder &b, Location loc, Value tensor,
                        SmallVectorImpl<Value> &dynamic) {
    auto type = cast<RankedTensorType>(tensor.getType());
    int64_t elementBytes =
        (type.getElementType().getIntOrFloatBitWidth() + 7) / 8;
    Value bytes = arith::ConstantIndexOp::create(b, loc, elementBytes);
    for (auto [i, size] : llvm::enumerate(type.getShape())) {
      Value dim = ShapedType::isDynamic(size)
                      ? Value(tensor::DimOp::create(b, loc, tensor, int64_t(i)))
                      : Value(arith::ConstantIndexOp::create(b, loc, size));
      if (ShapedType::isDynamic(size))
        dynamic.push_back(dim);
      bytes = arith::MulIOp::create(b, loc, bytes, dim);
    }
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), bytes);
  }
};

/// The forward `ao.wait_tensor` of an offload -> `joint_ao_wait(h)` (the
/// compute stream waits on the copy's event), then `joint_ao_release(h)`
/// unless a reload follows; replaced by the offload's handle and sizes.
/// The wait of a reload -> `joint_ao_wait(h)`, `joint_ao_release(h)`;
/// replaced by the reloaded tensor.
struct WaitToTransferCalls : public OpConversionPattern<ao::WaitTensorOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ao::WaitTensorOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ValueRange input = adaptor.getInput();
    if (op.isOffloadWait()) { // input: the handle, then the `?` sizes
      Value handle = input.front();
      callTransfer(rewriter, op, kWaitFn, handle);
      // The verifier lets only ao.reload read the host copy (and its wait
      // keep it alive).
      if (llvm::none_of(op.getResult().getUsers(), llvm::IsaPred<ao::ReloadOp>))
        callTransfer(rewriter, op, kReleaseFn, handle); // buffer free now
      SmallVector<SmallVector<Value>> replacement = {llvm::to_vector(input)};
      rewriter.replaceOpWithMultiple(op, std::move(replacement));
      return success();
    }
    if (!op.isReloadWait() || input.size() != 2)
      return rewriter.notifyMatchFailure(op, "not the wait of a transfer");
    // Input: the reloaded tensor and the handle. Before its first consumer.
    Value tensor = input[0], handle = input[1];
    callTransfer(rewriter, op, kWaitFn, handle);
    callTransfer(rewriter, op, kReleaseFn, handle);
    rewriter.replaceOp(op, tensor);
    return success();
  }
};

/// `ao.reload` of a forward wait -> a step allocation (`memref.alloc`, sized
/// as measured at the offload: nothing on the device is read here) filled
/// by `joint_ao_reload_into(h, ptr, node)` (H2D on the transfer stream);
/// replaced by the allocation as a tensor and the handle.
struct ReloadToTransferCall : public OpConversionPattern<ao::ReloadOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ao::ReloadOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ValueRange input = adaptor.getInput(); // the handle, then `?` sizes
    auto type = cast<RankedTensorType>(op.getType());
    if (input.empty() || !isa<LLVM::LLVMPointerType>(input[0].getType()) ||
        int64_t(input.size()) != 1 + type.getNumDynamicDims())
      return rewriter.notifyMatchFailure(op, "no handle for the reload");
    Location loc = op.getLoc();
    Value handle = input[0];
    auto bufferType = MemRefType::get(type.getShape(), type.getElementType());
    Value buffer =
        memref::AllocOp::create(rewriter, loc, bufferType, input.drop_front());
    Value node = nodeName(rewriter, loc, op);
    callTransfer(
        rewriter, op, kReloadFn,
        ValueRange{handle, getBufferPointer(rewriter, loc, buffer), node});
    Value tensor = bufferization::ToTensorOp::create(
        rewriter, loc, type, buffer, /*restrict=*/true, /*writable=*/true);
    SmallVector<SmallVector<Value>> replacement = {{tensor, handle}};
    rewriter.replaceOpWithMultiple(op, std::move(replacement));
    return success();
  }
};

/// Emits the error that keeps `op` (an ao op of the step whose top-level
/// block is `body`) from being lowered and fails; succeeds when none does.
LogicalResult checkTransfer(Operation *op, Block *body) {
  if (op->getBlock() != body)
    return emitTransferError(op)
           << "is nested in a region; the CUDA target transfers only at "
              "the top level of the step"
           << nodeSuffix(op);
  if (auto offload = dyn_cast<ao::OffloadOp>(op)) {
    Type element = offload.getInput().getType().getElementType();
    if (!element.isIntOrFloat())
      return emitTransferError(op)
             << "offloads elements of type " << element
             << "; the CUDA target transfers integers and floats"
             << nodeSuffix(op);
  } else if (auto reload = dyn_cast<ao::ReloadOp>(op)) {
    auto wait = reload.getInput().getDefiningOp<ao::WaitTensorOp>();
    if (!wait || !wait.isOffloadWait())
      return emitTransferError(op)
             << "reloads a value that is not the forward wait of an "
                "ao.offload"
             << nodeSuffix(op);
  } else {
    auto wait = cast<ao::WaitTensorOp>(op);
    if (!wait.isOffloadWait() && !wait.isReloadWait())
      return emitTransferError(op)
             << "waits on a value that is neither an ao.offload nor an "
                "ao.reload"
             << nodeSuffix(op);
    if (wait.isReloadWait()) // its result becomes the reloaded tensor
      return success();
  }
  auto isTransfer =
      llvm::IsaPred<ao::OffloadOp, ao::WaitTensorOp, ao::ReloadOp>;
  if (!llvm::all_of(op->getUsers(), isTransfer))
    return emitTransferError(op)
           << "result is used outside the ao protocol" << nodeSuffix(op);
  return success();
}

/// Checks the ao chains, then converts them all.
struct OffloadPass : public joint::impl::JointGPUOffloadBase<OffloadPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (func::FuncOp func : module.getOps<func::FuncOp>()) {
      if (func.isDeclaration())
        continue;
      Block *body = &func.getBody().front();
      WalkResult result = func.walk([&](Operation *op) {
        if (isa<ao::OffloadOp, ao::WaitTensorOp, ao::ReloadOp>(op) &&
            failed(checkTransfer(op, body)))
          return WalkResult::interrupt();
        return WalkResult::advance();
      });
      if (result.wasInterrupted())
        return signalPassFailure();
    }
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.addIllegalOp<ao::OffloadOp, ao::WaitTensorOp, ao::ReloadOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(ctx);
    populateAOToTransferCallPatterns(patterns);
    ConversionConfig config;
    config.foldingMode = DialectConversionFoldingMode::Never;
    if (failed(applyPartialConversion(module, target, std::move(patterns),
                                      config)))
      signalPassFailure();
  }
};

} // namespace

void joint::populateAOToTransferCallPatterns(RewritePatternSet &patterns) {
  patterns
      .add<OffloadToTransferCall, WaitToTransferCalls, ReloadToTransferCall>(
          patterns.getContext());
}

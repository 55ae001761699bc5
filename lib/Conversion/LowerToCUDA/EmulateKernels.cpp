//===- EmulateKernels.cpp - Kernels as host functions ---------------------===//
//
// Implements `joint-gpu-emulate-kernels`: every kernel of a `gpu.module`
// becomes a host LLVM function `void k(void **params, const JointEmuLaunch
// *launch)` (runtime/cuda/joint_cuda_emulator.h), which the emulated device
// calls once per (block, thread). The entry block loads the launch's expanded
// arguments from `params` and branches to the body, lowered with the host's
// LLVM patterns; thread and block ids and dimensions are loads from the
// launch record. Each function records its argument kinds (read, written,
// both, scalar bytes) for the emulator's race checker. Kernels that need
// threads of a block to run together (barriers, shared memory) are refused.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "joint/Conversion/LowerToCUDA/Passes.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTGPUEMULATEKERNELS
#include "joint/Conversion/LowerToCUDA/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

namespace {

// Byte offsets of the fields of JointEmuLaunch (four uint32[3]).
constexpr int32_t kGridDimOffset = 0;
constexpr int32_t kBlockDimOffset = 12;
constexpr int32_t kBlockIdxOffset = 24;
constexpr int32_t kThreadIdxOffset = 36;

/// 'r', 'w' or 'p': how a kernel accesses the buffer of memref `arg`,
/// following the memrefs derived from it by ops without memory effects
/// (views, casts, extract_strided_metadata). An op whose effects on a memref
/// are unknown, or that takes its address, makes it 'p'; a buffer never
/// accessed is 'r'.
static char getAccessKind(Value arg) {
  bool reads = false, writes = false;
  SmallVector<Value> worklist{arg};
  DenseSet<Value> seen{arg};
  while (!worklist.empty()) {
    Value memref = worklist.pop_back_val();
    for (OpOperand &use : memref.getUses()) {
      Operation *user = use.getOwner();
      auto effects = dyn_cast<MemoryEffectOpInterface>(user);
      // A raw address escapes whatever reads or writes through it.
      if (!effects || isa<memref::ExtractAlignedPointerAsIndexOp>(user))
        return 'p';
      if (effects.hasNoEffect()) {
        for (Value result : user->getResults())
          if (isa<BaseMemRefType>(result.getType()) &&
              seen.insert(result).second)
            worklist.push_back(result);
        continue;
      }
      SmallVector<MemoryEffects::EffectInstance> instances;
      effects.getEffects(instances);
      for (const MemoryEffects::EffectInstance &instance : instances) {
        if (instance.getValue() && instance.getValue() != memref)
          continue;
        if (isa<MemoryEffects::Read>(instance.getEffect()))
          reads = true;
        else if (isa<MemoryEffects::Write>(instance.getEffect()))
          writes = true;
        else
          return 'p'; // allocation or free of the argument
      }
      // A derived memref of an op with effects (unknown aliasing).
      if (llvm::any_of(user->getResultTypes(), llvm::IsaPred<BaseMemRefType>))
        return 'p';
    }
  }
  if (reads && writes)
    return 'p';
  return writes ? 'w' : 'r';
}

/// The kinds of the expanded arguments of `func` (a memref is its
/// descriptor's fields), or failure with an error.
static FailureOr<std::string> getParamKinds(gpu::GPUFuncOp func,
                                            unsigned indexBytes) {
  std::string kinds;
  for (BlockArgument arg : func.getArguments()) {
    Type type = arg.getType();
    if (auto memref = dyn_cast<MemRefType>(type)) {
      char kind = getAccessKind(arg);
      kinds += {kind, kind};
      kinds.append(1 + 2 * memref.getRank(), '0' + indexBytes);
      continue;
    }
    unsigned bits = 0;
    if (isa<IndexType>(type))
      bits = 8 * indexBytes;
    else if (type.isIntOrFloat())
      bits = type.getIntOrFloatBitWidth();
    unsigned bytes = llvm::divideCeil(bits, 8);
    if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8)
      return func.emitOpError()
             << "kernel argument " << arg.getArgNumber() << " of type " << type
             << " has no emulated parameter kind (memrefs and scalars of 1, "
                "2, 4 or 8 bytes)";
    kinds += static_cast<char>('0' + bytes);
  }
  return kinds;
}

/// Refuses what the emulated device cannot run: it runs the threads of a
/// block one after another on one host thread, so nothing may wait for or
/// share memory with a sibling thread.
static LogicalResult checkEmulatable(gpu::GPUFuncOp func) {
  StringRef reason = "the emulated device runs the threads of a block one "
                     "after another and cannot run barriers or shared memory";
  if (!func.isKernel())
    return func.emitOpError() << "'" << func.getName()
                              << "' is not a kernel; the emulated device runs "
                                 "kernels only";
  if (func.getNumWorkgroupAttributions() || func.getNumPrivateAttributions())
    return func.emitOpError()
           << "kernel '" << func.getName()
           << "' has workgroup or private memory attributions: " << reason;
  auto isShared = [](Type type) {
    auto memref = dyn_cast<MemRefType>(type);
    return memref && gpu::GPUDialect::hasWorkgroupMemoryAddressSpace(memref);
  };
  if (llvm::any_of(func.getArgumentTypes(), isShared))
    return func.emitOpError()
           << "kernel '" << func.getName()
           << "' takes workgroup (shared) memory: " << reason;
  WalkResult result = func.walk([&](Operation *op) {
    if (llvm::any_of(op->getOperandTypes(), isShared) ||
        llvm::any_of(op->getResultTypes(), isShared)) {
      op->emitOpError() << "in kernel '" << func.getName()
                        << "' uses workgroup (shared) memory: " << reason;
      return WalkResult::interrupt();
    }
    if (op == func.getOperation() || !isa<gpu::GPUDialect>(op->getDialect()))
      return WalkResult::advance();
    if (isa<gpu::ThreadIdOp, gpu::BlockIdOp, gpu::BlockDimOp, gpu::GridDimOp,
            gpu::ReturnOp>(op))
      return WalkResult::advance();
    if (isa<gpu::BarrierOp>(op))
      op->emitOpError() << "in kernel '" << func.getName() << "': " << reason;
    else
      op->emitOpError() << "in kernel '" << func.getName()
                        << "' has no emulation (thread and block ids and "
                           "dimensions only)";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

/// The uint32 field of the JointEmuLaunch at `launch`, `offset` bytes into
/// it, as an index.
static Value loadLaunchField(OpBuilder &b, Location loc, Value launch,
                             int32_t offset) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Value field = LLVM::GEPOp::create(b, loc, ptr, b.getI8Type(), launch,
                                    ArrayRef<LLVM::GEPArg>{offset},
                                    LLVM::GEPNoWrapFlags::inbounds);
  Value value = LLVM::LoadOp::create(b, loc, b.getI32Type(), field);
  return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), value);
}

/// Appends the launch record pointer to the arguments of kernel `func` and
/// replaces its id and dimension ops by loads from it.
static LogicalResult readIdsFromLaunch(gpu::GPUFuncOp func) {
  MLIRContext *ctx = func.getContext();
  if (failed(func.insertArgument(func.getNumArguments(),
                                 LLVM::LLVMPointerType::get(ctx), {},
                                 func.getLoc())))
    return func.emitOpError() << "kernel '" << func.getName()
                              << "' cannot take the launch record argument";
  Value launch = func.getArgument(func.getNumArguments() - 1);
  IRRewriter rewriter(ctx);
  func.walk([&](Operation *op) {
    int32_t base = 0;
    gpu::Dimension dim;
    if (auto id = dyn_cast<gpu::ThreadIdOp>(op)) {
      base = kThreadIdxOffset;
      dim = id.getDimension();
    } else if (auto id = dyn_cast<gpu::BlockIdOp>(op)) {
      base = kBlockIdxOffset;
      dim = id.getDimension();
    } else if (auto id = dyn_cast<gpu::BlockDimOp>(op)) {
      base = kBlockDimOffset;
      dim = id.getDimension();
    } else if (auto id = dyn_cast<gpu::GridDimOp>(op)) {
      base = kGridDimOffset;
      dim = id.getDimension();
    } else {
      return;
    }
    rewriter.setInsertionPoint(op);
    int32_t offset = base + 4 * static_cast<int32_t>(dim);
    rewriter.replaceOp(op,
                       loadLaunchField(rewriter, op->getLoc(), launch, offset));
  });
  return success();
}

/// `gpu.func @k(args..., %launch)` -> `llvm.func @k(%params, %launch)`: an
/// entry block loads each expanded argument i from `*params[i]` and branches
/// to the converted body.
struct KernelToHostFunction : ConvertOpToLLVMPattern<gpu::GPUFuncOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(gpu::GPUFuncOp func, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = func.getLoc();
    MLIRContext *ctx = func.getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    TypeConverter::SignatureConversion signature(func.getNumArguments());
    auto expanded = dyn_cast_or_null<LLVM::LLVMFunctionType>(
        getTypeConverter()->convertFunctionSignature(
            func.getFunctionType(), /*isVariadic=*/false,
            /*useBarePtrCallConv=*/false, signature));
    if (!expanded)
      return rewriter.notifyMatchFailure(func, "unconvertible signature");

    auto type =
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr, ptr});
    auto host = LLVM::LLVMFuncOp::create(rewriter, loc, func.getName(), type);
    host->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                  rewriter.getUnitAttr());
    host->setAttr(kEmuParamKindsAttr, func->getAttr(kEmuParamKindsAttr));
    rewriter.inlineRegionBefore(func.getBody(), host.getBody(), host.end());
    Block *body = rewriter.applySignatureConversion(
        &host.getBody().front(), signature, getTypeConverter());

    Block *entry = rewriter.createBlock(&host.getBody(), host.begin(),
                                        {ptr, ptr}, {loc, loc});
    Value params = entry->getArgument(0);
    SmallVector<Value> values;
    ArrayRef<Type> types = expanded.getParams();
    for (auto [i, argType] : llvm::enumerate(types.drop_back())) {
      Value slot =
          LLVM::GEPOp::create(rewriter, loc, ptr, ptr, params,
                              ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)},
                              LLVM::GEPNoWrapFlags::inbounds);
      Value valuePtr = LLVM::LoadOp::create(rewriter, loc, ptr, slot);
      values.push_back(LLVM::LoadOp::create(rewriter, loc, argType, valuePtr));
    }
    values.push_back(entry->getArgument(1)); // the launch record
    LLVM::BrOp::create(rewriter, loc, values, body);
    rewriter.eraseOp(func);
    return success();
  }
};

struct ReturnToHost : ConvertOpToLLVMPattern<gpu::ReturnOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(gpu::ReturnOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!adaptor.getOperands().empty())
      return rewriter.notifyMatchFailure(op, "a kernel returns nothing");
    rewriter.replaceOpWithNewOp<LLVM::ReturnOp>(op, ValueRange());
    return success();
  }
};

struct EmulateKernelsPass
    : joint::impl::JointGPUEmulateKernelsBase<EmulateKernelsPass> {
  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    LowerToLLVMOptions options(ctx);
    LLVMTypeConverter converter(ctx, options);
    unsigned indexBytes = converter.getIndexTypeBitwidth() / 8;

    for (auto func : llvm::to_vector(module.getOps<gpu::GPUFuncOp>())) {
      if (failed(checkEmulatable(func)))
        return signalPassFailure();
      FailureOr<std::string> kinds = getParamKinds(func, indexBytes);
      if (failed(kinds))
        return signalPassFailure();
      func->setAttr(kEmuParamKindsAttr, StringAttr::get(ctx, *kinds));
      if (failed(readIdsFromLaunch(func)))
        return signalPassFailure();
    }

    RewritePatternSet patterns(ctx);
    arith::populateArithToLLVMConversionPatterns(converter, patterns);
    // Math the LLVM intrinsics have, the rest (erf, tanh, ...) from libm, as
    // the CPU pipeline does.
    populateMathToLLVMConversionPatterns(converter, patterns,
                                         /*approximateLog1p=*/true,
                                         /*benefit=*/2);
    populateMathToLibmConversionPatterns(patterns, /*benefit=*/1);
    populateFinalizeMemRefToLLVMConversionPatterns(converter, patterns);
    populateFuncToLLVMConversionPatterns(converter, patterns);
    cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
    index::populateIndexToLLVMConversionPatterns(converter, patterns);
    ub::populateUBToLLVMConversionPatterns(converter, patterns);
    patterns.add<KernelToHostFunction, ReturnToHost>(converter);

    LLVMConversionTarget target(*ctx);
    target.addLegalOp<gpu::GPUModuleOp>();
    target.addIllegalDialect<gpu::GPUDialect>();
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

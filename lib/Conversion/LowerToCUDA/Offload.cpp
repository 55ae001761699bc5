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
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"
#include "joint/Conversion/LowerToCUDA/Passes.h"
#include "joint/Dialect/AO/IR/AOOps.h"
#include "joint/Transforms/BufferLiveness.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTGPUOFFLOAD
#include "joint/Conversion/LowerToCUDA/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;

namespace {

using joint::lookupOrDeclareRuntimeFunction;

struct OffloadPass : public joint::impl::JointGPUOffloadBase<OffloadPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    OpBuilder db(ctx);
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    Type i64 = IntegerType::get(ctx, 64);
    Type i32 = IntegerType::get(ctx, 32);
    offloadFn = lookupOrDeclareRuntimeFunction(
        db, module, "joint_ao_offload",
        FunctionType::get(ctx, {ptr, i64, ptr}, ptr));
    waitFn = lookupOrDeclareRuntimeFunction(db, module, "joint_ao_wait",
                                            FunctionType::get(ctx, {ptr}, i32));
    reloadFn = lookupOrDeclareRuntimeFunction(
        db, module, "joint_ao_reload_into",
        FunctionType::get(ctx, {ptr, ptr, ptr}, i32));
    releaseFn = lookupOrDeclareRuntimeFunction(
        db, module, "joint_ao_release", FunctionType::get(ctx, {ptr}, i32));
    bool any = false;
    for (func::FuncOp func : module.getOps<func::FuncOp>()) {
      if (func.isDeclaration())
        continue;
      SmallVector<Operation *> ops;
      func.walk([&](Operation *op) {
        if (isa<ao::OffloadOp, ao::WaitTensorOp, ao::ReloadOp>(op))
          ops.push_back(op);
      });
      any |= !ops.empty();
      if (failed(lower(module, func, ops)))
        return signalPassFailure();
    }
    if (!any) // nothing refers to the declarations
      for (func::FuncOp fn : {offloadFn, waitFn, reloadFn, releaseFn})
        fn.erase();
  }

  /// Rewrites the ao ops of `func` (in block order) into runtime calls.
  LogicalResult lower(ModuleOp module, func::FuncOp func,
                      ArrayRef<Operation *> ops) {
    Block &body = func.getBody().front();
    DenseMap<Value, Value> handles; // offload / forward-wait result -> handle
    DenseMap<Value, SmallVector<Value>> dynamicSizes; // handle -> `?` sizes
    DenseMap<Value, std::pair<Value, Value>> reloads; // -> (handle, tensor)
    for (Operation *op : ops) {
      if (op->getBlock() != &body)
        return op->emitOpError()
               << "is nested in a region; the CUDA target transfers only at "
                  "the top level of the step"
               << nodeSuffix(op);
      OpBuilder b(op);
      Location loc = op->getLoc();
      if (auto offload = dyn_cast<ao::OffloadOp>(op)) {
        SmallVector<Value> sizes;
        FailureOr<Value> bytes =
            byteSize(b, loc, offload.getInput(), op, sizes);
        if (failed(bytes))
          return failure();
        Value src = pointerOf(b, loc, readBuffer(b, loc, offload.getInput()));
        Value node = nodeName(module, b, loc, op);
        auto call = func::CallOp::create(b, loc, offloadFn,
                                         ValueRange{src, *bytes, node});
        // The D2H copy reads the source until the forward wait.
        call->setAttr(joint::kReadsUntilResultUseAttr, b.getUnitAttr());
        Value handle = call.getResult(0);
        handles[offload.getResult()] = handle;
        dynamicSizes[handle] = std::move(sizes);
        continue;
      }
      if (auto reload = dyn_cast<ao::ReloadOp>(op)) {
        Value handle = handles.lookup(reload.getInput());
        if (!handle)
          return op->emitOpError()
                 << "reloads a value that is not the forward wait of an "
                    "ao.offload"
                 << nodeSuffix(op);
        auto type = cast<RankedTensorType>(reload.getType());
        // Sizes measured at the offload: nothing on the device is read here.
        ArrayRef<Value> sizes = dynamicSizes[handle];
        auto bufferType =
            MemRefType::get(type.getShape(), type.getElementType());
        Value buffer = memref::AllocOp::create(b, loc, bufferType, sizes);
        Value node = nodeName(module, b, loc, op);
        func::CallOp::create(
            b, loc, reloadFn,
            ValueRange{handle, pointerOf(b, loc, buffer), node});
        Value tensor = bufferization::ToTensorOp::create(
            b, loc, type, buffer, /*restrict=*/true, /*writable=*/true);
        reloads[reload.getResult()] = {handle, tensor};
        continue;
      }
      auto wait = cast<ao::WaitTensorOp>(op);
      if (Value handle = handles.lookup(wait.getInput())) {
        // Forward wait: the compute stream waits on the D2H copy's event.
        func::CallOp::create(b, loc, waitFn, ValueRange{handle});
        // The verifier lets only ao.reload read the host copy (and its
        // wait keep it alive).
        bool reloaded = llvm::any_of(wait.getResult().getUsers(),
                                     llvm::IsaPred<ao::ReloadOp>);
        if (!reloaded) // never brought back: the pinned buffer is free now
          func::CallOp::create(b, loc, releaseFn, ValueRange{handle});
        handles[wait.getResult()] = handle;
        continue;
      }
      auto it = reloads.find(wait.getInput());
      if (it == reloads.end())
        return op->emitOpError()
               << "waits on a value that is neither an ao.offload nor an "
                  "ao.reload"
               << nodeSuffix(op);
      // Backward wait: before the first consumer of the reloaded tensor.
      auto [handle, tensor] = it->second;
      func::CallOp::create(b, loc, waitFn, ValueRange{handle});
      func::CallOp::create(b, loc, releaseFn, ValueRange{handle});
      wait.getResult().replaceAllUsesWith(tensor);
    }
    for (Operation *op : llvm::reverse(ops)) {
      for (Value result : op->getResults())
        if (!result.use_empty())
          return op->emitOpError()
                 << "result is used outside the ao protocol" << nodeSuffix(op);
      op->erase();
    }
    return success();
  }

  static std::string nodeSuffix(Operation *op) {
    if (auto name = op->getAttrOfType<StringAttr>("name"))
      return (" (node '" + name.getValue() + "')").str();
    return "";
  }

  /// The buffer of `tensor` with an identity layout (bufferization copies a
  /// strided one into a dense buffer), read only.
  static Value readBuffer(OpBuilder &b, Location loc, Value tensor) {
    auto type = cast<RankedTensorType>(tensor.getType());
    return bufferization::ToBufferOp::create(
        b, loc, MemRefType::get(type.getShape(), type.getElementType()), tensor,
        /*read_only=*/true);
  }

  static Value pointerOf(OpBuilder &b, Location loc, Value buffer) {
    return joint::getBufferPointer(b, loc, buffer);
  }

  /// Bytes of `tensor` (elements times the storage size of its element
  /// type; i1 takes one byte) as an i64; its `?` sizes go to `dynamic`.
  static FailureOr<Value> byteSize(OpBuilder &b, Location loc, Value tensor,
                                   Operation *op,
                                   SmallVectorImpl<Value> &dynamic) {
    auto type = cast<RankedTensorType>(tensor.getType());
    Type element = type.getElementType();
    if (!element.isIntOrFloat()) {
      op->emitOpError() << "offloads elements of type " << element
                        << "; the CUDA target transfers integers and floats"
                        << nodeSuffix(op);
      return failure();
    }
    int64_t elementBytes = (element.getIntOrFloatBitWidth() + 7) / 8;
    Value bytes = arith::ConstantIndexOp::create(b, loc, elementBytes);
    for (auto [i, size] : llvm::enumerate(type.getShape())) {
      Value dim = ShapedType::isDynamic(size)
                      ? Value(tensor::DimOp::create(b, loc, tensor, int64_t(i)))
                      : Value(arith::ConstantIndexOp::create(b, loc, size));
      if (ShapedType::isDynamic(size))
        dynamic.push_back(dim);
      bytes = arith::MulIOp::create(b, loc, bytes, dim);
    }
    return Value(arith::IndexCastOp::create(b, loc, b.getI64Type(), bytes));
  }

  /// A pointer to the NUL-terminated node name of `op` (a private constant
  /// global per distinct name), for the runtime's error messages.
  Value nodeName(ModuleOp module, OpBuilder &b, Location loc, Operation *op) {
    auto attr = op->getAttrOfType<StringAttr>("name");
    return joint::getNodeNamePointer(b, loc,
                                     attr ? attr.getValue() : StringRef());
  }

  func::FuncOp offloadFn, waitFn, reloadFn, releaseFn;
};

} // namespace

//===- DeviceMemory.cpp - Device allocations freed at last use -*- C++ -*-===//
//
// Implements `joint-gpu-device-memory`. After bufferization every temporary
// is a host `memref.alloc`; on the CUDA target each top-level allocation
// becomes a `gpu.alloc` and gets a `gpu.dealloc` right after the last
// top-level op that uses it or a memref derived from it (views, casts), so
// buffers live exactly as long as the memory model assumes; a buffer an
// `ao` offload reads lives until its forward wait. Top-level copies
// between identity-layout buffers become `gpu.memcpy`. The pass also checks
// that no compute is left on the host (loads, stores, loops, linalg ops).
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "joint/Conversion/LowerToCUDA/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTGPUDEVICEMEMORY
#include "joint/Conversion/LowerToCUDA/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

namespace {

static bool isCallTo(Operation *op, StringRef callee) {
  auto call = dyn_cast<func::CallOp>(op);
  return call && call.getCallee() == callee;
}

/// For a pointer taken from a buffer
/// (`memref.extract_aligned_pointer_as_index`): the last top-level op that uses
/// it through integer casts (a runtime call that enqueues work on the buffer),
/// or, for `joint_ao_offload`, that transfer's first `joint_ao_wait` (the
/// forward wait, which the buffer must outlive: the D2H copy reads it until
/// then); null when unused.
static Operation *findLastPointerUse(Operation *pointerOp, Block &block) {
  Operation *last = nullptr;
  auto note = [&](Operation *op) {
    Operation *top = block.findAncestorOpInBlock(*op);
    if (top && (!last || last->isBeforeInBlock(top)))
      last = top;
  };
  SmallVector<Value> worklist(pointerOp->getResults());
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (isa<arith::IndexCastOp, LLVM::IntToPtrOp>(user)) {
        worklist.append(user->result_begin(), user->result_end());
        continue;
      }
      note(user);
      if (!isCallTo(user, "joint_ao_offload"))
        continue;
      Operation *wait = nullptr;
      for (Operation *handleUser : user->getResult(0).getUsers()) {
        Operation *top = block.findAncestorOpInBlock(*handleUser);
        if (top && isCallTo(top, "joint_ao_wait") &&
            (!wait || top->isBeforeInBlock(wait)))
          wait = top;
      }
      if (wait)
        note(wait);
    }
  }
  return last;
}

/// The last op of `block` that uses `root` or a memref derived from it
/// (transitively through any op with a memref result), or uses a pointer
/// taken from it (findLastPointerUse); null when unused. Sets `escapes` when
/// one of them reaches the function's return.
static Operation *findLastUse(Value root, Block &block, bool &escapes) {
  Operation *last = nullptr;
  SmallVector<Value> worklist = {root};
  DenseSet<Value> seen = {root};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *top = block.findAncestorOpInBlock(*use.getOwner());
      if (!top)
        continue;
      if (isa<func::ReturnOp>(top))
        escapes = true;
      if (!last || last->isBeforeInBlock(top))
        last = top;
      if (isa<memref::ExtractAlignedPointerAsIndexOp>(use.getOwner()))
        if (Operation *user = findLastPointerUse(use.getOwner(), block))
          if (last->isBeforeInBlock(user))
            last = user;
      for (Value result : use.getOwner()->getResults())
        if (isa<BaseMemRefType>(result.getType()) && seen.insert(result).second)
          worklist.push_back(result);
    }
  }
  return last;
}

struct DeviceMemoryPass
    : StepPass<DeviceMemoryPass, joint::impl::JointGPUDeviceMemoryBase> {
  LogicalResult runOnStep(func::FuncOp func, Block &body) {
    // No allocation below the top level (inside loops or kernels).
    if (failed(rejectNestedOps(
            func, [](Operation *op) { return isa<memref::AllocOp>(op); },
            "allocates inside a loop or kernel; the CUDA target allocates at "
            "the top of the step only")))
      return failure();

    for (Operation *op : llvm::to_vector(llvm::make_pointer_range(body))) {
      if (isa<memref::LoadOp, memref::StoreOp, scf::ForOp, scf::WhileOp,
              scf::ParallelOp, linalg::LinalgOp, memref::AtomicRMWOp,
              memref::GenericAtomicRMWOp>(op)) {
        op->emitOpError() << "computes on the host; the CUDA target runs "
                             "every compute op of the step on the device";
        return failure();
      }
      if (auto copy = dyn_cast<memref::CopyOp>(op)) {
        if (!hasIdentityLayout(copy.getSource()) ||
            !hasIdentityLayout(copy.getTarget())) {
          copy.emitOpError() << "copies a strided buffer on the host";
          return failure();
        }
        OpBuilder b(copy);
        gpu::MemcpyOp::create(b, copy.getLoc(), /*asyncToken=*/Type(),
                              ValueRange{}, copy.getTarget(), copy.getSource());
        copy.erase();
        continue;
      }
      if (isa<memref::DeallocOp>(op)) {
        op->erase(); // frees are placed at last use below
        continue;
      }
      if (!isa<memref::AllocOp, memref::AllocaOp>(op))
        continue;
      auto type = cast<MemRefType>(op->getResult(0).getType());
      ValueRange sizes, symbols;
      if (auto heap = dyn_cast<memref::AllocOp>(op)) {
        sizes = heap.getDynamicSizes();
        symbols = heap.getSymbolOperands();
      } else {
        auto stack = cast<memref::AllocaOp>(op);
        sizes = stack.getDynamicSizes();
        symbols = stack.getSymbolOperands();
      }
      OpBuilder b(op);
      auto alloc = gpu::AllocOp::create(b, op->getLoc(), type,
                                        /*asyncToken=*/Type(),
                                        /*asyncDependencies=*/ValueRange{},
                                        sizes, symbols);
      op->getResult(0).replaceAllUsesWith(alloc.getMemref());
      op->erase();
      bool escapes = false;
      Operation *last = findLastUse(alloc.getMemref(), body, escapes);
      if (escapes) {
        alloc.emitOpError() << "returns a step-allocated buffer; the CUDA "
                               "entry writes results into caller buffers";
        return failure();
      }
      b.setInsertionPointAfter(last ? last : alloc.getOperation());
      gpu::DeallocOp::create(b, alloc.getLoc(), /*asyncToken=*/Type(),
                             ValueRange{}, alloc.getMemref());
    }
    return success();
  }
};

} // namespace

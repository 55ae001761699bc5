//===- DeviceMemory.cpp - Device allocations freed at last use ------------===//
//
// Implements `joint-gpu-device-memory`. After bufferization every temporary
// is a host `memref.alloc`; on the CUDA target each top-level allocation
// becomes a `gpu.alloc` and gets a `gpu.dealloc` right after the last
// top-level op that uses it or a memref derived from it (findLastUseInBlock,
// shared with joint-free-at-last-use), so buffers live exactly as long as the
// memory model assumes; a buffer an `ao` offload reads lives until its
// forward wait (the offload call is marked joint.reads_until_result_use).
// Top-level copies between identity-layout buffers become `gpu.memcpy`. The
// pass also checks that no compute is left on the host (loads, stores, loops,
// linalg ops).
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "joint/Conversion/LowerToCUDA/Passes.h"
#include "joint/Transforms/BufferLiveness.h"
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
      Operation *last =
          joint::findLastUseInBlock(alloc.getMemref(), body, escapes);
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

//===- HostToDevice.cpp - Host compute into one-iteration loops -----------===//
//
// Implements `joint-gpu-host-to-device`. Upstream's route maps only
// `scf.parallel` loops to kernels; a linalg op with no parallel dimension (a
// 0-d result, a full reduction such as the nll_loss scalar) lowers to host
// `scf.for` loops and loads/stores, which would read device memory on the
// host. Each maximal run of such ops at the top of the function (with the
// pure ops computing on loaded values) moves into one
// `scf.parallel (%i) = (0) to (1)`, so the later mapping gives it a 1x1
// kernel and nothing of the step computes on the host. A scalar such a run
// computes for a later kernel travels through a 0-d buffer.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "joint/Conversion/LowerToCUDA/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/ScopeExit.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTGPUHOSTTODEVICE
#include "joint/Conversion/LowerToCUDA/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

namespace {

/// True for an op that touches buffer contents: loads, stores, copies,
/// linalg ops, atomics, or a region op containing one.
static bool touchesBufferContents(Operation *op) {
  WalkResult result = op->walk([](Operation *nested) {
    if (isa<memref::LoadOp, memref::StoreOp, memref::CopyOp,
            memref::AtomicRMWOp, memref::GenericAtomicRMWOp, linalg::LinalgOp>(
            nested))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// Ops that stay on the host whatever they touch: kernels-to-be, buffer
/// management, calls into the runtime, the terminator.
static bool staysOnHost(Operation *op) {
  return isa<scf::ParallelOp, memref::AllocOp, memref::AllocaOp,
             memref::DeallocOp, func::CallOp, func::ReturnOp>(op) ||
         op->getName().getDialectNamespace() == "gpu";
}

struct HostToDevicePass
    : StepPass<HostToDevicePass, joint::impl::JointGPUHostToDeviceBase> {
  LogicalResult runOnStep(func::FuncOp, Block &body) {
    DenseSet<Operation *> device;
    SmallVector<Operation *> run; // device ops and pure ops in between
    for (Operation *op : llvm::to_vector(llvm::make_pointer_range(body))) {
      bool onDevice = false;
      if (!staysOnHost(op)) {
        onDevice = touchesBufferContents(op) ||
                   llvm::any_of(op->getOperands(), [&](Value v) {
                     Operation *def = v.getDefiningOp();
                     return def && device.contains(def);
                   });
      }
      if (onDevice) {
        device.insert(op);
        run.push_back(op);
        continue;
      }
      if (!run.empty() && isMemoryEffectFree(op) && !staysOnHost(op)) {
        run.push_back(op); // hoisted before the run when it is flushed
        continue;
      }
      if (failed(flush(run, device)))
        return failure();
    }
    return flush(run, device);
  }

  /// Moves the device ops of `run` into one single-iteration scf.parallel
  /// placed where the first of them was; the host ops of the run go first.
  LogicalResult flush(SmallVector<Operation *> &run,
                      const DenseSet<Operation *> &device) {
    llvm::scope_exit clear([&] { run.clear(); });
    while (!run.empty() && !device.contains(run.back()))
      run.pop_back();
    if (run.empty())
      return success();
    Operation *first =
        *llvm::find_if(run, [&](Operation *op) { return device.contains(op); });
    for (Operation *op : run)
      if (!device.contains(op))
        op->moveBefore(first);
    // A value computed here and used by a later kernel (e.g. nll_loss's
    // 1/total_weight) goes through a 0-d device buffer: stored at the end of
    // this kernel, loaded where it is used. Host code may not use it.
    DenseSet<Operation *> inRun;
    for (Operation *op : run)
      if (device.contains(op))
        inRun.insert(op);
    Block *block = first->getBlock();
    SmallVector<Value> escaping;
    for (Operation *op : run) {
      if (!inRun.contains(op))
        continue;
      for (Value result : op->getResults()) {
        bool escapes = false;
        for (Operation *user : result.getUsers()) {
          Operation *top = block->findAncestorOpInBlock(*user);
          if (top && inRun.contains(top))
            continue;
          if (!top || (staysOnHost(top) && !isa<scf::ParallelOp>(top)) ||
              !(result.getType().isIntOrIndexOrFloat()))
            return op->emitOpError()
                   << "computes on the device a value that host code uses "
                      "(joint-gpu-host-to-device)";
          escapes = true;
        }
        if (escapes)
          escaping.push_back(result);
      }
    }
    OpBuilder b(first);
    Location loc = first->getLoc();
    SmallVector<Value> buffers;
    for (Value v : escaping)
      buffers.push_back(memref::AllocOp::create(
          b, v.getLoc(), MemRefType::get({}, v.getType())));
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto parallel = scf::ParallelOp::create(b, loc, ValueRange{zero},
                                            ValueRange{one}, ValueRange{one});
    Operation *terminator = parallel.getBody()->getTerminator();
    for (Operation *op : run)
      if (inRun.contains(op))
        op->moveBefore(terminator);
    for (auto [v, buffer] : llvm::zip(escaping, buffers)) {
      b.setInsertionPoint(terminator);
      memref::StoreOp::create(b, v.getLoc(), v, buffer);
      for (OpOperand &use : llvm::make_early_inc_range(v.getUses())) {
        Operation *user = use.getOwner();
        if (parallel->isAncestor(user))
          continue;
        b.setInsertionPoint(user);
        use.set(memref::LoadOp::create(b, v.getLoc(), buffer, ValueRange{}));
      }
    }
    return success();
  }
};

} // namespace

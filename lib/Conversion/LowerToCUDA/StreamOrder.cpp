//===- StreamOrder.cpp - The step's device ops on one stream --------------===//
//
// Implements `joint-gpu-stream-order`: every top-level async-capable GPU op
// (launch, alloc, dealloc, memcpy, memset) becomes async and depends on the
// token of the one before, from a single `gpu.wait async` (which the runtime
// maps to its compute stream). Upstream's `gpu-async-region` does the same
// but also blocks the host before every call and at the return; here calls
// go to runtime shims that enqueue on that same compute stream, and the
// caller synchronises, so no host wait is added.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "joint/Conversion/LowerToCUDA/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTGPUSTREAMORDER
#include "joint/Conversion/LowerToCUDA/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

namespace {

static bool isStreamOp(Operation *op) {
  return isa<gpu::LaunchFuncOp, gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp,
             gpu::MemsetOp>(op);
}

struct StreamOrderPass
    : StepPass<StreamOrderPass, joint::impl::JointGPUStreamOrderBase> {
  LogicalResult runOnStep(func::FuncOp func, Block &body) {
    // Ops inside a gpu.launch run in its kernel, not on the stream.
    auto isHostStreamOp = [](Operation *op) {
      return isStreamOp(op) && !op->getParentOfType<gpu::LaunchOp>();
    };
    if (failed(rejectNestedOps(func, isHostStreamOp,
                               "is nested in a region; the CUDA step orders "
                               "only top-level device ops on its stream")))
      return failure();

    SmallVector<Operation *> ops(
        llvm::make_filter_range(llvm::make_pointer_range(body), isStreamOp));
    if (ops.empty())
      return success();
    OpBuilder b(ops.front());
    Type tokenType = b.getType<gpu::AsyncTokenType>();
    Value token =
        gpu::WaitOp::create(b, ops.front()->getLoc(), tokenType, ValueRange{})
            .getAsyncToken();
    for (Operation *op : ops) {
      auto async = cast<gpu::AsyncOpInterface>(op);
      async.addAsyncDependency(token);
      if (Value existing = async.getAsyncToken()) {
        token = existing;
        continue;
      }
      // Rebuild the op with a token appended to its results.
      SmallVector<Type> resultTypes(op->getResultTypes());
      resultTypes.push_back(tokenType);
      b.setInsertionPoint(op);
      Operation *replacement = Operation::create(
          op->getLoc(), op->getName(), resultTypes, op->getOperands(),
          op->getDiscardableAttrDictionary(), op->getPropertiesStorage(),
          op->getSuccessors(), /*numRegions=*/0);
      b.insert(replacement);
      op->replaceAllUsesWith(replacement->getResults().drop_back());
      token = replacement->getResults().back();
      op->erase();
    }
    return success();
  }
};

} // namespace

//===- GuardEmptyTensors.cpp - Keep shared values out of output buffers
//----===//
//
// Implements `joint-guard-empty-tensors`, run right before upstream
// `eliminate-empty-tensors`. That pass computes a value whose chain starts
// at a `tensor.empty` directly in the output buffer the value is
// materialized into. When a value on the chain has another reader that
// updates it in place (two scatter loops on one base, one of which becomes
// a step output), one-shot bufferization may place that reader's result in
// the output buffer too, and the final materialization then overwrites it:
// the step returns wrong values. A `tensor.empty` whose chain (through
// destination-passing inits and `scf.for` iter_args) reaches a value with
// more than one use becomes a `bufferization.alloc_tensor`, which the
// elimination leaves alone; single-use chains, the common case, keep
// computing into the output buffer.
//
//===----------------------------------------------------------------------===//

#include "joint/Conversion/LowerToCPU/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTGUARDEMPTYTENSORS
#include "joint/Conversion/LowerToCPU/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

/// Whether the chain from `empty` reaches a value with more than one use:
/// each value is followed into the result tied to it when its one use is a
/// destination-passing op's init or an `scf.for` init arg.
static bool reachesSharedValue(tensor::EmptyOp empty) {
  Value v = empty.getResult();
  while (true) {
    if (!v.hasOneUse())
      return !v.use_empty();
    OpOperand &use = *v.getUses().begin();
    Operation *user = use.getOwner();
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(user)) {
      if (!dps.isDpsInit(&use))
        return false;
      v = dps.getTiedOpResult(&use);
      continue;
    }
    if (auto loop = dyn_cast<scf::ForOp>(user)) {
      if (use.getOperandNumber() < loop.getNumControlOperands())
        return false;
      v = loop.getTiedLoopResult(&use);
      continue;
    }
    return false;
  }
}

namespace {
struct GuardEmptyTensorsPass
    : public joint::impl::JointGuardEmptyTensorsBase<GuardEmptyTensorsPass> {
  void runOnOperation() override {
    SmallVector<tensor::EmptyOp> guarded;
    getOperation().walk([&](tensor::EmptyOp empty) {
      if (reachesSharedValue(empty))
        guarded.push_back(empty);
    });
    IRRewriter rewriter(&getContext());
    for (tensor::EmptyOp empty : guarded) {
      rewriter.setInsertionPoint(empty);
      rewriter.replaceOpWithNewOp<bufferization::AllocTensorOp>(
          empty, empty.getType(), empty.getDynamicSizes());
    }
    numGuarded = guarded.size();
  }
};
} // namespace

//===- ParallelFirst.cpp - Parallel loops outermost -----------------------===//
//
// Implements `joint-gpu-parallel-first`: buffer copies become linalg.copy
// (copies of a view onto itself are dropped),
// and every linalg op on buffers is generalized and interchanged so that its
// parallel iterators come first, in their order, followed by its reductions in
// their order. Upstream's convert-linalg-to-parallel-loops maps only the
// leading parallel iterators to an scf.parallel, so this gives every op with a
// parallel dimension a real grid, whatever the position of its reductions; the
// reduction order of each output element is unchanged.
//
//===----------------------------------------------------------------------===//

#include "joint/Conversion/LowerToCUDA/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTGPUPARALLELFIRST
#include "joint/Conversion/LowerToCUDA/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;

/// True when `a` and `b` are the same memory: one value, or subviews of one
/// value with the same offsets, sizes and strides.
static bool isSameView(Value a, Value b) {
  if (a == b)
    return true;
  auto x = a.getDefiningOp<memref::SubViewOp>();
  auto y = b.getDefiningOp<memref::SubViewOp>();
  return x && y && x.getSource() == y.getSource() &&
         x.getType() == y.getType() &&
         x.getMixedOffsets() == y.getMixedOffsets() &&
         x.getMixedSizes() == y.getMixedSizes() &&
         x.getMixedStrides() == y.getMixedStrides();
}

namespace {

struct ParallelFirstPass
    : public joint::impl::JointGPUParallelFirstBase<ParallelFirstPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // Buffer copies (bufferization's memref.copy) become linalg.copy, so
    // they turn into kernels like every other op, whatever their layouts.
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      // A copy of a view onto the same view (bufferization's insert_slice
      // of a value already computed in place) moves nothing.
      if (isSameView(copy.getSource(), copy.getTarget())) {
        rewriter.eraseOp(copy);
        continue;
      }
      rewriter.setInsertionPoint(copy);
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                  copy.getTarget());
    }
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    for (linalg::LinalgOp op : ops) {
      SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
      SmallVector<unsigned> order;
      for (auto [i, it] : llvm::enumerate(iterators))
        if (it == utils::IteratorType::parallel)
          order.push_back(i);
      unsigned numParallel = order.size();
      for (auto [i, it] : llvm::enumerate(iterators))
        if (it != utils::IteratorType::parallel)
          order.push_back(i);
      bool sorted = llvm::all_of(llvm::enumerate(order),
                                 [](auto p) { return p.index() == p.value(); });
      if (sorted || numParallel == 0)
        continue;
      rewriter.setInsertionPoint(op);
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic) {
        FailureOr<linalg::GenericOp> generalized =
            linalg::generalizeNamedOp(rewriter, op);
        if (failed(generalized))
          continue; // stays as it is: correct, only less parallel
        generic = *generalized;
      }
      if (failed(linalg::interchangeGenericOp(rewriter, generic, order))) {
        generic.emitOpError() << "cannot be interchanged to put its parallel "
                                 "loops first";
        return signalPassFailure();
      }
    }
  }
};

} // namespace

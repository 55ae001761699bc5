//===- FuseElementwise.cpp - Adjacent elementwise ops into one ------------===//
//
// Implements `joint-fuse-elementwise`: upstream's elementwise producer-
// consumer fusion on linalg on tensors (populateElementwiseOpsFusionPatterns),
// restricted to a producer whose only user is its consumer and comes right
// after it (nothing between them but constants, empty tensors and size
// queries). The fused op computes the same scalar ops in the same order, so
// results are bitwise unchanged; the producer's result, a whole temporary,
// is never materialised; and no value lives longer than before, since the
// consumer runs where the producer's result was consumed anyway (a producer
// in the forward is never moved into the backward).
//
//===----------------------------------------------------------------------===//

#include "joint/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTFUSEELEMENTWISE
#include "joint/Transforms/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;

/// True when `consumer` is the next op after `producer` that is neither a
/// constant, an empty tensor nor a size query.
static bool isNextAfter(Operation *producer, Operation *consumer) {
  if (producer->getBlock() != consumer->getBlock())
    return false;
  for (Operation *op = producer->getNextNode(); op; op = op->getNextNode()) {
    if (op == consumer)
      return true;
    if (!isa<arith::ConstantOp, tensor::EmptyOp, tensor::DimOp>(op))
      return false;
  }
  return false;
}

namespace {
struct FuseElementwisePass
    : public joint::impl::JointFuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *fused) {
          Operation *producer = fused->get().getDefiningOp();
          return producer && producer->hasOneUse() &&
                 isNextAfter(producer, fused->getOwner());
        });
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};
} // namespace

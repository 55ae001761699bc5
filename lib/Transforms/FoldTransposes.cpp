//===- FoldTransposes.cpp - Transposes read through readers ---------------===//
//
// Implements `joint-fold-transposes`: on linalg on tensors, a
// `linalg.transpose` feeding a `linalg.generic`, `linalg.matmul` or
// `linalg.batch_matmul` is folded into that op's indexing map, so the op
// reads the transpose's source in place; a transpose of a matmul result
// becomes the matmul with its operands swapped; transposes of transposes
// compose (upstream's canonicalization); a transpose of an elementwise or
// reduction result is folded into that op's output map. In torch `t`,
// `transpose` and `permute` are views; folded, they cost no buffer in the
// compiled step either, as the memory model assumes (docs/lowering.md,
// "Memory").
//
//===----------------------------------------------------------------------===//

#include "joint/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTFOLDTRANSPOSES
#include "joint/Transforms/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;

namespace {

/// The map reading a transpose's source where `map` read its result:
/// result dim j of `linalg.transpose` is source dim perm[j].
static AffineMap readThroughTranspose(AffineMap map, ArrayRef<int64_t> perm) {
  SmallVector<AffineExpr> exprs(map.getNumResults());
  for (auto [j, p] : llvm::enumerate(perm))
    exprs[p] = map.getResult(j);
  return AffineMap::get(map.getNumDims(), map.getNumSymbols(), exprs,
                        map.getContext());
}

/// Whether `maps` are maps `linalg.matmul` (rank 2) or `linalg.batch_matmul`
/// (rank 3) accepts: each operand plain or with its two matrix dims swapped,
/// the output in (batch,) m, n order.
static bool isPlainOrTransposedMatmul(ArrayRef<AffineMap> maps, bool batched) {
  MLIRContext *ctx = maps[0].getContext();
  unsigned lead = batched ? 1 : 0, n = lead + 3;
  auto map = [&](ArrayRef<unsigned> dims) {
    SmallVector<AffineExpr> e;
    if (batched)
      e.push_back(getAffineDimExpr(0, ctx));
    for (unsigned d : dims)
      e.push_back(getAffineDimExpr(lead + d, ctx));
    return AffineMap::get(n, 0, e, ctx);
  };
  // Loops (batch,) m = 0, n = 1, k = 2.
  return (maps[0] == map({0, 2}) || maps[0] == map({2, 0})) &&
         (maps[1] == map({2, 1}) || maps[1] == map({1, 2})) &&
         maps[2] == map({0, 1});
}

/// An input of a generic, matmul or batch_matmul produced by
/// `linalg.transpose`: the op reads the transpose's source instead.
struct FoldTransposeIntoReader : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    bool batched = isa<linalg::BatchMatmulOp>(op);
    if (!isa<linalg::GenericOp, linalg::MatmulOp>(op) && !batched)
      return failure();
    if (!op.hasPureTensorSemantics())
      return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<std::pair<unsigned, Value>> replaced;
    for (OpOperand *input : op.getDpsInputOperands()) {
      auto transpose = input->get().getDefiningOp<linalg::TransposeOp>();
      if (!transpose)
        continue;
      unsigned i = input->getOperandNumber();
      AffineMap folded =
          readThroughTranspose(maps[i], transpose.getPermutation());
      SmallVector<AffineMap> candidate = maps;
      candidate[i] = folded;
      if (!isa<linalg::GenericOp>(op) &&
          !isPlainOrTransposedMatmul(candidate, batched))
        continue;
      maps = std::move(candidate);
      replaced.push_back({i, transpose.getInput()});
    }
    if (replaced.empty())
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      for (auto [i, source] : replaced)
        op->setOperand(i, source);
      op->setAttr("indexing_maps", rewriter.getAffineMapArrayAttr(maps));
    });
    return success();
  }
};

/// transpose(matmul(A, B)) with the matmul's only use the transpose and its
/// init a zero-dimensional fill: (A B)^T = B^T A^T, a matmul of the swapped
/// operands into the transpose's init filled the same way.
struct FoldTransposeOfMatmul : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::TransposeOp transpose,
                                PatternRewriter &rewriter) const override {
    auto matmul = transpose.getInput().getDefiningOp<linalg::MatmulOp>();
    if (!matmul || !matmul->hasOneUse() || !matmul.hasPureTensorSemantics() ||
        transpose.getPermutation() != ArrayRef<int64_t>{1, 0})
      return failure();
    auto fill = matmul.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
    if (!fill)
      return failure();
    SmallVector<AffineMap> maps = matmul.getIndexingMapsArray();
    MLIRContext *ctx = rewriter.getContext();
    // Loops m' = n, n' = m: swap d0 and d1 in each operand's map.
    AffineMap swap =
        AffineMap::getPermutationMap(ArrayRef<unsigned>{1, 0, 2}, ctx);
    SmallVector<AffineMap> swapped = {maps[1].compose(swap),
                                      maps[0].compose(swap), maps[2]};
    if (!isPlainOrTransposedMatmul(swapped, /*batched=*/false))
      return failure();
    Value init =
        linalg::FillOp::create(rewriter, fill.getLoc(), fill.getDpsInputs()[0],
                               transpose.getInit())
            .getResult(0);
    auto result = linalg::MatmulOp::create(
        rewriter, matmul.getLoc(), TypeRange{init.getType()},
        ValueRange{matmul.getDpsInputs()[1], matmul.getDpsInputs()[0]},
        ValueRange{init});
    result->setAttr("indexing_maps", rewriter.getAffineMapArrayAttr(swapped));
    // Keep the node names and any other discardable attributes.
    for (NamedAttribute a : matmul->getDiscardableAttrs())
      result->setAttr(a.getName(), a.getValue());
    rewriter.replaceOp(transpose, result->getResults());
    return success();
  }
};

/// transpose(generic) with the transpose the generic's only use and the
/// generic's init empty (or a fill of an empty tensor) it does not read
/// otherwise: the generic writes its result transposed, into an empty
/// tensor of the transpose's shape (filled the same way).
struct FoldTransposeIntoWriter : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::TransposeOp transpose,
                                PatternRewriter &rewriter) const override {
    auto generic = transpose.getInput().getDefiningOp<linalg::GenericOp>();
    if (!generic || generic->getNumResults() != 1 || !generic->hasOneUse() ||
        !generic.hasPureTensorSemantics())
      return failure();
    OpOperand *out = generic.getDpsInitOperand(0);
    // A new empty tensor of the transpose's shape where the generic runs.
    auto empty = transpose.getInit().getDefiningOp<tensor::EmptyOp>();
    if (!empty || llvm::any_of(empty->getOperands(), [&](Value size) {
          Operation *def = size.getDefiningOp();
          return def && def->getBlock() == generic->getBlock() &&
                 !def->isBeforeInBlock(generic);
        }))
      return failure();
    // The init: empty, or a fill of an empty tensor; the payload reads it
    // only as the fill's value (a reduction's accumulator).
    auto fill = out->get().getDefiningOp<linalg::FillOp>();
    if (fill ? !fill.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>()
             : !out->get().getDefiningOp<tensor::EmptyOp>() ||
                   generic.payloadUsesValueFromOperand(out))
      return failure();
    // Checks done: nothing is created before this point.
    rewriter.setInsertionPoint(generic);
    Value init = tensor::EmptyOp::create(
        rewriter, empty.getLoc(), empty.getType().getShape(),
        empty.getType().getElementType(), empty.getDynamicSizes());
    if (fill)
      init = linalg::FillOp::create(rewriter, fill.getLoc(),
                                    fill.getDpsInputs()[0], init)
                 .getResult(0);
    // Result dim j of the transpose is dim perm[j] of the generic's.
    AffineMap map = generic.getMatchingIndexingMap(out);
    SmallVector<AffineExpr> exprs;
    for (int64_t p : transpose.getPermutation())
      exprs.push_back(map.getResult(p));
    SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
    maps.back() = AffineMap::get(map.getNumDims(), map.getNumSymbols(), exprs,
                                 map.getContext());
    rewriter.modifyOpInPlace(generic, [&] {
      out->set(init);
      generic.getResult(0).setType(init.getType());
      generic->setAttr("indexing_maps", rewriter.getAffineMapArrayAttr(maps));
    });
    rewriter.replaceOp(transpose, generic->getResults());
    return success();
  }
};

struct FoldTransposesPass
    : joint::impl::JointFoldTransposesBase<FoldTransposesPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<FoldTransposeIntoReader, FoldTransposeOfMatmul,
                 FoldTransposeIntoWriter>(ctx);
    linalg::TransposeOp::getCanonicalizationPatterns(patterns, ctx);
    // Dead transposes and fills left behind are erased by the driver.
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      getOperation().emitError(
          "joint-fold-transposes: the rewrites did not converge");
      signalPassFailure();
    }
  }
};

} // namespace

//===- TileMatmuls.cpp - Tile and vectorize the matmul family -------------===//
//
// Implements `joint-tile-matmuls`: every linalg contraction (matmul,
// batch_matmul, and contraction-shaped generics such as the f32-accumulating
// bf16 matmul) is tiled with scf.for over its batch, M, N and K dimensions
// through the TilingInterface, and each tile with a static shape is
// vectorized (linalg::vectorize) into vector.contract on vector.transfer
// reads and writes, which the LLVM lowering turns into SIMD FMAs. Tile sizes
// shrink to powers of two dividing static dimensions, so every tile is full;
// ragged tiles of symbolic dimensions stay linalg (scalar loops). A
// contraction whose result only an elementwise op reads (a bf16 matmul's f32
// accumulator before its truncation, addmm's epilogue) is first fused into
// that op's row tiles, so its accumulator exists one tile at a time.
//
//===----------------------------------------------------------------------===//

#include "joint/Conversion/LowerToCPU/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTTILEMATMULS
#include "joint/Conversion/LowerToCPU/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

namespace {

/// The largest power of two up to `requested` that divides the static
/// `range` (so every tile is full and static), or `requested` for a dynamic
/// range (ragged tiles, left scalar).
static int64_t getDividingTile(int64_t range, int64_t requested) {
  if (ShapedType::isDynamic(range))
    return requested;
  int64_t tile = 1;
  while (tile * 2 <= requested && range % (tile * 2) == 0)
    tile *= 2;
  return tile;
}

/// Tile sizes per loop of `op` (0 = not tiled): the innermost M, N and K
/// dimensions get `m`, `n`, `k` (shrunk to divide the loop range), every
/// other contraction dimension 1.
static SmallVector<int64_t>
getTileSizes(linalg::LinalgOp op, const linalg::ContractionDimensions &dims,
             int64_t m, int64_t n, int64_t k) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<int64_t> sizes(op.getNumLoops(), 0);
  for (unsigned d : dims.batch)
    sizes[d] = 1;
  auto assign = [&](ArrayRef<unsigned> group, int64_t size) {
    for (unsigned d : group)
      sizes[d] = 1;
    if (!group.empty())
      sizes[group.back()] = getDividingTile(ranges[group.back()], size);
  };
  assign(dims.m, m);
  assign(dims.n, n);
  assign(dims.k, k);
  return sizes;
}

/// The elementwise generic that is the only use of `op`'s result and reads
/// it with an identity map into an identity-mapped result (the truncation of
/// a bf16/f16 matmul's f32 accumulator, addmm's epilogue), or null.
static linalg::GenericOp getElementwiseConsumer(linalg::LinalgOp op) {
  Value result = op->getResult(0);
  if (!result.hasOneUse())
    return nullptr;
  auto consumer = dyn_cast<linalg::GenericOp>(*result.getUsers().begin());
  if (!consumer || !consumer.hasPureTensorSemantics() ||
      consumer.getNumDpsInits() != 1 ||
      consumer.getNumParallelLoops() != consumer.getNumLoops())
    return nullptr;
  OpOperand &use = *result.getUses().begin();
  if (consumer.isDpsInit(&use) ||
      !consumer.getMatchingIndexingMap(&use).isIdentity() ||
      !consumer.getIndexingMapMatchingResult(consumer->getResult(0))
           .isIdentity())
    return nullptr;
  return consumer;
}

/// Tiles `consumer` (see getElementwiseConsumer) by `tileM` rows of the
/// contraction `op` (batch dims by 1) and fuses `op` and its zero fill into
/// each tile, so the accumulator exists one [tileM, N] tile at a time
/// instead of a whole [M, N] buffer the memory model does not count.
static void fuseIntoConsumerTiles(IRRewriter &rewriter, linalg::LinalgOp op,
                                  linalg::GenericOp consumer,
                                  const linalg::ContractionDimensions &dims,
                                  int64_t tileM) {
  AffineMap outMap = op.getIndexingMapMatchingResult(op->getResult(0));
  if (!outMap.isProjectedPermutation())
    return;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<int64_t> sizes(outMap.getNumResults(), 0);
  for (unsigned i = 0; i < outMap.getNumResults(); ++i) {
    unsigned loop = outMap.getDimPosition(i);
    if (llvm::is_contained(dims.batch, loop))
      sizes[i] = 1;
    else if (llvm::is_contained(dims.m, loop))
      sizes[i] =
          loop == dims.m.back() ? getDividingTile(ranges[loop], tileM) : 1;
  }
  Operation *contraction = op.getOperation();
  scf::SCFTileAndFuseOptions options;
  options.tilingOptions.setTileSizes(
      getAsIndexOpFoldResult(rewriter.getContext(), sizes));
  // Only the contraction and the fill of its accumulator move into a tile.
  options.setFusionControlFn(
      [&](tensor::ExtractSliceOp, OpResult producer, bool isDestination)
          -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        Operation *owner = producer.getOwner();
        if (owner == contraction ||
            (isa<linalg::FillOp>(owner) && isDestination &&
             llvm::is_contained(owner->getUsers(), contraction)))
          return scf::SCFTileAndFuseOptions::ControlFnResult{};
        return std::nullopt;
      });
  rewriter.setInsertionPoint(consumer);
  FailureOr<scf::SCFTileAndFuseResult> fused =
      scf::tileConsumerAndFuseProducersUsingSCF(
          rewriter, cast<TilingInterface>(consumer.getOperation()), options);
  if (failed(fused))
    return; // the untiled pair still lowers
  rewriter.replaceOp(consumer,
                     fused->replacements.lookup(consumer->getResult(0)));
}

struct TileMatmulsPass
    : public joint::impl::JointTileMatmulsBase<TileMatmulsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (tileM <= 0 || tileN <= 0 || tileK <= 0) {
      getOperation().emitError()
          << "joint-tile-matmuls: tile sizes must be positive, got tile-m="
          << tileM << " tile-n=" << tileN << " tile-k=" << tileK;
      return signalPassFailure();
    }
    auto collect = [&] {
      SmallVector<linalg::LinalgOp> found;
      getOperation().walk([&](linalg::LinalgOp op) {
        if (op.hasPureTensorSemantics() && op.getNumDpsInits() == 1 &&
            linalg::isaContractionOpInterface(op))
          found.push_back(op);
      });
      return found;
    };
    IRRewriter rewriter(&getContext());
    // Accumulators read by one elementwise op: computed tile by tile.
    for (linalg::LinalgOp op : collect()) {
      FailureOr<linalg::ContractionDimensions> dims =
          linalg::inferContractionDims(op);
      linalg::GenericOp consumer = getElementwiseConsumer(op);
      if (succeeded(dims) && !dims->m.empty() && consumer)
        fuseIntoConsumerTiles(rewriter, op, consumer, *dims, tileM);
    }
    // A fused accumulator's slice of the whole fill becomes a fill of the
    // tile; the untiled contractions and fills left unused are erased.
    {
      RewritePatternSet cleanup(&getContext());
      linalg::populateSwapExtractSliceWithFillPatterns(cleanup);
      tensor::populateFoldTensorEmptyPatterns(cleanup);
      if (failed(applyPatternsGreedily(getOperation(), std::move(cleanup))))
        return signalPassFailure();
    }
    SmallVector<linalg::LinalgOp> targets = collect();
    for (linalg::LinalgOp op : targets) {
      FailureOr<linalg::ContractionDimensions> dims =
          linalg::inferContractionDims(op);
      if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.empty())
        continue;
      auto tileable = dyn_cast<TilingInterface>(op.getOperation());
      if (!tileable)
        continue; // no TilingInterface model registered: lowers untiled
      scf::SCFTilingOptions options;
      SmallVector<int64_t> sizes = getTileSizes(op, *dims, tileM, tileN, tileK);
      options.setTileSizes(getAsIndexOpFoldResult(&getContext(), sizes));
      rewriter.setInsertionPoint(op);
      FailureOr<scf::SCFTilingResult> tiled =
          scf::tileUsingSCF(rewriter, tileable, options);
      if (failed(tiled))
        continue; // not tileable: the untiled op still lowers to loops
      rewriter.replaceOp(op, tiled->replacements);
      // Vectorize plain M x N x K contractions only: batch dims (tiled by 1)
      // leave unit vector dims that the outer-product lowering rejects.
      if (!vectorize || op.getNumLoops() != 3)
        continue;
      for (Operation *tile : tiled->tiledOps) {
        auto linalgTile = dyn_cast<linalg::LinalgOp>(tile);
        if (!linalgTile || linalgTile.hasDynamicShape())
          continue; // ragged tiles of a symbolic size stay scalar loops
        rewriter.setInsertionPoint(tile);
        FailureOr<linalg::VectorizationResult> vectorized =
            linalg::vectorize(rewriter, tile, /*inputVectorSizes=*/{},
                              /*inputScalableVecDims=*/{},
                              /*vectorizeNDExtract=*/false,
                              /*flatten1DDepthwiseConv=*/false,
                              /*assumeDynamicDimsMatchVecSizes=*/false,
                              /*createNamedContraction=*/true);
        if (succeeded(vectorized))
          rewriter.replaceOp(tile, vectorized->replacements);
      }
    }
  }
};

} // namespace

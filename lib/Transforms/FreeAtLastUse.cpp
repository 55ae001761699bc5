//===- FreeAtLastUse.cpp - Frees right after the last use -----------------===//
//
// Implements `joint-free-at-last-use`: every `memref.dealloc` of a buffer
// allocated in the same block moves to right after the buffer's last use in
// that block (findLastUseInBlock, alias-aware), instead of the end of the
// block where ownership-based deallocation puts it.
//
//===----------------------------------------------------------------------===//

#include "joint/Transforms/BufferLiveness.h"
#include "joint/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTFREEATLASTUSE
#include "joint/Transforms/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;

namespace {

struct FreeAtLastUsePass
    : joint::impl::JointFreeAtLastUseBase<FreeAtLastUsePass> {
  void runOnOperation() override {
    // Every destination first, then the moves: a move invalidates the
    // block's op order, and recomputing it per free would be quadratic.
    SmallVector<std::pair<memref::DeallocOp, Operation *>> moves;
    getOperation().walk([&](memref::DeallocOp free) {
      auto alloc = free.getMemref().getDefiningOp<memref::AllocOp>();
      Block *block = free->getBlock();
      if (!alloc || alloc->getBlock() != block)
        return;
      bool escapes = false;
      Operation *last =
          joint::findLastUseInBlock(alloc, *block, escapes, /*ignore=*/free);
      if (escapes)
        return;
      Operation *after = last ? last : alloc.getOperation();
      if (after->isBeforeInBlock(free))
        moves.emplace_back(free, after);
    });
    IRRewriter rewriter(&getContext());
    for (auto [free, after] : moves)
      rewriter.moveOpAfter(free, after);
  }
};

} // namespace

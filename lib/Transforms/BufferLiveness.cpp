//===- BufferLiveness.cpp - Last use of a buffer and its aliases ----------===//
//
// Implements findLastUseInBlock: a walk over the memref values derived from
// a buffer and the pointers taken from it, mapped to the ops of one block.
//
//===----------------------------------------------------------------------===//

#include "joint/Transforms/BufferLiveness.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

using namespace mlir;

namespace {

/// Keeps the latest op of `block` among those noted.
struct LastUse {
  Block &block;
  bool &escapes;
  Operation *last = nullptr;

  /// Notes `user`; returns the op of `block` that encloses it, or null
  /// (then the buffer escapes the block).
  Operation *note(Operation *user) {
    Operation *top = block.findAncestorOpInBlock(*user);
    if (!top) {
      escapes = true;
      return nullptr;
    }
    if (isa<func::ReturnOp>(top))
      escapes = true;
    if (!last || last->isBeforeInBlock(top))
      last = top;
    return top;
  }
};

/// Notes every op that uses a pointer taken from a buffer by `pointerOp`,
/// through integer casts; an op with kReadsUntilResultUseAttr also notes the
/// first op of the block that uses its first result.
void notePointerUses(Operation *pointerOp, LastUse &uses) {
  SmallVector<Value> worklist(pointerOp->getResults());
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (isa<arith::IndexCastOp, arith::IndexCastUIOp, LLVM::IntToPtrOp>(
              user)) {
        worklist.append(user->result_begin(), user->result_end());
        continue;
      }
      uses.note(user);
      if (!user->hasAttr(joint::kReadsUntilResultUseAttr) ||
          user->getNumResults() == 0)
        continue;
      Operation *first = nullptr;
      for (Operation *resultUser : user->getResult(0).getUsers()) {
        Operation *top = uses.block.findAncestorOpInBlock(*resultUser);
        if (top && (!first || top->isBeforeInBlock(first)))
          first = top;
      }
      if (first)
        uses.note(first);
    }
  }
}

} // namespace

Operation *joint::findLastUseInBlock(Value buffer, Block &block, bool &escapes,
                                     Operation *ignore) {
  LastUse uses{block, escapes};
  SmallVector<Value> worklist = {buffer};
  DenseSet<Value> seen = {buffer};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (user == ignore)
        continue;
      uses.note(user);
      if (isa<memref::ExtractAlignedPointerAsIndexOp>(user))
        notePointerUses(user, uses);
      // Derived memrefs: the user's results, or the enclosing op's results
      // when the user is a terminator yielding it out of a region.
      Operation *producer = user;
      if (user->hasTrait<OpTrait::IsTerminator>() && user->getParentOp() &&
          !isa<func::FuncOp>(user->getParentOp()))
        producer = user->getParentOp();
      for (Value result : producer->getResults())
        if (isa<BaseMemRefType>(result.getType()) && seen.insert(result).second)
          worklist.push_back(result);
    }
  }
  return uses.last;
}

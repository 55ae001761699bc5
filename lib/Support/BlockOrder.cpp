//===- BlockOrder.cpp - Stable topological order of a block ---------------===//

#include "joint/Support/BlockOrder.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

bool mlir::joint::sortBlockStably(Block &block) {
  SmallVector<Operation *> order;
  DenseMap<Operation *, unsigned> missing;
  DenseMap<Operation *, SmallVector<Operation *, 1>> waiters;
  llvm::SmallPtrSet<Operation *, 32> emitted;
  auto emit = [&](Operation *first) {
    SmallVector<Operation *> worklist{first};
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      order.push_back(op);
      emitted.insert(op);
      auto it = waiters.find(op);
      if (it == waiters.end())
        continue;
      // Waiters in reverse, so the worklist emits them in block order.
      for (Operation *w : llvm::reverse(it->second))
        if (--missing[w] == 0)
          worklist.push_back(w);
    }
  };
  Operation *terminator = block.getTerminator();
  for (Operation &op : block.without_terminator()) {
    llvm::SmallPtrSet<Operation *, 4> deps;
    for (Value v : op.getOperands())
      if (Operation *def = v.getDefiningOp())
        if (def->getBlock() == &block && !emitted.contains(def))
          deps.insert(def);
    if (deps.empty()) {
      emit(&op);
      continue;
    }
    missing[&op] = deps.size();
    for (Operation *def : deps)
      waiters[def].push_back(&op);
  }
  if (order.size() != block.getOperations().size() - 1)
    return false;
  for (Operation *op : order)
    op->moveBefore(terminator);
  return true;
}

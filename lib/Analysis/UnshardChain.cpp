//===- UnshardChain.cpp - FSDP unshard chains of a joint graph ------------===//
//
// Parameter-derived forward ops are found in one pass in block order; the
// chain is their part connected to a forward all-gather: descendants in the
// same pass, ancestors by one reverse pass over the operands.
//
//===----------------------------------------------------------------------===//

#include "joint/Analysis/UnshardChain.h"
#include "joint/Dialect/Joint/IR/OpSets.h"

using namespace mlir;
using namespace mlir::joint;

UnshardChain::UnshardChain(GraphOp graph) {
  Block &body = graph.getBody().front();
  llvm::DenseSet<Value> params;
  for (BlockArgument arg : body.getArguments())
    if (graph.getArgRole(arg.getArgNumber()) == Role::param)
      params.insert(arg);

  // Forward ops whose every operand is a parameter or a parameter-derived
  // result; those that are or read an all-gather (transitively) join the
  // chain at once.
  llvm::DenseSet<Operation *> derived;
  SmallVector<Operation *> ordered;
  for (Operation &op : body) {
    auto call = dyn_cast<CallFunctionOp>(op);
    if (!call || !call.isForward())
      continue;
    bool gather = isInOpSet(OpSet::ForwardAllGather, call.getTarget());
    bool fromParams = true, readsGather = false;
    for (Value v : op.getOperands()) {
      if (params.contains(v))
        continue;
      Operation *def = v.getDefiningOp();
      if (!def || !derived.contains(def)) {
        fromParams = false;
        break;
      }
      readsGather |= chain.contains(def);
    }
    if (!fromParams)
      continue;
    derived.insert(&op);
    ordered.push_back(&op);
    if (gather || readsGather)
      chain.insert(&op);
  }
  // What the chain reads, back to the parameters (the copy-in before each
  // all-gather). Reverse block order sees every user before its producers.
  for (Operation *op : llvm::reverse(ordered)) {
    if (!chain.contains(op))
      continue;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp(); def && derived.contains(def))
        chain.insert(def);
  }
}

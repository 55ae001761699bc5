//===- Utils.cpp - Helpers shared by the CUDA lowering passes -------------===//
//
// Implements the nesting and layout helpers of Utils.h.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

LogicalResult
joint::rejectNestedOps(func::FuncOp func,
                       function_ref<bool(Operation *)> mustBeTopLevel,
                       StringRef reason) {
  Block *body = &func.getBody().front();
  WalkResult nested = func.walk([&](Operation *op) {
    if (op->getBlock() == body || !mustBeTopLevel(op))
      return WalkResult::advance();
    op->emitOpError() << reason;
    return WalkResult::interrupt();
  });
  return failure(nested.wasInterrupted());
}

bool joint::hasIdentityLayout(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && type.getLayout().isIdentity();
}

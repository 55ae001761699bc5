//===- CheckBoundedStack.cpp - No stack growth per iteration --------------===//
//
// Implements `joint-check-bounded-stack`: refuses a `memref.alloca` whose
// nearest enclosing loop is reached before any `memref.alloca_scope`, i.e.
// one that takes more stack on every iteration.
//
//===----------------------------------------------------------------------===//

#include "joint/Transforms/Passes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTCHECKBOUNDEDSTACK
#include "joint/Transforms/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;

namespace {

struct CheckBoundedStackPass
    : joint::impl::JointCheckBoundedStackBase<CheckBoundedStackPass> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([](memref::AllocaOp alloca) {
      for (Operation *parent = alloca->getParentOp(); parent;
           parent = parent->getParentOp()) {
        if (isa<memref::AllocaScopeOp, FunctionOpInterface>(parent))
          return WalkResult::advance();
        if (isa<LoopLikeOpInterface>(parent)) {
          InFlightDiagnostic diag = alloca.emitOpError()
                                    << "allocates stack inside a loop without "
                                       "a memref.alloca_scope: the stack "
                                       "grows with every iteration";
          diag.attachNote(parent->getLoc())
              << "the loop: '" << parent->getName() << "'";
          return WalkResult::interrupt();
        }
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

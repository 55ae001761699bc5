//===- CountOutputs.cpp - Outputs counted from their first write ----------===//
//
// Implements `joint-cpu-count-outputs`: a call to the step runtime's
// `joint_step_output_written(bytes)` before the first op of `@joint_entry`
// that uses each caller-allocated output buffer.
//
//===----------------------------------------------------------------------===//

#include "joint/Conversion/LowerToCPU/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTCPUCOUNTOUTPUTS
#include "joint/Conversion/LowerToCPU/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

namespace {

/// Name of the step runtime's counter (runtime/cpu/StepRuntime.c).
constexpr StringLiteral kOutputWritten = "joint_step_output_written";

struct CountOutputsPass
    : public joint::impl::JointCPUCountOutputsBase<CountOutputsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto entry = module.lookupSymbol<func::FuncOp>(kCPUEntryName);
    auto numInputs = entry
                         ? entry->getAttrOfType<IntegerAttr>("joint.num_inputs")
                         : IntegerAttr();
    if (!entry || entry.isExternal() || !numInputs)
      return;
    OpBuilder b(module.getBodyRegion());
    Type i64 = b.getI64Type();
    auto counter = module.lookupSymbol<func::FuncOp>(kOutputWritten);
    if (!counter) {
      b.setInsertionPointToEnd(module.getBody());
      counter = func::FuncOp::create(b, module.getLoc(), kOutputWritten,
                                     b.getFunctionType({i64}, {}));
      counter.setPrivate();
    }
    Block &body = entry.getBody().front();
    for (BlockArgument arg : body.getArguments().drop_front(
             std::min<size_t>(numInputs.getInt(), body.getNumArguments()))) {
      auto type = dyn_cast<MemRefType>(arg.getType());
      if (!type || !type.getElementType().isIntOrFloat())
        continue;
      Operation *first = nullptr;
      for (Operation *user : arg.getUsers())
        if (Operation *top = body.findAncestorOpInBlock(*user))
          if (!first || top->isBeforeInBlock(first))
            first = top;
      if (!first)
        continue;
      b.setInsertionPoint(first);
      Location loc = first->getLoc();
      int64_t elementBytes =
          (type.getElementType().getIntOrFloatBitWidth() + 7) / 8;
      Value bytes = arith::ConstantIntOp::create(b, loc, i64, elementBytes);
      for (int64_t d = 0; d < type.getRank(); ++d) {
        Value size = memref::DimOp::create(b, loc, arg, d);
        size = arith::IndexCastOp::create(b, loc, i64, size);
        bytes = arith::MulIOp::create(b, loc, bytes, size);
      }
      func::CallOp::create(b, loc, counter, ValueRange{bytes});
    }
  }
};

} // namespace

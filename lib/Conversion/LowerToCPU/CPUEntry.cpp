//===- CPUEntry.cpp - Destination-passing entry of a step -----------------===//
//
// Implements `joint-cpu-entry`: the converted step function (tensors in,
// tensors out) becomes `@joint_entry`, which reads caller-owned input buffers
// and writes every result into a caller-allocated output buffer, so a compiled
// step returns nothing through the ABI but a status (docs/lowering.md, "ABI").
// Bufferization then writes the last producer of a result straight into its
// output buffer where the analysis allows, and copies otherwise.
//
//===----------------------------------------------------------------------===//

#include "joint/Conversion/LowerToCPU/Passes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTCPUENTRY
#include "joint/Conversion/LowerToCPU/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

namespace {

/// The buffer type of a step argument or result: an identity-layout memref
/// for a ranked tensor, a 0-d i64 memref for a SymInt result; null otherwise.
static Type getBufferType(Type type, bool isResult) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return MemRefType::get(tensor.getShape(), tensor.getElementType());
  if (type.isInteger(64))
    return isResult ? MemRefType::get({}, type) : type;
  return nullptr;
}

struct CPUEntryPass : public joint::impl::JointCPUEntryBase<CPUEntryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> publics;
    for (auto func : module.getOps<func::FuncOp>())
      if (func.isPublic() && !func.isDeclaration())
        publics.push_back(func);
    if (publics.size() != 1) {
      module.emitError() << "joint-cpu-entry: expected one public function "
                            "(the converted graph), found "
                         << publics.size();
      return signalPassFailure();
    }
    func::FuncOp step = publics.front();
    if (step.getName() == kCPUEntryName)
      return; // already an entry: the pass is idempotent
    if (failed(rewriteIntoEntry(step)))
      return signalPassFailure();
  }

  LogicalResult rewriteIntoEntry(func::FuncOp step) {
    FunctionType type = step.getFunctionType();
    SmallVector<Type> argTypes;
    for (bool isResult : {false, true}) {
      TypeRange types = isResult ? type.getResults() : type.getInputs();
      for (auto [i, t] : llvm::enumerate(types)) {
        Type buffer = getBufferType(t, isResult);
        if (!buffer)
          return step.emitError()
                 << "joint-cpu-entry: " << (isResult ? "result " : "argument ")
                 << i << " has type " << t << ", not a ranked tensor or i64";
        argTypes.push_back(buffer);
      }
    }

    OpBuilder b(step);
    Location loc = step.getLoc();
    auto entry = func::FuncOp::create(b, loc, kCPUEntryName,
                                      b.getFunctionType(argTypes, TypeRange{}));
    unsigned numArgs = type.getNumInputs();
    entry->setAttr("joint.graph_name", b.getStringAttr(step.getName()));
    entry->setAttr("joint.num_inputs", b.getI64IntegerAttr(numArgs));
    for (unsigned i = 0; i < numArgs; ++i)
      entry.setArgAttrs(i, step.getArgAttrDict(i));
    for (unsigned j = 0, e = type.getNumResults(); j < e; ++j)
      entry.setArgAttrs(numArgs + j, step.getResultAttrDict(j));

    // Move the body; graph arguments become views of the input buffers.
    Block *body = entry.addEntryBlock();
    b.setInsertionPointToStart(body);
    SmallVector<Value> replacements;
    for (unsigned i = 0; i < numArgs; ++i) {
      Value arg = body->getArgument(i);
      auto tensor = dyn_cast<RankedTensorType>(type.getInput(i));
      if (!tensor) {
        replacements.push_back(arg);
        continue;
      }
      replacements.push_back(bufferization::ToTensorOp::create(
          b, loc, tensor, arg, /*restrict=*/true, /*writable=*/false));
    }
    Block &old = step.getBody().front();
    auto ret = cast<func::ReturnOp>(old.getTerminator());
    IRRewriter rewriter(b);
    rewriter.inlineBlockBefore(&old, body, body->end(), replacements);

    // Results go into the output buffers.
    rewriter.setInsertionPoint(ret);
    for (auto [j, value] : llvm::enumerate(ret.getOperands())) {
      Value out = body->getArgument(numArgs + j);
      if (isa<RankedTensorType>(value.getType())) {
        bufferization::MaterializeInDestinationOp::create(
            rewriter, ret.getLoc(), Type(), value, out, /*restrict=*/true,
            /*writable=*/true);
        continue;
      }
      memref::StoreOp::create(rewriter, ret.getLoc(), value, out);
    }
    rewriter.replaceOpWithNewOp<func::ReturnOp>(ret);
    rewriter.eraseOp(step);
    return success();
  }
};

} // namespace

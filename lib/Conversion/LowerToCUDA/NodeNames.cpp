//===- NodeNames.cpp - Node names for the CUDA runtime's errors -----------===//
//
// Implements `joint-gpu-name-locations` and `joint-gpu-set-node`, which let
// a failed kernel launch or library call name the graph node it came from
// (a failure reports the call, the kernel or the node name). The first
// wraps the location of every named graph op in a `NameLoc` of its node
// name before convert-joint-to-linalg; every op lowered from it inherits the
// location (linalg ops, their loops, the `gpu.launch` and the outlined
// `gpu.launch_func`), so the lowering knows each kernel's node. The second,
// after outlining, calls `joint_runtime_set_node(name)` before every launch
// and device allocation whose node differs from the one set last (the
// runtime quotes it in "mgpuLaunchKernel: cuLaunchKernel failed: ...,
// kernel 'k', node 'n'" and names allocations by it); library shims and ao
// calls take the node as an argument instead.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"

#include "joint/Conversion/LowerToCUDA/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTGPUNAMELOCATIONS
#define GEN_PASS_DEF_JOINTGPUSETNODE
#include "joint/Conversion/LowerToCUDA/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

namespace {

struct NameLocationsPass
    : public joint::impl::JointGPUNameLocationsBase<NameLocationsPass> {
  void runOnOperation() override {
    getOperation().walk([](Operation *op) {
      auto name = op->getAttrOfType<StringAttr>("name");
      if (!name || name.getValue().empty() ||
          getNodeName(op->getLoc()) == name.getValue())
        return;
      op->setLoc(NameLoc::get(name, op->getLoc()));
    });
  }
};

struct SetNodePass : public joint::impl::JointGPUSetNodeBase<SetNodePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    func::FuncOp setNode;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isDeclaration())
        continue;
      std::string current; // the node the runtime names now, as far as known
      for (Operation &op : llvm::make_early_inc_range(func.getBody().front())) {
        if (isa<func::CallOp>(op)) { // a shim or ao call sets its own node
          current = "";
          continue;
        }
        // Launches, and allocations (which may be hoisted above another
        // node's kernel when loops fuse): each names its own node.
        if (!isa<gpu::LaunchFuncOp, gpu::AllocOp>(op))
          continue;
        std::string node = getNodeNames(op.getLoc());
        if (node.empty() || node == current)
          continue;
        OpBuilder b(&op);
        if (!setNode)
          setNode = lookupOrDeclareRuntimeFunction(
              b, module, "joint_runtime_set_node",
              FunctionType::get(ctx, {LLVM::LLVMPointerType::get(ctx)}, {}));
        func::CallOp::create(
            b, op.getLoc(), setNode,
            ValueRange{getNodeNamePointer(b, op.getLoc(), node)});
        current = node;
      }
    }
  }
};

} // namespace

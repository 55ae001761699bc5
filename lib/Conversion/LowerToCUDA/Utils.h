//===- Utils.h - Helpers shared by the CUDA lowering passes -----*- C++ -*-===//
//
// The CUDA passes after bufferization (host to device, device memory, stream
// order) rewrite the top-level block of a step function only: a pass base
// runs them on that block, a helper rejects the ops a pass cannot handle
// when they are nested in a region, and another names the buffers cuBLAS and
// gpu.memcpy take (identity layout).
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_LIB_CONVERSION_LOWERTOCUDA_UTILS_H
#define JOINT_LIB_CONVERSION_LOWERTOCUDA_UTILS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
namespace joint {

/// Base of the passes that rewrite the top-level block of a step function:
/// `Derived::runOnStep(func, body)` runs on each definition (declarations
/// have nothing to rewrite) and the pass fails when it does. `PassBase` is
/// the TableGen'erated `impl::...Base`.
template <typename Derived, template <typename> class PassBase>
class StepPass : public PassBase<Derived> {
public:
  using Base = PassBase<Derived>;
  using Base::Base;

  void runOnOperation() final {
    func::FuncOp func = this->getOperation();
    if (func.isDeclaration())
      return;
    if (failed(static_cast<Derived *>(this)->runOnStep(func,
                                                       func.getBody().front())))
      this->signalPassFailure();
  }
};

/// For a pass that handles the ops for which `mustBeTopLevel` holds only in
/// the top-level block of `func`: on the first one nested below it
/// (post-order), emits `'<op>' op <reason>` and fails.
LogicalResult rejectNestedOps(func::FuncOp func,
                              function_ref<bool(Operation *)> mustBeTopLevel,
                              StringRef reason);

/// True when `v` is a memref with the identity layout (dense, row major).
bool hasIdentityLayout(Value v);

/// Per-parameter kinds of an emulated kernel (runtime/cuda/README.md,
/// "Emulated device"): set by joint-gpu-emulate-kernels, read into the
/// kernel table by joint-gpu-emulate-launches.
constexpr llvm::StringLiteral kEmuParamKindsAttr = "joint.emu_param_kinds";

} // namespace joint
} // namespace mlir

#endif // JOINT_LIB_CONVERSION_LOWERTOCUDA_UTILS_H

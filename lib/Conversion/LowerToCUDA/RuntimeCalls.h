//===- RuntimeCalls.h - Building calls into the CUDA runtime ----*- C++ -*-===//
//
// The host code of a CUDA step calls the runtime's C entry points
// (runtime/cuda/joint_cuda_runtime.h) with raw pointers: these helpers
// declare an entry point once per module, take the data pointer of an
// identity-layout buffer, and give each node name one private constant
// string, which the runtime quotes in its error messages ("..., node 'mm_3'").
// A node's name reaches ops lowered from it as a `NameLoc` around their
// location (`joint-gpu-name-locations`).
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_LIB_CONVERSION_LOWERTOCUDA_RUNTIMECALLS_H
#define JOINT_LIB_CONVERSION_LOWERTOCUDA_RUNTIMECALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

namespace mlir {
namespace joint {

/// The private declaration of runtime function `name` in `module`, created
/// at the module's end when missing.
func::FuncOp declareRuntimeFunction(ModuleOp module, StringRef name,
                                    FunctionType type);

/// The data pointer (`!llvm.ptr`) of identity-layout (offset 0) `buffer`.
Value getBufferPointer(OpBuilder &b, Location loc, Value buffer);

/// The node name carried by `loc` (the outermost `NameLoc`, looking through
/// fused and call-site locations), or "" when none.
StringRef getNodeName(Location loc);

/// One private constant NUL-terminated global `@__joint_node_<i>` per
/// distinct node name of a module; existing ones are reused.
class NodeNameTable {
public:
  explicit NodeNameTable(ModuleOp module);
  /// `!llvm.ptr` to the string `name` (`llvm.mlir.addressof`) at `b`.
  Value getPointer(OpBuilder &b, Location loc, StringRef name);

private:
  ModuleOp module;
  llvm::StringMap<LLVM::GlobalOp> globals;
  unsigned next = 0;
};

} // namespace joint
} // namespace mlir

#endif // JOINT_LIB_CONVERSION_LOWERTOCUDA_RUNTIMECALLS_H

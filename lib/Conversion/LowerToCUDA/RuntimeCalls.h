//===- RuntimeCalls.h - Building calls into the CUDA runtime ----*- C++ -*-===//
//
// The host code of a CUDA step calls the runtime's C entry points
// (runtime/cuda/joint_cuda_runtime.h) with raw pointers: these helpers
// look up or declare an entry point, take the data pointer of an
// identity-layout buffer, and look up or create the private constants the
// calls point to: one string per node name, which the runtime quotes in its
// error messages ("..., node 'mm_3'"), and one per i64 array. They build
// through the caller's builder, so rewrite patterns may use them.
// A node's name reaches ops lowered from it as a `NameLoc` around their
// location (`joint-gpu-name-locations`).
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_LIB_CONVERSION_LOWERTOCUDA_RUNTIMECALLS_H
#define JOINT_LIB_CONVERSION_LOWERTOCUDA_RUNTIMECALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace joint {

/// The private declaration of runtime function `name` in `module`; when
/// missing, it is created at the module's end through `b` (a rewriter's
/// listener sees it), leaving `b`'s insertion point unchanged.
func::FuncOp lookupOrDeclareRuntimeFunction(OpBuilder &b, ModuleOp module,
                                            StringRef name, FunctionType type);

/// The data pointer (`!llvm.ptr`) of identity-layout (offset 0) `buffer`.
Value getBufferPointer(OpBuilder &b, Location loc, Value buffer);

/// The node name carried by `loc` (the outermost `NameLoc`, looking through
/// fused and call-site locations), or "" when none.
StringRef getNodeName(Location loc);

/// Every node `loc` carries (a kernel fused from several nodes' ops has a
/// fused location), outermost first, each once, joined by ", ": the node
/// the runtime names a kernel by and prices it as (the sum of its nodes'
/// seconds on the emulated device); "" when none.
std::string getNodeNames(Location loc);

/// `!llvm.ptr` (`llvm.mlir.addressof`, at `b`) to the NUL-terminated string
/// `name` of the module around `b`'s insertion point: its private constant
/// global `@__joint_node_<i>`, looked up or created at the module's start.
Value getNodeNamePointer(OpBuilder &b, Location loc, StringRef name);

/// `!llvm.ptr` (at `b`) to the NUL-terminated string `value`: the private
/// constant global `@<prefix><i>` of the module around `b`'s insertion
/// point, looked up or created at the module's start (one per distinct
/// string and prefix).
Value getStringPointer(OpBuilder &b, Location loc, StringRef prefix,
                       StringRef value);

/// `!llvm.ptr` (at `b`) to a private constant i64 array global
/// `@<prefix><i>` holding `values`, looked up or created at the start of
/// the module around `b`'s insertion point (one global per distinct array).
Value getInt64ArrayPointer(OpBuilder &b, Location loc, StringRef prefix,
                           ArrayRef<int64_t> values);

} // namespace joint
} // namespace mlir

#endif // JOINT_LIB_CONVERSION_LOWERTOCUDA_RUNTIMECALLS_H

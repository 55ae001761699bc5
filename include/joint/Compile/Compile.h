//===- Compile.h - Compile a joint graph into a step library ----*- C++ -*-===//
//
// The driver behind joint-compile: the user's passes, the lowering pipeline
// of the target (joint-lower-to-cpu or joint-lower-to-cuda), translation to
// LLVM IR, the one exported C function `joint_step` (docs/lowering.md,
// "ABI"), LLVM's optimization at -O<level>, an object file for the host
// CPU, a shared library linked by the system C compiler driver, and the
// descriptor `<library>.json`.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_COMPILE_COMPILE_H
#define JOINT_COMPILE_COMPILE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"
#include <string>

namespace mlir {
namespace joint {

/// How a step is compiled (joint-compile's options of the same names).
struct CompileOptions {
  /// Joint passes to run before lowering (PassPipeline.h text).
  std::string pipeline;
  /// Options of joint-lower-to-cpu or joint-lower-to-cuda.
  std::string loweringOptions;
  /// "cpu" (the host) or "cuda" (kernels for an NVIDIA GPU).
  std::string target = "cpu";
  /// LLVM optimization level, 0-3.
  unsigned optLevel = 2;
  /// The C compiler driver that links the library, found on PATH.
  std::string cc = "cc";
};

/// Fails with the reason in `error` on an unknown target, a level above 3,
/// or --target=cuda in a build without the CUDA toolkit.
LogicalResult verifyCompileOptions(const CompileOptions &options,
                                   std::string &error);

/// Fails with the reason in `error` when the library `library` (or its
/// `.json` descriptor) could not be renamed into place: a missing directory,
/// an existing path that is not a regular file, or the input `input`.
LogicalResult checkStepOutputPaths(StringRef input, StringRef library,
                                   std::string &error);

/// Compiles `module` (one joint.graph) into the shared library `library` and
/// its descriptor `<library>.json`, both renamed into place last; `timing`
/// gets one scope per stage. On failure either a diagnostic was emitted
/// (a pass or the lowering refused the graph) or `error` says why.
LogicalResult compileStep(ModuleOp module, const CompileOptions &options,
                          StringRef library, TimingScope &timing,
                          std::string &error);

} // namespace joint
} // namespace mlir

#endif // JOINT_COMPILE_COMPILE_H

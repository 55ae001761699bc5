//===- Passes.h - The CPU lowering pipeline ---------------------*- C++ -*-===//
//
// Declarations of the CPU lowering passes (Passes.td), the
// `joint-lower-to-cpu` pipeline (convert-joint-to-linalg through the LLVM
// dialect) and the dialect extensions it needs in a registry.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_CONVERSION_LOWERTOCPU_PASSES_H
#define JOINT_CONVERSION_LOWERTOCPU_PASSES_H

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

namespace mlir {
class DialectRegistry;
class OpPassManager;
namespace joint {

#define GEN_PASS_DECL
#include "joint/Conversion/LowerToCPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "joint/Conversion/LowerToCPU/Passes.h.inc"

/// Name of the function `joint-cpu-entry` produces and `joint-compile` wraps.
inline constexpr llvm::StringLiteral kCPUEntryName = "joint_entry";
/// Name of the one C entry point of a compiled step (docs/lowering.md, ABI).
inline constexpr llvm::StringLiteral kCPUStepSymbol = "joint_step";

/// Options of `joint-lower-to-cpu`; the tiling knobs are those of
/// `joint-tile-matmuls` (Passes.td) and are forwarded to it unchanged.
struct LowerToCPUOptions : public PassPipelineOptions<LowerToCPUOptions> {
  PassOptions::Option<bool> tileMatmuls{
      *this, "tile-matmuls",
      llvm::cl::desc("tile (and vectorize) the matmul family"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> tileM{
      *this, "tile-m", llvm::cl::desc("joint-tile-matmuls tile-m"),
      llvm::cl::init(8)};
  PassOptions::Option<int64_t> tileN{
      *this, "tile-n", llvm::cl::desc("joint-tile-matmuls tile-n"),
      llvm::cl::init(16)};
  PassOptions::Option<int64_t> tileK{
      *this, "tile-k", llvm::cl::desc("joint-tile-matmuls tile-k"),
      llvm::cl::init(8)};
  PassOptions::Option<bool> vectorize{
      *this, "vectorize", llvm::cl::desc("joint-tile-matmuls vectorize"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> outlineLoops{
      *this, "outline-loops",
      llvm::cl::desc("one noinline function per top-level loop nest "
                     "(joint-outline-loops): LLVM compile time linear in "
                     "the graph"),
      llvm::cl::init(true)};
};

/// The two halves of `joint-lower-to-cpu` (a builtin.module pass manager):
/// up to `@joint_entry` on tensors (convert-joint-to-linalg,
/// joint-cpu-entry), then the rest (tiling to the LLVM dialect).
void buildLowerToCPUTensorPipeline(OpPassManager &pm,
                                   const LowerToCPUOptions &options);
void buildLowerToCPULLVMPipeline(OpPassManager &pm,
                                 const LowerToCPUOptions &options);

/// Appends the bufferization both lowering pipelines run on `@joint_entry`:
/// empty-tensor elimination, one-shot bufferization across function
/// boundaries with identity layouts (arguments and results stay caller-owned
/// buffers), with `deallocate` ownership-based deallocation of every
/// temporary, then bufferization ops to memref and a canonicalization that
/// folds self-copies into outputs.
void buildBufferizationPipeline(OpPassManager &pm, bool deallocate);

/// Registers lowering pipeline `argument`: `tensorHalf`, then `llvmHalf`
/// (joint-compile runs the halves apart, with its own steps between).
template <typename Options>
void registerLoweringPipeline(StringRef argument, StringRef description,
                              void (*tensorHalf)(OpPassManager &,
                                                 const Options &),
                              void (*llvmHalf)(OpPassManager &,
                                               const Options &)) {
  PassPipelineRegistration<Options>(
      argument, description,
      [tensorHalf, llvmHalf](OpPassManager &pm, const Options &options) {
        tensorHalf(pm, options);
        llvmHalf(pm, options);
      });
}

/// Registers `joint-lower-to-cpu` (convert-joint-to-linalg, joint-cpu-entry,
/// joint-tile-matmuls, one-shot bufferization across function boundaries,
/// buffer deallocation, loops, joint-outline-loops, the conversions to the
/// LLVM dialect: docs/lowering.md, "Pipeline"), the passes above and the
/// upstream passes it runs.
void registerLowerToCPUPipeline();

/// Adds the external models the pipeline relies on (bufferization of func,
/// arith, linalg, tensor, scf, vector; LLVM IR translation) to `registry`.
void registerLowerToCPUExtensions(DialectRegistry &registry);

} // namespace joint
} // namespace mlir

#endif // JOINT_CONVERSION_LOWERTOCPU_PASSES_H

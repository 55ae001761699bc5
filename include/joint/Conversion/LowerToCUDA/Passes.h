//===- Passes.h - The CUDA lowering pipeline --------------------*- C++ -*-===//
//
// Declarations of the CUDA lowering passes (Passes.td), the
// `joint-lower-to-cuda` pipeline (convert-joint-to-linalg through kernels
// outlined into gpu.module, NVVM, cubins for sm_90 and host code in the LLVM
// dialect) and the dialect extensions it needs in a registry.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_CONVERSION_LOWERTOCUDA_PASSES_H
#define JOINT_CONVERSION_LOWERTOCUDA_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
class DialectRegistry;
class OpPassManager;
namespace joint {

#define GEN_PASS_DECL
#include "joint/Conversion/LowerToCUDA/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "joint/Conversion/LowerToCUDA/Passes.h.inc"

/// The CUDA toolkit root (parent of nvcc's folder) this build found, where
/// gpu-module-to-binary finds ptxas and libdevice; "" when built without one.
llvm::StringRef getDefaultCUDAToolkitRoot();

/// Options of `joint-lower-to-cuda`.
struct LowerToCUDAOptions : public PassPipelineOptions<LowerToCUDAOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("NVPTX chip of the cubins"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> features{
      *this, "features", llvm::cl::desc("NVPTX features (PTX version)"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit root for ptxas and libdevice (default: "
                     "the one CMake found)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("gpu-module-to-binary format: bin (cubin), isa (PTX), "
                     "llvm, offload"),
      llvm::cl::init("bin")};
  PassOptions::Option<unsigned> optLevel{
      *this, "opt-level", llvm::cl::desc("NVPTX optimisation level"),
      llvm::cl::init(3)};
  PassOptions::ListOption<int64_t> tileSizes{
      *this, "tile-sizes",
      llvm::cl::desc("scf-parallel-loop-tiling sizes: threads per block "
                     "along the outer parallel dimensions"),
      llvm::cl::list_init<int64_t>({16, 16})};
  PassOptions::Option<bool> libraryCalls{
      *this, "library-calls",
      llvm::cl::desc("GEMMs cuBLAS supports and SDPA cuDNN supports through "
                     "the runtime's shims (joint-gpu-library-calls, "
                     "joint-gpu-attention-calls); off: generated kernels"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> fuseElementwise{
      *this, "fuse-elementwise",
      llvm::cl::desc("fuse elementwise producers into their users when no "
                     "value lives longer in bytes (joint-fuse-elementwise); "
                     "off: one kernel per elementwise op"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> fuseLoops{
      *this, "fuse-loops",
      llvm::cl::desc("fuse adjacent parallel loops of the same iterations "
                     "when each buffer they share is accessed per element "
                     "or in disjoint parts and the step's peak is kept "
                     "(joint-gpu-fuse-parallel-loops); off: one kernel per "
                     "linalg op"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> dedupKernels{
      *this, "dedup-kernels",
      llvm::cl::desc("compile each distinct kernel once, all in one module "
                     "(joint-gpu-dedup-kernels); off: one module per launch"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> emulate{
      *this, "emulate",
      llvm::cl::desc("kernels compiled for the host in a kernel table for "
                     "the emulated device (JOINT_CUDA_DEVICE=emulated) "
                     "instead of NVVM and cubins; no toolkit needed"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> binary{
      *this, "binary",
      llvm::cl::desc("run gpu-module-to-binary (off: stop at NVVM in "
                     "gpu.module, no toolkit needed)"),
      llvm::cl::init(true)};
};

/// The two halves of `joint-lower-to-cuda` (a builtin.module pass manager).
/// The tensor half: joint-gpu-attention-calls (with `library-calls`),
/// convert-joint-to-linalg{keep-ao} (ao ops stay for joint-gpu-offload) and
/// joint-cpu-entry (the CPU's ABI).
void buildLowerToCUDATensorPipeline(OpPassManager &pm,
                                    const LowerToCUDAOptions &options);
/// From `@joint_entry` on tensors: ao ops to runtime transfers,
/// bufferization, parallel loops, tiling,
/// host compute moved to the device, gpu-map-parallel-loops,
/// convert-parallel-loops-to-gpu, device memory, outlining, one stream,
/// NVVM, cubins, host code in the LLVM dialect (docs/lowering.md, "CUDA").
void buildLowerToCUDALLVMPipeline(OpPassManager &pm,
                                  const LowerToCUDAOptions &options);

/// Registers the `joint-lower-to-cuda` pipeline (the tensor half, then the
/// rest), the passes above and the upstream GPU passes it runs.
void registerLowerToCUDAPipeline();

/// Adds the GPU, NVVM dialects, the NVVM target and the LLVM IR translations
/// of the GPU path to `registry`.
void registerLowerToCUDAExtensions(DialectRegistry &registry);

} // namespace joint
} // namespace mlir

#endif // JOINT_CONVERSION_LOWERTOCUDA_PASSES_H

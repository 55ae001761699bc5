//===- Pipeline.cpp - The joint-lower-to-cuda pipeline --------------------===//
//
// Builds and registers `joint-lower-to-cuda`: the destination-passing entry
// of joint-lower-to-cpu on tensors, the bufferization the CPU pipeline runs
// (without deallocation), upstream's GPU route (linalg to parallel loops,
// tiling, gpu-map-parallel-loops, convert-parallel-loops-to-gpu,
// gpu-kernel-outlining) with our three passes (host compute to the device,
// device memory freed at last use, one stream), then NVVM, cubins for sm_90
// +ptx80 through gpu-module-to-binary pointed at the toolkit CMake found
// (libdevice and ptxas without environment variables), and the host code in
// the LLVM dialect (docs/lowering.md, "CUDA"). With `emulate`, kernels are
// host functions in a kernel table for the emulated device instead.
//
//===----------------------------------------------------------------------===//

#include "joint/Conversion/LowerToCPU/Passes.h"
#include "joint/Conversion/LowerToCUDA/Passes.h"
#include "joint/Conversion/Passes.h"
#include "joint/Transforms/Passes.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUCommon/GPUToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::joint;

// 1 when the CUDA runtime was built with the cuDNN frontend (its SDPA shims
// run); set by runtime/cuda/CMakeLists.txt.
#ifndef JOINT_HAVE_CUDNN_SDPA
#define JOINT_HAVE_CUDNN_SDPA 0
#endif

#ifndef JOINT_CUDA_TOOLKIT_ROOT
#define JOINT_CUDA_TOOLKIT_ROOT ""
#endif

StringRef joint::getDefaultCUDAToolkitRoot() { return JOINT_CUDA_TOOLKIT_ROOT; }

void joint::buildLowerToCUDATensorPipeline(OpPassManager &pm,
                                           const LowerToCUDAOptions &options) {
  // Node names ride on locations to the kernels (for the runtime's errors).
  pm.addPass(createJointGPUNameLocations());
  // SDPA cuDNN supports: shim calls, decided on the graph (the rest
  // decomposes below); not when the runtime's shims would only report that
  // it was built without the cuDNN frontend.
  if (options.libraryCalls && JOINT_HAVE_CUDNN_SDPA)
    pm.addPass(createJointGPUAttentionCalls());
  // Functional collectives: NCCL calls on the communication stream.
  pm.addPass(createJointGPUCollectives());
  ConvertJointToLinalgOptions convert;
  convert.keepAo = true; // joint-gpu-offload lowers them to transfers
  // The conversion sees value semantics only.
  pm.addPass(createJointFunctionalize());
  pm.addPass(createConvertJointToLinalg(convert));
  // Views stay views: transposes read through their readers' maps.
  pm.addNestedPass<func::FuncOp>(createJointFoldTransposes());
  // Adjacent elementwise ops: one kernel each pair, same results.
  if (options.fuseElementwise)
    pm.addNestedPass<func::FuncOp>(createJointFuseElementwise());
  pm.addPass(createJointCPUEntry());
}

void joint::buildLowerToCUDALLVMPipeline(OpPassManager &pm,
                                         const LowerToCUDAOptions &options) {
  // ao ops: calls into the runtime's transfer protocol (on tensors).
  pm.addPass(createJointGPUOffload());
  // Buffers: caller-owned arguments and outputs; temporaries are allocated
  // here and become device allocations (freed at last use) below.
  pm.addPass(createCanonicalizerPass());
  buildBufferizationPipeline(pm, /*deallocate=*/false);

  // GEMMs cuBLAS supports: calls on the compute stream (the rest: kernels).
  if (options.libraryCalls)
    pm.addNestedPass<func::FuncOp>(createJointGPULibraryCalls());

  // Kernels: parallel loops, blocks of threads, host leftovers to the device.
  pm.addNestedPass<func::FuncOp>(createJointGPUParallelFirst());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  // A fill and its reduction, a reduction and its epilogue: one kernel.
  if (options.fuseLoops)
    pm.addNestedPass<func::FuncOp>(createJointGPUFuseParallelLoops());
  // Tiles of constant size with a bounds check inside (no affine.min): the
  // block size of convert-parallel-loops-to-gpu must be known outside the
  // loop. (A canonicalizer here would merge the tile loops back into one
  // nest, i.e. one thread per block.)
  pm.addNestedPass<func::FuncOp>(createParallelLoopTilingPass(
      SmallVector<int64_t>(options.tileSizes.begin(), options.tileSizes.end()),
      /*noMinMaxBounds=*/true));
  pm.addNestedPass<func::FuncOp>(createJointGPUHostToDevice());
  pm.addNestedPass<func::FuncOp>(createGpuMapParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopToGpuPass());
  pm.addNestedPass<func::FuncOp>(createJointGPUDeviceMemory());
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addNestedPass<func::FuncOp>(createJointGPUStreamOrder());
  pm.addPass(createJointGPUSetNode());
  // Identical kernels (every layer's) are compiled once, in one module.
  if (options.dedupKernels)
    pm.addPass(createJointGPUDedupKernels());

  // Device code: NVVM for the chosen chip, or host functions for the
  // emulated device (bf16/f16 computed in f32 as on the CPU).
  if (!options.emulate) {
    GpuNVVMAttachTargetOptions target;
    target.chip = options.chip;
    target.features = options.features;
    target.optLevel = options.optLevel;
    pm.addPass(createGpuNVVMAttachTarget(target));
  }
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  if (options.emulate) {
    OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
    kernels.addPass(math::createMathExtendToSupportedTypes());
    arith::ArithEmulateUnsupportedFloatsOptions emulateFloats;
    emulateFloats.sourceTypeStrs = {"bf16", "f16"};
    kernels.addPass(arith::createArithEmulateUnsupportedFloats(emulateFloats));
    arith::ArithExpandOpsPassOptions expandKernels;
    expandKernels.includeBf16 = true;
    kernels.addPass(arith::createArithExpandOpsPass(expandKernels));
    kernels.addPass(createJointGPUEmulateKernels());
  } else {
    pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps());
    pm.addPass(createConvertNVVMToLLVMPass());
  }

  // Host code: the LLVM dialect, calls into the runtime's mgpu* functions.
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  if (options.emulate) {
    // The kernel table where the cubins would be; bf16 stored as i16.
    pm.addPass(createJointGPUEmulateLaunches());
    pm.addPass(createJointLLVMBF16Storage());
  }
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  // Cubins (ptxas from the toolkit; libdevice from <toolkit>/nvvm/libdevice).
  if (!options.binary || options.emulate)
    return;
  GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = options.toolkit.empty()
                           ? getDefaultCUDAToolkitRoot().str()
                           : options.toolkit.getValue();
  binary.compilationTarget = options.format;
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void joint::registerLowerToCUDAPipeline() {
  registerJointLowerToCUDAPasses();
  registerGPUPasses();
  registerConvertParallelLoopToGpuPass();
  registerConvertGpuOpsToNVVMOpsPass();
  registerConvertNVVMToLLVMPass();
  registerGpuToLLVMConversionPass();
  arith::registerArithPasses();
  registerLoweringPipeline<LowerToCUDAOptions>(
      "joint-lower-to-cuda",
      "Lower converted joint graphs to kernels (cubins for sm_90) and host "
      "code in the LLVM dialect (docs/lowering.md, \"CUDA\")",
      buildLowerToCUDATensorPipeline, buildLowerToCUDALLVMPipeline);
}

void joint::registerLowerToCUDAExtensions(DialectRegistry &registry) {
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect>();
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  registerConvertNVVMToLLVMInterface(registry);
  NVVM::registerConvertGpuToNVVMInterface(registry);
  gpu::registerConvertGpuToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
}

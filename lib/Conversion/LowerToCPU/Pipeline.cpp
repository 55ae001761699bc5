//===- Pipeline.cpp - The joint-lower-to-cpu pipeline ---------------------===//
//
// Builds and registers `joint-lower-to-cpu`: converted joint graphs become a
// destination-passing entry on tensors, the matmul family is tiled and
// vectorized, one-shot bufferization runs across function boundaries with
// identity layouts, ownership-based deallocation frees every temporary (each
// free moved to the buffer's last use), and the standard conversions reach
// the LLVM dialect, with vector, libm and bf16 expansion and allocations
// through the step runtime (docs/lowering.md, "Pipeline").
//
//===----------------------------------------------------------------------===//

#include "joint/Conversion/LowerToCPU/Passes.h"
#include "joint/Conversion/Passes.h"
#include "joint/Transforms/Passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/TilingInterfaceImpl.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Vector/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Vector/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::joint;

void joint::buildLowerToCPUTensorPipeline(OpPassManager &pm,
                                          const LowerToCPUOptions &options) {
  // Attention one (batch, head, 64-row) block at a time: the [L, S]
  // logits and probabilities are a workspace the memory model does not count.
  ConvertJointToLinalgOptions convert;
  convert.sdpaRowBlock = 64;
  // The conversion sees value semantics only.
  pm.addPass(createJointFunctionalize());
  pm.addPass(createConvertJointToLinalg(convert));
  // Views stay views: transposes read through their readers' maps.
  pm.addNestedPass<func::FuncOp>(createJointFoldTransposes());
  pm.addPass(createJointCPUEntry());
}

void joint::buildLowerToCPULLVMPipeline(OpPassManager &pm,
                                        const LowerToCPUOptions &options) {
  // Tensors: the matmul family in tiles.
  if (options.tileMatmuls) {
    JointTileMatmulsOptions tile;
    tile.tileM = options.tileM;
    tile.tileN = options.tileN;
    tile.tileK = options.tileK;
    tile.vectorize = options.vectorize;
    pm.addNestedPass<func::FuncOp>(createJointTileMatmuls(tile));
    pm.addPass(createCanonicalizerPass());
  }

  // Buffers: caller-owned arguments and outputs, everything else allocated
  // and freed inside the step.
  buildBufferizationPipeline(pm, /*deallocate=*/true);
  pm.addPass(createJointCPUCountOutputs()); // for joint_step_peak_bytes

  // Loops, then the LLVM dialect.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addNestedPass<func::FuncOp>(vector::createLowerVectorMaskPass());
  // Transfers fully unrolled: a loop over a transfer's rows would stage them
  // through a stack buffer allocated in every iteration of the tile loops.
  pm.addNestedPass<func::FuncOp>(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  pm.addPass(createJointCheckBoundedStack());
  if (options.outlineLoops)
    pm.addPass(createJointOutlineLoops()); // small functions for LLVM
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // bf16/f16 math and arithmetic in f32, then every bf16 <-> f32 cast as
  // integer ops: no compiler builtin (__truncsfbf2) is left to the linker.
  math::MathExtendToSupportedTypesOptions extendMath;
  pm.addPass(math::createMathExtendToSupportedTypes(extendMath));
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"bf16", "f16"};
  pm.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true; // bf16 <-> f32 casts as integer ops
  pm.addPass(arith::createArithExpandOpsPass(expand));
  ConvertVectorToLLVMPassOptions toLLVM;
  // A tile's contraction becomes tile-k outer products: FMAs on rows.
  toLLVM.vectorContractLowering = vector::VectorContractLowering::OuterProduct;
  pm.addPass(createConvertVectorToLLVMPass(toLLVM));
  // Allocations through the step runtime's counting allocator
  // (_mlir_memref_to_llvm_alloc/free, runtime/cpu).
  FinalizeMemRefToLLVMConversionPassOptions toLLVMMemRef;
  toLLVMMemRef.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(toLLVMMemRef));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass()); // erf, tanh, ... from libm
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass()); // poison from vectorization
  pm.addPass(createReconcileUnrealizedCastsPass());
  // bf16 as i16: no bf16 value left for the backend to promote through
  // __truncsfbf2.
  pm.addPass(createJointLLVMBF16Storage());
}

void joint::buildBufferizationPipeline(OpPassManager &pm, bool deallocate) {
  // A result computed into tensor.empty is computed in its output buffer,
  // unless the chain has a value another op also reads.
  pm.addPass(createJointGuardEmptyTensors());
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  if (deallocate)
    bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addPass(createCanonicalizerPass()); // folds self-copies into outputs
  // Frees at last use, not at the end of the block.
  if (deallocate)
    pm.addNestedPass<func::FuncOp>(createJointFreeAtLastUse());
}

void joint::registerLowerToCPUPipeline() {
  registerJointLowerToCPUPasses();
  // The upstream passes it runs, for pipelines spelled out by hand.
  bufferization::registerBufferizationPasses();
  registerLinalgPasses();
  math::registerMathPasses();
  memref::registerMemRefPasses();
  registerSCFPasses();
  registerArithToLLVMConversionPass();
  registerConvertBufferizationToMemRefPass();
  registerConvertControlFlowToLLVMPass();
  registerConvertFuncToLLVMPass();
  registerConvertIndexToLLVMPass();
  registerConvertMathToLLVMPass();
  registerConvertMathToLibmPass();
  registerConvertVectorToLLVMPass();
  registerConvertVectorToSCF();
  registerFinalizeMemRefToLLVMConversionPass();
  registerLowerAffinePass();
  registerReconcileUnrealizedCastsPass();
  registerSCFToControlFlowPass();
  registerUBToLLVMConversionPass();
  registerLoweringPipeline<LowerToCPUOptions>(
      "joint-lower-to-cpu",
      "Lower converted joint graphs to the LLVM dialect for the CPU "
      "(docs/lowering.md, \"Pipeline\")",
      buildLowerToCPUTensorPipeline, buildLowerToCPULLVMPipeline);
}

void joint::registerLowerToCPUExtensions(DialectRegistry &registry) {
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerTilingInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  vector::registerBufferizableOpInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

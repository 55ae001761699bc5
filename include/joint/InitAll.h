//===- InitAll.h - Register every joint-mlir dialect and pass ---*- C++ -*-===//
//
// One entry point for tools: the joint and ao dialects, the upstream dialects
// the pipelines and the lowering use (with the bufferization interfaces of
// the dialects the lowering emits), and all passes: ours, and the upstream
// ones the CPU compile pipeline runs (bufferization, linalg, SCF, memref,
// affine, conversions to LLVM).
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_INITALL_H
#define JOINT_INITALL_H

#include "joint/Conversion/LowerToCPU/Passes.h"
#include "joint/Conversion/LowerToCUDA/Passes.h"
#include "joint/Conversion/Passes.h"
#include "joint/Dialect/AO/IR/AOOps.h"
#include "joint/Dialect/Joint/IR/JointOps.h"
#include "joint/Dialect/Joint/Transforms/Passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace mlir {
namespace joint {

inline void registerAllDialects(DialectRegistry &registry) {
  registry
      .insert<JointDialect, ao::AODialect, affine::AffineDialect,
              arith::ArithDialect, bufferization::BufferizationDialect,
              cf::ControlFlowDialect, func::FuncDialect, linalg::LinalgDialect,
              LLVM::LLVMDialect, math::MathDialect, memref::MemRefDialect,
              scf::SCFDialect, tensor::TensorDialect, vector::VectorDialect>();
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  registerLowerToCPUExtensions(registry);
  registerLowerToCUDAExtensions(registry);
}

inline void registerAllPasses() {
  registerTransformsPasses();
  registerJointPasses();
  registerJointConversionPasses();
  registerLowerToCPUPipeline();
  registerLowerToCUDAPipeline();
  // Upstream passes of the CPU compile pipeline (joint-lower-to-cpu).
  bufferization::registerBufferizationPasses();
  registerLinalgPasses();
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
  registerJointPipelines();
}

} // namespace joint
} // namespace mlir

#endif // JOINT_INITALL_H

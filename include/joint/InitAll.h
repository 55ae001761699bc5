//===- InitAll.h - Register every joint-mlir dialect and pass ---*- C++ -*-===//
//
// One entry point for tools: the joint and ao dialects, the upstream dialects
// the pipelines and the lowering use (with the external models the lowering
// pipelines register), and all passes: ours, upstream's generic transforms,
// and (through the lowering pipelines' registration) the upstream passes the
// lowering runs.
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
#include "joint/Transforms/Passes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
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
  registerLowerToCPUExtensions(registry);
  registerLowerToCUDAExtensions(registry);
}

inline void registerAllPasses() {
  registerTransformsPasses();
  registerJointPasses();
  registerJointConversionPasses();
  registerJointBufferPasses();
  registerLowerToCPUPipeline();
  registerLowerToCUDAPipeline();
  registerJointPipelines();
}

} // namespace joint
} // namespace mlir

#endif // JOINT_INITALL_H

//===- InitAll.h - Register every joint-mlir dialect and pass ---*- C++ -*-===//
//
// One entry point for tools: the joint and ao dialects, the upstream dialects
// the pipelines use, and all passes.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_INITALL_H
#define JOINT_INITALL_H

#include "joint/Conversion/LowerToCPU/Passes.h"
#include "joint/Dialect/AO/IR/AOOps.h"
#include "joint/Dialect/Joint/IR/JointOps.h"
#include "joint/Dialect/Joint/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace mlir {
namespace joint {

inline void registerAllDialects(DialectRegistry &registry) {
  registry.insert<JointDialect, ao::AODialect, func::FuncDialect,
                  arith::ArithDialect, tensor::TensorDialect>();
  // What joint-lower-to-cpu produces and consumes.
  registry.insert<bufferization::BufferizationDialect, linalg::LinalgDialect,
                  math::MathDialect, memref::MemRefDialect, scf::SCFDialect,
                  vector::VectorDialect, LLVM::LLVMDialect>();
  registerLowerToCPUExtensions(registry);
}

inline void registerAllPasses() {
  registerTransformsPasses();
  registerJointPasses();
  registerLowerToCPUPipeline();
}

} // namespace joint
} // namespace mlir

#endif // JOINT_INITALL_H

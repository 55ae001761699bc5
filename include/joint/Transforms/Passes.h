//===- Passes.h - Target-independent lowering passes ------------*- C++ -*-===//
//
// Declarations of the passes in Passes.td (joint-fold-transposes,
// joint-free-at-last-use, joint-check-bounded-stack) that both lowering
// pipelines run.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_TRANSFORMS_PASSES_H
#define JOINT_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace joint {

#define GEN_PASS_DECL
#include "joint/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "joint/Transforms/Passes.h.inc"

} // namespace joint
} // namespace mlir

#endif // JOINT_TRANSFORMS_PASSES_H

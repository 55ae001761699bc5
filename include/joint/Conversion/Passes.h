//===- Passes.h - Conversions out of the joint dialect ----------*- C++ -*-===//
//
// Declarations and registration of the conversion passes (Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_CONVERSION_PASSES_H
#define JOINT_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace joint {

#define GEN_PASS_DECL
#include "joint/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "joint/Conversion/Passes.h.inc"

} // namespace joint
} // namespace mlir

#endif // JOINT_CONVERSION_PASSES_H

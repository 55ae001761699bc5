//===- AOOps.h - The ao (activation offload) dialect ------------*- C++ -*-===//
//
// Declares the ao dialect: ao.offload, ao.reload and ao.wait_tensor, mirroring
// torch.ops.ao.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_DIALECT_AO_IR_AOOPS_H
#define JOINT_DIALECT_AO_IR_AOOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "joint/Dialect/AO/IR/AODialect.h.inc"

#define GET_OP_CLASSES
#include "joint/Dialect/AO/IR/AOOps.h.inc"

#endif // JOINT_DIALECT_AO_IR_AOOPS_H

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

namespace mlir {
namespace ao {
/// The copy engine and host buffers the transfer ops drive: an ao op starts
/// or finishes a copy and frees or holds storage, so none is merged, moved
/// across another or dropped by upstream CSE/DCE.
struct TransferResource : public SideEffects::Resource::Base<TransferResource> {
  StringRef getName() final { return "ao.transfer"; }
};
} // namespace ao
} // namespace mlir

#define GET_OP_CLASSES
#include "joint/Dialect/AO/IR/AOOps.h.inc"

#endif // JOINT_DIALECT_AO_IR_AOOPS_H

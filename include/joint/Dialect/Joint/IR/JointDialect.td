//===- JointDialect.td - The joint graph dialect -----------*- tablegen -*-===//
//
// The `joint` dialect holds a joint forward+backward training graph traced
// from PyTorch: one `joint.graph` per training step, one generic `joint.call_function`
// per aten-level FX node, and the facts that memory passes read.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_DIALECT_JOINT_IR_JOINTDIALECT_TD
#define JOINT_DIALECT_JOINT_IR_JOINTDIALECT_TD

include "mlir/IR/OpBase.td"

def Joint_Dialect : Dialect {
  let name = "joint";
  let cppNamespace = "::mlir::joint";
  let summary = "Joint forward+backward training graphs at the aten level";
  let description = [{
    A `joint.graph` is the whole training step that `make_fx` records around
    `torch.autograd.grad`: parameters and buffers as leading arguments, the
    forward, the loss, the backward, and the gradients as results. Every FX
    `call_function` node becomes one `joint.call_function` that keeps the aten operator
    name with its overload, its arguments, and per-result tensor facts
    (sizes with symbolic dimensions, strides, storage offset, device and
    storage identity). Operator schema facts (written arguments, alias sets,
    tags) live once per operator in `joint.schema` table entries.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class Joint_Op<string mnemonic, list<Trait> traits = []>
    : Op<Joint_Dialect, mnemonic, traits>;

#endif // JOINT_DIALECT_JOINT_IR_JOINTDIALECT_TD

//===- AODialect.td - Activation offload dialect -----------*- tablegen -*-===//
//
// The `ao` dialect mirrors torch.ops.ao (torch >= 2.12): asynchronous copies of
// saved activations to host memory and back, and the waits that order them.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_DIALECT_AO_IR_AODIALECT_TD
#define JOINT_DIALECT_AO_IR_AODIALECT_TD

include "mlir/IR/OpBase.td"

def AO_Dialect : Dialect {
  let name = "ao";
  let cppNamespace = "::mlir::ao";
  let summary = "Activation offload: ao.offload, ao.reload, ao.wait_tensor";
  let description = [{
    Protocol (checked by the verifiers): `ao.offload` starts a device->host
    copy and is consumed by exactly one `ao.wait_tensor` (the forward wait)
    that keeps the source alive until its last forward use; the host tensor
    that wait returns is consumed only by `ao.reload` (and kept alive by the
    reload's wait); each `ao.reload` starts a host->device copy and is
    consumed by exactly one `ao.wait_tensor`.
  }];
}

class AO_Op<string mnemonic, list<Trait> traits = []>
    : Op<AO_Dialect, mnemonic, traits>;

#endif // JOINT_DIALECT_AO_IR_AODIALECT_TD

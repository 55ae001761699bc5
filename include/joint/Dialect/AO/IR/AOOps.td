//===- AOOps.td - Operations of the ao dialect -------------*- tablegen -*-===//
//
// ao.offload, ao.reload and ao.wait_tensor, with the schemas of
// torch.ops.ao.offload / reload / wait_tensor.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_DIALECT_AO_IR_AOOPS_TD
#define JOINT_DIALECT_AO_IR_AOOPS_TD

include "joint/Dialect/AO/IR/AODialect.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Every ao op reads its tensor operands and starts or completes a copy on the
// transfer resource (AOOps.h), so upstream CSE/DCE neither merge nor drop one.
def AO_TransferResource : Resource<"::mlir::ao::TransferResource">;
defvar AO_Transfer = MemoryEffects<[MemRead<AO_TransferResource>,
                                    MemWrite<AO_TransferResource>]>;

def AO_OffloadOp : AO_Op<"offload", [AO_Transfer,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "start copying a device tensor to host memory";
  let description = [{
    `ao.offload(Tensor) -> Tensor`: the result is the host copy; it is valid
    only after the `ao.wait_tensor` that consumes it. Every ao op may carry
    its FX node `name`, kept across JSON round trips.

    ```mlir
    %h = ao.offload %a : tensor<1024x1024xf32>
    ```
  }];
  let arguments = (ins Arg<AnyRankedTensor, "", [MemRead]>:$input,
                       OptionalAttr<StrAttr>:$name);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def AO_ReloadOp : AO_Op<"reload", [AO_Transfer,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "start copying an offloaded host tensor back to a device";
  let description = [{
    `ao.reload(Tensor, Device, SymInt[]? size, SymInt[]? stride) -> Tensor`.
    The source is the forward `ao.wait_tensor` of an `ao.offload` (a data
    edge, so a reload can never race its own offload).

    ```mlir
    %r = ao.reload %w to "cuda:0" : tensor<1024x1024xf32>
    ```
  }];
  let arguments = (ins Arg<AnyRankedTensor, "", [MemRead]>:$input,
                       StrAttr:$device,
                       OptionalAttr<ArrayAttr>:$size,
                       OptionalAttr<ArrayAttr>:$stride,
                       OptionalAttr<StrAttr>:$name);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input `to` $device attr-dict `:` type($input)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The ao.offload this reload brings back.
    Operation *getOffload();
  }];
}

def AO_WaitTensorOp : AO_Op<"wait_tensor", [AO_Transfer,
    AttrSizedOperandSegments, AllTypesMatch<["input", "result"]>]> {
  let summary = "wait for an ao.offload or ao.reload copy to finish";
  let description = [{
    `ao.wait_tensor(Tensor(a) t, Tensor? keepalive, Tensor? last_use_of_storage)
    -> Tensor(a)`. The forward wait of an offload carries the offloaded source
    as `keepalive` (its device storage is released here) and the last forward
    user of that storage as `last_use_of_storage`, so it is placed after it.
    The wait of a reload may carry the host tensor as `keepalive`, holding
    the host buffer until the copy back has finished (as torch does).

    ```mlir
    %w = ao.wait_tensor %h keepalive %a : tensor<1024x1024xf32>
             last_use %b : tensor<1024x1024xf32> : tensor<1024x1024xf32>
    ```
  }];
  let arguments = (ins Arg<AnyRankedTensor, "", [MemRead]>:$input,
                       Optional<AnyType>:$keepalive,
                       Optional<AnyType>:$last_use_of_storage,
                       OptionalAttr<StrAttr>:$name);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input (`keepalive` $keepalive^ `:` type($keepalive))?
    (`last_use` $last_use_of_storage^ `:` type($last_use_of_storage))?
    attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// True when this waits on an ao.offload (the forward wait).
    bool isOffloadWait();
    /// True when this waits on an ao.reload (the backward wait).
    bool isReloadWait();
  }];
}

#endif // JOINT_DIALECT_AO_IR_AOOPS_TD

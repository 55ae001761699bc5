//===- Passes.td - Passes on joint graphs ------------------*- tablegen -*-===//
//
// Memory passes on the joint forward+backward graph: storage inspection,
// activation checkpointing (tag + remat), CPU offload, memory report.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_DIALECT_JOINT_TRANSFORMS_PASSES_TD
#define JOINT_DIALECT_JOINT_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Analysis inspection
//===----------------------------------------------------------------------===//

def JointPrintStorageGroups : Pass<"joint-print-storage-groups",
                                   "::mlir::ModuleOp"> {
  let summary = "Report the storage groups the memory passes see";
  let description = [{
    Emits one remark per storage with more than one member or an in-place
    writer: its id, owner, members, writers and whether it is a graph input
    or output (StorageAliasAnalysis). Changes nothing. Use it to see why a
    value was not offloaded or recomputed.
  }];
}

//===----------------------------------------------------------------------===//
// CPU offload
//===----------------------------------------------------------------------===//

def JointCpuOffload : Pass<"joint-cpu-offload", "::mlir::ModuleOp"> {
  let summary = "Offload saved attention activations to host memory";
  let description = [{
    Moves forward activations produced inside `self_attn` modules that the
    backward reads (directly or through views) to host memory between their
    last forward use and their first backward use, with the `ao` transfer
    protocol:

    ```mlir
    %a = joint.op "aten::mm.default"(...)            // producer
    %h = ao.offload %a                               // right after it
    ...                                              // last forward use %b
    %w = ao.wait_tensor %h keepalive %a last_use %b  // frees %a's storage
    ...
    %r = ao.reload %w to "cuda:0"                    // prefetched
    %rw = ao.wait_tensor %r                          // before 1st bwd use
    ```

    Reads: phase, module stacks and the graph attribute `joint.model`
    (`attention`) for the scope; tensor facts (rank, strides, offset, size
    hints) and StorageAliasAnalysis for eligibility; the `policy` attribute
    (values tagged `must_recompute`/`prefer_recompute`, or any alias of them,
    stay on device). Writes `ao` ops, redirects backward consumers, replays
    forward views that the backward reads on the reloaded value, and gives
    backward aliases of an offloaded storage a fresh storage id.

    Pipeline order: `joint-tag-recompute-policy` -> `joint-cpu-offload` ->
    `joint-remat`. Offload only takes values that stay saved; remat then
    rebuilds recomputed ops on top of the reload chain. Running offload after
    remat is also valid: remat clones are ordinary backward consumers.
    See docs/passes.md, "CPU offload".
  }];
  let dependentDialects = ["::mlir::ao::AODialect"];
  let options = [
    Option<"scope", "scope", "std::string", "\"attention\"",
           "Which activations: 'attention' (produced inside self_attn "
           "modules) is the only scope">,
    Option<"budgetGB", "budget-gb", "double", "0.0",
           "Host budget in GiB (2^30 bytes) for offloaded activations, "
           "filled largest first; 0 means no limit; must be >= 0">,
    Option<"prefetchRegions", "prefetch-regions", "unsigned", "0",
           "Issue each ao.reload this many attention regions earlier in "
           "the backward (0: right before its first backward consumer)">,
    Option<"minBytes", "min-bytes", "int64_t", "1048576",
           "Smallest activation worth a transfer, in bytes (trace-time "
           "size hints); must be >= 0">,
  ];
  let statistics = [
    Statistic<"numOffloaded", "offloaded", "Activations offloaded to host">,
    Statistic<"numOffloadedBytes", "offloaded-bytes",
              "Bytes offloaded to host (trace-time hints)">,
    Statistic<"numPrefetched", "prefetched-reloads",
              "Reloads moved earlier by prefetch-regions">,
  ];
}

#endif // JOINT_DIALECT_JOINT_TRANSFORMS_PASSES_TD

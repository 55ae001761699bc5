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

#endif // JOINT_DIALECT_JOINT_TRANSFORMS_PASSES_TD

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
// Memory report
//===----------------------------------------------------------------------===//

def JointMemoryReport : Pass<"joint-memory-report", "::mlir::ModuleOp"> {
  let summary = "Report peak memory, saved activations, recompute and "
                "transfer cost";
  let description = [{
    Reads the module's one `joint.graph` (with any `ao` ops and remat clones
    already in it) and writes what the step costs: peak device bytes and the
    op at the peak, graph-input bytes resident throughout, activation bytes
    live across the forward/backward boundary, host bytes of offloaded
    copies, FLOPs with the recompute share, ao transfer bytes and the time
    the compute between each copy and its wait cannot hide, a per-block
    breakdown and (JSON) a per-op timeline. Numbers come from the
    MemoryModel and CostModel analyses (docs/cost-model.md). Changes
    nothing, so it can run after any pass of a pipeline:

    ```
    joint-opt g.json --joint-remat \
      --joint-memory-report="format=json output=remat.json label=remat"
    ```

    `python -m joint_mlir.plot *.json -o memory.png` plots JSON reports.
  }];
  let options = [
    Option<"format", "format", "std::string", /*default=*/"\"text\"",
           "Report format: 'text' (a table) or 'json' (the same numbers "
           "plus the per-op timeline)">,
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "File to write the report to; '-' is stdout">,
    Option<"label", "label", "std::string", /*default=*/"\"\"",
           "Name of the pipeline that produced the graph, shown in the "
           "report and used as the plot legend">,
    Option<"peakTflops", "peak-tflops", "double", /*default=*/"989.0",
           "Device compute throughput in TFLOP/s (1e12 FLOP/s); default: "
           "H200 dense bf16">,
    Option<"hbmGbps", "hbm-gbps", "double", /*default=*/"4800.0",
           "Device memory bandwidth in GB/s (1e9 bytes/s); default: H200 "
           "HBM3e">,
    Option<"linkGbps", "link-gbps", "double", /*default=*/"55.0",
           "Host link bandwidth per direction in GB/s (1e9 bytes/s); "
           "default: PCIe Gen5 x16 as achieved">,
  ];
  let statistics = [
    Statistic<"numOps", "ops", "Ops in the graph (ao ops included)">,
    Statistic<"numStorages", "storages", "Storages that are not graph inputs">,
    Statistic<"numUnknownSize", "unknown-size-storages",
              "Storages whose size has no trace-time hint (counted as 0)">,
    Statistic<"numUnknownFlops", "unknown-flops-ops",
              "Ops whose FLOPs could not be estimated (counted as 0)">,
    Statistic<"numIneffectiveOffloads", "ineffective-offloads",
              "Offloads whose source is still read after the forward wait">,
  ];
}

#endif // JOINT_DIALECT_JOINT_TRANSFORMS_PASSES_TD

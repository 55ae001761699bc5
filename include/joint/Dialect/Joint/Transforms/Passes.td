//===- Passes.td - Passes on joint graphs ------------------*- tablegen -*-===//
//
// Memory passes on the joint forward+backward graph: storage inspection,
// activation checkpointing (tag + remat), CPU offload, memory report. The
// per-graph passes anchor on joint.graph (IsolatedFromAbove) and read the
// module-level joint.schema table from the parent module; as joint-opt flags
// they nest implicitly, as text they read
// `builtin.module(joint.graph(joint-remat))`.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_DIALECT_JOINT_TRANSFORMS_PASSES_TD
#define JOINT_DIALECT_JOINT_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Analysis inspection
//===----------------------------------------------------------------------===//

def JointPrintStorageGroups : Pass<"joint-print-storage-groups",
                                   "::mlir::joint::GraphOp"> {
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

// Options of joint-tag-cpu-offload; the joint-cpu-offload pipeline takes
// the same.
defvar JointCpuOffloadOptions = [
  Option<"scope", "scope", "::mlir::joint::OffloadScope",
         "::mlir::joint::OffloadScope::attention",
         "Which forward activations are candidates",
         [{::llvm::cl::values(
           clEnumValN(::mlir::joint::OffloadScope::attention, "attention",
                      "produced inside attention modules (joint.model, "
                      "modules named self_attn, modules computing SDPA or "
                      "bmm -> softmax -> bmm)"),
           clEnumValN(::mlir::joint::OffloadScope::block, "block",
                      "produced inside transformer blocks"),
           clEnumValN(::mlir::joint::OffloadScope::all, "all",
                      "every forward activation"))}]>,
  Option<"budgetGiB", "budget-gib", "double", "0.0",
         "Host budget in GiB (2^30 bytes) for offloaded activations, "
         "filled largest first; 0 means no limit; must be >= 0">,
  // Hidden: parsed only to refuse it with its own error; option lists in
  // messages leave it out.
  Option<"budgetGB", "budget-gb", "double", "0.0",
         "Removed: it counted 2^30 bytes here but 1e9 in joint-plan-memory; "
         "giving it is an error (use budget-gib)", "::llvm::cl::Hidden">,
  Option<"prefetchRegions", "prefetch-regions", "unsigned", "0",
         "Issue each ao.reload this many regions (attention modules, or "
         "blocks for values outside attention) earlier in the backward "
         "(0: right before its first backward consumer)">,
  Option<"deferRegions", "defer-regions", "unsigned", "0",
         "Place each forward ao.wait_tensor this many regions after the "
         "last forward use (0: right after it); the source stays on the "
         "device that much longer">,
  Option<"minBytes", "min-bytes", "int64_t", "1048576",
         "Smallest activation storage worth a transfer, in bytes "
         "(trace-time size hints); must be >= 0">,
];

def JointTagCpuOffload : Pass<"joint-tag-cpu-offload",
                              "::mlir::joint::GraphOp"> {
  let summary = "Decide which saved activations move to host memory";
  let description = [{
    The offload decider. Writes `policy = must_cpu_offload` on each forward
    `joint.call_function` in `scope` whose result (a view or not) the
    backward reads and whose base storage passes every safety rule
    (OffloadEligibility: no collective or in-place op, no written,
    input or output storage, no alias tagged for recompute, no host value in
    a graph that computes on an accelerator, sizes with trace-time hints,
    the forward done with it before the backward starts), at least
    `min-bytes` large and of rank >= 2, largest first within `budget-gib`.
    With `prefetch-regions` / `defer-regions` > 0 it also writes the
    discardable integer attributes `joint.prefetch` / `joint.defer` on the
    tagged ops. In scope `block` and `all`, the activations of the block
    whose backward runs first are kept on the device when the memory
    report's cost model says their reload cannot hide behind the backward
    compute before their first reader (a remark names how many).
    Changes no op otherwise; `joint-apply-cpu-offload` applies the tags.
    Pipeline order: `joint-tag-recompute-policy` -> `joint-tag-cpu-offload`
    -> `joint-apply-cpu-offload` -> `joint-remat` (the `joint-cpu-offload`
    pipeline is the two offload passes). See docs/passes.md, "CPU offload".
  }];
  let options = JointCpuOffloadOptions;
  let statistics = [
    Statistic<"numTagged", "tagged-ops", "Forward ops tagged must_cpu_offload">,
    Statistic<"numSelectedBytes", "selected-bytes",
              "Bytes of the selected storages (trace-time hints)">,
  ];
}

def JointApplyCpuOffload : Pass<"joint-apply-cpu-offload",
                                "::mlir::joint::GraphOp"> {
  let summary = "Move must_cpu_offload activations to host memory";
  let description = [{
    The offload applier. For every forward op tagged
    `policy = must_cpu_offload` (by `joint-tag-cpu-offload`, a planner or by
    hand), moves the base storage of each saved result to host memory
    between its last forward use and its first backward use, once per
    storage, with the `ao` transfer protocol:

    ```mlir
    %a = joint.call_function "aten::mm.default"(...)            // producer
    %h = ao.offload %a                               // right after it
    ...                                              // last forward use %b
    %w = ao.wait_tensor %h keepalive %a last_use %b  // frees %a's storage
    ...
    %r = ao.reload %w to "cuda:0"                    // prefetched
    %rw = ao.wait_tensor %r                          // before 1st bwd use
    ```

    Re-checks every safety rule of the decider on each tagged op and fails
    with one error naming the node and the reason, before changing
    anything. A non-contiguous base is reloaded in its own layout (the
    reload's size and stride); forward views the backward reads are
    replayed on the reloaded base; backward aliases get a fresh storage id.
    The forward wait goes `joint.defer` regions after the last forward use
    and the reload `joint.prefetch` regions before its first backward reader
    (per op; the options are the defaults for ops without them). Storages
    already offloaded are left alone, so the pass is idempotent.
  }];
  let dependentDialects = ["::mlir::ao::AODialect"];
  let options = [
    Option<"prefetchRegions", "prefetch-regions", "unsigned", "0",
           "Default prefetch distance in regions for tagged ops without "
           "joint.prefetch">,
    Option<"deferRegions", "defer-regions", "unsigned", "0",
           "Default defer distance in regions for tagged ops without "
           "joint.defer">,
  ];
  let statistics = [
    Statistic<"numOffloaded", "offloaded", "Storages offloaded to host">,
    Statistic<"numOffloadedBytes", "offloaded-bytes",
              "Bytes offloaded to host (trace-time hints)">,
    Statistic<"numPrefetched", "prefetched-reloads",
              "Reloads moved earlier by prefetch distances">,
  ];
}

//===----------------------------------------------------------------------===//
// Activation checkpointing
//===----------------------------------------------------------------------===//

// Options of joint-tag-recompute-policy (the ActivationCheckpointConfig
// vocabulary); the joint-activation-checkpoint pipeline takes the same.
defvar JointCheckpointOptions = [
  Option<"mode", "mode", "::mlir::joint::CheckpointMode",
         "::mlir::joint::CheckpointMode::full",
         "off: change nothing; full: recompute every scoped op; selective: "
         "save the compute-intensive set, recompute the rest",
         [{::llvm::cl::values(
           clEnumValN(::mlir::joint::CheckpointMode::off, "off",
                      "change nothing"),
           clEnumValN(::mlir::joint::CheckpointMode::full, "full",
                      "every scoped op must_recompute"),
           clEnumValN(::mlir::joint::CheckpointMode::selective, "selective",
                      "must_save for compute/communication ops, "
                      "prefer_recompute otherwise"))}]>,
  Option<"layerCount", "layer-count", "int64_t", "-1",
         "Checkpoint the first N blocks in flattened order (default: all "
         "blocks; 0 tags nothing; more than the graph has selects all)">,
  ListOption<"layerIndices", "layer-indices", "int64_t",
             "Checkpoint these flattened block indices (0-based); excludes "
             "layer-count">,
  ListOption<"regionPatterns", "region-patterns", "std::string",
             "Glob patterns on module FQNs: recompute only the outermost "
             "matching modules inside the selected blocks">,
  ListOption<"excludePatterns", "exclude-patterns", "std::string",
             "Glob patterns on module FQNs whose subtrees stay saved">,
  Option<"saveForwardAllGather", "save-forward-all-gather", "bool", "false",
         "Save forward all-gathers instead of replaying them in backward">,
  Option<"replayRandom", "replay-random", "bool", "false",
         "Let RNG ops be recomputed: a clone replays its original's draw "
         "(the compiled step's Philox counter, torch's generator state in "
         "joint_mlir.fx); off, RNG results stay saved">,
];

defvar JointTagStatistics = [
  Statistic<"numMustSave", "must-save", "Forward ops tagged must_save">,
  Statistic<"numMustRecompute", "must-recompute",
            "Forward ops tagged must_recompute">,
  Statistic<"numPreferRecompute", "prefer-recompute",
            "Forward ops tagged prefer_recompute">,
];

defvar JointRematStatistics = [
  Statistic<"numClones", "clones", "Forward ops cloned into the backward">,
  Statistic<"numErased", "erased", "Originals erased (no forward reader left)">,
  Statistic<"numReloadsMoved", "reloads-moved",
            "Reload chains moved before a clone">,
];

def JointTagRecomputePolicy : Pass<"joint-tag-recompute-policy",
                                   "::mlir::joint::GraphOp"> {
  let summary = "Decide save or recompute for every forward op in scope";
  let description = [{
    Writes the `policy` attribute (torch CheckpointPolicy) on forward
    `joint.call_function`s inside the recompute scope: the transformer blocks listed in
    the graph attribute `joint.model` (else module-stack paths
    `<container>.<int>`), narrowed by `layer-count`/`layer-indices` and the
    region/exclude patterns. `full` tags `must_recompute`, `selective` saves
    the compute-intensive and communication sets and tags the rest
    `prefer_recompute`. Structural exceptions keep RNG (unless
    `replay-random`), SymInt,
    communication and in-place ops, every reader of mutated storage and
    every value read by another block saved. Changes no op otherwise; run
    `joint-remat` (after `joint-cpu-offload`, if any) to apply the tags.
    Rules and operator sets: docs/passes.md, "Activation checkpointing".
  }];
  let options = JointCheckpointOptions;
  let statistics = JointTagStatistics;
}

def JointReadForwardSizes : Pass<"joint-read-forward-sizes",
                                  "::mlir::joint::GraphOp"> {
  let summary = "Backward size queries of forward tensors read the forward "
                "SymInt";
  let description = [{
    Every backward size query (`sym_size`, `sym_stride`, `sym_numel`,
    `sym_storage_offset`) of a tensor produced by a forward op reads the
    SymInt computed in the forward: an equal forward query of the same tensor
    when there is one, else the query itself moves right after the tensor's
    producer (phase forward). No tensor then lives across the forward /
    backward boundary only for its size. Needs nothing before it; remat,
    offload and the planner run the same rewrite first, and `optimize()`
    and `joint-compile` run this pass in every pipeline, the identity one
    included. A second run changes nothing.
  }];
}

def JointRemat : Pass<"joint-remat", "::mlir::joint::GraphOp"> {
  let summary = "Clone recompute-tagged forward ops into the backward";
  let description = [{
    Reads `policy`: every forward op tagged `must_recompute` or
    `prefer_recompute` that the backward consumes (directly or through other
    tagged ops) is cloned right before its earliest backward consumer; the
    clone is backward-phase, keeps args, kwargs, facts and module stack,
    carries `recomputed_from` and no policy. Backward consumers are
    redirected; originals without users are erased. A clone reading a value
    that `joint-cpu-offload` offloaded reads its reload's wait, moved before
    the clone when needed. Runs after the tag pass and the offload pass.
  }];
  let statistics = JointRematStatistics;
}

def JointChunkLoss : Pass<"joint-chunk-loss", "::mlir::joint::GraphOp"> {
  let summary = "Compute the output projection and cross-entropy in token "
                "chunks";
  let description = [{
    Splits the linear head and the cross-entropy that reads it (torch's
    `mm`/`addmm`, `_log_softmax`, `nll_loss_forward`, label smoothing's sums,
    and their backward up to the head's input and weight gradients) into
    `chunks` runs of tokens: per chunk the logits, their log-softmax and the
    loss's partial sums, then per chunk the gradient of the logits, the
    head's input gradient (concatenated) and its weight gradient (accumulated
    with `addmm`). Forward chunk values the backward reads are tagged
    `must_recompute`; `joint-remat` then replays each chunk's logits in the
    backward, so neither the logits nor their float32 log-softmax are ever
    live whole. Partial sums change summation order: opt-in, within rounding
    of torch, never bitwise. A head the rules do not cover stays whole with a
    remark naming the node and the reason. Runs before the recompute tagger
    and `joint-remat`. Source: docs/passes.md, "Chunked loss".
  }];
  let options = [
    Option<"chunks", "chunks", "unsigned", /*default=*/"4",
           "Token chunks of the loss head (default 4; 1 changes nothing; "
           "at most one chunk per token)">,
  ];
  let statistics = [
    Statistic<"numChunked", "chunked", "Loss heads split into chunks">,
    Statistic<"numLeftWhole", "left-whole",
              "Loss heads left whole (a remark each)">,
  ];
}

//===----------------------------------------------------------------------===//
// Memory planner
//===----------------------------------------------------------------------===//

// Options of joint-plan-memory; the joint-optimize-memory pipeline takes the
// same.
defvar JointPlanMemoryOptions = [
  Option<"budgetGB", "budget-gb", "double", "0.0",
         "Device peak budget in GB (1e9 bytes), resident inputs included; "
         "excludes budget-gib">,
  Option<"budgetGiB", "budget-gib", "double", "0.0",
         "Device peak budget in GiB (2^30 bytes); excludes budget-gb">,
  Option<"hostBudgetGB", "host-budget-gb", "double", "0.0",
         "Host bytes for offloaded activations in GB (1e9 bytes); 0 means "
         "no limit; excludes host-budget-gib">,
  Option<"hostBudgetGiB", "host-budget-gib", "double", "0.0",
         "Host bytes for offloaded activations in GiB (2^30 bytes); 0 "
         "means no limit">,
  Option<"allowUnboundedSizes", "allow-unbounded-sizes", "bool",
         /*default=*/"false",
         "Plan even when some storage has a data-dependent size without a "
         "recorded bound (it counts as 0 bytes, so the budget is not "
         "guaranteed)">,
  Option<"peakTflops", "peak-tflops", "double", /*default=*/"989.0",
         "Device compute throughput in TFLOP/s (1e12 FLOP/s), as "
         "joint-memory-report">,
  Option<"hbmGbps", "hbm-gbps", "double", /*default=*/"4800.0",
         "Device memory bandwidth in GB/s (1e9 bytes/s), as "
         "joint-memory-report">,
  Option<"linkGbps", "link-gbps", "double", /*default=*/"55.0",
         "Host link bandwidth per direction in GB/s (1e9 bytes/s), as "
         "joint-memory-report">,
  Option<"collectiveGbps", "collective-gbps", "double", /*default=*/"100.0",
         "Collective bus bandwidth per rank in GB/s (1e9 bytes/s): the "
         "price of re-gathering FSDP parameters, as joint-memory-report">,
  Option<"allowChunkLoss", "allow-chunk-loss", "bool", /*default=*/"false",
         "Also plan with the loss head in 2, 4 and 8 token chunks "
         "(joint-chunk-loss) and keep the fastest plan within the budget; "
         "chunks change summation order (within rounding, not bitwise)">,
];

def JointPlanMemory : Pass<"joint-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Decide save, recompute or CPU offload per saved activation "
                "under a device memory budget";
  let description = [{
    The memory planner. For every activation storage live across the
    forward/backward boundary it decides save, recompute or offload to the
    host so that the modelled peak (MemoryModel, resident inputs included)
    stays within `budget-gb`/`budget-gib` and the offloaded bytes within
    `host-budget-gb`/`host-budget-gib` (0: no limit), at the least modelled
    step time (CostModel: compute with the recompute seconds, plus exposed
    transfer seconds). It only decides: it writes `policy`
    (`must_recompute` on the ops remat must replay, `must_cpu_offload` on
    the ops whose saved storages go to the host, `must_save` on the others,
    replacing any policy the forward carried), the per-op distances
    `joint.prefetch` / `joint.defer` (regions) the offload applier reads,
    and the graph attribute `joint.plan` (budget, modelled peak bytes, step
    seconds, recomputed and offloaded storages, exposed transfer seconds);
    `joint-optimize-memory` runs the planner, `joint-apply-cpu-offload` and
    `joint-remat`.

    Method: greedy by freed bytes per added second with re-evaluation of
    the peak (the greedy solver of torch's min-cut partitioner under
    `activation_memory_budget`; problem as in Checkmate, Jain et al. 2020,
    with offload as in torchtitan's SAC+offload): start from "save
    everything"; while the modelled peak exceeds the budget, take the
    decision that lowers the bytes live at the current peak op most per
    added second. Recompute candidates are what full checkpointing may
    recompute; offload candidates are what `checkOffloadable` accepts
    (OffloadEligibility: no in-place writes or aliases, collectives,
    data-dependent sizes, host values of an accelerator graph; a random
    op's result may be offloaded, its drawn bits copied), tried at
    prefetch and defer distances 0-2. An offload whose copies the link's
    FIFO hides (estimated per block) costs nothing and goes first, the one
    dearest to recompute first. Each plan is applied to a copy and
    measured; offloads whose copies stall are dropped in the next round
    (3 rounds), and the recompute-only plan is always a candidate: the
    fastest measured plan within the budget is written. When none fits, a
    last plan takes every offload that lowers the peak before any
    recompute (lowest peak first). Lifetimes live in a segment tree (range
    add, max). An unreachable budget is one error naming the lowest
    measured peak, the one node where it occurs and the largest values
    live there.
    A module pass: each plan is measured on a clone of the module, which
    holds the operator table (`joint.schema`) the graphs read. With
    `allow-chunk-loss` it also plans the graph with the loss head in 2, 4
    and 8 token chunks and, when one of those plans is faster (or the only
    one within the budget), rewrites the graph with `joint-chunk-loss` and
    writes that plan, with a remark. See docs/passes.md, "Memory planner".
  }];
  // The plan is measured in process by applying it (ao ops included) to a
  // copy, so the ao dialect must be loaded before the pass runs.
  let dependentDialects = ["::mlir::ao::AODialect"];
  let options = JointPlanMemoryOptions;
  let statistics = [
    Statistic<"numRecomputed", "recomputed-storages",
              "Saved activation storages the plan recomputes">,
    Statistic<"numCandidates", "candidate-storages",
              "Saved activation storages the planner could recompute">,
    Statistic<"numLossChunked", "loss-heads-chunked",
              "Loss heads planned in token chunks (allow-chunk-loss)">,
  ];
}

//===----------------------------------------------------------------------===//
// Memory report
//===----------------------------------------------------------------------===//

def JointMemoryReport : Pass<"joint-memory-report", "::mlir::joint::GraphOp"> {
  let summary = "Report peak memory, saved activations, recompute and "
                "transfer cost";
  let description = [{
    Reads one `joint.graph` (with any `ao` ops and remat clones already in
    it; the report is one document, so the module must hold exactly one
    graph) and writes what the step costs: peak device bytes and the
    op at the peak, graph-input bytes resident throughout, activation bytes
    live across the forward/backward boundary, host bytes of offloaded
    copies, FLOPs with the recompute share, ao transfer bytes and the time
    the compute between each copy and its wait cannot hide, a per-block
    breakdown and (JSON) a per-op timeline. Numbers come from the
    MemoryModel and CostModel analyses (docs/cost-model.md). Decisions the
    graph carries that no applier has applied (recompute tags the backward
    still reads, must_cpu_offload tags without an ao.offload) get one
    remark: the numbers are the undecided graph's. The report goes
    to stderr unless `output` names a file (`-` is stdout), so the IR on
    stdout stays clean, as with upstream's `-print-op-stats`. Changes
    nothing, so it can run after any pass of a pipeline:

    ```
    joint-opt g.json --joint-remat \
      --joint-memory-report="format=json output=remat.json label=remat"
    ```

    `python -m joint_mlir.plot *.json -o memory.png` plots JSON reports.
  }];
  let options = [
    Option<"format", "format", "::mlir::joint::ReportFormat",
           "::mlir::joint::ReportFormat::text", "Report format",
           [{::llvm::cl::values(
             clEnumValN(::mlir::joint::ReportFormat::text, "text", "a table"),
             clEnumValN(::mlir::joint::ReportFormat::json, "json",
                        "the same numbers plus the per-op timeline"))}]>,
    Option<"output", "output", "std::string", /*default=*/"\"\"",
           "File to write the report to (default: stderr; '-': stdout); "
           "joint-opt, joint-compile and run_pipeline create it only if the "
           "whole run succeeds, a plain PassManager when the pass ends">,
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
    Option<"collectiveGbps", "collective-gbps", "double",
           /*default=*/"100.0",
           "Collective bus bandwidth per rank in GB/s (1e9 bytes/s): "
           "all-gather (n-1)/n of its result, reduce-scatter of its input, "
           "all-reduce twice its input">,
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

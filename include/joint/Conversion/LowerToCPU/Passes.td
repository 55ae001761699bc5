//===- Passes.td - Passes of the CPU lowering pipeline ----*- tablegen -*-===//
//
// The passes joint-mlir adds to upstream MLIR to take converted joint graphs
// (func.func on tensors, from convert-joint-to-linalg) to a callable CPU
// entry: the destination-passing entry and the tiling of the matmul family.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_CONVERSION_LOWERTOCPU_PASSES_TD
#define JOINT_CONVERSION_LOWERTOCPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def JointCPUEntry : Pass<"joint-cpu-entry", "::mlir::ModuleOp"> {
  let summary = "Rewrite the step function into a destination-passing entry";
  let description = [{
    Reads the module's one public `func.func` (the graph after
    `convert-joint-to-linalg`) and rewrites it into `func.func @joint_entry`
    whose arguments are, in order, one memref per graph argument (identity
    layout, read-only: `bufferization.to_tensor restrict`), `i64` for SymInt
    arguments, then one caller-allocated memref per result (a 0-d `memref<i64>`
    for a SymInt result), filled with `bufferization.materialize_in_destination
    restrict writable`. Argument and result attributes move to the matching
    memref arguments; the graph name is kept as `joint.graph_name` and the
    number of input slots as `joint.num_inputs`. Runs before
    one-shot bufferization; `joint-compile` wraps `@joint_entry` into the C
    entry point described in docs/lowering.md ("ABI").
    Errors: no or several public functions, an argument or result that is not
    a ranked tensor or an integer.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::func::FuncDialect"];
}

def JointTileMatmuls : Pass<"joint-tile-matmuls", "::mlir::func::FuncOp"> {
  let summary = "Tile the matmul family into cache-sized, vectorizable blocks";
  let description = [{
    Tiles every `linalg.matmul`, `linalg.batch_matmul` and contraction-shaped
    `linalg.generic` (the matmul family of convert-joint-to-linalg) with
    `scf.for` loops over `tile-m` x `tile-n` x `tile-k` blocks (batch
    dimensions by 1), using the TilingInterface; then, when `vectorize` is
    set, vectorizes every full static tile of a plain M x N x K contraction
    into `vector.contract` (batched tiles and tiles of symbolic sizes stay
    scalar loops). A contraction whose result one elementwise
    `linalg.generic` alone reads (a bf16 matmul's f32 accumulator and its
    truncation, addmm's epilogue) is first fused, with the fill of its
    accumulator, into that op's tiles of `tile-m` rows, so the accumulator
    exists one tile at a time instead of a whole buffer the memory model
    does not count. Runs on tensors, before bufferization.
  }];
  let options = [
    Option<"tileM", "tile-m", "int64_t", /*default=*/"8",
           "rows of the result per tile (elements)">,
    Option<"tileN", "tile-n", "int64_t", /*default=*/"16",
           "columns of the result per tile (elements)">,
    Option<"tileK", "tile-k", "int64_t", /*default=*/"8",
           "reduction elements per tile">,
    Option<"vectorize", "vectorize", "bool", /*default=*/"true",
           "vectorize the static tiles">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::tensor::TensorDialect"];
}

def JointOutlineLoops : Pass<"joint-outline-loops", "::mlir::ModuleOp"> {
  let summary = "Outline each top-level loop nest into its own function";
  let description = [{
    Moves every loop nest (an op implementing `LoopLikeOpInterface`) at the
    top level of a defined `func.func` on memrefs into a new private function
    `@<func>_loop<i>` marked `noinline`, called in its place. Values used
    inside the nest and defined outside it become arguments, except
    constants, which are cloned into the new function so trip counts and
    tile shapes stay static; the nest's results become the call's results.
    Runs after bufferization and `convert-linalg-to-loops`, before the
    conversion to the LLVM dialect. Why: a step lowered into one function
    has thousands of loops in one body, and LLVM's loop passes
    (IndVarSimplify: 86% of a 2.5 min `-O3` compile of llama-tiny, measured
    with `opt -time-passes`) cost more than linear in the size of the
    function; one function per nest keeps each small, so compile time grows
    linearly with the graph.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def JointGuardEmptyTensors
    : Pass<"joint-guard-empty-tensors", "::mlir::ModuleOp"> {
  let summary = "Keep values with several readers out of output buffers";
  let description = [{
    Runs right before `eliminate-empty-tensors`, which computes a value whose
    chain starts at a `tensor.empty` directly in the output buffer it is
    materialized into. When a value on that chain has another reader that
    updates it in place (two scatter loops on one base, one of them a step
    output), one-shot bufferization may place that reader's result in the
    output buffer too, and the final materialization overwrites it. A
    `tensor.empty` whose chain (destination-passing inits, `scf.for`
    iter_args) reaches a value with more than one use becomes a
    `bufferization.alloc_tensor`, which the elimination leaves alone.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
  let statistics = [
    Statistic<"numGuarded", "guarded",
              "tensor.empty ops kept out of output buffers">,
  ];
}

def JointCPUCountOutputs
    : Pass<"joint-cpu-count-outputs", "::mlir::ModuleOp"> {
  let summary = "Count each output buffer from the op that first writes it";
  let description = [{
    On bufferized `@joint_entry` (after `joint-cpu-entry`, bufferization and
    `joint-free-at-last-use`): before the first top-level op that uses each
    output buffer (an argument at or after `joint.num_inputs`), inserts a
    call to the step runtime's `joint_step_output_written(bytes)`, so the
    step's high-water mark (`joint_step_peak_bytes`, docs/lowering.md "ABI")
    counts an output from the op that produces it, as the memory model
    counts a graph output (docs/cost-model.md, "Memory model"), although
    the caller allocated it before the call. Statistics only: the values
    computed are unchanged.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def JointLLVMBF16Storage
    : Pass<"joint-llvm-bf16-storage", "::mlir::ModuleOp"> {
  let summary = "Keep bf16 as 16-bit integers in the LLVM dialect";
  let description = [{
    Runs last in the CPU pipeline, on the LLVM dialect, after
    `arith-emulate-unsupported-floats` and `arith-expand{include-bf16}` left
    bf16 only as storage: loads, stores, bitcasts, selects and constants.
    Replaces every bf16 type with i16 and every bf16 constant with its bit
    pattern. Without it LLVM may move a bitcast through a `select` or a
    `phi` and the x86 backend, which has no bf16 registers without
    AVX512-BF16, promotes that bf16 value to f32 and back through the
    compiler builtin `__truncsfbf2`, which a machine without compiler-rt
    or a recent libgcc lacks. Errors: a float operation (fast-math op,
    fp cast) on bf16, naming the op.
  }];
}

#endif // JOINT_CONVERSION_LOWERTOCPU_PASSES_TD

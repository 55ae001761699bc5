//===- Passes.td - Passes of the CUDA lowering pipeline ---*- tablegen -*-===//
//
// The passes joint-mlir adds to upstream MLIR's GPU route to take a bufferized
// step entry (joint-cpu-entry, one-shot bufferization, parallel loops) to
// device code only: compute that upstream leaves on the host moves into
// single-iteration kernels, every buffer becomes a device allocation freed
// after its last use, and the step's device work is ordered on one stream.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_CONVERSION_LOWERTOCUDA_PASSES_TD
#define JOINT_CONVERSION_LOWERTOCUDA_PASSES_TD

include "mlir/Pass/PassBase.td"

def JointGPUOffload : Pass<"joint-gpu-offload", "::mlir::ModuleOp"> {
  let summary = "ao ops to the CUDA runtime's transfer protocol";
  let description = [{
    Runs on the step on tensors (after `convert-joint-to-linalg{keep-ao}` and
    `joint-cpu-entry`), before bufferization. Mirrors torch's activation
    offloading on real streams (runtime/cuda/README.md, "The ao protocol"):
    `ao.offload %a` becomes `joint_ao_offload(ptr(a), bytes, node)` (an event
    on the compute stream, then a D2H copy into a pooled pinned buffer on the
    transfer stream); its forward `ao.wait_tensor` becomes
    `joint_ao_wait(h)` (the compute stream waits on the copy's event on the
    device, never a host sync); `ao.reload` becomes a `memref.alloc` of the
    result (a stream-ordered `gpu.alloc` on the compute stream later) filled
    by `joint_ao_reload_into(h, ptr, node)` (H2D on the transfer stream), seen
    as a tensor through `bufferization.to_tensor restrict writable`; its wait
    becomes `joint_ao_wait(h)` and `joint_ao_release(h)`, before the first
    backward consumer. Sources reach the calls as pointers of identity-layout
    buffers (`bufferization.to_buffer read_only`), and
    `joint-gpu-device-memory` frees an offloaded source only after its
    forward wait. Node names are private string constants for the runtime's
    messages. Errors: an ao op nested in a region, elements that are not
    integers or floats.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::tensor::TensorDialect"];
}

def JointGPUAttentionCalls : Pass<"joint-gpu-attention-calls", "::mlir::ModuleOp"> {
  let summary = "SDPA forward and backward through the runtime's cuDNN shim";
  let description = [{
    Runs on the joint graphs, before `convert-joint-to-linalg` (which would
    decompose them into contraction and softmax kernels). Every recorded SDPA
    call (`_for_cpu`, flash, efficient, cuDNN or math variant, forward or
    backward) that cuDNN's fused flash attention supports becomes a call to
    `joint_cudnn_sdpa_forward` / `joint_cudnn_sdpa_backward` on the compute
    stream: operands as pointers of identity-layout buffers
    (`bufferization.to_buffer read_only`), results as `memref.alloc`s written
    by the call and read through `bufferization.to_tensor restrict writable`,
    sizes and strides as private constant i64 arrays, the node name as a
    private string for the runtime's messages. Supported (the shim's rule,
    cuDNN 9 frontend): static shapes, bf16/f16, head_dim a multiple of 8 up
    to 256, query heads a multiple of key/value heads, dropout 0, is_causal
    (top-left) or not, no mask or a float mask of the operands' type with
    dims [1|B, 1|H, L, S] (cuDNN's additive bias); statistics in cuDNN's
    layout, f32 [B, H, L] or [B, H, L, 1] (torch's flash and cuDNN variants;
    the efficient variant only when L needs no padding to 32); the math
    variant only when its attention weights are unused; a forward only when
    its bookkeeping results (RNG state, offsets) feed nothing but backward
    calls that cuDNN runs too. Everything else keeps the decomposition (the
    fallback); `remarks` says why per call.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark for every SDPA call kept as generated kernels, "
           "with the reason">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

def JointGPUCollectives : Pass<"joint-gpu-collectives", "::mlir::ModuleOp"> {
  let summary = "torch's functional collectives as the runtime's NCCL calls";
  let description = [{
    Runs on the joint graphs, before `convert-joint-to-linalg`. Each
    `_c10d_functional::` all_gather_into_tensor, reduce_scatter_tensor,
    all_reduce and all_to_all_single becomes `joint_nccl_all_gather` /
    `_reduce_scatter` / `_all_reduce` / `_all_to_all` (group name, input
    pointer, output pointer, element counts, JOINT_NCCL_DTYPE_* code, reduce op
    code, node name), which starts it on the runtime's communication stream
    and returns a handle; its `wait_tensor` becomes `joint_nccl_wait(handle)`
    (the compute stream waits on the collective on the device) and returns
    the output. The input is an identity-layout buffer
    (`bufferization.to_buffer read_only`), the output a `memref.alloc` (a
    stream-ordered device allocation later) read through
    `bufferization.to_tensor restrict writable`; the call is marked
    `joint.reads_until_result_use`, so `joint-gpu-device-memory` frees
    neither buffer before the wait. Errors (naming the node): dynamic
    shapes, element types other than f32/f16/bf16/f64/i64/i32/i8/ui8,
    reduce ops other than sum/avg/product/min/max, a group_size that is not
    the dim-0 ratio of output to input, all-to-all split sizes that are not
    static integers (None: equal splits) or do not cover dim 0, a collective
    used other than by one wait, a wait on anything else. The module gets
    `joint.collective_groups`, each group name to its size as the ops state
    it (0: only all-reduces), when it has collectives (the step descriptor's
    `collective_groups` and `collective_group_sizes`).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

def JointGPUNameLocations : Pass<"joint-gpu-name-locations", "::mlir::ModuleOp"> {
  let summary = "Wrap every named graph op's location in a NameLoc of its node";
  let description = [{
    Runs before `convert-joint-to-linalg`. Every op with a `name` attribute
    (the graph's nodes, named ao ops) gets `NameLoc(name, loc)`, so the ops
    lowered from it (linalg ops, loops, kernels, library calls) carry the node
    name: `joint-gpu-library-calls` passes it to the cuBLAS shim and
    `joint-gpu-set-node` to the runtime before each launch, and the runtime
    quotes it in its error messages. Diagnostics still point at the op's file
    position (inside the NameLoc).
  }];
}

def JointGPUSetNode : Pass<"joint-gpu-set-node", "::mlir::ModuleOp"> {
  let summary = "Name the node of every kernel launch and allocation for the runtime's errors";
  let description = [{
    Runs after `gpu-kernel-outlining` (and `joint-gpu-stream-order`). Before
    every top-level `gpu.launch_func` or `gpu.alloc` whose location names a
    node (`joint-gpu-name-locations`) other than the one set last, inserts
    `joint_runtime_set_node(@name)` (a private constant string), so a failed
    launch reports "..., kernel 'k', node 'n'" (runtime/cuda/README.md,
    "Errors"). A call (library shim, ao transfer) sets its own node, so the
    next launch sets its node again.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::func::FuncDialect"];
}

def JointGPUDedupKernels : Pass<"joint-gpu-dedup-kernels", "::mlir::ModuleOp"> {
  let summary = "Compile each distinct outlined kernel once, in one module";
  let description = [{
    Runs after `gpu-kernel-outlining`, before the kernels are compiled.
    Outlining makes one `gpu.module` per launch, and the launches of one op
    shape in every layer outline to identical kernels. Every outlined kernel
    (a `gpu.module` holding one `gpu.func`) moves into the first such module
    with the same module attributes, renamed after its old module; a kernel
    whose content (attributes but its name, body; locations aside:
    OperationEquivalence) equals one already there is dropped and its
    `gpu.launch_func`s take that one. NVVM, libdevice and ptxas then run
    once per module, on each distinct kernel once. Launches, their arguments
    and their order are unchanged (llama-tiny: 267 launches of 93 distinct
    kernels; bench/kernels). Lowering option `dedup-kernels=false` skips it.
  }];
  let statistics = [
    Statistic<"numErased", "erased", "Duplicate kernels dropped">,
  ];
}

def JointGPULibraryCalls : Pass<"joint-gpu-library-calls", "::mlir::func::FuncOp"> {
  let summary = "GEMMs through the runtime's cuBLAS shim";
  let description = [{
    Runs on the bufferized step, before `joint-gpu-parallel-first`. Every
    top-level `linalg.matmul` / `linalg.batch_matmul` that cuBLAS supports
    becomes a call to `joint_cublas_gemm` / `joint_cublas_gemm_strided_batched`
    (`cublasGemmEx` / `cublasGemmStridedBatchedEx` on the compute stream,
    row-major, alpha = 1, beta = 1: the op accumulates into its output; a
    `linalg.fill` of zero into exactly that output, with nothing between it
    and the GEMM touching the output's allocation, is dropped and beta = 0).
    Supported: identity-layout buffers, default
    indexing maps, A/B/C f32 (no TF32, torch's default), or bf16/f16 A and B
    into an f32 C (CUBLAS_COMPUTE_32F: the lowering's f32 accumulator, then
    its own rounding kernel) or a C of their type. Everything else (integer
    or mixed A/B element types, strided views, user-defined maps) stays a
    generated kernel: the fallback. Operands reach the shim as pointers, so
    `joint-gpu-device-memory` keeps them allocated until the call.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

def JointGPUParallelFirst : Pass<"joint-gpu-parallel-first", "::mlir::func::FuncOp"> {
  let summary = "Put the parallel loops of every linalg op outermost";
  let description = [{
    Runs on buffers, before `convert-linalg-to-parallel-loops`, which turns
    only the leading parallel iterators into an `scf.parallel` (a reduction
    over dimension 0, e.g. a bias gradient, would otherwise become a host
    `scf.for` around the parallel loop: one thread block doing it all).
    Every `memref.copy` becomes a `linalg.copy` first (so copies become
    kernels too), except a copy of a view onto the same view (same source,
    offsets, sizes and strides), which is dropped. Named ops are
    generalized, then every `linalg.generic` whose iterators are not
    parallel-first is interchanged (parallel dimensions in order, then
    reductions in order), which keeps each output element's reduction order.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect"];
}

def JointGPUFuseParallelLoops : Pass<"joint-gpu-fuse-parallel-loops", "::mlir::func::FuncOp"> {
  let summary = "Fuse adjacent parallel loops of the same iterations into one kernel";
  let description = [{
    Runs after `convert-linalg-to-parallel-loops`, before tiling. Two
    adjacent outermost `scf.parallel` nests, each running from 0 by 1, with
    the same iterations once dimensions of one iteration are dropped (the
    same constant trip counts, or the same SSA upper bound) and nothing in
    between but constants, allocations, views and size queries, become one:
    the second's body after the first's in each iteration (its unit
    induction variables 0). Legal when every buffer one writes and the
    other accesses is accessed by both only at the iteration's own element
    (same memref, seen through reshapes of unit dimensions, indexed by all
    induction variables in the same way) or only through disjoint static
    subviews: a fill and the reduction into it, a reduction and the
    elementwise op reading its result, the two halves of a cat.
    Allocations and the function's arguments are taken as distinct buffers
    (the step's ABI: outputs do not overlap inputs); a loop writing a buffer
    of another origin (a global, a call result, another block's argument,
    one made in the loop) is never fused with a loop touching one; 0-d
    accesses never fuse.
    The step's peak is kept: the live bytes while the two run as one (the
    first's, plus buffers allocated up to the second and outputs it writes
    first, counted from their first use as the caller counts them) must not
    exceed the largest live bytes of the block before the pass; with a
    buffer of dynamic size live, only a fusion that overlaps no buffer
    ending in the first with one starting after it. The fused kernel
    carries both loops' locations (its nodes). One kernel instead of two
    per fused pair (`bench/kernels`); the same scalar ops in the same order.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect"];
}

def JointGPUHostToDevice : Pass<"joint-gpu-host-to-device", "::mlir::func::FuncOp"> {
  let summary = "Wrap compute left on the host into single-iteration parallel loops";
  let description = [{
    Runs after `convert-linalg-to-parallel-loops` (and tiling), before
    `gpu-map-parallel-loops`. Linalg ops without a parallel dimension (0-d
    results, full reductions such as the `nll_loss` scalar) become host
    `scf.for` nests and `memref.load`/`memref.store` at the top of the
    function; each maximal run of such ops (with the pure ops computing on
    their values) moves into one `scf.parallel (%i) = (0) to (1)`, which the
    upstream mapping turns into a 1x1 kernel. Pure ops of a run that do not
    depend on loaded values (constants, index arithmetic) move before it.
    A scalar computed in the run and used by a later kernel (nll_loss's
    1/total_weight) is stored into a 0-d buffer at the end of the run and
    loaded where it is used.
    Error: a value computed on the device that host code (an allocation size,
    a call, the return) uses.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def JointGPUDeviceMemory : Pass<"joint-gpu-device-memory", "::mlir::func::FuncOp"> {
  let summary = "Device allocations freed after their last use; no host compute";
  let description = [{
    Runs after `convert-parallel-loops-to-gpu`. Every top-level `memref.alloc`
    and `memref.alloca` becomes a `gpu.alloc` of the same type, and a
    `gpu.dealloc` is placed right after the last top-level op that uses the
    buffer or a view of it (a memref produced from it by any op), so the
    device peak follows the memory model of `joint-memory-report`.
    A pointer taken from a buffer (`memref.extract_aligned_pointer_as_index`,
    through integer casts) is a use of the buffer wherever it is used (a
    runtime call enqueues work on it), and a buffer whose pointer is passed
    to `joint_ao_offload` stays allocated until that transfer's first
    `joint_ao_wait` (the forward wait, torch's keepalive): the D2H copy reads
    it on the transfer stream until then.
    A top-level `memref.copy` between identity-layout buffers becomes a
    `gpu.memcpy` (device to device). Errors: compute still on the host (a
    top-level `memref.load`/`memref.store`, loop or linalg op), an allocation
    inside a loop or a kernel body, a buffer returned by the function.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def JointGPUStreamOrder : Pass<"joint-gpu-stream-order", "::mlir::func::FuncOp"> {
  let summary = "Chain the step's device ops on one stream with async tokens";
  let description = [{
    Runs after `gpu-kernel-outlining`. Every top-level `gpu.launch_func`,
    `gpu.alloc`, `gpu.dealloc`, `gpu.memcpy` and `gpu.memset` becomes async,
    depending on the token of the previous one, starting from one
    `gpu.wait async` (the runtime's compute stream). Unlike upstream's
    `gpu-async-region` no `gpu.wait` is added before calls or the return: the
    runtime's library shims and `ao` transfers are ordered on the same compute
    stream, and the caller synchronises (`joint_runtime_synchronize` or its own
    stream), so the step never blocks the host (docs/lowering.md, "CUDA").
    Error: one of those ops nested in a region of the function.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def JointGPUEmulateKernels
    : Pass<"joint-gpu-emulate-kernels", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Kernels as host LLVM functions for the emulated device";
  let description = [{
    The `emulate` variant of `joint-lower-to-cuda` runs it on every
    `gpu.module` instead of `convert-gpu-to-nvvm` (after `convert-scf-to-cf`,
    `expand-strided-metadata` and `lower-affine`). Every kernel
    `gpu.func @k(args)` becomes `llvm.func @k(%params: !llvm.ptr,
    %launch: !llvm.ptr)` (runtime/cuda/joint_cuda_emulator.h): the entry
    block loads argument i of the launch's expanded argument list (a memref
    is its descriptor's fields, in `gpu-to-llvm`'s order) from `*params[i]`;
    `gpu.thread_id`, `gpu.block_id`, `gpu.block_dim` and `gpu.grid_dim` load
    the uint32 fields of the `JointEmuLaunch` at `%launch`; the body is
    lowered with the host's LLVM patterns (arith, math, the rest of math
    through libm as on the CPU, memref, func, cf, index, ub). The function keeps `gpu.kernel` and gets `joint.emu_param_kinds`:
    one character per expanded argument, a memref's two pointers `r` when
    the kernel only loads from it (through views), `w` when it only stores
    into it, `p` otherwise, a scalar its size in bytes.
    `joint-gpu-emulate-launches` then builds the kernel table.
    Errors (the emulator runs a block's threads one after another on one
    host thread, so no thread can wait for another): a kernel with
    `gpu.barrier`, workgroup or private attributions, a memref in workgroup
    memory, or any other `gpu` op.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def JointGPUEmulateLaunches
    : Pass<"joint-gpu-emulate-launches", "::mlir::ModuleOp"> {
  let summary = "Kernel tables and launches for the emulated device";
  let description = [{
    Runs on the host module in the LLVM dialect, after `gpu-to-llvm` and
    `joint-gpu-emulate-kernels`. The kernel functions of every `gpu.module`
    move into the host module as private `@__joint_emu_<module>_<kernel>`,
    and the module becomes constant globals: its kernels' names and
    `joint.emu_param_kinds` as strings, a `JointEmuKernel` array
    `{name, fn, param_kinds, flags = 0}` and a `JointEmuModuleImage`
    `{0x554D454A, 1, n, kernels}` (runtime/cuda/joint_cuda_emulator.h),
    loaded by a global constructor with `mgpuModuleLoad(&image, size)` into a
    module global and unloaded by a global destructor, where
    `#gpu.select_object` would load a cubin. Every `gpu.launch_func` (on LLVM
    operands, its stream as async object) becomes
    `mgpuModuleGetFunction(module, name)` and `mgpuLaunchKernel(f, grid,
    block, smem, stream, params, null, n)`, `params` an array on the stack of
    pointers to a stack copy of the arguments. Errors: a launch with a
    cluster size or without a stream, a kernel not lowered by
    `joint-gpu-emulate-kernels`.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // JOINT_CONVERSION_LOWERTOCUDA_PASSES_TD

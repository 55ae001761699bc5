//===- Passes.td - Target-independent lowering passes ----*- tablegen -*-===//
//
// Passes that both lowering pipelines (CPU and CUDA) run: transposes folded
// into their readers (linalg on tensors), frees at last use and the check
// that the stack stays bounded (buffers).
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_TRANSFORMS_PASSES_TD
#define JOINT_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def JointFoldTransposes : Pass<"joint-fold-transposes", "::mlir::func::FuncOp"> {
  let summary = "Read transposes through indexing maps, or write them from their producer, instead of copies";
  let description = [{
    In torch `t`, `transpose` and `permute` are views; `convert-joint-to-linalg`
    lowers them to `linalg.transpose`, which bufferizes to a copy: a weight
    transposed in the forward and read again in the backward then holds a
    second buffer of its size across the step, memory the model does not
    count. On linalg on tensors this pass (1) folds a transpose feeding a
    `linalg.generic`, `linalg.matmul` or `linalg.batch_matmul` into that
    op's indexing map (matmuls only into the transposed operand maps they
    accept; `joint-gpu-library-calls` passes them to cuBLAS as transpose
    flags), (2) turns `transpose(matmul(A, B))`, with the transpose the
    matmul's only use and its init a fill, into a matmul of B and A with
    swapped maps into the transpose's init, (3) composes transposes of
    transposes, and (4) has a `linalg.generic` whose only use is a
    transpose (its init empty, or a fill of one) write its result
    transposed, its output map permuted. Both pipelines run it right after
    `convert-joint-to-linalg`.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def JointFuseElementwise : Pass<"joint-fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Fuse elementwise producers into their users";
  let description = [{
    Upstream's elementwise producer-consumer fusion on linalg on tensors. An
    all-parallel producer is fused into each of its (at most 4) users, a
    clone per user, when every user reads it through a permutation (or
    broadcasts a producer of at most 8 scalar ops), its last user is at most
    8 ops after it (a value the memory model counts is never dropped for
    long, so a forward producer never moves into the backward), and either
    its only user is the next op, or the inputs it would keep alive longer
    take at most the bytes of its result, which is never materialised. The
    fused ops run the same scalar ops in the same order (bitwise the same
    results). The CUDA pipeline runs it after `joint-fold-transposes`
    (`bench/kernels`).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def JointFreeAtLastUse : Pass<"joint-free-at-last-use", "::mlir::func::FuncOp"> {
  let summary = "Move each buffer's free to right after its last use";
  let description = [{
    Upstream's ownership-based deallocation frees a buffer at the end of the
    block that allocated it, so a step holds every temporary until it
    returns. This pass moves each `memref.dealloc` of a `memref.alloc` of
    the same block to right after the last op of that block that uses the
    buffer or any alias of it (views, casts, region results, pointers taken
    with `memref.extract_aligned_pointer_as_index`, asynchronous readers
    marked `joint.reads_until_result_use`), so buffers live as long as the
    memory model assumes (docs/cost-model.md, "Memory model"). A buffer
    that escapes its block (returned, yielded and used outside) keeps its
    free where it was. Runs after `buffer-deallocation-pipeline` and
    `convert-bufferization-to-memref`. Uses `findLastUseInBlock`
    (include/joint/Transforms/BufferLiveness.h), which
    `joint-gpu-device-memory` uses too.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def JointCheckBoundedStack
    : Pass<"joint-check-bounded-stack", "::mlir::ModuleOp"> {
  let summary = "Refuse stack allocations that grow with loop iterations";
  let description = [{
    A `memref.alloca` inside a loop (`LoopLikeOpInterface`) and not inside a
    `memref.alloca_scope` within that loop takes more stack on every
    iteration until the function returns; a step with enough iterations
    overflows the caller's stack. This pass reports the first such alloca
    (its location and the loop) and fails. The CPU pipeline runs it after
    `convert-vector-to-scf{full-unroll}`, which leaves no per-tile scratch
    buffers, so a failure is a bug of the pipeline, not of the graph.
  }];
}

#endif // JOINT_TRANSFORMS_PASSES_TD

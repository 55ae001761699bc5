//===- Passes.td - Conversions out of the joint dialect ----*- tablegen -*-===//
//
// Lowerings of joint graphs to upstream dialects: joint/ao to linalg, tensor,
// arith and math on tensors (the target-independent first half of the CPU and
// GPU compile paths).
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_CONVERSION_PASSES_TD
#define JOINT_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def JointFunctionalize : Pass<"joint-functionalize", "::mlir::ModuleOp"> {
  let summary = "Make every in-place write a value before the lowering";
  let description = [{
    torch's functionalization on joint graphs (torch-mlir's
    MaximizeValueSemantics is the model), so that convert-joint-to-linalg
    sees value semantics only. Every read after an in-place write (`add_`,
    `copy_`, `fill_`, a write through a view, batch norm's running
    statistics, rrelu's noise) reads the new value: a write into a view is
    scattered back into a new base (`slice_scatter`, `select_scatter`, the
    inverse view) from which later views are taken again. Each written graph
    argument's final value becomes an extra result (role `output`,
    `joint.updates = <argument index>`, the argument's `joint.fqn` or
    `joint.path`). RNG ops get their draw indices (`joint.rng_draw`; a remat
    clone shares its original's) and the graph its draw count
    (`joint.rng_draws`). Marks the graph `joint.functionalized`; running it
    again changes nothing. A write that cannot be expressed as a value (through
    an expand or as_strided view, ...) is one error naming the writer and the
    view. docs/lowering.md, "What the driver does".
  }];
}

def ConvertJointToLinalg : Pass<"convert-joint-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower joint graphs to linalg, tensor, arith and math on tensors";
  let description = [{
    Converts every `joint.graph @g` into `func.func @g` with the same argument
    and result types and attributes (`joint.role`, `joint.fqn`, ...),
    `joint.output` into `func.return`, every `joint.call_function` and `ao` op into
    value-semantics ops of the linalg, tensor, arith, math and bufferization
    dialects, and erases the `joint.schema` table.

    Graphs are functionalized first (joint-functionalize, unless it already
    ran): in-place writes into a graph argument (`add_`, `copy_` into a
    buffer) are kept, the argument's final value becoming an extra result
    carrying the argument's role and `joint.updates = <argument index>`
    (docs/lowering.md).
    RNG ops (torch tag `nondeterministic_seeded`) become Philox 4x32-10 draws
    from a last `rng_state` argument (seed, offset); a remat clone replays its
    original's draw (docs/lowering.md, "Random ops"). Any op without
    a lowering fails the pass with one error naming its target and node:
    `no lowering for 'aten::foo.default' (node 'foo')`; nothing is written.
  }];
  let options = [
    Option<"keepAo", "keep-ao", "bool", /*default=*/"false",
           "Leave ao ops for a target's own lowering (the CUDA pipeline's "
           "joint-gpu-offload); off: host copies (the CPU target)">,
    Option<"sdpaRowBlock", "sdpa-row-block", "int64_t", /*default=*/"0",
           "Attention in loops over batch, key/value head and blocks of up "
           "to this many query rows (a divisor of the length), so the "
           "logits, probabilities and their gradients exist for one block "
           "at a time (the CPU target: 64); 0: whole tensors">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // JOINT_CONVERSION_PASSES_TD

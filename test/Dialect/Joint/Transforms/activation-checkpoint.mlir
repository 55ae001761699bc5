// joint-activation-checkpoint (tag + remat) on the handed cases that need
// both passes.
// RUN: joint-opt %s -verify-diagnostics -split-input-file -joint-activation-checkpoint="mode=full" | FileCheck %s
// RUN: joint-opt %s -split-input-file -joint-activation-checkpoint="mode=off" | FileCheck %s --check-prefix=OFF

// OFF-NOT: #joint.policy
// OFF-NOT: recomputed_from

// One block traversed twice (same module paths). Units are traversals,
// so the value passed between them is saved, and each clone goes right
// before its own earliest backward consumer (keyed by forward op, not by
// module path): only one traversal's recompute chain is live at a time.
#ln = [#joint.module<"layers.0", "Block">, #joint.module<"layers.0.ln", "Norm">]
#mlp = [#joint.module<"layers.0", "Block">, #joint.module<"layers.0.mlp", "MLP">]
// CHECK-LABEL: joint.graph @shared_block_traversed_twice
// CHECK: %b1 = joint.call_function {{.*}}name = "b1", policy = #joint.policy<must_save>}
// CHECK: %g2 = joint.call_function "aten::neg.default"(%loss)
// CHECK-NEXT: %a2_recomputed = joint.call_function "aten::exp.default"(%b1) {{.*}}recomputed_from = "a2"}
// CHECK-NEXT: %g3 = joint.call_function "aten::mul.Tensor"(%g2, %a2_recomputed)
// CHECK-NEXT: %a1_recomputed = joint.call_function "aten::exp.default"(%x) {{.*}}recomputed_from = "a1"}
// CHECK-NEXT: %g1 = joint.call_function "aten::mul.Tensor"(%g3, %a1_recomputed)
// expected-remark @+2 {{joint-tag-recompute-policy: mode=full, 1 of 1 blocks selected; must_save 2, must_recompute 2, prefer_recompute 0}}
// expected-remark @+1 {{joint-remat: 2 ops recomputed, 2 originals erased, 0 reload chains moved}}
joint.graph @shared_block_traversed_twice(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () attributes {joint.model = {block_containers = [{blocks = ["layers.0"]}]}} {
  %a1 = joint.call_function "aten::exp.default"(%x) {name = "a1", module_stack = #ln} : (tensor<4xf32>) -> tensor<4xf32>
  %b1 = joint.call_function "aten::neg.default"(%x) {name = "b1", module_stack = #mlp} : (tensor<4xf32>) -> tensor<4xf32>
  %a2 = joint.call_function "aten::exp.default"(%b1) {name = "a2", module_stack = #ln} : (tensor<4xf32>) -> tensor<4xf32>
  %b2 = joint.call_function "aten::neg.default"(%b1) {name = "b2", module_stack = #mlp} : (tensor<4xf32>) -> tensor<4xf32>
  %loss = joint.call_function "aten::sum.default"(%b2) {name = "loss"} : (tensor<4xf32>) -> tensor<f32>
  %g2 = joint.call_function "aten::neg.default"(%loss) {name = "g2", phase = #joint.phase<backward>} : (tensor<f32>) -> tensor<f32>
  %g3 = joint.call_function "aten::mul.Tensor"(%g2, %a2) {name = "g3", phase = #joint.phase<backward>} : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %g1 = joint.call_function "aten::mul.Tensor"(%g3, %a1) {name = "g1", phase = #joint.phase<backward>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

// A stateful buffer update inside a fully recomputed block runs exactly
// once, in forward; only pure ops are copied into the backward.
#l0 = [#joint.module<"layers.0", "Block">]
joint.schema @"aten::add_.Tensor" {schema = "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>, #joint.arg<name = "other", type = "Tensor">], returns = [#joint.arg<type = "Tensor", alias = "a", write = true>], is_mutable}
// CHECK-LABEL: joint.graph @stateful_buffer_update_runs_once
// CHECK: %one_hot = joint.call_function {{.*}}name = "one_hot", policy = #joint.policy<must_recompute>}
// CHECK: %cnt = joint.call_function {{.*}}name = "cnt", policy = #joint.policy<must_recompute>}
// CHECK: %add_ = joint.call_function "aten::add_.Tensor"(%layers.0.state, %cnt) {{.*}}name = "add_", policy = #joint.policy<must_save>}
// CHECK: %read_state = joint.call_function {{.*}}name = "read_state", policy = #joint.policy<must_save>}
// CHECK: %one_hot_recomputed = joint.call_function "aten::one_hot.default"(%idx)
// CHECK-NEXT: %g = joint.call_function "aten::mul.Tensor"(%one_hot_recomputed, %read_state)
// CHECK-NOT: add_
// CHECK: joint.output
// expected-remark @+2 {{joint-tag-recompute-policy: mode=full, 1 of 1 blocks selected; must_save 2, must_recompute 2, prefer_recompute 0}}
// expected-remark @+1 {{joint-remat: 1 ops recomputed, 0 originals erased, 0 reload chains moved}}
joint.graph @stateful_buffer_update_runs_once(%state: tensor<4xi64> {joint.role = #joint.role<buffer>, joint.fqn = "layers.0.state"}, %idx: tensor<8xi64> {joint.role = #joint.role<input>, joint.path = "idx"}) -> () attributes {joint.model = {block_containers = [{blocks = ["layers.0"]}]}} {
  %oh = joint.call_function "aten::one_hot.default"(%idx) {name = "one_hot", args = [#joint.operand<0>, 4], module_stack = #l0} : (tensor<8xi64>) -> tensor<8x4xi64>
  %cnt = joint.call_function "aten::sum.dim_IntList"(%oh) {name = "cnt", args = [#joint.operand<0>, [0]], module_stack = #l0} : (tensor<8x4xi64>) -> tensor<4xi64>
  %s = joint.call_function "aten::add_.Tensor"(%state, %cnt) {name = "add_", module_stack = #l0} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %r = joint.call_function "aten::neg.default"(%state) {name = "read_state", module_stack = #l0} : (tensor<4xi64>) -> tensor<4xi64>
  %g = joint.call_function "aten::mul.Tensor"(%oh, %r) {name = "g", phase = #joint.phase<backward>} : (tensor<8x4xi64>, tensor<4xi64>) -> tensor<8x4xi64>
  joint.output
}

// -----

// Scope matched but nothing was recomputed (the backward reads nothing from
// the block): a warning, as the graph may already hold eager checkpointing.
// expected-remark @+3 {{joint-tag-recompute-policy: mode=full, 1 of 1 blocks selected; must_save 0, must_recompute 1, prefer_recompute 0}}
// expected-warning @+2 {{joint-remat: 1 forward ops are tagged for recompute but the backward reads none of them; nothing was recomputed (the graph may already contain eager activation checkpointing)}}
// expected-remark @+1 {{joint-remat: 0 ops recomputed, 0 originals erased, 0 reload chains moved}}
joint.graph @scope_matched_but_nothing_recomputed_warns(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () attributes {joint.model = {block_containers = [{blocks = ["layers.0"]}]}} {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", module_stack = [#joint.module<"layers.0", "Block">]} : (tensor<4xf32>) -> tensor<4xf32>
  %g = joint.call_function "aten::neg.default"(%x) {name = "g", phase = #joint.phase<backward>} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// Batch norm in training mode writes its running statistics although
// its schema marks no write. StorageAliasAnalysis reports it as a writer
// (test/Analysis/hidden-writers.mlir), so checkpointing saves it in every
// mode and never clones it: the statistics are updated once per step. In
// eval mode it writes nothing and is recomputed like any op.
// RUN: joint-opt %s -verify-diagnostics -split-input-file -joint-activation-checkpoint="mode=full" | FileCheck %s --check-prefixes=CHECK,FULL
// RUN: joint-opt %s -verify-diagnostics -split-input-file -joint-activation-checkpoint="mode=selective" | FileCheck %s --check-prefixes=CHECK,SEL

#l0 = [#joint.module<"layers.0", "Block">]
joint.schema @"aten::native_batch_norm.default" {schema = "aten::native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)", arguments = [#joint.arg<name = "input", type = "Tensor">, #joint.arg<name = "weight", type = "Tensor?">, #joint.arg<name = "bias", type = "Tensor?">, #joint.arg<name = "running_mean", type = "Tensor?">, #joint.arg<name = "running_var", type = "Tensor?">, #joint.arg<name = "training", type = "bool">, #joint.arg<name = "momentum", type = "float">, #joint.arg<name = "eps", type = "float">], returns = [#joint.arg<type = "Tensor">, #joint.arg<type = "Tensor">, #joint.arg<type = "Tensor">]}
// CHECK-LABEL: joint.graph @training_batch_norm_is_saved
// FULL-NEXT: %h = joint.call_function "aten::mm.default"(%x, %layers.0.w) {module_stack = [#joint.module<"layers.0", "Block">], name = "h", policy = #joint.policy<must_recompute>}
// SEL-NEXT: %h = joint.call_function "aten::mm.default"(%x, %layers.0.w) {module_stack = [#joint.module<"layers.0", "Block">], name = "h", policy = #joint.policy<must_save>}
// CHECK-NEXT: %bn, %bn_0, %bn_1 = joint.call_function "aten::native_batch_norm.default"(%h, %layers.0.rm, %layers.0.rv) {args = [#joint.operand<0>, unit, unit, #joint.operand<1>, #joint.operand<2>, true, 1.000000e-01, 1.000000e-05], module_stack = [#joint.module<"layers.0", "Block">], name = "bn", policy = #joint.policy<must_save>}
// CHECK-NEXT: %y = joint.call_function "aten::relu.default"(%bn) {module_stack = [#joint.module<"layers.0", "Block">], name = "y", policy = #joint.policy<must_save>}
// CHECK-NEXT: %g = joint.call_function "aten::ones_like.default"(%y)
// CHECK-NEXT: %gy = joint.call_function "aten::threshold_backward.default"(%g, %y)
// FULL-NEXT: %h_recomputed = joint.call_function "aten::mm.default"(%x, %layers.0.w) {module_stack = [#joint.module<"layers.0", "Block">], name = "h_recomputed", phase = #joint.phase<backward>, recomputed_from = "h"}
// FULL-NEXT: %gbn, %gbn_2, %gbn_3 = joint.call_function "aten::native_batch_norm_backward.default"(%gy, %h_recomputed, %layers.0.rm, %layers.0.rv, %bn_0, %bn_1)
// SEL-NEXT: %gbn, %gbn_2, %gbn_3 = joint.call_function "aten::native_batch_norm_backward.default"(%gy, %h, %layers.0.rm, %layers.0.rv, %bn_0, %bn_1)
// CHECK-NEXT: joint.output
// expected-remark-re @+2 {{joint-tag-recompute-policy: {{(mode=full, 1 of 1 blocks selected; must_save 2, must_recompute 1, prefer_recompute 0|mode=selective, 1 of 1 blocks selected; must_save 3, must_recompute 0, prefer_recompute 0)}}}}
// expected-remark-re @+1 {{joint-remat: {{(0 ops recomputed, 0 originals erased, 0 reload chains moved|1 ops recomputed, 0 originals erased, 0 reload chains moved)}}}}
joint.graph @training_batch_norm_is_saved(%x: tensor<4x3xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.name = "x"}, %w: tensor<3x3xf32> {joint.role = #joint.role<param>, joint.fqn = "layers.0.w", joint.name = "w"}, %rm: tensor<3xf32> {joint.role = #joint.role<buffer>, joint.fqn = "layers.0.rm", joint.name = "rm"}, %rv: tensor<3xf32> {joint.role = #joint.role<buffer>, joint.fqn = "layers.0.rv", joint.name = "rv"}) -> () attributes {joint.model = {block_containers = [{blocks = ["layers.0"]}]}} {
  %h = joint.call_function "aten::mm.default"(%x, %w) {name = "h", module_stack = #l0} : (tensor<4x3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32>
  %bn:3 = joint.call_function "aten::native_batch_norm.default"(%h, %rm, %rv) {name = "bn", args = [#joint.operand<0>, unit, unit, #joint.operand<1>, #joint.operand<2>, true, 1.000000e-01, 1.000000e-05], module_stack = #l0} : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>)
  %y = joint.call_function "aten::relu.default"(%bn#0) {name = "y", module_stack = #l0} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %g = joint.call_function "aten::ones_like.default"(%y) {name = "g", phase = #joint.phase<backward>} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %gy = joint.call_function "aten::threshold_backward.default"(%g, %y) {name = "gy", args = [#joint.operand<0>, #joint.operand<1>, 0], phase = #joint.phase<backward>} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %gbn:3 = joint.call_function "aten::native_batch_norm_backward.default"(%gy, %h, %rm, %rv, %bn#1, %bn#2) {name = "gbn", phase = #joint.phase<backward>} : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>)
  joint.output
}

// -----

// Eval mode (training=false): no write, so batch norm follows the mode and
// is recomputed in the backward (the original is erased).
#l0 = [#joint.module<"layers.0", "Block">]
joint.schema @"aten::native_batch_norm.default" {schema = "aten::native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)", arguments = [#joint.arg<name = "input", type = "Tensor">, #joint.arg<name = "weight", type = "Tensor?">, #joint.arg<name = "bias", type = "Tensor?">, #joint.arg<name = "running_mean", type = "Tensor?">, #joint.arg<name = "running_var", type = "Tensor?">, #joint.arg<name = "training", type = "bool">, #joint.arg<name = "momentum", type = "float">, #joint.arg<name = "eps", type = "float">], returns = [#joint.arg<type = "Tensor">, #joint.arg<type = "Tensor">, #joint.arg<type = "Tensor">]}
// CHECK-LABEL: joint.graph @eval_batch_norm_is_recomputed
// CHECK-NEXT: %bn_recomputed, %bn_recomputed_0, %bn_recomputed_1 = joint.call_function "aten::native_batch_norm.default"(%x, %layers.0.rm, %layers.0.rv) {args = [#joint.operand<0>, unit, unit, #joint.operand<1>, #joint.operand<2>, false, 1.000000e-01, 1.000000e-05], module_stack = [#joint.module<"layers.0", "Block">], name = "bn_recomputed", phase = #joint.phase<backward>, recomputed_from = "bn"}
// CHECK-NEXT: %gy = joint.call_function "aten::neg.default"(%bn_recomputed)
// expected-remark-re @+2 {{joint-tag-recompute-policy: {{(mode=full, 1 of 1 blocks selected; must_save 0, must_recompute 1, prefer_recompute 0|mode=selective, 1 of 1 blocks selected; must_save 0, must_recompute 0, prefer_recompute 1)}}}}
// expected-remark @+1 {{joint-remat: 1 ops recomputed, 1 originals erased, 0 reload chains moved}}
joint.graph @eval_batch_norm_is_recomputed(%x: tensor<4x3xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.name = "x"}, %rm: tensor<3xf32> {joint.role = #joint.role<buffer>, joint.fqn = "layers.0.rm", joint.name = "rm"}, %rv: tensor<3xf32> {joint.role = #joint.role<buffer>, joint.fqn = "layers.0.rv", joint.name = "rv"}) -> () attributes {joint.model = {block_containers = [{blocks = ["layers.0"]}]}} {
  %bn:3 = joint.call_function "aten::native_batch_norm.default"(%x, %rm, %rv) {name = "bn", args = [#joint.operand<0>, unit, unit, #joint.operand<1>, #joint.operand<2>, false, 1.000000e-01, 1.000000e-05], module_stack = #l0} : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>)
  %gy = joint.call_function "aten::neg.default"(%bn#0) {name = "gy", phase = #joint.phase<backward>} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  joint.output
}

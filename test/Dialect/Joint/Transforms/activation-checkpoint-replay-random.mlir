// replay-random: RNG ops follow the mode like any op; joint-remat clones a
// recomputed one into the backward with `recomputed_from`, by which the
// lowering (its Philox draw index) and joint_mlir.fx (torch's generator
// state) replay the original's draw. Without the option RNG results stay
// saved (tag-recompute-policy.mlir, remat-invalid.mlir).
// RUN: joint-opt %s -split-input-file -joint-activation-checkpoint="mode=full replay-random=true" | FileCheck %s
// RUN: joint-opt %s -split-input-file -joint-activation-checkpoint="mode=full" | FileCheck %s --check-prefix=SAVED

#l0 = [#joint.module<"layers.0", "Block">]
joint.schema @"aten::native_dropout.default" {schema = "aten::native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)", arguments = [#joint.arg<name = "input", type = "Tensor">, #joint.arg<name = "p", type = "float">, #joint.arg<name = "train", type = "bool?">], returns = [#joint.arg<type = "Tensor">, #joint.arg<type = "Tensor">], tags = ["nondeterministic_seeded"]}
// CHECK-LABEL: joint.graph @dropout_mask_is_recomputed
// CHECK-SAME: joint.replay_random
// CHECK-NEXT: %[[D:.+]], %{{.+}} = joint.call_function "aten::native_dropout.default"(%x) {{{.*}}name = "native_dropout", policy = #joint.policy<must_recompute>, result_names = ["d", "mask"]}
// CHECK-NEXT: %[[R:.+]] = joint.call_function "aten::relu.default"(%[[D]])
// CHECK-NEXT: joint.call_function "aten::sum.default"(%[[R]])
// CHECK-NEXT: %{{.+}}, %[[M:.+]] = joint.call_function "aten::native_dropout.default"(%x) {{{.*}}name = "native_dropout_recomputed", phase = #joint.phase<backward>, recomputed_from = "native_dropout", result_names = ["d_recomputed", "mask_recomputed"]}
// CHECK-NEXT: joint.call_function "aten::native_dropout_backward.default"(%[[R]], %[[M]])
// SAVED-LABEL: joint.graph @dropout_mask_is_recomputed
// SAVED-NOT: joint.replay_random
// SAVED-NEXT: %{{.+}}, %[[M:.+]] = joint.call_function "aten::native_dropout.default"(%x) {{{.*}}policy = #joint.policy<must_save>
// SAVED-NOT: recomputed_from
// SAVED: joint.call_function "aten::native_dropout_backward.default"(%{{.+}}, %[[M]])
joint.graph @dropout_mask_is_recomputed(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<f32> {joint.role = #joint.role<loss>}, tensor<4xf32> {joint.role = #joint.role<output>}) attributes {joint.model = {block_containers = [{blocks = ["layers.0"]}]}} {
  %d:2 = joint.call_function "aten::native_dropout.default"(%x) {name = "native_dropout", args = [#joint.operand<0>, 1.0e-01, true], module_stack = #l0, result_names = ["d", "mask"]} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  %r = joint.call_function "aten::relu.default"(%d#0) {name = "relu", module_stack = #l0} : (tensor<4xf32>) -> tensor<4xf32>
  %s = joint.call_function "aten::sum.default"(%r) {name = "loss"} : (tensor<4xf32>) -> tensor<f32>
  %g = joint.call_function "aten::native_dropout_backward.default"(%r, %d#1) {name = "native_dropout_backward", args = [#joint.operand<0>, #joint.operand<1>, 1.1], phase = #joint.phase<backward>} : (tensor<4xf32>, tensor<4xi1>) -> tensor<4xf32>
  joint.output %s, %g : tensor<f32>, tensor<4xf32>
}

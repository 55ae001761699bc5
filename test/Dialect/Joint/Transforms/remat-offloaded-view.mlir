// joint-remat after joint-apply-cpu-offload: a recompute clone that reads a
// forward view of an offloaded storage reads that view replayed on the
// reload (the forward wait freed the forward view's storage), not the
// forward view itself.
// RUN: joint-opt %s -joint-apply-cpu-offload -joint-remat 2>/dev/null | FileCheck %s

// CHECK-LABEL: joint.graph @clone_reads_view_replayed_on_reload
// CHECK: %[[W:.*]] = ao.wait_tensor %{{.*}} keepalive %mm
// CHECK: %[[R:.*]] = ao.reload %[[W]] to "cuda:0"
// CHECK-NEXT: %[[RW:.*]] = ao.wait_tensor %[[R]] keepalive %[[W]]
// CHECK-NEXT: %[[V:.*]] = joint.call_function "aten::view.default"(%[[RW]]) {{{.*}}name = "v_reload", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[16], strides = [1], offset = 0, device = "cuda:0", storage = 6>]}
// CHECK-NEXT: %[[S:.*]] = joint.call_function "aten::silu.default"(%[[V]]) {{{.*}}name = "s_recomputed", phase = #joint.phase<backward>, recomputed_from = "s"
// CHECK-NEXT: joint.call_function "aten::mul.Tensor"(%[[S]], %[[S]])
joint.graph @clone_reads_view_replayed_on_reload(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %mm = joint.call_function "aten::mm.default"(%x, %x) {name = "mm", policy = #joint.policy<must_cpu_offload>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %v = joint.call_function "aten::view.default"(%mm) {name = "v", args = [#joint.operand<0>, [16]], policy = #joint.policy<must_save>, result_meta = [#joint.tensor<[16], strides = [1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<16xf32>
  %s = joint.call_function "aten::silu.default"(%v) {name = "s", policy = #joint.policy<prefer_recompute>, result_meta = [#joint.tensor<[16], strides = [1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<16xf32>) -> tensor<16xf32>
  %n = joint.call_function "aten::neg.default"(%s) {name = "n", result_meta = [#joint.tensor<[16], strides = [1], offset = 0, device = "cuda:0", storage = 3>]} : (tensor<16xf32>) -> tensor<16xf32>
  %g = joint.call_function "aten::mul.Tensor"(%s, %s) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[16], strides = [1], offset = 0, device = "cuda:0", storage = 4>]} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %h = joint.call_function "aten::mul.Tensor"(%mm, %mm) {name = "h", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 5>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

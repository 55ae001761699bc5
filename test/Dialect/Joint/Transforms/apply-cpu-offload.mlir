// joint-apply-cpu-offload applies hand-written decisions: policy =
// must_cpu_offload on the op whose result is saved (a view or not), and the
// per-op distances joint.defer / joint.prefetch (regions).
// RUN: joint-opt %s -split-input-file -verify-diagnostics -joint-apply-cpu-offload | FileCheck %s

// Two tagged offset views of one base: the base storage is offloaded once,
// whole, and both views are replayed on the reloaded base; the backward
// reads the replays.
// CHECK-LABEL: joint.graph @tagged_views_offload_their_base_once
// CHECK: %[[B:.*]] = joint.call_function "aten::mm.default"
// CHECK-NEXT: %[[H:.*]] = ao.offload %[[B]] : tensor<4x8xf32>
// CHECK-NOT: ao.offload
// CHECK: %[[W:.*]] = ao.wait_tensor %[[H]] keepalive %[[B]] : tensor<4x8xf32> last_use %k : tensor<4x4xf32> : tensor<4x8xf32>
// CHECK-NEXT: %[[R:.*]] = ao.reload %[[W]] to "cuda:0" {joint.storage = 10 : i64} : tensor<4x8xf32>
// CHECK-NEXT: %[[RW:.*]] = ao.wait_tensor %[[R]] keepalive %[[W]]
// CHECK-NEXT: %[[Q:.*]] = joint.call_function "aten::slice.Tensor"(%[[RW]]) {{{.*}}name = "q_reload", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [8, 1], offset = 0, device = "cuda:0", storage = 10>]}
// CHECK-NEXT: %[[K:.*]] = joint.call_function "aten::slice.Tensor"(%[[RW]]) {{{.*}}name = "k_reload", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [8, 1], offset = 4, device = "cuda:0", storage = 10>]}
// CHECK-NEXT: joint.call_function "aten::mul.Tensor"(%[[Q]], %[[K]])
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 1 storage(s), 128 bytes, prefetched 0 reload(s), deferred 0 wait(s)}}
joint.graph @tagged_views_offload_their_base_once(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}, %w: tensor<4x8xf32> {joint.role = #joint.role<param>, joint.fqn = "w", joint.meta = #joint.tensor<[4, 8], strides = [8, 1], offset = 0, device = "cuda:0", storage = 1>}) -> () {
  %b = joint.call_function "aten::mm.default"(%x, %w) {name = "b", result_meta = [#joint.tensor<[4, 8], strides = [8, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %q = joint.call_function "aten::slice.Tensor"(%b) {name = "q", args = [#joint.operand<0>, 1, 0, 4], policy = #joint.policy<must_cpu_offload>, result_meta = [#joint.tensor<[4, 4], strides = [8, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x8xf32>) -> tensor<4x4xf32>
  %k = joint.call_function "aten::slice.Tensor"(%b) {name = "k", args = [#joint.operand<0>, 1, 4, 8], policy = #joint.policy<must_cpu_offload>, result_meta = [#joint.tensor<[4, 4], strides = [8, 1], offset = 4, device = "cuda:0", storage = 2>]} : (tensor<4x8xf32>) -> tensor<4x4xf32>
  %g = joint.call_function "aten::mul.Tensor"(%q, %k) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 9>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// joint.defer = 1: the forward wait of a0 (last used in block l0) goes
// before the first op of the second block after it (l2), so the copy runs
// behind l1's compute; joint.prefetch = 1 moves the reload one block region
// earlier in the backward (to the start of l1's backward).
// CHECK-LABEL: joint.graph @defer_and_prefetch_per_op
// CHECK: %[[H:.*]] = ao.offload %a0
// CHECK-NEXT: %b0 = joint.call_function
// CHECK-NEXT: %a1 = joint.call_function
// CHECK-NEXT: %b1 = joint.call_function
// CHECK-NEXT: %[[W:.*]] = ao.wait_tensor %[[H]] keepalive %a0 : tensor<4x4xf32> last_use %b0
// CHECK-NEXT: %a2 = joint.call_function
// CHECK-NEXT: %g2 = joint.call_function
// CHECK-NEXT: %[[R:.*]] = ao.reload %[[W]] to "cuda:0"
// CHECK-NEXT: %g1 = joint.call_function
// CHECK-NEXT: %[[RW:.*]] = ao.wait_tensor %[[R]]
// CHECK-NEXT: %g0 = joint.call_function "aten::mul.Tensor"(%[[RW]], %g1)
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 1 storage(s), 64 bytes, prefetched 1 reload(s), deferred 1 wait(s)}}
joint.graph @defer_and_prefetch_per_op(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a0 = joint.call_function "aten::exp.default"(%x) {name = "a0", module_stack = [#joint.module<"layers.0", "Block">], policy = #joint.policy<must_cpu_offload>, joint.defer = 1 : i64, joint.prefetch = 1 : i64, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %b0 = joint.call_function "aten::neg.default"(%a0) {name = "b0", module_stack = [#joint.module<"layers.0", "Block">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %a1 = joint.call_function "aten::exp.default"(%b0) {name = "a1", module_stack = [#joint.module<"layers.1", "Block">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 3>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %b1 = joint.call_function "aten::neg.default"(%a1) {name = "b1", module_stack = [#joint.module<"layers.1", "Block">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 4>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %a2 = joint.call_function "aten::exp.default"(%b1) {name = "a2", module_stack = [#joint.module<"layers.2", "Block">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 5>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %g2 = joint.call_function "aten::neg.default"(%a2) {name = "g2", module_stack = [#joint.module<"layers.2", "Block">], phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 6>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %g1 = joint.call_function "aten::neg.default"(%g2) {name = "g1", module_stack = [#joint.module<"layers.1", "Block">], phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 7>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %g0 = joint.call_function "aten::mul.Tensor"(%a0, %g1) {name = "g0", module_stack = [#joint.module<"layers.0", "Block">], phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 8>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// A random op's results move like any other: the copy carries the bits the
// op drew and the op never runs again (only a recompute would replay RNG).
// Both storages of the tagged dropout are offloaded and reloaded for the
// backward reader; the dropout itself stays in the forward, once.
// CHECK-LABEL: joint.graph @random_op_results_are_offloaded
// CHECK: %[[D0:.*]], %[[D1:.*]] = joint.call_function "aten::native_dropout.default"
// CHECK-DAG: %[[H0:.*]] = ao.offload %[[D0]] : tensor<4x4xf32>
// CHECK-DAG: %[[H1:.*]] = ao.offload %[[D1]] : tensor<4x4xf32>
// CHECK-DAG: %[[W0:.*]] = ao.wait_tensor %[[H0]] keepalive %[[D0]]
// CHECK-DAG: %[[W1:.*]] = ao.wait_tensor %[[H1]] keepalive %[[D1]]
// CHECK-DAG: %[[R0:.*]] = ao.reload %[[W0]] to "cuda:0"
// CHECK-DAG: %[[R1:.*]] = ao.reload %[[W1]] to "cuda:0"
// CHECK-DAG: %[[RW0:.*]] = ao.wait_tensor %[[R0]] keepalive %[[W0]]
// CHECK-DAG: %[[RW1:.*]] = ao.wait_tensor %[[R1]] keepalive %[[W1]]
// CHECK: joint.call_function "aten::mul.Tensor"(%[[RW0]], %[[RW1]]) {{.*}}phase = #joint.phase<backward>
// CHECK-NOT: native_dropout
joint.schema @"aten::native_dropout.default" {schema = "aten::native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)", arguments = [#joint.arg<name = "input", type = "Tensor">, #joint.arg<name = "p", type = "float">, #joint.arg<name = "train", type = "bool?">], returns = [#joint.arg<type = "Tensor">, #joint.arg<type = "Tensor">], tags = ["nondeterministic_seeded"]}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 2 storage(s), 128 bytes, prefetched 0 reload(s), deferred 0 wait(s)}}
joint.graph @random_op_results_are_offloaded(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %d:2 = joint.call_function "aten::native_dropout.default"(%x) {name = "d", args = [#joint.operand<0>, 1.0e-01, true], policy = #joint.policy<must_cpu_offload>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>, #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
  %g = joint.call_function "aten::mul.Tensor"(%d#0, %d#1) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 9>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// joint-cpu-offload on IR that remat already rewrote (the opposite of the
// documented order tag -> offload -> remat) gives equally valid IR: a remat
// clone (`recomputed_from`, backward phase) that reads a saved value is an
// ordinary backward reader, redirected to the reload chain placed before it;
// the recompute-tagged original is not offloaded. The result verifies,
// re-parses and exports to JSON.
// RUN: joint-opt %s -joint-cpu-offload="min-bytes=64" -verify-diagnostics | FileCheck %s
// RUN: joint-opt %s -joint-cpu-offload="min-bytes=64" 2>/dev/null | joint-opt -verify-each | joint-translate --export-joint-json | FileCheck %s --check-prefix=JSON

// CHECK-LABEL: joint.graph @remat_clones_read_the_reload_chain
// CHECK: %n = joint.call_function "aten::mul.Tensor"
// CHECK-NOT: ao.offload %n
// CHECK: %[[A:.*]] = joint.call_function "aten::exp.default"(%n)
// CHECK-NEXT: %[[H:.*]] = ao.offload %[[A]]
// CHECK-NEXT: %b = joint.call_function "aten::neg.default"(%[[A]])
// CHECK-NEXT: %[[W:.*]] = ao.wait_tensor %[[H]] keepalive %[[A]] : tensor<4x4xf32> last_use %b
// CHECK: %[[N2:.*]] = joint.call_function "aten::mul.Tensor"(%x, %x) {{{.*}}recomputed_from = "n"
// CHECK-NEXT: %[[R:.*]] = ao.reload %[[W]] to "cuda:0"
// CHECK-NEXT: %[[RW:.*]] = ao.wait_tensor %[[R]]
// CHECK-NEXT: %[[B2:.*]] = joint.call_function "aten::neg.default"(%[[RW]]) {{{.*}}recomputed_from = "b"
// CHECK-NEXT: joint.call_function "aten::mul.Tensor"(%[[B2]], %[[N2]])
// CHECK-NEXT: joint.call_function "aten::mul.Tensor"(%[[RW]], %[[N2]])
// CHECK-NOT: ao.offload

// JSON: "target":"ao::offload.default"
// JSON: "target":"ao::wait_tensor.default"
// JSON: "target":"ao::reload.default"
// JSON: "target":"ao::wait_tensor.default"
// expected-remark @+2 {{selected 1 of 1 activation(s) in scope=attention, 64 bytes}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 1 storage(s), 64 bytes}}
joint.graph @remat_clones_read_the_reload_chain(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %n = joint.call_function "aten::mul.Tensor"(%x, %x) {name = "n", module_stack = [#joint.module<"l0.self_attn", "Attention">], policy = #joint.policy<prefer_recompute>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a = joint.call_function "aten::exp.default"(%n) {name = "a", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = joint.call_function "aten::neg.default"(%a) {name = "b", module_stack = [#joint.module<"l0.self_attn", "Attention">], policy = #joint.policy<prefer_recompute>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 3>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %n2 = joint.call_function "aten::mul.Tensor"(%x, %x) {name = "n_recomputed", module_stack = [#joint.module<"l0.self_attn", "Attention">], phase = #joint.phase<backward>, recomputed_from = "n", result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 4>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %b2 = joint.call_function "aten::neg.default"(%a) {name = "b_recomputed", module_stack = [#joint.module<"l0.self_attn", "Attention">], phase = #joint.phase<backward>, recomputed_from = "b", result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 5>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = joint.call_function "aten::mul.Tensor"(%b2, %n2) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 6>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %h = joint.call_function "aten::mul.Tensor"(%a, %n2) {name = "h", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 7>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

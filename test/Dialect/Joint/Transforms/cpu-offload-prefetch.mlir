// joint-cpu-offload prefetch: each ao.reload moves prefetch-regions attention
// regions earlier in the backward, to the first op of that region; its wait
// stays right before the first backward reader. Regions are found by
// position: a run of backward ops in one self_attn module, closed by an op of
// a module outside attention; unlabeled ops (root module only) are
// transparent. Every reload reads the forward wait of its own offload,
// with prefetch off or on, and never moves above it.
// RUN: joint-opt %s -split-input-file -joint-cpu-offload="min-bytes=64" 2>/dev/null | FileCheck %s --check-prefix=P0
// RUN: joint-opt %s -split-input-file -joint-cpu-offload="min-bytes=64 prefetch-regions=1" 2>/dev/null | FileCheck %s --check-prefix=P1
// RUN: joint-opt %s -split-input-file -joint-cpu-offload="min-bytes=64 prefetch-regions=5" 2>/dev/null | FileCheck %s --check-prefix=P5
// The one-line remarks (prefetched counts), checked on their own:
// RUN: joint-opt %s -split-input-file -joint-cpu-offload="min-bytes=64" -o /dev/null 2>&1 | FileCheck %s --check-prefix=P0R
// RUN: joint-opt %s -split-input-file -joint-cpu-offload="min-bytes=64 prefetch-regions=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=P1R
// RUN: joint-opt %s -split-input-file -joint-cpu-offload="min-bytes=64 prefetch-regions=5" -o /dev/null 2>&1 | FileCheck %s --check-prefix=P5R

// Three layers; the backward visits l2, l1, l0. prefetch-regions=1 moves the
// reloads of l1 to l2's region and of l0 to l1's; the last layer's reload
// (l2, region 0) goes to the start of its own region, still after its
// forward wait.
// P0R: remark: joint-tag-cpu-offload: {{.*}}selected 3 of 3 activation(s) in scope=attention, 192 bytes
// P0R: remark: joint-apply-cpu-offload: offloaded 3 storage(s), 192 bytes, prefetched 0 reload(s)
// P1R: remark: joint-tag-cpu-offload: {{.*}}selected 3 of 3 activation(s) in scope=attention, 192 bytes
// P1R: remark: joint-apply-cpu-offload: offloaded 3 storage(s), 192 bytes, prefetched 3 reload(s)
// P5R: remark: joint-tag-cpu-offload: {{.*}}selected 3 of 3 activation(s) in scope=attention, 192 bytes
// P5R: remark: joint-apply-cpu-offload: offloaded 3 storage(s), 192 bytes, prefetched 3 reload(s)

// P0-LABEL: joint.graph @reloads_move_n_attention_regions_earlier
// P0: %[[H0:.*]] = ao.offload %a0
// P0-NEXT: %[[W0:.*]] = ao.wait_tensor %[[H0]] keepalive %a0
// P0: %[[H1:.*]] = ao.offload %a1
// P0-NEXT: %[[W1:.*]] = ao.wait_tensor %[[H1]] keepalive %a1
// P0: %[[H2:.*]] = ao.offload %a2
// P0-NEXT: %[[W2:.*]] = ao.wait_tensor %[[H2]] keepalive %a2
// P0: %o2 = joint.call_function
// P0-NEXT: %[[R2:.*]] = ao.reload %[[W2]] to "cuda:0"
// P0-NEXT: %[[RW2:.*]] = ao.wait_tensor %[[R2]]
// P0-NEXT: %c2 = joint.call_function "aten::mul.Tensor"(%[[RW2]], %o2)
// P0: %u1 = joint.call_function
// P0-NEXT: %[[R1:.*]] = ao.reload %[[W1]] to "cuda:0"
// P0-NEXT: %[[RW1:.*]] = ao.wait_tensor %[[R1]]
// P0-NEXT: %c1 = joint.call_function "aten::mul.Tensor"(%[[RW1]], %u1)
// P0: %o0 = joint.call_function
// P0-NEXT: %[[R0:.*]] = ao.reload %[[W0]] to "cuda:0"
// P0-NEXT: %[[RW0:.*]] = ao.wait_tensor %[[R0]]
// P0-NEXT: %c0 = joint.call_function "aten::mul.Tensor"(%[[RW0]], %o0)

// P1-LABEL: joint.graph @reloads_move_n_attention_regions_earlier
// P1: %[[W0:.*]] = ao.wait_tensor %{{.*}} keepalive %a0
// P1: %[[W1:.*]] = ao.wait_tensor %{{.*}} keepalive %a1
// P1: %[[W2:.*]] = ao.wait_tensor %{{.*}} keepalive %a2
// P1: %m2 = joint.call_function
// P1-NEXT: %[[R1:.*]] = ao.reload %[[W1]] to "cuda:0"
// P1-NEXT: %[[R2:.*]] = ao.reload %[[W2]] to "cuda:0"
// P1-NEXT: %o2 = joint.call_function
// P1-NEXT: %[[RW2:.*]] = ao.wait_tensor %[[R2]]
// P1-NEXT: %c2 = joint.call_function "aten::mul.Tensor"(%[[RW2]], %o2)
// P1-NEXT: %m1 = joint.call_function
// P1-NEXT: %[[R0:.*]] = ao.reload %[[W0]] to "cuda:0"
// P1-NEXT: %o1 = joint.call_function
// P1-NEXT: %u1 = joint.call_function
// P1-NEXT: %[[RW1:.*]] = ao.wait_tensor %[[R1]]
// P1-NEXT: %c1 = joint.call_function "aten::mul.Tensor"(%[[RW1]], %u1)
// P1-NEXT: %m0 = joint.call_function
// P1-NEXT: %o0 = joint.call_function
// P1-NEXT: %[[RW0:.*]] = ao.wait_tensor %[[R0]]
// P1-NEXT: %c0 = joint.call_function "aten::mul.Tensor"(%[[RW0]], %o0)

// P5-LABEL: joint.graph @reloads_move_n_attention_regions_earlier
// P5: %m2 = joint.call_function
// P5-NEXT: ao.reload
// P5-NEXT: ao.reload
// P5-NEXT: ao.reload
// P5-NEXT: %o2 = joint.call_function
joint.graph @reloads_move_n_attention_regions_earlier(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a0 = joint.call_function "aten::exp.default"(%x) {name = "a0", module_stack = [#joint.module<"l0.self_attn", "A">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %a1 = joint.call_function "aten::exp.default"(%x) {name = "a1", module_stack = [#joint.module<"l1.self_attn", "A">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %a2 = joint.call_function "aten::exp.default"(%x) {name = "a2", module_stack = [#joint.module<"l2.self_attn", "A">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 3>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %m2 = joint.call_function "aten::mul.Tensor"(%x, %x) {name = "m2", phase = #joint.phase<backward>, module_stack = [#joint.module<"", "M">, #joint.module<"l2.mlp", "MLP">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 4>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %o2 = joint.call_function "aten::mul.Tensor"(%m2, %x) {name = "o2", phase = #joint.phase<backward>, module_stack = [#joint.module<"", "M">, #joint.module<"l2.self_attn", "A">, #joint.module<"l2.self_attn.o_proj", "L">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 5>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %c2 = joint.call_function "aten::mul.Tensor"(%a2, %o2) {name = "c2", phase = #joint.phase<backward>, module_stack = [#joint.module<"", "M">, #joint.module<"l2.self_attn", "A">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 6>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %m1 = joint.call_function "aten::mul.Tensor"(%c2, %x) {name = "m1", phase = #joint.phase<backward>, module_stack = [#joint.module<"", "M">, #joint.module<"l1.mlp", "MLP">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 7>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %o1 = joint.call_function "aten::mul.Tensor"(%m1, %x) {name = "o1", phase = #joint.phase<backward>, module_stack = [#joint.module<"", "M">, #joint.module<"l1.self_attn", "A">, #joint.module<"l1.self_attn.o_proj", "L">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 8>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %u1 = joint.call_function "aten::mul.Tensor"(%o1, %x) {name = "u1", phase = #joint.phase<backward>, module_stack = [#joint.module<"", "M">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 9>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %c1 = joint.call_function "aten::mul.Tensor"(%a1, %u1) {name = "c1", phase = #joint.phase<backward>, module_stack = [#joint.module<"", "M">, #joint.module<"l1.self_attn", "A">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 10>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %m0 = joint.call_function "aten::mul.Tensor"(%c1, %x) {name = "m0", phase = #joint.phase<backward>, module_stack = [#joint.module<"", "M">, #joint.module<"l0.mlp", "MLP">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 11>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %o0 = joint.call_function "aten::mul.Tensor"(%m0, %x) {name = "o0", phase = #joint.phase<backward>, module_stack = [#joint.module<"", "M">, #joint.module<"l0.self_attn", "A">, #joint.module<"l0.self_attn.o_proj", "L">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 12>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %c0 = joint.call_function "aten::mul.Tensor"(%a0, %o0) {name = "c0", phase = #joint.phase<backward>, module_stack = [#joint.module<"", "M">, #joint.module<"l0.self_attn", "A">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 13>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// One self_attn module reused by three blocks (same FQN): each reload maps
// to its own region by position, not to the first region of that name, and
// the blocks' MLP ops between the uses close each region. With
// prefetch-regions=1 the first block's reload (s0) moves to the second
// block's region (d1), the second's (s1) to the third's (d2), and the
// third's (s2) to the start of its own region (d2).
// P0R: remark: joint-tag-cpu-offload: {{.*}}selected 3 of 3 activation(s) in scope=attention, 192 bytes
// P0R: remark: joint-apply-cpu-offload: offloaded 3 storage(s), 192 bytes, prefetched 0 reload(s)
// P1R: remark: joint-tag-cpu-offload: {{.*}}selected 3 of 3 activation(s) in scope=attention, 192 bytes
// P1R: remark: joint-apply-cpu-offload: offloaded 3 storage(s), 192 bytes, prefetched 3 reload(s)
// P1-LABEL: joint.graph @reused_module_maps_each_reload_to_its_own_region
// P1: %[[W0:.*]] = ao.wait_tensor %{{.*}} keepalive %s0
// P1: %[[W1:.*]] = ao.wait_tensor %{{.*}} keepalive %s1
// P1: %[[W2:.*]] = ao.wait_tensor %{{.*}} keepalive %s2
// P1: %n2 = joint.call_function
// P1-NEXT: %[[R1:.*]] = ao.reload %[[W1]]
// P1-NEXT: %[[R2:.*]] = ao.reload %[[W2]]
// P1-NEXT: %d2 = joint.call_function
// P1-NEXT: ao.wait_tensor %[[R2]]
// P1-NEXT: %c2 = joint.call_function
// P1-NEXT: %n1 = joint.call_function
// P1-NEXT: %[[R0:.*]] = ao.reload %[[W0]]
// P1-NEXT: %d1 = joint.call_function
// P1-NEXT: ao.wait_tensor %[[R1]]
// P1-NEXT: %c1 = joint.call_function
// P1-NEXT: %n0 = joint.call_function
// P1-NEXT: %d0 = joint.call_function
// P1-NEXT: ao.wait_tensor %[[R0]]
// P1-NEXT: %c0 = joint.call_function
joint.graph @reused_module_maps_each_reload_to_its_own_region(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %s0 = joint.call_function "aten::exp.default"(%x) {name = "s0", module_stack = [#joint.module<"shared.self_attn", "A">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %f0 = joint.call_function "aten::neg.default"(%x) {name = "f0", module_stack = [#joint.module<"b0.mlp", "MLP">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %s1 = joint.call_function "aten::exp.default"(%f0) {name = "s1", module_stack = [#joint.module<"shared.self_attn", "A">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 3>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %f1 = joint.call_function "aten::neg.default"(%x) {name = "f1", module_stack = [#joint.module<"b1.mlp", "MLP">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 10>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %s2 = joint.call_function "aten::exp.default"(%f1) {name = "s2", module_stack = [#joint.module<"shared.self_attn", "A">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 11>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %n2 = joint.call_function "aten::mul.Tensor"(%x, %x) {name = "n2", phase = #joint.phase<backward>, module_stack = [#joint.module<"b2.mlp", "MLP">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 12>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %d2 = joint.call_function "aten::mul.Tensor"(%n2, %x) {name = "d2", phase = #joint.phase<backward>, module_stack = [#joint.module<"shared.self_attn", "A">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 13>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %c2 = joint.call_function "aten::mul.Tensor"(%s2, %d2) {name = "c2", phase = #joint.phase<backward>, module_stack = [#joint.module<"shared.self_attn", "A">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 14>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %n1 = joint.call_function "aten::mul.Tensor"(%c2, %x) {name = "n1", phase = #joint.phase<backward>, module_stack = [#joint.module<"b1.mlp", "MLP">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 4>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %d1 = joint.call_function "aten::mul.Tensor"(%n1, %x) {name = "d1", phase = #joint.phase<backward>, module_stack = [#joint.module<"shared.self_attn", "A">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 5>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %c1 = joint.call_function "aten::mul.Tensor"(%s1, %d1) {name = "c1", phase = #joint.phase<backward>, module_stack = [#joint.module<"shared.self_attn", "A">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 6>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %n0 = joint.call_function "aten::mul.Tensor"(%c1, %x) {name = "n0", phase = #joint.phase<backward>, module_stack = [#joint.module<"b0.mlp", "MLP">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 7>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %d0 = joint.call_function "aten::mul.Tensor"(%n0, %x) {name = "d0", phase = #joint.phase<backward>, module_stack = [#joint.module<"shared.self_attn", "A">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 8>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %c0 = joint.call_function "aten::mul.Tensor"(%s0, %d0) {name = "c0", phase = #joint.phase<backward>, module_stack = [#joint.module<"shared.self_attn", "A">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 9>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// The target region (l1's) starts before a0's forward wait (its last forward
// reader f runs after the backward began): the reload stays in its own
// region instead of moving above the wait.
// P1R: remark: joint-tag-cpu-offload: {{.*}}selected 1 of 1 activation(s) in scope=attention, 64 bytes
// P1R: remark: joint-apply-cpu-offload: offloaded 1 storage(s), 64 bytes, prefetched 1 reload(s)
// P1-LABEL: joint.graph @reload_never_moves_above_its_forward_wait
// P1: %f = joint.call_function "aten::neg.default"(%a0)
// P1-NEXT: %[[W0:.*]] = ao.wait_tensor %{{.*}} keepalive %a0 : tensor<4x4xf32> last_use %f
// P1-NEXT: %[[R0:.*]] = ao.reload %[[W0]]
// P1-NEXT: %o0 = joint.call_function
// P1-NEXT: ao.wait_tensor %[[R0]]
// P1-NEXT: %c0 = joint.call_function
joint.graph @reload_never_moves_above_its_forward_wait(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a0 = joint.call_function "aten::exp.default"(%x) {name = "a0", module_stack = [#joint.module<"l0.self_attn", "A">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %c1 = joint.call_function "aten::mul.Tensor"(%x, %x) {name = "c1", phase = #joint.phase<backward>, module_stack = [#joint.module<"l1.self_attn", "A">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %f = joint.call_function "aten::neg.default"(%a0) {name = "f", result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 3>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %o0 = joint.call_function "aten::mul.Tensor"(%c1, %f) {name = "o0", phase = #joint.phase<backward>, module_stack = [#joint.module<"l0.self_attn", "A">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 4>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %c0 = joint.call_function "aten::mul.Tensor"(%a0, %o0) {name = "c0", phase = #joint.phase<backward>, module_stack = [#joint.module<"l0.self_attn", "A">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 5>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

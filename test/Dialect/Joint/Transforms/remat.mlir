// joint-remat on hand-tagged graphs, and joint-activation-checkpoint for
// the cases that need both.
// RUN: joint-opt %s -verify-diagnostics -split-input-file -joint-remat | FileCheck %s
// A second run adds nothing: clones carry no policy.
// RUN: joint-opt %s -verify-diagnostics=only-expected -split-input-file -joint-remat -joint-remat | FileCheck %s

#l0 = [#joint.module<"layers.0", "Block">]
// Tagged ops the backward reads (directly or through tagged ops) are cloned
// right before the earliest backward consumer, in forward order, reading
// earlier clones; backward consumers are redirected. `a` and `v` stay (the
// saved `s` reads them), `d` has no forward reader left and is erased. A
// clone of an allocating op gets a fresh storage id, its views follow it.
// CHECK-LABEL: joint.graph @clone_before_earliest_backward_consumer
// CHECK-NEXT: %a = joint.call_function "aten::exp.default"(%x) {module_stack = [#joint.module<"layers.0", "Block">], name = "a", policy = #joint.policy<must_recompute>, result_meta = [#joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 1>], seq_nr = 1 : i64}
// CHECK-NEXT: %v = joint.call_function "aten::view.default"(%a)
// CHECK-NEXT: %s = joint.call_function "aten::mm.default"(%v, %v)
// CHECK-NEXT: %g1 = joint.call_function "aten::neg.default"(%s)
// CHECK-NEXT: %a_recomputed = joint.call_function "aten::exp.default"(%x) {module_stack = [#joint.module<"layers.0", "Block">], name = "a_recomputed", phase = #joint.phase<backward>, recomputed_from = "a", result_meta = [#joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 4>], seq_nr = 1 : i64}
// CHECK-NEXT: %v_recomputed = joint.call_function "aten::view.default"(%a_recomputed) {args = [#joint.operand<0>, [2, 2]], module_stack = [#joint.module<"layers.0", "Block">], name = "v_recomputed", phase = #joint.phase<backward>, recomputed_from = "v", result_meta = [#joint.tensor<[2, 2], strides = [2, 1], offset = 0, device = "cpu", storage = 4>]}
// CHECK-NEXT: %g2 = joint.call_function "aten::mul.Tensor"(%g1, %v_recomputed)
// CHECK-NEXT: %d_recomputed = joint.call_function "aten::sin.default"(%x) {module_stack = [#joint.module<"layers.0", "Block">], name = "d_recomputed", phase = #joint.phase<backward>, recomputed_from = "d", result_meta = [#joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 5>]}
// CHECK-NEXT: %g3 = joint.call_function "aten::mul.Tensor"(%d_recomputed, %a_recomputed)
// CHECK-NEXT: joint.output
// expected-remark @+1 {{joint-remat: 3 ops recomputed, 1 originals erased, 0 reload chains moved}}
joint.graph @clone_before_earliest_backward_consumer(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 0>}) -> () {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", module_stack = #l0, policy = #joint.policy<must_recompute>, seq_nr = 1 : i64, result_meta = [#joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 1>]} : (tensor<4xf32>) -> tensor<4xf32>
  %v = joint.call_function "aten::view.default"(%a) {name = "v", args = [#joint.operand<0>, [2, 2]], module_stack = #l0, policy = #joint.policy<prefer_recompute>, result_meta = [#joint.tensor<[2, 2], strides = [2, 1], offset = 0, device = "cpu", storage = 1>]} : (tensor<4xf32>) -> tensor<2x2xf32>
  %s = joint.call_function "aten::mm.default"(%v, %v) {name = "s", module_stack = #l0, policy = #joint.policy<must_save>, result_meta = [#joint.tensor<[2, 2], strides = [2, 1], offset = 0, device = "cpu", storage = 2>]} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %d = joint.call_function "aten::sin.default"(%x) {name = "d", module_stack = #l0, policy = #joint.policy<prefer_recompute>, result_meta = [#joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 3>]} : (tensor<4xf32>) -> tensor<4xf32>
  %g1 = joint.call_function "aten::neg.default"(%s) {name = "g1", phase = #joint.phase<backward>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %g2 = joint.call_function "aten::mul.Tensor"(%g1, %v) {name = "g2", phase = #joint.phase<backward>} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %g3 = joint.call_function "aten::mul.Tensor"(%d, %a) {name = "g3", phase = #joint.phase<backward>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

// Clone names are fresh FX names; multi-output results get fresh getitem
// names too.
// CHECK-LABEL: joint.graph @clone_names_are_unique
// CHECK: name = "a_recomputed_1", phase = #joint.phase<backward>, recomputed_from = "a", result_names = ["v_recomputed", "i_recomputed_1"]
// expected-remark @+1 {{joint-remat: 1 ops recomputed, 1 originals erased, 0 reload chains moved}}
joint.graph @clone_names_are_unique(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  %a:2 = joint.call_function "aten::sort.default"(%x) {name = "a", policy = #joint.policy<prefer_recompute>, result_names = ["v", "i"]} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi64>)
  %b = joint.call_function "aten::neg.default"(%x) {name = "a_recomputed"} : (tensor<4xf32>) -> tensor<4xf32>
  %c = joint.call_function "aten::neg.default"(%x) {name = "i_recomputed"} : (tensor<4xf32>) -> tensor<4xf32>
  %g = joint.call_function "aten::mul.Tensor"(%a#0, %b) {name = "g", phase = #joint.phase<backward>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

// Tagged, but the backward reads none of it: nothing to do, and a warning
// (the graph may already contain eager checkpointing).
// CHECK-LABEL: joint.graph @tagged_but_unread_by_backward_warns
// CHECK-NOT: recomputed_from
// expected-warning @+2 {{joint-remat: 1 forward ops are tagged for recompute but the backward reads none of them; nothing was recomputed (the graph may already contain eager activation checkpointing)}}
// expected-remark @+1 {{joint-remat: 0 ops recomputed, 0 originals erased, 0 reload chains moved}}
joint.graph @tagged_but_unread_by_backward_warns(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", policy = #joint.policy<prefer_recompute>} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output %a : tensor<4xf32>
}

// -----

// Composition with joint-cpu-offload (tag -> offload -> remat): a clone
// reading an offloaded forward value reads the wait of its reload; the
// reload chain is moved before the clone when it came later ...
// CHECK-LABEL: joint.graph @clone_reads_reload_moved_before_it
// CHECK: %g1 = joint.call_function "aten::neg.default"(%s)
// CHECK-NEXT: %[[R:.*]] = ao.reload %{{.*}} to "cuda:0"
// CHECK-NEXT: %[[RW:.*]] = ao.wait_tensor %[[R]] :
// CHECK-NEXT: %b_recomputed = joint.call_function "aten::neg.default"(%[[RW]])
// CHECK-NEXT: %g2 = joint.call_function "aten::mul.Tensor"(%g1, %b_recomputed)
// CHECK-NEXT: %g3 = joint.call_function "aten::mul.Tensor"(%g2, %[[RW]])
// expected-remark @+1 {{joint-remat: 1 ops recomputed, 0 originals erased, 1 reload chains moved}}
joint.graph @clone_reads_reload_moved_before_it(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", policy = #joint.policy<must_save>} : (tensor<4xf32>) -> tensor<4xf32>
  %h = ao.offload %a : tensor<4xf32>
  %b = joint.call_function "aten::neg.default"(%a) {name = "b", policy = #joint.policy<must_recompute>} : (tensor<4xf32>) -> tensor<4xf32>
  %w = ao.wait_tensor %h keepalive %a : tensor<4xf32> last_use %b : tensor<4xf32> : tensor<4xf32>
  %s = joint.call_function "aten::mul.Tensor"(%b, %b) {name = "s", policy = #joint.policy<must_save>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %g1 = joint.call_function "aten::neg.default"(%s) {name = "g1", phase = #joint.phase<backward>} : (tensor<4xf32>) -> tensor<4xf32>
  %g2 = joint.call_function "aten::mul.Tensor"(%g1, %b) {name = "g2", phase = #joint.phase<backward>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = ao.reload %w to "cuda:0" : tensor<4xf32>
  %rw = ao.wait_tensor %r : tensor<4xf32>
  %g3 = joint.call_function "aten::mul.Tensor"(%g2, %rw) {name = "g3", phase = #joint.phase<backward>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

// ... and stays where it is when it is already earlier.
// CHECK-LABEL: joint.graph @clone_reads_earlier_reload_in_place
// CHECK: %[[R:.*]] = ao.reload %{{.*}} to "cuda:0"
// CHECK-NEXT: %[[RW:.*]] = ao.wait_tensor %[[R]] :
// CHECK-NEXT: %g1 = joint.call_function "aten::neg.default"(%s)
// CHECK-NEXT: %b_recomputed = joint.call_function "aten::neg.default"(%[[RW]])
// CHECK-NEXT: %g2 = joint.call_function "aten::mul.Tensor"(%g1, %b_recomputed)
// expected-remark @+1 {{joint-remat: 1 ops recomputed, 0 originals erased, 0 reload chains moved}}
joint.graph @clone_reads_earlier_reload_in_place(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", policy = #joint.policy<must_save>} : (tensor<4xf32>) -> tensor<4xf32>
  %h = ao.offload %a : tensor<4xf32>
  %b = joint.call_function "aten::neg.default"(%a) {name = "b", policy = #joint.policy<must_recompute>} : (tensor<4xf32>) -> tensor<4xf32>
  %w = ao.wait_tensor %h keepalive %a : tensor<4xf32> last_use %b : tensor<4xf32> : tensor<4xf32>
  %s = joint.call_function "aten::mul.Tensor"(%b, %b) {name = "s", policy = #joint.policy<must_save>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = ao.reload %w to "cuda:0" : tensor<4xf32>
  %rw = ao.wait_tensor %r : tensor<4xf32>
  %g1 = joint.call_function "aten::neg.default"(%s) {name = "g1", phase = #joint.phase<backward>} : (tensor<4xf32>) -> tensor<4xf32>
  %g2 = joint.call_function "aten::mul.Tensor"(%g1, %b) {name = "g2", phase = #joint.phase<backward>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %g3 = joint.call_function "aten::mul.Tensor"(%g2, %rw) {name = "g3", phase = #joint.phase<backward>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

// A prefetched reload (already before the clone) whose wait comes
// later: only the wait moves before the clone, so the prefetch distance set
// by joint-cpu-offload is kept (the reload is not a moved chain).
// CHECK-LABEL: joint.graph @prefetched_reload_keeps_its_place
// CHECK: %[[R:.*]] = ao.reload %{{.*}} to "cuda:0"
// CHECK-NEXT: %g1 = joint.call_function "aten::neg.default"(%s)
// CHECK-NEXT: %[[RW:.*]] = ao.wait_tensor %[[R]] :
// CHECK-NEXT: %b_recomputed = joint.call_function "aten::neg.default"(%[[RW]])
// CHECK-NEXT: %g2 = joint.call_function "aten::mul.Tensor"(%g1, %b_recomputed)
// CHECK-NEXT: %g3 = joint.call_function "aten::mul.Tensor"(%g2, %[[RW]])
// expected-remark @+1 {{joint-remat: 1 ops recomputed, 0 originals erased, 0 reload chains moved}}
joint.graph @prefetched_reload_keeps_its_place(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", policy = #joint.policy<must_save>} : (tensor<4xf32>) -> tensor<4xf32>
  %h = ao.offload %a : tensor<4xf32>
  %b = joint.call_function "aten::neg.default"(%a) {name = "b", policy = #joint.policy<must_recompute>} : (tensor<4xf32>) -> tensor<4xf32>
  %w = ao.wait_tensor %h keepalive %a : tensor<4xf32> last_use %b : tensor<4xf32> : tensor<4xf32>
  %s = joint.call_function "aten::mul.Tensor"(%b, %b) {name = "s", policy = #joint.policy<must_save>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = ao.reload %w to "cuda:0" : tensor<4xf32>
  %g1 = joint.call_function "aten::neg.default"(%s) {name = "g1", phase = #joint.phase<backward>} : (tensor<4xf32>) -> tensor<4xf32>
  %g2 = joint.call_function "aten::mul.Tensor"(%g1, %b) {name = "g2", phase = #joint.phase<backward>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %rw = ao.wait_tensor %r : tensor<4xf32>
  %g3 = joint.call_function "aten::mul.Tensor"(%g2, %rw) {name = "g3", phase = #joint.phase<backward>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

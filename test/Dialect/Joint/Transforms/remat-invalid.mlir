// joint-remat refuses to clone what it cannot replay exactly.
// RUN: joint-opt %s -split-input-file -verify-diagnostics -joint-remat -o /dev/null

joint.schema @"aten::native_dropout.default" {schema = "aten::native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)", arguments = [#joint.arg<name = "input", type = "Tensor">, #joint.arg<name = "p", type = "float">, #joint.arg<name = "train", type = "bool?">], returns = [#joint.arg<type = "Tensor">, #joint.arg<type = "Tensor">], tags = ["nondeterministic_seeded"]}
joint.graph @recompute_tag_on_rng_op_read_by_backward(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  // expected-error @+1 {{node 'native_dropout' (aten::native_dropout.default) has a recompute policy but is a random op (nondeterministic_seeded)}}
  %d:2 = joint.call_function "aten::native_dropout.default"(%x) {name = "native_dropout", args = [#joint.operand<0>, 1.0e-01, true], policy = #joint.policy<prefer_recompute>} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  %g = joint.call_function "aten::native_dropout_backward.default"(%x, %d#1) {name = "native_dropout_backward", args = [#joint.operand<0>, #joint.operand<1>, 1.1], phase = #joint.phase<backward>} : (tensor<4xf32>, tensor<4xi1>) -> tensor<4xf32>
  joint.output
}

// -----

// An RNG op whose value the backward never reads is not cloned, so its tag
// is harmless (it must not crash the pass).
// expected-remark @+1 {{joint-remat: 0 ops recomputed}}
joint.graph @recompute_tag_on_unread_rng_op_is_ignored(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  // expected-warning @-1 {{1 forward ops are tagged for recompute but the backward reads none of them}}
  %r = joint.call_function "aten::rand_like.default"(%x) {name = "rand_like", policy = #joint.policy<prefer_recompute>} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

// A clone needs the reload of an offloaded value, but the offload's forward
// wait comes after the clone's backward consumer: no valid place exists.
joint.graph @reload_source_after_consumer(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", policy = #joint.policy<must_save>} : (tensor<4xf32>) -> tensor<4xf32>
  %h = ao.offload %a : tensor<4xf32>
  %b = joint.call_function "aten::neg.default"(%a) {name = "b", policy = #joint.policy<must_recompute>} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{needs the reload of an offloaded value before it, but the offload's forward wait comes later}}
  %g = joint.call_function "aten::mul.Tensor"(%b, %b) {name = "g", phase = #joint.phase<backward>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %w = ao.wait_tensor %h keepalive %a : tensor<4xf32> : tensor<4xf32>
  %r = ao.reload %w to "cuda:0" : tensor<4xf32>
  %rw = ao.wait_tensor %r : tensor<4xf32>
  joint.output
}

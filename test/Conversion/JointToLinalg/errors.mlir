// Refusals: one error naming the target and the node, exit 1.
// RUN: joint-opt %s -split-input-file -verify-diagnostics -convert-joint-to-linalg -mlir-print-op-on-diagnostic=false

joint.graph @no_pattern(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.op "aten::exp.default"(%x) {name = "e"} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{no lowering for 'aten::foo.default' (node 'foo')}}
  %1 = joint.op "aten::foo.default"(%0) {name = "foo"} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output %1 : tensor<4xf32>
}

// -----

joint.graph @pattern_refuses_with_reason(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::gelu.default' (node 'g'): unknown approximate 'erf'}}
  %0 = joint.op "aten::gelu.default"(%x) {name = "g", args = [#joint.operand<0>], kwargs = {approximate = "erf"}} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output %0 : tensor<4xf32>
}

// -----

joint.operator @"aten::native_dropout.default" {arguments = [#joint.arg<name = "input", type = "Tensor">, #joint.arg<name = "p", type = "float">, #joint.arg<name = "train", type = "bool?">], returns = [#joint.arg<type = "Tensor">, #joint.arg<type = "Tensor">], schema = "aten::native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)", tags = ["core", "nondeterministic_seeded"]}
joint.graph @rng_refused(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{RNG op 'aten::native_dropout.default' (node 'x') is not supported by the lowering yet}}
  %0, %1 = joint.op "aten::native_dropout.default"(%x) {name = "x", args = [#joint.operand<0>, 1.000000e-01, true]} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  joint.output %0 : tensor<4xf32>
}

// -----

joint.graph @rng_refused_by_name(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{RNG op 'aten::rand_like.default' (node 'r') is not supported by the lowering yet}}
  %0 = joint.op "aten::rand_like.default"(%x) {name = "r"} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output %0 : tensor<4xf32>
}

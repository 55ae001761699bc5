// Refusals: one error naming the target and the node, exit 1.
// RUN: joint-opt %s -split-input-file -verify-diagnostics -convert-joint-to-linalg -mlir-print-op-on-diagnostic=false

joint.graph @no_pattern(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::exp.default"(%x) {name = "e"} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{no lowering for 'aten::foo.default' (node 'foo')}}
  %1 = joint.call_function "aten::foo.default"(%0) {name = "foo"} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output %1 : tensor<4xf32>
}

// -----

joint.graph @pattern_refuses_with_reason(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::gelu.default' (node 'g'): unknown approximate 'erf'}}
  %0 = joint.call_function "aten::gelu.default"(%x) {name = "g", args = [#joint.operand<0>], kwargs = {approximate = "erf"}} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output %0 : tensor<4xf32>
}

// -----

joint.schema @"aten::native_dropout.default" {arguments = [#joint.arg<name = "input", type = "Tensor">, #joint.arg<name = "p", type = "float">, #joint.arg<name = "train", type = "bool?">], returns = [#joint.arg<type = "Tensor">, #joint.arg<type = "Tensor">], schema = "aten::native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)", tags = ["core", "nondeterministic_seeded"]}
joint.graph @dropout_probability_out_of_range(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::native_dropout.default' (node 'x'): dropout probability outside [0, 1]}}
  %0, %1 = joint.call_function "aten::native_dropout.default"(%x) {name = "x", args = [#joint.operand<0>, 1.500000e+00, true]} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  joint.output %0 : tensor<4xf32>
}

// -----

// An RNG op without a lowering is reported by the contract check.
joint.graph @rng_op_without_lowering(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::exponential.default' (node 'r')}}
  %0 = joint.call_function "aten::exponential.default"(%x) {name = "r"} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output %0 : tensor<4xf32>
}

// -----

joint.graph @as_strided_with_gaps_is_refused(%x: tensor<16xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[16], strides = [1], offset = 0, device = "cpu", storage = 0>}) -> (tensor<4x2xf32> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::as_strided.default' (node 'strided'): as_strided with non-contiguous strides is not expressible as a tensor op}}
  %0 = joint.call_function "aten::as_strided.default"(%x) {args = [#joint.operand<0>, [4, 2], [4, 1]], name = "strided"} : (tensor<16xf32>) -> tensor<4x2xf32>
  joint.output %0 : tensor<4x2xf32>
}

// -----

joint.graph @symbolic_stride_names_the_symbol(%x: tensor<4x?xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, sym("s0", 8)], strides = [sym("s0", 8), 1], offset = 0, device = "cpu", storage = 0>}) -> (i64 {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::sym_stride.int' (node 'st'): symbolic value 's0' has no lowering (only sizes lower through tensor.dim)}}
  %0 = joint.call_function "aten::sym_stride.int"(%x) {args = [#joint.operand<0>, 0], name = "st"} : (tensor<4x?xf32>) -> i64
  joint.output %0 : i64
}

// -----

// SDPA carries nondeterministic_seeded for its dropout: with dropout_p > 0 it
// draws random numbers, which the Attention family refuses.
joint.schema @"aten::_scaled_dot_product_flash_attention_for_cpu.default" {arguments = [#joint.arg<name = "query", type = "Tensor">, #joint.arg<name = "key", type = "Tensor">, #joint.arg<name = "value", type = "Tensor">, #joint.arg<name = "dropout_p", type = "float", default_value = "0.0">, #joint.arg<name = "is_causal", type = "bool", default_value = "False">, #joint.arg<name = "attn_mask", type = "Tensor?", kwarg_only = true, default_value = "None">, #joint.arg<name = "scale", type = "float?", kwarg_only = true, default_value = "None">], returns = [#joint.arg<name = "output", type = "Tensor">, #joint.arg<name = "logsumexp", type = "Tensor">], schema = "aten::_scaled_dot_product_flash_attention_for_cpu(Tensor query, Tensor key, Tensor value, float dropout_p=0.0, bool is_causal=False, *, Tensor? attn_mask=None, float? scale=None) -> (Tensor output, Tensor logsumexp)", tags = ["nondeterministic_seeded"]}
joint.graph @sdpa_with_dropout_is_rng(%q: tensor<1x1x4x8xf32> {joint.role = #joint.role<input>, joint.path = "q"}) -> (tensor<1x1x4x8xf32> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::_scaled_dot_product_flash_attention_for_cpu.default' (node 'sdpa'): dropout_p != 0 needs the RNG and is not supported}}
  %o, %l = joint.call_function "aten::_scaled_dot_product_flash_attention_for_cpu.default"(%q, %q, %q) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>, 1.000000e-01], name = "sdpa"} : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> (tensor<1x1x4x8xf32>, tensor<1x1x4xf32>)
  joint.output %o : tensor<1x1x4x8xf32>
}

// -----

// The view pattern builds index casts for the size list before it finds the
// list too short: its IR is rolled back and the reason reported.
joint.graph @refusal_after_building_ir_rolls_back(%x: tensor<4x?xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %n: i64 {joint.role = #joint.role<input>, joint.path = "n"}) -> (tensor<?x4xf32> {joint.role = #joint.role<output>}) {
  %e = joint.call_function "aten::exp.default"(%x) {name = "e"} : (tensor<4x?xf32>) -> tensor<4x?xf32>
  // expected-error @+1 {{no lowering for 'aten::view.default' (node 'bad_view'): size list does not match result}}
  %v = joint.call_function "aten::view.default"(%e, %n) {args = [#joint.operand<0>, [#joint.operand<1>]], name = "bad_view"} : (tensor<4x?xf32>, i64) -> tensor<?x4xf32>
  joint.output %v : tensor<?x4xf32>
}

// -----

// The contract check reports every op left unconverted, not the first.
joint.graph @three_unsupported(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::foo.default' (node 'foo')}}
  %0 = joint.call_function "aten::foo.default"(%x) {name = "foo"} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = joint.call_function "aten::exp.default"(%0) {name = "e"} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{no lowering for 'aten::bar.default' (node 'bar')}}
  %2 = joint.call_function "aten::bar.default"(%1) {name = "bar"} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{no lowering for 'aten::gelu.default' (node 'g'): unknown approximate 'erf'}}
  %3 = joint.call_function "aten::gelu.default"(%2) {name = "g", args = [#joint.operand<0>], kwargs = {approximate = "erf"}} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output %3 : tensor<4xf32>
}

// -----

// Every RNG op without a lowering is named, not only the first.
joint.graph @two_rng_ops(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  // expected-error @+1 {{no lowering for 'aten::exponential.default' (node 'r1')}}
  %0 = joint.call_function "aten::exponential.default"(%x) {name = "r1"} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{no lowering for 'aten::cauchy.default' (node 'r2')}}
  %1 = joint.call_function "aten::cauchy.default"(%0) {name = "r2"} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output %1 : tensor<4xf32>
}

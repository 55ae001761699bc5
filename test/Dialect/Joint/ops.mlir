// RUN: joint-opt %s -split-input-file | FileCheck %s
// RUN: joint-opt %s -split-input-file -mlir-print-op-generic | joint-opt -split-input-file | FileCheck %s

// CHECK-LABEL: joint.graph @policy_and_phase_attributes
// CHECK: joint.call_function "aten::relu.default"(%x) {name = "relu", phase = #joint.phase<backward>, policy = #joint.policy<must_save>}
// CHECK: joint.call_function "aten::sigmoid.default"(%relu) {name = "s", policy = #joint.policy<prefer_recompute>}
// CHECK: policy = #joint.policy<must_recompute>
// CHECK: policy = #joint.policy<prefer_save>
// CHECK: policy = #joint.policy<must_cpu_offload>
// CHECK: policy = #joint.policy<prefer_cpu_offload>
joint.graph @policy_and_phase_attributes(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::relu.default"(%x) {name = "relu", phase = #joint.phase<backward>, policy = #joint.policy<must_save>} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = joint.call_function "aten::sigmoid.default"(%0) {name = "s", phase = #joint.phase<forward>, policy = #joint.policy<prefer_recompute>} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = joint.call_function "aten::neg.default"(%1) {name = "n", policy = #joint.policy<must_recompute>} : (tensor<4xf32>) -> tensor<4xf32>
  %3 = joint.call_function "aten::neg.default"(%2) {name = "n2", policy = #joint.policy<prefer_save>} : (tensor<4xf32>) -> tensor<4xf32>
  %4 = joint.call_function "aten::neg.default"(%3) {name = "n3", policy = #joint.policy<must_cpu_offload>} : (tensor<4xf32>) -> tensor<4xf32>
  %5 = joint.call_function "aten::neg.default"(%4) {name = "n4", policy = #joint.policy<prefer_cpu_offload>} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output %5 : tensor<4xf32>
}

// -----

// Multi-output ops have one result per output; getitem names are kept.
// CHECK-LABEL: joint.graph @multi_output_native_layer_norm
// CHECK: %getitem, %getitem_1, %getitem_2 = joint.call_function "aten::native_layer_norm.default"(%x, %ln.weight, %ln.bias)
// CHECK-SAME: args = [#joint.operand<0>, [8], #joint.operand<1>, #joint.operand<2>, 9.9999999999999995E-7]
// CHECK-SAME: result_names = ["getitem", "getitem_1", "getitem_2"]
// CHECK-SAME: -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
joint.graph @multi_output_native_layer_norm(%x: tensor<2x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %w: tensor<8xf32> {joint.role = #joint.role<param>, joint.fqn = "ln.weight"}, %b: tensor<8xf32> {joint.role = #joint.role<param>, joint.fqn = "ln.bias"}) -> (tensor<2x8xf32> {joint.role = #joint.role<output>}) {
  %0:3 = joint.call_function "aten::native_layer_norm.default"(%x, %w, %b) {name = "native_layer_norm", args = [#joint.operand<0>, [8], #joint.operand<1>, #joint.operand<2>, 1.0e-6 : f64], result_names = ["getitem", "getitem_1", "getitem_2"]} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  joint.output %0#0 : tensor<2x8xf32>
}

// -----

// Tensor[] results (split) become one result per element, all sharing the
// input's storage.
// CHECK-LABEL: joint.graph @tensor_list_results_split
// CHECK: joint.call_function "aten::split.Tensor"(%x) {args = [#joint.operand<0>, 2], name = "split"
// CHECK-SAME: #joint.tensor<[2, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 0>, #joint.tensor<[2, 4], strides = [4, 1], offset = 8, device = "cpu", storage = 0>
joint.graph @tensor_list_results_split(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 0>}) -> (tensor<2x4xf32> {joint.role = #joint.role<output>}) {
  %0:2 = joint.call_function "aten::split.Tensor"(%x) {name = "split", args = [#joint.operand<0>, 2], result_meta = [#joint.tensor<[2, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 0>, #joint.tensor<[2, 4], strides = [4, 1], offset = 8, device = "cpu", storage = 0>]} : (tensor<4x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  joint.output %0#1 : tensor<2x4xf32>
}

// -----

// Symbolic sizes: `?` in the type, expression and hint in the facts; SymInt
// values are i64 with a #joint.sym expression.
// CHECK-LABEL: joint.graph @symbolic_sizes_and_symint_values
// CHECK: %sym_size_int = joint.call_function "aten::sym_size.int"(%x) {args = [#joint.operand<0>, 0], name = "sym_size_int", result_meta = [#joint.sym<sym("s0", 8)>]} : (tensor<?x64xbf16>) -> i64
// CHECK: result_meta = [#joint.sym<sym("s0*64", 512)>]
// CHECK: #joint.tensor<[sym("s0*64", 512)], strides = [1], offset = 0, device = "cuda:0", storage = 7>
// CHECK: #joint.sym<sym("u0")>
joint.graph @symbolic_sizes_and_symint_values(%x: tensor<?x64xbf16> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[sym("s0", 8), 64], strides = [64, 1], offset = 0, device = "cuda:0", storage = 0>}) -> (tensor<?xbf16> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::sym_size.int"(%x) {name = "sym_size_int", args = [#joint.operand<0>, 0], result_meta = [#joint.sym<sym("s0", 8)>]} : (tensor<?x64xbf16>) -> i64
  %1 = joint.call_function "_operator::mul.default"(%0) {name = "mul", args = [#joint.operand<0>, 64], result_meta = [#joint.sym<sym("s0*64", 512)>]} : (i64) -> i64
  %2 = joint.call_function "aten::view.default"(%x, %1) {name = "view", args = [#joint.operand<0>, [#joint.operand<1>]], result_meta = [#joint.tensor<[sym("s0*64", 512)], strides = [1], offset = 0, device = "cuda:0", storage = 7>]} : (tensor<?x64xbf16>, i64) -> tensor<?xbf16>
  %3 = joint.call_function "aten::_local_scalar_dense.default"(%2) {name = "item", result_meta = [#joint.sym<sym("u0")>]} : (tensor<?xbf16>) -> i64
  joint.output %2 : tensor<?xbf16>
}

// -----

// Every torch dtype maps to a builtin element type.
// CHECK-LABEL: joint.graph @torch_dtypes
// CHECK-SAME: %a: tensor<2xbf16>
// CHECK-SAME: %b: tensor<2xf16>
// CHECK-SAME: %c: tensor<2xf64>
// CHECK-SAME: %d: tensor<2xi64>
// CHECK-SAME: %e: tensor<2xi32>
// CHECK-SAME: %f: tensor<2xi1>
// CHECK-SAME: %g: tensor<2xui8>
// CHECK-SAME: %h: tensor<2xi8>
// CHECK-SAME: %i: tensor<2xf8E4M3FN>
// CHECK-SAME: %j: tensor<2xf8E5M2>
// CHECK-SAME: %k: tensor<2xcomplex<f32>>
// CHECK-SAME: %l: tensor<2xi16>
joint.graph @torch_dtypes(%a: tensor<2xbf16> {joint.role = #joint.role<input>, joint.path = "a"}, %b: tensor<2xf16> {joint.role = #joint.role<input>, joint.path = "b"}, %c: tensor<2xf64> {joint.role = #joint.role<input>, joint.path = "c"}, %d: tensor<2xi64> {joint.role = #joint.role<input>, joint.path = "d"}, %e: tensor<2xi32> {joint.role = #joint.role<input>, joint.path = "e"}, %f: tensor<2xi1> {joint.role = #joint.role<input>, joint.path = "f"}, %g: tensor<2xui8> {joint.role = #joint.role<input>, joint.path = "g"}, %h: tensor<2xi8> {joint.role = #joint.role<input>, joint.path = "h"}, %i: tensor<2xf8E4M3FN> {joint.role = #joint.role<input>, joint.path = "i"}, %j: tensor<2xf8E5M2> {joint.role = #joint.role<input>, joint.path = "j"}, %k: tensor<2xcomplex<f32>> {joint.role = #joint.role<input>, joint.path = "k"}, %l: tensor<2xi16> {joint.role = #joint.role<input>, joint.path = "l"}) -> () {
  joint.output
}

// -----

// Non-tensor arguments: dtype, device, layout, memory format, None, strings,
// nested lists; kwargs by schema name.
// CHECK-LABEL: joint.graph @typed_argument_values
// CHECK: joint.call_function "aten::empty.memory_format"() {args = {{\[\[}}2, 3]], kwargs = {device = #joint.device<"cuda:0">, dtype = #joint.dtype<bfloat16>, layout = #joint.layout<strided>, memory_format, pin_memory = false}
// CHECK: joint.call_function "aten::div.Tensor_mode"(%empty, %empty_1) {args = [#joint.operand<0>, #joint.operand<1>], kwargs = {rounding_mode = "floor"}
joint.graph @typed_argument_values() -> (tensor<2x3xbf16> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::empty.memory_format"() {name = "empty", args = [[2, 3]], kwargs = {dtype = #joint.dtype<bfloat16>, layout = #joint.layout<strided>, device = #joint.device<"cuda:0">, pin_memory = false, memory_format = unit}} : () -> tensor<2x3xbf16>
  %1 = joint.call_function "aten::empty.memory_format"() {name = "empty_1", args = [[2, 3]], kwargs = {dtype = #joint.dtype<bfloat16>}} : () -> tensor<2x3xbf16>
  %2 = joint.call_function "aten::div.Tensor_mode"(%0, %1) {name = "div", args = [#joint.operand<0>, #joint.operand<1>], kwargs = {rounding_mode = "floor"}} : (tensor<2x3xbf16>, tensor<2x3xbf16>) -> tensor<2x3xbf16>
  joint.output %2 : tensor<2x3xbf16>
}

// -----

// Module stacks (outermost first), seq_nr, a remat duplicate in backward.
// CHECK-LABEL: joint.graph @module_stack_and_remat_duplicate
// CHECK: module_stack = [#joint.module<"layers.0", "Block">, #joint.module<"layers.0.mlp", "MLP">], name = "gelu", policy = #joint.policy<prefer_recompute>, seq_nr = 12 : i64
// CHECK: name = "gelu_recomputed", phase = #joint.phase<backward>, recomputed_from = "gelu"
joint.graph @module_stack_and_remat_duplicate(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::gelu.default"(%x) {name = "gelu", module_stack = [#joint.module<"layers.0", "Block">, #joint.module<"layers.0.mlp", "MLP">], seq_nr = 12 : i64, policy = #joint.policy<prefer_recompute>} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = joint.call_function "aten::gelu.default"(%x) {name = "gelu_recomputed", phase = #joint.phase<backward>, recomputed_from = "gelu"} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output %1 : tensor<4xf32>
}

// -----

// The operator table: written arguments, alias sets, tags.
// CHECK-LABEL: joint.schema @"aten::add_.Tensor"
// CHECK-SAME: arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>, #joint.arg<name = "other", type = "Tensor">, #joint.arg<name = "alpha", type = "Scalar", kwarg_only = true, default_value = "1">]
// CHECK-SAME: is_mutable
// CHECK-SAME: returns = [#joint.arg<type = "Tensor", alias = "a", write = true>]
// CHECK-LABEL: joint.schema @"aten::rand_like.default"
// CHECK-SAME: tags = ["nondeterministic_seeded"]
// CHECK-LABEL: joint.graph @operator_table
// CHECK: joint.call_function "aten::add_.Tensor"(%x, %y) {name = "add_"}
joint.schema @"aten::add_.Tensor" {schema = "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>, #joint.arg<name = "other", type = "Tensor">, #joint.arg<name = "alpha", type = "Scalar", kwarg_only = true, default_value = "1">], returns = [#joint.arg<type = "Tensor", alias = "a", write = true>], is_mutable}
joint.schema @"aten::rand_like.default" {schema = "aten::rand_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor", arguments = [#joint.arg<name = "self", type = "Tensor">], returns = [#joint.arg<type = "Tensor">], tags = ["nondeterministic_seeded"]}
joint.graph @operator_table(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %y: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "y"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::add_.Tensor"(%x, %y) {name = "add_"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  joint.output %0 : tensor<4xf32>
}

// -----

// Results: loss, gradients by FQN, loss_dict by key, buffers as arguments.
// CHECK-LABEL: joint.graph @result_roles
// CHECK-SAME: %bn.running_mean: tensor<4xf32> {joint.fqn = "bn.running_mean", joint.role = #joint.role<buffer>}
// CHECK-SAME: -> (tensor<f32> {joint.role = #joint.role<loss>}, tensor<4xf32> {joint.fqn = "w", joint.role = #joint.role<grad>}, tensor<f32> {joint.key = "ce", joint.role = #joint.role<loss_dict>})
joint.graph @result_roles(%w: tensor<4xf32> {joint.role = #joint.role<param>, joint.fqn = "w"}, %rm: tensor<4xf32> {joint.role = #joint.role<buffer>, joint.fqn = "bn.running_mean"}, %l: tensor<f32> {joint.role = #joint.role<input>, joint.path = "l"}) -> (tensor<f32> {joint.role = #joint.role<loss>}, tensor<4xf32> {joint.role = #joint.role<grad>, joint.fqn = "w"}, tensor<f32> {joint.role = #joint.role<loss_dict>, joint.key = "ce"}) {
  joint.output %l, %w, %l : tensor<f32>, tensor<4xf32>, tensor<f32>
}

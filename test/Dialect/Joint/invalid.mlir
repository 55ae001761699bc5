// Every verifier error of the joint dialect, one case each.
// RUN: joint-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{argument 0 has no 'joint.role' (param, buffer or input)}}
joint.graph @arg_without_role(%x: tensor<4xf32>) -> () {
  joint.output
}

// -----

// expected-error @+1 {{argument 0 has role 'loss'; arguments are param, buffer or input}}
joint.graph @arg_with_result_role(%x: tensor<4xf32> {joint.role = #joint.role<loss>}) -> () {
  joint.output
}

// -----

// expected-error @+1 {{input argument 0 has no 'joint.path'}}
joint.graph @input_without_path(%x: tensor<4xf32> {joint.role = #joint.role<input>}) -> () {
  joint.output
}

// -----

// expected-error @+1 {{buffer argument 0 has no 'joint.fqn'}}
joint.graph @buffer_without_fqn(%x: tensor<4xf32> {joint.role = #joint.role<buffer>}) -> () {
  joint.output
}

// -----

// expected-error @+1 {{parameter 'w' appears twice (tied tensors are one input)}}
joint.graph @tied_parameter_twice(%a: tensor<4xf32> {joint.role = #joint.role<param>, joint.fqn = "w"}, %b: tensor<4xf32> {joint.role = #joint.role<param>, joint.fqn = "w"}) -> () {
  joint.output
}

// -----

// expected-error @+1 {{argument 0 has type 'memref<4xf32>', not a torch value type}}
joint.graph @arg_not_torch_type(%x: memref<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  joint.output
}

// -----

// expected-error @+1 {{argument 0 'joint.meta' must be a #joint.tensor}}
joint.graph @arg_meta_wrong_kind(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = 3}) -> () {
  joint.output
}

// -----

// expected-error @+1 {{argument 0 tensor facts have rank 1 but the type 'tensor<4x4xf32>' has rank 2}}
joint.graph @arg_meta_rank_mismatch(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[16], strides = [1], offset = 0, device = "cpu", storage = 0>}) -> () {
  joint.output
}

// -----

// expected-error @+1 {{argument 0 dimension 0 is 8 in the tensor facts but 4 in the type}}
joint.graph @arg_meta_size_mismatch(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[8], strides = [1], offset = 0, device = "cpu", storage = 0>}) -> () {
  joint.output
}

// -----

// expected-error @+1 {{argument 0 dimension 0 is symbolic ("s0") but static in the type}}
joint.graph @symbolic_dim_static_in_type(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[sym("s0", 4)], strides = [1], offset = 0, device = "cpu", storage = 0>}) -> () {
  joint.output
}

// -----

// expected-error @+1 {{argument 0 dimension 0 is 4 in the tensor facts but ? in the type}}
joint.graph @static_dim_dynamic_in_type(%x: tensor<?xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 0>}) -> () {
  joint.output
}

// -----

// expected-error @+1 {{result 0 has no 'joint.role' (loss, grad, loss_dict or output)}}
joint.graph @result_without_role(%x: tensor<f32> {joint.role = #joint.role<input>, joint.path = "x"}) -> tensor<f32> {
  joint.output %x : tensor<f32>
}

// -----

// expected-error @+1 {{result 1 is a second loss}}
joint.graph @two_losses(%x: tensor<f32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<f32> {joint.role = #joint.role<loss>}, tensor<f32> {joint.role = #joint.role<loss>}) {
  joint.output %x, %x : tensor<f32>, tensor<f32>
}

// -----

// expected-error @+1 {{grad result 0 has no 'joint.fqn'}}
joint.graph @grad_without_fqn(%w: tensor<f32> {joint.role = #joint.role<param>, joint.fqn = "w"}) -> (tensor<f32> {joint.role = #joint.role<grad>}) {
  joint.output %w : tensor<f32>
}

// -----

// expected-error @+1 {{grad result 0 is for 'v', which is not a parameter argument}}
joint.graph @grad_of_unknown_parameter(%w: tensor<f32> {joint.role = #joint.role<param>, joint.fqn = "w"}) -> (tensor<f32> {joint.role = #joint.role<grad>, joint.fqn = "v"}) {
  joint.output %w : tensor<f32>
}

// -----

// expected-error @+1 {{loss_dict result 0 has no 'joint.key'}}
joint.graph @loss_dict_without_key(%x: tensor<f32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<f32> {joint.role = #joint.role<loss_dict>}) {
  joint.output %x : tensor<f32>
}

// -----

// expected-error @+1 {{result 0 has role 'param'; results are loss, grad, loss_dict or output}}
joint.graph @result_with_argument_role(%x: tensor<f32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<f32> {joint.role = #joint.role<param>}) {
  joint.output %x : tensor<f32>
}

// -----

joint.graph @output_count_mismatch(%x: tensor<f32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<f32> {joint.role = #joint.role<loss>}) {
  // expected-error @+1 {{has 0 operands but the graph has 1 results}}
  joint.output
}

// -----

joint.graph @output_type_mismatch(%x: tensor<2xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<f32> {joint.role = #joint.role<loss>}) {
  // expected-error @+1 {{operand 0 has type 'tensor<2xf32>' but graph result 0 is 'tensor<f32>'}}
  joint.output %x : tensor<2xf32>
}

// -----

joint.graph @op_with_empty_name(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  // expected-error @+1 {{has an empty node name}}
  %0 = joint.call_function "aten::relu.default"(%x) {name = ""} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

joint.graph @target_without_namespace(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  // expected-error @+1 {{'relu' (relu.default): target is not of the form 'namespace::name.overload'}}
  %0 = joint.call_function "relu.default"(%x) {name = "relu"} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

joint.graph @argument_of_unsupported_kind(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  // expected-error @+1 {{'sum' (aten::sum.default): argument 1 has unsupported value f32}}
  %0 = joint.call_function "aten::sum.default"(%x) {name = "sum", args = [#joint.operand<0>, f32]} : (tensor<4xf32>) -> tensor<f32>
  joint.output
}

// -----

joint.graph @operand_reference_out_of_range(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  // expected-error @+1 {{'add' (aten::add.Tensor): argument 1 refers to an operand past the 1 operands}}
  %0 = joint.call_function "aten::add.Tensor"(%x) {name = "add", args = [#joint.operand<0>, #joint.operand<1>]} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

joint.graph @operand_referenced_twice(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  // expected-error @+1 {{operand 0 is referenced 2 times by args/kwargs; each operand stands for exactly one argument}}
  %0 = joint.call_function "aten::mul.Tensor"(%x) {name = "mul", args = [#joint.operand<0>, #joint.operand<0>]} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

joint.graph @operand_never_referenced(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  // expected-error @+1 {{operand 1 is referenced 0 times by args/kwargs}}
  %0 = joint.call_function "aten::neg.default"(%x, %x) {name = "neg", args = [#joint.operand<0>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

joint.graph @result_not_torch_type(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  // expected-error @+1 {{'neg' (aten::neg.default): result 0 has type 'tensor<4xindex>', not a torch value type}}
  %0 = joint.call_function "aten::neg.default"(%x) {name = "neg"} : (tensor<4xf32>) -> tensor<4xindex>
  joint.output
}

// -----

joint.graph @result_meta_count_mismatch(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  // expected-error @+1 {{has 0 result_meta entries for 1 results}}
  %0 = joint.call_function "aten::neg.default"(%x) {name = "neg", result_meta = []} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

joint.graph @tensor_meta_on_symint_result(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  // expected-error @+1 {{result 0 has tensor facts but type 'i64' is not a ranked tensor}}
  %0 = joint.call_function "aten::sym_size.int"(%x) {name = "s", args = [#joint.operand<0>, 0], result_meta = [#joint.tensor<[], strides = [], offset = 0, device = "cpu", storage = 1>]} : (tensor<4xf32>) -> i64
  joint.output
}

// -----

joint.graph @symint_meta_on_tensor_result(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  // expected-error @+1 {{result 0 has a SymInt expression but type 'tensor<4xf32>'}}
  %0 = joint.call_function "aten::neg.default"(%x) {name = "neg", result_meta = [#joint.sym<4>]} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

joint.graph @result_meta_wrong_kind(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  // expected-error @+1 {{result_meta entry 0 must be #joint.tensor, #joint.sym or unit}}
  %0 = joint.call_function "aten::neg.default"(%x) {name = "neg", result_meta = ["x"]} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

joint.graph @result_names_count_mismatch(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  // expected-error @+1 {{has 2 result_names for 1 results}}
  %0 = joint.call_function "aten::neg.default"(%x) {name = "neg", result_names = ["a", "b"]} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

joint.graph @remat_duplicate_in_forward(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  // expected-error @+1 {{is a remat duplicate (recomputed_from) but not in backward}}
  %0 = joint.call_function "aten::neg.default"(%x) {name = "neg_1", recomputed_from = "neg"} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

joint.schema @"aten::neg.default" {schema = "aten::neg(Tensor self) -> Tensor", arguments = [#joint.arg<name = "self", type = "Tensor">], returns = [#joint.arg<type = "Tensor">]}
joint.graph @too_many_positional_arguments(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  // expected-error @+1 {{'neg' (aten::neg.default): passes 2 positional arguments but the schema takes at most 1}}
  %0 = joint.call_function "aten::neg.default"(%x) {name = "neg", args = [#joint.operand<0>, 3]} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

joint.schema @"aten::neg.default" {schema = "aten::neg(Tensor self) -> Tensor", arguments = [#joint.arg<name = "self", type = "Tensor">], returns = [#joint.arg<type = "Tensor">]}
joint.graph @kwarg_not_in_schema(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  // expected-error @+1 {{kwarg 'alpha' is not in the schema}}
  %0 = joint.call_function "aten::neg.default"(%x) {name = "neg", args = [#joint.operand<0>], kwargs = {alpha = 2}} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

joint.schema @"aten::neg.default" {schema = "aten::neg(Tensor self) -> Tensor", arguments = [#joint.arg<name = "self", type = "Tensor">], returns = [#joint.arg<type = "Tensor">]}
joint.graph @argument_positional_and_kwarg(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %y: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "y"}) -> () {
  // expected-error @+1 {{argument 'self' is passed both positionally and as a kwarg}}
  %0 = joint.call_function "aten::neg.default"(%x, %y) {name = "neg", args = [#joint.operand<0>], kwargs = {self = #joint.operand<1>}} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

// A call that records its args passes every argument without a default, as
// the JSON importer requires (torch would fail on it: "aten::mm() is missing
// value for argument 'mat2'").
joint.schema @"aten::mm.default" {schema = "aten::mm(Tensor self, Tensor mat2) -> Tensor", arguments = [#joint.arg<name = "self", type = "Tensor">, #joint.arg<name = "mat2", type = "Tensor">], returns = [#joint.arg<type = "Tensor">]}
joint.graph @missing_required_argument(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  // expected-error @+1 {{'mm' (aten::mm.default): is missing required argument 'mat2' of the schema}}
  %0 = joint.call_function "aten::mm.default"(%x) {name = "mm", args = [#joint.operand<0>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

joint.schema @"aten::neg.default" {schema = "aten::neg(Tensor self) -> Tensor", arguments = [#joint.arg<name = "self", type = "Tensor">], returns = [#joint.arg<type = "Tensor">]}
joint.graph @result_count_against_schema(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  // expected-error @+1 {{has 2 results but the schema returns 1}}
  %0:2 = joint.call_function "aten::neg.default"(%x) {name = "neg"} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  joint.output
}

// -----

// expected-error @+1 {{'neg.default' is not of the form 'namespace::name.overload'}}
joint.schema @"neg.default" {schema = "neg(Tensor self) -> Tensor", arguments = [], returns = []}

// -----

// expected-error @+1 {{'aten::f.default': argument 0 has no name}}
joint.schema @"aten::f.default" {schema = "f(Tensor) -> Tensor", arguments = [#joint.arg<type = "Tensor">], returns = []}

// -----

// expected-error @+1 {{argument 'x' appears twice}}
joint.schema @"aten::f.default" {schema = "f", arguments = [#joint.arg<name = "x", type = "Tensor">, #joint.arg<name = "x", type = "Tensor">], returns = []}

// -----

// expected-error @+1 {{positional argument 'y' after a kwarg-only one}}
joint.schema @"aten::f.default" {schema = "f", arguments = [#joint.arg<name = "x", type = "Tensor", kwarg_only = true>, #joint.arg<name = "y", type = "Tensor">], returns = []}

// -----

// expected-error @+1 {{argument 'x' is written but has no alias set}}
joint.schema @"aten::f_.default" {schema = "f_", arguments = [#joint.arg<name = "x", type = "Tensor", write = true>], returns = []}

// -----

// expected-error @+1 {{return 0 cannot be kwarg-only}}
joint.schema @"aten::f.default" {schema = "f", arguments = [], returns = [#joint.arg<type = "Tensor", kwarg_only = true>]}

// -----

joint.graph @operator_entry_inside_graph() -> () {
  // expected-error @+1 {{expects parent op 'builtin.module'}}
  joint.schema @"aten::f.default" {schema = "f", arguments = [], returns = []}
  joint.output
}

// -----

// expected-error @+1 {{tensor facts have 2 sizes but 1 strides}}
joint.graph @tensor_facts_rank_of_strides(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [1], offset = 0, device = "cpu", storage = 0>}) -> () {
  joint.output
}

// -----

// expected-error @+1 {{tensor facts: size 0 is negative (-4)}}
joint.graph @tensor_facts_negative_size(%x: tensor<?xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[sym("s0", -4)], strides = [1], offset = 0, device = "cpu", storage = 0>}) -> () {
  joint.output
}

// -----

// expected-error @+1 {{tensor facts: storage offset is negative}}
joint.graph @tensor_facts_negative_offset(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4], strides = [1], offset = -1, device = "cpu", storage = 0>}) -> () {
  joint.output
}

// -----

// expected-error @+1 {{tensor facts: device must not be empty}}
joint.graph @tensor_facts_empty_device(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4], strides = [1], offset = 0, device = "", storage = 0>}) -> () {
  joint.output
}

// -----

// expected-error @+1 {{tensor facts: storage id must be >= 0}}
joint.graph @tensor_facts_negative_storage(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = -2>}) -> () {
  joint.output
}

// -----

// expected-error @+1 {{symbolic expression must not be empty}}
joint.graph @empty_symbolic_expression(%x: tensor<?xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[sym("", 4)], strides = [1], offset = 0, device = "cpu", storage = 0>}) -> () {
  joint.output
}

// joint-apply-cpu-offload re-checks every safety rule on a hand-tagged op and
// refuses with one error naming the node and the reason, changing nothing.
// RUN: joint-opt %s -split-input-file -verify-diagnostics -joint-apply-cpu-offload -o /dev/null

joint.schema @"aten::elu_.default" {schema = "aten::elu_(Tensor(a!) self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor(a!)", arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>], returns = [#joint.arg<type = "Tensor", alias = "a", write = true>], is_mutable}
joint.graph @in_place_writer_is_refused(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  // expected-error @+1 {{node 'e' (aten::elu_.default) is tagged must_cpu_offload but writes its input in place}}
  %e = joint.call_function "aten::elu_.default"(%a) {name = "e", policy = #joint.policy<must_cpu_offload>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = joint.call_function "aten::mul.Tensor"(%e, %e) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 9>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

joint.schema @"aten::elu_.default" {schema = "aten::elu_(Tensor(a!) self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor(a!)", arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>], returns = [#joint.arg<type = "Tensor", alias = "a", write = true>], is_mutable}
joint.graph @storage_written_in_place_is_refused(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  // expected-error @+1 {{node 'a' (aten::exp.default) is tagged must_cpu_offload but its storage is written in place by 'e'}}
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", policy = #joint.policy<must_cpu_offload>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = joint.call_function "aten::elu_.default"(%a) {name = "e", result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = joint.call_function "aten::mul.Tensor"(%a, %e) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 9>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

joint.graph @collective_is_refused(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  // expected-error @+1 {{node 'ag' (_c10d_functional::all_gather_into_tensor.default) is tagged must_cpu_offload but is a collective or its wait}}
  %ag = joint.call_function "_c10d_functional::all_gather_into_tensor.default"(%x) {name = "ag", args = [#joint.operand<0>, 1, "0"], policy = #joint.policy<must_cpu_offload>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = joint.call_function "aten::mul.Tensor"(%ag, %ag) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 9>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

joint.graph @data_dependent_size_is_refused(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  // expected-error @+1 {{node 'nz' (custom::nonzero_like.default) is tagged must_cpu_offload but has a data-dependent size (no trace-time hint)}}
  %nz = joint.call_function "custom::nonzero_like.default"(%x) {name = "nz", policy = #joint.policy<must_cpu_offload>, result_meta = [#joint.tensor<[sym("u0"), 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<?x4xf32>
  %g = joint.call_function "aten::mul.Tensor"(%nz, %nz) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[sym("u0"), 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  joint.output
}

// -----

joint.graph @host_value_in_accelerator_graph_is_refused(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  // expected-error @+1 {{node 'h' (aten::tanh.default) is tagged must_cpu_offload but is already on the host (device 'cpu')}}
  %h = joint.call_function "aten::tanh.default"(%x) {name = "h", policy = #joint.policy<must_cpu_offload>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = joint.call_function "aten::mul.Tensor"(%h, %h) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 9>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

joint.graph @value_not_read_by_backward_is_refused(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  // expected-error @+1 {{node 'a' (aten::exp.default) is tagged must_cpu_offload but is not read by the backward}}
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", policy = #joint.policy<must_cpu_offload>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = joint.call_function "aten::neg.default"(%a) {name = "b", result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = joint.call_function "aten::mul.Tensor"(%b, %b) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 9>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

joint.graph @view_of_graph_input_is_refused(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  // expected-error @+1 {{node 'v' (aten::view.default) is tagged must_cpu_offload but lives in a graph input's storage (parameter, buffer or user input)}}
  %v = joint.call_function "aten::view.default"(%x) {name = "v", args = [#joint.operand<0>, [4, 4]], policy = #joint.policy<must_cpu_offload>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = joint.call_function "aten::mul.Tensor"(%v, %v) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 9>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

joint.graph @forward_reader_after_backward_start_is_refused(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  // expected-error @+1 {{node 'a' (aten::exp.default) is tagged must_cpu_offload but the forward still reads it ('f') after the backward starts}}
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", policy = #joint.policy<must_cpu_offload>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = joint.call_function "aten::mul.Tensor"(%a, %a) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 9>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %f = joint.call_function "aten::neg.default"(%a) {name = "f", result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 3>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

joint.graph @alias_tagged_for_recompute_is_refused(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", policy = #joint.policy<must_recompute>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  // expected-error @+1 {{node 'v' (aten::view.default) is tagged must_cpu_offload but its storage is shared with 'a', which is tagged for recompute}}
  %v = joint.call_function "aten::view.default"(%a) {name = "v", args = [#joint.operand<0>, [4, 4]], policy = #joint.policy<must_cpu_offload>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = joint.call_function "aten::mul.Tensor"(%v, %v) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 9>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

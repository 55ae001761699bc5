// joint-cpu-offload input errors: a graph without attention modules and a
// malformed joint.model attribute (rejected by the dialect's verifier) are
// reported on the graph, by name.
// RUN: joint-opt %s -split-input-file -joint-cpu-offload -verify-diagnostics

// GPT-2 names its attention `attn`: joint.model lists it, so it is in scope
// (here its one activation is not read by the backward).
// expected-remark @+2 {{selected 0 of 0 activation(s) in scope=attention}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 0 storage(s)}}
joint.graph @attention_named_attn_from_the_model(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () attributes {joint.model = {attention = [{class = "GPT2Attention", fqn = "h.0.attn"}], block_containers = []}} {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", module_stack = [#joint.module<"h.0.attn", "GPT2Attention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// No joint.model and no module stacks at all.
// expected-error @+1 {{joint-tag-cpu-offload scope=attention: graph @graph_without_modules_is_an_error has no attention module (no 'joint.model' attention entry, no module named 'self_attn', no module computing scaled-dot-product attention or bmm -> softmax -> bmm); use scope=block or scope=all}}
joint.graph @graph_without_modules_is_an_error(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// SDPA called directly in a transformer block (no attention submodule): the
// block is no attention module, so scope=attention does not offload all of it.
// expected-error @+1 {{joint-tag-cpu-offload scope=attention: graph @sdpa_directly_in_block has no attention module: block 'layers.0' computes attention itself, and offloading the whole block is scope=block; use scope=block or scope=all}}
joint.graph @sdpa_directly_in_block(%x: tensor<1x1x4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[1, 1, 4, 4], strides = [16, 16, 4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %m = joint.call_function "aten::exp.default"(%x) {name = "m", module_stack = [#joint.module<"layers.0", "Block">, #joint.module<"layers.0.mlp", "MLP">], result_meta = [#joint.tensor<[1, 1, 4, 4], strides = [16, 16, 4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %a = joint.call_function "aten::scaled_dot_product_attention.default"(%m, %m, %m) {name = "a", module_stack = [#joint.module<"layers.0", "Block">], result_meta = [#joint.tensor<[1, 1, 4, 4], strides = [16, 16, 4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  joint.output
}

// -----

// expected-error @+1 {{graph @model_attribute_not_a_dictionary: 'joint.model' must be a dictionary}}
joint.graph @model_attribute_not_a_dictionary(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () attributes {joint.model = [1]} {
  joint.output
}

// -----

// expected-error @+1 {{graph @attention_not_a_list: 'joint.model' entry 'attention' must be a list of {fqn, class}}}
joint.graph @attention_not_a_list(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () attributes {joint.model = {attention = "self_attn"}} {
  joint.output
}

// -----

// expected-error @+1 {{graph @attention_entry_without_fqn: 'joint.model' attention entry 1 has no string 'fqn'}}
joint.graph @attention_entry_without_fqn(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () attributes {joint.model = {attention = [{class = "A", fqn = "l0.self_attn"}, {class = "A"}]}} {
  joint.output
}

// -----

// The model's attention list alone defines the scope (no op needs a module
// stack that names self_attn for the graph to be accepted).
// expected-remark @+2 {{selected 0 of 0 activation(s) in scope=attention}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 0 storage(s)}}
joint.graph @attention_list_alone_is_enough(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () attributes {joint.model = {attention = [{class = "A", fqn = "l0.self_attn"}]}} {
  joint.output
}

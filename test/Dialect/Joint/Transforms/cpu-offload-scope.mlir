// joint-cpu-offload scopes: attention modules found by name, by
// joint.model or by what they compute; scope=block takes every activation
// inside a transformer block, scope=all every forward activation; in block
// and all the last block's activations are decided by the cost model; values
// already on the host are never offloaded.
// RUN: joint-opt %s -split-input-file -joint-cpu-offload="min-bytes=64" 2>/dev/null | FileCheck %s --check-prefix=ATT
// RUN: joint-opt %s -split-input-file -joint-cpu-offload="min-bytes=64 scope=block" 2>/dev/null | FileCheck %s --check-prefix=BLOCK
// RUN: joint-opt %s -split-input-file -joint-cpu-offload="min-bytes=64 scope=all" 2>/dev/null | FileCheck %s --check-prefix=ALL
// The remarks, on their own:
// RUN: joint-opt %s -split-input-file -joint-cpu-offload="min-bytes=64" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ATTR
// RUN: joint-opt %s -split-input-file -joint-cpu-offload="min-bytes=64 scope=block" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BLOCKR
// RUN: joint-opt %s -split-input-file -joint-cpu-offload="min-bytes=64 scope=all" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ALLR
// RUN: joint-opt %s -split-input-file -joint-memory-report="format=json output=-" -o /dev/null | FileCheck %s --check-prefix=REPORT

// ATTR: remark: joint-tag-cpu-offload: 2 op(s) tagged must_cpu_offload: selected 2 of 2 activation(s) in scope=attention, 128 bytes
// BLOCKR: remark: joint-tag-cpu-offload: 2 op(s) tagged must_cpu_offload: selected 2 of 2 activation(s) in scope=block, 128 bytes; 1 of the last block kept on the device (cost model: their reload cannot hide behind the backward compute before their first reader)
// ALLR: remark: joint-tag-cpu-offload: 3 op(s) tagged must_cpu_offload: selected 3 of 3 activation(s) in scope=all, 192 bytes; 1 of the last block kept on the device
// ATT: graph @scopes
// ATT-NOT: ao.offload %e
// ATT: ao.offload %a0
// ATT-NOT: ao.offload %m0
// ATT: ao.offload %a1
// BLOCK: graph @scopes
// BLOCK-NOT: ao.offload %e
// BLOCK: ao.offload %a0
// BLOCK: ao.offload %m0
// BLOCK-NOT: ao.offload %a1
// ALL: graph @scopes
// ALL: ao.offload %e
// ALL: ao.offload %a0
// ALL: ao.offload %m0
// ALL-NOT: ao.offload %a1
joint.graph @scopes(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %e = joint.call_function "aten::exp.default"(%x) {name = "e", module_stack = [#joint.module<"embed", "Embedding">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %a0 = joint.call_function "aten::exp.default"(%e) {name = "a0", module_stack = [#joint.module<"layers.0", "Block">, #joint.module<"layers.0.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %m0 = joint.call_function "aten::exp.default"(%a0) {name = "m0", module_stack = [#joint.module<"layers.0", "Block">, #joint.module<"layers.0.mlp", "MLP">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 3>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %a1 = joint.call_function "aten::exp.default"(%m0) {name = "a1", module_stack = [#joint.module<"layers.1", "Block">, #joint.module<"layers.1.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 4>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %g1 = joint.call_function "aten::mul.Tensor"(%a1, %a1) {name = "g1", module_stack = [#joint.module<"layers.1", "Block">, #joint.module<"layers.1.self_attn", "Attention">], phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 5>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %g0 = joint.call_function "aten::mul.Tensor"(%a0, %m0) {name = "g0", module_stack = [#joint.module<"layers.0", "Block">, #joint.module<"layers.0.mlp", "MLP">], phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 6>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %ge = joint.call_function "aten::mul.Tensor"(%e, %g0) {name = "ge", module_stack = [#joint.module<"embed", "Embedding">], phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 7>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// Eager attention (BERT, GPT-NeoX, T5, ViT): the module owning
// bmm -> softmax -> bmm is an attention module whatever its name.
// ATTR: remark: joint-tag-cpu-offload: 2 op(s) tagged must_cpu_offload: selected 2 of 2 activation(s) in scope=attention, 128 bytes
// ATT: graph @eager_attention_found_by_what_it_computes
// ATT: ao.offload %p
// ATT: ao.offload %o
joint.graph @eager_attention_found_by_what_it_computes(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %s = joint.call_function "aten::bmm.default"(%x, %x) {name = "s", module_stack = [#joint.module<"encoder.layer.0", "Layer">, #joint.module<"encoder.layer.0.attention.self", "SelfAttention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %p = joint.call_function "aten::_softmax.default"(%s) {name = "p", args = [#joint.operand<0>, -1, false], module_stack = [#joint.module<"encoder.layer.0", "Layer">, #joint.module<"encoder.layer.0.attention.self", "SelfAttention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %o = joint.call_function "aten::bmm.default"(%p, %x) {name = "o", module_stack = [#joint.module<"encoder.layer.0", "Layer">, #joint.module<"encoder.layer.0.attention.self", "SelfAttention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 3>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %gp = joint.call_function "aten::mul.Tensor"(%o, %p) {name = "gp", module_stack = [#joint.module<"encoder.layer.0", "Layer">, #joint.module<"encoder.layer.0.attention.self", "SelfAttention">], phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 4>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// A small tanh computed on the host inside self_attn of a cuda:0 graph
// is not offloaded, and the report charges it neither as device memory nor
// as a saved activation nor as a transfer.
// ATTR: remark: joint-tag-cpu-offload: 1 op(s) tagged must_cpu_offload: selected 1 of 1 activation(s) in scope=attention, 64 bytes
// ATT: graph @host_value_is_never_offloaded
// ATT: ao.offload %q
// ATT-NOT: ao.offload %h
// REPORT: "graph": "host_value_is_never_offloaded"
// REPORT: "activation_bytes": 64,
joint.graph @host_value_is_never_offloaded(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %q = joint.call_function "aten::mm.default"(%x, %x) {name = "q", module_stack = [#joint.module<"layers.0", "Block">, #joint.module<"layers.0.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %h = joint.call_function "aten::tanh.default"(%x) {name = "h", module_stack = [#joint.module<"layers.0", "Block">, #joint.module<"layers.0.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 2>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %gq = joint.call_function "aten::mul.Tensor"(%q, %h) {name = "gq", module_stack = [#joint.module<"layers.0", "Block">, #joint.module<"layers.0.self_attn", "Attention">], phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 3>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// Mixed block styles: layers.0 has an attention module, layers.1 calls SDPA
// in its own forward. scope=attention offloads layers.0's attention and says
// that layers.1 computes attention itself and stays on the device.
// ATTR: remark: joint-tag-cpu-offload: 1 op(s) tagged must_cpu_offload: selected 1 of 1 activation(s) in scope=attention, 64 bytes; block 'layers.1' computes attention itself (no attention module), so none of it is offloaded (scope=block takes it)
// ATT: graph @mixed_block_styles
// ATT: ao.offload %a0
// ATT-NOT: ao.offload
joint.graph @mixed_block_styles(%x: tensor<1x1x4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[1, 1, 4, 4], strides = [16, 16, 4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a0 = joint.call_function "aten::exp.default"(%x) {name = "a0", module_stack = [#joint.module<"layers.0", "Block">, #joint.module<"layers.0.self_attn", "Attention">], result_meta = [#joint.tensor<[1, 1, 4, 4], strides = [16, 16, 4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %a1 = joint.call_function "aten::scaled_dot_product_attention.default"(%a0, %a0, %a0) {name = "a1", module_stack = [#joint.module<"layers.1", "Block">], result_meta = [#joint.tensor<[1, 1, 4, 4], strides = [16, 16, 4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %g1 = joint.call_function "aten::mul.Tensor"(%a1, %a1) {name = "g1", module_stack = [#joint.module<"layers.1", "Block">], phase = #joint.phase<backward>, result_meta = [#joint.tensor<[1, 1, 4, 4], strides = [16, 16, 4, 1], offset = 0, device = "cuda:0", storage = 3>]} : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %g0 = joint.call_function "aten::mul.Tensor"(%a0, %g1) {name = "g0", module_stack = [#joint.module<"layers.0", "Block">, #joint.module<"layers.0.self_attn", "Attention">], phase = #joint.phase<backward>, result_meta = [#joint.tensor<[1, 1, 4, 4], strides = [16, 16, 4, 1], offset = 0, device = "cuda:0", storage = 4>]} : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  joint.output
}

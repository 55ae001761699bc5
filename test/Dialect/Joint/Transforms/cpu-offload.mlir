// joint-cpu-offload: candidates, storage groups, policy conflict and
// placement, one case per rule (graph_trainer's cpu_offload rules).
// min-bytes=64 lets 4x4xf32 values qualify.
// RUN: joint-opt %s -split-input-file -joint-cpu-offload="min-bytes=64" -verify-diagnostics | FileCheck %s

// The offload starts right after the producer; the forward wait keeps the
// source alive (keepalive) and is placed after, and depends on, the last
// forward reader (last_use); the reload chain sits right before the first
// backward reader, which reads the reloaded value; the reload's wait keeps
// the host copy alive until the copy back has finished.
// CHECK-LABEL: joint.graph @keepalive_and_last_use_of_storage
// CHECK: %[[A:.*]] = joint.call_function "aten::mm.default"
// CHECK-NEXT: %[[H:.*]] = ao.offload %[[A]] : tensor<4x4xf32>
// CHECK-NEXT: %[[B:.*]] = joint.call_function "aten::gelu.default"(%[[A]])
// CHECK-NEXT: %[[W:.*]] = ao.wait_tensor %[[H]] keepalive %[[A]] : tensor<4x4xf32> last_use %[[B]] : tensor<4x4xf32> : tensor<4x4xf32>
// CHECK-NEXT: %[[C:.*]] = joint.call_function "aten::mm.default"(%[[B]], %x)
// CHECK-NEXT: %[[R:.*]] = ao.reload %[[W]] to "cuda:0" {joint.storage = 5 : i64} : tensor<4x4xf32>
// CHECK-NEXT: %[[RW:.*]] = ao.wait_tensor %[[R]] keepalive %[[W]] : tensor<4x4xf32> : tensor<4x4xf32>
// CHECK-NEXT: joint.call_function "aten::gelu_backward.default"(%[[C]], %[[RW]])
// expected-remark @+2 {{selected 1 of 1 activation(s) in scope=attention, 64 bytes}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 1 storage(s), 64 bytes, prefetched 0 reload(s)}}
joint.graph @keepalive_and_last_use_of_storage(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a = joint.call_function "aten::mm.default"(%x, %x) {name = "a", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = joint.call_function "aten::gelu.default"(%a) {name = "b", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %c = joint.call_function "aten::mm.default"(%b, %x) {name = "c", result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 3>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = joint.call_function "aten::gelu_backward.default"(%c, %a) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 4>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// The wait goes after the last forward reader of the whole storage group:
// here a reader of a view, after the last direct reader.
// CHECK-LABEL: joint.graph @last_use_includes_views_of_the_storage
// CHECK: %[[A:.*]] = joint.call_function "aten::mm.default"
// CHECK-NEXT: %[[H:.*]] = ao.offload %[[A]]
// CHECK: %[[N:.*]] = joint.call_function "aten::neg.default"(%v)
// CHECK-NEXT: ao.wait_tensor %[[H]] keepalive %[[A]] : tensor<4x4xf32> last_use %[[N]] : tensor<16xf32> : tensor<4x4xf32>
// CHECK-NEXT: ao.reload
// expected-remark @+2 {{selected 1 of 1 activation(s) in scope=attention, 64 bytes}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 1 storage(s), 64 bytes}}
joint.graph @last_use_includes_views_of_the_storage(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a = joint.call_function "aten::mm.default"(%x, %x) {name = "a", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %v = joint.call_function "aten::view.default"(%a) {name = "v", args = [#joint.operand<0>, [16]], module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[16], strides = [1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<16xf32>
  %b = joint.call_function "aten::gelu.default"(%a) {name = "b", result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %n = joint.call_function "aten::neg.default"(%v) {name = "n", result_meta = [#joint.tensor<[16], strides = [1], offset = 0, device = "cuda:0", storage = 3>]} : (tensor<16xf32>) -> tensor<16xf32>
  %g = joint.call_function "aten::gelu_backward.default"(%b, %a) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 4>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// A multi-output last reader: the wait depends on one specific result.
// CHECK-LABEL: joint.graph @multi_output_last_use_depends_on_one_result
// CHECK: %[[A:.*]] = joint.call_function "aten::exp.default"
// CHECK: %[[S:[a-z_0-9]*]], %{{.*}} = joint.call_function "aten::sort.default"(%[[A]])
// CHECK-NEXT: ao.wait_tensor %{{.*}} keepalive %[[A]] : tensor<4x4xf32> last_use %[[S]] : tensor<4x4xf32> : tensor<4x4xf32>
// expected-remark @+2 {{selected 1 of 1 activation(s) in scope=attention, 64 bytes}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 1 storage(s), 64 bytes}}
joint.graph @multi_output_last_use_depends_on_one_result(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %s:2 = joint.call_function "aten::sort.default"(%a) {name = "sort", args = [#joint.operand<0>, -1], result_names = ["values", "indices"], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>, #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 3>]} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xi64>)
  %g = joint.call_function "aten::mul.Tensor"(%s#0, %a) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 4>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// No forward reader: the wait follows the offload, last_use is the source.
// CHECK-LABEL: joint.graph @no_forward_reader_waits_right_after_offload
// CHECK: %[[A:.*]] = joint.call_function "aten::exp.default"
// CHECK-NEXT: %[[H:.*]] = ao.offload %[[A]]
// CHECK-NEXT: ao.wait_tensor %[[H]] keepalive %[[A]] : tensor<4x4xf32> last_use %[[A]] : tensor<4x4xf32> : tensor<4x4xf32>
// expected-remark @+2 {{selected 1 of 1 activation(s) in scope=attention}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 1 storage(s)}}
joint.graph @no_forward_reader_waits_right_after_offload(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = joint.call_function "aten::mul.Tensor"(%a, %a) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 4>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// Views are never offloaded, only the owner of the storage, once; an alias
// without schema alias info (_unsafe_view) groups by storage identity.
// Forward views the backward reads are replayed on the reloaded value in
// forward order and every backward reader is redirected; the replayed views
// and the backward aliases (t) get a fresh storage id (here 5): they live in
// the reloaded allocation, not in storage 1 that the forward wait frees.
// CHECK-LABEL: joint.graph @backward_view_reads_replayed_on_reload_in_forward_order
// CHECK: %[[A:.*]] = joint.call_function "aten::mm.default"
// CHECK-NEXT: ao.offload %[[A]]
// CHECK-NOT: ao.offload
// CHECK: %[[R:.*]] = ao.reload
// CHECK-NEXT: %[[RW:.*]] = ao.wait_tensor %[[R]]
// CHECK-NEXT: %[[U:.*]] = joint.call_function "aten::_unsafe_view.default"(%[[RW]]) {{{.*}}name = "u_reload", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[2, 8], strides = [8, 1], offset = 0, device = "cuda:0", storage = 5>]}
// CHECK-NEXT: %[[T:.*]] = joint.call_function "aten::transpose.int"(%[[U]]) {{{.*}}name = "tr_reload", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[8, 2], strides = [1, 8], offset = 0, device = "cuda:0", storage = 5>]}
// CHECK-NEXT: joint.call_function "aten::mul.Tensor"(%[[T]], %[[T]])
// CHECK-NEXT: joint.call_function "aten::t.default"(%[[RW]]) {{{.*}}storage = 5>]}
// CHECK-NOT: ao.offload
// expected-remark @+2 {{selected 1 of 1 activation(s) in scope=attention, 64 bytes}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 1 storage(s), 64 bytes}}
joint.graph @backward_view_reads_replayed_on_reload_in_forward_order(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a = joint.call_function "aten::mm.default"(%x, %x) {name = "a", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %u = joint.call_function "aten::_unsafe_view.default"(%a) {name = "u", args = [#joint.operand<0>, [2, 8]], module_stack = [#joint.module<"l0.self_attn", "Attention">], policy = #joint.policy<must_save>, result_meta = [#joint.tensor<[2, 8], strides = [8, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<2x8xf32>
  %t = joint.call_function "aten::transpose.int"(%u) {name = "tr", args = [#joint.operand<0>, 0, 1], module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[8, 2], strides = [1, 8], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<2x8xf32>) -> tensor<8x2xf32>
  %f = joint.call_function "aten::neg.default"(%u) {name = "f", result_meta = [#joint.tensor<[2, 8], strides = [8, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %g = joint.call_function "aten::mul.Tensor"(%t, %t) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[8, 2], strides = [2, 1], offset = 0, device = "cuda:0", storage = 3>]} : (tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<8x2xf32>
  %bt = joint.call_function "aten::t.default"(%a) {name = "bt", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [1, 4], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %h = joint.call_function "aten::mm.default"(%bt, %x) {name = "h", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 4>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// Only the owner of a storage is offloaded: a view the backward reads is
// not a candidate itself; it is replayed on the owner's reload.
// CHECK-LABEL: joint.graph @views_are_never_offloaded_only_their_owner
// CHECK: ao.offload %a
// CHECK-NOT: ao.offload
// expected-remark @+2 {{selected 1 of 1 activation(s) in scope=attention, 64 bytes}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 1 storage(s), 64 bytes}}
joint.graph @views_are_never_offloaded_only_their_owner(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a = joint.call_function "aten::mm.default"(%x, %x) {name = "a", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %v = joint.call_function "aten::view.default"(%a) {name = "v", args = [#joint.operand<0>, [2, 8]], module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[2, 8], strides = [8, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<2x8xf32>
  %g = joint.call_function "aten::mul.Tensor"(%v, %v) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[2, 8], strides = [8, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  joint.output
}

// -----

// A multi-output op whose results each own their storage offers each result
// (the attention output and its logsumexp are the typical pair).
// CHECK-LABEL: joint.graph @multi_output_producer_offloads_each_owned_result
// CHECK: %[[O:[a-z_0-9]*]], %[[L:[a-z_0-9]*]] = joint.call_function "custom::attention.default"
// CHECK-DAG: ao.offload %[[O]]
// CHECK-DAG: ao.offload %[[L]]
// expected-remark @+2 {{selected 2 of 2 activation(s) in scope=attention, 128 bytes}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 2 storage(s), 128 bytes}}
joint.graph @multi_output_producer_offloads_each_owned_result(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %o:2 = joint.call_function "custom::attention.default"(%x) {name = "attn", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_names = ["out", "lse"], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>, #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
  %g = joint.call_function "aten::mul.Tensor"(%o#0, %o#1) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 3>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// Only ops inside a self_attn module (or its submodules) are in scope.
// CHECK-LABEL: joint.graph @scope_is_self_attn_and_its_submodules
// CHECK: ao.offload %q
// CHECK-NOT: ao.offload
// expected-remark @+2 {{selected 1 of 1 activation(s) in scope=attention}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 1 storage(s)}}
joint.graph @scope_is_self_attn_and_its_submodules(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %q = joint.call_function "aten::mm.default"(%x, %x) {name = "q", module_stack = [#joint.module<"", "Model">, #joint.module<"l0", "Block">, #joint.module<"l0.self_attn", "Attention">, #joint.module<"l0.self_attn.q_proj", "Linear">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %m = joint.call_function "aten::mm.default"(%x, %x) {name = "m", module_stack = [#joint.module<"", "Model">, #joint.module<"l0", "Block">, #joint.module<"l0.mlp", "MLP">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %n = joint.call_function "aten::mm.default"(%x, %x) {name = "n", result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 3>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = joint.call_function "aten::mul.Tensor"(%q, %m) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 4>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %h = joint.call_function "aten::mul.Tensor"(%g, %n) {name = "h", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 5>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// A value the backward never reads is not saved: nothing to offload.
// CHECK-LABEL: joint.graph @not_read_by_backward_stays_on_device
// CHECK-NOT: ao.offload
// expected-remark @+2 {{selected 0 of 0 activation(s) in scope=attention}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 0 storage(s)}}
joint.graph @not_read_by_backward_stays_on_device(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = joint.call_function "aten::neg.default"(%a) {name = "b", result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = joint.call_function "aten::mul.Tensor"(%b, %x) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 3>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// Rank below 2 stays on device even when large enough.
// CHECK-LABEL: joint.graph @rank_below_two_stays_on_device
// CHECK-NOT: ao.offload
// expected-remark @+2 {{selected 0 of 0 activation(s) in scope=attention}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 0 storage(s)}}
joint.graph @rank_below_two_stays_on_device(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a = joint.call_function "aten::view.default"(%x) {name = "v", args = [#joint.operand<0>, [16]], result_meta = [#joint.tensor<[16], strides = [1], offset = 0, device = "cuda:0", storage = 0>]} : (tensor<4x4xf32>) -> tensor<16xf32>
  %b = joint.call_function "aten::exp.default"(%a) {name = "b", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[16], strides = [1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<16xf32>) -> tensor<16xf32>
  %g = joint.call_function "aten::mul.Tensor"(%b, %b) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[16], strides = [1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  joint.output
}

// -----

// A non-contiguous base is offloaded whole and reloaded in its
// own layout (the reload's size and stride), so its readers see the strides
// the forward saw.
// CHECK-LABEL: joint.graph @non_contiguous_base_reloaded_in_its_layout
// CHECK: %[[A:.*]] = joint.call_function "aten::clone.default"
// CHECK-NEXT: %[[H:.*]] = ao.offload %[[A]] : tensor<4x4xf32>
// CHECK-NEXT: %[[W:.*]] = ao.wait_tensor %[[H]] keepalive %[[A]]
// CHECK-NEXT: %[[R:.*]] = ao.reload %[[W]] to "cuda:0" {joint.storage = 3 : i64, size = [4, 4], stride = [1, 4]} : tensor<4x4xf32>
// CHECK-NEXT: %[[RW:.*]] = ao.wait_tensor %[[R]] keepalive %[[W]]
// CHECK-NEXT: joint.call_function "aten::mul.Tensor"(%[[RW]], %[[RW]])
// expected-remark @+2 {{selected 1 of 1 activation(s) in scope=attention, 64 bytes}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 1 storage(s), 64 bytes}}
joint.graph @non_contiguous_base_reloaded_in_its_layout(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a = joint.call_function "aten::clone.default"(%x) {name = "a", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [1, 4], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = joint.call_function "aten::mul.Tensor"(%a, %a) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// An owner at a non-zero storage offset stays on device.
// CHECK-LABEL: joint.graph @storage_offset_owner_stays_on_device
// CHECK-NOT: ao.offload
// expected-remark @+2 {{selected 0 of 0 activation(s) in scope=attention}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 0 storage(s)}}
joint.graph @storage_offset_owner_stays_on_device(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a = joint.call_function "custom::make.default"(%x) {name = "a", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 4, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = joint.call_function "aten::mul.Tensor"(%a, %a) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// An expanded tensor is a view of a small row (stride 0): its numel
// (4096x4 elements) does not make it, or its rank-1 owner, a candidate.
// CHECK-LABEL: joint.graph @expanded_view_is_not_a_candidate
// CHECK-NOT: ao.offload
// expected-remark @+2 {{selected 0 of 0 activation(s) in scope=attention}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 0 storage(s)}}
joint.graph @expanded_view_is_not_a_candidate(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %row = joint.call_function "aten::sum.dim_IntList"(%x) {name = "row", args = [#joint.operand<0>, [0]], module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[4], strides = [1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4xf32>
  %e = joint.call_function "aten::expand.default"(%row) {name = "e", args = [#joint.operand<0>, [4096, 4]], module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[4096, 4], strides = [0, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4xf32>) -> tensor<4096x4xf32>
  %g = joint.call_function "aten::mul.Tensor"(%e, %e) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4096, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4096x4xf32>, tensor<4096x4xf32>) -> tensor<4096x4xf32>
  joint.output
}

// -----

// Without tensor facts the layout is unknown: skipped.
// CHECK-LABEL: joint.graph @value_without_facts_is_skipped
// CHECK-NOT: ao.offload
// expected-remark @+2 {{selected 0 of 0 activation(s) in scope=attention}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 0 storage(s)}}
joint.graph @value_without_facts_is_skipped(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", module_stack = [#joint.module<"l0.self_attn", "Attention">]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = joint.call_function "aten::mul.Tensor"(%a, %a) {name = "g", phase = #joint.phase<backward>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// A functional collective and its wait stay on device.
// CHECK-LABEL: joint.graph @collective_and_its_wait_stay_on_device
// CHECK-NOT: ao.offload
// expected-remark @+2 {{selected 0 of 0 activation(s) in scope=attention}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 0 storage(s)}}
joint.graph @collective_and_its_wait_stay_on_device(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %ag = joint.call_function "_c10d_functional::all_gather_into_tensor.default"(%x) {name = "ag", args = [#joint.operand<0>, 2, "0"], module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[8, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<8x4xf32>
  %w = joint.call_function "_c10d_functional::wait_tensor.default"(%ag) {name = "w", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[8, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %g = joint.call_function "aten::mul.Tensor"(%w, %ag) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[8, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 3>]} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  joint.output
}

// -----

// Storage owned by a graph input (a view of a parameter) stays on device.
// CHECK-LABEL: joint.graph @view_of_graph_input_stays_on_device
// CHECK-NOT: ao.offload
// expected-remark @+2 {{selected 0 of 0 activation(s) in scope=attention}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 0 storage(s)}}
joint.graph @view_of_graph_input_stays_on_device(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %v = joint.call_function "aten::t.default"(%x) {name = "v", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [1, 4], offset = 0, device = "cuda:0", storage = 0>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %c = joint.call_function "aten::clone.default"(%v) {name = "c", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [1, 4], offset = 0, device = "cuda:0", storage = 0>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = joint.call_function "aten::mul.Tensor"(%c, %c) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// A storage written in place (schema `Tensor(a!)`, here through a view)
// stays on device: the reload would bring back a stale value.
joint.schema @"aten::add_.Tensor" {schema = "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>, #joint.arg<name = "other", type = "Tensor">, #joint.arg<name = "alpha", type = "Scalar", kwarg_only = true, default_value = "1">], returns = [#joint.arg<type = "Tensor", alias = "a", write = true>], is_mutable}
// CHECK-LABEL: joint.graph @storage_written_in_place_stays_on_device
// CHECK-NOT: ao.offload
// expected-remark @+2 {{selected 0 of 0 activation(s) in scope=attention}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 0 storage(s)}}
joint.graph @storage_written_in_place_stays_on_device(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %v = joint.call_function "aten::view.default"(%a) {name = "v", args = [#joint.operand<0>, [16]], result_meta = [#joint.tensor<[16], strides = [1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<16xf32>
  %w = joint.call_function "aten::add_.Tensor"(%v, %v) {name = "add_", result_meta = [#joint.tensor<[16], strides = [1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %g = joint.call_function "aten::mul.Tensor"(%a, %a) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// A write through an op that returns nothing is found from the
// schema's write mark.
joint.schema @"custom::bump_.default" {schema = "custom::bump_(Tensor(a!) x) -> ()", arguments = [#joint.arg<name = "x", type = "Tensor", alias = "a", write = true>], returns = [], is_mutable}
// CHECK-LABEL: joint.graph @write_through_op_returning_nothing_stays_on_device
// CHECK-NOT: ao.offload
// expected-remark @+2 {{selected 0 of 0 activation(s) in scope=attention}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 0 storage(s)}}
joint.graph @write_through_op_returning_nothing_stays_on_device(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.call_function "custom::bump_.default"(%a) {name = "bump_", result_meta = []} : (tensor<4x4xf32>) -> ()
  %g = joint.call_function "aten::mul.Tensor"(%a, %a) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// A write the schema cannot pin down (no table entry, in-place name) counts
// against every tensor operand.
// CHECK-LABEL: joint.graph @unresolved_write_is_conservative
// CHECK-NOT: ao.offload
// expected-remark @+2 {{selected 0 of 0 activation(s) in scope=attention}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 0 storage(s)}}
joint.graph @unresolved_write_is_conservative(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.call_function "custom::foo_.default"(%x, %a) {name = "foo_", result_meta = []} : (tensor<4x4xf32>, tensor<4x4xf32>) -> ()
  %g = joint.call_function "aten::mul.Tensor"(%a, %a) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// A storage returned by the graph (here through a view) stays on device.
// CHECK-LABEL: joint.graph @graph_output_storage_stays_on_device
// CHECK-NOT: ao.offload
// expected-remark @+2 {{selected 0 of 0 activation(s) in scope=attention}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 0 storage(s)}}
joint.graph @graph_output_storage_stays_on_device(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> (tensor<16xf32> {joint.role = #joint.role<output>}) {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %v = joint.call_function "aten::view.default"(%a) {name = "v", args = [#joint.operand<0>, [16]], result_meta = [#joint.tensor<[16], strides = [1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<16xf32>
  %g = joint.call_function "aten::mul.Tensor"(%a, %a) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output %v : tensor<16xf32>
}

// -----

// A value tagged for recompute does not stay saved: never offloaded,
// views included (nothing is both duplicated into backward and offloaded).
// CHECK-LABEL: joint.graph @recompute_tagged_value_is_never_offloaded
// CHECK-NOT: ao.offload
// expected-remark @+2 {{selected 0 of 0 activation(s) in scope=attention, 0 bytes; 1 tagged for recompute (never offloaded)}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 0 storage(s), 0 bytes, prefetched 0 reload(s)}}
joint.graph @recompute_tagged_value_is_never_offloaded(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %n = joint.call_function "aten::mul.Tensor"(%x, %x) {name = "n", module_stack = [#joint.module<"l0.self_attn", "Attention">], policy = #joint.policy<prefer_recompute>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %nv = joint.call_function "aten::view.default"(%n) {name = "nv", args = [#joint.operand<0>, [2, 8]], module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[2, 8], strides = [8, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<2x8xf32>
  %g = joint.call_function "aten::mul.Tensor"(%nv, %nv) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[2, 8], strides = [8, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %h = joint.call_function "aten::mul.Tensor"(%n, %n) {name = "h", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 3>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// An alias tagged must_recompute keeps its owner on device too.
// CHECK-LABEL: joint.graph @alias_tagged_for_recompute_keeps_owner_on_device
// CHECK-NOT: ao.offload
// expected-remark @+2 {{selected 0 of 0 activation(s) in scope=attention}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 0 storage(s)}}
joint.graph @alias_tagged_for_recompute_keeps_owner_on_device(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %n = joint.call_function "aten::mul.Tensor"(%x, %x) {name = "n", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %nv = joint.call_function "aten::view.default"(%n) {name = "nv", args = [#joint.operand<0>, [2, 8]], module_stack = [#joint.module<"l0.self_attn", "Attention">], policy = #joint.policy<must_recompute>, result_meta = [#joint.tensor<[2, 8], strides = [8, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<2x8xf32>
  %g = joint.call_function "aten::mul.Tensor"(%nv, %nv) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[2, 8], strides = [8, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  joint.output
}

// -----

// Save tags keep the value saved, so it may be offloaded.
// CHECK-LABEL: joint.graph @save_tagged_value_is_offloaded
// CHECK: ao.offload %n
// expected-remark @+2 {{selected 1 of 1 activation(s) in scope=attention}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 1 storage(s)}}
joint.graph @save_tagged_value_is_offloaded(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %n = joint.call_function "aten::mul.Tensor"(%x, %x) {name = "n", module_stack = [#joint.module<"l0.self_attn", "Attention">], policy = #joint.policy<must_save>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = joint.call_function "aten::mul.Tensor"(%n, %n) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// A value already offloaded is left alone (the pass is idempotent).
// CHECK-LABEL: joint.graph @already_offloaded_value_is_left_alone
// CHECK: ao.offload %a
// CHECK-NOT: ao.offload
// expected-remark @+2 {{selected 0 of 0 activation(s) in scope=attention}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 0 storage(s)}}
joint.graph @already_offloaded_value_is_left_alone(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %h = ao.offload %a : tensor<4x4xf32>
  %w = ao.wait_tensor %h keepalive %a : tensor<4x4xf32> last_use %a : tensor<4x4xf32> : tensor<4x4xf32>
  %b = joint.call_function "aten::neg.default"(%a) {name = "b", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = ao.reload %w to "cuda:0" : tensor<4x4xf32>
  %rw = ao.wait_tensor %r : tensor<4x4xf32>
  %g = joint.call_function "aten::mul.Tensor"(%rw, %b) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 3>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// A forward reader after the first backward reader would put the forward
// wait after the reload: skipped.
// CHECK-LABEL: joint.graph @forward_reader_after_backward_start_stays_on_device
// CHECK-NOT: ao.offload
// expected-remark @+2 {{selected 0 of 0 activation(s) in scope=attention}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 0 storage(s)}}
joint.graph @forward_reader_after_backward_start_stays_on_device(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = joint.call_function "aten::mul.Tensor"(%a, %a) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %f = joint.call_function "aten::neg.default"(%a) {name = "f", result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 3>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// A last forward reader without a tensor result gives the wait no tensor to
// depend on (torch's wait_tensor takes Tensor? last_use): skipped.
// CHECK-LABEL: joint.graph @last_reader_without_tensor_result_is_skipped
// CHECK-NOT: ao.offload
// expected-remark @+2 {{selected 0 of 0 activation(s) in scope=attention}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 0 storage(s)}}
joint.graph @last_reader_without_tensor_result_is_skipped(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = joint.call_function "aten::equal.default"(%a, %x) {name = "s", result_meta = [unit]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> i1
  %g = joint.call_function "aten::mul.Tensor"(%a, %a) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// A backward size query reads the forward SymInt (the query moves right
// after the producer), so an activation the backward reads only for its size
// is no candidate: nothing is transferred for it.
// CHECK-LABEL: joint.graph @size_query_is_no_backward_reader
// CHECK-NEXT: %a = joint.call_function "aten::mm.default"(%x, %x)
// CHECK-NEXT: %s = joint.call_function "aten::sym_size.int"(%a) {args = [#joint.operand<0>, 0], name = "s", result_meta = [#joint.sym<4>]}
// CHECK-NEXT: %b = joint.call_function "aten::gelu.default"(%a)
// CHECK-NEXT: %g = joint.call_function "aten::new_zeros.default"(%x, %s)
// CHECK-NOT: ao.
// expected-remark @+2 {{selected 0 of 0 activation(s) in scope=attention, 0 bytes}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 0 storage(s), 0 bytes, prefetched 0 reload(s)}}
joint.graph @size_query_is_no_backward_reader(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a = joint.call_function "aten::mm.default"(%x, %x) {name = "a", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = joint.call_function "aten::gelu.default"(%a) {name = "b", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = joint.call_function "aten::sym_size.int"(%a) {name = "s", args = [#joint.operand<0>, 0], phase = #joint.phase<backward>, result_meta = [#joint.sym<4>]} : (tensor<4x4xf32>) -> i64
  %g = joint.call_function "aten::new_zeros.default"(%x, %s) {name = "g", args = [#joint.operand<0>, [#joint.operand<1>]], phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4], strides = [1], offset = 0, device = "cuda:0", storage = 3>]} : (tensor<4x4xf32>, i64) -> tensor<4xf32>
  joint.output
}

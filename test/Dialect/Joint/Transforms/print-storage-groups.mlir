// StorageAliasAnalysis, seen through joint-print-storage-groups.
// RUN: joint-opt %s -split-input-file -joint-print-storage-groups -verify-diagnostics -o /dev/null

// Storage identity comes from the tracer's facts: `_unsafe_view` has no
// schema alias info but shares its input's storage.
joint.graph @unsafe_view_shares_storage_by_facts(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 0>}) -> (tensor<f32> {joint.role = #joint.role<loss>}) {
  // expected-remark @+1 {{storage 1 owner mm members [mm, _unsafe_view]}}
  %0 = joint.call_function "aten::mm.default"(%x, %x) {name = "mm", result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 1>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = joint.call_function "aten::_unsafe_view.default"(%0) {name = "_unsafe_view", args = [#joint.operand<0>, [16]], result_meta = [#joint.tensor<[16], strides = [1], offset = 0, device = "cpu", storage = 1>]} : (tensor<4x4xf32>) -> tensor<16xf32>
  %2 = joint.call_function "aten::sum.default"(%1) {name = "sum", result_meta = [#joint.tensor<[], strides = [], offset = 0, device = "cpu", storage = 2>]} : (tensor<16xf32>) -> tensor<f32>
  joint.output %2 : tensor<f32>
}

// -----

// Without facts, the schema decides: `t(Tensor(a) self) -> Tensor(a)`.
joint.schema @"aten::t.default" {schema = "aten::t(Tensor(a) self) -> Tensor(a)", arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a">], returns = [#joint.arg<type = "Tensor", alias = "a">]}
joint.schema @"aten::neg.default" {schema = "aten::neg(Tensor self) -> Tensor", arguments = [#joint.arg<name = "self", type = "Tensor">], returns = [#joint.arg<type = "Tensor">]}
// expected-remark @+1 {{storage -1 owner w members [w, t] graph-input}}
joint.graph @schema_alias_without_facts(%w: tensor<2x3xf32> {joint.role = #joint.role<param>, joint.fqn = "w", joint.name = "w"}) -> () {
  %0 = joint.call_function "aten::t.default"(%w) {name = "t"} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = joint.call_function "aten::neg.default"(%0) {name = "neg"} : (tensor<3x2xf32>) -> tensor<3x2xf32>
  joint.output
}

// -----

// Multi-output views (split) mark only the argument's after-set.
joint.schema @"aten::split.Tensor" {schema = "aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]", arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", alias_after = "*">, #joint.arg<name = "split_size", type = "SymInt">, #joint.arg<name = "dim", type = "int", default_value = "0">], returns = [#joint.arg<type = "Tensor[]">]}
joint.graph @split_outputs_alias_their_input(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  // expected-remark @+1 {{storage -2 owner neg members [neg, a, b]}}
  %0 = joint.call_function "aten::neg.default"(%x) {name = "neg"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %1:2 = joint.call_function "aten::split.Tensor"(%0) {name = "split", args = [#joint.operand<0>, 2], result_names = ["a", "b"]} : (tensor<4x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  joint.output
}

// -----

// In-place writes are found from the schema's write marks, also through a
// view (the base storage is written) and for ops that return nothing.
joint.schema @"aten::add_.Tensor" {schema = "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>, #joint.arg<name = "other", type = "Tensor">, #joint.arg<name = "alpha", type = "Scalar", kwarg_only = true, default_value = "1">], returns = [#joint.arg<type = "Tensor", alias = "a", write = true>], is_mutable}
joint.schema @"custom::bump_.default" {schema = "custom::bump_(Tensor(a!) x) -> ()", arguments = [#joint.arg<name = "x", type = "Tensor", alias = "a", write = true>], returns = [], is_mutable}
joint.graph @writes_from_schema_marks(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 0>}) -> () {
  // expected-remark @+1 {{storage 1 owner clone members [clone, view, add_] writers [add_]}}
  %0 = joint.call_function "aten::clone.default"(%x) {name = "clone", result_meta = [#joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 1>]} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = joint.call_function "aten::view.default"(%0) {name = "view", args = [#joint.operand<0>, [2, 2]], result_meta = [#joint.tensor<[2, 2], strides = [2, 1], offset = 0, device = "cpu", storage = 1>]} : (tensor<4xf32>) -> tensor<2x2xf32>
  %2 = joint.call_function "aten::add_.Tensor"(%1, %1) {name = "add_", result_meta = [#joint.tensor<[2, 2], strides = [2, 1], offset = 0, device = "cpu", storage = 1>]} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  // expected-remark @+1 {{storage 2 owner clone_1 members [clone_1] writers [bump_]}}
  %3 = joint.call_function "aten::clone.default"(%x) {name = "clone_1", result_meta = [#joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 2>]} : (tensor<4xf32>) -> tensor<4xf32>
  joint.call_function "custom::bump_.default"(%3) {name = "bump_", result_meta = []} : (tensor<4xf32>) -> ()
  joint.output
}

// -----

// A write the schema cannot pin down (no table entry, in-place name) counts
// against every tensor operand: skipping an offload costs memory, missing a
// write corrupts the reload.
joint.graph @unresolved_write_is_conservative(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %y: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "y"}) -> () {
  // expected-remark @+1 {{storage -3 owner a members [a] writers [foo_]}}
  %0 = joint.call_function "aten::exp.default"(%x) {name = "a"} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @+1 {{storage -4 owner b members [b] writers [foo_]}}
  %1 = joint.call_function "aten::exp.default"(%y) {name = "b"} : (tensor<4xf32>) -> tensor<4xf32>
  joint.call_function "custom::foo_.default"(%0, %1) {name = "foo_"} : (tensor<4xf32>, tensor<4xf32>) -> ()
  joint.output
}

// -----

// ao: each wait aliases what it waits on; offload and reload are new
// allocations (host and device copies). Returned values mark their storage
// as a graph output.
joint.graph @ao_results_and_outputs(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a"} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @+1 {{storage -3 owner ao.offload members [ao.offload, ao.wait_tensor]}}
  %h = ao.offload %a : tensor<4xf32>
  %w = ao.wait_tensor %h keepalive %a : tensor<4xf32> : tensor<4xf32>
  // expected-remark @+1 {{storage -4 owner ao.reload members [ao.reload, ao.wait_tensor] graph-output}}
  %r = ao.reload %w to "cpu" : tensor<4xf32>
  %rw = ao.wait_tensor %r : tensor<4xf32>
  joint.output %rw : tensor<4xf32>
}

// -----

// Storage identity is structural: a result recorded in the storage id
// of the value it reads joins that value's storage wherever a rewrite put
// it. A backward view of a reloaded value (a recompute clone of a forward
// view, say) lives in the reloaded allocation, not in the forward one.
joint.graph @view_of_reload_lives_in_the_reload(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 0>}) -> () {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", result_meta = [#joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 1>]} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @+1 {{storage -1 owner ao.offload members [ao.offload, ao.wait_tensor]}}
  %h = ao.offload %a : tensor<4xf32>
  %w = ao.wait_tensor %h keepalive %a : tensor<4xf32> last_use %a : tensor<4xf32> : tensor<4xf32>
  // expected-remark @+1 {{storage -2 owner ao.reload members [ao.reload, ao.wait_tensor, v]}}
  %r = ao.reload %w to "cpu" : tensor<4xf32>
  %rw = ao.wait_tensor %r : tensor<4xf32>
  %v = joint.call_function "aten::view.default"(%rw) {name = "v", args = [#joint.operand<0>, [2, 2]], phase = #joint.phase<backward>, result_meta = [#joint.tensor<[2, 2], strides = [2, 1], offset = 0, device = "cpu", storage = 1>]} : (tensor<4xf32>) -> tensor<2x2xf32>
  joint.output
}

// -----

// After offload: the applier renumbers the replayed views and backward
// aliases of the reloaded storage (here to 5) and records that id on the
// reload (`joint.storage`), so they live in the reload's storage (no
// allocation of their own, views for the cost model).
joint.graph @backward_view_reads_replayed_on_reload_in_forward_order(%x: tensor<4x4xf32> {joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>, joint.path = "x", joint.role = #joint.role<input>}) {
  // expected-remark @+1 {{storage 1 owner a members [a, u, tr]}}
  %a = joint.call_function "aten::mm.default"(%x, %x) {module_stack = [#joint.module<"l0.self_attn", "Attention">], name = "a", policy = #joint.policy<must_cpu_offload>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  // expected-remark @+1 {{storage -1 owner ao.offload members [ao.offload, ao.wait_tensor]}}
  %0 = ao.offload %a : tensor<4x4xf32>
  %u = joint.call_function "aten::_unsafe_view.default"(%a) {args = [#joint.operand<0>, [2, 8]], module_stack = [#joint.module<"l0.self_attn", "Attention">], name = "u", policy = #joint.policy<must_cpu_offload>, result_meta = [#joint.tensor<[2, 8], strides = [8, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<2x8xf32>
  %tr = joint.call_function "aten::transpose.int"(%u) {args = [#joint.operand<0>, 0, 1], module_stack = [#joint.module<"l0.self_attn", "Attention">], name = "tr", policy = #joint.policy<must_cpu_offload>, result_meta = [#joint.tensor<[8, 2], strides = [1, 8], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<2x8xf32>) -> tensor<8x2xf32>
  %f = joint.call_function "aten::neg.default"(%u) {name = "f", result_meta = [#joint.tensor<[2, 8], strides = [8, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = ao.wait_tensor %0 keepalive %a : tensor<4x4xf32> last_use %f : tensor<2x8xf32> : tensor<4x4xf32>
  // expected-remark @+1 {{storage -2 owner ao.reload members [ao.reload, ao.wait_tensor, u_reload, tr_reload, bt]}}
  %2 = ao.reload %1 to "cuda:0" {joint.storage = 5 : i64} : tensor<4x4xf32>
  %3 = ao.wait_tensor %2 keepalive %1 : tensor<4x4xf32> : tensor<4x4xf32>
  %u_reload = joint.call_function "aten::_unsafe_view.default"(%3) {args = [#joint.operand<0>, [2, 8]], module_stack = [#joint.module<"l0.self_attn", "Attention">], name = "u_reload", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[2, 8], strides = [8, 1], offset = 0, device = "cuda:0", storage = 5>]} : (tensor<4x4xf32>) -> tensor<2x8xf32>
  %tr_reload = joint.call_function "aten::transpose.int"(%u_reload) {args = [#joint.operand<0>, 0, 1], module_stack = [#joint.module<"l0.self_attn", "Attention">], name = "tr_reload", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[8, 2], strides = [1, 8], offset = 0, device = "cuda:0", storage = 5>]} : (tensor<2x8xf32>) -> tensor<8x2xf32>
  %g = joint.call_function "aten::mul.Tensor"(%tr_reload, %tr_reload) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[8, 2], strides = [2, 1], offset = 0, device = "cuda:0", storage = 3>]} : (tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<8x2xf32>
  %bt = joint.call_function "aten::t.default"(%3) {name = "bt", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [1, 4], offset = 0, device = "cuda:0", storage = 5>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %h = joint.call_function "aten::mm.default"(%bt, %x) {name = "h", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 4>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

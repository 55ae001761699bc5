// MemoryModel: hand-computed liveness, seen through joint-memory-report's
// JSON. f32 [4, 4] tensors are 64 B; the timeline lists the device bytes
// live during each op, graph inputs (resident) included.
// RUN: joint-opt %s -split-input-file -joint-memory-report="format=json output=-" -verify-diagnostics -o /dev/null | FileCheck %s

// A storage is sized by the furthest element any member reaches:
// (offset + 1 + sum (size_i - 1) * stride_i) * element size. The strided
// owner [2, 2] / [4, 1] spans 6 elements (24 B), not 4; its transpose is a
// view of the same 24 B. Peak: a (24) + b (16) during b.
// CHECK-LABEL: "graph": "view_shares_owner_storage_sized_by_extent"
// CHECK: "peak_bytes": 56,
// CHECK-NEXT: "peak_index": 2,
// CHECK-NEXT: "peak_op": "b",
// CHECK: "peak_transient_bytes": 40,
// CHECK-NEXT: "resident_bytes": {
// CHECK-NEXT: "total": 16,
// CHECK-NEXT: "param": 0,
// CHECK-NEXT: "buffer": 0,
// CHECK-NEXT: "input": 16
// CHECK: "activation_bytes": 0,
// CHECK: "device_bytes": [
// CHECK-NEXT: 40,
// CHECK-NEXT: 40,
// CHECK-NEXT: 56,
// CHECK-NEXT: 32
// CHECK-NEXT: ],
joint.graph @view_shares_owner_storage_sized_by_extent(%x: tensor<2x2xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[2, 2], strides = [2, 1], offset = 0, device = "cpu", storage = 0>}) -> (tensor<2x2xf32> {joint.role = #joint.role<output>}) {
  %a = joint.call_function "aten::empty_strided.default"() {name = "a", args = [[2, 2], [4, 1]], result_meta = [#joint.tensor<[2, 2], strides = [4, 1], offset = 0, device = "cpu", storage = 1>]} : () -> tensor<2x2xf32>
  %t = joint.call_function "aten::t.default"(%a) {name = "t", result_meta = [#joint.tensor<[2, 2], strides = [1, 4], offset = 0, device = "cpu", storage = 1>]} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %b = joint.call_function "aten::neg.default"(%t) {name = "b", result_meta = [#joint.tensor<[2, 2], strides = [2, 1], offset = 0, device = "cpu", storage = 2>]} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  joint.output %b : tensor<2x2xf32>
}

// -----

// An in-place write allocates nothing; its result keeps the written storage
// alive until the result's last use (mul). Transient per op: a 64 | a 64 |
// a+c 128 | a+c+e 192 | e 64.
joint.schema @"aten::add_.Tensor" {schema = "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>, #joint.arg<name = "other", type = "Tensor">, #joint.arg<name = "alpha", type = "Scalar", kwarg_only = true, default_value = "1">], returns = [#joint.arg<type = "Tensor", alias = "a", write = true>], is_mutable, tags = ["inplace", "pointwise"]}
// CHECK-LABEL: "graph": "inplace_write_extends_storage_not_bytes"
// CHECK: "peak_bytes": 256,
// CHECK-NEXT: "peak_index": 3,
// CHECK-NEXT: "peak_op": "e",
// CHECK: "device_bytes": [
// CHECK-NEXT: 128,
// CHECK-NEXT: 128,
// CHECK-NEXT: 192,
// CHECK-NEXT: 256,
// CHECK-NEXT: 128
// CHECK-NEXT: ],
joint.graph @inplace_write_extends_storage_not_bytes(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 0>}) -> (tensor<4x4xf32> {joint.role = #joint.role<output>}) {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %d = joint.call_function "aten::add_.Tensor"(%a, %x) {name = "d", result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 1>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %c = joint.call_function "aten::neg.default"(%x) {name = "c", result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 2>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = joint.call_function "aten::mul.Tensor"(%d, %c) {name = "e", result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 3>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output %e : tensor<4x4xf32>
}

// -----

// Each result of a multi-output op is its own storage: sort's values (64 B)
// and int64 indices (128 B) are both live during sort; the unused indices
// die right after it. Transient: 192 | 128 | 64.
// CHECK-LABEL: "graph": "multi_output_results_are_separate_storages"
// CHECK: "peak_bytes": 256,
// CHECK-NEXT: "peak_index": 0,
// CHECK-NEXT: "peak_op": "sort",
// CHECK: "device_bytes": [
// CHECK-NEXT: 256,
// CHECK-NEXT: 192,
// CHECK-NEXT: 128
// CHECK-NEXT: ],
joint.graph @multi_output_results_are_separate_storages(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 0>}) -> (tensor<4x4xf32> {joint.role = #joint.role<output>}) {
  %s:2 = joint.call_function "aten::sort.default"(%x) {name = "sort", args = [#joint.operand<0>, -1], result_names = ["values", "indices"], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 1>, #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 2>]} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xi64>)
  %n = joint.call_function "aten::neg.default"(%s#0) {name = "n", result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 3>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output %n : tensor<4x4xf32>
}

// -----

// Activations: forward storages still live at the first backward op (g).
// a (64), b (64) and the loss c (4) cross the boundary: 132 B; a and b are
// in block layers.0 (joint.model), layers.1 saves nothing. Transient:
// a 64 | +b 128 | +c 132 | +g 136 | +gb 200 | a c gb gw 196 | c gw 68.
// Resident: x (input) 64 + w (param) 64.
// CHECK-LABEL: "graph": "activations_live_across_boundary_by_block"
// CHECK: "boundary_index": 3,
// CHECK-NEXT: "peak_bytes": 328,
// CHECK-NEXT: "peak_index": 4,
// CHECK-NEXT: "peak_op": "gb",
// CHECK-NEXT: "peak_phase": "backward",
// CHECK-NEXT: "peak_transient_bytes": 200,
// CHECK-NEXT: "resident_bytes": {
// CHECK-NEXT: "total": 128,
// CHECK-NEXT: "param": 64,
// CHECK-NEXT: "buffer": 0,
// CHECK-NEXT: "input": 64
// CHECK-NEXT: },
// CHECK-NEXT: "activation_bytes": 132,
// CHECK: "block_source": "model",
// CHECK-NEXT: "blocks": [
// CHECK-NEXT: {
// CHECK-NEXT: "fqn": "layers.0",
// CHECK-NEXT: "activation_bytes": 128,
// CHECK: "fqn": "layers.1",
// CHECK-NEXT: "activation_bytes": 0,
// CHECK: "device_bytes": [
// CHECK-NEXT: 192,
// CHECK-NEXT: 256,
// CHECK-NEXT: 260,
// CHECK-NEXT: 264,
// CHECK-NEXT: 328,
// CHECK-NEXT: 324,
// CHECK-NEXT: 196
// CHECK-NEXT: ],
joint.graph @activations_live_across_boundary_by_block(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 0>}, %w: tensor<4x4xf32> {joint.role = #joint.role<param>, joint.fqn = "layers.0.w", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 10>}) -> (tensor<f32> {joint.role = #joint.role<loss>}, tensor<4x4xf32> {joint.role = #joint.role<grad>, joint.fqn = "layers.0.w"}) attributes {joint.model = {block_containers = [{blocks = ["layers.0", "layers.1"], container = "layers", owner = ""}]}} {
  %a = joint.call_function "aten::mm.default"(%x, %w) {name = "a", module_stack = [#joint.module<"layers.0", "Block">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 1>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = joint.call_function "aten::relu.default"(%a) {name = "b", module_stack = [#joint.module<"layers.0", "Block">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 2>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %c = joint.call_function "aten::sum.default"(%b) {name = "c", result_meta = [#joint.tensor<[], strides = [], offset = 0, device = "cpu", storage = 3>]} : (tensor<4x4xf32>) -> tensor<f32>
  %g = joint.call_function "aten::ones_like.default"(%c) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[], strides = [], offset = 0, device = "cpu", storage = 4>]} : (tensor<f32>) -> tensor<f32>
  %gb = joint.call_function "aten::mul.Tensor"(%b, %g) {name = "gb", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 5>]} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %gw = joint.call_function "aten::mm.default"(%gb, %a) {name = "gw", phase = #joint.phase<backward>, module_stack = [#joint.module<"layers.0", "Block">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 6>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output %c, %gw : tensor<f32>, tensor<4x4xf32>
}

// -----

// Offload: the device storage of a stays until its forward wait (the
// keepalive), then is free although the backward needed a: it reads the
// reload, a new device allocation at the reload. The host copy (64 B) lives
// from the offload to the reload's wait. Transient: a 64 | 64 | +b 128 |
// 128 (wait) | b c 68 | +g 72 | +r 136 | 136 | +gb 200 | b c gb gw 196 |
// c gw 68. Only b and c cross the boundary (68 B).
// CHECK-LABEL: "graph": "offload_frees_device_at_forward_wait"
// CHECK: "boundary_index": 5,
// CHECK-NEXT: "peak_bytes": 328,
// CHECK-NEXT: "peak_index": 8,
// CHECK-NEXT: "peak_op": "gb",
// CHECK: "activation_bytes": 68,
// CHECK-NEXT: "peak_host_bytes": 64,
// CHECK-NEXT: "offloaded_bytes": 64,
// CHECK: "offload_bytes": 64,
// CHECK-NEXT: "reload_bytes": 64,
// CHECK: "transfers": [
// CHECK-NEXT: {
// CHECK-NEXT: "op": "ao.offload(a)",
// CHECK-NEXT: "direction": "to_host",
// CHECK-NEXT: "bytes": 64,
// CHECK: "op": "ao.reload(a)",
// CHECK-NEXT: "direction": "to_device",
// CHECK: "fqn": "layers.0",
// CHECK-NEXT: "activation_bytes": 64,
// CHECK-NEXT: "offloaded_bytes": 64,
// CHECK: "op": [
// CHECK-NEXT: "a",
// CHECK-NEXT: "ao.offload(a)",
// CHECK-NEXT: "b",
// CHECK-NEXT: "ao.wait_tensor(a)",
// CHECK: "device_bytes": [
// CHECK-NEXT: 192,
// CHECK-NEXT: 192,
// CHECK-NEXT: 256,
// CHECK-NEXT: 256,
// CHECK-NEXT: 196,
// CHECK-NEXT: 200,
// CHECK-NEXT: 264,
// CHECK-NEXT: 264,
// CHECK-NEXT: 328,
// CHECK-NEXT: 324,
// CHECK-NEXT: 196
// CHECK-NEXT: ],
// CHECK-NEXT: "host_bytes": [
// CHECK-NEXT: 0,
// CHECK-NEXT: 64,
// CHECK-NEXT: 64,
// CHECK-NEXT: 64,
// CHECK-NEXT: 64,
// CHECK-NEXT: 64,
// CHECK-NEXT: 64,
// CHECK-NEXT: 64,
// CHECK-NEXT: 0,
// CHECK-NEXT: 0,
// CHECK-NEXT: 0
// CHECK-NEXT: ]
joint.graph @offload_frees_device_at_forward_wait(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 0>}, %w: tensor<4x4xf32> {joint.role = #joint.role<param>, joint.fqn = "layers.0.w", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 10>}) -> (tensor<f32> {joint.role = #joint.role<loss>}, tensor<4x4xf32> {joint.role = #joint.role<grad>, joint.fqn = "layers.0.w"}) attributes {joint.model = {block_containers = [{blocks = ["layers.0"], container = "layers", owner = ""}]}} {
  %a = joint.call_function "aten::mm.default"(%x, %w) {name = "a", module_stack = [#joint.module<"layers.0", "Block">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 1>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %h = ao.offload %a : tensor<4x4xf32>
  %b = joint.call_function "aten::relu.default"(%a) {name = "b", module_stack = [#joint.module<"layers.0", "Block">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 2>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %wt = ao.wait_tensor %h keepalive %a : tensor<4x4xf32> last_use %b : tensor<4x4xf32> : tensor<4x4xf32>
  %c = joint.call_function "aten::sum.default"(%b) {name = "c", result_meta = [#joint.tensor<[], strides = [], offset = 0, device = "cpu", storage = 3>]} : (tensor<4x4xf32>) -> tensor<f32>
  %g = joint.call_function "aten::ones_like.default"(%c) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[], strides = [], offset = 0, device = "cpu", storage = 4>]} : (tensor<f32>) -> tensor<f32>
  %r = ao.reload %wt to "cuda:0" : tensor<4x4xf32>
  %rw = ao.wait_tensor %r : tensor<4x4xf32>
  %gb = joint.call_function "aten::mul.Tensor"(%rw, %g) {name = "gb", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 5>]} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %gw = joint.call_function "aten::mm.default"(%gb, %b) {name = "gw", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 6>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output %c, %gw : tensor<f32>, tensor<4x4xf32>
}

// -----

// If the backward still reads the offloaded storage after the forward wait
// (a reader the offload pass did not redirect), the device bytes stay until
// that read: the offload saves nothing, and the report says so. a lives to
// gw (op 6), so it crosses the boundary: 64 + b 64 + c 4 = 132 B.
// CHECK-LABEL: "graph": "offload_still_read_after_wait_frees_nothing"
// CHECK: "activation_bytes": 132,
joint.graph @offload_still_read_after_wait_frees_nothing(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 0>}) -> (tensor<f32> {joint.role = #joint.role<loss>}, tensor<4x4xf32> {joint.role = #joint.role<output>}) {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  // expected-warning @+1 {{ao.offload(a) frees no device memory: 'gw' reads the offloaded storage after its forward ao.wait_tensor}}
  %h = ao.offload %a : tensor<4x4xf32>
  %b = joint.call_function "aten::relu.default"(%a) {name = "b", result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 2>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %wt = ao.wait_tensor %h keepalive %a : tensor<4x4xf32> last_use %b : tensor<4x4xf32> : tensor<4x4xf32>
  %c = joint.call_function "aten::sum.default"(%b) {name = "c", result_meta = [#joint.tensor<[], strides = [], offset = 0, device = "cpu", storage = 3>]} : (tensor<4x4xf32>) -> tensor<f32>
  %g = joint.call_function "aten::ones_like.default"(%c) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[], strides = [], offset = 0, device = "cpu", storage = 4>]} : (tensor<f32>) -> tensor<f32>
  %gw = joint.call_function "aten::mul.Tensor"(%a, %b) {name = "gw", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 5>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output %c, %gw : tensor<f32>, tensor<4x4xf32>
}

// -----

// Without joint.model, blocks are module-stack frames named
// `<container>.<int>` (outermost such frame, ModelStructure), in model order:
// by container, then index, whatever order the ops run in. Only a (h.1) is
// saved for the backward; b (h.0) dies in the forward.
// CHECK-LABEL: "graph": "blocks_from_module_stack_without_model"
// CHECK: "block_source": "module-stack",
// CHECK-NEXT: "blocks": [
// CHECK-NEXT: {
// CHECK-NEXT: "fqn": "h.0",
// CHECK-NEXT: "activation_bytes": 0,
// CHECK: "fqn": "h.1",
// CHECK-NEXT: "activation_bytes": 64,
joint.graph @blocks_from_module_stack_without_model(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 0>}) -> (tensor<4x4xf32> {joint.role = #joint.role<output>}) {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", module_stack = [#joint.module<"h", "ModuleList">, #joint.module<"h.1", "Block">, #joint.module<"h.1.mlp.0", "Linear">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = joint.call_function "aten::exp.default"(%x) {name = "b", module_stack = [#joint.module<"h.0", "Block">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 2>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = joint.call_function "aten::neg.default"(%b) {name = "e", result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 5>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %c = joint.call_function "aten::mul.Tensor"(%a, %a) {name = "c", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 3>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %d = joint.call_function "aten::mul.Tensor"(%c, %a) {name = "d", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 4>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output %d : tensor<4x4xf32>
}

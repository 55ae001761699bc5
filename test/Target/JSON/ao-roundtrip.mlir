// ao ops are written as ao:: nodes (torch.ops.ao schemas) and read back; their
// FX names survive; JSON -> MLIR -> JSON is the identity.
// RUN: joint-translate --export-joint-json %s -o %t.json
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: joint-translate --import-joint-json %t.json -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: joint-translate --export-joint-json %t.mlir | %json_equal %t.json -
// Trailing arguments left out take their schema defaults (None), as torch's
// `ao.wait_tensor(t)` and `ao.reload(t, device)` calls write them:
// RUN: %mutate %t.json raw 'text.replace(",{\"t\":\"none\"},{\"t\":\"none\"}]", "]")' > %t.short.json
// RUN: not grep -q '"t":"none"' %t.short.json
// RUN: joint-translate --import-joint-json %t.short.json | FileCheck %s
// RUN: joint-translate --import-joint-json %t.short.json | joint-translate --export-joint-json | %json_equal %t.json -

// JSON: {"args":[{"i":0,"t":"node","v":"mm"}],{{.*}}"name":"ao_offload",{{.*}}"target":"ao::offload.default"}
// JSON: {"args":[{"i":0,"t":"node","v":"ao_offload"},{"i":0,"t":"node","v":"mm"},{"i":0,"t":"node","v":"gelu"}],"backward":false,{{.*}}"name":"ao_wait_tensor",{{.*}}"target":"ao::wait_tensor.default"}
// JSON: {"args":[{"i":0,"t":"node","v":"ao_wait_tensor"},{"t":"device","v":"cuda:0"},{"t":"none"},{"t":"none"}],"backward":true,{{.*}}"name":"reload_0",{{.*}}"target":"ao::reload.default"}
// JSON: {"args":[{"i":0,"t":"node","v":"reload_0"},{"t":"none"},{"t":"none"}],"backward":true,{{.*}}"target":"ao::wait_tensor.default"}
// The torch.ops.ao schemas join the operator table.
// JSON: "ao::offload.default":{{.*}}"schema":"ao::offload(Tensor tensor) -> Tensor","tags":["pt2_compliant_tag"]}
// JSON: "ao::reload.default":{{.*}}"schema":"ao::reload(Tensor tensor, Device device, SymInt[]? original_size=None, SymInt[]? original_stride=None) -> Tensor"
// JSON: "ao::wait_tensor.default":{"args":[{"alias":["a"],{{.*}}"schema":"ao::wait_tensor(Tensor(a) tensor, Tensor? keepalive=None, Tensor? last_use_of_storage=None) -> Tensor(a)","tags":[]}

// CHECK: %[[A:.*]] = joint.call_function "aten::mm.default"
// CHECK-NEXT: %[[H:.*]] = ao.offload %[[A]] {name = "ao_offload"} : tensor<512x512xf32>
// CHECK-NEXT: %[[B:.*]] = joint.call_function "aten::gelu.default"(%[[A]])
// CHECK-NEXT: %[[W:.*]] = ao.wait_tensor %[[H]] keepalive %[[A]] : tensor<512x512xf32> last_use %[[B]] : tensor<512x512xf32> {name = "ao_wait_tensor"} : tensor<512x512xf32>
// CHECK-NEXT: %[[R:.*]] = ao.reload %[[W]] to "cuda:0" {joint.storage = 6 : i64, name = "reload_0"} : tensor<512x512xf32>
// CHECK-NEXT: %[[RW:.*]] = ao.wait_tensor %[[R]] {name = "ao_wait_tensor_1"} : tensor<512x512xf32>
// CHECK-NEXT: joint.call_function "aten::gelu_backward.default"(%[[B]], %[[RW]])
joint.schema @"aten::mm.default" {schema = "aten::mm(Tensor self, Tensor mat2) -> Tensor", arguments = [#joint.arg<name = "self", type = "Tensor">, #joint.arg<name = "mat2", type = "Tensor">], returns = [#joint.arg<type = "Tensor">]}
joint.schema @"aten::gelu.default" {schema = "aten::gelu(Tensor self, *, str approximate='none') -> Tensor", arguments = [#joint.arg<name = "self", type = "Tensor">, #joint.arg<name = "approximate", type = "str", kwarg_only = true, default_value = "'none'">], returns = [#joint.arg<type = "Tensor">]}
joint.schema @"aten::gelu_backward.default" {schema = "aten::gelu_backward(Tensor grad_output, Tensor self, *, str approximate='none') -> Tensor", arguments = [#joint.arg<name = "grad_output", type = "Tensor">, #joint.arg<name = "self", type = "Tensor">, #joint.arg<name = "approximate", type = "str", kwarg_only = true, default_value = "'none'">], returns = [#joint.arg<type = "Tensor">]}
joint.graph @offload_wait_reload_wait(%x: tensor<512x512xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %w: tensor<512x512xf32> {joint.role = #joint.role<param>, joint.fqn = "w"}) -> (tensor<512x512xf32> {joint.role = #joint.role<grad>, joint.fqn = "w"}) {
  %a = joint.call_function "aten::mm.default"(%x, %w) {name = "mm"} : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
  %h = ao.offload %a : tensor<512x512xf32>
  %b = joint.call_function "aten::gelu.default"(%a) {name = "gelu"} : (tensor<512x512xf32>) -> tensor<512x512xf32>
  %wt = ao.wait_tensor %h keepalive %a : tensor<512x512xf32> last_use %b : tensor<512x512xf32> : tensor<512x512xf32>
  %r = ao.reload %wt to "cuda:0" {name = "reload_0"} : tensor<512x512xf32>
  %rw = ao.wait_tensor %r : tensor<512x512xf32>
  %g = joint.call_function "aten::gelu_backward.default"(%b, %rw) {name = "gelu_backward", phase = #joint.phase<backward>} : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
  joint.output %g : tensor<512x512xf32>
}

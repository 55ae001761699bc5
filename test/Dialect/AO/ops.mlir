// RUN: joint-opt %s -split-input-file | FileCheck %s
// RUN: joint-opt %s -split-input-file -mlir-print-op-generic | joint-opt -split-input-file | FileCheck %s

// The full protocol: offload after the producer, forward wait after the last
// forward use (keepalive = source, last_use = that use), reload from the
// forward wait, backward wait before the first backward consumer.
// CHECK-LABEL: joint.graph @offload_wait_reload_wait
// CHECK: %[[A:.*]] = joint.call_function "aten::mm.default"
// CHECK-NEXT: %[[H:.*]] = ao.offload %[[A]] : tensor<512x512xf32>
// CHECK-NEXT: %[[B:.*]] = joint.call_function "aten::gelu.default"(%[[A]])
// CHECK-NEXT: %[[W:.*]] = ao.wait_tensor %[[H]] keepalive %[[A]] : tensor<512x512xf32> last_use %[[B]] : tensor<512x512xf32> : tensor<512x512xf32>
// CHECK: %[[R:.*]] = ao.reload %[[W]] to "cuda:0" : tensor<512x512xf32>
// CHECK-NEXT: %[[RW:.*]] = ao.wait_tensor %[[R]] : tensor<512x512xf32>
// CHECK-NEXT: joint.call_function "aten::gelu_backward.default"(%{{.*}}, %[[RW]])
joint.graph @offload_wait_reload_wait(%x: tensor<512x512xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %w: tensor<512x512xf32> {joint.role = #joint.role<param>, joint.fqn = "w"}) -> (tensor<512x512xf32> {joint.role = #joint.role<grad>, joint.fqn = "w"}) {
  %a = joint.call_function "aten::mm.default"(%x, %w) {name = "mm"} : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
  %h = ao.offload %a : tensor<512x512xf32>
  %b = joint.call_function "aten::gelu.default"(%a) {name = "gelu"} : (tensor<512x512xf32>) -> tensor<512x512xf32>
  %wt = ao.wait_tensor %h keepalive %a : tensor<512x512xf32> last_use %b : tensor<512x512xf32> : tensor<512x512xf32>
  %r = ao.reload %wt to "cuda:0" : tensor<512x512xf32>
  %rw = ao.wait_tensor %r : tensor<512x512xf32>
  %g = joint.call_function "aten::gelu_backward.default"(%b, %rw) {name = "gelu_backward", phase = #joint.phase<backward>} : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
  joint.output %g : tensor<512x512xf32>
}

// -----

// A multi-output last use: the wait depends on one specific result.
// CHECK-LABEL: joint.graph @multi_output_last_use
// CHECK: %[[S:[a-z_0-9]*]], %{{.*}} = joint.call_function "aten::sort.default"
// CHECK: ao.wait_tensor %{{.*}} keepalive %{{.*}} : tensor<1024x1024xf32> last_use %[[S]] : tensor<1024x1024xf32> : tensor<1024x1024xf32>
joint.graph @multi_output_last_use(%x: tensor<1024x1024xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1024x1024xf32> {joint.role = #joint.role<output>}) {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a"} : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %h = ao.offload %a : tensor<1024x1024xf32>
  %s:2 = joint.call_function "aten::sort.default"(%a) {name = "sort", args = [#joint.operand<0>, -1], result_names = ["getitem", "getitem_1"]} : (tensor<1024x1024xf32>) -> (tensor<1024x1024xf32>, tensor<1024x1024xi64>)
  %wt = ao.wait_tensor %h keepalive %a : tensor<1024x1024xf32> last_use %s#0 : tensor<1024x1024xf32> : tensor<1024x1024xf32>
  %r = ao.reload %wt to "cpu" : tensor<1024x1024xf32>
  %rw = ao.wait_tensor %r : tensor<1024x1024xf32>
  joint.output %rw : tensor<1024x1024xf32>
}

// -----

// Tensor facts of ao results are those of the offloaded source; reload may
// carry explicit size/stride.
// CHECK-LABEL: joint.graph @reload_with_size_and_stride
// CHECK: ao.reload %{{.*}} to "cuda:0" {size = [4, 4], stride = [4, 1]} : tensor<4x4xf32>
joint.graph @reload_with_size_and_stride(%a: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "a"}) -> (tensor<4x4xf32> {joint.role = #joint.role<output>}) {
  %h = ao.offload %a : tensor<4x4xf32>
  %wt = ao.wait_tensor %h keepalive %a : tensor<4x4xf32> : tensor<4x4xf32>
  %r = ao.reload %wt to "cuda:0" {size = [4, 4], stride = [4, 1]} : tensor<4x4xf32>
  %rw = ao.wait_tensor %r : tensor<4x4xf32>
  joint.output %rw : tensor<4x4xf32>
}

// -----

// The reload's wait may keep the host tensor alive until the copy back has
// finished (torch: gpu = ao.wait_tensor(gpu, keepalive=cpu)).
// CHECK-LABEL: joint.graph @reload_wait_keeps_host_tensor_alive
// CHECK: %[[W:.*]] = ao.wait_tensor %{{.*}} keepalive
// CHECK: %[[R:.*]] = ao.reload %[[W]]
// CHECK: ao.wait_tensor %[[R]] keepalive %[[W]] : tensor<4x4xf32> : tensor<4x4xf32>
joint.graph @reload_wait_keeps_host_tensor_alive(%a: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "a"}) -> (tensor<4x4xf32> {joint.role = #joint.role<output>}) {
  %h = ao.offload %a : tensor<4x4xf32>
  %wt = ao.wait_tensor %h keepalive %a : tensor<4x4xf32> : tensor<4x4xf32>
  %r = ao.reload %wt to "cuda:0" : tensor<4x4xf32>
  %rw = ao.wait_tensor %r keepalive %wt : tensor<4x4xf32> : tensor<4x4xf32>
  joint.output %rw : tensor<4x4xf32>
}

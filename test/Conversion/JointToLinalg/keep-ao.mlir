// convert-joint-to-linalg{keep-ao} (the CUDA pipeline): ao ops stay for
// joint-gpu-offload, on converted operands; unnamed ones are named after
// their source node for the runtime's messages; named ones keep their name.
// RUN: joint-opt %s -convert-joint-to-linalg=keep-ao | FileCheck %s

// CHECK-LABEL: func.func @kept(%arg0: tensor<4xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %0 = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%arg0 : tensor<4xf32>) outs(%0 : tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%in: f32, %out: f32):
// CHECK-NEXT: %8 = math.exp %in : f32
// CHECK-NEXT: linalg.yield %8 : f32
// CHECK-NEXT: } -> tensor<4xf32>
// CHECK-NEXT: %2 = ao.offload %1 {name = "a_offload"} : tensor<4xf32>
// CHECK-NEXT: %3 = ao.wait_tensor %2 keepalive %1 : tensor<4xf32> {name = "a_offload_wait"} : tensor<4xf32>
// CHECK-NEXT: %4 = ao.reload %3 to "cuda:0" {name = "a_reload"} : tensor<4xf32>
// CHECK-NEXT: %5 = ao.wait_tensor %4 {name = "a_reload_wait"} : tensor<4xf32>
// CHECK-NEXT: %6 = ao.offload %arg0 {name = "named"} : tensor<4xf32>
// CHECK-NEXT: %7 = ao.wait_tensor %6 keepalive %arg0 : tensor<4xf32> {name = "named_wait"} : tensor<4xf32>
// CHECK-NEXT: return %5 : tensor<4xf32>
// CHECK-NEXT: }

joint.graph @kept(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a"} : (tensor<4xf32>) -> tensor<4xf32>
  %h = ao.offload %a : tensor<4xf32>
  %w = ao.wait_tensor %h keepalive %a : tensor<4xf32> : tensor<4xf32>
  %r = ao.reload %w to "cuda:0" : tensor<4xf32>
  %rw = ao.wait_tensor %r : tensor<4xf32>
  %n = ao.offload %x {name = "named"} : tensor<4xf32>
  %nw = ao.wait_tensor %n keepalive %x : tensor<4xf32> : tensor<4xf32>
  joint.output %rw : tensor<4xf32>
}

// ao.offload / ao.reload on the CPU: real copies into separately allocated
// buffers (alloc_tensor + materialize_in_destination); wait_tensor is a no-op.
// RUN: joint-opt %s -split-input-file -convert-joint-to-linalg | FileCheck %s

// CHECK-DAG: #[[MAP:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @offload_and_reload_copy_into_fresh_buffers(
// CHECK-SAME: %[[ARG0:[a-zA-Z0-9_-]+]]: tensor<4x?xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<4x?xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[C1:[a-zA-Z0-9_-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[DIM:[a-zA-Z0-9_-]+]] = tensor.dim %[[ARG0]], %[[C1]] : tensor<4x?xf32>
// CHECK-NEXT: %[[V0:[a-zA-Z0-9_-]+]] = tensor.empty(%[[DIM]]) : tensor<4x?xf32>
// CHECK-NEXT: %[[V1:[a-zA-Z0-9_-]+]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP]]], iterator_types = ["parallel", "parallel"]} ins(%[[ARG0]] : tensor<4x?xf32>) outs(%[[V0]] : tensor<4x?xf32>) {
// CHECK-NEXT: ^bb0(%[[IN:[a-zA-Z0-9_-]+]]: f32, %[[OUT:[a-zA-Z0-9_-]+]]: f32):
// CHECK-NEXT: %[[V8:[a-zA-Z0-9_-]+]] = math.exp %[[IN]] : f32
// CHECK-NEXT: linalg.yield %[[V8]] : f32
// CHECK-NEXT: } -> tensor<4x?xf32>
// CHECK-NEXT: %[[C1_0:[a-zA-Z0-9_-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[DIM_1:[a-zA-Z0-9_-]+]] = tensor.dim %[[V1]], %[[C1_0]] : tensor<4x?xf32>
// CHECK-NEXT: %[[V2:[a-zA-Z0-9_-]+]] = bufferization.alloc_tensor(%[[DIM_1]]) : tensor<4x?xf32>
// CHECK-NEXT: %[[V3:[a-zA-Z0-9_-]+]] = bufferization.materialize_in_destination %[[V1]] in %[[V2]] : (tensor<4x?xf32>, tensor<4x?xf32>) -> tensor<4x?xf32>
// CHECK-NEXT: %[[C1_2:[a-zA-Z0-9_-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[DIM_3:[a-zA-Z0-9_-]+]] = tensor.dim %[[V1]], %[[C1_2]] : tensor<4x?xf32>
// CHECK-NEXT: %[[V4:[a-zA-Z0-9_-]+]] = tensor.empty(%[[DIM_3]]) : tensor<4x?xf32>
// CHECK-NEXT: %[[V5:[a-zA-Z0-9_-]+]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP]]], iterator_types = ["parallel", "parallel"]} ins(%[[V1]] : tensor<4x?xf32>) outs(%[[V4]] : tensor<4x?xf32>) {
// CHECK-NEXT: ^bb0(%[[IN]]: f32, %[[OUT]]: f32):
// CHECK-NEXT: %[[V8]] = arith.negf %[[IN]] : f32
// CHECK-NEXT: linalg.yield %[[V8]] : f32
// CHECK-NEXT: } -> tensor<4x?xf32>
// CHECK-NEXT: %[[C1_4:[a-zA-Z0-9_-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[DIM_5:[a-zA-Z0-9_-]+]] = tensor.dim %[[V3]], %[[C1_4]] : tensor<4x?xf32>
// CHECK-NEXT: %[[V6:[a-zA-Z0-9_-]+]] = bufferization.alloc_tensor(%[[DIM_5]]) : tensor<4x?xf32>
// CHECK-NEXT: %[[V7:[a-zA-Z0-9_-]+]] = bufferization.materialize_in_destination %[[V3]] in %[[V6]] : (tensor<4x?xf32>, tensor<4x?xf32>) -> tensor<4x?xf32>
// CHECK-NEXT: return %[[V7]] : tensor<4x?xf32>
joint.graph @offload_and_reload_copy_into_fresh_buffers(%x: tensor<4x?xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4x?xf32> {joint.role = #joint.role<output>}) {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a"} : (tensor<4x?xf32>) -> tensor<4x?xf32>
  %h = ao.offload %a {name = "offload_a"} : tensor<4x?xf32>
  %b = joint.call_function "aten::neg.default"(%a) {name = "b"} : (tensor<4x?xf32>) -> tensor<4x?xf32>
  %wt = ao.wait_tensor %h keepalive %a : tensor<4x?xf32> last_use %b : tensor<4x?xf32> : tensor<4x?xf32>
  %r = ao.reload %wt to "cpu" : tensor<4x?xf32>
  %rw = ao.wait_tensor %r : tensor<4x?xf32>
  joint.output %rw : tensor<4x?xf32>
}

// convolution: zero padding with tensor.pad, channels split into (group,
// channel) by expand_shape, one generic in the form of linalg's named
// convolutions (input read at o * stride + k * dilation), merged back.
// RUN: joint-opt %s -convert-joint-to-linalg -canonicalize -mlir-print-local-scope | FileCheck %s

// CHECK-LABEL: func.func @conv1d_groups
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x4x8xf32> {{.*}}, %[[W:[^:]+]]: tensor<6x2x3xf32>
// CHECK: %[[P:.+]] = tensor.pad %[[X]] low[0, 0, 1] high[0, 0, 1]
// CHECK: } : tensor<1x4x8xf32> to tensor<1x4x10xf32>
// CHECK-NEXT: %[[XE:.+]] = tensor.expand_shape %[[P]] {{\[\[}}0], [1, 2], [3]] output_shape [1, 2, 2, 10] : tensor<1x4x10xf32> into tensor<1x2x2x10xf32>
// CHECK-NEXT: %[[WE:.+]] = tensor.expand_shape %[[W]] {{\[\[}}0, 1], [2], [3]] output_shape [2, 3, 2, 3] : tensor<6x2x3xf32> into tensor<2x3x2x3xf32>
// CHECK: %[[Z:.+]] = linalg.fill {{.*}} -> tensor<1x2x3x3xf32>
// CHECK-NEXT: %[[S:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d3 * 2 + d5 * 2)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d2, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[XE]], %[[WE]] : tensor<1x2x2x10xf32>, tensor<2x3x2x3xf32>) outs(%[[Z]] : tensor<1x2x3x3xf32>)
// CHECK-NEXT: ^bb0(%[[A:.+]]: f32, %[[B:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT: %[[M:.+]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[N:.+]] = arith.addf %[[ACC]], %[[M]] : f32
// CHECK-NEXT: linalg.yield %[[N]] : f32
// CHECK: %[[R:.+]] = tensor.collapse_shape %[[S]] {{\[\[}}0], [1, 2], [3]] : tensor<1x2x3x3xf32> into tensor<1x6x3xf32>
// CHECK-NEXT: return %[[R]] : tensor<1x6x3xf32>
joint.graph @conv1d_groups(%x: tensor<1x4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %w: tensor<6x2x3xf32> {joint.role = #joint.role<param>, joint.fqn = "w"}) -> (tensor<1x6x3xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::convolution.default"(%x, %w) {args = [#joint.operand<0>, #joint.operand<1>, unit, [2], [1], [2], false, [0], 2], name = "conv"} : (tensor<1x4x8xf32>, tensor<6x2x3xf32>) -> tensor<1x6x3xf32>
  joint.output %0 : tensor<1x6x3xf32>
}

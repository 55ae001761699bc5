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

// Transposed (stride 2, padding 1, output_padding 1, groups 2; weight
// [C_in, C_out / groups, k...]): the forward is the gather of a convolution's
// grad_input over the padded output (6 + 2 = 8, 4 + 2 = 6; x read at
// (q - k) / 2 when exact and in range), cropped at the padding, bias added.
// CHECK-LABEL: func.func @tconv2d
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x4x3x2xf32> {{.*}}, %[[W:[^:]+]]: tensor<4x3x3x3xf32> {{.*}}, %[[B:[^:]+]]: tensor<6xf32>
// CHECK-DAG: %[[C3:.+]] = arith.constant 3 : index
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[XE:.+]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [1, 2, 2, 3, 2] : tensor<1x4x3x2xf32> into tensor<1x2x2x3x2xf32>
// CHECK-NEXT: %[[WE:.+]] = tensor.expand_shape %[[W]] {{\[\[}}0, 1], [2], [3], [4]] output_shape [2, 2, 3, 3, 3] : tensor<4x3x3x3xf32> into tensor<2x2x3x3x3xf32>
// CHECK: %[[Z:.+]] = linalg.fill {{.*}} -> tensor<1x2x3x8x6xf32>
// CHECK-NEXT: %[[S:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d5, d2, d6, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[WE]] : tensor<2x2x3x3x3xf32>) outs(%[[Z]] : tensor<1x2x3x8x6xf32>)
// CHECK-NEXT: ^bb0(%[[WV:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT: %[[G:.+]] = linalg.index 1 : index
// CHECK-NEXT: %[[F:.+]] = linalg.index 5 : index
// CHECK-NEXT: %[[Q0:.+]] = linalg.index 3 : index
// CHECK-NEXT: %[[K0:.+]] = linalg.index 6 : index
// CHECK-NEXT: %[[T0:.+]] = arith.subi %[[Q0]], %[[K0]] : index
// CHECK-NEXT: %[[O0:.+]] = arith.divsi %[[T0]], %[[C2]] : index
// CHECK-NEXT: %[[R0:.+]] = arith.remsi %[[T0]], %[[C2]] : index
// CHECK-NEXT: %[[E0:.+]] = arith.cmpi eq, %[[R0]], %[[C0]] : index
// CHECK-NEXT: %[[P0:.+]] = arith.cmpi sge, %[[T0]], %[[C0]] : index
// CHECK-NEXT: %[[A0:.+]] = arith.andi %[[P0]], %[[E0]] : i1
// CHECK-NEXT: %[[L0:.+]] = arith.cmpi slt, %[[O0]], %[[C3]] : index
// CHECK-NEXT: %[[V0:.+]] = arith.andi %[[A0]], %[[L0]] : i1
// CHECK-NEXT: %[[Q1:.+]] = linalg.index 4 : index
// CHECK-NEXT: %[[K1:.+]] = linalg.index 7 : index
// CHECK-NEXT: %[[T1:.+]] = arith.subi %[[Q1]], %[[K1]] : index
// CHECK-NEXT: %[[O1:.+]] = arith.divsi %[[T1]], %[[C2]] : index
// CHECK-NEXT: %[[R1:.+]] = arith.remsi %[[T1]], %[[C2]] : index
// CHECK-NEXT: %[[E1:.+]] = arith.cmpi eq, %[[R1]], %[[C0]] : index
// CHECK-NEXT: %[[P1:.+]] = arith.cmpi sge, %[[T1]], %[[C0]] : index
// CHECK-NEXT: %[[A1:.+]] = arith.andi %[[P1]], %[[E1]] : i1
// CHECK-NEXT: %[[L1:.+]] = arith.cmpi slt, %[[O1]], %[[C2]] : index
// CHECK-NEXT: %[[V1:.+]] = arith.andi %[[A1]], %[[L1]] : i1
// CHECK-NEXT: %[[V:.+]] = arith.andi %[[V0]], %[[V1]] : i1
// CHECK-NEXT: %[[I0:.+]] = arith.select %[[V]], %[[O0]], %[[C0]] : index
// CHECK-NEXT: %[[I1:.+]] = arith.select %[[V]], %[[O1]], %[[C0]] : index
// CHECK-NEXT: %[[XV:.+]] = tensor.extract %[[XE]][%[[C0]], %[[G]], %[[F]], %[[I0]], %[[I1]]] : tensor<1x2x2x3x2xf32>
// CHECK-NEXT: %[[M:.+]] = arith.mulf %[[XV]], %[[WV]] : f32
// CHECK-NEXT: %[[N:.+]] = arith.addf %[[ACC]], %[[M]] : f32
// CHECK-NEXT: %[[Y:.+]] = arith.select %[[V]], %[[N]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[Y]] : f32
// CHECK: %[[SM:.+]] = tensor.collapse_shape %[[S]] {{\[\[}}0], [1, 2], [3], [4]] : tensor<1x2x3x8x6xf32> into tensor<1x6x8x6xf32>
// CHECK-NEXT: %[[CR:.+]] = tensor.extract_slice %[[SM]][0, 0, 1, 1] [1, 6, 6, 4] [1, 1, 1, 1] : tensor<1x6x8x6xf32> to tensor<1x6x6x4xf32>
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], {{.*}}} ins(%[[CR]], %[[B]] : tensor<1x6x6x4xf32>, tensor<6xf32>)
// CHECK-NEXT: ^bb0(%[[SV:.+]]: f32, %[[BV:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[SB:.+]] = arith.addf %[[SV]], %[[BV]] : f32
// CHECK-NEXT: linalg.yield %[[SB]] : f32
// CHECK: return %[[R]] : tensor<1x6x6x4xf32>
joint.graph @tconv2d(%x: tensor<1x4x3x2xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %w: tensor<4x3x3x3xf32> {joint.role = #joint.role<param>, joint.fqn = "w"}, %b: tensor<6xf32> {joint.role = #joint.role<param>, joint.fqn = "b"}) -> (tensor<1x6x6x4xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::convolution.default"(%x, %w, %b) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>, [2, 2], [1, 1], [1, 1], true, [1, 1], 2], name = "tconv"} : (tensor<1x4x3x2xf32>, tensor<4x3x3x3xf32>, tensor<6xf32>) -> tensor<1x6x6x4xf32>
  joint.output %0 : tensor<1x6x6x4xf32>
}

// Its backward: grad_input is a convolution of the padded grad_output with
// the same weight (read at o * 2 + k), grad_weight the same product reduced
// over (n, o), grad_bias a sum over every dim but the channel.
// CHECK-LABEL: func.func @tconv2d_backward
// CHECK-SAME: (%[[GO:[^:]+]]: tensor<1x6x6x4xf32> {{.*}}, %[[X:[^:]+]]: tensor<1x4x3x2xf32> {{.*}}, %[[W:[^:]+]]: tensor<4x3x3x3xf32>
// CHECK: %[[WE:.+]] = tensor.expand_shape %[[W]] {{\[\[}}0, 1], [2], [3], [4]] output_shape [2, 2, 3, 3, 3] : tensor<4x3x3x3xf32> into tensor<2x2x3x3x3xf32>
// CHECK-NEXT: %[[P:.+]] = tensor.pad %[[GO]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: } : tensor<1x6x6x4xf32> to tensor<1x6x8x6xf32>
// CHECK-NEXT: %[[GE:.+]] = tensor.expand_shape %[[P]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [1, 2, 3, 8, 6] : tensor<1x6x8x6xf32> into tensor<1x2x3x8x6xf32>
// CHECK: %[[Z0:.+]] = linalg.fill {{.*}} -> tensor<1x2x2x3x2xf32>
// CHECK-NEXT: %[[DX:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, d3 * 2 + d6, d4 * 2 + d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[GE]], %[[WE]] : tensor<1x2x3x8x6xf32>, tensor<2x2x3x3x3xf32>) outs(%[[Z0]] : tensor<1x2x2x3x2xf32>)
// CHECK-NEXT: ^bb0(%[[A:.+]]: f32, %[[B:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT: %[[M:.+]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[N:.+]] = arith.addf %[[ACC]], %[[M]] : f32
// CHECK-NEXT: linalg.yield %[[N]] : f32
// CHECK: %[[DXM:.+]] = tensor.collapse_shape %[[DX]] {{\[\[}}0], [1, 2], [3], [4]] : tensor<1x2x2x3x2xf32> into tensor<1x4x3x2xf32>
// CHECK-NEXT: %[[XE:.+]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [1, 2, 2, 3, 2] : tensor<1x4x3x2xf32> into tensor<1x2x2x3x2xf32>
// CHECK: %[[Z1:.+]] = linalg.fill {{.*}} -> tensor<2x2x3x3x3xf32>
// CHECK-NEXT: %[[DW:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d0, d2, d6 * 2 + d3, d7 * 2 + d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d0, d1, d6, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[GE]], %[[XE]] : tensor<1x2x3x8x6xf32>, tensor<1x2x2x3x2xf32>) outs(%[[Z1]] : tensor<2x2x3x3x3xf32>)
// CHECK-NEXT: ^bb0(%[[A2:.+]]: f32, %[[B2:.+]]: f32, %[[ACC2:.+]]: f32):
// CHECK-NEXT: %[[M2:.+]] = arith.mulf %[[A2]], %[[B2]] : f32
// CHECK-NEXT: %[[N2:.+]] = arith.addf %[[ACC2]], %[[M2]] : f32
// CHECK-NEXT: linalg.yield %[[N2]] : f32
// CHECK: %[[DWM:.+]] = tensor.collapse_shape %[[DW]] {{\[\[}}0, 1], [2], [3], [4]] : tensor<2x2x3x3x3xf32> into tensor<4x3x3x3xf32>
// CHECK: %[[DB:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%[[GO]] : tensor<1x6x6x4xf32>)
// CHECK: return %[[DXM]], %[[DWM]], %[[DB]] : tensor<1x4x3x2xf32>, tensor<4x3x3x3xf32>, tensor<6xf32>
joint.graph @tconv2d_backward(%go: tensor<1x6x6x4xf32> {joint.role = #joint.role<input>, joint.path = "go"}, %x: tensor<1x4x3x2xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %w: tensor<4x3x3x3xf32> {joint.role = #joint.role<param>, joint.fqn = "w"}) -> (tensor<1x4x3x2xf32> {joint.role = #joint.role<output>}, tensor<4x3x3x3xf32> {joint.role = #joint.role<output>}, tensor<6xf32> {joint.role = #joint.role<output>}) {
  %0:3 = joint.call_function "aten::convolution_backward.default"(%go, %x, %w) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>, [6], [2, 2], [1, 1], [1, 1], true, [1, 1], 2, [true, true, true]], name = "tconv_bwd"} : (tensor<1x6x6x4xf32>, tensor<1x4x3x2xf32>, tensor<4x3x3x3xf32>) -> (tensor<1x4x3x2xf32>, tensor<4x3x3x3xf32>, tensor<6xf32>)
  joint.output %0#0, %0#1, %0#2 : tensor<1x4x3x2xf32>, tensor<4x3x3x3xf32>, tensor<6xf32>
}

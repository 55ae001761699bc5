// Pointwise aten ops: one linalg.generic each, operands broadcast through
// their indexing maps, tensor operands cast to the result dtype, computed in
// torch's CPU opmath type (bf16 in f32, rounded once), scalars as constants.
// RUN: joint-opt %s -split-input-file -convert-joint-to-linalg | FileCheck %s

// CHECK-DAG: #[[MAP:.+]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @sub_alpha_scales_other_and_scalar_is_a_constant(
// CHECK-SAME: %[[ARG0:[a-zA-Z0-9_-]+]]: tensor<4xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[ARG1:[a-zA-Z0-9_-]+]]: tensor<4xf32> {joint.path = "y", joint.role = #joint.role<input>}) -> (tensor<4xf32> {joint.role = #joint.role<output>}, tensor<4xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[CST:[a-zA-Z0-9_-]+]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[V0:[a-zA-Z0-9_-]+]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[V1:[a-zA-Z0-9_-]+]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP]], #[[MAP]]], iterator_types = ["parallel"]} ins(%[[ARG0]], %[[ARG1]] : tensor<4xf32>, tensor<4xf32>) outs(%[[V0]] : tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[IN:[a-zA-Z0-9_-]+]]: f32, %[[IN_1:[a-zA-Z0-9_-]+]]: f32, %[[OUT:[a-zA-Z0-9_-]+]]: f32):
// CHECK-NEXT: %[[V4:[a-zA-Z0-9_-]+]] = arith.mulf %[[CST]], %[[IN_1]] : f32
// CHECK-NEXT: %[[V5:[a-zA-Z0-9_-]+]] = arith.subf %[[IN]], %[[V4]] : f32
// CHECK-NEXT: linalg.yield %[[V5]] : f32
// CHECK-NEXT: } -> tensor<4xf32>
// CHECK-NEXT: %[[CST_0:[a-zA-Z0-9_-]+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[V2:[a-zA-Z0-9_-]+]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[V3:[a-zA-Z0-9_-]+]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP]]], iterator_types = ["parallel"]} ins(%[[V1]] : tensor<4xf32>) outs(%[[V2]] : tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[IN]]: f32, %[[OUT]]: f32):
// CHECK-NEXT: %[[V4]] = arith.mulf %[[IN]], %[[CST_0]] : f32
// CHECK-NEXT: linalg.yield %[[V4]] : f32
// CHECK-NEXT: } -> tensor<4xf32>
// CHECK-NEXT: return %[[V1]], %[[V3]] : tensor<4xf32>, tensor<4xf32>
joint.graph @sub_alpha_scales_other_and_scalar_is_a_constant(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %y: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "y"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}, tensor<4xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::sub.Tensor"(%x, %y) {args = [#joint.operand<0>, #joint.operand<1>], kwargs = {alpha = 2 : i64}, name = "sub"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = joint.call_function "aten::mul.Scalar"(%0) {args = [#joint.operand<0>, 5.000000e-01], name = "mul"} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-DAG: #[[MAP:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @bf16_computes_in_f32_and_rounds_once(
// CHECK-SAME: %[[ARG0:[a-zA-Z0-9_-]+]]: tensor<2x?xbf16> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<2x?xbf16> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[C1:[a-zA-Z0-9_-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[DIM:[a-zA-Z0-9_-]+]] = tensor.dim %[[ARG0]], %[[C1]] : tensor<2x?xbf16>
// CHECK-NEXT: %[[V0:[a-zA-Z0-9_-]+]] = tensor.empty(%[[DIM]]) : tensor<2x?xbf16>
// CHECK-NEXT: %[[V1:[a-zA-Z0-9_-]+]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP]]], iterator_types = ["parallel", "parallel"]} ins(%[[ARG0]] : tensor<2x?xbf16>) outs(%[[V0]] : tensor<2x?xbf16>) {
// CHECK-NEXT: ^bb0(%[[IN:[a-zA-Z0-9_-]+]]: bf16, %[[OUT:[a-zA-Z0-9_-]+]]: bf16):
// CHECK-NEXT: %[[V2:[a-zA-Z0-9_-]+]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT: %[[CST:[a-zA-Z0-9_-]+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[V3:[a-zA-Z0-9_-]+]] = arith.negf %[[V2]] : f32
// CHECK-NEXT: %[[V4:[a-zA-Z0-9_-]+]] = math.exp %[[V3]] : f32
// CHECK-NEXT: %[[V5:[a-zA-Z0-9_-]+]] = arith.addf %[[CST]], %[[V4]] : f32
// CHECK-NEXT: %[[V6:[a-zA-Z0-9_-]+]] = arith.divf %[[V2]], %[[V5]] : f32
// CHECK-NEXT: %[[V7:[a-zA-Z0-9_-]+]] = arith.truncf %[[V6]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[V7]] : bf16
// CHECK-NEXT: } -> tensor<2x?xbf16>
// CHECK-NEXT: return %[[V1]] : tensor<2x?xbf16>
joint.graph @bf16_computes_in_f32_and_rounds_once(%x: tensor<2x?xbf16> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<2x?xbf16> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::silu.default"(%x) {name = "silu"} : (tensor<2x?xbf16>) -> tensor<2x?xbf16>
  joint.output %0 : tensor<2x?xbf16>
}

// -----

// CHECK-DAG: #[[MAP:.+]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[MAP1:.+]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @scalar_comparison_and_zero_d_where_operand(
// CHECK-SAME: %[[ARG0:[a-zA-Z0-9_-]+]]: tensor<4xi64> {joint.path = "x", joint.role = #joint.role<input>}, %[[ARG1:[a-zA-Z0-9_-]+]]: tensor<f32> {joint.path = "y", joint.role = #joint.role<input>}, %[[ARG2:[a-zA-Z0-9_-]+]]: tensor<4xf32> {joint.path = "z", joint.role = #joint.role<input>}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[C_100_I64:[a-zA-Z0-9_-]+]] = arith.constant -100 : i64
// CHECK-NEXT: %[[V0:[a-zA-Z0-9_-]+]] = tensor.empty() : tensor<4xi1>
// CHECK-NEXT: %[[V1:[a-zA-Z0-9_-]+]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP]]], iterator_types = ["parallel"]} ins(%[[ARG0]] : tensor<4xi64>) outs(%[[V0]] : tensor<4xi1>) {
// CHECK-NEXT: ^bb0(%[[IN:[a-zA-Z0-9_-]+]]: i64, %[[OUT:[a-zA-Z0-9_-]+]]: i1):
// CHECK-NEXT: %[[V4:[a-zA-Z0-9_-]+]] = arith.cmpi ne, %[[IN]], %[[C_100_I64]] : i64
// CHECK-NEXT: linalg.yield %[[V4]] : i1
// CHECK-NEXT: } -> tensor<4xi1>
// CHECK-NEXT: %[[V2:[a-zA-Z0-9_-]+]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[V3:[a-zA-Z0-9_-]+]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP1]], #[[MAP]], #[[MAP]]], iterator_types = ["parallel"]} ins(%[[V1]], %[[ARG1]], %[[ARG2]] : tensor<4xi1>, tensor<f32>, tensor<4xf32>) outs(%[[V2]] : tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[IN]]: i1, %[[IN_0:[a-zA-Z0-9_-]+]]: f32, %[[IN_1:[a-zA-Z0-9_-]+]]: f32, %[[OUT]]: f32):
// CHECK-NEXT: %[[V4]] = arith.select %[[IN]], %[[IN_0]], %[[IN_1]] : f32
// CHECK-NEXT: linalg.yield %[[V4]] : f32
// CHECK-NEXT: } -> tensor<4xf32>
// CHECK-NEXT: return %[[V3]] : tensor<4xf32>
joint.graph @scalar_comparison_and_zero_d_where_operand(%x: tensor<4xi64> {joint.role = #joint.role<input>, joint.path = "x"}, %y: tensor<f32> {joint.role = #joint.role<input>, joint.path = "y"}, %z: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "z"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::ne.Scalar"(%x) {args = [#joint.operand<0>, -100], name = "ne"} : (tensor<4xi64>) -> tensor<4xi1>
  %1 = joint.call_function "aten::where.self"(%0, %y, %z) {name = "where"} : (tensor<4xi1>, tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  joint.output %1 : tensor<4xf32>
}

// -----

// CHECK-DAG: #[[MAP:.+]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @floor_division_and_square_as_product(
// CHECK-SAME: %[[ARG0:[a-zA-Z0-9_-]+]]: tensor<4xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<4xf32> {joint.role = #joint.role<output>}, tensor<4xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[CST:[a-zA-Z0-9_-]+]] = arith.constant 3.000000e+00 : f32
// CHECK-NEXT: %[[V0:[a-zA-Z0-9_-]+]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[V1:[a-zA-Z0-9_-]+]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP]]], iterator_types = ["parallel"]} ins(%[[ARG0]] : tensor<4xf32>) outs(%[[V0]] : tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[IN:[a-zA-Z0-9_-]+]]: f32, %[[OUT:[a-zA-Z0-9_-]+]]: f32):
// CHECK-NEXT: %[[V4:[a-zA-Z0-9_-]+]] = arith.divf %[[IN]], %[[CST]] : f32
// CHECK-NEXT: %[[V5:[a-zA-Z0-9_-]+]] = math.floor %[[V4]] : f32
// CHECK-NEXT: linalg.yield %[[V5]] : f32
// CHECK-NEXT: } -> tensor<4xf32>
// CHECK-NEXT: %[[CST_0:[a-zA-Z0-9_-]+]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[V2:[a-zA-Z0-9_-]+]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[V3:[a-zA-Z0-9_-]+]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP]]], iterator_types = ["parallel"]} ins(%[[ARG0]] : tensor<4xf32>) outs(%[[V2]] : tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[IN]]: f32, %[[OUT]]: f32):
// CHECK-NEXT: %[[V4]] = arith.mulf %[[IN]], %[[IN]] : f32
// CHECK-NEXT: linalg.yield %[[V4]] : f32
// CHECK-NEXT: } -> tensor<4xf32>
// CHECK-NEXT: return %[[V1]], %[[V3]] : tensor<4xf32>, tensor<4xf32>
joint.graph @floor_division_and_square_as_product(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}, tensor<4xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::div.Scalar_mode"(%x) {args = [#joint.operand<0>, 3.0], kwargs = {rounding_mode = "floor"}, name = "div"} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = joint.call_function "aten::pow.Tensor_Scalar"(%x) {args = [#joint.operand<0>, 2], name = "pow"} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-DAG: #[[MAP:.+]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @int_true_division_computes_in_float(
// CHECK-SAME: %[[ARG0:[a-zA-Z0-9_-]+]]: tensor<4xi64> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[CST:[a-zA-Z0-9_-]+]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[V0:[a-zA-Z0-9_-]+]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[V1:[a-zA-Z0-9_-]+]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP]]], iterator_types = ["parallel"]} ins(%[[ARG0]] : tensor<4xi64>) outs(%[[V0]] : tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[IN:[a-zA-Z0-9_-]+]]: i64, %[[OUT:[a-zA-Z0-9_-]+]]: f32):
// CHECK-NEXT: %[[V2:[a-zA-Z0-9_-]+]] = arith.sitofp %[[IN]] : i64 to f32
// CHECK-NEXT: %[[V3:[a-zA-Z0-9_-]+]] = arith.divf %[[V2]], %[[CST]] : f32
// CHECK-NEXT: linalg.yield %[[V3]] : f32
// CHECK-NEXT: } -> tensor<4xf32>
// CHECK-NEXT: return %[[V1]] : tensor<4xf32>
joint.graph @int_true_division_computes_in_float(%x: tensor<4xi64> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::div.Scalar"(%x) {args = [#joint.operand<0>, 2], name = "div"} : (tensor<4xi64>) -> tensor<4xf32>
  joint.output %0 : tensor<4xf32>
}

// -----

// CHECK-DAG: #[[MAP:.+]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @gelu_backward_tanh_form(
// CHECK-SAME: %[[ARG0:[a-zA-Z0-9_-]+]]: tensor<4xf32> {joint.path = "g", joint.role = #joint.role<input>}, %[[ARG1:[a-zA-Z0-9_-]+]]: tensor<4xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V0:[a-zA-Z0-9_-]+]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[V1:[a-zA-Z0-9_-]+]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP]], #[[MAP]]], iterator_types = ["parallel"]} ins(%[[ARG0]], %[[ARG1]] : tensor<4xf32>, tensor<4xf32>) outs(%[[V0]] : tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[IN:[a-zA-Z0-9_-]+]]: f32, %[[IN_0:[a-zA-Z0-9_-]+]]: f32, %[[OUT:[a-zA-Z0-9_-]+]]: f32):
// CHECK-NEXT: %[[V2:[a-zA-Z0-9_-]+]] = arith.mulf %[[IN_0]], %[[IN_0]] : f32
// CHECK-NEXT: %[[V3:[a-zA-Z0-9_-]+]] = arith.mulf %[[V2]], %[[IN_0]] : f32
// CHECK-NEXT: %[[CST:[a-zA-Z0-9_-]+]] = arith.constant 4.471500e-02 : f32
// CHECK-NEXT: %[[V4:[a-zA-Z0-9_-]+]] = arith.mulf %[[CST]], %[[V3]] : f32
// CHECK-NEXT: %[[V5:[a-zA-Z0-9_-]+]] = arith.addf %[[IN_0]], %[[V4]] : f32
// CHECK-NEXT: %[[CST_1:[a-zA-Z0-9_-]+]] = arith.constant 0.797884583 : f32
// CHECK-NEXT: %[[V6:[a-zA-Z0-9_-]+]] = arith.mulf %[[CST_1]], %[[V5]] : f32
// CHECK-NEXT: %[[V7:[a-zA-Z0-9_-]+]] = math.tanh %[[V6]] : f32
// CHECK-NEXT: %[[CST_2:[a-zA-Z0-9_-]+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[V8:[a-zA-Z0-9_-]+]] = arith.mulf %[[CST_2]], %[[IN_0]] : f32
// CHECK-NEXT: %[[CST_3:[a-zA-Z0-9_-]+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[V9:[a-zA-Z0-9_-]+]] = arith.addf %[[CST_3]], %[[V7]] : f32
// CHECK-NEXT: %[[CST_4:[a-zA-Z0-9_-]+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[V10:[a-zA-Z0-9_-]+]] = arith.mulf %[[CST_4]], %[[V9]] : f32
// CHECK-NEXT: %[[V11:[a-zA-Z0-9_-]+]] = arith.mulf %[[V7]], %[[V7]] : f32
// CHECK-NEXT: %[[CST_5:[a-zA-Z0-9_-]+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[V12:[a-zA-Z0-9_-]+]] = arith.subf %[[CST_5]], %[[V11]] : f32
// CHECK-NEXT: %[[CST_6:[a-zA-Z0-9_-]+]] = arith.constant 1.341450e-01 : f32
// CHECK-NEXT: %[[V13:[a-zA-Z0-9_-]+]] = arith.mulf %[[CST_6]], %[[V2]] : f32
// CHECK-NEXT: %[[CST_7:[a-zA-Z0-9_-]+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[V14:[a-zA-Z0-9_-]+]] = arith.addf %[[CST_7]], %[[V13]] : f32
// CHECK-NEXT: %[[CST_8:[a-zA-Z0-9_-]+]] = arith.constant 0.797884583 : f32
// CHECK-NEXT: %[[V15:[a-zA-Z0-9_-]+]] = arith.mulf %[[CST_8]], %[[V14]] : f32
// CHECK-NEXT: %[[V16:[a-zA-Z0-9_-]+]] = arith.mulf %[[V8]], %[[V12]] : f32
// CHECK-NEXT: %[[V17:[a-zA-Z0-9_-]+]] = arith.mulf %[[V16]], %[[V15]] : f32
// CHECK-NEXT: %[[V18:[a-zA-Z0-9_-]+]] = arith.addf %[[V10]], %[[V17]] : f32
// CHECK-NEXT: %[[V19:[a-zA-Z0-9_-]+]] = arith.mulf %[[IN]], %[[V18]] : f32
// CHECK-NEXT: linalg.yield %[[V19]] : f32
// CHECK-NEXT: } -> tensor<4xf32>
// CHECK-NEXT: return %[[V1]] : tensor<4xf32>
joint.graph @gelu_backward_tanh_form(%g: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "g"}, %x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::gelu_backward.default"(%g, %x) {args = [#joint.operand<0>, #joint.operand<1>], kwargs = {approximate = "tanh"}, name = "gb"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  joint.output %0 : tensor<4xf32>
}

// -----

// CHECK-DAG: #[[MAP:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[MAP1:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @bitwise_and_broadcasts_then_masked_fill(
// CHECK-SAME: %[[ARG0:[a-zA-Z0-9_-]+]]: tensor<2x4xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[ARG1:[a-zA-Z0-9_-]+]]: tensor<2x4xi1> {joint.path = "a", joint.role = #joint.role<input>}, %[[ARG2:[a-zA-Z0-9_-]+]]: tensor<4xi1> {joint.path = "b", joint.role = #joint.role<input>}) -> (tensor<2x4xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V0:[a-zA-Z0-9_-]+]] = tensor.empty() : tensor<2x4xi1>
// CHECK-NEXT: %[[V1:[a-zA-Z0-9_-]+]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP1]], #[[MAP]]], iterator_types = ["parallel", "parallel"]} ins(%[[ARG1]], %[[ARG2]] : tensor<2x4xi1>, tensor<4xi1>) outs(%[[V0]] : tensor<2x4xi1>) {
// CHECK-NEXT: ^bb0(%[[IN:[a-zA-Z0-9_-]+]]: i1, %[[IN_0:[a-zA-Z0-9_-]+]]: i1, %[[OUT:[a-zA-Z0-9_-]+]]: i1):
// CHECK-NEXT: %[[V4:[a-zA-Z0-9_-]+]] = arith.andi %[[IN]], %[[IN_0]] : i1
// CHECK-NEXT: linalg.yield %[[V4]] : i1
// CHECK-NEXT: } -> tensor<2x4xi1>
// CHECK-NEXT: %[[CST:[a-zA-Z0-9_-]+]] = arith.constant -4.50359963E+15 : f32
// CHECK-NEXT: %[[V2:[a-zA-Z0-9_-]+]] = tensor.empty() : tensor<2x4xf32>
// CHECK-NEXT: %[[V3:[a-zA-Z0-9_-]+]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP]], #[[MAP]]], iterator_types = ["parallel", "parallel"]} ins(%[[ARG0]], %[[V1]] : tensor<2x4xf32>, tensor<2x4xi1>) outs(%[[V2]] : tensor<2x4xf32>) {
// CHECK-NEXT: ^bb0(%[[IN]]: f32, %[[IN_0]]: i1, %[[OUT]]: f32):
// CHECK-NEXT: %[[V4]] = arith.select %[[IN_0]], %[[CST]], %[[IN]] : f32
// CHECK-NEXT: linalg.yield %[[V4]] : f32
// CHECK-NEXT: } -> tensor<2x4xf32>
// CHECK-NEXT: return %[[V3]] : tensor<2x4xf32>
joint.graph @bitwise_and_broadcasts_then_masked_fill(%x: tensor<2x4xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %a: tensor<2x4xi1> {joint.role = #joint.role<input>, joint.path = "a"}, %b: tensor<4xi1> {joint.role = #joint.role<input>, joint.path = "b"}) -> (tensor<2x4xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::bitwise_and.Tensor"(%a, %b) {name = "and"} : (tensor<2x4xi1>, tensor<4xi1>) -> tensor<2x4xi1>
  %1 = joint.call_function "aten::masked_fill.Scalar"(%x, %0) {args = [#joint.operand<0>, #joint.operand<1>, 0xFFF0000000000000], name = "fill"} : (tensor<2x4xf32>, tensor<2x4xi1>) -> tensor<2x4xf32>
  joint.output %1 : tensor<2x4xf32>
}

// -----

// CHECK-DAG: #[[MAP:.+]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @mixed_int_comparison_promotes_and_threshold_backward(
// CHECK-SAME: %[[ARG0:[a-zA-Z0-9_-]+]]: tensor<4xi64> {joint.path = "x", joint.role = #joint.role<input>}, %[[ARG1:[a-zA-Z0-9_-]+]]: tensor<4xi32> {joint.path = "y", joint.role = #joint.role<input>}, %[[ARG2:[a-zA-Z0-9_-]+]]: tensor<4xf32> {joint.path = "g", joint.role = #joint.role<input>}, %[[ARG3:[a-zA-Z0-9_-]+]]: tensor<4xf32> {joint.path = "h", joint.role = #joint.role<input>}) -> (tensor<4xi1> {joint.role = #joint.role<output>}, tensor<4xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V0:[a-zA-Z0-9_-]+]] = tensor.empty() : tensor<4xi1>
// CHECK-NEXT: %[[V1:[a-zA-Z0-9_-]+]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP]], #[[MAP]]], iterator_types = ["parallel"]} ins(%[[ARG0]], %[[ARG1]] : tensor<4xi64>, tensor<4xi32>) outs(%[[V0]] : tensor<4xi1>) {
// CHECK-NEXT: ^bb0(%[[IN:[a-zA-Z0-9_-]+]]: i64, %[[IN_0:[a-zA-Z0-9_-]+]]: i32, %[[OUT:[a-zA-Z0-9_-]+]]: i1):
// CHECK-NEXT: %[[V4:[a-zA-Z0-9_-]+]] = arith.extsi %[[IN_0]] : i32 to i64
// CHECK-NEXT: %[[V5:[a-zA-Z0-9_-]+]] = arith.cmpi sle, %[[IN]], %[[V4]] : i64
// CHECK-NEXT: linalg.yield %[[V5]] : i1
// CHECK-NEXT: } -> tensor<4xi1>
// CHECK-NEXT: %[[CST:[a-zA-Z0-9_-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V2:[a-zA-Z0-9_-]+]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[V3:[a-zA-Z0-9_-]+]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP]], #[[MAP]]], iterator_types = ["parallel"]} ins(%[[ARG2]], %[[ARG3]] : tensor<4xf32>, tensor<4xf32>) outs(%[[V2]] : tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[IN]]: f32, %[[IN_0]]: f32, %[[OUT]]: f32):
// CHECK-NEXT: %[[CST_1:[a-zA-Z0-9_-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V4]] = arith.cmpf ole, %[[IN_0]], %[[CST]] : f32
// CHECK-NEXT: %[[V5]] = arith.select %[[V4]], %[[CST_1]], %[[IN]] : f32
// CHECK-NEXT: linalg.yield %[[V5]] : f32
// CHECK-NEXT: } -> tensor<4xf32>
// CHECK-NEXT: return %[[V1]], %[[V3]] : tensor<4xi1>, tensor<4xf32>
joint.graph @mixed_int_comparison_promotes_and_threshold_backward(%x: tensor<4xi64> {joint.role = #joint.role<input>, joint.path = "x"}, %y: tensor<4xi32> {joint.role = #joint.role<input>, joint.path = "y"}, %g: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "g"}, %h: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "h"}) -> (tensor<4xi1> {joint.role = #joint.role<output>}, tensor<4xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::le.Tensor"(%x, %y) {name = "le"} : (tensor<4xi64>, tensor<4xi32>) -> tensor<4xi1>
  %1 = joint.call_function "aten::threshold_backward.default"(%g, %h) {args = [#joint.operand<0>, #joint.operand<1>, 0], name = "tb"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  joint.output %0, %1 : tensor<4xi1>, tensor<4xf32>
}

// -----

// CHECK-DAG: #[[MAP:.+]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @clamp_and_nan_propagating_minimum(
// CHECK-SAME: %[[ARG0:[a-zA-Z0-9_-]+]]: tensor<4xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[ARG1:[a-zA-Z0-9_-]+]]: tensor<4xf32> {joint.path = "y", joint.role = #joint.role<input>}) -> (tensor<4xf32> {joint.role = #joint.role<output>}, tensor<4xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[CST:[a-zA-Z0-9_-]+]] = arith.constant 6.000000e+00 : f32
// CHECK-NEXT: %[[V0:[a-zA-Z0-9_-]+]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[V1:[a-zA-Z0-9_-]+]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP]]], iterator_types = ["parallel"]} ins(%[[ARG0]] : tensor<4xf32>) outs(%[[V0]] : tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[IN:[a-zA-Z0-9_-]+]]: f32, %[[OUT:[a-zA-Z0-9_-]+]]: f32):
// CHECK-NEXT: %[[V4:[a-zA-Z0-9_-]+]] = arith.minimumf %[[IN]], %[[CST]] : f32
// CHECK-NEXT: linalg.yield %[[V4]] : f32
// CHECK-NEXT: } -> tensor<4xf32>
// CHECK-NEXT: %[[V2:[a-zA-Z0-9_-]+]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[V3:[a-zA-Z0-9_-]+]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP]], #[[MAP]]], iterator_types = ["parallel"]} ins(%[[V1]], %[[ARG1]] : tensor<4xf32>, tensor<4xf32>) outs(%[[V2]] : tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[IN]]: f32, %[[IN_0:[a-zA-Z0-9_-]+]]: f32, %[[OUT]]: f32):
// CHECK-NEXT: %[[V4]] = arith.minimumf %[[IN]], %[[IN_0]] : f32
// CHECK-NEXT: linalg.yield %[[V4]] : f32
// CHECK-NEXT: } -> tensor<4xf32>
// CHECK-NEXT: return %[[V1]], %[[V3]] : tensor<4xf32>, tensor<4xf32>
joint.graph @clamp_and_nan_propagating_minimum(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %y: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "y"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}, tensor<4xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::clamp.default"(%x) {args = [#joint.operand<0>, unit, 6.0], name = "clamp"} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = joint.call_function "aten::minimum.default"(%0, %y) {name = "minimum"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  joint.output %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-DAG: #[[MAP:.+]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @elu_and_dropout_backward(
// CHECK-SAME: %[[ARG0:[a-zA-Z0-9_-]+]]: tensor<4xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[ARG1:[a-zA-Z0-9_-]+]]: tensor<4xi1> {joint.path = "m", joint.role = #joint.role<input>}) -> (tensor<4xf32> {joint.role = #joint.role<output>}, tensor<4xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[CST:[a-zA-Z0-9_-]+]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[CST_0:[a-zA-Z0-9_-]+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[CST_1:[a-zA-Z0-9_-]+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[V0:[a-zA-Z0-9_-]+]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[V1:[a-zA-Z0-9_-]+]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP]]], iterator_types = ["parallel"]} ins(%[[ARG0]] : tensor<4xf32>) outs(%[[V0]] : tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[IN:[a-zA-Z0-9_-]+]]: f32, %[[OUT:[a-zA-Z0-9_-]+]]: f32):
// CHECK-NEXT: %[[CST_3:[a-zA-Z0-9_-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[CST_4:[a-zA-Z0-9_-]+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[V4:[a-zA-Z0-9_-]+]] = arith.cmpf ole, %[[IN]], %[[CST_3]] : f32
// CHECK-NEXT: %[[V5:[a-zA-Z0-9_-]+]] = arith.mulf %[[IN]], %[[CST_1]] : f32
// CHECK-NEXT: %[[V6:[a-zA-Z0-9_-]+]] = math.exp %[[V5]] : f32
// CHECK-NEXT: %[[V7:[a-zA-Z0-9_-]+]] = arith.subf %[[V6]], %[[CST_4]] : f32
// CHECK-NEXT: %[[V8:[a-zA-Z0-9_-]+]] = arith.mulf %[[V7]], %[[CST]] : f32
// CHECK-NEXT: %[[V9:[a-zA-Z0-9_-]+]] = arith.mulf %[[IN]], %[[CST_0]] : f32
// CHECK-NEXT: %[[V10:[a-zA-Z0-9_-]+]] = arith.select %[[V4]], %[[V8]], %[[V9]] : f32
// CHECK-NEXT: linalg.yield %[[V10]] : f32
// CHECK-NEXT: } -> tensor<4xf32>
// CHECK-NEXT: %[[CST_2:[a-zA-Z0-9_-]+]] = arith.constant 1.250000e+00 : f32
// CHECK-NEXT: %[[V2:[a-zA-Z0-9_-]+]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[V3:[a-zA-Z0-9_-]+]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP]], #[[MAP]]], iterator_types = ["parallel"]} ins(%[[V1]], %[[ARG1]] : tensor<4xf32>, tensor<4xi1>) outs(%[[V2]] : tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[IN]]: f32, %[[IN_3:[a-zA-Z0-9_-]+]]: i1, %[[OUT]]: f32):
// CHECK-NEXT: %[[V4]] = arith.uitofp %[[IN_3]] : i1 to f32
// CHECK-NEXT: %[[V5]] = arith.mulf %[[IN]], %[[V4]] : f32
// CHECK-NEXT: %[[V6]] = arith.mulf %[[V5]], %[[CST_2]] : f32
// CHECK-NEXT: linalg.yield %[[V6]] : f32
// CHECK-NEXT: } -> tensor<4xf32>
// CHECK-NEXT: return %[[V1]], %[[V3]] : tensor<4xf32>, tensor<4xf32>
joint.graph @elu_and_dropout_backward(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %m: tensor<4xi1> {joint.role = #joint.role<input>, joint.path = "m"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}, tensor<4xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::elu.default"(%x) {args = [#joint.operand<0>, 2.0], name = "elu"} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = joint.call_function "aten::native_dropout_backward.default"(%0, %m) {args = [#joint.operand<0>, #joint.operand<1>, 1.25], name = "db"} : (tensor<4xf32>, tensor<4xi1>) -> tensor<4xf32>
  joint.output %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// sigmoid_backward (a mixture-of-experts router gate): grad * (1 - y) * y, in the
// order of torch's CPU kernel.
// CHECK-LABEL: func.func @sigmoid_backward_in_torch_order(
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[G:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[ONE]], %[[Y]] : f32
// CHECK-NEXT: %[[GD:.*]] = arith.mulf %[[G]], %[[D]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[GD]], %[[Y]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
joint.graph @sigmoid_backward_in_torch_order(%g: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "g"}, %y: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "y"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::sigmoid_backward.default"(%g, %y) {args = [#joint.operand<0>, #joint.operand<1>], name = "sigmoid_backward"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  joint.output %0 : tensor<4xf32>
}

// -----

// elu_backward (of an in-place elu_): the tensor operand is schema
// argument 5; is_result picks torch's formula of the output,
// y <= 0 ? g * input_scale * (y + alpha * scale) : g * scale.
// CHECK-LABEL: func.func @elu_backward_of_the_result(
// CHECK-DAG: %[[NEG:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[POS:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG: %[[IN:.*]] = arith.constant 1.500000e+00 : f32
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[G:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[LE:.*]] = arith.cmpf ole, %[[Y]], %[[ZERO]] : f32
// CHECK-NEXT: %[[GI:.*]] = arith.mulf %[[G]], %[[IN]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[Y]], %[[NEG]] : f32
// CHECK-NEXT: %[[N:.*]] = arith.mulf %[[GI]], %[[S]] : f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[POS]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.select %[[LE]], %[[N]], %[[P]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
joint.graph @elu_backward_of_the_result(%g: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "g"}, %y: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "y"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::elu_backward.default"(%g, %y) {args = [#joint.operand<0>, 5.000000e-01 : f64, 2 : i64, 1.500000e+00 : f64, true, #joint.operand<1>], name = "elu_backward"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  joint.output %0 : tensor<4xf32>
}

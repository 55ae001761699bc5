// arange and fills: tensor.empty + linalg.fill / an index generic, in the
// recorded result dtype; sizes from the like tensor or the size list.
// RUN: joint-opt %s -split-input-file -convert-joint-to-linalg | FileCheck %s

// CHECK-DAG: #[[MAP:.+]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @fills_and_aranges_take_the_recorded_dtype(
// CHECK-SAME: %[[ARG0:[a-zA-Z0-9_-]+]]: tensor<4x?xbf16> {joint.path = "x", joint.role = #joint.role<input>}, %[[ARG1:[a-zA-Z0-9_-]+]]: i64 {joint.path = "n", joint.role = #joint.role<input>}) -> (tensor<4x?xbf16> {joint.role = #joint.role<output>}, tensor<2x3xf32> {joint.role = #joint.role<output>}, tensor<f32> {joint.role = #joint.role<output>}, tensor<?xi64> {joint.role = #joint.role<output>}, tensor<5xf32> {joint.role = #joint.role<output>}, tensor<?x2xi1> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[C1:[a-zA-Z0-9_-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[DIM:[a-zA-Z0-9_-]+]] = tensor.dim %[[ARG0]], %[[C1]] : tensor<4x?xbf16>
// CHECK-NEXT: %[[CST:[a-zA-Z0-9_-]+]] = arith.constant 1.000000e+00 : bf16
// CHECK-NEXT: %[[V0:[a-zA-Z0-9_-]+]] = tensor.empty(%[[DIM]]) : tensor<4x?xbf16>
// CHECK-NEXT: %[[V1:[a-zA-Z0-9_-]+]] = linalg.fill ins(%[[CST]] : bf16) outs(%[[V0]] : tensor<4x?xbf16>) -> tensor<4x?xbf16>
// CHECK-NEXT: %[[CST_0:[a-zA-Z0-9_-]+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[V2:[a-zA-Z0-9_-]+]] = tensor.empty() : tensor<2x3xf32>
// CHECK-NEXT: %[[V3:[a-zA-Z0-9_-]+]] = linalg.fill ins(%[[CST_0]] : f32) outs(%[[V2]] : tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[CST_1:[a-zA-Z0-9_-]+]] = arith.constant -1.000000e+00 : f32
// CHECK-NEXT: %[[V4:[a-zA-Z0-9_-]+]] = tensor.empty() : tensor<f32>
// CHECK-NEXT: %[[V5:[a-zA-Z0-9_-]+]] = linalg.fill ins(%[[CST_1]] : f32) outs(%[[V4]] : tensor<f32>) -> tensor<f32>
// CHECK-NEXT: %[[C0_I64:[a-zA-Z0-9_-]+]] = arith.constant 0 : i64
// CHECK-NEXT: %[[C1_I64:[a-zA-Z0-9_-]+]] = arith.constant 1 : i64
// CHECK-NEXT: %[[V6:[a-zA-Z0-9_-]+]] = arith.subi %[[ARG1]], %[[C0_I64]] : i64
// CHECK-NEXT: %[[V7:[a-zA-Z0-9_-]+]] = arith.ceildivsi %[[V6]], %[[C1_I64]] : i64
// CHECK-NEXT: %[[V8:[a-zA-Z0-9_-]+]] = arith.index_cast %[[V7]] : i64 to index
// CHECK-NEXT: %[[V9:[a-zA-Z0-9_-]+]] = tensor.empty(%[[V8]]) : tensor<?xi64>
// CHECK-NEXT: %[[V10:[a-zA-Z0-9_-]+]] = linalg.generic {indexing_maps = [#[[MAP]]], iterator_types = ["parallel"]} outs(%[[V9]] : tensor<?xi64>) {
// CHECK-NEXT: ^bb0(%[[OUT:[a-zA-Z0-9_-]+]]: i64):
// CHECK-NEXT: %[[V16:[a-zA-Z0-9_-]+]] = linalg.index 0 : index
// CHECK-NEXT: %[[V17:[a-zA-Z0-9_-]+]] = arith.index_cast %[[V16]] : index to i64
// CHECK-NEXT: %[[V18:[a-zA-Z0-9_-]+]] = arith.muli %[[V17]], %[[C1_I64]] : i64
// CHECK-NEXT: %[[V19:[a-zA-Z0-9_-]+]] = arith.addi %[[C0_I64]], %[[V18]] : i64
// CHECK-NEXT: linalg.yield %[[V19]] : i64
// CHECK-NEXT: } -> tensor<?xi64>
// CHECK-NEXT: %[[CST_2:[a-zA-Z0-9_-]+]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT: %[[CST_3:[a-zA-Z0-9_-]+]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT: %[[CST_4:[a-zA-Z0-9_-]+]] = arith.constant 2.000000e-01 : f64
// CHECK-NEXT: %[[V11:[a-zA-Z0-9_-]+]] = tensor.empty() : tensor<5xf32>
// CHECK-NEXT: %[[V12:[a-zA-Z0-9_-]+]] = linalg.generic {indexing_maps = [#[[MAP]]], iterator_types = ["parallel"]} outs(%[[V11]] : tensor<5xf32>) {
// CHECK-NEXT: ^bb0(%[[OUT]]: f32):
// CHECK-NEXT: %[[V16]] = linalg.index 0 : index
// CHECK-NEXT: %[[V17]] = arith.index_cast %[[V16]] : index to i64
// CHECK-NEXT: %[[V18]] = arith.sitofp %[[V17]] : i64 to f64
// CHECK-NEXT: %[[V19]] = arith.mulf %[[V18]], %[[CST_4]] : f64
// CHECK-NEXT: %[[V20:[a-zA-Z0-9_-]+]] = arith.addf %[[CST_2]], %[[V19]] : f64
// CHECK-NEXT: %[[V21:[a-zA-Z0-9_-]+]] = arith.truncf %[[V20]] : f64 to f32
// CHECK-NEXT: linalg.yield %[[V21]] : f32
// CHECK-NEXT: } -> tensor<5xf32>
// CHECK-NEXT: %[[V13:[a-zA-Z0-9_-]+]] = arith.index_cast %[[ARG1]] : i64 to index
// CHECK-NEXT: %[[TRUE:[a-zA-Z0-9_-]+]] = arith.constant true
// CHECK-NEXT: %[[V14:[a-zA-Z0-9_-]+]] = tensor.empty(%[[V13]]) : tensor<?x2xi1>
// CHECK-NEXT: %[[V15:[a-zA-Z0-9_-]+]] = linalg.fill ins(%[[TRUE]] : i1) outs(%[[V14]] : tensor<?x2xi1>) -> tensor<?x2xi1>
// CHECK-NEXT: return %[[V1]], %[[V3]], %[[V5]], %[[V10]], %[[V12]], %[[V15]] : tensor<4x?xbf16>, tensor<2x3xf32>, tensor<f32>, tensor<?xi64>, tensor<5xf32>, tensor<?x2xi1>
joint.graph @fills_and_aranges_take_the_recorded_dtype(%x: tensor<4x?xbf16> {joint.role = #joint.role<input>, joint.path = "x"}, %n: i64 {joint.role = #joint.role<input>, joint.path = "n"}) -> (tensor<4x?xbf16> {joint.role = #joint.role<output>}, tensor<2x3xf32> {joint.role = #joint.role<output>}, tensor<f32> {joint.role = #joint.role<output>}, tensor<?xi64> {joint.role = #joint.role<output>}, tensor<5xf32> {joint.role = #joint.role<output>}, tensor<?x2xi1> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::ones_like.default"(%x) {args = [#joint.operand<0>], kwargs = {pin_memory = false}, name = "ones"} : (tensor<4x?xbf16>) -> tensor<4x?xbf16>
  %1 = joint.call_function "aten::new_ones.default"(%x) {args = [#joint.operand<0>, [2, 3]], kwargs = {dtype = #joint.dtype<float32>}, name = "new_ones"} : (tensor<4x?xbf16>) -> tensor<2x3xf32>
  %2 = joint.call_function "aten::scalar_tensor.default"() {args = [-1.000000e+00], kwargs = {dtype = #joint.dtype<float32>}, name = "st"} : () -> tensor<f32>
  %3 = joint.call_function "aten::arange.default"(%n) {args = [#joint.operand<0>], kwargs = {dtype = #joint.dtype<int64>}, name = "ar"} : (i64) -> tensor<?xi64>
  %4 = joint.call_function "aten::arange.start_step"() {args = [0, 1.0, 0.2], name = "ar2"} : () -> tensor<5xf32>
  %5 = joint.call_function "aten::full.default"(%n) {args = [[#joint.operand<0>, 2], true], name = "full"} : (i64) -> tensor<?x2xi1>
  joint.output %0, %1, %2, %3, %4, %5 : tensor<4x?xbf16>, tensor<2x3xf32>, tensor<f32>, tensor<?xi64>, tensor<5xf32>, tensor<?x2xi1>
}

// -----

// CHECK-DAG: #[[MAP:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[MAP1:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @one_hot_compares_the_class_index(
// CHECK-SAME: %[[ARG0:[a-zA-Z0-9_-]+]]: tensor<3xi64> {joint.path = "i", joint.role = #joint.role<input>}) -> (tensor<3x5xi64> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V0:[a-zA-Z0-9_-]+]] = tensor.empty() : tensor<3x5xi64>
// CHECK-NEXT: %[[V1:[a-zA-Z0-9_-]+]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP1]]], iterator_types = ["parallel", "parallel"]} ins(%[[ARG0]] : tensor<3xi64>) outs(%[[V0]] : tensor<3x5xi64>) {
// CHECK-NEXT: ^bb0(%[[IN:[a-zA-Z0-9_-]+]]: i64, %[[OUT:[a-zA-Z0-9_-]+]]: i64):
// CHECK-NEXT: %[[V2:[a-zA-Z0-9_-]+]] = linalg.index 1 : index
// CHECK-NEXT: %[[V3:[a-zA-Z0-9_-]+]] = arith.index_cast %[[V2]] : index to i64
// CHECK-NEXT: %[[V4:[a-zA-Z0-9_-]+]] = arith.cmpi eq, %[[IN]], %[[V3]] : i64
// CHECK-NEXT: %[[V5:[a-zA-Z0-9_-]+]] = arith.extui %[[V4]] : i1 to i64
// CHECK-NEXT: linalg.yield %[[V5]] : i64
// CHECK-NEXT: } -> tensor<3x5xi64>
// CHECK-NEXT: return %[[V1]] : tensor<3x5xi64>
joint.graph @one_hot_compares_the_class_index(%i: tensor<3xi64> {joint.role = #joint.role<input>, joint.path = "i"}) -> (tensor<3x5xi64> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::one_hot.default"(%i) {args = [#joint.operand<0>, 5], name = "one_hot"} : (tensor<3xi64>) -> tensor<3x5xi64>
  joint.output %0 : tensor<3x5xi64>
}

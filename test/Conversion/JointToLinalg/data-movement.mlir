// Views, slices, cat, pad, slice_backward and copies as value-semantics
// tensor ops; slice bounds clamp like torch.
// RUN: joint-opt %s -split-input-file -convert-joint-to-linalg | FileCheck %s

// CHECK-DAG: #[[MAP:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[MAP1:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[MAP2:.+]] = affine_map<(d0, d1, d2) -> (0, d1, d2)>
// CHECK-DAG: #[[MAP3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @views_slices_cat_pad_and_copies(
// CHECK-SAME: %[[ARG0:[a-zA-Z0-9_-]+]]: tensor<4x?x32xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[ARG1:[a-zA-Z0-9_-]+]]: tensor<2x8xf32> {joint.path = "s", joint.role = #joint.role<input>}, %[[ARG2:[a-zA-Z0-9_-]+]]: i64 {joint.path = "n", joint.role = #joint.role<input>}) -> (tensor<?x32xf32> {joint.role = #joint.role<output>}, tensor<32x?x4xf32> {joint.role = #joint.role<output>}, tensor<2x3xf32> {joint.role = #joint.role<output>}, tensor<2x8xf32> {joint.role = #joint.role<output>}, tensor<8xf32> {joint.role = #joint.role<output>}, tensor<2x4xf32> {joint.role = #joint.role<output>}, tensor<2x4xf32> {joint.role = #joint.role<output>}, tensor<4x8xf32> {joint.role = #joint.role<output>}, tensor<2x10xf32> {joint.role = #joint.role<output>}, tensor<2x16xf32> {joint.role = #joint.role<output>}, tensor<4x8xf32> {joint.role = #joint.role<output>}, tensor<2x8xbf16> {joint.role = #joint.role<output>}, tensor<1x2x8xf32> {joint.role = #joint.role<output>}, tensor<3x2x8xf32> {joint.role = #joint.role<output>}, tensor<16xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[C4_I64:[a-zA-Z0-9_-]+]] = arith.constant 4 : i64
// CHECK-NEXT: %[[V0:[a-zA-Z0-9_-]+]] = arith.muli %[[C4_I64]], %[[ARG2]] : i64
// CHECK-NEXT: %[[V1:[a-zA-Z0-9_-]+]] = arith.index_cast %[[V0]] : i64 to index
// CHECK-NEXT: %[[COLLAPSED:[a-zA-Z0-9_-]+]] = tensor.collapse_shape %[[ARG0]] {{\[\[}}0, 1], [2]] : tensor<4x?x32xf32> into tensor<?x32xf32>
// CHECK-NEXT: %[[C1:[a-zA-Z0-9_-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[DIM:[a-zA-Z0-9_-]+]] = tensor.dim %[[ARG0]], %[[C1]] : tensor<4x?x32xf32>
// CHECK-NEXT: %[[V2:[a-zA-Z0-9_-]+]] = tensor.empty(%[[DIM]]) : tensor<32x?x4xf32>
// CHECK-NEXT: %[[TRANSPOSED:[a-zA-Z0-9_-]+]] = linalg.transpose ins(%[[ARG0]] : tensor<4x?x32xf32>) outs(%[[V2]] : tensor<32x?x4xf32>) permutation = [2, 1, 0]
// CHECK-NEXT: %[[EXTRACTED_SLICE:[a-zA-Z0-9_-]+]] = tensor.extract_slice %[[ARG1]][0, 3] [2, 3] [1, 2] : tensor<2x8xf32> to tensor<2x3xf32>
// CHECK-NEXT: %[[C_1:[a-zA-Z0-9_-]+]] = arith.constant -1 : index
// CHECK-NEXT: %[[EXTRACTED_SLICE_0:[a-zA-Z0-9_-]+]] = tensor.extract_slice %[[ARG1]][1, 0] [1, 8] [1, 1] : tensor<2x8xf32> to tensor<8xf32>
// CHECK-NEXT: %[[C4:[a-zA-Z0-9_-]+]] = arith.constant 4 : index
// CHECK-NEXT: %[[EXTRACTED_SLICE_1:[a-zA-Z0-9_-]+]] = tensor.extract_slice %[[ARG1]][0, 0] [2, 4] [1, 1] : tensor<2x8xf32> to tensor<2x4xf32>
// CHECK-NEXT: %[[EXTRACTED_SLICE_2:[a-zA-Z0-9_-]+]] = tensor.extract_slice %[[ARG1]][0, 4] [2, 4] [1, 1] : tensor<2x8xf32> to tensor<2x4xf32>
// CHECK-NEXT: %[[V3:[a-zA-Z0-9_-]+]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[INSERTED_SLICE:[a-zA-Z0-9_-]+]] = tensor.insert_slice %[[ARG1]] into %[[V3]][0, 0] [2, 8] [1, 1] : tensor<2x8xf32> into tensor<4x8xf32>
// CHECK-NEXT: %[[INSERTED_SLICE_3:[a-zA-Z0-9_-]+]] = tensor.insert_slice %[[ARG1]] into %[[INSERTED_SLICE]][2, 0] [2, 8] [1, 1] : tensor<2x8xf32> into tensor<4x8xf32>
// CHECK-NEXT: %[[CST:[a-zA-Z0-9_-]+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[EXTRACTED_SLICE_4:[a-zA-Z0-9_-]+]] = tensor.extract_slice %[[ARG1]][0, 0] [2, 7] [1, 1] : tensor<2x8xf32> to tensor<2x7xf32>
// CHECK-NEXT: %[[PADDED:[a-zA-Z0-9_-]+]] = tensor.pad %[[EXTRACTED_SLICE_4]] low[0, 3] high[0, 0] {
// CHECK-NEXT: ^bb0(%[[ARG3:[a-zA-Z0-9_-]+]]: index, %[[ARG4:[a-zA-Z0-9_-]+]]: index):
// CHECK-NEXT: tensor.yield %[[CST]] : f32
// CHECK-NEXT: } : tensor<2x7xf32> to tensor<2x10xf32>
// CHECK-NEXT: %[[CST_5:[a-zA-Z0-9_-]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V4:[a-zA-Z0-9_-]+]] = tensor.empty() : tensor<2x16xf32>
// CHECK-NEXT: %[[V5:[a-zA-Z0-9_-]+]] = linalg.fill ins(%[[CST_5]] : f32) outs(%[[V4]] : tensor<2x16xf32>) -> tensor<2x16xf32>
// CHECK-NEXT: %[[INSERTED_SLICE_6:[a-zA-Z0-9_-]+]] = tensor.insert_slice %[[ARG1]] into %[[V5]][0, 8] [2, 8] [1, 1] : tensor<2x8xf32> into tensor<2x16xf32>
// CHECK-NEXT: %[[V6:[a-zA-Z0-9_-]+]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[V7:[a-zA-Z0-9_-]+]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP1]]], iterator_types = ["parallel", "parallel"]} ins(%[[EXTRACTED_SLICE_0]] : tensor<8xf32>) outs(%[[V6]] : tensor<4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[IN:[a-zA-Z0-9_-]+]]: f32, %[[OUT:[a-zA-Z0-9_-]+]]: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK-NEXT: } -> tensor<4x8xf32>
// CHECK-NEXT: %[[V8:[a-zA-Z0-9_-]+]] = tensor.empty() : tensor<2x8xbf16>
// CHECK-NEXT: %[[V9:[a-zA-Z0-9_-]+]] = linalg.generic {indexing_maps = [#[[MAP1]], #[[MAP1]]], iterator_types = ["parallel", "parallel"]} ins(%[[ARG1]] : tensor<2x8xf32>) outs(%[[V8]] : tensor<2x8xbf16>) {
// CHECK-NEXT: ^bb0(%[[IN]]: f32, %[[OUT]]: bf16):
// CHECK-NEXT: %[[V12:[a-zA-Z0-9_-]+]] = arith.truncf %[[IN]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[V12]] : bf16
// CHECK-NEXT: } -> tensor<2x8xbf16>
// CHECK-NEXT: %[[EXPANDED:[a-zA-Z0-9_-]+]] = tensor.expand_shape %[[ARG1]] {{\[\[}}0, 1], [2]] output_shape [1, 2, 8] : tensor<2x8xf32> into tensor<1x2x8xf32>
// CHECK-NEXT: %[[V10:[a-zA-Z0-9_-]+]] = tensor.empty() : tensor<3x2x8xf32>
// CHECK-NEXT: %[[V11:[a-zA-Z0-9_-]+]] = linalg.generic {indexing_maps = [#[[MAP2]], #[[MAP3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[EXPANDED]] : tensor<1x2x8xf32>) outs(%[[V10]] : tensor<3x2x8xf32>) {
// CHECK-NEXT: ^bb0(%[[IN]]: f32, %[[OUT]]: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK-NEXT: } -> tensor<3x2x8xf32>
// CHECK-NEXT: %[[COLLAPSED_7:[a-zA-Z0-9_-]+]] = tensor.collapse_shape %[[ARG1]] {{\[\[}}0, 1]] : tensor<2x8xf32> into tensor<16xf32>
// CHECK-NEXT: return %[[COLLAPSED]], %[[TRANSPOSED]], %[[EXTRACTED_SLICE]], %[[ARG1]], %[[EXTRACTED_SLICE_0]], %[[EXTRACTED_SLICE_1]], %[[EXTRACTED_SLICE_2]], %[[INSERTED_SLICE_3]], %[[PADDED]], %[[INSERTED_SLICE_6]], %[[V7]], %[[V9]], %[[EXPANDED]], %[[V11]], %[[COLLAPSED_7]] : tensor<?x32xf32>, tensor<32x?x4xf32>, tensor<2x3xf32>, tensor<2x8xf32>, tensor<8xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<4x8xf32>, tensor<2x10xf32>, tensor<2x16xf32>, tensor<4x8xf32>, tensor<2x8xbf16>, tensor<1x2x8xf32>, tensor<3x2x8xf32>, tensor<16xf32>
joint.graph @views_slices_cat_pad_and_copies(%x: tensor<4x?x32xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %s: tensor<2x8xf32> {joint.role = #joint.role<input>, joint.path = "s"}, %n: i64 {joint.role = #joint.role<input>, joint.path = "n"}) -> (tensor<?x32xf32> {joint.role = #joint.role<output>}, tensor<32x?x4xf32> {joint.role = #joint.role<output>}, tensor<2x3xf32> {joint.role = #joint.role<output>}, tensor<2x8xf32> {joint.role = #joint.role<output>}, tensor<8xf32> {joint.role = #joint.role<output>}, tensor<2x4xf32> {joint.role = #joint.role<output>}, tensor<2x4xf32> {joint.role = #joint.role<output>}, tensor<4x8xf32> {joint.role = #joint.role<output>}, tensor<2x10xf32> {joint.role = #joint.role<output>}, tensor<2x16xf32> {joint.role = #joint.role<output>}, tensor<4x8xf32> {joint.role = #joint.role<output>}, tensor<2x8xbf16> {joint.role = #joint.role<output>}, tensor<1x2x8xf32> {joint.role = #joint.role<output>}, tensor<3x2x8xf32> {joint.role = #joint.role<output>}, tensor<16xf32> {joint.role = #joint.role<output>}) {
  %m = joint.call_function "operator::mul"(%n) {args = [4, #joint.operand<0>], name = "m"} : (i64) -> i64
  %v = joint.call_function "aten::view.default"(%x, %m) {args = [#joint.operand<0>, [#joint.operand<1>, 32]], name = "v"} : (tensor<4x?x32xf32>, i64) -> tensor<?x32xf32>
  %p = joint.call_function "aten::permute.default"(%x) {args = [#joint.operand<0>, [2, 1, 0]], name = "p"} : (tensor<4x?x32xf32>) -> tensor<32x?x4xf32>
  %sl = joint.call_function "aten::slice.Tensor"(%s) {args = [#joint.operand<0>, 1, -5, 9223372036854775807, 2], name = "sl"} : (tensor<2x8xf32>) -> tensor<2x3xf32>
  %al = joint.call_function "aten::alias.default"(%s) {name = "al"} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %se = joint.call_function "aten::select.int"(%s) {args = [#joint.operand<0>, 0, -1], name = "se"} : (tensor<2x8xf32>) -> tensor<8xf32>
  %a, %b = joint.call_function "aten::split.Tensor"(%s) {args = [#joint.operand<0>, 4, 1], name = "sp"} : (tensor<2x8xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  %c = joint.call_function "aten::cat.default"(%s, %s) {args = [[#joint.operand<0>, #joint.operand<1>], 0], name = "c"} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
  %pd = joint.call_function "aten::constant_pad_nd.default"(%s) {args = [#joint.operand<0>, [3, -1], 0.5], name = "pd"} : (tensor<2x8xf32>) -> tensor<2x10xf32>
  %sb = joint.call_function "aten::slice_backward.default"(%s) {args = [#joint.operand<0>, [2, 16], 1, 8, 9223372036854775807, 1], name = "sb"} : (tensor<2x8xf32>) -> tensor<2x16xf32>
  %e = joint.call_function "aten::expand.default"(%se) {args = [#joint.operand<0>, [4, -1]], name = "e"} : (tensor<8xf32>) -> tensor<4x8xf32>
  %tc = joint.call_function "aten::_to_copy.default"(%s) {args = [#joint.operand<0>], kwargs = {dtype = #joint.dtype<bfloat16>}, name = "tc"} : (tensor<2x8xf32>) -> tensor<2x8xbf16>
  %u = joint.call_function "aten::unsqueeze.default"(%s) {args = [#joint.operand<0>, 0], name = "u"} : (tensor<2x8xf32>) -> tensor<1x2x8xf32>
  %ex = joint.call_function "aten::expand.default"(%u) {args = [#joint.operand<0>, [3, -1, -1]], name = "ex"} : (tensor<1x2x8xf32>) -> tensor<3x2x8xf32>
  %vv = joint.call_function "aten::view.default"(%s) {args = [#joint.operand<0>, [-1]], name = "vv"} : (tensor<2x8xf32>) -> tensor<16xf32>
  joint.output %v, %p, %sl, %al, %se, %a, %b, %c, %pd, %sb, %e, %tc, %u, %ex, %vv : tensor<?x32xf32>, tensor<32x?x4xf32>, tensor<2x3xf32>, tensor<2x8xf32>, tensor<8xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<4x8xf32>, tensor<2x10xf32>, tensor<2x16xf32>, tensor<4x8xf32>, tensor<2x8xbf16>, tensor<1x2x8xf32>, tensor<3x2x8xf32>, tensor<16xf32>
}

// -----

// Empty slices, as torch gives them for a start at or past the end (e.g. a
// rotary split whose second part is empty): the result is an empty tensor,
// never a slice whose static offset the verifier refuses; cat and
// slice_backward skip empty pieces.
// CHECK-LABEL: func.func @empty_slices
// CHECK-DAG: %[[E0:.+]] = tensor.empty() : tensor<2x0xf32>
// CHECK-DAG: %[[E1:.+]] = tensor.empty() : tensor<2x0xf32>
// CHECK-NOT: tensor.extract_slice
// CHECK: return %[[E0]], %[[E1]]
joint.graph @empty_slices(%s: tensor<2x8xf32> {joint.role = #joint.role<input>, joint.path = "s"}) -> (tensor<2x0xf32> {joint.role = #joint.role<output>}, tensor<2x0xf32> {joint.role = #joint.role<output>}) {
  %at_end = joint.call_function "aten::slice.Tensor"(%s) {args = [#joint.operand<0>, 1, 8, 9223372036854775807, 1], name = "at_end"} : (tensor<2x8xf32>) -> tensor<2x0xf32>
  %past = joint.call_function "aten::slice.Tensor"(%s) {args = [#joint.operand<0>, 1, 12, 4, 1], name = "past"} : (tensor<2x8xf32>) -> tensor<2x0xf32>
  joint.output %at_end, %past : tensor<2x0xf32>, tensor<2x0xf32>
}

// -----

// slice_scatter / select_scatter: src inserted into self at the slice, the
// bounds clamped as slice.Tensor and select.int clamp them (start -5 of 6 is
// 1; index -1 of 4 is 3).
// CHECK-LABEL: func.func @scatters(
// CHECK-NEXT: %[[S:.+]] = tensor.insert_slice %arg1 into %arg0[0, 1] [4, 2] [1, 2] : tensor<4x2xf32> into tensor<4x6xf32>
// CHECK-NEXT: arith.constant -1 : index
// CHECK-NEXT: %[[R:.+]] = tensor.insert_slice %arg2 into %arg0[3, 0] [1, 6] [1, 1] : tensor<6xf32> into tensor<4x6xf32>
// CHECK-NEXT: return %[[S]], %[[R]] : tensor<4x6xf32>, tensor<4x6xf32>
joint.graph @scatters(%x: tensor<4x6xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %s: tensor<4x2xf32> {joint.role = #joint.role<input>, joint.path = "s"}, %r: tensor<6xf32> {joint.role = #joint.role<input>, joint.path = "r"}) -> (tensor<4x6xf32> {joint.role = #joint.role<output>}, tensor<4x6xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::slice_scatter.default"(%x, %s) {args = [#joint.operand<0>, #joint.operand<1>, 1, -5, 5, 2], name = "slice_scatter"} : (tensor<4x6xf32>, tensor<4x2xf32>) -> tensor<4x6xf32>
  %1 = joint.call_function "aten::select_scatter.default"(%x, %r) {args = [#joint.operand<0>, #joint.operand<1>, 0, -1], name = "select_scatter"} : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  joint.output %0, %1 : tensor<4x6xf32>, tensor<4x6xf32>
}

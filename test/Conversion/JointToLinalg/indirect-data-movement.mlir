// RUN: joint-opt %s -convert-joint-to-linalg -mlir-print-local-scope | FileCheck %s

// A gather: the generic reads weight[indices[i, j], d] with tensor.extract.
// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<256x64xbf16> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<2x16xi64> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<2x16x64xbf16> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V2:[^ ,:)]*]] = tensor.empty() : tensor<2x16x64xbf16>
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[V1]] : tensor<2x16xi64>) outs(%[[V2]] : tensor<2x16x64xbf16>) {
// CHECK-NEXT: ^bb0(%[[V4:[^ ,:)]*]]: i64, %[[V5:[^ ,:)]*]]: bf16):
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = arith.index_cast %[[V4]] : i64 to index
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = linalg.index 2 : index
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = tensor.extract %arg0[%[[V6]], %[[V7]]] : tensor<256x64xbf16>
// CHECK-NEXT: linalg.yield %[[V8]] : bf16
// CHECK-NEXT: } -> tensor<2x16x64xbf16>
// CHECK-NEXT: return %[[V3]] : tensor<2x16x64xbf16>
// CHECK-NEXT: }
joint.graph @embedding(%w: tensor<256x64xbf16> {joint.role = #joint.role<input>, joint.path = "x"}, %i: tensor<2x16xi64> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<2x16x64xbf16> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::embedding.default"(%w, %i) {name = "embedding"} : (tensor<256x64xbf16>, tensor<2x16xi64>) -> tensor<2x16x64xbf16>
  joint.output %0 : tensor<2x16x64xbf16>
}

// A scatter-add in index order into the bf16 result, as torch's CPU kernel:
// each row added in f32 and rounded; padding_idx rows skipped.
// CHECK-LABEL: func.func @embedding_dense_backward
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<2x16x64xbf16> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<2x16xi64> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<256x64xbf16> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V2:[^ ,:)]*]] = tensor.collapse_shape %[[V1]] {{\[\[}}0, 1{{\]\]}} : tensor<2x16xi64> into tensor<32xi64>
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = tensor.collapse_shape %[[V0]] {{\[\[}}0, 1], [2{{\]\]}} : tensor<2x16x64xbf16> into tensor<32x64xbf16>
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = arith.constant 0.000000e+00 : bf16
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = tensor.empty() : tensor<256x64xbf16>
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = linalg.fill ins(%[[V4]] : bf16) outs(%[[V5]] : tensor<256x64xbf16>) -> tensor<256x64xbf16>
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = arith.constant 0 : index
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = arith.constant 32 : index
// CHECK-NEXT: %[[V9:[^ ,:)]*]] = arith.constant 1 : index
// CHECK-NEXT: %[[V10:[^ ,:)]*]] = scf.for %[[V11:[^ ,:)]*]] = %[[V7]] to %[[V8]] step %[[V9]] iter_args(%[[V12:[^ ,:)]*]] = %[[V6]]) -> (tensor<256x64xbf16>) {
// CHECK-NEXT: %[[V13:[^ ,:)]*]] = tensor.extract %collapsed[%[[V11]]] : tensor<32xi64>
// CHECK-NEXT: %[[V14:[^ ,:)]*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[V15:[^ ,:)]*]] = arith.cmpi ne, %[[V13]], %[[V14]] : i64
// CHECK-NEXT: %[[V16:[^ ,:)]*]] = scf.if %[[V15]] -> (tensor<256x64xbf16>) {
// CHECK-NEXT: %[[V17:[^ ,:)]*]] = arith.index_cast %[[V13]] : i64 to index
// CHECK-NEXT: %[[V18:[^ ,:)]*]] = tensor.extract_slice %collapsed_0[%[[V11]], 0] [1, 64] [1, 1] : tensor<32x64xbf16> to tensor<64xbf16>
// CHECK-NEXT: %[[V19:[^ ,:)]*]] = tensor.extract_slice %arg3[%[[V17]], 0] [1, 64] [1, 1] : tensor<256x64xbf16> to tensor<64xbf16>
// CHECK-NEXT: %[[V20:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[V18]] : tensor<64xbf16>) outs(%[[V19]] : tensor<64xbf16>) {
// CHECK-NEXT: ^bb0(%[[V21:[^ ,:)]*]]: bf16, %[[V22:[^ ,:)]*]]: bf16):
// CHECK-NEXT: %[[V23:[^ ,:)]*]] = arith.extf %[[V22]] : bf16 to f32
// CHECK-NEXT: %[[V24:[^ ,:)]*]] = arith.extf %[[V21]] : bf16 to f32
// CHECK-NEXT: %[[V25:[^ ,:)]*]] = arith.addf %[[V23]], %[[V24]] : f32
// CHECK-NEXT: %[[V26:[^ ,:)]*]] = arith.truncf %[[V25]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[V26]] : bf16
// CHECK-NEXT: } -> tensor<64xbf16>
// CHECK-NEXT: %[[V27:[^ ,:)]*]] = tensor.insert_slice %[[V20]] into %arg3[%[[V17]], 0] [1, 64] [1, 1] : tensor<64xbf16> into tensor<256x64xbf16>
// CHECK-NEXT: scf.yield %[[V27]] : tensor<256x64xbf16>
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[V12]] : tensor<256x64xbf16>
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %[[V16]] : tensor<256x64xbf16>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[V10]] : tensor<256x64xbf16>
// CHECK-NEXT: }
joint.graph @embedding_dense_backward(%g: tensor<2x16x64xbf16> {joint.role = #joint.role<input>, joint.path = "x"}, %i: tensor<2x16xi64> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<256x64xbf16> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::embedding_dense_backward.default"(%g, %i) {args = [#joint.operand<0>, #joint.operand<1>, 256, 0, false], name = "embedding_dense_backward"} : (tensor<2x16x64xbf16>, tensor<2x16xi64>) -> tensor<256x64xbf16>
  joint.output %0 : tensor<256x64xbf16>
}

// Advanced indexing as the examples record it: both dims indexed, index
// tensors broadcast to 2x1x16x1, negative indices wrapped.
// CHECK-LABEL: func.func @index_tensor_broadcast
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<2x16xi64> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<2x1x1x1xi64> {joint.path = "x", joint.role = #joint.role<input>}, %[[V2:[^ ,:)]*]]: tensor<1x1x16x1xi64> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<2x1x16x1xi64> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = tensor.empty() : tensor<2x1x16x1xi64>
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (0, 0, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[V1]], %[[V2]] : tensor<2x1x1x1xi64>, tensor<1x1x16x1xi64>) outs(%[[V3]] : tensor<2x1x16x1xi64>) {
// CHECK-NEXT: ^bb0(%[[V5:[^ ,:)]*]]: i64, %[[V6:[^ ,:)]*]]: i64, %[[V7:[^ ,:)]*]]: i64):
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = arith.constant 0 : index
// CHECK-NEXT: %[[V9:[^ ,:)]*]] = tensor.dim %[[V0]], %[[V8]] : tensor<2x16xi64>
// CHECK-NEXT: %[[V10:[^ ,:)]*]] = arith.index_cast %[[V5]] : i64 to index
// CHECK-NEXT: %[[V11:[^ ,:)]*]] = arith.constant 0 : index
// CHECK-NEXT: %[[V12:[^ ,:)]*]] = arith.cmpi slt, %[[V10]], %[[V11]] : index
// CHECK-NEXT: %[[V13:[^ ,:)]*]] = arith.addi %[[V10]], %[[V9]] : index
// CHECK-NEXT: %[[V14:[^ ,:)]*]] = arith.select %[[V12]], %[[V13]], %[[V10]] : index
// CHECK-NEXT: %[[V15:[^ ,:)]*]] = arith.constant 1 : index
// CHECK-NEXT: %[[V16:[^ ,:)]*]] = tensor.dim %[[V0]], %[[V15]] : tensor<2x16xi64>
// CHECK-NEXT: %[[V17:[^ ,:)]*]] = arith.index_cast %[[V6]] : i64 to index
// CHECK-NEXT: %[[V18:[^ ,:)]*]] = arith.constant 0 : index
// CHECK-NEXT: %[[V19:[^ ,:)]*]] = arith.cmpi slt, %[[V17]], %[[V18]] : index
// CHECK-NEXT: %[[V20:[^ ,:)]*]] = arith.addi %[[V17]], %[[V16]] : index
// CHECK-NEXT: %[[V21:[^ ,:)]*]] = arith.select %[[V19]], %[[V20]], %[[V17]] : index
// CHECK-NEXT: %[[V22:[^ ,:)]*]] = tensor.extract %arg0[%[[V14]], %[[V21]]] : tensor<2x16xi64>
// CHECK-NEXT: linalg.yield %[[V22]] : i64
// CHECK-NEXT: } -> tensor<2x1x16x1xi64>
// CHECK-NEXT: return %[[V4]] : tensor<2x1x16x1xi64>
// CHECK-NEXT: }
joint.graph @index_tensor_broadcast(%x: tensor<2x16xi64> {joint.role = #joint.role<input>, joint.path = "x"}, %a: tensor<2x1x1x1xi64> {joint.role = #joint.role<input>, joint.path = "x"}, %b: tensor<1x1x16x1xi64> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<2x1x16x1xi64> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::index.Tensor"(%x, %a, %b) {args = [#joint.operand<0>, [#joint.operand<1>, #joint.operand<2>]], name = "index"} : (tensor<2x16xi64>, tensor<2x1x1x1xi64>, tensor<1x1x16x1xi64>) -> tensor<2x1x16x1xi64>
  joint.output %0 : tensor<2x1x16x1xi64>
}

// A None entry keeps its dim; separated index tensors put the broadcast dims
// first (torch's rule).
// CHECK-LABEL: func.func @index_tensor_separated
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<4x5x6xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<3xi64> {joint.path = "x", joint.role = #joint.role<input>}, %[[V2:[^ ,:)]*]]: tensor<3xi64> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<3x5xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = tensor.empty() : tensor<3x5xf32>
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[V1]], %[[V2]] : tensor<3xi64>, tensor<3xi64>) outs(%[[V3]] : tensor<3x5xf32>) {
// CHECK-NEXT: ^bb0(%[[V5:[^ ,:)]*]]: i64, %[[V6:[^ ,:)]*]]: i64, %[[V7:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = linalg.index 1 : index
// CHECK-NEXT: %[[V9:[^ ,:)]*]] = arith.constant 0 : index
// CHECK-NEXT: %[[V10:[^ ,:)]*]] = tensor.dim %[[V0]], %[[V9]] : tensor<4x5x6xf32>
// CHECK-NEXT: %[[V11:[^ ,:)]*]] = arith.index_cast %[[V5]] : i64 to index
// CHECK-NEXT: %[[V12:[^ ,:)]*]] = arith.constant 0 : index
// CHECK-NEXT: %[[V13:[^ ,:)]*]] = arith.cmpi slt, %[[V11]], %[[V12]] : index
// CHECK-NEXT: %[[V14:[^ ,:)]*]] = arith.addi %[[V11]], %[[V10]] : index
// CHECK-NEXT: %[[V15:[^ ,:)]*]] = arith.select %[[V13]], %[[V14]], %[[V11]] : index
// CHECK-NEXT: %[[V16:[^ ,:)]*]] = arith.constant 2 : index
// CHECK-NEXT: %[[V17:[^ ,:)]*]] = tensor.dim %[[V0]], %[[V16]] : tensor<4x5x6xf32>
// CHECK-NEXT: %[[V18:[^ ,:)]*]] = arith.index_cast %[[V6]] : i64 to index
// CHECK-NEXT: %[[V19:[^ ,:)]*]] = arith.constant 0 : index
// CHECK-NEXT: %[[V20:[^ ,:)]*]] = arith.cmpi slt, %[[V18]], %[[V19]] : index
// CHECK-NEXT: %[[V21:[^ ,:)]*]] = arith.addi %[[V18]], %[[V17]] : index
// CHECK-NEXT: %[[V22:[^ ,:)]*]] = arith.select %[[V20]], %[[V21]], %[[V18]] : index
// CHECK-NEXT: %[[V23:[^ ,:)]*]] = tensor.extract %arg0[%[[V15]], %[[V8]], %[[V22]]] : tensor<4x5x6xf32>
// CHECK-NEXT: linalg.yield %[[V23]] : f32
// CHECK-NEXT: } -> tensor<3x5xf32>
// CHECK-NEXT: return %[[V4]] : tensor<3x5xf32>
// CHECK-NEXT: }
joint.graph @index_tensor_separated(%x: tensor<4x5x6xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %a: tensor<3xi64> {joint.role = #joint.role<input>, joint.path = "x"}, %b: tensor<3xi64> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<3x5xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::index.Tensor"(%x, %a, %b) {args = [#joint.operand<0>, [#joint.operand<1>, unit, #joint.operand<2>]], name = "index"} : (tensor<4x5x6xf32>, tensor<3xi64>, tensor<3xi64>) -> tensor<3x5xf32>
  joint.output %0 : tensor<3x5xf32>
}

// CHECK-LABEL: func.func @index_select
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<4x5xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<3xi64> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<4x3xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V2:[^ ,:)]*]] = tensor.empty() : tensor<4x3xf32>
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[V1]] : tensor<3xi64>) outs(%[[V2]] : tensor<4x3xf32>) {
// CHECK-NEXT: ^bb0(%[[V4:[^ ,:)]*]]: i64, %[[V5:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = linalg.index 0 : index
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = arith.constant 1 : index
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = tensor.dim %[[V0]], %[[V7]] : tensor<4x5xf32>
// CHECK-NEXT: %[[V9:[^ ,:)]*]] = arith.index_cast %[[V4]] : i64 to index
// CHECK-NEXT: %[[V10:[^ ,:)]*]] = arith.constant 0 : index
// CHECK-NEXT: %[[V11:[^ ,:)]*]] = arith.cmpi slt, %[[V9]], %[[V10]] : index
// CHECK-NEXT: %[[V12:[^ ,:)]*]] = arith.addi %[[V9]], %[[V8]] : index
// CHECK-NEXT: %[[V13:[^ ,:)]*]] = arith.select %[[V11]], %[[V12]], %[[V9]] : index
// CHECK-NEXT: %[[V14:[^ ,:)]*]] = tensor.extract %arg0[%[[V6]], %[[V13]]] : tensor<4x5xf32>
// CHECK-NEXT: linalg.yield %[[V14]] : f32
// CHECK-NEXT: } -> tensor<4x3xf32>
// CHECK-NEXT: return %[[V3]] : tensor<4x3xf32>
// CHECK-NEXT: }
joint.graph @index_select(%x: tensor<4x5xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %i: tensor<3xi64> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4x3xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::index_select.default"(%x, %i) {args = [#joint.operand<0>, 1, #joint.operand<1>], name = "index_select"} : (tensor<4x5xf32>, tensor<3xi64>) -> tensor<4x3xf32>
  joint.output %0 : tensor<4x3xf32>
}

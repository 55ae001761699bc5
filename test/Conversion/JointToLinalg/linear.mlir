// RUN: joint-opt %s -convert-joint-to-linalg -mlir-print-local-scope | FileCheck %s

// mm: linalg.matmul into a zero-filled f32 accumulator.
// CHECK-LABEL: func.func @mm_f32
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<4x8xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<8x16xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<4x16xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V2:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = tensor.empty() : tensor<4x16xf32>
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = linalg.fill ins(%[[V2]] : f32) outs(%[[V3]] : tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = linalg.matmul ins(%[[V0]], %[[V1]] : tensor<4x8xf32>, tensor<8x16xf32>) outs(%[[V4]] : tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: return %[[V5]] : tensor<4x16xf32>
// CHECK-NEXT: }
joint.graph @mm_f32(%a: tensor<4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %b: tensor<8x16xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4x16xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::mm.default"(%a, %b) {name = "mm"} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  joint.output %0 : tensor<4x16xf32>
}

// bf16 operands accumulate in f32 (linalg extends them), truncated once.
// CHECK-LABEL: func.func @mm_bf16_accumulates_in_f32
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<4x8xbf16> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<8x16xbf16> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<4x16xbf16> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V2:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = tensor.empty() : tensor<4x16xf32>
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = linalg.fill ins(%[[V2]] : f32) outs(%[[V3]] : tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = linalg.matmul ins(%[[V0]], %[[V1]] : tensor<4x8xbf16>, tensor<8x16xbf16>) outs(%[[V4]] : tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = tensor.empty() : tensor<4x16xbf16>
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[V5]] : tensor<4x16xf32>) outs(%[[V6]] : tensor<4x16xbf16>) {
// CHECK-NEXT: ^bb0(%[[V8:[^ ,:)]*]]: f32, %[[V9:[^ ,:)]*]]: bf16):
// CHECK-NEXT: %[[V10:[^ ,:)]*]] = arith.truncf %[[V8]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[V10]] : bf16
// CHECK-NEXT: } -> tensor<4x16xbf16>
// CHECK-NEXT: return %[[V7]] : tensor<4x16xbf16>
// CHECK-NEXT: }
joint.graph @mm_bf16_accumulates_in_f32(%a: tensor<4x8xbf16> {joint.role = #joint.role<input>, joint.path = "x"}, %b: tensor<8x16xbf16> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4x16xbf16> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::mm.default"(%a, %b) {name = "mm"} : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
  joint.output %0 : tensor<4x16xbf16>
}

// Dynamic rows come from tensor.dim of the left operand.
// CHECK-LABEL: func.func @mm_dynamic_rows
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<?x8xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<8x16xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<?x16xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V2:[^ ,:)]*]] = arith.constant 0 : index
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = tensor.dim %[[V0]], %[[V2]] : tensor<?x8xf32>
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = tensor.empty(%[[V3]]) : tensor<?x16xf32>
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = linalg.fill ins(%[[V4]] : f32) outs(%[[V5]] : tensor<?x16xf32>) -> tensor<?x16xf32>
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = linalg.matmul ins(%[[V0]], %[[V1]] : tensor<?x8xf32>, tensor<8x16xf32>) outs(%[[V6]] : tensor<?x16xf32>) -> tensor<?x16xf32>
// CHECK-NEXT: return %[[V7]] : tensor<?x16xf32>
// CHECK-NEXT: }
joint.graph @mm_dynamic_rows(%a: tensor<?x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %b: tensor<8x16xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<?x16xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::mm.default"(%a, %b) {name = "mm"} : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
  joint.output %0 : tensor<?x16xf32>
}

// CHECK-LABEL: func.func @bmm
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<2x4x8xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<2x8x3xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<2x4x3xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V2:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = tensor.empty() : tensor<2x4x3xf32>
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = linalg.fill ins(%[[V2]] : f32) outs(%[[V3]] : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = linalg.batch_matmul ins(%[[V0]], %[[V1]] : tensor<2x4x8xf32>, tensor<2x8x3xf32>) outs(%[[V4]] : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
// CHECK-NEXT: return %[[V5]] : tensor<2x4x3xf32>
// CHECK-NEXT: }
joint.graph @bmm(%a: tensor<2x4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %b: tensor<2x8x3xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<2x4x3xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::bmm.default"(%a, %b) {name = "bmm"} : (tensor<2x4x8xf32>, tensor<2x8x3xf32>) -> tensor<2x4x3xf32>
  joint.output %0 : tensor<2x4x3xf32>
}

// addmm: the bias is broadcast over rows and added in the epilogue.
// CHECK-LABEL: func.func @addmm_bias_broadcast
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<16xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<4x8xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V2:[^ ,:)]*]]: tensor<8x16xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<4x16xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = tensor.empty() : tensor<4x16xf32>
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = linalg.fill ins(%[[V3]] : f32) outs(%[[V4]] : tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = linalg.matmul ins(%[[V1]], %[[V2]] : tensor<4x8xf32>, tensor<8x16xf32>) outs(%[[V5]] : tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = tensor.empty() : tensor<4x16xf32>
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[V6]], %[[V0]] : tensor<4x16xf32>, tensor<16xf32>) outs(%[[V7]] : tensor<4x16xf32>) {
// CHECK-NEXT: ^bb0(%[[V9:[^ ,:)]*]]: f32, %[[V10:[^ ,:)]*]]: f32, %[[V11:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V12:[^ ,:)]*]] = arith.addf %[[V9]], %[[V10]] : f32
// CHECK-NEXT: linalg.yield %[[V12]] : f32
// CHECK-NEXT: } -> tensor<4x16xf32>
// CHECK-NEXT: return %[[V8]] : tensor<4x16xf32>
// CHECK-NEXT: }
joint.graph @addmm_bias_broadcast(%c: tensor<16xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %a: tensor<4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %b: tensor<8x16xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4x16xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::addmm.default"(%c, %a, %b) {name = "addmm"} : (tensor<16xf32>, tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  joint.output %0 : tensor<4x16xf32>
}

// beta and alpha scale the bias and the product in f32 before one truncation.
// CHECK-LABEL: func.func @addmm_beta_alpha_bf16
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<4x16xbf16> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<4x8xbf16> {joint.path = "x", joint.role = #joint.role<input>}, %[[V2:[^ ,:)]*]]: tensor<8x16xbf16> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<4x16xbf16> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = tensor.empty() : tensor<4x16xf32>
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = linalg.fill ins(%[[V3]] : f32) outs(%[[V4]] : tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = linalg.matmul ins(%[[V1]], %[[V2]] : tensor<4x8xbf16>, tensor<8x16xbf16>) outs(%[[V5]] : tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = tensor.empty() : tensor<4x16xbf16>
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[V6]], %[[V0]] : tensor<4x16xf32>, tensor<4x16xbf16>) outs(%[[V7]] : tensor<4x16xbf16>) {
// CHECK-NEXT: ^bb0(%[[V9:[^ ,:)]*]]: f32, %[[V10:[^ ,:)]*]]: bf16, %[[V11:[^ ,:)]*]]: bf16):
// CHECK-NEXT: %[[V12:[^ ,:)]*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[V13:[^ ,:)]*]] = arith.mulf %[[V12]], %[[V9]] : f32
// CHECK-NEXT: %[[V14:[^ ,:)]*]] = arith.extf %[[V10]] : bf16 to f32
// CHECK-NEXT: %[[V15:[^ ,:)]*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[V16:[^ ,:)]*]] = arith.mulf %[[V15]], %[[V14]] : f32
// CHECK-NEXT: %[[V17:[^ ,:)]*]] = arith.addf %[[V13]], %[[V16]] : f32
// CHECK-NEXT: %[[V18:[^ ,:)]*]] = arith.truncf %[[V17]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[V18]] : bf16
// CHECK-NEXT: } -> tensor<4x16xbf16>
// CHECK-NEXT: return %[[V8]] : tensor<4x16xbf16>
// CHECK-NEXT: }
joint.graph @addmm_beta_alpha_bf16(%c: tensor<4x16xbf16> {joint.role = #joint.role<input>, joint.path = "x"}, %a: tensor<4x8xbf16> {joint.role = #joint.role<input>, joint.path = "x"}, %b: tensor<8x16xbf16> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4x16xbf16> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::addmm.default"(%c, %a, %b) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>], kwargs = {alpha = 2.0 : f64, beta = 5.000000e-01 : f64}, name = "addmm"} : (tensor<4x16xbf16>, tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
  joint.output %0 : tensor<4x16xbf16>
}

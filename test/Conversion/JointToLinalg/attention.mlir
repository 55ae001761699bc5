// RUN: joint-opt %s -convert-joint-to-linalg -mlir-print-local-scope | FileCheck %s

// Forward: heads grouped as [B, Hk, G, L, E]; x = scale * q.k + mask; the
// row max and sum of exp(x - max), lse = max + log(sum) (stays f32); with
// bf16 operands, as torch's flash kernel: exp(x - max) rounded to bf16,
// out = (that . v) / sum, cast once to bf16.
// CHECK-LABEL: func.func @sdpa_for_cpu_mask_bf16
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<1x2x4x8xbf16> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<1x2x4x8xbf16> {joint.path = "x", joint.role = #joint.role<input>}, %[[V2:[^ ,:)]*]]: tensor<1x2x4x8xbf16> {joint.path = "x", joint.role = #joint.role<input>}, %[[V3:[^ ,:)]*]]: tensor<1x1x4x4xbf16> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<1x2x4x8xbf16> {joint.role = #joint.role<output>}, tensor<1x2x4xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = arith.constant 2.500000e-01 : f32
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = tensor.expand_shape %[[V0]] {{\[\[}}0], [1, 2], [3], [4{{\]\]}} output_shape [1, 2, 1, 4, 8] : tensor<1x2x4x8xbf16> into tensor<1x2x1x4x8xbf16>
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = linalg.fill ins(%[[V6]] : f32) outs(%[[V7]] : tensor<1x2x1x4x4xf32>) -> tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V9:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[V5]], %[[V1]] : tensor<1x2x1x4x8xbf16>, tensor<1x2x4x8xbf16>) outs(%[[V8]] : tensor<1x2x1x4x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V10:[^ ,:)]*]]: bf16, %[[V11:[^ ,:)]*]]: bf16, %[[V12:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V13:[^ ,:)]*]] = arith.extf %[[V10]] : bf16 to f32
// CHECK-NEXT: %[[V14:[^ ,:)]*]] = arith.extf %[[V11]] : bf16 to f32
// CHECK-NEXT: %[[V15:[^ ,:)]*]] = arith.mulf %[[V13]], %[[V14]] : f32
// CHECK-NEXT: %[[V16:[^ ,:)]*]] = arith.addf %[[V12]], %[[V15]] : f32
// CHECK-NEXT: linalg.yield %[[V16]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V17:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V18:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (0, 0, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[V9]], %[[V3]] : tensor<1x2x1x4x4xf32>, tensor<1x1x4x4xbf16>) outs(%[[V17]] : tensor<1x2x1x4x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V10]]: f32, %[[V11]]: bf16, %[[V12]]: f32):
// CHECK-NEXT: %[[V13]] = arith.mulf %[[V10]], %[[V4]] : f32
// CHECK-NEXT: %[[V19:[^ ,:)]*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[V14]] = arith.extf %[[V11]] : bf16 to f32
// CHECK-NEXT: %[[V15]] = arith.addf %[[V13]], %[[V14]] : f32
// CHECK-NEXT: linalg.yield %[[V15]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V20:[^ ,:)]*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[V21:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4xf32>
// CHECK-NEXT: %[[V22:[^ ,:)]*]] = linalg.fill ins(%[[V20]] : f32) outs(%[[V21]] : tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32>
// CHECK-NEXT: %[[V23:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[V18]] : tensor<1x2x1x4x4xf32>) outs(%[[V22]] : tensor<1x2x1x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V10]]: f32, %[[V12]]: f32):
// CHECK-NEXT: %[[V13]] = arith.maximumf %[[V12]], %[[V10]] : f32
// CHECK-NEXT: linalg.yield %[[V13]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4xf32>
// CHECK-NEXT: %[[V24:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V25:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4xf32>
// CHECK-NEXT: %[[V26:[^ ,:)]*]] = linalg.fill ins(%[[V24]] : f32) outs(%[[V25]] : tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32>
// CHECK-NEXT: %[[V27:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[V18]], %[[V23]] : tensor<1x2x1x4x4xf32>, tensor<1x2x1x4xf32>) outs(%[[V26]] : tensor<1x2x1x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V10]]: f32, %[[V11]]: f32, %[[V12]]: f32):
// CHECK-NEXT: %[[V13]] = arith.subf %[[V10]], %[[V11]] : f32
// CHECK-NEXT: %[[V14]] = math.exp %[[V13]] : f32
// CHECK-NEXT: %[[V15]] = arith.addf %[[V12]], %[[V14]] : f32
// CHECK-NEXT: linalg.yield %[[V15]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4xf32>
// CHECK-NEXT: %[[V28:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4xf32>
// CHECK-NEXT: %[[V29:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[V23]], %[[V27]] : tensor<1x2x1x4xf32>, tensor<1x2x1x4xf32>) outs(%[[V28]] : tensor<1x2x1x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V10]]: f32, %[[V11]]: f32, %[[V12]]: f32):
// CHECK-NEXT: %[[V13]] = math.log %[[V11]] : f32
// CHECK-NEXT: %[[V14]] = arith.addf %[[V10]], %[[V13]] : f32
// CHECK-NEXT: linalg.yield %[[V14]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4xf32>
// CHECK-NEXT: %[[V30:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4x4xbf16>
// CHECK-NEXT: %[[V31:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[V18]], %[[V23]] : tensor<1x2x1x4x4xf32>, tensor<1x2x1x4xf32>) outs(%[[V30]] : tensor<1x2x1x4x4xbf16>) {
// CHECK-NEXT: ^bb0(%[[V10]]: f32, %[[V11]]: f32, %[[V12]]: bf16):
// CHECK-NEXT: %[[V13]] = arith.subf %[[V10]], %[[V11]] : f32
// CHECK-NEXT: %[[V14]] = math.exp %[[V13]] : f32
// CHECK-NEXT: %[[V15]] = arith.truncf %[[V14]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[V15]] : bf16
// CHECK-NEXT: } -> tensor<1x2x1x4x4xbf16>
// CHECK-NEXT: %[[V32:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V33:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4x8xf32>
// CHECK-NEXT: %[[V34:[^ ,:)]*]] = linalg.fill ins(%[[V32]] : f32) outs(%[[V33]] : tensor<1x2x1x4x8xf32>) -> tensor<1x2x1x4x8xf32>
// CHECK-NEXT: %[[V35:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d5, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[V31]], %[[V2]] : tensor<1x2x1x4x4xbf16>, tensor<1x2x4x8xbf16>) outs(%[[V34]] : tensor<1x2x1x4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[V10]]: bf16, %[[V11]]: bf16, %[[V12]]: f32):
// CHECK-NEXT: %[[V13]] = arith.extf %[[V10]] : bf16 to f32
// CHECK-NEXT: %[[V14]] = arith.extf %[[V11]] : bf16 to f32
// CHECK-NEXT: %[[V15]] = arith.mulf %[[V13]], %[[V14]] : f32
// CHECK-NEXT: %[[V16]] = arith.addf %[[V12]], %[[V15]] : f32
// CHECK-NEXT: linalg.yield %[[V16]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4x8xf32>
// CHECK-NEXT: %[[V36:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4x8xbf16>
// CHECK-NEXT: %[[V37:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[V35]], %[[V27]] : tensor<1x2x1x4x8xf32>, tensor<1x2x1x4xf32>) outs(%[[V36]] : tensor<1x2x1x4x8xbf16>) {
// CHECK-NEXT: ^bb0(%[[V10]]: f32, %[[V11]]: f32, %[[V12]]: bf16):
// CHECK-NEXT: %[[V13]] = arith.divf %[[V10]], %[[V11]] : f32
// CHECK-NEXT: %[[V14]] = arith.truncf %[[V13]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[V14]] : bf16
// CHECK-NEXT: } -> tensor<1x2x1x4x8xbf16>
// CHECK-NEXT: %[[V38:[^ ,:)]*]] = tensor.collapse_shape %[[V37]] {{\[\[}}0], [1, 2], [3], [4{{\]\]}} : tensor<1x2x1x4x8xbf16> into tensor<1x2x4x8xbf16>
// CHECK-NEXT: %[[V39:[^ ,:)]*]] = tensor.collapse_shape %[[V29]] {{\[\[}}0], [1, 2], [3{{\]\]}} : tensor<1x2x1x4xf32> into tensor<1x2x4xf32>
// CHECK-NEXT: return %[[V38]], %[[V39]] : tensor<1x2x4x8xbf16>, tensor<1x2x4xf32>
// CHECK-NEXT: }
joint.graph @sdpa_for_cpu_mask_bf16(%q: tensor<1x2x4x8xbf16> {joint.role = #joint.role<input>, joint.path = "x"}, %k: tensor<1x2x4x8xbf16> {joint.role = #joint.role<input>, joint.path = "x"}, %v: tensor<1x2x4x8xbf16> {joint.role = #joint.role<input>, joint.path = "x"}, %m: tensor<1x1x4x4xbf16> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x2x4x8xbf16> {joint.role = #joint.role<output>}, tensor<1x2x4xf32> {joint.role = #joint.role<output>}) {
  %0, %1 = joint.call_function "aten::_scaled_dot_product_flash_attention_for_cpu.default"(%q, %k, %v, %m) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>], kwargs = {attn_mask = #joint.operand<3>, scale = 2.500000e-01 : f64}, name = "sdpa"} : (tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x1x4x4xbf16>) -> (tensor<1x2x4x8xbf16>, tensor<1x2x4xf32>)
  joint.output %0, %1 : tensor<1x2x4x8xbf16>, tensor<1x2x4xf32>
}

// is_causal masks s > l; the default scale is rsqrt(E); two query heads per
// key/value head read kv head h / 2 (grouped-query attention).
// CHECK-LABEL: func.func @sdpa_causal_gqa_default_scale
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<1x4x4x8xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<1x2x4x8xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V2:[^ ,:)]*]]: tensor<1x2x4x8xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<1x4x4x8xf32> {joint.role = #joint.role<output>}, tensor<1x4x4xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = arith.constant 8 : index
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = arith.index_cast %[[V3]] : index to i64
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = arith.sitofp %[[V4]] : i64 to f32
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = math.rsqrt %[[V5]] : f32
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = tensor.expand_shape %[[V0]] {{\[\[}}0], [1, 2], [3], [4{{\]\]}} output_shape [1, 2, 2, 4, 8] : tensor<1x4x4x8xf32> into tensor<1x2x2x4x8xf32>
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V9:[^ ,:)]*]] = tensor.empty() : tensor<1x2x2x4x4xf32>
// CHECK-NEXT: %[[V10:[^ ,:)]*]] = linalg.fill ins(%[[V8]] : f32) outs(%[[V9]] : tensor<1x2x2x4x4xf32>) -> tensor<1x2x2x4x4xf32>
// CHECK-NEXT: %[[V11:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[V7]], %[[V1]] : tensor<1x2x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%[[V10]] : tensor<1x2x2x4x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V12:[^ ,:)]*]]: f32, %[[V13:[^ ,:)]*]]: f32, %[[V14:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V15:[^ ,:)]*]] = arith.mulf %[[V12]], %[[V13]] : f32
// CHECK-NEXT: %[[V16:[^ ,:)]*]] = arith.addf %[[V14]], %[[V15]] : f32
// CHECK-NEXT: linalg.yield %[[V16]] : f32
// CHECK-NEXT: } -> tensor<1x2x2x4x4xf32>
// CHECK-NEXT: %[[V17:[^ ,:)]*]] = tensor.empty() : tensor<1x2x2x4x4xf32>
// CHECK-NEXT: %[[V18:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[V11]] : tensor<1x2x2x4x4xf32>) outs(%[[V17]] : tensor<1x2x2x4x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V12]]: f32, %[[V14]]: f32):
// CHECK-NEXT: %[[V15]] = arith.mulf %[[V12]], %[[V6]] : f32
// CHECK-NEXT: %[[V19:[^ ,:)]*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[V16]] = linalg.index 3 : index
// CHECK-NEXT: %[[V20:[^ ,:)]*]] = linalg.index 4 : index
// CHECK-NEXT: %[[V21:[^ ,:)]*]] = arith.cmpi ule, %[[V20]], %[[V16]] : index
// CHECK-NEXT: %[[V22:[^ ,:)]*]] = arith.select %[[V21]], %[[V15]], %[[V19]] : f32
// CHECK-NEXT: linalg.yield %[[V22]] : f32
// CHECK-NEXT: } -> tensor<1x2x2x4x4xf32>
// CHECK-NEXT: %[[V23:[^ ,:)]*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[V24:[^ ,:)]*]] = tensor.empty() : tensor<1x2x2x4xf32>
// CHECK-NEXT: %[[V25:[^ ,:)]*]] = linalg.fill ins(%[[V23]] : f32) outs(%[[V24]] : tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
// CHECK-NEXT: %[[V26:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[V18]] : tensor<1x2x2x4x4xf32>) outs(%[[V25]] : tensor<1x2x2x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V12]]: f32, %[[V14]]: f32):
// CHECK-NEXT: %[[V15]] = arith.maximumf %[[V14]], %[[V12]] : f32
// CHECK-NEXT: linalg.yield %[[V15]] : f32
// CHECK-NEXT: } -> tensor<1x2x2x4xf32>
// CHECK-NEXT: %[[V27:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V28:[^ ,:)]*]] = tensor.empty() : tensor<1x2x2x4xf32>
// CHECK-NEXT: %[[V29:[^ ,:)]*]] = linalg.fill ins(%[[V27]] : f32) outs(%[[V28]] : tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
// CHECK-NEXT: %[[V30:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[V18]], %[[V26]] : tensor<1x2x2x4x4xf32>, tensor<1x2x2x4xf32>) outs(%[[V29]] : tensor<1x2x2x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V12]]: f32, %[[V13]]: f32, %[[V14]]: f32):
// CHECK-NEXT: %[[V15]] = arith.subf %[[V12]], %[[V13]] : f32
// CHECK-NEXT: %[[V16]] = math.exp %[[V15]] : f32
// CHECK-NEXT: %[[V20]] = arith.addf %[[V14]], %[[V16]] : f32
// CHECK-NEXT: linalg.yield %[[V20]] : f32
// CHECK-NEXT: } -> tensor<1x2x2x4xf32>
// CHECK-NEXT: %[[V31:[^ ,:)]*]] = tensor.empty() : tensor<1x2x2x4xf32>
// CHECK-NEXT: %[[V32:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[V26]], %[[V30]] : tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) outs(%[[V31]] : tensor<1x2x2x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V12]]: f32, %[[V13]]: f32, %[[V14]]: f32):
// CHECK-NEXT: %[[V15]] = math.log %[[V13]] : f32
// CHECK-NEXT: %[[V16]] = arith.addf %[[V12]], %[[V15]] : f32
// CHECK-NEXT: linalg.yield %[[V16]] : f32
// CHECK-NEXT: } -> tensor<1x2x2x4xf32>
// CHECK-NEXT: %[[V33:[^ ,:)]*]] = tensor.empty() : tensor<1x2x2x4x4xf32>
// CHECK-NEXT: %[[V34:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[V18]], %[[V32]] : tensor<1x2x2x4x4xf32>, tensor<1x2x2x4xf32>) outs(%[[V33]] : tensor<1x2x2x4x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V12]]: f32, %[[V13]]: f32, %[[V14]]: f32):
// CHECK-NEXT: %[[V15]] = arith.subf %[[V12]], %[[V13]] : f32
// CHECK-NEXT: %[[V16]] = math.exp %[[V15]] : f32
// CHECK-NEXT: linalg.yield %[[V16]] : f32
// CHECK-NEXT: } -> tensor<1x2x2x4x4xf32>
// CHECK-NEXT: %[[V35:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V36:[^ ,:)]*]] = tensor.empty() : tensor<1x2x2x4x8xf32>
// CHECK-NEXT: %[[V37:[^ ,:)]*]] = linalg.fill ins(%[[V35]] : f32) outs(%[[V36]] : tensor<1x2x2x4x8xf32>) -> tensor<1x2x2x4x8xf32>
// CHECK-NEXT: %[[V38:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d5, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[V34]], %[[V2]] : tensor<1x2x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%[[V37]] : tensor<1x2x2x4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[V12]]: f32, %[[V13]]: f32, %[[V14]]: f32):
// CHECK-NEXT: %[[V15]] = arith.mulf %[[V12]], %[[V13]] : f32
// CHECK-NEXT: %[[V16]] = arith.addf %[[V14]], %[[V15]] : f32
// CHECK-NEXT: linalg.yield %[[V16]] : f32
// CHECK-NEXT: } -> tensor<1x2x2x4x8xf32>
// CHECK-NEXT: %[[V39:[^ ,:)]*]] = tensor.empty() : tensor<1x2x2x4x8xf32>
// CHECK-NEXT: %[[V40:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[V38]] : tensor<1x2x2x4x8xf32>) outs(%[[V39]] : tensor<1x2x2x4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[V12]]: f32, %[[V14]]: f32):
// CHECK-NEXT: linalg.yield %[[V12]] : f32
// CHECK-NEXT: } -> tensor<1x2x2x4x8xf32>
// CHECK-NEXT: %[[V41:[^ ,:)]*]] = tensor.collapse_shape %[[V40]] {{\[\[}}0], [1, 2], [3], [4{{\]\]}} : tensor<1x2x2x4x8xf32> into tensor<1x4x4x8xf32>
// CHECK-NEXT: %[[V42:[^ ,:)]*]] = tensor.collapse_shape %[[V32]] {{\[\[}}0], [1, 2], [3{{\]\]}} : tensor<1x2x2x4xf32> into tensor<1x4x4xf32>
// CHECK-NEXT: return %[[V41]], %[[V42]] : tensor<1x4x4x8xf32>, tensor<1x4x4xf32>
// CHECK-NEXT: }
joint.graph @sdpa_causal_gqa_default_scale(%q: tensor<1x4x4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %k: tensor<1x2x4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %v: tensor<1x2x4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x4x4x8xf32> {joint.role = #joint.role<output>}, tensor<1x4x4xf32> {joint.role = #joint.role<output>}) {
  %0, %1 = joint.call_function "aten::_scaled_dot_product_flash_attention_for_cpu.default"(%q, %k, %v) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>, 0.0, true], name = "sdpa"} : (tensor<1x4x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x4x4x8xf32>, tensor<1x4x4xf32>)
  joint.output %0, %1 : tensor<1x4x4x8xf32>, tensor<1x4x4xf32>
}

// Backward from the saved logsumexp: P, dP = dO.v, D = rowsum(dO * O),
// dS = P * (dP - D), dQ = scale * dS.k, dK = scale * dS^T.q, dV = P^T.dO.
// CHECK-LABEL: func.func @sdpa_for_cpu_backward
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<1x2x4x8xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<1x2x4x8xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V2:[^ ,:)]*]]: tensor<1x2x4x8xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V3:[^ ,:)]*]]: tensor<1x2x4x8xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V4:[^ ,:)]*]]: tensor<1x2x4x8xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V5:[^ ,:)]*]]: tensor<1x2x4xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V6:[^ ,:)]*]]: tensor<1x1x4x4xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<1x2x4x8xf32> {joint.role = #joint.role<output>}, tensor<1x2x4x8xf32> {joint.role = #joint.role<output>}, tensor<1x2x4x8xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = arith.constant 2.500000e-01 : f32
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = tensor.expand_shape %[[V1]] {{\[\[}}0], [1, 2], [3], [4{{\]\]}} output_shape [1, 2, 1, 4, 8] : tensor<1x2x4x8xf32> into tensor<1x2x1x4x8xf32>
// CHECK-NEXT: %[[V9:[^ ,:)]*]] = tensor.expand_shape %[[V5]] {{\[\[}}0], [1, 2], [3{{\]\]}} output_shape [1, 2, 1, 4] : tensor<1x2x4xf32> into tensor<1x2x1x4xf32>
// CHECK-NEXT: %[[V10:[^ ,:)]*]] = tensor.expand_shape %[[V0]] {{\[\[}}0], [1, 2], [3], [4{{\]\]}} output_shape [1, 2, 1, 4, 8] : tensor<1x2x4x8xf32> into tensor<1x2x1x4x8xf32>
// CHECK-NEXT: %[[V11:[^ ,:)]*]] = tensor.expand_shape %[[V4]] {{\[\[}}0], [1, 2], [3], [4{{\]\]}} output_shape [1, 2, 1, 4, 8] : tensor<1x2x4x8xf32> into tensor<1x2x1x4x8xf32>
// CHECK-NEXT: %[[V12:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V13:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V14:[^ ,:)]*]] = linalg.fill ins(%[[V12]] : f32) outs(%[[V13]] : tensor<1x2x1x4x4xf32>) -> tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V15:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[V8]], %[[V2]] : tensor<1x2x1x4x8xf32>, tensor<1x2x4x8xf32>) outs(%[[V14]] : tensor<1x2x1x4x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V16:[^ ,:)]*]]: f32, %[[V17:[^ ,:)]*]]: f32, %[[V18:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V19:[^ ,:)]*]] = arith.mulf %[[V16]], %[[V17]] : f32
// CHECK-NEXT: %[[V20:[^ ,:)]*]] = arith.addf %[[V18]], %[[V19]] : f32
// CHECK-NEXT: linalg.yield %[[V20]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V21:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V22:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (0, 0, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[V15]], %[[V6]] : tensor<1x2x1x4x4xf32>, tensor<1x1x4x4xf32>) outs(%[[V21]] : tensor<1x2x1x4x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V16]]: f32, %[[V17]]: f32, %[[V18]]: f32):
// CHECK-NEXT: %[[V19]] = arith.mulf %[[V16]], %[[V7]] : f32
// CHECK-NEXT: %[[V23:[^ ,:)]*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[V20]] = arith.addf %[[V19]], %[[V17]] : f32
// CHECK-NEXT: linalg.yield %[[V20]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V24:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V25:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[V22]], %[[V9]] : tensor<1x2x1x4x4xf32>, tensor<1x2x1x4xf32>) outs(%[[V24]] : tensor<1x2x1x4x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V16]]: f32, %[[V17]]: f32, %[[V18]]: f32):
// CHECK-NEXT: %[[V19]] = arith.subf %[[V16]], %[[V17]] : f32
// CHECK-NEXT: %[[V20]] = math.exp %[[V19]] : f32
// CHECK-NEXT: linalg.yield %[[V20]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V26:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V27:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V28:[^ ,:)]*]] = linalg.fill ins(%[[V26]] : f32) outs(%[[V27]] : tensor<1x2x1x4x4xf32>) -> tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V29:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[V10]], %[[V3]] : tensor<1x2x1x4x8xf32>, tensor<1x2x4x8xf32>) outs(%[[V28]] : tensor<1x2x1x4x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V16]]: f32, %[[V17]]: f32, %[[V18]]: f32):
// CHECK-NEXT: %[[V19]] = arith.mulf %[[V16]], %[[V17]] : f32
// CHECK-NEXT: %[[V20]] = arith.addf %[[V18]], %[[V19]] : f32
// CHECK-NEXT: linalg.yield %[[V20]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V30:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V31:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4xf32>
// CHECK-NEXT: %[[V32:[^ ,:)]*]] = linalg.fill ins(%[[V30]] : f32) outs(%[[V31]] : tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32>
// CHECK-NEXT: %[[V33:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[V10]], %[[V11]] : tensor<1x2x1x4x8xf32>, tensor<1x2x1x4x8xf32>) outs(%[[V32]] : tensor<1x2x1x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V16]]: f32, %[[V17]]: f32, %[[V18]]: f32):
// CHECK-NEXT: %[[V19]] = arith.mulf %[[V16]], %[[V17]] : f32
// CHECK-NEXT: %[[V20]] = arith.addf %[[V18]], %[[V19]] : f32
// CHECK-NEXT: linalg.yield %[[V20]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4xf32>
// CHECK-NEXT: %[[V35:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[V25]], %[[V33]] : tensor<1x2x1x4x4xf32>, tensor<1x2x1x4xf32>) outs(%[[V29]] : tensor<1x2x1x4x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V16]]: f32, %[[V17]]: f32, %[[V18]]: f32):
// CHECK-NEXT: %[[V19]] = arith.subf %[[V18]], %[[V17]] : f32
// CHECK-NEXT: %[[V20]] = arith.mulf %[[V16]], %[[V19]] : f32
// CHECK-NEXT: linalg.yield %[[V20]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V37:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V38:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4x8xf32>
// CHECK-NEXT: %[[V39:[^ ,:)]*]] = linalg.fill ins(%[[V37]] : f32) outs(%[[V38]] : tensor<1x2x1x4x8xf32>) -> tensor<1x2x1x4x8xf32>
// CHECK-NEXT: %[[V40:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d5, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[V35]], %[[V2]] : tensor<1x2x1x4x4xf32>, tensor<1x2x4x8xf32>) outs(%[[V39]] : tensor<1x2x1x4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[V16]]: f32, %[[V17]]: f32, %[[V18]]: f32):
// CHECK-NEXT: %[[V19]] = arith.mulf %[[V16]], %[[V17]] : f32
// CHECK-NEXT: %[[V20]] = arith.addf %[[V18]], %[[V19]] : f32
// CHECK-NEXT: linalg.yield %[[V20]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4x8xf32>
// CHECK-NEXT: %[[V41:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V42:[^ ,:)]*]] = tensor.empty() : tensor<1x2x4x8xf32>
// CHECK-NEXT: %[[V43:[^ ,:)]*]] = linalg.fill ins(%[[V41]] : f32) outs(%[[V42]] : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT: %[[V44:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5, d2)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[V35]], %[[V8]] : tensor<1x2x1x4x4xf32>, tensor<1x2x1x4x8xf32>) outs(%[[V43]] : tensor<1x2x4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[V16]]: f32, %[[V17]]: f32, %[[V18]]: f32):
// CHECK-NEXT: %[[V19]] = arith.mulf %[[V16]], %[[V17]] : f32
// CHECK-NEXT: %[[V20]] = arith.addf %[[V18]], %[[V19]] : f32
// CHECK-NEXT: linalg.yield %[[V20]] : f32
// CHECK-NEXT: } -> tensor<1x2x4x8xf32>
// CHECK-NEXT: %[[V45:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V46:[^ ,:)]*]] = tensor.empty() : tensor<1x2x4x8xf32>
// CHECK-NEXT: %[[V47:[^ ,:)]*]] = linalg.fill ins(%[[V45]] : f32) outs(%[[V46]] : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT: %[[V48:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5, d2)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[V25]], %[[V10]] : tensor<1x2x1x4x4xf32>, tensor<1x2x1x4x8xf32>) outs(%[[V47]] : tensor<1x2x4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[V16]]: f32, %[[V17]]: f32, %[[V18]]: f32):
// CHECK-NEXT: %[[V19]] = arith.mulf %[[V16]], %[[V17]] : f32
// CHECK-NEXT: %[[V20]] = arith.addf %[[V18]], %[[V19]] : f32
// CHECK-NEXT: linalg.yield %[[V20]] : f32
// CHECK-NEXT: } -> tensor<1x2x4x8xf32>
// CHECK-NEXT: %[[V49:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4x8xf32>
// CHECK-NEXT: %[[V50:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[V40]] : tensor<1x2x1x4x8xf32>) outs(%[[V49]] : tensor<1x2x1x4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[V16]]: f32, %[[V18]]: f32):
// CHECK-NEXT: %[[V19]] = arith.mulf %[[V16]], %[[V7]] : f32
// CHECK-NEXT: linalg.yield %[[V19]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4x8xf32>
// CHECK-NEXT: %[[V51:[^ ,:)]*]] = tensor.collapse_shape %[[V50]] {{\[\[}}0], [1, 2], [3], [4{{\]\]}} : tensor<1x2x1x4x8xf32> into tensor<1x2x4x8xf32>
// CHECK-NEXT: %[[V52:[^ ,:)]*]] = tensor.empty() : tensor<1x2x4x8xf32>
// CHECK-NEXT: %[[V53:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[V44]] : tensor<1x2x4x8xf32>) outs(%[[V52]] : tensor<1x2x4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[V16]]: f32, %[[V18]]: f32):
// CHECK-NEXT: %[[V19]] = arith.mulf %[[V16]], %[[V7]] : f32
// CHECK-NEXT: linalg.yield %[[V19]] : f32
// CHECK-NEXT: } -> tensor<1x2x4x8xf32>
// CHECK-NEXT: %[[V54:[^ ,:)]*]] = tensor.empty() : tensor<1x2x4x8xf32>
// CHECK-NEXT: %[[V55:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[V48]] : tensor<1x2x4x8xf32>) outs(%[[V54]] : tensor<1x2x4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[V16]]: f32, %[[V18]]: f32):
// CHECK-NEXT: linalg.yield %[[V16]] : f32
// CHECK-NEXT: } -> tensor<1x2x4x8xf32>
// CHECK-NEXT: return %[[V51]], %[[V53]], %[[V55]] : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>
// CHECK-NEXT: }
joint.graph @sdpa_for_cpu_backward(%do: tensor<1x2x4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %q: tensor<1x2x4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %k: tensor<1x2x4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %v: tensor<1x2x4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %o: tensor<1x2x4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %lse: tensor<1x2x4xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %m: tensor<1x1x4x4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x2x4x8xf32> {joint.role = #joint.role<output>}, tensor<1x2x4x8xf32> {joint.role = #joint.role<output>}, tensor<1x2x4x8xf32> {joint.role = #joint.role<output>}) {
  %0, %1, %2 = joint.call_function "aten::_scaled_dot_product_flash_attention_for_cpu_backward.default"(%do, %q, %k, %v, %o, %lse, %m) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>, #joint.operand<3>, #joint.operand<4>, #joint.operand<5>, 0.000000e+00, false], kwargs = {attn_mask = #joint.operand<6>, scale = 2.500000e-01 : f64}, name = "sdpa_backward"} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<1x1x4x4xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
  joint.output %0, %1, %2 : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>
}

// The CUDA flash variant: same decomposition; the RNG state results are zero
// tensors, max_q/max_k the sequence lengths, unused None results dropped.
// CHECK-LABEL: func.func @sdpa_flash_cuda_results
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<1x2x4x8xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<1x2x4x8xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V2:[^ ,:)]*]]: tensor<1x2x4x8xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<1x2x4x8xf32> {joint.role = #joint.role<output>}, tensor<1x2x4xf32> {joint.role = #joint.role<output>}, i64 {joint.role = #joint.role<output>}, tensor<2xui64> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = arith.constant 2.500000e-01 : f32
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = tensor.expand_shape %[[V0]] {{\[\[}}0], [1, 2], [3], [4{{\]\]}} output_shape [1, 2, 1, 4, 8] : tensor<1x2x4x8xf32> into tensor<1x2x1x4x8xf32>
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = linalg.fill ins(%[[V5]] : f32) outs(%[[V6]] : tensor<1x2x1x4x4xf32>) -> tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[V4]], %[[V1]] : tensor<1x2x1x4x8xf32>, tensor<1x2x4x8xf32>) outs(%[[V7]] : tensor<1x2x1x4x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V9:[^ ,:)]*]]: f32, %[[V10:[^ ,:)]*]]: f32, %[[V11:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V12:[^ ,:)]*]] = arith.mulf %[[V9]], %[[V10]] : f32
// CHECK-NEXT: %[[V13:[^ ,:)]*]] = arith.addf %[[V11]], %[[V12]] : f32
// CHECK-NEXT: linalg.yield %[[V13]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V14:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V15:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[V8]] : tensor<1x2x1x4x4xf32>) outs(%[[V14]] : tensor<1x2x1x4x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V9]]: f32, %[[V11]]: f32):
// CHECK-NEXT: %[[V12]] = arith.mulf %[[V9]], %[[V3]] : f32
// CHECK-NEXT: %[[V16:[^ ,:)]*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: linalg.yield %[[V12]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V17:[^ ,:)]*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[V18:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4xf32>
// CHECK-NEXT: %[[V19:[^ ,:)]*]] = linalg.fill ins(%[[V17]] : f32) outs(%[[V18]] : tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32>
// CHECK-NEXT: %[[V20:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[V15]] : tensor<1x2x1x4x4xf32>) outs(%[[V19]] : tensor<1x2x1x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V9]]: f32, %[[V11]]: f32):
// CHECK-NEXT: %[[V12]] = arith.maximumf %[[V11]], %[[V9]] : f32
// CHECK-NEXT: linalg.yield %[[V12]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4xf32>
// CHECK-NEXT: %[[V21:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V22:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4xf32>
// CHECK-NEXT: %[[V23:[^ ,:)]*]] = linalg.fill ins(%[[V21]] : f32) outs(%[[V22]] : tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32>
// CHECK-NEXT: %[[V24:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[V15]], %[[V20]] : tensor<1x2x1x4x4xf32>, tensor<1x2x1x4xf32>) outs(%[[V23]] : tensor<1x2x1x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V9]]: f32, %[[V10]]: f32, %[[V11]]: f32):
// CHECK-NEXT: %[[V12]] = arith.subf %[[V9]], %[[V10]] : f32
// CHECK-NEXT: %[[V13]] = math.exp %[[V12]] : f32
// CHECK-NEXT: %[[V25:[^ ,:)]*]] = arith.addf %[[V11]], %[[V13]] : f32
// CHECK-NEXT: linalg.yield %[[V25]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4xf32>
// CHECK-NEXT: %[[V26:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4xf32>
// CHECK-NEXT: %[[V27:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[V20]], %[[V24]] : tensor<1x2x1x4xf32>, tensor<1x2x1x4xf32>) outs(%[[V26]] : tensor<1x2x1x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V9]]: f32, %[[V10]]: f32, %[[V11]]: f32):
// CHECK-NEXT: %[[V12]] = math.log %[[V10]] : f32
// CHECK-NEXT: %[[V13]] = arith.addf %[[V9]], %[[V12]] : f32
// CHECK-NEXT: linalg.yield %[[V13]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4xf32>
// CHECK-NEXT: %[[V28:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V29:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[V15]], %[[V27]] : tensor<1x2x1x4x4xf32>, tensor<1x2x1x4xf32>) outs(%[[V28]] : tensor<1x2x1x4x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V9]]: f32, %[[V10]]: f32, %[[V11]]: f32):
// CHECK-NEXT: %[[V12]] = arith.subf %[[V9]], %[[V10]] : f32
// CHECK-NEXT: %[[V13]] = math.exp %[[V12]] : f32
// CHECK-NEXT: linalg.yield %[[V13]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V30:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V31:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4x8xf32>
// CHECK-NEXT: %[[V32:[^ ,:)]*]] = linalg.fill ins(%[[V30]] : f32) outs(%[[V31]] : tensor<1x2x1x4x8xf32>) -> tensor<1x2x1x4x8xf32>
// CHECK-NEXT: %[[V33:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d5, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[V29]], %[[V2]] : tensor<1x2x1x4x4xf32>, tensor<1x2x4x8xf32>) outs(%[[V32]] : tensor<1x2x1x4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[V9]]: f32, %[[V10]]: f32, %[[V11]]: f32):
// CHECK-NEXT: %[[V12]] = arith.mulf %[[V9]], %[[V10]] : f32
// CHECK-NEXT: %[[V13]] = arith.addf %[[V11]], %[[V12]] : f32
// CHECK-NEXT: linalg.yield %[[V13]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4x8xf32>
// CHECK-NEXT: %[[V34:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4x8xf32>
// CHECK-NEXT: %[[V35:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[V33]] : tensor<1x2x1x4x8xf32>) outs(%[[V34]] : tensor<1x2x1x4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[V9]]: f32, %[[V11]]: f32):
// CHECK-NEXT: linalg.yield %[[V9]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4x8xf32>
// CHECK-NEXT: %[[V36:[^ ,:)]*]] = tensor.collapse_shape %[[V35]] {{\[\[}}0], [1, 2], [3], [4{{\]\]}} : tensor<1x2x1x4x8xf32> into tensor<1x2x4x8xf32>
// CHECK-NEXT: %[[V37:[^ ,:)]*]] = tensor.collapse_shape %[[V27]] {{\[\[}}0], [1, 2], [3{{\]\]}} : tensor<1x2x1x4xf32> into tensor<1x2x4xf32>
// CHECK-NEXT: %[[V38:[^ ,:)]*]] = arith.constant 4 : index
// CHECK-NEXT: %[[V39:[^ ,:)]*]] = arith.index_cast %[[V38]] : index to i64
// CHECK-NEXT: %[[V40:[^ ,:)]*]] = arith.constant 4 : index
// CHECK-NEXT: %[[V41:[^ ,:)]*]] = arith.index_cast %[[V40]] : index to i64
// CHECK-NEXT: %[[V42:[^ ,:)]*]] = arith.constant dense<0> : tensor<2xui64>
// CHECK-NEXT: %[[V43:[^ ,:)]*]] = arith.constant dense<0> : tensor<ui64>
// CHECK-NEXT: %[[V44:[^ ,:)]*]] = tensor.empty() : tensor<0xf32>
// CHECK-NEXT: return %[[V36]], %[[V37]], %[[V39]], %[[V42]] : tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, i64, tensor<2xui64>
// CHECK-NEXT: }
joint.graph @sdpa_flash_cuda_results(%q: tensor<1x2x4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %k: tensor<1x2x4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %v: tensor<1x2x4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x2x4x8xf32> {joint.role = #joint.role<output>}, tensor<1x2x4xf32> {joint.role = #joint.role<output>}, i64 {joint.role = #joint.role<output>}, tensor<2xui64> {joint.role = #joint.role<output>}) {
  %0:9 = joint.call_function "aten::_scaled_dot_product_flash_attention.default"(%q, %k, %v) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>], kwargs = {scale = 2.500000e-01 : f64}, name = "sdpa"} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, none, none, i64, i64, tensor<2xui64>, tensor<ui64>, tensor<0xf32>)
  joint.output %0#0, %0#1, %0#4, %0#6 : tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, i64, tensor<2xui64>
}

// bf16 backward, as torch's flash kernel: P (f32) and dS rounded to bf16 as
// the operands of dV = P^T.dO and of dQ = scale * dS.k, dK = scale * dS^T.q.
// CHECK-LABEL: func.func @sdpa_for_cpu_backward_bf16
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<1x2x4x8xbf16> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<1x2x4x8xbf16> {joint.path = "x", joint.role = #joint.role<input>}, %[[V2:[^ ,:)]*]]: tensor<1x2x4x8xbf16> {joint.path = "x", joint.role = #joint.role<input>}, %[[V3:[^ ,:)]*]]: tensor<1x2x4x8xbf16> {joint.path = "x", joint.role = #joint.role<input>}, %[[V4:[^ ,:)]*]]: tensor<1x2x4x8xbf16> {joint.path = "x", joint.role = #joint.role<input>}, %[[V5:[^ ,:)]*]]: tensor<1x2x4xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<1x2x4x8xbf16> {joint.role = #joint.role<output>}, tensor<1x2x4x8xbf16> {joint.role = #joint.role<output>}, tensor<1x2x4x8xbf16> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = arith.constant 2.500000e-01 : f32
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = tensor.expand_shape %[[V1]] {{\[\[}}0], [1, 2], [3], [4{{\]\]}} output_shape [1, 2, 1, 4, 8] : tensor<1x2x4x8xbf16> into tensor<1x2x1x4x8xbf16>
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = tensor.expand_shape %[[V5]] {{\[\[}}0], [1, 2], [3{{\]\]}} output_shape [1, 2, 1, 4] : tensor<1x2x4xf32> into tensor<1x2x1x4xf32>
// CHECK-NEXT: %[[V9:[^ ,:)]*]] = tensor.expand_shape %[[V0]] {{\[\[}}0], [1, 2], [3], [4{{\]\]}} output_shape [1, 2, 1, 4, 8] : tensor<1x2x4x8xbf16> into tensor<1x2x1x4x8xbf16>
// CHECK-NEXT: %[[V10:[^ ,:)]*]] = tensor.expand_shape %[[V4]] {{\[\[}}0], [1, 2], [3], [4{{\]\]}} output_shape [1, 2, 1, 4, 8] : tensor<1x2x4x8xbf16> into tensor<1x2x1x4x8xbf16>
// CHECK-NEXT: %[[V11:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V12:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V13:[^ ,:)]*]] = linalg.fill ins(%[[V11]] : f32) outs(%[[V12]] : tensor<1x2x1x4x4xf32>) -> tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V14:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[V7]], %[[V2]] : tensor<1x2x1x4x8xbf16>, tensor<1x2x4x8xbf16>) outs(%[[V13]] : tensor<1x2x1x4x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V15:[^ ,:)]*]]: bf16, %[[V16:[^ ,:)]*]]: bf16, %[[V17:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V18:[^ ,:)]*]] = arith.extf %[[V15]] : bf16 to f32
// CHECK-NEXT: %[[V19:[^ ,:)]*]] = arith.extf %[[V16]] : bf16 to f32
// CHECK-NEXT: %[[V20:[^ ,:)]*]] = arith.mulf %[[V18]], %[[V19]] : f32
// CHECK-NEXT: %[[V21:[^ ,:)]*]] = arith.addf %[[V17]], %[[V20]] : f32
// CHECK-NEXT: linalg.yield %[[V21]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V22:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V23:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[V14]] : tensor<1x2x1x4x4xf32>) outs(%[[V22]] : tensor<1x2x1x4x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V15]]: f32, %[[V17]]: f32):
// CHECK-NEXT: %[[V18]] = arith.mulf %[[V15]], %[[V6]] : f32
// CHECK-NEXT: %[[V24:[^ ,:)]*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: linalg.yield %[[V18]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V25:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V26:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[V23]], %[[V8]] : tensor<1x2x1x4x4xf32>, tensor<1x2x1x4xf32>) outs(%[[V25]] : tensor<1x2x1x4x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V15]]: f32, %[[V16]]: f32, %[[V17]]: f32):
// CHECK-NEXT: %[[V18]] = arith.subf %[[V15]], %[[V16]] : f32
// CHECK-NEXT: %[[V19]] = math.exp %[[V18]] : f32
// CHECK-NEXT: linalg.yield %[[V19]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V27:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V28:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V29:[^ ,:)]*]] = linalg.fill ins(%[[V27]] : f32) outs(%[[V28]] : tensor<1x2x1x4x4xf32>) -> tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V30:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[V9]], %[[V3]] : tensor<1x2x1x4x8xbf16>, tensor<1x2x4x8xbf16>) outs(%[[V29]] : tensor<1x2x1x4x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V15]]: bf16, %[[V16]]: bf16, %[[V17]]: f32):
// CHECK-NEXT: %[[V18]] = arith.extf %[[V15]] : bf16 to f32
// CHECK-NEXT: %[[V19]] = arith.extf %[[V16]] : bf16 to f32
// CHECK-NEXT: %[[V20]] = arith.mulf %[[V18]], %[[V19]] : f32
// CHECK-NEXT: %[[V21]] = arith.addf %[[V17]], %[[V20]] : f32
// CHECK-NEXT: linalg.yield %[[V21]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V31:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V32:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4xf32>
// CHECK-NEXT: %[[V33:[^ ,:)]*]] = linalg.fill ins(%[[V31]] : f32) outs(%[[V32]] : tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32>
// CHECK-NEXT: %[[V34:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[V9]], %[[V10]] : tensor<1x2x1x4x8xbf16>, tensor<1x2x1x4x8xbf16>) outs(%[[V33]] : tensor<1x2x1x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V15]]: bf16, %[[V16]]: bf16, %[[V17]]: f32):
// CHECK-NEXT: %[[V18]] = arith.extf %[[V16]] : bf16 to f32
// CHECK-NEXT: %[[V19]] = arith.extf %[[V15]] : bf16 to f32
// CHECK-NEXT: %[[V20]] = arith.mulf %[[V19]], %[[V18]] : f32
// CHECK-NEXT: %[[V21]] = arith.addf %[[V17]], %[[V20]] : f32
// CHECK-NEXT: linalg.yield %[[V21]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4xf32>
// CHECK-NEXT: %[[V36:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[V26]], %[[V34]] : tensor<1x2x1x4x4xf32>, tensor<1x2x1x4xf32>) outs(%[[V30]] : tensor<1x2x1x4x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V15]]: f32, %[[V16]]: f32, %[[V17]]: f32):
// CHECK-NEXT: %[[V18]] = arith.subf %[[V17]], %[[V16]] : f32
// CHECK-NEXT: %[[V19]] = arith.mulf %[[V15]], %[[V18]] : f32
// CHECK-NEXT: linalg.yield %[[V19]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4x4xf32>
// CHECK-NEXT: %[[V38:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4x4xbf16>
// CHECK-NEXT: %[[V39:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[V26]] : tensor<1x2x1x4x4xf32>) outs(%[[V38]] : tensor<1x2x1x4x4xbf16>) {
// CHECK-NEXT: ^bb0(%[[V15]]: f32, %[[V17]]: bf16):
// CHECK-NEXT: %[[V18]] = arith.truncf %[[V15]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[V18]] : bf16
// CHECK-NEXT: } -> tensor<1x2x1x4x4xbf16>
// CHECK-NEXT: %[[V40:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4x4xbf16>
// CHECK-NEXT: %[[V41:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[V36]] : tensor<1x2x1x4x4xf32>) outs(%[[V40]] : tensor<1x2x1x4x4xbf16>) {
// CHECK-NEXT: ^bb0(%[[V15]]: f32, %[[V17]]: bf16):
// CHECK-NEXT: %[[V18]] = arith.truncf %[[V15]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[V18]] : bf16
// CHECK-NEXT: } -> tensor<1x2x1x4x4xbf16>
// CHECK-NEXT: %[[V42:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V43:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4x8xf32>
// CHECK-NEXT: %[[V44:[^ ,:)]*]] = linalg.fill ins(%[[V42]] : f32) outs(%[[V43]] : tensor<1x2x1x4x8xf32>) -> tensor<1x2x1x4x8xf32>
// CHECK-NEXT: %[[V45:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d5, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[V41]], %[[V2]] : tensor<1x2x1x4x4xbf16>, tensor<1x2x4x8xbf16>) outs(%[[V44]] : tensor<1x2x1x4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[V15]]: bf16, %[[V16]]: bf16, %[[V17]]: f32):
// CHECK-NEXT: %[[V18]] = arith.extf %[[V15]] : bf16 to f32
// CHECK-NEXT: %[[V19]] = arith.extf %[[V16]] : bf16 to f32
// CHECK-NEXT: %[[V20]] = arith.mulf %[[V18]], %[[V19]] : f32
// CHECK-NEXT: %[[V21]] = arith.addf %[[V17]], %[[V20]] : f32
// CHECK-NEXT: linalg.yield %[[V21]] : f32
// CHECK-NEXT: } -> tensor<1x2x1x4x8xf32>
// CHECK-NEXT: %[[V46:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V47:[^ ,:)]*]] = tensor.empty() : tensor<1x2x4x8xf32>
// CHECK-NEXT: %[[V48:[^ ,:)]*]] = linalg.fill ins(%[[V46]] : f32) outs(%[[V47]] : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT: %[[V49:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5, d2)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[V41]], %[[V7]] : tensor<1x2x1x4x4xbf16>, tensor<1x2x1x4x8xbf16>) outs(%[[V48]] : tensor<1x2x4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[V15]]: bf16, %[[V16]]: bf16, %[[V17]]: f32):
// CHECK-NEXT: %[[V18]] = arith.extf %[[V15]] : bf16 to f32
// CHECK-NEXT: %[[V19]] = arith.extf %[[V16]] : bf16 to f32
// CHECK-NEXT: %[[V20]] = arith.mulf %[[V18]], %[[V19]] : f32
// CHECK-NEXT: %[[V21]] = arith.addf %[[V17]], %[[V20]] : f32
// CHECK-NEXT: linalg.yield %[[V21]] : f32
// CHECK-NEXT: } -> tensor<1x2x4x8xf32>
// CHECK-NEXT: %[[V50:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V51:[^ ,:)]*]] = tensor.empty() : tensor<1x2x4x8xf32>
// CHECK-NEXT: %[[V52:[^ ,:)]*]] = linalg.fill ins(%[[V50]] : f32) outs(%[[V51]] : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT: %[[V53:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5, d2)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[V39]], %[[V9]] : tensor<1x2x1x4x4xbf16>, tensor<1x2x1x4x8xbf16>) outs(%[[V52]] : tensor<1x2x4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[V15]]: bf16, %[[V16]]: bf16, %[[V17]]: f32):
// CHECK-NEXT: %[[V18]] = arith.extf %[[V15]] : bf16 to f32
// CHECK-NEXT: %[[V19]] = arith.extf %[[V16]] : bf16 to f32
// CHECK-NEXT: %[[V20]] = arith.mulf %[[V18]], %[[V19]] : f32
// CHECK-NEXT: %[[V21]] = arith.addf %[[V17]], %[[V20]] : f32
// CHECK-NEXT: linalg.yield %[[V21]] : f32
// CHECK-NEXT: } -> tensor<1x2x4x8xf32>
// CHECK-NEXT: %[[V54:[^ ,:)]*]] = tensor.empty() : tensor<1x2x1x4x8xbf16>
// CHECK-NEXT: %[[V55:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[V45]] : tensor<1x2x1x4x8xf32>) outs(%[[V54]] : tensor<1x2x1x4x8xbf16>) {
// CHECK-NEXT: ^bb0(%[[V15]]: f32, %[[V17]]: bf16):
// CHECK-NEXT: %[[V18]] = arith.mulf %[[V15]], %[[V6]] : f32
// CHECK-NEXT: %[[V19]] = arith.truncf %[[V18]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[V19]] : bf16
// CHECK-NEXT: } -> tensor<1x2x1x4x8xbf16>
// CHECK-NEXT: %[[V56:[^ ,:)]*]] = tensor.collapse_shape %[[V55]] {{\[\[}}0], [1, 2], [3], [4{{\]\]}} : tensor<1x2x1x4x8xbf16> into tensor<1x2x4x8xbf16>
// CHECK-NEXT: %[[V57:[^ ,:)]*]] = tensor.empty() : tensor<1x2x4x8xbf16>
// CHECK-NEXT: %[[V58:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[V49]] : tensor<1x2x4x8xf32>) outs(%[[V57]] : tensor<1x2x4x8xbf16>) {
// CHECK-NEXT: ^bb0(%[[V15]]: f32, %[[V17]]: bf16):
// CHECK-NEXT: %[[V18]] = arith.mulf %[[V15]], %[[V6]] : f32
// CHECK-NEXT: %[[V19]] = arith.truncf %[[V18]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[V19]] : bf16
// CHECK-NEXT: } -> tensor<1x2x4x8xbf16>
// CHECK-NEXT: %[[V59:[^ ,:)]*]] = tensor.empty() : tensor<1x2x4x8xbf16>
// CHECK-NEXT: %[[V60:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[V53]] : tensor<1x2x4x8xf32>) outs(%[[V59]] : tensor<1x2x4x8xbf16>) {
// CHECK-NEXT: ^bb0(%[[V15]]: f32, %[[V17]]: bf16):
// CHECK-NEXT: %[[V18]] = arith.truncf %[[V15]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[V18]] : bf16
// CHECK-NEXT: } -> tensor<1x2x4x8xbf16>
// CHECK-NEXT: return %[[V56]], %[[V58]], %[[V60]] : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>
// CHECK-NEXT: }
joint.graph @sdpa_for_cpu_backward_bf16(%do: tensor<1x2x4x8xbf16> {joint.role = #joint.role<input>, joint.path = "x"}, %q: tensor<1x2x4x8xbf16> {joint.role = #joint.role<input>, joint.path = "x"}, %k: tensor<1x2x4x8xbf16> {joint.role = #joint.role<input>, joint.path = "x"}, %v: tensor<1x2x4x8xbf16> {joint.role = #joint.role<input>, joint.path = "x"}, %o: tensor<1x2x4x8xbf16> {joint.role = #joint.role<input>, joint.path = "x"}, %lse: tensor<1x2x4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x2x4x8xbf16> {joint.role = #joint.role<output>}, tensor<1x2x4x8xbf16> {joint.role = #joint.role<output>}, tensor<1x2x4x8xbf16> {joint.role = #joint.role<output>}) {
  %0, %1, %2 = joint.call_function "aten::_scaled_dot_product_flash_attention_for_cpu_backward.default"(%do, %q, %k, %v, %o, %lse) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>, #joint.operand<3>, #joint.operand<4>, #joint.operand<5>, 0.000000e+00, false], kwargs = {scale = 2.500000e-01 : f64}, name = "sdpa_backward"} : (tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4xf32>) -> (tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>)
  joint.output %0, %1, %2 : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>
}

// bf16 _for_cpu forward with 20 keys: exp(x - max) in the row sum and in the
// rounded probabilities is torch's CPU kernel's: fexp_u20 (floor, three FMAs,
// the exponent-bit assembly, range and NaN selects) on the 16 vectorised keys,
// exact math.exp on the scalar tail (key index >= 16). Fewer than 16 keys
// (@sdpa_for_cpu_mask_bf16) are all tail and keep math.exp.
// CHECK-LABEL: func.func @sdpa_for_cpu_bf16_fast_exp
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<1x1x2x4xbf16> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<1x1x20x4xbf16> {joint.path = "x", joint.role = #joint.role<input>}, %[[V2:[^ ,:)]*]]: tensor<1x1x20x4xbf16> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<1x1x2x4xbf16> {joint.role = #joint.role<output>}, tensor<1x1x2xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = tensor.expand_shape %[[V0]] {{\[\[}}0], [1, 2], [3], [4{{\]\]}} output_shape [1, 1, 1, 2, 4] : tensor<1x1x2x4xbf16> into tensor<1x1x1x2x4xbf16>
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = tensor.empty() : tensor<1x1x1x2x20xf32>
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = linalg.fill ins(%[[V5]] : f32) outs(%[[V6]] : tensor<1x1x1x2x20xf32>) -> tensor<1x1x1x2x20xf32>
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[V4]], %[[V1]] : tensor<1x1x1x2x4xbf16>, tensor<1x1x20x4xbf16>) outs(%[[V7]] : tensor<1x1x1x2x20xf32>) {
// CHECK-NEXT: ^bb0(%[[V9:[^ ,:)]*]]: bf16, %[[V10:[^ ,:)]*]]: bf16, %[[V11:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V12:[^ ,:)]*]] = arith.extf %[[V9]] : bf16 to f32
// CHECK-NEXT: %[[V13:[^ ,:)]*]] = arith.extf %[[V10]] : bf16 to f32
// CHECK-NEXT: %[[V14:[^ ,:)]*]] = arith.mulf %[[V12]], %[[V13]] : f32
// CHECK-NEXT: %[[V15:[^ ,:)]*]] = arith.addf %[[V11]], %[[V14]] : f32
// CHECK-NEXT: linalg.yield %[[V15]] : f32
// CHECK-NEXT: } -> tensor<1x1x1x2x20xf32>
// CHECK-NEXT: %[[V16:[^ ,:)]*]] = tensor.empty() : tensor<1x1x1x2x20xf32>
// CHECK-NEXT: %[[V17:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[V8]] : tensor<1x1x1x2x20xf32>) outs(%[[V16]] : tensor<1x1x1x2x20xf32>) {
// CHECK-NEXT: ^bb0(%[[V9]]: f32, %[[V11]]: f32):
// CHECK-NEXT: %[[V12]] = arith.mulf %[[V9]], %[[V3]] : f32
// CHECK-NEXT: %[[V18:[^ ,:)]*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: linalg.yield %[[V12]] : f32
// CHECK-NEXT: } -> tensor<1x1x1x2x20xf32>
// CHECK-NEXT: %[[V19:[^ ,:)]*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[V20:[^ ,:)]*]] = tensor.empty() : tensor<1x1x1x2xf32>
// CHECK-NEXT: %[[V21:[^ ,:)]*]] = linalg.fill ins(%[[V19]] : f32) outs(%[[V20]] : tensor<1x1x1x2xf32>) -> tensor<1x1x1x2xf32>
// CHECK-NEXT: %[[V22:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[V17]] : tensor<1x1x1x2x20xf32>) outs(%[[V21]] : tensor<1x1x1x2xf32>) {
// CHECK-NEXT: ^bb0(%[[V9]]: f32, %[[V11]]: f32):
// CHECK-NEXT: %[[V12]] = arith.maximumf %[[V11]], %[[V9]] : f32
// CHECK-NEXT: linalg.yield %[[V12]] : f32
// CHECK-NEXT: } -> tensor<1x1x1x2xf32>
// CHECK-NEXT: %[[V23:[^ ,:)]*]] = arith.constant 16 : index
// CHECK-NEXT: %[[V24:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V25:[^ ,:)]*]] = tensor.empty() : tensor<1x1x1x2xf32>
// CHECK-NEXT: %[[V26:[^ ,:)]*]] = linalg.fill ins(%[[V24]] : f32) outs(%[[V25]] : tensor<1x1x1x2xf32>) -> tensor<1x1x1x2xf32>
// CHECK-NEXT: %[[V27:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[V17]], %[[V22]] : tensor<1x1x1x2x20xf32>, tensor<1x1x1x2xf32>) outs(%[[V26]] : tensor<1x1x1x2xf32>) {
// CHECK-NEXT: ^bb0(%[[V9]]: f32, %[[V10]]: f32, %[[V11]]: f32):
// CHECK-NEXT: %[[V12]] = arith.subf %[[V9]], %[[V10]] : f32
// CHECK-NEXT: %[[V13]] = math.exp %[[V12]] : f32
// CHECK-NEXT: %[[V28:[^ ,:)]*]] = arith.constant 1.44269502 : f32
// CHECK-NEXT: %[[V29:[^ ,:)]*]] = arith.constant -87.3365478 : f32
// CHECK-NEXT: %[[V30:[^ ,:)]*]] = arith.constant 88.7228394 : f32
// CHECK-NEXT: %[[V31:[^ ,:)]*]] = arith.constant 1.0703435E-4 : f32
// CHECK-NEXT: %[[V32:[^ ,:)]*]] = arith.constant 0.303542614 : f32
// CHECK-NEXT: %[[V33:[^ ,:)]*]] = arith.constant -0.224338368 : f32
// CHECK-NEXT: %[[V34:[^ ,:)]*]] = arith.constant -0.0792042389 : f32
// CHECK-NEXT: %[[V35:[^ ,:)]*]] = arith.constant 0x4B000000 : f32
// CHECK-NEXT: %[[V36:[^ ,:)]*]] = arith.constant 1.06535322E+9 : f32
// CHECK-NEXT: %[[V37:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V38:[^ ,:)]*]] = arith.constant 0x7F800000 : f32
// CHECK-NEXT: %[[V14]] = arith.mulf %[[V12]], %[[V28]] : f32
// CHECK-NEXT: %[[V15]] = math.floor %[[V14]] : f32
// CHECK-NEXT: %[[V39:[^ ,:)]*]] = arith.subf %[[V14]], %[[V15]] : f32
// CHECK-NEXT: %[[V40:[^ ,:)]*]] = math.fma %[[V39]], %[[V34]], %[[V33]] : f32
// CHECK-NEXT: %[[V41:[^ ,:)]*]] = math.fma %[[V39]], %[[V40]], %[[V32]] : f32
// CHECK-NEXT: %[[V42:[^ ,:)]*]] = math.fma %[[V39]], %[[V41]], %[[V31]] : f32
// CHECK-NEXT: %[[V43:[^ ,:)]*]] = arith.subf %[[V14]], %[[V42]] : f32
// CHECK-NEXT: %[[V44:[^ ,:)]*]] = math.fma %[[V35]], %[[V43]], %[[V36]] : f32
// CHECK-NEXT: %[[V45:[^ ,:)]*]] = arith.fptosi %[[V44]] : f32 to i32
// CHECK-NEXT: %[[V46:[^ ,:)]*]] = arith.bitcast %[[V45]] : i32 to f32
// CHECK-NEXT: %[[V47:[^ ,:)]*]] = arith.cmpf olt, %[[V12]], %[[V29]] : f32
// CHECK-NEXT: %[[V48:[^ ,:)]*]] = arith.select %[[V47]], %[[V37]], %[[V46]] : f32
// CHECK-NEXT: %[[V49:[^ ,:)]*]] = arith.cmpf ogt, %[[V12]], %[[V30]] : f32
// CHECK-NEXT: %[[V50:[^ ,:)]*]] = arith.select %[[V49]], %[[V38]], %[[V48]] : f32
// CHECK-NEXT: %[[V51:[^ ,:)]*]] = arith.cmpf uno, %[[V12]], %[[V12]] : f32
// CHECK-NEXT: %[[V52:[^ ,:)]*]] = arith.select %[[V51]], %[[V12]], %[[V50]] : f32
// CHECK-NEXT: %[[V53:[^ ,:)]*]] = linalg.index 4 : index
// CHECK-NEXT: %[[V54:[^ ,:)]*]] = arith.cmpi ult, %[[V53]], %[[V23]] : index
// CHECK-NEXT: %[[V55:[^ ,:)]*]] = arith.select %[[V54]], %[[V52]], %[[V13]] : f32
// CHECK-NEXT: %[[V56:[^ ,:)]*]] = arith.addf %[[V11]], %[[V55]] : f32
// CHECK-NEXT: linalg.yield %[[V56]] : f32
// CHECK-NEXT: } -> tensor<1x1x1x2xf32>
// CHECK-NEXT: %[[V57:[^ ,:)]*]] = tensor.empty() : tensor<1x1x1x2xf32>
// CHECK-NEXT: %[[V58:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[V22]], %[[V27]] : tensor<1x1x1x2xf32>, tensor<1x1x1x2xf32>) outs(%[[V57]] : tensor<1x1x1x2xf32>) {
// CHECK-NEXT: ^bb0(%[[V9]]: f32, %[[V10]]: f32, %[[V11]]: f32):
// CHECK-NEXT: %[[V12]] = math.log %[[V10]] : f32
// CHECK-NEXT: %[[V13]] = arith.addf %[[V9]], %[[V12]] : f32
// CHECK-NEXT: linalg.yield %[[V13]] : f32
// CHECK-NEXT: } -> tensor<1x1x1x2xf32>
// CHECK-NEXT: %[[V59:[^ ,:)]*]] = arith.constant 16 : index
// CHECK-NEXT: %[[V60:[^ ,:)]*]] = tensor.empty() : tensor<1x1x1x2x20xbf16>
// CHECK-NEXT: %[[V61:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[V17]], %[[V22]] : tensor<1x1x1x2x20xf32>, tensor<1x1x1x2xf32>) outs(%[[V60]] : tensor<1x1x1x2x20xbf16>) {
// CHECK-NEXT: ^bb0(%[[V9]]: f32, %[[V10]]: f32, %[[V11]]: bf16):
// CHECK-NEXT: %[[V12]] = arith.subf %[[V9]], %[[V10]] : f32
// CHECK-NEXT: %[[V13]] = math.exp %[[V12]] : f32
// CHECK-NEXT: %[[V28]] = arith.constant 1.44269502 : f32
// CHECK-NEXT: %[[V29]] = arith.constant -87.3365478 : f32
// CHECK-NEXT: %[[V30]] = arith.constant 88.7228394 : f32
// CHECK-NEXT: %[[V31]] = arith.constant 1.0703435E-4 : f32
// CHECK-NEXT: %[[V32]] = arith.constant 0.303542614 : f32
// CHECK-NEXT: %[[V33]] = arith.constant -0.224338368 : f32
// CHECK-NEXT: %[[V34]] = arith.constant -0.0792042389 : f32
// CHECK-NEXT: %[[V35]] = arith.constant 0x4B000000 : f32
// CHECK-NEXT: %[[V36]] = arith.constant 1.06535322E+9 : f32
// CHECK-NEXT: %[[V37]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V38]] = arith.constant 0x7F800000 : f32
// CHECK-NEXT: %[[V14]] = arith.mulf %[[V12]], %[[V28]] : f32
// CHECK-NEXT: %[[V15]] = math.floor %[[V14]] : f32
// CHECK-NEXT: %[[V39]] = arith.subf %[[V14]], %[[V15]] : f32
// CHECK-NEXT: %[[V40]] = math.fma %[[V39]], %[[V34]], %[[V33]] : f32
// CHECK-NEXT: %[[V41]] = math.fma %[[V39]], %[[V40]], %[[V32]] : f32
// CHECK-NEXT: %[[V42]] = math.fma %[[V39]], %[[V41]], %[[V31]] : f32
// CHECK-NEXT: %[[V43]] = arith.subf %[[V14]], %[[V42]] : f32
// CHECK-NEXT: %[[V44]] = math.fma %[[V35]], %[[V43]], %[[V36]] : f32
// CHECK-NEXT: %[[V45]] = arith.fptosi %[[V44]] : f32 to i32
// CHECK-NEXT: %[[V46]] = arith.bitcast %[[V45]] : i32 to f32
// CHECK-NEXT: %[[V47]] = arith.cmpf olt, %[[V12]], %[[V29]] : f32
// CHECK-NEXT: %[[V48]] = arith.select %[[V47]], %[[V37]], %[[V46]] : f32
// CHECK-NEXT: %[[V49]] = arith.cmpf ogt, %[[V12]], %[[V30]] : f32
// CHECK-NEXT: %[[V50]] = arith.select %[[V49]], %[[V38]], %[[V48]] : f32
// CHECK-NEXT: %[[V51]] = arith.cmpf uno, %[[V12]], %[[V12]] : f32
// CHECK-NEXT: %[[V52]] = arith.select %[[V51]], %[[V12]], %[[V50]] : f32
// CHECK-NEXT: %[[V53]] = linalg.index 4 : index
// CHECK-NEXT: %[[V54]] = arith.cmpi ult, %[[V53]], %[[V59]] : index
// CHECK-NEXT: %[[V55]] = arith.select %[[V54]], %[[V52]], %[[V13]] : f32
// CHECK-NEXT: %[[V56]] = arith.truncf %[[V55]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[V56]] : bf16
// CHECK-NEXT: } -> tensor<1x1x1x2x20xbf16>
// CHECK-NEXT: %[[V62:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V63:[^ ,:)]*]] = tensor.empty() : tensor<1x1x1x2x4xf32>
// CHECK-NEXT: %[[V64:[^ ,:)]*]] = linalg.fill ins(%[[V62]] : f32) outs(%[[V63]] : tensor<1x1x1x2x4xf32>) -> tensor<1x1x1x2x4xf32>
// CHECK-NEXT: %[[V65:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d5, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[V61]], %[[V2]] : tensor<1x1x1x2x20xbf16>, tensor<1x1x20x4xbf16>) outs(%[[V64]] : tensor<1x1x1x2x4xf32>) {
// CHECK-NEXT: ^bb0(%[[V9]]: bf16, %[[V10]]: bf16, %[[V11]]: f32):
// CHECK-NEXT: %[[V12]] = arith.extf %[[V9]] : bf16 to f32
// CHECK-NEXT: %[[V13]] = arith.extf %[[V10]] : bf16 to f32
// CHECK-NEXT: %[[V14]] = arith.mulf %[[V12]], %[[V13]] : f32
// CHECK-NEXT: %[[V15]] = arith.addf %[[V11]], %[[V14]] : f32
// CHECK-NEXT: linalg.yield %[[V15]] : f32
// CHECK-NEXT: } -> tensor<1x1x1x2x4xf32>
// CHECK-NEXT: %[[V66:[^ ,:)]*]] = tensor.empty() : tensor<1x1x1x2x4xbf16>
// CHECK-NEXT: %[[V67:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[V65]], %[[V27]] : tensor<1x1x1x2x4xf32>, tensor<1x1x1x2xf32>) outs(%[[V66]] : tensor<1x1x1x2x4xbf16>) {
// CHECK-NEXT: ^bb0(%[[V9]]: f32, %[[V10]]: f32, %[[V11]]: bf16):
// CHECK-NEXT: %[[V12]] = arith.divf %[[V9]], %[[V10]] : f32
// CHECK-NEXT: %[[V13]] = arith.truncf %[[V12]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[V13]] : bf16
// CHECK-NEXT: } -> tensor<1x1x1x2x4xbf16>
// CHECK-NEXT: %[[V68:[^ ,:)]*]] = tensor.collapse_shape %[[V67]] {{\[\[}}0], [1, 2], [3], [4{{\]\]}} : tensor<1x1x1x2x4xbf16> into tensor<1x1x2x4xbf16>
// CHECK-NEXT: %[[V69:[^ ,:)]*]] = tensor.collapse_shape %[[V58]] {{\[\[}}0], [1, 2], [3{{\]\]}} : tensor<1x1x1x2xf32> into tensor<1x1x2xf32>
// CHECK-NEXT: return %[[V68]], %[[V69]] : tensor<1x1x2x4xbf16>, tensor<1x1x2xf32>
// CHECK-NEXT: }
joint.graph @sdpa_for_cpu_bf16_fast_exp(%q: tensor<1x1x2x4xbf16> {joint.role = #joint.role<input>, joint.path = "x"}, %k: tensor<1x1x20x4xbf16> {joint.role = #joint.role<input>, joint.path = "x"}, %v: tensor<1x1x20x4xbf16> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x1x2x4xbf16> {joint.role = #joint.role<output>}, tensor<1x1x2xf32> {joint.role = #joint.role<output>}) {
  %0, %1 = joint.call_function "aten::_scaled_dot_product_flash_attention_for_cpu.default"(%q, %k, %v) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>], kwargs = {scale = 5.000000e-01 : f64}, name = "sdpa"} : (tensor<1x1x2x4xbf16>, tensor<1x1x20x4xbf16>, tensor<1x1x20x4xbf16>) -> (tensor<1x1x2x4xbf16>, tensor<1x1x2xf32>)
  joint.output %0, %1 : tensor<1x1x2x4xbf16>, tensor<1x1x2xf32>
}

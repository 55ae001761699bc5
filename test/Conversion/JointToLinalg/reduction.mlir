// RUN: joint-opt %s -convert-joint-to-linalg -mlir-print-local-scope | FileCheck %s

// One generic with a reduction iterator into an f32 accumulator, truncated
// once, then the unit dims of keepdim.
// CHECK-LABEL: func.func @sum_keepdim_bf16
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<2x16x64xbf16> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<1x1x64xbf16> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V1:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V2:[^ ,:)]*]] = tensor.empty() : tensor<64xf32>
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = linalg.fill ins(%[[V1]] : f32) outs(%[[V2]] : tensor<64xf32>) -> tensor<64xf32>
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>], iterator_types = ["reduction", "reduction", "parallel"]} ins(%[[V0]] : tensor<2x16x64xbf16>) outs(%[[V3]] : tensor<64xf32>) {
// CHECK-NEXT: ^bb0(%[[V5:[^ ,:)]*]]: bf16, %[[V6:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = arith.extf %[[V5]] : bf16 to f32
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = arith.addf %[[V6]], %[[V7]] : f32
// CHECK-NEXT: linalg.yield %[[V8]] : f32
// CHECK-NEXT: } -> tensor<64xf32>
// CHECK-NEXT: %[[V9:[^ ,:)]*]] = tensor.empty() : tensor<64xbf16>
// CHECK-NEXT: %[[V10:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[V4]] : tensor<64xf32>) outs(%[[V9]] : tensor<64xbf16>) {
// CHECK-NEXT: ^bb0(%[[V5]]: f32, %[[V6]]: bf16):
// CHECK-NEXT: %[[V7]] = arith.truncf %[[V5]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[V7]] : bf16
// CHECK-NEXT: } -> tensor<64xbf16>
// CHECK-NEXT: %[[V11:[^ ,:)]*]] = tensor.expand_shape %[[V10]] {{\[\[}}0, 1, 2{{\]\]}} output_shape [1, 1, 64] : tensor<64xbf16> into tensor<1x1x64xbf16>
// CHECK-NEXT: return %[[V11]] : tensor<1x1x64xbf16>
// CHECK-NEXT: }
joint.graph @sum_keepdim_bf16(%x: tensor<2x16x64xbf16> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x1x64xbf16> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::sum.dim_IntList"(%x) {args = [#joint.operand<0>, [0, 1], true], name = "sum"} : (tensor<2x16x64xbf16>) -> tensor<1x1x64xbf16>
  joint.output %0 : tensor<1x1x64xbf16>
}

// CHECK-LABEL: func.func @sum_full
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<3x4xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<f32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V1:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V2:[^ ,:)]*]] = tensor.empty() : tensor<f32>
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = linalg.fill ins(%[[V1]] : f32) outs(%[[V2]] : tensor<f32>) -> tensor<f32>
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%[[V0]] : tensor<3x4xf32>) outs(%[[V3]] : tensor<f32>) {
// CHECK-NEXT: ^bb0(%[[V5:[^ ,:)]*]]: f32, %[[V6:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = arith.addf %[[V6]], %[[V5]] : f32
// CHECK-NEXT: linalg.yield %[[V7]] : f32
// CHECK-NEXT: } -> tensor<f32>
// CHECK-NEXT: return %[[V4]] : tensor<f32>
// CHECK-NEXT: }
joint.graph @sum_full(%x: tensor<3x4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<f32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::sum.default"(%x) {name = "sum"} : (tensor<3x4xf32>) -> tensor<f32>
  joint.output %0 : tensor<f32>
}

// CHECK-LABEL: func.func @mean_last_dim_keepdim
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<2x16x64xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<2x16x1xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V1:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V2:[^ ,:)]*]] = tensor.empty() : tensor<2x16xf32>
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = linalg.fill ins(%[[V1]] : f32) outs(%[[V2]] : tensor<2x16xf32>) -> tensor<2x16xf32>
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[V0]] : tensor<2x16x64xf32>) outs(%[[V3]] : tensor<2x16xf32>) {
// CHECK-NEXT: ^bb0(%[[V5:[^ ,:)]*]]: f32, %[[V6:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = arith.addf %[[V6]], %[[V5]] : f32
// CHECK-NEXT: linalg.yield %[[V7]] : f32
// CHECK-NEXT: } -> tensor<2x16xf32>
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = arith.constant 1 : index
// CHECK-NEXT: %[[V9:[^ ,:)]*]] = arith.constant 64 : index
// CHECK-NEXT: %[[V10:[^ ,:)]*]] = arith.muli %[[V8]], %[[V9]] : index
// CHECK-NEXT: %[[V11:[^ ,:)]*]] = arith.index_cast %[[V10]] : index to i64
// CHECK-NEXT: %[[V12:[^ ,:)]*]] = arith.sitofp %[[V11]] : i64 to f32
// CHECK-NEXT: %[[V13:[^ ,:)]*]] = tensor.empty() : tensor<2x16xf32>
// CHECK-NEXT: %[[V14:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[V4]] : tensor<2x16xf32>) outs(%[[V13]] : tensor<2x16xf32>) {
// CHECK-NEXT: ^bb0(%[[V5]]: f32, %[[V6]]: f32):
// CHECK-NEXT: %[[V7]] = arith.divf %[[V5]], %[[V12]] : f32
// CHECK-NEXT: linalg.yield %[[V7]] : f32
// CHECK-NEXT: } -> tensor<2x16xf32>
// CHECK-NEXT: %[[V15:[^ ,:)]*]] = tensor.expand_shape %[[V14]] {{\[\[}}0], [1, 2{{\]\]}} output_shape [2, 16, 1] : tensor<2x16xf32> into tensor<2x16x1xf32>
// CHECK-NEXT: return %[[V15]] : tensor<2x16x1xf32>
// CHECK-NEXT: }
joint.graph @mean_last_dim_keepdim(%x: tensor<2x16x64xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<2x16x1xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::mean.dim"(%x) {args = [#joint.operand<0>, [-1], true], name = "mean"} : (tensor<2x16x64xf32>) -> tensor<2x16x1xf32>
  joint.output %0 : tensor<2x16x1xf32>
}

// CHECK-LABEL: func.func @amax
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<3x4xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<3xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V1:[^ ,:)]*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[V2:[^ ,:)]*]] = tensor.empty() : tensor<3xf32>
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = linalg.fill ins(%[[V1]] : f32) outs(%[[V2]] : tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[V0]] : tensor<3x4xf32>) outs(%[[V3]] : tensor<3xf32>) {
// CHECK-NEXT: ^bb0(%[[V5:[^ ,:)]*]]: f32, %[[V6:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = arith.maximumf %[[V6]], %[[V5]] : f32
// CHECK-NEXT: linalg.yield %[[V7]] : f32
// CHECK-NEXT: } -> tensor<3xf32>
// CHECK-NEXT: return %[[V4]] : tensor<3xf32>
// CHECK-NEXT: }
joint.graph @amax(%x: tensor<3x4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<3xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::amax.default"(%x) {args = [#joint.operand<0>, [1]], name = "amax"} : (tensor<3x4xf32>) -> tensor<3xf32>
  joint.output %0 : tensor<3xf32>
}

// var divides by max(N - correction, 0); var_mean also returns the mean.
// CHECK-LABEL: func.func @var_mean_correction
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<3x4xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<3xf32> {joint.role = #joint.role<output>}, tensor<3xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V1:[^ ,:)]*]] = arith.constant 1 : index
// CHECK-NEXT: %[[V2:[^ ,:)]*]] = arith.constant 4 : index
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = arith.muli %[[V1]], %[[V2]] : index
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = tensor.empty() : tensor<3xf32>
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = linalg.fill ins(%[[V4]] : f32) outs(%[[V5]] : tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[V0]] : tensor<3x4xf32>) outs(%[[V6]] : tensor<3xf32>) {
// CHECK-NEXT: ^bb0(%[[V8:[^ ,:)]*]]: f32, %[[V9:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V10:[^ ,:)]*]] = arith.addf %[[V9]], %[[V8]] : f32
// CHECK-NEXT: linalg.yield %[[V10]] : f32
// CHECK-NEXT: } -> tensor<3xf32>
// CHECK-NEXT: %[[V11:[^ ,:)]*]] = arith.index_cast %[[V3]] : index to i64
// CHECK-NEXT: %[[V12:[^ ,:)]*]] = arith.sitofp %[[V11]] : i64 to f32
// CHECK-NEXT: %[[V13:[^ ,:)]*]] = tensor.empty() : tensor<3xf32>
// CHECK-NEXT: %[[V14:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[V7]] : tensor<3xf32>) outs(%[[V13]] : tensor<3xf32>) {
// CHECK-NEXT: ^bb0(%[[V8]]: f32, %[[V9]]: f32):
// CHECK-NEXT: %[[V10]] = arith.divf %[[V8]], %[[V12]] : f32
// CHECK-NEXT: linalg.yield %[[V10]] : f32
// CHECK-NEXT: } -> tensor<3xf32>
// CHECK-NEXT: %[[V15:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V16:[^ ,:)]*]] = tensor.empty() : tensor<3xf32>
// CHECK-NEXT: %[[V17:[^ ,:)]*]] = linalg.fill ins(%[[V15]] : f32) outs(%[[V16]] : tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT: %[[V18:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[V0]], %[[V14]] : tensor<3x4xf32>, tensor<3xf32>) outs(%[[V17]] : tensor<3xf32>) {
// CHECK-NEXT: ^bb0(%[[V8]]: f32, %[[V19:[^ ,:)]*]]: f32, %[[V9]]: f32):
// CHECK-NEXT: %[[V10]] = arith.subf %[[V8]], %[[V19]] : f32
// CHECK-NEXT: %[[V20:[^ ,:)]*]] = arith.mulf %[[V10]], %[[V10]] : f32
// CHECK-NEXT: %[[V21:[^ ,:)]*]] = arith.addf %[[V9]], %[[V20]] : f32
// CHECK-NEXT: linalg.yield %[[V21]] : f32
// CHECK-NEXT: } -> tensor<3xf32>
// CHECK-NEXT: %[[V22:[^ ,:)]*]] = arith.index_cast %[[V3]] : index to i64
// CHECK-NEXT: %[[V23:[^ ,:)]*]] = arith.sitofp %[[V22]] : i64 to f32
// CHECK-NEXT: %[[V24:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V25:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V26:[^ ,:)]*]] = arith.subf %[[V23]], %[[V25]] : f32
// CHECK-NEXT: %[[V27:[^ ,:)]*]] = arith.maximumf %[[V26]], %[[V24]] : f32
// CHECK-NEXT: %[[V28:[^ ,:)]*]] = tensor.empty() : tensor<3xf32>
// CHECK-NEXT: %[[V29:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[V18]] : tensor<3xf32>) outs(%[[V28]] : tensor<3xf32>) {
// CHECK-NEXT: ^bb0(%[[V8]]: f32, %[[V9]]: f32):
// CHECK-NEXT: %[[V10]] = arith.divf %[[V8]], %[[V27]] : f32
// CHECK-NEXT: linalg.yield %[[V10]] : f32
// CHECK-NEXT: } -> tensor<3xf32>
// CHECK-NEXT: return %[[V29]], %[[V14]] : tensor<3xf32>, tensor<3xf32>
// CHECK-NEXT: }
joint.graph @var_mean_correction(%x: tensor<3x4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<3xf32> {joint.role = #joint.role<output>}, tensor<3xf32> {joint.role = #joint.role<output>}) {
  %0, %1 = joint.call_function "aten::var_mean.correction"(%x) {args = [#joint.operand<0>, [1]], kwargs = {correction = 0 : i64}, name = "var_mean"} : (tensor<3x4xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  joint.output %0, %1 : tensor<3xf32>, tensor<3xf32>
}

// max, sum(exp(x - max)), then x - max - log(sum).
// CHECK-LABEL: func.func @log_softmax
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<4x8xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<4x8xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V1:[^ ,:)]*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[V2:[^ ,:)]*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = linalg.fill ins(%[[V1]] : f32) outs(%[[V2]] : tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[V0]] : tensor<4x8xf32>) outs(%[[V3]] : tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[V5:[^ ,:)]*]]: f32, %[[V6:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = arith.maximumf %[[V6]], %[[V5]] : f32
// CHECK-NEXT: linalg.yield %[[V7]] : f32
// CHECK-NEXT: } -> tensor<4xf32>
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V9:[^ ,:)]*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[V10:[^ ,:)]*]] = linalg.fill ins(%[[V8]] : f32) outs(%[[V9]] : tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[V11:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[V0]], %[[V4]] : tensor<4x8xf32>, tensor<4xf32>) outs(%[[V10]] : tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[V5]]: f32, %[[V12:[^ ,:)]*]]: f32, %[[V6]]: f32):
// CHECK-NEXT: %[[V7]] = arith.subf %[[V5]], %[[V12]] : f32
// CHECK-NEXT: %[[V13:[^ ,:)]*]] = math.exp %[[V7]] : f32
// CHECK-NEXT: %[[V14:[^ ,:)]*]] = arith.addf %[[V6]], %[[V13]] : f32
// CHECK-NEXT: linalg.yield %[[V14]] : f32
// CHECK-NEXT: } -> tensor<4xf32>
// CHECK-NEXT: %[[V15:[^ ,:)]*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[V16:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[V0]], %[[V4]], %[[V11]] : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) outs(%[[V15]] : tensor<4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[V5]]: f32, %[[V12]]: f32, %[[V17:[^ ,:)]*]]: f32, %[[V6]]: f32):
// CHECK-NEXT: %[[V7]] = arith.subf %[[V5]], %[[V12]] : f32
// CHECK-NEXT: %[[V13]] = math.log %[[V17]] : f32
// CHECK-NEXT: %[[V14]] = arith.subf %[[V7]], %[[V13]] : f32
// CHECK-NEXT: linalg.yield %[[V14]] : f32
// CHECK-NEXT: } -> tensor<4x8xf32>
// CHECK-NEXT: return %[[V16]] : tensor<4x8xf32>
// CHECK-NEXT: }
joint.graph @log_softmax(%x: tensor<4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4x8xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::_log_softmax.default"(%x) {args = [#joint.operand<0>, 1, false], name = "_log_softmax"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  joint.output %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @softmax_bf16
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<4x8xbf16> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<4x8xbf16> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V1:[^ ,:)]*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[V2:[^ ,:)]*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = linalg.fill ins(%[[V1]] : f32) outs(%[[V2]] : tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[V0]] : tensor<4x8xbf16>) outs(%[[V3]] : tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[V5:[^ ,:)]*]]: bf16, %[[V6:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = arith.extf %[[V5]] : bf16 to f32
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = arith.maximumf %[[V6]], %[[V7]] : f32
// CHECK-NEXT: linalg.yield %[[V8]] : f32
// CHECK-NEXT: } -> tensor<4xf32>
// CHECK-NEXT: %[[V9:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V10:[^ ,:)]*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[V11:[^ ,:)]*]] = linalg.fill ins(%[[V9]] : f32) outs(%[[V10]] : tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[V12:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[V0]], %[[V4]] : tensor<4x8xbf16>, tensor<4xf32>) outs(%[[V11]] : tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[V5]]: bf16, %[[V13:[^ ,:)]*]]: f32, %[[V6]]: f32):
// CHECK-NEXT: %[[V7]] = arith.extf %[[V5]] : bf16 to f32
// CHECK-NEXT: %[[V8]] = arith.subf %[[V7]], %[[V13]] : f32
// CHECK-NEXT: %[[V14:[^ ,:)]*]] = math.exp %[[V8]] : f32
// CHECK-NEXT: %[[V15:[^ ,:)]*]] = arith.addf %[[V6]], %[[V14]] : f32
// CHECK-NEXT: linalg.yield %[[V15]] : f32
// CHECK-NEXT: } -> tensor<4xf32>
// CHECK-NEXT: %[[V16:[^ ,:)]*]] = tensor.empty() : tensor<4x8xbf16>
// CHECK-NEXT: %[[V17:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[V0]], %[[V4]], %[[V12]] : tensor<4x8xbf16>, tensor<4xf32>, tensor<4xf32>) outs(%[[V16]] : tensor<4x8xbf16>) {
// CHECK-NEXT: ^bb0(%[[V5]]: bf16, %[[V13]]: f32, %[[V18:[^ ,:)]*]]: f32, %[[V6]]: bf16):
// CHECK-NEXT: %[[V7]] = arith.extf %[[V5]] : bf16 to f32
// CHECK-NEXT: %[[V8]] = arith.subf %[[V7]], %[[V13]] : f32
// CHECK-NEXT: %[[V14]] = math.exp %[[V8]] : f32
// CHECK-NEXT: %[[V15]] = arith.divf %[[V14]], %[[V18]] : f32
// CHECK-NEXT: %[[V19:[^ ,:)]*]] = arith.truncf %[[V15]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[V19]] : bf16
// CHECK-NEXT: } -> tensor<4x8xbf16>
// CHECK-NEXT: return %[[V17]] : tensor<4x8xbf16>
// CHECK-NEXT: }
joint.graph @softmax_bf16(%x: tensor<4x8xbf16> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4x8xbf16> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::_softmax.default"(%x) {args = [#joint.operand<0>, -1, false], name = "_softmax"} : (tensor<4x8xbf16>) -> tensor<4x8xbf16>
  joint.output %0 : tensor<4x8xbf16>
}

// grad - exp(output) * sum(grad).
// CHECK-LABEL: func.func @log_softmax_backward
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<4x8xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<4x8xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<4x8xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V2:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = linalg.fill ins(%[[V2]] : f32) outs(%[[V3]] : tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[V0]], %[[V1]] : tensor<4x8xf32>, tensor<4x8xf32>) outs(%[[V4]] : tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[V6:[^ ,:)]*]]: f32, %[[V7:[^ ,:)]*]]: f32, %[[V8:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V9:[^ ,:)]*]] = arith.addf %[[V8]], %[[V6]] : f32
// CHECK-NEXT: linalg.yield %[[V9]] : f32
// CHECK-NEXT: } -> tensor<4xf32>
// CHECK-NEXT: %[[V10:[^ ,:)]*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[V11:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[V0]], %[[V1]], %[[V5]] : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>) outs(%[[V10]] : tensor<4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[V6]]: f32, %[[V7]]: f32, %[[V12:[^ ,:)]*]]: f32, %[[V8]]: f32):
// CHECK-NEXT: %[[V9]] = math.exp %[[V7]] : f32
// CHECK-NEXT: %[[V13:[^ ,:)]*]] = arith.mulf %[[V9]], %[[V12]] : f32
// CHECK-NEXT: %[[V14:[^ ,:)]*]] = arith.subf %[[V6]], %[[V13]] : f32
// CHECK-NEXT: linalg.yield %[[V14]] : f32
// CHECK-NEXT: } -> tensor<4x8xf32>
// CHECK-NEXT: return %[[V11]] : tensor<4x8xf32>
// CHECK-NEXT: }
joint.graph @log_softmax_backward(%g: tensor<4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %o: tensor<4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4x8xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::_log_softmax_backward_data.default"(%g, %o) {args = [#joint.operand<0>, #joint.operand<1>, 1, #joint.dtype<float32>], name = "lsb"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  joint.output %0 : tensor<4x8xf32>
}

// output * (grad - sum(grad * output)).
// CHECK-LABEL: func.func @softmax_backward
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<4x8xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<4x8xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<4x8xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V2:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = linalg.fill ins(%[[V2]] : f32) outs(%[[V3]] : tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[V0]], %[[V1]] : tensor<4x8xf32>, tensor<4x8xf32>) outs(%[[V4]] : tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[V6:[^ ,:)]*]]: f32, %[[V7:[^ ,:)]*]]: f32, %[[V8:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V9:[^ ,:)]*]] = arith.mulf %[[V6]], %[[V7]] : f32
// CHECK-NEXT: %[[V10:[^ ,:)]*]] = arith.addf %[[V8]], %[[V9]] : f32
// CHECK-NEXT: linalg.yield %[[V10]] : f32
// CHECK-NEXT: } -> tensor<4xf32>
// CHECK-NEXT: %[[V11:[^ ,:)]*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[V12:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[V0]], %[[V1]], %[[V5]] : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>) outs(%[[V11]] : tensor<4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[V6]]: f32, %[[V7]]: f32, %[[V13:[^ ,:)]*]]: f32, %[[V8]]: f32):
// CHECK-NEXT: %[[V9]] = arith.subf %[[V6]], %[[V13]] : f32
// CHECK-NEXT: %[[V10]] = arith.mulf %[[V7]], %[[V9]] : f32
// CHECK-NEXT: linalg.yield %[[V10]] : f32
// CHECK-NEXT: } -> tensor<4x8xf32>
// CHECK-NEXT: return %[[V12]] : tensor<4x8xf32>
// CHECK-NEXT: }
joint.graph @softmax_backward(%g: tensor<4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %o: tensor<4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4x8xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::_softmax_backward_data.default"(%g, %o) {args = [#joint.operand<0>, #joint.operand<1>, 1, #joint.dtype<float32>], name = "sb"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  joint.output %0 : tensor<4x8xf32>
}

// A scan in order: scf.for over the dim carrying the running i64 sum.
// CHECK-LABEL: func.func @cumsum_bool_to_i64
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<2x16xi1> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<2x16xi64> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V1:[^ ,:)]*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[V2:[^ ,:)]*]] = tensor.empty() : tensor<2xi64>
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = linalg.fill ins(%[[V1]] : i64) outs(%[[V2]] : tensor<2xi64>) -> tensor<2xi64>
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = tensor.empty() : tensor<2x16xi64>
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = arith.constant 0 : index
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = arith.constant 16 : index
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = arith.constant 1 : index
// CHECK-NEXT: %[[V8:[^ ,:)]*]]:2 = scf.for %[[V9:[^ ,:)]*]] = %[[V5]] to %[[V6]] step %[[V7]] iter_args(%[[V10:[^ ,:)]*]] = %[[V3]], %[[V11:[^ ,:)]*]] = %[[V4]]) -> (tensor<2xi64>, tensor<2x16xi64>) {
// CHECK-NEXT: %[[V12:[^ ,:)]*]] = tensor.extract_slice %arg0[0, %[[V9]]] [2, 1] [1, 1] : tensor<2x16xi1> to tensor<2xi1>
// CHECK-NEXT: %[[V13:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[V12]] : tensor<2xi1>) outs(%[[V10]] : tensor<2xi64>) {
// CHECK-NEXT: ^bb0(%[[V14:[^ ,:)]*]]: i1, %[[V15:[^ ,:)]*]]: i64):
// CHECK-NEXT: %[[V16:[^ ,:)]*]] = arith.extui %[[V14]] : i1 to i64
// CHECK-NEXT: %[[V17:[^ ,:)]*]] = arith.addi %[[V15]], %[[V16]] : i64
// CHECK-NEXT: linalg.yield %[[V17]] : i64
// CHECK-NEXT: } -> tensor<2xi64>
// CHECK-NEXT: %[[V18:[^ ,:)]*]] = tensor.insert_slice %[[V13]] into %arg3[0, %[[V9]]] [2, 1] [1, 1] : tensor<2xi64> into tensor<2x16xi64>
// CHECK-NEXT: scf.yield %[[V13]], %[[V18]] : tensor<2xi64>, tensor<2x16xi64>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[V8]]#1 : tensor<2x16xi64>
// CHECK-NEXT: }
joint.graph @cumsum_bool_to_i64(%x: tensor<2x16xi1> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<2x16xi64> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::cumsum.default"(%x) {args = [#joint.operand<0>, -1], name = "cumsum"} : (tensor<2x16xi1>) -> tensor<2x16xi64>
  joint.output %0 : tensor<2x16xi64>
}

// reduction=mean: one reduction producing the loss sum and the count of rows
// whose target is not ignore_index, then their quotient.
// CHECK-LABEL: func.func @nll_loss_forward_mean
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<32x16xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<32xi64> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<f32> {joint.role = #joint.role<output>}, tensor<f32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V2:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = tensor.empty() : tensor<f32>
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = linalg.fill ins(%[[V2]] : f32) outs(%[[V3]] : tensor<f32>) -> tensor<f32>
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = tensor.empty() : tensor<f32>
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = linalg.fill ins(%[[V5]] : f32) outs(%[[V6]] : tensor<f32>) -> tensor<f32>
// CHECK-NEXT: %[[V8:[^ ,:)]*]]:2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%[[V1]] : tensor<32xi64>) outs(%[[V4]], %[[V7]] : tensor<f32>, tensor<f32>) {
// CHECK-NEXT: ^bb0(%[[V9:[^ ,:)]*]]: i64, %[[V10:[^ ,:)]*]]: f32, %[[V11:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V12:[^ ,:)]*]] = linalg.index 0 : index
// CHECK-NEXT: %c-100_i64 = arith.constant -100 : i64
// CHECK-NEXT: %[[V13:[^ ,:)]*]] = arith.cmpi ne, %[[V9]], %c-100_i64 : i64
// CHECK-NEXT: %[[V14:[^ ,:)]*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[V15:[^ ,:)]*]] = arith.select %[[V13]], %[[V9]], %[[V14]] : i64
// CHECK-NEXT: %[[V16:[^ ,:)]*]] = arith.index_cast %[[V15]] : i64 to index
// CHECK-NEXT: %[[V17:[^ ,:)]*]] = tensor.extract %arg0[%[[V12]], %[[V16]]] : tensor<32x16xf32>
// CHECK-NEXT: %[[V18:[^ ,:)]*]] = arith.negf %[[V17]] : f32
// CHECK-NEXT: %[[V19:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V20:[^ ,:)]*]] = arith.select %[[V13]], %[[V18]], %[[V19]] : f32
// CHECK-NEXT: %[[V21:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V22:[^ ,:)]*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[V23:[^ ,:)]*]] = arith.select %[[V13]], %[[V22]], %[[V21]] : f32
// CHECK-NEXT: %[[V24:[^ ,:)]*]] = arith.addf %[[V10]], %[[V20]] : f32
// CHECK-NEXT: %[[V25:[^ ,:)]*]] = arith.addf %[[V11]], %[[V23]] : f32
// CHECK-NEXT: linalg.yield %[[V24]], %[[V25]] : f32, f32
// CHECK-NEXT: } -> (tensor<f32>, tensor<f32>)
// CHECK-NEXT: %[[V26:[^ ,:)]*]] = tensor.empty() : tensor<f32>
// CHECK-NEXT: %[[V27:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%[[V8]]#0, %[[V8]]#1 : tensor<f32>, tensor<f32>) outs(%[[V26]] : tensor<f32>) {
// CHECK-NEXT: ^bb0(%[[V9]]: f32, %[[V28:[^ ,:)]*]]: f32, %[[V10]]: f32):
// CHECK-NEXT: %[[V12]] = arith.divf %[[V9]], %[[V28]] : f32
// CHECK-NEXT: linalg.yield %[[V12]] : f32
// CHECK-NEXT: } -> tensor<f32>
// CHECK-NEXT: return %[[V27]], %[[V8]]#1 : tensor<f32>, tensor<f32>
// CHECK-NEXT: }
joint.graph @nll_loss_forward_mean(%x: tensor<32x16xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %t: tensor<32xi64> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<f32> {joint.role = #joint.role<output>}, tensor<f32> {joint.role = #joint.role<output>}) {
  %0, %1 = joint.call_function "aten::nll_loss_forward.default"(%x, %t) {args = [#joint.operand<0>, #joint.operand<1>, unit, 1, -100], name = "nll_loss_forward"} : (tensor<32x16xf32>, tensor<32xi64>) -> (tensor<f32>, tensor<f32>)
  joint.output %0, %1 : tensor<f32>, tensor<f32>
}

// CHECK-LABEL: func.func @nll_loss_forward_none
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<32x16xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<32xi64> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<32xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V2:[^ ,:)]*]] = tensor.empty() : tensor<32xf32>
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[V1]] : tensor<32xi64>) outs(%[[V2]] : tensor<32xf32>) {
// CHECK-NEXT: ^bb0(%[[V4:[^ ,:)]*]]: i64, %[[V5:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = linalg.index 0 : index
// CHECK-NEXT: %c-100_i64 = arith.constant -100 : i64
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = arith.cmpi ne, %[[V4]], %c-100_i64 : i64
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[V9:[^ ,:)]*]] = arith.select %[[V7]], %[[V4]], %[[V8]] : i64
// CHECK-NEXT: %[[V10:[^ ,:)]*]] = arith.index_cast %[[V9]] : i64 to index
// CHECK-NEXT: %[[V11:[^ ,:)]*]] = tensor.extract %arg0[%[[V6]], %[[V10]]] : tensor<32x16xf32>
// CHECK-NEXT: %[[V12:[^ ,:)]*]] = arith.negf %[[V11]] : f32
// CHECK-NEXT: %[[V13:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V14:[^ ,:)]*]] = arith.select %[[V7]], %[[V12]], %[[V13]] : f32
// CHECK-NEXT: linalg.yield %[[V14]] : f32
// CHECK-NEXT: } -> tensor<32xf32>
// CHECK-NEXT: %[[V15:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V16:[^ ,:)]*]] = tensor.empty() : tensor<f32>
// CHECK-NEXT: %[[V17:[^ ,:)]*]] = linalg.fill ins(%[[V15]] : f32) outs(%[[V16]] : tensor<f32>) -> tensor<f32>
// CHECK-NEXT: return %[[V3]] : tensor<32xf32>
// CHECK-NEXT: }
joint.graph @nll_loss_forward_none(%x: tensor<32x16xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %t: tensor<32xi64> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<32xf32> {joint.role = #joint.role<output>}) {
  %0, %1 = joint.call_function "aten::nll_loss_forward.default"(%x, %t) {args = [#joint.operand<0>, #joint.operand<1>, unit, 0, -100], name = "nll_loss_forward"} : (tensor<32x16xf32>, tensor<32xi64>) -> (tensor<32xf32>, tensor<f32>)
  joint.output %0 : tensor<32xf32>
}

// grad_input[n, c] = -grad / total_weight where c == target[n] != -100.
// CHECK-LABEL: func.func @nll_loss_backward_mean
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<f32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<32x16xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V2:[^ ,:)]*]]: tensor<32xi64> {joint.path = "x", joint.role = #joint.role<input>}, %[[V3:[^ ,:)]*]]: tensor<f32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<32x16xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = tensor.extract %arg0[] : tensor<f32>
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = tensor.extract %arg3[] : tensor<f32>
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = arith.divf %[[V4]], %[[V5]] : f32
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = tensor.empty() : tensor<32x16xf32>
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[V2]] : tensor<32xi64>) outs(%[[V7]] : tensor<32x16xf32>) {
// CHECK-NEXT: ^bb0(%[[V9:[^ ,:)]*]]: i64, %[[V10:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V11:[^ ,:)]*]] = linalg.index 1 : index
// CHECK-NEXT: %[[V12:[^ ,:)]*]] = arith.index_cast %[[V11]] : index to i64
// CHECK-NEXT: %c-100_i64 = arith.constant -100 : i64
// CHECK-NEXT: %[[V13:[^ ,:)]*]] = arith.cmpi ne, %[[V9]], %c-100_i64 : i64
// CHECK-NEXT: %[[V14:[^ ,:)]*]] = arith.cmpi eq, %[[V9]], %[[V12]] : i64
// CHECK-NEXT: %[[V15:[^ ,:)]*]] = arith.andi %[[V14]], %[[V13]] : i1
// CHECK-NEXT: %[[V16:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V17:[^ ,:)]*]] = arith.negf %[[V6]] : f32
// CHECK-NEXT: %[[V18:[^ ,:)]*]] = arith.select %[[V15]], %[[V17]], %[[V16]] : f32
// CHECK-NEXT: linalg.yield %[[V18]] : f32
// CHECK-NEXT: } -> tensor<32x16xf32>
// CHECK-NEXT: return %[[V8]] : tensor<32x16xf32>
// CHECK-NEXT: }
joint.graph @nll_loss_backward_mean(%g: tensor<f32> {joint.role = #joint.role<input>, joint.path = "x"}, %x: tensor<32x16xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %t: tensor<32xi64> {joint.role = #joint.role<input>, joint.path = "x"}, %w: tensor<f32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<32x16xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::nll_loss_backward.default"(%g, %x, %t, %w) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>, unit, 1, -100, #joint.operand<3>], name = "nll_loss_backward"} : (tensor<f32>, tensor<32x16xf32>, tensor<32xi64>, tensor<f32>) -> tensor<32x16xf32>
  joint.output %0 : tensor<32x16xf32>
}

// _safe_softmax: softmax, but 0 where the row's max is -inf (a fully masked
// row), as torch defines it.
// CHECK-LABEL: func.func @safe_softmax
// CHECK: %[[P:[^ ,:)]*]] = arith.divf %{{.*}}, %[[SUM:[^ ,:)]*]] : f32
// CHECK-NEXT: %[[NINF:[^ ,:)]*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[MASKED:[^ ,:)]*]] = arith.cmpf oeq, %[[MAX:[^ ,:)]*]], %[[NINF]] : f32
// CHECK-NEXT: %[[ZERO:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[R:[^ ,:)]*]] = arith.select %[[MASKED]], %[[ZERO]], %[[P]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
joint.graph @safe_softmax(%x: tensor<4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4x8xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::_safe_softmax.default"(%x) {args = [#joint.operand<0>, -1], name = "_safe_softmax"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  joint.output %0 : tensor<4x8xf32>
}

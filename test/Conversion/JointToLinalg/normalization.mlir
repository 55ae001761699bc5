// RUN: joint-opt %s -convert-joint-to-linalg -mlir-print-local-scope | FileCheck %s

// mean, biased variance, rstd = rsqrt(var + eps), then (x - mean) * rstd * w + b;
// mean and rstd keep the unit normalized dim.
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<2x16x64xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<64xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V2:[^ ,:)]*]]: tensor<64xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<2x16x64xf32> {joint.role = #joint.role<output>}, tensor<2x16x1xf32> {joint.role = #joint.role<output>}, tensor<2x16x1xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = arith.constant 1 : index
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = arith.constant 64 : index
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = arith.muli %[[V3]], %[[V4]] : index
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = arith.index_cast %[[V5]] : index to i64
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = arith.sitofp %[[V6]] : i64 to f32
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V9:[^ ,:)]*]] = tensor.empty() : tensor<2x16xf32>
// CHECK-NEXT: %[[V10:[^ ,:)]*]] = linalg.fill ins(%[[V8]] : f32) outs(%[[V9]] : tensor<2x16xf32>) -> tensor<2x16xf32>
// CHECK-NEXT: %[[V11:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[V0]] : tensor<2x16x64xf32>) outs(%[[V10]] : tensor<2x16xf32>) {
// CHECK-NEXT: ^bb0(%[[V12:[^ ,:)]*]]: f32, %[[V13:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V14:[^ ,:)]*]] = arith.addf %[[V13]], %[[V12]] : f32
// CHECK-NEXT: linalg.yield %[[V14]] : f32
// CHECK-NEXT: } -> tensor<2x16xf32>
// CHECK-NEXT: %[[V15:[^ ,:)]*]] = tensor.empty() : tensor<2x16xf32>
// CHECK-NEXT: %[[V16:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[V11]] : tensor<2x16xf32>) outs(%[[V15]] : tensor<2x16xf32>) {
// CHECK-NEXT: ^bb0(%[[V12]]: f32, %[[V13]]: f32):
// CHECK-NEXT: %[[V14]] = arith.divf %[[V12]], %[[V7]] : f32
// CHECK-NEXT: linalg.yield %[[V14]] : f32
// CHECK-NEXT: } -> tensor<2x16xf32>
// CHECK-NEXT: %[[V17:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V18:[^ ,:)]*]] = tensor.empty() : tensor<2x16xf32>
// CHECK-NEXT: %[[V19:[^ ,:)]*]] = linalg.fill ins(%[[V17]] : f32) outs(%[[V18]] : tensor<2x16xf32>) -> tensor<2x16xf32>
// CHECK-NEXT: %[[V20:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[V0]], %[[V16]] : tensor<2x16x64xf32>, tensor<2x16xf32>) outs(%[[V19]] : tensor<2x16xf32>) {
// CHECK-NEXT: ^bb0(%[[V12]]: f32, %[[V21:[^ ,:)]*]]: f32, %[[V13]]: f32):
// CHECK-NEXT: %[[V14]] = arith.subf %[[V12]], %[[V21]] : f32
// CHECK-NEXT: %[[V22:[^ ,:)]*]] = arith.mulf %[[V14]], %[[V14]] : f32
// CHECK-NEXT: %[[V23:[^ ,:)]*]] = arith.addf %[[V13]], %[[V22]] : f32
// CHECK-NEXT: linalg.yield %[[V23]] : f32
// CHECK-NEXT: } -> tensor<2x16xf32>
// CHECK-NEXT: %[[V24:[^ ,:)]*]] = arith.constant 9.99999974E-6 : f32
// CHECK-NEXT: %[[V25:[^ ,:)]*]] = tensor.empty() : tensor<2x16xf32>
// CHECK-NEXT: %[[V26:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[V20]] : tensor<2x16xf32>) outs(%[[V25]] : tensor<2x16xf32>) {
// CHECK-NEXT: ^bb0(%[[V12]]: f32, %[[V13]]: f32):
// CHECK-NEXT: %[[V14]] = arith.divf %[[V12]], %[[V7]] : f32
// CHECK-NEXT: %[[V22]] = arith.addf %[[V14]], %[[V24]] : f32
// CHECK-NEXT: %[[V23]] = math.rsqrt %[[V22]] : f32
// CHECK-NEXT: linalg.yield %[[V23]] : f32
// CHECK-NEXT: } -> tensor<2x16xf32>
// CHECK-NEXT: %[[V27:[^ ,:)]*]] = tensor.empty() : tensor<2x16x64xf32>
// CHECK-NEXT: %[[V28:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[V0]], %[[V16]], %[[V26]], %[[V1]], %[[V2]] : tensor<2x16x64xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<64xf32>, tensor<64xf32>) outs(%[[V27]] : tensor<2x16x64xf32>) {
// CHECK-NEXT: ^bb0(%[[V12]]: f32, %[[V21]]: f32, %[[V29:[^ ,:)]*]]: f32, %[[V30:[^ ,:)]*]]: f32, %[[V31:[^ ,:)]*]]: f32, %[[V13]]: f32):
// CHECK-NEXT: %[[V14]] = arith.subf %[[V12]], %[[V21]] : f32
// CHECK-NEXT: %[[V22]] = arith.mulf %[[V14]], %[[V29]] : f32
// CHECK-NEXT: %[[V23]] = arith.mulf %[[V22]], %[[V30]] : f32
// CHECK-NEXT: %[[V32:[^ ,:)]*]] = arith.addf %[[V23]], %[[V31]] : f32
// CHECK-NEXT: linalg.yield %[[V32]] : f32
// CHECK-NEXT: } -> tensor<2x16x64xf32>
// CHECK-NEXT: %[[V33:[^ ,:)]*]] = tensor.expand_shape %[[V16]] {{\[\[}}0], [1, 2{{\]\]}} output_shape [2, 16, 1] : tensor<2x16xf32> into tensor<2x16x1xf32>
// CHECK-NEXT: %[[V34:[^ ,:)]*]] = tensor.expand_shape %[[V26]] {{\[\[}}0], [1, 2{{\]\]}} output_shape [2, 16, 1] : tensor<2x16xf32> into tensor<2x16x1xf32>
// CHECK-NEXT: return %[[V28]], %[[V33]], %[[V34]] : tensor<2x16x64xf32>, tensor<2x16x1xf32>, tensor<2x16x1xf32>
// CHECK-NEXT: }
joint.graph @layer_norm(%x: tensor<2x16x64xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %w: tensor<64xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %b: tensor<64xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<2x16x64xf32> {joint.role = #joint.role<output>}, tensor<2x16x1xf32> {joint.role = #joint.role<output>}, tensor<2x16x1xf32> {joint.role = #joint.role<output>}) {
  %0, %1, %2 = joint.call_function "aten::native_layer_norm.default"(%x, %w, %b) {args = [#joint.operand<0>, [64], #joint.operand<1>, #joint.operand<2>, 1.000000e-05], name = "native_layer_norm"} : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<2x16x64xf32>, tensor<2x16x1xf32>, tensor<2x16x1xf32>)
  joint.output %0, %1, %2 : tensor<2x16x64xf32>, tensor<2x16x1xf32>, tensor<2x16x1xf32>
}

// dx from sum(g) and sum(g * xhat) over the normalized dim; dw, db over the
// outer dims.
// CHECK-LABEL: func.func @layer_norm_backward
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<2x16x64xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<2x16x64xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V2:[^ ,:)]*]]: tensor<2x16x1xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V3:[^ ,:)]*]]: tensor<2x16x1xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V4:[^ ,:)]*]]: tensor<64xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V5:[^ ,:)]*]]: tensor<64xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<2x16x64xf32> {joint.role = #joint.role<output>}, tensor<64xf32> {joint.role = #joint.role<output>}, tensor<64xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = tensor.empty() : tensor<2x16xf32>
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = linalg.fill ins(%[[V6]] : f32) outs(%[[V7]] : tensor<2x16xf32>) -> tensor<2x16xf32>
// CHECK-NEXT: %[[V9:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V10:[^ ,:)]*]] = tensor.empty() : tensor<2x16xf32>
// CHECK-NEXT: %[[V11:[^ ,:)]*]] = linalg.fill ins(%[[V9]] : f32) outs(%[[V10]] : tensor<2x16xf32>) -> tensor<2x16xf32>
// CHECK-NEXT: %[[V12:[^ ,:)]*]]:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[V0]], %[[V1]], %[[V2]], %[[V3]], %[[V4]] : tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x1xf32>, tensor<2x16x1xf32>, tensor<64xf32>) outs(%[[V8]], %[[V11]] : tensor<2x16xf32>, tensor<2x16xf32>) {
// CHECK-NEXT: ^bb0(%[[V13:[^ ,:)]*]]: f32, %[[V14:[^ ,:)]*]]: f32, %[[V15:[^ ,:)]*]]: f32, %[[V16:[^ ,:)]*]]: f32, %[[V17:[^ ,:)]*]]: f32, %[[V18:[^ ,:)]*]]: f32, %[[V19:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V20:[^ ,:)]*]] = arith.subf %[[V14]], %[[V15]] : f32
// CHECK-NEXT: %[[V21:[^ ,:)]*]] = arith.mulf %[[V20]], %[[V16]] : f32
// CHECK-NEXT: %[[V22:[^ ,:)]*]] = arith.mulf %[[V13]], %[[V17]] : f32
// CHECK-NEXT: %[[V23:[^ ,:)]*]] = arith.addf %[[V18]], %[[V22]] : f32
// CHECK-NEXT: %[[V24:[^ ,:)]*]] = arith.mulf %[[V22]], %[[V21]] : f32
// CHECK-NEXT: %[[V25:[^ ,:)]*]] = arith.addf %[[V19]], %[[V24]] : f32
// CHECK-NEXT: linalg.yield %[[V23]], %[[V25]] : f32, f32
// CHECK-NEXT: } -> (tensor<2x16xf32>, tensor<2x16xf32>)
// CHECK-NEXT: %[[V26:[^ ,:)]*]] = arith.constant 1 : index
// CHECK-NEXT: %[[V27:[^ ,:)]*]] = arith.constant 64 : index
// CHECK-NEXT: %[[V28:[^ ,:)]*]] = arith.muli %[[V26]], %[[V27]] : index
// CHECK-NEXT: %[[V29:[^ ,:)]*]] = arith.index_cast %[[V28]] : index to i64
// CHECK-NEXT: %[[V30:[^ ,:)]*]] = arith.sitofp %[[V29]] : i64 to f32
// CHECK-NEXT: %[[V31:[^ ,:)]*]] = tensor.empty() : tensor<2x16x64xf32>
// CHECK-NEXT: %[[V32:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[V0]], %[[V1]], %[[V2]], %[[V3]], %[[V4]], %[[V12]]#0, %[[V12]]#1 : tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x1xf32>, tensor<2x16x1xf32>, tensor<64xf32>, tensor<2x16xf32>, tensor<2x16xf32>) outs(%[[V31]] : tensor<2x16x64xf32>) {
// CHECK-NEXT: ^bb0(%[[V13]]: f32, %[[V14]]: f32, %[[V15]]: f32, %[[V16]]: f32, %[[V17]]: f32, %[[V33:[^ ,:)]*]]: f32, %[[V34:[^ ,:)]*]]: f32, %[[V18]]: f32):
// CHECK-NEXT: %[[V20]] = arith.subf %[[V14]], %[[V15]] : f32
// CHECK-NEXT: %[[V21]] = arith.mulf %[[V20]], %[[V16]] : f32
// CHECK-NEXT: %[[V22]] = arith.mulf %[[V13]], %[[V17]] : f32
// CHECK-NEXT: %[[V23]] = arith.mulf %[[V21]], %[[V34]] : f32
// CHECK-NEXT: %[[V24]] = arith.mulf %[[V30]], %[[V22]] : f32
// CHECK-NEXT: %[[V25]] = arith.subf %[[V24]], %[[V33]] : f32
// CHECK-NEXT: %[[V35:[^ ,:)]*]] = arith.subf %[[V25]], %[[V23]] : f32
// CHECK-NEXT: %[[V36:[^ ,:)]*]] = arith.divf %[[V16]], %[[V30]] : f32
// CHECK-NEXT: %[[V37:[^ ,:)]*]] = arith.mulf %[[V36]], %[[V35]] : f32
// CHECK-NEXT: linalg.yield %[[V37]] : f32
// CHECK-NEXT: } -> tensor<2x16x64xf32>
// CHECK-NEXT: %[[V38:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V39:[^ ,:)]*]] = tensor.empty() : tensor<64xf32>
// CHECK-NEXT: %[[V40:[^ ,:)]*]] = linalg.fill ins(%[[V38]] : f32) outs(%[[V39]] : tensor<64xf32>) -> tensor<64xf32>
// CHECK-NEXT: %[[V41:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V42:[^ ,:)]*]] = tensor.empty() : tensor<64xf32>
// CHECK-NEXT: %[[V43:[^ ,:)]*]] = linalg.fill ins(%[[V41]] : f32) outs(%[[V42]] : tensor<64xf32>) -> tensor<64xf32>
// CHECK-NEXT: %[[V44:[^ ,:)]*]]:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d2)>], iterator_types = ["reduction", "reduction", "parallel"]} ins(%[[V0]], %[[V1]], %[[V2]], %[[V3]], %[[V4]] : tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x1xf32>, tensor<2x16x1xf32>, tensor<64xf32>) outs(%[[V40]], %[[V43]] : tensor<64xf32>, tensor<64xf32>) {
// CHECK-NEXT: ^bb0(%[[V13]]: f32, %[[V14]]: f32, %[[V15]]: f32, %[[V16]]: f32, %[[V17]]: f32, %[[V18]]: f32, %[[V19]]: f32):
// CHECK-NEXT: %[[V20]] = arith.subf %[[V14]], %[[V15]] : f32
// CHECK-NEXT: %[[V21]] = arith.mulf %[[V20]], %[[V16]] : f32
// CHECK-NEXT: %[[V22]] = arith.mulf %[[V13]], %[[V17]] : f32
// CHECK-NEXT: %[[V23]] = arith.mulf %[[V13]], %[[V21]] : f32
// CHECK-NEXT: %[[V24]] = arith.addf %[[V18]], %[[V23]] : f32
// CHECK-NEXT: %[[V25]] = arith.addf %[[V19]], %[[V13]] : f32
// CHECK-NEXT: linalg.yield %[[V24]], %[[V25]] : f32, f32
// CHECK-NEXT: } -> (tensor<64xf32>, tensor<64xf32>)
// CHECK-NEXT: return %[[V32]], %[[V44]]#0, %[[V44]]#1 : tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>
// CHECK-NEXT: }
joint.graph @layer_norm_backward(%dy: tensor<2x16x64xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %x: tensor<2x16x64xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %mean: tensor<2x16x1xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %rstd: tensor<2x16x1xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %w: tensor<64xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %b: tensor<64xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<2x16x64xf32> {joint.role = #joint.role<output>}, tensor<64xf32> {joint.role = #joint.role<output>}, tensor<64xf32> {joint.role = #joint.role<output>}) {
  %0, %1, %2 = joint.call_function "aten::native_layer_norm_backward.default"(%dy, %x, %mean, %rstd, %w, %b) {args = [#joint.operand<0>, #joint.operand<1>, [64], #joint.operand<2>, #joint.operand<3>, #joint.operand<4>, #joint.operand<5>, [true, true, true]], name = "native_layer_norm_backward"} : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x1xf32>, tensor<2x16x1xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>)
  joint.output %0, %1, %2 : tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>
}

// Results outside output_mask are None and get no computation.
// CHECK-LABEL: func.func @layer_norm_backward_input_only
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<2x8xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<2x8xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V2:[^ ,:)]*]]: tensor<2x1xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V3:[^ ,:)]*]]: tensor<2x1xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<2x8xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = tensor.empty() : tensor<2xf32>
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = linalg.fill ins(%[[V4]] : f32) outs(%[[V5]] : tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = tensor.empty() : tensor<2xf32>
// CHECK-NEXT: %[[V9:[^ ,:)]*]] = linalg.fill ins(%[[V7]] : f32) outs(%[[V8]] : tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT: %[[V10:[^ ,:)]*]]:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[V0]], %[[V1]], %[[V2]], %[[V3]] : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>) outs(%[[V6]], %[[V9]] : tensor<2xf32>, tensor<2xf32>) {
// CHECK-NEXT: ^bb0(%[[V11:[^ ,:)]*]]: f32, %[[V12:[^ ,:)]*]]: f32, %[[V13:[^ ,:)]*]]: f32, %[[V14:[^ ,:)]*]]: f32, %[[V15:[^ ,:)]*]]: f32, %[[V16:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V17:[^ ,:)]*]] = arith.subf %[[V12]], %[[V13]] : f32
// CHECK-NEXT: %[[V18:[^ ,:)]*]] = arith.mulf %[[V17]], %[[V14]] : f32
// CHECK-NEXT: %[[V19:[^ ,:)]*]] = arith.addf %[[V15]], %[[V11]] : f32
// CHECK-NEXT: %[[V20:[^ ,:)]*]] = arith.mulf %[[V11]], %[[V18]] : f32
// CHECK-NEXT: %[[V21:[^ ,:)]*]] = arith.addf %[[V16]], %[[V20]] : f32
// CHECK-NEXT: linalg.yield %[[V19]], %[[V21]] : f32, f32
// CHECK-NEXT: } -> (tensor<2xf32>, tensor<2xf32>)
// CHECK-NEXT: %[[V22:[^ ,:)]*]] = arith.constant 1 : index
// CHECK-NEXT: %[[V23:[^ ,:)]*]] = arith.constant 8 : index
// CHECK-NEXT: %[[V24:[^ ,:)]*]] = arith.muli %[[V22]], %[[V23]] : index
// CHECK-NEXT: %[[V25:[^ ,:)]*]] = arith.index_cast %[[V24]] : index to i64
// CHECK-NEXT: %[[V26:[^ ,:)]*]] = arith.sitofp %[[V25]] : i64 to f32
// CHECK-NEXT: %[[V27:[^ ,:)]*]] = tensor.empty() : tensor<2x8xf32>
// CHECK-NEXT: %[[V28:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[V0]], %[[V1]], %[[V2]], %[[V3]], %[[V10]]#0, %[[V10]]#1 : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2xf32>, tensor<2xf32>) outs(%[[V27]] : tensor<2x8xf32>) {
// CHECK-NEXT: ^bb0(%[[V11]]: f32, %[[V12]]: f32, %[[V13]]: f32, %[[V14]]: f32, %[[V29:[^ ,:)]*]]: f32, %[[V30:[^ ,:)]*]]: f32, %[[V15]]: f32):
// CHECK-NEXT: %[[V17]] = arith.subf %[[V12]], %[[V13]] : f32
// CHECK-NEXT: %[[V18]] = arith.mulf %[[V17]], %[[V14]] : f32
// CHECK-NEXT: %[[V19]] = arith.mulf %[[V18]], %[[V30]] : f32
// CHECK-NEXT: %[[V20]] = arith.mulf %[[V26]], %[[V11]] : f32
// CHECK-NEXT: %[[V21]] = arith.subf %[[V20]], %[[V29]] : f32
// CHECK-NEXT: %[[V31:[^ ,:)]*]] = arith.subf %[[V21]], %[[V19]] : f32
// CHECK-NEXT: %[[V32:[^ ,:)]*]] = arith.divf %[[V14]], %[[V26]] : f32
// CHECK-NEXT: %[[V33:[^ ,:)]*]] = arith.mulf %[[V32]], %[[V31]] : f32
// CHECK-NEXT: linalg.yield %[[V33]] : f32
// CHECK-NEXT: } -> tensor<2x8xf32>
// CHECK-NEXT: return %[[V28]] : tensor<2x8xf32>
// CHECK-NEXT: }
joint.graph @layer_norm_backward_input_only(%dy: tensor<2x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %x: tensor<2x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %mean: tensor<2x1xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %rstd: tensor<2x1xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<2x8xf32> {joint.role = #joint.role<output>}) {
  %0, %1, %2 = joint.call_function "aten::native_layer_norm_backward.default"(%dy, %x, %mean, %rstd) {args = [#joint.operand<0>, #joint.operand<1>, [8], #joint.operand<2>, #joint.operand<3>, unit, unit, [true, false, false]], name = "native_layer_norm_backward"} : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>) -> (tensor<2x8xf32>, none, none)
  joint.output %0 : tensor<2x8xf32>
}

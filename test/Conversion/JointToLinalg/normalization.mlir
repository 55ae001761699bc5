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

// Group norm over [N, C, *] viewed as [N, G, C/G, HxW]: mean and biased
// variance per (n, g) in two passes, rstd = 1 / sqrt(var + eps), then torch's
// x * scale + bias (scale = rstd * w, bias = b - scale * mean); mean and rstd
// are [N, G].
// CHECK-LABEL: func.func @group_norm
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<2x4x3xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<4xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V2:[^ ,:)]*]]: tensor<4xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<2x4x3xf32> {joint.role = #joint.role<output>}, tensor<2x2xf32> {joint.role = #joint.role<output>}, tensor<2x2xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = tensor.expand_shape %[[V0]] {{\[\[}}0], [1, 2], [3{{\]\]}} output_shape [2, 2, 2, 3] : tensor<2x4x3xf32> into tensor<2x2x2x3xf32>
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = arith.constant 1 : index
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = arith.constant 2 : index
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = arith.muli %[[V4]], %[[V5]] : index
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = arith.constant 3 : index
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = arith.muli %[[V6]], %[[V7]] : index
// CHECK-NEXT: %[[V9:[^ ,:)]*]] = arith.index_cast %[[V8]] : index to i64
// CHECK-NEXT: %[[V10:[^ ,:)]*]] = arith.sitofp %[[V9]] : i64 to f32
// CHECK-NEXT: %[[V11:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V12:[^ ,:)]*]] = tensor.empty() : tensor<2x2xf32>
// CHECK-NEXT: %[[V13:[^ ,:)]*]] = linalg.fill ins(%[[V11]] : f32) outs(%[[V12]] : tensor<2x2xf32>) -> tensor<2x2xf32>
// CHECK-NEXT: %[[V14:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[V3]] : tensor<2x2x2x3xf32>) outs(%[[V13]] : tensor<2x2xf32>) {
// CHECK-NEXT: ^bb0(%[[V15:[^ ,:)]*]]: f32, %[[V16:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V17:[^ ,:)]*]] = arith.addf %[[V16]], %[[V15]] : f32
// CHECK-NEXT: linalg.yield %[[V17]] : f32
// CHECK-NEXT: } -> tensor<2x2xf32>
// CHECK-NEXT: %[[V18:[^ ,:)]*]] = tensor.empty() : tensor<2x2xf32>
// CHECK-NEXT: %[[V19:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[V14]] : tensor<2x2xf32>) outs(%[[V18]] : tensor<2x2xf32>) {
// CHECK-NEXT: ^bb0(%[[V15]]: f32, %[[V16]]: f32):
// CHECK-NEXT: %[[V17]] = arith.divf %[[V15]], %[[V10]] : f32
// CHECK-NEXT: linalg.yield %[[V17]] : f32
// CHECK-NEXT: } -> tensor<2x2xf32>
// CHECK-NEXT: %[[V20:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V21:[^ ,:)]*]] = tensor.empty() : tensor<2x2xf32>
// CHECK-NEXT: %[[V22:[^ ,:)]*]] = linalg.fill ins(%[[V20]] : f32) outs(%[[V21]] : tensor<2x2xf32>) -> tensor<2x2xf32>
// CHECK-NEXT: %[[V23:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[V3]], %[[V19]] : tensor<2x2x2x3xf32>, tensor<2x2xf32>) outs(%[[V22]] : tensor<2x2xf32>) {
// CHECK-NEXT: ^bb0(%[[V15]]: f32, %[[V24:[^ ,:)]*]]: f32, %[[V16]]: f32):
// CHECK-NEXT: %[[V17]] = arith.subf %[[V15]], %[[V24]] : f32
// CHECK-NEXT: %[[V25:[^ ,:)]*]] = arith.mulf %[[V17]], %[[V17]] : f32
// CHECK-NEXT: %[[V26:[^ ,:)]*]] = arith.addf %[[V16]], %[[V25]] : f32
// CHECK-NEXT: linalg.yield %[[V26]] : f32
// CHECK-NEXT: } -> tensor<2x2xf32>
// CHECK-NEXT: %[[V27:[^ ,:)]*]] = arith.constant 9.99999974E-6 : f32
// CHECK-NEXT: %[[V28:[^ ,:)]*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[V29:[^ ,:)]*]] = tensor.empty() : tensor<2x2xf32>
// CHECK-NEXT: %[[V30:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[V23]] : tensor<2x2xf32>) outs(%[[V29]] : tensor<2x2xf32>) {
// CHECK-NEXT: ^bb0(%[[V15]]: f32, %[[V16]]: f32):
// CHECK-NEXT: %[[V17]] = arith.divf %[[V15]], %[[V10]] : f32
// CHECK-NEXT: %[[V25]] = arith.addf %[[V17]], %[[V27]] : f32
// CHECK-NEXT: %[[V26]] = math.sqrt %[[V25]] : f32
// CHECK-NEXT: %[[V31:[^ ,:)]*]] = arith.divf %[[V28]], %[[V26]] : f32
// CHECK-NEXT: linalg.yield %[[V31]] : f32
// CHECK-NEXT: } -> tensor<2x2xf32>
// CHECK-NEXT: %[[V32:[^ ,:)]*]] = tensor.expand_shape %[[V1]] {{\[\[}}0, 1{{\]\]}} output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
// CHECK-NEXT: %[[V33:[^ ,:)]*]] = tensor.expand_shape %[[V2]] {{\[\[}}0, 1{{\]\]}} output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
// CHECK-NEXT: %[[V34:[^ ,:)]*]] = tensor.empty() : tensor<2x2x2x3xf32>
// CHECK-NEXT: %[[V35:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>, affine_map<(d0, d1, d2, d3) -> (d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[V3]], %[[V19]], %[[V30]], %[[V32]], %[[V33]] : tensor<2x2x2x3xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) outs(%[[V34]] : tensor<2x2x2x3xf32>) {
// CHECK-NEXT: ^bb0(%[[V15]]: f32, %[[V24]]: f32, %[[V36:[^ ,:)]*]]: f32, %[[V37:[^ ,:)]*]]: f32, %[[V38:[^ ,:)]*]]: f32, %[[V16]]: f32):
// CHECK-NEXT: %[[V17]] = arith.mulf %[[V36]], %[[V37]] : f32
// CHECK-NEXT: %[[V25]] = arith.mulf %[[V17]], %[[V24]] : f32
// CHECK-NEXT: %[[V26]] = arith.negf %[[V25]] : f32
// CHECK-NEXT: %[[V31]] = arith.addf %[[V26]], %[[V38]] : f32
// CHECK-NEXT: %[[V39:[^ ,:)]*]] = arith.mulf %[[V17]], %[[V15]] : f32
// CHECK-NEXT: %[[V40:[^ ,:)]*]] = arith.addf %[[V39]], %[[V31]] : f32
// CHECK-NEXT: linalg.yield %[[V40]] : f32
// CHECK-NEXT: } -> tensor<2x2x2x3xf32>
// CHECK-NEXT: %[[V41:[^ ,:)]*]] = tensor.collapse_shape %[[V35]] {{\[\[}}0], [1, 2], [3{{\]\]}} : tensor<2x2x2x3xf32> into tensor<2x4x3xf32>
// CHECK-NEXT: return %[[V41]], %[[V19]], %[[V30]] : tensor<2x4x3xf32>, tensor<2x2xf32>, tensor<2x2xf32>
// CHECK-NEXT: }
joint.graph @group_norm(%x: tensor<2x4x3xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %w: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %b: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<2x4x3xf32> {joint.role = #joint.role<output>}, tensor<2x2xf32> {joint.role = #joint.role<output>}, tensor<2x2xf32> {joint.role = #joint.role<output>}) {
  %0, %1, %2 = joint.call_function "aten::native_group_norm.default"(%x, %w, %b) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>, 2, 4, 3, 2, 1.000000e-05], name = "native_group_norm"} : (tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x3xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
  joint.output %0, %1, %2 : tensor<2x4x3xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}

// bf16 without weight and bias: spatial dims collapsed to HxW, f32
// statistics, out = (x - mean) * rstd rounded once, mean/rstd rounded to bf16.
// CHECK-LABEL: func.func @group_norm_bf16_no_affine
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<1x4x2x2xbf16> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<1x4x2x2xbf16> {joint.role = #joint.role<output>}, tensor<1x2xbf16> {joint.role = #joint.role<output>}, tensor<1x2xbf16> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V1:[^ ,:)]*]] = tensor.collapse_shape %[[V0]] {{\[\[}}0], [1], [2, 3{{\]\]}} : tensor<1x4x2x2xbf16> into tensor<1x4x4xbf16>
// CHECK-NEXT: %[[V2:[^ ,:)]*]] = tensor.expand_shape %[[V1]] {{\[\[}}0], [1, 2], [3{{\]\]}} output_shape [1, 2, 2, 4] : tensor<1x4x4xbf16> into tensor<1x2x2x4xbf16>
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = arith.constant 1 : index
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = arith.constant 2 : index
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = arith.muli %[[V3]], %[[V4]] : index
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = arith.constant 4 : index
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = arith.muli %[[V5]], %[[V6]] : index
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = arith.index_cast %[[V7]] : index to i64
// CHECK-NEXT: %[[V9:[^ ,:)]*]] = arith.sitofp %[[V8]] : i64 to f32
// CHECK-NEXT: %[[V10:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V11:[^ ,:)]*]] = tensor.empty() : tensor<1x2xf32>
// CHECK-NEXT: %[[V12:[^ ,:)]*]] = linalg.fill ins(%[[V10]] : f32) outs(%[[V11]] : tensor<1x2xf32>) -> tensor<1x2xf32>
// CHECK-NEXT: %[[V13:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[V2]] : tensor<1x2x2x4xbf16>) outs(%[[V12]] : tensor<1x2xf32>) {
// CHECK-NEXT: ^bb0(%[[V14:[^ ,:)]*]]: bf16, %[[V15:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V16:[^ ,:)]*]] = arith.extf %[[V14]] : bf16 to f32
// CHECK-NEXT: %[[V17:[^ ,:)]*]] = arith.addf %[[V15]], %[[V16]] : f32
// CHECK-NEXT: linalg.yield %[[V17]] : f32
// CHECK-NEXT: } -> tensor<1x2xf32>
// CHECK-NEXT: %[[V18:[^ ,:)]*]] = tensor.empty() : tensor<1x2xf32>
// CHECK-NEXT: %[[V19:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[V13]] : tensor<1x2xf32>) outs(%[[V18]] : tensor<1x2xf32>) {
// CHECK-NEXT: ^bb0(%[[V14]]: f32, %[[V15]]: f32):
// CHECK-NEXT: %[[V16]] = arith.divf %[[V14]], %[[V9]] : f32
// CHECK-NEXT: linalg.yield %[[V16]] : f32
// CHECK-NEXT: } -> tensor<1x2xf32>
// CHECK-NEXT: %[[V20:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V21:[^ ,:)]*]] = tensor.empty() : tensor<1x2xf32>
// CHECK-NEXT: %[[V22:[^ ,:)]*]] = linalg.fill ins(%[[V20]] : f32) outs(%[[V21]] : tensor<1x2xf32>) -> tensor<1x2xf32>
// CHECK-NEXT: %[[V23:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[V2]], %[[V19]] : tensor<1x2x2x4xbf16>, tensor<1x2xf32>) outs(%[[V22]] : tensor<1x2xf32>) {
// CHECK-NEXT: ^bb0(%[[V14]]: bf16, %[[V24:[^ ,:)]*]]: f32, %[[V15]]: f32):
// CHECK-NEXT: %[[V16]] = arith.extf %[[V14]] : bf16 to f32
// CHECK-NEXT: %[[V17]] = arith.subf %[[V16]], %[[V24]] : f32
// CHECK-NEXT: %[[V25:[^ ,:)]*]] = arith.mulf %[[V17]], %[[V17]] : f32
// CHECK-NEXT: %[[V26:[^ ,:)]*]] = arith.addf %[[V15]], %[[V25]] : f32
// CHECK-NEXT: linalg.yield %[[V26]] : f32
// CHECK-NEXT: } -> tensor<1x2xf32>
// CHECK-NEXT: %[[V27:[^ ,:)]*]] = arith.constant 9.99999974E-6 : f32
// CHECK-NEXT: %[[V28:[^ ,:)]*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[V29:[^ ,:)]*]] = tensor.empty() : tensor<1x2xf32>
// CHECK-NEXT: %[[V30:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[V23]] : tensor<1x2xf32>) outs(%[[V29]] : tensor<1x2xf32>) {
// CHECK-NEXT: ^bb0(%[[V14]]: f32, %[[V15]]: f32):
// CHECK-NEXT: %[[V16]] = arith.divf %[[V14]], %[[V9]] : f32
// CHECK-NEXT: %[[V17]] = arith.addf %[[V16]], %[[V27]] : f32
// CHECK-NEXT: %[[V25]] = math.sqrt %[[V17]] : f32
// CHECK-NEXT: %[[V26]] = arith.divf %[[V28]], %[[V25]] : f32
// CHECK-NEXT: linalg.yield %[[V26]] : f32
// CHECK-NEXT: } -> tensor<1x2xf32>
// CHECK-NEXT: %[[V31:[^ ,:)]*]] = tensor.empty() : tensor<1x2x2x4xbf16>
// CHECK-NEXT: %[[V32:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[V2]], %[[V19]], %[[V30]] : tensor<1x2x2x4xbf16>, tensor<1x2xf32>, tensor<1x2xf32>) outs(%[[V31]] : tensor<1x2x2x4xbf16>) {
// CHECK-NEXT: ^bb0(%[[V14]]: bf16, %[[V24]]: f32, %[[V33:[^ ,:)]*]]: f32, %[[V15]]: bf16):
// CHECK-NEXT: %[[V16]] = arith.extf %[[V14]] : bf16 to f32
// CHECK-NEXT: %[[V17]] = arith.subf %[[V16]], %[[V24]] : f32
// CHECK-NEXT: %[[V25]] = arith.mulf %[[V17]], %[[V33]] : f32
// CHECK-NEXT: %[[V26]] = arith.truncf %[[V25]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[V26]] : bf16
// CHECK-NEXT: } -> tensor<1x2x2x4xbf16>
// CHECK-NEXT: %[[V34:[^ ,:)]*]] = tensor.collapse_shape %[[V32]] {{\[\[}}0], [1, 2], [3{{\]\]}} : tensor<1x2x2x4xbf16> into tensor<1x4x4xbf16>
// CHECK-NEXT: %[[V35:[^ ,:)]*]] = tensor.expand_shape %[[V34]] {{\[\[}}0], [1], [2, 3{{\]\]}} output_shape [1, 4, 2, 2] : tensor<1x4x4xbf16> into tensor<1x4x2x2xbf16>
// CHECK-NEXT: %[[V36:[^ ,:)]*]] = tensor.empty() : tensor<1x2xbf16>
// CHECK-NEXT: %[[V37:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[V19]] : tensor<1x2xf32>) outs(%[[V36]] : tensor<1x2xbf16>) {
// CHECK-NEXT: ^bb0(%[[V14]]: f32, %[[V15]]: bf16):
// CHECK-NEXT: %[[V16]] = arith.truncf %[[V14]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[V16]] : bf16
// CHECK-NEXT: } -> tensor<1x2xbf16>
// CHECK-NEXT: %[[V38:[^ ,:)]*]] = tensor.empty() : tensor<1x2xbf16>
// CHECK-NEXT: %[[V39:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[V30]] : tensor<1x2xf32>) outs(%[[V38]] : tensor<1x2xbf16>) {
// CHECK-NEXT: ^bb0(%[[V14]]: f32, %[[V15]]: bf16):
// CHECK-NEXT: %[[V16]] = arith.truncf %[[V14]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[V16]] : bf16
// CHECK-NEXT: } -> tensor<1x2xbf16>
// CHECK-NEXT: return %[[V35]], %[[V37]], %[[V39]] : tensor<1x4x2x2xbf16>, tensor<1x2xbf16>, tensor<1x2xbf16>
// CHECK-NEXT: }
joint.graph @group_norm_bf16_no_affine(%x: tensor<1x4x2x2xbf16> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x4x2x2xbf16> {joint.role = #joint.role<output>}, tensor<1x2xbf16> {joint.role = #joint.role<output>}, tensor<1x2xbf16> {joint.role = #joint.role<output>}) {
  %0, %1, %2 = joint.call_function "aten::native_group_norm.default"(%x) {args = [#joint.operand<0>, unit, unit, 1, 4, 4, 2, 1.000000e-05], name = "native_group_norm"} : (tensor<1x4x2x2xbf16>) -> (tensor<1x4x2x2xbf16>, tensor<1x2xbf16>, tensor<1x2xbf16>)
  joint.output %0, %1, %2 : tensor<1x4x2x2xbf16>, tensor<1x2xbf16>, tensor<1x2xbf16>
}

// ds = sum_hw(dy * x) and db = sum_hw(dy) per (n, c); their group sums
// weighted by w give c2 = (db_g * mean - ds_g) * rstd^3 / M and
// c3 = -c2 * mean - db_g * rstd / M, dx = rstd * w * dy + c2 * x + c3;
// dw = sum_n((ds - db * mean) * rstd), db = sum_n(db), collapsed to [C].
// CHECK-LABEL: func.func @group_norm_backward
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<2x4x3xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<2x4x3xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V2:[^ ,:)]*]]: tensor<2x2xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V3:[^ ,:)]*]]: tensor<2x2xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V4:[^ ,:)]*]]: tensor<4xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<2x4x3xf32> {joint.role = #joint.role<output>}, tensor<4xf32> {joint.role = #joint.role<output>}, tensor<4xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = tensor.expand_shape %[[V1]] {{\[\[}}0], [1, 2], [3{{\]\]}} output_shape [2, 2, 2, 3] : tensor<2x4x3xf32> into tensor<2x2x2x3xf32>
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = tensor.expand_shape %[[V0]] {{\[\[}}0], [1, 2], [3{{\]\]}} output_shape [2, 2, 2, 3] : tensor<2x4x3xf32> into tensor<2x2x2x3xf32>
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = tensor.expand_shape %[[V4]] {{\[\[}}0, 1{{\]\]}} output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V9:[^ ,:)]*]] = tensor.empty() : tensor<2x2x2xf32>
// CHECK-NEXT: %[[V10:[^ ,:)]*]] = linalg.fill ins(%[[V8]] : f32) outs(%[[V9]] : tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
// CHECK-NEXT: %[[V11:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V12:[^ ,:)]*]] = tensor.empty() : tensor<2x2x2xf32>
// CHECK-NEXT: %[[V13:[^ ,:)]*]] = linalg.fill ins(%[[V11]] : f32) outs(%[[V12]] : tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
// CHECK-NEXT: %[[V14:[^ ,:)]*]]:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[V6]], %[[V5]] : tensor<2x2x2x3xf32>, tensor<2x2x2x3xf32>) outs(%[[V10]], %[[V13]] : tensor<2x2x2xf32>, tensor<2x2x2xf32>) {
// CHECK-NEXT: ^bb0(%[[V15:[^ ,:)]*]]: f32, %[[V16:[^ ,:)]*]]: f32, %[[V17:[^ ,:)]*]]: f32, %[[V18:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V19:[^ ,:)]*]] = arith.mulf %[[V15]], %[[V16]] : f32
// CHECK-NEXT: %[[V20:[^ ,:)]*]] = arith.addf %[[V17]], %[[V19]] : f32
// CHECK-NEXT: %[[V21:[^ ,:)]*]] = arith.addf %[[V18]], %[[V15]] : f32
// CHECK-NEXT: linalg.yield %[[V20]], %[[V21]] : f32, f32
// CHECK-NEXT: } -> (tensor<2x2x2xf32>, tensor<2x2x2xf32>)
// CHECK-NEXT: %[[V22:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V23:[^ ,:)]*]] = tensor.empty() : tensor<2x2xf32>
// CHECK-NEXT: %[[V24:[^ ,:)]*]] = linalg.fill ins(%[[V22]] : f32) outs(%[[V23]] : tensor<2x2xf32>) -> tensor<2x2xf32>
// CHECK-NEXT: %[[V25:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V26:[^ ,:)]*]] = tensor.empty() : tensor<2x2xf32>
// CHECK-NEXT: %[[V27:[^ ,:)]*]] = linalg.fill ins(%[[V25]] : f32) outs(%[[V26]] : tensor<2x2xf32>) -> tensor<2x2xf32>
// CHECK-NEXT: %[[V28:[^ ,:)]*]]:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[V14]]#0, %[[V14]]#1, %[[V7]] : tensor<2x2x2xf32>, tensor<2x2x2xf32>, tensor<2x2xf32>) outs(%[[V24]], %[[V27]] : tensor<2x2xf32>, tensor<2x2xf32>) {
// CHECK-NEXT: ^bb0(%[[V15]]: f32, %[[V16]]: f32, %[[V29:[^ ,:)]*]]: f32, %[[V17]]: f32, %[[V30:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V19]] = arith.mulf %[[V15]], %[[V29]] : f32
// CHECK-NEXT: %[[V20]] = arith.mulf %[[V16]], %[[V29]] : f32
// CHECK-NEXT: %[[V21]] = arith.addf %[[V17]], %[[V19]] : f32
// CHECK-NEXT: %[[V31:[^ ,:)]*]] = arith.addf %[[V30]], %[[V20]] : f32
// CHECK-NEXT: linalg.yield %[[V21]], %[[V31]] : f32, f32
// CHECK-NEXT: } -> (tensor<2x2xf32>, tensor<2x2xf32>)
// CHECK-NEXT: %[[V32:[^ ,:)]*]] = arith.constant 1 : index
// CHECK-NEXT: %[[V33:[^ ,:)]*]] = arith.constant 2 : index
// CHECK-NEXT: %[[V34:[^ ,:)]*]] = arith.muli %[[V32]], %[[V33]] : index
// CHECK-NEXT: %[[V35:[^ ,:)]*]] = arith.constant 3 : index
// CHECK-NEXT: %[[V36:[^ ,:)]*]] = arith.muli %[[V34]], %[[V35]] : index
// CHECK-NEXT: %[[V37:[^ ,:)]*]] = arith.index_cast %[[V36]] : index to i64
// CHECK-NEXT: %[[V38:[^ ,:)]*]] = arith.sitofp %[[V37]] : i64 to f32
// CHECK-NEXT: %[[V39:[^ ,:)]*]] = tensor.empty() : tensor<2x2x2x3xf32>
// CHECK-NEXT: %[[V40:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>, affine_map<(d0, d1, d2, d3) -> (d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[V6]], %[[V5]], %[[V2]], %[[V3]], %[[V28]]#0, %[[V28]]#1, %[[V7]] : tensor<2x2x2x3xf32>, tensor<2x2x2x3xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) outs(%[[V39]] : tensor<2x2x2x3xf32>) {
// CHECK-NEXT: ^bb0(%[[V15]]: f32, %[[V16]]: f32, %[[V29]]: f32, %[[V41:[^ ,:)]*]]: f32, %[[V42:[^ ,:)]*]]: f32, %[[V43:[^ ,:)]*]]: f32, %[[V44:[^ ,:)]*]]: f32, %[[V17]]: f32):
// CHECK-NEXT: %[[V19]] = arith.mulf %[[V41]], %[[V41]] : f32
// CHECK-NEXT: %[[V20]] = arith.mulf %[[V19]], %[[V41]] : f32
// CHECK-NEXT: %[[V21]] = arith.mulf %[[V43]], %[[V29]] : f32
// CHECK-NEXT: %[[V31]] = arith.subf %[[V21]], %[[V42]] : f32
// CHECK-NEXT: %[[V45:[^ ,:)]*]] = arith.mulf %[[V31]], %[[V20]] : f32
// CHECK-NEXT: %[[V46:[^ ,:)]*]] = arith.divf %[[V45]], %[[V38]] : f32
// CHECK-NEXT: %[[V47:[^ ,:)]*]] = arith.mulf %[[V43]], %[[V41]] : f32
// CHECK-NEXT: %[[V48:[^ ,:)]*]] = arith.divf %[[V47]], %[[V38]] : f32
// CHECK-NEXT: %[[V49:[^ ,:)]*]] = arith.mulf %[[V46]], %[[V29]] : f32
// CHECK-NEXT: %[[V50:[^ ,:)]*]] = arith.negf %[[V49]] : f32
// CHECK-NEXT: %[[V51:[^ ,:)]*]] = arith.subf %[[V50]], %[[V48]] : f32
// CHECK-NEXT: %[[V52:[^ ,:)]*]] = arith.mulf %[[V41]], %[[V44]] : f32
// CHECK-NEXT: %[[V53:[^ ,:)]*]] = arith.mulf %[[V46]], %[[V16]] : f32
// CHECK-NEXT: %[[V54:[^ ,:)]*]] = arith.mulf %[[V52]], %[[V15]] : f32
// CHECK-NEXT: %[[V55:[^ ,:)]*]] = arith.addf %[[V54]], %[[V53]] : f32
// CHECK-NEXT: %[[V56:[^ ,:)]*]] = arith.addf %[[V55]], %[[V51]] : f32
// CHECK-NEXT: linalg.yield %[[V56]] : f32
// CHECK-NEXT: } -> tensor<2x2x2x3xf32>
// CHECK-NEXT: %[[V57:[^ ,:)]*]] = tensor.collapse_shape %[[V40]] {{\[\[}}0], [1, 2], [3{{\]\]}} : tensor<2x2x2x3xf32> into tensor<2x4x3xf32>
// CHECK-NEXT: %[[V58:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V59:[^ ,:)]*]] = tensor.empty() : tensor<2x2xf32>
// CHECK-NEXT: %[[V60:[^ ,:)]*]] = linalg.fill ins(%[[V58]] : f32) outs(%[[V59]] : tensor<2x2xf32>) -> tensor<2x2xf32>
// CHECK-NEXT: %[[V61:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>], iterator_types = ["reduction", "parallel", "parallel"]} ins(%[[V14]]#0, %[[V14]]#1, %[[V2]], %[[V3]] : tensor<2x2x2xf32>, tensor<2x2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) outs(%[[V60]] : tensor<2x2xf32>) {
// CHECK-NEXT: ^bb0(%[[V15]]: f32, %[[V16]]: f32, %[[V29]]: f32, %[[V41]]: f32, %[[V17]]: f32):
// CHECK-NEXT: %[[V19]] = arith.mulf %[[V16]], %[[V29]] : f32
// CHECK-NEXT: %[[V20]] = arith.subf %[[V15]], %[[V19]] : f32
// CHECK-NEXT: %[[V21]] = arith.mulf %[[V20]], %[[V41]] : f32
// CHECK-NEXT: %[[V31]] = arith.addf %[[V17]], %[[V21]] : f32
// CHECK-NEXT: linalg.yield %[[V31]] : f32
// CHECK-NEXT: } -> tensor<2x2xf32>
// CHECK-NEXT: %[[V62:[^ ,:)]*]] = tensor.collapse_shape %[[V61]] {{\[\[}}0, 1{{\]\]}} : tensor<2x2xf32> into tensor<4xf32>
// CHECK-NEXT: %[[V63:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V64:[^ ,:)]*]] = tensor.empty() : tensor<2x2xf32>
// CHECK-NEXT: %[[V65:[^ ,:)]*]] = linalg.fill ins(%[[V63]] : f32) outs(%[[V64]] : tensor<2x2xf32>) -> tensor<2x2xf32>
// CHECK-NEXT: %[[V66:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>], iterator_types = ["reduction", "parallel", "parallel"]} ins(%[[V14]]#1 : tensor<2x2x2xf32>) outs(%[[V65]] : tensor<2x2xf32>) {
// CHECK-NEXT: ^bb0(%[[V15]]: f32, %[[V17]]: f32):
// CHECK-NEXT: %[[V19]] = arith.addf %[[V17]], %[[V15]] : f32
// CHECK-NEXT: linalg.yield %[[V19]] : f32
// CHECK-NEXT: } -> tensor<2x2xf32>
// CHECK-NEXT: %[[V67:[^ ,:)]*]] = tensor.collapse_shape %[[V66]] {{\[\[}}0, 1{{\]\]}} : tensor<2x2xf32> into tensor<4xf32>
// CHECK-NEXT: return %[[V57]], %[[V62]], %[[V67]] : tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: }
joint.graph @group_norm_backward(%dy: tensor<2x4x3xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %x: tensor<2x4x3xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %mean: tensor<2x2xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %rstd: tensor<2x2xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %w: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<2x4x3xf32> {joint.role = #joint.role<output>}, tensor<4xf32> {joint.role = #joint.role<output>}, tensor<4xf32> {joint.role = #joint.role<output>}) {
  %0, %1, %2 = joint.call_function "aten::native_group_norm_backward.default"(%dy, %x, %mean, %rstd, %w) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>, #joint.operand<3>, #joint.operand<4>, 2, 4, 3, 2, [true, true, true]], name = "native_group_norm_backward"} : (tensor<2x4x3xf32>, tensor<2x4x3xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<4xf32>) -> (tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32>)
  joint.output %0, %1, %2 : tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32>
}

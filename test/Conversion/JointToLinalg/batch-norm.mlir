// RUN: joint-opt %s -split-input-file -convert-joint-to-linalg -mlir-print-local-scope | FileCheck %s

// Training: per-channel mean and biased variance over every dim but 1,
// invstd = 1 / sqrt(var + eps), out = x * alpha + beta (alpha = invstd * w,
// beta = b - mean * alpha). torch writes running_mean / running_var without
// declaring it: they become extra results (joint.updates = 3, 4), blended
// with momentum 0.1, the variance unbiased (* M / (M - 1)).
// CHECK-LABEL: func.func @batch_norm_training
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<4x3xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<3xf32> {joint.fqn = "bn.weight", joint.role = #joint.role<param>}, %[[V2:[^ ,:)]*]]: tensor<3xf32> {joint.fqn = "bn.bias", joint.role = #joint.role<param>}, %[[V3:[^ ,:)]*]]: tensor<3xf32> {joint.fqn = "bn.running_mean", joint.role = #joint.role<buffer>}, %[[V4:[^ ,:)]*]]: tensor<3xf32> {joint.fqn = "bn.running_var", joint.role = #joint.role<buffer>}) -> (tensor<4x3xf32> {joint.role = #joint.role<output>}, tensor<3xf32> {joint.role = #joint.role<output>}, tensor<3xf32> {joint.role = #joint.role<output>}, tensor<3xf32> {joint.fqn = "bn.running_mean", joint.role = #joint.role<buffer>, joint.updates = 3 : i64}, tensor<3xf32> {joint.fqn = "bn.running_var", joint.role = #joint.role<buffer>, joint.updates = 4 : i64}) {
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = arith.constant 1 : index
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = arith.constant 4 : index
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = arith.muli %[[V5]], %[[V6]] : index
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = arith.index_cast %[[V7]] : index to i64
// CHECK-NEXT: %[[V9:[^ ,:)]*]] = arith.sitofp %[[V8]] : i64 to f32
// CHECK-NEXT: %[[V10:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V11:[^ ,:)]*]] = tensor.empty() : tensor<3xf32>
// CHECK-NEXT: %[[V12:[^ ,:)]*]] = linalg.fill ins(%[[V10]] : f32) outs(%[[V11]] : tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT: %[[V13:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%[[V0]] : tensor<4x3xf32>) outs(%[[V12]] : tensor<3xf32>) {
// CHECK-NEXT: ^bb0(%[[V14:[^ ,:)]*]]: f32, %[[V15:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V16:[^ ,:)]*]] = arith.addf %[[V15]], %[[V14]] : f32
// CHECK-NEXT: linalg.yield %[[V16]] : f32
// CHECK-NEXT: } -> tensor<3xf32>
// CHECK-NEXT: %[[V17:[^ ,:)]*]] = tensor.empty() : tensor<3xf32>
// CHECK-NEXT: %[[V18:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[V13]] : tensor<3xf32>) outs(%[[V17]] : tensor<3xf32>) {
// CHECK-NEXT: ^bb0(%[[V14]]: f32, %[[V15]]: f32):
// CHECK-NEXT: %[[V16]] = arith.divf %[[V14]], %[[V9]] : f32
// CHECK-NEXT: linalg.yield %[[V16]] : f32
// CHECK-NEXT: } -> tensor<3xf32>
// CHECK-NEXT: %[[V19:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V20:[^ ,:)]*]] = tensor.empty() : tensor<3xf32>
// CHECK-NEXT: %[[V21:[^ ,:)]*]] = linalg.fill ins(%[[V19]] : f32) outs(%[[V20]] : tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT: %[[V22:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%[[V0]], %[[V18]] : tensor<4x3xf32>, tensor<3xf32>) outs(%[[V21]] : tensor<3xf32>) {
// CHECK-NEXT: ^bb0(%[[V14]]: f32, %[[V23:[^ ,:)]*]]: f32, %[[V15]]: f32):
// CHECK-NEXT: %[[V16]] = arith.subf %[[V14]], %[[V23]] : f32
// CHECK-NEXT: %[[V24:[^ ,:)]*]] = arith.mulf %[[V16]], %[[V16]] : f32
// CHECK-NEXT: %[[V25:[^ ,:)]*]] = arith.addf %[[V15]], %[[V24]] : f32
// CHECK-NEXT: linalg.yield %[[V25]] : f32
// CHECK-NEXT: } -> tensor<3xf32>
// CHECK-NEXT: %[[V26:[^ ,:)]*]] = tensor.empty() : tensor<3xf32>
// CHECK-NEXT: %[[V27:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[V22]] : tensor<3xf32>) outs(%[[V26]] : tensor<3xf32>) {
// CHECK-NEXT: ^bb0(%[[V14]]: f32, %[[V15]]: f32):
// CHECK-NEXT: %[[V16]] = arith.divf %[[V14]], %[[V9]] : f32
// CHECK-NEXT: linalg.yield %[[V16]] : f32
// CHECK-NEXT: } -> tensor<3xf32>
// CHECK-NEXT: %[[V28:[^ ,:)]*]] = arith.constant 9.99999974E-6 : f32
// CHECK-NEXT: %[[V29:[^ ,:)]*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[V30:[^ ,:)]*]] = tensor.empty() : tensor<3xf32>
// CHECK-NEXT: %[[V31:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[V27]] : tensor<3xf32>) outs(%[[V30]] : tensor<3xf32>) {
// CHECK-NEXT: ^bb0(%[[V14]]: f32, %[[V15]]: f32):
// CHECK-NEXT: %[[V16]] = arith.addf %[[V14]], %[[V28]] : f32
// CHECK-NEXT: %[[V24]] = math.sqrt %[[V16]] : f32
// CHECK-NEXT: %[[V25]] = arith.divf %[[V29]], %[[V24]] : f32
// CHECK-NEXT: linalg.yield %[[V25]] : f32
// CHECK-NEXT: } -> tensor<3xf32>
// CHECK-NEXT: %[[V32:[^ ,:)]*]] = tensor.empty() : tensor<3xf32>
// CHECK-NEXT: %[[V33:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[V18]], %[[V31]], %[[V1]] : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) outs(%[[V32]] : tensor<3xf32>) {
// CHECK-NEXT: ^bb0(%[[V14]]: f32, %[[V23]]: f32, %[[V34:[^ ,:)]*]]: f32, %[[V15]]: f32):
// CHECK-NEXT: %[[V16]] = arith.mulf %[[V23]], %[[V34]] : f32
// CHECK-NEXT: linalg.yield %[[V16]] : f32
// CHECK-NEXT: } -> tensor<3xf32>
// CHECK-NEXT: %[[V35:[^ ,:)]*]] = tensor.empty() : tensor<3xf32>
// CHECK-NEXT: %[[V36:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[V18]], %[[V33]], %[[V2]] : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) outs(%[[V35]] : tensor<3xf32>) {
// CHECK-NEXT: ^bb0(%[[V14]]: f32, %[[V23]]: f32, %[[V34]]: f32, %[[V15]]: f32):
// CHECK-NEXT: %[[V16]] = arith.mulf %[[V14]], %[[V23]] : f32
// CHECK-NEXT: %[[V24]] = arith.subf %[[V34]], %[[V16]] : f32
// CHECK-NEXT: linalg.yield %[[V24]] : f32
// CHECK-NEXT: } -> tensor<3xf32>
// CHECK-NEXT: %[[V37:[^ ,:)]*]] = tensor.empty() : tensor<4x3xf32>
// CHECK-NEXT: %[[V38:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[V0]], %[[V33]], %[[V36]] : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) outs(%[[V37]] : tensor<4x3xf32>) {
// CHECK-NEXT: ^bb0(%[[V14]]: f32, %[[V23]]: f32, %[[V34]]: f32, %[[V15]]: f32):
// CHECK-NEXT: %[[V16]] = arith.mulf %[[V14]], %[[V23]] : f32
// CHECK-NEXT: %[[V24]] = arith.addf %[[V16]], %[[V34]] : f32
// CHECK-NEXT: linalg.yield %[[V24]] : f32
// CHECK-NEXT: } -> tensor<4x3xf32>
// CHECK-NEXT: %[[V39:[^ ,:)]*]] = arith.constant 1.000000e-01 : f32
// CHECK-NEXT: %[[V40:[^ ,:)]*]] = arith.constant 0.899999976 : f32
// CHECK-NEXT: %[[V41:[^ ,:)]*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[V42:[^ ,:)]*]] = tensor.empty() : tensor<3xf32>
// CHECK-NEXT: %[[V43:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[V3]], %[[V18]] : tensor<3xf32>, tensor<3xf32>) outs(%[[V42]] : tensor<3xf32>) {
// CHECK-NEXT: ^bb0(%[[V14]]: f32, %[[V23]]: f32, %[[V15]]: f32):
// CHECK-NEXT: %[[V16]] = arith.mulf %[[V39]], %[[V23]] : f32
// CHECK-NEXT: %[[V24]] = arith.mulf %[[V40]], %[[V14]] : f32
// CHECK-NEXT: %[[V25]] = arith.addf %[[V16]], %[[V24]] : f32
// CHECK-NEXT: linalg.yield %[[V25]] : f32
// CHECK-NEXT: } -> tensor<3xf32>
// CHECK-NEXT: %[[V44:[^ ,:)]*]] = tensor.empty() : tensor<3xf32>
// CHECK-NEXT: %[[V45:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[V4]], %[[V27]] : tensor<3xf32>, tensor<3xf32>) outs(%[[V44]] : tensor<3xf32>) {
// CHECK-NEXT: ^bb0(%[[V14]]: f32, %[[V23]]: f32, %[[V15]]: f32):
// CHECK-NEXT: %[[V16]] = arith.mulf %[[V23]], %[[V9]] : f32
// CHECK-NEXT: %[[V24]] = arith.subf %[[V9]], %[[V41]] : f32
// CHECK-NEXT: %[[V25]] = arith.divf %[[V16]], %[[V24]] : f32
// CHECK-NEXT: %[[V46:[^ ,:)]*]] = arith.mulf %[[V39]], %[[V25]] : f32
// CHECK-NEXT: %[[V47:[^ ,:)]*]] = arith.mulf %[[V40]], %[[V14]] : f32
// CHECK-NEXT: %[[V48:[^ ,:)]*]] = arith.addf %[[V46]], %[[V47]] : f32
// CHECK-NEXT: linalg.yield %[[V48]] : f32
// CHECK-NEXT: } -> tensor<3xf32>
// CHECK-NEXT: return %[[V38]], %[[V18]], %[[V31]], %[[V43]], %[[V45]] : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
// CHECK-NEXT: }
joint.graph @batch_norm_training(%x: tensor<4x3xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %w: tensor<3xf32> {joint.role = #joint.role<param>, joint.fqn = "bn.weight"}, %b: tensor<3xf32> {joint.role = #joint.role<param>, joint.fqn = "bn.bias"}, %rm: tensor<3xf32> {joint.role = #joint.role<buffer>, joint.fqn = "bn.running_mean"}, %rv: tensor<3xf32> {joint.role = #joint.role<buffer>, joint.fqn = "bn.running_var"}) -> (tensor<4x3xf32> {joint.role = #joint.role<output>}, tensor<3xf32> {joint.role = #joint.role<output>}, tensor<3xf32> {joint.role = #joint.role<output>}) {
  %0, %1, %2 = joint.call_function "aten::native_batch_norm.default"(%x, %w, %b, %rm, %rv) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>, #joint.operand<3>, #joint.operand<4>, true, 1.000000e-01, 1.000000e-05], name = "bn"} : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>)
  joint.output %0, %1, %2 : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Eval, bf16, no weight/bias: the running statistics (extended to f32)
// normalize; CPU eval's save_mean / save_invstd are empty; one cast to bf16.
// CHECK-LABEL: func.func @batch_norm_eval_bf16
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<2x3x2xbf16> {joint.path = "x", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<3xbf16> {joint.fqn = "bn.running_mean", joint.role = #joint.role<buffer>}, %[[V2:[^ ,:)]*]]: tensor<3xbf16> {joint.fqn = "bn.running_var", joint.role = #joint.role<buffer>}) -> (tensor<2x3x2xbf16> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = arith.constant 1 : index
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = arith.constant 2 : index
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = arith.muli %[[V3]], %[[V4]] : index
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = arith.constant 2 : index
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = arith.muli %[[V5]], %[[V6]] : index
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = arith.index_cast %[[V7]] : index to i64
// CHECK-NEXT: %[[V9:[^ ,:)]*]] = arith.sitofp %[[V8]] : i64 to f32
// CHECK-NEXT: %[[V10:[^ ,:)]*]] = tensor.empty() : tensor<3xf32>
// CHECK-NEXT: %[[V11:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[V1]] : tensor<3xbf16>) outs(%[[V10]] : tensor<3xf32>) {
// CHECK-NEXT: ^bb0(%[[V12:[^ ,:)]*]]: bf16, %[[V13:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V14:[^ ,:)]*]] = arith.extf %[[V12]] : bf16 to f32
// CHECK-NEXT: linalg.yield %[[V14]] : f32
// CHECK-NEXT: } -> tensor<3xf32>
// CHECK-NEXT: %[[V15:[^ ,:)]*]] = arith.constant 9.99999974E-6 : f32
// CHECK-NEXT: %[[V16:[^ ,:)]*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[V17:[^ ,:)]*]] = tensor.empty() : tensor<3xf32>
// CHECK-NEXT: %[[V18:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[V2]] : tensor<3xbf16>) outs(%[[V17]] : tensor<3xf32>) {
// CHECK-NEXT: ^bb0(%[[V12]]: bf16, %[[V13]]: f32):
// CHECK-NEXT: %[[V14]] = arith.extf %[[V12]] : bf16 to f32
// CHECK-NEXT: %[[V19:[^ ,:)]*]] = arith.addf %[[V14]], %[[V15]] : f32
// CHECK-NEXT: %[[V20:[^ ,:)]*]] = math.sqrt %[[V19]] : f32
// CHECK-NEXT: %[[V21:[^ ,:)]*]] = arith.divf %[[V16]], %[[V20]] : f32
// CHECK-NEXT: linalg.yield %[[V21]] : f32
// CHECK-NEXT: } -> tensor<3xf32>
// CHECK-NEXT: %[[V22:[^ ,:)]*]] = tensor.empty() : tensor<3xf32>
// CHECK-NEXT: %[[V23:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[V11]], %[[V18]] : tensor<3xf32>, tensor<3xf32>) outs(%[[V22]] : tensor<3xf32>) {
// CHECK-NEXT: ^bb0(%[[V12]]: f32, %[[V24:[^ ,:)]*]]: f32, %[[V13]]: f32):
// CHECK-NEXT: linalg.yield %[[V24]] : f32
// CHECK-NEXT: } -> tensor<3xf32>
// CHECK-NEXT: %[[V25:[^ ,:)]*]] = tensor.empty() : tensor<3xf32>
// CHECK-NEXT: %[[V26:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[V11]], %[[V23]] : tensor<3xf32>, tensor<3xf32>) outs(%[[V25]] : tensor<3xf32>) {
// CHECK-NEXT: ^bb0(%[[V12]]: f32, %[[V24]]: f32, %[[V13]]: f32):
// CHECK-NEXT: %[[V14]] = arith.mulf %[[V12]], %[[V24]] : f32
// CHECK-NEXT: %[[V19]] = arith.negf %[[V14]] : f32
// CHECK-NEXT: linalg.yield %[[V19]] : f32
// CHECK-NEXT: } -> tensor<3xf32>
// CHECK-NEXT: %[[V27:[^ ,:)]*]] = tensor.empty() : tensor<2x3x2xbf16>
// CHECK-NEXT: %[[V28:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1)>, affine_map<(d0, d1, d2) -> (d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[V0]], %[[V23]], %[[V26]] : tensor<2x3x2xbf16>, tensor<3xf32>, tensor<3xf32>) outs(%[[V27]] : tensor<2x3x2xbf16>) {
// CHECK-NEXT: ^bb0(%[[V12]]: bf16, %[[V24]]: f32, %[[V29:[^ ,:)]*]]: f32, %[[V13]]: bf16):
// CHECK-NEXT: %[[V14]] = arith.extf %[[V12]] : bf16 to f32
// CHECK-NEXT: %[[V19]] = arith.mulf %[[V14]], %[[V24]] : f32
// CHECK-NEXT: %[[V20]] = arith.addf %[[V19]], %[[V29]] : f32
// CHECK-NEXT: %[[V21]] = arith.truncf %[[V20]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[V21]] : bf16
// CHECK-NEXT: } -> tensor<2x3x2xbf16>
// CHECK-NEXT: %[[V30:[^ ,:)]*]] = tensor.empty() : tensor<0xbf16>
// CHECK-NEXT: %[[V31:[^ ,:)]*]] = tensor.empty() : tensor<0xbf16>
// CHECK-NEXT: return %[[V28]] : tensor<2x3x2xbf16>
// CHECK-NEXT: }
joint.graph @batch_norm_eval_bf16(%x: tensor<2x3x2xbf16> {joint.role = #joint.role<input>, joint.path = "x"}, %rm: tensor<3xbf16> {joint.role = #joint.role<buffer>, joint.fqn = "bn.running_mean"}, %rv: tensor<3xbf16> {joint.role = #joint.role<buffer>, joint.fqn = "bn.running_var"}) -> (tensor<2x3x2xbf16> {joint.role = #joint.role<output>}) {
  %0, %1, %2 = joint.call_function "aten::native_batch_norm.default"(%x, %rm, %rv) {args = [#joint.operand<0>, unit, unit, #joint.operand<1>, #joint.operand<2>, false, 1.000000e-01, 1.000000e-05], name = "bn"} : (tensor<2x3x2xbf16>, tensor<3xbf16>, tensor<3xbf16>) -> (tensor<2x3x2xbf16>, tensor<0xbf16>, tensor<0xbf16>)
  joint.output %0 : tensor<2x3x2xbf16>
}

// -----

// Backward in training from save_mean / save_invstd: sum_dy and
// dot = sum(dy * (x - mean)) in one reduction; dx = (dy - sum_dy / M -
// (x - mean) * dot * invstd^2 / M) * invstd * w; dw = dot * invstd; the
// unrequested grad_bias is dropped.
// CHECK-LABEL: func.func @batch_norm_backward_training
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<4x3xf32> {joint.path = "dy", joint.role = #joint.role<input>}, %[[V1:[^ ,:)]*]]: tensor<4x3xf32> {joint.path = "x", joint.role = #joint.role<input>}, %[[V2:[^ ,:)]*]]: tensor<3xf32> {joint.path = "w", joint.role = #joint.role<input>}, %[[V3:[^ ,:)]*]]: tensor<3xf32> {joint.path = "m", joint.role = #joint.role<input>}, %[[V4:[^ ,:)]*]]: tensor<3xf32> {joint.path = "is", joint.role = #joint.role<input>}) -> (tensor<4x3xf32> {joint.role = #joint.role<output>}, tensor<3xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = tensor.empty() : tensor<3xf32>
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = linalg.fill ins(%[[V5]] : f32) outs(%[[V6]] : tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V9:[^ ,:)]*]] = tensor.empty() : tensor<3xf32>
// CHECK-NEXT: %[[V10:[^ ,:)]*]] = linalg.fill ins(%[[V8]] : f32) outs(%[[V9]] : tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT: %[[V11:[^ ,:)]*]]:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%[[V0]], %[[V1]], %[[V3]] : tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>) outs(%[[V7]], %[[V10]] : tensor<3xf32>, tensor<3xf32>) {
// CHECK-NEXT: ^bb0(%[[V12:[^ ,:)]*]]: f32, %[[V13:[^ ,:)]*]]: f32, %[[V14:[^ ,:)]*]]: f32, %[[V15:[^ ,:)]*]]: f32, %[[V16:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V17:[^ ,:)]*]] = arith.subf %[[V13]], %[[V14]] : f32
// CHECK-NEXT: %[[V18:[^ ,:)]*]] = arith.addf %[[V15]], %[[V12]] : f32
// CHECK-NEXT: %[[V19:[^ ,:)]*]] = arith.mulf %[[V12]], %[[V17]] : f32
// CHECK-NEXT: %[[V20:[^ ,:)]*]] = arith.addf %[[V16]], %[[V19]] : f32
// CHECK-NEXT: linalg.yield %[[V18]], %[[V20]] : f32, f32
// CHECK-NEXT: } -> (tensor<3xf32>, tensor<3xf32>)
// CHECK-NEXT: %[[V21:[^ ,:)]*]] = arith.constant 1 : index
// CHECK-NEXT: %[[V22:[^ ,:)]*]] = arith.constant 4 : index
// CHECK-NEXT: %[[V23:[^ ,:)]*]] = arith.muli %[[V21]], %[[V22]] : index
// CHECK-NEXT: %[[V24:[^ ,:)]*]] = arith.index_cast %[[V23]] : index to i64
// CHECK-NEXT: %[[V25:[^ ,:)]*]] = arith.sitofp %[[V24]] : i64 to f32
// CHECK-NEXT: %[[V26:[^ ,:)]*]] = tensor.empty() : tensor<4x3xf32>
// CHECK-NEXT: %[[V27:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[V0]], %[[V1]], %[[V3]], %[[V4]], %[[V11]]#0, %[[V11]]#1, %[[V2]] : tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) outs(%[[V26]] : tensor<4x3xf32>) {
// CHECK-NEXT: ^bb0(%[[V12]]: f32, %[[V13]]: f32, %[[V14]]: f32, %[[V28:[^ ,:)]*]]: f32, %[[V29:[^ ,:)]*]]: f32, %[[V30:[^ ,:)]*]]: f32, %[[V31:[^ ,:)]*]]: f32, %[[V15]]: f32):
// CHECK-NEXT: %[[V17]] = arith.subf %[[V13]], %[[V14]] : f32
// CHECK-NEXT: %[[V18]] = arith.mulf %[[V28]], %[[V28]] : f32
// CHECK-NEXT: %[[V19]] = arith.mulf %[[V30]], %[[V18]] : f32
// CHECK-NEXT: %[[V20]] = arith.divf %[[V19]], %[[V25]] : f32
// CHECK-NEXT: %[[V32:[^ ,:)]*]] = arith.divf %[[V29]], %[[V25]] : f32
// CHECK-NEXT: %[[V33:[^ ,:)]*]] = arith.subf %[[V12]], %[[V32]] : f32
// CHECK-NEXT: %[[V34:[^ ,:)]*]] = arith.mulf %[[V17]], %[[V20]] : f32
// CHECK-NEXT: %[[V35:[^ ,:)]*]] = arith.subf %[[V33]], %[[V34]] : f32
// CHECK-NEXT: %[[V36:[^ ,:)]*]] = arith.mulf %[[V35]], %[[V28]] : f32
// CHECK-NEXT: %[[V37:[^ ,:)]*]] = arith.mulf %[[V36]], %[[V31]] : f32
// CHECK-NEXT: linalg.yield %[[V37]] : f32
// CHECK-NEXT: } -> tensor<4x3xf32>
// CHECK-NEXT: %[[V38:[^ ,:)]*]] = tensor.empty() : tensor<3xf32>
// CHECK-NEXT: %[[V39:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[V11]]#1, %[[V4]] : tensor<3xf32>, tensor<3xf32>) outs(%[[V38]] : tensor<3xf32>) {
// CHECK-NEXT: ^bb0(%[[V12]]: f32, %[[V13]]: f32, %[[V15]]: f32):
// CHECK-NEXT: %[[V17]] = arith.mulf %[[V12]], %[[V13]] : f32
// CHECK-NEXT: linalg.yield %[[V17]] : f32
// CHECK-NEXT: } -> tensor<3xf32>
// CHECK-NEXT: return %[[V27]], %[[V39]] : tensor<4x3xf32>, tensor<3xf32>
// CHECK-NEXT: }
joint.graph @batch_norm_backward_training(%dy: tensor<4x3xf32> {joint.role = #joint.role<input>, joint.path = "dy"}, %x: tensor<4x3xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %w: tensor<3xf32> {joint.role = #joint.role<input>, joint.path = "w"}, %m: tensor<3xf32> {joint.role = #joint.role<input>, joint.path = "m"}, %is: tensor<3xf32> {joint.role = #joint.role<input>, joint.path = "is"}) -> (tensor<4x3xf32> {joint.role = #joint.role<output>}, tensor<3xf32> {joint.role = #joint.role<output>}) {
  %0, %1, %2 = joint.call_function "aten::native_batch_norm_backward.default"(%dy, %x, %w, %m, %is) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>, unit, unit, #joint.operand<3>, #joint.operand<4>, true, 1.000000e-05, [true, true, false]], name = "bn_bwd"} : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, none)
  joint.output %0, %1 : tensor<4x3xf32>, tensor<3xf32>
}

joint.graph @three_unsupported(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::frobnicate.default"(%x) {name = "frob_1", args = [#joint.operand<0>]} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = joint.call_function "aten::exp.default"(%0) {name = "exp_1", args = [#joint.operand<0>]} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = joint.call_function "aten::twiddle.default"(%1) {name = "twiddle_1", args = [#joint.operand<0>]} : (tensor<4xf32>) -> tensor<4xf32>
  %3 = joint.call_function "aten::frobnicate.default"(%2) {name = "frob_2", args = [#joint.operand<0>]} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output %3 : tensor<4xf32>
}

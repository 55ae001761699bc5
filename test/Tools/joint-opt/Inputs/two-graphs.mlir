joint.graph @a(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::exp.default"(%x) {name = "exp"} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output %0 : tensor<4xf32>
}
joint.graph @b(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::exp.default"(%x) {name = "exp"} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output %0 : tensor<4xf32>
}

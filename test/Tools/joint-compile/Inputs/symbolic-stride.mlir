joint.graph @symbolic_stride(%x: tensor<4x?xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, sym("s0", 8)], strides = [sym("s0", 8), 1], offset = 0, device = "cpu", storage = 0>}) -> (tensor<4x?xf32> {joint.role = #joint.role<output>}, i64 {joint.role = #joint.role<output>}, i64 {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::mul.Tensor"(%x, %x) {name = "sq"} : (tensor<4x?xf32>, tensor<4x?xf32>) -> tensor<4x?xf32>
  %1 = joint.call_function "aten::sym_size.int"(%x) {args = [#joint.operand<0>, 1], name = "n"} : (tensor<4x?xf32>) -> i64
  %2 = joint.call_function "aten::sym_stride.int"(%x) {args = [#joint.operand<0>, 0], name = "row_stride"} : (tensor<4x?xf32>) -> i64
  joint.output %0, %1, %2 : tensor<4x?xf32>, i64, i64
}

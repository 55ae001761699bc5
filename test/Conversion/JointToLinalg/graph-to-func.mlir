// The driver: joint.graph becomes func.func with the same argument and
// result types and attributes, joint.output becomes func.return, and the
// operator table is erased.
// RUN: joint-opt %s -split-input-file -convert-joint-to-linalg | FileCheck %s

// CHECK-NOT: joint.schema
// CHECK-LABEL: func.func @add_f32(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32> {joint.path = "x", joint.role = #joint.role<input>},
// CHECK-SAME: %[[B:.*]]: tensor<8xf32> {joint.fqn = "b", joint.role = #joint.role<param>})
// CHECK-SAME: -> (tensor<4x8xf32> {joint.role = #joint.role<output>})
// CHECK-SAME: attributes {joint.model = {}}
// CHECK-NEXT: %[[EMPTY:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[ADD:.*]] = linalg.generic {indexing_maps = [#[[ID:.*]], #[[ROW:.*]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[B]] : tensor<4x8xf32>, tensor<8xf32>) outs(%[[EMPTY]] : tensor<4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[L:.*]]: f32, %[[R:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[L]], %[[R]] : f32
// CHECK-NEXT: linalg.yield %[[SUM]] : f32
// CHECK-NEXT: } -> tensor<4x8xf32>
// CHECK-NEXT: return %[[ADD]] : tensor<4x8xf32>
joint.schema @"aten::add.Tensor" {arguments = [#joint.arg<name = "self", type = "Tensor">, #joint.arg<name = "other", type = "Tensor">, #joint.arg<name = "alpha", type = "Scalar", kwarg_only = true, default_value = "1">], returns = [#joint.arg<type = "Tensor">], schema = "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", tags = ["core", "pointwise"]}
joint.graph @add_f32(%x: tensor<4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %b: tensor<8xf32> {joint.role = #joint.role<param>, joint.fqn = "b"}) -> (tensor<4x8xf32> {joint.role = #joint.role<output>}) attributes {joint.model = {}} {
  %0 = joint.call_function "aten::add.Tensor"(%x, %b) {name = "add"} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  joint.output %0 : tensor<4x8xf32>
}

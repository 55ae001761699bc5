// In-place writes: later readers of a written graph argument read the
// updated value, and its final value is an extra result with the argument's
// role and joint.updates = <argument index>.
// RUN: joint-opt %s -split-input-file -convert-joint-to-linalg | FileCheck %s

// CHECK-DAG: #[[MAP:.+]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @buffer_update_is_a_result(
// CHECK-SAME: %[[ARG0:[a-zA-Z0-9_-]+]]: tensor<4xf32> {joint.fqn = "w", joint.meta = #joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 0>, joint.role = #joint.role<param>}, %[[ARG1:[a-zA-Z0-9_-]+]]: tensor<4xf32> {joint.fqn = "running", joint.meta = #joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 1>, joint.role = #joint.role<buffer>}, %[[ARG2:[a-zA-Z0-9_-]+]]: tensor<4xf32> {joint.meta = #joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 2>, joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<4xf32> {joint.role = #joint.role<output>}, tensor<4xf32> {joint.fqn = "running", joint.role = #joint.role<buffer>, joint.updates = 1 : i64}) {
// CHECK-NEXT: %[[V0:[a-zA-Z0-9_-]+]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[V1:[a-zA-Z0-9_-]+]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP]], #[[MAP]]], iterator_types = ["parallel"]} ins(%[[ARG1]], %[[ARG2]] : tensor<4xf32>, tensor<4xf32>) outs(%[[V0]] : tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[IN:[a-zA-Z0-9_-]+]]: f32, %[[IN_0:[a-zA-Z0-9_-]+]]: f32, %[[OUT:[a-zA-Z0-9_-]+]]: f32):
// CHECK-NEXT: %[[V4:[a-zA-Z0-9_-]+]] = arith.addf %[[IN]], %[[IN_0]] : f32
// CHECK-NEXT: linalg.yield %[[V4]] : f32
// CHECK-NEXT: } -> tensor<4xf32>
// CHECK-NEXT: %[[V2:[a-zA-Z0-9_-]+]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[V3:[a-zA-Z0-9_-]+]] = linalg.generic {indexing_maps = [#[[MAP]], #[[MAP]], #[[MAP]]], iterator_types = ["parallel"]} ins(%[[V1]], %[[ARG0]] : tensor<4xf32>, tensor<4xf32>) outs(%[[V2]] : tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[IN]]: f32, %[[IN_0]]: f32, %[[OUT]]: f32):
// CHECK-NEXT: %[[V4]] = arith.mulf %[[IN]], %[[IN_0]] : f32
// CHECK-NEXT: linalg.yield %[[V4]] : f32
// CHECK-NEXT: } -> tensor<4xf32>
// CHECK-NEXT: return %[[V3]], %[[V3]] : tensor<4xf32>, tensor<4xf32>
joint.schema @"aten::add_.Tensor" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>, #joint.arg<name = "other", type = "Tensor">, #joint.arg<name = "alpha", type = "Scalar", kwarg_only = true, default_value = "1">], returns = [#joint.arg<type = "Tensor", alias = "a", write = true>], schema = "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", is_mutable}
joint.schema @"aten::copy_.default" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>, #joint.arg<name = "src", type = "Tensor">, #joint.arg<name = "non_blocking", type = "bool", default_value = "False">], returns = [#joint.arg<type = "Tensor", alias = "a", write = true>], schema = "aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)", is_mutable}
joint.graph @buffer_update_is_a_result(%w: tensor<4xf32> {joint.role = #joint.role<param>, joint.fqn = "w", joint.meta = #joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 0>}, %buf: tensor<4xf32> {joint.role = #joint.role<buffer>, joint.fqn = "running", joint.meta = #joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 1>}, %x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 2>}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  %u = joint.call_function "aten::add_.Tensor"(%buf, %x) {name = "add_", result_meta = [#joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 1>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = joint.call_function "aten::mul.Tensor"(%buf, %w) {name = "mul", result_meta = [#joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 3>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = joint.call_function "aten::copy_.default"(%buf, %r) {name = "copy_", result_meta = [#joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 1>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  joint.output %r : tensor<4xf32>
}

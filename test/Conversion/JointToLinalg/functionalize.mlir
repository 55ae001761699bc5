// joint-functionalize: torch's functionalization on the joint graph, so the
// conversion sees value semantics only. A write into a view is scattered
// back into a new base (slice_scatter, select_scatter), and every later read,
// including a view taken before the write, reads a view taken again from the
// new base; a written graph argument's final value becomes an extra result
// (role output, joint.updates). rrelu's unreturned noise write becomes
// rrelu_with_noise_functional's second result. RNG ops get their draw
// indices (a remat clone shares its original's) and the graph its draw
// count. The pass is idempotent.
// RUN: joint-opt %s -split-input-file -joint-functionalize -mlir-print-local-scope | FileCheck %s
// RUN: joint-opt %s -split-input-file -joint-functionalize -joint-functionalize -mlir-print-local-scope | FileCheck %s

joint.schema @"aten::add_.Tensor" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>, #joint.arg<name = "other", type = "Tensor">, #joint.arg<name = "alpha", type = "Scalar", kwarg_only = true, default_value = "1">], returns = [#joint.arg<type = "Tensor", alias = "a", write = true>], schema = "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", is_mutable}
joint.schema @"aten::copy_.default" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>, #joint.arg<name = "src", type = "Tensor">, #joint.arg<name = "non_blocking", type = "bool", default_value = "False">], returns = [#joint.arg<type = "Tensor", alias = "a", write = true>], schema = "aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)", is_mutable}
joint.schema @"aten::fill_.Scalar" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>, #joint.arg<name = "value", type = "Scalar">], returns = [#joint.arg<type = "Tensor", alias = "a", write = true>], schema = "aten::fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)", is_mutable}
joint.schema @"aten::view.default" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a">, #joint.arg<name = "size", type = "SymInt[]">], returns = [#joint.arg<type = "Tensor", alias = "a">], schema = "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)"}
joint.schema @"aten::slice.Tensor" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a">, #joint.arg<name = "dim", type = "int", default_value = "0">, #joint.arg<name = "start", type = "SymInt?", default_value = "None">, #joint.arg<name = "end", type = "SymInt?", default_value = "None">, #joint.arg<name = "step", type = "SymInt", default_value = "1">], returns = [#joint.arg<type = "Tensor", alias = "a">], schema = "aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)"}
joint.schema @"aten::select.int" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a">, #joint.arg<name = "dim", type = "int">, #joint.arg<name = "index", type = "SymInt">], returns = [#joint.arg<type = "Tensor", alias = "a">], schema = "aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)"}
joint.schema @"aten::expand.default" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a">, #joint.arg<name = "size", type = "SymInt[]">, #joint.arg<name = "implicit", type = "bool", kwarg_only = true, default_value = "False">], returns = [#joint.arg<type = "Tensor", alias = "a">], schema = "aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)"}
// CHECK-LABEL: joint.graph @shift_right
// CHECK-SAME: -> (tensor<2x4xf32> {joint.role = #joint.role<output>}, tensor<2xf32> {joint.role = #joint.role<output>}, tensor<2x4xf32> {joint.path = "z", joint.role = #joint.role<output>, joint.updates = 1 : i64}) attributes {joint.functionalized} {
// CHECK-NEXT: %[[LAST:.+]] = joint.call_function "aten::select.int"(%z) {args = [#joint.operand<0>, 1, 3], name = "last"
// CHECK-NEXT: %[[SRC:.+]] = joint.call_function "aten::slice.Tensor"(%ids)
// CHECK-NEXT: %[[DST:.+]] = joint.call_function "aten::slice.Tensor"(%z)
// CHECK-NEXT: %[[COPY:.+]] = joint.call_function "aten::copy_.default"(%[[DST]], %[[SRC]])
// CHECK-NEXT: %[[Z1:.+]] = joint.call_function "aten::slice_scatter.default"(%z, %[[COPY]]) {args = [#joint.operand<0>, #joint.operand<1>, 1, 1, 9223372036854775807], name = "copy__into_dst"} : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: joint.call_function "aten::select.int"(%[[Z1]]) {args = [#joint.operand<0>, 1, 3], name = "last_after_copy_"
// CHECK-NEXT: %[[COL:.+]] = joint.call_function "aten::select.int"(%[[Z1]]) {args = [#joint.operand<0>, 1, 0], name = "col"
// CHECK-NEXT: %[[FILL:.+]] = joint.call_function "aten::fill_.Scalar"(%[[COL]])
// CHECK-NEXT: %[[Z2:.+]] = joint.call_function "aten::select_scatter.default"(%[[Z1]], %[[FILL]]) {args = [#joint.operand<0>, #joint.operand<1>, 1, 0], name = "fill__into_col"} : (tensor<2x4xf32>, tensor<2xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %[[LAST2:.+]] = joint.call_function "aten::select.int"(%[[Z2]]) {args = [#joint.operand<0>, 1, 3], name = "last_after_copy__after_fill_"
// CHECK-NEXT: joint.output %[[Z2]], %[[LAST2]], %[[Z2]] : tensor<2x4xf32>, tensor<2xf32>, tensor<2x4xf32>
joint.graph @shift_right(%ids: tensor<2x4xf32> {joint.role = #joint.role<input>, joint.path = "ids", joint.meta = #joint.tensor<[2, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 0>}, %z: tensor<2x4xf32> {joint.role = #joint.role<input>, joint.path = "z", joint.meta = #joint.tensor<[2, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 1>}) -> (tensor<2x4xf32> {joint.role = #joint.role<output>}, tensor<2xf32> {joint.role = #joint.role<output>}) {
  %last = joint.call_function "aten::select.int"(%z) {args = [#joint.operand<0>, 1, 3], name = "last", result_meta = [#joint.tensor<[2], strides = [4], offset = 3, device = "cpu", storage = 1>]} : (tensor<2x4xf32>) -> tensor<2xf32>
  %src = joint.call_function "aten::slice.Tensor"(%ids) {args = [#joint.operand<0>, 1, 0, -1], name = "src", result_meta = [#joint.tensor<[2, 3], strides = [4, 1], offset = 0, device = "cpu", storage = 0>]} : (tensor<2x4xf32>) -> tensor<2x3xf32>
  %dst = joint.call_function "aten::slice.Tensor"(%z) {args = [#joint.operand<0>, 1, 1, 9223372036854775807], name = "dst", result_meta = [#joint.tensor<[2, 3], strides = [4, 1], offset = 1, device = "cpu", storage = 1>]} : (tensor<2x4xf32>) -> tensor<2x3xf32>
  %c = joint.call_function "aten::copy_.default"(%dst, %src) {name = "copy_", result_meta = [#joint.tensor<[2, 3], strides = [4, 1], offset = 1, device = "cpu", storage = 1>]} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %col = joint.call_function "aten::select.int"(%z) {args = [#joint.operand<0>, 1, 0], name = "col", result_meta = [#joint.tensor<[2], strides = [4], offset = 0, device = "cpu", storage = 1>]} : (tensor<2x4xf32>) -> tensor<2xf32>
  %f = joint.call_function "aten::fill_.Scalar"(%col) {args = [#joint.operand<0>, 7], name = "fill_", result_meta = [#joint.tensor<[2], strides = [4], offset = 0, device = "cpu", storage = 1>]} : (tensor<2xf32>) -> tensor<2xf32>
  joint.output %z, %last : tensor<2x4xf32>, tensor<2xf32>
}


// -----

joint.schema @"aten::rrelu_with_noise.default" {arguments = [#joint.arg<name = "self", type = "Tensor">, #joint.arg<name = "noise", type = "Tensor", alias = "b", write = true>, #joint.arg<name = "lower", type = "Scalar", default_value = "0.125">, #joint.arg<name = "upper", type = "Scalar", default_value = "0.33333333333333331">, #joint.arg<name = "training", type = "bool", default_value = "False">, #joint.arg<name = "generator", type = "Generator?", kwarg_only = true, default_value = "None">], returns = [#joint.arg<type = "Tensor">], schema = "aten::rrelu_with_noise(Tensor self, Tensor(b!) noise, Scalar lower=0.125, Scalar upper=0.33333333333333331, bool training=False, Generator? generator=None) -> Tensor", tags = ["nondeterministic_seeded"], is_mutable}
joint.schema @"aten::native_dropout.default" {arguments = [#joint.arg<name = "input", type = "Tensor">, #joint.arg<name = "p", type = "float">, #joint.arg<name = "train", type = "bool?">], returns = [#joint.arg<type = "Tensor">, #joint.arg<type = "Tensor">], schema = "aten::native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)", tags = ["core", "nondeterministic_seeded"]}
joint.graph @random_draws(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 0>}, %n: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "n", joint.meta = #joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 1>}) -> (tensor<4xf32> {joint.role = #joint.role<output>}, tensor<4xi1> {joint.role = #joint.role<output>}, tensor<4xi1> {joint.role = #joint.role<output>}) {
  %d:2 = joint.call_function "aten::native_dropout.default"(%x) {name = "d", args = [#joint.operand<0>, 2.500000e-01, true]} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  %r = joint.call_function "aten::rrelu_with_noise.default"(%d#0, %n) {name = "rrelu", args = [#joint.operand<0>, #joint.operand<1>, 1.0e-01, 3.0e-01, true], result_meta = [#joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 2>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c:2 = joint.call_function "aten::native_dropout.default"(%x) {name = "d_recomputed", recomputed_from = "d", phase = #joint.phase<backward>, args = [#joint.operand<0>, 2.500000e-01, true]} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  joint.output %r, %d#1, %c#1 : tensor<4xf32>, tensor<4xi1>, tensor<4xi1>
}
// CHECK-LABEL: joint.graph @random_draws
// CHECK-SAME: -> (tensor<4xf32> {joint.role = #joint.role<output>}, tensor<4xi1> {joint.role = #joint.role<output>}, tensor<4xi1> {joint.role = #joint.role<output>}, tensor<4xf32> {joint.path = "n", joint.role = #joint.role<output>, joint.updates = 1 : i64}) attributes {joint.functionalized, joint.rng_draws = 2 : i64} {
// CHECK-NEXT: %[[D:.+]], %[[M:.+]] = joint.call_function "aten::native_dropout.default"(%x) {args = [#joint.operand<0>, 2.500000e-01, true], joint.rng_draw = 0 : i64, name = "d"}
// CHECK-NEXT: %[[R:.+]], %[[N:.+]] = joint.call_function "aten::rrelu_with_noise_functional.default"(%[[D]], %n) {args = [#joint.operand<0>, #joint.operand<1>, 1.000000e-01, 3.000000e-01, true], joint.rng_draw = 1 : i64, name = "rrelu"} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT: %{{.+}}, %[[CM:.+]] = joint.call_function "aten::native_dropout.default"(%x) {args = [#joint.operand<0>, 2.500000e-01, true], joint.rng_draw = 0 : i64, name = "d_recomputed", phase = #joint.phase<backward>, recomputed_from = "d"}
// CHECK-NEXT: joint.output %[[R]], %[[M]], %[[CM]], %[[N]] : tensor<4xf32>, tensor<4xi1>, tensor<4xi1>, tensor<4xf32>

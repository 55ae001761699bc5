// In-place writes through views (torch's functionalization): the written
// view's new value is scattered back into a new value of its storage's base
// (a reshape back, tensor.insert_slice for slice_scatter/select_scatter), and
// every later read of the storage, or of a view taken before the write, reads
// the new base. A graph argument's final value is its last base. A write
// through a view that cannot be inverted (expand) is one error at the writer.
// RUN: joint-opt %s -split-input-file -verify-diagnostics -convert-joint-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @write_through_a_view(
// CHECK-SAME: -> (tensor<4xf32> {joint.role = #joint.role<output>}, tensor<4xf32> {joint.fqn = "b", joint.role = #joint.role<buffer>, joint.updates = 0 : i64})
// CHECK-NEXT: %[[V:.+]] = tensor.expand_shape %arg0 {{\[\[}}0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
// CHECK-NEXT: tensor.empty() : tensor<2x2xf32>
// CHECK-NEXT: %[[ADD:.+]] = linalg.generic {{.*}} ins(%[[V]], %arg1 : tensor<2x2xf32>, tensor<2x2xf32>)
// CHECK: arith.addf
// CHECK: %[[BASE:.+]] = tensor.collapse_shape %[[ADD]] {{\[\[}}0, 1]] : tensor<2x2xf32> into tensor<4xf32>
// CHECK-NEXT: tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[NEG:.+]] = linalg.generic {{.*}} ins(%[[BASE]] : tensor<4xf32>)
// CHECK: arith.negf
// CHECK: return %[[NEG]], %[[BASE]] : tensor<4xf32>, tensor<4xf32>

// CHECK-LABEL: func.func @shift_right(
// CHECK-SAME: -> (tensor<2x4xf32> {joint.role = #joint.role<output>}, tensor<2xf32> {joint.role = #joint.role<output>}, tensor<2x4xf32> {joint.path = "z", joint.role = #joint.role<input>, joint.updates = 1 : i64})
// CHECK: %[[SRC:.+]] = tensor.extract_slice %arg0[0, 0] [2, 3] [1, 1] : tensor<2x4xf32> to tensor<2x3xf32>
// CHECK-NEXT: tensor.extract_slice %arg1[0, 1] [2, 3] [1, 1] : tensor<2x4xf32> to tensor<2x3xf32>
// CHECK-NEXT: %[[Z1:.+]] = tensor.insert_slice %[[SRC]] into %arg1[0, 1] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x4xf32>
// CHECK: tensor.extract_slice %[[Z1]][0, 0] [2, 1] [1, 1] : tensor<2x4xf32> to tensor<2xf32>
// CHECK-NEXT: %[[SEVEN:.+]] = arith.constant 7.000000e+00 : f32
// CHECK-NEXT: tensor.empty() : tensor<2xf32>
// CHECK-NEXT: %[[FILL:.+]] = linalg.fill ins(%[[SEVEN]] : f32)
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: %[[Z2:.+]] = tensor.insert_slice %[[FILL]] into %[[Z1]][0, 0] [2, 1] [1, 1] : tensor<2xf32> into tensor<2x4xf32>
// CHECK-NEXT: arith.constant 3 : index
// CHECK-NEXT: %[[LAST:.+]] = tensor.extract_slice %[[Z2]][0, 3] [2, 1] [1, 1] : tensor<2x4xf32> to tensor<2xf32>
// CHECK-NEXT: return %[[Z2]], %[[LAST]], %[[Z2]] : tensor<2x4xf32>, tensor<2xf32>, tensor<2x4xf32>

// A buffer written through a view of it: later reads of the buffer and its
// final value are the written view reshaped back.
joint.schema @"aten::add_.Tensor" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>, #joint.arg<name = "other", type = "Tensor">, #joint.arg<name = "alpha", type = "Scalar", kwarg_only = true, default_value = "1">], returns = [#joint.arg<type = "Tensor", alias = "a", write = true>], schema = "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", is_mutable}
joint.schema @"aten::copy_.default" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>, #joint.arg<name = "src", type = "Tensor">, #joint.arg<name = "non_blocking", type = "bool", default_value = "False">], returns = [#joint.arg<type = "Tensor", alias = "a", write = true>], schema = "aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)", is_mutable}
joint.schema @"aten::fill_.Scalar" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>, #joint.arg<name = "value", type = "Scalar">], returns = [#joint.arg<type = "Tensor", alias = "a", write = true>], schema = "aten::fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)", is_mutable}
joint.schema @"aten::view.default" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a">, #joint.arg<name = "size", type = "SymInt[]">], returns = [#joint.arg<type = "Tensor", alias = "a">], schema = "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)"}
joint.schema @"aten::slice.Tensor" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a">, #joint.arg<name = "dim", type = "int", default_value = "0">, #joint.arg<name = "start", type = "SymInt?", default_value = "None">, #joint.arg<name = "end", type = "SymInt?", default_value = "None">, #joint.arg<name = "step", type = "SymInt", default_value = "1">], returns = [#joint.arg<type = "Tensor", alias = "a">], schema = "aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)"}
joint.schema @"aten::select.int" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a">, #joint.arg<name = "dim", type = "int">, #joint.arg<name = "index", type = "SymInt">], returns = [#joint.arg<type = "Tensor", alias = "a">], schema = "aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)"}
joint.schema @"aten::expand.default" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a">, #joint.arg<name = "size", type = "SymInt[]">, #joint.arg<name = "implicit", type = "bool", kwarg_only = true, default_value = "False">], returns = [#joint.arg<type = "Tensor", alias = "a">], schema = "aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)"}
joint.graph @write_through_a_view(%buf: tensor<4xf32> {joint.role = #joint.role<buffer>, joint.fqn = "b", joint.meta = #joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 0>}, %x: tensor<2x2xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[2, 2], strides = [2, 1], offset = 0, device = "cpu", storage = 1>}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  %v = joint.call_function "aten::view.default"(%buf) {args = [#joint.operand<0>, [2, 2]], name = "v", result_meta = [#joint.tensor<[2, 2], strides = [2, 1], offset = 0, device = "cpu", storage = 0>]} : (tensor<4xf32>) -> tensor<2x2xf32>
  %a = joint.call_function "aten::add_.Tensor"(%v, %x) {name = "add_", result_meta = [#joint.tensor<[2, 2], strides = [2, 1], offset = 0, device = "cpu", storage = 0>]} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %r = joint.call_function "aten::neg.default"(%buf) {name = "r", result_meta = [#joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 2>]} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output %r : tensor<4xf32>
}

// -----

// Shifting right into a fresh tensor (T5's decoder inputs): copy_ into a
// slice, then fill_ of column 0 read through the written base; a view taken
// before the writes and read after them sees both.
joint.schema @"aten::add_.Tensor" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>, #joint.arg<name = "other", type = "Tensor">, #joint.arg<name = "alpha", type = "Scalar", kwarg_only = true, default_value = "1">], returns = [#joint.arg<type = "Tensor", alias = "a", write = true>], schema = "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", is_mutable}
joint.schema @"aten::copy_.default" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>, #joint.arg<name = "src", type = "Tensor">, #joint.arg<name = "non_blocking", type = "bool", default_value = "False">], returns = [#joint.arg<type = "Tensor", alias = "a", write = true>], schema = "aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)", is_mutable}
joint.schema @"aten::fill_.Scalar" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>, #joint.arg<name = "value", type = "Scalar">], returns = [#joint.arg<type = "Tensor", alias = "a", write = true>], schema = "aten::fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)", is_mutable}
joint.schema @"aten::view.default" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a">, #joint.arg<name = "size", type = "SymInt[]">], returns = [#joint.arg<type = "Tensor", alias = "a">], schema = "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)"}
joint.schema @"aten::slice.Tensor" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a">, #joint.arg<name = "dim", type = "int", default_value = "0">, #joint.arg<name = "start", type = "SymInt?", default_value = "None">, #joint.arg<name = "end", type = "SymInt?", default_value = "None">, #joint.arg<name = "step", type = "SymInt", default_value = "1">], returns = [#joint.arg<type = "Tensor", alias = "a">], schema = "aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)"}
joint.schema @"aten::select.int" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a">, #joint.arg<name = "dim", type = "int">, #joint.arg<name = "index", type = "SymInt">], returns = [#joint.arg<type = "Tensor", alias = "a">], schema = "aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)"}
joint.schema @"aten::expand.default" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a">, #joint.arg<name = "size", type = "SymInt[]">, #joint.arg<name = "implicit", type = "bool", kwarg_only = true, default_value = "False">], returns = [#joint.arg<type = "Tensor", alias = "a">], schema = "aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)"}
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

// An expanded view is not written back (torch refuses such writes too).
joint.schema @"aten::add_.Tensor" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>, #joint.arg<name = "other", type = "Tensor">, #joint.arg<name = "alpha", type = "Scalar", kwarg_only = true, default_value = "1">], returns = [#joint.arg<type = "Tensor", alias = "a", write = true>], schema = "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", is_mutable}
joint.schema @"aten::copy_.default" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>, #joint.arg<name = "src", type = "Tensor">, #joint.arg<name = "non_blocking", type = "bool", default_value = "False">], returns = [#joint.arg<type = "Tensor", alias = "a", write = true>], schema = "aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)", is_mutable}
joint.schema @"aten::fill_.Scalar" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>, #joint.arg<name = "value", type = "Scalar">], returns = [#joint.arg<type = "Tensor", alias = "a", write = true>], schema = "aten::fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)", is_mutable}
joint.schema @"aten::view.default" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a">, #joint.arg<name = "size", type = "SymInt[]">], returns = [#joint.arg<type = "Tensor", alias = "a">], schema = "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)"}
joint.schema @"aten::slice.Tensor" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a">, #joint.arg<name = "dim", type = "int", default_value = "0">, #joint.arg<name = "start", type = "SymInt?", default_value = "None">, #joint.arg<name = "end", type = "SymInt?", default_value = "None">, #joint.arg<name = "step", type = "SymInt", default_value = "1">], returns = [#joint.arg<type = "Tensor", alias = "a">], schema = "aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)"}
joint.schema @"aten::select.int" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a">, #joint.arg<name = "dim", type = "int">, #joint.arg<name = "index", type = "SymInt">], returns = [#joint.arg<type = "Tensor", alias = "a">], schema = "aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)"}
joint.schema @"aten::expand.default" {arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a">, #joint.arg<name = "size", type = "SymInt[]">, #joint.arg<name = "implicit", type = "bool", kwarg_only = true, default_value = "False">], returns = [#joint.arg<type = "Tensor", alias = "a">], schema = "aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)"}
joint.graph @write_through_expand(%buf: tensor<1x4xf32> {joint.role = #joint.role<buffer>, joint.fqn = "b", joint.meta = #joint.tensor<[1, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 0>}, %x: tensor<2x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[2, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 1>}) -> (tensor<1x4xf32> {joint.role = #joint.role<output>}) {
  %e = joint.call_function "aten::expand.default"(%buf) {args = [#joint.operand<0>, [2, 4]], name = "e", result_meta = [#joint.tensor<[2, 4], strides = [0, 1], offset = 0, device = "cpu", storage = 0>]} : (tensor<1x4xf32>) -> tensor<2x4xf32>
  // expected-error @+1 {{in-place write of 'aten::add_.Tensor' (node 'add_') goes through the view 'aten::expand.default' (node 'e'), which the lowering cannot write back into its base}}
  %a = joint.call_function "aten::add_.Tensor"(%e, %x) {name = "add_", result_meta = [#joint.tensor<[2, 4], strides = [0, 1], offset = 0, device = "cpu", storage = 0>]} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %r = joint.call_function "aten::neg.default"(%buf) {name = "r", result_meta = [#joint.tensor<[1, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 2>]} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  joint.output %r : tensor<1x4xf32>
}

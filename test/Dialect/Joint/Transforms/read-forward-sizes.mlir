// joint-read-forward-sizes on its own: a backward size query of a forward
// tensor reads the forward SymInt (an equal forward query, else the query
// moved right after the producer), so no tensor lives across the boundary
// only for its size. Queries of graph inputs and of backward tensors stay.
// A second run changes nothing.
// RUN: joint-opt %s -joint-read-forward-sizes | FileCheck %s
// RUN: joint-opt %s -joint-read-forward-sizes -joint-read-forward-sizes | FileCheck %s
// RUN: joint-opt %s -joint-memory-report 2>&1 | FileCheck %s --check-prefix=BEFORE
// RUN: joint-opt %s -joint-read-forward-sizes -joint-memory-report 2>&1 | FileCheck %s --check-prefix=AFTER

// BEFORE: activations   64 B (64 B) live across forward/backward
// AFTER: activations   0 B (0 B) live across forward/backward

// CHECK-LABEL: joint.graph @size_queries_read_forward_symints
// CHECK-NEXT: %a = joint.call_function "aten::exp.default"(%x)
// CHECK-NEXT: %n = joint.call_function "aten::sym_numel.default"(%a) {name = "n"}
// CHECK-NEXT: %st = joint.call_function "aten::sym_stride.int"(%a) {args = [#joint.operand<0>, 0], name = "st"}
// CHECK-NEXT: %s = joint.call_function "aten::sym_size.int"(%a) {args = [#joint.operand<0>, 0], name = "s"}
// CHECK-NEXT: %g = joint.call_function "aten::neg.default"(%x) {name = "g", phase = #joint.phase<backward>}
// CHECK-NEXT: %xs = joint.call_function "aten::sym_size.int"(%x) {args = [#joint.operand<0>, 0], name = "xs", phase = #joint.phase<backward>}
// CHECK-NEXT: %gs = joint.call_function "aten::sym_size.int"(%g) {args = [#joint.operand<0>, 0], name = "gs", phase = #joint.phase<backward>}
// CHECK-NEXT: %e = joint.call_function "aten::new_empty.default"(%g, %s, %n, %st, %xs, %gs)
joint.graph @size_queries_read_forward_symints(%x: tensor<16xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a"} : (tensor<16xf32>) -> tensor<16xf32>
  %s = joint.call_function "aten::sym_size.int"(%a) {name = "s", args = [#joint.operand<0>, 0]} : (tensor<16xf32>) -> i64
  %g = joint.call_function "aten::neg.default"(%x) {name = "g", phase = #joint.phase<backward>} : (tensor<16xf32>) -> tensor<16xf32>
  %bs = joint.call_function "aten::sym_size.int"(%a) {name = "bs", args = [#joint.operand<0>, 0], phase = #joint.phase<backward>} : (tensor<16xf32>) -> i64
  %n = joint.call_function "aten::sym_numel.default"(%a) {name = "n", phase = #joint.phase<backward>} : (tensor<16xf32>) -> i64
  %st = joint.call_function "aten::sym_stride.int"(%a) {name = "st", args = [#joint.operand<0>, 0], phase = #joint.phase<backward>} : (tensor<16xf32>) -> i64
  %xs = joint.call_function "aten::sym_size.int"(%x) {name = "xs", args = [#joint.operand<0>, 0], phase = #joint.phase<backward>} : (tensor<16xf32>) -> i64
  %gs = joint.call_function "aten::sym_size.int"(%g) {name = "gs", args = [#joint.operand<0>, 0], phase = #joint.phase<backward>} : (tensor<16xf32>) -> i64
  %e = joint.call_function "aten::new_empty.default"(%g, %bs, %n, %st, %xs, %gs) {name = "e", phase = #joint.phase<backward>} : (tensor<16xf32>, i64, i64, i64, i64, i64) -> tensor<16xf32>
  joint.output
}

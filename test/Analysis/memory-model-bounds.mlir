// A size without a trace-time hint (an unbacked SymInt such as nonzero's
// count) counts at the largest value its expression takes under the
// symbols' recorded min/max (joint.symbols), so the peak is an upper bound.
// Without a bound it counts as 0 bytes and the report warns (the planner's
// side: plan-memory-unbounded-sizes.mlir).
// RUN: joint-opt %s -split-input-file -joint-memory-report="format=json output=-" -verify-diagnostics -o /dev/null | FileCheck %s

// u0 <= 16 and u1 <= 3: [u0] f32 is 64 B at most, [2*u1 + 1, 4] f32 is
// 7 * 16 = 112 B, [Max(1, u0 - 4)] f32 is 48 B; with the 64 B input and
// the 64 B exp (read by all three) they peak at the last of them.
// CHECK-LABEL: "graph": "bounded_sizes_count_at_their_bound"
// CHECK: "peak_transient_bytes": 288,
joint.graph @bounded_sizes_count_at_their_bound(%x: tensor<16xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[16], strides = [1], offset = 0, device = "cpu", storage = 0>}) -> (tensor<?xf32> {joint.role = #joint.role<output>}, tensor<?x4xf32> {joint.role = #joint.role<output>}, tensor<?xf32> {joint.role = #joint.role<output>}) attributes {joint.symbols = [{hint, max = 16 : i64, min = 0 : i64, name = "u0", sources = []}, {hint, max = 3 : i64, min = 0 : i64, name = "u1", sources = []}]} {
  %0 = joint.call_function "aten::exp.default"(%x) {name = "exp", result_meta = [#joint.tensor<[16], strides = [1], offset = 0, device = "cpu", storage = 1>]} : (tensor<16xf32>) -> tensor<16xf32>
  // (FLOPs have no such bound yet: the cost model counts these ops as 0.)
  // expected-warning @+1 {{FLOPs of 3 op(s) count as 0: a shape has no trace-time hint (first: 'nonzero_like')}}
  %1 = joint.call_function "custom::nonzero_like.default"(%0) {name = "nonzero_like", result_meta = [#joint.tensor<[sym("u0")], strides = [1], offset = 0, device = "cpu", storage = 2>]} : (tensor<16xf32>) -> tensor<?xf32>
  %2 = joint.call_function "custom::rows.default"(%0) {name = "rows", result_meta = [#joint.tensor<[sym("2*u1 + 1"), 4], strides = [4, 1], offset = 0, device = "cpu", storage = 3>]} : (tensor<16xf32>) -> tensor<?x4xf32>
  %3 = joint.call_function "custom::tail.default"(%0) {name = "tail", result_meta = [#joint.tensor<[sym("Max(1, u0 - 4)")], strides = [1], offset = 0, device = "cpu", storage = 4>]} : (tensor<16xf32>) -> tensor<?xf32>
  joint.output %1, %2, %3 : tensor<?xf32>, tensor<?x4xf32>, tensor<?xf32>
}

// -----

// An unbounded symbol (max recorded as none).
// CHECK-LABEL: "graph": "unbounded_size_counts_zero"
// CHECK: "peak_transient_bytes": 64,
joint.graph @unbounded_size_counts_zero(%x: tensor<16xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[16], strides = [1], offset = 0, device = "cpu", storage = 0>}) -> (tensor<?xf32> {joint.role = #joint.role<output>}) attributes {joint.symbols = [{hint, max, min = 0 : i64, name = "u0", sources = []}]} {
  %0 = joint.call_function "aten::exp.default"(%x) {name = "exp", result_meta = [#joint.tensor<[16], strides = [1], offset = 0, device = "cpu", storage = 1>]} : (tensor<16xf32>) -> tensor<16xf32>
  // expected-warning @+2 {{1 storage(s) have a size without trace-time hint or recorded bound and count as 0 bytes (first: 'nonzero_like')}}
  // expected-warning @+1 {{FLOPs of 1 op(s) count as 0: a shape has no trace-time hint (first: 'nonzero_like')}}
  %1 = joint.call_function "custom::nonzero_like.default"(%0) {name = "nonzero_like", result_meta = [#joint.tensor<[sym("u0")], strides = [1], offset = 0, device = "cpu", storage = 2>]} : (tensor<16xf32>) -> tensor<?xf32>
  joint.output %1 : tensor<?xf32>
}

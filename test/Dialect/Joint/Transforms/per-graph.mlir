// The per-graph passes anchor on joint.graph: each graph of a module gets
// its own storage analysis and is transformed, not only the first one; the
// joint.schema table stays module-level. The memory report is one document
// per file, so it refuses a module with two graphs, at each graph.
// RUN: joint-opt %s -verify-diagnostics -joint-print-storage-groups -joint-remat | FileCheck %s
// RUN: joint-opt %s -verify-diagnostics -pass-pipeline='builtin.module(joint.graph(joint-print-storage-groups,joint-remat))' | FileCheck %s
// RUN: not joint-opt %s -joint-memory-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// CHECK-LABEL: joint.graph @first
// CHECK-NEXT: %g = joint.call_function "aten::neg.default"(%x)
// CHECK-NEXT: %a_recomputed = joint.call_function "aten::exp.default"(%x) {{.*}}recomputed_from = "a"
// CHECK-NEXT: %v_recomputed = joint.call_function "aten::view.default"(%a_recomputed) {{.*}}recomputed_from = "v"
// CHECK-NEXT: %h = joint.call_function "aten::mul.Tensor"(%g, %v_recomputed)
// CHECK-LABEL: joint.graph @second
// CHECK-NEXT: %g = joint.call_function "aten::neg.default"(%y)
// CHECK-NEXT: %b_recomputed = joint.call_function "aten::exp.default"(%y) {{.*}}recomputed_from = "b"
// CHECK-NEXT: %w_recomputed = joint.call_function "aten::view.default"(%b_recomputed) {{.*}}recomputed_from = "w"
// CHECK-NEXT: %h = joint.call_function "aten::mul.Tensor"(%g, %w_recomputed)
// REPORT: error: joint-memory-report: expects a module with exactly one joint.graph, found 2
// REPORT: error: joint-memory-report: expects a module with exactly one joint.graph, found 2

// expected-remark @+1 {{joint-remat: 2 ops recomputed, 2 originals erased, 0 reload chains moved}}
joint.graph @first(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 0>}) -> () {
  // expected-remark @+1 {{storage 1 owner a members [a, v]}}
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", policy = #joint.policy<must_recompute>, result_meta = [#joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 1>]} : (tensor<4xf32>) -> tensor<4xf32>
  %v = joint.call_function "aten::view.default"(%a) {name = "v", args = [#joint.operand<0>, [4]], policy = #joint.policy<prefer_recompute>, result_meta = [#joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 1>]} : (tensor<4xf32>) -> tensor<4xf32>
  %g = joint.call_function "aten::neg.default"(%x) {name = "g", phase = #joint.phase<backward>} : (tensor<4xf32>) -> tensor<4xf32>
  %h = joint.call_function "aten::mul.Tensor"(%g, %v) {name = "h", phase = #joint.phase<backward>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// expected-remark @+1 {{joint-remat: 2 ops recomputed, 2 originals erased, 0 reload chains moved}}
joint.graph @second(%y: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "y", joint.meta = #joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 0>}) -> () {
  // expected-remark @+1 {{storage 1 owner b members [b, w]}}
  %b = joint.call_function "aten::exp.default"(%y) {name = "b", policy = #joint.policy<must_recompute>, result_meta = [#joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 1>]} : (tensor<4xf32>) -> tensor<4xf32>
  %w = joint.call_function "aten::view.default"(%b) {name = "w", args = [#joint.operand<0>, [4]], policy = #joint.policy<prefer_recompute>, result_meta = [#joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 1>]} : (tensor<4xf32>) -> tensor<4xf32>
  %g = joint.call_function "aten::neg.default"(%y) {name = "g", phase = #joint.phase<backward>} : (tensor<4xf32>) -> tensor<4xf32>
  %h = joint.call_function "aten::mul.Tensor"(%g, %w) {name = "h", phase = #joint.phase<backward>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

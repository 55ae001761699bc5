// Facts that make a reported number unreliable are warned about, naming the
// node; the report is still written.
// RUN: joint-opt %s -split-input-file -joint-memory-report="format=json output=-" -verify-diagnostics -o /dev/null | FileCheck %s

// A size without trace-time hint (unbacked SymInt) counts as 0 bytes and
// its op's FLOPs as 0.
// CHECK-LABEL: "graph": "unbacked_size_counts_zero"
// CHECK: "peak_transient_bytes": 64,
joint.graph @unbacked_size_counts_zero(%x: tensor<16xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[16], strides = [1], offset = 0, device = "cpu", storage = 0>}) -> (tensor<?xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::exp.default"(%x) {name = "exp", result_meta = [#joint.tensor<[16], strides = [1], offset = 0, device = "cpu", storage = 1>]} : (tensor<16xf32>) -> tensor<16xf32>
  // expected-warning @+2 {{1 storage(s) have a size without trace-time hint or recorded bound and count as 0 bytes (first: 'nonzero_like')}}
  // expected-warning @+1 {{FLOPs of 1 op(s) count as 0: a shape has no trace-time hint (first: 'nonzero_like')}}
  %1 = joint.call_function "custom::nonzero_like.default"(%0) {name = "nonzero_like", result_meta = [#joint.tensor<[sym("u0")], strides = [1], offset = 0, device = "cpu", storage = 2>]} : (tensor<16xf32>) -> tensor<?xf32>
  joint.output %1 : tensor<?xf32>
}

// -----

// A malformed joint.model is rejected once, by the dialect's verifier.
// expected-error @+1 {{graph @malformed_model_is_rejected_by_the_verifier: 'joint.model' block_containers[0] must be a dictionary with a 'blocks' list of module FQNs}}
joint.graph @malformed_model_is_rejected_by_the_verifier(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) attributes {joint.model = {block_containers = [{blocks = "layers.0"}]}} {
  %0 = joint.call_function "aten::exp.default"(%x) {name = "exp", module_stack = [#joint.module<"layers.0", "Block">]} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output %0 : tensor<4xf32>
}

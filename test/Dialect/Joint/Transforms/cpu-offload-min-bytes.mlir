// joint-cpu-offload sizes: min-bytes defaults to 1 MiB; sizes come from
// trace-time hints without specializing symbolic shapes (the reload carries
// no size/stride); unbacked sizes have no hint and are skipped.
// RUN: joint-opt %s -split-input-file -joint-cpu-offload -verify-diagnostics | FileCheck %s

// 512x512xf32 is exactly 1 MiB; 511x512xf32 is below it, and the remark
// says that min-bytes alone kept it on the device.
// CHECK-LABEL: joint.graph @min_bytes_defaults_to_one_mib
// CHECK: ao.offload %one_mib
// CHECK-NOT: ao.offload
// expected-remark @+2 {{selected 1 of 1 activation(s) in scope=attention, 1048576 bytes; 1 more below min-bytes=1048576}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 1 storage(s), 1048576 bytes, prefetched 0 reload(s)}}
joint.graph @min_bytes_defaults_to_one_mib(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a = joint.call_function "custom::make.default"(%x) {name = "one_mib", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[512, 512], strides = [512, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<512x512xf32>
  %b = joint.call_function "custom::make.default"(%x) {name = "below", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[511, 512], strides = [512, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>) -> tensor<511x512xf32>
  %g = joint.call_function "aten::mul.Tensor"(%a, %a) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[512, 512], strides = [512, 1], offset = 0, device = "cuda:0", storage = 3>]} : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
  %h = joint.call_function "aten::mul.Tensor"(%b, %b) {name = "h", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[511, 512], strides = [512, 1], offset = 0, device = "cuda:0", storage = 4>]} : (tensor<511x512xf32>, tensor<511x512xf32>) -> tensor<511x512xf32>
  joint.output
}

// -----

// s0 traced as 512: 1 MiB by its hint. The shape stays symbolic and the
// reload takes its shape from the offloaded tensor.
// CHECK-LABEL: joint.graph @symbolic_sizes_use_trace_time_hints
// CHECK: %[[H:.*]] = ao.offload %a : tensor<?x512xf32>
// CHECK: %[[W:.*]] = ao.wait_tensor %[[H]] keepalive %a
// CHECK: %[[R:.*]] = ao.reload %[[W]] to "cuda:0" {joint.storage = 3 : i64} : tensor<?x512xf32>
// CHECK-NEXT: ao.wait_tensor %[[R]] keepalive %[[W]] : tensor<?x512xf32> : tensor<?x512xf32>
// expected-remark @+2 {{selected 1 of 1 activation(s) in scope=attention, 1048576 bytes}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 1 storage(s), 1048576 bytes}}
joint.graph @symbolic_sizes_use_trace_time_hints(%x: tensor<?x512xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[sym("s0", 512), 512], strides = [512, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[sym("s0", 512), 512], strides = [512, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<?x512xf32>) -> tensor<?x512xf32>
  %g = joint.call_function "aten::mul.Tensor"(%a, %a) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[sym("s0", 512), 512], strides = [512, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<?x512xf32>, tensor<?x512xf32>) -> tensor<?x512xf32>
  joint.output
}

// -----

// u0 is data-dependent (no hint): the size is unknown, the value skipped.
// CHECK-LABEL: joint.graph @unbacked_sizes_are_skipped
// CHECK-NOT: ao.offload
// expected-remark @+2 {{selected 0 of 0 activation(s) in scope=attention, 0 bytes}}
// expected-remark @+1 {{joint-apply-cpu-offload: offloaded 0 storage(s), 0 bytes, prefetched 0 reload(s)}}
joint.graph @unbacked_sizes_are_skipped(%x: tensor<?x512xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[sym("u0"), 512], strides = [512, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[sym("u0"), 512], strides = [512, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<?x512xf32>) -> tensor<?x512xf32>
  %g = joint.call_function "aten::mul.Tensor"(%a, %a) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[sym("u0"), 512], strides = [512, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<?x512xf32>, tensor<?x512xf32>) -> tensor<?x512xf32>
  joint.output
}

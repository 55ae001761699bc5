// joint-cpu-offload selection: largest first while the running total fits
// budget-gib (GiB = 2^30 bytes); a candidate that does not fit is skipped
// and smaller ones are still tried.
// budget-gib=0 means no limit (the
// default); tiny and huge budgets. The program order (mid, big, small)
// differs from the size order.
// RUN: joint-opt %s -joint-cpu-offload="min-bytes=64" 2>&1 | FileCheck %s --check-prefix=ALL
// RUN: joint-opt %s -joint-cpu-offload="min-bytes=64 budget-gib=0" 2>&1 | FileCheck %s --check-prefix=ALL
// RUN: joint-opt %s -joint-cpu-offload="min-bytes=64 budget-gib=1e6" 2>&1 | FileCheck %s --check-prefix=ALL
// RUN: joint-opt %s -joint-cpu-offload="min-bytes=64 budget-gib=1e-12" 2>&1 | FileCheck %s --check-prefix=NONE
// 4.76837158203125e-06 GiB = 5120 bytes: 4096 fits, 4096+2048 does not,
// 4096+1024 does.
// RUN: joint-opt %s -joint-cpu-offload="min-bytes=64 budget-gib=4.76837158203125e-06" 2>&1 | FileCheck %s --check-prefix=FIT
// The unit is 2^30 bytes: 7e-6 GiB = 7516 B holds all 7168 bytes (7e-6 GB,
// 7000 B, would not), in the pass and in the pipeline.
// RUN: joint-opt %s -joint-cpu-offload="min-bytes=64 budget-gib=7e-6" 2>&1 | FileCheck %s --check-prefix=ALL
// RUN: joint-opt %s -joint-tag-cpu-offload="min-bytes=64 budget-gib=7e-6" 2>&1 | FileCheck %s --check-prefix=TAG-ALL
// RUN: joint-opt %s -joint-tag-cpu-offload="min-bytes=64 budget-gib=6.6e-6" 2>&1 | FileCheck %s --check-prefix=TAG-FIT

// ALL: remark: joint-tag-cpu-offload: {{.*}}selected 3 of 3 activation(s) in scope=attention, 7168 bytes
// ALL: remark: joint-apply-cpu-offload: offloaded 3 storage(s), 7168 bytes, prefetched 0 reload(s)
// ALL: joint.graph @largest_first_within_budget
// ALL: ao.offload %mid
// ALL: ao.offload %big
// ALL: ao.offload %small

// TAG-ALL: remark: joint-tag-cpu-offload: 3 op(s) tagged must_cpu_offload: selected 3 of 3 activation(s) in scope=attention, 7168 bytes
// TAG-FIT: remark: joint-tag-cpu-offload: 2 op(s) tagged must_cpu_offload: selected 2 of 3 activation(s) in scope=attention, 6144 bytes

// NONE: remark: joint-tag-cpu-offload: {{.*}}selected 0 of 3 activation(s) in scope=attention, 0 bytes
// NONE: remark: joint-apply-cpu-offload: offloaded 0 storage(s), 0 bytes
// NONE: joint.graph @largest_first_within_budget
// NONE-NOT: ao.offload

// FIT: remark: joint-tag-cpu-offload: {{.*}}selected 2 of 3 activation(s) in scope=attention, 5120 bytes
// FIT: remark: joint-apply-cpu-offload: offloaded 2 storage(s), 5120 bytes
// FIT: joint.graph @largest_first_within_budget
// FIT-NOT: ao.offload %mid
// FIT: ao.offload %big
// FIT-NOT: ao.offload %mid
// FIT: ao.offload %small

joint.graph @largest_first_within_budget(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cuda:0", storage = 0>}) -> () {
  %mid = joint.call_function "custom::make.default"(%x) {name = "mid", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[16, 32], strides = [32, 1], offset = 0, device = "cuda:0", storage = 2>]} : (tensor<4x4xf32>) -> tensor<16x32xf32>
  %big = joint.call_function "custom::make.default"(%x) {name = "big", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[32, 32], strides = [32, 1], offset = 0, device = "cuda:0", storage = 1>]} : (tensor<4x4xf32>) -> tensor<32x32xf32>
  %small = joint.call_function "custom::make.default"(%x) {name = "small", module_stack = [#joint.module<"l0.self_attn", "Attention">], result_meta = [#joint.tensor<[16, 16], strides = [16, 1], offset = 0, device = "cuda:0", storage = 3>]} : (tensor<4x4xf32>) -> tensor<16x16xf32>
  %g1 = joint.call_function "aten::mul.Tensor"(%big, %big) {name = "g1", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[32, 32], strides = [32, 1], offset = 0, device = "cuda:0", storage = 4>]} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %g2 = joint.call_function "aten::mul.Tensor"(%mid, %mid) {name = "g2", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[16, 32], strides = [32, 1], offset = 0, device = "cuda:0", storage = 5>]} : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  %g3 = joint.call_function "aten::mul.Tensor"(%small, %small) {name = "g3", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[16, 16], strides = [16, 1], offset = 0, device = "cuda:0", storage = 6>]} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  joint.output
}

// The planner plans a data-dependent size at its recorded bound. A storage
// whose size has no bound would count as 0 bytes and make the budget
// unsound: one error, unless allow-unbounded-sizes=true (then a warning).
// RUN: not joint-opt %s -split-input-file -joint-plan-memory="budget-gb=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLAN
// RUN: joint-opt %s -split-input-file -joint-plan-memory="budget-gb=1 allow-unbounded-sizes=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ALLOW

// A [u0] f32 storage with u0 <= 16: 64 B next to the 64 B input.
// PLAN: remark: joint-plan-memory: budget {{.*}} modelled peak 128 B (save-all 128 B)
// PLAN: error: joint-plan-memory: 1 storage(s) have a data-dependent size without a recorded bound and count as 0 bytes (first: 'nonzero_like'); the budget is not guaranteed (trace with bounded sizes, or pass allow-unbounded-sizes=true to plan anyway)
// ALLOW: remark: joint-plan-memory: budget {{.*}} modelled peak 128 B (save-all 128 B)
// ALLOW: warning: joint-plan-memory: 1 storage(s) have a data-dependent size without a recorded bound and count as 0 bytes (first: 'nonzero_like'); the budget is not guaranteed
// ALLOW-NOT: error
// ALLOW: remark: joint-plan-memory: budget {{.*}} modelled peak 64 B (save-all 64 B)

joint.graph @bounded(%x: tensor<16xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[16], strides = [1], offset = 0, device = "cpu", storage = 0>}) -> (tensor<?xf32> {joint.role = #joint.role<output>}) attributes {joint.symbols = [{hint, max = 16 : i64, min = 0 : i64, name = "u0", sources = []}]} {
  %1 = joint.call_function "custom::nonzero_like.default"(%x) {name = "nonzero_like", result_meta = [#joint.tensor<[sym("u0")], strides = [1], offset = 0, device = "cpu", storage = 1>]} : (tensor<16xf32>) -> tensor<?xf32>
  joint.output %1 : tensor<?xf32>
}

// -----

joint.graph @unbounded(%x: tensor<16xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[16], strides = [1], offset = 0, device = "cpu", storage = 0>}) -> (tensor<?xf32> {joint.role = #joint.role<output>}) attributes {joint.symbols = [{hint, max, min = 0 : i64, name = "u0", sources = []}]} {
  %1 = joint.call_function "custom::nonzero_like.default"(%x) {name = "nonzero_like", result_meta = [#joint.tensor<[sym("u0")], strides = [1], offset = 0, device = "cpu", storage = 1>]} : (tensor<16xf32>) -> tensor<?xf32>
  joint.output %1 : tensor<?xf32>
}

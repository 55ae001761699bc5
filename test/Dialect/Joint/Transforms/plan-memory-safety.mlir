// joint-plan-memory never plans an unsafe recompute: the random op `n`
// (rand_like, nondeterministic_seeded) and the in-place pair `b`/`b2`
// (add_ writes b's storage) stay saved under any budget; only `a` is a
// candidate (`m` is read outside the block). Hardware options make each op
// take its FLOPs in seconds. Save-all peaks at 328 B; recomputing `a` gives
// 320 B, the lowest reachable, and a lower budget is one error naming the
// values that bound it.
// RUN: joint-opt %s -joint-plan-memory="budget-gb=3.2e-7 peak-tflops=1e-12 hbm-gbps=1e9 link-gbps=1e-15" 2>&1 | FileCheck %s
// RUN: joint-opt %s -verify-diagnostics -joint-plan-memory="budget-gb=3e-7 peak-tflops=1e-12 hbm-gbps=1e9" -o /dev/null
// With a usable host link `a` is offloaded instead (its copy is cheaper
// than its replay), and so is the random `n` (a copy keeps the bits it drew;
// only a replay would draw again); the in-place pair stays saved.
// RUN: joint-opt %s -joint-plan-memory="budget-gb=3.2e-7 peak-tflops=1e-12 hbm-gbps=1e9" 2>&1 | FileCheck %s --check-prefix=OFFLOAD

// CHECK: remark: joint-plan-memory: budget 320 B; recompute 1 of 1 saved storages (64 B); offload 0 op(s) (0 B to host, 0 s transfer exposed); modelled peak 320 B (save-all 328 B), step 176 s (+10.0% over save-all)
// CHECK: {{^}}  joint.graph @unsafe_values_stay_saved
// CHECK-SAME: peak_bytes = 320 : i64
// CHECK-SAME: recomputed_storages = 1 : i64
// CHECK-NEXT: name = "n", policy = #joint.policy<must_save>
// CHECK-NEXT: name = "a", policy = #joint.policy<must_recompute>
// CHECK-NEXT: name = "b", policy = #joint.policy<must_save>
// CHECK-NEXT: name = "b2", policy = #joint.policy<must_save>
// CHECK-NEXT: name = "m", policy = #joint.policy<must_save>
// OFFLOAD: remark: joint-plan-memory: budget 320 B; recompute 0 of 1 saved storages (0 B); offload 2 op(s) (128 B to host, 0.002327 us transfer exposed); modelled peak 320 B (save-all 328 B), step 160 s (+0.0% over save-all)
// OFFLOAD: {{^}}  joint.graph @unsafe_values_stay_saved
// OFFLOAD-NEXT: name = "n", policy = #joint.policy<must_cpu_offload>
// OFFLOAD-NEXT: name = "a", policy = #joint.policy<must_cpu_offload>
// OFFLOAD-NEXT: name = "b", policy = #joint.policy<must_save>
// OFFLOAD-NEXT: name = "b2", policy = #joint.policy<must_save>
// OFFLOAD-NEXT: name = "m", policy = #joint.policy<must_save>

joint.schema @"aten::rand_like.default" {schema = "aten::rand_like(Tensor self) -> Tensor", arguments = [#joint.arg<name = "self", type = "Tensor">], returns = [#joint.arg<type = "Tensor">], tags = ["nondeterministic_seeded"]}
joint.schema @"aten::add_.Tensor" {schema = "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>, #joint.arg<name = "other", type = "Tensor">], returns = [#joint.arg<type = "Tensor", alias = "a", write = true>], is_mutable, tags = ["inplace", "pointwise"]}
// expected-error @+1 {{joint-plan-memory: budget 300 B is not reachable: the lowest modelled peak is 320 B at node 'm', of which 64 B are resident inputs; no decision lowers it further; the largest values live there are 'n' (64 B), 'a' (64 B), 'b' (64 B), 'm' (64 B)}}
joint.graph @unsafe_values_stay_saved(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 0>}) -> (tensor<f32> {joint.role = #joint.role<loss>}, tensor<4x4xf32> {joint.role = #joint.role<output>}) attributes {joint.model = {block_containers = [{blocks = ["layers.0"], container = "layers", owner = ""}]}} {
  %n = joint.call_function "aten::rand_like.default"(%x) {name = "n", module_stack = [#joint.module<"layers.0", "Block">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", module_stack = [#joint.module<"layers.0", "Block">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 2>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = joint.call_function "aten::exp.default"(%x) {name = "b", module_stack = [#joint.module<"layers.0", "Block">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 3>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %b2 = joint.call_function "aten::add_.Tensor"(%b, %n) {name = "b2", module_stack = [#joint.module<"layers.0", "Block">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 3>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %m = joint.call_function "aten::mul.Tensor"(%n, %a) {name = "m", module_stack = [#joint.module<"layers.0", "Block">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 4>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = joint.call_function "aten::sum.default"(%m) {name = "s", result_meta = [#joint.tensor<[], strides = [], offset = 0, device = "cpu", storage = 5>]} : (tensor<4x4xf32>) -> tensor<f32>
  %g = joint.call_function "aten::ones_like.default"(%s) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[], strides = [], offset = 0, device = "cpu", storage = 6>]} : (tensor<f32>) -> tensor<f32>
  %g1 = joint.call_function "aten::mul.Tensor"(%b2, %g) {name = "g1", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 7>]} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %g2 = joint.call_function "aten::mul.Tensor"(%g1, %n) {name = "g2", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 8>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %g3 = joint.call_function "aten::mul.Tensor"(%g2, %a) {name = "g3", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 9>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %g4 = joint.call_function "aten::mul.Tensor"(%g3, %x) {name = "g4", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 10>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output %s, %g4 : tensor<f32>, tensor<4x4xf32>
}

// joint-plan-memory and joint-optimize-memory on two blocks (f32 [4, 4]
// activations, 64 B each; resident inputs 192 B). Hardware options make
// every op take exactly its FLOPs in seconds: exp 16 s, mm 128 s. Saved
// activations: a0, m0 (block 0), a1, m1 (block 1); r0, r1 are block outputs
// (cross-block values, never recomputed). Saving everything peaks at 648 B
// (800 s); full checkpointing at 516 B (1088 s). The greedy recomputes by
// freed bytes per second: a0 (16 s), then a1, then m0; m1 never pays off.
// At 530 B, once m0 is recomputed a1 is no longer needed, so the planner
// undoes it: a0 and m0 (144 s), peak 520 B.
// The runs above price the host link at 1e-15 GB/s, so no offload pays off
// and the plan is recompute only; the runs below give it 1 GB/s (a 64 B copy
// takes 64 ns, hidden behind 16 s ops but for the ones waited at once).
// RUN: joint-opt %s -joint-plan-memory="budget-gb=1e-6 peak-tflops=1e-12 hbm-gbps=1e9 link-gbps=1e-15" 2>&1 | FileCheck %s --check-prefix=LOOSE
// RUN: joint-opt %s -joint-plan-memory="budget-gb=6e-7 peak-tflops=1e-12 hbm-gbps=1e9 link-gbps=1e-15" 2>&1 | FileCheck %s --check-prefix=MEDIUM
// RUN: joint-opt %s -joint-plan-memory="budget-gb=5.3e-7 peak-tflops=1e-12 hbm-gbps=1e9 link-gbps=1e-15" 2>&1 | FileCheck %s --check-prefix=TIGHT
// The same budget in GiB: 5.3e-7 GB = 4.936e-7 GiB.
// RUN: joint-opt %s -joint-plan-memory="budget-gib=4.936e-7 peak-tflops=1e-12 hbm-gbps=1e9 link-gbps=1e-15" 2>&1 | FileCheck %s --check-prefix=TIGHT
// The units: budget-gb counts 1e9 bytes, budget-gib 2^30, in the pass and
// the pipeline. 6.2e-7 GB = 620 B is under save-all (648 B) and recomputes
// a0; 6.2e-7 GiB = 666 B is not and recomputes nothing. The same for the host
// budget: 1.2e-7 GB = 120 B holds one 64 B copy, 1.2e-7 GiB = 129 B two.
// RUN: joint-opt %s -joint-plan-memory="budget-gb=6.2e-7 peak-tflops=1e-12 hbm-gbps=1e9 link-gbps=1e-15" -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNIT-GB
// RUN: joint-opt %s -joint-optimize-memory="budget-gb=6.2e-7 peak-tflops=1e-12 hbm-gbps=1e9 link-gbps=1e-15" -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNIT-GB
// RUN: joint-opt %s -joint-plan-memory="budget-gib=6.2e-7 peak-tflops=1e-12 hbm-gbps=1e9 link-gbps=1e-15" -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNIT-GIB
// RUN: joint-opt %s -joint-optimize-memory="budget-gib=6.2e-7 peak-tflops=1e-12 hbm-gbps=1e9 link-gbps=1e-15" -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNIT-GIB
// RUN: joint-opt %s -joint-plan-memory="budget-gb=5.3e-7 peak-tflops=1e-12 hbm-gbps=1e9 link-gbps=1 host-budget-gb=1.2e-7" -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNIT-HOST-GB
// RUN: joint-opt %s -joint-plan-memory="budget-gb=5.3e-7 peak-tflops=1e-12 hbm-gbps=1e9 link-gbps=1 host-budget-gib=1.2e-7" -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNIT-HOST-GIB
// The pipeline applies the plan with joint-remat.
// RUN: joint-opt %s -joint-optimize-memory="budget-gb=5.3e-7 peak-tflops=1e-12 hbm-gbps=1e9 link-gbps=1e-15" 2>&1 | FileCheck %s --check-prefix=APPLIED
// The applied plan peaks where the planner said (516 B at 960 s, full
// checkpointing: 516 B at 1088 s).
// RUN: joint-opt %s -joint-optimize-memory="budget-gb=5.3e-7 peak-tflops=1e-12 hbm-gbps=1e9 link-gbps=1e-15" -joint-memory-report="peak-tflops=1e-12 hbm-gbps=1e9 link-gbps=1e-15 output=-" -o /dev/null 2>/dev/null | FileCheck %s --check-prefix=REPORT
// A planned attribute changed by hand (a1 saved -> recomputed) and only the
// applier re-run: the hand decision is applied as written.
// RUN: joint-opt %s -joint-plan-memory="budget-gb=6e-7 peak-tflops=1e-12 hbm-gbps=1e9 link-gbps=1e-15" 2>/dev/null \
// RUN:   | sed -e 's/name = "a1", policy = #joint.policy<must_save>/name = "a1", policy = #joint.policy<must_recompute>/' \
// RUN:   | joint-opt -joint-remat 2>/dev/null | FileCheck %s --check-prefix=HAND
// Offload beats recompute: at the tight budget a0, m0 and a1 go to the host
// (516 B, the recompute-only plan's peak) for 0.192 us of exposed copies
// instead of 160 s of recompute.
// RUN: joint-opt %s -joint-plan-memory="budget-gb=5.3e-7 peak-tflops=1e-12 hbm-gbps=1e9 link-gbps=1" 2>&1 | FileCheck %s --check-prefix=OFFLOAD
// A host budget of 100 B leaves room for one copy: m0 (the dearest to
// recompute) is offloaded and a0 recomputed.
// RUN: joint-opt %s -joint-plan-memory="budget-gb=5.3e-7 peak-tflops=1e-12 hbm-gbps=1e9 link-gbps=1 host-budget-gb=1e-7" 2>&1 | FileCheck %s --check-prefix=HOST
// A planned offload changed by hand (a1 kept, m1 offloaded with its wait
// deferred one region) and only the appliers re-run: applied as written.
// RUN: joint-opt %s -joint-plan-memory="budget-gb=5.3e-7 peak-tflops=1e-12 hbm-gbps=1e9 link-gbps=1" 2>/dev/null \
// RUN:   | sed -e 's/name = "a1", policy = #joint.policy<must_cpu_offload>/name = "a1", policy = #joint.policy<must_save>/' \
// RUN:       -e 's/name = "m1", policy = #joint.policy<must_save>/joint.defer = 1 : i64, name = "m1", policy = #joint.policy<must_cpu_offload>/' \
// RUN:   | joint-opt -joint-apply-cpu-offload -joint-remat 2>&1 | FileCheck %s --check-prefix=HAND-OFFLOAD

// UNIT-GB: remark: joint-plan-memory: budget 620 B; recompute 1 of 4 saved storages (64 B); offload 0 op(s) (0 B to host, 0 s transfer exposed); modelled peak 584 B (save-all 648 B), step 816 s (+2.0% over save-all){{$}}
// UNIT-GIB: remark: joint-plan-memory: budget 666 B; recompute 0 of 4 saved storages (0 B); offload 0 op(s) (0 B to host, 0 s transfer exposed); modelled peak 648 B (save-all 648 B), step 800 s (+0.0% over save-all){{$}}
// UNIT-HOST-GB: remark: joint-plan-memory: budget 530 B; recompute 1 of 4 saved storages (64 B); offload 1 op(s) (64 B to host, 0.064 us transfer exposed); modelled peak 520 B (save-all 648 B), step 816 s (+2.0% over save-all){{$}}
// UNIT-HOST-GIB: remark: joint-plan-memory: budget 530 B; recompute 1 of 4 saved storages (64 B); offload 2 op(s) (128 B to host, 0.128 us transfer exposed); modelled peak 516 B (save-all 648 B), step 816 s (+2.0% over save-all){{$}}

// LOOSE: remark: joint-plan-memory: budget 1000 B; recompute 0 of 4 saved storages (0 B); offload 0 op(s) (0 B to host, 0 s transfer exposed); modelled peak 648 B (save-all 648 B), step 800 s (+0.0% over save-all)
// LOOSE: {{^}}  joint.graph @two_blocks
// LOOSE-SAME: joint.plan = {baseline_peak_bytes = 648 : i64, baseline_step_seconds = 8.000000e+02 : f64, budget_bytes = 1000 : i64, candidate_storages = 4 : i64, exposed_transfer_seconds = 0.000000e+00 : f64, host_budget_bytes = 0 : i64, method = "greedy-bytes-per-second", offloaded_bytes = 0 : i64, offloaded_ops = 0 : i64, peak_bytes = 648 : i64, recompute_seconds = 0.000000e+00 : f64, recomputed_bytes = 0 : i64, recomputed_storages = 0 : i64, step_seconds = 8.000000e+02 : f64}
// LOOSE-NEXT: %a0 = {{.*}} name = "a0", policy = #joint.policy<must_save>
// LOOSE-NEXT: %m0 = {{.*}} name = "m0", policy = #joint.policy<must_save>
// LOOSE-NEXT: %r0 = {{.*}} name = "r0", policy = #joint.policy<must_save>
// LOOSE-NEXT: %a1 = {{.*}} name = "a1", policy = #joint.policy<must_save>
// LOOSE-NEXT: %m1 = {{.*}} name = "m1", policy = #joint.policy<must_save>
// LOOSE-NEXT: %r1 = {{.*}} name = "r1", policy = #joint.policy<must_save>
// LOOSE-NEXT: %s = joint.call_function "aten::sum.default"(%r1) {name = "s", result_meta

// MEDIUM: remark: joint-plan-memory: budget 600 B; recompute 1 of 4 saved storages (64 B); offload 0 op(s) (0 B to host, 0 s transfer exposed); modelled peak 584 B (save-all 648 B), step 816 s (+2.0% over save-all)
// MEDIUM: {{^}}  joint.graph @two_blocks
// MEDIUM-SAME: budget_bytes = 600 : i64, {{.*}} peak_bytes = 584 : i64, recompute_seconds = 1.600000e+01 : f64, recomputed_bytes = 64 : i64, recomputed_storages = 1 : i64, step_seconds = 8.160000e+02 : f64}
// MEDIUM-NEXT: %a0 = {{.*}} name = "a0", policy = #joint.policy<must_recompute>
// MEDIUM-NEXT: %m0 = {{.*}} name = "m0", policy = #joint.policy<must_save>
// MEDIUM-NEXT: %r0 = {{.*}} name = "r0", policy = #joint.policy<must_save>
// MEDIUM-NEXT: %a1 = {{.*}} name = "a1", policy = #joint.policy<must_save>
// MEDIUM-NEXT: %m1 = {{.*}} name = "m1", policy = #joint.policy<must_save>

// TIGHT: remark: joint-plan-memory: budget 530 B; recompute 2 of 4 saved storages (128 B); offload 0 op(s) (0 B to host, 0 s transfer exposed); modelled peak 520 B (save-all 648 B), step 944 s (+18.0% over save-all)
// TIGHT: {{^}}  joint.graph @two_blocks
// TIGHT-SAME: budget_bytes = 530 : i64, {{.*}} peak_bytes = 520 : i64, recompute_seconds = 1.440000e+02 : f64, recomputed_bytes = 128 : i64, recomputed_storages = 2 : i64, step_seconds = 9.440000e+02 : f64}
// TIGHT-NEXT: %a0 = {{.*}} name = "a0", policy = #joint.policy<must_recompute>
// TIGHT-NEXT: %m0 = {{.*}} name = "m0", policy = #joint.policy<must_recompute>
// TIGHT-NEXT: %r0 = {{.*}} name = "r0", policy = #joint.policy<must_save>
// TIGHT-NEXT: %a1 = {{.*}} name = "a1", policy = #joint.policy<must_save>
// TIGHT-NEXT: %m1 = {{.*}} name = "m1", policy = #joint.policy<must_save>

// APPLIED: remark: joint-plan-memory: budget 530 B; recompute 2 of 4
// APPLIED: remark: joint-remat: 2 ops recomputed, 0 originals erased, 0 reload chains moved
// APPLIED: {{^}}  joint.graph @two_blocks
// APPLIED: %g2 = joint.call_function "aten::mul.Tensor"(%g1, %m1)
// APPLIED-NEXT: %gw1 = joint.call_function "aten::mm.default"(%a1, %g2)
// APPLIED-NEXT: %ga1 = joint.call_function "aten::mm.default"(%g2, %layers.1.w)
// APPLIED-NEXT: %gx1 = joint.call_function "aten::mul.Tensor"(%ga1, %a1)
// APPLIED-NEXT: %h1 = joint.call_function "aten::mul.Tensor"(%gx1, %r0)
// APPLIED-NEXT: %a0_recomputed = joint.call_function "aten::exp.default"(%x)
// APPLIED-NEXT: %m0_recomputed = joint.call_function "aten::mm.default"(%a0_recomputed, %layers.0.w)
// APPLIED-NEXT: %h2 = joint.call_function "aten::mul.Tensor"(%h1, %m0_recomputed)
// APPLIED-NEXT: %gw0 = joint.call_function "aten::mm.default"(%a0_recomputed, %h2)

// REPORT: peak device   520 B (520 B)
// REPORT: step estimate 944.00 s

// HAND: %g2 = joint.call_function "aten::mul.Tensor"(%g1, %m1)
// HAND-NEXT: %a1_recomputed = joint.call_function "aten::exp.default"(%r0)
// HAND: %h2 = joint.call_function "aten::mul.Tensor"(%h1, %m0)
// HAND-NEXT: %a0_recomputed = joint.call_function "aten::exp.default"(%x)
// HAND-NEXT: %gw0 = joint.call_function "aten::mm.default"(%a0_recomputed, %h2)

// OFFLOAD: remark: joint-plan-memory: budget 530 B; recompute 0 of 4 saved storages (0 B); offload 3 op(s) (192 B to host, 0.192 us transfer exposed); modelled peak 516 B (save-all 648 B), step 800 s (+0.0% over save-all)
// OFFLOAD: {{^}}  joint.graph @two_blocks
// OFFLOAD-SAME: budget_bytes = 530 : i64, candidate_storages = 4 : i64, exposed_transfer_seconds = 1.9200001588615123E-7 : f64, host_budget_bytes = 0 : i64, method = "greedy-bytes-per-second", offloaded_bytes = 192 : i64, offloaded_ops = 3 : i64, peak_bytes = 516 : i64, recompute_seconds = 0.000000e+00 : f64, recomputed_bytes = 0 : i64, recomputed_storages = 0 : i64
// OFFLOAD-NEXT: %a0 = {{.*}} name = "a0", policy = #joint.policy<must_cpu_offload>, result_meta
// OFFLOAD-NEXT: %m0 = {{.*}} name = "m0", policy = #joint.policy<must_cpu_offload>, result_meta
// OFFLOAD-NEXT: %r0 = {{.*}} name = "r0", policy = #joint.policy<must_save>, result_meta
// OFFLOAD-NEXT: %a1 = {{.*}} name = "a1", policy = #joint.policy<must_cpu_offload>, result_meta
// OFFLOAD-NEXT: %m1 = {{.*}} name = "m1", policy = #joint.policy<must_save>, result_meta
// OFFLOAD-NOT: joint.prefetch
// OFFLOAD-NOT: joint.defer

// HOST: remark: joint-plan-memory: budget 530 B; recompute 1 of 4 saved storages (64 B); offload 1 op(s) (64 B to host, 0.064 us transfer exposed); modelled peak 520 B (save-all 648 B), step 816 s (+2.0% over save-all)
// HOST: {{^}}  joint.graph @two_blocks
// HOST-SAME: host_budget_bytes = 100 : i64, {{.*}} offloaded_bytes = 64 : i64, offloaded_ops = 1 : i64, peak_bytes = 520 : i64
// HOST-NEXT: %a0 = {{.*}} name = "a0", policy = #joint.policy<must_recompute>, result_meta
// HOST-NEXT: %m0 = {{.*}} name = "m0", policy = #joint.policy<must_cpu_offload>, result_meta
// HOST-NEXT: %r0 = {{.*}} name = "r0", policy = #joint.policy<must_save>, result_meta
// HOST-NEXT: %a1 = {{.*}} name = "a1", policy = #joint.policy<must_save>, result_meta

// HAND-OFFLOAD: remark: joint-apply-cpu-offload: offloaded 3 storage(s), 192 bytes, prefetched 0 reload(s), deferred 1 wait(s)
// HAND-OFFLOAD: %a1 = joint.call_function "aten::exp.default"(%r0)
// HAND-OFFLOAD-NEXT: %m1 = joint.call_function "aten::mm.default"(%a1, %layers.1.w)
// HAND-OFFLOAD-NEXT: %[[OFF:.*]] = ao.offload %m1
// HAND-OFFLOAD-NEXT: %r1 = joint.call_function "aten::relu.default"(%m1)
// HAND-OFFLOAD-NEXT: %s = joint.call_function "aten::sum.default"(%r1)
// HAND-OFFLOAD-NEXT: %[[WAIT:.*]] = ao.wait_tensor %[[OFF]] keepalive %m1 : tensor<4x4xf32> last_use %r1
// HAND-OFFLOAD-NEXT: %g = joint.call_function
// HAND-OFFLOAD-NEXT: %g1 = joint.call_function
// HAND-OFFLOAD-NEXT: %[[RELOAD:.*]] = ao.reload %[[WAIT]] to "cpu"
// HAND-OFFLOAD-NEXT: %[[BACK:.*]] = ao.wait_tensor %[[RELOAD]] keepalive %[[WAIT]]
// HAND-OFFLOAD-NEXT: %g2 = joint.call_function "aten::mul.Tensor"(%g1, %[[BACK]])
// HAND-OFFLOAD-NEXT: %gw1 = joint.call_function "aten::mm.default"(%a1, %g2)

joint.graph @two_blocks(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 0>}, %w0: tensor<4x4xf32> {joint.role = #joint.role<param>, joint.fqn = "layers.0.w", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 20>}, %w1: tensor<4x4xf32> {joint.role = #joint.role<param>, joint.fqn = "layers.1.w", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 21>}) -> (tensor<f32> {joint.role = #joint.role<loss>}, tensor<4x4xf32> {joint.role = #joint.role<grad>, joint.fqn = "layers.0.w"}, tensor<4x4xf32> {joint.role = #joint.role<grad>, joint.fqn = "layers.1.w"}) attributes {joint.model = {block_containers = [{blocks = ["layers.0", "layers.1"], container = "layers", owner = ""}]}} {
  %a0 = joint.call_function "aten::exp.default"(%x) {name = "a0", module_stack = [#joint.module<"layers.0", "Block">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 1>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %m0 = joint.call_function "aten::mm.default"(%a0, %w0) {name = "m0", module_stack = [#joint.module<"layers.0", "Block">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 2>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %r0 = joint.call_function "aten::relu.default"(%m0) {name = "r0", module_stack = [#joint.module<"layers.0", "Block">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 3>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %a1 = joint.call_function "aten::exp.default"(%r0) {name = "a1", module_stack = [#joint.module<"layers.1", "Block">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 4>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %m1 = joint.call_function "aten::mm.default"(%a1, %w1) {name = "m1", module_stack = [#joint.module<"layers.1", "Block">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 5>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %r1 = joint.call_function "aten::relu.default"(%m1) {name = "r1", module_stack = [#joint.module<"layers.1", "Block">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 6>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = joint.call_function "aten::sum.default"(%r1) {name = "s", result_meta = [#joint.tensor<[], strides = [], offset = 0, device = "cpu", storage = 7>]} : (tensor<4x4xf32>) -> tensor<f32>
  %g = joint.call_function "aten::ones_like.default"(%s) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[], strides = [], offset = 0, device = "cpu", storage = 8>]} : (tensor<f32>) -> tensor<f32>
  %g1 = joint.call_function "aten::mul.Tensor"(%r1, %g) {name = "g1", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 9>]} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %g2 = joint.call_function "aten::mul.Tensor"(%g1, %m1) {name = "g2", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 10>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %gw1 = joint.call_function "aten::mm.default"(%a1, %g2) {name = "gw1", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 11>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %ga1 = joint.call_function "aten::mm.default"(%g2, %w1) {name = "ga1", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 12>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %gx1 = joint.call_function "aten::mul.Tensor"(%ga1, %a1) {name = "gx1", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 13>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %h1 = joint.call_function "aten::mul.Tensor"(%gx1, %r0) {name = "h1", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 14>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %h2 = joint.call_function "aten::mul.Tensor"(%h1, %m0) {name = "h2", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 15>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %gw0 = joint.call_function "aten::mm.default"(%a0, %h2) {name = "gw0", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 16>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output %s, %gw0, %gw1 : tensor<f32>, tensor<4x4xf32>, tensor<4x4xf32>
}

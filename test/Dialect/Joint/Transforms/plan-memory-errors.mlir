// joint-plan-memory rejects bad options and graphs with one error each and
// writes nothing.
// RUN: not joint-opt %s -joint-plan-memory 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not joint-opt %s -joint-plan-memory="budget-gb=1 budget-gib=1" 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: not joint-opt %s -joint-plan-memory="budget-gb=-2" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not joint-opt %s -joint-plan-memory="budget-gb=1 host-budget-gb=1 host-budget-gib=1" 2>&1 | FileCheck %s --check-prefix=HOST
// RUN: not joint-opt %s -joint-plan-memory="budget-gb=1 link-gbps=0" 2>&1 | FileCheck %s --check-prefix=LINK
// RUN: not joint-opt %s -joint-optimize-memory="budget-gb=1 budget-gib=1" 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: not joint-opt %s -joint-optimize-memory="budget-gb=1 bogus=1" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// Planning twice: the first plan's remat clones are already in the graph.
// RUN: not joint-opt %s -joint-optimize-memory="budget-gb=5.3e-7 peak-tflops=1e-12 hbm-gbps=1e9 link-gbps=1e-15" -joint-plan-memory="budget-gb=5.3e-7" 2>&1 | FileCheck %s --check-prefix=TWICE
// The same with a plan that offloads: its ao transfers are in the graph.
// RUN: not joint-opt %s -joint-optimize-memory="budget-gb=5.3e-7 peak-tflops=1e-12 hbm-gbps=1e9 link-gbps=1" -joint-plan-memory="budget-gb=5.3e-7" 2>&1 | FileCheck %s --check-prefix=TWICE-OFFLOAD
// Below recompute's lowest peak (516 B) offloading still reaches 452 B, at
// any exposed cost (the link is 1e-15 GB/s): when no plan fits, the planner
// takes every offload that lowers the peak before recomputing.
// RUN: joint-opt %s -joint-plan-memory="budget-gb=5e-7 peak-tflops=1e-12 hbm-gbps=1e9 link-gbps=1e-15" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OFFLOAD-FIRST
// Below the lowest reachable peak (452 B): one error naming that peak, the
// one node where the plan reaches it and what is live there; no output.
// RUN: not joint-opt %s -joint-plan-memory="budget-gb=4.5e-7 peak-tflops=1e-12 hbm-gbps=1e9 link-gbps=1e-15" 2>&1 | FileCheck %s --check-prefix=INFEASIBLE

// MISSING: {{^}}joint-opt: error: joint-plan-memory: give the device budget as budget-gb (1e9 bytes) or budget-gib (2^30 bytes)
// BOTH: {{^}}joint-opt: error: joint-plan-memory: give budget-gb or budget-gib, not both
// NEGATIVE: {{^}}joint-opt: error: joint-plan-memory: budget-gb must be a finite number > 0, got -2{{$}}
// HOST: {{^}}joint-opt: error: joint-plan-memory: give host-budget-gb or host-budget-gib, not both
// LINK: {{^}}joint-opt: error: joint-plan-memory: link-gbps must be a positive number, got 0
// UNKNOWN: joint-opt: error: joint-optimize-memory: no such option 'bogus'; valid options: allow-chunk-loss, allow-unbounded-sizes, budget-gb, budget-gib, collective-gbps, hbm-gbps, host-budget-gb, host-budget-gib, link-gbps, peak-tflops (joint-opt --help describes them)
// TWICE: error: 'joint.call_function' op joint-plan-memory plans an untransformed graph, but this graph already holds remat clones; plan the graph before joint-remat / joint-cpu-offload
// TWICE-OFFLOAD: error: 'ao.offload' op joint-plan-memory plans an untransformed graph, but this graph already holds ao transfers; plan the graph before joint-remat / joint-cpu-offload
// OFFLOAD-FIRST: remark: joint-plan-memory: budget 500 B; recompute 0 of 4 saved storages (0 B); offload 4 op(s) (256 B to host, 5.12e+08 s transfer exposed); modelled peak 452 B (save-all 648 B), step 5.12e+08 s (+63999978.0% over save-all){{$}}
// INFEASIBLE: error: joint-plan-memory: budget 450 B is not reachable: the lowest modelled peak is 452 B at node 'ga1', of which 192 B are resident inputs; no decision lowers it further; the largest values live there are 'g2' (64 B), 'ao.reload(a1)' (64 B), 'gw1' (64 B), 'ga1' (64 B), 's' (4 B){{$}}
// INFEASIBLE-NOT: module
// INFEASIBLE-NOT: remark

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

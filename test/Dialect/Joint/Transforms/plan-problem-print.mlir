// The memory plan problem joint-plan-memory builds from a graph (printed by
// the test pass), and the greedy's decisions on it: sizes in bytes, seconds
// from the cost model's defaults, positions are op indices. Two blocks of
// exp -> mm -> relu; full checkpointing's rules make a0, m0, a1 and m1
// recomputable (r0 and r1 feed another unit: saved); every forward result
// may move to host. At 530 B the greedy recomputes a0, a1 and m0, then
// undoes a1, which m0 made redundant: a0 and m0, the plan joint-plan-memory
// writes for this budget (peak 328 B + 192 B resident).
// RUN: joint-opt %s -test-print-memory-plan-problem="budget-bytes=530 solve=true" -o /dev/null | FileCheck %s

// CHECK: graph @two_blocks
// CHECK-NEXT: problem: 17 ops, 7 storages, 6 offload candidates; budget 530 B, host budget 0 B, resident 192 B, boundary 7, 2 blocks, link 5.5e+10 B/s
// CHECK-NEXT: op 0 'a0': 2.66667e-11 s, live 64 B, block 0, defines 0
// CHECK-NEXT: op 1 'm0': 4e-11 s, live 128 B, block 0, defines 1
// CHECK-NEXT: op 2 'r0': 2.66667e-11 s, live 192 B, block 0, defines 2
// CHECK-NEXT: op 3 'a1': 2.66667e-11 s, live 256 B, block 1, defines 3
// CHECK-NEXT: op 4 'm1': 4e-11 s, live 320 B, block 1, defines 4
// CHECK-NEXT: op 5 'r1': 2.66667e-11 s, live 384 B, block 1, defines 5
// CHECK-NEXT: op 6 's': 1.41667e-11 s, live 388 B, block none, defines 6
// CHECK-NEXT: op 7 'g': 1.66667e-12 s, live 392 B, block none
// CHECK-NEXT: op 8 'g1': 2.75e-11 s, live 456 B, block none
// CHECK-NEXT: op 9 'g2': 4e-11 s, live 452 B, block none
// CHECK-NEXT: op 10 'gw1': 4e-11 s, live 388 B, block none
// CHECK-NEXT: op 11 'ga1': 4e-11 s, live 452 B, block none
// CHECK-NEXT: op 12 'gx1': 4e-11 s, live 452 B, block none
// CHECK-NEXT: op 13 'h1': 4e-11 s, live 388 B, block none
// CHECK-NEXT: op 14 'h2': 4e-11 s, live 324 B, block none
// CHECK-NEXT: op 15 'gw0': 4e-11 s, live 260 B, block none
// CHECK-NEXT: op 16 'joint.output': 0 s, live 132 B, block none
// CHECK-NEXT: storage 0 'a0': 64 B, alloc 0, free 15, last forward 1, first backward 15, recompute replays [0] reading []
// CHECK-NEXT: storage 1 'm0': 64 B, alloc 1, free 14, last forward 2, first backward 14, recompute replays [1] reading [0]
// CHECK-NEXT: storage 2 'r0': 64 B, alloc 2, free 13, last forward 3, first backward 13
// CHECK-NEXT: storage 3 'a1': 64 B, alloc 3, free 12, last forward 4, first backward 10, recompute replays [3] reading [2]
// CHECK-NEXT: storage 4 'm1': 64 B, alloc 4, free 9, last forward 5, first backward 9, recompute replays [4] reading [3]
// CHECK-NEXT: storage 5 'r1': 64 B, alloc 5, free 8, last forward 6, first backward 8
// CHECK-NEXT: storage 6 's': 4 B, alloc 6, free 16, last forward 6, first backward 7
// CHECK-NEXT: offload candidate 0 'a0': targets 0:0
// CHECK-NEXT: offload candidate 1 'm0': targets 1:1
// CHECK-NEXT: offload candidate 2 'r0': targets 2:2
// CHECK-NEXT: offload candidate 3 'a1': targets 3:3
// CHECK-NEXT: offload candidate 4 'm1': targets 4:4
// CHECK-NEXT: offload candidate 5 'r1': targets 5:5
// CHECK-NEXT: recompute 0 'a0'
// CHECK-NEXT: recompute 1 'm0'
// CHECK-NEXT: recomputed 2 of 4 (128 B), offloaded 0 of 6 (0 B), modelled transient peak 328 B
// CHECK-NEXT: reached

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

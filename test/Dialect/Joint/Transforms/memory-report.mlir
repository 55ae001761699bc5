// joint-memory-report: the text table, the transfer-overlap model, the
// output file and the label. Hardware options make every op take exactly
// FLOPs seconds (1 FLOP/s, HBM time negligible) and each 64 B copy
// 64 / link-rate seconds, so the times below are hand-computed.
// RUN: joint-opt %s -joint-memory-report="peak-tflops=1e-12 hbm-gbps=1e9 link-gbps=8e-9 output=-" -o /dev/null | FileCheck %s --check-prefix=HIDDEN
// RUN: joint-opt %s -joint-memory-report="peak-tflops=1e-12 hbm-gbps=1e9 link-gbps=2e-9 output=-" -o /dev/null | FileCheck %s --check-prefix=EXPOSED
// RUN: joint-opt %s -joint-memory-report="format=json output=%t.json label=offload-demo" -o /dev/null
// RUN: joint-opt %s -joint-memory-report="format=json peak-tflops=1e-12 hbm-gbps=1e9 output=-" -o /dev/null | FileCheck %s --check-prefix=SECONDS
// RUN: FileCheck %s --check-prefix=FILE < %t.json
// RUN: joint-opt %s -joint-memory-report="output=%t.txt" | FileCheck %s --check-prefix=UNCHANGED
// By default the report goes to stderr (as upstream's -print-op-stats):
// stdout is the IR alone, so it pipes into the next joint-opt.
// RUN: joint-opt %s -joint-memory-report 2>%t.err | joint-opt -joint-memory-report=output=- -o /dev/null | FileCheck %s --check-prefix=PIPED
// RUN: FileCheck %s --check-prefix=PIPED < %t.err

// Op times (FLOPs): a 128, b 16, c 16, g 0, gb 16, gw 128 = 304 s.
// 8 B/s: the offload (8 s) runs during b and is hidden by its wait; the
// reload is issued at t = 160 and waited on at once: 8 s exposed.
// HIDDEN: == joint-memory-report @offload_step
// HIDDEN-NEXT: ops           11 (5 forward, 6 backward); backward starts at op 5 'g'
// HIDDEN-NEXT: peak device   328 B (328 B) at op 8 'gb' (backward)
// HIDDEN-NEXT:   resident    128 B (128 B): params 64 B, buffers 0 B, inputs 64 B
// HIDDEN-NEXT:   transient   200 B (200 B)
// HIDDEN-NEXT: activations   68 B (68 B) live across forward/backward
// HIDDEN-NEXT: host (ao)     peak 64 B (64 B), offloaded 64 B
// HIDDEN-NEXT: compute       304 FLOP, 304.00 s (roofline 1e-12 TFLOP/s, 1e+09 GB/s)
// HIDDEN-NEXT: recompute     0 FLOP (0.00% of step FLOPs), 0 s
// HIDDEN-NEXT: transfers     offload 64 B, reload 64 B: 16.00 s at 8e-09 GB/s, 8.00 s exposed
// HIDDEN-NEXT: step estimate 312.00 s
// HIDDEN-NEXT: block     activations             offloaded     recompute
// HIDDEN-NEXT: layers.0  64 B (64 B)             64 B          0 FLOP

// 2 B/s: the offload takes 32 s but b only 16: its wait stalls 16 s; the
// reload (32 s) stalls 32 s. One copy stream per direction.
// EXPOSED: transfers     offload 64 B, reload 64 B: 64.00 s at 2e-09 GB/s, 48.00 s exposed
// EXPOSED-NEXT: step estimate 352.00 s

// FILE: "format": "joint-memory-report",
// FILE-NEXT: "version": 1,
// FILE-NEXT: "graph": "offload_step",
// FILE-NEXT: "label": "offload-demo",
// FILE: "exposed_seconds":

// The JSON timeline's compute-stream seconds per op (what the emulated
// device's simulated schedule gives each node's kernels): the FLOPs above
// (g moves 8 B at 1e9 GB/s), 0 for ao ops and the output.
// SECONDS: "host_bytes": [
// SECONDS: "seconds": [
// SECONDS-NEXT: 128,
// SECONDS-NEXT: 0,
// SECONDS-NEXT: 16,
// SECONDS-NEXT: 0,
// SECONDS-NEXT: 16,
// SECONDS-NEXT: 8.0000000000000006e-18,
// SECONDS-NEXT: 0,
// SECONDS-NEXT: 0,
// SECONDS-NEXT: 16,
// SECONDS-NEXT: 128,
// SECONDS-NEXT: 0
// SECONDS-NEXT: ]

// The pass changes nothing: the IR prints back unchanged.
// PIPED: == joint-memory-report @offload_step
// PIPED-NEXT: ops           11 (5 forward, 6 backward); backward starts at op 5 'g'

// UNCHANGED: %[[A:.*]] = joint.call_function "aten::mm.default"
// UNCHANGED-NEXT: ao.offload %[[A]]

joint.graph @offload_step(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 0>}, %w: tensor<4x4xf32> {joint.role = #joint.role<param>, joint.fqn = "layers.0.w", joint.meta = #joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 10>}) -> (tensor<f32> {joint.role = #joint.role<loss>}, tensor<4x4xf32> {joint.role = #joint.role<grad>, joint.fqn = "layers.0.w"}) attributes {joint.model = {block_containers = [{blocks = ["layers.0"], container = "layers", owner = ""}]}} {
  %a = joint.call_function "aten::mm.default"(%x, %w) {name = "a", module_stack = [#joint.module<"layers.0", "Block">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 1>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %h = ao.offload %a : tensor<4x4xf32>
  %b = joint.call_function "aten::relu.default"(%a) {name = "b", module_stack = [#joint.module<"layers.0", "Block">], result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 2>]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %wt = ao.wait_tensor %h keepalive %a : tensor<4x4xf32> last_use %b : tensor<4x4xf32> : tensor<4x4xf32>
  %c = joint.call_function "aten::sum.default"(%b) {name = "c", result_meta = [#joint.tensor<[], strides = [], offset = 0, device = "cpu", storage = 3>]} : (tensor<4x4xf32>) -> tensor<f32>
  %g = joint.call_function "aten::ones_like.default"(%c) {name = "g", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[], strides = [], offset = 0, device = "cpu", storage = 4>]} : (tensor<f32>) -> tensor<f32>
  %r = ao.reload %wt to "cuda:0" : tensor<4x4xf32>
  %rw = ao.wait_tensor %r : tensor<4x4xf32>
  %gb = joint.call_function "aten::mul.Tensor"(%rw, %g) {name = "gb", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 5>]} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %gw = joint.call_function "aten::mm.default"(%gb, %b) {name = "gw", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[4, 4], strides = [4, 1], offset = 0, device = "cpu", storage = 6>]} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output %c, %gw : tensor<f32>, tensor<4x4xf32>
}

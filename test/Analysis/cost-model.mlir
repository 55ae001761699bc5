// CostModel FLOP formulas (torch.utils.flop_counter; docs/cost-model.md),
// seen through joint-memory-report's JSON "cost.flops". Shapes come from the
// static types here (no facts recorded).
// RUN: joint-opt %s -split-input-file -joint-memory-report="format=json output=-" -o /dev/null | FileCheck %s

// mm_flop: 2 * M * K * N = 2 * 2 * 3 * 5.
// CHECK-LABEL: "graph": "mm_is_two_mkn"
// CHECK: "flops": 60,
joint.graph @mm_is_two_mkn(%x: tensor<2x3xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %w: tensor<3x5xf32> {joint.role = #joint.role<param>, joint.fqn = "w"}) -> (tensor<2x5xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::mm.default"(%x, %w) {name = "mm"} : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>
  joint.output %0 : tensor<2x5xf32>
}

// -----

// addmm_flop counts the product only (the bias add is not counted), with K
// from mat1 (argument 1), not from the bias.
// CHECK-LABEL: "graph": "addmm_counts_the_product_only"
// CHECK: "flops": 60,
joint.graph @addmm_counts_the_product_only(%b: tensor<5xf32> {joint.role = #joint.role<param>, joint.fqn = "b"}, %x: tensor<2x3xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %w: tensor<3x5xf32> {joint.role = #joint.role<param>, joint.fqn = "w"}) -> (tensor<2x5xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::addmm.default"(%b, %x, %w) {name = "addmm"} : (tensor<5xf32>, tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>
  joint.output %0 : tensor<2x5xf32>
}

// -----

// bmm_flop and baddbmm_flop: 2 * B * M * K * N = 240 each.
// CHECK-LABEL: "graph": "bmm_and_baddbmm"
// CHECK: "flops": 480,
joint.graph @bmm_and_baddbmm(%i: tensor<4x2x5xf32> {joint.role = #joint.role<input>, joint.path = "i"}, %x: tensor<4x2x3xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %y: tensor<4x3x5xf32> {joint.role = #joint.role<input>, joint.path = "y"}) -> (tensor<4x2x5xf32> {joint.role = #joint.role<output>}, tensor<4x2x5xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::bmm.default"(%x, %y) {name = "bmm"} : (tensor<4x2x3xf32>, tensor<4x3x5xf32>) -> tensor<4x2x5xf32>
  %1 = joint.call_function "aten::baddbmm.default"(%i, %x, %y) {name = "baddbmm"} : (tensor<4x2x5xf32>, tensor<4x2x3xf32>, tensor<4x3x5xf32>) -> tensor<4x2x5xf32>
  joint.output %0, %1 : tensor<4x2x5xf32>, tensor<4x2x5xf32>
}

// -----

// linear and broadcasting matmul: 2 * numel(out) * K = 2 * 60 * 3 each.
// CHECK-LABEL: "graph": "linear_and_matmul_by_output_elements"
// CHECK: "flops": 720,
joint.graph @linear_and_matmul_by_output_elements(%x: tensor<6x2x3xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %w: tensor<5x3xf32> {joint.role = #joint.role<param>, joint.fqn = "w"}, %y: tensor<3x5xf32> {joint.role = #joint.role<input>, joint.path = "y"}) -> (tensor<6x2x5xf32> {joint.role = #joint.role<output>}, tensor<6x2x5xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::linear.default"(%x, %w) {name = "linear"} : (tensor<6x2x3xf32>, tensor<5x3xf32>) -> tensor<6x2x5xf32>
  %1 = joint.call_function "aten::matmul.default"(%x, %y) {name = "matmul"} : (tensor<6x2x3xf32>, tensor<3x5xf32>) -> tensor<6x2x5xf32>
  joint.output %0, %1 : tensor<6x2x5xf32>, tensor<6x2x5xf32>
}

// -----

// conv_flop_count: 2 * N * prod(out spatial) * prod(weight) =
// 2 * 2 * 36 * 108 = 15552; convolution_backward costs the forward once per
// requested grad among (input, weight): mask [true, true, false] -> 31104,
// [false, true, false] -> 15552. Total 62208.
// CHECK-LABEL: "graph": "convolution_and_backward_by_output_mask"
// CHECK: "flops": 62208,
joint.graph @convolution_and_backward_by_output_mask(%x: tensor<2x3x8x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %w: tensor<4x3x3x3xf32> {joint.role = #joint.role<param>, joint.fqn = "w"}) -> (tensor<2x3x8x8xf32> {joint.role = #joint.role<output>}, tensor<4x3x3x3xf32> {joint.role = #joint.role<output>}, tensor<4x3x3x3xf32> {joint.role = #joint.role<output>}) {
  %y = joint.call_function "aten::convolution.default"(%x, %w) {name = "convolution", args = [#joint.operand<0>, #joint.operand<1>, unit, [1, 1], [0, 0], [1, 1], false, [0, 0], 1]} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32>
  %gx, %gw, %gb = joint.call_function "aten::convolution_backward.default"(%y, %x, %w) {name = "convolution_backward", phase = #joint.phase<backward>, args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>, [4], [1, 1], [0, 0], [1, 1], false, [0, 0], 1, [true, true, false]]} : (tensor<2x4x6x6xf32>, tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>)
  %hx, %hw, %hb = joint.call_function "aten::convolution_backward.default"(%y, %x, %w) {name = "convolution_backward_1", phase = #joint.phase<backward>, args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>, [4], [1, 1], [0, 0], [1, 1], false, [0, 0], 1, [false, true, false]]} : (tensor<2x4x6x6xf32>, tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>)
  joint.output %gx, %gw, %hw : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>
}

// -----

// sdpa_flop_count on (batch, heads, seq, dim): 2 * B*H * Sq * Sk * (Dq + Dv)
// = 2 * 8 * 16 * 32 * 16 = 131072 (cross attention, Sq != Sk); the backward
// is twice that (sdpa_backward_flop_count; q, k, v are arguments 1-3).
// CHECK-LABEL: "graph": "sdpa_forward_and_backward"
// CHECK: "flops": 393216,
joint.graph @sdpa_forward_and_backward(%q: tensor<2x4x16x8xbf16> {joint.role = #joint.role<input>, joint.path = "q"}, %k: tensor<2x4x32x8xbf16> {joint.role = #joint.role<input>, joint.path = "k"}, %v: tensor<2x4x32x8xbf16> {joint.role = #joint.role<input>, joint.path = "v"}) -> (tensor<2x4x16x8xbf16> {joint.role = #joint.role<output>}) {
  %o, %lse = joint.call_function "aten::_scaled_dot_product_flash_attention_for_cpu.default"(%q, %k, %v) {name = "sdpa", args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>, 0.0, false]} : (tensor<2x4x16x8xbf16>, tensor<2x4x32x8xbf16>, tensor<2x4x32x8xbf16>) -> (tensor<2x4x16x8xbf16>, tensor<2x4x16xf32>)
  %gq, %gk, %gv = joint.call_function "aten::_scaled_dot_product_flash_attention_for_cpu_backward.default"(%o, %q, %k, %v, %o, %lse) {name = "sdpa_backward", phase = #joint.phase<backward>, args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>, #joint.operand<3>, #joint.operand<4>, #joint.operand<5>, 0.0, false]} : (tensor<2x4x16x8xbf16>, tensor<2x4x16x8xbf16>, tensor<2x4x32x8xbf16>, tensor<2x4x32x8xbf16>, tensor<2x4x16x8xbf16>, tensor<2x4x16xf32>) -> (tensor<2x4x16x8xbf16>, tensor<2x4x32x8xbf16>, tensor<2x4x32x8xbf16>)
  joint.output %gq : tensor<2x4x16x8xbf16>
}

// -----

// The flash/efficient kernels take (batch, seq, heads, dim): the same
// attention as above is 131072 forward + 262144 backward, not the 16384
// a (batch, heads, seq, dim) reading would give.
// CHECK-LABEL: "graph": "flash_attention_reads_bshd_layout"
// CHECK: "flops": 393216,
joint.graph @flash_attention_reads_bshd_layout(%q: tensor<2x16x4x8xbf16> {joint.role = #joint.role<input>, joint.path = "q"}, %k: tensor<2x32x4x8xbf16> {joint.role = #joint.role<input>, joint.path = "k"}, %v: tensor<2x32x4x8xbf16> {joint.role = #joint.role<input>, joint.path = "v"}) -> (tensor<2x16x4x8xbf16> {joint.role = #joint.role<output>}) {
  %o, %lse = joint.call_function "aten::_flash_attention_forward.default"(%q, %k, %v) {name = "flash"} : (tensor<2x16x4x8xbf16>, tensor<2x32x4x8xbf16>, tensor<2x32x4x8xbf16>) -> (tensor<2x16x4x8xbf16>, tensor<2x4x16xf32>)
  %gq, %gk, %gv = joint.call_function "aten::_flash_attention_backward.default"(%o, %q, %k, %v, %o, %lse) {name = "flash_backward", phase = #joint.phase<backward>} : (tensor<2x16x4x8xbf16>, tensor<2x16x4x8xbf16>, tensor<2x32x4x8xbf16>, tensor<2x32x4x8xbf16>, tensor<2x16x4x8xbf16>, tensor<2x4x16xf32>) -> (tensor<2x16x4x8xbf16>, tensor<2x32x4x8xbf16>, tensor<2x32x4x8xbf16>)
  joint.output %gq : tensor<2x16x4x8xbf16>
}

// -----

// Everything else: one FLOP per element of the largest tensor (exp: 32
// outputs; sum: 32 inputs); views (t) and data movement (clone) are free.
joint.schema @"aten::t.default" {schema = "aten::t(Tensor(a) self) -> Tensor(a)", arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a">], returns = [#joint.arg<type = "Tensor", alias = "a">]}
// CHECK-LABEL: "graph": "elementwise_and_reductions_by_element_count"
// CHECK: "flops": 64,
joint.graph @elementwise_and_reductions_by_element_count(%x: tensor<4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<f32> {joint.role = #joint.role<loss>}, tensor<8x4xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::exp.default"(%x) {name = "exp"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = joint.call_function "aten::sum.default"(%0) {name = "sum"} : (tensor<4x8xf32>) -> tensor<f32>
  %2 = joint.call_function "aten::t.default"(%0) {name = "t"} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %3 = joint.call_function "aten::clone.default"(%2) {name = "clone"} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  joint.output %1, %3 : tensor<f32>, tensor<8x4xf32>
}

// -----

// Recompute FLOPs are the FLOPs of remat clones (`recomputed_from` set):
// the clone of relu (32) out of 128 in all (relu, exp, clone and mul, 32
// each): 25%, in the block of its module stack.
// CHECK-LABEL: "graph": "remat_clones_count_as_recompute"
// CHECK: "flops": 128,
// CHECK-NEXT: "recompute_flops": 32,
// CHECK-NEXT: "recompute_percent": 25,
// CHECK: "fqn": "layers.0",
// CHECK: "recompute_flops": 32
joint.graph @remat_clones_count_as_recompute(%x: tensor<4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4x8xf32> {joint.role = #joint.role<output>}) attributes {joint.model = {block_containers = [{blocks = ["layers.0"], container = "layers", owner = ""}]}} {
  %0 = joint.call_function "aten::relu.default"(%x) {name = "relu", module_stack = [#joint.module<"layers.0", "Block">]} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = joint.call_function "aten::exp.default"(%0) {name = "exp", module_stack = [#joint.module<"layers.0", "Block">]} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = joint.call_function "aten::relu.default"(%x) {name = "relu_recomputed", phase = #joint.phase<backward>, recomputed_from = "relu", module_stack = [#joint.module<"layers.0", "Block">]} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = joint.call_function "aten::mul.Tensor"(%1, %2) {name = "mul", phase = #joint.phase<backward>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  joint.output %3 : tensor<4x8xf32>
}

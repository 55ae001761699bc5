// After remat, a backward view of a recomputed clone lives in the
// clone's allocation, not in the forward value's (the forward value is not
// kept alive across the boundary). `relu(x @ w) @ v` in f32, x [8, 16],
// w and v [16, 16], loss sum (exported by joint_mlir.export, operator table
// dropped: every value has facts). Saved bytes never exceed the
// no-checkpointing figure: 512 in the block without checkpointing (relu),
// 0 with full, 512 with selective (mm saved instead of relu); the loss adds
// 4 bytes. Before the fix: 516 full and 1028 selective.
// RUN: joint-opt %s -joint-memory-report="format=json output=-" -o /dev/null | FileCheck %s --check-prefix=OFF
// RUN: joint-opt %s -verify-diagnostics -joint-activation-checkpoint=mode=full -joint-memory-report="format=json output=-" -o /dev/null | FileCheck %s --check-prefix=FULL
// RUN: joint-opt %s -verify-diagnostics -joint-activation-checkpoint=mode=selective -joint-memory-report="format=json output=-" -o /dev/null | FileCheck %s --check-prefix=SEL
// RUN: joint-opt %s -verify-diagnostics -joint-activation-checkpoint=mode=selective | FileCheck %s --check-prefix=IR

// OFF: "activation_bytes": 516,
// OFF: "fqn": "layers.0",
// OFF-NEXT: "activation_bytes": 512,
// FULL: "activation_bytes": 4,
// FULL: "fqn": "layers.0",
// FULL-NEXT: "activation_bytes": 0,
// SEL: "activation_bytes": 516,
// SEL: "fqn": "layers.0",
// SEL-NEXT: "activation_bytes": 512,

// The clone of relu gets storage 12; the backward views `t` (of the clone)
// and `alias_1` (of the clone of the forward view `alias`) follow it.
// IR: %relu_recomputed = joint.call_function "aten::relu.default"(%mm) {{.*}}storage = 12>]
// IR: %t = joint.call_function "aten::t.default"(%relu_recomputed) {{.*}}result_meta = [#joint.tensor<[16, 8], strides = [1, 16], offset = 0, device = "cpu", storage = 12>]
// IR: %alias_recomputed = joint.call_function "aten::alias.default"(%relu_recomputed) {{.*}}storage = 12>]
// IR: %alias_1 = joint.call_function "aten::alias.default"(%alias_recomputed) {{.*}}storage = 12>]
module {
  // expected-remark-re @+2 {{joint-tag-recompute-policy: {{(mode=full, 1 of 1 blocks selected; must_save 1, must_recompute 3, prefer_recompute 0|mode=selective, 1 of 1 blocks selected; must_save 2, must_recompute 0, prefer_recompute 2)}}}}
  // expected-remark-re @+1 {{joint-remat: {{(2 ops recomputed, 1 originals erased, 0 reload chains moved|3 ops recomputed, 1 originals erased, 0 reload chains moved)}}}}
  joint.graph @view_of_recomputed_clone(%layers.0.w: tensor<16x16xf32> {joint.fqn = "layers.0.w", joint.meta = #joint.tensor<[16, 16], strides = [16, 1], offset = 0, device = "cpu", storage = 0>, joint.name = "arg0_1", joint.role = #joint.role<param>}, %layers.0.v: tensor<16x16xf32> {joint.fqn = "layers.0.v", joint.meta = #joint.tensor<[16, 16], strides = [16, 1], offset = 0, device = "cpu", storage = 1>, joint.name = "arg1_1", joint.requires_grad = true, joint.role = #joint.role<param>}, %x: tensor<8x16xf32> {joint.meta = #joint.tensor<[8, 16], strides = [16, 1], offset = 0, device = "cpu", storage = 2>, joint.name = "arg2_1", joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<f32> {joint.role = #joint.role<loss>}, tensor<16x16xf32> {joint.fqn = "layers.0.w", joint.role = #joint.role<grad>}, tensor<16x16xf32> {joint.fqn = "layers.0.v", joint.role = #joint.role<grad>}) attributes {joint.backward_tags = "engine", joint.format_minor = 0 : i64, joint.model = {attention = [], block_containers = [{block_class = "ReluBlock", blocks = ["layers.0"], container = "layers", owner = ""}], rule = "gradient_checkpointing"}, joint.producer = {name = "joint_mlir", torch = "2.15.0", version = "0.1.0"}, joint.symbols = []} {
    %mm = joint.call_function "aten::mm.default"(%x, %layers.0.w) {module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "ReluBlock">], name = "mm", result_meta = [#joint.tensor<[8, 16], strides = [16, 1], offset = 0, device = "cpu", storage = 3>], seq_nr = 0 : i64} : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
    %relu = joint.call_function "aten::relu.default"(%mm) {module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "ReluBlock">], name = "relu", result_meta = [#joint.tensor<[8, 16], strides = [16, 1], offset = 0, device = "cpu", storage = 4>], seq_nr = 1 : i64} : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %alias = joint.call_function "aten::alias.default"(%relu) {module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "ReluBlock">], name = "alias", result_meta = [#joint.tensor<[8, 16], strides = [16, 1], offset = 0, device = "cpu", storage = 4>], seq_nr = 2 : i64} : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %mm_1 = joint.call_function "aten::mm.default"(%relu, %layers.0.v) {module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "ReluBlock">], name = "mm_1", result_meta = [#joint.tensor<[8, 16], strides = [16, 1], offset = 0, device = "cpu", storage = 5>], seq_nr = 3 : i64} : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
    %sum_1 = joint.call_function "aten::sum.default"(%mm_1) {name = "sum_1", result_meta = [#joint.tensor<[], strides = [], offset = 0, device = "cpu", storage = 6>], seq_nr = 4 : i64} : (tensor<8x16xf32>) -> tensor<f32>
    %ones_like = joint.call_function "aten::ones_like.default"(%sum_1) {args = [#joint.operand<0>], kwargs = {memory_format = #joint.memory_format<preserve_format>, pin_memory = false}, name = "ones_like", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[], strides = [], offset = 0, device = "cpu", storage = 7>], seq_nr = 4 : i64} : (tensor<f32>) -> tensor<f32>
    %expand = joint.call_function "aten::expand.default"(%ones_like) {args = [#joint.operand<0>, [8, 16]], name = "expand", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[8, 16], strides = [0, 0], offset = 0, device = "cpu", storage = 7>], seq_nr = 4 : i64} : (tensor<f32>) -> tensor<8x16xf32>
    %t = joint.call_function "aten::t.default"(%relu) {module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "ReluBlock">], name = "t", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[16, 8], strides = [1, 16], offset = 0, device = "cpu", storage = 4>], seq_nr = 3 : i64} : (tensor<8x16xf32>) -> tensor<16x8xf32>
    %mm_2 = joint.call_function "aten::mm.default"(%t, %expand) {module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "ReluBlock">], name = "mm_2", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[16, 16], strides = [16, 1], offset = 0, device = "cpu", storage = 8>], seq_nr = 3 : i64} : (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
    %t_1 = joint.call_function "aten::t.default"(%layers.0.v) {module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "ReluBlock">], name = "t_1", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[16, 16], strides = [1, 16], offset = 0, device = "cpu", storage = 1>], seq_nr = 3 : i64} : (tensor<16x16xf32>) -> tensor<16x16xf32>
    %mm_3 = joint.call_function "aten::mm.default"(%expand, %t_1) {module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "ReluBlock">], name = "mm_3", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[8, 16], strides = [16, 1], offset = 0, device = "cpu", storage = 9>], seq_nr = 3 : i64} : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
    %alias_1 = joint.call_function "aten::alias.default"(%alias) {module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "ReluBlock">], name = "alias_1", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[8, 16], strides = [16, 1], offset = 0, device = "cpu", storage = 4>], seq_nr = 1 : i64} : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %threshold_backward = joint.call_function "aten::threshold_backward.default"(%mm_3, %alias_1) {args = [#joint.operand<0>, #joint.operand<1>, 0], module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "ReluBlock">], name = "threshold_backward", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[8, 16], strides = [16, 1], offset = 0, device = "cpu", storage = 10>], seq_nr = 1 : i64} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %t_2 = joint.call_function "aten::t.default"(%x) {module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "ReluBlock">], name = "t_2", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[16, 8], strides = [1, 16], offset = 0, device = "cpu", storage = 2>], seq_nr = 0 : i64} : (tensor<8x16xf32>) -> tensor<16x8xf32>
    %mm_4 = joint.call_function "aten::mm.default"(%t_2, %threshold_backward) {module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "ReluBlock">], name = "mm_4", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[16, 16], strides = [16, 1], offset = 0, device = "cpu", storage = 11>], seq_nr = 0 : i64} : (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
    joint.output %sum_1, %mm_4, %mm_2 : tensor<f32>, tensor<16x16xf32>, tensor<16x16xf32>
  }
}


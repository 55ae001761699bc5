// A backward size query (sym_size, sym_stride, sym_numel) of a forward
// tensor reads the SymInt computed in the forward, never the tensor, so the
// tensor is neither saved nor recomputed for its size (joint-remat, before
// cloning).
// RUN: joint-opt %s -verify-diagnostics -split-input-file -joint-activation-checkpoint=mode=full | FileCheck %s --check-prefixes=CHECK,FULL
// RUN: joint-opt %s -verify-diagnostics -split-input-file -joint-activation-checkpoint=mode=selective | FileCheck %s --check-prefixes=CHECK,SEL

// Dynamic first dimension s (x [s, 16]), one block computing
// cat([x @ w, x @ w]).sum(0), loss sum (exported by joint_mlir.export with
// dynamic_dims={"x": 0}, operator table dropped). The backward's
// sym_size(cat, 0) moves right after cat; nothing is recomputed (before:
// full cloned mm, mm_1 and cat, selective cloned cat reading the saved mms).
// CHECK-LABEL: joint.graph @backward_size_query
// FULL: %cat = joint.call_function "aten::cat.default"(%mm, %mm_1) {{.*}}policy = #joint.policy<must_recompute>
// SEL: %cat = joint.call_function "aten::cat.default"(%mm, %mm_1) {{.*}}policy = #joint.policy<prefer_recompute>
// CHECK-NEXT: %sym_size_int = joint.call_function "aten::sym_size.int"(%cat) {args = [#joint.operand<0>, 0], module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "CatBlock">], name = "sym_size_int", result_meta = [#joint.sym<sym("2*s93", 16)>], seq_nr = 3 : i64}
// CHECK-NEXT: %sum_1 = joint.call_function "aten::sum.dim_IntList"(%cat)
// CHECK: %expand_1 = joint.call_function "aten::expand.default"(%unsqueeze, %sym_size_int)
// CHECK-NOT: recomputed_from
// CHECK: joint.output
// expected-remark-re @+3 {{joint-tag-recompute-policy: {{(mode=full, 1 of 1 blocks selected; must_save 1, must_recompute 3, prefer_recompute 0|mode=selective, 1 of 1 blocks selected; must_save 3, must_recompute 0, prefer_recompute 1)}}}}
// expected-warning-re @+2 {{joint-remat: {{(1 forward ops are tagged for recompute but the backward reads none of them; nothing was recomputed \(the graph may already contain eager activation checkpointing\)|3 forward ops are tagged for recompute but the backward reads none of them; nothing was recomputed \(the graph may already contain eager activation checkpointing\))}}}}
// expected-remark @+1 {{joint-remat: 0 ops recomputed, 0 originals erased, 0 reload chains moved}}
joint.graph @backward_size_query(%layers.0.w: tensor<16x16xf32> {joint.fqn = "layers.0.w", joint.meta = #joint.tensor<[16, 16], strides = [16, 1], offset = 0, device = "cpu", storage = 0>, joint.name = "arg0_1", joint.role = #joint.role<param>}, %x: tensor<?x16xf32> {joint.meta = #joint.tensor<[sym("s93", 8), 16], strides = [16, 1], offset = 0, device = "cpu", storage = 1>, joint.name = "arg1_1", joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<f32> {joint.role = #joint.role<loss>}, tensor<16x16xf32> {joint.fqn = "layers.0.w", joint.role = #joint.role<grad>}) attributes {joint.backward_tags = "engine", joint.format_minor = 0 : i64, joint.model = {attention = [], block_containers = [{block_class = "CatBlock", blocks = ["layers.0"], container = "layers", owner = ""}], rule = "gradient_checkpointing"}, joint.producer = {name = "joint_mlir", torch = "2.15.0", version = "0.1.0"}, joint.symbols = [{hint = 8 : i64, max, min = 2 : i64, name = "s93", sources = ["x.size()[0]"]}]} {
  %mm = joint.call_function "aten::mm.default"(%x, %layers.0.w) {module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "CatBlock">], name = "mm", result_meta = [#joint.tensor<[sym("s93", 8), 16], strides = [16, 1], offset = 0, device = "cpu", storage = 2>], seq_nr = 0 : i64} : (tensor<?x16xf32>, tensor<16x16xf32>) -> tensor<?x16xf32>
  %mm_1 = joint.call_function "aten::mm.default"(%x, %layers.0.w) {module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "CatBlock">], name = "mm_1", result_meta = [#joint.tensor<[sym("s93", 8), 16], strides = [16, 1], offset = 0, device = "cpu", storage = 3>], seq_nr = 1 : i64} : (tensor<?x16xf32>, tensor<16x16xf32>) -> tensor<?x16xf32>
  %cat = joint.call_function "aten::cat.default"(%mm, %mm_1) {args = [[#joint.operand<0>, #joint.operand<1>]], module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "CatBlock">], name = "cat", result_meta = [#joint.tensor<[sym("2*s93", 16), 16], strides = [16, 1], offset = 0, device = "cpu", storage = 4>], seq_nr = 2 : i64} : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %sum_1 = joint.call_function "aten::sum.dim_IntList"(%cat) {args = [#joint.operand<0>, [0]], module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "CatBlock">], name = "sum_1", result_meta = [#joint.tensor<[16], strides = [1], offset = 0, device = "cpu", storage = 5>], seq_nr = 3 : i64} : (tensor<?x16xf32>) -> tensor<16xf32>
  %sum_2 = joint.call_function "aten::sum.default"(%sum_1) {name = "sum_2", result_meta = [#joint.tensor<[], strides = [], offset = 0, device = "cpu", storage = 6>], seq_nr = 4 : i64} : (tensor<16xf32>) -> tensor<f32>
  %ones_like = joint.call_function "aten::ones_like.default"(%sum_2) {args = [#joint.operand<0>], kwargs = {memory_format = #joint.memory_format<preserve_format>, pin_memory = false}, name = "ones_like", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[], strides = [], offset = 0, device = "cpu", storage = 7>], seq_nr = 4 : i64} : (tensor<f32>) -> tensor<f32>
  %expand = joint.call_function "aten::expand.default"(%ones_like) {args = [#joint.operand<0>, [16]], name = "expand", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[16], strides = [0], offset = 0, device = "cpu", storage = 7>], seq_nr = 4 : i64} : (tensor<f32>) -> tensor<16xf32>
  %unsqueeze = joint.call_function "aten::unsqueeze.default"(%expand) {args = [#joint.operand<0>, 0], module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "CatBlock">], name = "unsqueeze", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[1, 16], strides = [0, 0], offset = 0, device = "cpu", storage = 7>], seq_nr = 3 : i64} : (tensor<16xf32>) -> tensor<1x16xf32>
  %sym_size_int = joint.call_function "aten::sym_size.int"(%cat) {args = [#joint.operand<0>, 0], module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "CatBlock">], name = "sym_size_int", phase = #joint.phase<backward>, result_meta = [#joint.sym<sym("2*s93", 16)>], seq_nr = 3 : i64} : (tensor<?x16xf32>) -> i64
  %expand_1 = joint.call_function "aten::expand.default"(%unsqueeze, %sym_size_int) {args = [#joint.operand<0>, [#joint.operand<1>, 16]], module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "CatBlock">], name = "expand_1", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[sym("2*s93", 16), 16], strides = [0, 0], offset = 0, device = "cpu", storage = 7>], seq_nr = 3 : i64} : (tensor<1x16xf32>, i64) -> tensor<?x16xf32>
  %sym_size_int_1 = joint.call_function "aten::sym_size.int"(%x) {args = [#joint.operand<0>, 0], module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "CatBlock">], name = "sym_size_int_1", phase = #joint.phase<backward>, result_meta = [#joint.sym<sym("s93", 8)>], seq_nr = 2 : i64} : (tensor<?x16xf32>) -> i64
  %add = joint.call_function "operator::add"(%sym_size_int_1) {args = [0, #joint.operand<0>], module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "CatBlock">], name = "add", phase = #joint.phase<backward>, result_meta = [#joint.sym<sym("s93", 8)>], seq_nr = 2 : i64} : (i64) -> i64
  %add_1 = joint.call_function "operator::add"(%sym_size_int_1) {args = [0, #joint.operand<0>], module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "CatBlock">], name = "add_1", phase = #joint.phase<backward>, result_meta = [#joint.sym<sym("s93", 8)>], seq_nr = 2 : i64} : (i64) -> i64
  %slice_1 = joint.call_function "aten::slice.Tensor"(%expand_1, %add_1) {args = [#joint.operand<0>, 0, 0, #joint.operand<1>], module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "CatBlock">], name = "slice_1", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[sym("s93", 8), 16], strides = [0, 0], offset = 0, device = "cpu", storage = 7>], seq_nr = 2 : i64} : (tensor<?x16xf32>, i64) -> tensor<?x16xf32>
  %add_2 = joint.call_function "operator::add"(%add, %sym_size_int_1) {module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "CatBlock">], name = "add_2", phase = #joint.phase<backward>, result_meta = [#joint.sym<sym("2*s93", 16)>], seq_nr = 2 : i64} : (i64, i64) -> i64
  %sub_2 = joint.call_function "operator::sub"(%add_2, %sym_size_int_1) {module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "CatBlock">], name = "sub_2", phase = #joint.phase<backward>, result_meta = [#joint.sym<sym("s93", 8)>], seq_nr = 2 : i64} : (i64, i64) -> i64
  %add_3 = joint.call_function "operator::add"(%sub_2, %sym_size_int_1) {module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "CatBlock">], name = "add_3", phase = #joint.phase<backward>, result_meta = [#joint.sym<sym("2*s93", 16)>], seq_nr = 2 : i64} : (i64, i64) -> i64
  %slice_2 = joint.call_function "aten::slice.Tensor"(%expand_1, %sub_2, %add_3) {args = [#joint.operand<0>, 0, #joint.operand<1>, #joint.operand<2>], module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "CatBlock">], name = "slice_2", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[sym("s93", 8), 16], strides = [0, 0], offset = 0, device = "cpu", storage = 7>], seq_nr = 2 : i64} : (tensor<?x16xf32>, i64, i64) -> tensor<?x16xf32>
  %t = joint.call_function "aten::t.default"(%x) {module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "CatBlock">], name = "t", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[16, sym("s93", 8)], strides = [1, 16], offset = 0, device = "cpu", storage = 1>], seq_nr = 1 : i64} : (tensor<?x16xf32>) -> tensor<16x?xf32>
  %mm_2 = joint.call_function "aten::mm.default"(%t, %slice_2) {module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "CatBlock">], name = "mm_2", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[16, 16], strides = [16, 1], offset = 0, device = "cpu", storage = 8>], seq_nr = 1 : i64} : (tensor<16x?xf32>, tensor<?x16xf32>) -> tensor<16x16xf32>
  %t_1 = joint.call_function "aten::t.default"(%x) {module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "CatBlock">], name = "t_1", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[16, sym("s93", 8)], strides = [1, 16], offset = 0, device = "cpu", storage = 1>], seq_nr = 0 : i64} : (tensor<?x16xf32>) -> tensor<16x?xf32>
  %mm_3 = joint.call_function "aten::mm.default"(%t_1, %slice_1) {module_stack = [#joint.module<"", "OneBlock">, #joint.module<"layers.0", "CatBlock">], name = "mm_3", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[16, 16], strides = [16, 1], offset = 0, device = "cpu", storage = 9>], seq_nr = 0 : i64} : (tensor<16x?xf32>, tensor<?x16xf32>) -> tensor<16x16xf32>
  %add_4 = joint.call_function "aten::add.Tensor"(%mm_2, %mm_3) {name = "add_4", phase = #joint.phase<backward>, result_meta = [#joint.tensor<[16, 16], strides = [16, 1], offset = 0, device = "cpu", storage = 10>], seq_nr = 4 : i64} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  joint.output %sum_2, %add_4 : tensor<f32>, tensor<16x16xf32>
}

// -----

// An equal forward query already exists: the backward one reads it and is
// erased. Other size queries (sym_numel, sym_stride) move after the
// producer; queries of graph inputs and of backward tensors stay.
#l0 = [#joint.module<"layers.0", "Block">]
// CHECK-LABEL: joint.graph @size_queries_read_forward_symints
// CHECK-NEXT: %a = joint.call_function "aten::exp.default"(%x)
// CHECK-NEXT: %n = joint.call_function "aten::sym_numel.default"(%a) {name = "n"}
// CHECK-NEXT: %st = joint.call_function "aten::sym_stride.int"(%a) {args = [#joint.operand<0>, 0], name = "st"}
// CHECK-NEXT: %s = joint.call_function "aten::sym_size.int"(%a) {args = [#joint.operand<0>, 0], module_stack = [#joint.module<"layers.0", "Block">], name = "s", policy = #joint.policy<must_save>}
// CHECK-NEXT: %g = joint.call_function "aten::neg.default"(%x) {name = "g", phase = #joint.phase<backward>}
// CHECK-NEXT: %xs = joint.call_function "aten::sym_size.int"(%x) {args = [#joint.operand<0>, 0], name = "xs", phase = #joint.phase<backward>}
// CHECK-NEXT: %gs = joint.call_function "aten::sym_size.int"(%g) {args = [#joint.operand<0>, 0], name = "gs", phase = #joint.phase<backward>}
// CHECK-NEXT: %e = joint.call_function "aten::new_empty.default"(%g, %s, %n, %st, %xs, %gs)
// CHECK-NOT: recomputed_from
// expected-remark-re @+3 {{joint-tag-recompute-policy: {{(mode=full, 1 of 1 blocks selected; must_save 1, must_recompute 1, prefer_recompute 0|mode=selective, 1 of 1 blocks selected; must_save 1, must_recompute 0, prefer_recompute 1)}}}}
// expected-warning @+2 {{joint-remat: 1 forward ops are tagged for recompute but the backward reads none of them; nothing was recomputed (the graph may already contain eager activation checkpointing)}}
// expected-remark @+1 {{joint-remat: 0 ops recomputed, 0 originals erased, 0 reload chains moved}}
joint.graph @size_queries_read_forward_symints(%x: tensor<?xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () attributes {joint.model = {block_containers = [{blocks = ["layers.0"]}]}} {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a", module_stack = #l0} : (tensor<?xf32>) -> tensor<?xf32>
  %s = joint.call_function "aten::sym_size.int"(%a) {name = "s", args = [#joint.operand<0>, 0], module_stack = #l0} : (tensor<?xf32>) -> i64
  %g = joint.call_function "aten::neg.default"(%x) {name = "g", phase = #joint.phase<backward>} : (tensor<?xf32>) -> tensor<?xf32>
  %bs = joint.call_function "aten::sym_size.int"(%a) {name = "bs", args = [#joint.operand<0>, 0], phase = #joint.phase<backward>} : (tensor<?xf32>) -> i64
  %n = joint.call_function "aten::sym_numel.default"(%a) {name = "n", phase = #joint.phase<backward>} : (tensor<?xf32>) -> i64
  %st = joint.call_function "aten::sym_stride.int"(%a) {name = "st", args = [#joint.operand<0>, 0], phase = #joint.phase<backward>} : (tensor<?xf32>) -> i64
  %xs = joint.call_function "aten::sym_size.int"(%x) {name = "xs", args = [#joint.operand<0>, 0], phase = #joint.phase<backward>} : (tensor<?xf32>) -> i64
  %gs = joint.call_function "aten::sym_size.int"(%g) {name = "gs", args = [#joint.operand<0>, 0], phase = #joint.phase<backward>} : (tensor<?xf32>) -> i64
  %e = joint.call_function "aten::new_empty.default"(%g, %bs, %n, %st, %xs, %gs) {name = "e", phase = #joint.phase<backward>} : (tensor<?xf32>, i64, i64, i64, i64, i64) -> tensor<?xf32>
  joint.output
}

// joint-tag-recompute-policy: one case per rule (docs/passes.md,
// "Activation checkpointing").
// RUN: joint-opt %s -verify-diagnostics -split-input-file -joint-tag-recompute-policy="mode=full" | FileCheck %s --check-prefixes=CHECK,FULL
// RUN: joint-opt %s -verify-diagnostics -split-input-file -joint-tag-recompute-policy="mode=selective" | FileCheck %s --check-prefixes=CHECK,SEL
// RUN: joint-opt %s -verify-diagnostics -split-input-file -joint-tag-recompute-policy="mode=full save-forward-all-gather=true" | FileCheck %s --check-prefix=SAVEAG
// RUN: joint-opt %s -split-input-file -joint-tag-recompute-policy="mode=off" | FileCheck %s --check-prefix=OFF

// OFF-NOT: #joint.policy

#l0 = [#joint.module<"", "M">, #joint.module<"layers.0", "Block">, #joint.module<"layers.0.fc", "Linear">]
#l0act = [#joint.module<"", "M">, #joint.module<"layers.0", "Block">, #joint.module<"layers.0.act", "GELU">]
#l0blk = [#joint.module<"", "M">, #joint.module<"layers.0", "Block">]
#head = [#joint.module<"", "M">, #joint.module<"head", "Linear">]
joint.schema @"aten::topk.default" {schema = "aten::topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)", arguments = [#joint.arg<name = "self", type = "Tensor">, #joint.arg<name = "k", type = "SymInt">], returns = [#joint.arg<name = "values", type = "Tensor">, #joint.arg<name = "indices", type = "Tensor">]}
// CHECK-LABEL: joint.graph @mode_policy_and_scope
// Embedding/head/loss outside every block are never tagged.
// CHECK: name = "embed"}
// FULL: name = "mm", policy = #joint.policy<must_recompute>}
// SEL: name = "mm", policy = #joint.policy<must_save>}
// FULL: name = "gelu", policy = #joint.policy<must_recompute>}
// SEL: name = "gelu", policy = #joint.policy<prefer_recompute>}
// FULL: name = "topk", policy = #joint.policy<must_recompute>
// SEL: name = "topk", policy = #joint.policy<must_recompute>
// The block's output is read outside every block (cross-unit).
// CHECK: name = "out", policy = #joint.policy<must_save>}
// CHECK: name = "head"}
// CHECK: name = "loss"}
// CHECK: name = "gelu_backward", phase = #joint.phase<backward>}
// expected-remark-re @+1 {{joint-tag-recompute-policy: {{(mode=full, 1 of 1 blocks selected; must_save 1, must_recompute 3, prefer_recompute 0|mode=selective, 1 of 1 blocks selected; must_save 2, must_recompute 1, prefer_recompute 1)}}}}
joint.graph @mode_policy_and_scope(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %w: tensor<4x4xf32> {joint.role = #joint.role<param>, joint.fqn = "layers.0.fc.weight"}) -> () attributes {joint.model = {block_containers = [{blocks = ["layers.0"]}]}} {
  %e = joint.call_function "aten::neg.default"(%x) {name = "embed", module_stack = [#joint.module<"", "M">, #joint.module<"embed", "Embedding">]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %0 = joint.call_function "aten::mm.default"(%e, %w) {name = "mm", module_stack = #l0} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = joint.call_function "aten::gelu.default"(%0) {name = "gelu", module_stack = #l0act} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %2:2 = joint.call_function "aten::topk.default"(%1) {name = "topk", args = [#joint.operand<0>, 2], module_stack = #l0act, result_names = ["v", "i"]} : (tensor<4x4xf32>) -> (tensor<4x2xf32>, tensor<4x2xi64>)
  %o = joint.call_function "aten::neg.default"(%1) {name = "out", module_stack = #l0blk} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %3 = joint.call_function "aten::mm.default"(%o, %w) {name = "head", module_stack = #head} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %4 = joint.call_function "aten::sum.default"(%3) {name = "loss"} : (tensor<4x4xf32>) -> tensor<f32>
  %5 = joint.call_function "aten::gelu_backward.default"(%3, %0) {name = "gelu_backward", phase = #joint.phase<backward>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// RNG producers (tag nondeterministic_seeded) stay saved in every mode;
// one whose value backward never reads is fine.
#l0 = [#joint.module<"layers.0", "Block">]
joint.schema @"aten::rand_like.default" {schema = "aten::rand_like(Tensor self) -> Tensor", arguments = [#joint.arg<name = "self", type = "Tensor">], returns = [#joint.arg<type = "Tensor">], tags = ["nondeterministic_seeded"]}
joint.schema @"aten::native_dropout.default" {schema = "aten::native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)", arguments = [#joint.arg<name = "input", type = "Tensor">, #joint.arg<name = "p", type = "float">, #joint.arg<name = "train", type = "bool?">], returns = [#joint.arg<type = "Tensor">, #joint.arg<type = "Tensor">], tags = ["nondeterministic_seeded"]}
// CHECK-LABEL: joint.graph @rng_ops_stay_saved_in_every_mode
// CHECK: name = "rand_like", policy = #joint.policy<must_save>}
// FULL: name = "gt", policy = #joint.policy<must_recompute>}
// SEL: name = "gt", policy = #joint.policy<prefer_recompute>}
// CHECK: name = "native_dropout", policy = #joint.policy<must_save>
// CHECK: name = "unused_rand", policy = #joint.policy<must_save>}
// expected-remark-re @+1 {{joint-tag-recompute-policy: {{(mode=full, 1 of 1 blocks selected; must_save 3, must_recompute 1, prefer_recompute 0|mode=selective, 1 of 1 blocks selected; must_save 3, must_recompute 0, prefer_recompute 1)}}}}
joint.graph @rng_ops_stay_saved_in_every_mode(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () attributes {joint.model = {block_containers = [{blocks = ["layers.0"]}]}} {
  %r = joint.call_function "aten::rand_like.default"(%x) {name = "rand_like", module_stack = #l0} : (tensor<4xf32>) -> tensor<4xf32>
  %m = joint.call_function "aten::gt.Scalar"(%r) {name = "gt", args = [#joint.operand<0>, 1.0e-01], module_stack = #l0} : (tensor<4xf32>) -> tensor<4xi1>
  %d:2 = joint.call_function "aten::native_dropout.default"(%x) {name = "native_dropout", args = [#joint.operand<0>, 1.0e-01, true], module_stack = #l0, result_names = ["d", "mask"]} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  %u = joint.call_function "aten::rand_like.default"(%x) {name = "unused_rand", module_stack = #l0} : (tensor<4xf32>) -> tensor<4xf32>
  %g = joint.call_function "aten::native_dropout_backward.default"(%x, %d#1) {name = "native_dropout_backward", args = [#joint.operand<0>, #joint.operand<1>, 1.1], phase = #joint.phase<backward>} : (tensor<4xf32>, tensor<4xi1>) -> tensor<4xf32>
  %h = joint.call_function "aten::mul.Tensor"(%x, %m) {name = "use_mask", phase = #joint.phase<backward>} : (tensor<4xf32>, tensor<4xi1>) -> tensor<4xf32>
  joint.output
}

// -----

// SymInt-valued ops stay saved: backward reads them as sizes.
#l0 = [#joint.module<"layers.0", "Block">]
// CHECK-LABEL: joint.graph @symint_op_stays_saved
// CHECK: name = "sym_size", policy = #joint.policy<must_save>}
// FULL: name = "view", policy = #joint.policy<must_recompute>}
// expected-remark-re @+1 {{joint-tag-recompute-policy: {{(mode=full, 1 of 1 blocks selected; must_save 1, must_recompute 1, prefer_recompute 0|mode=selective, 1 of 1 blocks selected; must_save 1, must_recompute 0, prefer_recompute 1)}}}}
joint.graph @symint_op_stays_saved(%x: tensor<?x4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () attributes {joint.model = {block_containers = [{blocks = ["layers.0"]}]}} {
  %s = joint.call_function "aten::sym_size.int"(%x) {name = "sym_size", args = [#joint.operand<0>, 0], module_stack = #l0} : (tensor<?x4xf32>) -> i64
  %v = joint.call_function "aten::view.default"(%x, %s) {name = "view", args = [#joint.operand<0>, [#joint.operand<1>, 4]], module_stack = #l0} : (tensor<?x4xf32>, i64) -> tensor<?x4xf32>
  joint.output
}

// -----

// The communication set (reduce-scatter, all-to-all, in-place
// all-reduce) is saved in every mode; forward all-gathers follow the mode
// unless save-forward-all-gather; wait_tensor inherits its producer.
#l0 = [#joint.module<"layers.0", "Block">]
// CHECK-LABEL: joint.graph @collectives
// CHECK: name = "reduce_scatter", policy = #joint.policy<must_save>}
// CHECK: name = "rs_wait", policy = #joint.policy<must_save>}
// CHECK: name = "all_to_all", policy = #joint.policy<must_save>}
// FULL: name = "all_gather", policy = #joint.policy<must_recompute>}
// FULL: name = "ag_wait", policy = #joint.policy<must_recompute>}
// FULL: name = "mm", policy = #joint.policy<must_recompute>}
// SEL: name = "all_gather", policy = #joint.policy<prefer_recompute>}
// SEL: name = "ag_wait", policy = #joint.policy<prefer_recompute>}
// SEL: name = "mm", policy = #joint.policy<must_save>}
// SAVEAG-LABEL: joint.graph @collectives
// SAVEAG: name = "all_gather", policy = #joint.policy<must_save>}
// SAVEAG: name = "ag_wait", policy = #joint.policy<must_save>}
// SAVEAG: name = "mm", policy = #joint.policy<must_recompute>}
// expected-remark-re @+1 {{joint-tag-recompute-policy: {{(mode=full, 1 of 1 blocks selected; must_save 3, must_recompute 3, prefer_recompute 0|mode=full, 1 of 1 blocks selected; must_save 5, must_recompute 1, prefer_recompute 0|mode=selective, 1 of 1 blocks selected; must_save 4, must_recompute 0, prefer_recompute 2)}}}}
joint.graph @collectives(%x: tensor<8x4xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %a: tensor<4x8xf32> {joint.role = #joint.role<input>, joint.path = "a"}) -> () attributes {joint.model = {block_containers = [{blocks = ["layers.0"]}]}} {
  %rs = joint.call_function "_c10d_functional::reduce_scatter_tensor.default"(%x) {name = "reduce_scatter", args = [#joint.operand<0>, "sum", 8, "g"], module_stack = #l0} : (tensor<8x4xf32>) -> tensor<1x4xf32>
  %rsw = joint.call_function "_c10d_functional::wait_tensor.default"(%rs) {name = "rs_wait", module_stack = #l0} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %aa = joint.call_function "_c10d_functional::all_to_all_single.default"(%x) {name = "all_to_all", args = [#joint.operand<0>, [1], [1], "g"], module_stack = #l0} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %ag = joint.call_function "_c10d_functional::all_gather_into_tensor.default"(%x) {name = "all_gather", args = [#joint.operand<0>, 8, "g"], module_stack = #l0} : (tensor<8x4xf32>) -> tensor<64x4xf32>
  %w = joint.call_function "_c10d_functional::wait_tensor.default"(%ag) {name = "ag_wait", module_stack = #l0} : (tensor<64x4xf32>) -> tensor<64x4xf32>
  %y = joint.call_function "aten::mm.default"(%a, %x) {name = "mm", module_stack = #l0} : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %b = joint.call_function "aten::neg.default"(%w) {name = "bwd", phase = #joint.phase<backward>} : (tensor<64x4xf32>) -> tensor<64x4xf32>
  joint.output
}

// -----

// An in-place activation on a recompute candidate. The writer, its
// consumers, the producer of the written storage and every reader of it
// (through views) stay saved.
#l0 = [#joint.module<"layers.0", "Block">]
joint.schema @"aten::elu_.default" {schema = "aten::elu_(Tensor(a!) self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor(a!)", arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>], returns = [#joint.arg<type = "Tensor", alias = "a", write = true>], is_mutable}
joint.schema @"aten::view.default" {schema = "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)", arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a">, #joint.arg<name = "size", type = "SymInt[]">], returns = [#joint.arg<type = "Tensor", alias = "a">]}
// CHECK-LABEL: joint.graph @inplace_op_and_alias_closure_stay_saved
// CHECK: name = "mm", policy = #joint.policy<must_save>}
// CHECK: name = "view_y", policy = #joint.policy<must_save>}
// CHECK: name = "elu_", policy = #joint.policy<must_save>}
// CHECK: name = "sigmoid", policy = #joint.policy<must_save>}
// CHECK: name = "read_view", policy = #joint.policy<must_save>}
// FULL: name = "other", policy = #joint.policy<must_recompute>}
// expected-remark-re @+1 {{joint-tag-recompute-policy: {{(mode=full, 1 of 1 blocks selected; must_save 5, must_recompute 1, prefer_recompute 0|mode=selective, 1 of 1 blocks selected; must_save 5, must_recompute 0, prefer_recompute 1)}}}}
joint.graph @inplace_op_and_alias_closure_stay_saved(%x: tensor<4x4xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %w: tensor<4x4xf32> {joint.role = #joint.role<param>, joint.fqn = "w"}) -> () attributes {joint.model = {block_containers = [{blocks = ["layers.0"]}]}} {
  %y = joint.call_function "aten::mm.default"(%x, %w) {name = "mm", module_stack = #l0} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %v = joint.call_function "aten::view.default"(%y) {name = "view_y", args = [#joint.operand<0>, [16]], module_stack = #l0} : (tensor<4x4xf32>) -> tensor<16xf32>
  %y2 = joint.call_function "aten::elu_.default"(%y) {name = "elu_", module_stack = #l0} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %z = joint.call_function "aten::sigmoid.default"(%y2) {name = "sigmoid", module_stack = #l0} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = joint.call_function "aten::neg.default"(%v) {name = "read_view", module_stack = #l0} : (tensor<16xf32>) -> tensor<16xf32>
  %o = joint.call_function "aten::neg.default"(%x) {name = "other", module_stack = #l0} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = joint.call_function "aten::mul.Tensor"(%y2, %z) {name = "bwd", phase = #joint.phase<backward>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  joint.output
}

// -----

// A write through an op that returns nothing is found from the schema's
// write mark; `c`, the writer and every reader of that storage stay saved.
// A mutation outside the scope still counts (the embedding's write to `e`).
#l0 = [#joint.module<"layers.0", "Block">]
joint.schema @"custom::bump_.default" {schema = "custom::bump_(Tensor(a!) x) -> ()", arguments = [#joint.arg<name = "x", type = "Tensor", alias = "a", write = true>], returns = [], is_mutable}
// CHECK-LABEL: joint.graph @write_through_op_returning_nothing
// CHECK: name = "e"}
// CHECK: name = "bump_outside"}
// CHECK: name = "read_e", policy = #joint.policy<must_save>}
// CHECK: name = "clone", policy = #joint.policy<must_save>}
// CHECK: name = "bump_", policy = #joint.policy<must_save>}
// CHECK: name = "mul", policy = #joint.policy<must_save>}
// expected-remark-re @+1 {{joint-tag-recompute-policy: {{(mode=full, 1 of 1 blocks selected; must_save 4, must_recompute 0, prefer_recompute 0|mode=selective, 1 of 1 blocks selected; must_save 4, must_recompute 0, prefer_recompute 0)}}}}
joint.graph @write_through_op_returning_nothing(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () attributes {joint.model = {block_containers = [{blocks = ["layers.0"]}]}} {
  %e = joint.call_function "aten::neg.default"(%x) {name = "e"} : (tensor<4xf32>) -> tensor<4xf32>
  joint.call_function "custom::bump_.default"(%e) {name = "bump_outside"} : (tensor<4xf32>) -> ()
  %re = joint.call_function "aten::neg.default"(%e) {name = "read_e", module_stack = #l0} : (tensor<4xf32>) -> tensor<4xf32>
  %c = joint.call_function "aten::clone.default"(%x) {name = "clone", module_stack = #l0} : (tensor<4xf32>) -> tensor<4xf32>
  joint.call_function "custom::bump_.default"(%c) {name = "bump_", module_stack = #l0} : (tensor<4xf32>) -> ()
  %y = joint.call_function "aten::mul.Tensor"(%c, %c) {name = "mul", module_stack = #l0} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = joint.call_function "aten::mul.Tensor"(%c, %y) {name = "bwd", phase = #joint.phase<backward>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

// A write through one view reaches the base and its sibling views (storage
// identity from the tracer's facts).
#l0 = [#joint.module<"layers.0", "Block">]
joint.schema @"aten::add_.Tensor" {schema = "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", arguments = [#joint.arg<name = "self", type = "Tensor", alias = "a", write = true>, #joint.arg<name = "other", type = "Tensor">], returns = [#joint.arg<type = "Tensor", alias = "a", write = true>], is_mutable}
// CHECK-LABEL: joint.graph @write_through_view_saves_sibling_view_readers
// CHECK: name = "base", policy = #joint.policy<must_save>
// CHECK: name = "split", policy = #joint.policy<must_save>
// CHECK: name = "add_", policy = #joint.policy<must_save>
// CHECK: name = "read_sibling", policy = #joint.policy<must_save>
// FULL: name = "unrelated", policy = #joint.policy<must_recompute>
// expected-remark-re @+1 {{joint-tag-recompute-policy: {{(mode=full, 1 of 1 blocks selected; must_save 4, must_recompute 1, prefer_recompute 0|mode=selective, 1 of 1 blocks selected; must_save 4, must_recompute 0, prefer_recompute 1)}}}}
joint.graph @write_through_view_saves_sibling_view_readers(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x", joint.meta = #joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 0>}) -> () attributes {joint.model = {block_containers = [{blocks = ["layers.0"]}]}} {
  %b = joint.call_function "aten::exp.default"(%x) {name = "base", module_stack = #l0, result_meta = [#joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 1>]} : (tensor<4xf32>) -> tensor<4xf32>
  %s:2 = joint.call_function "aten::split.Tensor"(%b) {name = "split", args = [#joint.operand<0>, 2], module_stack = #l0, result_names = ["s0", "s1"], result_meta = [#joint.tensor<[2], strides = [1], offset = 0, device = "cpu", storage = 1>, #joint.tensor<[2], strides = [1], offset = 2, device = "cpu", storage = 1>]} : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  %a = joint.call_function "aten::add_.Tensor"(%s#0, %s#0) {name = "add_", module_stack = #l0, result_meta = [#joint.tensor<[2], strides = [1], offset = 0, device = "cpu", storage = 1>]} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %r = joint.call_function "aten::neg.default"(%s#1) {name = "read_sibling", module_stack = #l0, result_meta = [#joint.tensor<[2], strides = [1], offset = 0, device = "cpu", storage = 2>]} : (tensor<2xf32>) -> tensor<2xf32>
  %u = joint.call_function "aten::neg.default"(%x) {name = "unrelated", module_stack = #l0, result_meta = [#joint.tensor<[4], strides = [1], offset = 0, device = "cpu", storage = 3>]} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

// Cross-unit: a recomputable op read by a forward op in another block, or
// outside every block, stays saved; reads inside its own block do not.
#l0 = [#joint.module<"layers.0", "Block">]
#l1 = [#joint.module<"layers.1", "Block">]
// CHECK-LABEL: joint.graph @cross_unit_consumer_stays_saved
// FULL: name = "a0", policy = #joint.policy<must_recompute>}
// FULL: name = "out0", policy = #joint.policy<must_save>}
// FULL: name = "a1", policy = #joint.policy<must_recompute>}
// FULL: name = "out1", policy = #joint.policy<must_save>}
// FULL: name = "norm"}
// expected-remark-re @+1 {{joint-tag-recompute-policy: {{(mode=full, 2 of 2 blocks selected; must_save 2, must_recompute 2, prefer_recompute 0|mode=selective, 2 of 2 blocks selected; must_save 2, must_recompute 0, prefer_recompute 2)}}}}
joint.graph @cross_unit_consumer_stays_saved(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () attributes {joint.model = {block_containers = [{blocks = ["layers.0", "layers.1"]}]}} {
  %a0 = joint.call_function "aten::exp.default"(%x) {name = "a0", module_stack = #l0} : (tensor<4xf32>) -> tensor<4xf32>
  %o0 = joint.call_function "aten::neg.default"(%a0) {name = "out0", module_stack = #l0} : (tensor<4xf32>) -> tensor<4xf32>
  %a1 = joint.call_function "aten::exp.default"(%o0) {name = "a1", module_stack = #l1} : (tensor<4xf32>) -> tensor<4xf32>
  %o1 = joint.call_function "aten::neg.default"(%a1) {name = "out1", module_stack = #l1} : (tensor<4xf32>) -> tensor<4xf32>
  %n = joint.call_function "aten::neg.default"(%o1) {name = "norm"} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

// Without joint.model, blocks come from module-stack paths <container>.<int>
// (outermost only: `experts.0` inside a block is not a block, else
// in_block would be read across units and saved).
// CHECK-LABEL: joint.graph @module_stack_fallback_finds_blocks
// FULL: name = "in_block", policy = #joint.policy<must_recompute>}
// FULL: name = "in_expert", policy = #joint.policy<must_save>}
// FULL: name = "outside"}
// expected-remark-re @+1 {{joint-tag-recompute-policy: {{(mode=full, 1 of 1 blocks selected; must_save 1, must_recompute 1, prefer_recompute 0|mode=selective, 1 of 1 blocks selected; must_save 1, must_recompute 0, prefer_recompute 1)}}}}
joint.graph @module_stack_fallback_finds_blocks(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () {
  %a = joint.call_function "aten::exp.default"(%x) {name = "in_block", module_stack = [#joint.module<"", "M">, #joint.module<"model.h.0", "Block">]} : (tensor<4xf32>) -> tensor<4xf32>
  %b = joint.call_function "aten::exp.default"(%a) {name = "in_expert", module_stack = [#joint.module<"", "M">, #joint.module<"model.h.0", "Block">, #joint.module<"model.h.0.experts.0", "Expert">]} : (tensor<4xf32>) -> tensor<4xf32>
  %c = joint.call_function "aten::exp.default"(%b) {name = "outside", module_stack = [#joint.module<"", "M">, #joint.module<"model.norm", "Norm">]} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

// A block that calls a child again inside one traversal (fc, act, fc, proj)
// is one unit: nothing inside it is saved for crossing units.
#fc = [#joint.module<"layers.0", "Block">, #joint.module<"layers.0.fc", "Linear">]
#act = [#joint.module<"layers.0", "Block">, #joint.module<"layers.0.act", "GELU">]
#proj = [#joint.module<"layers.0", "Block">, #joint.module<"layers.0.proj", "Linear">]
// CHECK-LABEL: joint.graph @child_reused_inside_block_is_one_unit
// FULL: name = "fc1", policy = #joint.policy<must_recompute>}
// FULL: name = "act", policy = #joint.policy<must_recompute>}
// FULL: name = "fc2", policy = #joint.policy<must_recompute>}
// FULL: name = "proj", policy = #joint.policy<must_recompute>}
// expected-remark-re @+1 {{joint-tag-recompute-policy: {{(mode=full, 1 of 1 blocks selected; must_save 0, must_recompute 4, prefer_recompute 0|mode=selective, 1 of 1 blocks selected; must_save 0, must_recompute 0, prefer_recompute 4)}}}}
joint.graph @child_reused_inside_block_is_one_unit(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () attributes {joint.model = {block_containers = [{blocks = ["layers.0"]}]}} {
  %a = joint.call_function "aten::exp.default"(%x) {name = "fc1", module_stack = #fc} : (tensor<4xf32>) -> tensor<4xf32>
  %b = joint.call_function "aten::exp.default"(%a) {name = "act", module_stack = #act} : (tensor<4xf32>) -> tensor<4xf32>
  %c = joint.call_function "aten::exp.default"(%b) {name = "fc2", module_stack = #fc} : (tensor<4xf32>) -> tensor<4xf32>
  %d = joint.call_function "aten::exp.default"(%c) {name = "proj", module_stack = #proj} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

// -----

// A recompute policy the graph already carries outside the scope obeys the
// structural exceptions; a transparent op whose producer ends up saved by a
// later rule (here cross-unit) is saved with it.
#l0 = [#joint.module<"layers.0", "Block">]
#l1 = [#joint.module<"layers.1", "Block">]
joint.schema @"aten::rand_like.default" {schema = "aten::rand_like(Tensor self) -> Tensor", arguments = [#joint.arg<name = "self", type = "Tensor">], returns = [#joint.arg<type = "Tensor">], tags = ["nondeterministic_seeded"]}
// CHECK-LABEL: joint.graph @existing_tags_and_transparent_follow_saves
// CHECK: name = "rand_outside", policy = #joint.policy<must_save>}
// CHECK: name = "exp_outside", policy = #joint.policy<prefer_recompute>}
// FULL: name = "all_gather", policy = #joint.policy<must_save>}
// FULL: name = "ag_wait", policy = #joint.policy<must_save>}
// mode=off leaves the graph's own tags alone and adds none.
// OFF: name = "rand_outside", policy = #joint.policy<prefer_recompute>}
// OFF-NEXT: name = "exp_outside", policy = #joint.policy<prefer_recompute>}
// OFF-NOT: #joint.policy
// expected-remark-re @+1 {{joint-tag-recompute-policy: {{(mode=full, 2 of 2 blocks selected; must_save 3, must_recompute 2, prefer_recompute 1|mode=selective, 2 of 2 blocks selected; must_save 3, must_recompute 0, prefer_recompute 3)}}}}
joint.graph @existing_tags_and_transparent_follow_saves(%x: tensor<8x4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () attributes {joint.model = {block_containers = [{blocks = ["layers.0", "layers.1"]}]}} {
  %r = joint.call_function "aten::rand_like.default"(%x) {name = "rand_outside", policy = #joint.policy<prefer_recompute>} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %e = joint.call_function "aten::exp.default"(%x) {name = "exp_outside", policy = #joint.policy<prefer_recompute>} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %ag = joint.call_function "_c10d_functional::all_gather_into_tensor.default"(%x) {name = "all_gather", args = [#joint.operand<0>, 8, "g"], module_stack = #l0} : (tensor<8x4xf32>) -> tensor<64x4xf32>
  %w = joint.call_function "_c10d_functional::wait_tensor.default"(%ag) {name = "ag_wait", module_stack = #l0} : (tensor<64x4xf32>) -> tensor<64x4xf32>
  %n = joint.call_function "aten::neg.default"(%w) {name = "use_wait", module_stack = #l0} : (tensor<64x4xf32>) -> tensor<64x4xf32>
  %m = joint.call_function "aten::neg.default"(%ag) {name = "other_block", module_stack = #l1} : (tensor<64x4xf32>) -> tensor<64x4xf32>
  joint.output
}

// A document that lists containers nested inside another container's
// blocks (an exporter without the outermost rule listed each MoE layer's
// experts): the outermost listed blocks are the blocks, so there are two,
// layer-indices counts those, and an expert is never a block of its own.
// RUN: joint-opt %s -joint-tag-recompute-policy="mode=full" 2>&1 | FileCheck %s
// RUN: not joint-opt %s -joint-activation-checkpoint="mode=full layer-indices=2" 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: joint-opt %s -joint-tag-recompute-policy="mode=full layer-indices=1" 2>&1 | FileCheck %s --check-prefix=ONE

// The expert is part of its layer's unit; expert0 is saved only because the
// next layer reads it (cross-unit rule).
// CHECK: remark: joint-tag-recompute-policy: mode=full, 2 of 2 blocks selected; must_save 1, must_recompute 3, prefer_recompute 0
// CHECK: name = "proj0", policy = #joint.policy<must_recompute>}
// CHECK: name = "expert0", policy = #joint.policy<must_save>}
// CHECK: name = "proj1", policy = #joint.policy<must_recompute>}
// CHECK: name = "expert1", policy = #joint.policy<must_recompute>}

// RANGE: error: joint-tag-recompute-policy: layer-indices: index 2 is out of range; the largest valid index is 1 (2 blocks)

// ONE: remark: joint-tag-recompute-policy: mode=full, 1 of 2 blocks selected
// ONE: name = "proj0"}
// ONE: name = "expert0"}
// ONE: name = "proj1", policy = #joint.policy<must_recompute>}
// ONE: name = "expert1", policy = #joint.policy<must_recompute>}

#p0 = [#joint.module<"layers.0", "Layer">, #joint.module<"layers.0.proj", "Linear">]
#e0 = [#joint.module<"layers.0", "Layer">, #joint.module<"layers.0.mlp", "MoE">, #joint.module<"layers.0.mlp.experts", "ModuleList">, #joint.module<"layers.0.mlp.experts.1", "Expert">]
#p1 = [#joint.module<"layers.1", "Layer">, #joint.module<"layers.1.proj", "Linear">]
#e1 = [#joint.module<"layers.1", "Layer">, #joint.module<"layers.1.mlp", "MoE">, #joint.module<"layers.1.mlp.experts", "ModuleList">, #joint.module<"layers.1.mlp.experts.1", "Expert">]
joint.graph @nested(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () attributes {joint.model = {block_containers = [{blocks = ["layers.0", "layers.1"]}, {blocks = ["layers.0.mlp.experts.0", "layers.0.mlp.experts.1"]}, {blocks = ["layers.1.mlp.experts.0", "layers.1.mlp.experts.1"]}]}} {
  %0 = joint.call_function "aten::exp.default"(%x) {name = "proj0", module_stack = #p0} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = joint.call_function "aten::exp.default"(%0) {name = "expert0", module_stack = #e0} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = joint.call_function "aten::exp.default"(%1) {name = "proj1", module_stack = #p1} : (tensor<4xf32>) -> tensor<4xf32>
  %3 = joint.call_function "aten::exp.default"(%2) {name = "expert1", module_stack = #e1} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

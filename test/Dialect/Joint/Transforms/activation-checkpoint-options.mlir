// Layer selection, region/exclude patterns and invalid options of
// joint-tag-recompute-policy / joint-activation-checkpoint. Every error names
// the pass and the option; an option invalid on its own is the driver's error
// (no location), one that selects nothing in the graph is on the graph.
// RUN: joint-opt %s -verify-diagnostics -joint-tag-recompute-policy="layer-count=1" | FileCheck %s --check-prefix=COUNT1
// RUN: joint-opt %s -verify-diagnostics -joint-tag-recompute-policy="layer-count=9" | FileCheck %s --check-prefix=ALL
// RUN: joint-opt %s -verify-diagnostics -joint-tag-recompute-policy="layer-indices=1,2" | FileCheck %s --check-prefix=IDX
// RUN: joint-opt %s -verify-diagnostics -joint-tag-recompute-policy="region-patterns=*.mlp" | FileCheck %s --check-prefix=REGION
// RUN: joint-opt %s -verify-diagnostics -joint-tag-recompute-policy="layer-indices=0 exclude-patterns=*.attn" | FileCheck %s --check-prefix=EXCL
// RUN: joint-opt %s -joint-activation-checkpoint="layer-count=0" 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not joint-opt %s -joint-tag-recompute-policy="layer-count=-2" 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not joint-opt %s -joint-activation-checkpoint="layer-count=-1" 2>&1 | FileCheck %s --check-prefix=NEG1
// RUN: not joint-opt %s -joint-tag-recompute-policy="layer-count=1 layer-indices=0" 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: not joint-opt %s -joint-activation-checkpoint="layer-indices=0,3" 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not joint-opt %s -joint-tag-recompute-policy="layer-indices=-1" 2>&1 | FileCheck %s --check-prefix=RANGENEG
// RUN: not joint-opt %s -joint-tag-recompute-policy="region-patterns=*.mlp,*.moe" 2>&1 | FileCheck %s --check-prefix=NOREGION
// RUN: not joint-opt %s -joint-tag-recompute-policy="layer-indices=0 region-patterns=*.mlp exclude-patterns=*.attn" 2>&1 | FileCheck %s --check-prefix=NOEXCL
// RUN: not joint-opt %s -joint-tag-recompute-policy="region-patterns=*.mlp exclude-patterns=layers.1.mlp" 2>&1 | FileCheck %s --check-prefix=ROOT
// RUN: not joint-opt %s -joint-tag-recompute-policy="region-patterns=[" 2>&1 | FileCheck %s --check-prefix=GLOB
// RUN: not joint-opt %s -joint-tag-recompute-policy="mode=some" 2>&1 | FileCheck %s --check-prefix=MODE

// Three blocks; each has attn and mlp children. layer-count picks a
// leading prefix in flattened order, layer-indices exact blocks.
// COUNT1: name = "attn0", policy = #joint.policy<must_recompute>}
// COUNT1: name = "mlp0", policy = #joint.policy<must_save>}
// COUNT1: name = "attn1"}
// COUNT1: name = "mlp1"}
// COUNT1: name = "attn2"}

// ALL: name = "attn0", policy = #joint.policy<must_recompute>}
// ALL: name = "attn1", policy = #joint.policy<must_recompute>}
// ALL: name = "attn2", policy = #joint.policy<must_recompute>}

// IDX: name = "attn0"}
// IDX: name = "mlp0"}
// IDX: name = "attn1", policy = #joint.policy<must_recompute>}
// IDX: name = "attn2", policy = #joint.policy<must_recompute>}

// Region patterns narrow the blocks to the outermost matching modules.
// REGION: name = "attn0"}
// REGION: name = "mlp0", policy = #joint.policy<must_save>}
// REGION: name = "attn1"}
// REGION: name = "mlp1", policy = #joint.policy<must_save>}

// Exclude patterns pull a subtree back out of the selected blocks.
// EXCL: name = "attn0"}
// EXCL: name = "mlp0", policy = #joint.policy<must_save>}
// EXCL: name = "attn1"}

// ZERO: remark: activation checkpointing: the layer selection matched zero of 3 blocks; nothing is tagged
// ZERO-NOT: #joint.policy

// NEG: {{^}}joint-opt: error: joint-tag-recompute-policy: layer-count must be >= 0, got -2
// NEG1: {{^}}joint-opt: error: joint-tag-recompute-policy: layer-count must be >= 0, got -1
// BOTH: {{^}}joint-opt: error: joint-tag-recompute-policy: layer-count and layer-indices are mutually exclusive; give one of them
// RANGE: activation-checkpoint-options.mlir:{{[0-9]+}}:1: error: joint-tag-recompute-policy: layer-indices: index 3 is out of range; the largest valid index is 2 (3 blocks)
// RANGENEG: activation-checkpoint-options.mlir:{{[0-9]+}}:1: error: joint-tag-recompute-policy: layer-indices: index -1 is out of range; the largest valid index is 2 (3 blocks)
// NOREGION: error: joint-tag-recompute-policy: region-patterns: '*.moe' matches no module inside the 3 selected blocks (first: 'layers.0')
// NOEXCL: error: joint-tag-recompute-policy: exclude-patterns: '*.attn' matches no module inside the selected regions
// ROOT: error: joint-tag-recompute-policy: exclude-patterns: 'layers.1.mlp' matches the region root 'layers.1.mlp'; a region cannot exclude itself
// GLOB: {{^}}joint-opt: error: joint-tag-recompute-policy: region-patterns: invalid glob pattern '['
// MODE: Cannot find option named 'some'

#a0 = [#joint.module<"layers.0", "Block">, #joint.module<"layers.0.attn", "Attn">]
#m0 = [#joint.module<"layers.0", "Block">, #joint.module<"layers.0.mlp", "MLP">]
#a1 = [#joint.module<"layers.1", "Block">, #joint.module<"layers.1.attn", "Attn">]
#m1 = [#joint.module<"layers.1", "Block">, #joint.module<"layers.1.mlp", "MLP">]
#a2 = [#joint.module<"layers.2", "Block">, #joint.module<"layers.2.attn", "Attn">]
#m2 = [#joint.module<"layers.2", "Block">, #joint.module<"layers.2.mlp", "MLP">]
// expected-remark-re @+1 {{joint-tag-recompute-policy: mode=full, {{(1 of 3 blocks selected; must_save 1, must_recompute 0, prefer_recompute 0|1 of 3 blocks selected; must_save 1, must_recompute 1, prefer_recompute 0|2 of 3 blocks selected; must_save 1, must_recompute 3, prefer_recompute 0|3 of 3 blocks selected; must_save 2, must_recompute 1, prefer_recompute 0|3 of 3 blocks selected; must_save 2, must_recompute 4, prefer_recompute 0)}}}}
joint.graph @blocks(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () attributes {joint.model = {block_containers = [{blocks = ["layers.0", "layers.1", "layers.2"]}]}} {
  %0 = joint.call_function "aten::exp.default"(%x) {name = "attn0", module_stack = #a0} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = joint.call_function "aten::exp.default"(%0) {name = "mlp0", module_stack = #m0} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = joint.call_function "aten::exp.default"(%1) {name = "attn1", module_stack = #a1} : (tensor<4xf32>) -> tensor<4xf32>
  %3 = joint.call_function "aten::exp.default"(%2) {name = "mlp1", module_stack = #m1} : (tensor<4xf32>) -> tensor<4xf32>
  %4 = joint.call_function "aten::exp.default"(%3) {name = "attn2", module_stack = #a2} : (tensor<4xf32>) -> tensor<4xf32>
  %5 = joint.call_function "aten::exp.default"(%4) {name = "mlp2", module_stack = #m2} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output
}

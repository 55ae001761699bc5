// Every collective is saved in every mode, whatever its namespace or kind
// (functional all-reduce and broadcast included); its wait follows it.
// Forward all-gathers keep their own rule: recomputed under mode=full
// unless save-forward-all-gather.
// RUN: joint-opt %s -joint-tag-recompute-policy="mode=full" | FileCheck %s --check-prefixes=CHECK,FULL
// RUN: joint-opt %s -joint-tag-recompute-policy="mode=selective" | FileCheck %s --check-prefixes=CHECK,SEL

#l0 = [#joint.module<"layers.0", "Block">, #joint.module<"layers.0.fc", "Linear">]
// CHECK-LABEL: joint.graph @every_collective_is_saved
// CHECK: name = "all_reduce", policy = #joint.policy<must_save>}
// CHECK: name = "ar_wait", policy = #joint.policy<must_save>}
// CHECK: name = "broadcast", policy = #joint.policy<must_save>}
// CHECK: name = "bc_wait", policy = #joint.policy<must_save>}
// CHECK: name = "all_reduce_autograd", policy = #joint.policy<must_save>}
// CHECK: name = "legacy_all_reduce", policy = #joint.policy<must_save>}
// CHECK: name = "reduce_scatter", policy = #joint.policy<must_save>}
// CHECK: name = "all_to_all", policy = #joint.policy<must_save>}
// CHECK: name = "c10d_broadcast", policy = #joint.policy<must_save>}
// FULL: name = "all_gather", policy = #joint.policy<must_recompute>}
// FULL: name = "ag_wait", policy = #joint.policy<must_recompute>}
// SEL: name = "all_gather", policy = #joint.policy<prefer_recompute>}
// SEL: name = "ag_wait", policy = #joint.policy<prefer_recompute>}
// FULL: name = "use", policy = #joint.policy<must_recompute>}
// SEL: name = "use", policy = #joint.policy<prefer_recompute>}
joint.graph @every_collective_is_saved(%x: tensor<8x4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> () attributes {joint.model = {block_containers = [{blocks = ["layers.0"]}]}} {
  %ar = joint.call_function "_c10d_functional::all_reduce.default"(%x) {name = "all_reduce", args = [#joint.operand<0>, "sum", "g"], module_stack = #l0} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %arw = joint.call_function "_c10d_functional::wait_tensor.default"(%ar) {name = "ar_wait", module_stack = #l0} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %bc = joint.call_function "_c10d_functional::broadcast.default"(%arw) {name = "broadcast", args = [#joint.operand<0>, 0, "g"], module_stack = #l0} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %bcw = joint.call_function "_c10d_functional::wait_tensor.default"(%bc) {name = "bc_wait", module_stack = #l0} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %ara = joint.call_function "_c10d_functional_autograd::all_reduce.default"(%bcw) {name = "all_reduce_autograd", args = [#joint.operand<0>, "sum", "g"], module_stack = #l0} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %lar = joint.call_function "c10d_functional::all_reduce.default"(%ara) {name = "legacy_all_reduce", args = [#joint.operand<0>, "sum", "", [0, 1], 2], module_stack = #l0} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %rs = joint.call_function "_c10d_functional::reduce_scatter_tensor.default"(%lar) {name = "reduce_scatter", args = [#joint.operand<0>, "sum", 8, "g"], module_stack = #l0} : (tensor<8x4xf32>) -> tensor<1x4xf32>
  %aa = joint.call_function "_c10d_functional::all_to_all_single.default"(%lar) {name = "all_to_all", args = [#joint.operand<0>, [1], [1], "g"], module_stack = #l0} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %cb = joint.call_function "c10d::broadcast_.default"(%aa) {name = "c10d_broadcast", module_stack = #l0} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %ag = joint.call_function "_c10d_functional::all_gather_into_tensor.default"(%x) {name = "all_gather", args = [#joint.operand<0>, 8, "g"], module_stack = #l0} : (tensor<8x4xf32>) -> tensor<64x4xf32>
  %agw = joint.call_function "_c10d_functional::wait_tensor.default"(%ag) {name = "ag_wait", module_stack = #l0} : (tensor<64x4xf32>) -> tensor<64x4xf32>
  %u = joint.call_function "aten::exp.default"(%agw) {name = "use", module_stack = #l0} : (tensor<64x4xf32>) -> tensor<64x4xf32>
  %b1 = joint.call_function "aten::neg.default"(%rs) {name = "bwd1", phase = #joint.phase<backward>} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %b2 = joint.call_function "aten::neg.default"(%cb) {name = "bwd2", phase = #joint.phase<backward>} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %b3 = joint.call_function "aten::neg.default"(%u) {name = "bwd3", phase = #joint.phase<backward>} : (tensor<64x4xf32>) -> tensor<64x4xf32>
  joint.output
}

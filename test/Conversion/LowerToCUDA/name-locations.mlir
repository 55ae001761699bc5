// joint-gpu-name-locations: every named op's location becomes
// NameLoc(name, loc), so the ops lowered from it carry the node name to the
// kernels and library calls (for the CUDA runtime's error messages); a
// location that already names the node is kept.
// RUN: joint-opt %s -joint-gpu-name-locations -mlir-print-debuginfo | FileCheck %s

// CHECK: %exp_1 = joint.call_function "aten::exp.default"(%x) {name = "exp_1"} : (tensor<4xf32>) -> tensor<4xf32> loc(#[[L1:loc[0-9]+]])
// CHECK-NEXT: %exp_2 = joint.call_function "aten::exp.default"(%exp_1) {name = "exp_2"} : (tensor<4xf32>) -> tensor<4xf32> loc(#[[L2:loc[0-9]+]])
// CHECK-DAG: #[[F1:loc[0-9]+]] = loc("g.json":3:1)
// CHECK-DAG: #[[F2:loc[0-9]+]] = loc("g.json":4:1)
// CHECK-DAG: #[[L1]] = loc("exp_1"(#[[F1]]))
// CHECK-DAG: #[[L2]] = loc("exp_2"(#[[F2]]))

joint.graph @g(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  %a = joint.call_function "aten::exp.default"(%x) {name = "exp_1"} : (tensor<4xf32>) -> tensor<4xf32> loc("g.json":3:1)
  %b = joint.call_function "aten::exp.default"(%a) {name = "exp_2"} : (tensor<4xf32>) -> tensor<4xf32> loc("exp_2"("g.json":4:1))
  joint.output %b : tensor<4xf32>
}

// The hand-written 2-layer MLP joint graph prints back byte-identically, in
// custom and in generic form.
// RUN: joint-opt %S/Inputs/mlp.mlir | diff %S/Inputs/mlp.mlir -
// RUN: joint-opt %S/Inputs/mlp.mlir -mlir-print-op-generic | joint-opt | diff %S/Inputs/mlp.mlir -
// RUN: joint-opt %S/Inputs/mlp.mlir | FileCheck %s

// CHECK-LABEL: joint.graph @mlp
// CHECK-SAME: %fc1.weight: tensor<16x8xf32> {joint.fqn = "fc1.weight"
// CHECK-SAME: joint.role = #joint.role<param>
// CHECK-SAME: %args_0: tensor<4x8xf32> {{.*}}joint.path = "args[0]", joint.role = #joint.role<input>
// CHECK-SAME: -> (tensor<f32> {joint.role = #joint.role<loss>}, tensor<16x8xf32> {joint.fqn = "fc1.weight", joint.role = #joint.role<grad>}
// CHECK: %addmm = joint.call_function "aten::addmm.default"(%fc1.bias, %args_0, %t)
// CHECK: %mean = joint.call_function "aten::mean.default"(%pow_1)
// CHECK: %ones_like = joint.call_function "aten::ones_like.default"(%mean) {args = [#joint.operand<0>], kwargs = {memory_format = #joint.memory_format<preserve_format>, pin_memory = false}
// CHECK-SAME: phase = #joint.phase<backward>
// CHECK: joint.output %mean, %mm_2, %view_1, %mm_1, %view : tensor<f32>, tensor<16x8xf32>, tensor<16xf32>, tensor<4x16xf32>, tensor<4xf32>

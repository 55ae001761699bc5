// SymInt values are i64: sym_size through tensor.dim, Python floor
// semantics for floordiv and mod.
// RUN: joint-opt %s -split-input-file -convert-joint-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @sym_size_numel_and_python_floor_arithmetic(
// CHECK-SAME: %[[ARG0:[a-zA-Z0-9_-]+]]: tensor<4x?xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (i64 {joint.role = #joint.role<output>}, i64 {joint.role = #joint.role<output>}, i64 {joint.role = #joint.role<output>}, i64 {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[C1:[a-zA-Z0-9_-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[DIM:[a-zA-Z0-9_-]+]] = tensor.dim %[[ARG0]], %[[C1]] : tensor<4x?xf32>
// CHECK-NEXT: %[[V0:[a-zA-Z0-9_-]+]] = arith.index_cast %[[DIM]] : index to i64
// CHECK-NEXT: %[[C4_I64:[a-zA-Z0-9_-]+]] = arith.constant 4 : i64
// CHECK-NEXT: %[[C1_0:[a-zA-Z0-9_-]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[DIM_1:[a-zA-Z0-9_-]+]] = tensor.dim %[[ARG0]], %[[C1_0]] : tensor<4x?xf32>
// CHECK-NEXT: %[[C4:[a-zA-Z0-9_-]+]] = arith.constant 4 : index
// CHECK-NEXT: %[[V1:[a-zA-Z0-9_-]+]] = arith.muli %[[C4]], %[[DIM_1]] : index
// CHECK-NEXT: %[[V2:[a-zA-Z0-9_-]+]] = arith.index_cast %[[V1]] : index to i64
// CHECK-NEXT: %[[C3_I64:[a-zA-Z0-9_-]+]] = arith.constant 3 : i64
// CHECK-NEXT: %[[V3:[a-zA-Z0-9_-]+]] = arith.floordivsi %[[V0]], %[[C3_I64]] : i64
// CHECK-NEXT: %[[C_7_I64:[a-zA-Z0-9_-]+]] = arith.constant -7 : i64
// CHECK-NEXT: %[[V4:[a-zA-Z0-9_-]+]] = arith.remsi %[[C_7_I64]], %[[V0]] : i64
// CHECK-NEXT: %[[C0_I64:[a-zA-Z0-9_-]+]] = arith.constant 0 : i64
// CHECK-NEXT: %[[V5:[a-zA-Z0-9_-]+]] = arith.cmpi slt, %[[V4]], %[[C0_I64]] : i64
// CHECK-NEXT: %[[V6:[a-zA-Z0-9_-]+]] = arith.cmpi slt, %[[V0]], %[[C0_I64]] : i64
// CHECK-NEXT: %[[V7:[a-zA-Z0-9_-]+]] = arith.cmpi ne, %[[V4]], %[[C0_I64]] : i64
// CHECK-NEXT: %[[V8:[a-zA-Z0-9_-]+]] = arith.xori %[[V5]], %[[V6]] : i1
// CHECK-NEXT: %[[V9:[a-zA-Z0-9_-]+]] = arith.andi %[[V7]], %[[V8]] : i1
// CHECK-NEXT: %[[V10:[a-zA-Z0-9_-]+]] = arith.addi %[[V4]], %[[V0]] : i64
// CHECK-NEXT: %[[V11:[a-zA-Z0-9_-]+]] = arith.select %[[V9]], %[[V10]], %[[V4]] : i64
// CHECK-NEXT: return %[[C4_I64]], %[[V2]], %[[V3]], %[[V11]] : i64, i64, i64, i64
joint.graph @sym_size_numel_and_python_floor_arithmetic(%x: tensor<4x?xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (i64 {joint.role = #joint.role<output>}, i64 {joint.role = #joint.role<output>}, i64 {joint.role = #joint.role<output>}, i64 {joint.role = #joint.role<output>}) {
  %s = joint.call_function "aten::sym_size.int"(%x) {args = [#joint.operand<0>, 1], name = "s"} : (tensor<4x?xf32>) -> i64
  %c = joint.call_function "aten::sym_size.int"(%x) {args = [#joint.operand<0>, -2], name = "c"} : (tensor<4x?xf32>) -> i64
  %n = joint.call_function "aten::sym_numel.default"(%x) {name = "n"} : (tensor<4x?xf32>) -> i64
  %f = joint.call_function "_operator::floordiv"(%s) {args = [#joint.operand<0>, 3], name = "f"} : (i64) -> i64
  %m = joint.call_function "operator::mod"(%s) {args = [-7, #joint.operand<0>], name = "m"} : (i64) -> i64
  joint.output %c, %n, %f, %m : i64, i64, i64, i64
}

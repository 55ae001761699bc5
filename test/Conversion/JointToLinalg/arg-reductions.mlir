// argmax / argmin / max.dim / min.dim: one reduction generic carrying the
// value and its int64 index; NaN wins, ties keep the lower index (compared
// explicitly, so the visiting order does not matter), and the first element
// always replaces the "nothing yet" index 2^62.
// RUN: joint-opt %s -convert-joint-to-linalg -canonicalize | FileCheck %s

// CHECK-LABEL: func.func @argmax
// CHECK-DAG: %[[NONE:.+]] = arith.constant 4611686018427387904 : i64
// CHECK-DAG: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[V0:.+]] = linalg.fill ins(%[[NEGINF]] : f32) {{.*}} -> tensor<3xf32>
// CHECK: %[[I0:.+]] = linalg.fill ins(%[[NONE]] : i64) {{.*}} -> tensor<3xi64>
// CHECK: %[[R:.+]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.+}} : tensor<3x4xf32>) outs(%[[V0]], %[[I0]] : tensor<3xf32>, tensor<3xi64>)
// CHECK-NEXT: ^bb0(%[[X:.+]]: f32, %[[ACC:.+]]: f32, %[[IDX:.+]]: i64):
// CHECK-NEXT: %[[L:.+]] = linalg.index 1 : index
// CHECK-NEXT: %[[AT:.+]] = arith.index_cast %[[L]] : index to i64
// CHECK: %[[GT:.+]] = arith.cmpf ogt, %[[X]], %[[ACC]] : f32
// CHECK: %[[EQ:.+]] = arith.cmpf oeq, %[[X]], %[[ACC]] : f32
// CHECK: %[[EARLIER:.+]] = arith.cmpi slt, %[[AT]], %[[IDX]] : i64
// CHECK-NEXT: %[[FIRST:.+]] = arith.cmpi eq, %[[IDX]], %[[NONE]] : i64
// CHECK-NEXT: %[[TIE:.+]] = arith.andi %{{.+}}, %[[EARLIER]] : i1
// CHECK-NEXT: %[[BETTER:.+]] = arith.ori %{{.+}}, %[[FIRST]] : i1
// CHECK-NEXT: %[[TAKE:.+]] = arith.ori %[[BETTER]], %[[TIE]] : i1
// CHECK-NEXT: %[[NV:.+]] = arith.select %[[TAKE]], %[[X]], %[[ACC]] : f32
// CHECK-NEXT: %[[NI:.+]] = arith.select %[[TAKE]], %[[AT]], %[[IDX]] : i64
// CHECK-NEXT: linalg.yield %[[NV]], %[[NI]] : f32, i64
// CHECK: return %[[R]]#1 : tensor<3xi64>
joint.graph @argmax(%x: tensor<3x4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<3xi64> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::argmax.default"(%x) {args = [#joint.operand<0>, 1], name = "am"} : (tensor<3x4xf32>) -> tensor<3xi64>
  joint.output %0 : tensor<3xi64>
}

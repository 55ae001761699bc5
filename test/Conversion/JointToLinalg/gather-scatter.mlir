// gather is a parallel generic over the index reading self with
// tensor.extract (negative indices wrap); scatter_add is a row-major scf.for
// nest over the index carrying the result, adding one element at a time in
// f32 and rounding to bf16 after every addition, as torch's serial CPU kernel.
// RUN: joint-opt %s -split-input-file -convert-joint-to-linalg -canonicalize | FileCheck %s

// CHECK-LABEL: func.func @gather
// CHECK-SAME: (%[[X:[^:]+]]: tensor<3x4xf32> {{.*}}, %[[I:[^:]+]]: tensor<3x2xi64>
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[E:.+]] = tensor.empty() : tensor<3x2xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[I]] : tensor<3x2xi64>) outs(%[[E]] : tensor<3x2xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.+]]: i64, %{{.+}}: f32):
// CHECK-NEXT: %[[ROW:.+]] = linalg.index 0 : index
// CHECK-NEXT: %[[IDX:.+]] = arith.index_cast %[[IN]] : i64 to index
// CHECK-NEXT: %[[NEG:.+]] = arith.cmpi slt, %[[IDX]], %[[C0]] : index
// CHECK-NEXT: %[[WRAP:.+]] = arith.addi %[[IDX]], %[[C4]] : index
// CHECK-NEXT: %[[COL:.+]] = arith.select %[[NEG]], %[[WRAP]], %[[IDX]] : index
// CHECK-NEXT: %[[V:.+]] = tensor.extract %[[X]][%[[ROW]], %[[COL]]] : tensor<3x4xf32>
// CHECK-NEXT: linalg.yield %[[V]] : f32
joint.graph @gather(%x: tensor<3x4xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %i: tensor<3x2xi64> {joint.role = #joint.role<input>, joint.path = "i"}) -> (tensor<3x2xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::gather.default"(%x, %i) {args = [#joint.operand<0>, 1, #joint.operand<1>], name = "g"} : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
  joint.output %0 : tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func.func @scatter_add
// CHECK-SAME: (%[[X:[^:]+]]: tensor<3x4xbf16> {{.*}}, %[[I:[^:]+]]: tensor<3x2xi64> {{.*}}, %[[S:[^:]+]]: tensor<3x2xbf16>
// CHECK: %[[R:.+]] = scf.for %[[A:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[OUT0:.+]] = %[[X]]) -> (tensor<3x4xbf16>) {
// CHECK-NEXT: scf.for %[[B:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[OUT:.+]] = %[[OUT0]]) -> (tensor<3x4xbf16>) {
// CHECK-NEXT: %[[IV:.+]] = tensor.extract %[[I]][%[[A]], %[[B]]] : tensor<3x2xi64>
// CHECK: %[[COL:.+]] = arith.select
// CHECK-NEXT: %[[SV:.+]] = tensor.extract %[[S]][%[[A]], %[[B]]] : tensor<3x2xbf16>
// CHECK-NEXT: %[[OLD:.+]] = tensor.extract %[[OUT]][%[[A]], %[[COL]]] : tensor<3x4xbf16>
// CHECK-NEXT: %[[OLD32:.+]] = arith.extf %[[OLD]] : bf16 to f32
// CHECK-NEXT: %[[SV32:.+]] = arith.extf %[[SV]] : bf16 to f32
// CHECK-NEXT: %[[SUM:.+]] = arith.addf %[[OLD32]], %[[SV32]] : f32
// CHECK-NEXT: %[[T:.+]] = arith.truncf %[[SUM]] : f32 to bf16
// CHECK-NEXT: %[[NEW:.+]] = tensor.insert %[[T]] into %[[OUT]][%[[A]], %[[COL]]] : tensor<3x4xbf16>
// CHECK-NEXT: scf.yield %[[NEW]] : tensor<3x4xbf16>
// CHECK: return %[[R]] : tensor<3x4xbf16>
joint.graph @scatter_add(%x: tensor<3x4xbf16> {joint.role = #joint.role<input>, joint.path = "x"}, %i: tensor<3x2xi64> {joint.role = #joint.role<input>, joint.path = "i"}, %s: tensor<3x2xbf16> {joint.role = #joint.role<input>, joint.path = "s"}) -> (tensor<3x4xbf16> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::scatter_add.default"(%x, %i, %s) {args = [#joint.operand<0>, 1, #joint.operand<1>, #joint.operand<2>], name = "sa"} : (tensor<3x4xbf16>, tensor<3x2xi64>, tensor<3x2xbf16>) -> tensor<3x4xbf16>
  joint.output %0 : tensor<3x4xbf16>
}

// -----

// topk: each element's rank in its row (NaN largest, ties by index), then
// the elements of rank < k written at their rank, values and int64 indices.
// CHECK-LABEL: func.func @topk
// CHECK: linalg.generic {{.*}} outs(%{{.+}} : tensor<2x5xindex>)
// CHECK: arith.cmpf uno
// CHECK: scf.for {{.*}} -> (index)
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpi ult
// CHECK-COUNT-2: scf.for {{.*}} -> (tensor<2x2xf32>)
// CHECK: scf.if {{.*}} -> (tensor<2x2xf32>)
// CHECK-COUNT-2: scf.for {{.*}} -> (tensor<2x2xi64>)
// CHECK: scf.if {{.*}} -> (tensor<2x2xi64>)
// CHECK: arith.index_cast {{.*}} : index to i64
joint.graph @topk(%x: tensor<2x5xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<2x2xf32> {joint.role = #joint.role<output>}, tensor<2x2xi64> {joint.role = #joint.role<output>}) {
  %v, %i = joint.call_function "aten::topk.default"(%x) {args = [#joint.operand<0>, 2], name = "t"} : (tensor<2x5xf32>) -> (tensor<2x2xf32>, tensor<2x2xi64>)
  joint.output %v, %i : tensor<2x2xf32>, tensor<2x2xi64>
}

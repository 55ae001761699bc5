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

// -----

// sort.stable along dim 0, descending: topk's ranks (NaN largest, ties by
// lower index), then a parallel generic that finds, for each output
// position p, the element of rank p and yields its value and int64 index.
// CHECK-LABEL: func.func @sort_stable_descending
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x5xf32>
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG: %[[TRUE:.+]] = arith.constant true
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[RE:.+]] = tensor.empty() : tensor<2x5xindex>
// CHECK-NEXT: %[[R:.+]] = linalg.generic {{.*}} ins(%[[X]] : tensor<2x5xf32>) outs(%[[RE]] : tensor<2x5xindex>)
// CHECK-NEXT: ^bb0(%[[XI:.+]]: f32, %{{.+}}: index):
// CHECK-NEXT: %[[I0:.+]] = linalg.index 0 : index
// CHECK-NEXT: %[[I1:.+]] = linalg.index 1 : index
// CHECK-NEXT: %[[NANI:.+]] = arith.cmpf uno, %[[XI]], %[[XI]] : f32
// CHECK-NEXT: %[[CNT:.+]] = scf.for %[[J:.+]] = %[[C0]] to %[[C2]] step %[[C1]] iter_args(%[[ACC:.+]] = %[[C0]]) -> (index) {
// CHECK-NEXT: %[[XJ:.+]] = tensor.extract %[[X]][%[[J]], %[[I1]]] : tensor<2x5xf32>
// CHECK-NEXT: %[[NANJ:.+]] = arith.cmpf uno, %[[XJ]], %[[XJ]] : f32
// CHECK-NEXT: %[[GT:.+]] = arith.cmpf ogt, %[[XJ]], %[[XI]] : f32
// CHECK-NEXT: %[[NOTNANI:.+]] = arith.xori %[[NANI]], %[[TRUE]] : i1
// CHECK-NEXT: %[[NANFIRST:.+]] = arith.andi %[[NANJ]], %[[NOTNANI]] : i1
// CHECK-NEXT: %[[BETTER:.+]] = arith.ori %[[GT]], %[[NANFIRST]] : i1
// CHECK-NEXT: %[[BOTHNAN:.+]] = arith.andi %[[NANJ]], %[[NANI]] : i1
// CHECK-NEXT: %[[EQ:.+]] = arith.cmpf oeq, %[[XJ]], %[[XI]] : f32
// CHECK-NEXT: %[[SAME:.+]] = arith.ori %[[EQ]], %[[BOTHNAN]] : i1
// CHECK-NEXT: %[[EARLIER:.+]] = arith.cmpi ult, %[[J]], %[[I0]] : index
// CHECK-NEXT: %[[TIE:.+]] = arith.andi %[[SAME]], %[[EARLIER]] : i1
// CHECK-NEXT: %[[BEFORE:.+]] = arith.ori %[[BETTER]], %[[TIE]] : i1
// CHECK-NEXT: %[[NEXT:.+]] = arith.addi %[[ACC]], %[[C1]] : index
// CHECK-NEXT: %[[SEL:.+]] = arith.select %[[BEFORE]], %[[NEXT]], %[[ACC]] : index
// CHECK-NEXT: scf.yield %[[SEL]] : index
// CHECK-NEXT: }
// CHECK-NEXT: linalg.yield %[[CNT]] : index
// CHECK: %[[VE:.+]] = tensor.empty() : tensor<2x5xf32>
// CHECK-NEXT: %[[IE:.+]] = tensor.empty() : tensor<2x5xi64>
// CHECK-NEXT: %[[S:.+]]:2 = linalg.generic {{.*}} outs(%[[VE]], %[[IE]] : tensor<2x5xf32>, tensor<2x5xi64>)
// CHECK-NEXT: ^bb0(%{{.+}}: f32, %{{.+}}: i64):
// CHECK-NEXT: %[[P:.+]] = linalg.index 0 : index
// CHECK-NEXT: %[[K1:.+]] = linalg.index 1 : index
// CHECK-NEXT: %[[SRC:.+]] = scf.for %[[J2:.+]] = %[[C0]] to %[[C2]] step %[[C1]] iter_args(%[[ACC2:.+]] = %[[C0]]) -> (index) {
// CHECK-NEXT: %[[RJ:.+]] = tensor.extract %[[R]][%[[J2]], %[[K1]]] : tensor<2x5xindex>
// CHECK-NEXT: %[[HIT:.+]] = arith.cmpi eq, %[[RJ]], %[[P]] : index
// CHECK-NEXT: %[[PICK:.+]] = arith.select %[[HIT]], %[[J2]], %[[ACC2]] : index
// CHECK-NEXT: scf.yield %[[PICK]] : index
// CHECK-NEXT: }
// CHECK-NEXT: %[[V:.+]] = tensor.extract %[[X]][%[[SRC]], %[[K1]]] : tensor<2x5xf32>
// CHECK-NEXT: %[[IDX:.+]] = arith.index_cast %[[SRC]] : index to i64
// CHECK-NEXT: linalg.yield %[[V]], %[[IDX]] : f32, i64
// CHECK: return %[[S]]#0, %[[S]]#1 : tensor<2x5xf32>, tensor<2x5xi64>
joint.graph @sort_stable_descending(%x: tensor<2x5xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<2x5xf32> {joint.role = #joint.role<output>}, tensor<2x5xi64> {joint.role = #joint.role<output>}) {
  %v, %i = joint.call_function "aten::sort.stable"(%x) {args = [#joint.operand<0>], kwargs = {stable = true, dim = 0, descending = true}, name = "s"} : (tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xi64>)
  joint.output %v, %i : tensor<2x5xf32>, tensor<2x5xi64>
}

// -----

// sort.default ascending on the last dim: smaller first, NaN last.
// CHECK-LABEL: func.func @sort_ascending
// CHECK-SAME: (%[[X:[^:]+]]: tensor<3x4xbf16>
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[C4]] {{.*}} -> (index) {
// CHECK-NEXT: %[[XJ:.+]] = tensor.extract %[[X]][%{{.+}}, %{{.+}}] : tensor<3x4xbf16>
// CHECK-NEXT: %[[NANJ:.+]] = arith.cmpf uno, %[[XJ]], %[[XJ]] : bf16
// CHECK-NEXT: %[[LT:.+]] = arith.cmpf olt, %[[XJ]], %{{.+}} : bf16
// CHECK-NEXT: %[[NOTNANJ:.+]] = arith.xori %[[NANJ]], %{{.+}} : i1
// CHECK-NEXT: %[[NANLAST:.+]] = arith.andi %[[NOTNANJ]], %{{.+}} : i1
// CHECK-NEXT: arith.ori %[[LT]], %[[NANLAST]] : i1
// CHECK: %{{.+}}:2 = linalg.generic {{.*}} outs(%{{.+}}, %{{.+}} : tensor<3x4xbf16>, tensor<3x4xi64>)
joint.graph @sort_ascending(%x: tensor<3x4xbf16> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<3x4xbf16> {joint.role = #joint.role<output>}, tensor<3x4xi64> {joint.role = #joint.role<output>}) {
  %v, %i = joint.call_function "aten::sort.default"(%x) {args = [#joint.operand<0>], name = "s"} : (tensor<3x4xbf16>) -> (tensor<3x4xbf16>, tensor<3x4xi64>)
  joint.output %v, %i : tensor<3x4xbf16>, tensor<3x4xi64>
}

// -----

// scatter_reduce.two mean without self: the indexed positions set to 0, the
// sources added in torch's serial order (f32, rounded to bf16 per step), a
// bf16 count (0 + hits) built the same way, then out / count with count 0
// read as 1.
// CHECK-LABEL: func.func @scatter_reduce_mean
// CHECK-SAME: (%[[X:[^:]+]]: tensor<3x4xbf16> {{.*}}, %[[I:[^:]+]]: tensor<3x2xi64> {{.*}}, %[[S:[^:]+]]: tensor<3x2xbf16>
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[ZEROB:.+]] = arith.constant 0.000000e+00 : bf16
// CHECK: %[[INIT:.+]] = scf.for %[[A:.+]] = {{.*}} iter_args(%[[O0:.+]] = %[[X]]) -> (tensor<3x4xbf16>) {
// CHECK-NEXT: scf.for %[[B:.+]] = {{.*}} iter_args(%[[O:.+]] = %[[O0]]) -> (tensor<3x4xbf16>) {
// CHECK-NEXT: tensor.extract %[[I]][%[[A]], %[[B]]] : tensor<3x2xi64>
// CHECK: %[[COL:.+]] = arith.select
// CHECK-NEXT: %[[SET:.+]] = tensor.insert %[[ZEROB]] into %[[O]][%[[A]], %[[COL]]] : tensor<3x4xbf16>
// CHECK-NEXT: scf.yield %[[SET]] : tensor<3x4xbf16>
// CHECK: %[[SUM:.+]] = scf.for %[[A:.+]] = {{.*}} iter_args(%[[O0:.+]] = %[[INIT]]) -> (tensor<3x4xbf16>) {
// CHECK-NEXT: scf.for %[[B:.+]] = {{.*}} iter_args(%[[O:.+]] = %[[O0]]) -> (tensor<3x4xbf16>) {
// CHECK-NEXT: tensor.extract %[[I]][%[[A]], %[[B]]] : tensor<3x2xi64>
// CHECK: %[[COL:.+]] = arith.select
// CHECK-NEXT: %[[OLD:.+]] = tensor.extract %[[O]][%[[A]], %[[COL]]] : tensor<3x4xbf16>
// CHECK-NEXT: %[[OLD32:.+]] = arith.extf %[[OLD]] : bf16 to f32
// CHECK-NEXT: %[[SV:.+]] = tensor.extract %[[S]][%[[A]], %[[B]]] : tensor<3x2xbf16>
// CHECK-NEXT: %[[SV32:.+]] = arith.extf %[[SV]] : bf16 to f32
// CHECK-NEXT: %[[ADD:.+]] = arith.addf %[[OLD32]], %[[SV32]] : f32
// CHECK-NEXT: %[[T:.+]] = arith.truncf %[[ADD]] : f32 to bf16
// CHECK-NEXT: %[[NEW:.+]] = tensor.insert %[[T]] into %[[O]][%[[A]], %[[COL]]] : tensor<3x4xbf16>
// CHECK-NEXT: scf.yield %[[NEW]] : tensor<3x4xbf16>
// CHECK: %[[CE:.+]] = tensor.empty() : tensor<3x4xbf16>
// CHECK-NEXT: %[[C0:.+]] = linalg.fill ins(%[[ZEROB]] : bf16) outs(%[[CE]] : tensor<3x4xbf16>)
// CHECK-NEXT: %[[CNT:.+]] = scf.for {{.*}} iter_args(%{{.+}} = %[[C0]]) -> (tensor<3x4xbf16>) {
// CHECK: arith.addf %{{.+}}, %[[ONE]] : f32
// CHECK: %[[MEAN:.+]] = linalg.generic {{.*}} ins(%[[CNT]] : tensor<3x4xbf16>) outs(%[[SUM]] : tensor<3x4xbf16>)
// CHECK-NEXT: ^bb0(%[[CB:.+]]: bf16, %[[OB:.+]]: bf16):
// CHECK-NEXT: %[[C32:.+]] = arith.extf %[[CB]] : bf16 to f32
// CHECK-NEXT: %[[NONE:.+]] = arith.cmpf oeq, %[[C32]], %[[ZERO]] : f32
// CHECK-NEXT: %[[DIV:.+]] = arith.select %[[NONE]], %[[ONE]], %[[C32]] : f32
// CHECK-NEXT: %[[O32:.+]] = arith.extf %[[OB]] : bf16 to f32
// CHECK-NEXT: %[[Q:.+]] = arith.divf %[[O32]], %[[DIV]] : f32
// CHECK-NEXT: %[[QB:.+]] = arith.truncf %[[Q]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[QB]] : bf16
// CHECK: return %[[MEAN]] : tensor<3x4xbf16>
joint.graph @scatter_reduce_mean(%x: tensor<3x4xbf16> {joint.role = #joint.role<input>, joint.path = "x"}, %i: tensor<3x2xi64> {joint.role = #joint.role<input>, joint.path = "i"}, %s: tensor<3x2xbf16> {joint.role = #joint.role<input>, joint.path = "s"}) -> (tensor<3x4xbf16> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::scatter_reduce.two"(%x, %i, %s) {args = [#joint.operand<0>, 1, #joint.operand<1>, #joint.operand<2>, "mean"], kwargs = {include_self = false}, name = "sr"} : (tensor<3x4xbf16>, tensor<3x2xi64>, tensor<3x2xbf16>) -> tensor<3x4xbf16>
  joint.output %0 : tensor<3x4xbf16>
}

// -----

// scatter_reduce.two amax with self: no identity pass, NaN-propagating
// arith.maximumf (torch's isnan(src) ? src : max) into a copy of self.
// CHECK-LABEL: func.func @scatter_reduce_amax
// CHECK-SAME: (%[[X:[^:]+]]: tensor<3x4xf32> {{.*}}, %[[I:[^:]+]]: tensor<3x2xi64> {{.*}}, %[[S:[^:]+]]: tensor<3x2xf32>
// CHECK: %[[R:.+]] = scf.for %[[A:.+]] = {{.*}} iter_args(%[[O0:.+]] = %[[X]]) -> (tensor<3x4xf32>) {
// CHECK-NEXT: scf.for %[[B:.+]] = {{.*}} iter_args(%[[O:.+]] = %[[O0]]) -> (tensor<3x4xf32>) {
// CHECK-NEXT: tensor.extract %[[I]][%[[A]], %[[B]]] : tensor<3x2xi64>
// CHECK: %[[COL:.+]] = arith.select
// CHECK-NEXT: %[[OLD:.+]] = tensor.extract %[[O]][%[[A]], %[[COL]]] : tensor<3x4xf32>
// CHECK-NEXT: %[[SV:.+]] = tensor.extract %[[S]][%[[A]], %[[B]]] : tensor<3x2xf32>
// CHECK-NEXT: %[[M:.+]] = arith.maximumf %[[OLD]], %[[SV]] : f32
// CHECK-NEXT: %[[NEW:.+]] = tensor.insert %[[M]] into %[[O]][%[[A]], %[[COL]]] : tensor<3x4xf32>
// CHECK-NEXT: scf.yield %[[NEW]] : tensor<3x4xf32>
// CHECK: return %[[R]] : tensor<3x4xf32>
joint.graph @scatter_reduce_amax(%x: tensor<3x4xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %i: tensor<3x2xi64> {joint.role = #joint.role<input>, joint.path = "i"}, %s: tensor<3x2xf32> {joint.role = #joint.role<input>, joint.path = "s"}) -> (tensor<3x4xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::scatter_reduce.two"(%x, %i, %s) {args = [#joint.operand<0>, 1, #joint.operand<1>, #joint.operand<2>, "amax"], name = "sr"} : (tensor<3x4xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x4xf32>
  joint.output %0 : tensor<3x4xf32>
}

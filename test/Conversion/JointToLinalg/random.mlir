// Random ops (Random.cpp): Philox 4x32-10 draws. Element i of draw d reads
// philox(key = seed, counter = (i, offset + d)), seed and offset being the
// step's rng_state argument the driver adds to a graph that draws; a uniform
// is the top p bits of word 0 times 2^-p (p = significand width), so it is
// exact in the result type and never 1; a remat clone (recomputed_from)
// keeps its original's draw index and so replays its numbers.
// RUN: joint-opt %s -split-input-file -convert-joint-to-linalg -canonicalize -mlir-print-local-scope | FileCheck %s

joint.schema @"aten::rand_like.default" {arguments = [#joint.arg<name = "self", type = "Tensor">], returns = [#joint.arg<type = "Tensor">], schema = "aten::rand_like(Tensor self) -> Tensor", tags = ["nondeterministic_seeded"]}
joint.graph @rand_like(%x: tensor<2x3xbf16> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<2x3xbf16> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::rand_like.default"(%x) {name = "r"} : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
  joint.output %0 : tensor<2x3xbf16>
}
// CHECK-LABEL: func.func @rand_like(%arg0: tensor<2x3xbf16> {joint.path = "x", joint.role = #joint.role<input>}, %arg1: tensor<2xi64> {joint.name = "rng_state", joint.rng_draws = 1 : i64})
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 3.906250e-03 : f32
// CHECK-DAG: %[[C24:.+]] = arith.constant 24 : i32
// CHECK-DAG: %[[W1:.+]] = arith.constant -1150833019 : i32
// CHECK-DAG: %[[W0:.+]] = arith.constant -1640531527 : i32
// CHECK-DAG: %[[M1:.+]] = arith.constant -845247145 : i32
// CHECK-DAG: %[[M0:.+]] = arith.constant -766435501 : i32
// CHECK-DAG: %[[C32:.+]] = arith.constant 32 : i64
// CHECK-DAG: %[[C3:.+]] = arith.constant 3 : index
// CHECK: %[[OFFSET:.+]] = tensor.extract_slice %arg1[1] [1] [1] : tensor<2xi64> to tensor<i64>
// CHECK: %[[SEED:.+]] = tensor.extract_slice %arg1[0] [1] [1] : tensor<2xi64> to tensor<i64>
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<2x3xbf16>
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[SEED]], %[[OFFSET]] : tensor<i64>, tensor<i64>) outs(%[[INIT]] : tensor<2x3xbf16>)
// CHECK-NEXT: ^bb0(%[[S:.+]]: i64, %[[O:.+]]: i64, %{{.+}}: bf16):
// CHECK-NEXT: %[[I0:.+]] = linalg.index 0 : index
// CHECK-NEXT: %[[I1:.+]] = linalg.index 1 : index
// CHECK-NEXT: %[[ROW:.+]] = arith.muli %[[I0]], %[[C3]] : index
// CHECK-NEXT: %[[LIN:.+]] = arith.addi %[[ROW]], %[[I1]] : index
// CHECK-NEXT: %[[LIN64:.+]] = arith.index_castui %[[LIN]] : index to i64
// CHECK-NEXT: %[[CTR0:.+]] = arith.trunci %[[LIN64]] : i64 to i32
// CHECK-NEXT: %[[LINHI:.+]] = arith.shrui %[[LIN64]], %[[C32]] : i64
// CHECK-NEXT: %[[CTR1:.+]] = arith.trunci %[[LINHI]] : i64 to i32
// CHECK-NEXT: %[[CTR2:.+]] = arith.trunci %[[O]] : i64 to i32
// CHECK-NEXT: %[[OHI:.+]] = arith.shrui %[[O]], %[[C32]] : i64
// CHECK-NEXT: %[[CTR3:.+]] = arith.trunci %[[OHI]] : i64 to i32
// CHECK-NEXT: %[[K0:.+]] = arith.trunci %[[S]] : i64 to i32
// CHECK-NEXT: %[[SHI:.+]] = arith.shrui %[[S]], %[[C32]] : i64
// CHECK-NEXT: %[[K1:.+]] = arith.trunci %[[SHI]] : i64 to i32
// CHECK-NEXT: %[[LO0:.+]], %[[HI0:.+]] = arith.mului_extended %[[CTR0]], %[[M0]] : i32
// CHECK-NEXT: %[[LO1:.+]], %[[HI1:.+]] = arith.mului_extended %[[CTR2]], %[[M1]] : i32
// CHECK-NEXT: %[[A:.+]] = arith.xori %[[HI1]], %[[CTR1]] : i32
// CHECK-NEXT: %[[N0:.+]] = arith.xori %[[A]], %[[K0]] : i32
// CHECK-NEXT: %[[B:.+]] = arith.xori %[[HI0]], %[[CTR3]] : i32
// CHECK-NEXT: %[[N2:.+]] = arith.xori %[[B]], %[[K1]] : i32
// CHECK-NEXT: %[[K0B:.+]] = arith.addi %[[K0]], %[[W0]] : i32
// CHECK-NEXT: %[[K1B:.+]] = arith.addi %[[K1]], %[[W1]] : i32
// CHECK-NEXT: arith.mului_extended %[[N0]], %[[M0]] : i32
// CHECK-NEXT: arith.mului_extended %[[N2]], %[[M1]] : i32
// CHECK-NEXT: arith.xori %{{.+}}, %[[LO1]] : i32
// CHECK-NEXT: arith.xori %{{.+}}, %[[K0B]] : i32
// CHECK-NEXT: arith.xori %{{.+}}, %[[LO0]] : i32
// CHECK-NEXT: arith.xori %{{.+}}, %[[K1B]] : i32
// CHECK-COUNT-13: arith.mului_extended
// CHECK: arith.muli %{{.+}}, %[[M1]] : i32
// CHECK: arith.mului_extended
// CHECK-NEXT: arith.xori
// CHECK-NEXT: %[[WORD:.+]] = arith.xori
// CHECK-NEXT: %[[TOP:.+]] = arith.shrui %[[WORD]], %[[C24]] : i32
// CHECK-NEXT: %[[F:.+]] = arith.uitofp %[[TOP]] : i32 to f32
// CHECK-NEXT: %[[U:.+]] = arith.mulf %[[F]], %[[SCALE]] : f32
// CHECK-NEXT: %[[R:.+]] = arith.truncf %[[U]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[R]] : bf16

// -----

joint.schema @"aten::native_dropout.default" {arguments = [#joint.arg<name = "input", type = "Tensor">, #joint.arg<name = "p", type = "float">, #joint.arg<name = "train", type = "bool?">], returns = [#joint.arg<type = "Tensor">, #joint.arg<type = "Tensor">], schema = "aten::native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)", tags = ["core", "nondeterministic_seeded"]}
joint.schema @"aten::rand_like.default" {arguments = [#joint.arg<name = "self", type = "Tensor">], returns = [#joint.arg<type = "Tensor">], schema = "aten::rand_like(Tensor self) -> Tensor", tags = ["nondeterministic_seeded"]}
joint.graph @dropout_replayed(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}, tensor<4xi1> {joint.role = #joint.role<output>}, tensor<4xf32> {joint.role = #joint.role<output>}, tensor<4xi1> {joint.role = #joint.role<output>}) {
  %r = joint.call_function "aten::rand_like.default"(%x) {name = "r"} : (tensor<4xf32>) -> tensor<4xf32>
  %0, %1 = joint.call_function "aten::native_dropout.default"(%r) {name = "d", args = [#joint.operand<0>, 2.500000e-01, true]} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  %2, %3 = joint.call_function "aten::native_dropout.default"(%r) {name = "d_recomputed", recomputed_from = "d", phase = #joint.phase<backward>, args = [#joint.operand<0>, 2.500000e-01, true]} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  joint.output %0, %1, %2, %3 : tensor<4xf32>, tensor<4xi1>, tensor<4xf32>, tensor<4xi1>
}
// rand_like is draw 0; the dropout and its remat clone are both draw 1: two
// offset + 1 computations, one per op, and no draw 2.
// CHECK-LABEL: func.func @dropout_replayed
// CHECK-SAME: %arg1: tensor<2xi64> {joint.name = "rng_state", joint.rng_draws = 2 : i64}
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 1.33333337 : f32
// CHECK-DAG: %[[KEEP:.+]] = arith.constant 7.500000e-01 : f32
// CHECK-DAG: %[[ONE:.+]] = arith.constant dense<1> : tensor<i64>
// CHECK-NOT: dense<2>
// CHECK: %[[R:.+]] = linalg.generic
// CHECK: } -> tensor<4xf32>
// CHECK: %[[OFF1:.+]] = tensor.extract_slice %arg1[1] [1] [1] : tensor<2xi64> to tensor<i64>
// CHECK: %[[D1:.+]] = linalg.generic {{.+}} ins(%[[OFF1]], %[[ONE]] : tensor<i64>, tensor<i64>)
// CHECK: arith.addi
// CHECK: %[[SEED1:.+]] = tensor.extract_slice %arg1[0] [1] [1] : tensor<2xi64> to tensor<i64>
// CHECK: %[[MASK:.+]] = linalg.generic {{.+}} ins(%[[SEED1]], %[[D1]] : tensor<i64>, tensor<i64>) outs(%{{.+}} : tensor<4xi1>)
// CHECK: %[[UM:.+]] = arith.mulf
// CHECK-NEXT: %[[KM:.+]] = arith.cmpf olt, %[[UM]], %[[KEEP]] : f32
// CHECK-NEXT: linalg.yield %[[KM]] : i1
// CHECK: %[[OUT:.+]] = linalg.generic {{.+}} ins(%[[SEED1]], %[[D1]], %[[R]] : tensor<i64>, tensor<i64>, tensor<4xf32>)
// CHECK-NEXT: ^bb0(%{{.+}}: i64, %{{.+}}: i64, %[[X:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[XS:.+]] = arith.mulf %[[X]], %[[SCALE]] : f32
// CHECK: %[[K:.+]] = arith.cmpf olt, %{{.+}}, %[[KEEP]] : f32
// CHECK-NEXT: %[[Y:.+]] = arith.select %[[K]], %[[XS]], %[[ZERO]] : f32
// CHECK-NEXT: linalg.yield %[[Y]] : f32
// CHECK: %[[OFF2:.+]] = tensor.extract_slice %arg1[1] [1] [1] : tensor<2xi64> to tensor<i64>
// CHECK: linalg.generic {{.+}} ins(%[[OFF2]], %[[ONE]] : tensor<i64>, tensor<i64>)

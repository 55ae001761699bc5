// 2-d pooling (Pooling.cpp): max pooling as one generic carrying the value
// and its int64 index ih * W + iw over the padded input (padded positions
// skipped, NaN wins, ties keep the first index); average pooling as
// linalg.pooling_nchw_sum into an f32 accumulator, then torch's divisor per
// window; adaptive bins as pooling_nchw_sum when they divide the input, else a
// generic over the largest bin with smaller bins masked; every backward a
// gather over the windows covering each input position (in torch's increasing
// output order: kernel offsets visited from the last). Nearest upsampling:
// a floordiv copy for integer factors, else a gather of torch's f32 index;
// its backward a pooling_nchw_sum over k x k windows, else a gather of the
// output positions mapping to each input position.
// RUN: joint-opt %s -split-input-file -convert-joint-to-linalg -canonicalize -mlir-print-local-scope | FileCheck %s

// CHECK-LABEL: func.func @max_pool_padded_strided
// CHECK-DAG: %[[NONE:.+]] = arith.constant 4611686018427387904 : i64
// CHECK-DAG: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[P:.+]] = tensor.pad %{{.+}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: } : tensor<1x2x5x5xf32> to tensor<1x2x7x7xf32>
// CHECK: %[[V0:.+]] = linalg.fill ins(%[[NEGINF]] : f32) {{.*}} -> tensor<1x2x3x3xf32>
// CHECK: %[[I0:.+]] = linalg.fill ins(%[[NONE]] : i64) {{.*}} -> tensor<1x2x3x3xi64>
// CHECK: %[[WIN:.+]] = tensor.empty() : tensor<3x3xf32>
// CHECK-NEXT: %[[R:.+]]:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[P]], %[[WIN]] : tensor<1x2x7x7xf32>, tensor<3x3xf32>) outs(%[[V0]], %[[I0]] : tensor<1x2x3x3xf32>, tensor<1x2x3x3xi64>)
// CHECK-NEXT: ^bb0(%[[X:.+]]: f32, %{{.+}}: f32, %[[ACC:.+]]: f32, %[[IDX:.+]]: i64):
// CHECK-NEXT: %[[OH:.+]] = linalg.index 2 : index
// CHECK-NEXT: %[[KH:.+]] = linalg.index 4 : index
// CHECK-NEXT: %[[SH:.+]] = arith.muli %[[OH]], %c2 : index
// CHECK-NEXT: %[[AH:.+]] = arith.addi %[[SH]], %[[KH]] : index
// CHECK-NEXT: %[[IH:.+]] = arith.subi %[[AH]], %c1 : index
// CHECK-NEXT: %[[GEH:.+]] = arith.cmpi sge, %[[IH]], %c0 : index
// CHECK-NEXT: %[[LTH:.+]] = arith.cmpi slt, %[[IH]], %c5 : index
// CHECK-NEXT: %[[INH:.+]] = arith.andi %[[GEH]], %[[LTH]] : i1
// CHECK-NEXT: %[[OW:.+]] = linalg.index 3 : index
// CHECK-NEXT: %[[KW:.+]] = linalg.index 5 : index
// CHECK-NEXT: %[[SW:.+]] = arith.muli %[[OW]], %c2 : index
// CHECK-NEXT: %[[AW:.+]] = arith.addi %[[SW]], %[[KW]] : index
// CHECK-NEXT: %[[IW:.+]] = arith.subi %[[AW]], %c1 : index
// CHECK-NEXT: %[[GEW:.+]] = arith.cmpi sge, %[[IW]], %c0 : index
// CHECK-NEXT: %[[LTW:.+]] = arith.cmpi slt, %[[IW]], %c5 : index
// CHECK-NEXT: %[[INW:.+]] = arith.andi %[[GEW]], %[[LTW]] : i1
// CHECK-NEXT: %[[VALID:.+]] = arith.andi %[[INH]], %[[INW]] : i1
// CHECK-NEXT: %[[ROW:.+]] = arith.muli %[[IH]], %c5 : index
// CHECK-NEXT: %[[FLAT:.+]] = arith.addi %[[ROW]], %[[IW]] : index
// CHECK-NEXT: %[[AT:.+]] = arith.index_cast %[[FLAT]] : index to i64
// CHECK-NEXT: %[[XNAN:.+]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK-NEXT: %[[ANAN:.+]] = arith.cmpf uno, %[[ACC]], %[[ACC]] : f32
// CHECK-NEXT: %[[ANUM:.+]] = arith.xori %[[ANAN]], %true : i1
// CHECK-NEXT: %[[LATER:.+]] = arith.cmpi sgt, %[[AT]], %[[IDX]] : i64
// CHECK-NEXT: %[[EARLIER:.+]] = arith.cmpi slt, %[[AT]], %[[IDX]] : i64
// CHECK-NEXT: %[[FIRST:.+]] = arith.cmpi eq, %[[IDX]], %[[NONE]] : i64
// CHECK-NEXT: %[[NANOK:.+]] = arith.ori %[[ANUM]], %[[LATER]] : i1
// CHECK-NEXT: %[[NANWINS:.+]] = arith.andi %[[XNAN]], %[[NANOK]] : i1
// CHECK-NEXT: %[[GT:.+]] = arith.cmpf ogt, %[[X]], %[[ACC]] : f32
// CHECK-NEXT: %[[EQ:.+]] = arith.cmpf oeq, %[[X]], %[[ACC]] : f32
// CHECK-NEXT: %[[TIE:.+]] = arith.andi %[[EQ]], %[[EARLIER]] : i1
// CHECK-NEXT: %[[T1:.+]] = arith.ori %[[FIRST]], %[[NANWINS]] : i1
// CHECK-NEXT: %[[T2:.+]] = arith.ori %[[GT]], %[[TIE]] : i1
// CHECK-NEXT: %[[T3:.+]] = arith.ori %[[T1]], %[[T2]] : i1
// CHECK-NEXT: %[[TAKE:.+]] = arith.andi %[[VALID]], %[[T3]] : i1
// CHECK-NEXT: %[[NV:.+]] = arith.select %[[TAKE]], %[[X]], %[[ACC]] : f32
// CHECK-NEXT: %[[NI:.+]] = arith.select %[[TAKE]], %[[AT]], %[[IDX]] : i64
// CHECK-NEXT: linalg.yield %[[NV]], %[[NI]] : f32, i64
// CHECK: return %[[R]]#0, %[[R]]#1 : tensor<1x2x3x3xf32>, tensor<1x2x3x3xi64>
joint.graph @max_pool_padded_strided(%x: tensor<1x2x5x5xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x2x3x3xf32> {joint.role = #joint.role<output>}, tensor<1x2x3x3xi64> {joint.role = #joint.role<output>}) {
  %0:2 = joint.call_function "aten::max_pool2d_with_indices.default"(%x) {args = [#joint.operand<0>, [3, 3], [2, 2], [1, 1]], name = "mp"} : (tensor<1x2x5x5xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xi64>)
  joint.output %0#0, %0#1 : tensor<1x2x3x3xf32>, tensor<1x2x3x3xi64>
}

// -----

// CHECK-LABEL: func.func @max_pool_backward_adds_where_indices_match
// CHECK-SAME: (%[[G:[^:]+]]: tensor<1x1x2x2xbf16> {{.*}}, %{{[^:]+}}: tensor<1x1x4x4xbf16> {{.*}}, %[[I:[^:]+]]: tensor<1x1x2x2xi64>
// CHECK: %[[Z:.+]] = linalg.fill {{.*}} -> tensor<1x1x4x4xf32>
// CHECK-NEXT: %[[WIN:.+]] = tensor.empty() : tensor<2x2xf32>
// CHECK-NEXT: %[[S:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[WIN]] : tensor<2x2xf32>) outs(%[[Z]] : tensor<1x1x4x4xf32>)
// CHECK-NEXT: ^bb0(%{{.+}}: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT: %[[IH:.+]] = linalg.index 2 : index
// CHECK-NEXT: %[[IW:.+]] = linalg.index 3 : index
// CHECK-NEXT: %[[RH:.+]] = linalg.index 4 : index
// CHECK-NEXT: %[[KH:.+]] = arith.subi %c1, %[[RH]] : index
// CHECK-NEXT: %[[TH:.+]] = arith.subi %[[IH]], %[[KH]] : index
// CHECK-NEXT: %[[OH:.+]] = arith.divsi %[[TH]], %c2 : index
// CHECK-NEXT: %[[GEH:.+]] = arith.cmpi sge, %[[TH]], %c0 : index
// CHECK-NEXT: %[[REMH:.+]] = arith.remsi %[[TH]], %c2 : index
// CHECK-NEXT: %[[EXH:.+]] = arith.cmpi eq, %[[REMH]], %c0 : index
// CHECK-NEXT: %[[OKH0:.+]] = arith.andi %[[GEH]], %[[EXH]] : i1
// CHECK-NEXT: %[[LTH:.+]] = arith.cmpi slt, %[[OH]], %c2 : index
// CHECK-NEXT: %[[OKH:.+]] = arith.andi %[[OKH0]], %[[LTH]] : i1
// CHECK-NEXT: %[[RW:.+]] = linalg.index 5 : index
// CHECK-NEXT: %[[KW:.+]] = arith.subi %c1, %[[RW]] : index
// CHECK-NEXT: %[[TW:.+]] = arith.subi %[[IW]], %[[KW]] : index
// CHECK-NEXT: %[[OW:.+]] = arith.divsi %[[TW]], %c2 : index
// CHECK-NEXT: %[[GEW:.+]] = arith.cmpi sge, %[[TW]], %c0 : index
// CHECK-NEXT: %[[REMW:.+]] = arith.remsi %[[TW]], %c2 : index
// CHECK-NEXT: %[[EXW:.+]] = arith.cmpi eq, %[[REMW]], %c0 : index
// CHECK-NEXT: %[[OKW0:.+]] = arith.andi %[[GEW]], %[[EXW]] : i1
// CHECK-NEXT: %[[LTW:.+]] = arith.cmpi slt, %[[OW]], %c2 : index
// CHECK-NEXT: %[[OKW:.+]] = arith.andi %[[OKW0]], %[[LTW]] : i1
// CHECK-NEXT: %[[VALID:.+]] = arith.andi %[[OKH]], %[[OKW]] : i1
// CHECK-NEXT: %[[COH:.+]] = arith.select %[[VALID]], %[[OH]], %c0 : index
// CHECK-NEXT: %[[COW:.+]] = arith.select %[[VALID]], %[[OW]], %c0 : index
// CHECK-NEXT: %[[ROW:.+]] = arith.muli %[[IH]], %c4 : index
// CHECK-NEXT: %[[FLAT:.+]] = arith.addi %[[ROW]], %[[IW]] : index
// CHECK-NEXT: %[[AT:.+]] = arith.index_cast %[[FLAT]] : index to i64
// CHECK-NEXT: %[[ARGMAX:.+]] = tensor.extract %[[I]][%c0, %c0, %[[COH]], %[[COW]]] : tensor<1x1x2x2xi64>
// CHECK-NEXT: %[[MATCH:.+]] = arith.cmpi eq, %[[ARGMAX]], %[[AT]] : i64
// CHECK-NEXT: %[[HIT:.+]] = arith.andi %[[VALID]], %[[MATCH]] : i1
// CHECK-NEXT: %[[GB:.+]] = tensor.extract %[[G]][%c0, %c0, %[[COH]], %[[COW]]] : tensor<1x1x2x2xbf16>
// CHECK-NEXT: %[[GF:.+]] = arith.extf %[[GB]] : bf16 to f32
// CHECK-NEXT: %[[SUM:.+]] = arith.addf %[[ACC]], %[[GF]] : f32
// CHECK-NEXT: %[[NEXT:.+]] = arith.select %[[HIT]], %[[SUM]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[NEXT]] : f32
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: return %{{.+}} : tensor<1x1x4x4xbf16>
joint.graph @max_pool_backward_adds_where_indices_match(%g: tensor<1x1x2x2xbf16> {joint.role = #joint.role<input>, joint.path = "g"}, %x: tensor<1x1x4x4xbf16> {joint.role = #joint.role<input>, joint.path = "x"}, %i: tensor<1x1x2x2xi64> {joint.role = #joint.role<input>, joint.path = "i"}) -> (tensor<1x1x4x4xbf16> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::max_pool2d_with_indices_backward.default"(%g, %x, %i) {args = [#joint.operand<0>, #joint.operand<1>, [2, 2], [], [0, 0], [1, 1], false, #joint.operand<2>], name = "mpb"} : (tensor<1x1x2x2xbf16>, tensor<1x1x4x4xbf16>, tensor<1x1x2x2xi64>) -> tensor<1x1x4x4xbf16>
  joint.output %0 : tensor<1x1x4x4xbf16>
}

// -----

// CHECK-LABEL: func.func @avg_pool_excluding_padding
// CHECK: %[[P:.+]] = tensor.pad %{{.+}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: } : tensor<1x1x4x4xbf16> to tensor<1x1x6x6xbf16>
// CHECK: %[[Z:.+]] = linalg.fill {{.*}} -> tensor<1x1x2x2xf32>
// CHECK-NEXT: %[[WIN:.+]] = tensor.empty() : tensor<3x3xf32>
// CHECK-NEXT: %[[S:.+]] = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[P]], %[[WIN]] : tensor<1x1x6x6xbf16>, tensor<3x3xf32>) outs(%[[Z]] : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
// CHECK: linalg.generic {{.*}} ins(%[[S]] : tensor<1x1x2x2xf32>) outs(%{{.+}} : tensor<1x1x2x2xbf16>)
// CHECK-NEXT: ^bb0(%[[SUM:.+]]: f32, %{{.+}}: bf16):
// CHECK-NEXT: %[[OW:.+]] = linalg.index 3 : index
// CHECK-NEXT: %[[OH:.+]] = linalg.index 2 : index
// CHECK-NEXT: %[[A:.+]] = arith.muli %[[OH]], %c2 : index
// CHECK-NEXT: %[[START:.+]] = arith.subi %[[A]], %c1 : index
// CHECK-NEXT: %[[B:.+]] = arith.addi %[[A]], %c2 : index
// CHECK-NEXT: %[[END:.+]] = arith.minsi %[[B]], %c5 : index
// CHECK-NEXT: %[[CSTART:.+]] = arith.maxsi %[[START]], %c0 : index
// CHECK-NEXT: %[[CEND:.+]] = arith.minsi %[[END]], %c4 : index
// CHECK-NEXT: %[[D:.+]] = arith.subi %[[CEND]], %[[CSTART]] : index
// CHECK-NEXT: %[[LH:.+]] = arith.maxsi %[[D]], %c0 : index
// CHECK-NEXT: %[[AW:.+]] = arith.muli %[[OW]], %c2 : index
// CHECK-NEXT: %[[STARTW:.+]] = arith.subi %[[AW]], %c1 : index
// CHECK-NEXT: %[[BW:.+]] = arith.addi %[[AW]], %c2 : index
// CHECK-NEXT: %[[ENDW:.+]] = arith.minsi %[[BW]], %c5 : index
// CHECK-NEXT: %[[CSTARTW:.+]] = arith.maxsi %[[STARTW]], %c0 : index
// CHECK-NEXT: %[[CENDW:.+]] = arith.minsi %[[ENDW]], %c4 : index
// CHECK-NEXT: %[[DW:.+]] = arith.subi %[[CENDW]], %[[CSTARTW]] : index
// CHECK-NEXT: %[[LW:.+]] = arith.maxsi %[[DW]], %c0 : index
// CHECK-NEXT: %[[N:.+]] = arith.muli %[[LH]], %[[LW]] : index
// CHECK-NEXT: %[[N1:.+]] = arith.maxsi %[[N]], %c1 : index
// CHECK-NEXT: %[[NI:.+]] = arith.index_cast %[[N1]] : index to i64
// CHECK-NEXT: %[[NF:.+]] = arith.sitofp %[[NI]] : i64 to f32
// CHECK-NEXT: %[[Q:.+]] = arith.divf %[[SUM]], %[[NF]] : f32
// CHECK-NEXT: %[[QB:.+]] = arith.truncf %[[Q]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[QB]] : bf16
joint.graph @avg_pool_excluding_padding(%x: tensor<1x1x4x4xbf16> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x1x2x2xbf16> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::avg_pool2d.default"(%x) {args = [#joint.operand<0>, [3, 3], [2, 2], [1, 1], false, false], name = "ap"} : (tensor<1x1x4x4xbf16>) -> tensor<1x1x2x2xbf16>
  joint.output %0 : tensor<1x1x2x2xbf16>
}

// -----

// CHECK-LABEL: func.func @avg_pool_backward_divides_then_gathers
// CHECK: %[[DELTA:.+]] = linalg.generic {{.*}} ins(%{{.+}} : tensor<1x1x2x2xf32>) outs(%{{.+}} : tensor<1x1x2x2xf32>)
// CHECK-NEXT: ^bb0(%[[G:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[END:.+]] = arith.minsi %{{.+}}, %c5 : index
// CHECK-NEXT: %[[D:.+]] = arith.subi %[[END]], %{{.+}} : index
// CHECK-NOT: arith.minsi %{{.+}}, %c4
// CHECK: %[[Q:.+]] = arith.divf %[[G]], %{{.+}} : f32
// CHECK-NEXT: linalg.yield %[[Q]] : f32
// CHECK: %[[Z:.+]] = linalg.fill {{.*}} -> tensor<1x1x4x4xf32>
// CHECK-NEXT: %[[WIN:.+]] = tensor.empty() : tensor<3x3xf32>
// CHECK-NEXT: %[[S:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[WIN]] : tensor<3x3xf32>) outs(%[[Z]] : tensor<1x1x4x4xf32>)
// CHECK-NEXT: ^bb0(%{{.+}}: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT: %[[IH:.+]] = linalg.index 2 : index
// CHECK-NEXT: %{{.+}} = linalg.index 3 : index
// CHECK-NEXT: %[[RH:.+]] = linalg.index 4 : index
// CHECK-NEXT: %[[KH:.+]] = arith.subi %c2, %[[RH]] : index
// CHECK-NEXT: %[[PH:.+]] = arith.addi %[[IH]], %c1 : index
// CHECK-NEXT: %[[TH:.+]] = arith.subi %[[PH]], %[[KH]] : index
// CHECK-NEXT: %{{.+}} = arith.divsi %[[TH]], %c2 : index
// CHECK: linalg.index 5 : index
// CHECK: %[[LTW:.+]] = arith.cmpi slt, %{{.+}}, %c2 : index
// CHECK-NEXT: %[[OKW:.+]] = arith.andi %{{.+}}, %[[LTW]] : i1
// CHECK-NEXT: %[[VALID:.+]] = arith.andi %{{.+}}, %[[OKW]] : i1
// CHECK-NEXT: %[[OH:.+]] = arith.select %[[VALID]], %{{.+}}, %c0 : index
// CHECK-NEXT: %[[OW:.+]] = arith.select %[[VALID]], %{{.+}}, %c0 : index
// CHECK-NEXT: %[[GD:.+]] = tensor.extract %[[DELTA]][%c0, %c0, %[[OH]], %[[OW]]] : tensor<1x1x2x2xf32>
// CHECK-NEXT: %[[SUM:.+]] = arith.addf %[[ACC]], %[[GD]] : f32
// CHECK-NEXT: %[[NEXT:.+]] = arith.select %[[VALID]], %[[SUM]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[NEXT]] : f32
// CHECK: return %[[S]] : tensor<1x1x4x4xf32>
joint.graph @avg_pool_backward_divides_then_gathers(%g: tensor<1x1x2x2xf32> {joint.role = #joint.role<input>, joint.path = "g"}, %x: tensor<1x1x4x4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x1x4x4xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::avg_pool2d_backward.default"(%g, %x) {args = [#joint.operand<0>, #joint.operand<1>, [3, 3], [2, 2], [1, 1], false, true, unit], name = "apb"} : (tensor<1x1x2x2xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  joint.output %0 : tensor<1x1x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @adaptive_avg_pool_dividing
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x2x4x6xf32>
// CHECK-DAG: %[[C2F:.+]] = arith.constant 2.000000e+00 : f32
// CHECK: %[[Z:.+]] = linalg.fill {{.*}} -> tensor<1x2x2x3xf32>
// CHECK-NEXT: %[[WIN:.+]] = tensor.empty() : tensor<2x2xf32>
// CHECK-NEXT: %[[S:.+]] = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[X]], %[[WIN]] : tensor<1x2x4x6xf32>, tensor<2x2xf32>) outs(%[[Z]] : tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32>
// CHECK: linalg.generic {{.*}} ins(%[[S]] : tensor<1x2x2x3xf32>)
// CHECK-NEXT: ^bb0(%[[SUM:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[Q1:.+]] = arith.divf %[[SUM]], %[[C2F]] : f32
// CHECK-NEXT: %[[Q2:.+]] = arith.divf %[[Q1]], %[[C2F]] : f32
// CHECK-NEXT: linalg.yield %[[Q2]] : f32
joint.graph @adaptive_avg_pool_dividing(%x: tensor<1x2x4x6xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x2x2x3xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::_adaptive_avg_pool2d.default"(%x) {args = [#joint.operand<0>, [2, 3]], name = "aap"} : (tensor<1x2x4x6xf32>) -> tensor<1x2x2x3xf32>
  joint.output %0 : tensor<1x2x2x3xf32>
}

// -----

// CHECK-LABEL: func.func @adaptive_avg_pool_overlapping_bins
// CHECK: %[[P:.+]] = tensor.pad %{{.+}} low[0, 0, 0, 0] high[0, 0, 1, 0]
// CHECK: } : tensor<1x1x5x5xf32> to tensor<1x1x6x5xf32>
// CHECK: %[[Z:.+]] = linalg.fill {{.*}} -> tensor<1x1x3x2xf32>
// CHECK-NEXT: %[[WIN:.+]] = tensor.empty() : tensor<3x3xf32>
// CHECK-NEXT: %[[S:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, (d2 * 5) floordiv 3 + d4, (d3 * 5) floordiv 2 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[P]], %[[WIN]] : tensor<1x1x6x5xf32>, tensor<3x3xf32>) outs(%[[Z]] : tensor<1x1x3x2xf32>)
// CHECK-NEXT: ^bb0(%[[X:.+]]: f32, %{{.+}}: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT: %[[OH:.+]] = linalg.index 2 : index
// CHECK-NEXT: %[[KH:.+]] = linalg.index 4 : index
// CHECK-NEXT: %[[A:.+]] = arith.muli %[[OH]], %c5 : index
// CHECK-NEXT: %[[START:.+]] = arith.divui %[[A]], %c3 : index
// CHECK-NEXT: %[[NEXTH:.+]] = arith.addi %[[OH]], %c1 : index
// CHECK-NEXT: %[[B:.+]] = arith.muli %[[NEXTH]], %c5 : index
// CHECK-NEXT: %[[C:.+]] = arith.addi %[[B]], %c2 : index
// CHECK-NEXT: %[[END:.+]] = arith.divui %[[C]], %c3 : index
// CHECK-NEXT: %[[LEN:.+]] = arith.subi %[[END]], %[[START]] : index
// CHECK-NEXT: %[[INH:.+]] = arith.cmpi slt, %[[KH]], %[[LEN]] : index
// CHECK-NEXT: %{{.+}} = linalg.index 3 : index
// CHECK-NEXT: %[[KW:.+]] = linalg.index 5 : index
// CHECK: %[[INW:.+]] = arith.cmpi slt, %[[KW]], %{{.+}} : index
// CHECK-NEXT: %[[IN:.+]] = arith.andi %[[INH]], %[[INW]] : i1
// CHECK-NEXT: %[[SUM:.+]] = arith.addf %[[ACC]], %[[X]] : f32
// CHECK-NEXT: %[[NEXT:.+]] = arith.select %[[IN]], %[[SUM]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[NEXT]] : f32
// CHECK: linalg.generic {{.*}} ins(%[[S]] : tensor<1x1x3x2xf32>)
// CHECK: %[[Q1:.+]] = arith.divf %{{.+}}, %{{.+}} : f32
// CHECK: %[[Q2:.+]] = arith.divf %[[Q1]], %{{.+}} : f32
// CHECK-NEXT: linalg.yield %[[Q2]] : f32
joint.graph @adaptive_avg_pool_overlapping_bins(%x: tensor<1x1x5x5xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x1x3x2xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::_adaptive_avg_pool2d.default"(%x) {args = [#joint.operand<0>, [3, 2]], name = "aap"} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x2xf32>
  joint.output %0 : tensor<1x1x3x2xf32>
}

// -----

// CHECK-LABEL: func.func @adaptive_avg_pool_backward_dividing
// CHECK-DAG: %[[C2F:.+]] = arith.constant 2.000000e+00 : f32
// CHECK: %[[DELTA:.+]] = linalg.generic {{.*}} ins(%{{.+}} : tensor<1x2x2x3xf32>) outs(%{{.+}} : tensor<1x2x2x3xf32>)
// CHECK-NEXT: ^bb0(%[[G:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[Q1:.+]] = arith.divf %[[G]], %[[C2F]] : f32
// CHECK-NEXT: %[[Q2:.+]] = arith.divf %[[Q1]], %[[C2F]] : f32
// CHECK-NEXT: linalg.yield %[[Q2]] : f32
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 2, d3 floordiv 2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[DELTA]] : tensor<1x2x2x3xf32>) outs(%{{.+}} : tensor<1x2x4x6xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK: return %[[R]] : tensor<1x2x4x6xf32>
joint.graph @adaptive_avg_pool_backward_dividing(%g: tensor<1x2x2x3xf32> {joint.role = #joint.role<input>, joint.path = "g"}, %x: tensor<1x2x4x6xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x2x4x6xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::_adaptive_avg_pool2d_backward.default"(%g, %x) {args = [#joint.operand<0>, #joint.operand<1>], name = "aapb"} : (tensor<1x2x2x3xf32>, tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xf32>
  joint.output %0 : tensor<1x2x4x6xf32>
}

// -----

// CHECK-LABEL: func.func @adaptive_avg_pool_backward_overlapping_bins
// CHECK: %[[DELTA:.+]] = linalg.generic {{.*}} ins(%{{.+}} : tensor<1x1x3x2xf32>) outs(%{{.+}} : tensor<1x1x3x2xf32>)
// CHECK: %[[Z:.+]] = linalg.fill {{.*}} -> tensor<1x1x5x5xf32>
// CHECK-NEXT: %[[WIN:.+]] = tensor.empty() : tensor<2x2xf32>
// CHECK-NEXT: %[[S:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[WIN]] : tensor<2x2xf32>) outs(%[[Z]] : tensor<1x1x5x5xf32>)
// CHECK-NEXT: ^bb0(%{{.+}}: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT: %[[IH:.+]] = linalg.index 2 : index
// CHECK-NEXT: %{{.+}} = linalg.index 3 : index
// CHECK-NEXT: %[[RH:.+]] = linalg.index 4 : index
// CHECK-NEXT: %[[A:.+]] = arith.muli %[[IH]], %c3 : index
// CHECK-NEXT: %[[FIRST:.+]] = arith.divui %[[A]], %c5 : index
// CHECK-NEXT: %[[OH:.+]] = arith.addi %[[FIRST]], %[[RH]] : index
// CHECK-NEXT: %[[NEXTH:.+]] = arith.addi %[[IH]], %c1 : index
// CHECK-NEXT: %[[B:.+]] = arith.muli %[[NEXTH]], %c3 : index
// CHECK-NEXT: %[[C:.+]] = arith.addi %[[B]], %c4 : index
// CHECK-NEXT: %[[LAST:.+]] = arith.divui %[[C]], %c5 : index
// CHECK-NEXT: %[[OKH:.+]] = arith.cmpi slt, %[[OH]], %[[LAST]] : index
// CHECK-NEXT: %[[RW:.+]] = linalg.index 5 : index
// CHECK: %[[OKW:.+]] = arith.cmpi slt, %{{.+}}, %{{.+}} : index
// CHECK-NEXT: %[[VALID:.+]] = arith.andi %[[OKH]], %[[OKW]] : i1
// CHECK-NEXT: %[[COH:.+]] = arith.select %[[VALID]], %[[OH]], %c0 : index
// CHECK-NEXT: %[[COW:.+]] = arith.select %[[VALID]], %{{.+}}, %c0 : index
// CHECK-NEXT: %[[GD:.+]] = tensor.extract %[[DELTA]][%c0, %c0, %[[COH]], %[[COW]]] : tensor<1x1x3x2xf32>
// CHECK-NEXT: %[[SUM:.+]] = arith.addf %[[ACC]], %[[GD]] : f32
// CHECK-NEXT: %[[NEXT:.+]] = arith.select %[[VALID]], %[[SUM]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[NEXT]] : f32
// CHECK: return %[[S]] : tensor<1x1x5x5xf32>
joint.graph @adaptive_avg_pool_backward_overlapping_bins(%g: tensor<1x1x3x2xf32> {joint.role = #joint.role<input>, joint.path = "g"}, %x: tensor<1x1x5x5xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x1x5x5xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::_adaptive_avg_pool2d_backward.default"(%g, %x) {args = [#joint.operand<0>, #joint.operand<1>], name = "aapb"} : (tensor<1x1x3x2xf32>, tensor<1x1x5x5xf32>) -> tensor<1x1x5x5xf32>
  joint.output %0 : tensor<1x1x5x5xf32>
}

// -----

// Nearest upsampling by an integer factor (every output position o reads
// o / k): a copy through floordiv.
// CHECK-LABEL: func.func @upsample_nearest_by_two
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<1x2x2x3xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<1x2x4x6xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V1:[^ ,:)]*]] = tensor.empty() : tensor<1x2x4x6xf32>
// CHECK-NEXT: %[[V2:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 2, d3 floordiv 2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[V0]] : tensor<1x2x2x3xf32>) outs(%[[V1]] : tensor<1x2x4x6xf32>) {
// CHECK-NEXT: ^bb0(%[[V3:[^ ,:)]*]]: f32, %[[V4:[^ ,:)]*]]: f32):
// CHECK-NEXT: linalg.yield %[[V3]] : f32
// CHECK-NEXT: } -> tensor<1x2x4x6xf32>
// CHECK-NEXT: return %[[V2]] : tensor<1x2x4x6xf32>
// CHECK-NEXT: }
joint.graph @upsample_nearest_by_two(%x: tensor<1x2x2x3xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x2x4x6xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::upsample_nearest2d.default"(%x) {args = [#joint.operand<0>, [4, 6], 2.000000e+00, 2.000000e+00], name = "up"} : (tensor<1x2x2x3xf32>) -> tensor<1x2x4x6xf32>
  joint.output %0 : tensor<1x2x4x6xf32>
}

// -----

// Sizes not in an integer ratio: torch's index min(floor(o * in / out),
// in - 1) in f32 (3 -> 2: scale 1.5; 2 -> 5: scale 0.4), then a gather.
// CHECK-LABEL: func.func @upsample_nearest_general
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<1x1x3x2xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<1x1x2x5xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V1:[^ ,:)]*]] = arith.constant 0 : index
// CHECK-NEXT: %[[V2:[^ ,:)]*]] = arith.constant 1 : index
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = arith.constant 4.000000e-01 : f32
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = arith.constant 2 : index
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = arith.constant 1.500000e+00 : f32
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = tensor.empty() : tensor<1x1x2x5xf32>
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%[[V6]] : tensor<1x1x2x5xf32>) {
// CHECK-NEXT: ^bb0(%[[V8:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V9:[^ ,:)]*]] = linalg.index 2 : index
// CHECK-NEXT: %[[V10:[^ ,:)]*]] = arith.index_castui %[[V9]] : index to i64
// CHECK-NEXT: %[[V11:[^ ,:)]*]] = arith.uitofp %[[V10]] : i64 to f32
// CHECK-NEXT: %[[V12:[^ ,:)]*]] = arith.mulf %[[V11]], %[[V5]] : f32
// CHECK-NEXT: %[[V13:[^ ,:)]*]] = arith.fptoui %[[V12]] : f32 to i64
// CHECK-NEXT: %[[V14:[^ ,:)]*]] = arith.index_castui %[[V13]] : i64 to index
// CHECK-NEXT: %[[V15:[^ ,:)]*]] = arith.minui %[[V14]], %[[V4]] : index
// CHECK-NEXT: %[[V16:[^ ,:)]*]] = linalg.index 3 : index
// CHECK-NEXT: %[[V17:[^ ,:)]*]] = arith.index_castui %[[V16]] : index to i64
// CHECK-NEXT: %[[V18:[^ ,:)]*]] = arith.uitofp %[[V17]] : i64 to f32
// CHECK-NEXT: %[[V19:[^ ,:)]*]] = arith.mulf %[[V18]], %[[V3]] : f32
// CHECK-NEXT: %[[V20:[^ ,:)]*]] = arith.fptoui %[[V19]] : f32 to i64
// CHECK-NEXT: %[[V21:[^ ,:)]*]] = arith.index_castui %[[V20]] : i64 to index
// CHECK-NEXT: %[[V22:[^ ,:)]*]] = arith.minui %[[V21]], %[[V2]] : index
// CHECK-NEXT: %[[V23:[^ ,:)]*]] = tensor.extract %[[V0]][%[[V1]], %[[V1]], %[[V15]], %[[V22]]] : tensor<1x1x3x2xf32>
// CHECK-NEXT: linalg.yield %[[V23]] : f32
// CHECK-NEXT: } -> tensor<1x1x2x5xf32>
// CHECK-NEXT: return %[[V7]] : tensor<1x1x2x5xf32>
// CHECK-NEXT: }
joint.graph @upsample_nearest_general(%x: tensor<1x1x3x2xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x1x2x5xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::upsample_nearest2d.default"(%x) {args = [#joint.operand<0>, [2, 5]], name = "up"} : (tensor<1x1x3x2xf32>) -> tensor<1x1x2x5xf32>
  joint.output %0 : tensor<1x1x2x5xf32>
}

// -----

// Backward by an integer factor (3 in H and W): grad_output summed over the
// 3x3 windows by linalg.pooling_nchw_sum into f32, rounded once to bf16.
// CHECK-LABEL: func.func @upsample_nearest_backward_by_three
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<1x2x6x3xbf16> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<1x2x2x1xbf16> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V1:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V2:[^ ,:)]*]] = tensor.empty() : tensor<1x2x2x1xf32>
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = linalg.fill ins(%[[V1]] : f32) outs(%[[V2]] : tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = tensor.empty() : tensor<3x3xf32>
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<3> : tensor<2xi64>} ins(%[[V0]], %[[V4]] : tensor<1x2x6x3xbf16>, tensor<3x3xf32>) outs(%[[V3]] : tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = tensor.empty() : tensor<1x2x2x1xbf16>
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[V5]] : tensor<1x2x2x1xf32>) outs(%[[V6]] : tensor<1x2x2x1xbf16>) {
// CHECK-NEXT: ^bb0(%[[V8:[^ ,:)]*]]: f32, %[[V9:[^ ,:)]*]]: bf16):
// CHECK-NEXT: %[[V10:[^ ,:)]*]] = arith.truncf %[[V8]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[V10]] : bf16
// CHECK-NEXT: } -> tensor<1x2x2x1xbf16>
// CHECK-NEXT: return %[[V7]] : tensor<1x2x2x1xbf16>
// CHECK-NEXT: }
joint.graph @upsample_nearest_backward_by_three(%g: tensor<1x2x6x3xbf16> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x2x2x1xbf16> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::upsample_nearest2d_backward.default"(%g) {args = [#joint.operand<0>, [6, 3], [1, 2, 2, 1]], name = "upbw"} : (tensor<1x2x6x3xbf16>) -> tensor<1x2x2x1xbf16>
  joint.output %0 : tensor<1x2x2x1xbf16>
}

// -----

// Backward at a general ratio, scales_w = 2.5 given (index floor(o * 0.4)):
// each input position gathers the output positions o = max(i * out / in, 1)
// - 1 + r mapping to it (reach 2 in H, 4 in W), in increasing order.
// CHECK-LABEL: func.func @upsample_nearest_backward_general
// CHECK-SAME: (%[[V0:[^ ,:)]*]]: tensor<1x1x2x5xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<1x1x3x2xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %[[V1:[^ ,:)]*]] = arith.constant 4.000000e-01 : f32
// CHECK-NEXT: %[[V2:[^ ,:)]*]] = arith.constant 5 : index
// CHECK-NEXT: %[[V3:[^ ,:)]*]] = arith.constant 1.500000e+00 : f32
// CHECK-NEXT: %[[V4:[^ ,:)]*]] = arith.constant 1 : index
// CHECK-NEXT: %[[V5:[^ ,:)]*]] = arith.constant 2 : index
// CHECK-NEXT: %[[V6:[^ ,:)]*]] = arith.constant 3 : index
// CHECK-NEXT: %[[V7:[^ ,:)]*]] = arith.constant 0 : index
// CHECK-NEXT: %[[V8:[^ ,:)]*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V9:[^ ,:)]*]] = tensor.empty() : tensor<1x1x3x2xf32>
// CHECK-NEXT: %[[V10:[^ ,:)]*]] = linalg.fill ins(%[[V8]] : f32) outs(%[[V9]] : tensor<1x1x3x2xf32>) -> tensor<1x1x3x2xf32>
// CHECK-NEXT: %[[V11:[^ ,:)]*]] = tensor.empty() : tensor<2x4xf32>
// CHECK-NEXT: %[[V12:[^ ,:)]*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[V11]] : tensor<2x4xf32>) outs(%[[V10]] : tensor<1x1x3x2xf32>) {
// CHECK-NEXT: ^bb0(%[[V13:[^ ,:)]*]]: f32, %[[V14:[^ ,:)]*]]: f32):
// CHECK-NEXT: %[[V15:[^ ,:)]*]] = linalg.index 2 : index
// CHECK-NEXT: %[[V16:[^ ,:)]*]] = linalg.index 3 : index
// CHECK-NEXT: %[[V17:[^ ,:)]*]] = linalg.index 4 : index
// CHECK-NEXT: %[[V18:[^ ,:)]*]] = arith.muli %[[V15]], %[[V5]] : index
// CHECK-NEXT: %[[V19:[^ ,:)]*]] = arith.divui %[[V18]], %[[V6]] : index
// CHECK-NEXT: %[[V20:[^ ,:)]*]] = arith.maxui %[[V19]], %[[V4]] : index
// CHECK-NEXT: %[[V21:[^ ,:)]*]] = arith.subi %[[V20]], %[[V4]] : index
// CHECK-NEXT: %[[V22:[^ ,:)]*]] = arith.addi %[[V21]], %[[V17]] : index
// CHECK-NEXT: %[[V23:[^ ,:)]*]] = arith.cmpi ult, %[[V22]], %[[V5]] : index
// CHECK-NEXT: %[[V24:[^ ,:)]*]] = arith.select %[[V23]], %[[V22]], %[[V7]] : index
// CHECK-NEXT: %[[V25:[^ ,:)]*]] = arith.index_castui %[[V24]] : index to i64
// CHECK-NEXT: %[[V26:[^ ,:)]*]] = arith.uitofp %[[V25]] : i64 to f32
// CHECK-NEXT: %[[V27:[^ ,:)]*]] = arith.mulf %[[V26]], %[[V3]] : f32
// CHECK-NEXT: %[[V28:[^ ,:)]*]] = arith.fptoui %[[V27]] : f32 to i64
// CHECK-NEXT: %[[V29:[^ ,:)]*]] = arith.index_castui %[[V28]] : i64 to index
// CHECK-NEXT: %[[V30:[^ ,:)]*]] = arith.minui %[[V29]], %[[V5]] : index
// CHECK-NEXT: %[[V31:[^ ,:)]*]] = arith.cmpi eq, %[[V30]], %[[V15]] : index
// CHECK-NEXT: %[[V32:[^ ,:)]*]] = arith.andi %[[V23]], %[[V31]] : i1
// CHECK-NEXT: %[[V33:[^ ,:)]*]] = linalg.index 5 : index
// CHECK-NEXT: %[[V34:[^ ,:)]*]] = arith.muli %[[V16]], %[[V2]] : index
// CHECK-NEXT: %[[V35:[^ ,:)]*]] = arith.divui %[[V34]], %[[V5]] : index
// CHECK-NEXT: %[[V36:[^ ,:)]*]] = arith.maxui %[[V35]], %[[V4]] : index
// CHECK-NEXT: %[[V37:[^ ,:)]*]] = arith.subi %[[V36]], %[[V4]] : index
// CHECK-NEXT: %[[V38:[^ ,:)]*]] = arith.addi %[[V37]], %[[V33]] : index
// CHECK-NEXT: %[[V39:[^ ,:)]*]] = arith.cmpi ult, %[[V38]], %[[V2]] : index
// CHECK-NEXT: %[[V40:[^ ,:)]*]] = arith.select %[[V39]], %[[V38]], %[[V7]] : index
// CHECK-NEXT: %[[V41:[^ ,:)]*]] = arith.index_castui %[[V40]] : index to i64
// CHECK-NEXT: %[[V42:[^ ,:)]*]] = arith.uitofp %[[V41]] : i64 to f32
// CHECK-NEXT: %[[V43:[^ ,:)]*]] = arith.mulf %[[V42]], %[[V1]] : f32
// CHECK-NEXT: %[[V44:[^ ,:)]*]] = arith.fptoui %[[V43]] : f32 to i64
// CHECK-NEXT: %[[V45:[^ ,:)]*]] = arith.index_castui %[[V44]] : i64 to index
// CHECK-NEXT: %[[V46:[^ ,:)]*]] = arith.minui %[[V45]], %[[V4]] : index
// CHECK-NEXT: %[[V47:[^ ,:)]*]] = arith.cmpi eq, %[[V46]], %[[V16]] : index
// CHECK-NEXT: %[[V48:[^ ,:)]*]] = arith.andi %[[V39]], %[[V47]] : i1
// CHECK-NEXT: %[[V49:[^ ,:)]*]] = arith.andi %[[V32]], %[[V48]] : i1
// CHECK-NEXT: %[[V50:[^ ,:)]*]] = arith.select %[[V49]], %[[V22]], %[[V7]] : index
// CHECK-NEXT: %[[V51:[^ ,:)]*]] = arith.select %[[V49]], %[[V38]], %[[V7]] : index
// CHECK-NEXT: %[[V52:[^ ,:)]*]] = tensor.extract %[[V0]][%[[V7]], %[[V7]], %[[V50]], %[[V51]]] : tensor<1x1x2x5xf32>
// CHECK-NEXT: %[[V53:[^ ,:)]*]] = arith.addf %[[V14]], %[[V52]] : f32
// CHECK-NEXT: %[[V54:[^ ,:)]*]] = arith.select %[[V49]], %[[V53]], %[[V14]] : f32
// CHECK-NEXT: linalg.yield %[[V54]] : f32
// CHECK-NEXT: } -> tensor<1x1x3x2xf32>
// CHECK-NEXT: return %[[V12]] : tensor<1x1x3x2xf32>
// CHECK-NEXT: }
joint.graph @upsample_nearest_backward_general(%g: tensor<1x1x2x5xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x1x3x2xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::upsample_nearest2d_backward.default"(%g) {args = [#joint.operand<0>, [2, 5], [1, 1, 3, 2], unit, 2.500000e+00], name = "upbw"} : (tensor<1x1x2x5xf32>) -> tensor<1x1x3x2xf32>
  joint.output %0 : tensor<1x1x3x2xf32>
}

// -----

// Bilinear upsampling 2x3 -> 3x3, align_corners=False: torch's linear tables
// (i0, i1, l0, l1 per output row/column, computed in f32 at compile time:
// src = (o + 0.5) * 2 / 3 - 0.5 clamped at 0; the width is kept, out == in)
// as constant operands of one generic; (x00 * w0 + x01 * w1) * h0 + (x10 *
// w0 + x11 * w1) * h1.
// CHECK-LABEL: func.func @upsample_bilinear
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x1x2x3xf32>
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[H0:.+]] = arith.constant dense<[0, 0, 1]> : tensor<3xindex>
// CHECK-DAG: %[[H1:.+]] = arith.constant dense<1> : tensor<3xindex>
// CHECK-DAG: %[[HL0:.+]] = arith.constant dense<[1.000000e+00, 5.000000e-01, 0.833333254]> : tensor<3xf32>
// CHECK-DAG: %[[HL1:.+]] = arith.constant dense<[0.000000e+00, 5.000000e-01, 0.166666746]> : tensor<3xf32>
// CHECK-DAG: %[[W:.+]] = arith.constant dense<[0, 1, 2]> : tensor<3xindex>
// CHECK-DAG: %[[WL0:.+]] = arith.constant dense<1.000000e+00> : tensor<3xf32>
// CHECK-DAG: %[[WL1:.+]] = arith.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK: %[[E:.+]] = tensor.empty() : tensor<1x1x3x3xf32>
// CHECK-NEXT: %[[R:.+]] = linalg.generic {{.*}} ins(%[[H0]], %[[H1]], %[[HL0]], %[[HL1]], %[[W]], %[[W]], %[[WL0]], %[[WL1]] : {{.*}}) outs(%[[E]] : tensor<1x1x3x3xf32>)
// CHECK-NEXT: ^bb0(%[[A0:[^:]+]]: index, %[[A1:[^:]+]]: index, %[[A2:[^:]+]]: f32, %[[A3:[^:]+]]: f32, %[[A4:[^:]+]]: index, %[[A5:[^:]+]]: index, %[[A6:[^:]+]]: f32, %[[A7:[^:]+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[X00:.+]] = tensor.extract %[[X]][%[[C0]], %[[C0]], %[[A0]], %[[A4]]] : tensor<1x1x2x3xf32>
// CHECK-NEXT: %[[M00:.+]] = arith.mulf %[[X00]], %[[A6]] : f32
// CHECK-NEXT: %[[X01:.+]] = tensor.extract %[[X]][%[[C0]], %[[C0]], %[[A0]], %[[A5]]] : tensor<1x1x2x3xf32>
// CHECK-NEXT: %[[M01:.+]] = arith.mulf %[[X01]], %[[A7]] : f32
// CHECK-NEXT: %[[T0:.+]] = arith.addf %[[M00]], %[[M01]] : f32
// CHECK-NEXT: %[[TOP:.+]] = arith.mulf %[[T0]], %[[A2]] : f32
// CHECK-NEXT: %[[X10:.+]] = tensor.extract %[[X]][%[[C0]], %[[C0]], %[[A1]], %[[A4]]] : tensor<1x1x2x3xf32>
// CHECK-NEXT: %[[M10:.+]] = arith.mulf %[[X10]], %[[A6]] : f32
// CHECK-NEXT: %[[X11:.+]] = tensor.extract %[[X]][%[[C0]], %[[C0]], %[[A1]], %[[A5]]] : tensor<1x1x2x3xf32>
// CHECK-NEXT: %[[M11:.+]] = arith.mulf %[[X11]], %[[A7]] : f32
// CHECK-NEXT: %[[T1:.+]] = arith.addf %[[M10]], %[[M11]] : f32
// CHECK-NEXT: %[[BOT:.+]] = arith.mulf %[[T1]], %[[A3]] : f32
// CHECK-NEXT: %[[V:.+]] = arith.addf %[[TOP]], %[[BOT]] : f32
// CHECK-NEXT: linalg.yield %[[V]] : f32
// CHECK: return %[[R]] : tensor<1x1x3x3xf32>
joint.graph @upsample_bilinear(%x: tensor<1x1x2x3xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x1x3x3xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::upsample_bilinear2d.default"(%x) {args = [#joint.operand<0>, [3, 3], false], name = "up"} : (tensor<1x1x2x3xf32>) -> tensor<1x1x3x3xf32>
  joint.output %0 : tensor<1x1x3x3xf32>
}

// -----

// Its backward (align_corners=True, 2x3 <- 3x3, bf16): a gather over input
// positions; each input row ih reads the output rows first[ih] + r for
// r < count[ih] (first folded to 0 here, counts [2, 3]: o = 0 touches row 1
// with weight 0, as torch adds it), adding the h * w * g terms matching
// (ih, iw) in torch's order i00, i01, i10, i11 in f32; one rounding to bf16.
// CHECK-LABEL: func.func @upsample_bilinear_backward
// CHECK-SAME: (%[[G:[^:]+]]: tensor<1x1x3x3xbf16>
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[H0:.+]] = arith.constant dense<[0, 0, 1]> : tensor<3xindex>
// CHECK-DAG: %[[HL0:.+]] = arith.constant dense<[1.000000e+00, 5.000000e-01, 1.000000e+00]> : tensor<3xf32>
// CHECK-DAG: %[[HL1:.+]] = arith.constant dense<[0.000000e+00, 5.000000e-01, 0.000000e+00]> : tensor<3xf32>
// CHECK-DAG: %[[CNT:.+]] = arith.constant dense<[2, 3]> : tensor<2xindex>
// CHECK-DAG: %[[W:.+]] = arith.constant dense<[0, 1, 2]> : tensor<3xindex>
// CHECK: %[[S:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%{{.+}} : tensor<3x1xf32>) outs(%{{.+}} : tensor<1x1x2x3xf32>)
// CHECK-NEXT: ^bb0(%{{.+}}: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT: %[[IH:.+]] = linalg.index 2 : index
// CHECK-NEXT: %[[IW:.+]] = linalg.index 3 : index
// CHECK-NEXT: %[[RH:.+]] = linalg.index 4 : index
// CHECK-NEXT: %[[N:.+]] = tensor.extract %[[CNT]][%[[IH]]] : tensor<2xindex>
// CHECK-NEXT: %[[VALID:.+]] = arith.cmpi ult, %[[RH]], %[[N]] : index
// CHECK-NEXT: %[[OW0:.+]] = tensor.extract %[[W]][%[[IW]]] : tensor<3xindex>
// CHECK-NEXT: %[[OH:.+]] = arith.select %[[VALID]], %[[RH]], %[[C0]] : index
// CHECK-NEXT: %[[OW:.+]] = arith.select %[[VALID]], %[[OW0]], %[[C0]] : index
// CHECK-NEXT: %[[GB:.+]] = tensor.extract %[[G]][%[[C0]], %[[C0]], %[[OH]], %[[OW]]] : tensor<1x1x3x3xbf16>
// CHECK-NEXT: %[[G32:.+]] = arith.extf %[[GB]] : bf16 to f32
// CHECK-NEXT: %[[HI0:.+]] = tensor.extract %[[H0]][%[[OH]]] : tensor<3xindex>
// CHECK-NEXT: %[[HW0:.+]] = tensor.extract %[[HL0]][%[[OH]]] : tensor<3xf32>
// CHECK-NEXT: %[[HW1:.+]] = tensor.extract %[[HL1]][%[[OH]]] : tensor<3xf32>
// CHECK-NEXT: %[[WI0:.+]] = tensor.extract %[[W]][%[[OW]]] : tensor<3xindex>
// CHECK-NEXT: %[[WI1:.+]] = tensor.extract %[[W]][%[[OW]]] : tensor<3xindex>
// CHECK-NEXT: %[[HH:.+]] = arith.cmpi eq, %[[HI0]], %[[IH]] : index
// CHECK-NEXT: %[[WH:.+]] = arith.cmpi eq, %[[WI0]], %[[IW]] : index
// CHECK-NEXT: %[[BOTH:.+]] = arith.andi %[[HH]], %[[WH]] : i1
// CHECK-NEXT: %[[HIT:.+]] = arith.andi %[[VALID]], %[[BOTH]] : i1
// CHECK-NEXT: %[[TERM:.+]] = arith.mulf %[[HW0]], %[[G32]] : f32
// CHECK-NEXT: %[[ADD:.+]] = arith.addf %[[ACC]], %[[TERM]] : f32
// CHECK-NEXT: %[[A1:.+]] = arith.select %[[HIT]], %[[ADD]], %[[ACC]] : f32
// CHECK-COUNT-3: arith.select %{{.+}}, %{{.+}}, %{{.+}} : f32
// CHECK-NEXT: linalg.yield
// CHECK: arith.truncf %{{.+}} : f32 to bf16
joint.graph @upsample_bilinear_backward(%g: tensor<1x1x3x3xbf16> {joint.role = #joint.role<input>, joint.path = "g"}) -> (tensor<1x1x2x3xbf16> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::upsample_bilinear2d_backward.default"(%g) {args = [#joint.operand<0>, [3, 3], [1, 1, 2, 3], true], name = "upb"} : (tensor<1x1x3x3xbf16>) -> tensor<1x1x2x3xbf16>
  joint.output %0 : tensor<1x1x2x3xbf16>
}

// convert-joint-to-linalg{sdpa-row-block=8} (the CPU pipeline uses 64):
// attention in loops over batch, key/value head and blocks of 8 query rows;
// the causal mask compares key and row + the block's first row; masks are
// sliced to the block's rows; the backward's dQ is finished per block and
// dK/dV accumulate in f32 per head, finished after the head's last block.
// RUN: joint-opt %s -convert-joint-to-linalg=sdpa-row-block=8 -mlir-print-local-scope | FileCheck %s

// CHECK: module {
// CHECK-LABEL: func.func @causal_gqa(%arg0: tensor<2x4x16x8xf32> {joint.path = "x", joint.role = #joint.role<input>}, %arg1: tensor<2x2x16x8xf32> {joint.path = "x", joint.role = #joint.role<input>}, %arg2: tensor<2x2x16x8xf32> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<2x4x16x8xf32> {joint.role = #joint.role<output>}, tensor<2x4x16xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %c8 = arith.constant 8 : index
// CHECK-NEXT: %0 = arith.index_cast %c8 : index to i64
// CHECK-NEXT: %1 = arith.sitofp %0 : i64 to f32
// CHECK-NEXT: %2 = math.rsqrt %1 : f32
// CHECK-NEXT: %expanded = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2], [3], [4{{\]\]}} output_shape [2, 2, 2, 16, 8] : tensor<2x4x16x8xf32> into tensor<2x2x2x16x8xf32>
// CHECK-NEXT: %3 = tensor.empty() : tensor<2x2x2x16x8xf32>
// CHECK-NEXT: %4 = tensor.empty() : tensor<2x2x2x16xf32>
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %c1 = arith.constant 1 : index
// CHECK-NEXT: %c2 = arith.constant 2 : index
// CHECK-NEXT: %c2_0 = arith.constant 2 : index
// CHECK-NEXT: %5:2 = scf.for %arg3 = %c0 to %c2 step %c1 iter_args(%arg4 = %3, %arg5 = %4) -> (tensor<2x2x2x16x8xf32>, tensor<2x2x2x16xf32>) {
// CHECK-NEXT: %6:2 = scf.for %arg6 = %c0 to %c2_0 step %c1 iter_args(%arg7 = %arg4, %arg8 = %arg5) -> (tensor<2x2x2x16x8xf32>, tensor<2x2x2x16xf32>) {
// CHECK-NEXT: %c8_2 = arith.constant 8 : index
// CHECK-NEXT: %c16 = arith.constant 16 : index
// CHECK-NEXT: %7:2 = scf.for %arg9 = %c0 to %c16 step %c8_2 iter_args(%arg10 = %arg7, %arg11 = %arg8) -> (tensor<2x2x2x16x8xf32>, tensor<2x2x2x16xf32>) {
// CHECK-NEXT: %extracted_slice = tensor.extract_slice %expanded[%arg3, %arg6, 0, %arg9, 0] [1, 1, 2, 8, 8] [1, 1, 1, 1, 1] : tensor<2x2x2x16x8xf32> to tensor<1x1x2x8x8xf32>
// CHECK-NEXT: %extracted_slice_3 = tensor.extract_slice %arg1[%arg3, %arg6, 0, 0] [1, 1, 16, 8] [1, 1, 1, 1] : tensor<2x2x16x8xf32> to tensor<1x1x16x8xf32>
// CHECK-NEXT: %extracted_slice_4 = tensor.extract_slice %arg2[%arg3, %arg6, 0, 0] [1, 1, 16, 8] [1, 1, 1, 1] : tensor<2x2x16x8xf32> to tensor<1x1x16x8xf32>
// CHECK-NEXT: %cst = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %8 = tensor.empty() : tensor<1x1x2x8x16xf32>
// CHECK-NEXT: %9 = linalg.fill ins(%cst : f32) outs(%8 : tensor<1x1x2x8x16xf32>) -> tensor<1x1x2x8x16xf32>
// CHECK-NEXT: %10 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%extracted_slice, %extracted_slice_3 : tensor<1x1x2x8x8xf32>, tensor<1x1x16x8xf32>) outs(%9 : tensor<1x1x2x8x16xf32>) {
// CHECK-NEXT: ^bb0(%in: f32, %in_9: f32, %out: f32):
// CHECK-NEXT: %28 = arith.mulf %in, %in_9 : f32
// CHECK-NEXT: %29 = arith.addf %out, %28 : f32
// CHECK-NEXT: linalg.yield %29 : f32
// CHECK-NEXT: } -> tensor<1x1x2x8x16xf32>
// CHECK-NEXT: %11 = tensor.empty() : tensor<1x1x2x8x16xf32>
// CHECK-NEXT: %12 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%10 : tensor<1x1x2x8x16xf32>) outs(%11 : tensor<1x1x2x8x16xf32>) {
// CHECK-NEXT: ^bb0(%in: f32, %out: f32):
// CHECK-NEXT: %28 = arith.mulf %in, %2 : f32
// CHECK-NEXT: %cst_9 = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %29 = linalg.index 3 : index
// CHECK-NEXT: %30 = arith.addi %29, %arg9 : index
// CHECK-NEXT: %31 = linalg.index 4 : index
// CHECK-NEXT: %32 = arith.cmpi ule, %31, %30 : index
// CHECK-NEXT: %33 = arith.select %32, %28, %cst_9 : f32
// CHECK-NEXT: linalg.yield %33 : f32
// CHECK-NEXT: } -> tensor<1x1x2x8x16xf32>
// CHECK-NEXT: %cst_5 = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %13 = tensor.empty() : tensor<1x1x2x8xf32>
// CHECK-NEXT: %14 = linalg.fill ins(%cst_5 : f32) outs(%13 : tensor<1x1x2x8xf32>) -> tensor<1x1x2x8xf32>
// CHECK-NEXT: %15 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%12 : tensor<1x1x2x8x16xf32>) outs(%14 : tensor<1x1x2x8xf32>) {
// CHECK-NEXT: ^bb0(%in: f32, %out: f32):
// CHECK-NEXT: %28 = arith.maximumf %out, %in : f32
// CHECK-NEXT: linalg.yield %28 : f32
// CHECK-NEXT: } -> tensor<1x1x2x8xf32>
// CHECK-NEXT: %cst_6 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %16 = tensor.empty() : tensor<1x1x2x8xf32>
// CHECK-NEXT: %17 = linalg.fill ins(%cst_6 : f32) outs(%16 : tensor<1x1x2x8xf32>) -> tensor<1x1x2x8xf32>
// CHECK-NEXT: %18 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%12, %15 : tensor<1x1x2x8x16xf32>, tensor<1x1x2x8xf32>) outs(%17 : tensor<1x1x2x8xf32>) {
// CHECK-NEXT: ^bb0(%in: f32, %in_9: f32, %out: f32):
// CHECK-NEXT: %28 = arith.subf %in, %in_9 : f32
// CHECK-NEXT: %29 = math.exp %28 : f32
// CHECK-NEXT: %30 = arith.addf %out, %29 : f32
// CHECK-NEXT: linalg.yield %30 : f32
// CHECK-NEXT: } -> tensor<1x1x2x8xf32>
// CHECK-NEXT: %19 = tensor.empty() : tensor<1x1x2x8xf32>
// CHECK-NEXT: %20 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%15, %18 : tensor<1x1x2x8xf32>, tensor<1x1x2x8xf32>) outs(%19 : tensor<1x1x2x8xf32>) {
// CHECK-NEXT: ^bb0(%in: f32, %in_9: f32, %out: f32):
// CHECK-NEXT: %28 = math.log %in_9 : f32
// CHECK-NEXT: %29 = arith.addf %in, %28 : f32
// CHECK-NEXT: linalg.yield %29 : f32
// CHECK-NEXT: } -> tensor<1x1x2x8xf32>
// CHECK-NEXT: %21 = tensor.empty() : tensor<1x1x2x8x16xf32>
// CHECK-NEXT: %22 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%12, %20 : tensor<1x1x2x8x16xf32>, tensor<1x1x2x8xf32>) outs(%21 : tensor<1x1x2x8x16xf32>) {
// CHECK-NEXT: ^bb0(%in: f32, %in_9: f32, %out: f32):
// CHECK-NEXT: %28 = arith.subf %in, %in_9 : f32
// CHECK-NEXT: %29 = math.exp %28 : f32
// CHECK-NEXT: linalg.yield %29 : f32
// CHECK-NEXT: } -> tensor<1x1x2x8x16xf32>
// CHECK-NEXT: %cst_7 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %23 = tensor.empty() : tensor<1x1x2x8x8xf32>
// CHECK-NEXT: %24 = linalg.fill ins(%cst_7 : f32) outs(%23 : tensor<1x1x2x8x8xf32>) -> tensor<1x1x2x8x8xf32>
// CHECK-NEXT: %25 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d5, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%22, %extracted_slice_4 : tensor<1x1x2x8x16xf32>, tensor<1x1x16x8xf32>) outs(%24 : tensor<1x1x2x8x8xf32>) {
// CHECK-NEXT: ^bb0(%in: f32, %in_9: f32, %out: f32):
// CHECK-NEXT: %28 = arith.mulf %in, %in_9 : f32
// CHECK-NEXT: %29 = arith.addf %out, %28 : f32
// CHECK-NEXT: linalg.yield %29 : f32
// CHECK-NEXT: } -> tensor<1x1x2x8x8xf32>
// CHECK-NEXT: %26 = tensor.empty() : tensor<1x1x2x8x8xf32>
// CHECK-NEXT: %27 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%25 : tensor<1x1x2x8x8xf32>) outs(%26 : tensor<1x1x2x8x8xf32>) {
// CHECK-NEXT: ^bb0(%in: f32, %out: f32):
// CHECK-NEXT: linalg.yield %in : f32
// CHECK-NEXT: } -> tensor<1x1x2x8x8xf32>
// CHECK-NEXT: %inserted_slice = tensor.insert_slice %27 into %arg10[%arg3, %arg6, 0, %arg9, 0] [1, 1, 2, 8, 8] [1, 1, 1, 1, 1] : tensor<1x1x2x8x8xf32> into tensor<2x2x2x16x8xf32>
// CHECK-NEXT: %inserted_slice_8 = tensor.insert_slice %20 into %arg11[%arg3, %arg6, 0, %arg9] [1, 1, 2, 8] [1, 1, 1, 1] : tensor<1x1x2x8xf32> into tensor<2x2x2x16xf32>
// CHECK-NEXT: scf.yield %inserted_slice, %inserted_slice_8 : tensor<2x2x2x16x8xf32>, tensor<2x2x2x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %7#0, %7#1 : tensor<2x2x2x16x8xf32>, tensor<2x2x2x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %6#0, %6#1 : tensor<2x2x2x16x8xf32>, tensor<2x2x2x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %collapsed = tensor.collapse_shape %5#0 {{\[\[}}0], [1, 2], [3], [4{{\]\]}} : tensor<2x2x2x16x8xf32> into tensor<2x4x16x8xf32>
// CHECK-NEXT: %collapsed_1 = tensor.collapse_shape %5#1 {{\[\[}}0], [1, 2], [3{{\]\]}} : tensor<2x2x2x16xf32> into tensor<2x4x16xf32>
// CHECK-NEXT: return %collapsed, %collapsed_1 : tensor<2x4x16x8xf32>, tensor<2x4x16xf32>
// CHECK-NEXT: }
// CHECK-LABEL: func.func @backward_mask(%arg0: tensor<1x2x16x8xbf16> {joint.path = "x", joint.role = #joint.role<input>}, %arg1: tensor<1x2x16x8xbf16> {joint.path = "x", joint.role = #joint.role<input>}, %arg2: tensor<1x2x16x8xbf16> {joint.path = "x", joint.role = #joint.role<input>}, %arg3: tensor<1x2x16x8xbf16> {joint.path = "x", joint.role = #joint.role<input>}, %arg4: tensor<1x2x16x8xbf16> {joint.path = "x", joint.role = #joint.role<input>}, %arg5: tensor<1x2x16xf32> {joint.path = "x", joint.role = #joint.role<input>}, %arg6: tensor<1x1x16x16xbf16> {joint.path = "x", joint.role = #joint.role<input>}) -> (tensor<1x2x16x8xbf16> {joint.role = #joint.role<output>}, tensor<1x2x16x8xbf16> {joint.role = #joint.role<output>}, tensor<1x2x16x8xbf16> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %c8 = arith.constant 8 : index
// CHECK-NEXT: %0 = arith.index_cast %c8 : index to i64
// CHECK-NEXT: %1 = arith.sitofp %0 : i64 to f32
// CHECK-NEXT: %2 = math.rsqrt %1 : f32
// CHECK-NEXT: %expanded = tensor.expand_shape %arg1 {{\[\[}}0], [1, 2], [3], [4{{\]\]}} output_shape [1, 2, 1, 16, 8] : tensor<1x2x16x8xbf16> into tensor<1x2x1x16x8xbf16>
// CHECK-NEXT: %expanded_0 = tensor.expand_shape %arg5 {{\[\[}}0], [1, 2], [3{{\]\]}} output_shape [1, 2, 1, 16] : tensor<1x2x16xf32> into tensor<1x2x1x16xf32>
// CHECK-NEXT: %expanded_1 = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2], [3], [4{{\]\]}} output_shape [1, 2, 1, 16, 8] : tensor<1x2x16x8xbf16> into tensor<1x2x1x16x8xbf16>
// CHECK-NEXT: %expanded_2 = tensor.expand_shape %arg4 {{\[\[}}0], [1, 2], [3], [4{{\]\]}} output_shape [1, 2, 1, 16, 8] : tensor<1x2x16x8xbf16> into tensor<1x2x1x16x8xbf16>
// CHECK-NEXT: %3 = tensor.empty() : tensor<1x2x16x8xbf16>
// CHECK-NEXT: %4 = tensor.empty() : tensor<1x2x16x8xbf16>
// CHECK-NEXT: %5 = tensor.empty() : tensor<1x2x1x16x8xbf16>
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %c1 = arith.constant 1 : index
// CHECK-NEXT: %c1_3 = arith.constant 1 : index
// CHECK-NEXT: %c2 = arith.constant 2 : index
// CHECK-NEXT: %6:3 = scf.for %arg7 = %c0 to %c1_3 step %c1 iter_args(%arg8 = %5, %arg9 = %3, %arg10 = %4) -> (tensor<1x2x1x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>) {
// CHECK-NEXT: %7:3 = scf.for %arg11 = %c0 to %c2 step %c1 iter_args(%arg12 = %arg8, %arg13 = %arg9, %arg14 = %arg10) -> (tensor<1x2x1x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>) {
// CHECK-NEXT: %cst = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %8 = tensor.empty() : tensor<1x1x16x8xf32>
// CHECK-NEXT: %9 = linalg.fill ins(%cst : f32) outs(%8 : tensor<1x1x16x8xf32>) -> tensor<1x1x16x8xf32>
// CHECK-NEXT: %cst_4 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %10 = tensor.empty() : tensor<1x1x16x8xf32>
// CHECK-NEXT: %11 = linalg.fill ins(%cst_4 : f32) outs(%10 : tensor<1x1x16x8xf32>) -> tensor<1x1x16x8xf32>
// CHECK-NEXT: %c8_5 = arith.constant 8 : index
// CHECK-NEXT: %c16 = arith.constant 16 : index
// CHECK-NEXT: %12:3 = scf.for %arg15 = %c0 to %c16 step %c8_5 iter_args(%arg16 = %arg12, %arg17 = %9, %arg18 = %11) -> (tensor<1x2x1x16x8xbf16>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>) {
// CHECK-NEXT: %extracted_slice = tensor.extract_slice %expanded[%arg7, %arg11, 0, %arg15, 0] [1, 1, 1, 8, 8] [1, 1, 1, 1, 1] : tensor<1x2x1x16x8xbf16> to tensor<1x1x1x8x8xbf16>
// CHECK-NEXT: %extracted_slice_7 = tensor.extract_slice %arg2[%arg7, %arg11, 0, 0] [1, 1, 16, 8] [1, 1, 1, 1] : tensor<1x2x16x8xbf16> to tensor<1x1x16x8xbf16>
// CHECK-NEXT: %extracted_slice_8 = tensor.extract_slice %arg3[%arg7, %arg11, 0, 0] [1, 1, 16, 8] [1, 1, 1, 1] : tensor<1x2x16x8xbf16> to tensor<1x1x16x8xbf16>
// CHECK-NEXT: %extracted_slice_9 = tensor.extract_slice %arg6[0, 0, %arg15, 0] [1, 1, 8, 16] [1, 1, 1, 1] : tensor<1x1x16x16xbf16> to tensor<1x1x8x16xbf16>
// CHECK-NEXT: %extracted_slice_10 = tensor.extract_slice %expanded_1[%arg7, %arg11, 0, %arg15, 0] [1, 1, 1, 8, 8] [1, 1, 1, 1, 1] : tensor<1x2x1x16x8xbf16> to tensor<1x1x1x8x8xbf16>
// CHECK-NEXT: %extracted_slice_11 = tensor.extract_slice %expanded_2[%arg7, %arg11, 0, %arg15, 0] [1, 1, 1, 8, 8] [1, 1, 1, 1, 1] : tensor<1x2x1x16x8xbf16> to tensor<1x1x1x8x8xbf16>
// CHECK-NEXT: %extracted_slice_12 = tensor.extract_slice %expanded_0[%arg7, %arg11, 0, %arg15] [1, 1, 1, 8] [1, 1, 1, 1] : tensor<1x2x1x16xf32> to tensor<1x1x1x8xf32>
// CHECK-NEXT: %cst_13 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %17 = tensor.empty() : tensor<1x1x1x8x16xf32>
// CHECK-NEXT: %18 = linalg.fill ins(%cst_13 : f32) outs(%17 : tensor<1x1x1x8x16xf32>) -> tensor<1x1x1x8x16xf32>
// CHECK-NEXT: %19 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%extracted_slice, %extracted_slice_7 : tensor<1x1x1x8x8xbf16>, tensor<1x1x16x8xbf16>) outs(%18 : tensor<1x1x1x8x16xf32>) {
// CHECK-NEXT: ^bb0(%in: bf16, %in_18: bf16, %out: f32):
// CHECK-NEXT: %42 = arith.extf %in : bf16 to f32
// CHECK-NEXT: %43 = arith.extf %in_18 : bf16 to f32
// CHECK-NEXT: %44 = arith.mulf %42, %43 : f32
// CHECK-NEXT: %45 = arith.addf %out, %44 : f32
// CHECK-NEXT: linalg.yield %45 : f32
// CHECK-NEXT: } -> tensor<1x1x1x8x16xf32>
// CHECK-NEXT: %20 = tensor.empty() : tensor<1x1x1x8x16xf32>
// CHECK-NEXT: %21 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (0, 0, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%19, %extracted_slice_9 : tensor<1x1x1x8x16xf32>, tensor<1x1x8x16xbf16>) outs(%20 : tensor<1x1x1x8x16xf32>) {
// CHECK-NEXT: ^bb0(%in: f32, %in_18: bf16, %out: f32):
// CHECK-NEXT: %42 = arith.mulf %in, %2 : f32
// CHECK-NEXT: %cst_19 = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %43 = arith.extf %in_18 : bf16 to f32
// CHECK-NEXT: %44 = arith.addf %42, %43 : f32
// CHECK-NEXT: linalg.yield %44 : f32
// CHECK-NEXT: } -> tensor<1x1x1x8x16xf32>
// CHECK-NEXT: %22 = tensor.empty() : tensor<1x1x1x8x16xf32>
// CHECK-NEXT: %23 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%21, %extracted_slice_12 : tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>) outs(%22 : tensor<1x1x1x8x16xf32>) {
// CHECK-NEXT: ^bb0(%in: f32, %in_18: f32, %out: f32):
// CHECK-NEXT: %42 = arith.subf %in, %in_18 : f32
// CHECK-NEXT: %43 = math.exp %42 : f32
// CHECK-NEXT: linalg.yield %43 : f32
// CHECK-NEXT: } -> tensor<1x1x1x8x16xf32>
// CHECK-NEXT: %cst_14 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %24 = tensor.empty() : tensor<1x1x1x8x16xf32>
// CHECK-NEXT: %25 = linalg.fill ins(%cst_14 : f32) outs(%24 : tensor<1x1x1x8x16xf32>) -> tensor<1x1x1x8x16xf32>
// CHECK-NEXT: %26 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%extracted_slice_10, %extracted_slice_8 : tensor<1x1x1x8x8xbf16>, tensor<1x1x16x8xbf16>) outs(%25 : tensor<1x1x1x8x16xf32>) {
// CHECK-NEXT: ^bb0(%in: bf16, %in_18: bf16, %out: f32):
// CHECK-NEXT: %42 = arith.extf %in : bf16 to f32
// CHECK-NEXT: %43 = arith.extf %in_18 : bf16 to f32
// CHECK-NEXT: %44 = arith.mulf %42, %43 : f32
// CHECK-NEXT: %45 = arith.addf %out, %44 : f32
// CHECK-NEXT: linalg.yield %45 : f32
// CHECK-NEXT: } -> tensor<1x1x1x8x16xf32>
// CHECK-NEXT: %cst_15 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %27 = tensor.empty() : tensor<1x1x1x8xf32>
// CHECK-NEXT: %28 = linalg.fill ins(%cst_15 : f32) outs(%27 : tensor<1x1x1x8xf32>) -> tensor<1x1x1x8xf32>
// CHECK-NEXT: %29 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%extracted_slice_10, %extracted_slice_11 : tensor<1x1x1x8x8xbf16>, tensor<1x1x1x8x8xbf16>) outs(%28 : tensor<1x1x1x8xf32>) {
// CHECK-NEXT: ^bb0(%in: bf16, %in_18: bf16, %out: f32):
// CHECK-NEXT: %42 = arith.extf %in_18 : bf16 to f32
// CHECK-NEXT: %43 = arith.extf %in : bf16 to f32
// CHECK-NEXT: %44 = arith.mulf %43, %42 : f32
// CHECK-NEXT: %45 = arith.addf %out, %44 : f32
// CHECK-NEXT: linalg.yield %45 : f32
// CHECK-NEXT: } -> tensor<1x1x1x8xf32>
// CHECK-NEXT: %30 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%23, %29 : tensor<1x1x1x8x16xf32>, tensor<1x1x1x8xf32>) outs(%26 : tensor<1x1x1x8x16xf32>) {
// CHECK-NEXT: ^bb0(%in: f32, %in_18: f32, %out: f32):
// CHECK-NEXT: %42 = arith.subf %out, %in_18 : f32
// CHECK-NEXT: %43 = arith.mulf %in, %42 : f32
// CHECK-NEXT: linalg.yield %43 : f32
// CHECK-NEXT: } -> tensor<1x1x1x8x16xf32>
// CHECK-NEXT: %31 = tensor.empty() : tensor<1x1x1x8x16xbf16>
// CHECK-NEXT: %32 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%23 : tensor<1x1x1x8x16xf32>) outs(%31 : tensor<1x1x1x8x16xbf16>) {
// CHECK-NEXT: ^bb0(%in: f32, %out: bf16):
// CHECK-NEXT: %42 = arith.truncf %in : f32 to bf16
// CHECK-NEXT: linalg.yield %42 : bf16
// CHECK-NEXT: } -> tensor<1x1x1x8x16xbf16>
// CHECK-NEXT: %33 = tensor.empty() : tensor<1x1x1x8x16xbf16>
// CHECK-NEXT: %34 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%30 : tensor<1x1x1x8x16xf32>) outs(%33 : tensor<1x1x1x8x16xbf16>) {
// CHECK-NEXT: ^bb0(%in: f32, %out: bf16):
// CHECK-NEXT: %42 = arith.truncf %in : f32 to bf16
// CHECK-NEXT: linalg.yield %42 : bf16
// CHECK-NEXT: } -> tensor<1x1x1x8x16xbf16>
// CHECK-NEXT: %cst_16 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %35 = tensor.empty() : tensor<1x1x1x8x8xf32>
// CHECK-NEXT: %36 = linalg.fill ins(%cst_16 : f32) outs(%35 : tensor<1x1x1x8x8xf32>) -> tensor<1x1x1x8x8xf32>
// CHECK-NEXT: %37 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d5, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%34, %extracted_slice_7 : tensor<1x1x1x8x16xbf16>, tensor<1x1x16x8xbf16>) outs(%36 : tensor<1x1x1x8x8xf32>) {
// CHECK-NEXT: ^bb0(%in: bf16, %in_18: bf16, %out: f32):
// CHECK-NEXT: %42 = arith.extf %in : bf16 to f32
// CHECK-NEXT: %43 = arith.extf %in_18 : bf16 to f32
// CHECK-NEXT: %44 = arith.mulf %42, %43 : f32
// CHECK-NEXT: %45 = arith.addf %out, %44 : f32
// CHECK-NEXT: linalg.yield %45 : f32
// CHECK-NEXT: } -> tensor<1x1x1x8x8xf32>
// CHECK-NEXT: %38 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5, d2)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%34, %extracted_slice : tensor<1x1x1x8x16xbf16>, tensor<1x1x1x8x8xbf16>) outs(%arg17 : tensor<1x1x16x8xf32>) {
// CHECK-NEXT: ^bb0(%in: bf16, %in_18: bf16, %out: f32):
// CHECK-NEXT: %42 = arith.extf %in : bf16 to f32
// CHECK-NEXT: %43 = arith.extf %in_18 : bf16 to f32
// CHECK-NEXT: %44 = arith.mulf %42, %43 : f32
// CHECK-NEXT: %45 = arith.addf %out, %44 : f32
// CHECK-NEXT: linalg.yield %45 : f32
// CHECK-NEXT: } -> tensor<1x1x16x8xf32>
// CHECK-NEXT: %39 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5, d2)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%32, %extracted_slice_10 : tensor<1x1x1x8x16xbf16>, tensor<1x1x1x8x8xbf16>) outs(%arg18 : tensor<1x1x16x8xf32>) {
// CHECK-NEXT: ^bb0(%in: bf16, %in_18: bf16, %out: f32):
// CHECK-NEXT: %42 = arith.extf %in : bf16 to f32
// CHECK-NEXT: %43 = arith.extf %in_18 : bf16 to f32
// CHECK-NEXT: %44 = arith.mulf %42, %43 : f32
// CHECK-NEXT: %45 = arith.addf %out, %44 : f32
// CHECK-NEXT: linalg.yield %45 : f32
// CHECK-NEXT: } -> tensor<1x1x16x8xf32>
// CHECK-NEXT: %40 = tensor.empty() : tensor<1x1x1x8x8xbf16>
// CHECK-NEXT: %41 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%37 : tensor<1x1x1x8x8xf32>) outs(%40 : tensor<1x1x1x8x8xbf16>) {
// CHECK-NEXT: ^bb0(%in: f32, %out: bf16):
// CHECK-NEXT: %42 = arith.mulf %in, %2 : f32
// CHECK-NEXT: %43 = arith.truncf %42 : f32 to bf16
// CHECK-NEXT: linalg.yield %43 : bf16
// CHECK-NEXT: } -> tensor<1x1x1x8x8xbf16>
// CHECK-NEXT: %inserted_slice_17 = tensor.insert_slice %41 into %arg16[%arg7, %arg11, 0, %arg15, 0] [1, 1, 1, 8, 8] [1, 1, 1, 1, 1] : tensor<1x1x1x8x8xbf16> into tensor<1x2x1x16x8xbf16>
// CHECK-NEXT: scf.yield %inserted_slice_17, %38, %39 : tensor<1x2x1x16x8xbf16>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %13 = tensor.empty() : tensor<1x1x16x8xbf16>
// CHECK-NEXT: %14 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%12#1 : tensor<1x1x16x8xf32>) outs(%13 : tensor<1x1x16x8xbf16>) {
// CHECK-NEXT: ^bb0(%in: f32, %out: bf16):
// CHECK-NEXT: %17 = arith.mulf %in, %2 : f32
// CHECK-NEXT: %18 = arith.truncf %17 : f32 to bf16
// CHECK-NEXT: linalg.yield %18 : bf16
// CHECK-NEXT: } -> tensor<1x1x16x8xbf16>
// CHECK-NEXT: %inserted_slice = tensor.insert_slice %14 into %arg13[%arg7, %arg11, 0, 0] [1, 1, 16, 8] [1, 1, 1, 1] : tensor<1x1x16x8xbf16> into tensor<1x2x16x8xbf16>
// CHECK-NEXT: %15 = tensor.empty() : tensor<1x1x16x8xbf16>
// CHECK-NEXT: %16 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%12#2 : tensor<1x1x16x8xf32>) outs(%15 : tensor<1x1x16x8xbf16>) {
// CHECK-NEXT: ^bb0(%in: f32, %out: bf16):
// CHECK-NEXT: %17 = arith.truncf %in : f32 to bf16
// CHECK-NEXT: linalg.yield %17 : bf16
// CHECK-NEXT: } -> tensor<1x1x16x8xbf16>
// CHECK-NEXT: %inserted_slice_6 = tensor.insert_slice %16 into %arg14[%arg7, %arg11, 0, 0] [1, 1, 16, 8] [1, 1, 1, 1] : tensor<1x1x16x8xbf16> into tensor<1x2x16x8xbf16>
// CHECK-NEXT: scf.yield %12#0, %inserted_slice, %inserted_slice_6 : tensor<1x2x1x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %7#0, %7#1, %7#2 : tensor<1x2x1x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>
// CHECK-NEXT: }
// CHECK-NEXT: %collapsed = tensor.collapse_shape %6#0 {{\[\[}}0], [1, 2], [3], [4{{\]\]}} : tensor<1x2x1x16x8xbf16> into tensor<1x2x16x8xbf16>
// CHECK-NEXT: return %collapsed, %6#1, %6#2 : tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>
// CHECK-NEXT: }
// CHECK-NEXT: }

joint.graph @causal_gqa(%q: tensor<2x4x16x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %k: tensor<2x2x16x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %v: tensor<2x2x16x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<2x4x16x8xf32> {joint.role = #joint.role<output>}, tensor<2x4x16xf32> {joint.role = #joint.role<output>}) {
  %0:2 = joint.call_function "aten::_scaled_dot_product_flash_attention_for_cpu.default"(%q, %k, %v) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>, 0.0, true], name = "sdpa"} : (tensor<2x4x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>) -> (tensor<2x4x16x8xf32>, tensor<2x4x16xf32>)
  joint.output %0#0, %0#1 : tensor<2x4x16x8xf32>, tensor<2x4x16xf32>
}

joint.graph @backward_mask(%do: tensor<1x2x16x8xbf16> {joint.role = #joint.role<input>, joint.path = "x"}, %q: tensor<1x2x16x8xbf16> {joint.role = #joint.role<input>, joint.path = "x"}, %k: tensor<1x2x16x8xbf16> {joint.role = #joint.role<input>, joint.path = "x"}, %v: tensor<1x2x16x8xbf16> {joint.role = #joint.role<input>, joint.path = "x"}, %o: tensor<1x2x16x8xbf16> {joint.role = #joint.role<input>, joint.path = "x"}, %lse: tensor<1x2x16xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %m: tensor<1x1x16x16xbf16> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<1x2x16x8xbf16> {joint.role = #joint.role<output>}, tensor<1x2x16x8xbf16> {joint.role = #joint.role<output>}, tensor<1x2x16x8xbf16> {joint.role = #joint.role<output>}) {
  %0, %1, %2 = joint.call_function "aten::_scaled_dot_product_flash_attention_for_cpu_backward.default"(%do, %q, %k, %v, %o, %lse, %m) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>, #joint.operand<3>, #joint.operand<4>, #joint.operand<5>, 0.000000e+00, false], kwargs = {attn_mask = #joint.operand<6>}, name = "sdpa_backward"} : (tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16xf32>, tensor<1x1x16x16xbf16>) -> (tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>)
  joint.output %0, %1, %2 : tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>
}

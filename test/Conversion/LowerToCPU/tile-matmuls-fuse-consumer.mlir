// joint-tile-matmuls: a contraction whose result only one elementwise op
// reads (here the f32 accumulator of a bf16 matmul and its truncation) is
// fused into that op's row tiles, with the accumulator's fill, so the f32
// accumulator exists one [tile-m, N] tile at a time; the fused matmul is then
// tiled as usual. With a second reader the accumulator stays whole.
// RUN: joint-opt %s -pass-pipeline='builtin.module(func.func(joint-tile-matmuls{tile-m=8 tile-n=16 tile-k=8 vectorize=false}))' -mlir-print-local-scope | FileCheck %s

// CHECK: module {
// CHECK-LABEL: func.func @bf16_matmul(%arg0: tensor<32x64xbf16>, %arg1: tensor<64x16xbf16>) -> tensor<32x16xbf16> {
// CHECK-NEXT: %c8 = arith.constant 8 : index
// CHECK-NEXT: %c32 = arith.constant 32 : index
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %cst = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %0 = tensor.empty() : tensor<32x16xbf16>
// CHECK-NEXT: %1 = scf.for %arg2 = %c0 to %c32 step %c8 iter_args(%arg3 = %0) -> (tensor<32x16xbf16>) {
// CHECK-NEXT: %extracted_slice = tensor.extract_slice %arg0[%arg2, 0] [8, 64] [1, 1] : tensor<32x64xbf16> to tensor<8x64xbf16>
// CHECK-NEXT: %2 = tensor.empty() : tensor<8x16xf32>
// CHECK-NEXT: %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: %c0_0 = arith.constant 0 : index
// CHECK-NEXT: %c0_1 = arith.constant 0 : index
// CHECK-NEXT: %c0_2 = arith.constant 0 : index
// CHECK-NEXT: %c8_3 = arith.constant 8 : index
// CHECK-NEXT: %c16 = arith.constant 16 : index
// CHECK-NEXT: %c64 = arith.constant 64 : index
// CHECK-NEXT: %c8_4 = arith.constant 8 : index
// CHECK-NEXT: %c16_5 = arith.constant 16 : index
// CHECK-NEXT: %c8_6 = arith.constant 8 : index
// CHECK-NEXT: %4 = scf.for %arg4 = %c0_0 to %c8_3 step %c8_4 iter_args(%arg5 = %3) -> (tensor<8x16xf32>) {
// CHECK-NEXT: %6 = scf.for %arg6 = %c0_1 to %c16 step %c16_5 iter_args(%arg7 = %arg5) -> (tensor<8x16xf32>) {
// CHECK-NEXT: %7 = scf.for %arg8 = %c0_2 to %c64 step %c8_6 iter_args(%arg9 = %arg7) -> (tensor<8x16xf32>) {
// CHECK-NEXT: %extracted_slice_8 = tensor.extract_slice %extracted_slice[%arg4, %arg8] [8, 8] [1, 1] : tensor<8x64xbf16> to tensor<8x8xbf16>
// CHECK-NEXT: %extracted_slice_9 = tensor.extract_slice %arg1[%arg8, %arg6] [8, 16] [1, 1] : tensor<64x16xbf16> to tensor<8x16xbf16>
// CHECK-NEXT: %extracted_slice_10 = tensor.extract_slice %arg9[%arg4, %arg6] [8, 16] [1, 1] : tensor<8x16xf32> to tensor<8x16xf32>
// CHECK-NEXT: %8 = linalg.matmul ins(%extracted_slice_8, %extracted_slice_9 : tensor<8x8xbf16>, tensor<8x16xbf16>) outs(%extracted_slice_10 : tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: %inserted_slice_11 = tensor.insert_slice %8 into %arg9[%arg4, %arg6] [8, 16] [1, 1] : tensor<8x16xf32> into tensor<8x16xf32>
// CHECK-NEXT: scf.yield %inserted_slice_11 : tensor<8x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %7 : tensor<8x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %6 : tensor<8x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %extracted_slice_7 = tensor.extract_slice %arg3[%arg2, 0] [8, 16] [1, 1] : tensor<32x16xbf16> to tensor<8x16xbf16>
// CHECK-NEXT: %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<8x16xf32>) outs(%extracted_slice_7 : tensor<8x16xbf16>) {
// CHECK-NEXT: ^bb0(%in: f32, %out: bf16):
// CHECK-NEXT: %6 = arith.truncf %in : f32 to bf16
// CHECK-NEXT: linalg.yield %6 : bf16
// CHECK-NEXT: } -> tensor<8x16xbf16>
// CHECK-NEXT: %inserted_slice = tensor.insert_slice %5 into %arg3[%arg2, 0] [8, 16] [1, 1] : tensor<8x16xbf16> into tensor<32x16xbf16>
// CHECK-NEXT: scf.yield %inserted_slice : tensor<32x16xbf16>
// CHECK-NEXT: }
// CHECK-NEXT: return %1 : tensor<32x16xbf16>
// CHECK-NEXT: }
// CHECK-LABEL: func.func @two_readers(%arg0: tensor<32x64xf32>, %arg1: tensor<64x16xf32>) -> (tensor<32x16xf32>, tensor<32x16xf32>) {
// CHECK-NEXT: %cst = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %0 = tensor.empty() : tensor<32x16xf32>
// CHECK-NEXT: %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<32x16xf32>) -> tensor<32x16xf32>
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %c0_0 = arith.constant 0 : index
// CHECK-NEXT: %c0_1 = arith.constant 0 : index
// CHECK-NEXT: %c32 = arith.constant 32 : index
// CHECK-NEXT: %c16 = arith.constant 16 : index
// CHECK-NEXT: %c64 = arith.constant 64 : index
// CHECK-NEXT: %c8 = arith.constant 8 : index
// CHECK-NEXT: %c16_2 = arith.constant 16 : index
// CHECK-NEXT: %c8_3 = arith.constant 8 : index
// CHECK-NEXT: %2 = scf.for %arg2 = %c0 to %c32 step %c8 iter_args(%arg3 = %1) -> (tensor<32x16xf32>) {
// CHECK-NEXT: %5 = scf.for %arg4 = %c0_0 to %c16 step %c16_2 iter_args(%arg5 = %arg3) -> (tensor<32x16xf32>) {
// CHECK-NEXT: %6 = scf.for %arg6 = %c0_1 to %c64 step %c8_3 iter_args(%arg7 = %arg5) -> (tensor<32x16xf32>) {
// CHECK-NEXT: %extracted_slice = tensor.extract_slice %arg0[%arg2, %arg6] [8, 8] [1, 1] : tensor<32x64xf32> to tensor<8x8xf32>
// CHECK-NEXT: %extracted_slice_4 = tensor.extract_slice %arg1[%arg6, %arg4] [8, 16] [1, 1] : tensor<64x16xf32> to tensor<8x16xf32>
// CHECK-NEXT: %extracted_slice_5 = tensor.extract_slice %arg7[%arg2, %arg4] [8, 16] [1, 1] : tensor<32x16xf32> to tensor<8x16xf32>
// CHECK-NEXT: %7 = linalg.matmul ins(%extracted_slice, %extracted_slice_4 : tensor<8x8xf32>, tensor<8x16xf32>) outs(%extracted_slice_5 : tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: %inserted_slice = tensor.insert_slice %7 into %arg7[%arg2, %arg4] [8, 16] [1, 1] : tensor<8x16xf32> into tensor<32x16xf32>
// CHECK-NEXT: scf.yield %inserted_slice : tensor<32x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %6 : tensor<32x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %5 : tensor<32x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %3 = tensor.empty() : tensor<32x16xf32>
// CHECK-NEXT: %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%2 : tensor<32x16xf32>) outs(%3 : tensor<32x16xf32>) {
// CHECK-NEXT: ^bb0(%in: f32, %out: f32):
// CHECK-NEXT: %5 = arith.negf %in : f32
// CHECK-NEXT: linalg.yield %5 : f32
// CHECK-NEXT: } -> tensor<32x16xf32>
// CHECK-NEXT: return %4, %2 : tensor<32x16xf32>, tensor<32x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }

func.func @bf16_matmul(%a: tensor<32x64xbf16>, %b: tensor<64x16xbf16>) -> tensor<32x16xbf16> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  %m = linalg.matmul ins(%a, %b : tensor<32x64xbf16>, tensor<64x16xbf16>) outs(%acc : tensor<32x16xf32>) -> tensor<32x16xf32>
  %o = tensor.empty() : tensor<32x16xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<32x16xf32>) outs(%o : tensor<32x16xbf16>) {
  ^bb0(%x: f32, %y: bf16):
    %t = arith.truncf %x : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<32x16xbf16>
  return %r : tensor<32x16xbf16>
}

// Two readers of the accumulator: not fused (the matmul is tiled alone).
func.func @two_readers(%a: tensor<32x64xf32>, %b: tensor<64x16xf32>) -> (tensor<32x16xf32>, tensor<32x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  %m = linalg.matmul ins(%a, %b : tensor<32x64xf32>, tensor<64x16xf32>) outs(%acc : tensor<32x16xf32>) -> tensor<32x16xf32>
  %o = tensor.empty() : tensor<32x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<32x16xf32>) outs(%o : tensor<32x16xf32>) {
  ^bb0(%x: f32, %y: f32):
    %t = arith.negf %x : f32
    linalg.yield %t : f32
  } -> tensor<32x16xf32>
  return %r, %m : tensor<32x16xf32>, tensor<32x16xf32>
}

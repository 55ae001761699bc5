// joint-fold-transposes: transposes feeding matmuls, batch matmuls and
// generics are read through the op's indexing map; a transpose of a matmul
// becomes the matmul with swapped operands; transposes of transposes fold.
// A transpose a named contraction cannot read through its maps stays.
// RUN: joint-opt %s -pass-pipeline='builtin.module(func.func(joint-fold-transposes))' | FileCheck %s

// CHECK: #map = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-NEXT: #map1 = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-NEXT: #map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-NEXT: #map3 = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-NEXT: #map4 = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-NEXT: #map5 = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-NEXT: #map6 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-NEXT: #map7 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-NEXT: #map8 = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-NEXT: #map9 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-NEXT: module {
// CHECK-NEXT: func.func @matmul_operands(%arg0: tensor<8x16xf32>, %arg1: tensor<4x16xf32>) -> tensor<8x4xf32> {
// CHECK-NEXT: %cst = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %0 = tensor.empty() : tensor<8x4xf32>
// CHECK-NEXT: %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: %2 = linalg.matmul indexing_maps = [#map, #map1, #map2] ins(%arg0, %arg1 : tensor<8x16xf32>, tensor<4x16xf32>) outs(%1 : tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: return %2 : tensor<8x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.func @transpose_of_matmul(%arg0: tensor<8x4xf32>, %arg1: tensor<8x16xf32>) -> tensor<16x4xf32> {
// CHECK-NEXT: %cst = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %0 = tensor.empty() : tensor<16x4xf32>
// CHECK-NEXT: %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x4xf32>) -> tensor<16x4xf32>
// CHECK-NEXT: %2 = linalg.matmul indexing_maps = [#map3, #map4, #map2] ins(%arg1, %arg0 : tensor<8x16xf32>, tensor<8x4xf32>) outs(%1 : tensor<16x4xf32>) -> tensor<16x4xf32>
// CHECK-NEXT: return %2 : tensor<16x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.func @generic_and_double(%arg0: tensor<4x8xf32>) -> (tensor<8x4xf32>, tensor<4x8xf32>) {
// CHECK-NEXT: %0 = tensor.empty() : tensor<8x4xf32>
// CHECK-NEXT: %1 = linalg.generic {indexing_maps = [#map5, #map6], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x8xf32>) outs(%0 : tensor<8x4xf32>) {
// CHECK-NEXT: ^bb0(%in: f32, %out: f32):
// CHECK-NEXT: %2 = arith.negf %in : f32
// CHECK-NEXT: linalg.yield %2 : f32
// CHECK-NEXT: } -> tensor<8x4xf32>
// CHECK-NEXT: return %1, %arg0 : tensor<8x4xf32>, tensor<4x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.func @batch(%arg0: tensor<2x8x16xf32>, %arg1: tensor<2x4x16xf32>) -> tensor<2x8x4xf32> {
// CHECK-NEXT: %cst = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %0 = tensor.empty() : tensor<2x8x4xf32>
// CHECK-NEXT: %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
// CHECK-NEXT: %2 = linalg.batch_matmul indexing_maps = [#map7, #map8, #map9] ins(%arg0, %arg1 : tensor<2x8x16xf32>, tensor<2x4x16xf32>) outs(%1 : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
// CHECK-NEXT: return %2 : tensor<2x8x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.func @kept(%arg0: tensor<2x8x16xf32>, %arg1: tensor<16x2x4xf32>) -> tensor<2x8x4xf32> {
// CHECK-NEXT: %cst = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %0 = tensor.empty() : tensor<2x16x4xf32>
// CHECK-NEXT: %transposed = linalg.transpose ins(%arg1 : tensor<16x2x4xf32>) outs(%0 : tensor<2x16x4xf32>) permutation = [1, 0, 2]
// CHECK-NEXT: %1 = tensor.empty() : tensor<2x8x4xf32>
// CHECK-NEXT: %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
// CHECK-NEXT: %3 = linalg.batch_matmul ins(%arg0, %transposed : tensor<2x8x16xf32>, tensor<2x16x4xf32>) outs(%2 : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
// CHECK-NEXT: return %3 : tensor<2x8x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }

func.func @matmul_operands(%x: tensor<8x16xf32>, %w: tensor<4x16xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<16x4xf32>
  %t = linalg.transpose ins(%w : tensor<4x16xf32>) outs(%e : tensor<16x4xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r = linalg.matmul ins(%x, %t : tensor<8x16xf32>, tensor<16x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

func.func @transpose_of_matmul(%g: tensor<8x4xf32>, %x: tensor<8x16xf32>) -> tensor<16x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %gt = linalg.transpose ins(%g : tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) permutation = [1, 0]
  %o = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%gt, %x : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %e2 = tensor.empty() : tensor<16x4xf32>
  %r = linalg.transpose ins(%m : tensor<4x16xf32>) outs(%e2 : tensor<16x4xf32>) permutation = [1, 0]
  return %r : tensor<16x4xf32>
}

func.func @generic_and_double(%a: tensor<4x8xf32>) -> (tensor<8x4xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<8x4xf32>
  %t = linalg.transpose ins(%a : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) permutation = [1, 0]
  %o = tensor.empty() : tensor<8x4xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<8x4xf32>) outs(%o : tensor<8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = arith.negf %in : f32
    linalg.yield %y : f32
  } -> tensor<8x4xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %tt = linalg.transpose ins(%t : tensor<8x4xf32>) outs(%e2 : tensor<4x8xf32>) permutation = [1, 0]
  return %n, %tt : tensor<8x4xf32>, tensor<4x8xf32>
}

func.func @batch(%q: tensor<2x8x16xf32>, %k: tensor<2x4x16xf32>) -> tensor<2x8x4xf32> {
  %e = tensor.empty() : tensor<2x16x4xf32>
  %kt = linalg.transpose ins(%k : tensor<2x4x16xf32>) outs(%e : tensor<2x16x4xf32>) permutation = [0, 2, 1]
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<2x8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %r = linalg.batch_matmul ins(%q, %kt : tensor<2x8x16xf32>, tensor<2x16x4xf32>) outs(%f : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %r : tensor<2x8x4xf32>
}

// A batch transpose a batch_matmul cannot read (batch dim moved): kept.
func.func @kept(%q: tensor<2x8x16xf32>, %k: tensor<16x2x4xf32>) -> tensor<2x8x4xf32> {
  %e = tensor.empty() : tensor<2x16x4xf32>
  %kt = linalg.transpose ins(%k : tensor<16x2x4xf32>) outs(%e : tensor<2x16x4xf32>) permutation = [1, 0, 2]
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<2x8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %r = linalg.batch_matmul ins(%q, %kt : tensor<2x8x16xf32>, tensor<2x16x4xf32>) outs(%f : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %r : tensor<2x8x4xf32>
}

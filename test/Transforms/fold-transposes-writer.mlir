// joint-fold-transposes: a transpose of an elementwise or reduction result
// (its only use) is written by that op itself, its output map permuted.
// RUN: joint-opt %s -pass-pipeline='builtin.module(func.func(joint-fold-transposes))' | FileCheck %s

// CHECK: #[[IN3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-NEXT: #[[OUT3:.+]] = affine_map<(d0, d1, d2) -> (d1, d0)>

// A transpose of a reduction's result (its only use) is written by the
// reduction itself: its output map permuted, into an empty tensor of the
// transpose's shape filled the same way.
// CHECK-LABEL: func.func @into_writer(
// CHECK-NEXT: %[[Z:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[E:.+]] = tensor.empty() : tensor<4x2xf32>
// CHECK-NEXT: %[[F:.+]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E]] : tensor<4x2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: %[[R:.+]] = linalg.generic {indexing_maps = [#[[IN3]], #[[OUT3]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<2x4x8xf32>) outs(%[[F]] : tensor<4x2xf32>) {
// CHECK: return %[[R]] : tensor<4x2xf32>
func.func @into_writer(%x: tensor<2x4x8xf32>) -> tensor<4x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x4x8xf32>) outs(%f : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  } -> tensor<2x4xf32>
  %e2 = tensor.empty() : tensor<4x2xf32>
  %t = linalg.transpose ins(%s : tensor<2x4xf32>) outs(%e2 : tensor<4x2xf32>) permutation = [1, 0]
  return %t : tensor<4x2xf32>
}

// A writer whose init is an argument it reads stays, and so does the
// transpose (nothing is created for it).
// CHECK-LABEL: func.func @init_read(
// CHECK: %[[P:.+]] = linalg.generic {{.+}} outs(%arg1 : tensor<4x3xf32>)
// CHECK: %[[E:.+]] = tensor.empty() : tensor<3x4xf32>
// CHECK-NEXT: %[[T:.+]] = linalg.transpose ins(%[[P]] : tensor<4x3xf32>) outs(%[[E]] : tensor<3x4xf32>) permutation = [1, 0]
// CHECK-NEXT: return %[[T]]
func.func @init_read(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<3x4xf32> {
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x3xf32>) outs(%b : tensor<4x3xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.addf %x, %o : f32
    linalg.yield %r : f32
  } -> tensor<4x3xf32>
  %e = tensor.empty() : tensor<3x4xf32>
  %t = linalg.transpose ins(%p : tensor<4x3xf32>) outs(%e : tensor<3x4xf32>) permutation = [1, 0]
  return %t : tensor<3x4xf32>
}

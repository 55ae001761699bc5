// joint-tile-matmuls: tiles shrink to powers of two dividing the static
// sizes (M 16 -> 8, N 40 -> 8, K 64 -> 8), and each full tile becomes one
// vector.contract on transfer reads.
// RUN: joint-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(joint-tile-matmuls{tile-m=8 tile-n=16 tile-k=8}))' | FileCheck %s
// RUN: joint-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(joint-tile-matmuls{vectorize=false}))' | FileCheck %s --check-prefix=SCALAR

// CHECK-LABEL: func.func @matmul_ragged_n(
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %c16 step %c8
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %c40 step %c8
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %c64 step %c8
// CHECK: tensor.extract_slice %{{.*}}[%[[I]], %[[K]]] [8, 8] [1, 1] : tensor<16x64xf32> to tensor<8x8xf32>
// CHECK: tensor.extract_slice %{{.*}}[%[[K]], %[[J]]] [8, 8] [1, 1] : tensor<64x40xf32> to tensor<8x8xf32>
// CHECK: vector.contract {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} : vector<8x8xf32>, vector<8x8xf32> into vector<8x8xf32>
// CHECK-NOT: linalg.matmul
// SCALAR-LABEL: func.func @matmul_ragged_n(
// SCALAR: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x8xf32>, tensor<8x8xf32>) outs(%{{.*}} : tensor<8x8xf32>) -> tensor<8x8xf32>
// SCALAR-NOT: vector.contract
func.func @matmul_ragged_n(%a: tensor<16x64xf32>, %b: tensor<64x40xf32>, %c: tensor<16x40xf32>) -> tensor<16x40xf32> {
  %m = linalg.matmul ins(%a, %b : tensor<16x64xf32>, tensor<64x40xf32>) outs(%c : tensor<16x40xf32>) -> tensor<16x40xf32>
  return %m : tensor<16x40xf32>
}

// -----

// A symbolic M gives ragged tiles: tiled, but left scalar.
// CHECK-LABEL: func.func @matmul_dynamic_m(
// CHECK: scf.for
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x8xf32>, tensor<8x16xf32>) outs(%{{.*}} : tensor<?x16xf32>) -> tensor<?x16xf32>
// CHECK-NOT: vector.contract
func.func @matmul_dynamic_m(%a: tensor<?x64xf32>, %b: tensor<64x32xf32>, %c: tensor<?x32xf32>) -> tensor<?x32xf32> {
  %m = linalg.matmul ins(%a, %b : tensor<?x64xf32>, tensor<64x32xf32>) outs(%c : tensor<?x32xf32>) -> tensor<?x32xf32>
  return %m : tensor<?x32xf32>
}

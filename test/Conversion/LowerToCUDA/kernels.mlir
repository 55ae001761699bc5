// The kernel stages of joint-lower-to-cuda on a destination-passing step: an
// elementwise op, a full reduction (a 1x1 kernel, nothing on the host) and a
// reduction over dimension 0 (interchanged: a grid over the columns); every
// buffer a device allocation freed after its last kernel; one stream.
// RUN: joint-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},canonicalize,func.func(joint-gpu-parallel-first,convert-linalg-to-parallel-loops,scf-parallel-loop-tiling{parallel-loop-tile-sizes=16,16 no-min-max-bounds=true},joint-gpu-host-to-device,gpu-map-parallel-loops,convert-parallel-loops-to-gpu,joint-gpu-device-memory),gpu-launch-sink-index-computations,gpu-kernel-outlining,func.func(joint-gpu-stream-order),canonicalize)'  | FileCheck %s

// CHECK: #map = affine_map<()[s0, s1] -> (s0 * s1)>
// CHECK: module attributes {gpu.container_module} {
// CHECK-LABEL: func.func @exp_then_reductions(%arg0: memref<64x32xf32>, %arg1: memref<f32>, %arg2: memref<32xf32>) {
// CHECK-NEXT: %c2 = arith.constant 2 : index
// CHECK-NEXT: %c4 = arith.constant 4 : index
// CHECK-NEXT: %c16 = arith.constant 16 : index
// CHECK-NEXT: %c1 = arith.constant 1 : index
// CHECK-NEXT: %0 = gpu.wait async
// CHECK-NEXT: %memref, %asyncToken = gpu.alloc async [%0] () : memref<64x32xf32>
// CHECK-NEXT: %1 = gpu.launch_func async [%asyncToken] @exp_then_reductions_kernel::@exp_then_reductions_kernel blocks in (%c4, %c2, %c1) threads in (%c16, %c16, %c1)  args(%c16 : index, %c16 : index, %arg0 : memref<64x32xf32>, %memref : memref<64x32xf32>)
// CHECK-NEXT: %memref_0, %asyncToken_1 = gpu.alloc async [%1] () : memref<f32>
// CHECK-NEXT: %2 = gpu.launch_func async [%asyncToken_1] @exp_then_reductions_kernel_0::@exp_then_reductions_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)  args(%memref_0 : memref<f32>, %memref : memref<64x32xf32>)
// CHECK-NEXT: %memref_2, %asyncToken_3 = gpu.alloc async [%2] () : memref<32xf32>
// CHECK-NEXT: %3 = gpu.launch_func async [%asyncToken_3] @exp_then_reductions_kernel_1::@exp_then_reductions_kernel blocks in (%c2, %c1, %c1) threads in (%c16, %c1, %c1)  args(%c16 : index, %memref_2 : memref<32xf32>)
// CHECK-NEXT: %4 = gpu.launch_func async [%3] @exp_then_reductions_kernel_2::@exp_then_reductions_kernel blocks in (%c2, %c1, %c1) threads in (%c16, %c1, %c1)  args(%c16 : index, %memref : memref<64x32xf32>, %memref_2 : memref<32xf32>)
// CHECK-NEXT: %5 = gpu.dealloc async [%4] %memref : memref<64x32xf32>
// CHECK-NEXT: %6 = gpu.launch_func async [%5] @exp_then_reductions_kernel_3::@exp_then_reductions_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)  args(%memref_0 : memref<f32>, %arg1 : memref<f32>)
// CHECK-NEXT: %7 = gpu.dealloc async [%6] %memref_0 : memref<f32>
// CHECK-NEXT: %8 = gpu.launch_func async [%7] @exp_then_reductions_kernel_4::@exp_then_reductions_kernel blocks in (%c2, %c1, %c1) threads in (%c16, %c1, %c1)  args(%c16 : index, %memref_2 : memref<32xf32>, %arg2 : memref<32xf32>)
// CHECK-NEXT: %9 = gpu.dealloc async [%8] %memref_2 : memref<32xf32>
// CHECK-NEXT: return
// CHECK-NEXT: }
// CHECK: gpu.module @exp_then_reductions_kernel {
// CHECK-NEXT: gpu.func @exp_then_reductions_kernel(%arg0: index, %arg1: index, %arg2: memref<64x32xf32>, %arg3: memref<64x32xf32>) kernel {
// CHECK-NEXT: %block_id_x = gpu.block_id  x
// CHECK-NEXT: %block_id_y = gpu.block_id  y
// CHECK-NEXT: %thread_id_x = gpu.thread_id  x
// CHECK-NEXT: %thread_id_y = gpu.thread_id  y
// CHECK-NEXT: %0 = affine.apply #map()[%arg0, %block_id_x]
// CHECK-NEXT: %1 = affine.apply #map()[%arg1, %block_id_y]
// CHECK-NEXT: %2 = arith.addi %thread_id_x, %0 : index
// CHECK-NEXT: %3 = arith.addi %thread_id_y, %1 : index
// CHECK-NEXT: %4 = memref.load %arg2[%2, %3] : memref<64x32xf32>
// CHECK-NEXT: %5 = math.exp %4 : f32
// CHECK-NEXT: memref.store %5, %arg3[%2, %3] : memref<64x32xf32>
// CHECK-NEXT: gpu.return
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK: gpu.module @exp_then_reductions_kernel_0 {
// CHECK-NEXT: gpu.func @exp_then_reductions_kernel(%arg0: memref<f32>, %arg1: memref<64x32xf32>) kernel attributes {known_block_size = array<i32: 1, 1, 1>} {
// CHECK-NEXT: %c64 = arith.constant 64 : index
// CHECK-NEXT: %c32 = arith.constant 32 : index
// CHECK-NEXT: %cst = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %c1 = arith.constant 1 : index
// CHECK-NEXT: memref.store %cst, %arg0[] : memref<f32>
// CHECK-NEXT: scf.for %arg2 = %c0 to %c64 step %c1 {
// CHECK-NEXT: scf.for %arg3 = %c0 to %c32 step %c1 {
// CHECK-NEXT: %0 = memref.load %arg1[%arg2, %arg3] : memref<64x32xf32>
// CHECK-NEXT: %1 = memref.load %arg0[] : memref<f32>
// CHECK-NEXT: %2 = arith.addf %0, %1 : f32
// CHECK-NEXT: memref.store %2, %arg0[] : memref<f32>
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: gpu.return
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK: gpu.module @exp_then_reductions_kernel_1 {
// CHECK-NEXT: gpu.func @exp_then_reductions_kernel(%arg0: index, %arg1: memref<32xf32>) kernel {
// CHECK-NEXT: %cst = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %block_id_x = gpu.block_id  x
// CHECK-NEXT: %thread_id_x = gpu.thread_id  x
// CHECK-NEXT: %0 = affine.apply #map()[%arg0, %block_id_x]
// CHECK-NEXT: %1 = arith.addi %thread_id_x, %0 : index
// CHECK-NEXT: memref.store %cst, %arg1[%1] : memref<32xf32>
// CHECK-NEXT: gpu.return
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK: gpu.module @exp_then_reductions_kernel_2 {
// CHECK-NEXT: gpu.func @exp_then_reductions_kernel(%arg0: index, %arg1: memref<64x32xf32>, %arg2: memref<32xf32>) kernel {
// CHECK-NEXT: %c64 = arith.constant 64 : index
// CHECK-NEXT: %c1 = arith.constant 1 : index
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %block_id_x = gpu.block_id  x
// CHECK-NEXT: %thread_id_x = gpu.thread_id  x
// CHECK-NEXT: %0 = affine.apply #map()[%arg0, %block_id_x]
// CHECK-NEXT: %1 = arith.addi %thread_id_x, %0 : index
// CHECK-NEXT: scf.for %arg3 = %c0 to %c64 step %c1 {
// CHECK-NEXT: %2 = memref.load %arg1[%arg3, %1] : memref<64x32xf32>
// CHECK-NEXT: %3 = memref.load %arg2[%1] : memref<32xf32>
// CHECK-NEXT: %4 = arith.addf %2, %3 : f32
// CHECK-NEXT: memref.store %4, %arg2[%1] : memref<32xf32>
// CHECK-NEXT: }
// CHECK-NEXT: gpu.return
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK: gpu.module @exp_then_reductions_kernel_3 {
// CHECK-NEXT: gpu.func @exp_then_reductions_kernel(%arg0: memref<f32>, %arg1: memref<f32>) kernel attributes {known_block_size = array<i32: 1, 1, 1>} {
// CHECK-NEXT: %0 = memref.load %arg0[] : memref<f32>
// CHECK-NEXT: memref.store %0, %arg1[] : memref<f32>
// CHECK-NEXT: gpu.return
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK: gpu.module @exp_then_reductions_kernel_4 {
// CHECK-NEXT: gpu.func @exp_then_reductions_kernel(%arg0: index, %arg1: memref<32xf32>, %arg2: memref<32xf32>) kernel {
// CHECK-NEXT: %block_id_x = gpu.block_id  x
// CHECK-NEXT: %thread_id_x = gpu.thread_id  x
// CHECK-NEXT: %0 = affine.apply #map()[%arg0, %block_id_x]
// CHECK-NEXT: %1 = arith.addi %thread_id_x, %0 : index
// CHECK-NEXT: %2 = memref.load %arg1[%1] : memref<32xf32>
// CHECK-NEXT: memref.store %2, %arg2[%1] : memref<32xf32>
// CHECK-NEXT: gpu.return
// CHECK-NEXT: }
// CHECK-NEXT: }

// -----

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> ()>
#map2 = affine_map<(d0, d1) -> (d1, d0)>
#map3 = affine_map<(d0, d1) -> (d1)>
func.func @exp_then_reductions(%a: memref<64x32xf32>, %o: memref<f32>, %o2: memref<32xf32>) {
  %ta = bufferization.to_tensor %a restrict : memref<64x32xf32> to tensor<64x32xf32>
  %e = tensor.empty() : tensor<64x32xf32>
  %x = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%ta : tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %1 = math.exp %in : f32
    linalg.yield %1 : f32
  } -> tensor<64x32xf32>
  %c0 = arith.constant 0.0 : f32
  %z = tensor.empty() : tensor<f32>
  %zf = linalg.fill ins(%c0 : f32) outs(%z : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<64x32xf32>) outs(%zf : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %1 = arith.addf %in, %out : f32
    linalg.yield %1 : f32
  } -> tensor<f32>
  %z2 = tensor.empty() : tensor<32xf32>
  %zf2 = linalg.fill ins(%c0 : f32) outs(%z2 : tensor<32xf32>) -> tensor<32xf32>
  %s2 = linalg.generic {indexing_maps = [#map, #map3], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<64x32xf32>) outs(%zf2 : tensor<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %1 = arith.addf %in, %out : f32
    linalg.yield %1 : f32
  } -> tensor<32xf32>
  bufferization.materialize_in_destination %s in restrict writable %o : (tensor<f32>, memref<f32>) -> ()
  bufferization.materialize_in_destination %s2 in restrict writable %o2 : (tensor<32xf32>, memref<32xf32>) -> ()
  return
}

// joint-gpu-stream-order: the step's device ops chained on one stream (one
// gpu.wait async, no host wait).
// RUN: joint-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(func.func(joint-gpu-stream-order))'  | FileCheck %s

// CHECK: module attributes {gpu.container_module} {
// CHECK: gpu.module @kernels {
// CHECK-NEXT: gpu.func @k(%arg0: memref<4xf32>) kernel {
// CHECK-NEXT: gpu.return
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-LABEL: func.func @one_stream(%arg0: memref<4xf32>) {
// CHECK-NEXT: %c1 = arith.constant 1 : index
// CHECK-NEXT: %0 = gpu.wait async
// CHECK-NEXT: %memref, %asyncToken = gpu.alloc async [%0] () : memref<4xf32>
// CHECK-NEXT: %1 = gpu.launch_func async [%asyncToken] @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)  args(%memref : memref<4xf32>)
// CHECK-NEXT: %2 = gpu.memcpy async [%1] %arg0, %memref : memref<4xf32>, memref<4xf32>
// CHECK-NEXT: %3 = gpu.dealloc async [%2] %memref : memref<4xf32>
// CHECK-NEXT: return
// CHECK-NEXT: }

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  func.func @one_stream(%out: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %a = gpu.alloc () : memref<4xf32>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.memcpy %out, %a : memref<4xf32>, memref<4xf32>
    gpu.dealloc %a : memref<4xf32>
    return
  }
}

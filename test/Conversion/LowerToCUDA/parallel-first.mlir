// joint-gpu-parallel-first: buffer copies become linalg.copy (kernels like
// every other op), except a copy of a view onto the same view (the same
// source, offsets, sizes and strides), which moves nothing and is dropped.
// RUN: joint-opt %s -pass-pipeline='builtin.module(func.func(joint-gpu-parallel-first))' | FileCheck %s

// CHECK-LABEL: func.func @copies(
// CHECK-NEXT: memref.subview %arg0[0, 4] [4, 4] [1, 1]
// CHECK-NEXT: memref.subview %arg0[0, 4] [4, 4] [1, 1]
// CHECK-NEXT: %[[Z:.+]] = memref.subview %arg0[0, 0] [4, 4] [1, 1]
// CHECK-NEXT: %[[W:.+]] = memref.subview %arg1[0, 0] [4, 4] [1, 1]
// CHECK-NEXT: linalg.copy ins(%[[Z]] : memref<4x4xf32, strided<[8, 1]>>) outs(%[[W]] : memref<4x4xf32, strided<[8, 1]>>)
// CHECK-NEXT: return
func.func @copies(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  %x = memref.subview %a[0, 4] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1], offset: 4>>
  %y = memref.subview %a[0, 4] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1], offset: 4>>
  memref.copy %x, %y : memref<4x4xf32, strided<[8, 1], offset: 4>> to memref<4x4xf32, strided<[8, 1], offset: 4>>
  %z = memref.subview %a[0, 0] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1]>>
  %w = memref.subview %b[0, 0] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1]>>
  memref.copy %z, %w : memref<4x4xf32, strided<[8, 1]>> to memref<4x4xf32, strided<[8, 1]>>
  return
}

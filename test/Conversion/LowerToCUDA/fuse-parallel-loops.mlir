// joint-gpu-fuse-parallel-loops: adjacent parallel loops with the same
// iterations (unit dimensions aside) become one kernel when the buffers they
// share are accessed at the iteration's own element (through unit reshapes)
// or through disjoint subviews, and the live bytes while they run stay
// within the step's peak (outputs counted from their first use).
// RUN: joint-opt %s -pass-pipeline='builtin.module(func.func(joint-gpu-fuse-parallel-loops))' | FileCheck %s

// A fill, the reduction into it and its epilogue, read through a reshape
// adding a unit dimension (its loop's unit induction variable is 0).
// CHECK-LABEL: func.func @fill_reduce_epilogue(
// CHECK: %[[ACC:.+]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: %[[E:.+]] = memref.expand_shape %[[ACC]] {{\[}}[0, 1]] output_shape [4, 1]
// CHECK-NEXT: %[[Z:.+]] = arith.constant 0 : index
// CHECK-NEXT: scf.parallel (%[[I:.+]]) = (%c0) to (%c4) step (%c1) {
// CHECK-NEXT: memref.store %cst, %[[ACC]][%[[I]]] : memref<4xf32>
// CHECK-NEXT: scf.for %[[K:.+]] = %c0 to %c8 step %c1 {
// CHECK-NEXT: %[[V:.+]] = memref.load %arg0[%[[I]], %[[K]]] : memref<4x8xf32>
// CHECK-NEXT: %[[A:.+]] = memref.load %[[ACC]][%[[I]]] : memref<4xf32>
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[A]], %[[V]] : f32
// CHECK-NEXT: memref.store %[[S]], %[[ACC]][%[[I]]] : memref<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[L:.+]] = memref.load %[[E]][%[[I]], %[[Z]]] : memref<4x1xf32>
// CHECK-NEXT: %[[R:.+]] = math.rsqrt %[[L]] : f32
// CHECK-NEXT: memref.store %[[R]], %arg1[%[[I]], %[[Z]]] : memref<4x1xf32>
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: return

// Peak 768 B (out1, u, out2 at the last loop): the first three loops run as
// one at 768 B (t dies in it while u is already allocated); the fourth would
// add out2 to that, 1024 B, and stays a kernel of its own.
// CHECK-LABEL: func.func @under_the_peak(
// CHECK: %[[T:.+]] = memref.alloc() : memref<64xf32>
// CHECK-NEXT: %[[U:.+]] = memref.alloc() : memref<64xf32>
// CHECK-NEXT: scf.parallel (%[[I:.+]]) = (%c0) to (%c64) step (%c1) {
// CHECK-NEXT: memref.load %arg0[%[[I]]]
// CHECK-NEXT: math.exp
// CHECK-NEXT: memref.store %{{.+}}, %[[T]][%[[I]]]
// CHECK-NEXT: memref.load %[[T]][%[[I]]]
// CHECK-NEXT: arith.negf
// CHECK-NEXT: memref.store %{{.+}}, %arg1[%[[I]]]
// CHECK-NEXT: memref.load %arg0[%[[I]]]
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: memref.store %{{.+}}, %[[U]][%[[I]]]
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: scf.parallel (%[[J:.+]]) = (%c0) to (%c64) step (%c1) {
// CHECK-NEXT: memref.load %[[U]][%[[J]]]
// CHECK-NEXT: memref.store %{{.+}}, %arg2[%[[J]]]

// The second loop reads the element another iteration of the first writes.
// CHECK-LABEL: func.func @other_element(
// CHECK: scf.parallel
// CHECK: memref.store %{{.+}}, %alloc[%arg2, %arg3]
// CHECK: scf.parallel
// CHECK-NEXT: memref.load %alloc[%arg3, %arg2]

// Two halves of one output through disjoint subviews.
// CHECK-LABEL: func.func @halves(
// CHECK: %[[LO:.+]] = memref.subview %arg1[0] [4] [1]
// CHECK-NEXT: %[[HI:.+]] = memref.subview %arg1[4] [4] [1]
// CHECK-NEXT: scf.parallel (%[[I:.+]]) = (%c0) to (%c4) step (%c1) {
// CHECK-NEXT: memref.load %arg0[%[[I]]]
// CHECK-NEXT: arith.negf
// CHECK-NEXT: memref.store %{{.+}}, %[[LO]][%[[I]]]
// CHECK-NEXT: memref.load %arg0[%[[I]]]
// CHECK-NEXT: memref.store %{{.+}}, %[[HI]][%[[I]]]
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: return

func.func @fill_reduce_epilogue(%x: memref<4x8xf32>, %out: memref<4x1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memref.store %zero, %acc[%i] : memref<4xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.for %k = %c0 to %c8 step %c1 {
      %v = memref.load %x[%i, %k] : memref<4x8xf32>
      %a = memref.load %acc[%i] : memref<4xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %acc[%i] : memref<4xf32>
    }
    scf.reduce
  }
  %e = memref.expand_shape %acc [[0, 1]] output_shape [4, 1] : memref<4xf32> into memref<4x1xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c1) step (%c1, %c1) {
    %v = memref.load %e[%i, %j] : memref<4x1xf32>
    %r = math.rsqrt %v : f32
    memref.store %r, %out[%i, %j] : memref<4x1xf32>
    scf.reduce
  }
  return
}
func.func @under_the_peak(%x: memref<64xf32>, %out1: memref<64xf32>, %out2: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %t = memref.alloc() : memref<64xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %v = memref.load %x[%i] : memref<64xf32>
    %e = math.exp %v : f32
    memref.store %e, %t[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %v = memref.load %t[%i] : memref<64xf32>
    %n = arith.negf %v : f32
    memref.store %n, %out1[%i] : memref<64xf32>
    scf.reduce
  }
  %u = memref.alloc() : memref<64xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %v = memref.load %x[%i] : memref<64xf32>
    %m = arith.mulf %v, %v : f32
    memref.store %m, %u[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %v = memref.load %u[%i] : memref<64xf32>
    memref.store %v, %out2[%i] : memref<64xf32>
    scf.reduce
  }
  return
}
func.func @other_element(%x: memref<4x4xf32>, %out: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %b = memref.alloc() : memref<4x4xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c4) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<4x4xf32>
    memref.store %v, %b[%i, %j] : memref<4x4xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c4) step (%c1, %c1) {
    %v = memref.load %b[%j, %i] : memref<4x4xf32>
    memref.store %v, %out[%i, %j] : memref<4x4xf32>
    scf.reduce
  }
  return
}
func.func @halves(%x: memref<4xf32>, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %lo = memref.subview %out[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %v = memref.load %x[%i] : memref<4xf32>
    %n = arith.negf %v : f32
    memref.store %n, %lo[%i] : memref<4xf32, strided<[1]>>
    scf.reduce
  }
  %hi = memref.subview %out[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %hi[%i] : memref<4xf32, strided<[1], offset: 4>>
    scf.reduce
  }
  return
}

// Buffers of other origins may alias: one global reached twice, written at
// i by the first loop and read at i + 1 by the second, stays two kernels.
// CHECK-LABEL: func.func @global_twice(
// CHECK: scf.parallel
// CHECK: memref.store %{{.+}}, %[[G1:.+]][%{{.+}}] : memref<4xf32>
// CHECK: scf.reduce
// CHECK: scf.parallel
// CHECK-NEXT: memref.load %{{.+}}[%{{.+}}] : memref<3xf32, strided<[1], offset: 1>>
memref.global "private" @g : memref<4xf32> = dense<0.0>
func.func @global_twice(%x: memref<4xf32>, %out: memref<3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %g1 = memref.get_global @g : memref<4xf32>
  %g2 = memref.get_global @g : memref<4xf32>
  %s = memref.subview %g2[1] [3] [1] : memref<4xf32> to memref<3xf32, strided<[1], offset: 1>>
  scf.parallel (%i) = (%c0) to (%c3) step (%c1) {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %g1[%i] : memref<4xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c3) step (%c1) {
    %v = memref.load %s[%i] : memref<3xf32, strided<[1], offset: 1>>
    memref.store %v, %out[%i] : memref<3xf32>
    scf.reduce
  }
  return
}

// joint-gpu-host-to-device: compute that upstream leaves on the host (0-d
// results, full reductions) moves into single-iteration scf.parallel loops;
// a scalar a later kernel uses goes through a 0-d buffer.
// RUN: joint-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(func.func(joint-gpu-host-to-device))'  | FileCheck %s

// CHECK-LABEL: func.func @full_reduction_moves_to_device(%arg0: memref<64x32xf32>, %arg1: memref<f32>) {
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %c1 = arith.constant 1 : index
// CHECK-NEXT: %c32 = arith.constant 32 : index
// CHECK-NEXT: %c64 = arith.constant 64 : index
// CHECK-NEXT: %cst = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %c0_0 = arith.constant 0 : index
// CHECK-NEXT: %c1_1 = arith.constant 1 : index
// CHECK-NEXT: scf.parallel (%arg2) = (%c0_0) to (%c1_1) step (%c1_1) {
// CHECK-NEXT: memref.store %cst, %arg1[] : memref<f32>
// CHECK-NEXT: scf.for %arg3 = %c0 to %c64 step %c1 {
// CHECK-NEXT: scf.for %arg4 = %c0 to %c32 step %c1 {
// CHECK-NEXT: %0 = memref.load %arg0[%arg3, %arg4] : memref<64x32xf32>
// CHECK-NEXT: %1 = memref.load %arg1[] : memref<f32>
// CHECK-NEXT: %2 = arith.addf %0, %1 : f32
// CHECK-NEXT: memref.store %2, %arg1[] : memref<f32>
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: return
// CHECK-NEXT: }

// CHECK-LABEL: func.func @zero_d_result_and_hoisted_host_values(%arg0: memref<f32>, %arg1: memref<f32>, %arg2: index) -> index {
// CHECK-NEXT: %cst = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %0 = arith.muli %arg2, %arg2 : index
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %c1 = arith.constant 1 : index
// CHECK-NEXT: scf.parallel (%arg3) = (%c0) to (%c1) step (%c1) {
// CHECK-NEXT: %1 = memref.load %arg0[] : memref<f32>
// CHECK-NEXT: %2 = arith.mulf %1, %cst : f32
// CHECK-NEXT: memref.store %2, %arg1[] : memref<f32>
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: return %0 : index
// CHECK-NEXT: }

// CHECK-LABEL: func.func @scalar_for_a_later_kernel_goes_through_a_buffer(%arg0: memref<f32>, %arg1: memref<8xf32>) {
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %c1 = arith.constant 1 : index
// CHECK-NEXT: %c8 = arith.constant 8 : index
// CHECK-NEXT: %cst = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %alloc = memref.alloc() : memref<f32>
// CHECK-NEXT: %c0_0 = arith.constant 0 : index
// CHECK-NEXT: %c1_1 = arith.constant 1 : index
// CHECK-NEXT: scf.parallel (%arg2) = (%c0_0) to (%c1_1) step (%c1_1) {
// CHECK-NEXT: %0 = memref.load %arg0[] : memref<f32>
// CHECK-NEXT: %1 = arith.divf %cst, %0 : f32
// CHECK-NEXT: memref.store %1, %alloc[] : memref<f32>
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: %alloc_2 = memref.alloc() : memref<8xf32>
// CHECK-NEXT: scf.parallel (%arg2) = (%c0) to (%c8) step (%c1) {
// CHECK-NEXT: %0 = memref.load %alloc[] : memref<f32>
// CHECK-NEXT: memref.store %0, %arg1[%arg2] : memref<8xf32>
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: return
// CHECK-NEXT: }

// CHECK-LABEL: func.func @parallel_loops_stay(%arg0: memref<8xf32>) {
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %c1 = arith.constant 1 : index
// CHECK-NEXT: %c8 = arith.constant 8 : index
// CHECK-NEXT: %cst = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: scf.parallel (%arg1) = (%c0) to (%c8) step (%c1) {
// CHECK-NEXT: memref.store %cst, %arg0[%arg1] : memref<8xf32>
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: return
// CHECK-NEXT: }


// -----

func.func @full_reduction_moves_to_device(%x: memref<64x32xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %out[] : memref<f32>
  scf.for %i = %c0 to %c64 step %c1 {
    scf.for %j = %c0 to %c32 step %c1 {
      %a = memref.load %x[%i, %j] : memref<64x32xf32>
      %b = memref.load %out[] : memref<f32>
      %s = arith.addf %a, %b : f32
      memref.store %s, %out[] : memref<f32>
    }
  }
  return
}

// -----

func.func @zero_d_result_and_hoisted_host_values(%x: memref<f32>, %y: memref<f32>, %n: index) -> index {
  %a = memref.load %x[] : memref<f32>
  %two = arith.constant 2.0 : f32
  %m = arith.muli %n, %n : index
  %b = arith.mulf %a, %two : f32
  memref.store %b, %y[] : memref<f32>
  return %m : index
}

// -----

func.func @scalar_for_a_later_kernel_goes_through_a_buffer(%w: memref<f32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  %t = memref.load %w[] : memref<f32>
  %inv = arith.divf %one, %t : f32
  %buf = memref.alloc() : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %inv, %y[%i] : memref<8xf32>
    scf.reduce
  }
  return
}

// -----

func.func @parallel_loops_stay(%x: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %zero, %x[%i] : memref<8xf32>
    scf.reduce
  }
  return
}

// -----

func.func @device_value_used_by_host(%x: memref<f32>) -> f32 {
  // expected-error @below {{'memref.load' op computes on the device a value that host code uses (joint-gpu-host-to-device)}}
  %a = memref.load %x[] : memref<f32>
  return %a : f32
}

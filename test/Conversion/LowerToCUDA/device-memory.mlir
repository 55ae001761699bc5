// joint-gpu-device-memory: buffers become gpu.alloc, each freed right after
// the last op using it or a view of it; copies become gpu.memcpy; compute on
// the host, returned buffers and allocations in kernels are refused.
// RUN: joint-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(func.func(joint-gpu-device-memory))'  | FileCheck %s

// CHECK-LABEL: func.func @frees_after_last_use(%arg0: memref<4x8xf32>, %arg1: memref<32xf32>, %arg2: index) {
// CHECK-NEXT: %c1 = arith.constant 1 : index
// CHECK-NEXT: %memref = gpu.alloc  () : memref<4x8xf32>
// CHECK-NEXT: %memref_0 = gpu.alloc  (%arg2) : memref<?xf32>
// CHECK-NEXT: gpu.launch blocks(%arg3, %arg4, %arg5) in (%arg9 = %c1, %arg10 = %c1, %arg11 = %c1) threads(%arg6, %arg7, %arg8) in (%arg12 = %c1, %arg13 = %c1, %arg14 = %c1) {
// CHECK-NEXT: %0 = memref.load %arg0[%arg3, %arg3] : memref<4x8xf32>
// CHECK-NEXT: memref.store %0, %memref[%arg3, %arg3] : memref<4x8xf32>
// CHECK-NEXT: gpu.terminator
// CHECK-NEXT: }
// CHECK-NEXT: %collapse_shape = memref.collapse_shape %memref {{\[\[}}0, 1]] : memref<4x8xf32> into memref<32xf32>
// CHECK-NEXT: gpu.launch blocks(%arg3, %arg4, %arg5) in (%arg9 = %c1, %arg10 = %c1, %arg11 = %c1) threads(%arg6, %arg7, %arg8) in (%arg12 = %c1, %arg13 = %c1, %arg14 = %c1) {
// CHECK-NEXT: %0 = memref.load %collapse_shape[%arg3] : memref<32xf32>
// CHECK-NEXT: memref.store %0, %memref_0[%arg3] : memref<?xf32>
// CHECK-NEXT: gpu.terminator
// CHECK-NEXT: }
// CHECK-NEXT: gpu.dealloc  %memref_0 : memref<?xf32>
// CHECK-NEXT: gpu.memcpy  %arg1, %collapse_shape : memref<32xf32>, memref<32xf32>
// CHECK-NEXT: gpu.dealloc  %memref : memref<4x8xf32>
// CHECK-NEXT: return
// CHECK-NEXT: }




// -----

func.func @frees_after_last_use(%x: memref<4x8xf32>, %out: memref<32xf32>, %n: index) {
  %c1 = arith.constant 1 : index
  %a = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
  %b = memref.alloc(%n) : memref<?xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%bx, %bx] : memref<4x8xf32>
    memref.store %v, %a[%bx, %bx] : memref<4x8xf32>
    gpu.terminator
  }
  %flat = memref.collapse_shape %a [[0, 1]] : memref<4x8xf32> into memref<32xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %flat[%bx] : memref<32xf32>
    memref.store %v, %b[%bx] : memref<?xf32>
    gpu.terminator
  }
  memref.copy %flat, %out : memref<32xf32> to memref<32xf32>
  return
}

// -----

func.func @host_compute_is_refused(%x: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  // expected-error @below {{'memref.store' op computes on the host; the CUDA target runs every compute op of the step on the device}}
  memref.store %zero, %x[] : memref<f32>
  return
}

// -----

func.func @returned_buffer_is_refused() -> memref<4xf32> {
  // expected-error @below {{'gpu.alloc' op returns a step-allocated buffer; the CUDA entry writes results into caller buffers}}
  %a = memref.alloc() : memref<4xf32>
  return %a : memref<4xf32>
}

// -----

func.func @allocation_in_kernel_is_refused() {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    // expected-error @below {{'memref.alloc' op allocates inside a loop or kernel; the CUDA target allocates at the top of the step only}}
    %a = memref.alloc() : memref<4xf32>
    gpu.terminator
  }
  return
}

// -----

// A pointer taken from a buffer keeps it allocated until the last runtime
// call using it: the H2D copy of a reload whose result nobody reads still
// writes into the buffer, so the free comes after that call.
// CHECK-LABEL: func.func @pointer_uses_keep_buffers(%arg0: !llvm.ptr, %arg1: !llvm.ptr) {
// CHECK-NEXT: %memref = gpu.alloc  () : memref<8xf32>
// CHECK-NEXT: %intptr = memref.extract_aligned_pointer_as_index %memref : memref<8xf32> -> index
// CHECK-NEXT: %0 = arith.index_cast %intptr : index to i64
// CHECK-NEXT: %1 = llvm.inttoptr %0 : i64 to !llvm.ptr
// CHECK-NEXT: %2 = call @joint_ao_reload_into(%arg0, %1, %arg1) : (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-NEXT: gpu.dealloc  %memref : memref<8xf32>
// CHECK-NEXT: return
func.func private @joint_ao_reload_into(!llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
func.func @pointer_uses_keep_buffers(%h: !llvm.ptr, %node: !llvm.ptr) {
  %a = memref.alloc() : memref<8xf32>
  %p = memref.extract_aligned_pointer_as_index %a : memref<8xf32> -> index
  %i = arith.index_cast %p : index to i64
  %ptr = llvm.inttoptr %i : i64 to !llvm.ptr
  %s = func.call @joint_ao_reload_into(%h, %ptr, %node) : (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
  return
}

// -----

// An offloaded source stays allocated until the transfer's forward wait,
// after its last kernel: the offload call is an asynchronous reader
// (joint.reads_until_result_use) until the first use of its handle.
// CHECK-LABEL: func.func @offloaded_source_until_forward_wait(%arg0: i64, %arg1: !llvm.ptr) {
// CHECK-NEXT: %memref = gpu.alloc  () : memref<8xf32>
// CHECK-NEXT: %intptr = memref.extract_aligned_pointer_as_index %memref : memref<8xf32> -> index
// CHECK-NEXT: %0 = arith.index_cast %intptr : index to i64
// CHECK-NEXT: %1 = llvm.inttoptr %0 : i64 to !llvm.ptr
// CHECK-NEXT: %2 = call @joint_ao_offload(%1, %arg0, %arg1) {joint.reads_until_result_use} : (!llvm.ptr, i64, !llvm.ptr) -> !llvm.ptr
// CHECK-NEXT: %memref_0 = gpu.alloc  () : memref<8xf32>
// CHECK-NEXT: gpu.memcpy  %memref_0, %memref : memref<8xf32>, memref<8xf32>
// CHECK-NEXT: gpu.dealloc  %memref_0 : memref<8xf32>
// CHECK-NEXT: %3 = call @joint_ao_wait(%2) : (!llvm.ptr) -> i32
// CHECK-NEXT: gpu.dealloc  %memref : memref<8xf32>
// CHECK-NEXT: %4 = call @joint_ao_wait(%2) : (!llvm.ptr) -> i32
// CHECK-NEXT: return
func.func private @joint_ao_offload(!llvm.ptr, i64, !llvm.ptr) -> !llvm.ptr
func.func private @joint_ao_wait(!llvm.ptr) -> i32
func.func @offloaded_source_until_forward_wait(%bytes: i64, %node: !llvm.ptr) {
  %a = memref.alloc() : memref<8xf32>
  %p = memref.extract_aligned_pointer_as_index %a : memref<8xf32> -> index
  %i = arith.index_cast %p : index to i64
  %ptr = llvm.inttoptr %i : i64 to !llvm.ptr
  %h = func.call @joint_ao_offload(%ptr, %bytes, %node) {joint.reads_until_result_use} : (!llvm.ptr, i64, !llvm.ptr) -> !llvm.ptr
  %b = memref.alloc() : memref<8xf32>
  memref.copy %a, %b : memref<8xf32> to memref<8xf32>
  %w = func.call @joint_ao_wait(%h) : (!llvm.ptr) -> i32
  %w2 = func.call @joint_ao_wait(%h) : (!llvm.ptr) -> i32
  return
}

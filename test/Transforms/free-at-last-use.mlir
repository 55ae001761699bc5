// joint-free-at-last-use: each free of a buffer allocated in the same block
// moves to right after the last op using the buffer or an alias of it; a
// buffer that escapes its block keeps its free.
// RUN: joint-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(joint-free-at-last-use))' | FileCheck %s

// CHECK-LABEL: func.func @frees_after_last_use(%arg0: memref<4xf32>, %arg1: memref<4xf32>) {
// CHECK-NEXT: %alloc = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %arg0, %alloc : memref<4xf32> to memref<4xf32>
// CHECK-NEXT: %alloc_0 = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %alloc, %alloc_0 : memref<4xf32> to memref<4xf32>
// CHECK-NEXT: memref.dealloc %alloc : memref<4xf32>
// CHECK-NEXT: memref.copy %alloc_0, %arg1 : memref<4xf32> to memref<4xf32>
// CHECK-NEXT: memref.dealloc %alloc_0 : memref<4xf32>
// CHECK-NEXT: return
func.func @frees_after_last_use(%x: memref<4xf32>, %out: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  memref.copy %x, %a : memref<4xf32> to memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  memref.copy %a, %b : memref<4xf32> to memref<4xf32>
  memref.copy %b, %out : memref<4xf32> to memref<4xf32>
  memref.dealloc %a : memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  return
}

// -----

// A view keeps its buffer alive: the free follows the view's last reader;
// a buffer nobody reads is freed right after its allocation.
// CHECK-LABEL: func.func @view_extends_the_buffer(%arg0: memref<8xf32>, %arg1: memref<2x4xf32>) {
// CHECK-NEXT: %alloc = memref.alloc() : memref<8xf32>
// CHECK-NEXT: memref.copy %arg0, %alloc : memref<8xf32> to memref<8xf32>
// CHECK-NEXT: %expand_shape = memref.expand_shape %alloc {{\[\[}}0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
// CHECK-NEXT: %alloc_0 = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.dealloc %alloc_0 : memref<4xf32>
// CHECK-NEXT: memref.copy %expand_shape, %arg1 : memref<2x4xf32> to memref<2x4xf32>
// CHECK-NEXT: memref.dealloc %alloc : memref<8xf32>
// CHECK-NEXT: return
func.func @view_extends_the_buffer(%x: memref<8xf32>, %out: memref<2x4xf32>) {
  %a = memref.alloc() : memref<8xf32>
  memref.copy %x, %a : memref<8xf32> to memref<8xf32>
  %v = memref.expand_shape %a [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
  %unused = memref.alloc() : memref<4xf32>
  memref.copy %v, %out : memref<2x4xf32> to memref<2x4xf32>
  memref.dealloc %a : memref<8xf32>
  memref.dealloc %unused : memref<4xf32>
  return
}

// -----

// A use inside a loop counts as a use by the loop; a buffer yielded out of a
// region counts the uses of the region's result.
// CHECK-LABEL: func.func @region_uses(%arg0: memref<4xf32>, %arg1: i1, %arg2: memref<4xf32>) {
// CHECK: scf.for
// CHECK-NEXT: memref.copy %alloc, %arg2
// CHECK-NEXT: }
// CHECK-NEXT: memref.dealloc %alloc : memref<4xf32>
// CHECK-NEXT: %0 = scf.if %arg1 -> (memref<4xf32>) {
// CHECK-NEXT: scf.yield %alloc_0 : memref<4xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %arg0 : memref<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: memref.copy %0, %arg2 : memref<4xf32> to memref<4xf32>
// CHECK-NEXT: memref.dealloc %alloc_0 : memref<4xf32>
// CHECK-NEXT: return
func.func @region_uses(%x: memref<4xf32>, %c: i1, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  memref.copy %x, %a : memref<4xf32> to memref<4xf32>
  memref.copy %x, %b : memref<4xf32> to memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    memref.copy %a, %out : memref<4xf32> to memref<4xf32>
  }
  %r = scf.if %c -> (memref<4xf32>) {
    scf.yield %b : memref<4xf32>
  } else {
    scf.yield %x : memref<4xf32>
  }
  memref.copy %r, %out : memref<4xf32> to memref<4xf32>
  memref.dealloc %a : memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  return
}

// -----

// A pointer taken from a buffer is a use wherever it goes, and an
// asynchronous reader (joint.reads_until_result_use) keeps the buffer until
// the first use of its result.
// CHECK-LABEL: func.func @pointer_and_async_reader(%arg0: memref<4xf32>) {
// CHECK-NEXT: %alloc = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %arg0, %alloc : memref<4xf32> to memref<4xf32>
// CHECK-NEXT: %intptr = memref.extract_aligned_pointer_as_index %alloc : memref<4xf32> -> index
// CHECK-NEXT: %0 = arith.index_cast %intptr : index to i64
// CHECK-NEXT: %1 = llvm.inttoptr %0 : i64 to !llvm.ptr
// CHECK-NEXT: %2 = call @start_read(%1) {joint.reads_until_result_use} : (!llvm.ptr) -> !llvm.ptr
// CHECK-NEXT: %alloc_0 = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.dealloc %alloc_0 : memref<4xf32>
// CHECK-NEXT: call @finish_read(%2) : (!llvm.ptr) -> ()
// CHECK-NEXT: memref.dealloc %alloc : memref<4xf32>
// CHECK-NEXT: return
func.func private @start_read(!llvm.ptr) -> !llvm.ptr
func.func private @finish_read(!llvm.ptr)
func.func @pointer_and_async_reader(%x: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  memref.copy %x, %a : memref<4xf32> to memref<4xf32>
  %p = memref.extract_aligned_pointer_as_index %a : memref<4xf32> -> index
  %i = arith.index_cast %p : index to i64
  %ptr = llvm.inttoptr %i : i64 to !llvm.ptr
  %h = func.call @start_read(%ptr) {joint.reads_until_result_use} : (!llvm.ptr) -> !llvm.ptr
  %b = memref.alloc() : memref<4xf32>
  func.call @finish_read(%h) : (!llvm.ptr) -> ()
  memref.dealloc %a : memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  return
}

// -----

// A buffer returned from the function, or freed in another block, keeps
// its free where it is.
// CHECK-LABEL: func.func @escaping_buffers_stay(%arg0: memref<4xf32>, %arg1: i1) -> memref<4xf32> {
// CHECK-NEXT: %alloc = memref.alloc() : memref<4xf32>
// CHECK-NEXT: %alloc_0 = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %arg0, %alloc_0 : memref<4xf32> to memref<4xf32>
// CHECK-NEXT: scf.if %arg1 {
// CHECK-NEXT: memref.dealloc %alloc_0 : memref<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %alloc : memref<4xf32>
func.func @escaping_buffers_stay(%x: memref<4xf32>, %c: i1) -> memref<4xf32> {
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  memref.copy %x, %b : memref<4xf32> to memref<4xf32>
  scf.if %c {
    memref.dealloc %b : memref<4xf32>
  }
  return %a : memref<4xf32>
}

// joint-llvm-bf16-storage: bf16 values left as storage (loads, stores,
// bitcasts, selects, constants) become i16, constants their bit patterns;
// arithmetic on bf16 is refused.
// RUN: joint-opt %s -split-input-file -verify-diagnostics -joint-llvm-bf16-storage | FileCheck %s

// CHECK-LABEL: llvm.func @round_and_store(%arg0: !llvm.ptr, %arg1: i1, %arg2: i16) {
// CHECK-NEXT: %0 = llvm.mlir.constant(16256 : i16) : i16
// CHECK-NEXT: %1 = llvm.bitcast %arg2 : i16 to i16
// CHECK-NEXT: %2 = llvm.select %arg1, %0, %1 : i1, i16
// CHECK-NEXT: llvm.store %2, %arg0 : i16, !llvm.ptr
// CHECK-NEXT: %3 = llvm.load %arg0 : !llvm.ptr -> vector<2xi16>
// CHECK-NEXT: llvm.return
llvm.func @round_and_store(%p: !llvm.ptr, %nan: i1, %bits: i16) {
  %one = llvm.mlir.constant(1.0 : bf16) : bf16
  %v = llvm.bitcast %bits : i16 to bf16
  %r = llvm.select %nan, %one, %v : i1, bf16
  llvm.store %r, %p : bf16, !llvm.ptr
  %w = llvm.load %p : !llvm.ptr -> vector<2xbf16>
  llvm.return
}

// -----

llvm.func @arithmetic_is_refused(%a: bf16, %b: bf16) -> bf16 {
  // expected-error @below {{'llvm.fadd' op computes on bf16 in the LLVM dialect; the CPU target keeps bf16 as storage only (arithmetic in f32, arith-emulate-unsupported-floats)}}
  %s = llvm.fadd %a, %b : bf16
  llvm.return %s : bf16
}

// joint-gpu-offload: ao chains become calls into the CUDA runtime's transfer
// protocol (torch's activation offloading on streams): offload = D2H of the
// source's buffer on the transfer stream (joint_ao_offload); forward wait =
// the compute stream waits on the copy's event (joint_ao_wait, no host sync);
// reload = a step allocation filled by joint_ao_reload_into (H2D on the
// transfer stream), waited for and released before its first consumer.
// RUN: joint-opt %s -split-input-file -verify-diagnostics -joint-gpu-offload | FileCheck %s

// CHECK: module {
// CHECK-NEXT: llvm.mlir.global private constant @__joint_node_1("reload_x\00") {addr_space = 0 : i32}
// CHECK-NEXT: llvm.mlir.global private constant @__joint_node_0("offload_x\00") {addr_space = 0 : i32}
// CHECK-NEXT: func.func @protocol(%arg0: tensor<4x?xbf16>, %arg1: tensor<4x?xbf16>) -> tensor<4x?xbf16> {
// CHECK-NEXT: %c2 = arith.constant 2 : index
// CHECK-NEXT: %c4 = arith.constant 4 : index
// CHECK-NEXT: %0 = arith.muli %c2, %c4 : index
// CHECK-NEXT: %c1 = arith.constant 1 : index
// CHECK-NEXT: %dim = tensor.dim %arg0, %c1 : tensor<4x?xbf16>
// CHECK-NEXT: %1 = arith.muli %0, %dim : index
// CHECK-NEXT: %2 = arith.index_cast %1 : index to i64
// CHECK-NEXT: %3 = bufferization.to_buffer %arg0 read_only : tensor<4x?xbf16> to memref<4x?xbf16>
// CHECK-NEXT: %intptr = memref.extract_aligned_pointer_as_index %3 : memref<4x?xbf16> -> index
// CHECK-NEXT: %4 = arith.index_cast %intptr : index to i64
// CHECK-NEXT: %5 = llvm.inttoptr %4 : i64 to !llvm.ptr
// CHECK-NEXT: %6 = llvm.mlir.addressof @__joint_node_0 : !llvm.ptr
// CHECK-NEXT: %7 = call @joint_ao_offload(%5, %2, %6) {joint.reads_until_result_use} : (!llvm.ptr, i64, !llvm.ptr) -> !llvm.ptr
// CHECK-NEXT: %8 = call @joint_ao_wait(%7) : (!llvm.ptr) -> i32
// CHECK-NEXT: %alloc = memref.alloc(%dim) : memref<4x?xbf16>
// CHECK-NEXT: %9 = llvm.mlir.addressof @__joint_node_1 : !llvm.ptr
// CHECK-NEXT: %intptr_0 = memref.extract_aligned_pointer_as_index %alloc : memref<4x?xbf16> -> index
// CHECK-NEXT: %10 = arith.index_cast %intptr_0 : index to i64
// CHECK-NEXT: %11 = llvm.inttoptr %10 : i64 to !llvm.ptr
// CHECK-NEXT: %12 = call @joint_ao_reload_into(%7, %11, %9) : (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-NEXT: %13 = bufferization.to_tensor %alloc restrict writable : memref<4x?xbf16> to tensor<4x?xbf16>
// CHECK-NEXT: %14 = call @joint_ao_wait(%7) : (!llvm.ptr) -> i32
// CHECK-NEXT: %15 = call @joint_ao_release(%7) : (!llvm.ptr) -> i32
// CHECK-NEXT: return %13 : tensor<4x?xbf16>
// CHECK-NEXT: }
// CHECK-NEXT: func.func private @joint_ao_offload(!llvm.ptr, i64, !llvm.ptr) -> !llvm.ptr
// CHECK-NEXT: func.func private @joint_ao_wait(!llvm.ptr) -> i32
// CHECK-NEXT: func.func private @joint_ao_reload_into(!llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-NEXT: func.func private @joint_ao_release(!llvm.ptr) -> i32
// CHECK-NEXT: }

func.func @protocol(%x: tensor<4x?xbf16>, %y: tensor<4x?xbf16>) -> tensor<4x?xbf16> {
  %h = ao.offload %x {name = "offload_x"} : tensor<4x?xbf16>
  %w = ao.wait_tensor %h keepalive %x : tensor<4x?xbf16> last_use %y : tensor<4x?xbf16> : tensor<4x?xbf16>
  %r = ao.reload %w to "cuda:0" {name = "reload_x"} : tensor<4x?xbf16>
  %rw = ao.wait_tensor %r : tensor<4x?xbf16>
  return %rw : tensor<4x?xbf16>
}

// -----

// CHECK: module {
// CHECK-NEXT: llvm.mlir.global private constant @__joint_node_0("offload_x\00") {addr_space = 0 : i32}
// CHECK-NEXT: func.func @never_reloaded(%arg0: tensor<4xf32>) {
// CHECK-NEXT: %c4 = arith.constant 4 : index
// CHECK-NEXT: %c4_0 = arith.constant 4 : index
// CHECK-NEXT: %0 = arith.muli %c4, %c4_0 : index
// CHECK-NEXT: %1 = arith.index_cast %0 : index to i64
// CHECK-NEXT: %2 = bufferization.to_buffer %arg0 read_only : tensor<4xf32> to memref<4xf32>
// CHECK-NEXT: %intptr = memref.extract_aligned_pointer_as_index %2 : memref<4xf32> -> index
// CHECK-NEXT: %3 = arith.index_cast %intptr : index to i64
// CHECK-NEXT: %4 = llvm.inttoptr %3 : i64 to !llvm.ptr
// CHECK-NEXT: %5 = llvm.mlir.addressof @__joint_node_0 : !llvm.ptr
// CHECK-NEXT: %6 = call @joint_ao_offload(%4, %1, %5) {joint.reads_until_result_use} : (!llvm.ptr, i64, !llvm.ptr) -> !llvm.ptr
// CHECK-NEXT: %7 = call @joint_ao_wait(%6) : (!llvm.ptr) -> i32
// CHECK-NEXT: %8 = call @joint_ao_release(%6) : (!llvm.ptr) -> i32
// CHECK-NEXT: return
// CHECK-NEXT: }
// CHECK-NEXT: func.func private @joint_ao_offload(!llvm.ptr, i64, !llvm.ptr) -> !llvm.ptr
// CHECK-NEXT: func.func private @joint_ao_wait(!llvm.ptr) -> i32
// CHECK-NEXT: func.func private @joint_ao_reload_into(!llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-NEXT: func.func private @joint_ao_release(!llvm.ptr) -> i32
// CHECK-NEXT: }

// A transfer that is never reloaded gives its pinned buffer back at the wait.
func.func @never_reloaded(%x: tensor<4xf32>) {
  %h = ao.offload %x {name = "offload_x"} : tensor<4xf32>
  %w = ao.wait_tensor %h keepalive %x : tensor<4xf32> : tensor<4xf32>
  return
}

// -----

func.func @nested(%x: tensor<4xf32>, %c: i1) {
  scf.if %c {
    // expected-error @below {{'ao.offload' op is nested in a region; the CUDA target transfers only at the top level of the step (node 'offload_x')}}
    %h = ao.offload %x {name = "offload_x"} : tensor<4xf32>
    %w = ao.wait_tensor %h keepalive %x : tensor<4xf32> : tensor<4xf32>
  }
  return
}

// -----

func.func @index_elements(%x: tensor<4xindex>) {
  // expected-error @below {{'ao.offload' op offloads elements of type 'index'; the CUDA target transfers integers and floats (node 'offload_x')}}
  %h = ao.offload %x {name = "offload_x"} : tensor<4xindex>
  %w = ao.wait_tensor %h keepalive %x : tensor<4xindex> : tensor<4xindex>
  return
}

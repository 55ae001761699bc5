// The offload pipeline on the CUDA target, from the joint graph to the
// stream-ordered host code: the activation a is offloaded (D2H on the
// transfer stream, joint_ao_offload) after its kernel; the compute stream
// waits for the copy on the device (joint_ao_wait, no host sync) after a's
// last forward use, and only then is a's buffer freed; the reload is a
// stream-ordered allocation filled by joint_ao_reload_into (H2D on the
// transfer stream), waited for before its first backward consumer.
// RUN: joint-opt %s -pass-pipeline='builtin.module(convert-joint-to-linalg{keep-ao},joint-cpu-entry,joint-gpu-offload,canonicalize,eliminate-empty-tensors,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},convert-bufferization-to-memref,canonicalize,func.func(joint-gpu-parallel-first,convert-linalg-to-parallel-loops,scf-parallel-loop-tiling{parallel-loop-tile-sizes=16,16 no-min-max-bounds=true},joint-gpu-host-to-device,gpu-map-parallel-loops,convert-parallel-loops-to-gpu,joint-gpu-device-memory),gpu-launch-sink-index-computations,gpu-kernel-outlining,func.func(joint-gpu-stream-order),canonicalize)' | FileCheck %s

// CHECK-LABEL: func.func @joint_entry(%arg0: memref<4x?xf32> {joint.path = "x", joint.role = #joint.role<input>}, %arg1: memref<4x?xf32> {joint.role = #joint.role<output>}) attributes {joint.graph_name = "offload_chain", joint.num_inputs = 1 : i64} {
// CHECK-NEXT: %c16 = arith.constant 16 : index
// CHECK-NEXT: %0 = llvm.mlir.addressof @__joint_node_1 : !llvm.ptr
// CHECK-NEXT: %1 = llvm.mlir.addressof @__joint_node_0 : !llvm.ptr
// CHECK-NEXT: %c1 = arith.constant 1 : index
// CHECK-NEXT: %dim = memref.dim %arg0, %c1 : memref<4x?xf32>
// CHECK-NEXT: %2 = gpu.wait async
// CHECK-NEXT: %memref, %asyncToken = gpu.alloc async [%2] (%dim) : memref<4x?xf32>
// CHECK-NEXT: %dim_0 = memref.dim %arg0, %c1 : memref<4x?xf32>
// CHECK-NEXT: %3 = affine.apply #map()[%dim_0]
// CHECK-NEXT: %4 = gpu.launch_func async [%asyncToken] @joint_entry_kernel::@joint_entry_kernel blocks in (%c1, %3, %c1) threads in (%c16, %c16, %c1) args(%arg0 : memref<4x?xf32>, %c16 : index, %c16 : index, %memref : memref<4x?xf32>)
// CHECK-NEXT: %5 = arith.muli %dim, %c16 : index
// CHECK-NEXT: %6 = arith.index_cast %5 : index to i64
// CHECK-NEXT: %intptr = memref.extract_aligned_pointer_as_index %memref : memref<4x?xf32> -> index
// CHECK-NEXT: %7 = arith.index_cast %intptr : index to i64
// CHECK-NEXT: %8 = llvm.inttoptr %7 : i64 to !llvm.ptr
// CHECK-NEXT: %9 = call @joint_ao_offload(%8, %6, %1) {joint.reads_until_result_use} : (!llvm.ptr, i64, !llvm.ptr) -> !llvm.ptr
// CHECK-NEXT: %memref_1, %asyncToken_2 = gpu.alloc async [%4] (%dim) : memref<4x?xf32>
// CHECK-NEXT: %10 = affine.apply #map()[%dim]
// CHECK-NEXT: %11 = gpu.launch_func async [%asyncToken_2] @joint_entry_kernel_0::@joint_entry_kernel blocks in (%c1, %10, %c1) threads in (%c16, %c16, %c1) args(%c16 : index, %c16 : index, %dim : index, %memref : memref<4x?xf32>, %memref_1 : memref<4x?xf32>)
// CHECK-NEXT: %12 = call @joint_ao_wait(%9) : (!llvm.ptr) -> i32
// CHECK-NEXT: %13 = gpu.dealloc async [%11] %memref : memref<4x?xf32>
// CHECK-NEXT: %memref_3, %asyncToken_4 = gpu.alloc async [%13] (%dim) : memref<4x?xf32>
// CHECK-NEXT: %14 = affine.apply #map()[%dim]
// CHECK-NEXT: %15 = gpu.launch_func async [%asyncToken_4] @joint_entry_kernel_1::@joint_entry_kernel blocks in (%c1, %14, %c1) threads in (%c16, %c16, %c1) args(%c16 : index, %c16 : index, %dim : index, %memref_1 : memref<4x?xf32>, %memref_3 : memref<4x?xf32>)
// CHECK-NEXT: %16 = gpu.dealloc async [%15] %memref_1 : memref<4x?xf32>
// CHECK-NEXT: %memref_5, %asyncToken_6 = gpu.alloc async [%16] (%dim) : memref<4x?xf32>
// CHECK-NEXT: %intptr_7 = memref.extract_aligned_pointer_as_index %memref_5 : memref<4x?xf32> -> index
// CHECK-NEXT: %17 = arith.index_cast %intptr_7 : index to i64
// CHECK-NEXT: %18 = llvm.inttoptr %17 : i64 to !llvm.ptr
// CHECK-NEXT: %19 = call @joint_ao_reload_into(%9, %18, %0) : (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-NEXT: %20 = call @joint_ao_wait(%9) : (!llvm.ptr) -> i32
// CHECK-NEXT: %21 = call @joint_ao_release(%9) : (!llvm.ptr) -> i32
// CHECK-NEXT: %22 = affine.apply #map()[%dim]
// CHECK-NEXT: %23 = gpu.launch_func async [%asyncToken_6] @joint_entry_kernel_2::@joint_entry_kernel blocks in (%c1, %22, %c1) threads in (%c16, %c16, %c1) args(%c16 : index, %c16 : index, %dim : index, %memref_5 : memref<4x?xf32>, %memref_3 : memref<4x?xf32>, %arg1 : memref<4x?xf32>)
// CHECK-NEXT: %24 = gpu.dealloc async [%23] %memref_5 : memref<4x?xf32>
// CHECK-NEXT: %25 = gpu.dealloc async [%24] %memref_3 : memref<4x?xf32>
// CHECK-NEXT: return
// CHECK-NEXT: }

joint.graph @offload_chain(%x: tensor<4x?xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4x?xf32> {joint.role = #joint.role<output>}) {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a"} : (tensor<4x?xf32>) -> tensor<4x?xf32>
  %h = ao.offload %a {name = "offload_a"} : tensor<4x?xf32>
  %b = joint.call_function "aten::neg.default"(%a) {name = "b"} : (tensor<4x?xf32>) -> tensor<4x?xf32>
  %wt = ao.wait_tensor %h keepalive %a : tensor<4x?xf32> last_use %b : tensor<4x?xf32> {name = "wait_a"} : tensor<4x?xf32>
  %c = joint.call_function "aten::exp.default"(%b) {name = "c"} : (tensor<4x?xf32>) -> tensor<4x?xf32>
  %r = ao.reload %wt to "cuda:0" {name = "reload_a"} : tensor<4x?xf32>
  %rw = ao.wait_tensor %r {name = "wait_reload_a"} : tensor<4x?xf32>
  %d = joint.call_function "aten::mul.Tensor"(%rw, %c) {name = "d"} : (tensor<4x?xf32>, tensor<4x?xf32>) -> tensor<4x?xf32>
  joint.output %d : tensor<4x?xf32>
}

// The collectives on the CUDA target, from the joint graph to the
// stream-ordered host code. all_gather reads exp's step buffer: it is freed
// only after joint_nccl_wait (the call is joint.reads_until_result_use), and
// the gathered output, a fresh allocation, after its last reader (neg).
// all_reduce reads a strided slice of x: a kernel copies it into a
// contiguous buffer first, which lives until the wait too.
// RUN: joint-opt %s -pass-pipeline='builtin.module(joint-gpu-collectives,convert-joint-to-linalg,joint-cpu-entry,canonicalize,eliminate-empty-tensors,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},convert-bufferization-to-memref,canonicalize,func.func(joint-gpu-parallel-first,convert-linalg-to-parallel-loops,scf-parallel-loop-tiling{parallel-loop-tile-sizes=16,16 no-min-max-bounds=true},joint-gpu-host-to-device,gpu-map-parallel-loops,convert-parallel-loops-to-gpu,joint-gpu-device-memory),gpu-launch-sink-index-computations,gpu-kernel-outlining,func.func(joint-gpu-stream-order),canonicalize)' | FileCheck %s
// The CPU target does not lower collectives: one error per collective.
// RUN: not joint-opt %s -pass-pipeline='builtin.module(convert-joint-to-linalg)' 2>&1 | FileCheck %s --check-prefix=CPU

// CPU: error: no lowering for collective '_c10d_functional::all_gather_into_tensor.default' (node 'all_gather'): collectives lower only on the CUDA target (_c10d_functional all_gather_into_tensor, reduce_scatter_tensor, all_reduce, all_to_all_single and their wait_tensor)
// CPU: error: no lowering for collective '_c10d_functional::all_reduce.default' (node 'all_reduce'): collectives lower only on the CUDA target
// CPU-NOT: error

// CHECK-LABEL: func.func @joint_entry(%arg0: memref<4x6xf32> {joint.path = "x", joint.role = #joint.role<input>}, %arg1: memref<8x6xf32> {joint.role = #joint.role<output>}, %arg2: memref<4x2xf32> {joint.role = #joint.role<output>}) attributes {joint.graph_name = "fsdp_step", joint.num_inputs = 1 : i64} {
// CHECK-NEXT: %c16 = arith.constant 16 : index
// CHECK-NEXT: %c1 = arith.constant 1 : index
// CHECK-NEXT: %0 = llvm.mlir.addressof @__joint_node_1 : !llvm.ptr
// CHECK-NEXT: %c8_i64 = arith.constant 8 : i64
// CHECK-NEXT: %1 = llvm.mlir.addressof @__joint_node_0 : !llvm.ptr
// CHECK-NEXT: %c0_i32 = arith.constant 0 : i32
// CHECK-NEXT: %c24_i64 = arith.constant 24 : i64
// CHECK-NEXT: %2 = llvm.mlir.addressof @__joint_group_0 : !llvm.ptr
// CHECK-NEXT: %3 = gpu.wait async
// CHECK-NEXT: %memref, %asyncToken = gpu.alloc async [%3] () : memref<4x6xf32>
// CHECK-NEXT: %4 = gpu.launch_func async [%asyncToken] @joint_entry_kernel::@joint_entry_kernel blocks in (%c1, %c1, %c1) threads in (%c16, %c16, %c1)  args(%c16 : index, %c16 : index, %arg0 : memref<4x6xf32>, %memref : memref<4x6xf32>)
// CHECK-NEXT: %memref_0, %asyncToken_1 = gpu.alloc async [%4] () : memref<8x6xf32>
// CHECK-NEXT: %intptr = memref.extract_aligned_pointer_as_index %memref : memref<4x6xf32> -> index
// CHECK-NEXT: %5 = arith.index_cast %intptr : index to i64
// CHECK-NEXT: %6 = llvm.inttoptr %5 : i64 to !llvm.ptr
// CHECK-NEXT: %intptr_2 = memref.extract_aligned_pointer_as_index %memref_0 : memref<8x6xf32> -> index
// CHECK-NEXT: %7 = arith.index_cast %intptr_2 : index to i64
// CHECK-NEXT: %8 = llvm.inttoptr %7 : i64 to !llvm.ptr
// CHECK-NEXT: %9 = call @joint_nccl_all_gather(%2, %6, %8, %c24_i64, %c0_i32, %1) {joint.reads_until_result_use} : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i32, !llvm.ptr) -> !llvm.ptr
// CHECK-NEXT: %10 = call @joint_nccl_wait(%9) : (!llvm.ptr) -> i32
// CHECK-NEXT: %11 = gpu.dealloc async [%asyncToken_1] %memref : memref<4x6xf32>
// CHECK-NEXT: %12 = gpu.launch_func async [%11] @joint_entry_kernel_0::@joint_entry_kernel blocks in (%c1, %c1, %c1) threads in (%c16, %c16, %c1)  args(%c16 : index, %c16 : index, %memref_0 : memref<8x6xf32>, %arg1 : memref<8x6xf32>)
// CHECK-NEXT: %13 = gpu.dealloc async [%12] %memref_0 : memref<8x6xf32>
// CHECK-NEXT: %subview = memref.subview %arg0[0, 2] [4, 2] [1, 1] : memref<4x6xf32> to memref<4x2xf32, strided<[6, 1], offset: 2>>
// CHECK-NEXT: %memref_3, %asyncToken_4 = gpu.alloc async [%13] () : memref<4x2xf32>
// CHECK-NEXT: %14 = gpu.launch_func async [%asyncToken_4] @joint_entry_kernel_1::@joint_entry_kernel blocks in (%c1, %c1, %c1) threads in (%c16, %c16, %c1)  args(%c16 : index, %c16 : index, %subview : memref<4x2xf32, strided<[6, 1], offset: 2>>, %memref_3 : memref<4x2xf32>)
// CHECK-NEXT: %memref_5, %asyncToken_6 = gpu.alloc async [%14] () : memref<4x2xf32>
// CHECK-NEXT: %intptr_7 = memref.extract_aligned_pointer_as_index %memref_3 : memref<4x2xf32> -> index
// CHECK-NEXT: %15 = arith.index_cast %intptr_7 : index to i64
// CHECK-NEXT: %16 = llvm.inttoptr %15 : i64 to !llvm.ptr
// CHECK-NEXT: %intptr_8 = memref.extract_aligned_pointer_as_index %memref_5 : memref<4x2xf32> -> index
// CHECK-NEXT: %17 = arith.index_cast %intptr_8 : index to i64
// CHECK-NEXT: %18 = llvm.inttoptr %17 : i64 to !llvm.ptr
// CHECK-NEXT: %19 = call @joint_nccl_all_reduce(%2, %16, %18, %c8_i64, %c0_i32, %c0_i32, %0) {joint.reads_until_result_use} : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i32, i32, !llvm.ptr) -> !llvm.ptr
// CHECK-NEXT: %20 = call @joint_nccl_wait(%19) : (!llvm.ptr) -> i32
// CHECK-NEXT: %21 = gpu.dealloc async [%asyncToken_6] %memref_3 : memref<4x2xf32>
// CHECK-NEXT: %22 = gpu.launch_func async [%21] @joint_entry_kernel_2::@joint_entry_kernel blocks in (%c1, %c1, %c1) threads in (%c16, %c16, %c1)  args(%c16 : index, %c16 : index, %memref_5 : memref<4x2xf32>, %arg2 : memref<4x2xf32>)
// CHECK-NEXT: %23 = gpu.dealloc async [%22] %memref_5 : memref<4x2xf32>
// CHECK-NEXT: return

joint.graph @fsdp_step(%x: tensor<4x6xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<8x6xf32> {joint.role = #joint.role<output>}, tensor<4x2xf32> {joint.role = #joint.role<output>}) {
  %e = joint.call_function "aten::exp.default"(%x) {name = "exp"} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %ag = joint.call_function "_c10d_functional::all_gather_into_tensor.default"(%e) {name = "all_gather", args = [#joint.operand<0>, 2, "0"]} : (tensor<4x6xf32>) -> tensor<8x6xf32>
  %agw = joint.call_function "_c10d_functional::wait_tensor.default"(%ag) {name = "ag_wait"} : (tensor<8x6xf32>) -> tensor<8x6xf32>
  %n = joint.call_function "aten::neg.default"(%agw) {name = "neg"} : (tensor<8x6xf32>) -> tensor<8x6xf32>
  %s = joint.call_function "aten::slice.Tensor"(%x) {name = "slice", args = [#joint.operand<0>, 1, 2, 4]} : (tensor<4x6xf32>) -> tensor<4x2xf32>
  %ar = joint.call_function "_c10d_functional::all_reduce.default"(%s) {name = "all_reduce", args = [#joint.operand<0>, "sum", "0"]} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %arw = joint.call_function "_c10d_functional::wait_tensor.default"(%ar) {name = "ar_wait"} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  joint.output %n, %arw : tensor<8x6xf32>, tensor<4x2xf32>
}

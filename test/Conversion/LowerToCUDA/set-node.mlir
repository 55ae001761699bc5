// joint-gpu-set-node: before each kernel launch or device allocation whose
// node (the NameLoc joint-gpu-name-locations put on its location, also
// inside a fused location) differs from the one set last,
// joint_runtime_set_node(@name), so a failed launch reports "..., kernel
// 'k', node 'n'" and an allocation is named by its own node (an allocation
// for the add sets it, and the add's launch then sets nothing). A call (library shim)
// sets its own node, so the next launch sets its node again; a launch with no
// node sets nothing. One private string per node name.
// RUN: joint-opt %s -joint-gpu-set-node | FileCheck %s

// CHECK: module attributes {gpu.container_module} {
// CHECK-NEXT: llvm.mlir.global private constant @__joint_node_1("add_1\00") {addr_space = 0 : i32}
// CHECK-NEXT: llvm.mlir.global private constant @__joint_node_0("mm_3\00") {addr_space = 0 : i32}
// CHECK-NEXT: gpu.module @k0 {
// CHECK-NEXT: gpu.func @k(%arg0: memref<4xf32>) kernel {
// CHECK-NEXT: gpu.return
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: func.func private @joint_cublas_gemm()
// CHECK-NEXT: func.func @step(%arg0: memref<4xf32>, %arg1: memref<8x16xf32>, %arg2: memref<16x4xf32>, %arg3: memref<8x4xf32>) {
// CHECK-NEXT: %c1 = arith.constant 1 : index
// CHECK-NEXT: %0 = llvm.mlir.addressof @__joint_node_0 : !llvm.ptr
// CHECK-NEXT: call @joint_runtime_set_node(%0) : (!llvm.ptr) -> ()
// CHECK-NEXT: gpu.launch_func  @k0::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)  args(%arg0 : memref<4xf32>)
// CHECK-NEXT: gpu.launch_func  @k0::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)  args(%arg0 : memref<4xf32>)
// CHECK-NEXT: %1 = llvm.mlir.addressof @__joint_node_1 : !llvm.ptr
// CHECK-NEXT: call @joint_runtime_set_node(%1) : (!llvm.ptr) -> ()
// CHECK-NEXT: %[[T:.+]] = gpu.alloc  () : memref<4xf32>
// CHECK-NEXT: gpu.launch_func  @k0::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)  args(%[[T]] : memref<4xf32>)
// CHECK-NEXT: call @joint_cublas_gemm() : () -> ()
// CHECK-NEXT: %2 = llvm.mlir.addressof @__joint_node_1 : !llvm.ptr
// CHECK-NEXT: call @joint_runtime_set_node(%2) : (!llvm.ptr) -> ()
// CHECK-NEXT: gpu.launch_func  @k0::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)  args(%arg0 : memref<4xf32>)
// CHECK-NEXT: %3 = llvm.mlir.addressof @__joint_node_0 : !llvm.ptr
// CHECK-NEXT: call @joint_runtime_set_node(%3) : (!llvm.ptr) -> ()
// CHECK-NEXT: gpu.launch_func  @k0::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)  args(%arg0 : memref<4xf32>)
// CHECK-NEXT: gpu.launch_func  @k0::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)  args(%arg0 : memref<4xf32>)
// CHECK-NEXT: return
// CHECK-NEXT: }
// CHECK-NEXT: func.func private @joint_runtime_set_node(!llvm.ptr)
// CHECK-NEXT: }

module attributes {gpu.container_module} {
  gpu.module @k0 {
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  func.func private @joint_cublas_gemm()
  func.func @step(%a: memref<4xf32>, %b: memref<8x16xf32>, %c: memref<16x4xf32>, %d: memref<8x4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k0::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>) loc(#mm)
    gpu.launch_func @k0::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>) loc(#mm)
    %t = gpu.alloc () : memref<4xf32> loc(#add)
    gpu.launch_func @k0::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%t : memref<4xf32>) loc(#add)
    func.call @joint_cublas_gemm() : () -> ()
    gpu.launch_func @k0::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>) loc(#add)
    gpu.launch_func @k0::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>) loc(#fused)
    gpu.launch_func @k0::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
}
#file = loc("g.json":3:1)
#mm = loc("mm_3"(#file))
#add = loc("add_1"(#file))
#fused = loc(fused[#file, #mm])

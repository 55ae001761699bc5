// joint-lower-to-cuda{emulate}: the same host code as the cubin route, with
// the kernels compiled for the host into a kernel table loaded by a global
// constructor; no gpu op or module is left, and bf16 kernels compute in f32
// and store bf16 as i16, as the CPU pipeline does.
// RUN: joint-opt %s -split-input-file -pass-pipeline='builtin.module(joint-lower-to-cuda{emulate})' | FileCheck %s --implicit-check-not=gpu.

// CHECK-LABEL: llvm.func @joint_entry(
// CHECK: llvm.call @mgpuStreamCreate()
// CHECK-NEXT: llvm.call @joint_runtime_set_node(
// CHECK-NEXT: %[[MODULE:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[FN:.*]] = llvm.call @mgpuModuleGetFunction(%[[MODULE]], %{{.*}})
// CHECK: llvm.call @mgpuLaunchKernel(%[[FN]],
// CHECK-NEXT: llvm.return
// CHECK: llvm.mlir.global private constant @__joint_emu_joint_entry_kernel_name("joint_entry_kernel\00")
// CHECK-NEXT: llvm.mlir.global private constant @__joint_emu_joint_entry_kernel_kinds("88rr88888ww88888\00")
// CHECK-NEXT: llvm.func private @__joint_emu_joint_entry_kernel_joint_entry_kernel(%arg0: !llvm.ptr, %arg1: !llvm.ptr) {
// CHECK: llvm.intr.exp(%{{.*}}) : (f32) -> f32
// CHECK: llvm.mlir.global private constant @__joint_emu_joint_entry_kernel_kernels()
// CHECK: llvm.mlir.global private constant @__joint_emu_joint_entry_kernel_image()
// CHECK: llvm.mlir.global internal @__joint_emu_joint_entry_kernel_module()
// CHECK: llvm.func internal @__joint_emu_joint_entry_kernel_load()
// CHECK: llvm.call @mgpuModuleLoad(
// CHECK: llvm.mlir.global_ctors ctors = [@__joint_emu_joint_entry_kernel_load], priorities = [123 : i32], data = [#llvm.zero]
// CHECK-NEXT: llvm.mlir.global_dtors dtors = [@__joint_emu_joint_entry_kernel_unload], priorities = [123 : i32], data = [#llvm.zero]
joint.graph @exp_f32(%x: tensor<4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4x8xf32> {joint.role = #joint.role<output>}) {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  joint.output %a : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: llvm.func @joint_entry(
// CHECK: llvm.func private @__joint_emu_joint_entry_kernel_joint_entry_kernel(%arg0: !llvm.ptr, %arg1: !llvm.ptr) {
// CHECK-NOT: bf16
// CHECK: %[[IN:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i16
// CHECK-NEXT: %[[WIDE:.*]] = llvm.zext %[[IN]] : i16 to i32
// CHECK-NEXT: %[[SHIFTED:.*]] = llvm.shl %[[WIDE]], %{{.*}} : i32
// CHECK-NEXT: %[[F32:.*]] = llvm.bitcast %[[SHIFTED]] : i32 to f32
// CHECK-NEXT: llvm.intr.exp(%[[F32]]) : (f32) -> f32
// CHECK-NOT: bf16
// CHECK: llvm.store %{{.*}}, %{{.*}} : i16, !llvm.ptr
// CHECK-NOT: bf16
// CHECK: llvm.mlir.global_ctors
joint.graph @exp_bf16(%x: tensor<4x8xbf16> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4x8xbf16> {joint.role = #joint.role<output>}) {
  %a = joint.call_function "aten::exp.default"(%x) {name = "a"} : (tensor<4x8xbf16>) -> tensor<4x8xbf16>
  joint.output %a : tensor<4x8xbf16>
}

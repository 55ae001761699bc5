// RUN: joint-opt %s -split-input-file -pass-pipeline='builtin.module(gpu.module(joint-gpu-emulate-kernels),finalize-memref-to-llvm,convert-arith-to-llvm,convert-func-to-llvm,gpu-to-llvm,reconcile-unrealized-casts,joint-gpu-emulate-launches)' | FileCheck %s

// joint-gpu-emulate-launches: each gpu.module of host kernels becomes a
// JointEmuModuleImage {0x554D454A "JEMU", version 1, n, kernels} loaded by a
// global constructor; each launch calls mgpuModuleGetFunction and
// mgpuLaunchKernel with a params array on the stack, on the launch's stream.
module attributes {gpu.container_module} {
  func.func @step(%buf: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %0 = gpu.wait async
    %1 = gpu.launch_func async [%0] @fill::@fill blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%buf : memref<4xf32>)
    %2 = gpu.launch_func async [%1] @twice::@twice blocks in (%c4, %c1, %c1) threads in (%c1, %c1, %c1) args(%c1 : index, %buf : memref<4xf32>)
    return
  }
  gpu.module @fill {
    gpu.func @fill(%buf: memref<4xf32>) kernel {
      %t = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %buf[%t] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @twice {
    gpu.func @twice(%bs: index, %buf: memref<4xf32>) kernel {
      %b = gpu.block_id x
      %t = gpu.thread_id x
      %0 = arith.muli %b, %bs : index
      %i = arith.addi %0, %t : index
      %v = memref.load %buf[%i] : memref<4xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %buf[%i] : memref<4xf32>
      gpu.return
    }
  }
}

// CHECK: module {
// CHECK-LABEL: llvm.func @step(%arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: i64, %arg3: i64, %arg4: i64) {
// CHECK-NEXT: %0 = llvm.mlir.constant(4 : index) : i64
// CHECK-NEXT: %1 = llvm.mlir.constant(1 : index) : i64
// CHECK-NEXT: %2 = llvm.mlir.poison : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT: %3 = llvm.insertvalue %arg0, %2[0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT: %4 = llvm.insertvalue %arg1, %3[1] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT: %5 = llvm.insertvalue %arg2, %4[2] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT: %6 = llvm.insertvalue %arg3, %5[3, 0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT: %7 = llvm.insertvalue %arg4, %6[4, 0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT: %8 = llvm.call @mgpuStreamCreate() : () -> !llvm.ptr
// CHECK-NEXT: %9 = llvm.extractvalue %7[0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT: %10 = llvm.extractvalue %7[1] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT: %11 = llvm.extractvalue %7[2] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT: %12 = llvm.extractvalue %7[3, 0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT: %13 = llvm.extractvalue %7[4, 0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT: %14 = llvm.mlir.addressof @__joint_emu_fill_module : !llvm.ptr
// CHECK-NEXT: %15 = llvm.load %14 : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %16 = llvm.mlir.addressof @__joint_emu_fill_name : !llvm.ptr
// CHECK-NEXT: %17 = llvm.call @mgpuModuleGetFunction(%15, %16) : (!llvm.ptr, !llvm.ptr) -> !llvm.ptr
// CHECK-NEXT: %18 = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: %19 = llvm.alloca %18 x !llvm.struct<(ptr, ptr, i64, i64, i64)> : (i64) -> !llvm.ptr
// CHECK-NEXT: %20 = llvm.alloca %18 x !llvm.array<5 x ptr> : (i64) -> !llvm.ptr
// CHECK-NEXT: %21 = llvm.getelementptr %19[0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, ptr, i64, i64, i64)>
// CHECK-NEXT: llvm.store %9, %21 : !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %22 = llvm.getelementptr %20[0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<5 x ptr>
// CHECK-NEXT: llvm.store %21, %22 : !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %23 = llvm.getelementptr %19[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, ptr, i64, i64, i64)>
// CHECK-NEXT: llvm.store %10, %23 : !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %24 = llvm.getelementptr %20[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<5 x ptr>
// CHECK-NEXT: llvm.store %23, %24 : !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %25 = llvm.getelementptr %19[0, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, ptr, i64, i64, i64)>
// CHECK-NEXT: llvm.store %11, %25 : i64, !llvm.ptr
// CHECK-NEXT: %26 = llvm.getelementptr %20[0, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<5 x ptr>
// CHECK-NEXT: llvm.store %25, %26 : !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %27 = llvm.getelementptr %19[0, 3] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, ptr, i64, i64, i64)>
// CHECK-NEXT: llvm.store %12, %27 : i64, !llvm.ptr
// CHECK-NEXT: %28 = llvm.getelementptr %20[0, 3] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<5 x ptr>
// CHECK-NEXT: llvm.store %27, %28 : !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %29 = llvm.getelementptr %19[0, 4] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, ptr, i64, i64, i64)>
// CHECK-NEXT: llvm.store %13, %29 : i64, !llvm.ptr
// CHECK-NEXT: %30 = llvm.getelementptr %20[0, 4] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<5 x ptr>
// CHECK-NEXT: llvm.store %29, %30 : !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %31 = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %32 = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %33 = llvm.mlir.constant(5 : i64) : i64
// CHECK-NEXT: llvm.call @mgpuLaunchKernel(%17, %1, %1, %1, %0, %1, %1, %31, %8, %20, %32, %33) : (!llvm.ptr, i64, i64, i64, i64, i64, i64, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK-NEXT: %34 = llvm.extractvalue %7[0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT: %35 = llvm.extractvalue %7[1] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT: %36 = llvm.extractvalue %7[2] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT: %37 = llvm.extractvalue %7[3, 0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT: %38 = llvm.extractvalue %7[4, 0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT: %39 = llvm.mlir.addressof @__joint_emu_twice_module : !llvm.ptr
// CHECK-NEXT: %40 = llvm.load %39 : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %41 = llvm.mlir.addressof @__joint_emu_twice_name : !llvm.ptr
// CHECK-NEXT: %42 = llvm.call @mgpuModuleGetFunction(%40, %41) : (!llvm.ptr, !llvm.ptr) -> !llvm.ptr
// CHECK-NEXT: %43 = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: %44 = llvm.alloca %43 x !llvm.struct<(i64, ptr, ptr, i64, i64, i64)> : (i64) -> !llvm.ptr
// CHECK-NEXT: %45 = llvm.alloca %43 x !llvm.array<6 x ptr> : (i64) -> !llvm.ptr
// CHECK-NEXT: %46 = llvm.getelementptr %44[0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i64, ptr, ptr, i64, i64, i64)>
// CHECK-NEXT: llvm.store %1, %46 : i64, !llvm.ptr
// CHECK-NEXT: %47 = llvm.getelementptr %45[0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<6 x ptr>
// CHECK-NEXT: llvm.store %46, %47 : !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %48 = llvm.getelementptr %44[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i64, ptr, ptr, i64, i64, i64)>
// CHECK-NEXT: llvm.store %34, %48 : !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %49 = llvm.getelementptr %45[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<6 x ptr>
// CHECK-NEXT: llvm.store %48, %49 : !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %50 = llvm.getelementptr %44[0, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i64, ptr, ptr, i64, i64, i64)>
// CHECK-NEXT: llvm.store %35, %50 : !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %51 = llvm.getelementptr %45[0, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<6 x ptr>
// CHECK-NEXT: llvm.store %50, %51 : !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %52 = llvm.getelementptr %44[0, 3] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i64, ptr, ptr, i64, i64, i64)>
// CHECK-NEXT: llvm.store %36, %52 : i64, !llvm.ptr
// CHECK-NEXT: %53 = llvm.getelementptr %45[0, 3] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<6 x ptr>
// CHECK-NEXT: llvm.store %52, %53 : !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %54 = llvm.getelementptr %44[0, 4] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i64, ptr, ptr, i64, i64, i64)>
// CHECK-NEXT: llvm.store %37, %54 : i64, !llvm.ptr
// CHECK-NEXT: %55 = llvm.getelementptr %45[0, 4] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<6 x ptr>
// CHECK-NEXT: llvm.store %54, %55 : !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %56 = llvm.getelementptr %44[0, 5] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i64, ptr, ptr, i64, i64, i64)>
// CHECK-NEXT: llvm.store %38, %56 : i64, !llvm.ptr
// CHECK-NEXT: %57 = llvm.getelementptr %45[0, 5] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<6 x ptr>
// CHECK-NEXT: llvm.store %56, %57 : !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %58 = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %59 = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %60 = llvm.mlir.constant(6 : i64) : i64
// CHECK-NEXT: llvm.call @mgpuLaunchKernel(%42, %0, %1, %1, %1, %1, %1, %58, %8, %45, %59, %60) : (!llvm.ptr, i64, i64, i64, i64, i64, i64, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK-NEXT: llvm.return
// CHECK-NEXT: }
// CHECK-NEXT: llvm.func @mgpuStreamCreate() -> !llvm.ptr
// CHECK-NEXT: llvm.mlir.global private constant @__joint_emu_fill_name("fill\00") {addr_space = 0 : i32}
// CHECK-NEXT: llvm.mlir.global private constant @__joint_emu_fill_kinds("ww888\00") {addr_space = 0 : i32}
// CHECK: llvm.func private @__joint_emu_fill_fill(%arg0: !llvm.ptr, %arg1: !llvm.ptr) {
// CHECK: llvm.mlir.global private constant @__joint_emu_fill_kernels() {addr_space = 0 : i32} : !llvm.array<1 x struct<(ptr, ptr, ptr, i32)>> {
// CHECK-NEXT: %0 = llvm.mlir.undef : !llvm.array<1 x struct<(ptr, ptr, ptr, i32)>>
// CHECK-NEXT: %1 = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %2 = llvm.mlir.undef : !llvm.struct<(ptr, ptr, ptr, i32)>
// CHECK-NEXT: %3 = llvm.mlir.addressof @__joint_emu_fill_name : !llvm.ptr
// CHECK-NEXT: %4 = llvm.mlir.addressof @__joint_emu_fill_fill : !llvm.ptr
// CHECK-NEXT: %5 = llvm.mlir.addressof @__joint_emu_fill_kinds : !llvm.ptr
// CHECK-NEXT: %6 = llvm.insertvalue %3, %2[0] : !llvm.struct<(ptr, ptr, ptr, i32)>
// CHECK-NEXT: %7 = llvm.insertvalue %4, %6[1] : !llvm.struct<(ptr, ptr, ptr, i32)>
// CHECK-NEXT: %8 = llvm.insertvalue %5, %7[2] : !llvm.struct<(ptr, ptr, ptr, i32)>
// CHECK-NEXT: %9 = llvm.insertvalue %1, %8[3] : !llvm.struct<(ptr, ptr, ptr, i32)>
// CHECK-NEXT: %10 = llvm.insertvalue %9, %0[0] : !llvm.array<1 x struct<(ptr, ptr, ptr, i32)>>
// CHECK-NEXT: llvm.return %10 : !llvm.array<1 x struct<(ptr, ptr, ptr, i32)>>
// CHECK-NEXT: }
// CHECK-NEXT: llvm.mlir.global private constant @__joint_emu_fill_image() {addr_space = 0 : i32} : !llvm.struct<(i32, i32, i64, ptr)> {
// CHECK-NEXT: %0 = llvm.mlir.constant(1431127370 : i32) : i32
// CHECK-NEXT: %1 = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %2 = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: %3 = llvm.mlir.addressof @__joint_emu_fill_kernels : !llvm.ptr
// CHECK-NEXT: %4 = llvm.mlir.undef : !llvm.struct<(i32, i32, i64, ptr)>
// CHECK-NEXT: %5 = llvm.insertvalue %0, %4[0] : !llvm.struct<(i32, i32, i64, ptr)>
// CHECK-NEXT: %6 = llvm.insertvalue %1, %5[1] : !llvm.struct<(i32, i32, i64, ptr)>
// CHECK-NEXT: %7 = llvm.insertvalue %2, %6[2] : !llvm.struct<(i32, i32, i64, ptr)>
// CHECK-NEXT: %8 = llvm.insertvalue %3, %7[3] : !llvm.struct<(i32, i32, i64, ptr)>
// CHECK-NEXT: llvm.return %8 : !llvm.struct<(i32, i32, i64, ptr)>
// CHECK-NEXT: }
// CHECK-NEXT: llvm.mlir.global internal @__joint_emu_fill_module() {addr_space = 0 : i32} : !llvm.ptr {
// CHECK-NEXT: %0 = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: llvm.return %0 : !llvm.ptr
// CHECK-NEXT: }
// CHECK-NEXT: llvm.func @mgpuModuleLoad(!llvm.ptr, i64) -> !llvm.ptr
// CHECK-NEXT: llvm.func @mgpuModuleUnload(!llvm.ptr)
// CHECK-NEXT: llvm.func internal @__joint_emu_fill_load() {
// CHECK-NEXT: %0 = llvm.mlir.addressof @__joint_emu_fill_image : !llvm.ptr
// CHECK-NEXT: %1 = llvm.mlir.constant(24 : i64) : i64
// CHECK-NEXT: %2 = llvm.call @mgpuModuleLoad(%0, %1) : (!llvm.ptr, i64) -> !llvm.ptr
// CHECK-NEXT: %3 = llvm.mlir.addressof @__joint_emu_fill_module : !llvm.ptr
// CHECK-NEXT: llvm.store %2, %3 : !llvm.ptr, !llvm.ptr
// CHECK-NEXT: llvm.return
// CHECK-NEXT: }
// CHECK-NEXT: llvm.func internal @__joint_emu_fill_unload() {
// CHECK-NEXT: %0 = llvm.mlir.addressof @__joint_emu_fill_module : !llvm.ptr
// CHECK-NEXT: %1 = llvm.load %0 : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: llvm.call @mgpuModuleUnload(%1) : (!llvm.ptr) -> ()
// CHECK-NEXT: llvm.return
// CHECK-NEXT: }
// CHECK-NEXT: llvm.mlir.global private constant @__joint_emu_twice_name("twice\00") {addr_space = 0 : i32}
// CHECK-NEXT: llvm.mlir.global private constant @__joint_emu_twice_kinds("8pp888\00") {addr_space = 0 : i32}
// CHECK: llvm.func private @__joint_emu_twice_twice(%arg0: !llvm.ptr, %arg1: !llvm.ptr) {
// CHECK: llvm.mlir.global private constant @__joint_emu_twice_kernels() {addr_space = 0 : i32} : !llvm.array<1 x struct<(ptr, ptr, ptr, i32)>> {
// CHECK-NEXT: %0 = llvm.mlir.undef : !llvm.array<1 x struct<(ptr, ptr, ptr, i32)>>
// CHECK-NEXT: %1 = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %2 = llvm.mlir.undef : !llvm.struct<(ptr, ptr, ptr, i32)>
// CHECK-NEXT: %3 = llvm.mlir.addressof @__joint_emu_twice_name : !llvm.ptr
// CHECK-NEXT: %4 = llvm.mlir.addressof @__joint_emu_twice_twice : !llvm.ptr
// CHECK-NEXT: %5 = llvm.mlir.addressof @__joint_emu_twice_kinds : !llvm.ptr
// CHECK-NEXT: %6 = llvm.insertvalue %3, %2[0] : !llvm.struct<(ptr, ptr, ptr, i32)>
// CHECK-NEXT: %7 = llvm.insertvalue %4, %6[1] : !llvm.struct<(ptr, ptr, ptr, i32)>
// CHECK-NEXT: %8 = llvm.insertvalue %5, %7[2] : !llvm.struct<(ptr, ptr, ptr, i32)>
// CHECK-NEXT: %9 = llvm.insertvalue %1, %8[3] : !llvm.struct<(ptr, ptr, ptr, i32)>
// CHECK-NEXT: %10 = llvm.insertvalue %9, %0[0] : !llvm.array<1 x struct<(ptr, ptr, ptr, i32)>>
// CHECK-NEXT: llvm.return %10 : !llvm.array<1 x struct<(ptr, ptr, ptr, i32)>>
// CHECK-NEXT: }
// CHECK-NEXT: llvm.mlir.global private constant @__joint_emu_twice_image() {addr_space = 0 : i32} : !llvm.struct<(i32, i32, i64, ptr)> {
// CHECK-NEXT: %0 = llvm.mlir.constant(1431127370 : i32) : i32
// CHECK-NEXT: %1 = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %2 = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: %3 = llvm.mlir.addressof @__joint_emu_twice_kernels : !llvm.ptr
// CHECK-NEXT: %4 = llvm.mlir.undef : !llvm.struct<(i32, i32, i64, ptr)>
// CHECK-NEXT: %5 = llvm.insertvalue %0, %4[0] : !llvm.struct<(i32, i32, i64, ptr)>
// CHECK-NEXT: %6 = llvm.insertvalue %1, %5[1] : !llvm.struct<(i32, i32, i64, ptr)>
// CHECK-NEXT: %7 = llvm.insertvalue %2, %6[2] : !llvm.struct<(i32, i32, i64, ptr)>
// CHECK-NEXT: %8 = llvm.insertvalue %3, %7[3] : !llvm.struct<(i32, i32, i64, ptr)>
// CHECK-NEXT: llvm.return %8 : !llvm.struct<(i32, i32, i64, ptr)>
// CHECK-NEXT: }
// CHECK-NEXT: llvm.mlir.global internal @__joint_emu_twice_module() {addr_space = 0 : i32} : !llvm.ptr {
// CHECK-NEXT: %0 = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: llvm.return %0 : !llvm.ptr
// CHECK-NEXT: }
// CHECK-NEXT: llvm.func internal @__joint_emu_twice_load() {
// CHECK-NEXT: %0 = llvm.mlir.addressof @__joint_emu_twice_image : !llvm.ptr
// CHECK-NEXT: %1 = llvm.mlir.constant(24 : i64) : i64
// CHECK-NEXT: %2 = llvm.call @mgpuModuleLoad(%0, %1) : (!llvm.ptr, i64) -> !llvm.ptr
// CHECK-NEXT: %3 = llvm.mlir.addressof @__joint_emu_twice_module : !llvm.ptr
// CHECK-NEXT: llvm.store %2, %3 : !llvm.ptr, !llvm.ptr
// CHECK-NEXT: llvm.return
// CHECK-NEXT: }
// CHECK-NEXT: llvm.func internal @__joint_emu_twice_unload() {
// CHECK-NEXT: %0 = llvm.mlir.addressof @__joint_emu_twice_module : !llvm.ptr
// CHECK-NEXT: %1 = llvm.load %0 : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: llvm.call @mgpuModuleUnload(%1) : (!llvm.ptr) -> ()
// CHECK-NEXT: llvm.return
// CHECK-NEXT: }
// CHECK-NEXT: llvm.func @mgpuModuleGetFunction(!llvm.ptr, !llvm.ptr) -> !llvm.ptr
// CHECK-NEXT: llvm.func @mgpuLaunchKernel(!llvm.ptr, i64, i64, i64, i64, i64, i64, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64)
// CHECK-NEXT: llvm.mlir.global_ctors ctors = [@__joint_emu_fill_load, @__joint_emu_twice_load], priorities = [123 : i32, 123 : i32], data = [#llvm.zero, #llvm.zero]
// CHECK-NEXT: llvm.mlir.global_dtors dtors = [@__joint_emu_fill_unload, @__joint_emu_twice_unload], priorities = [123 : i32, 123 : i32], data = [#llvm.zero, #llvm.zero]
// CHECK-NEXT: }

// -----

// Two kernels of one gpu.module: one table of two entries, one image, one
// constructor; each launch asks for its kernel's name. A libm function the
// kernels call (erf) is declared once in the host module.
// CHECK-LABEL: llvm.func @step(
// CHECK: %[[FIRST:.*]] = llvm.mlir.addressof @__joint_emu_both_name : !llvm.ptr
// CHECK: llvm.call @mgpuModuleGetFunction(%{{.*}}, %[[FIRST]])
// CHECK: %[[SECOND:.*]] = llvm.mlir.addressof @__joint_emu_both_name_0 : !llvm.ptr
// CHECK: llvm.call @mgpuModuleGetFunction(%{{.*}}, %[[SECOND]])
// CHECK: llvm.func @erff(f32) -> f32
// CHECK-NOT: llvm.func @erff
// CHECK: llvm.mlir.global private constant @__joint_emu_both_name("first\00")
// CHECK-NEXT: llvm.mlir.global private constant @__joint_emu_both_kinds("pp888\00")
// CHECK-NEXT: llvm.func private @__joint_emu_both_first(%arg0: !llvm.ptr, %arg1: !llvm.ptr) {
// CHECK: llvm.call @erff(
// CHECK: llvm.mlir.global private constant @__joint_emu_both_name_0("second\00")
// CHECK-NEXT: llvm.mlir.global private constant @__joint_emu_both_kinds_1("pp888\00")
// CHECK-NEXT: llvm.func private @__joint_emu_both_second(%arg0: !llvm.ptr, %arg1: !llvm.ptr) {
// CHECK: llvm.mlir.global private constant @__joint_emu_both_kernels() {addr_space = 0 : i32} : !llvm.array<2 x struct<(ptr, ptr, ptr, i32)>> {
// CHECK-NEXT: %[[TABLE:.*]] = llvm.mlir.undef : !llvm.array<2 x struct<(ptr, ptr, ptr, i32)>>
// CHECK-NEXT: %[[NOFLAGS:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %[[E0:.*]] = llvm.mlir.undef : !llvm.struct<(ptr, ptr, ptr, i32)>
// CHECK-NEXT: %[[N0:.*]] = llvm.mlir.addressof @__joint_emu_both_name : !llvm.ptr
// CHECK-NEXT: %[[F0:.*]] = llvm.mlir.addressof @__joint_emu_both_first : !llvm.ptr
// CHECK-NEXT: %[[K0:.*]] = llvm.mlir.addressof @__joint_emu_both_kinds : !llvm.ptr
// CHECK: %[[E1:.*]] = llvm.mlir.undef : !llvm.struct<(ptr, ptr, ptr, i32)>
// CHECK-NEXT: %[[N1:.*]] = llvm.mlir.addressof @__joint_emu_both_name_0 : !llvm.ptr
// CHECK-NEXT: %[[F1:.*]] = llvm.mlir.addressof @__joint_emu_both_second : !llvm.ptr
// CHECK-NEXT: %[[K1:.*]] = llvm.mlir.addressof @__joint_emu_both_kinds_1 : !llvm.ptr
// CHECK: llvm.mlir.global private constant @__joint_emu_both_image()
// CHECK-NEXT: llvm.mlir.constant(1431127370 : i32) : i32
// CHECK-NEXT: llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: llvm.mlir.constant(2 : i64) : i64
// CHECK: llvm.mlir.global_ctors ctors = [@__joint_emu_both_load], priorities = [123 : i32], data = [#llvm.zero]
// CHECK-NEXT: llvm.mlir.global_dtors dtors = [@__joint_emu_both_unload], priorities = [123 : i32], data = [#llvm.zero]
module attributes {gpu.container_module} {
  func.func @step(%buf: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %0 = gpu.wait async
    %1 = gpu.launch_func async [%0] @both::@first blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%buf : memref<4xf32>)
    %2 = gpu.launch_func async [%1] @both::@second blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%buf : memref<4xf32>)
    return
  }
  gpu.module @both {
    gpu.func @first(%buf: memref<4xf32>) kernel {
      %t = gpu.thread_id x
      %v = memref.load %buf[%t] : memref<4xf32>
      %e = math.erf %v : f32
      memref.store %e, %buf[%t] : memref<4xf32>
      gpu.return
    }
    gpu.func @second(%buf: memref<4xf32>) kernel {
      %t = gpu.thread_id x
      %v = memref.load %buf[%t] : memref<4xf32>
      %e = math.erf %v : f32
      memref.store %e, %buf[%t] : memref<4xf32>
      gpu.return
    }
  }
}

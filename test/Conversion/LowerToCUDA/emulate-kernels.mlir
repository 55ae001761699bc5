// joint-gpu-emulate-kernels: kernels as host functions
// `void k(void **params, const JointEmuLaunch *launch)` for the emulated
// device (runtime/cuda/joint_cuda_emulator.h).
// RUN: joint-opt %s -split-input-file -pass-pipeline='builtin.module(gpu.module(joint-gpu-emulate-kernels))' | FileCheck %s

// One host function per kernel: `params` holds pointers to the launch's
// expanded arguments (a memref is its descriptor's fields), ids are uint32
// loads from the JointEmuLaunch record (block_idx at byte 24, block_dim at
// 12, thread_idx at 36 + 4 * dim, grid_dim at 0 + 4 * dim).
// CHECK-LABEL: llvm.func @scale(%arg0: !llvm.ptr, %arg1: !llvm.ptr) attributes {gpu.kernel, joint.emu_param_kinds = "8pp888"} {
// CHECK-NEXT: %0 = llvm.getelementptr inbounds %arg0[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %1 = llvm.load %0 : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %2 = llvm.load %1 : !llvm.ptr -> i64
// CHECK-NEXT: %3 = llvm.getelementptr inbounds %arg0[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %4 = llvm.load %3 : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %5 = llvm.load %4 : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %6 = llvm.getelementptr inbounds %arg0[2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %7 = llvm.load %6 : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %8 = llvm.load %7 : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %9 = llvm.getelementptr inbounds %arg0[3] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %10 = llvm.load %9 : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %11 = llvm.load %10 : !llvm.ptr -> i64
// CHECK-NEXT: %12 = llvm.getelementptr inbounds %arg0[4] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %13 = llvm.load %12 : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %14 = llvm.load %13 : !llvm.ptr -> i64
// CHECK-NEXT: %15 = llvm.getelementptr inbounds %arg0[5] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %16 = llvm.load %15 : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %17 = llvm.load %16 : !llvm.ptr -> i64
// CHECK-NEXT: llvm.br ^bb1(%2, %5, %8, %11, %14, %17, %arg1 : i64, !llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr)
// CHECK-NEXT: ^bb1(%18: i64, %19: !llvm.ptr, %20: !llvm.ptr, %21: i64, %22: i64, %23: i64, %24: !llvm.ptr):  // pred: ^bb0
// CHECK-NEXT: %25 = llvm.mlir.poison : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT: %26 = llvm.insertvalue %19, %25[0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT: %27 = llvm.insertvalue %20, %26[1] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT: %28 = llvm.insertvalue %21, %27[2] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT: %29 = llvm.insertvalue %22, %28[3, 0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT: %30 = llvm.insertvalue %23, %29[4, 0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT: %31 = llvm.getelementptr inbounds %24[24] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: %32 = llvm.load %31 : !llvm.ptr -> i32
// CHECK-NEXT: %33 = llvm.zext %32 : i32 to i64
// CHECK-NEXT: %34 = llvm.getelementptr inbounds %24[12] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: %35 = llvm.load %34 : !llvm.ptr -> i32
// CHECK-NEXT: %36 = llvm.zext %35 : i32 to i64
// CHECK-NEXT: %37 = llvm.getelementptr inbounds %24[40] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: %38 = llvm.load %37 : !llvm.ptr -> i32
// CHECK-NEXT: %39 = llvm.zext %38 : i32 to i64
// CHECK-NEXT: %40 = llvm.getelementptr inbounds %24[8] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: %41 = llvm.load %40 : !llvm.ptr -> i32
// CHECK-NEXT: %42 = llvm.zext %41 : i32 to i64
// CHECK-NEXT: %43 = llvm.mul %33, %36 : i64
// CHECK-NEXT: %44 = llvm.add %43, %39 : i64
// CHECK-NEXT: %45 = llvm.add %44, %42 : i64
// CHECK-NEXT: %46 = llvm.icmp "ult" %45, %18 : i64
// CHECK-NEXT: llvm.cond_br %46, ^bb2, ^bb3
// CHECK-NEXT: ^bb2:  // pred: ^bb1
// CHECK-NEXT: %47 = llvm.extractvalue %30[1] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT: %48 = llvm.getelementptr inbounds|nuw %47[%45] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: %49 = llvm.load %48 : !llvm.ptr -> f32
// CHECK-NEXT: %50 = llvm.fadd %49, %49 : f32
// CHECK-NEXT: %51 = llvm.extractvalue %30[1] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT: %52 = llvm.getelementptr inbounds|nuw %51[%45] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: llvm.store %50, %52 : f32, !llvm.ptr
// CHECK-NEXT: llvm.br ^bb3
// CHECK-NEXT: ^bb3:  // 2 preds: ^bb1, ^bb2
// CHECK-NEXT: llvm.return
// CHECK-NEXT: }
module attributes {gpu.container_module} {
  gpu.module @scale {
    gpu.func @scale(%n: index, %buf: memref<8xf32>) kernel {
      %b = gpu.block_id x
      %d = gpu.block_dim x
      %t = gpu.thread_id y
      %g = gpu.grid_dim z
      %0 = arith.muli %b, %d : index
      %1 = arith.addi %0, %t : index
      %2 = arith.addi %1, %g : index
      %3 = arith.cmpi ult, %2, %n : index
      cf.cond_br %3, ^in, ^out
    ^in:
      %v = memref.load %buf[%2] : memref<8xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %buf[%2] : memref<8xf32>
      cf.br ^out
    ^out:
      gpu.return
    }
  }
}

// -----

// Parameter kinds for the race checker: a memref only loaded from (here
// through extract_strided_metadata and a reinterpret_cast) is `r`, only
// stored into `w`, never accessed `r`, one whose address escapes `p`;
// scalars are their size (i1 and bf16 included).
// CHECK-LABEL: llvm.func @kinds(%arg0: !llvm.ptr, %arg1: !llvm.ptr) attributes {gpu.kernel, joint.emu_param_kinds = "rr88888ww888rr8pp8881248"}
module attributes {gpu.container_module} {
  gpu.module @kinds {
    gpu.func @kinds(%a: memref<4x4xf32>, %b: memref<16xbf16>, %c: memref<f32>, %p: memref<4xf32>, %x: i1, %y: bf16, %z: i32, %w: f64) kernel {
      %t = gpu.thread_id x
      %base, %off, %sizes:2, %strides:2 = memref.extract_strided_metadata %a : memref<4x4xf32> -> memref<f32>, index, index, index, index, index
      %flat = memref.reinterpret_cast %base to offset: [0], sizes: [16], strides: [1] : memref<f32> to memref<16xf32>
      %v = memref.load %flat[%t] : memref<16xf32>
      %s = arith.select %x, %y, %y : bf16
      memref.store %s, %b[%t] : memref<16xbf16>
      %addr = memref.extract_aligned_pointer_as_index %p : memref<4xf32> -> index
      gpu.return
    }
  }
}

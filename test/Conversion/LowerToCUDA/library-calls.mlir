// joint-gpu-library-calls: GEMMs cuBLAS supports become joint_cublas_gemm /
// joint_cublas_gemm_strided_batched calls on the compute stream (f32, and
// bf16 A/B into the f32 accumulator: dtype code 3, or into bf16 when a
// truncation alone reads the accumulator: code 1); integer, strided and
// mixed A/B GEMMs stay linalg ops (the generated-kernel fallback). A zero
// fill that only the GEMM reads next becomes beta = 0 (the fill is gone); a
// fill read before the GEMM, or of another value, stays and beta is 1.
// RUN: joint-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(joint-gpu-library-calls))' | FileCheck %s

// CHECK: module {
// CHECK-NEXT: func.func @gemms(%arg0: memref<8x16xf32>, %arg1: memref<16x4xf32>, %arg2: memref<8x4xf32>, %arg3: memref<2x8x?xbf16>, %arg4: memref<2x?x4xbf16>, %arg5: memref<2x8x4xf32>) {
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %dim = memref.dim %arg0, %c0 : memref<8x16xf32>
// CHECK-NEXT: %0 = arith.index_cast %dim : index to i64
// CHECK-NEXT: %c1 = arith.constant 1 : index
// CHECK-NEXT: %dim_0 = memref.dim %arg0, %c1 : memref<8x16xf32>
// CHECK-NEXT: %1 = arith.index_cast %dim_0 : index to i64
// CHECK-NEXT: %c1_1 = arith.constant 1 : index
// CHECK-NEXT: %dim_2 = memref.dim %arg1, %c1_1 : memref<16x4xf32>
// CHECK-NEXT: %2 = arith.index_cast %dim_2 : index to i64
// CHECK-NEXT: %cst = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %c0_i32 = arith.constant 0 : i32
// CHECK-NEXT: %3 = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %c0_i32_3 = arith.constant 0 : i32
// CHECK-NEXT: %intptr = memref.extract_aligned_pointer_as_index %arg0 : memref<8x16xf32> -> index
// CHECK-NEXT: %4 = arith.index_cast %intptr : index to i64
// CHECK-NEXT: %5 = llvm.inttoptr %4 : i64 to !llvm.ptr
// CHECK-NEXT: %intptr_4 = memref.extract_aligned_pointer_as_index %arg1 : memref<16x4xf32> -> index
// CHECK-NEXT: %6 = arith.index_cast %intptr_4 : index to i64
// CHECK-NEXT: %7 = llvm.inttoptr %6 : i64 to !llvm.ptr
// CHECK-NEXT: %intptr_5 = memref.extract_aligned_pointer_as_index %arg2 : memref<8x4xf32> -> index
// CHECK-NEXT: %8 = arith.index_cast %intptr_5 : index to i64
// CHECK-NEXT: %9 = llvm.inttoptr %8 : i64 to !llvm.ptr
// CHECK-NEXT: %10 = call @joint_cublas_gemm(%3, %c0_i32_3, %c0_i32, %c0_i32, %0, %2, %1, %cst, %5, %1, %7, %2, %cst, %9, %2) : (!llvm.ptr, i32, i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64) -> i32
// CHECK-NEXT: %c1_6 = arith.constant 1 : index
// CHECK-NEXT: %dim_7 = memref.dim %arg3, %c1_6 : memref<2x8x?xbf16>
// CHECK-NEXT: %11 = arith.index_cast %dim_7 : index to i64
// CHECK-NEXT: %c2 = arith.constant 2 : index
// CHECK-NEXT: %dim_8 = memref.dim %arg3, %c2 : memref<2x8x?xbf16>
// CHECK-NEXT: %12 = arith.index_cast %dim_8 : index to i64
// CHECK-NEXT: %c2_9 = arith.constant 2 : index
// CHECK-NEXT: %dim_10 = memref.dim %arg4, %c2_9 : memref<2x?x4xbf16>
// CHECK-NEXT: %13 = arith.index_cast %dim_10 : index to i64
// CHECK-NEXT: %cst_11 = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %c0_i32_12 = arith.constant 0 : i32
// CHECK-NEXT: %14 = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %c3_i32 = arith.constant 3 : i32
// CHECK-NEXT: %15 = arith.muli %11, %12 : i64
// CHECK-NEXT: %16 = arith.muli %12, %13 : i64
// CHECK-NEXT: %17 = arith.muli %11, %13 : i64
// CHECK-NEXT: %intptr_13 = memref.extract_aligned_pointer_as_index %arg3 : memref<2x8x?xbf16> -> index
// CHECK-NEXT: %18 = arith.index_cast %intptr_13 : index to i64
// CHECK-NEXT: %19 = llvm.inttoptr %18 : i64 to !llvm.ptr
// CHECK-NEXT: %intptr_14 = memref.extract_aligned_pointer_as_index %arg4 : memref<2x?x4xbf16> -> index
// CHECK-NEXT: %20 = arith.index_cast %intptr_14 : index to i64
// CHECK-NEXT: %21 = llvm.inttoptr %20 : i64 to !llvm.ptr
// CHECK-NEXT: %intptr_15 = memref.extract_aligned_pointer_as_index %arg5 : memref<2x8x4xf32> -> index
// CHECK-NEXT: %22 = arith.index_cast %intptr_15 : index to i64
// CHECK-NEXT: %23 = llvm.inttoptr %22 : i64 to !llvm.ptr
// CHECK-NEXT: %c0_16 = arith.constant 0 : index
// CHECK-NEXT: %dim_17 = memref.dim %arg3, %c0_16 : memref<2x8x?xbf16>
// CHECK-NEXT: %24 = arith.index_cast %dim_17 : index to i64
// CHECK-NEXT: %25 = call @joint_cublas_gemm_strided_batched(%14, %c3_i32, %c0_i32_12, %c0_i32_12, %11, %13, %12, %cst_11, %19, %12, %15, %21, %13, %16, %cst_11, %23, %13, %17, %24) : (!llvm.ptr, i32, i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64) -> i32
// CHECK-NEXT: return
// CHECK-NEXT: }
// CHECK-NEXT: func.func private @joint_cublas_gemm(!llvm.ptr, i32, i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64) -> i32
// CHECK-NEXT: func.func private @joint_cublas_gemm_strided_batched(!llvm.ptr, i32, i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64) -> i32
// CHECK-NEXT: }
// CHECK: module {
// CHECK-NEXT: func.func @fallbacks(%arg0: memref<8x16xi64>, %arg1: memref<16x4xi64>, %arg2: memref<8x4xi64>, %arg3: memref<8x16xf32, strided<[32, 1]>>, %arg4: memref<16x4xf32>, %arg5: memref<8x4xf32>, %arg6: memref<16x4xbf16>, %arg7: memref<8x16xf32>) {
// CHECK-NEXT: linalg.matmul ins(%arg0, %arg1 : memref<8x16xi64>, memref<16x4xi64>) outs(%arg2 : memref<8x4xi64>)
// CHECK-NEXT: linalg.matmul ins(%arg3, %arg4 : memref<8x16xf32, strided<[32, 1]>>, memref<16x4xf32>) outs(%arg5 : memref<8x4xf32>)
// CHECK-NEXT: linalg.matmul ins(%arg7, %arg6 : memref<8x16xf32>, memref<16x4xbf16>) outs(%arg5 : memref<8x4xf32>)
// CHECK-NEXT: return
// CHECK-NEXT: }
// CHECK-NEXT: }

func.func @gemms(%a: memref<8x16xf32>, %b: memref<16x4xf32>, %c: memref<8x4xf32>, %ha: memref<2x8x?xbf16>, %hb: memref<2x?x4xbf16>, %hc: memref<2x8x4xf32>) {
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%c : memref<8x4xf32>)
  linalg.batch_matmul ins(%ha, %hb : memref<2x8x?xbf16>, memref<2x?x4xbf16>) outs(%hc : memref<2x8x4xf32>)
  return
}

// -----

func.func @fallbacks(%i: memref<8x16xi64>, %j: memref<16x4xi64>, %k: memref<8x4xi64>, %s: memref<8x16xf32, strided<[32, 1]>>, %b: memref<16x4xf32>, %c: memref<8x4xf32>, %hb: memref<16x4xbf16>, %a2: memref<8x16xf32>) {
  linalg.matmul ins(%i, %j : memref<8x16xi64>, memref<16x4xi64>) outs(%k : memref<8x4xi64>)
  linalg.matmul ins(%s, %b : memref<8x16xf32, strided<[32, 1]>>, memref<16x4xf32>) outs(%c : memref<8x4xf32>)
  linalg.matmul ins(%a2, %hb : memref<8x16xf32>, memref<16x4xbf16>) outs(%c : memref<8x4xf32>)
  return
}

// -----

// The GEMM's node (a NameLoc from joint-gpu-name-locations) reaches the shim
// as a private string, for the runtime's messages.
// CHECK: module {
// CHECK-NEXT: llvm.mlir.global private constant @__joint_node_0("mm_3\00") {addr_space = 0 : i32}
// CHECK-NEXT: func.func @named(%arg0: memref<8x16xf32>, %arg1: memref<16x4xf32>, %arg2: memref<8x4xf32>) {
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %dim = memref.dim %arg0, %c0 : memref<8x16xf32>
// CHECK-NEXT: %0 = arith.index_cast %dim : index to i64
// CHECK-NEXT: %c1 = arith.constant 1 : index
// CHECK-NEXT: %dim_0 = memref.dim %arg0, %c1 : memref<8x16xf32>
// CHECK-NEXT: %1 = arith.index_cast %dim_0 : index to i64
// CHECK-NEXT: %c1_1 = arith.constant 1 : index
// CHECK-NEXT: %dim_2 = memref.dim %arg1, %c1_1 : memref<16x4xf32>
// CHECK-NEXT: %2 = arith.index_cast %dim_2 : index to i64
// CHECK-NEXT: %cst = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %c0_i32 = arith.constant 0 : i32
// CHECK-NEXT: %3 = llvm.mlir.addressof @__joint_node_0 : !llvm.ptr
// CHECK-NEXT: %c0_i32_3 = arith.constant 0 : i32
// CHECK-NEXT: %intptr = memref.extract_aligned_pointer_as_index %arg0 : memref<8x16xf32> -> index
// CHECK-NEXT: %4 = arith.index_cast %intptr : index to i64
// CHECK-NEXT: %5 = llvm.inttoptr %4 : i64 to !llvm.ptr
// CHECK-NEXT: %intptr_4 = memref.extract_aligned_pointer_as_index %arg1 : memref<16x4xf32> -> index
// CHECK-NEXT: %6 = arith.index_cast %intptr_4 : index to i64
// CHECK-NEXT: %7 = llvm.inttoptr %6 : i64 to !llvm.ptr
// CHECK-NEXT: %intptr_5 = memref.extract_aligned_pointer_as_index %arg2 : memref<8x4xf32> -> index
// CHECK-NEXT: %8 = arith.index_cast %intptr_5 : index to i64
// CHECK-NEXT: %9 = llvm.inttoptr %8 : i64 to !llvm.ptr
// CHECK-NEXT: %10 = call @joint_cublas_gemm(%3, %c0_i32_3, %c0_i32, %c0_i32, %0, %2, %1, %cst, %5, %1, %7, %2, %cst, %9, %2) : (!llvm.ptr, i32, i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64) -> i32
// CHECK-NEXT: return
// CHECK-NEXT: }
// CHECK-NEXT: func.func private @joint_cublas_gemm(!llvm.ptr, i32, i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64) -> i32
// CHECK-NEXT: }

func.func @named(%a: memref<8x16xf32>, %b: memref<16x4xf32>, %c: memref<8x4xf32>) {
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%c : memref<8x4xf32>) loc("mm_3"("g.json":7:1))
  return
}

// -----

// Transposed operand maps (joint-fold-transposes) become cuBLAS transpose
// flags: A read as [k, m] (lda = m), B as [n, k] (ldb = k).
// CHECK: module {
// CHECK-NEXT: func.func @transposed(%arg0: memref<16x8xf32>, %arg1: memref<4x16xf32>, %arg2: memref<8x4xf32>) {
// CHECK-NEXT: %c1 = arith.constant 1 : index
// CHECK-NEXT: %dim = memref.dim %arg0, %c1 : memref<16x8xf32>
// CHECK-NEXT: %0 = arith.index_cast %dim : index to i64
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %dim_0 = memref.dim %arg0, %c0 : memref<16x8xf32>
// CHECK-NEXT: %1 = arith.index_cast %dim_0 : index to i64
// CHECK-NEXT: %c0_1 = arith.constant 0 : index
// CHECK-NEXT: %dim_2 = memref.dim %arg1, %c0_1 : memref<4x16xf32>
// CHECK-NEXT: %2 = arith.index_cast %dim_2 : index to i64
// CHECK-NEXT: %cst = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %c1_i32 = arith.constant 1 : i32
// CHECK-NEXT: %3 = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %c0_i32 = arith.constant 0 : i32
// CHECK-NEXT: %intptr = memref.extract_aligned_pointer_as_index %arg0 : memref<16x8xf32> -> index
// CHECK-NEXT: %4 = arith.index_cast %intptr : index to i64
// CHECK-NEXT: %5 = llvm.inttoptr %4 : i64 to !llvm.ptr
// CHECK-NEXT: %intptr_3 = memref.extract_aligned_pointer_as_index %arg1 : memref<4x16xf32> -> index
// CHECK-NEXT: %6 = arith.index_cast %intptr_3 : index to i64
// CHECK-NEXT: %7 = llvm.inttoptr %6 : i64 to !llvm.ptr
// CHECK-NEXT: %intptr_4 = memref.extract_aligned_pointer_as_index %arg2 : memref<8x4xf32> -> index
// CHECK-NEXT: %8 = arith.index_cast %intptr_4 : index to i64
// CHECK-NEXT: %9 = llvm.inttoptr %8 : i64 to !llvm.ptr
// CHECK-NEXT: %10 = call @joint_cublas_gemm(%3, %c0_i32, %c1_i32, %c1_i32, %0, %2, %1, %cst, %5, %0, %7, %1, %cst, %9, %2) : (!llvm.ptr, i32, i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64) -> i32
// CHECK-NEXT: return
// CHECK-NEXT: }

func.func @transposed(%a: memref<16x8xf32>, %b: memref<4x16xf32>, %c: memref<8x4xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%a, %b : memref<16x8xf32>, memref<4x16xf32>) outs(%c : memref<8x4xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @zero_fill_is_beta_zero(
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[C:.+]] = memref.alloc() : memref<8x4xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[BETA:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: call @joint_cublas_gemm({{.*}}, %[[ONE]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[BETA]], %{{.+}}, %{{.+}})
// CHECK-NEXT: memref.copy %[[C]], %arg2
// CHECK-LABEL: func.func @fill_read_first_stays(
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[C:.+]] : memref<8x4xf32>)
// CHECK-NEXT: memref.copy %[[C]], %arg2
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: call @joint_cublas_gemm({{.*}}, %[[ONE]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[ONE]], %{{.+}}, %{{.+}})
// CHECK-NEXT: linalg.fill ins(%{{.+}} : f32) outs(%[[D:.+]] : memref<8x4xf32>)
// CHECK: %[[ONE2:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: call @joint_cublas_gemm({{.*}}, %[[ONE2]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[ONE2]], %{{.+}}, %{{.+}})
func.func @zero_fill_is_beta_zero(%a: memref<8x16xf32>, %b: memref<16x4xf32>, %out: memref<8x4xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %c = memref.alloc() : memref<8x4xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x4xf32>)
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%c : memref<8x4xf32>)
  memref.copy %c, %out : memref<8x4xf32> to memref<8x4xf32>
  return
}
func.func @fill_read_first_stays(%a: memref<8x16xf32>, %b: memref<16x4xf32>, %out: memref<8x4xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %c = memref.alloc() : memref<8x4xf32>
  %d = memref.alloc() : memref<8x4xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x4xf32>)
  memref.copy %c, %out : memref<8x4xf32> to memref<8x4xf32>
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%c : memref<8x4xf32>)
  linalg.fill ins(%one : f32) outs(%d : memref<8x4xf32>)
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%d : memref<8x4xf32>)
  return
}

// -----

// A bf16 GEMM into a zero-filled f32 accumulator that a truncation alone
// reads next: the call writes the truncation's bf16 output (its allocation
// moved above the call) with dtype code 1 (bf16 C) and beta = 0; the fill,
// the truncation and the accumulator are gone. With the accumulator read
// again after the truncation, everything stays (dtype code 3, f32 C).
// CHECK-LABEL: func.func @truncation_into_gemm(
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[D:.+]] = memref.alloc() : memref<8x4xbf16>
// CHECK-NOT: linalg.
// CHECK: %[[DTYPE:.+]] = arith.constant 1 : i32
// CHECK: %[[BETA:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: memref.extract_aligned_pointer_as_index %[[D]] : memref<8x4xbf16> -> index
// CHECK: call @joint_cublas_gemm(%{{.+}}, %[[DTYPE]], {{.*}}, %[[BETA]], %{{.+}}, %{{.+}})
// CHECK-NEXT: memref.copy %[[D]], %arg2
// CHECK-NEXT: return
// CHECK-LABEL: func.func @accumulator_read_again(
// CHECK: %[[C:.+]] = memref.alloc() : memref<8x4xf32>
// CHECK: %[[DTYPE:.+]] = arith.constant 3 : i32
// CHECK: call @joint_cublas_gemm(%{{.+}}, %[[DTYPE]],
// CHECK-NEXT: %[[D:.+]] = memref.alloc() : memref<8x4xbf16>
// CHECK-NEXT: linalg.generic {{.+}} ins(%[[C]] : memref<8x4xf32>) outs(%[[D]] : memref<8x4xbf16>)
// CHECK: arith.truncf
// CHECK: memref.copy %[[D]], %arg2
// CHECK-NEXT: memref.copy %[[C]], %arg3
func.func @truncation_into_gemm(%a: memref<8x16xbf16>, %b: memref<16x4xbf16>, %out: memref<8x4xbf16>) {
  %zero = arith.constant 0.000000e+00 : f32
  %c = memref.alloc() : memref<8x4xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x4xf32>)
  linalg.matmul ins(%a, %b : memref<8x16xbf16>, memref<16x4xbf16>) outs(%c : memref<8x4xf32>)
  %d = memref.alloc() : memref<8x4xbf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%c : memref<8x4xf32>) outs(%d : memref<8x4xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.copy %d, %out : memref<8x4xbf16> to memref<8x4xbf16>
  return
}
func.func @accumulator_read_again(%a: memref<8x16xbf16>, %b: memref<16x4xbf16>, %out: memref<8x4xbf16>, %acc: memref<8x4xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %c = memref.alloc() : memref<8x4xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x4xf32>)
  linalg.matmul ins(%a, %b : memref<8x16xbf16>, memref<16x4xbf16>) outs(%c : memref<8x4xf32>)
  %d = memref.alloc() : memref<8x4xbf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%c : memref<8x4xf32>) outs(%d : memref<8x4xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.copy %d, %out : memref<8x4xbf16> to memref<8x4xbf16>
  memref.copy %c, %acc : memref<8x4xf32> to memref<8x4xf32>
  return
}

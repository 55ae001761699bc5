// joint-gpu-attention-calls: before convert-joint-to-linalg, SDPA calls that
// cuDNN's fused flash attention supports become joint_cudnn_sdpa_forward /
// _backward (dtype 1 = bf16; sizes B, H, Hk, L, S, E; scale; causal; q, k, v
// [, o, dO, stats] with contiguous strides as constant arrays; results as
// allocations read through to_tensor restrict writable; the mask as the
// additive bias with its dims and strides). Outside that support (f32, a
// head_dim that is not a multiple of 8, a 2-D mask, the efficient variant's
// padded logsumexp) the call stays for the decomposition, with a remark.
// RUN: joint-opt %s -split-input-file -joint-gpu-attention-calls=remarks -verify-diagnostics | FileCheck %s

// CHECK: module {
// CHECK-NEXT: llvm.mlir.global private constant @__joint_node_1("sdpa_backward\00") {addr_space = 0 : i32}
// CHECK-NEXT: llvm.mlir.global private constant @__joint_sdpa_sizes_1(dense<[256, 128, 8, 1]> : tensor<4xi64>) {addr_space = 0 : i32} : !llvm.array<4 x i64>
// CHECK-NEXT: llvm.mlir.global private constant @__joint_sdpa_sizes_0(dense<[512, 128, 8, 1]> : tensor<4xi64>) {addr_space = 0 : i32} : !llvm.array<4 x i64>
// CHECK-NEXT: llvm.mlir.global private constant @__joint_node_0("sdpa\00") {addr_space = 0 : i32}
// CHECK-NEXT: joint.graph @flash(%q: tensor<1x4x16x8xbf16> {joint.path = "q", joint.role = #joint.role<input>}, %k: tensor<1x2x16x8xbf16> {joint.path = "k", joint.role = #joint.role<input>}, %v: tensor<1x2x16x8xbf16> {joint.path = "v", joint.role = #joint.role<input>}, %do: tensor<1x4x16x8xbf16> {joint.path = "do", joint.role = #joint.role<input>}) -> (tensor<1x4x16x8xbf16> {joint.role = #joint.role<output>}, tensor<1x4x16x8xbf16> {joint.role = #joint.role<output>}, tensor<1x2x16x8xbf16> {joint.role = #joint.role<output>}, tensor<1x2x16x8xbf16> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %0 = llvm.mlir.addressof @__joint_node_0 : !llvm.ptr
// CHECK-NEXT: %c1_i32 = arith.constant 1 : i32
// CHECK-NEXT: %c1_i64 = arith.constant 1 : i64
// CHECK-NEXT: %c4_i64 = arith.constant 4 : i64
// CHECK-NEXT: %c2_i64 = arith.constant 2 : i64
// CHECK-NEXT: %c16_i64 = arith.constant 16 : i64
// CHECK-NEXT: %c16_i64_0 = arith.constant 16 : i64
// CHECK-NEXT: %c8_i64 = arith.constant 8 : i64
// CHECK-NEXT: %cst = arith.constant 0.353553385 : f32
// CHECK-NEXT: %c1_i32_1 = arith.constant 1 : i32
// CHECK-NEXT: %1 = bufferization.to_buffer %q read_only : tensor<1x4x16x8xbf16> to memref<1x4x16x8xbf16>
// CHECK-NEXT: %intptr = memref.extract_aligned_pointer_as_index %1 : memref<1x4x16x8xbf16> -> index
// CHECK-NEXT: %2 = arith.index_cast %intptr : index to i64
// CHECK-NEXT: %3 = llvm.inttoptr %2 : i64 to !llvm.ptr
// CHECK-NEXT: %4 = llvm.mlir.addressof @__joint_sdpa_sizes_0 : !llvm.ptr
// CHECK-NEXT: %5 = bufferization.to_buffer %k read_only : tensor<1x2x16x8xbf16> to memref<1x2x16x8xbf16>
// CHECK-NEXT: %intptr_2 = memref.extract_aligned_pointer_as_index %5 : memref<1x2x16x8xbf16> -> index
// CHECK-NEXT: %6 = arith.index_cast %intptr_2 : index to i64
// CHECK-NEXT: %7 = llvm.inttoptr %6 : i64 to !llvm.ptr
// CHECK-NEXT: %8 = llvm.mlir.addressof @__joint_sdpa_sizes_1 : !llvm.ptr
// CHECK-NEXT: %9 = bufferization.to_buffer %v read_only : tensor<1x2x16x8xbf16> to memref<1x2x16x8xbf16>
// CHECK-NEXT: %intptr_3 = memref.extract_aligned_pointer_as_index %9 : memref<1x2x16x8xbf16> -> index
// CHECK-NEXT: %10 = arith.index_cast %intptr_3 : index to i64
// CHECK-NEXT: %11 = llvm.inttoptr %10 : i64 to !llvm.ptr
// CHECK-NEXT: %12 = llvm.mlir.addressof @__joint_sdpa_sizes_1 : !llvm.ptr
// CHECK-NEXT: %alloc = memref.alloc() : memref<1x4x16x8xbf16>
// CHECK-NEXT: %intptr_4 = memref.extract_aligned_pointer_as_index %alloc : memref<1x4x16x8xbf16> -> index
// CHECK-NEXT: %13 = arith.index_cast %intptr_4 : index to i64
// CHECK-NEXT: %14 = llvm.inttoptr %13 : i64 to !llvm.ptr
// CHECK-NEXT: %15 = llvm.mlir.addressof @__joint_sdpa_sizes_0 : !llvm.ptr
// CHECK-NEXT: %alloc_5 = memref.alloc() : memref<1x4x16xf32>
// CHECK-NEXT: %intptr_6 = memref.extract_aligned_pointer_as_index %alloc_5 : memref<1x4x16xf32> -> index
// CHECK-NEXT: %16 = arith.index_cast %intptr_6 : index to i64
// CHECK-NEXT: %17 = llvm.inttoptr %16 : i64 to !llvm.ptr
// CHECK-NEXT: %18 = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %19 = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %20 = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %21 = func.call @joint_cudnn_sdpa_forward(%0, %c1_i32, %c1_i64, %c4_i64, %c2_i64, %c16_i64, %c16_i64_0, %c8_i64, %cst, %c1_i32_1, %3, %4, %7, %8, %11, %12, %14, %15, %17, %18, %19, %20) : (!llvm.ptr, i32, i64, i64, i64, i64, i64, i64, f32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-NEXT: %22 = bufferization.to_tensor %alloc restrict writable : memref<1x4x16x8xbf16> to tensor<1x4x16x8xbf16>
// CHECK-NEXT: %23 = bufferization.to_tensor %alloc_5 restrict writable : memref<1x4x16xf32> to tensor<1x4x16xf32>
// CHECK-NEXT: %24 = llvm.mlir.addressof @__joint_node_1 : !llvm.ptr
// CHECK-NEXT: %c1_i32_7 = arith.constant 1 : i32
// CHECK-NEXT: %c1_i64_8 = arith.constant 1 : i64
// CHECK-NEXT: %c4_i64_9 = arith.constant 4 : i64
// CHECK-NEXT: %c2_i64_10 = arith.constant 2 : i64
// CHECK-NEXT: %c16_i64_11 = arith.constant 16 : i64
// CHECK-NEXT: %c16_i64_12 = arith.constant 16 : i64
// CHECK-NEXT: %c8_i64_13 = arith.constant 8 : i64
// CHECK-NEXT: %cst_14 = arith.constant 0.353553385 : f32
// CHECK-NEXT: %c1_i32_15 = arith.constant 1 : i32
// CHECK-NEXT: %25 = bufferization.to_buffer %q read_only : tensor<1x4x16x8xbf16> to memref<1x4x16x8xbf16>
// CHECK-NEXT: %intptr_16 = memref.extract_aligned_pointer_as_index %25 : memref<1x4x16x8xbf16> -> index
// CHECK-NEXT: %26 = arith.index_cast %intptr_16 : index to i64
// CHECK-NEXT: %27 = llvm.inttoptr %26 : i64 to !llvm.ptr
// CHECK-NEXT: %28 = llvm.mlir.addressof @__joint_sdpa_sizes_0 : !llvm.ptr
// CHECK-NEXT: %29 = bufferization.to_buffer %k read_only : tensor<1x2x16x8xbf16> to memref<1x2x16x8xbf16>
// CHECK-NEXT: %intptr_17 = memref.extract_aligned_pointer_as_index %29 : memref<1x2x16x8xbf16> -> index
// CHECK-NEXT: %30 = arith.index_cast %intptr_17 : index to i64
// CHECK-NEXT: %31 = llvm.inttoptr %30 : i64 to !llvm.ptr
// CHECK-NEXT: %32 = llvm.mlir.addressof @__joint_sdpa_sizes_1 : !llvm.ptr
// CHECK-NEXT: %33 = bufferization.to_buffer %v read_only : tensor<1x2x16x8xbf16> to memref<1x2x16x8xbf16>
// CHECK-NEXT: %intptr_18 = memref.extract_aligned_pointer_as_index %33 : memref<1x2x16x8xbf16> -> index
// CHECK-NEXT: %34 = arith.index_cast %intptr_18 : index to i64
// CHECK-NEXT: %35 = llvm.inttoptr %34 : i64 to !llvm.ptr
// CHECK-NEXT: %36 = llvm.mlir.addressof @__joint_sdpa_sizes_1 : !llvm.ptr
// CHECK-NEXT: %37 = bufferization.to_buffer %22 read_only : tensor<1x4x16x8xbf16> to memref<1x4x16x8xbf16>
// CHECK-NEXT: %intptr_19 = memref.extract_aligned_pointer_as_index %37 : memref<1x4x16x8xbf16> -> index
// CHECK-NEXT: %38 = arith.index_cast %intptr_19 : index to i64
// CHECK-NEXT: %39 = llvm.inttoptr %38 : i64 to !llvm.ptr
// CHECK-NEXT: %40 = llvm.mlir.addressof @__joint_sdpa_sizes_0 : !llvm.ptr
// CHECK-NEXT: %41 = bufferization.to_buffer %do read_only : tensor<1x4x16x8xbf16> to memref<1x4x16x8xbf16>
// CHECK-NEXT: %intptr_20 = memref.extract_aligned_pointer_as_index %41 : memref<1x4x16x8xbf16> -> index
// CHECK-NEXT: %42 = arith.index_cast %intptr_20 : index to i64
// CHECK-NEXT: %43 = llvm.inttoptr %42 : i64 to !llvm.ptr
// CHECK-NEXT: %44 = llvm.mlir.addressof @__joint_sdpa_sizes_0 : !llvm.ptr
// CHECK-NEXT: %45 = bufferization.to_buffer %23 read_only : tensor<1x4x16xf32> to memref<1x4x16xf32>
// CHECK-NEXT: %intptr_21 = memref.extract_aligned_pointer_as_index %45 : memref<1x4x16xf32> -> index
// CHECK-NEXT: %46 = arith.index_cast %intptr_21 : index to i64
// CHECK-NEXT: %47 = llvm.inttoptr %46 : i64 to !llvm.ptr
// CHECK-NEXT: %alloc_22 = memref.alloc() : memref<1x4x16x8xbf16>
// CHECK-NEXT: %intptr_23 = memref.extract_aligned_pointer_as_index %alloc_22 : memref<1x4x16x8xbf16> -> index
// CHECK-NEXT: %48 = arith.index_cast %intptr_23 : index to i64
// CHECK-NEXT: %49 = llvm.inttoptr %48 : i64 to !llvm.ptr
// CHECK-NEXT: %50 = llvm.mlir.addressof @__joint_sdpa_sizes_0 : !llvm.ptr
// CHECK-NEXT: %alloc_24 = memref.alloc() : memref<1x2x16x8xbf16>
// CHECK-NEXT: %intptr_25 = memref.extract_aligned_pointer_as_index %alloc_24 : memref<1x2x16x8xbf16> -> index
// CHECK-NEXT: %51 = arith.index_cast %intptr_25 : index to i64
// CHECK-NEXT: %52 = llvm.inttoptr %51 : i64 to !llvm.ptr
// CHECK-NEXT: %53 = llvm.mlir.addressof @__joint_sdpa_sizes_1 : !llvm.ptr
// CHECK-NEXT: %alloc_26 = memref.alloc() : memref<1x2x16x8xbf16>
// CHECK-NEXT: %intptr_27 = memref.extract_aligned_pointer_as_index %alloc_26 : memref<1x2x16x8xbf16> -> index
// CHECK-NEXT: %54 = arith.index_cast %intptr_27 : index to i64
// CHECK-NEXT: %55 = llvm.inttoptr %54 : i64 to !llvm.ptr
// CHECK-NEXT: %56 = llvm.mlir.addressof @__joint_sdpa_sizes_1 : !llvm.ptr
// CHECK-NEXT: %57 = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %58 = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %59 = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %60 = func.call @joint_cudnn_sdpa_backward(%24, %c1_i32_7, %c1_i64_8, %c4_i64_9, %c2_i64_10, %c16_i64_11, %c16_i64_12, %c8_i64_13, %cst_14, %c1_i32_15, %27, %28, %31, %32, %35, %36, %39, %40, %43, %44, %47, %49, %50, %52, %53, %55, %56, %57, %58, %59) : (!llvm.ptr, i32, i64, i64, i64, i64, i64, i64, f32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-NEXT: %61 = bufferization.to_tensor %alloc_22 restrict writable : memref<1x4x16x8xbf16> to tensor<1x4x16x8xbf16>
// CHECK-NEXT: %62 = bufferization.to_tensor %alloc_24 restrict writable : memref<1x2x16x8xbf16> to tensor<1x2x16x8xbf16>
// CHECK-NEXT: %63 = bufferization.to_tensor %alloc_26 restrict writable : memref<1x2x16x8xbf16> to tensor<1x2x16x8xbf16>
// CHECK-NEXT: joint.output %22, %61, %62, %63 : tensor<1x4x16x8xbf16>, tensor<1x4x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>
// CHECK-NEXT: }
// CHECK-NEXT: func.func private @joint_cudnn_sdpa_forward(!llvm.ptr, i32, i64, i64, i64, i64, i64, i64, f32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-NEXT: func.func private @joint_cudnn_sdpa_backward(!llvm.ptr, i32, i64, i64, i64, i64, i64, i64, f32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-NEXT: }

// Flash forward and backward (bf16, causal, no mask): both through cuDNN;
// the forward's bookkeeping results feed only the backward.
joint.graph @flash(%q: tensor<1x4x16x8xbf16> {joint.role = #joint.role<input>, joint.path = "q"}, %k: tensor<1x2x16x8xbf16> {joint.role = #joint.role<input>, joint.path = "k"}, %v: tensor<1x2x16x8xbf16> {joint.role = #joint.role<input>, joint.path = "v"}, %do: tensor<1x4x16x8xbf16> {joint.role = #joint.role<input>, joint.path = "do"}) -> (tensor<1x4x16x8xbf16> {joint.role = #joint.role<output>}, tensor<1x4x16x8xbf16> {joint.role = #joint.role<output>}, tensor<1x2x16x8xbf16> {joint.role = #joint.role<output>}, tensor<1x2x16x8xbf16> {joint.role = #joint.role<output>}) {
  %0:9 = joint.call_function "aten::_scaled_dot_product_flash_attention.default"(%q, %k, %v) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>, 0.000000e+00, true], name = "sdpa"} : (tensor<1x4x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>) -> (tensor<1x4x16x8xbf16>, tensor<1x4x16xf32>, none, none, i64, i64, tensor<2xui64>, tensor<ui64>, tensor<0xf32>)
  %1:3 = joint.call_function "aten::_scaled_dot_product_flash_attention_backward.default"(%do, %q, %k, %v, %0#0, %0#1, %0#4, %0#5, %0#6, %0#7) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>, #joint.operand<3>, #joint.operand<4>, #joint.operand<5>, unit, unit, #joint.operand<6>, #joint.operand<7>, 0.000000e+00, true, #joint.operand<8>, #joint.operand<9>], name = "sdpa_backward"} : (tensor<1x4x16x8xbf16>, tensor<1x4x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x4x16x8xbf16>, tensor<1x4x16xf32>, i64, i64, tensor<2xui64>, tensor<ui64>) -> (tensor<1x4x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>)
  joint.output %0#0, %1#0, %1#1, %1#2 : tensor<1x4x16x8xbf16>, tensor<1x4x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>
}

// -----

// CHECK: module {
// CHECK-NEXT: llvm.mlir.global private constant @__joint_node_1("attn_backward\00") {addr_space = 0 : i32}
// CHECK-NEXT: llvm.mlir.global private constant @__joint_sdpa_sizes_2(dense<[256, 256, 16, 1]> : tensor<4xi64>) {addr_space = 0 : i32} : !llvm.array<4 x i64>
// CHECK-NEXT: llvm.mlir.global private constant @__joint_sdpa_sizes_1(dense<[2, 1, 16, 16]> : tensor<4xi64>) {addr_space = 0 : i32} : !llvm.array<4 x i64>
// CHECK-NEXT: llvm.mlir.global private constant @__joint_sdpa_sizes_0(dense<[512, 256, 16, 1]> : tensor<4xi64>) {addr_space = 0 : i32} : !llvm.array<4 x i64>
// CHECK-NEXT: llvm.mlir.global private constant @__joint_node_0("attn\00") {addr_space = 0 : i32}
// CHECK-NEXT: joint.graph @for_cpu_mask(%q: tensor<2x2x16x16xbf16> {joint.path = "q", joint.role = #joint.role<input>}, %m: tensor<2x1x16x16xbf16> {joint.path = "m", joint.role = #joint.role<input>}, %do: tensor<2x2x16x16xbf16> {joint.path = "do", joint.role = #joint.role<input>}) -> (tensor<2x2x16x16xbf16> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %0 = llvm.mlir.addressof @__joint_node_0 : !llvm.ptr
// CHECK-NEXT: %c1_i32 = arith.constant 1 : i32
// CHECK-NEXT: %c2_i64 = arith.constant 2 : i64
// CHECK-NEXT: %c2_i64_0 = arith.constant 2 : i64
// CHECK-NEXT: %c2_i64_1 = arith.constant 2 : i64
// CHECK-NEXT: %c16_i64 = arith.constant 16 : i64
// CHECK-NEXT: %c16_i64_2 = arith.constant 16 : i64
// CHECK-NEXT: %c16_i64_3 = arith.constant 16 : i64
// CHECK-NEXT: %cst = arith.constant 2.500000e-01 : f32
// CHECK-NEXT: %c0_i32 = arith.constant 0 : i32
// CHECK-NEXT: %1 = bufferization.to_buffer %q read_only : tensor<2x2x16x16xbf16> to memref<2x2x16x16xbf16>
// CHECK-NEXT: %intptr = memref.extract_aligned_pointer_as_index %1 : memref<2x2x16x16xbf16> -> index
// CHECK-NEXT: %2 = arith.index_cast %intptr : index to i64
// CHECK-NEXT: %3 = llvm.inttoptr %2 : i64 to !llvm.ptr
// CHECK-NEXT: %4 = llvm.mlir.addressof @__joint_sdpa_sizes_0 : !llvm.ptr
// CHECK-NEXT: %5 = bufferization.to_buffer %q read_only : tensor<2x2x16x16xbf16> to memref<2x2x16x16xbf16>
// CHECK-NEXT: %intptr_4 = memref.extract_aligned_pointer_as_index %5 : memref<2x2x16x16xbf16> -> index
// CHECK-NEXT: %6 = arith.index_cast %intptr_4 : index to i64
// CHECK-NEXT: %7 = llvm.inttoptr %6 : i64 to !llvm.ptr
// CHECK-NEXT: %8 = llvm.mlir.addressof @__joint_sdpa_sizes_0 : !llvm.ptr
// CHECK-NEXT: %9 = bufferization.to_buffer %q read_only : tensor<2x2x16x16xbf16> to memref<2x2x16x16xbf16>
// CHECK-NEXT: %intptr_5 = memref.extract_aligned_pointer_as_index %9 : memref<2x2x16x16xbf16> -> index
// CHECK-NEXT: %10 = arith.index_cast %intptr_5 : index to i64
// CHECK-NEXT: %11 = llvm.inttoptr %10 : i64 to !llvm.ptr
// CHECK-NEXT: %12 = llvm.mlir.addressof @__joint_sdpa_sizes_0 : !llvm.ptr
// CHECK-NEXT: %alloc = memref.alloc() : memref<2x2x16x16xbf16>
// CHECK-NEXT: %intptr_6 = memref.extract_aligned_pointer_as_index %alloc : memref<2x2x16x16xbf16> -> index
// CHECK-NEXT: %13 = arith.index_cast %intptr_6 : index to i64
// CHECK-NEXT: %14 = llvm.inttoptr %13 : i64 to !llvm.ptr
// CHECK-NEXT: %15 = llvm.mlir.addressof @__joint_sdpa_sizes_0 : !llvm.ptr
// CHECK-NEXT: %alloc_7 = memref.alloc() : memref<2x2x16xf32>
// CHECK-NEXT: %intptr_8 = memref.extract_aligned_pointer_as_index %alloc_7 : memref<2x2x16xf32> -> index
// CHECK-NEXT: %16 = arith.index_cast %intptr_8 : index to i64
// CHECK-NEXT: %17 = llvm.inttoptr %16 : i64 to !llvm.ptr
// CHECK-NEXT: %18 = bufferization.to_buffer %m read_only : tensor<2x1x16x16xbf16> to memref<2x1x16x16xbf16>
// CHECK-NEXT: %intptr_9 = memref.extract_aligned_pointer_as_index %18 : memref<2x1x16x16xbf16> -> index
// CHECK-NEXT: %19 = arith.index_cast %intptr_9 : index to i64
// CHECK-NEXT: %20 = llvm.inttoptr %19 : i64 to !llvm.ptr
// CHECK-NEXT: %21 = llvm.mlir.addressof @__joint_sdpa_sizes_1 : !llvm.ptr
// CHECK-NEXT: %22 = llvm.mlir.addressof @__joint_sdpa_sizes_2 : !llvm.ptr
// CHECK-NEXT: %23 = func.call @joint_cudnn_sdpa_forward(%0, %c1_i32, %c2_i64, %c2_i64_0, %c2_i64_1, %c16_i64, %c16_i64_2, %c16_i64_3, %cst, %c0_i32, %3, %4, %7, %8, %11, %12, %14, %15, %17, %20, %21, %22) : (!llvm.ptr, i32, i64, i64, i64, i64, i64, i64, f32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-NEXT: %24 = bufferization.to_tensor %alloc restrict writable : memref<2x2x16x16xbf16> to tensor<2x2x16x16xbf16>
// CHECK-NEXT: %25 = bufferization.to_tensor %alloc_7 restrict writable : memref<2x2x16xf32> to tensor<2x2x16xf32>
// CHECK-NEXT: %26 = llvm.mlir.addressof @__joint_node_1 : !llvm.ptr
// CHECK-NEXT: %c1_i32_10 = arith.constant 1 : i32
// CHECK-NEXT: %c2_i64_11 = arith.constant 2 : i64
// CHECK-NEXT: %c2_i64_12 = arith.constant 2 : i64
// CHECK-NEXT: %c2_i64_13 = arith.constant 2 : i64
// CHECK-NEXT: %c16_i64_14 = arith.constant 16 : i64
// CHECK-NEXT: %c16_i64_15 = arith.constant 16 : i64
// CHECK-NEXT: %c16_i64_16 = arith.constant 16 : i64
// CHECK-NEXT: %cst_17 = arith.constant 2.500000e-01 : f32
// CHECK-NEXT: %c0_i32_18 = arith.constant 0 : i32
// CHECK-NEXT: %27 = bufferization.to_buffer %q read_only : tensor<2x2x16x16xbf16> to memref<2x2x16x16xbf16>
// CHECK-NEXT: %intptr_19 = memref.extract_aligned_pointer_as_index %27 : memref<2x2x16x16xbf16> -> index
// CHECK-NEXT: %28 = arith.index_cast %intptr_19 : index to i64
// CHECK-NEXT: %29 = llvm.inttoptr %28 : i64 to !llvm.ptr
// CHECK-NEXT: %30 = llvm.mlir.addressof @__joint_sdpa_sizes_0 : !llvm.ptr
// CHECK-NEXT: %31 = bufferization.to_buffer %q read_only : tensor<2x2x16x16xbf16> to memref<2x2x16x16xbf16>
// CHECK-NEXT: %intptr_20 = memref.extract_aligned_pointer_as_index %31 : memref<2x2x16x16xbf16> -> index
// CHECK-NEXT: %32 = arith.index_cast %intptr_20 : index to i64
// CHECK-NEXT: %33 = llvm.inttoptr %32 : i64 to !llvm.ptr
// CHECK-NEXT: %34 = llvm.mlir.addressof @__joint_sdpa_sizes_0 : !llvm.ptr
// CHECK-NEXT: %35 = bufferization.to_buffer %q read_only : tensor<2x2x16x16xbf16> to memref<2x2x16x16xbf16>
// CHECK-NEXT: %intptr_21 = memref.extract_aligned_pointer_as_index %35 : memref<2x2x16x16xbf16> -> index
// CHECK-NEXT: %36 = arith.index_cast %intptr_21 : index to i64
// CHECK-NEXT: %37 = llvm.inttoptr %36 : i64 to !llvm.ptr
// CHECK-NEXT: %38 = llvm.mlir.addressof @__joint_sdpa_sizes_0 : !llvm.ptr
// CHECK-NEXT: %39 = bufferization.to_buffer %24 read_only : tensor<2x2x16x16xbf16> to memref<2x2x16x16xbf16>
// CHECK-NEXT: %intptr_22 = memref.extract_aligned_pointer_as_index %39 : memref<2x2x16x16xbf16> -> index
// CHECK-NEXT: %40 = arith.index_cast %intptr_22 : index to i64
// CHECK-NEXT: %41 = llvm.inttoptr %40 : i64 to !llvm.ptr
// CHECK-NEXT: %42 = llvm.mlir.addressof @__joint_sdpa_sizes_0 : !llvm.ptr
// CHECK-NEXT: %43 = bufferization.to_buffer %do read_only : tensor<2x2x16x16xbf16> to memref<2x2x16x16xbf16>
// CHECK-NEXT: %intptr_23 = memref.extract_aligned_pointer_as_index %43 : memref<2x2x16x16xbf16> -> index
// CHECK-NEXT: %44 = arith.index_cast %intptr_23 : index to i64
// CHECK-NEXT: %45 = llvm.inttoptr %44 : i64 to !llvm.ptr
// CHECK-NEXT: %46 = llvm.mlir.addressof @__joint_sdpa_sizes_0 : !llvm.ptr
// CHECK-NEXT: %47 = bufferization.to_buffer %25 read_only : tensor<2x2x16xf32> to memref<2x2x16xf32>
// CHECK-NEXT: %intptr_24 = memref.extract_aligned_pointer_as_index %47 : memref<2x2x16xf32> -> index
// CHECK-NEXT: %48 = arith.index_cast %intptr_24 : index to i64
// CHECK-NEXT: %49 = llvm.inttoptr %48 : i64 to !llvm.ptr
// CHECK-NEXT: %alloc_25 = memref.alloc() : memref<2x2x16x16xbf16>
// CHECK-NEXT: %intptr_26 = memref.extract_aligned_pointer_as_index %alloc_25 : memref<2x2x16x16xbf16> -> index
// CHECK-NEXT: %50 = arith.index_cast %intptr_26 : index to i64
// CHECK-NEXT: %51 = llvm.inttoptr %50 : i64 to !llvm.ptr
// CHECK-NEXT: %52 = llvm.mlir.addressof @__joint_sdpa_sizes_0 : !llvm.ptr
// CHECK-NEXT: %alloc_27 = memref.alloc() : memref<2x2x16x16xbf16>
// CHECK-NEXT: %intptr_28 = memref.extract_aligned_pointer_as_index %alloc_27 : memref<2x2x16x16xbf16> -> index
// CHECK-NEXT: %53 = arith.index_cast %intptr_28 : index to i64
// CHECK-NEXT: %54 = llvm.inttoptr %53 : i64 to !llvm.ptr
// CHECK-NEXT: %55 = llvm.mlir.addressof @__joint_sdpa_sizes_0 : !llvm.ptr
// CHECK-NEXT: %alloc_29 = memref.alloc() : memref<2x2x16x16xbf16>
// CHECK-NEXT: %intptr_30 = memref.extract_aligned_pointer_as_index %alloc_29 : memref<2x2x16x16xbf16> -> index
// CHECK-NEXT: %56 = arith.index_cast %intptr_30 : index to i64
// CHECK-NEXT: %57 = llvm.inttoptr %56 : i64 to !llvm.ptr
// CHECK-NEXT: %58 = llvm.mlir.addressof @__joint_sdpa_sizes_0 : !llvm.ptr
// CHECK-NEXT: %59 = bufferization.to_buffer %m read_only : tensor<2x1x16x16xbf16> to memref<2x1x16x16xbf16>
// CHECK-NEXT: %intptr_31 = memref.extract_aligned_pointer_as_index %59 : memref<2x1x16x16xbf16> -> index
// CHECK-NEXT: %60 = arith.index_cast %intptr_31 : index to i64
// CHECK-NEXT: %61 = llvm.inttoptr %60 : i64 to !llvm.ptr
// CHECK-NEXT: %62 = llvm.mlir.addressof @__joint_sdpa_sizes_1 : !llvm.ptr
// CHECK-NEXT: %63 = llvm.mlir.addressof @__joint_sdpa_sizes_2 : !llvm.ptr
// CHECK-NEXT: %64 = func.call @joint_cudnn_sdpa_backward(%26, %c1_i32_10, %c2_i64_11, %c2_i64_12, %c2_i64_13, %c16_i64_14, %c16_i64_15, %c16_i64_16, %cst_17, %c0_i32_18, %29, %30, %33, %34, %37, %38, %41, %42, %45, %46, %49, %51, %52, %54, %55, %57, %58, %61, %62, %63) : (!llvm.ptr, i32, i64, i64, i64, i64, i64, i64, f32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-NEXT: %65 = bufferization.to_tensor %alloc_25 restrict writable : memref<2x2x16x16xbf16> to tensor<2x2x16x16xbf16>
// CHECK-NEXT: %66 = bufferization.to_tensor %alloc_27 restrict writable : memref<2x2x16x16xbf16> to tensor<2x2x16x16xbf16>
// CHECK-NEXT: %67 = bufferization.to_tensor %alloc_29 restrict writable : memref<2x2x16x16xbf16> to tensor<2x2x16x16xbf16>
// CHECK-NEXT: joint.output %65 : tensor<2x2x16x16xbf16>
// CHECK-NEXT: }
// CHECK-NEXT: func.func private @joint_cudnn_sdpa_forward(!llvm.ptr, i32, i64, i64, i64, i64, i64, i64, f32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-NEXT: func.func private @joint_cudnn_sdpa_backward(!llvm.ptr, i32, i64, i64, i64, i64, i64, i64, f32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-NEXT: }

// The CPU-traced Llama form: _for_cpu with a bf16 additive mask [B, 1, L, S]
// (cuDNN's bias) and a scale; forward and backward through cuDNN.
joint.graph @for_cpu_mask(%q: tensor<2x2x16x16xbf16> {joint.role = #joint.role<input>, joint.path = "q"}, %m: tensor<2x1x16x16xbf16> {joint.role = #joint.role<input>, joint.path = "m"}, %do: tensor<2x2x16x16xbf16> {joint.role = #joint.role<input>, joint.path = "do"}) -> (tensor<2x2x16x16xbf16> {joint.role = #joint.role<output>}) {
  %o, %lse = joint.call_function "aten::_scaled_dot_product_flash_attention_for_cpu.default"(%q, %q, %q, %m) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>], kwargs = {attn_mask = #joint.operand<3>, scale = 2.500000e-01 : f64}, name = "attn"} : (tensor<2x2x16x16xbf16>, tensor<2x2x16x16xbf16>, tensor<2x2x16x16xbf16>, tensor<2x1x16x16xbf16>) -> (tensor<2x2x16x16xbf16>, tensor<2x2x16xf32>)
  %dq, %dk, %dv = joint.call_function "aten::_scaled_dot_product_flash_attention_for_cpu_backward.default"(%do, %q, %q, %q, %o, %lse, %m) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>, #joint.operand<3>, #joint.operand<4>, #joint.operand<5>, 0.000000e+00, false], kwargs = {attn_mask = #joint.operand<6>, scale = 2.500000e-01 : f64}, name = "attn_backward"} : (tensor<2x2x16x16xbf16>, tensor<2x2x16x16xbf16>, tensor<2x2x16x16xbf16>, tensor<2x2x16x16xbf16>, tensor<2x2x16x16xbf16>, tensor<2x2x16xf32>, tensor<2x1x16x16xbf16>) -> (tensor<2x2x16x16xbf16>, tensor<2x2x16x16xbf16>, tensor<2x2x16x16xbf16>)
  joint.output %dq : tensor<2x2x16x16xbf16>
}

// -----

// CHECK: module {
// CHECK-NEXT: joint.graph @fallback(%q: tensor<1x2x4x8xf32> {joint.path = "q", joint.role = #joint.role<input>}, %h: tensor<1x2x4x12xbf16> {joint.path = "h", joint.role = #joint.role<input>}, %b: tensor<1x2x4x8xbf16> {joint.path = "b", joint.role = #joint.role<input>}, %m: tensor<4x4xbf16> {joint.path = "m", joint.role = #joint.role<input>}) -> (tensor<1x2x4x8xf32> {joint.role = #joint.role<output>}, tensor<1x2x4x12xbf16> {joint.role = #joint.role<output>}, tensor<1x2x4x8xbf16> {joint.role = #joint.role<output>}, tensor<1x2x32xf32> {joint.role = #joint.role<output>}) {
// CHECK-NEXT: %f32, %f32_0 = joint.call_function "aten::_scaled_dot_product_flash_attention_for_cpu.default"(%q, %q, %q) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>], name = "f32"} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4xf32>)
// CHECK-NEXT: %head12, %head12_1 = joint.call_function "aten::_scaled_dot_product_flash_attention_for_cpu.default"(%h, %h, %h) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>], name = "head12"} : (tensor<1x2x4x12xbf16>, tensor<1x2x4x12xbf16>, tensor<1x2x4x12xbf16>) -> (tensor<1x2x4x12xbf16>, tensor<1x2x4xf32>)
// CHECK-NEXT: %mask2d, %mask2d_2 = joint.call_function "aten::_scaled_dot_product_flash_attention_for_cpu.default"(%b, %b, %b, %m) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>], kwargs = {attn_mask = #joint.operand<3>}, name = "mask2d"} : (tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<4x4xbf16>) -> (tensor<1x2x4x8xbf16>, tensor<1x2x4xf32>)
// CHECK-NEXT: %padded, %padded_3, %padded_4, %padded_5 = joint.call_function "aten::_scaled_dot_product_efficient_attention.default"(%b, %b, %b) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>, unit, true], name = "padded"} : (tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>) -> (tensor<1x2x4x8xbf16>, tensor<1x2x32xf32>, tensor<2xui64>, tensor<ui64>)
// CHECK-NEXT: joint.output %f32, %head12, %mask2d, %padded_3 : tensor<1x2x4x8xf32>, tensor<1x2x4x12xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x32xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }

// Outside cuDNN's support: the decomposition stays, with the reason.
joint.graph @fallback(%q: tensor<1x2x4x8xf32> {joint.role = #joint.role<input>, joint.path = "q"}, %h: tensor<1x2x4x12xbf16> {joint.role = #joint.role<input>, joint.path = "h"}, %b: tensor<1x2x4x8xbf16> {joint.role = #joint.role<input>, joint.path = "b"}, %m: tensor<4x4xbf16> {joint.role = #joint.role<input>, joint.path = "m"}) -> (tensor<1x2x4x8xf32> {joint.role = #joint.role<output>}, tensor<1x2x4x12xbf16> {joint.role = #joint.role<output>}, tensor<1x2x4x8xbf16> {joint.role = #joint.role<output>}, tensor<1x2x32xf32> {joint.role = #joint.role<output>}) {
  // expected-remark @below {{SDPA of node 'f32' stays generated kernels: element type f32 (cuDNN SDPA runs bf16 or f16)}}
  %0, %1 = joint.call_function "aten::_scaled_dot_product_flash_attention_for_cpu.default"(%q, %q, %q) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>], name = "f32"} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4xf32>)
  // expected-remark @below {{SDPA of node 'head12' stays generated kernels: head_dim 12 (cuDNN: a multiple of 8 up to 256)}}
  %2, %3 = joint.call_function "aten::_scaled_dot_product_flash_attention_for_cpu.default"(%h, %h, %h) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>], name = "head12"} : (tensor<1x2x4x12xbf16>, tensor<1x2x4x12xbf16>, tensor<1x2x4x12xbf16>) -> (tensor<1x2x4x12xbf16>, tensor<1x2x4xf32>)
  // expected-remark @below {{SDPA of node 'mask2d' stays generated kernels: mask tensor<4x4xbf16> is not an additive bias [1|B, 1|H, L, S] of the operands' element type}}
  %4, %5 = joint.call_function "aten::_scaled_dot_product_flash_attention_for_cpu.default"(%b, %b, %b, %m) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>], kwargs = {attn_mask = #joint.operand<3>}, name = "mask2d"} : (tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<4x4xbf16>) -> (tensor<1x2x4x8xbf16>, tensor<1x2x4xf32>)
  // expected-remark @below {{SDPA of node 'padded' stays generated kernels: logsumexp tensor<1x2x32xf32> is not cuDNN's f32 [B, H, L] statistics}}
  %6:4 = joint.call_function "aten::_scaled_dot_product_efficient_attention.default"(%b, %b, %b) {args = [#joint.operand<0>, #joint.operand<1>, #joint.operand<2>, unit, true], name = "padded"} : (tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>) -> (tensor<1x2x4x8xbf16>, tensor<1x2x32xf32>, tensor<2xui64>, tensor<ui64>)
  joint.output %0, %2, %4, %6#1 : tensor<1x2x4x8xf32>, tensor<1x2x4x12xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x32xf32>
}

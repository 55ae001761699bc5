// joint-gpu-collectives: before convert-joint-to-linalg, each functional
// collective becomes a joint_nccl_* call (group name, input pointer of an
// identity-layout buffer, a fresh output allocation, element counts,
// JOINT_NCCL_DTYPE_* code: f32 0, f16 1, bf16 2, i64 4; JOINT_REDUCE_* code:
// avg 1, max 4; node name) marked joint.reads_until_result_use, and its
// wait_tensor joint_nccl_wait(handle), returning the output as is.
// all_to_all_single's counts are elements per peer (split rows times the
// elements of a row) in constant arrays. The module maps each group name to
// its size as the ops state it (0: only all-reduces use it). Errors name the
// node.
// RUN: joint-opt %s -split-input-file -verify-diagnostics -joint-gpu-collectives | FileCheck %s

// CHECK: module attributes {joint.collective_groups = {"0" = 2 : i64, tp = 0 : i64}} {
// CHECK-NEXT: llvm.mlir.global private constant @__joint_node_3("all_to_all\00")
// CHECK-NEXT: llvm.mlir.global private constant @__joint_nccl_counts_1(dense<[2, 6]> : tensor<2xi64>) {addr_space = 0 : i32} : !llvm.array<2 x i64>
// CHECK-NEXT: llvm.mlir.global private constant @__joint_nccl_counts_0(dense<[6, 2]> : tensor<2xi64>) {addr_space = 0 : i32} : !llvm.array<2 x i64>
// CHECK-NEXT: llvm.mlir.global private constant @__joint_node_2("all_reduce\00")
// CHECK-NEXT: llvm.mlir.global private constant @__joint_group_1("tp\00")
// CHECK-NEXT: llvm.mlir.global private constant @__joint_node_1("reduce_scatter\00")
// CHECK-NEXT: llvm.mlir.global private constant @__joint_node_0("all_gather\00")
// CHECK-NEXT: llvm.mlir.global private constant @__joint_group_0("0\00")
// CHECK-LABEL: joint.graph @fsdp
// CHECK-NEXT: %0 = bufferization.to_buffer %x read_only : tensor<4x3xbf16> to memref<4x3xbf16>
// CHECK-NEXT: %alloc = memref.alloc() : memref<8x3xbf16>
// CHECK-NEXT: %1 = llvm.mlir.addressof @__joint_group_0 : !llvm.ptr
// CHECK-NEXT: %intptr = memref.extract_aligned_pointer_as_index %0 : memref<4x3xbf16> -> index
// CHECK-NEXT: %2 = arith.index_cast %intptr : index to i64
// CHECK-NEXT: %3 = llvm.inttoptr %2 : i64 to !llvm.ptr
// CHECK-NEXT: %intptr_0 = memref.extract_aligned_pointer_as_index %alloc : memref<8x3xbf16> -> index
// CHECK-NEXT: %4 = arith.index_cast %intptr_0 : index to i64
// CHECK-NEXT: %5 = llvm.inttoptr %4 : i64 to !llvm.ptr
// CHECK-NEXT: %c12_i64 = arith.constant 12 : i64
// CHECK-NEXT: %c2_i32 = arith.constant 2 : i32
// CHECK-NEXT: %6 = llvm.mlir.addressof @__joint_node_0 : !llvm.ptr
// CHECK-NEXT: %7 = func.call @joint_nccl_all_gather(%1, %3, %5, %c12_i64, %c2_i32, %6) {joint.reads_until_result_use} : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i32, !llvm.ptr) -> !llvm.ptr
// CHECK-NEXT: %8 = bufferization.to_tensor %alloc restrict writable : memref<8x3xbf16> to tensor<8x3xbf16>
// CHECK-NEXT: %9 = func.call @joint_nccl_wait(%7) : (!llvm.ptr) -> i32
// CHECK-NEXT: %10 = bufferization.to_buffer %g read_only : tensor<8x3xf16> to memref<8x3xf16>
// CHECK-NEXT: %alloc_1 = memref.alloc() : memref<4x3xf16>
// CHECK:      %c12_i64_4 = arith.constant 12 : i64
// CHECK-NEXT: %c1_i32 = arith.constant 1 : i32
// CHECK-NEXT: %c1_i32_5 = arith.constant 1 : i32
// CHECK-NEXT: %16 = llvm.mlir.addressof @__joint_node_1 : !llvm.ptr
// CHECK-NEXT: %17 = func.call @joint_nccl_reduce_scatter(%11, %13, %15, %c12_i64_4, %c1_i32, %c1_i32_5, %16) {joint.reads_until_result_use} : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i32, i32, !llvm.ptr) -> !llvm.ptr
// CHECK-NEXT: %18 = bufferization.to_tensor %alloc_1 restrict writable : memref<4x3xf16> to tensor<4x3xf16>
// CHECK-NEXT: %19 = func.call @joint_nccl_wait(%17) : (!llvm.ptr) -> i32
// CHECK-NEXT: %20 = bufferization.to_buffer %i read_only : tensor<6xi64> to memref<6xi64>
// CHECK-NEXT: %alloc_6 = memref.alloc() : memref<6xi64>
// CHECK-NEXT: %21 = llvm.mlir.addressof @__joint_group_1 : !llvm.ptr
// CHECK:      %c6_i64 = arith.constant 6 : i64
// CHECK-NEXT: %c4_i32 = arith.constant 4 : i32
// CHECK-NEXT: %c4_i32_9 = arith.constant 4 : i32
// CHECK-NEXT: %26 = llvm.mlir.addressof @__joint_node_2 : !llvm.ptr
// CHECK-NEXT: %27 = func.call @joint_nccl_all_reduce(%21, %23, %25, %c6_i64, %c4_i32, %c4_i32_9, %26) {joint.reads_until_result_use} : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i32, i32, !llvm.ptr) -> !llvm.ptr
// CHECK-NEXT: %28 = bufferization.to_tensor %alloc_6 restrict writable : memref<6xi64> to tensor<6xi64>
// CHECK-NEXT: %29 = func.call @joint_nccl_wait(%27) : (!llvm.ptr) -> i32
// CHECK-NEXT: %30 = bufferization.to_buffer %a read_only : tensor<4x2xf32> to memref<4x2xf32>
// CHECK-NEXT: %alloc_10 = memref.alloc() : memref<4x2xf32>
// CHECK:      %36 = llvm.mlir.addressof @__joint_nccl_counts_0 : !llvm.ptr
// CHECK-NEXT: %37 = llvm.mlir.addressof @__joint_nccl_counts_1 : !llvm.ptr
// CHECK-NEXT: %c2_i32_13 = arith.constant 2 : i32
// CHECK-NEXT: %c0_i32 = arith.constant 0 : i32
// CHECK-NEXT: %38 = llvm.mlir.addressof @__joint_node_3 : !llvm.ptr
// CHECK-NEXT: %39 = func.call @joint_nccl_all_to_all(%31, %33, %35, %36, %37, %c2_i32_13, %c0_i32, %38) {joint.reads_until_result_use} : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32, i32, !llvm.ptr) -> !llvm.ptr
// CHECK-NEXT: %40 = bufferization.to_tensor %alloc_10 restrict writable : memref<4x2xf32> to tensor<4x2xf32>
// CHECK-NEXT: %41 = func.call @joint_nccl_wait(%39) : (!llvm.ptr) -> i32
// CHECK-NEXT: joint.output %8, %18, %28, %40 : tensor<8x3xbf16>, tensor<4x3xf16>, tensor<6xi64>, tensor<4x2xf32>
// CHECK: func.func private @joint_nccl_all_gather(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i32, !llvm.ptr) -> !llvm.ptr
// CHECK-NEXT: func.func private @joint_nccl_wait(!llvm.ptr) -> i32
// CHECK-NEXT: func.func private @joint_nccl_reduce_scatter(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i32, i32, !llvm.ptr) -> !llvm.ptr
// CHECK-NEXT: func.func private @joint_nccl_all_reduce(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i32, i32, !llvm.ptr) -> !llvm.ptr
// CHECK-NEXT: func.func private @joint_nccl_all_to_all(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32, i32, !llvm.ptr) -> !llvm.ptr
joint.graph @fsdp(%x: tensor<4x3xbf16> {joint.role = #joint.role<input>, joint.path = "x"}, %g: tensor<8x3xf16> {joint.role = #joint.role<input>, joint.path = "g"}, %i: tensor<6xi64> {joint.role = #joint.role<input>, joint.path = "i"}, %a: tensor<4x2xf32> {joint.role = #joint.role<input>, joint.path = "a"}) -> (tensor<8x3xbf16> {joint.role = #joint.role<output>}, tensor<4x3xf16> {joint.role = #joint.role<output>}, tensor<6xi64> {joint.role = #joint.role<output>}, tensor<4x2xf32> {joint.role = #joint.role<output>}) {
  %ag = joint.call_function "_c10d_functional::all_gather_into_tensor.default"(%x) {name = "all_gather", args = [#joint.operand<0>, 2, "0"]} : (tensor<4x3xbf16>) -> tensor<8x3xbf16>
  %agw = joint.call_function "_c10d_functional::wait_tensor.default"(%ag) {name = "ag_wait"} : (tensor<8x3xbf16>) -> tensor<8x3xbf16>
  %rs = joint.call_function "_c10d_functional::reduce_scatter_tensor.default"(%g) {name = "reduce_scatter", args = [#joint.operand<0>, "avg", 2, "0"]} : (tensor<8x3xf16>) -> tensor<4x3xf16>
  %rsw = joint.call_function "_c10d_functional::wait_tensor.default"(%rs) {name = "rs_wait"} : (tensor<4x3xf16>) -> tensor<4x3xf16>
  %ar = joint.call_function "_c10d_functional::all_reduce.default"(%i) {name = "all_reduce", args = [#joint.operand<0>, "max", "tp"]} : (tensor<6xi64>) -> tensor<6xi64>
  %arw = joint.call_function "_c10d_functional::wait_tensor.default"(%ar) {name = "ar_wait"} : (tensor<6xi64>) -> tensor<6xi64>
  %aa = joint.call_function "_c10d_functional::all_to_all_single.default"(%a) {name = "all_to_all", args = [#joint.operand<0>, [1, 3], [3, 1], "0"]} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %aaw = joint.call_function "_c10d_functional::wait_tensor.default"(%aa) {name = "aa_wait"} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  joint.output %agw, %rsw, %arw, %aaw : tensor<8x3xbf16>, tensor<4x3xf16>, tensor<6xi64>, tensor<4x2xf32>
}

// -----

// Equal splits (None) for one side; the group size comes from the other.
// 8 rows over 2 ranks: 4 rows of 3 elements = 12 per peer.
// CHECK: module attributes {joint.collective_groups = {"0" = 2 : i64}} {
// CHECK: @__joint_nccl_counts_1(dense<[18, 6]> : tensor<2xi64>)
// CHECK: @__joint_nccl_counts_0(dense<12> : tensor<2xi64>)
// CHECK-LABEL: joint.graph @equal_splits
// CHECK: func.call @joint_nccl_all_to_all({{.*}}) {joint.reads_until_result_use}
// CHECK: func.call @joint_nccl_wait
joint.graph @equal_splits(%a: tensor<8x3xf32> {joint.role = #joint.role<input>, joint.path = "a"}) -> (tensor<8x3xf32> {joint.role = #joint.role<output>}) {
  %aa = joint.call_function "_c10d_functional::all_to_all_single.default"(%a) {name = "a2a", args = [#joint.operand<0>, [6, 2], unit, "0"]} : (tensor<8x3xf32>) -> tensor<8x3xf32>
  %aaw = joint.call_function "_c10d_functional::wait_tensor.default"(%aa) {name = "a2a_wait"} : (tensor<8x3xf32>) -> tensor<8x3xf32>
  joint.output %aaw : tensor<8x3xf32>
}

// -----

joint.graph @bool_elements(%x: tensor<4xi1> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xi1> {joint.role = #joint.role<output>}) {
  // expected-error @below {{'_c10d_functional::all_reduce.default' (node 'ar'): elements of type i1 (NCCL lowers f32, f16, bf16, f64, i64, i32, i8, ui8)}}
  %ar = joint.call_function "_c10d_functional::all_reduce.default"(%x) {name = "ar", args = [#joint.operand<0>, "sum", "0"]} : (tensor<4xi1>) -> tensor<4xi1>
  %w = joint.call_function "_c10d_functional::wait_tensor.default"(%ar) {name = "ar_wait"} : (tensor<4xi1>) -> tensor<4xi1>
  joint.output %w : tensor<4xi1>
}

// -----

joint.graph @bitwise_reduce(%x: tensor<4xi32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xi32> {joint.role = #joint.role<output>}) {
  // expected-error @below {{'_c10d_functional::all_reduce.default' (node 'ar'): reduce op 'band' (NCCL lowers sum, avg, product, min, max)}}
  %ar = joint.call_function "_c10d_functional::all_reduce.default"(%x) {name = "ar", args = [#joint.operand<0>, "band", "0"]} : (tensor<4xi32>) -> tensor<4xi32>
  %w = joint.call_function "_c10d_functional::wait_tensor.default"(%ar) {name = "ar_wait"} : (tensor<4xi32>) -> tensor<4xi32>
  joint.output %w : tensor<4xi32>
}

// -----

joint.graph @wrong_group_size(%x: tensor<4x3xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<8x3xf32> {joint.role = #joint.role<output>}) {
  // expected-error @below {{'_c10d_functional::all_gather_into_tensor.default' (node 'ag'): group_size 4 is not the dim-0 ratio of its output to its input (8x3 from 4x3)}}
  %ag = joint.call_function "_c10d_functional::all_gather_into_tensor.default"(%x) {name = "ag", args = [#joint.operand<0>, 4, "0"]} : (tensor<4x3xf32>) -> tensor<8x3xf32>
  %w = joint.call_function "_c10d_functional::wait_tensor.default"(%ag) {name = "ag_wait"} : (tensor<8x3xf32>) -> tensor<8x3xf32>
  joint.output %w : tensor<8x3xf32>
}

// -----

joint.graph @symbolic_splits(%x: tensor<4x3xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %s: i64 {joint.role = #joint.role<input>, joint.path = "s"}) -> (tensor<4x3xf32> {joint.role = #joint.role<output>}) {
  // expected-error @below {{'_c10d_functional::all_to_all_single.default' (node 'a2a'): its split sizes are not static integers (or None)}}
  %aa = joint.call_function "_c10d_functional::all_to_all_single.default"(%x, %s) {name = "a2a", args = [#joint.operand<0>, [#joint.operand<1>, 2], [2, 2], "0"]} : (tensor<4x3xf32>, i64) -> tensor<4x3xf32>
  %w = joint.call_function "_c10d_functional::wait_tensor.default"(%aa) {name = "a2a_wait"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  joint.output %w : tensor<4x3xf32>
}

// -----

joint.graph @no_splits(%x: tensor<4x3xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4x3xf32> {joint.role = #joint.role<output>}) {
  // expected-error @below {{'_c10d_functional::all_to_all_single.default' (node 'a2a'): no split sizes give the group's size}}
  %aa = joint.call_function "_c10d_functional::all_to_all_single.default"(%x) {name = "a2a", args = [#joint.operand<0>, unit, unit, "0"]} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %w = joint.call_function "_c10d_functional::wait_tensor.default"(%aa) {name = "a2a_wait"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  joint.output %w : tensor<4x3xf32>
}

// -----

joint.graph @splits_do_not_cover(%x: tensor<4x3xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4x3xf32> {joint.role = #joint.role<output>}) {
  // expected-error @below {{'_c10d_functional::all_to_all_single.default' (node 'a2a'): its split sizes do not cover the dim 0 of its input and output for 2 ranks}}
  %aa = joint.call_function "_c10d_functional::all_to_all_single.default"(%x) {name = "a2a", args = [#joint.operand<0>, [2, 2], [1, 2], "0"]} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %w = joint.call_function "_c10d_functional::wait_tensor.default"(%aa) {name = "a2a_wait"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  joint.output %w : tensor<4x3xf32>
}

// -----

joint.graph @used_before_wait(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  // expected-error @below {{'_c10d_functional::all_reduce.default' (node 'ar'): its result is used other than by one wait_tensor}}
  %ar = joint.call_function "_c10d_functional::all_reduce.default"(%x) {name = "ar", args = [#joint.operand<0>, "sum", "0"]} : (tensor<4xf32>) -> tensor<4xf32>
  %n = joint.call_function "aten::neg.default"(%ar) {name = "neg"} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output %n : tensor<4xf32>
}

// -----

joint.graph @wait_on_input(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  // expected-error @below {{'_c10d_functional::wait_tensor.default' (node 'w'): waits on a value that is not the result of a collective the CUDA target lowers}}
  %w = joint.call_function "_c10d_functional::wait_tensor.default"(%x) {name = "w"} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output %w : tensor<4xf32>
}

// -----

joint.graph @dynamic(%x: tensor<?x3xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<?x3xf32> {joint.role = #joint.role<output>}) {
  // expected-error @below {{'_c10d_functional::all_reduce.default' (node 'ar'): it has dynamic sizes; the CUDA target lowers collectives of static shapes}}
  %ar = joint.call_function "_c10d_functional::all_reduce.default"(%x) {name = "ar", args = [#joint.operand<0>, "sum", "0"]} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %w = joint.call_function "_c10d_functional::wait_tensor.default"(%ar) {name = "ar_wait"} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  joint.output %w : tensor<?x3xf32>
}

// -----

joint.graph @returned_unwaited(%x: tensor<4xf32> {joint.role = #joint.role<input>, joint.path = "x"}) -> (tensor<4xf32> {joint.role = #joint.role<output>}) {
  // expected-error @below {{'_c10d_functional::all_reduce.default' (node 'ar'): its result is used other than by one wait_tensor}}
  %ar = joint.call_function "_c10d_functional::all_reduce.default"(%x) {name = "ar", args = [#joint.operand<0>, "sum", "0"]} : (tensor<4xf32>) -> tensor<4xf32>
  joint.output %ar : tensor<4xf32>
}

// joint-lower-to-cpu, stage by stage, on a one-op graph: the add writes
// straight into the caller's output buffer (empty-tensor elimination; the
// self-copy bufferization leaves is folded away: no allocation, no copy), and the
// entry is one LLVM function taking the expanded memref descriptors.
// RUN: joint-opt %s -joint-lower-to-cpu -mlir-print-ir-after=one-shot-bufferize -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUF
// RUN: joint-opt %s -joint-lower-to-cpu | FileCheck %s --check-prefix=LLVM

joint.schema @"aten::add.Tensor" {arguments = [#joint.arg<name = "self", type = "Tensor">, #joint.arg<name = "other", type = "Tensor">, #joint.arg<name = "alpha", type = "Scalar", kwarg_only = true, default_value = "1">], returns = [#joint.arg<type = "Tensor">], schema = "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", tags = ["core", "pointwise"]}
joint.graph @add_bias(%x: tensor<4x8xf32> {joint.role = #joint.role<input>, joint.path = "x"}, %b: tensor<8xf32> {joint.role = #joint.role<param>, joint.fqn = "b"}) -> (tensor<4x8xf32> {joint.role = #joint.role<output>}) {
  %0 = joint.call_function "aten::add.Tensor"(%x, %b) {name = "add"} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  joint.output %0 : tensor<4x8xf32>
}

// BUF-LABEL: func.func @joint_entry(
// BUF-SAME: %[[X:.*]]: memref<4x8xf32> {joint.path = "x", joint.role = #joint.role<input>},
// BUF-SAME: %[[B:.*]]: memref<8xf32> {joint.fqn = "b", joint.role = #joint.role<param>},
// BUF-SAME: %[[OUT:.*]]: memref<4x8xf32> {joint.role = #joint.role<output>})
// BUF-NOT: memref.alloc
// BUF: linalg.generic {{.*}} ins(%[[X]], %[[B]] : memref<4x8xf32>, memref<8xf32>) outs(%[[OUT]] : memref<4x8xf32>)
// BUF: arith.addf
// BUF: memref.copy %[[OUT]], %[[OUT]]
// BUF: return

// LLVM-NOT: func.func
// LLVM-LABEL: llvm.func @joint_entry(
// LLVM-SAME: %arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: i64, %arg3: i64, %arg4: i64, %arg5: i64, %arg6: i64,
// LLVM-SAME: %arg7: !llvm.ptr, %arg8: !llvm.ptr, %arg9: i64, %arg10: i64, %arg11: i64,
// LLVM-SAME: %arg12: !llvm.ptr, %arg13: !llvm.ptr, %arg14: i64, %arg15: i64, %arg16: i64, %arg17: i64, %arg18: i64)
// LLVM-NOT: llvm.call @malloc
// LLVM: llvm.fadd
// LLVM-NOT: memcpy
// LLVM: llvm.return

// joint-guard-empty-tensors: a tensor.empty whose chain (destination-passing
// inits, scf.for iter_args) reaches a value with two readers becomes a
// bufferization.alloc_tensor, so eliminate-empty-tensors cannot compute that
// shared value in an output buffer another reader's in-place result would
// also occupy; a single-use chain keeps its tensor.empty.
// RUN: joint-opt %s -joint-guard-empty-tensors | FileCheck %s

// CHECK-LABEL: func.func @shared_base
// CHECK: %[[B:.+]] = bufferization.alloc_tensor() : tensor<4xi64>
// CHECK-NEXT: %[[BASE:.+]] = linalg.fill ins(%{{.+}} : i64) outs(%[[B]] : tensor<4xi64>) -> tensor<4xi64>
// CHECK: scf.for {{.+}} iter_args(%{{.+}} = %[[BASE]])
// CHECK: scf.for {{.+}} iter_args(%{{.+}} = %[[BASE]])
// CHECK: %[[E:.+]] = tensor.empty() : tensor<4xi64>
// CHECK-NEXT: linalg.fill ins(%{{.+}} : i64) outs(%[[E]] : tensor<4xi64>) -> tensor<4xi64>
func.func @shared_base(%v: i64, %n: index) -> (tensor<4xi64>, tensor<4xi64>, tensor<4xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<4xi64>
  %base = linalg.fill ins(%v : i64) outs(%e : tensor<4xi64>) -> tensor<4xi64>
  %a = scf.for %i = %c0 to %n step %c1 iter_args(%t = %base) -> (tensor<4xi64>) {
    %u = tensor.insert %v into %t[%c0] : tensor<4xi64>
    scf.yield %u : tensor<4xi64>
  }
  %b = scf.for %i = %c0 to %n step %c1 iter_args(%t = %base) -> (tensor<4xi64>) {
    %u = tensor.insert %v into %t[%c1] : tensor<4xi64>
    scf.yield %u : tensor<4xi64>
  }
  %e2 = tensor.empty() : tensor<4xi64>
  %single = linalg.fill ins(%v : i64) outs(%e2 : tensor<4xi64>) -> tensor<4xi64>
  return %a, %b, %single : tensor<4xi64>, tensor<4xi64>, tensor<4xi64>
}

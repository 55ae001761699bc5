// joint-outline-loops: each top-level loop nest moves into its own private
// noinline function, in program order; values from above become arguments
// (in first-use order), constants are cloned in, results are returned; a
// second run changes nothing.
// RUN: joint-opt %s -joint-outline-loops | FileCheck %s
// RUN: joint-opt %s -joint-outline-loops -joint-outline-loops | FileCheck %s

// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[A:.*]]: memref<8xf32>, %[[B:.*]]: memref<8xf32>, %[[N:.*]]: index)
// CHECK: %[[ALLOC:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: call @step_loop0(%[[A]], %[[ALLOC]]) : (memref<8xf32>, memref<8xf32>) -> ()
// CHECK-NEXT: %[[SUM:.*]] = call @step_loop1(%[[N]], %[[ALLOC]]) : (index, memref<8xf32>) -> f32
// CHECK-NEXT: memref.store %[[SUM]], %[[B]][%{{.*}}] : memref<8xf32>
// CHECK-NEXT: memref.dealloc %[[ALLOC]] : memref<8xf32>
// CHECK-NEXT: return

// CHECK-LABEL: func.func private @step_loop0(
// CHECK-SAME: %[[A0:.*]]: memref<8xf32>, %[[T0:.*]]: memref<8xf32>) attributes {joint.outlined, passthrough = ["noinline"]}
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: scf.for %[[I:.*]] = %[[C0]] to %[[C8]] step %[[C1]] {
// CHECK-NEXT: %[[X:.*]] = memref.load %[[A0]][%[[I]]]
// CHECK-NEXT: %[[E:.*]] = math.exp %[[X]]
// CHECK-NEXT: memref.store %[[E]], %[[T0]][%[[I]]]
// CHECK: return
// CHECK-NEXT: }

// CHECK-LABEL: func.func private @step_loop1(
// CHECK-SAME: %[[N1:.*]]: index, %[[T:.*]]: memref<8xf32>) -> f32 attributes {joint.outlined, passthrough = ["noinline"]}
// CHECK-DAG: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[D0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[D1:.*]] = arith.constant 1 : index
// CHECK: %[[R:.*]] = scf.for %{{.*}} = %[[D0]] to %[[N1]] step %[[D1]] iter_args(%{{.*}} = %[[Z]]) -> (f32)
// CHECK: memref.load %[[T]]
// CHECK: return %[[R]] : f32
// CHECK-NOT: func.func
func.func @step(%a: memref<8xf32>, %b: memref<8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %a[%i] : memref<8xf32>
    %e = math.exp %x : f32
    memref.store %e, %t[%i] : memref<8xf32>
  }
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
    %x = memref.load %t[%i] : memref<8xf32>
    %s = arith.addf %acc, %x : f32
    scf.yield %s : f32
  }
  memref.store %sum, %b[%c0] : memref<8xf32>
  memref.dealloc %t : memref<8xf32>
  return
}

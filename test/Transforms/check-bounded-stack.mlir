// joint-check-bounded-stack: a stack allocation in a loop needs a
// memref.alloca_scope inside that loop; outside loops it is fine.
// RUN: joint-opt %s -split-input-file -verify-diagnostics -joint-check-bounded-stack | FileCheck %s

// CHECK-LABEL: func.func @bounded
func.func @bounded(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %top = memref.alloca() : memref<4xf32>
  scf.for %i = %c0 to %n step %c1 {
    memref.alloca_scope {
      %scoped = memref.alloca() : memref<4xf32>
    }
  }
  return
}

// -----

func.func @grows_per_iteration(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-note @below {{the loop: 'scf.for'}}
  scf.for %i = %c0 to %n step %c1 {
    scf.for %j = %c0 to %n step %c1 {
    } 
    // expected-error @below {{'memref.alloca' op allocates stack inside a loop without a memref.alloca_scope: the stack grows with every iteration}}
    %tile = memref.alloca() : memref<4xf32>
  }
  return
}

// -----

// A scope outside the loop does not bound the loop's allocations.
func.func @scope_outside_the_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  memref.alloca_scope {
    // expected-note @below {{the loop: 'scf.for'}}
    scf.for %i = %c0 to %n step %c1 {
      // expected-error @below {{'memref.alloca' op allocates stack inside a loop without a memref.alloca_scope: the stack grows with every iteration}}
      %tile = memref.alloca() : memref<4xf32>
    }
  }
  return
}

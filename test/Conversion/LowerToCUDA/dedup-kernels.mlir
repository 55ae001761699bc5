// joint-gpu-dedup-kernels: every outlined kernel (a gpu.module holding one
// gpu.func) moves into the first such module with the same module
// attributes, renamed after its old module; a kernel whose content equals
// one already there (its name and locations aside) is dropped and its
// launches take that one. A kernel differing in one constant stays; a
// module with other attributes is merged separately; a module that is not
// one outlined kernel is left alone. Launches keep their arguments and
// order.
// RUN: joint-opt %s -joint-gpu-dedup-kernels | FileCheck %s

// CHECK: module attributes {gpu.container_module} {
// CHECK-NEXT: gpu.module @k0 {
// CHECK-NEXT: gpu.func @k0(%arg0: memref<4xf32>) kernel {
// CHECK: %cst = arith.constant 1.000000e+00 : f32
// CHECK: gpu.func @k2(%arg0: memref<4xf32>) kernel {
// CHECK: %cst = arith.constant 2.000000e+00 : f32
// CHECK: gpu.func @k5(%arg0: memref<8xf32>) kernel {
// CHECK-NEXT: gpu.return
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: gpu.module @k3 attributes {gpu.known_attr = 1 : i64} {
// CHECK-NEXT: gpu.func @k3(%arg0: memref<4xf32>) kernel {
// CHECK: gpu.module @two {
// CHECK-NEXT: gpu.func @a(%arg0: memref<8xf32>) kernel {
// CHECK: gpu.func @b(%arg0: memref<8xf32>) kernel {
// CHECK-NOT: gpu.module
// CHECK: func.func @step(%arg0: memref<4xf32>, %arg1: memref<8xf32>) {
// CHECK-NEXT: %c1 = arith.constant 1 : index
// CHECK-NEXT: gpu.launch_func  @k0::@k0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)  args(%arg0 : memref<4xf32>)
// CHECK-NEXT: gpu.launch_func  @k0::@k0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)  args(%arg0 : memref<4xf32>)
// CHECK-NEXT: gpu.launch_func  @k0::@k2 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)  args(%arg0 : memref<4xf32>)
// CHECK-NEXT: gpu.launch_func  @k3::@k3 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)  args(%arg0 : memref<4xf32>)
// CHECK-NEXT: gpu.launch_func  @k0::@k0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)  args(%arg0 : memref<4xf32>)
// CHECK-NEXT: gpu.launch_func  @k0::@k5 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)  args(%arg1 : memref<8xf32>)
// CHECK-NEXT: gpu.launch_func  @two::@b blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)  args(%arg1 : memref<8xf32>)
// CHECK-NEXT: return

module attributes {gpu.container_module} {
  gpu.module @k0 {
    gpu.func @k(%arg0: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %one = arith.constant 1.0 : f32
      memref.store %one, %arg0[%c0] : memref<4xf32>
      gpu.return
    } loc("layer0")
  }
  gpu.module @k1 {
    gpu.func @k(%arg0: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %one = arith.constant 1.0 : f32
      memref.store %one, %arg0[%c0] : memref<4xf32>
      gpu.return
    } loc("layer1")
  }
  gpu.module @k2 {
    gpu.func @k(%arg0: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %two = arith.constant 2.0 : f32
      memref.store %two, %arg0[%c0] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @k3 attributes {gpu.known_attr = 1 : i64} {
    gpu.func @k(%arg0: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %one = arith.constant 1.0 : f32
      memref.store %one, %arg0[%c0] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @k4 {
    gpu.func @k(%arg0: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %one = arith.constant 1.0 : f32
      memref.store %one, %arg0[%c0] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @k5 {
    gpu.func @k(%arg0: memref<8xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @two {
    gpu.func @a(%arg0: memref<8xf32>) kernel {
      gpu.return
    }
    gpu.func @b(%arg0: memref<8xf32>) kernel {
      gpu.return
    }
  }
  func.func @step(%arg0: memref<4xf32>, %arg1: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k0::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%arg0 : memref<4xf32>)
    gpu.launch_func @k1::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%arg0 : memref<4xf32>)
    gpu.launch_func @k2::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%arg0 : memref<4xf32>)
    gpu.launch_func @k3::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%arg0 : memref<4xf32>)
    gpu.launch_func @k4::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%arg0 : memref<4xf32>)
    gpu.launch_func @k5::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%arg1 : memref<8xf32>)
    gpu.launch_func @two::@b blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%arg1 : memref<8xf32>)
    return
  }
}

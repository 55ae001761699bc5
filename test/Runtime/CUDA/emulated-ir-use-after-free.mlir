// A use after free planted in hand-written IR: the first kernel fills a
// buffer, the buffer is freed in stream order, then a second kernel reads
// it. Lowered with the emulate route (host kernels, joint-gpu-emulate-*),
// JIT-run by mlir-runner against the runtime on the emulated device: the
// race checker reports the read of the freed allocation, naming the kernel.
// REQUIRES: cuda-runtime
// RUN: joint-opt %s -pass-pipeline='builtin.module(gpu.module(joint-gpu-emulate-kernels),finalize-memref-to-llvm,convert-arith-to-llvm,convert-func-to-llvm,gpu-to-llvm,reconcile-unrealized-casts,joint-gpu-emulate-launches)' -o %t.mlir
// RUN: %cuda_stub_env JOINT_CUDA_DEVICE=emulated mlir-runner %t.mlir -e main -entry-point-result=void -shared-libs=%joint_cuda_runtime_lib 2>&1 | FileCheck %s
// CHECK: joint-cuda-runtime: error: mgpuLaunchKernel: cuLaunchKernel: use after free: kernel 'copy' on stream 1 reads allocation 1 (16 bytes), freed by free on stream 1, kernel 'copy'
// CHECK-NOT: error
module attributes {gpu.container_module} {
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %t0 = gpu.wait async
    %buf, %t1 = gpu.alloc async [%t0] () : memref<4xf32>
    %out, %t2 = gpu.alloc async [%t1] () : memref<4xf32>
    %t3 = gpu.launch_func async [%t2] @fill::@fill blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%buf : memref<4xf32>)
    %t4 = gpu.dealloc async [%t3] %buf : memref<4xf32>
    %t5 = gpu.launch_func async [%t4] @copy::@copy blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%buf : memref<4xf32>, %out : memref<4xf32>)
    %t6 = gpu.dealloc async [%t5] %out : memref<4xf32>
    gpu.wait [%t6]
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
  gpu.module @copy {
    gpu.func @copy(%in: memref<4xf32>, %out: memref<4xf32>) kernel {
      %t = gpu.thread_id x
      %v = memref.load %in[%t] : memref<4xf32>
      memref.store %v, %out[%t] : memref<4xf32>
      gpu.return
    }
  }
}

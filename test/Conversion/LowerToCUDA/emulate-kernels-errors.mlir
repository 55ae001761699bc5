// RUN: joint-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(gpu.module(joint-gpu-emulate-kernels))'

// The emulated device runs the threads of a block one after another on one
// host thread: barriers and shared memory are refused at compile time.
module attributes {gpu.container_module} {
  gpu.module @sync {
    gpu.func @sync(%buf: memref<16xf32>) kernel {
      // expected-error @+1 {{'gpu.barrier' op in kernel 'sync': the emulated device runs the threads of a block one after another and cannot run barriers or shared memory}}
      gpu.barrier
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @tile {
    // expected-error @+1 {{'gpu.func' op kernel 'tile' has workgroup or private memory attributions: the emulated device runs the threads of a block one after another and cannot run barriers or shared memory}}
    gpu.func @tile(%buf: memref<16xf32>) workgroup(%tile: memref<16xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @shared_arg {
    // expected-error @+1 {{'gpu.func' op kernel 'shared_arg' takes workgroup (shared) memory: the emulated device}}
    gpu.func @shared_arg(%buf: memref<16xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @shared_alloc {
    gpu.func @shared_alloc(%buf: memref<16xf32>) kernel {
      // expected-error @+1 {{'memref.alloca' op in kernel 'shared_alloc' uses workgroup (shared) memory: the emulated device}}
      %tile = memref.alloca() : memref<16xf32, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @shuffle {
    gpu.func @shuffle(%x: f32) kernel {
      %c1 = arith.constant 1 : i32
      %c32 = arith.constant 32 : i32
      // expected-error @+1 {{'gpu.shuffle' op in kernel 'shuffle' has no emulation (thread and block ids and dimensions only)}}
      %y, %ok = gpu.shuffle xor %x, %c1, %c32 : f32
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @helper {
    // expected-error @+1 {{'gpu.func' op 'helper' is not a kernel; the emulated device runs kernels only}}
    gpu.func @helper(%x: f32) {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @vector_arg {
    // expected-error @+1 {{'gpu.func' op kernel argument 0 of type 'vector<4xf32>' has no emulated parameter kind (memrefs and scalars of 1, 2, 4 or 8 bytes)}}
    gpu.func @vector_arg(%x: vector<4xf32>) kernel {
      gpu.return
    }
  }
}

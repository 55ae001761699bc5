// RUN: joint-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(joint-gpu-emulate-launches)'

// Only kernels that joint-gpu-emulate-kernels lowered become a kernel table.
module attributes {gpu.container_module} {
  gpu.module @raw {
    // expected-error @+1 {{'gpu.func' op in gpu.module 'raw' was not lowered for the emulated device (joint-gpu-emulate-kernels)}}
    gpu.func @raw() kernel {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @plain {
    // expected-error @+1 {{'llvm.func' op in gpu.module 'plain' is not a kernel of joint-gpu-emulate-kernels (no joint.emu_param_kinds)}}
    llvm.func @plain(%params: !llvm.ptr, %launch: !llvm.ptr) attributes {gpu.kernel} {
      llvm.return
    }
  }
}

// -----

// A cubin cannot run on the emulated device.
module attributes {gpu.container_module} {
  gpu.binary @cubin [#gpu.object<#nvvm.target, "">]
  llvm.func @step(%stream: !llvm.ptr) {
    %c1 = llvm.mlir.constant(1 : i64) : i64
    // expected-error @+1 {{'gpu.launch_func' op launches a kernel of 'cubin', which is not a gpu.module lowered for the emulated device}}
    gpu.launch_func <%stream : !llvm.ptr> @cubin::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) : i64
    llvm.return
  }
}

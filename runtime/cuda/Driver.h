//===- Driver.h - CUDA driver entry points behind a table -------*- C++ -*-===//
//
// The runtime reaches the CUDA driver only through `DriverApi`, a table of
// function pointers with the driver's own signatures. The shared library
// fills it from libcuda (`systemDriver()`); the unit tests fill it with fakes
// that record the call sequence and inject failures, so pooling, stream and
// event bookkeeping and error reporting are tested on machines without a GPU.
// `JOINT_CUDA_DEVICE=emulated` selects the emulated device
// (EmulatedDriver.h) instead of libcuda at run time.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_RUNTIME_CUDA_DRIVER_H
#define JOINT_RUNTIME_CUDA_DRIVER_H

#include <cuda.h>

#include <string>

namespace joint::cuda {

/// One member per driver call the runtime makes; names drop the `cu` prefix
/// (cuda.h maps several names to `_v2` symbols by macro).
struct DriverApi {
  CUresult (*init)(unsigned flags);
  CUresult (*deviceGet)(CUdevice *device, int ordinal);
  CUresult (*primaryCtxRetain)(CUcontext *ctx, CUdevice device);
  CUresult (*primaryCtxRelease)(CUdevice device);
  CUresult (*ctxPushCurrent)(CUcontext ctx);
  CUresult (*ctxPopCurrent)(CUcontext *ctx);
  CUresult (*moduleLoadData)(CUmodule *module, const void *image);
  CUresult (*moduleLoadDataEx)(CUmodule *module, const void *image,
                               unsigned numOptions, CUjit_option *options,
                               void **optionValues);
  CUresult (*moduleUnload)(CUmodule module);
  CUresult (*moduleGetFunction)(CUfunction *fn, CUmodule module,
                                const char *name);
  CUresult (*launchKernel)(CUfunction fn, unsigned gridX, unsigned gridY,
                           unsigned gridZ, unsigned blockX, unsigned blockY,
                           unsigned blockZ, unsigned smemBytes, CUstream stream,
                           void **params, void **extra);
  CUresult (*launchKernelEx)(const CUlaunchConfig *config, CUfunction fn,
                             void **params, void **extra);
  CUresult (*streamCreate)(CUstream *stream, unsigned flags);
  CUresult (*streamDestroy)(CUstream stream);
  CUresult (*streamSynchronize)(CUstream stream);
  CUresult (*streamWaitEvent)(CUstream stream, CUevent event, unsigned flags);
  CUresult (*eventCreate)(CUevent *event, unsigned flags);
  CUresult (*eventDestroy)(CUevent event);
  CUresult (*eventRecord)(CUevent event, CUstream stream);
  CUresult (*eventSynchronize)(CUevent event);
  CUresult (*memAllocAsync)(CUdeviceptr *ptr, size_t bytes, CUstream stream);
  CUresult (*memAllocManaged)(CUdeviceptr *ptr, size_t bytes, unsigned flags);
  CUresult (*memFreeAsync)(CUdeviceptr ptr, CUstream stream);
  CUresult (*memFree)(CUdeviceptr ptr);
  CUresult (*memcpyAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                          CUstream stream);
  CUresult (*memcpyDtoHAsync)(void *dst, CUdeviceptr src, size_t bytes,
                              CUstream stream);
  CUresult (*memcpyHtoDAsync)(CUdeviceptr dst, const void *src, size_t bytes,
                              CUstream stream);
  CUresult (*memsetD32Async)(CUdeviceptr dst, unsigned value, size_t count,
                             CUstream stream);
  CUresult (*memsetD16Async)(CUdeviceptr dst, unsigned short value,
                             size_t count, CUstream stream);
  CUresult (*memHostAlloc)(void **ptr, size_t bytes, unsigned flags);
  CUresult (*memFreeHost)(void *ptr);
  CUresult (*memHostRegister)(void *ptr, size_t bytes, unsigned flags);
  CUresult (*memHostUnregister)(void *ptr);
  CUresult (*memGetInfo)(size_t *freeBytes, size_t *totalBytes);

  // Hooks of a checking driver (the emulator); null in libcuda's table.
  /// Names the node whose host code makes the following calls, for the
  /// driver's findings.
  void (*annotate)(const char *node) = nullptr;
  /// Pops the oldest pending finding: a race, a use after free, or why the
  /// last call failed. `*status` is the CUresult the failed call returned,
  /// or 0 for a finding that did not fail its call. False when none.
  bool (*takeFinding)(int *status, std::string *message) = nullptr;
};

/// The table filled from the libcuda the shared library was linked against
/// (the toolkit's stub at build time, the real driver at run time).
const DriverApi &systemDriver();

/// The table `JOINT_CUDA_DEVICE` selects for the shared library: `emulated`
/// gives the emulated device, unset, empty or `cuda` gives `systemDriver()`;
/// any other value gives `systemDriver()` and sets `*unknown`.
const DriverApi &selectedDriver(bool *unknown);

} // namespace joint::cuda

#endif // JOINT_RUNTIME_CUDA_DRIVER_H

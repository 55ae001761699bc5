//===- SystemDriver.cpp - DriverApi filled from libcuda ---------*- C++ -*-===//
//
// Binds every `DriverApi` member to the libcuda symbol cuda.h names (the
// `_v2` and per-thread variants follow cuda.h's macros). Only the shared
// runtime library contains this file; unit tests link fakes instead.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

namespace joint::cuda {

const DriverApi &systemDriver() {
  static const DriverApi api = {
      cuInit,
      cuDeviceGet,
      cuDevicePrimaryCtxRetain,
      cuDevicePrimaryCtxRelease,
      cuCtxPushCurrent,
      cuCtxPopCurrent,
      cuModuleLoadData,
      cuModuleLoadDataEx,
      cuModuleUnload,
      cuModuleGetFunction,
      cuLaunchKernel,
      cuLaunchKernelEx,
      cuStreamCreate,
      cuStreamDestroy,
      cuStreamSynchronize,
      cuStreamWaitEvent,
      cuEventCreate,
      cuEventDestroy,
      cuEventRecord,
      cuEventSynchronize,
      cuMemAllocAsync,
      cuMemAllocManaged,
      cuMemFreeAsync,
      cuMemFree,
      cuMemcpyAsync,
      cuMemcpyDtoHAsync,
      cuMemcpyHtoDAsync,
      cuMemsetD32Async,
      cuMemsetD16Async,
      cuMemHostAlloc,
      cuMemFreeHost,
      cuMemHostRegister,
      cuMemHostUnregister,
      cuMemGetInfo,
  };
  return api;
}

} // namespace joint::cuda

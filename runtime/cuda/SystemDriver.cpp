//===- SystemDriver.cpp - DriverApi filled from libcuda -------------------===//
//
// Binds every `DriverApi` member to the libcuda symbol cuda.h names (the
// `_v2` and per-thread variants follow cuda.h's macros), and chooses between
// it and the emulated device from `JOINT_CUDA_DEVICE`. Only the shared
// runtime library contains this file; unit tests link fakes or the emulator.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"
#include "EmulatedDriver.h"

#include <cstdlib>
#include <cstring>

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

const DriverApi &selectedDriver(bool *unknown) {
  *unknown = false;
  const char *choice = std::getenv("JOINT_CUDA_DEVICE");
  if (!choice || !*choice || std::strcmp(choice, "cuda") == 0)
    return systemDriver();
  if (std::strcmp(choice, "emulated") == 0)
    return emulatedDriver();
  *unknown = true;
  return systemDriver();
}

} // namespace joint::cuda

//===- FakeDriver.h - Recording DriverApi for runtime tests -----*- C++ -*-===//
//
// A `DriverApi` whose functions log each call with symbolic handle names
// (streams s1.., events e1.., pinned buffers h1.., device pointers d1..),
// count the live objects so tests can check that nothing leaks, and fail a
// chosen call with a chosen CUresult. Not thread-safe: one instance, and
// threads (the per-device and per-thread cases) take turns.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_RUNTIME_CUDA_TEST_FAKEDRIVER_H
#define JOINT_RUNTIME_CUDA_TEST_FAKEDRIVER_H

#include "Driver.h"

#include <map>
#include <string>
#include <vector>

namespace joint::cuda::test {

struct FakeState {
  std::vector<std::string> log;
  /// Fails the `failNth`-th call (1-based, counted from when set) of
  /// `failCall` (e.g. "cuLaunchKernel") with `failResult`; every call of it
  /// when failNth is 0.
  std::string failCall;
  int failNth = 0;
  CUresult failResult = CUDA_ERROR_UNKNOWN;
  int seen = 0;
  // Live objects.
  int contextDepth = 0;
  int retainedContexts = 0;
  std::map<void *, std::string> streams, events, hostBuffers, modules;
  std::map<CUdeviceptr, std::string> devicePtrs;
  std::map<void *, std::string> functions;
  /// Current contexts, innermost last; the context each module was loaded
  /// in, and the module of each function: a launch of a function outside
  /// its module's context fails with CUDA_ERROR_INVALID_CONTEXT, as on a
  /// real device.
  std::vector<CUcontext> contexts;
  std::map<void *, CUcontext> moduleContext;
  std::map<void *, void *> functionModule;
  int nextId = 1;
  std::map<char, int> counters; ///< next symbolic id per kind
};

/// The process-wide fake state; reset() clears it.
FakeState &fake();
void resetFake();
/// The table of fake entry points.
const DriverApi &fakeDriver();
/// Symbolic name of a handle or pointer ("s1", "d3", "?" when unknown).
std::string nameOf(const void *handle);
std::string nameOfDevice(CUdeviceptr ptr);
/// "ctx0" for device 0's primary context, "none" for null.
std::string nameOfContext(CUcontext ctx);

} // namespace joint::cuda::test

#endif // JOINT_RUNTIME_CUDA_TEST_FAKEDRIVER_H

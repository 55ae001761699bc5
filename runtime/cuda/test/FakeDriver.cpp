//===- FakeDriver.cpp - Recording DriverApi for runtime tests -------------===//
//
// Each fake entry point formats one log line "cuName(args)", consults the
// failure injection, and on success creates or destroys its symbolic object.
// Handles are small fake addresses that are never dereferenced.
//
//===----------------------------------------------------------------------===//

#include "FakeDriver.h"

#include <cstdint>

using namespace joint::cuda;
using namespace joint::cuda::test;

namespace joint::cuda::test {

FakeState &fake() {
  static FakeState state;
  return state;
}

void resetFake() { fake() = FakeState(); }

std::string nameOf(const void *handle) {
  FakeState &s = fake();
  void *key = const_cast<void *>(handle);
  for (auto *table :
       {&s.streams, &s.events, &s.hostBuffers, &s.modules, &s.functions}) {
    auto it = table->find(key);
    if (it != table->end())
      return it->second;
  }
  return handle ? "?" : "null";
}

std::string nameOfDevice(CUdeviceptr ptr) {
  auto it = fake().devicePtrs.find(ptr);
  return it == fake().devicePtrs.end() ? "?" : it->second;
}

std::string nameOfContext(CUcontext ctx) {
  if (!ctx)
    return "none";
  return "ctx" + std::to_string(reinterpret_cast<uintptr_t>(ctx) - 0x100);
}

} // namespace joint::cuda::test

namespace {

CUcontext currentContext() {
  return fake().contexts.empty() ? nullptr : fake().contexts.back();
}

/// CUDA_ERROR_INVALID_CONTEXT when `fn` belongs to a module of another
/// context than the current one.
CUresult checkContext(CUfunction fn) {
  auto f = fake().functionModule.find(fn);
  if (f == fake().functionModule.end())
    return CUDA_SUCCESS;
  auto m = fake().moduleContext.find(f->second);
  if (m == fake().moduleContext.end() || m->second == currentContext())
    return CUDA_SUCCESS;
  return CUDA_ERROR_INVALID_CONTEXT;
}

/// Logs the call and returns the injected failure for it, if any.
CUresult enter(const char *call, const std::string &args) {
  FakeState &s = fake();
  CUresult result = CUDA_SUCCESS;
  if (s.failCall == call) {
    ++s.seen;
    if (s.failNth == 0 || s.seen == s.failNth)
      result = s.failResult;
  }
  s.log.push_back(std::string(call) + "(" + args + ")" +
                  (result ? " -> " + std::to_string(result) : ""));
  return result;
}

void *newHandle(std::map<void *, std::string> &table, char prefix) {
  FakeState &s = fake();
  int id = s.nextId++;
  void *handle = reinterpret_cast<void *>(static_cast<uintptr_t>(0x1000 + id));
  // Names count per kind over the run, so that a destroyed s1 is not reused.
  table[handle] = prefix + std::to_string(++s.counters[prefix]);
  return handle;
}

CUresult fInit(unsigned) { return enter("cuInit", ""); }
CUresult fDeviceGet(CUdevice *dev, int ordinal) {
  CUresult r = enter("cuDeviceGet", std::to_string(ordinal));
  if (!r)
    *dev = ordinal;
  return r;
}
CUresult fRetain(CUcontext *ctx, CUdevice dev) {
  CUresult r = enter("cuDevicePrimaryCtxRetain", std::to_string(dev));
  if (!r) {
    *ctx = reinterpret_cast<CUcontext>(static_cast<uintptr_t>(0x100 + dev));
    ++fake().retainedContexts;
  }
  return r;
}
CUresult fRelease(CUdevice dev) {
  CUresult r = enter("cuDevicePrimaryCtxRelease", std::to_string(dev));
  if (!r)
    --fake().retainedContexts;
  return r;
}
CUresult fPush(CUcontext ctx) {
  CUresult r = enter("cuCtxPushCurrent", "");
  if (!r) {
    ++fake().contextDepth;
    fake().contexts.push_back(ctx);
  }
  return r;
}
CUresult fPop(CUcontext *) {
  CUresult r = enter("cuCtxPopCurrent", "");
  if (!r) {
    --fake().contextDepth;
    if (!fake().contexts.empty())
      fake().contexts.pop_back();
  }
  return r;
}
CUresult fModuleLoad(CUmodule *m, const void *) {
  CUresult r = enter("cuModuleLoadData", "");
  if (!r) {
    *m = static_cast<CUmodule>(newHandle(fake().modules, 'm'));
    fake().moduleContext[*m] = currentContext();
  }
  return r;
}
CUresult fModuleLoadEx(CUmodule *m, const void *, unsigned, CUjit_option *,
                       void **) {
  CUresult r = enter("cuModuleLoadDataEx", "");
  if (!r) {
    *m = static_cast<CUmodule>(newHandle(fake().modules, 'm'));
    fake().moduleContext[*m] = currentContext();
  }
  return r;
}
CUresult fModuleUnload(CUmodule m) {
  CUresult r = enter("cuModuleUnload", nameOf(m));
  if (!r)
    fake().modules.erase(m);
  return r;
}
CUresult fGetFunction(CUfunction *fn, CUmodule m, const char *name) {
  CUresult r = enter("cuModuleGetFunction", nameOf(m) + ", " + name);
  if (!r) {
    *fn = static_cast<CUfunction>(newHandle(fake().functions, 'f'));
    fake().functionModule[*fn] = m;
  }
  return r;
}
CUresult fLaunch(CUfunction fn, unsigned gx, unsigned gy, unsigned gz,
                 unsigned bx, unsigned by, unsigned bz, unsigned smem,
                 CUstream stream, void **, void **) {
  CUresult context = checkContext(fn);
  CUresult r = enter(
      "cuLaunchKernel",
      nameOf(fn) + ", grid " + std::to_string(gx) + "x" + std::to_string(gy) +
          "x" + std::to_string(gz) + ", block " + std::to_string(bx) + "x" +
          std::to_string(by) + "x" + std::to_string(bz) + ", smem " +
          std::to_string(smem) + ", " + nameOf(stream));
  if (r || !context)
    return r;
  fake().log.back() += " -> " + std::to_string(context);
  return context;
}
CUresult fLaunchEx(const CUlaunchConfig *config, CUfunction fn, void **,
                   void **) {
  const CUlaunchAttribute &a = config->attrs[0];
  CUresult context = checkContext(fn);
  CUresult r =
      enter("cuLaunchKernelEx", nameOf(fn) + ", cluster " +
                                    std::to_string(a.value.clusterDim.x) + "x" +
                                    std::to_string(a.value.clusterDim.y) + "x" +
                                    std::to_string(a.value.clusterDim.z) +
                                    ", " + nameOf(config->hStream));
  if (r || !context)
    return r;
  fake().log.back() += " -> " + std::to_string(context);
  return context;
}
CUresult fStreamCreate(CUstream *stream, unsigned flags) {
  CUresult r =
      enter("cuStreamCreate",
            flags == CU_STREAM_NON_BLOCKING ? "non-blocking" : "blocking");
  if (!r)
    *stream = static_cast<CUstream>(newHandle(fake().streams, 's'));
  return r;
}
CUresult fStreamDestroy(CUstream stream) {
  CUresult r = enter("cuStreamDestroy", nameOf(stream));
  if (!r)
    fake().streams.erase(stream);
  return r;
}
CUresult fStreamSync(CUstream stream) {
  return enter("cuStreamSynchronize", nameOf(stream));
}
CUresult fStreamWait(CUstream stream, CUevent event, unsigned) {
  return enter("cuStreamWaitEvent", nameOf(stream) + ", " + nameOf(event));
}
CUresult fEventCreate(CUevent *event, unsigned flags) {
  CUresult r =
      enter("cuEventCreate",
            flags == CU_EVENT_DISABLE_TIMING ? "disable-timing" : "timing");
  if (!r)
    *event = static_cast<CUevent>(newHandle(fake().events, 'e'));
  return r;
}
CUresult fEventDestroy(CUevent event) {
  CUresult r = enter("cuEventDestroy", nameOf(event));
  if (!r)
    fake().events.erase(event);
  return r;
}
CUresult fEventRecord(CUevent event, CUstream stream) {
  return enter("cuEventRecord", nameOf(event) + ", " + nameOf(stream));
}
CUresult fEventSync(CUevent event) {
  return enter("cuEventSynchronize", nameOf(event));
}
CUdeviceptr newDevicePtr() {
  FakeState &s = fake();
  CUdeviceptr ptr = 0xd0000000ull + 0x10000ull * s.nextId++;
  s.devicePtrs[ptr] = "d" + std::to_string(++s.counters['d']);
  return ptr;
}
CUresult fMemAllocAsync(CUdeviceptr *ptr, size_t bytes, CUstream stream) {
  CUresult r =
      enter("cuMemAllocAsync", std::to_string(bytes) + ", " + nameOf(stream));
  if (!r) {
    *ptr = newDevicePtr();
    fake().log.back() += " = " + nameOfDevice(*ptr);
  }
  return r;
}
CUresult fMemAllocManaged(CUdeviceptr *ptr, size_t bytes, unsigned) {
  CUresult r = enter("cuMemAllocManaged", std::to_string(bytes));
  if (!r) {
    *ptr = newDevicePtr();
    fake().log.back() += " = " + nameOfDevice(*ptr);
  }
  return r;
}
CUresult fMemFreeAsync(CUdeviceptr ptr, CUstream stream) {
  CUresult r =
      enter("cuMemFreeAsync", nameOfDevice(ptr) + ", " + nameOf(stream));
  if (!r)
    fake().devicePtrs.erase(ptr);
  return r;
}
CUresult fMemFree(CUdeviceptr ptr) {
  CUresult r = enter("cuMemFree", nameOfDevice(ptr));
  if (!r)
    fake().devicePtrs.erase(ptr);
  return r;
}
std::string ptrName(const void *p) {
  std::string n = nameOfDevice(reinterpret_cast<CUdeviceptr>(p));
  return n == "?" ? nameOf(p) : n;
}
CUresult fMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                      CUstream stream) {
  return enter("cuMemcpyAsync", ptrName(reinterpret_cast<void *>(dst)) + ", " +
                                    ptrName(reinterpret_cast<void *>(src)) +
                                    ", " + std::to_string(bytes) + ", " +
                                    nameOf(stream));
}
CUresult fMemcpyDtoH(void *dst, CUdeviceptr src, size_t bytes,
                     CUstream stream) {
  return enter("cuMemcpyDtoHAsync", nameOf(dst) + ", " + nameOfDevice(src) +
                                        ", " + std::to_string(bytes) + ", " +
                                        nameOf(stream));
}
CUresult fMemcpyHtoD(CUdeviceptr dst, const void *src, size_t bytes,
                     CUstream stream) {
  return enter("cuMemcpyHtoDAsync", nameOfDevice(dst) + ", " + nameOf(src) +
                                        ", " + std::to_string(bytes) + ", " +
                                        nameOf(stream));
}
CUresult fMemsetD32(CUdeviceptr dst, unsigned value, size_t count,
                    CUstream stream) {
  return enter("cuMemsetD32Async",
               nameOfDevice(dst) + ", " + std::to_string(value) + ", " +
                   std::to_string(count) + ", " + nameOf(stream));
}
CUresult fMemsetD16(CUdeviceptr dst, unsigned short value, size_t count,
                    CUstream stream) {
  return enter("cuMemsetD16Async",
               nameOfDevice(dst) + ", " + std::to_string(value) + ", " +
                   std::to_string(count) + ", " + nameOf(stream));
}
CUresult fHostAlloc(void **ptr, size_t bytes, unsigned flags) {
  CUresult r =
      enter("cuMemHostAlloc",
            std::to_string(bytes) +
                (flags & CU_MEMHOSTALLOC_PORTABLE ? ", portable" : ""));
  if (!r) {
    *ptr = newHandle(fake().hostBuffers, 'h');
    fake().log.back() += " = " + nameOf(*ptr);
  }
  return r;
}
CUresult fFreeHost(void *ptr) {
  CUresult r = enter("cuMemFreeHost", nameOf(ptr));
  if (!r)
    fake().hostBuffers.erase(ptr);
  return r;
}
CUresult fHostRegister(void *, size_t bytes, unsigned) {
  return enter("cuMemHostRegister", std::to_string(bytes));
}
CUresult fHostUnregister(void *) { return enter("cuMemHostUnregister", ""); }
CUresult fMemGetInfo(size_t *freeBytes, size_t *totalBytes) {
  CUresult r = enter("cuMemGetInfo", "");
  if (!r) {
    *freeBytes = 1ull << 30;
    *totalBytes = 1ull << 31;
  }
  return r;
}

} // namespace

namespace joint::cuda::test {

const DriverApi &fakeDriver() {
  static const DriverApi api = {
      fInit,           fDeviceGet,
      fRetain,         fRelease,
      fPush,           fPop,
      fModuleLoad,     fModuleLoadEx,
      fModuleUnload,   fGetFunction,
      fLaunch,         fLaunchEx,
      fStreamCreate,   fStreamDestroy,
      fStreamSync,     fStreamWait,
      fEventCreate,    fEventDestroy,
      fEventRecord,    fEventSync,
      fMemAllocAsync,  fMemAllocManaged,
      fMemFreeAsync,   fMemFree,
      fMemcpyAsync,    fMemcpyDtoH,
      fMemcpyHtoD,     fMemsetD32,
      fMemsetD16,      fHostAlloc,
      fFreeHost,       fHostRegister,
      fHostUnregister, fMemGetInfo,
  };
  return api;
}

} // namespace joint::cuda::test

//===- Runtime.cpp - Host runtime of the CUDA lowering --------------------===//
//
// Implements `Runtime`: primary-context scopes, the mgpu* semantics over one
// compute stream per device, stream-ordered allocation with live/peak byte
// counters, and the `ao` transfer protocol of torch's activation offloading
// (transfer stream waits on the compute stream, copies, records an event;
// the compute stream waits on that event on the device). Every driver result
// goes through `check`, which records the first failure with its context.
//
//===----------------------------------------------------------------------===//

#include "Runtime.h"
#include "EmulatedDriver.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>

using namespace joint::cuda;

namespace joint::cuda {

const char *resultName(int result) {
  switch (result) {
  case CUDA_SUCCESS:
    return "CUDA_SUCCESS";
  case CUDA_ERROR_INVALID_VALUE:
    return "CUDA_ERROR_INVALID_VALUE";
  case CUDA_ERROR_OUT_OF_MEMORY:
    return "CUDA_ERROR_OUT_OF_MEMORY";
  case CUDA_ERROR_NOT_INITIALIZED:
    return "CUDA_ERROR_NOT_INITIALIZED";
  case CUDA_ERROR_DEINITIALIZED:
    return "CUDA_ERROR_DEINITIALIZED";
  case CUDA_ERROR_STUB_LIBRARY:
    return "CUDA_ERROR_STUB_LIBRARY";
  case CUDA_ERROR_NO_DEVICE:
    return "CUDA_ERROR_NO_DEVICE";
  case CUDA_ERROR_INVALID_DEVICE:
    return "CUDA_ERROR_INVALID_DEVICE";
  case CUDA_ERROR_INVALID_IMAGE:
    return "CUDA_ERROR_INVALID_IMAGE";
  case CUDA_ERROR_INVALID_CONTEXT:
    return "CUDA_ERROR_INVALID_CONTEXT";
  case CUDA_ERROR_NO_BINARY_FOR_GPU:
    return "CUDA_ERROR_NO_BINARY_FOR_GPU";
  case CUDA_ERROR_INVALID_PTX:
    return "CUDA_ERROR_INVALID_PTX";
  case CUDA_ERROR_NOT_FOUND:
    return "CUDA_ERROR_NOT_FOUND";
  case CUDA_ERROR_INVALID_HANDLE:
    return "CUDA_ERROR_INVALID_HANDLE";
  case CUDA_ERROR_NOT_READY:
    return "CUDA_ERROR_NOT_READY";
  case CUDA_ERROR_ILLEGAL_ADDRESS:
    return "CUDA_ERROR_ILLEGAL_ADDRESS";
  case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
  case CUDA_ERROR_LAUNCH_FAILED:
    return "CUDA_ERROR_LAUNCH_FAILED";
  case CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED:
    return "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED";
  case CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED:
    return "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED";
  case CUDA_ERROR_NOT_SUPPORTED:
    return "CUDA_ERROR_NOT_SUPPORTED";
  case CUDA_ERROR_UNKNOWN:
    return "CUDA_ERROR_UNKNOWN";
  }
  return "CUDA error";
}

} // namespace joint::cuda

Runtime::Runtime(const DriverApi &driver) : driver(driver), pinned(driver) {}

Runtime::~Runtime() { shutdown(); }

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

Runtime::ThreadErrors::~ThreadErrors() {
  if (!orphans || errors.count == 0)
    return;
  std::lock_guard<std::mutex> lock(orphans->mutex);
  Errors &o = orphans->errors;
  o.count += errors.count;
  if (o.status == 0 && errors.status != 0) {
    o.status = errors.status;
    o.message = std::move(errors.message);
  }
}

int Runtime::status() {
  const Errors &own = errors.mine().errors;
  if (own.status != 0)
    return own.status;
  std::lock_guard<std::mutex> lock(orphans->mutex);
  return orphans->errors.status;
}

const std::string &Runtime::lastError() {
  const Errors &own = errors.mine().errors;
  if (own.status != 0)
    return own.message;
  // A message handed over stays until a clear; "" is never written to.
  static const std::string none;
  std::lock_guard<std::mutex> lock(orphans->mutex);
  return orphans->errors.status ? orphans->errors.message : none;
}

uint64_t Runtime::errorCount() {
  uint64_t count = errors.mine().errors.count;
  std::lock_guard<std::mutex> lock(orphans->mutex);
  return count + orphans->errors.count;
}

void Runtime::clearError() {
  errors.mine().errors = Errors();
  std::lock_guard<std::mutex> lock(orphans->mutex);
  orphans->errors = Errors();
}

void Runtime::recordError(int status, const char *entry,
                          const std::string &call, const std::string &detail) {
  std::string message = std::string(entry) + ": " + call;
  if (status > 0)
    message += " failed: " + std::string(resultName(status)) + " (" +
               std::to_string(status) + ")";
  message += detail;
  std::string current = node;
  if (!current.empty())
    message += ", node '" + current + "'";
  std::fprintf(stderr, "joint-cuda-runtime: error: %s\n", message.c_str());
  Errors &own = errors.mine().errors;
  ++own.count;
  if (own.status != 0)
    return;
  own.status = status;
  own.message = std::move(message);
}

void Runtime::setNode(const char *name) {
  node = std::string(name ? name : "");
  if (driver.annotate)
    driver.annotate(name ? name : "");
}

bool Runtime::check(CUresult result, const char *entry, const char *call,
                    const std::string &detail) {
  std::vector<std::pair<int, std::string>> findings;
  if (driver.takeFinding) {
    int status = 0;
    std::string message;
    while (driver.takeFinding(&status, &message))
      findings.emplace_back(status, std::move(message));
  }
  // The driver explains a failed call with its last finding.
  std::string why;
  if (result != CUDA_SUCCESS && !findings.empty() &&
      findings.back().first == static_cast<int>(result)) {
    why = ": " + findings.back().second;
    findings.pop_back();
  }
  for (auto &[status, message] : findings)
    recordError(status ? status : kStatusDeviceCheck, entry, call,
                ": " + message + detail);
  if (result == CUDA_SUCCESS)
    return true;
  recordError(static_cast<int>(result), entry, call, detail + why);
  return false;
}

//===----------------------------------------------------------------------===//
// Contexts and streams
//===----------------------------------------------------------------------===//

Runtime::Device *Runtime::device(const char *entry) {
  auto it = devices.find(currentDevice);
  if (it != devices.end())
    return &it->second;
  if (!initialized) {
    if (!check(driver.init(0), entry, "cuInit"))
      return nullptr;
    initialized = true;
  }
  Device dev;
  std::string ordinal = ", device " + std::to_string(currentDevice);
  if (!check(driver.deviceGet(&dev.handle, currentDevice), entry, "cuDeviceGet",
             ordinal))
    return nullptr;
  // The primary context is the one torch uses, so torch tensors and streams
  // are valid here; retaining it does not make it current.
  if (!check(driver.primaryCtxRetain(&dev.context, dev.handle), entry,
             "cuDevicePrimaryCtxRetain", ordinal))
    return nullptr;
  return &devices.emplace(currentDevice, dev).first->second;
}

Runtime::ContextScope::ContextScope(Runtime &rt, const char *entry)
    : rt(rt), entry(entry) {
  if (rt.pushedDevice == rt.currentDevice) {
    active = true;
    return;
  }
  Device *dev = rt.device(entry);
  if (!dev)
    return;
  if (!rt.check(rt.driver.ctxPushCurrent(dev->context), entry,
                "cuCtxPushCurrent"))
    return;
  active = owns = true;
  outerDevice = rt.pushedDevice;
  rt.pushedDevice = int(rt.currentDevice);
}

Runtime::ContextScope::~ContextScope() {
  if (!owns)
    return;
  rt.pushedDevice = outerDevice;
  rt.check(rt.driver.ctxPopCurrent(nullptr), entry, "cuCtxPopCurrent");
}

CUstream Runtime::computeStream() {
  ContextScope scope(*this, "joint_runtime_compute_stream");
  if (!scope)
    return nullptr;
  Device &dev = devices[currentDevice];
  if (dev.compute)
    return dev.compute;
  CUstream stream = nullptr;
  if (!check(driver.streamCreate(&stream, CU_STREAM_NON_BLOCKING),
             "joint_runtime_compute_stream", "cuStreamCreate"))
    return nullptr;
  dev.compute = stream;
  dev.ownsCompute = true;
  return stream;
}

void Runtime::setComputeStream(CUstream stream) {
  ContextScope scope(*this, "joint_runtime_set_compute_stream");
  if (!scope)
    return;
  Device &dev = devices[currentDevice];
  if (dev.ownsCompute && dev.compute != stream)
    check(driver.streamDestroy(dev.compute), "joint_runtime_set_compute_stream",
          "cuStreamDestroy");
  dev.compute = stream;
  dev.ownsCompute = false;
}

CUstream Runtime::transferStream() {
  ContextScope scope(*this, "joint_runtime_transfer_stream");
  if (!scope)
    return nullptr;
  Device &dev = devices[currentDevice];
  if (dev.transfer)
    return dev.transfer;
  CUstream stream = nullptr;
  if (!check(driver.streamCreate(&stream, CU_STREAM_NON_BLOCKING),
             "joint_runtime_transfer_stream", "cuStreamCreate"))
    return nullptr;
  dev.transfer = stream;
  return stream;
}

CUstream Runtime::orCompute(CUstream stream) {
  return stream ? stream : computeStream();
}

int Runtime::synchronize() {
  ContextScope scope(*this, "joint_runtime_synchronize");
  if (!scope)
    return status();
  Device &dev = devices[currentDevice];
  CUstream streams[2] = {dev.compute, dev.transfer};
  const char *names[2] = {", compute stream", ", transfer stream"};
  for (int i = 0; i < 2; ++i) {
    if (!streams[i])
      continue;
    CUresult result;
    {
      Unlocked unlocked(*this);
      result = driver.streamSynchronize(streams[i]);
    }
    check(result, "joint_runtime_synchronize", "cuStreamSynchronize", names[i]);
  }
  return status();
}

int Runtime::memInfo(uint64_t *freeBytes, uint64_t *totalBytes) {
  *freeBytes = *totalBytes = 0;
  ContextScope scope(*this, "joint_runtime_mem_info");
  if (!scope)
    return status();
  size_t freeMem = 0, totalMem = 0;
  if (!check(driver.memGetInfo(&freeMem, &totalMem), "joint_runtime_mem_info",
             "cuMemGetInfo"))
    return status();
  *freeBytes = freeMem;
  *totalBytes = totalMem;
  return kStatusOk;
}

//===----------------------------------------------------------------------===//
// mgpu* entry points
//===----------------------------------------------------------------------===//

CUmodule Runtime::loadedModule(Module &m, const char *entry,
                               const std::string &detail) {
  auto it = m.loaded.find(currentDevice);
  if (it != m.loaded.end())
    return it->second;
  CUmodule module = nullptr;
  if (m.jit) {
    CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL};
    void *values[] = {
        reinterpret_cast<void *>(static_cast<intptr_t>(m.optLevel))};
    if (!check(driver.moduleLoadDataEx(&module, m.image, 1, options, values),
               entry, "cuModuleLoadDataEx", detail))
      return nullptr;
  } else if (!check(driver.moduleLoadData(&module, m.image), entry,
                    "cuModuleLoadData", detail)) {
    return nullptr;
  }
  m.loaded[currentDevice] = module;
  return module;
}

CUfunction Runtime::resolved(Function &f, const char *entry,
                             const std::string &detail) {
  auto it = f.resolved.find(currentDevice);
  if (it != f.resolved.end())
    return it->second;
  CUmodule module = loadedModule(*f.module, entry, detail);
  if (!module)
    return nullptr;
  CUfunction fn = nullptr;
  if (!check(driver.moduleGetFunction(&fn, module, f.name.c_str()), entry,
             "cuModuleGetFunction", detail))
    return nullptr;
  f.resolved[currentDevice] = fn;
  return fn;
}

CUmodule Runtime::newModule(const void *data, bool jit, int optLevel,
                            const char *entry) {
  ContextScope scope(*this, entry);
  if (!scope)
    return nullptr;
  auto m = std::make_unique<Module>();
  m->image = data;
  m->jit = jit;
  m->optLevel = optLevel;
  // Loaded on the loading thread's device now, so a bad image fails here.
  if (!loadedModule(*m, entry, ""))
    return nullptr;
  auto handle = reinterpret_cast<CUmodule>(m.get());
  modules.emplace(handle, std::move(m));
  return handle;
}

CUmodule Runtime::moduleLoad(const void *data, const char *entry) {
  return newModule(data, /*jit=*/false, 0, entry);
}

CUmodule Runtime::moduleLoadJIT(const void *data, int optLevel) {
  return newModule(data, /*jit=*/true, optLevel, "mgpuModuleLoadJIT");
}

void Runtime::moduleUnload(CUmodule module) {
  const char *entry = "mgpuModuleUnload";
  ContextScope scope(*this, entry);
  if (!scope || !module)
    return;
  auto it = modules.find(module);
  if (it == modules.end()) {
    recordError(kStatusInvalidArgument, entry, "unknown module handle");
    return;
  }
  Module &m = *it->second;
  for (auto &[name, fn] : m.functions)
    functions.erase(reinterpret_cast<CUfunction>(fn.get()));
  // Each device's module is unloaded in that device's context (nested
  // scopes push nothing for the current device).
  int saved = currentDevice;
  for (auto &[ordinal, loaded] : m.loaded) {
    currentDevice = ordinal;
    ContextScope inner(*this, entry);
    if (inner)
      check(driver.moduleUnload(loaded), entry, "cuModuleUnload",
            m.loaded.size() > 1 ? ", device " + std::to_string(ordinal) : "");
  }
  currentDevice = saved;
  modules.erase(it);
}

CUfunction Runtime::moduleGetFunction(CUmodule module, const char *name) {
  const char *entry = "mgpuModuleGetFunction";
  ContextScope scope(*this, entry);
  if (!scope)
    return nullptr;
  std::string kernel = name ? name : "";
  std::string detail = ", kernel '" + kernel + "'";
  auto it = modules.find(module);
  if (it == modules.end()) {
    recordError(kStatusInvalidArgument, entry, "unknown module handle", detail);
    return nullptr;
  }
  Module &m = *it->second;
  auto found = m.functions.find(kernel);
  if (found != m.functions.end()) {
    // Resolved on this device now, as for a new function.
    if (!resolved(*found->second, entry, detail))
      return nullptr;
    return reinterpret_cast<CUfunction>(found->second.get());
  }
  auto f = std::make_unique<Function>();
  f->module = &m;
  f->name = kernel;
  if (!resolved(*f, entry, detail))
    return nullptr;
  auto handle = reinterpret_cast<CUfunction>(f.get());
  functions[handle] = f.get();
  m.functions.emplace(kernel, std::move(f));
  return handle;
}

void Runtime::launchKernel(CUfunction fn, const intptr_t *cluster,
                           const intptr_t grid[3], const intptr_t block[3],
                           int32_t smemBytes, CUstream stream, void **params,
                           void **extra) {
  const char *entry = cluster ? "mgpuLaunchClusterKernel" : "mgpuLaunchKernel";
  ContextScope scope(*this, entry);
  if (!scope)
    return;
  auto known = functions.find(fn);
  if (known == functions.end()) {
    recordError(kStatusInvalidArgument, entry, "unknown function handle",
                ", kernel '<unknown>'");
    return;
  }
  Function &function = *known->second;
  std::string detail = ", kernel '" + function.name + "'";
  auto inRange = [](intptr_t v) { return v >= 1 && v <= INT64_C(0xffffffff); };
  for (int i = 0; i < 3; ++i) {
    if (!inRange(grid[i]) || !inRange(block[i]) ||
        (cluster && !inRange(cluster[i]))) {
      recordError(kStatusInvalidArgument, entry,
                  "launch dimensions out of range [1, 2^32)", detail);
      return;
    }
  }
  if (smemBytes < 0) {
    recordError(kStatusInvalidArgument, entry, "negative shared memory size",
                detail);
    return;
  }
  stream = orCompute(stream);
  if (!stream)
    return;
  // This device's function: its module is loaded into this device's
  // context on the first launch here.
  fn = resolved(function, entry,
                detail + ", device " + std::to_string(currentDevice));
  if (!fn)
    return;
  if (!cluster) {
    check(driver.launchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1],
                              block[2], smemBytes, stream, params, extra),
          entry, "cuLaunchKernel", detail);
    return;
  }
  CUlaunchAttribute attr = {};
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = cluster[0];
  attr.value.clusterDim.y = cluster[1];
  attr.value.clusterDim.z = cluster[2];
  CUlaunchConfig config = {};
  config.gridDimX = grid[0];
  config.gridDimY = grid[1];
  config.gridDimZ = grid[2];
  config.blockDimX = block[0];
  config.blockDimY = block[1];
  config.blockDimZ = block[2];
  config.sharedMemBytes = smemBytes;
  config.hStream = stream;
  config.attrs = &attr;
  config.numAttrs = 1;
  check(driver.launchKernelEx(&config, fn, params, extra), entry,
        "cuLaunchKernelEx", detail);
}

CUstream Runtime::streamCreate() {
  // The generated code's streams all alias the compute stream; see Runtime.h.
  ContextScope scope(*this, "mgpuStreamCreate");
  if (!scope)
    return nullptr;
  return computeStream();
}

void Runtime::streamDestroy(CUstream stream) {
  ContextScope scope(*this, "mgpuStreamDestroy");
  if (!scope || !stream)
    return;
  for (auto &[ordinal, dev] : devices)
    if (dev.compute == stream || dev.transfer == stream)
      return; // runtime-owned or borrowed: kept until shutdown
  check(driver.streamDestroy(stream), "mgpuStreamDestroy", "cuStreamDestroy");
}

void Runtime::streamSynchronize(CUstream stream) {
  ContextScope scope(*this, "mgpuStreamSynchronize");
  if (!scope)
    return;
  stream = orCompute(stream);
  if (!stream)
    return;
  CUresult result;
  {
    Unlocked unlocked(*this);
    result = driver.streamSynchronize(stream);
  }
  check(result, "mgpuStreamSynchronize", "cuStreamSynchronize");
}

void Runtime::streamWaitEvent(CUstream stream, CUevent event) {
  ContextScope scope(*this, "mgpuStreamWaitEvent");
  if (!scope)
    return;
  stream = orCompute(stream);
  if (!stream)
    return;
  check(driver.streamWaitEvent(stream, event, CU_EVENT_WAIT_DEFAULT),
        "mgpuStreamWaitEvent", "cuStreamWaitEvent");
}

CUevent Runtime::eventCreate() {
  ContextScope scope(*this, "mgpuEventCreate");
  if (!scope)
    return nullptr;
  CUevent event = nullptr;
  if (!check(driver.eventCreate(&event, CU_EVENT_DISABLE_TIMING),
             "mgpuEventCreate", "cuEventCreate"))
    return nullptr;
  return event;
}

void Runtime::eventDestroy(CUevent event) {
  ContextScope scope(*this, "mgpuEventDestroy");
  if (!scope)
    return;
  check(driver.eventDestroy(event), "mgpuEventDestroy", "cuEventDestroy");
}

void Runtime::eventRecord(CUevent event, CUstream stream) {
  ContextScope scope(*this, "mgpuEventRecord");
  if (!scope)
    return;
  stream = orCompute(stream);
  if (!stream)
    return;
  check(driver.eventRecord(event, stream), "mgpuEventRecord", "cuEventRecord");
}

void Runtime::eventSynchronize(CUevent event) {
  ContextScope scope(*this, "mgpuEventSynchronize");
  if (!scope)
    return;
  CUresult result;
  {
    Unlocked unlocked(*this);
    result = driver.eventSynchronize(event);
  }
  check(result, "mgpuEventSynchronize", "cuEventSynchronize");
}

void *Runtime::memAlloc(uint64_t bytes, CUstream stream, bool hostShared) {
  if (bytes == 0)
    return nullptr;
  ContextScope scope(*this, "mgpuMemAlloc");
  if (!scope)
    return nullptr;
  std::string detail = ", " + std::to_string(bytes) + " bytes";
  CUdeviceptr ptr = 0;
  if (hostShared) {
    if (!check(driver.memAllocManaged(&ptr, bytes, CU_MEM_ATTACH_GLOBAL),
               "mgpuMemAlloc", "cuMemAllocManaged", detail))
      return nullptr;
  } else {
    stream = orCompute(stream);
    if (!stream)
      return nullptr;
    if (!check(driver.memAllocAsync(&ptr, bytes, stream), "mgpuMemAlloc",
               "cuMemAllocAsync", detail))
      return nullptr;
  }
  allocations[ptr] = hostShared ? (bytes | (UINT64_C(1) << 63)) : bytes;
  memory.liveBytes += bytes;
  memory.peakBytes = std::max(memory.peakBytes, memory.liveBytes);
  ++memory.allocations;
  return reinterpret_cast<void *>(ptr);
}

void Runtime::memFree(void *ptr, CUstream stream) {
  if (!ptr)
    return;
  ContextScope scope(*this, "mgpuMemFree");
  if (!scope)
    return;
  auto it = allocations.find(reinterpret_cast<CUdeviceptr>(ptr));
  if (it == allocations.end()) {
    char text[64];
    std::snprintf(text, sizeof(text), "pointer %p", ptr);
    recordError(kStatusInvalidArgument, "mgpuMemFree", text,
                " was not allocated by this runtime");
    return;
  }
  bool managed = it->second >> 63;
  uint64_t bytes = it->second & ~(UINT64_C(1) << 63);
  CUdeviceptr dptr = it->first;
  allocations.erase(it);
  memory.liveBytes -= bytes;
  ++memory.frees;
  std::string detail = ", " + std::to_string(bytes) + " bytes";
  if (managed) {
    check(driver.memFree(dptr), "mgpuMemFree", "cuMemFree", detail);
    return;
  }
  stream = orCompute(stream);
  if (!stream)
    return;
  check(driver.memFreeAsync(dptr, stream), "mgpuMemFree", "cuMemFreeAsync",
        detail);
}

void Runtime::memcpy(void *dst, const void *src, size_t bytes,
                     CUstream stream) {
  ContextScope scope(*this, "mgpuMemcpy");
  if (!scope)
    return;
  stream = orCompute(stream);
  if (!stream)
    return;
  // Unified addressing: the driver infers the direction from the pointers.
  check(driver.memcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                           reinterpret_cast<CUdeviceptr>(src), bytes, stream),
        "mgpuMemcpy", "cuMemcpyAsync", ", " + std::to_string(bytes) + " bytes");
}

void Runtime::memset32(void *dst, uint32_t value, size_t count,
                       CUstream stream) {
  ContextScope scope(*this, "mgpuMemset32");
  if (!scope)
    return;
  stream = orCompute(stream);
  if (!stream)
    return;
  check(driver.memsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                              stream),
        "mgpuMemset32", "cuMemsetD32Async");
}

void Runtime::memset16(void *dst, uint16_t value, size_t count,
                       CUstream stream) {
  ContextScope scope(*this, "mgpuMemset16");
  if (!scope)
    return;
  stream = orCompute(stream);
  if (!stream)
    return;
  check(driver.memsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                              stream),
        "mgpuMemset16", "cuMemsetD16Async");
}

void Runtime::hostRegister(void *ptr, uint64_t bytes) {
  ContextScope scope(*this, "mgpuMemHostRegister");
  if (!scope)
    return;
  check(driver.memHostRegister(ptr, bytes, CU_MEMHOSTREGISTER_PORTABLE),
        "mgpuMemHostRegister", "cuMemHostRegister",
        ", " + std::to_string(bytes) + " bytes");
}

void Runtime::hostUnregister(void *ptr) {
  ContextScope scope(*this, "mgpuMemHostUnregister");
  if (!scope)
    return;
  check(driver.memHostUnregister(ptr), "mgpuMemHostUnregister",
        "cuMemHostUnregister");
}

//===----------------------------------------------------------------------===//
// ao transfers
//===----------------------------------------------------------------------===//

CUevent Runtime::acquireEvent(const char *entry, const std::string &detail) {
  // Re-recording a pooled event is safe: waits already enqueued on it keep
  // the state captured when they were enqueued.
  std::vector<CUevent> &pool = devices[currentDevice].freeEvents;
  if (!pool.empty()) {
    CUevent event = pool.back();
    pool.pop_back();
    return event;
  }
  CUevent event = nullptr;
  if (!check(driver.eventCreate(&event, CU_EVENT_DISABLE_TIMING), entry,
             "cuEventCreate", detail))
    return nullptr;
  return event;
}

void Runtime::releaseEvent(int ordinal, CUevent event) {
  if (event)
    devices[ordinal].freeEvents.push_back(event);
}

size_t Runtime::pooledEvents() const {
  size_t count = 0;
  for (const auto &[ordinal, dev] : devices)
    count += dev.freeEvents.size();
  return count;
}

Transfer *Runtime::offload(const void *src, uint64_t bytes,
                           const char *nodeName) {
  const char *entry = "joint_ao_offload";
  setNode(nodeName);
  std::string detail = ", " + std::to_string(bytes) + " bytes";
  if (!src || bytes == 0) {
    recordError(kStatusInvalidArgument, entry, "null source or empty transfer",
                detail);
    return nullptr;
  }
  ContextScope scope(*this, entry);
  if (!scope)
    return nullptr;
  CUstream compute = computeStream();
  CUstream transfer = transferStream();
  if (!compute || !transfer)
    return nullptr;
  void *host = nullptr;
  if (!check(pinned.acquire(bytes, &host), entry, "cuMemHostAlloc", detail))
    return nullptr;
  CUevent produced = acquireEvent(entry, detail);
  CUevent copied = produced ? acquireEvent(entry, detail) : nullptr;
  // The source is complete once the compute stream reaches this point; the
  // copy is ordered after it on the transfer stream.
  bool ok =
      copied &&
      transferAfterCompute(produced, compute, transfer, entry, detail) &&
      check(driver.memcpyDtoHAsync(host, reinterpret_cast<CUdeviceptr>(src),
                                   bytes, transfer),
            entry, "cuMemcpyDtoHAsync", detail) &&
      check(driver.eventRecord(copied, transfer), entry, "cuEventRecord",
            detail + ", transfer stream");
  releaseEvent(currentDevice, produced);
  if (!ok) {
    releaseEvent(currentDevice, copied);
    pinned.release(host);
    return nullptr;
  }
  auto owned = std::make_unique<Transfer>();
  owned->device = currentDevice;
  owned->bytes = bytes;
  owned->host = host;
  owned->event = copied;
  owned->node = nodeName ? nodeName : "";
  Transfer *t = owned.get();
  transfers.emplace(t, std::move(owned));
  return t;
}

/// Fault injection for the emulated device's negative tests:
/// JOINT_EMU_DROP_WAIT=forward:NODE (backward:NODE) makes the compute stream
/// skip its wait on the offload (reload) copy of the transfer whose
/// `joint_ao_offload` node is NODE (the lowering names it `x_offload`), as a
/// lowering that lost an `ao.wait_tensor` would; the race checker must report
/// what follows. Read once; ignored on a real device.
static bool dropsWait(const DriverApi &driver, const Transfer &t) {
  static const std::string spec = [] {
    const char *v = std::getenv("JOINT_EMU_DROP_WAIT");
    return std::string(v ? v : "");
  }();
  if (spec.empty() || !isEmulated(driver))
    return false;
  std::string want = (t.reloaded ? "backward:" : "forward:") + t.node;
  return spec == want;
}

int Runtime::wait(Transfer *t) {
  const char *entry = "joint_ao_wait";
  if (!t || !transfers.count(t)) {
    recordError(kStatusInvalidArgument, entry, "unknown transfer handle");
    return kStatusInvalidArgument;
  }
  if (dropsWait(driver, *t))
    return kStatusOk;
  setNode(t->node.c_str());
  int saved = currentDevice;
  currentDevice = t->device;
  {
    ContextScope scope(*this, entry);
    CUstream compute = scope ? computeStream() : nullptr;
    if (compute &&
        !check(driver.streamWaitEvent(compute, t->event, CU_EVENT_WAIT_DEFAULT),
               entry, "cuStreamWaitEvent", ", compute stream")) {
      currentDevice = saved;
      return status();
    }
    if (!compute) {
      currentDevice = saved;
      return status() ? status() : kStatusInvalidArgument;
    }
  }
  currentDevice = saved;
  return kStatusOk;
}

void *Runtime::reload(Transfer *t, const char *nodeName) {
  const char *entry = "joint_ao_reload";
  if (!t || !transfers.count(t)) {
    recordError(kStatusInvalidArgument, entry, "unknown transfer handle");
    return nullptr;
  }
  setNode(nodeName);
  if (t->reloaded) {
    recordError(kStatusInvalidArgument, entry, "transfer already reloaded",
                ", " + std::to_string(t->bytes) + " bytes");
    return nullptr;
  }
  int saved = currentDevice;
  currentDevice = t->device;
  void *result = nullptr;
  {
    ContextScope scope(*this, entry);
    CUstream compute = scope ? computeStream() : nullptr;
    void *dst = compute ? memAlloc(t->bytes, compute, false) : nullptr;
    if (dst && copyBack(t, dst, entry) == kStatusOk)
      result = dst;
    else if (dst)
      memFree(dst, compute);
  }
  currentDevice = saved;
  return result;
}

int Runtime::reloadInto(Transfer *t, void *dst, const char *nodeName) {
  const char *entry = "joint_ao_reload_into";
  if (!t || !transfers.count(t)) {
    recordError(kStatusInvalidArgument, entry, "unknown transfer handle");
    return kStatusInvalidArgument;
  }
  setNode(nodeName);
  std::string detail = ", " + std::to_string(t->bytes) + " bytes";
  if (!dst || t->reloaded) {
    recordError(kStatusInvalidArgument, entry,
                dst ? "transfer already reloaded" : "null destination", detail);
    return kStatusInvalidArgument;
  }
  int saved = currentDevice;
  currentDevice = t->device;
  int result = kStatusInvalidArgument;
  {
    ContextScope scope(*this, entry);
    if (scope)
      result = copyBack(t, dst, entry);
  }
  currentDevice = saved;
  return result ? (status() ? status() : result) : kStatusOk;
}

bool Runtime::transferAfterCompute(CUevent event, CUstream compute,
                                   CUstream transfer, const char *entry,
                                   const std::string &detail) {
  return check(driver.eventRecord(event, compute), entry, "cuEventRecord",
               detail + ", compute stream") &&
         check(driver.streamWaitEvent(transfer, event, CU_EVENT_WAIT_DEFAULT),
               entry, "cuStreamWaitEvent", detail + ", transfer stream");
}

int Runtime::copyBack(Transfer *t, void *dst, const char *entry) {
  std::string detail = ", " + std::to_string(t->bytes) + " bytes";
  CUstream compute = computeStream();
  CUstream transfer = compute ? transferStream() : nullptr;
  CUevent allocated = transfer ? acquireEvent(entry, detail) : nullptr;
  // The destination is ordered on the compute stream (allocated there, or
  // last written there); the copy waits for that point.
  bool ok = allocated &&
            transferAfterCompute(allocated, compute, transfer, entry, detail) &&
            check(driver.memcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(dst),
                                         t->host, t->bytes, transfer),
                  entry, "cuMemcpyHtoDAsync", detail) &&
            check(driver.eventRecord(t->event, transfer), entry,
                  "cuEventRecord", detail + ", transfer stream");
  releaseEvent(currentDevice, allocated);
  if (!ok)
    return status() ? status() : kStatusInvalidArgument;
  // Later users of this pinned buffer are D2H copies on the same transfer
  // stream, so they are ordered after this H2D copy.
  pinned.release(t->host);
  t->host = nullptr;
  t->reloaded = true;
  return kStatusOk;
}

int Runtime::release(Transfer *t) {
  auto it = transfers.find(t);
  if (!t || it == transfers.end()) {
    recordError(kStatusInvalidArgument, "joint_ao_release",
                "unknown transfer handle");
    return kStatusInvalidArgument;
  }
  releaseEvent(t->device, t->event);
  if (t->host)
    pinned.release(t->host);
  transfers.erase(it);
  return kStatusOk;
}

//===----------------------------------------------------------------------===//
// Teardown
//===----------------------------------------------------------------------===//

int Runtime::shutdown() {
  const char *entry = "joint_runtime_shutdown";
  for (auto &[ptr, t] : transfers) {
    releaseEvent(t->device, t->event);
    if (t->host)
      pinned.release(t->host);
  }
  transfers.clear();
  // Pending copies and frees of every device finish before any memory or
  // stream goes away (pinned buffers are shared by all transfer streams).
  for (auto &[ordinal, dev] : devices) {
    if (!check(driver.ctxPushCurrent(dev.context), entry, "cuCtxPushCurrent"))
      continue;
    if (dev.compute)
      check(driver.streamSynchronize(dev.compute), entry, "cuStreamSynchronize",
            ", compute stream");
    if (dev.transfer)
      check(driver.streamSynchronize(dev.transfer), entry,
            "cuStreamSynchronize", ", transfer stream");
    check(driver.ctxPopCurrent(nullptr), entry, "cuCtxPopCurrent");
  }
  for (auto &[ordinal, dev] : devices) {
    if (!check(driver.ctxPushCurrent(dev.context), entry, "cuCtxPushCurrent"))
      continue;
    for (CUevent event : dev.freeEvents)
      check(driver.eventDestroy(event), entry, "cuEventDestroy");
    dev.freeEvents.clear();
    // Pinned buffers are portable: any context may free them.
    if (ordinal == devices.begin()->first)
      check(pinned.trim(), entry, "cuMemFreeHost");
    if (dev.transfer)
      check(driver.streamDestroy(dev.transfer), entry, "cuStreamDestroy");
    if (dev.compute && dev.ownsCompute)
      check(driver.streamDestroy(dev.compute), entry, "cuStreamDestroy");
    check(driver.ctxPopCurrent(nullptr), entry, "cuCtxPopCurrent");
  }
  for (auto &[ordinal, dev] : devices)
    check(driver.primaryCtxRelease(dev.handle), entry,
          "cuDevicePrimaryCtxRelease");
  devices.clear();
  return status();
}

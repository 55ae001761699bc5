//===- Runtime.h - Host runtime of the CUDA lowering ------------*- C++ -*-===//
//
// One `Runtime` owns what the lowered host code of a training step needs on
// the device: the retained primary context of each device (shared with torch),
// one compute stream and one transfer stream per device, stream-ordered device
// allocations with a live-byte high-water mark, modules and functions loaded
// per device behind runtime-owned handles, the pinned pool and the `ao`
// offload/reload transfers. Every failed driver call is recorded with the
// entry point, the driver call, the kernel and the node, and keeps the
// calling thread's status non-zero until it clears: nothing fails silently.
// The C ABI (CApi.cpp, joint_cuda_runtime.h) wraps one global instance;
// tests build instances over a fake `DriverApi`.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_RUNTIME_CUDA_RUNTIME_H
#define JOINT_RUNTIME_CUDA_RUNTIME_H

#include "Driver.h"
#include "PinnedPool.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace joint::cuda {

/// A value per thread, `initial` until a thread assigns its own: the
/// current device and node are per thread (as CUDA's current context is),
/// so N ranks can run as N threads of one process, thread r on device r.
template <typename T>
class PerThread {
public:
  explicit PerThread(T initial) : initial(std::move(initial)) {}
  operator T() const {
    auto &map = values();
    auto it = map.find(id);
    return it == map.end() ? initial : it->second;
  }
  PerThread &operator=(T value) {
    values()[id] = std::move(value);
    return *this;
  }
  /// This thread's own value, created from `initial` on first use.
  T &mine() {
    auto &map = values();
    auto it = map.find(id);
    if (it == map.end())
      it = map.emplace(id, initial).first;
    return it->second;
  }

private:
  /// This thread's values, by instance id (ids are never reused). Freed at
  /// the thread's exit; a call after that (e.g. a step library's
  /// destructor unloading its module at process exit) starts a fresh map.
  static std::unordered_map<uint64_t, T> &values() {
    static thread_local std::unordered_map<uint64_t, T> *map = nullptr;
    struct Cleanup {
      ~Cleanup() {
        delete map;
        map = nullptr;
      }
    };
    if (!map) {
      map = new std::unordered_map<uint64_t, T>();
      static thread_local Cleanup cleanup;
      (void)cleanup;
    }
    return *map;
  }
  static uint64_t nextId() {
    static std::atomic<uint64_t> next{0};
    return ++next;
  }

  T initial;
  uint64_t id = nextId();
};

/// Status codes that are not CUresults (driver failures keep their CUresult,
/// always positive).
enum RuntimeStatus : int {
  kStatusOk = 0,
  kStatusInvalidArgument = -1,   ///< misuse: unknown pointer, bad size, ...
  kStatusBlasFailure = -2,       ///< a cuBLAS call failed
  kStatusDnnFailure = -3,        ///< a cuDNN call failed
  kStatusDeviceCheck = -4,       ///< the emulated device found a race or a
                                 ///< use after free (the call itself ran)
  kStatusCollectiveFailure = -5, ///< an NCCL call failed or NCCL is missing
};

/// Device-memory counters in bytes, counted when the allocation or free is
/// enqueued (stream order), so they follow the step's memory model.
struct DeviceMemoryStats {
  uint64_t liveBytes = 0;
  uint64_t peakBytes = 0;
  uint64_t allocations = 0;
  uint64_t frees = 0;
};

/// One offloaded tensor: its pinned host copy and the event of its latest
/// transfer (the D2H after `offload`, the H2D after `reload`).
struct Transfer {
  int device = 0;
  uint64_t bytes = 0;
  void *host = nullptr;
  CUevent event = nullptr;
  std::string node;
  bool reloaded = false;
};

class Runtime {
public:
  explicit Runtime(const DriverApi &driver);
  ~Runtime();
  Runtime(const Runtime &) = delete;
  Runtime &operator=(const Runtime &) = delete;

  //===-- Errors ----------------------------------------------------------===//
  // The error state is per thread: a thread sees the failures of its own
  // calls, and its `clearError` clears only those, so rank threads do not
  // erase each other's failures. A thread that exits with an uncleared
  // failure hands it to the process (when its thread-local storage is
  // destroyed): every thread whose own state is clean sees it (as its status
  // and message) until some thread clears.

  /// First failure since the last `clearError` (0 when none): a CUresult or
  /// a `RuntimeStatus`.
  int status();
  /// Message of the first failure ("" when none), e.g. "mgpuLaunchKernel:
  /// cuLaunchKernel failed: CUDA_ERROR_STUB_LIBRARY (34), kernel 'k', node
  /// 'mm_3'". Valid until this thread's next `clearError`.
  const std::string &lastError();
  /// Failures recorded since the last `clearError` (this thread's and those
  /// handed over by exited threads).
  uint64_t errorCount();
  /// Clears this thread's failures and those handed over by exited threads.
  void clearError();
  /// Names the node whose host code runs now on the calling thread; it is
  /// reported with errors (and passed to a checking driver's `annotate`).
  void setNode(const char *name);
  /// Records a failure of `call` (status != 0) inside entry point `entry`.
  void recordError(int status, const char *entry, const std::string &call,
                   const std::string &detail = "");

  //===-- The mgpu* entry points of gpu-to-llvm ---------------------------===//
  /// Selects the calling thread's device (each thread has its own).
  void setDefaultDevice(int device) { currentDevice = device; }
  int defaultDevice() const { return currentDevice; }
  // Modules and functions are runtime-owned handles valid on every device:
  // the image is loaded into the calling thread's device at `moduleLoad`
  // (so a bad image fails there) and into another device's primary context
  // the first time a thread on that device launches one of its kernels;
  // functions are resolved per device likewise. The image must outlive the
  // module (the generated code's is a constant global).
  CUmodule moduleLoad(const void *data, const char *entry);
  CUmodule moduleLoadJIT(const void *data, int optLevel);
  /// Unloads the module from every device it was loaded on; null is a no-op.
  void moduleUnload(CUmodule module);
  /// The same handle for the same (module, name); resolved on the calling
  /// thread's device now, so an unknown kernel fails here.
  CUfunction moduleGetFunction(CUmodule module, const char *name);
  /// `cluster` is null for a plain launch. Dimensions must be in [1, 2^32).
  void launchKernel(CUfunction fn, const intptr_t *cluster,
                    const intptr_t grid[3], const intptr_t block[3],
                    int32_t smemBytes, CUstream stream, void **params,
                    void **extra);
  /// Every stream the generated code creates is the compute stream, so
  /// kernels, library shims and `ao` transfers share one order.
  CUstream streamCreate();
  void streamDestroy(CUstream stream);
  void streamSynchronize(CUstream stream);
  void streamWaitEvent(CUstream stream, CUevent event);
  CUevent eventCreate();
  void eventDestroy(CUevent event);
  void eventRecord(CUevent event, CUstream stream);
  void eventSynchronize(CUevent event);
  /// Stream-ordered allocation (cuMemAllocAsync; managed memory when
  /// `hostShared`); 0 bytes gives null without a driver call.
  void *memAlloc(uint64_t bytes, CUstream stream, bool hostShared);
  /// Stream-ordered free of a pointer from `memAlloc`; null is a no-op.
  void memFree(void *ptr, CUstream stream);
  void memcpy(void *dst, const void *src, size_t bytes, CUstream stream);
  void memset32(void *dst, uint32_t value, size_t count, CUstream stream);
  void memset16(void *dst, uint16_t value, size_t count, CUstream stream);
  void hostRegister(void *ptr, uint64_t bytes);
  void hostUnregister(void *ptr);

  //===-- Streams ---------------------------------------------------------===//
  /// The compute stream of the current device (created non-blocking on
  /// first use unless one was set); null after a failure.
  CUstream computeStream();
  /// Uses `stream` (e.g. torch's current stream) as the compute stream of
  /// the current device; the runtime never destroys it.
  void setComputeStream(CUstream stream);
  /// The transfer stream of the current device, for both directions.
  CUstream transferStream();
  /// Host wait for the compute and transfer streams; returns `status()`.
  int synchronize();
  /// Free and total device memory in bytes (cuMemGetInfo) of the current
  /// device; returns 0 or the failure status.
  int memInfo(uint64_t *freeBytes, uint64_t *totalBytes);

  //===-- ao transfers (torch's _activation_offloading protocol) ----------===//
  /// D2H of `bytes` at device pointer `src` into a pooled pinned buffer: an
  /// event on the compute stream, the transfer stream waits on it, copies,
  /// records the transfer's event. Null on failure.
  Transfer *offload(const void *src, uint64_t bytes, const char *node);
  /// The compute stream waits on the transfer's latest event (device side,
  /// no host sync). Returns 0 or the failure status.
  int wait(Transfer *transfer);
  /// Device allocation on the compute stream, then (after the transfer
  /// stream waits on it) the H2D copy on the transfer stream and its event;
  /// the pinned buffer goes back to the pool (only the transfer stream uses
  /// pinned buffers, in order). Null on failure.
  void *reload(Transfer *transfer, const char *node);
  /// As `reload`, into `dst`, a device buffer of the transfer's size that
  /// the caller allocated on the compute stream (the lowered step's
  /// `gpu.alloc`, freed at its last use). Returns 0 or the failure status.
  int reloadInto(Transfer *transfer, void *dst, const char *node);
  /// Forgets a transfer: its event goes back to the event pool, its pinned
  /// buffer to the pinned pool when it was never reloaded.
  int release(Transfer *transfer);

  //===-- Counters and teardown -------------------------------------------===//
  const DeviceMemoryStats &deviceMemory() const { return memory; }
  void resetPeak() { memory.peakBytes = memory.liveBytes; }
  const PinnedPool &pinnedPool() const { return pinned; }
  size_t liveTransfers() const { return transfers.size(); }
  /// Events kept for reuse, over all devices.
  size_t pooledEvents() const;
  /// Releases everything the runtime owns (events, pinned buffers, owned
  /// streams, primary contexts). Returns `status()`.
  int shutdown();

  /// Current-context guard: pushes the primary context of the current device
  /// (retaining it once) and pops it on destruction; nested scopes on the
  /// same device push nothing. False when that failed (the failure is
  /// recorded under `entry`).
  class ContextScope {
  public:
    ContextScope(Runtime &rt, const char *entry);
    ~ContextScope();
    explicit operator bool() const { return active; }

  private:
    Runtime &rt;
    const char *entry;
    bool active = false;
    bool owns = false;
    int outerDevice = -1;
  };

  /// Hooks of the caller's lock (the C ABI's global lock): `release` gives
  /// it up entirely and returns what `reacquire` needs to take it back.
  /// The runtime releases it around host waits that may depend on other
  /// threads (stream and event synchronisation, NCCL rendezvous), so rank
  /// threads never block each other while one waits.
  void setLockHooks(unsigned (*release)(), void (*reacquire)(unsigned)) {
    releaseLock = release;
    reacquireLock = reacquire;
  }
  /// Releases the caller's lock (when hooks are set) for its lifetime.
  class Unlocked {
  public:
    explicit Unlocked(Runtime &rt) : rt(rt) {
      if (rt.releaseLock)
        depth = rt.releaseLock();
    }
    ~Unlocked() {
      if (rt.reacquireLock)
        rt.reacquireLock(depth);
    }

  private:
    Runtime &rt;
    unsigned depth = 0;
  };

  const DriverApi &driverApi() const { return driver; }
  /// Checks a driver result; on failure records it and returns false.
  /// Findings of a checking driver are recorded too: the one explaining a
  /// failure is appended to its message, others (races, uses after free)
  /// are recorded as `kStatusDeviceCheck`.
  bool check(CUresult result, const char *entry, const char *call,
             const std::string &detail = "");

private:
  struct Device {
    CUdevice handle = 0;
    CUcontext context = nullptr;
    CUstream compute = nullptr;
    bool ownsCompute = false;
    CUstream transfer = nullptr;
    std::vector<CUevent> freeEvents; ///< pooled, created in this context
  };

  struct Module;
  /// A runtime-owned function: its kernel name and driver function per
  /// device.
  struct Function {
    Module *module = nullptr;
    std::string name;
    std::map<int, CUfunction> resolved;
  };
  /// A runtime-owned module: its image and its driver module per device.
  struct Module {
    const void *image = nullptr;
    bool jit = false;
    int optLevel = 0;
    std::map<int, CUmodule> loaded;
    std::map<std::string, std::unique_ptr<Function>> functions;
  };
  /// First failures of one thread, or those handed over by exited threads.
  struct Errors {
    int status = 0;
    std::string message;
    uint64_t count = 0;
  };
  /// The failures exited threads left uncleared (shared with their
  /// per-thread states, which may outlive the runtime).
  struct Orphans {
    std::mutex mutex;
    Errors errors;
  };
  /// A thread's failures; at the thread's exit, uncleared ones go to
  /// `orphans`.
  struct ThreadErrors {
    Errors errors;
    std::shared_ptr<Orphans> orphans;
    ThreadErrors(std::shared_ptr<Orphans> orphans)
        : orphans(std::move(orphans)) {}
    ThreadErrors(const ThreadErrors &) = default;
    ~ThreadErrors();
  };

  /// The driver module of `m` on the current device, loaded on first use
  /// (inside an active ContextScope). Null after a failure.
  CUmodule loadedModule(Module &m, const char *entry,
                        const std::string &detail);
  /// The driver function of `f` on the current device, resolved on first
  /// use (inside an active ContextScope). Null after a failure.
  CUfunction resolved(Function &f, const char *entry,
                      const std::string &detail);
  CUmodule newModule(const void *data, bool jit, int optLevel,
                     const char *entry);

  Device *device(const char *entry);
  CUstream orCompute(CUstream stream);
  CUevent acquireEvent(const char *entry, const std::string &detail);
  void releaseEvent(int ordinal, CUevent event);
  /// Orders the transfer stream after the work enqueued so far on the
  /// compute stream (`event` recorded there, waited for on the device).
  bool transferAfterCompute(CUevent event, CUstream compute, CUstream transfer,
                            const char *entry, const std::string &detail);
  /// The H2D half of a reload into `dst` (context pushed, device set).
  int copyBack(Transfer *t, void *dst, const char *entry);

  const DriverApi &driver;
  PerThread<int> currentDevice{0};
  PerThread<int> pushedDevice{-1}; ///< device of the thread's outermost
                                   ///< ContextScope
  unsigned (*releaseLock)() = nullptr;
  void (*reacquireLock)(unsigned) = nullptr;
  bool initialized = false;
  std::map<int, Device> devices;
  PerThread<std::string> node{""}; ///< of the calling thread
  std::shared_ptr<Orphans> orphans = std::make_shared<Orphans>();
  PerThread<ThreadErrors> errors{ThreadErrors(orphans)};
  std::unordered_map<CUmodule, std::unique_ptr<Module>> modules;
  std::unordered_map<CUfunction, Function *> functions;
  std::unordered_map<CUdeviceptr, uint64_t> allocations;
  DeviceMemoryStats memory;
  PinnedPool pinned;
  std::unordered_map<Transfer *, std::unique_ptr<Transfer>> transfers;
};

/// Human name of a driver result ("CUDA_ERROR_STUB_LIBRARY"), from a fixed
/// table (the stub's cuGetErrorName fails too).
const char *resultName(int result);

} // namespace joint::cuda

#endif // JOINT_RUNTIME_CUDA_RUNTIME_H

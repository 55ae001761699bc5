//===- EmulatedDriver.cpp - A CUDA device emulated on the host ------------===//
//
// Implements `emulatedDriver()`. Bookkeeping (allocations, vector clocks,
// access histories, findings, counters) lives in one process-wide `Device`
// under one mutex and is updated when an operation is enqueued, so the race
// checker's verdicts depend on the program's own streams, events and host
// synchronisations, never on how the worker threads happen to interleave.
// The work itself (copies, memsets, kernels, the poisoning of a free) runs
// on the stream's worker thread, in stream order, concurrently with other
// streams. Stream waits block the waiting stream's worker until the event's
// stream has completed the work enqueued before the record. Every enqueue,
// record, wait and host synchronisation is also logged, in the same order,
// for the simulated schedule (EmulatedTrace.h).
//
//===----------------------------------------------------------------------===//

#include "EmulatedDriver.h"
#include "EmulatedTrace.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace joint::cuda;

namespace {

/// Logical time: entry 0 is the host, entry i stream i.
using Clock = std::vector<uint64_t>;

void joinInto(Clock &into, const Clock &other) {
  if (into.size() < other.size())
    into.resize(other.size(), 0);
  for (size_t i = 0; i < other.size(); ++i)
    into[i] = std::max(into[i], other[i]);
}

uint64_t at(const Clock &clock, size_t i) {
  return i < clock.size() ? clock[i] : 0;
}

/// Freed and fresh device memory: 0xFF bytes are a NaN in f64, f32, bf16
/// and f16 alike (and -1 in every integer type).
constexpr unsigned char kPoison = 0xFF;
constexpr size_t kAlignment = 256;

/// One earlier access to an allocation, kept until the host has
/// synchronised past it.
struct Access {
  uint64_t lo, hi; ///< byte offsets in the allocation
  bool write;
  unsigned stream;
  uint64_t epoch; ///< the stream's own clock entry at the access
  std::string what;
};

struct Allocation {
  uint64_t id = 0;
  char *base = nullptr;
  uint64_t bytes = 0;
  bool pinned = false; ///< host buffer from cuMemHostAlloc
  std::string node;
  bool freed = false; ///< in enqueue order
  std::string freedBy;
  bool freeExecuted = false; ///< poisoned and quarantined
  int pending = 0;           ///< enqueued operations not completed yet
  /// Not in live bytes until an operation writes it (countFromFirstWrite).
  bool uncounted = false;
  std::vector<Access> history;

  std::string describe() const {
    std::string text = (pinned ? "pinned buffer " : "allocation ") +
                       std::to_string(id) + " (" + std::to_string(bytes) +
                       " bytes";
    if (!node.empty())
      text += ", node '" + node + "'";
    return text + ")";
  }
};

struct Stream {
  unsigned index = 0;
  std::thread worker;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::function<void()>> queue;
  uint64_t enqueued = 0, completed = 0;
  uint64_t copies = 0; ///< copies enqueued here; guarded by the device mutex
  bool stopping = false;
  bool destroyed = false;
  Clock clock; ///< guarded by the device mutex

  void run() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mutex);
        changed.wait(lock, [&] { return stopping || !queue.empty(); });
        if (queue.empty())
          return;
        task = std::move(queue.front());
        queue.pop_front();
      }
      task();
      {
        std::lock_guard<std::mutex> lock(mutex);
        ++completed;
      }
      changed.notify_all();
    }
  }

  /// Appends `task`; returns how many tasks were enqueued so far.
  uint64_t push(std::function<void()> task) {
    uint64_t ticket;
    {
      std::lock_guard<std::mutex> lock(mutex);
      queue.push_back(std::move(task));
      ticket = ++enqueued;
    }
    changed.notify_all();
    return ticket;
  }

  uint64_t tickets() {
    std::lock_guard<std::mutex> lock(mutex);
    return enqueued;
  }

  /// Blocks until the first `ticket` tasks have completed.
  void waitFor(uint64_t ticket) {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return completed >= ticket; });
  }
};

struct Event {
  Stream *stream = nullptr; ///< of the latest record; null before any
  uint64_t ticket = 0;      ///< tasks of `stream` the record follows
  Clock clock;
  uint64_t traceRecord = 0; ///< the latest record in the schedule
};

struct Module;
struct Function {
  JointEmuKernel kernel;
  std::string kinds;
  Module *module;
};
struct Module {
  std::deque<Function> functions;
};

/// A range an operation touches, resolved to its allocation.
struct Touch {
  Allocation *allocation;
  uint64_t lo, hi;
  bool read, write;
};

struct Declared {
  const void *ptr;
  uint64_t bytes;
  int mode;
};
thread_local std::vector<Declared> declared;

uint64_t envMegabytes(const char *name, uint64_t fallback) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return fallback;
  return std::strtoull(text, nullptr, 10);
}

/// The node of the calling host thread (`annotate`): rank threads name
/// their own nodes. Freed at the thread's exit; a call after that (a step
/// library unloading its module at process exit) starts afresh.
std::string &threadNode() {
  static thread_local std::string *node = nullptr;
  struct Cleanup {
    ~Cleanup() {
      delete node;
      node = nullptr;
    }
  };
  if (!node) {
    node = new std::string();
    static thread_local Cleanup cleanup;
    (void)cleanup;
  }
  return *node;
}

class Device;
Device &device();

class Device {
public:
  Device() {
    capacity = envMegabytes("JOINT_EMU_CAPACITY_MB", 80 * 1024) << 20;
    quarantineCap = envMegabytes("JOINT_EMU_QUARANTINE_MB", 256) << 20;
    unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    blockWorkers = static_cast<unsigned>(
        envMegabytes("JOINT_EMU_BLOCK_WORKERS", std::min(hw, 4u)));
    blockWorkers = std::max(1u, blockWorkers);
    host.resize(1, 0);
    startTraceFromEnvironment();
  }

  std::mutex mutex;
  std::map<uintptr_t, std::unique_ptr<Allocation>> allocations;
  std::deque<Allocation *> quarantine;
  std::map<uintptr_t, uint64_t> registered;
  std::vector<std::unique_ptr<Stream>> streams; ///< kept until exit
  std::set<Event *> events;
  std::set<Module *> modules;
  std::set<const Function *> functions;
  Clock host;
  std::deque<std::pair<int, std::string>> findings;
  JointEmuStats counters = {};
  uint64_t collectives = 0; ///< NCCL collectives and p2p groups enqueued

  uint64_t nextId = 1;
  uint64_t capacity = 0, quarantineCap = 0;
  unsigned blockWorkers = 1;
  emu::Schedule schedule;
  std::string tracePath; ///< JOINT_EMU_TRACE: written at exit

  /// JOINT_EMU_TRACE=path traces from the first driver call and writes the
  /// trace at exit; JOINT_EMU_LINK_GBPS (default 55) prices copies.
  void startTraceFromEnvironment() {
    const char *path = std::getenv("JOINT_EMU_TRACE");
    if (!path || !*path)
      return;
    const char *gbps = std::getenv("JOINT_EMU_LINK_GBPS");
    double link = gbps && *gbps ? std::strtod(gbps, nullptr) * 1e9 : 55e9;
    if (!(link > 0) || !std::isfinite(link)) {
      std::fprintf(stderr,
                   "joint-cuda-emulator: JOINT_EMU_LINK_GBPS='%s' is not a "
                   "positive number; not tracing\n",
                   gbps);
      return;
    }
    tracePath = path;
    schedule.start(link);
    std::atexit([] {
      std::string error;
      if (!emu::writeTrace(device().tracePath.c_str(), &error))
        std::fprintf(stderr, "joint-cuda-emulator: %s\n", error.c_str());
    });
  }

  //===-- Findings (mutex held) -------------------------------------------===//

  /// Queues why a call fails and returns its result.
  CUresult fail(CUresult result, const std::string &message) {
    ++counters.errors;
    findings.emplace_back(static_cast<int>(result), message);
    return result;
  }
  void report(const std::string &message) { findings.emplace_back(0, message); }

  std::string label(const std::string &kind, const Stream *stream) const {
    std::string text = kind;
    const std::string &node = threadNode();
    if (!node.empty())
      text += " (node '" + node + "')";
    return text + (stream ? " on stream " + std::to_string(stream->index)
                          : std::string(" on the host"));
  }

  //===-- Memory (mutex held) ---------------------------------------------===//

  /// The allocation (live or quarantined) holding `ptr`, or null.
  Allocation *find(const void *ptr) {
    uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
    auto it = allocations.upper_bound(p);
    if (it == allocations.begin())
      return nullptr;
    --it;
    Allocation *a = it->second.get();
    return p < it->first + a->bytes ? a : nullptr;
  }

  Allocation *allocate(uint64_t bytes, bool pinned) {
    size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    char *base = static_cast<char *>(std::aligned_alloc(kAlignment, rounded));
    if (!base)
      return nullptr;
    std::memset(base, kPoison, rounded);
    auto owned = std::make_unique<Allocation>();
    owned->id = nextId++;
    owned->base = base;
    owned->bytes = bytes;
    owned->pinned = pinned;
    owned->node = threadNode();
    Allocation *a = owned.get();
    allocations.emplace(reinterpret_cast<uintptr_t>(base), std::move(owned));
    if (!pinned) {
      counters.live_bytes += bytes;
      counters.peak_bytes = std::max(counters.peak_bytes, counters.live_bytes);
      ++counters.allocations;
    }
    return a;
  }

  /// Marks `a` freed in enqueue order (after the race check).
  void markFreed(Allocation *a, const std::string &by) {
    a->freed = true;
    a->freedBy = by;
    a->history.clear();
    if (!a->pinned) {
      if (!a->uncounted)
        counters.live_bytes -= a->bytes;
      ++counters.frees;
    }
  }

  /// The free has run: poison, quarantine, give back the oldest
  /// quarantined allocations nobody can touch any more.
  void retire(Allocation *a) {
    std::memset(a->base, kPoison, a->bytes);
    a->freeExecuted = true;
    quarantine.push_back(a);
    counters.quarantined_bytes += a->bytes;
    evict();
  }

  void evict() {
    while (counters.quarantined_bytes > quarantineCap && !quarantine.empty()) {
      Allocation *a = quarantine.front();
      if (a->pending > 0)
        return;
      quarantine.pop_front();
      counters.quarantined_bytes -= a->bytes;
      std::free(a->base);
      allocations.erase(reinterpret_cast<uintptr_t>(a->base));
    }
  }

  /// Resolves [ptr, ptr + bytes) for an operation. A range starting in a
  /// tracked allocation must end inside it; `mustBeTracked` ranges must
  /// start in one. Untracked ranges (pageable host memory) are not checked.
  CUresult resolve(const void *ptr, uint64_t bytes, bool mustBeTracked,
                   const char *role, const std::string &what, bool read,
                   bool write, std::vector<Touch> &touches) {
    if (bytes == 0)
      return CUDA_SUCCESS;
    Allocation *a = find(ptr);
    if (!a) {
      if (!mustBeTracked)
        return CUDA_SUCCESS;
      char text[32];
      std::snprintf(text, sizeof(text), "%p", ptr);
      return fail(CUDA_ERROR_INVALID_VALUE,
                  what + ": " + role + " " + text +
                      " is not in any device allocation");
    }
    uint64_t lo =
        reinterpret_cast<uintptr_t>(ptr) - reinterpret_cast<uintptr_t>(a->base);
    if (bytes > a->bytes - lo)
      return fail(CUDA_ERROR_INVALID_VALUE,
                  what + ": " + role + " bytes [" + std::to_string(lo) + ", " +
                      std::to_string(lo + bytes) + ") run past the end of " +
                      a->describe());
    touches.push_back({a, lo, lo + bytes, read, write});
    return CUDA_SUCCESS;
  }

  //===-- Clocks and the race checker (mutex held) ------------------------===//

  /// Everything the host has seen complete precedes what it enqueues next.
  void hostSaw(const Clock &clock) {
    joinInto(host, clock);
    for (auto &[base, a] : allocations) {
      auto &h = a->history;
      h.erase(std::remove_if(h.begin(), h.end(),
                             [&](const Access &e) {
                               return e.epoch <= at(host, e.stream);
                             }),
              h.end());
    }
  }

  /// Advances `stream`'s clock for one operation and returns its epoch.
  uint64_t tick(Stream *stream) {
    joinInto(stream->clock, host);
    if (stream->clock.size() <= stream->index)
      stream->clock.resize(stream->index + 1, 0);
    return ++stream->clock[stream->index];
  }

  /// Checks `touches` of the operation `what` on `stream` (clock already
  /// ticked to `epoch`) against earlier accesses, reports the first race or
  /// use after free, and records the accesses.
  void check(Stream *stream, uint64_t epoch, const std::string &what,
             const std::vector<Touch> &touches) {
    bool reported = false;
    for (const Touch &t : touches) {
      Allocation *a = t.allocation;
      if (a->freed) {
        ++counters.use_after_frees;
        if (!reported)
          report("use after free: " + what + " " +
                 (t.write ? (t.read ? "reads and writes " : "writes ")
                          : "reads ") +
                 a->describe() + ", freed by " + a->freedBy);
        reported = true;
        continue;
      }
      for (const Access &e : a->history) {
        if (t.lo >= e.hi || e.lo >= t.hi || !(t.write || e.write))
          continue;
        if (e.epoch <= at(stream->clock, e.stream))
          continue;
        ++counters.races;
        if (!reported) {
          uint64_t lo = std::max(t.lo, e.lo), hi = std::min(t.hi, e.hi);
          report("race on bytes [" + std::to_string(lo) + ", " +
                 std::to_string(hi) + ") of " + a->describe() + ": " + what +
                 (t.write ? " writes" : " reads") + " them while " + e.what +
                 (e.write ? " writes" : " reads") +
                 " them, and no stream order, event wait or host "
                 "synchronisation orders the two");
        }
        reported = true;
        break;
      }
    }
    for (const Touch &t : touches) {
      if (t.allocation->freed)
        continue;
      // An earlier access ordered before this one and inside its range can
      // be forgotten when this one conflicts with everything it did: any
      // later access racing with it races with this one too.
      auto &h = t.allocation->history;
      h.erase(std::remove_if(h.begin(), h.end(),
                             [&](const Access &e) {
                               return e.lo >= t.lo && e.hi <= t.hi &&
                                      (t.write || !e.write) &&
                                      e.epoch <= at(stream->clock, e.stream);
                             }),
              h.end());
      h.push_back({t.lo, t.hi, t.write, stream->index, epoch, what});
    }
  }

  /// Enqueues `work` on `stream` as the operation `what` touching
  /// `touches`: ticks the clock, checks, counts pending uses.
  /// `trace` says what the operation costs in the simulated schedule
  /// (default: its node's work, named by `what`).
  void submit(Stream *stream, const std::string &what,
              std::vector<Touch> touches, std::function<void()> work,
              const emu::TraceOp &trace = {}) {
    schedule.operation(stream->index, trace, threadNode(), what);
    uint64_t epoch = tick(stream);
    check(stream, epoch, what, touches);
    std::vector<Allocation *> used;
    for (const Touch &t : touches) {
      ++t.allocation->pending;
      used.push_back(t.allocation);
      if (t.write && t.allocation->uncounted) {
        t.allocation->uncounted = false;
        counters.live_bytes += t.allocation->bytes;
        counters.peak_bytes =
            std::max(counters.peak_bytes, counters.live_bytes);
      }
    }
    stream->push([this, work = std::move(work), used = std::move(used)] {
      work();
      std::lock_guard<std::mutex> lock(mutex);
      for (Allocation *a : used)
        --a->pending;
    });
  }

  Stream *stream(CUstream handle) {
    for (auto &s : streams)
      if (s.get() == reinterpret_cast<Stream *>(handle) && !s->destroyed)
        return s.get();
    return nullptr;
  }
};

Device &device() {
  // Never destroyed: worker threads may still wait on it at exit.
  static Device *d = new Device();
  return *d;
}

using Lock = std::lock_guard<std::mutex>;

CUresult badStream(Device &d, CUstream s, const char *call) {
  char text[32];
  std::snprintf(text, sizeof(text), "%p", static_cast<void *>(s));
  return d.fail(CUDA_ERROR_INVALID_HANDLE,
                std::string(call) + ": " + text +
                    " is not a stream of the emulated device (the null "
                    "stream is not emulated)");
}

//===----------------------------------------------------------------------===//
// Contexts
//===----------------------------------------------------------------------===//

CUresult eInit(unsigned) { return CUDA_SUCCESS; }
CUresult eDeviceGet(CUdevice *dev, int ordinal) {
  if (ordinal < 0 || ordinal >= emu::kDevices) {
    Device &d = device();
    Lock lock(d.mutex);
    return d.fail(CUDA_ERROR_INVALID_DEVICE,
                  "the emulated machine has devices 0 to " +
                      std::to_string(emu::kDevices - 1) + ", not " +
                      std::to_string(ordinal));
  }
  *dev = ordinal;
  return CUDA_SUCCESS;
}
/// One primary context per ordinal; a context is its ordinal's byte.
char contexts[emu::kDevices];
/// The calling thread's pushed contexts (ordinals), innermost last. Plain
/// data: step libraries unload their modules from exit handlers, after the
/// main thread's thread_local objects with destructors are gone.
constexpr int kMaxPushedContexts = 64;
struct ContextStack {
  int ordinals[kMaxPushedContexts];
  int depth;
};
thread_local ContextStack contextStack;

CUresult eRetain(CUcontext *ctx, CUdevice dev) {
  *ctx = reinterpret_cast<CUcontext>(&contexts[dev]);
  return CUDA_SUCCESS;
}
CUresult eRelease(CUdevice) { return CUDA_SUCCESS; }
CUresult ePush(CUcontext ctx) {
  auto *byte = reinterpret_cast<char *>(ctx);
  if (byte < contexts || byte >= contexts + emu::kDevices) {
    Device &d = device();
    Lock lock(d.mutex);
    return d.fail(CUDA_ERROR_INVALID_CONTEXT,
                  "cuCtxPushCurrent: not a context of the emulated device");
  }
  if (contextStack.depth == kMaxPushedContexts) {
    Device &d = device();
    Lock lock(d.mutex);
    return d.fail(CUDA_ERROR_INVALID_CONTEXT,
                  "cuCtxPushCurrent: more than 64 contexts pushed");
  }
  contextStack.ordinals[contextStack.depth++] =
      static_cast<int>(byte - contexts);
  return CUDA_SUCCESS;
}
CUresult ePop(CUcontext *ctx) {
  if (contextStack.depth == 0) {
    Device &d = device();
    Lock lock(d.mutex);
    return d.fail(CUDA_ERROR_INVALID_CONTEXT,
                  "cuCtxPopCurrent: no context is current on this thread");
  }
  if (ctx)
    *ctx = reinterpret_cast<CUcontext>(
        &contexts[contextStack.ordinals[contextStack.depth - 1]]);
  --contextStack.depth;
  return CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Modules and kernels
//===----------------------------------------------------------------------===//

CUresult eModuleLoad(CUmodule *module, const void *data) {
  Device &d = device();
  Lock lock(d.mutex);
  *module = nullptr;
  const auto *image = static_cast<const JointEmuModuleImage *>(data);
  if (!image || image->magic != JOINT_EMU_IMAGE_MAGIC) {
    uint32_t magic = 0;
    if (image)
      std::memcpy(&magic, image, sizeof(magic));
    char text[96];
    std::snprintf(text, sizeof(text),
                  "image is not an emulated kernel table (magic 0x%08x, want "
                  "0x%08x)",
                  magic, JOINT_EMU_IMAGE_MAGIC);
    return d.fail(CUDA_ERROR_INVALID_IMAGE,
                  std::string(text) + "; build the step for the emulated "
                                      "device");
  }
  if (image->version != JOINT_EMU_IMAGE_VERSION)
    return d.fail(CUDA_ERROR_INVALID_IMAGE,
                  "kernel table version " + std::to_string(image->version) +
                      ", this runtime reads version " +
                      std::to_string(JOINT_EMU_IMAGE_VERSION));
  auto owned = std::make_unique<Module>();
  for (uint64_t i = 0; i < image->num_kernels; ++i) {
    const JointEmuKernel &k = image->kernels[i];
    std::string name = k.name ? k.name : "";
    if (name.empty() || !k.fn || !k.param_kinds)
      return d.fail(CUDA_ERROR_INVALID_IMAGE,
                    "kernel " + std::to_string(i) + " ('" + name +
                        "') of the table lacks a name, function or kinds");
    std::string kinds = k.param_kinds;
    if (kinds.find_first_not_of("rwp1248") != std::string::npos)
      return d.fail(CUDA_ERROR_INVALID_IMAGE,
                    "kernel '" + name + "' has parameter kinds '" + kinds +
                        "' (allowed: r w p 1 2 4 8)");
    owned->functions.push_back({k, kinds, owned.get()});
  }
  Module *m = owned.release();
  d.modules.insert(m);
  for (const Function &f : m->functions)
    d.functions.insert(&f);
  *module = reinterpret_cast<CUmodule>(m);
  return CUDA_SUCCESS;
}

CUresult eModuleLoadEx(CUmodule *module, const void *data, unsigned,
                       CUjit_option *, void **) {
  return eModuleLoad(module, data);
}

CUresult eModuleUnload(CUmodule handle) {
  Device &d = device();
  Lock lock(d.mutex);
  auto *m = reinterpret_cast<Module *>(handle);
  if (!d.modules.erase(m))
    return d.fail(CUDA_ERROR_INVALID_HANDLE, "not a loaded module");
  for (const Function &f : m->functions)
    d.functions.erase(&f);
  delete m;
  return CUDA_SUCCESS;
}

CUresult eGetFunction(CUfunction *fn, CUmodule handle, const char *name) {
  Device &d = device();
  Lock lock(d.mutex);
  auto *m = reinterpret_cast<Module *>(handle);
  if (!d.modules.count(m))
    return d.fail(CUDA_ERROR_INVALID_HANDLE, "not a loaded module");
  std::string known;
  for (const Function &f : m->functions) {
    if (name && std::strcmp(f.kernel.name, name) == 0) {
      *fn = reinterpret_cast<CUfunction>(const_cast<Function *>(&f));
      return CUDA_SUCCESS;
    }
    known += (known.empty() ? "" : ", ") + std::string(f.kernel.name);
  }
  return d.fail(CUDA_ERROR_NOT_FOUND, "the kernel table has no '" +
                                          std::string(name ? name : "") +
                                          "' (it has: " + known + ")");
}

/// Runs every (block, thread) of the grid; blocks are shared out to up to
/// `workers` host threads.
void runGrid(const JointEmuKernel &k, void **params, const unsigned grid[3],
             const unsigned block[3], unsigned workers) {
  uint64_t blocks = uint64_t(grid[0]) * grid[1] * grid[2];
  if (blocks == 0 || uint64_t(block[0]) * block[1] * block[2] == 0)
    return;
  std::atomic<uint64_t> next{0};
  auto body = [&] {
    JointEmuLaunch ids = {};
    for (int i = 0; i < 3; ++i) {
      ids.grid_dim[i] = grid[i];
      ids.block_dim[i] = block[i];
    }
    for (uint64_t b; (b = next.fetch_add(1)) < blocks;) {
      ids.block_idx[0] = b % grid[0];
      ids.block_idx[1] = (b / grid[0]) % grid[1];
      ids.block_idx[2] = b / (uint64_t(grid[0]) * grid[1]);
      for (unsigned z = 0; z < block[2]; ++z)
        for (unsigned y = 0; y < block[1]; ++y)
          for (unsigned x = 0; x < block[0]; ++x) {
            ids.thread_idx[0] = x;
            ids.thread_idx[1] = y;
            ids.thread_idx[2] = z;
            k.fn(params, &ids);
          }
    }
  };
  unsigned extra =
      static_cast<unsigned>(std::min<uint64_t>(blocks, workers)) - 1;
  std::vector<std::thread> helpers;
  for (unsigned i = 0; i < extra; ++i)
    helpers.emplace_back(body);
  body();
  for (std::thread &t : helpers)
    t.join();
}

CUresult launch(CUfunction handle, const unsigned grid[3],
                const unsigned block[3], unsigned smem, CUstream hStream,
                void **params, void **extra) {
  Device &d = device();
  std::vector<Declared> ranges;
  ranges.swap(declared);
  Lock lock(d.mutex);
  auto *fn = reinterpret_cast<const Function *>(handle);
  if (!d.functions.count(fn))
    return d.fail(CUDA_ERROR_INVALID_HANDLE, "not a kernel of a loaded table");
  Stream *stream = d.stream(hStream);
  if (!stream)
    return badStream(d, hStream, "cuLaunchKernel");
  std::string name = fn->kernel.name;
  std::string what = d.label("kernel '" + name + "'", stream);
  // One host thread runs a block's threads one after another, so nothing
  // may wait for or share memory with a sibling thread.
  if (fn->kernel.flags &
      (JOINT_EMU_KERNEL_USES_BARRIER | JOINT_EMU_KERNEL_USES_SHARED_MEMORY))
    return d.fail(CUDA_ERROR_NOT_SUPPORTED,
                  what + " uses barriers or shared memory, which the emulated "
                         "device refuses");
  if (smem > 0)
    return d.fail(CUDA_ERROR_NOT_SUPPORTED,
                  what + " asks for " + std::to_string(smem) +
                      " bytes of dynamic shared memory, which the emulated "
                      "device refuses");
  if (extra)
    return d.fail(CUDA_ERROR_NOT_SUPPORTED,
                  what + ": the 'extra' argument buffer is not emulated");
  const std::string &kinds = fn->kinds;
  if (!kinds.empty() && !params)
    return d.fail(CUDA_ERROR_INVALID_VALUE, what + ": null params");
  // Argument values are copied now, as cuLaunchKernel does.
  auto values = std::make_shared<std::vector<uint64_t>>(kinds.size(), 0);
  std::vector<Touch> touches;
  for (size_t i = 0; i < kinds.size(); ++i) {
    char kind = kinds[i];
    size_t size = (kind >= '1' && kind <= '8') ? size_t(kind - '0') : 8;
    std::memcpy(&(*values)[i], params[i], size);
    if (!ranges.empty() || size != 8 ||
        !(kind == 'r' || kind == 'w' || kind == 'p'))
      continue;
    Allocation *a = d.find(reinterpret_cast<void *>((*values)[i]));
    if (!a)
      continue; // host memory the emulator does not track
    bool read = kind != 'w', write = kind != 'r';
    auto same = std::find_if(touches.begin(), touches.end(),
                             [&](auto &t) { return t.allocation == a; });
    if (same != touches.end()) {
      same->read |= read;
      same->write |= write;
    } else {
      touches.push_back({a, 0, a->bytes, read, write});
    }
  }
  for (const Declared &r : ranges) {
    CUresult result =
        d.resolve(r.ptr, r.bytes, true, "declared range", what,
                  r.mode & JOINT_EMU_READ, r.mode & JOINT_EMU_WRITE, touches);
    if (result != CUDA_SUCCESS)
      return result;
  }
  ++d.counters.kernel_launches;
  JointEmuKernel kernel = fn->kernel;
  unsigned g[3] = {grid[0], grid[1], grid[2]};
  unsigned b[3] = {block[0], block[1], block[2]};
  unsigned workers = d.blockWorkers;
  d.submit(stream, what, std::move(touches), [=] {
    std::vector<void *> pointers(values->size());
    for (size_t i = 0; i < values->size(); ++i)
      pointers[i] = &(*values)[i];
    runGrid(kernel, pointers.data(), g, b, workers);
  });
  return CUDA_SUCCESS;
}

CUresult eLaunch(CUfunction fn, unsigned gx, unsigned gy, unsigned gz,
                 unsigned bx, unsigned by, unsigned bz, unsigned smem,
                 CUstream stream, void **params, void **extra) {
  unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  return launch(fn, grid, block, smem, stream, params, extra);
}

CUresult eLaunchEx(const CUlaunchConfig *config, CUfunction fn, void **params,
                   void **extra) {
  // Clusters group blocks for distributed shared memory, which is refused
  // anyway; the grid runs as a plain launch.
  unsigned grid[3] = {config->gridDimX, config->gridDimY, config->gridDimZ};
  unsigned block[3] = {config->blockDimX, config->blockDimY, config->blockDimZ};
  return launch(fn, grid, block, config->sharedMemBytes, config->hStream,
                params, extra);
}

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

CUresult eStreamCreate(CUstream *out, unsigned) {
  Device &d = device();
  Lock lock(d.mutex);
  auto s = std::make_unique<Stream>();
  s->index = static_cast<unsigned>(d.streams.size()) + 1;
  Stream *raw = s.get();
  raw->worker = std::thread([raw] { raw->run(); });
  d.streams.push_back(std::move(s));
  *out = reinterpret_cast<CUstream>(raw);
  return CUDA_SUCCESS;
}

CUresult eStreamDestroy(CUstream handle) {
  Device &d = device();
  Stream *s;
  {
    Lock lock(d.mutex);
    s = d.stream(handle);
    if (!s)
      return badStream(d, handle, "cuStreamDestroy");
    s->destroyed = true;
  }
  // Work already enqueued completes first, as CUDA promises.
  {
    std::lock_guard<std::mutex> lock(s->mutex);
    s->stopping = true;
  }
  s->changed.notify_all();
  s->worker.join();
  return CUDA_SUCCESS;
}

CUresult eStreamSync(CUstream handle) {
  Device &d = device();
  Stream *s;
  Clock clock;
  uint64_t ticket;
  {
    Lock lock(d.mutex);
    s = d.stream(handle);
    if (!s)
      return badStream(d, handle, "cuStreamSynchronize");
    clock = s->clock;
    ticket = s->tickets();
    d.schedule.hostWaitsStream(s->index);
  }
  s->waitFor(ticket);
  Lock lock(d.mutex);
  d.hostSaw(clock);
  return CUDA_SUCCESS;
}

CUresult eStreamWait(CUstream handle, CUevent event, unsigned) {
  Device &d = device();
  Lock lock(d.mutex);
  Stream *s = d.stream(handle);
  if (!s)
    return badStream(d, handle, "cuStreamWaitEvent");
  auto *e = reinterpret_cast<Event *>(event);
  if (!d.events.count(e))
    return d.fail(CUDA_ERROR_INVALID_HANDLE, "cuStreamWaitEvent: not an event");
  if (!e->stream)
    return CUDA_SUCCESS; // never recorded: nothing to wait for
  joinInto(s->clock, e->clock);
  d.schedule.wait(s->index, e->traceRecord);
  Stream *on = e->stream;
  uint64_t ticket = e->ticket;
  s->push([on, ticket] { on->waitFor(ticket); });
  return CUDA_SUCCESS;
}

CUresult eEventCreate(CUevent *out, unsigned) {
  Device &d = device();
  Lock lock(d.mutex);
  auto *e = new Event();
  d.events.insert(e);
  *out = reinterpret_cast<CUevent>(e);
  return CUDA_SUCCESS;
}

CUresult eEventDestroy(CUevent event) {
  Device &d = device();
  Lock lock(d.mutex);
  auto *e = reinterpret_cast<Event *>(event);
  if (!d.events.erase(e))
    return d.fail(CUDA_ERROR_INVALID_HANDLE, "cuEventDestroy: not an event");
  delete e; // pending waits captured the stream and ticket, not the event
  return CUDA_SUCCESS;
}

CUresult eEventRecord(CUevent event, CUstream handle) {
  Device &d = device();
  Lock lock(d.mutex);
  Stream *s = d.stream(handle);
  if (!s)
    return badStream(d, handle, "cuEventRecord");
  auto *e = reinterpret_cast<Event *>(event);
  if (!d.events.count(e))
    return d.fail(CUDA_ERROR_INVALID_HANDLE, "cuEventRecord: not an event");
  joinInto(s->clock, d.host);
  e->stream = s;
  e->ticket = s->tickets();
  e->clock = s->clock;
  e->traceRecord = d.schedule.record(s->index);
  return CUDA_SUCCESS;
}

CUresult eEventSync(CUevent event) {
  Device &d = device();
  Stream *s;
  uint64_t ticket;
  Clock clock;
  {
    Lock lock(d.mutex);
    auto *e = reinterpret_cast<Event *>(event);
    if (!d.events.count(e))
      return d.fail(CUDA_ERROR_INVALID_HANDLE,
                    "cuEventSynchronize: not an event");
    if (!e->stream)
      return CUDA_SUCCESS;
    s = e->stream;
    ticket = e->ticket;
    clock = e->clock;
    d.schedule.hostWaitsRecord(e->traceRecord);
  }
  s->waitFor(ticket);
  Lock lock(d.mutex);
  d.hostSaw(clock);
  return CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

CUresult eMemAllocAsync(CUdeviceptr *ptr, size_t bytes, CUstream handle) {
  Device &d = device();
  Lock lock(d.mutex);
  *ptr = 0;
  Stream *s = d.stream(handle);
  if (!s)
    return badStream(d, handle, "cuMemAllocAsync");
  if (bytes == 0)
    return d.fail(CUDA_ERROR_INVALID_VALUE, "allocation of 0 bytes");
  if (bytes > d.capacity - std::min(d.capacity, d.counters.live_bytes))
    return d.fail(CUDA_ERROR_OUT_OF_MEMORY,
                  "allocation of " + std::to_string(bytes) + " bytes with " +
                      std::to_string(d.counters.live_bytes) + " of " +
                      std::to_string(d.capacity) +
                      " bytes live (JOINT_EMU_CAPACITY_MB)");
  Allocation *a = d.allocate(bytes, false);
  if (!a)
    return d.fail(CUDA_ERROR_OUT_OF_MEMORY, "host allocation of " +
                                                std::to_string(bytes) +
                                                " bytes failed");
  // Valid from this point of the stream on: an access no event orders
  // after it races with the allocation.
  d.schedule.operation(s->index, {emu::TraceKind::Memory, "allocation", bytes},
                       threadNode(), "");
  uint64_t epoch = d.tick(s);
  a->history.push_back(
      {0, bytes, true, s->index, epoch, d.label("allocation", s)});
  *ptr = reinterpret_cast<CUdeviceptr>(a->base);
  return CUDA_SUCCESS;
}

CUresult eMemAllocManaged(CUdeviceptr *ptr, size_t bytes, unsigned) {
  Device &d = device();
  Lock lock(d.mutex);
  *ptr = 0;
  if (bytes == 0)
    return d.fail(CUDA_ERROR_INVALID_VALUE, "allocation of 0 bytes");
  Allocation *a = d.allocate(bytes, false);
  if (!a)
    return d.fail(CUDA_ERROR_OUT_OF_MEMORY, "host allocation of " +
                                                std::to_string(bytes) +
                                                " bytes failed");
  *ptr = reinterpret_cast<CUdeviceptr>(a->base);
  return CUDA_SUCCESS;
}

/// The live allocation starting at `ptr`, or a failure naming why not.
CUresult freeTarget(Device &d, void *ptr, bool pinned, const char *call,
                    Allocation **out) {
  Allocation *a = d.find(ptr);
  char text[32];
  std::snprintf(text, sizeof(text), "%p", ptr);
  if (!a || a->base != ptr || a->pinned != pinned)
    return d.fail(CUDA_ERROR_INVALID_VALUE,
                  std::string(call) + ": " + text + " is not the start of " +
                      (pinned ? "a pinned buffer" : "a device allocation"));
  if (a->freed)
    return d.fail(CUDA_ERROR_INVALID_VALUE,
                  std::string(call) + ": double free of " + a->describe() +
                      ", already freed by " + a->freedBy);
  *out = a;
  return CUDA_SUCCESS;
}

CUresult eMemFreeAsync(CUdeviceptr ptr, CUstream handle) {
  Device &d = device();
  Lock lock(d.mutex);
  Stream *s = d.stream(handle);
  if (!s)
    return badStream(d, handle, "cuMemFreeAsync");
  Allocation *a = nullptr;
  if (CUresult r = freeTarget(d, reinterpret_cast<void *>(ptr), false,
                              "cuMemFreeAsync", &a))
    return r;
  // The free writes every byte (the poison) in stream order.
  std::string what = d.label("free", s);
  d.schedule.operation(s->index, {emu::TraceKind::Memory, "free", a->bytes},
                       threadNode(), what);
  uint64_t epoch = d.tick(s);
  d.check(s, epoch, what, {{a, 0, a->bytes, false, true}});
  d.markFreed(a, what);
  ++a->pending;
  s->push([&d, a] {
    Lock inner(d.mutex);
    --a->pending;
    d.retire(a);
  });
  return CUDA_SUCCESS;
}

/// cuMemFree and cuMemFreeHost synchronise the device first.
CUresult freeNow(CUdeviceptr ptr, bool pinned, const char *call) {
  emu::synchronizeAll();
  Device &d = device();
  Lock lock(d.mutex);
  Allocation *a = nullptr;
  if (CUresult r =
          freeTarget(d, reinterpret_cast<void *>(ptr), pinned, call, &a))
    return r;
  d.markFreed(a, d.label(pinned ? "host free" : "free", nullptr));
  d.retire(a);
  return CUDA_SUCCESS;
}

CUresult eMemFree(CUdeviceptr ptr) { return freeNow(ptr, false, "cuMemFree"); }

CUresult copy(void *dst, const void *src, size_t bytes, CUstream handle,
              const char *kind, bool dstDevice, bool srcDevice) {
  Device &d = device();
  Lock lock(d.mutex);
  Stream *s = d.stream(handle);
  if (!s)
    return badStream(d, handle, "copy");
  std::string what = d.label(kind, s);
  std::vector<Touch> touches;
  if (CUresult r = d.resolve(src, bytes, srcDevice, "source", what, true, false,
                             touches))
    return r;
  if (CUresult r = d.resolve(dst, bytes, dstDevice, "destination", what, false,
                             true, touches))
    return r;
  ++d.counters.copies;
  ++s->copies;
  // Device memory is the emulator's non-pinned allocations: a copy between
  // two of them is work, one crossing the link takes bytes / bandwidth.
  auto onDevice = [&](const void *p) {
    Allocation *a = d.find(p);
    return a && !a->pinned;
  };
  bool fromDevice = onDevice(src), toDevice = onDevice(dst);
  emu::TraceOp trace{emu::TraceKind::Work, kind, bytes};
  if (fromDevice != toDevice)
    trace.kind =
        fromDevice ? emu::TraceKind::CopyToHost : emu::TraceKind::CopyToDevice;
  else if (!fromDevice)
    trace.kind = emu::TraceKind::Memory; // host to host: not device time
  d.submit(
      s, what, std::move(touches), [=] { std::memmove(dst, src, bytes); },
      trace);
  return CUDA_SUCCESS;
}

CUresult eMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                      CUstream stream) {
  return copy(reinterpret_cast<void *>(dst), reinterpret_cast<void *>(src),
              bytes, stream, "copy", false, false);
}
CUresult eMemcpyDtoH(void *dst, CUdeviceptr src, size_t bytes,
                     CUstream stream) {
  return copy(dst, reinterpret_cast<void *>(src), bytes, stream, "copy D2H",
              false, true);
}
CUresult eMemcpyHtoD(CUdeviceptr dst, const void *src, size_t bytes,
                     CUstream stream) {
  return copy(reinterpret_cast<void *>(dst), src, bytes, stream, "copy H2D",
              true, false);
}

template <typename T>
CUresult fill(CUdeviceptr dst, T value, size_t count, CUstream handle,
              const char *kind) {
  Device &d = device();
  Lock lock(d.mutex);
  Stream *s = d.stream(handle);
  if (!s)
    return badStream(d, handle, kind);
  std::string what = d.label(kind, s);
  std::vector<Touch> touches;
  auto *p = reinterpret_cast<T *>(dst);
  if (CUresult r = d.resolve(p, count * sizeof(T), true, "destination", what,
                             false, true, touches))
    return r;
  ++d.counters.memsets;
  d.submit(s, what, std::move(touches),
           [=] { std::fill(p, p + count, value); });
  return CUDA_SUCCESS;
}

CUresult eMemsetD32(CUdeviceptr dst, unsigned value, size_t count,
                    CUstream stream) {
  return fill<uint32_t>(dst, value, count, stream, "memset32");
}
CUresult eMemsetD16(CUdeviceptr dst, unsigned short value, size_t count,
                    CUstream stream) {
  return fill<uint16_t>(dst, value, count, stream, "memset16");
}

CUresult eHostAlloc(void **ptr, size_t bytes, unsigned) {
  Device &d = device();
  Lock lock(d.mutex);
  *ptr = nullptr;
  if (bytes == 0)
    return d.fail(CUDA_ERROR_INVALID_VALUE, "pinned allocation of 0 bytes");
  Allocation *a = d.allocate(bytes, true);
  if (!a)
    return d.fail(CUDA_ERROR_OUT_OF_MEMORY, "host allocation of " +
                                                std::to_string(bytes) +
                                                " bytes failed");
  *ptr = a->base;
  return CUDA_SUCCESS;
}

CUresult eFreeHost(void *ptr) {
  return freeNow(reinterpret_cast<CUdeviceptr>(ptr), true, "cuMemFreeHost");
}

CUresult eHostRegister(void *ptr, size_t bytes, unsigned) {
  Device &d = device();
  Lock lock(d.mutex);
  uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  auto it = d.registered.upper_bound(p);
  bool overlaps = (it != d.registered.end() && it->first < p + bytes);
  if (it != d.registered.begin()) {
    --it;
    overlaps |= it->first + it->second > p;
  }
  if (overlaps)
    return d.fail(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
                  "the range overlaps a registered one");
  d.registered[p] = bytes;
  return CUDA_SUCCESS;
}

CUresult eHostUnregister(void *ptr) {
  Device &d = device();
  Lock lock(d.mutex);
  if (!d.registered.erase(reinterpret_cast<uintptr_t>(ptr)))
    return d.fail(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED,
                  "the pointer starts no registered range");
  return CUDA_SUCCESS;
}

CUresult eMemGetInfo(size_t *freeBytes, size_t *totalBytes) {
  Device &d = device();
  Lock lock(d.mutex);
  *totalBytes = d.capacity;
  *freeBytes = d.capacity - std::min(d.capacity, d.counters.live_bytes);
  return CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Hooks
//===----------------------------------------------------------------------===//

void eAnnotate(const char *node) {
  Device &d = device();
  Lock lock(d.mutex);
  threadNode() = node ? node : "";
}

bool eTakeFinding(int *status, std::string *message) {
  Device &d = device();
  Lock lock(d.mutex);
  if (d.findings.empty())
    return false;
  *status = d.findings.front().first;
  *message = std::move(d.findings.front().second);
  d.findings.pop_front();
  return true;
}

} // namespace

namespace joint::cuda {

const DriverApi &emulatedDriver() {
  static const DriverApi api = {
      eInit,           eDeviceGet,
      eRetain,         eRelease,
      ePush,           ePop,
      eModuleLoad,     eModuleLoadEx,
      eModuleUnload,   eGetFunction,
      eLaunch,         eLaunchEx,
      eStreamCreate,   eStreamDestroy,
      eStreamSync,     eStreamWait,
      eEventCreate,    eEventDestroy,
      eEventRecord,    eEventSync,
      eMemAllocAsync,  eMemAllocManaged,
      eMemFreeAsync,   eMemFree,
      eMemcpyAsync,    eMemcpyDtoH,
      eMemcpyHtoD,     eMemsetD32,
      eMemsetD16,      eHostAlloc,
      eFreeHost,       eHostRegister,
      eHostUnregister, eMemGetInfo,
      eAnnotate,       eTakeFinding,
  };
  return api;
}

bool isEmulated(const DriverApi &api) { return &api == &emulatedDriver(); }

int emu::currentDevice() {
  return contextStack.depth == 0
             ? -1
             : contextStack.ordinals[contextStack.depth - 1];
}

namespace emu {

JointEmuStats stats() {
  Device &d = device();
  Lock lock(d.mutex);
  JointEmuStats s = d.counters;
  for (auto &[base, a] : d.allocations)
    s.tracked_accesses += a->history.size();
  return s;
}

int64_t streamCopies(CUstream handle) {
  Device &d = device();
  Lock lock(d.mutex);
  Stream *s = d.stream(handle);
  return s ? static_cast<int64_t>(s->copies) : -1;
}

int countFromFirstWrite(const void *ptr) {
  Device &d = device();
  Lock lock(d.mutex);
  Allocation *a = d.find(ptr);
  if (!a || a->base != ptr || a->pinned || a->freed || a->uncounted)
    return -1;
  a->uncounted = true;
  d.counters.live_bytes -= a->bytes;
  return 0;
}

void resetPeak() {
  Device &d = device();
  Lock lock(d.mutex);
  d.counters.peak_bytes = d.counters.live_bytes;
}

void declareAccess(const void *ptr, uint64_t bytes, int mode) {
  declared.push_back({ptr, bytes, mode});
}

void synchronizeAll() {
  Device &d = device();
  std::vector<std::pair<Stream *, uint64_t>> waits;
  Clock clock;
  {
    Lock lock(d.mutex);
    for (auto &s : d.streams) {
      if (s->destroyed)
        continue;
      waits.emplace_back(s.get(), s->tickets());
      joinInto(clock, s->clock);
    }
    d.schedule.hostWaitsStream(0);
  }
  for (auto &[s, ticket] : waits)
    s->waitFor(ticket);
  Lock lock(d.mutex);
  d.hostSaw(clock);
}

CUresult submitLibraryCall(CUstream handle, const std::string &kind,
                           const std::vector<LibraryRange> &ranges,
                           std::function<void(unsigned workers)> work) {
  Device &d = device();
  Lock lock(d.mutex);
  Stream *s = d.stream(handle);
  if (!s)
    return badStream(d, handle, kind.c_str());
  std::string what = d.label(kind, s);
  std::vector<Touch> touches;
  for (const LibraryRange &r : ranges)
    if (CUresult result = d.resolve(r.ptr, r.bytes, true, r.role, what, r.read,
                                    r.write, touches))
      return result;
  ++d.counters.library_calls;
  unsigned workers = d.blockWorkers;
  d.submit(s, what, std::move(touches),
           [work = std::move(work), workers] { work(workers); });
  return CUDA_SUCCESS;
}

CUresult submitCollective(CUstream handle, const std::string &kind,
                          const std::vector<LibraryRange> &ranges,
                          std::function<void()> work) {
  Device &d = device();
  Lock lock(d.mutex);
  Stream *s = d.stream(handle);
  if (!s)
    return badStream(d, handle, kind.c_str());
  std::string what = d.label(kind, s);
  std::vector<Touch> touches;
  for (const LibraryRange &r : ranges)
    if (CUresult result = d.resolve(r.ptr, r.bytes, true, r.role, what, r.read,
                                    r.write, touches))
      return result;
  ++d.collectives;
  d.submit(s, what, std::move(touches), std::move(work));
  return CUDA_SUCCESS;
}

uint64_t collectives() {
  Device &d = device();
  Lock lock(d.mutex);
  return d.collectives;
}

void reportFinding(const std::string &message) {
  Device &d = device();
  Lock lock(d.mutex);
  ++d.counters.errors;
  d.report(message);
}

bool traceStart(double linkBytesPerSecond) {
  if (!(linkBytesPerSecond > 0) || !std::isfinite(linkBytesPerSecond))
    return false;
  Device &d = device();
  Lock lock(d.mutex);
  d.schedule.start(linkBytesPerSecond);
  return true;
}

bool setNodeSeconds(const char *node, double seconds) {
  if (!node || !(seconds >= 0) || !std::isfinite(seconds))
    return false;
  Device &d = device();
  Lock lock(d.mutex);
  d.schedule.setNodeSeconds(node, seconds);
  return true;
}

JointEmuTraceSummary traceSummary() {
  Device &d = device();
  Lock lock(d.mutex);
  if (!d.schedule.recording())
    return JointEmuTraceSummary();
  return d.schedule.summary();
}

bool writeTrace(const char *path, std::string *error) {
  std::string text;
  {
    Device &d = device();
    Lock lock(d.mutex);
    if (!d.schedule.recording()) {
      *error = "no trace to write: tracing was not started "
               "(joint_emu_trace_start or JOINT_EMU_TRACE)";
      return false;
    }
    text = d.schedule.json();
  }
  std::string where = path ? path : "";
  FILE *file = where.empty() ? nullptr : std::fopen(where.c_str(), "wb");
  bool ok =
      file && std::fwrite(text.data(), 1, text.size(), file) == text.size();
  if (file && std::fclose(file) != 0)
    ok = false;
  if (!ok)
    *error = "cannot write the trace to '" + where + "'";
  return ok;
}

} // namespace emu
} // namespace joint::cuda

//===- CApi.cpp - mgpu* and joint_* entry points --------------------------===//
//
// The C ABI of libjoint_cuda_runtime.so: the mgpu* functions MLIR's
// gpu-to-llvm and the GPU module translation call (signatures as MLIR 22
// declares them: e.g. mgpuModuleLoad(ptr, i64), mgpuMemAlloc(i64, ptr, i8),
// mgpuLaunchKernel(..., ptr params, ptr extra, i64 paramsCount)), and the
// joint_* functions of joint_cuda_runtime.h. Each is a thin locked call into
// the global `Runtime`; none of them aborts: failures set the status.
//
//===----------------------------------------------------------------------===//

#include "EmulatedDriver.h"
#include "Global.h"
#include "Nccl.h"
#include "joint_cuda_emulator.h"
#include "joint_cuda_runtime.h"

#include "mlir/ExecutionEngine/CRunnerUtils.h"

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace joint::cuda;

namespace {
std::recursive_mutex &globalMutex() {
  static std::recursive_mutex mutex;
  return mutex;
}
/// How many times this thread holds the global mutex.
thread_local unsigned globalDepth = 0;

/// Runtime::Unlocked's hooks: give the global lock up entirely while this
/// thread waits for others (rank threads), then take it back.
unsigned releaseGlobal() {
  unsigned depth = globalDepth;
  for (unsigned i = 0; i < depth; ++i)
    globalMutex().unlock();
  globalDepth = 0;
  return depth;
}
void reacquireGlobal(unsigned depth) {
  for (unsigned i = 0; i < depth; ++i)
    globalMutex().lock();
  globalDepth = depth;
}
} // namespace

GlobalLock::GlobalLock()
    : guard(globalMutex()), rt([]() -> Runtime & {
        // Never destroyed: at process exit the driver may already be torn
        // down; joint_runtime_shutdown releases resources explicitly.
        static Runtime *runtime = [] {
          bool unknown = false;
          auto *rt = new Runtime(selectedDriver(&unknown));
          rt->setLockHooks(releaseGlobal, reacquireGlobal);
          if (unknown)
            rt->recordError(kStatusInvalidArgument, "joint_runtime",
                            "JOINT_CUDA_DEVICE='" +
                                std::string(std::getenv("JOINT_CUDA_DEVICE")) +
                                "'",
                            " is neither 'cuda' nor 'emulated'; using libcuda");
          return rt;
        }();
        return *runtime;
      }()) {
  ++globalDepth;
}

GlobalLock::~GlobalLock() { --globalDepth; }

#define JOINT_EXPORT extern "C" __attribute__((visibility("default")))

//===----------------------------------------------------------------------===//
// mgpu*
//===----------------------------------------------------------------------===//

JOINT_EXPORT void *mgpuModuleLoad(void *data, size_t /*bytes*/) {
  return GlobalLock()->moduleLoad(data, "mgpuModuleLoad");
}

JOINT_EXPORT void *mgpuModuleLoadJIT(void *data, int optLevel) {
  return GlobalLock()->moduleLoadJIT(data, optLevel);
}

JOINT_EXPORT void mgpuModuleUnload(void *module) {
  GlobalLock()->moduleUnload(static_cast<CUmodule>(module));
}

JOINT_EXPORT void *mgpuModuleGetFunction(void *module, const char *name) {
  return GlobalLock()->moduleGetFunction(static_cast<CUmodule>(module), name);
}

JOINT_EXPORT void mgpuLaunchKernel(void *fn, intptr_t gridX, intptr_t gridY,
                                   intptr_t gridZ, intptr_t blockX,
                                   intptr_t blockY, intptr_t blockZ,
                                   int32_t smem, void *stream, void **params,
                                   void **extra, size_t /*paramsCount*/) {
  intptr_t grid[3] = {gridX, gridY, gridZ};
  intptr_t block[3] = {blockX, blockY, blockZ};
  GlobalLock()->launchKernel(static_cast<CUfunction>(fn), nullptr, grid, block,
                             smem, static_cast<CUstream>(stream), params,
                             extra);
}

JOINT_EXPORT void mgpuLaunchClusterKernel(void *fn, intptr_t clusterX,
                                          intptr_t clusterY, intptr_t clusterZ,
                                          intptr_t gridX, intptr_t gridY,
                                          intptr_t gridZ, intptr_t blockX,
                                          intptr_t blockY, intptr_t blockZ,
                                          int32_t smem, void *stream,
                                          void **params, void **extra) {
  intptr_t cluster[3] = {clusterX, clusterY, clusterZ};
  intptr_t grid[3] = {gridX, gridY, gridZ};
  intptr_t block[3] = {blockX, blockY, blockZ};
  GlobalLock()->launchKernel(static_cast<CUfunction>(fn), cluster, grid, block,
                             smem, static_cast<CUstream>(stream), params,
                             extra);
}

JOINT_EXPORT void *mgpuStreamCreate() { return GlobalLock()->streamCreate(); }

JOINT_EXPORT void mgpuStreamDestroy(void *stream) {
  GlobalLock()->streamDestroy(static_cast<CUstream>(stream));
}

JOINT_EXPORT void mgpuStreamSynchronize(void *stream) {
  GlobalLock()->streamSynchronize(static_cast<CUstream>(stream));
}

JOINT_EXPORT void mgpuStreamWaitEvent(void *stream, void *event) {
  GlobalLock()->streamWaitEvent(static_cast<CUstream>(stream),
                                static_cast<CUevent>(event));
}

JOINT_EXPORT void *mgpuEventCreate() { return GlobalLock()->eventCreate(); }

JOINT_EXPORT void mgpuEventDestroy(void *event) {
  GlobalLock()->eventDestroy(static_cast<CUevent>(event));
}

JOINT_EXPORT void mgpuEventRecord(void *event, void *stream) {
  GlobalLock()->eventRecord(static_cast<CUevent>(event),
                            static_cast<CUstream>(stream));
}

JOINT_EXPORT void mgpuEventSynchronize(void *event) {
  GlobalLock()->eventSynchronize(static_cast<CUevent>(event));
}

JOINT_EXPORT void *mgpuMemAlloc(uint64_t bytes, void *stream,
                                bool isHostShared) {
  return GlobalLock()->memAlloc(bytes, static_cast<CUstream>(stream),
                                isHostShared);
}

JOINT_EXPORT void mgpuMemFree(void *ptr, void *stream) {
  GlobalLock()->memFree(ptr, static_cast<CUstream>(stream));
}

JOINT_EXPORT void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream) {
  GlobalLock()->memcpy(dst, src, bytes, static_cast<CUstream>(stream));
}

JOINT_EXPORT void mgpuMemset32(void *dst, unsigned int value, size_t count,
                               void *stream) {
  GlobalLock()->memset32(dst, value, count, static_cast<CUstream>(stream));
}

JOINT_EXPORT void mgpuMemset16(void *dst, unsigned short value, size_t count,
                               void *stream) {
  GlobalLock()->memset16(dst, value, count, static_cast<CUstream>(stream));
}

JOINT_EXPORT void mgpuMemHostRegister(void *ptr, uint64_t bytes) {
  GlobalLock()->hostRegister(ptr, bytes);
}

JOINT_EXPORT void mgpuMemHostUnregister(void *ptr) {
  GlobalLock()->hostUnregister(ptr);
}

namespace {
/// Start and byte size of a dense ranked memref; false (and an error) when
/// its strides are not the row-major dense ones.
bool denseMemRef(Runtime &rt, const char *entry, int64_t rank,
                 StridedMemRefType<char, 1> *desc, int64_t elementBytes,
                 char **start, uint64_t *bytes) {
  // Ranked descriptors share the prefix {base, data, offset, sizes[rank],
  // strides[rank]}; sizes and strides are read through the rank-1 view.
  const int64_t *sizes = desc->sizes;
  const int64_t *strides = sizes + rank;
  int64_t expected = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    if (sizes[i] != 1 && strides[i] != expected) {
      rt.recordError(kStatusInvalidArgument, entry,
                     "memref is not dense (dimension " + std::to_string(i) +
                         " has stride " + std::to_string(strides[i]) +
                         ", expected " + std::to_string(expected) + ")");
      return false;
    }
    expected *= sizes[i];
  }
  *start = desc->data + desc->offset * elementBytes;
  *bytes = static_cast<uint64_t>(expected) * elementBytes;
  return true;
}
} // namespace

JOINT_EXPORT void mgpuMemHostRegisterMemRef(int64_t rank,
                                            StridedMemRefType<char, 1> *desc,
                                            int64_t elementBytes) {
  GlobalLock rt;
  char *start = nullptr;
  uint64_t bytes = 0;
  if (denseMemRef(*rt, "mgpuMemHostRegisterMemRef", rank, desc, elementBytes,
                  &start, &bytes))
    rt->hostRegister(start, bytes);
}

JOINT_EXPORT void mgpuMemHostUnregisterMemRef(int64_t rank,
                                              StridedMemRefType<char, 1> *desc,
                                              int64_t elementBytes) {
  GlobalLock()->hostUnregister(desc->data + desc->offset * elementBytes);
}

JOINT_EXPORT void mgpuSetDefaultDevice(int32_t device) {
  GlobalLock()->setDefaultDevice(device);
}

//===----------------------------------------------------------------------===//
// joint_runtime_* and joint_ao_*
//===----------------------------------------------------------------------===//

JOINT_EXPORT int32_t joint_runtime_status(void) {
  return GlobalLock()->status();
}

JOINT_EXPORT const char *joint_runtime_last_error(void) {
  // This thread's; the string lives until its next clear; callers copy it.
  return GlobalLock()->lastError().c_str();
}

JOINT_EXPORT void joint_runtime_clear_error(void) {
  GlobalLock()->clearError();
}

JOINT_EXPORT void joint_runtime_set_node(const char *name) {
  GlobalLock()->setNode(name);
}

JOINT_EXPORT void *joint_runtime_compute_stream(void) {
  return GlobalLock()->computeStream();
}

JOINT_EXPORT void *joint_runtime_transfer_stream(void) {
  return GlobalLock()->transferStream();
}

JOINT_EXPORT void joint_runtime_set_compute_stream(void *stream) {
  GlobalLock()->setComputeStream(static_cast<CUstream>(stream));
}

JOINT_EXPORT int32_t joint_runtime_synchronize(void) {
  return GlobalLock()->synchronize();
}

JOINT_EXPORT void joint_runtime_get_stats(JointRuntimeStats *stats) {
  GlobalLock rt;
  const DeviceMemoryStats &mem = rt->deviceMemory();
  const PinnedPoolStats &pin = rt->pinnedPool().stats();
  stats->live_bytes = mem.liveBytes;
  stats->peak_bytes = mem.peakBytes;
  stats->allocations = mem.allocations;
  stats->frees = mem.frees;
  stats->pinned_in_use_bytes = pin.inUseBytes;
  stats->pinned_cached_bytes = pin.cachedBytes;
  stats->pinned_peak_bytes = pin.peakBytes;
  stats->pinned_fresh_allocations = pin.freshAllocations;
  stats->pinned_reuses = pin.reuses;
  stats->live_transfers = rt->liveTransfers();
}

JOINT_EXPORT uint64_t joint_runtime_peak_bytes(void) {
  return GlobalLock()->deviceMemory().peakBytes;
}

JOINT_EXPORT void joint_runtime_reset_peak(void) {
  GlobalLock rt;
  rt->resetPeak();
  if (isEmulated(rt->driverApi()))
    emu::resetPeak();
}

JOINT_EXPORT int32_t joint_runtime_mem_info(uint64_t *free_bytes,
                                            uint64_t *total_bytes) {
  return GlobalLock()->memInfo(free_bytes, total_bytes);
}

namespace {
const NcclApi *emulatedNcclTable(std::string *) { return &emulatedNccl(); }

/// The collectives of the global runtime: the emulated NCCL on the emulated
/// device, libnccl.so.2 (loaded on first use) otherwise. Lock held.
Collectives &collectives(Runtime &rt) {
  static Collectives *c = new Collectives(
      rt, isEmulated(rt.driverApi()) ? emulatedNcclTable : loadNccl);
  return *c;
}
} // namespace

JOINT_EXPORT int32_t joint_runtime_shutdown(void) {
  GlobalLock rt;
  collectives(*rt).shutdown();
  shutdownBlas(*rt);
  shutdownDnn(*rt);
  return rt->shutdown();
}

JOINT_EXPORT void *joint_ao_offload(const void *src, uint64_t bytes,
                                    const char *node) {
  return GlobalLock()->offload(src, bytes, node);
}

JOINT_EXPORT int32_t joint_ao_wait(void *transfer) {
  return GlobalLock()->wait(static_cast<Transfer *>(transfer));
}

JOINT_EXPORT void *joint_ao_reload(void *transfer, const char *node) {
  return GlobalLock()->reload(static_cast<Transfer *>(transfer), node);
}

JOINT_EXPORT int32_t joint_ao_reload_into(void *transfer, void *dst,
                                          const char *node) {
  return GlobalLock()->reloadInto(static_cast<Transfer *>(transfer), dst, node);
}

JOINT_EXPORT int32_t joint_ao_release(void *transfer) {
  return GlobalLock()->release(static_cast<Transfer *>(transfer));
}

//===----------------------------------------------------------------------===//
// joint_nccl_*
//===----------------------------------------------------------------------===//

JOINT_EXPORT int joint_nccl_data_type(int dtype) {
  return ncclDataTypeOf(dtype);
}

JOINT_EXPORT int joint_nccl_get_unique_id(unsigned char *id) {
  GlobalLock rt;
  return collectives(*rt).uniqueId(id);
}

JOINT_EXPORT int joint_nccl_comm_init(const char *group, int nranks, int rank,
                                      const unsigned char *id) {
  GlobalLock rt;
  return collectives(*rt).commInit(group, nranks, rank, id);
}

JOINT_EXPORT int joint_nccl_comm_split(const char *parent, const char *group,
                                       int color, int key) {
  GlobalLock rt;
  return collectives(*rt).commSplit(parent, group, color, key);
}

JOINT_EXPORT int joint_nccl_comm_destroy_all(void) {
  GlobalLock rt;
  return collectives(*rt).destroyAll();
}

JOINT_EXPORT int joint_nccl_comm_size(const char *group) {
  GlobalLock rt;
  return collectives(*rt).commSize(group);
}

JOINT_EXPORT void *joint_nccl_all_gather(const char *group, const void *in,
                                         void *out, uint64_t sendcount,
                                         int dtype, const char *node) {
  GlobalLock rt;
  return collectives(*rt).allGather(group, in, out, sendcount, dtype, node);
}

JOINT_EXPORT void *joint_nccl_reduce_scatter(const char *group, const void *in,
                                             void *out, uint64_t recvcount,
                                             int dtype, int op,
                                             const char *node) {
  GlobalLock rt;
  return collectives(*rt).reduceScatter(group, in, out, recvcount, dtype, op,
                                        node);
}

JOINT_EXPORT void *joint_nccl_all_reduce(const char *group, const void *in,
                                         void *out, uint64_t count, int dtype,
                                         int op, const char *node) {
  GlobalLock rt;
  return collectives(*rt).allReduce(group, in, out, count, dtype, op, node);
}

JOINT_EXPORT void *joint_nccl_all_to_all(const char *group, const void *in,
                                         void *out, const int64_t *sendcounts,
                                         const int64_t *recvcounts, int nranks,
                                         int dtype, const char *node) {
  GlobalLock rt;
  return collectives(*rt).allToAll(group, in, out, sendcounts, recvcounts,
                                   nranks, dtype, node);
}

JOINT_EXPORT int joint_nccl_wait(void *handle) {
  GlobalLock rt;
  return collectives(*rt).wait(static_cast<CollectiveHandle *>(handle));
}

//===----------------------------------------------------------------------===//
// joint_emu_* (joint_cuda_emulator.h)
//===----------------------------------------------------------------------===//

JOINT_EXPORT int32_t joint_emu_active(void) {
  return isEmulated(GlobalLock()->driverApi()) ? 1 : 0;
}

JOINT_EXPORT void joint_emu_get_stats(JointEmuStats *stats) {
  *stats = JointEmuStats();
  if (joint_emu_active())
    *stats = emu::stats();
}

JOINT_EXPORT uint64_t joint_emu_collectives(void) {
  return joint_emu_active() ? emu::collectives() : 0;
}

JOINT_EXPORT int64_t joint_emu_stream_copies(void *stream) {
  if (!joint_emu_active())
    return -1;
  return emu::streamCopies(static_cast<CUstream>(stream));
}

JOINT_EXPORT int32_t joint_emu_count_from_first_write(void *ptr) {
  if (!joint_emu_active())
    return -1;
  return emu::countFromFirstWrite(ptr);
}

JOINT_EXPORT void joint_emu_declare_access(const void *ptr, uint64_t bytes,
                                           int32_t mode) {
  emu::declareAccess(ptr, bytes, mode);
}

JOINT_EXPORT int32_t joint_emu_trace_start(double link_bytes_per_second) {
  if (!joint_emu_active())
    return -1;
  return emu::traceStart(link_bytes_per_second) ? 0 : -1;
}

JOINT_EXPORT int32_t joint_emu_set_node_seconds(const char *node,
                                                double seconds) {
  if (!joint_emu_active())
    return -1;
  return emu::setNodeSeconds(node, seconds) ? 0 : -1;
}

JOINT_EXPORT void joint_emu_trace_summary(JointEmuTraceSummary *summary) {
  *summary = JointEmuTraceSummary();
  if (joint_emu_active())
    *summary = emu::traceSummary();
}

JOINT_EXPORT int32_t joint_emu_write_trace(const char *path) {
  if (!joint_emu_active()) {
    std::fprintf(stderr, "joint-cuda-emulator: joint_emu_write_trace: not "
                         "running on the emulated device\n");
    return -1;
  }
  std::string error;
  if (emu::writeTrace(path, &error))
    return 0;
  std::fprintf(stderr, "joint-cuda-emulator: joint_emu_write_trace: %s\n",
               error.c_str());
  return -1;
}

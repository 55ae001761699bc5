//===- RuntimeTest.cpp - Runtime unit tests over a fake driver ------------===//
//
// `joint-cuda-runtime-test CASE` runs one case against FakeDriver, prints the
// driver calls it made (one per line, symbolic handles) for FileCheck, checks
// counters and leaks itself, and exits non-zero on any failed expectation.
// Cases: pinned-pool, offload-protocol, device-memory, streams, errors,
// reload-into, collectives (Collectives over a recording NcclApi),
// modules-per-device, errors-per-thread.
//
//===----------------------------------------------------------------------===//

#include "Runtime.h"
#include "FakeDriver.h"
#include "Nccl.h"
#include "PinnedPool.h"
#include "joint_cuda_runtime.h"

#include <cstring>
#include <functional>
#include <future>
#include <iostream>
#include <map>
#include <string>
#include <thread>

using namespace joint::cuda;
using namespace joint::cuda::test;

namespace {

int failures = 0;

template <typename A, typename B>
void expectEq(const A &actual, const B &expected, const char *text, int line) {
  if (actual == expected)
    return;
  std::cout << "FAIL line " << line << ": " << text << " (got " << actual
            << ", want " << expected << ")\n";
  ++failures;
}

#define EXPECT_EQ(actual, expected)                                            \
  expectEq((actual), (expected), #actual " == " #expected, __LINE__)
#define EXPECT_TRUE(cond) expectEq(bool(cond), true, #cond, __LINE__)

/// Prints and clears the driver calls made since the last dump.
void dump(const char *label) {
  std::cout << "-- " << label << "\n";
  for (const std::string &line : fake().log)
    std::cout << line << "\n";
  fake().log.clear();
}

void failNext(const char *call, CUresult result, int nth = 1) {
  fake().failCall = call;
  fake().failNth = nth;
  fake().failResult = result;
  fake().seen = 0;
}

void noFailures() { fake().failCall.clear(); }

/// Nothing the runtime created is still alive in the fake driver.
void expectNoLeaks() {
  EXPECT_EQ(fake().contextDepth, 0);
  EXPECT_EQ(fake().retainedContexts, 0);
  EXPECT_EQ(fake().events.size(), 0u);
  EXPECT_EQ(fake().hostBuffers.size(), 0u);
  EXPECT_EQ(fake().devicePtrs.size(), 0u);
}

void pinnedPool() {
  PinnedPool pool(fakeDriver());
  void *a = nullptr, *b = nullptr, *c = nullptr, *d = nullptr;
  EXPECT_EQ(pool.acquire(4096, &a), CUDA_SUCCESS);
  EXPECT_EQ(pool.acquire(4096, &b), CUDA_SUCCESS);
  EXPECT_TRUE(a != b);
  EXPECT_TRUE(pool.release(a));
  // A free 4096-byte buffer does not serve an 8192-byte request.
  EXPECT_EQ(pool.acquire(8192, &c), CUDA_SUCCESS);
  EXPECT_EQ(pool.acquire(4096, &d), CUDA_SUCCESS);
  EXPECT_TRUE(d == a);
  dump("acquire");
  const PinnedPoolStats &s = pool.stats();
  EXPECT_EQ(s.freshAllocations, 3u);
  EXPECT_EQ(s.reuses, 1u);
  EXPECT_EQ(s.inUseBytes, 16384u);
  EXPECT_EQ(s.cachedBytes, 0u);
  EXPECT_EQ(s.peakBytes, 16384u);
  EXPECT_EQ(pool.sizeOf(c), 8192u);
  EXPECT_TRUE(pool.release(b));
  EXPECT_TRUE(pool.release(c));
  EXPECT_TRUE(pool.release(d));
  // Double release and foreign pointers are refused.
  EXPECT_TRUE(!pool.release(a));
  int local = 0;
  EXPECT_TRUE(!pool.release(&local));
  EXPECT_EQ(s.inUseBytes, 0u);
  EXPECT_EQ(s.cachedBytes, 16384u);
  // Reuse after release, both sizes, no driver call.
  EXPECT_EQ(pool.acquire(8192, &c), CUDA_SUCCESS);
  EXPECT_EQ(pool.acquire(4096, &b), CUDA_SUCCESS);
  EXPECT_EQ(s.freshAllocations, 3u);
  EXPECT_EQ(s.reuses, 3u);
  dump("reuse");
  failNext("cuMemHostAlloc", CUDA_ERROR_OUT_OF_MEMORY);
  void *e = &local;
  EXPECT_EQ(pool.acquire(1 << 20, &e), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_TRUE(e == nullptr);
  EXPECT_EQ(pool.acquire(0, &e), CUDA_ERROR_INVALID_VALUE);
  noFailures();
  EXPECT_EQ(s.freshAllocations, 3u);
  EXPECT_EQ(s.inUseBytes, 12288u);
  dump("failed");
  EXPECT_TRUE(pool.release(b));
  EXPECT_TRUE(pool.release(c));
  EXPECT_EQ(pool.trim(), CUDA_SUCCESS);
  dump("trim");
  EXPECT_EQ(s.cachedBytes, 0u);
  EXPECT_EQ(s.peakBytes, 16384u);
  EXPECT_EQ(fake().hostBuffers.size(), 0u);
}

void offloadProtocol() {
  {
    Runtime rt(fakeDriver());
    void *src = rt.memAlloc(1 << 20, nullptr, false);
    dump("alloc");
    Transfer *t = rt.offload(src, 1 << 20, "relu_3");
    EXPECT_TRUE(t != nullptr);
    dump("offload");
    EXPECT_EQ(rt.wait(t), 0);
    rt.memFree(src, nullptr);
    dump("wait");
    void *back = rt.reload(t, "relu_3_reload");
    EXPECT_TRUE(back != nullptr);
    dump("reload");
    EXPECT_EQ(rt.wait(t), 0);
    EXPECT_EQ(rt.release(t), 0);
    dump("wait-release");
    // Same size again: the pinned buffer and both events are reused.
    Transfer *t2 = rt.offload(back, 1 << 20, "relu_3");
    dump("second-offload");
    EXPECT_EQ(rt.pinnedPool().stats().freshAllocations, 1u);
    EXPECT_EQ(rt.pinnedPool().stats().reuses, 1u);
    EXPECT_EQ(rt.liveTransfers(), 1u);
    // Releasing a transfer that was never reloaded returns its buffer.
    EXPECT_EQ(rt.release(t2), 0);
    EXPECT_EQ(rt.pinnedPool().stats().inUseBytes, 0u);
    EXPECT_EQ(rt.pooledEvents(), 2u);
    rt.memFree(back, nullptr);
    EXPECT_EQ(rt.deviceMemory().liveBytes, 0u);
    // The source was freed after the forward wait, before the reload.
    EXPECT_EQ(rt.deviceMemory().peakBytes, uint64_t(1) << 20);
    EXPECT_EQ(rt.status(), 0);
    dump("free");
    EXPECT_EQ(rt.shutdown(), 0);
    dump("shutdown");
  }
  expectNoLeaks();
  EXPECT_EQ(fake().streams.size(), 0u);
}

/// The sequence the lowered step emits (joint-gpu-offload): the reload's
/// destination is the step's own stream-ordered allocation, filled by
/// reloadInto; errors leave that allocation to the step, which frees it.
void reloadInto() {
  {
    Runtime rt(fakeDriver());
    void *src = rt.memAlloc(4096, nullptr, false);
    Transfer *t = rt.offload(src, 4096, "relu_3");
    EXPECT_EQ(rt.wait(t), 0);
    rt.memFree(src, nullptr);
    dump("offload-wait-free");
    void *dst = rt.memAlloc(4096, nullptr, false);
    EXPECT_EQ(rt.reloadInto(t, dst, "relu_3_reload"), 0);
    dump("reload-into");
    EXPECT_EQ(rt.wait(t), 0);
    EXPECT_EQ(rt.release(t), 0);
    dump("wait-release");
    EXPECT_EQ(rt.pinnedPool().stats().inUseBytes, 0u);
    EXPECT_EQ(rt.liveTransfers(), 0u);
    EXPECT_EQ(rt.status(), 0);

    // A second reload of one transfer and a null destination are refused
    // before any driver call.
    t = rt.offload(dst, 4096, "relu_4");
    EXPECT_EQ(rt.reloadInto(t, nullptr, "relu_4_reload"), -1);
    std::cout << "null error " << rt.lastError() << "\n";
    rt.clearError();
    EXPECT_EQ(rt.reloadInto(t, dst, "relu_4_reload"), 0);
    EXPECT_EQ(rt.reloadInto(t, dst, "relu_4_reload"), -1);
    std::cout << "twice error " << rt.lastError() << "\n";
    rt.clearError();
    EXPECT_EQ(rt.release(t), 0);
    dump("refused");

    // A failed H2D copy names the call and the node, keeps the pinned
    // buffer with the transfer, and frees nothing of the caller's.
    t = rt.offload(dst, 4096, "relu_5");
    failNext("cuMemcpyHtoDAsync", CUDA_ERROR_ILLEGAL_ADDRESS);
    EXPECT_EQ(rt.reloadInto(t, dst, "relu_5_reload"), 700);
    std::cout << "copy status " << rt.status() << "\n";
    std::cout << "copy error " << rt.lastError() << "\n";
    dump("failed-copy");
    EXPECT_EQ(rt.pinnedPool().stats().inUseBytes, 4096u);
    EXPECT_EQ(rt.release(t), 0);
    EXPECT_EQ(rt.pinnedPool().stats().inUseBytes, 0u);
    rt.clearError();
    rt.memFree(dst, nullptr);
    EXPECT_EQ(rt.deviceMemory().liveBytes, 0u);
    EXPECT_EQ(rt.shutdown(), 0);
  }
  expectNoLeaks();
}

void deviceMemory() {
  {
    Runtime rt(fakeDriver());
    void *p = rt.memAlloc(100, nullptr, false);
    void *q = rt.memAlloc(200, nullptr, false);
    rt.memFree(p, nullptr);
    void *r = rt.memAlloc(50, nullptr, false);
    EXPECT_EQ(rt.deviceMemory().liveBytes, 250u);
    EXPECT_EQ(rt.deviceMemory().peakBytes, 300u);
    EXPECT_EQ(rt.deviceMemory().allocations, 3u);
    EXPECT_EQ(rt.deviceMemory().frees, 1u);
    rt.resetPeak();
    EXPECT_EQ(rt.deviceMemory().peakBytes, 250u);
    // Zero bytes: null, no driver call; freeing null: no driver call.
    EXPECT_TRUE(rt.memAlloc(0, nullptr, false) == nullptr);
    rt.memFree(nullptr, nullptr);
    void *m = rt.memAlloc(64, nullptr, true);
    rt.memcpy(q, r, 50, nullptr);
    rt.memset32(q, 7, 50, nullptr);
    rt.memset16(r, 3, 25, nullptr);
    rt.memFree(m, nullptr);
    rt.memFree(q, nullptr);
    rt.memFree(r, nullptr);
    EXPECT_EQ(rt.deviceMemory().liveBytes, 0u);
    EXPECT_EQ(rt.deviceMemory().peakBytes, 314u);
    uint64_t freeBytes = 0, totalBytes = 0;
    EXPECT_EQ(rt.memInfo(&freeBytes, &totalBytes), 0);
    EXPECT_EQ(freeBytes, uint64_t(1) << 30);
    EXPECT_EQ(totalBytes, uint64_t(1) << 31);
    EXPECT_EQ(rt.status(), 0);
    dump("alloc-free");
    // A pointer this runtime did not allocate is refused without a call.
    rt.memFree(q, nullptr);
    std::cout << "status " << rt.status() << "\n";
    std::cout << "error " << rt.lastError() << "\n";
    dump("unknown-free");
    rt.shutdown();
  }
  expectNoLeaks();
}

void streams() {
  CUstream external = nullptr;
  {
    Runtime rt(fakeDriver());
    CUstream s = rt.streamCreate();
    EXPECT_TRUE(s != nullptr);
    EXPECT_TRUE(rt.streamCreate() == s);
    EXPECT_TRUE(rt.computeStream() == s);
    rt.streamDestroy(s);
    rt.streamSynchronize(nullptr);
    CUevent e = rt.eventCreate();
    rt.eventRecord(e, nullptr);
    rt.streamWaitEvent(s, e);
    rt.eventSynchronize(e);
    rt.eventDestroy(e);
    dump("compute");
    CUmodule mod = rt.moduleLoad("cubin", "mgpuModuleLoad");
    CUfunction fn = rt.moduleGetFunction(mod, "main_kernel");
    intptr_t grid[3] = {2, 1, 1}, block[3] = {128, 1, 1},
             cluster[3] = {2, 1, 1};
    rt.launchKernel(fn, nullptr, grid, block, 0, nullptr, nullptr, nullptr);
    rt.launchKernel(fn, cluster, grid, block, 0, s, nullptr, nullptr);
    rt.moduleUnload(mod);
    dump("launch");
    // A borrowed compute stream (torch's) replaces the owned one, which is
    // destroyed; the borrowed one is never destroyed.
    EXPECT_EQ(fakeDriver().streamCreate(&external, 0), CUDA_SUCCESS);
    rt.setComputeStream(external);
    EXPECT_TRUE(rt.streamCreate() == external);
    rt.streamSynchronize(nullptr);
    EXPECT_EQ(rt.synchronize(), 0);
    dump("borrowed");
    EXPECT_EQ(rt.shutdown(), 0);
    dump("shutdown");
  }
  expectNoLeaks();
  EXPECT_EQ(fake().streams.size(), 1u);
  EXPECT_EQ(nameOf(external), "s2");
}

void errors() {
  {
    Runtime rt(fakeDriver());
    rt.setNode("mm_3");
    CUmodule mod = rt.moduleLoad("cubin", "mgpuModuleLoad");
    CUfunction fn = rt.moduleGetFunction(mod, "main_kernel");
    intptr_t grid[3] = {2, 1, 1}, block[3] = {128, 1, 1};
    fake().log.clear();
    failNext("cuLaunchKernel", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 0);
    rt.launchKernel(fn, nullptr, grid, block, 0, nullptr, nullptr, nullptr);
    std::cout << "launch status " << rt.status() << "\n";
    std::cout << "launch error " << rt.lastError() << "\n";
    // The first failure is kept; later ones are counted.
    rt.setNode("mm_4");
    rt.launchKernel(fn, nullptr, grid, block, 0, nullptr, nullptr, nullptr);
    EXPECT_EQ(rt.errorCount(), 2u);
    std::cout << "kept error " << rt.lastError() << "\n";
    rt.clearError();
    EXPECT_EQ(rt.status(), 0);
    EXPECT_EQ(rt.lastError(), "");
    noFailures();
    grid[0] = 0;
    rt.launchKernel(fn, nullptr, grid, block, 0, nullptr, nullptr, nullptr);
    std::cout << "dims status " << rt.status() << "\n";
    std::cout << "dims error " << rt.lastError() << "\n";
    rt.clearError();
    dump("launch");

    // A failed D2H: no handle, the pinned buffer and events go back to
    // their pools, the status names the call and the node.
    void *src = rt.memAlloc(4096, nullptr, false);
    failNext("cuMemcpyDtoHAsync", CUDA_ERROR_ILLEGAL_ADDRESS);
    Transfer *t = rt.offload(src, 4096, "relu_3");
    EXPECT_TRUE(t == nullptr);
    std::cout << "offload status " << rt.status() << "\n";
    std::cout << "offload error " << rt.lastError() << "\n";
    EXPECT_EQ(rt.liveTransfers(), 0u);
    EXPECT_EQ(rt.pinnedPool().stats().inUseBytes, 0u);
    EXPECT_EQ(rt.pinnedPool().stats().cachedBytes, 4096u);
    EXPECT_EQ(rt.pooledEvents(), 2u);
    rt.clearError();
    dump("offload");

    // A failed H2D: no pointer, the device allocation is freed again.
    noFailures();
    t = rt.offload(src, 4096, "relu_3");
    failNext("cuMemcpyHtoDAsync", CUDA_ERROR_ILLEGAL_ADDRESS);
    EXPECT_TRUE(rt.reload(t, "relu_3_reload") == nullptr);
    std::cout << "reload error " << rt.lastError() << "\n";
    EXPECT_EQ(rt.deviceMemory().liveBytes, 4096u);
    rt.clearError();
    noFailures();
    EXPECT_EQ(rt.wait(nullptr), kStatusInvalidArgument);
    std::cout << "wait error " << rt.lastError() << "\n";
    rt.clearError();
    EXPECT_EQ(rt.release(t), 0);
    rt.memFree(src, nullptr);
    dump("reload");
    EXPECT_EQ(rt.shutdown(), 0);
    fake().log.clear();
  }
  expectNoLeaks();
  {
    // No driver: every entry point fails at cuInit and says so.
    Runtime rt(fakeDriver());
    failNext("cuInit", CUDA_ERROR_NO_DEVICE, 0);
    EXPECT_TRUE(rt.streamCreate() == nullptr);
    std::cout << "init error " << rt.lastError() << "\n";
    rt.clearError();
    EXPECT_TRUE(rt.memAlloc(16, nullptr, false) == nullptr);
    std::cout << "init error " << rt.lastError() << "\n";
    EXPECT_EQ(rt.deviceMemory().liveBytes, 0u);
    noFailures();
    dump("init");
  }
}

//===-- A recording NcclApi ----------------------------------------------===//

int fakeComms = 0;
ncclResult_t failNccl = ncclSuccess; ///< the next collective's result

void logNccl(const std::string &line) { fake().log.push_back(line); }
std::string commName(ncclComm_t comm) {
  return "c" + std::to_string(reinterpret_cast<intptr_t>(comm));
}
ncclResult_t fGetUniqueId(ncclUniqueId *id) {
  std::memset(id->internal, 7, sizeof(id->internal));
  logNccl("ncclGetUniqueId()");
  return ncclSuccess;
}
ncclResult_t fCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id,
                           int rank) {
  *comm = reinterpret_cast<ncclComm_t>(static_cast<intptr_t>(++fakeComms));
  logNccl("ncclCommInitRank(" + std::to_string(nranks) + ", id " +
          std::to_string(id.internal[0]) + ", rank " + std::to_string(rank) +
          ") = " + commName(*comm));
  return ncclSuccess;
}
ncclResult_t fCommSplit(ncclComm_t comm, int color, int key,
                        ncclComm_t *newcomm, ncclConfig_t *) {
  *newcomm =
      color < 0
          ? nullptr
          : reinterpret_cast<ncclComm_t>(static_cast<intptr_t>(++fakeComms));
  logNccl("ncclCommSplit(" + commName(comm) + ", color " +
          std::to_string(color) + ", key " + std::to_string(key) +
          ") = " + (*newcomm ? commName(*newcomm) : std::string("null")));
  return ncclSuccess;
}
ncclResult_t fCommDestroy(ncclComm_t comm) {
  logNccl("ncclCommDestroy(" + commName(comm) + ")");
  return ncclSuccess;
}
ncclResult_t fCommCount(const ncclComm_t, int *count) {
  *count = 2;
  return ncclSuccess;
}
const char *fErrorString(ncclResult_t r) {
  return r == ncclInvalidArgument ? "invalid argument" : "other";
}
const char *fLastError(ncclComm_t) { return "peer 1 sent garbage"; }
ncclResult_t collective(const std::string &line) {
  logNccl(line);
  ncclResult_t r = failNccl;
  failNccl = ncclSuccess;
  return r;
}
std::string args(const void *a, const void *b, size_t count,
                 ncclDataType_t type, ncclComm_t comm, cudaStream_t s) {
  return nameOfDevice(reinterpret_cast<CUdeviceptr>(a)) + ", " +
         nameOfDevice(reinterpret_cast<CUdeviceptr>(b)) + ", " +
         std::to_string(count) + ", type " + std::to_string(type) + ", " +
         commName(comm) + ", " + nameOf(s);
}
ncclResult_t fAllGather(const void *a, void *b, size_t n, ncclDataType_t t,
                        ncclComm_t c, cudaStream_t s) {
  return collective("ncclAllGather(" + args(a, b, n, t, c, s) + ")");
}
ncclResult_t fReduceScatter(const void *a, void *b, size_t n, ncclDataType_t t,
                            ncclRedOp_t op, ncclComm_t c, cudaStream_t s) {
  return collective("ncclReduceScatter(" + args(a, b, n, t, c, s) + ", op " +
                    std::to_string(op) + ")");
}
ncclResult_t fAllReduce(const void *a, void *b, size_t n, ncclDataType_t t,
                        ncclRedOp_t op, ncclComm_t c, cudaStream_t s) {
  return collective("ncclAllReduce(" + args(a, b, n, t, c, s) + ", op " +
                    std::to_string(op) + ")");
}
ncclResult_t fSend(const void *a, size_t n, ncclDataType_t t, int peer,
                   ncclComm_t c, cudaStream_t s) {
  return collective("ncclSend(" + args(a, nullptr, n, t, c, s) + ", peer " +
                    std::to_string(peer) + ")");
}
ncclResult_t fRecv(void *b, size_t n, ncclDataType_t t, int peer, ncclComm_t c,
                   cudaStream_t s) {
  return collective("ncclRecv(" + args(nullptr, b, n, t, c, s) + ", peer " +
                    std::to_string(peer) + ")");
}
ncclResult_t fGroupStart() { return collective("ncclGroupStart()"); }
ncclResult_t fGroupEnd() { return collective("ncclGroupEnd()"); }

const NcclApi kFakeNccl = {
    "fake NCCL", fGetUniqueId, fCommInitRank, fCommSplit,  fCommDestroy,
    fCommCount,  fErrorString, fLastError,    fAllGather,  fReduceScatter,
    fAllReduce,  fSend,        fRecv,         fGroupStart, fGroupEnd};

const NcclApi *fakeNccl(std::string *) { return &kFakeNccl; }
const NcclApi *missingNccl(std::string *error) {
  *error = "cannot load libnccl.so.2: not here";
  return nullptr;
}

/// The collectives' protocol on the driver: the communication stream (s2)
/// waits on an event of the compute stream (s1), the NCCL call runs on s2,
/// an event is recorded there, and joint_nccl_wait makes s1 wait on it;
/// all_to_all is a group of sends and receives; errors name the group and
/// the node.
void collectivesProtocol() {
  {
    Runtime rt(fakeDriver());
    Collectives nccl(rt, fakeNccl);
    unsigned char id[NCCL_UNIQUE_ID_BYTES];
    EXPECT_EQ(nccl.uniqueId(id), 0);
    EXPECT_EQ(nccl.commInit("world", 2, 0, id), 0);
    EXPECT_EQ(nccl.commSplit("world", "tp", 0, 0), 0);
    EXPECT_EQ(nccl.commSplit("world", "none", -1, 0), 0);
    void *in = rt.memAlloc(64, nullptr, false);
    void *out = rt.memAlloc(128, nullptr, false);
    dump("init");
    CollectiveHandle *h =
        nccl.allGather("tp", in, out, 16, JOINT_NCCL_DTYPE_BF16, "ag_1");
    EXPECT_TRUE(h != nullptr);
    dump("all_gather");
    EXPECT_EQ(nccl.wait(h), 0);
    dump("wait");
    h = nccl.reduceScatter("tp", out, in, 16, JOINT_NCCL_DTYPE_F32,
                           JOINT_REDUCE_AVG, "rs_2");
    EXPECT_EQ(nccl.wait(h), 0);
    h = nccl.allReduce("world", in, in, 16, JOINT_NCCL_DTYPE_I64,
                       JOINT_REDUCE_MAX, "ar_3");
    EXPECT_EQ(nccl.wait(h), 0);
    dump("reduce_scatter-all_reduce");
    int64_t sends[2] = {3, 1}, recvs[2] = {2, 0};
    h = nccl.allToAll("tp", in, out, sends, recvs, 2, JOINT_NCCL_DTYPE_F32,
                      "a2a_4");
    EXPECT_EQ(nccl.wait(h), 0);
    dump("all_to_all");
    EXPECT_EQ(rt.status(), 0);
    EXPECT_EQ(nccl.liveHandles(), 0u);
    EXPECT_TRUE(nccl.allGather("none", in, out, 1, 0, "ag_5") == nullptr);
    std::cout << "unknown: " << rt.lastError() << "\n";
    rt.clearError();
    failNccl = ncclInvalidArgument;
    EXPECT_TRUE(nccl.allReduce("tp", in, out, 4, JOINT_NCCL_DTYPE_F32,
                               JOINT_REDUCE_SUM, "ar_6") == nullptr);
    std::cout << "failed: " << rt.status() << " " << rt.lastError() << "\n";
    rt.clearError();
    dump("failed");
    rt.memFree(in, nullptr);
    rt.memFree(out, nullptr);
    EXPECT_EQ(nccl.shutdown(), 0);
    EXPECT_EQ(rt.shutdown(), 0);
    dump("shutdown");
    Collectives missing(rt, missingNccl);
    EXPECT_EQ(missing.uniqueId(id), kStatusCollectiveFailure);
    std::cout << "missing: " << rt.lastError() << "\n";
    rt.clearError();
  }
  expectNoLeaks();
  EXPECT_EQ(fake().streams.size(), 0u);
}

/// Where the fake's live modules and functions were made.
void dumpModules() {
  for (auto &[handle, name] : fake().modules)
    std::cout << name << " in " << nameOfContext(fake().moduleContext[handle])
              << "\n";
  for (auto &[handle, name] : fake().functions)
    std::cout << name << " of " << nameOf(fake().functionModule[handle])
              << "\n";
}

/// A module loaded on device 0 and launched from a thread on device 1 is
/// loaded once in each device's primary context (device 1's at its first
/// launch there); launches use that device's function (the fake refuses a
/// function of another context), and unload unloads every device's module.
void modulesPerDevice() {
  {
    Runtime rt(fakeDriver());
    rt.setNode("mm_3");
    CUmodule mod = rt.moduleLoad("cubin", "mgpuModuleLoad");
    CUfunction fn = rt.moduleGetFunction(mod, "main_kernel");
    EXPECT_TRUE(fn != nullptr);
    EXPECT_TRUE(rt.moduleGetFunction(mod, "main_kernel") == fn);
    intptr_t grid[3] = {2, 1, 1}, block[3] = {128, 1, 1},
             cluster[3] = {2, 1, 1};
    rt.launchKernel(fn, nullptr, grid, block, 0, nullptr, nullptr, nullptr);
    dump("device-0");
    std::thread rank1([&] {
      rt.setDefaultDevice(1);
      rt.setNode("mm_3");
      // A function handle obtained on device 0, launched on device 1.
      rt.launchKernel(fn, nullptr, grid, block, 0, nullptr, nullptr, nullptr);
      rt.launchKernel(fn, cluster, grid, block, 0, nullptr, nullptr, nullptr);
      EXPECT_TRUE(rt.moduleGetFunction(mod, "main_kernel") == fn);
      EXPECT_EQ(rt.status(), 0);
    });
    rank1.join();
    dump("device-1");
    dumpModules();
    // Back on device 0: its own function, nothing loaded again.
    rt.launchKernel(fn, nullptr, grid, block, 0, nullptr, nullptr, nullptr);
    dump("device-0-again");
    // A failed lazy load names the kernel, the device and the node.
    std::thread rank2([&] {
      rt.setDefaultDevice(2);
      rt.setNode("mm_4");
      failNext("cuModuleLoadData", CUDA_ERROR_INVALID_IMAGE);
      rt.launchKernel(fn, nullptr, grid, block, 0, nullptr, nullptr, nullptr);
      std::cout << "lazy load error " << rt.lastError() << "\n";
      rt.clearError();
      noFailures();
    });
    rank2.join();
    dump("device-2");
    rt.moduleUnload(mod);
    dump("unload");
    EXPECT_EQ(fake().modules.size(), 0u);
    EXPECT_EQ(rt.status(), 0);
    EXPECT_EQ(rt.shutdown(), 0);
  }
  expectNoLeaks();
}

/// The error state is per thread: thread A fails and clears nothing, thread
/// B clears; A still sees its failure, B sees none. When A exits with its
/// failure uncleared, the failure is handed to the process: a thread with a
/// clean state (here the main thread) sees it until it clears.
void errorsPerThread() {
  Runtime rt(fakeDriver());
  std::promise<void> failed, cleared;
  std::thread a([&] {
    rt.setNode("rank_0");
    failNext("cuInit", CUDA_ERROR_NO_DEVICE, 0);
    EXPECT_TRUE(rt.streamCreate() == nullptr);
    noFailures();
    failed.set_value();
    cleared.get_future().wait();
    EXPECT_EQ(rt.status(), CUDA_ERROR_NO_DEVICE);
    EXPECT_EQ(rt.errorCount(), 1u);
    std::cout << "A after B cleared: " << rt.status() << " " << rt.lastError()
              << "\n";
  });
  std::thread b([&] {
    failed.get_future().wait();
    rt.setNode("rank_1");
    rt.recordError(kStatusInvalidArgument, "joint_test", "B's own failure");
    EXPECT_EQ(rt.status(), kStatusInvalidArgument);
    rt.clearError();
    EXPECT_EQ(rt.status(), 0);
    EXPECT_EQ(rt.lastError(), "");
    std::cout << "B after clearing: " << rt.status() << "\n";
    cleared.set_value();
  });
  b.join();
  a.join();
  std::cout << "main after A exited: " << rt.status() << " " << rt.lastError()
            << "\n";
  EXPECT_EQ(rt.errorCount(), 1u);
  rt.clearError();
  EXPECT_EQ(rt.status(), 0);
  EXPECT_EQ(rt.errorCount(), 0u);
  // A thread's own failure hides nothing handed over, and is seen first.
  rt.recordError(kStatusInvalidArgument, "joint_test", "main's failure");
  std::cout << "main own: " << rt.lastError() << "\n";
  rt.clearError();
  dump("calls");
}

} // namespace

int main(int argc, char **argv) {
  std::map<std::string, std::function<void()>> cases = {
      {"pinned-pool", pinnedPool},
      {"offload-protocol", offloadProtocol},
      {"device-memory", deviceMemory},
      {"streams", streams},
      {"errors", errors},
      {"reload-into", reloadInto},
      {"collectives", collectivesProtocol},
      {"modules-per-device", modulesPerDevice},
      {"errors-per-thread", errorsPerThread},
  };
  if (argc != 2 || !cases.count(argv[1])) {
    std::cerr << "usage: joint-cuda-runtime-test "
                 "pinned-pool|offload-protocol|device-memory|streams|errors|"
                 "reload-into|collectives|modules-per-device|"
                 "errors-per-thread\n";
    return 2;
  }
  resetFake();
  cases[argv[1]]();
  std::cout << (failures ? "FAILED " : "PASSED ") << argv[1] << "\n";
  return failures ? 1 : 0;
}

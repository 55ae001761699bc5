//===- RuntimeTest.cpp - Runtime unit tests over a fake driver ------------===//
//
// `joint-cuda-runtime-test CASE` runs one case against FakeDriver, prints the
// driver calls it made (one per line, symbolic handles) for FileCheck, checks
// counters and leaks itself, and exits non-zero on any failed expectation.
// Cases: pinned-pool, offload-protocol, device-memory, streams, errors.
//
//===----------------------------------------------------------------------===//

#include "Runtime.h"
#include "FakeDriver.h"
#include "PinnedPool.h"

#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <string>

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

} // namespace

int main(int argc, char **argv) {
  std::map<std::string, std::function<void()>> cases = {
      {"pinned-pool", pinnedPool},
      {"offload-protocol", offloadProtocol},
      {"device-memory", deviceMemory},
      {"streams", streams},
      {"errors", errors},
      {"reload-into", reloadInto},
  };
  if (argc != 2 || !cases.count(argv[1])) {
    std::cerr << "usage: joint-cuda-runtime-test "
                 "pinned-pool|offload-protocol|device-memory|streams|errors|"
                 "reload-into\n";
    return 2;
  }
  resetFake();
  cases[argv[1]]();
  std::cout << (failures ? "FAILED " : "PASSED ") << argv[1] << "\n";
  return failures ? 1 : 0;
}

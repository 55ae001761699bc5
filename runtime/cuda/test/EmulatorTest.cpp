//===- EmulatorTest.cpp - Runtime tests on the emulated device ------------===//
//
// `joint-cuda-emulator-test CASE` runs the runtime core over
// `emulatedDriver()` with host C++ functions as kernels (a kernel table as
// joint_cuda_emulator.h lays it out), prints statuses, errors and values for
// FileCheck, checks numbers itself, and exits non-zero on any failed
// expectation. Cases: memory, streams, kernels, race-offload, race-free,
// use-after-free, declared, history, gemm, sdpa, library-race, trace.
//
//===----------------------------------------------------------------------===//

#include "EmulatedDriver.h"
#include "Libraries.h"
#include "Runtime.h"
#include "joint_cuda_runtime.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace joint::cuda;

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

/// Prints and clears the runtime's status and first error.
void report(Runtime &rt, const char *label) {
  std::cout << label << ": status " << rt.status() << ": " << rt.lastError()
            << "\n";
  rt.clearError();
}

//===----------------------------------------------------------------------===//
// Kernels (host functions, one call per block and thread)
//===----------------------------------------------------------------------===//

template <typename T>
T &arg(void **params, int i) {
  return *static_cast<T *>(params[i]);
}

uint64_t globalIndex(const JointEmuLaunch *l) {
  return uint64_t(l->block_idx[0]) * l->block_dim[0] + l->thread_idx[0];
}

/// y[i] = x[i] * factor for i < n.
void scaleKernel(void **params, const JointEmuLaunch *l) {
  auto *x = arg<const float *>(params, 0);
  auto *y = arg<float *>(params, 1);
  uint64_t n = arg<uint64_t>(params, 2);
  float factor = arg<float>(params, 3);
  uint64_t i = globalIndex(l);
  if (i < n)
    y[i] = x[i] * factor;
}

/// x[i] = value for i < n.
void fillKernel(void **params, const JointEmuLaunch *l) {
  auto *x = arg<float *>(params, 0);
  uint64_t n = arg<uint64_t>(params, 1);
  float value = arg<float>(params, 2);
  uint64_t i = globalIndex(l);
  if (i < n)
    x[i] = value;
}

/// out[0] = sum of x[0..n) (one thread).
void sumKernel(void **params, const JointEmuLaunch *) {
  auto *x = arg<const float *>(params, 0);
  auto *out = arg<float *>(params, 1);
  uint64_t n = arg<uint64_t>(params, 2);
  float sum = 0;
  for (uint64_t i = 0; i < n; ++i)
    sum += x[i];
  out[0] = sum;
}

/// Counts each (block, thread) id it sees: out[linear id] += 1, and checks
/// the dimensions it is given.
void idsKernel(void **params, const JointEmuLaunch *l) {
  auto *out = arg<std::atomic<int> *>(params, 0);
  const uint32_t *g = l->grid_dim, *b = l->block_dim;
  uint64_t blockId =
      l->block_idx[0] +
      uint64_t(g[0]) * (l->block_idx[1] + g[1] * l->block_idx[2]);
  uint64_t threadId =
      l->thread_idx[0] +
      uint64_t(b[0]) * (l->thread_idx[1] + b[1] * l->thread_idx[2]);
  out[blockId * b[0] * b[1] * b[2] + threadId].fetch_add(1);
}

std::atomic<int> flag{0};
std::atomic<int> sawFlag{0};

/// Waits (at most 5 s) for `flag`; records whether it came.
void spinKernel(void **, const JointEmuLaunch *) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!flag.load() && std::chrono::steady_clock::now() < until)
    std::this_thread::yield();
  sawFlag = flag.load();
}

void setFlagKernel(void **, const JointEmuLaunch *) { flag = 1; }

/// Sleeps 50 ms, then x[i] = i + 1 for i < n (one thread).
void slowWriteKernel(void **params, const JointEmuLaunch *) {
  auto *x = arg<float *>(params, 0);
  uint64_t n = arg<uint64_t>(params, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (uint64_t i = 0; i < n; ++i)
    x[i] = float(i + 1);
}

const JointEmuKernel kKernels[] = {
    {"scale", scaleKernel, "rw84", 0},
    {"fill", fillKernel, "w84", 0},
    {"overwrite", fillKernel, "p84", 0},
    {"sum", sumKernel, "rw8", 0},
    {"ids", idsKernel, "p", 0},
    {"spin", spinKernel, "", 0},
    {"set_flag", setFlagKernel, "", 0},
    {"slow_write", slowWriteKernel, "w8", 0},
    {"read", sumKernel, "rw8", 0},
    {"read_write", sumKernel, "pw8", 0},
    {"with_barrier", fillKernel, "w84", JOINT_EMU_KERNEL_USES_BARRIER},
};
const JointEmuModuleImage kImage = {
    JOINT_EMU_IMAGE_MAGIC, JOINT_EMU_IMAGE_VERSION,
    sizeof(kKernels) / sizeof(kKernels[0]), kKernels};

/// Loads the table once per runtime and launches kernels by name.
struct Kernels {
  Runtime &rt;
  CUmodule module;
  std::map<std::string, CUfunction> fns;

  explicit Kernels(Runtime &rt)
      : rt(rt), module(rt.moduleLoad(&kImage, "mgpuModuleLoad")) {}

  /// Launches `name` with `args` (pointers to the values) on `stream`.
  void launch(const char *name, std::vector<void *> args, intptr_t grid = 1,
              intptr_t block = 1, CUstream stream = nullptr) {
    CUfunction &fn = fns[name];
    if (!fn)
      fn = rt.moduleGetFunction(module, name);
    intptr_t g[3] = {grid, 1, 1}, b[3] = {block, 1, 1};
    rt.launchKernel(fn, nullptr, g, b, 0, stream, args.data(), nullptr);
  }
};

/// Device buffer of `n` floats set to `value` by the fill kernel.
float *filled(Runtime &rt, Kernels &k, uint64_t n, float value) {
  auto *p =
      static_cast<float *>(rt.memAlloc(n * sizeof(float), nullptr, false));
  k.launch("fill", {&p, &n, &value}, (n + 63) / 64, 64);
  return p;
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

void memory() {
  Runtime rt(emulatedDriver());
  rt.setNode("alloc_1");
  auto *p = static_cast<float *>(rt.memAlloc(4096, nullptr, false));
  rt.setNode("alloc_2");
  auto *q = static_cast<float *>(rt.memAlloc(8192, nullptr, false));
  JointEmuStats s = emu::stats();
  EXPECT_EQ(s.live_bytes, 12288u);
  EXPECT_EQ(s.peak_bytes, 12288u);
  EXPECT_EQ(s.allocations, 2u);
  // Fresh memory is poisoned too: uninitialised reads give NaN.
  EXPECT_EQ(rt.synchronize(), 0);
  EXPECT_TRUE(std::isnan(q[0]));

  // Host to device, device to device, memset, device to host.
  std::vector<float> host(2048);
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = float(i);
  rt.setNode("copy_3");
  rt.memcpy(q, host.data(), 8192, nullptr);
  rt.memcpy(p, q + 1024, 4096, nullptr);
  rt.memset32(q, 0x3f800000u, 1024, nullptr); // 1.0f
  std::vector<float> back(2048, -1.0f);
  rt.memcpy(back.data(), q, 8192, nullptr);
  std::vector<float> fromP(1024, -1.0f);
  rt.memcpy(fromP.data(), p, 4096, nullptr);
  EXPECT_EQ(rt.synchronize(), 0);
  EXPECT_EQ(back[0], 1.0f);
  EXPECT_EQ(back[1023], 1.0f);
  EXPECT_EQ(back[1024], 1024.0f);
  EXPECT_EQ(back[2047], 2047.0f);
  EXPECT_EQ(fromP[0], 1024.0f);
  EXPECT_EQ(fromP[1023], 2047.0f);
  EXPECT_EQ(emu::stats().copies, 4u);
  EXPECT_EQ(emu::stats().memsets, 1u);

  // Out-of-range copies and memsets are refused, naming the allocation.
  rt.setNode("copy_4");
  rt.memcpy(back.data(), p, 4100, nullptr);
  report(rt, "copy past the end");
  rt.memset16(q + 1024, 0, 4097, nullptr);
  report(rt, "memset past the end");
  int local = 0;
  rt.memset32(&local, 0, 1, nullptr);
  report(rt, "memset of host memory");
  EXPECT_EQ(emu::stats().copies, 4u);

  // Freed memory is poisoned (NaN) and quarantined, not reused at once.
  rt.setNode("free_5");
  rt.memFree(p, nullptr);
  EXPECT_EQ(emu::stats().live_bytes, 8192u);
  rt.setNode("alloc_6");
  void *again = rt.memAlloc(4096, nullptr, false);
  EXPECT_TRUE(again != p);
  EXPECT_EQ(rt.synchronize(), 0);
  EXPECT_TRUE(std::isnan(p[0]) && std::isnan(p[1023]));
  EXPECT_EQ(emu::stats().quarantined_bytes, 4096u);
  EXPECT_EQ(emu::stats().peak_bytes, 12288u);

  // A copy from freed memory runs (and reads the poison), and is reported.
  rt.setNode("copy_7");
  rt.memcpy(fromP.data(), p, 4096, nullptr);
  report(rt, "copy after free");
  EXPECT_EQ(rt.synchronize(), 0);
  EXPECT_TRUE(std::isnan(fromP[0]));

  // Double free, as the driver sees it (the runtime refuses it earlier).
  CUstream compute = rt.computeStream();
  rt.setNode("free_8");
  rt.check(
      rt.driverApi().memFreeAsync(reinterpret_cast<CUdeviceptr>(p), compute),
      "test", "cuMemFreeAsync");
  report(rt, "double free");
  rt.check(rt.driverApi().memFreeAsync(reinterpret_cast<CUdeviceptr>(q + 1),
                                       compute),
           "test", "cuMemFreeAsync");
  report(rt, "free inside an allocation");

  uint64_t freeBytes = 0, totalBytes = 0;
  EXPECT_EQ(rt.memInfo(&freeBytes, &totalBytes), 0);
  std::cout << "capacity " << totalBytes << " free " << freeBytes << "\n";
  EXPECT_EQ(totalBytes - freeBytes, emu::stats().live_bytes);
  // Past the capacity (JOINT_EMU_CAPACITY_MB).
  rt.setNode("alloc_9");
  EXPECT_TRUE(rt.memAlloc(totalBytes, nullptr, false) == nullptr);
  report(rt, "too large");

  rt.memFree(q, nullptr);
  rt.memFree(again, nullptr);
  s = emu::stats();
  EXPECT_EQ(s.live_bytes, 0u);
  EXPECT_EQ(s.allocations, 3u);
  EXPECT_EQ(s.frees, 3u);
  EXPECT_EQ(s.races, 0u);
  std::cout << "use after free " << s.use_after_frees << " errors " << s.errors
            << "\n";
  EXPECT_EQ(rt.shutdown(), 0);
}

void streams() {
  Runtime rt(emulatedDriver());
  Kernels k(rt);
  CUstream a = rt.computeStream();
  CUstream b = rt.transferStream();
  // Streams run concurrently: a kernel on a waits for a flag that a kernel
  // enqueued later on b sets.
  k.launch("spin", {}, 1, 1, a);
  k.launch("set_flag", {}, 1, 1, b);
  EXPECT_EQ(rt.synchronize(), 0);
  std::cout << "concurrent streams: " << (sawFlag ? "yes" : "no") << "\n";

  // An event recorded on a after a slow write; b waits for it on the
  // device, then copies: the copy sees the write.
  uint64_t n = 256;
  rt.setNode("slow_1");
  auto *x = static_cast<float *>(rt.memAlloc(n * sizeof(float), a, false));
  k.launch("slow_write", {&x, &n}, 1, 1, a);
  CUevent e = rt.eventCreate();
  rt.eventRecord(e, a);
  rt.streamWaitEvent(b, e);
  rt.setNode("copy_2");
  std::vector<float> host(n, 0.0f);
  rt.memcpy(host.data(), x, n * sizeof(float), b);
  rt.streamSynchronize(b);
  EXPECT_EQ(host[0], 1.0f);
  EXPECT_EQ(host[n - 1], float(n));
  EXPECT_EQ(rt.status(), 0);

  // eventSynchronize: the host sees the write once the event completed.
  float zero = 0.0f;
  k.launch("fill", {&x, &n, &zero}, 4, 64, a);
  k.launch("slow_write", {&x, &n}, 1, 1, a);
  rt.eventRecord(e, a);
  rt.eventSynchronize(e);
  EXPECT_EQ(x[n - 1], float(n));
  // A re-recorded event: a wait captures the latest record only.
  float seven = 7.0f;
  k.launch("fill", {&x, &n, &seven}, 4, 64, a);
  rt.eventRecord(e, a);
  rt.streamWaitEvent(b, e);
  rt.memcpy(host.data(), x, n * sizeof(float), b);
  rt.streamSynchronize(b);
  EXPECT_EQ(host[5], 7.0f);

  // Stream-ordered allocation and free on b, ordered after a by an event.
  rt.setNode("tmp_3");
  auto *tmp = static_cast<float *>(rt.memAlloc(n * sizeof(float), b, false));
  rt.memcpy(tmp, x, n * sizeof(float), b);
  rt.memFree(tmp, b);
  rt.eventDestroy(e);
  EXPECT_EQ(rt.synchronize(), 0);
  EXPECT_TRUE(std::isnan(tmp[0]));
  rt.memFree(x, a);
  JointEmuStats s = emu::stats();
  std::cout << "kernels " << s.kernel_launches << " copies " << s.copies
            << " races " << s.races << " live " << s.live_bytes << "\n";
  report(rt, "streams");
  EXPECT_EQ(rt.shutdown(), 0);
}

void kernels() {
  Runtime rt(emulatedDriver());
  Kernels k(rt);
  rt.setNode("scale_1");
  uint64_t n = 10;
  std::vector<float> host(n);
  for (uint64_t i = 0; i < n; ++i)
    host[i] = float(i);
  auto *x = static_cast<float *>(rt.memAlloc(n * 4, nullptr, false));
  auto *y = static_cast<float *>(rt.memAlloc(n * 4, nullptr, false));
  rt.memcpy(x, host.data(), n * 4, nullptr);
  float factor = 2.5f;
  // 3 blocks of 4 threads cover 10 elements; argument values are copied at
  // launch, so changing them afterwards changes nothing.
  k.launch("scale", {&x, &y, &n, &factor}, 3, 4);
  factor = 100.0f;
  std::vector<float> out(n, 0.0f);
  rt.memcpy(out.data(), y, n * 4, nullptr);
  EXPECT_EQ(rt.synchronize(), 0);
  for (uint64_t i = 0; i < n; ++i)
    EXPECT_EQ(out[i], 2.5f * float(i));

  // Every (block, thread) of a 3-D launch (8 blocks of 6 threads) runs
  // exactly once per launch.
  CUfunction ids = rt.moduleGetFunction(k.module, "ids");
  auto *counts = static_cast<std::atomic<int> *>(
      rt.memAlloc(48 * sizeof(int), nullptr, false));
  rt.memset32(counts, 0, 48, nullptr);
  intptr_t grid[3] = {2, 2, 2}, block[3] = {2, 1, 3};
  void *args[] = {&counts};
  rt.launchKernel(ids, nullptr, grid, block, 0, nullptr, args, nullptr);
  intptr_t cluster[3] = {2, 1, 1};
  rt.launchKernel(ids, cluster, grid, block, 0, nullptr, args, nullptr);
  EXPECT_EQ(rt.synchronize(), 0);
  int twice = 0;
  for (int i = 0; i < 48; ++i)
    twice += counts[i].load() == 2;
  std::cout << "ids seen twice " << twice << " of 48\n";

  // Refusals.
  rt.setNode("k_2");
  EXPECT_TRUE(rt.moduleGetFunction(k.module, "missing") == nullptr);
  report(rt, "unknown kernel");
  const char cubin[16] = "\x7f"
                         "ELF";
  EXPECT_TRUE(rt.moduleLoad(cubin, "mgpuModuleLoad") == nullptr);
  report(rt, "cubin");
  const JointEmuKernel bad[] = {{"bad_kinds", fillKernel, "wx", 0}};
  JointEmuModuleImage badImage = {JOINT_EMU_IMAGE_MAGIC,
                                  JOINT_EMU_IMAGE_VERSION, 1, bad};
  EXPECT_TRUE(rt.moduleLoad(&badImage, "mgpuModuleLoad") == nullptr);
  report(rt, "bad kinds");
  float one = 1.0f;
  k.launch("with_barrier", {&y, &n, &one});
  report(rt, "barrier");
  CUfunction fill = rt.moduleGetFunction(k.module, "fill");
  void *fillArgs[] = {&y, &n, &one};
  intptr_t g1[3] = {1, 1, 1}, b1[3] = {16, 1, 1};
  rt.launchKernel(fill, nullptr, g1, b1, 1024, nullptr, fillArgs, nullptr);
  report(rt, "shared memory");
  EXPECT_EQ(emu::stats().kernel_launches, 3u);
  rt.memFree(x, nullptr);
  rt.memFree(y, nullptr);
  rt.memFree(counts, nullptr);
  rt.moduleUnload(k.module);
  EXPECT_EQ(rt.shutdown(), 0);
}

/// Negative test (a): the compute stream overwrites an offload's source
/// without waiting for the D2H copy; then the same with the wait.
void raceOffload() {
  Runtime rt(emulatedDriver());
  Kernels k(rt);
  uint64_t n = 1024;
  rt.setNode("relu_3");
  float *src = filled(rt, k, n, 3.0f);
  Transfer *t = rt.offload(src, n * 4, "relu_3");
  rt.setNode("mul_4");
  float nine = 9.0f;
  k.launch("overwrite", {&src, &n, &nine}, 16, 64);
  report(rt, "without wait");
  EXPECT_EQ(emu::stats().races, 1u);
  rt.release(t);

  rt.setNode("relu_5");
  float *src2 = filled(rt, k, n, 5.0f);
  Transfer *t2 = rt.offload(src2, n * 4, "relu_5");
  EXPECT_EQ(rt.wait(t2), 0);
  rt.setNode("mul_6");
  k.launch("overwrite", {&src2, &n, &nine}, 16, 64);
  report(rt, "with wait");
  EXPECT_EQ(emu::stats().races, 1u);
  // The offloaded copy holds the values before the overwrite.
  void *back = rt.reload(t2, "relu_5_reload");
  EXPECT_EQ(rt.wait(t2), 0);
  std::vector<float> host(n);
  rt.memcpy(host.data(), back, n * 4, nullptr);
  EXPECT_EQ(rt.synchronize(), 0);
  EXPECT_EQ(host[0], 5.0f);
  EXPECT_EQ(host[n - 1], 5.0f);
  EXPECT_EQ(src2[0], 9.0f);
  rt.release(t2);

  // A host synchronisation orders the copy before the overwrite too.
  rt.setNode("relu_7");
  float *src3 = filled(rt, k, n, 7.0f);
  Transfer *t3 = rt.offload(src3, n * 4, "relu_7");
  EXPECT_EQ(rt.synchronize(), 0);
  rt.setNode("mul_8");
  k.launch("overwrite", {&src3, &n, &nine}, 16, 64);
  report(rt, "after host synchronisation");
  EXPECT_EQ(emu::stats().races, 1u);
  rt.release(t3);
  rt.memFree(src, nullptr);
  rt.memFree(src2, nullptr);
  rt.memFree(src3, nullptr);
  rt.memFree(back, nullptr);
  report(rt, "end");
  EXPECT_EQ(rt.shutdown(), 0);
}

/// Negative test (b): the source of an offload is freed before the compute
/// stream waited for its copy's event; then the protocol's order.
void raceFree() {
  Runtime rt(emulatedDriver());
  Kernels k(rt);
  uint64_t n = 1024;
  rt.setNode("gelu_7");
  float *src = filled(rt, k, n, 1.0f);
  Transfer *t = rt.offload(src, n * 4, "gelu_7");
  rt.setNode("gelu_7_free");
  rt.memFree(src, nullptr);
  report(rt, "free before wait");
  EXPECT_EQ(emu::stats().races, 1u);
  rt.release(t);

  rt.setNode("gelu_8");
  float *src2 = filled(rt, k, n, 2.0f);
  Transfer *t2 = rt.offload(src2, n * 4, "gelu_8");
  EXPECT_EQ(rt.wait(t2), 0);
  rt.setNode("gelu_8_free");
  rt.memFree(src2, nullptr);
  report(rt, "free after wait");
  void *back = rt.reload(t2, "gelu_8_reload");
  EXPECT_EQ(rt.wait(t2), 0);
  std::vector<float> host(n);
  rt.memcpy(host.data(), back, n * 4, nullptr);
  EXPECT_EQ(rt.synchronize(), 0);
  EXPECT_EQ(host[n - 1], 2.0f);
  EXPECT_EQ(emu::stats().races, 1u);
  rt.release(t2);
  rt.memFree(back, nullptr);
  EXPECT_EQ(rt.shutdown(), 0);
}

/// (c): a kernel reads a freed buffer: it sees the NaN poison and the
/// runtime reports the use after free.
void useAfterFree() {
  Runtime rt(emulatedDriver());
  Kernels k(rt);
  uint64_t n = 256;
  rt.setNode("add_9");
  float *x = filled(rt, k, n, 1.0f);
  auto *out = static_cast<float *>(rt.memAlloc(4, nullptr, false));
  k.launch("sum", {&x, &out, &n});
  float before = 0;
  rt.memcpy(&before, out, 4, nullptr);
  EXPECT_EQ(rt.synchronize(), 0);
  std::cout << "sum before free " << before << "\n";
  rt.setNode("add_9_free");
  rt.memFree(x, nullptr);
  rt.setNode("sum_10");
  k.launch("sum", {&x, &out, &n});
  report(rt, "kernel after free");
  float after = 0;
  rt.memcpy(&after, out, 4, nullptr);
  EXPECT_EQ(rt.synchronize(), 0);
  std::cout << "sum after free is NaN: " << (std::isnan(after) ? "yes" : "no")
            << "\n";
  EXPECT_EQ(emu::stats().use_after_frees, 1u);
  rt.memFree(out, nullptr);
  EXPECT_EQ(rt.shutdown(), 0);
}

/// Read-only kernels on two streams do not race; read-write ones do;
/// declared disjoint ranges do not; an allocation used on another stream
/// before any event orders it races with the allocation.
void declared() {
  Runtime rt(emulatedDriver());
  Kernels k(rt);
  CUstream a = rt.computeStream();
  CUstream b = rt.transferStream();
  uint64_t n = 1024;
  rt.setNode("init_1");
  float *x = filled(rt, k, n, 1.0f);
  auto *outA = static_cast<float *>(rt.memAlloc(4, a, false));
  auto *outB = static_cast<float *>(rt.memAlloc(4, a, false));
  EXPECT_EQ(rt.synchronize(), 0);
  rt.setNode("read_2");
  k.launch("read", {&x, &outA, &n}, 1, 1, a);
  rt.setNode("read_3");
  k.launch("read", {&x, &outB, &n}, 1, 1, b);
  report(rt, "two readers");
  rt.setNode("read_write_4");
  k.launch("read_write", {&x, &outB, &n}, 1, 1, b);
  report(rt, "reader and read-write");
  EXPECT_EQ(rt.synchronize(), 0);

  // Declared halves: disjoint writes, then overlapping ones.
  uint64_t half = n / 2;
  float two = 2.0f;
  float *upper = x + half;
  rt.setNode("lower_5");
  emu::declareAccess(x, half * 4, JOINT_EMU_WRITE);
  k.launch("overwrite", {&x, &half, &two}, 8, 64, a);
  rt.setNode("upper_6");
  emu::declareAccess(upper, half * 4, JOINT_EMU_WRITE);
  k.launch("overwrite", {&upper, &half, &two}, 8, 64, b);
  report(rt, "disjoint declared");
  rt.setNode("middle_7");
  emu::declareAccess(x + half - 1, 8, JOINT_EMU_READ | JOINT_EMU_WRITE);
  k.launch("overwrite", {&upper, &half, &two}, 1, 1, b);
  report(rt, "overlapping declared");
  EXPECT_EQ(rt.synchronize(), 0);

  rt.setNode("fresh_8");
  void *fresh = rt.memAlloc(4096, a, false);
  std::vector<char> host(4096, 0);
  rt.memcpy(fresh, host.data(), 4096, b);
  report(rt, "copy before the allocation is ordered");
  JointEmuStats s = emu::stats();
  std::cout << "races " << s.races << "\n";
  EXPECT_EQ(rt.synchronize(), 0);
  rt.memFree(fresh, a);
  rt.memFree(x, a);
  rt.memFree(outA, a);
  rt.memFree(outB, a);
  EXPECT_EQ(rt.shutdown(), 0);
}

/// The checker forgets accesses that a later one on the same bytes
/// subsumes, so a long step keeps few of them, and still finds the race
/// of a copy on another stream with the latest write.
void history() {
  Runtime rt(emulatedDriver());
  Kernels k(rt);
  uint64_t n = 1024;
  rt.setNode("init_1");
  float *x = filled(rt, k, n, 0.0f);
  auto *out = static_cast<float *>(rt.memAlloc(4, nullptr, false));
  EXPECT_EQ(rt.synchronize(), 0);
  uint64_t base = emu::stats().tracked_accesses;
  for (int i = 0; i < 500; ++i) {
    float value = float(i);
    rt.setNode(("write_" + std::to_string(i)).c_str());
    k.launch("overwrite", {&x, &n, &value}, 16, 64);
    rt.setNode(("read_" + std::to_string(i)).c_str());
    k.launch("read", {&x, &out, &n});
  }
  std::cout << "tracked after 1000 kernels: " << base << " + "
            << emu::stats().tracked_accesses - base << "\n";
  rt.setNode("copy_2");
  std::vector<float> host(n);
  rt.memcpy(host.data(), x, n * 4, rt.transferStream());
  report(rt, "copy without wait");
  EXPECT_EQ(rt.synchronize(), 0);
  EXPECT_EQ(x[n - 1], 499.0f);
  // The host has seen everything: nothing can race with it any more.
  EXPECT_EQ(emu::stats().tracked_accesses, 0u);
  rt.memFree(x, nullptr);
  rt.memFree(out, nullptr);
  EXPECT_EQ(rt.shutdown(), 0);
}

//===----------------------------------------------------------------------===//
// Library calls (CPU references of the cuBLAS GEMM and cuDNN SDPA shims)
//===----------------------------------------------------------------------===//

uint16_t toBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7fffu + ((bits >> 16) & 1);
  return uint16_t(bits >> 16);
}

float fromBf16(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// f16 <-> float for normal numbers and zero (the tests stay in range).
uint16_t toF16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint16_t sign = uint16_t((bits >> 16) & 0x8000);
  if ((bits & 0x7fffffffu) == 0)
    return sign;
  int exp = int((bits >> 23) & 0xff) - 127 + 15;
  uint32_t mant = bits & 0x7fffff;
  uint32_t half = (uint32_t(exp) << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half;
  return sign | uint16_t(half);
}

float fromF16(uint16_t h) {
  if ((h & 0x7fff) == 0)
    return (h & 0x8000) ? -0.0f : 0.0f;
  uint32_t bits = uint32_t(h & 0x8000) << 16 |
                  (((h >> 10) & 0x1f) + 127 - 15) << 23 | (h & 0x3ff) << 13;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Device copy of `host`, uploaded on the compute stream; waits for the
/// copy, so `host` may go away.
template <typename T>
T *upload(Runtime &rt, const std::vector<T> &host) {
  auto *p =
      static_cast<T *>(rt.memAlloc(host.size() * sizeof(T), nullptr, false));
  rt.memcpy(p, host.data(), host.size() * sizeof(T), nullptr);
  EXPECT_EQ(rt.synchronize(), 0);
  return p;
}

template <typename T>
std::vector<T> download(Runtime &rt, const T *p, size_t n) {
  std::vector<T> host(n);
  rt.memcpy(host.data(), p, n * sizeof(T), nullptr);
  EXPECT_EQ(rt.synchronize(), 0);
  return host;
}

/// One GEMM on the emulated device against a naive double reference.
/// Storage values come from the index (small integers, exact in f32 sums);
/// `c0` empty leaves C fresh (the NaN poison: beta = 0 must not read it).
struct GemmCase {
  const char *label;
  GemmArgs g;
  std::function<float(int64_t)> a, b, c0;
};

int64_t spanOf(int64_t batch, int64_t stride, int64_t rows, int64_t ld,
               int64_t cols) {
  return (batch - 1) * stride + (rows - 1) * ld + cols;
}

/// Runs `gc` (f32 operands) and prints C's storage (or, unless
/// `printValues`, how many values matched).
void runF32Gemm(Runtime &rt, GemmCase gc, const char *node,
                bool printValues = true) {
  GemmArgs &g = gc.g;
  int64_t sizeA = spanOf(g.batch, g.strideA, g.transA ? g.k : g.m, g.lda,
                         g.transA ? g.m : g.k);
  int64_t sizeB = spanOf(g.batch, g.strideB, g.transB ? g.n : g.k, g.ldb,
                         g.transB ? g.k : g.n);
  int64_t sizeC = spanOf(g.batch, g.strideC, g.m, g.ldc, g.n);
  std::vector<float> a(sizeA), b(sizeB), c(sizeC);
  for (int64_t i = 0; i < sizeA; ++i)
    a[i] = gc.a(i);
  for (int64_t i = 0; i < sizeB; ++i)
    b[i] = gc.b(i);
  for (int64_t i = 0; i < sizeC; ++i)
    c[i] = gc.c0 ? gc.c0(i) : std::nanf("");
  float *da = upload(rt, a), *db = upload(rt, b);
  float *dc = gc.c0 ? upload(rt, c)
                    : static_cast<float *>(
                          rt.memAlloc(sizeC * sizeof(float), nullptr, false));
  // Reference: C = alpha op(A) op(B) + beta C in double, elsewhere as before.
  std::vector<double> want(c.begin(), c.end());
  for (int64_t bt = 0; bt < g.batch; ++bt)
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < g.k; ++p)
          sum += double(a[bt * g.strideA +
                          (g.transA ? p * g.lda + i : i * g.lda + p)]) *
                 b[bt * g.strideB + (g.transB ? j * g.ldb + p : p * g.ldb + j)];
        int64_t at = bt * g.strideC + i * g.ldc + j;
        want[at] = g.alpha * sum + (g.beta != 0 ? g.beta * double(c[at]) : 0);
      }
  g.a = da;
  g.b = db;
  g.c = dc;
  int32_t status = runGemm(rt, g, node, nullptr);
  std::vector<float> got = download(rt, dc, sizeC);
  std::cout << gc.label << ": status " << status << ":";
  int wrong = 0;
  for (int64_t i = 0; i < sizeC; ++i) {
    if (printValues)
      std::cout << " " << got[i];
    // NaN stays NaN outside C's rows (a padded ldc).
    wrong += !(got[i] == float(want[i]) ||
               (std::isnan(got[i]) && std::isnan(want[i])));
  }
  if (!printValues)
    std::cout << " " << sizeC - wrong << " of " << sizeC << " as the reference";
  std::cout << "\n";
  EXPECT_EQ(wrong, 0);
  rt.memFree(da, nullptr);
  rt.memFree(db, nullptr);
  rt.memFree(dc, nullptr);
}

/// 1 x 4 times 4 x 4 in a 16-bit format: sums that show f32 accumulation
/// (col 0: 1 + 2u with u half an ulp), ties to even (cols 1, 2) and an
/// exact sum (col 3), rounded once on store; `u` is half an ulp of 1.
void runHalfGemm(Runtime &rt, const char *label, int32_t dtype, bool bf16,
                 bool intoF32) {
  float u = bf16 ? 1.0f / 256 : 1.0f / 2048;
  auto enc = [&](float f) { return bf16 ? toBf16(f) : toF16(f); };
  auto dec = [&](uint16_t h) { return bf16 ? fromBf16(h) : fromF16(h); };
  std::vector<uint16_t> a = {enc(1), enc(2 * u), enc(u), enc(u)};
  float bv[16] = {1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1};
  std::vector<uint16_t> b(16);
  for (int i = 0; i < 16; ++i)
    b[i] = enc(bv[i]);
  uint16_t *da = upload(rt, a), *db = upload(rt, b);
  void *dc = rt.memAlloc(intoF32 ? 16 : 8, nullptr, false);
  GemmArgs g{"joint_cublas_gemm",
             dtype,
             false,
             false,
             1,
             4,
             4,
             da,
             db,
             dc,
             4,
             4,
             4,
             1.0f,
             0.0f};
  int32_t status = runGemm(rt, g, "mm_half", nullptr);
  std::cout << label << ": status " << status << ":" << std::setprecision(10);
  if (intoF32) {
    for (float f : download(rt, static_cast<float *>(dc), 4))
      std::cout << " " << f;
  } else {
    for (uint16_t h : download(rt, static_cast<uint16_t *>(dc), 4))
      std::cout << " " << dec(h);
  }
  std::cout << std::setprecision(6) << "\n";
  rt.memFree(da, nullptr);
  rt.memFree(db, nullptr);
  rt.memFree(dc, nullptr);
}

void gemm() {
  Runtime rt(emulatedDriver());
  auto small = [](int64_t i) { return float(i % 7) - 3; };
  auto other = [](int64_t i) { return float(i % 5) - 2; };
  auto third = [](int64_t i) { return float(i % 3); };
  // C[2, 3] = A[2, 4] B[4, 3], C fresh (poison): beta = 0 must not read it.
  runF32Gemm(rt,
             {"plain",
              {"joint_cublas_gemm", JOINT_DTYPE_F32, false, false, 2, 3, 4,
               nullptr, nullptr, nullptr, 4, 3, 3, 1.0f, 0.0f},
              small,
              other,
              nullptr},
             "mm_1");
  // Both transposed, padded rows (lda 3 for m 2, ldb 6 for k 4, ldc 4 for
  // n 3: the pad column keeps its value), alpha 0.5, beta 2.
  runF32Gemm(rt,
             {"transposed",
              {"joint_cublas_gemm", JOINT_DTYPE_F32, true, true, 2, 3, 4,
               nullptr, nullptr, nullptr, 3, 6, 4, 0.5f, 2.0f},
              small,
              other,
              third},
             "mm_2");
  // Three batches with gaps between A's matrices, one B for all (stride
  // 0), C's batches 7 apart (one pad element each), beta 1.
  runF32Gemm(
      rt,
      {"batched",
       {"joint_cublas_gemm_strided_batched", JOINT_DTYPE_F32, false, true, 2, 3,
        2, nullptr, nullptr, nullptr, 2, 2, 3, 1.0f, 1.0f, 5, 0, 7, 3},
       small,
       other,
       third},
      "bmm_3");
  // k = 0: C = beta C, A and B unread.
  runF32Gemm(rt,
             {"k=0",
              {"joint_cublas_gemm", JOINT_DTYPE_F32, false, false, 2, 2, 0,
               nullptr, nullptr, nullptr, 1, 2, 2, 1.0f, 3.0f},
              small,
              other,
              third},
             "mm_4");
  runHalfGemm(rt, "bf16", JOINT_DTYPE_BF16, true, false);
  runHalfGemm(rt, "bf16 into f32", JOINT_DTYPE_BF16_F32, true, true);
  runHalfGemm(rt, "f16", JOINT_DTYPE_F16, false, false);
  runHalfGemm(rt, "f16 into f32", JOINT_DTYPE_F16_F32, false, true);
  // Rows and batches shared out to the block workers: 64 batches, then 97
  // rows, against the reference.
  runF32Gemm(
      rt,
      {"many batches",
       {"joint_cublas_gemm_strided_batched", JOINT_DTYPE_F32, false, false, 3,
        5, 4, nullptr, nullptr, nullptr, 4, 5, 5, 1.0f, 0.0f, 12, 20, 15, 64},
       small,
       other,
       nullptr},
      "bmm_5", false);
  runF32Gemm(rt,
             {"many rows",
              {"joint_cublas_gemm", JOINT_DTYPE_F32, false, true, 97, 33, 17,
               nullptr, nullptr, nullptr, 17, 17, 33, 1.0f, 0.0f},
              small,
              other,
              nullptr},
             "mm_6", false);
  JointEmuStats s = emu::stats();
  std::cout << "library calls " << s.library_calls << " races " << s.races
            << " errors " << s.errors << "\n";

  // Argument checks come first, with the real shims' messages.
  float *buf = static_cast<float *>(rt.memAlloc(64, nullptr, false));
  rt.setNode("alloc_c");
  float *shortC = static_cast<float *>(rt.memAlloc(16, nullptr, false));
  auto call = [&](const char *label, GemmArgs g) {
    runGemm(rt, g, "mm_bad", nullptr);
    report(rt, label);
  };
  call("bad dtype", {"joint_cublas_gemm", 7, false, false, 2, 3, 4, buf, buf,
                     buf, 4, 3, 3, 1.0f, 0.0f});
  call("short lda", {"joint_cublas_gemm", JOINT_DTYPE_F32, false, false, 2, 3,
                     4, buf, buf, buf, 3, 3, 3, 1.0f, 0.0f});
  call("short ldb transposed",
       {"joint_cublas_gemm", JOINT_DTYPE_F32, false, true, 2, 3, 4, buf, buf,
        buf, 4, 3, 3, 1.0f, 0.0f});
  call("negative",
       {"joint_cublas_gemm_strided_batched", JOINT_DTYPE_F32, false, false, -1,
        3, 4, buf, buf, buf, 4, 3, 3, 1.0f, 0.0f, 0, 0, 0, 2});
  call("null", {"joint_cublas_gemm", JOINT_DTYPE_F32, false, false, 2, 3, 4,
                nullptr, buf, buf, 4, 3, 3, 1.0f, 0.0f});
  call("empty", {"joint_cublas_gemm", JOINT_DTYPE_F32, false, false, 0, 3, 4,
                 nullptr, nullptr, nullptr, 4, 3, 3, 1.0f, 0.0f});
  // The emulator checks what a GPU would fault on: C past its allocation.
  call("past the end", {"joint_cublas_gemm", JOINT_DTYPE_F32, false, false, 2,
                        3, 4, buf, buf, shortC, 4, 3, 3, 1.0f, 0.0f});
  EXPECT_EQ(emu::stats().library_calls, s.library_calls);
  rt.memFree(buf, nullptr);
  rt.memFree(shortC, nullptr);
  EXPECT_EQ(rt.shutdown(), 0);
}

/// A GEMM reads a buffer that a copy on the transfer stream writes: without
/// an event the race checker names both; with the event wait it is clean.
void libraryRace() {
  Runtime rt(emulatedDriver());
  CUstream compute = rt.computeStream(), transfer = rt.transferStream();
  rt.setNode("a_1");
  float *a = static_cast<float *>(rt.memAlloc(32, compute, false));
  rt.setNode("c_2");
  float *c = static_cast<float *>(rt.memAlloc(16, compute, false));
  std::vector<float> host(8, 1.0f);
  float *b = upload(rt, std::vector<float>{1, 2, 3, 4});
  EXPECT_EQ(rt.synchronize(), 0);
  rt.setNode("load_3");
  rt.memcpy(a, host.data(), 32, transfer);
  GemmArgs g{"joint_cublas_gemm",
             JOINT_DTYPE_F32,
             false,
             false,
             2,
             2,
             2,
             a,
             b,
             c,
             2,
             2,
             2,
             1.0f,
             0.0f};
  runGemm(rt, g, "mm_4", nullptr);
  report(rt, "without event");
  EXPECT_EQ(emu::stats().races, 1u);
  EXPECT_EQ(rt.synchronize(), 0);

  rt.setNode("load_5");
  rt.memcpy(a, host.data(), 32, transfer);
  CUevent done = rt.eventCreate();
  rt.eventRecord(done, transfer);
  rt.streamWaitEvent(compute, done);
  runGemm(rt, g, "mm_6", nullptr);
  report(rt, "with event");
  std::vector<float> got = download(rt, c, 4);
  std::cout << "c " << got[0] << " " << got[1] << " " << got[2] << " " << got[3]
            << "\n";
  EXPECT_EQ(got[0], 4.0f);
  EXPECT_EQ(got[3], 6.0f);
  EXPECT_EQ(emu::stats().races, 1u);
  // The GEMM writes C on the compute stream; reading it on the transfer
  // stream without an event races too.
  runGemm(rt, g, "mm_7", nullptr);
  rt.setNode("store_8");
  rt.memcpy(host.data(), c, 16, transfer);
  report(rt, "read C without event");
  EXPECT_EQ(rt.synchronize(), 0);
  rt.eventDestroy(done);
  rt.memFree(a, compute);
  rt.memFree(b, compute);
  rt.memFree(c, compute);
  EXPECT_EQ(rt.shutdown(), 0);
}

/// Naive double SDPA: forward O and logsumexp, backward dQ dK dV, for
/// contiguous [B, H, L, D] operands, GQA, causal (top-left), bias [1, H,
/// L, S] broadcast over the batch; probabilities and their gradients
/// rounded to f16 where they enter a matmul (flash attention).
struct SdpaReference {
  static double round16(double x) { return fromF16(toF16(float(x))); }

  int64_t B, H, Hkv, L, S, D;
  double scale;
  bool causal;
  std::vector<double> q, k, v, bias, dO;
  std::vector<double> o, lse, dq, dk, dv;

  int64_t qi(int64_t b, int64_t h, int64_t i, int64_t d) const {
    return ((b * H + h) * L + i) * D + d;
  }
  int64_t ki(int64_t b, int64_t h, int64_t j, int64_t d) const {
    return ((b * Hkv + h) * S + j) * D + d;
  }

  void run() {
    o.assign(q.size(), 0);
    dq.assign(q.size(), 0);
    dk.assign(k.size(), 0);
    dv.assign(v.size(), 0);
    lse.assign(B * H * L, 0);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < L; ++i) {
          int64_t g = h / (H / Hkv);
          std::vector<double> s(S), p(S);
          double max = -INFINITY;
          for (int64_t j = 0; j < S; ++j) {
            double dot = 0;
            for (int64_t d = 0; d < D; ++d)
              dot += q[qi(b, h, i, d)] * k[ki(b, g, j, d)];
            s[j] = (causal && j > i) ? -INFINITY
                                     : scale * dot + bias[(h * L + i) * S + j];
            max = std::max(max, s[j]);
          }
          double sum = 0;
          for (int64_t j = 0; j < S; ++j)
            sum += std::exp(s[j] - max);
          lse[(b * H + h) * L + i] = max + std::log(sum);
          for (int64_t j = 0; j < S; ++j)
            p[j] = std::exp(s[j] - max) / sum;
          // The P v GEMM takes round(exp(s - max)) (flash attention).
          for (int64_t d = 0; d < D; ++d)
            for (int64_t j = 0; j < S; ++j)
              o[qi(b, h, i, d)] +=
                  round16(std::exp(s[j] - max)) * v[ki(b, g, j, d)] / sum;
          // Backward through softmax; rowsum(P dP) = rowsum(dO o), with o
          // as the forward stored it (rounded to f16), as cuDNN reads it.
          std::vector<double> dp(S);
          double rowsum = 0;
          for (int64_t j = 0; j < S; ++j)
            for (int64_t d = 0; d < D; ++d)
              dp[j] += dO[qi(b, h, i, d)] * v[ki(b, g, j, d)];
          for (int64_t d = 0; d < D; ++d)
            rowsum += dO[qi(b, h, i, d)] *
                      double(fromF16(toF16(float(o[qi(b, h, i, d)]))));
          // round(dS) and round(P) feed the gradient GEMMs.
          for (int64_t j = 0; j < S; ++j) {
            double ds = round16(p[j] * (dp[j] - rowsum));
            for (int64_t d = 0; d < D; ++d) {
              dq[qi(b, h, i, d)] += scale * ds * k[ki(b, g, j, d)];
              dk[ki(b, g, j, d)] += scale * ds * q[qi(b, h, i, d)];
              dv[ki(b, g, j, d)] += round16(p[j]) * dO[qi(b, h, i, d)];
            }
          }
        }
  }
};

/// Largest |got - want| in units of f16's spacing at |want| (2^-10
/// relative), at least 2^-20 (f32 accumulation noise of sums that cancel).
double ulpError(const std::vector<uint16_t> &got,
                const std::vector<double> &want) {
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double spacing = std::max(
        std::ldexp(1.0, std::ilogb(std::max(std::abs(want[i]), 1e-30)) - 10),
        std::ldexp(1.0, -20));
    worst = std::max(worst, std::abs(fromF16(got[i]) - want[i]) / spacing);
  }
  return worst;
}

void sdpa() {
  Runtime rt(emulatedDriver());
  const int64_t B = 2, H = 4, Hkv = 2, L = 3, S = 5, D = 8;
  SdpaReference ref{B, H, Hkv, L, S, D, 0.25, true};
  // Small dyadic values, exact in f16.
  auto value = [](int64_t i, int64_t m, int64_t a) {
    return double((i * a) % m) / 8 - double(m / 2) / 8;
  };
  auto fill = [&](std::vector<double> &x, int64_t n, int64_t m, int64_t a) {
    x.resize(n);
    for (int64_t i = 0; i < n; ++i)
      x[i] = value(i, m, a);
  };
  fill(ref.q, B * H * L * D, 11, 7);
  fill(ref.k, B * Hkv * S * D, 13, 5);
  fill(ref.v, B * Hkv * S * D, 9, 4);
  fill(ref.bias, H * L * S, 5, 3);
  fill(ref.dO, B * H * L * D, 7, 3);
  ref.run();
  auto f16 = [](const std::vector<double> &x) {
    std::vector<uint16_t> h(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      h[i] = toF16(float(x[i]));
    return h;
  };
  uint16_t *q = upload(rt, f16(ref.q)), *k = upload(rt, f16(ref.k)),
           *v = upload(rt, f16(ref.v)), *bias = upload(rt, f16(ref.bias)),
           *dO = upload(rt, f16(ref.dO));
  auto alloc16 = [&](int64_t n) {
    return static_cast<uint16_t *>(rt.memAlloc(n * 2, nullptr, false));
  };
  uint16_t *o = alloc16(B * H * L * D), *o2 = alloc16(B * H * L * D),
           *dq = alloc16(B * H * L * D), *dk = alloc16(B * Hkv * S * D),
           *dv = alloc16(B * Hkv * S * D);
  auto *stats =
      static_cast<float *>(rt.memAlloc(B * H * L * 4, nullptr, false));
  int64_t qs[4] = {H * L * D, L * D, D, 1}, kvs[4] = {Hkv * S * D, S * D, D, 1};
  int64_t biasDims[4] = {1, H, L, S}, biasStrides[4] = {H * L * S, L * S, S, 1};
  SdpaArgs fa{"joint_cudnn_sdpa_forward",
              JOINT_DTYPE_F16,
              B,
              H,
              Hkv,
              L,
              S,
              D,
              {qs, kvs, kvs, qs},
              0.25f,
              true,
              biasDims,
              biasStrides};
  SdpaBuffers fb;
  fb.q = q;
  fb.k = k;
  fb.v = v;
  fb.o = o;
  fb.stats = stats;
  fb.bias = bias;
  report(rt, "uploads");
  int32_t status = runSdpa(rt, fa, fb, false, "sdpa_1", nullptr);
  std::cout << "forward: status " << status << "\n";
  // Without statistics (torch's math variant): the same output.
  SdpaBuffers noStats = fb;
  noStats.o = o2;
  noStats.stats = nullptr;
  runSdpa(rt, fa, noStats, false, "sdpa_2", nullptr);
  SdpaArgs ba{"joint_cudnn_sdpa_backward",
              JOINT_DTYPE_F16,
              B,
              H,
              Hkv,
              L,
              S,
              D,
              {qs, kvs, kvs, qs, qs, qs, kvs, kvs},
              0.25f,
              true,
              biasDims,
              biasStrides};
  SdpaBuffers bb = fb;
  bb.dO = dO;
  bb.dQ = dq;
  bb.dK = dk;
  bb.dV = dv;
  status = runSdpa(rt, ba, bb, true, "sdpa_1_bwd", nullptr);
  std::cout << "backward: status " << status << "\n";
  std::vector<uint16_t> gotO = download(rt, o, B * H * L * D),
                        gotO2 = download(rt, o2, B * H * L * D),
                        gotDq = download(rt, dq, B * H * L * D),
                        gotDk = download(rt, dk, B * Hkv * S * D),
                        gotDv = download(rt, dv, B * Hkv * S * D);
  std::vector<float> gotLse = download(rt, stats, B * H * L);
  // Row 0 sees key 0 only (causal, top-left): O = v0 and the statistic is
  // the one score, exactly.
  std::cout << std::setprecision(10) << "o[0,1,0,:4]";
  for (int d = 0; d < 4; ++d)
    std::cout << " " << fromF16(gotO[ref.qi(0, 1, 0, d)]);
  std::cout << " v[0,0,0,:4]";
  for (int d = 0; d < 4; ++d)
    std::cout << " " << ref.v[ref.ki(0, 0, 0, d)];
  std::cout << "\nlse[0,1,0] " << gotLse[L] << " want " << ref.lse[L] << "\n";
  std::cout << std::setprecision(6);
  double lseErr = 0;
  for (size_t i = 0; i < gotLse.size(); ++i)
    lseErr = std::max(lseErr, std::abs(gotLse[i] - ref.lse[i]));
  // f32 accumulation: within one f16 rounding of the double reference.
  std::cout << "o within 1 ulp: " << (ulpError(gotO, ref.o) <= 1 ? "yes" : "no")
            << ", same without stats: " << (gotO == gotO2 ? "yes" : "no")
            << ", lse within 1e-5: " << (lseErr <= 1e-5 ? "yes" : "no") << "\n";
  std::cout << "dq within 1 ulp: "
            << (ulpError(gotDq, ref.dq) <= 1 ? "yes" : "no")
            << ", dk: " << (ulpError(gotDk, ref.dk) <= 1 ? "yes" : "no")
            << ", dv: " << (ulpError(gotDv, ref.dv) <= 1 ? "yes" : "no")
            << "\n";
  EXPECT_TRUE(ulpError(gotO, ref.o) <= 1 && gotO == gotO2 && lseErr <= 1e-5);
  EXPECT_TRUE(ulpError(gotDq, ref.dq) <= 1 && ulpError(gotDk, ref.dk) <= 1 &&
              ulpError(gotDv, ref.dv) <= 1);
  // Keys after the last query of every row (4 > 2) get no gradient.
  bool zero = true;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t g = 0; g < Hkv; ++g)
      for (int64_t d = 0; d < D; ++d)
        zero &= fromF16(gotDk[ref.ki(b, g, 4, d)]) == 0 &&
                fromF16(gotDv[ref.ki(b, g, 4, d)]) == 0;
  std::cout << "masked key has zero gradient: " << (zero ? "yes" : "no")
            << "\n";
  EXPECT_TRUE(zero);
  JointEmuStats s = emu::stats();
  std::cout << "library calls " << s.library_calls << " races " << s.races
            << "\n";

  // Argument checks first, with the real shims' messages.
  SdpaArgs bad = fa;
  bad.dtype = JOINT_DTYPE_F32;
  runSdpa(rt, bad, fb, false, "sdpa_bad", nullptr);
  report(rt, "f32");
  bad = fa;
  bad.headsKV = 3;
  runSdpa(rt, bad, fb, false, "sdpa_bad", nullptr);
  report(rt, "4 over 3 heads");
  bad = fa;
  bad.missing = "k strides";
  runSdpa(rt, bad, fb, false, "sdpa_bad", nullptr);
  report(rt, "null k strides");
  // The emulator: the statistics run past a short allocation.
  rt.setNode("short_stats");
  auto *shortStats = static_cast<float *>(rt.memAlloc(16, nullptr, false));
  SdpaBuffers shortBuffers = fb;
  shortBuffers.stats = shortStats;
  runSdpa(rt, fa, shortBuffers, false, "sdpa_3", nullptr);
  report(rt, "short statistics");
  EXPECT_EQ(emu::stats().library_calls, s.library_calls);
  for (void *p : std::initializer_list<void *>{q, k, v, bias, dO, o, o2, dq, dk,
                                               dv, stats, shortStats})
    rt.memFree(p, nullptr);
}

/// One step of hand-made work on the simulated clock; returns its trace.
/// Link: 1 GB/s, so the 1 MB transfers take 1000 us each.
std::string tracedStep(Runtime &rt, Kernels &k, float *x, float *out,
                       uint64_t n) {
  EXPECT_TRUE(emu::traceStart(1e9));
  rt.setNode("a"); // 2 ms, one kernel: [0, 2000]
  float one = 1.0f;
  k.launch("fill", {&x, &n, &one}, 4, 64);
  // D2H on the transfer stream after the compute stream's event at 2000:
  // [2000, 3000], overlapping node b.
  Transfer *t = rt.offload(x, n * 4, "a");
  rt.setNode("b"); // 0.6 ms over two kernels: [2000, 2300], [2300, 2600]
  k.launch("read", {&x, &out, &n});
  k.launch("read", {&x, &out, &n});
  // The compute stream waits for the copy: a stall [2600, 3000], exposed.
  rt.wait(t);
  rt.setNode("c"); // 0.5 ms: [3000, 3500]; it may overwrite x now
  k.launch("overwrite", {&x, &n, &one}, 4, 64);
  rt.setNode("u"); // no cost: 0 s, counted as uncosted
  k.launch("read", {&x, &out, &n});
  // Reload: a zero-time allocation on compute, H2D after the compute
  // stream's event at 3500: [3500, 4500].
  auto *y = static_cast<float *>(rt.reload(t, "a_reload"));
  rt.setNode("d"); // 0.8 ms: [3500, 4300], then a stall [4300, 4500]
  k.launch("read", {&x, &out, &n});
  rt.wait(t);
  rt.release(t);
  rt.setNode("e"); // 0.1 ms: [4500, 4600]
  k.launch("read", {&y, &out, &n});
  rt.memFree(y, nullptr);
  EXPECT_EQ(rt.synchronize(), 0);
  JointEmuTraceSummary s = emu::traceSummary();
  std::printf("summary: step %.3f us, exposed %.3f us, work %.3f us, "
              "transfers %.3f us, %llu operations, %llu uncosted\n",
              s.step_seconds * 1e6, s.exposed_transfer_seconds * 1e6,
              s.work_seconds * 1e6, s.transfer_seconds * 1e6,
              (unsigned long long)s.operations,
              (unsigned long long)s.uncosted_work);
  std::string error;
  char name[] = "/tmp/joint-emu-trace-XXXXXX";
  int fd = mkstemp(name);
  EXPECT_TRUE(fd >= 0);
  close(fd);
  EXPECT_TRUE(emu::writeTrace(name, &error));
  std::ifstream in(name);
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  std::remove(name);
  return text;
}

/// The simulated schedule: exact times of kernels (their node's cost split
/// over the node's kernels), copies (bytes / link bandwidth), waits and
/// stalls; the same step traced twice gives the same bytes.
void trace() {
  Runtime rt(emulatedDriver());
  Kernels k(rt);
  uint64_t n = 250000; // 1 MB of floats
  rt.setNode("setup");
  auto *x = static_cast<float *>(rt.memAlloc(n * 4, nullptr, false));
  auto *out = static_cast<float *>(rt.memAlloc(4, nullptr, false));
  EXPECT_EQ(rt.synchronize(), 0);
  for (auto [node, seconds] :
       std::vector<std::pair<const char *, double>>{{"a", 2e-3},
                                                    {"b", 0.6e-3},
                                                    {"c", 0.5e-3},
                                                    {"d", 0.8e-3},
                                                    {"e", 0.1e-3}})
    EXPECT_TRUE(emu::setNodeSeconds(node, seconds));
  EXPECT_TRUE(!emu::setNodeSeconds("bad", -1.0));
  EXPECT_TRUE(!emu::traceStart(0.0));
  std::string first = tracedStep(rt, k, x, out, n);
  std::cout << first;
  std::string second = tracedStep(rt, k, x, out, n);
  std::cout << "second trace identical: " << (first == second ? "yes" : "no")
            << "\n";
  EXPECT_EQ(emu::stats().races, 0u);
  rt.memFree(x, nullptr);
  rt.memFree(out, nullptr);
  report(rt, "trace");
  EXPECT_EQ(rt.shutdown(), 0);
}

/// A kernel fused from several nodes' ops, named by them all ("fa, fb"),
/// takes its share of each node's seconds: fa (1 ms) is split over that
/// kernel and a kernel of its own, fb (2 ms) is the fused kernel's alone:
/// [0, 2500] and [2500, 3000].
void traceFused() {
  Runtime rt(emulatedDriver());
  Kernels k(rt);
  uint64_t n = 1024;
  rt.setNode("setup");
  auto *x = static_cast<float *>(rt.memAlloc(n * 4, nullptr, false));
  auto *out = static_cast<float *>(rt.memAlloc(4, nullptr, false));
  EXPECT_EQ(rt.synchronize(), 0);
  EXPECT_TRUE(emu::setNodeSeconds("fa", 1e-3));
  EXPECT_TRUE(emu::setNodeSeconds("fb", 2e-3));
  EXPECT_TRUE(emu::traceStart(1e9));
  float one = 1.0f;
  rt.setNode("fa, fb");
  k.launch("fill", {&x, &n, &one}, 4, 64);
  rt.setNode("fa");
  k.launch("read", {&x, &out, &n});
  EXPECT_EQ(rt.synchronize(), 0);
  JointEmuTraceSummary s = emu::traceSummary();
  std::printf("fused: step %.3f us, work %.3f us, %llu operations, %llu "
              "uncosted\n",
              s.step_seconds * 1e6, s.work_seconds * 1e6,
              (unsigned long long)s.operations,
              (unsigned long long)s.uncosted_work);
  rt.memFree(x, nullptr);
  rt.memFree(out, nullptr);
  report(rt, "trace-fused");
  EXPECT_EQ(rt.shutdown(), 0);
}

} // namespace

int main(int argc, char **argv) {
  std::map<std::string, std::function<void()>> cases = {
      {"memory", memory},
      {"streams", streams},
      {"kernels", kernels},
      {"race-offload", raceOffload},
      {"race-free", raceFree},
      {"use-after-free", useAfterFree},
      {"declared", declared},
      {"history", history},
      {"gemm", gemm},
      {"sdpa", sdpa},
      {"library-race", libraryRace},
      {"trace", trace},
      {"trace-fused", traceFused},
  };
  if (argc != 2 || !cases.count(argv[1])) {
    std::cerr << "usage: joint-cuda-emulator-test "
                 "memory|streams|kernels|race-offload|race-free|"
                 "use-after-free|declared|history|gemm|sdpa|library-race|"
                 "trace|trace-fused\n";
    return 2;
  }
  cases[argv[1]]();
  std::cout << (failures ? "FAILED " : "PASSED ") << argv[1] << "\n";
  return failures ? 1 : 0;
}

//===- NcclTest.cpp - The collectives' C ABI with ranks as threads --------===//
//
// Runs joint_nccl_* of libjoint_cuda_runtime.so as N rank threads of one
// process (thread r on device r, mgpuSetDefaultDevice), for lit:
//   joint-cuda-nccl-test emulated     (JOINT_CUDA_DEVICE=emulated): 2 and 4
//     ranks, every collective for f32/bf16/f16/i64 with sum/avg/max against
//     exact expected values, bf16's per-step rounding, comm split (by color,
//     ordered by key; NOCOLOR), all_to_all with unequal counts, the dtype
//     table against nccl.h, argument errors naming group and node, and the
//     races of reading `out` or freeing `in` before joint_nccl_wait;
//   joint-cuda-nccl-test timeout (JOINT_EMU_NCCL_TIMEOUT_S=1): ranks that
//     never arrive at a rendezvous are reported, not a hang;
//   joint-cuda-nccl-test missing-nccl (JOINT_NCCL_LIBRARY=/nonexistent...):
//     the real-NCCL path reports that the library cannot be loaded.
// Prints what it checks; exits non-zero on a wrong value or status.
//
//===----------------------------------------------------------------------===//

#include "joint_cuda_emulator.h"
#include "joint_cuda_runtime.h"

#include <nccl.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

extern "C" {
void *mgpuMemAlloc(uint64_t bytes, void *stream, bool isHostShared);
void mgpuMemFree(void *ptr, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream);
void mgpuStreamSynchronize(void *stream);
void mgpuSetDefaultDevice(int32_t device);
}

namespace {

std::atomic<int> bad{0};

void expect(bool ok, const std::string &what) {
  if (!ok) {
    std::printf("MISMATCH: %s\n", what.c_str());
    ++bad;
  }
}

/// Runs `body(rank)` on `n` threads, thread r on device r.
void ranks(int n, const std::function<void(int)> &body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([r, &body] {
      mgpuSetDefaultDevice(r);
      body(r);
    });
  for (std::thread &t : threads)
    t.join();
}

/// Prints and clears the status; counts an unexpected one.
int status(const char *what, int expected = 0) {
  int s = joint_runtime_status();
  std::printf("%s: status %d %s\n", what, s, joint_runtime_last_error());
  if (s != expected)
    ++bad;
  joint_runtime_clear_error();
  return s;
}

//===-- Elements (the test's values are exact in every type) ------------===//

struct Type {
  const char *name;
  int dtype;
  size_t bytes;
  bool integer;
};
const Type kF32{"f32", JOINT_NCCL_DTYPE_F32, 4, false};
const Type kBF16{"bf16", JOINT_NCCL_DTYPE_BF16, 2, false};
const Type kF16{"f16", JOINT_NCCL_DTYPE_F16, 2, false};
const Type kI64{"i64", JOINT_NCCL_DTYPE_I64, 8, true};

void put(const Type &t, std::vector<char> &buf, size_t i, double v) {
  char *p = buf.data() + i * t.bytes;
  float f = static_cast<float>(v);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (t.dtype == JOINT_NCCL_DTYPE_F32) {
    std::memcpy(p, &f, 4);
  } else if (t.dtype == JOINT_NCCL_DTYPE_BF16) {
    uint16_t h = static_cast<uint16_t>(bits >> 16); // exact values only
    std::memcpy(p, &h, 2);
  } else if (t.dtype == JOINT_NCCL_DTYPE_F16) {
    uint16_t h = 0; // exact normal values (or zero) only
    if (f != 0)
      h = static_cast<uint16_t>(((bits >> 16) & 0x8000) |
                                ((((bits >> 23) & 0xff) - 112) << 10) |
                                ((bits >> 13) & 0x3ff));
    std::memcpy(p, &h, 2);
  } else {
    int64_t x = static_cast<int64_t>(v);
    std::memcpy(p, &x, 8);
  }
}

double get(const Type &t, const std::vector<char> &buf, size_t i) {
  const char *p = buf.data() + i * t.bytes;
  if (t.dtype == JOINT_NCCL_DTYPE_F32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  if (t.dtype == JOINT_NCCL_DTYPE_I64) {
    int64_t x;
    std::memcpy(&x, p, 8);
    return static_cast<double>(x);
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  uint32_t bits;
  if (t.dtype == JOINT_NCCL_DTYPE_BF16) {
    bits = uint32_t(h) << 16;
  } else {
    uint32_t exp = (h >> 10) & 0x1f;
    bits = exp == 0 ? uint32_t(h & 0x8000) << 16
                    : (uint32_t(h & 0x8000) << 16) | ((exp + 112) << 23) |
                          (uint32_t(h & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Rank r's element i: small integers, negative ones too.
double value(int r, size_t i) {
  return static_cast<double>((r * 7 + i * 3) % 11) - 5 + r;
}

/// Allocates device buffers, copies `in` there, runs `collective(din, dout)`
/// on the compute stream's data, waits, copies `out` back.
void runOn(const std::vector<char> &in, std::vector<char> &out,
           const std::function<void *(void *, void *)> &collective,
           const std::string &what, bool strict = true) {
  void *din = mgpuMemAlloc(in.size(), nullptr, false);
  void *dout = mgpuMemAlloc(out.size(), nullptr, false);
  mgpuMemcpy(din, const_cast<char *>(in.data()), in.size(), nullptr);
  void *handle = collective(din, dout);
  expect(handle != nullptr, what + ": null handle");
  if (handle) {
    int s = joint_nccl_wait(handle); // the sticky status, when not strict
    expect(s == 0 || !strict, what + ": wait");
  }
  mgpuMemcpy(out.data(), dout, out.size(), nullptr);
  mgpuStreamSynchronize(nullptr);
  mgpuMemFree(din, nullptr);
  mgpuMemFree(dout, nullptr);
}

double reduceExpected(int op, const std::vector<double> &xs, bool integer) {
  double acc = xs[0];
  for (size_t r = 1; r < xs.size(); ++r)
    acc = op == JOINT_REDUCE_MAX ? std::max(acc, xs[r]) : acc + xs[r];
  if (op == JOINT_REDUCE_AVG)
    acc = integer ? std::trunc(acc / xs.size()) : acc / xs.size();
  return acc;
}

const char *opName(int op) {
  return op == JOINT_REDUCE_SUM   ? "sum"
         : op == JOINT_REDUCE_AVG ? "avg"
                                  : "max";
}

/// all_gather, reduce_scatter and all_reduce of `group` (n ranks, rank r
/// = group rank) for one type, with every op.
void collectives(const char *group, int n, const Type &t) {
  const size_t count = 6;
  std::atomic<int> checked{0};
  ranks(n, [&](int r) {
    std::vector<char> in(count * t.bytes), out(count * n * t.bytes);
    for (size_t i = 0; i < count; ++i)
      put(t, in, i, value(r, i));
    std::string what = std::string(group) + " all_gather " + t.name;
    runOn(
        in, out,
        [&](void *din, void *dout) {
          return joint_nccl_all_gather(group, din, dout, count, t.dtype,
                                       "all_gather_1");
        },
        what);
    for (int p = 0; p < n; ++p)
      for (size_t i = 0; i < count; ++i)
        expect(get(t, out, p * count + i) == value(p, i),
               what + " rank " + std::to_string(r));
    for (int op : {JOINT_REDUCE_SUM, JOINT_REDUCE_AVG, JOINT_REDUCE_MAX}) {
      // reduce_scatter: n * count in, count out.
      std::vector<char> big(count * n * t.bytes), part(count * t.bytes);
      for (size_t i = 0; i < count * n; ++i)
        put(t, big, i, value(r, i));
      std::string rs =
          std::string(group) + " reduce_scatter " + t.name + " " + opName(op);
      runOn(
          big, part,
          [&](void *din, void *dout) {
            return joint_nccl_reduce_scatter(group, din, dout, count, t.dtype,
                                             op, "reduce_scatter_2");
          },
          rs);
      for (size_t i = 0; i < count; ++i) {
        std::vector<double> xs;
        for (int p = 0; p < n; ++p)
          xs.push_back(value(p, r * count + i));
        double want = reduceExpected(op, xs, t.integer);
        expect(get(t, part, i) == want,
               rs + " rank " + std::to_string(r) + " element " +
                   std::to_string(i) + ": " + std::to_string(get(t, part, i)) +
                   " != " + std::to_string(want));
      }
      std::vector<char> all(count * t.bytes);
      std::string ar =
          std::string(group) + " all_reduce " + t.name + " " + opName(op);
      runOn(
          in, all,
          [&](void *din, void *dout) {
            return joint_nccl_all_reduce(group, din, dout, count, t.dtype, op,
                                         "all_reduce_3");
          },
          ar);
      for (size_t i = 0; i < count; ++i) {
        std::vector<double> xs;
        for (int p = 0; p < n; ++p)
          xs.push_back(value(p, i));
        expect(get(t, all, i) == reduceExpected(op, xs, t.integer),
               ar + " rank " + std::to_string(r));
      }
    }
    ++checked;
  });
  std::printf("%s %s: %d ranks checked\n", group, t.name, checked.load());
}

void emulated() {
  std::printf("emulated %d\n", joint_emu_active());
  // The dtype table is NCCL's.
  expect(joint_nccl_data_type(JOINT_NCCL_DTYPE_F32) == ncclFloat32, "f32");
  expect(joint_nccl_data_type(JOINT_NCCL_DTYPE_F16) == ncclFloat16, "f16");
  expect(joint_nccl_data_type(JOINT_NCCL_DTYPE_BF16) == ncclBfloat16, "bf16");
  expect(joint_nccl_data_type(JOINT_NCCL_DTYPE_F64) == ncclFloat64, "f64");
  expect(joint_nccl_data_type(JOINT_NCCL_DTYPE_I64) == ncclInt64, "i64");
  expect(joint_nccl_data_type(JOINT_NCCL_DTYPE_I32) == ncclInt32, "i32");
  expect(joint_nccl_data_type(JOINT_NCCL_DTYPE_I8) == ncclInt8, "i8");
  expect(joint_nccl_data_type(JOINT_NCCL_DTYPE_U8) == ncclUint8, "u8");
  expect(joint_nccl_data_type(8) == -1 && joint_nccl_data_type(-1) == -1,
         "unknown dtypes");
  std::printf("dtype table: bf16 -> %d (ncclBfloat16 %d)\n",
              joint_nccl_data_type(JOINT_NCCL_DTYPE_BF16), int(ncclBfloat16));

  // Communicators: a world of 4 and a world of 2 (devices 0 and 1 again).
  unsigned char id4[JOINT_NCCL_UNIQUE_ID_BYTES],
      id2[JOINT_NCCL_UNIQUE_ID_BYTES];
  expect(joint_nccl_get_unique_id(id4) == 0 &&
             joint_nccl_get_unique_id(id2) == 0 &&
             std::memcmp(id4, id2, sizeof(id4)) != 0,
         "fresh ids");
  ranks(4, [&](int r) {
    expect(joint_nccl_comm_init("world4", 4, r, id4) == 0, "init world4");
  });
  ranks(2, [&](int r) {
    expect(joint_nccl_comm_init("world2", 2, r, id2) == 0, "init world2");
  });
  status("init");

  for (const Type &t : {kF32, kBF16, kF16, kI64}) {
    collectives("world2", 2, t);
    collectives("world4", 4, t);
  }
  status("collectives");

  // bf16 sums round after every step, as NCCL's: 256 + 1 is 256 in bf16
  // (ties to even), three times, where a float sum would give 260.
  ranks(4, [&](int r) {
    std::vector<char> in(2), out(2);
    put(kBF16, in, 0, r == 0 ? 256 : 1);
    runOn(
        in, out,
        [&](void *din, void *dout) {
          return joint_nccl_all_reduce("world4", din, dout, 1,
                                       JOINT_NCCL_DTYPE_BF16, JOINT_REDUCE_SUM,
                                       "all_reduce_bf16");
        },
        "bf16 rounding");
    expect(get(kBF16, out, 0) == 256, "bf16 per-step rounding");
    if (r == 0)
      std::printf("bf16 256+1+1+1 = %g\n", get(kBF16, out, 0));
  });

  // Split 4 -> even/odd ranks, keyed by -rank (so global 2 is rank 0 of
  // "even"), and 4 -> the first two only (others pass NOCOLOR).
  ranks(4, [&](int r) {
    expect(joint_nccl_comm_split("world4", r % 2 ? "odd" : "even", r % 2, -r) ==
               0,
           "split parity");
    expect(joint_nccl_comm_split("world4", "first2", r < 2 ? 7 : -1, r) == 0,
           "split nocolor");
  });
  status("split");
  ranks(4, [&](int r) {
    std::vector<char> in(4), out(8);
    put(kF32, in, 0, 100 + r);
    const char *group = r % 2 ? "odd" : "even";
    runOn(
        in, out,
        [&](void *din, void *dout) {
          return joint_nccl_all_gather(group, din, dout, 1,
                                       JOINT_NCCL_DTYPE_F32, "gather_split");
        },
        "split gather");
    // Ordered by key -rank: the higher global rank first.
    int high = r % 2 ? 3 : 2, low = r % 2 ? 1 : 0;
    expect(get(kF32, out, 0) == 100 + high && get(kF32, out, 1) == 100 + low,
           "split order rank " + std::to_string(r));
    if (r == 0)
      std::printf("even group gathers %g %g\n", get(kF32, out, 0),
                  get(kF32, out, 1));
  });
  status("split gather");
  ranks(2, [&](int r) {
    std::vector<char> in(8), out(16);
    put(kI64, in, 0, 10 * r + 1);
    runOn(
        in, out,
        [&](void *din, void *dout) {
          return joint_nccl_all_gather("first2", din, dout, 1,
                                       JOINT_NCCL_DTYPE_I64, "gather_first2");
        },
        "first2 gather");
    expect(get(kI64, out, 0) == 1 && get(kI64, out, 1) == 11, "first2");
  });
  status("first2 gather");
  // Rank 2 has no "first2": an unknown group, naming group and node.
  std::thread([] {
    mgpuSetDefaultDevice(2);
    void *h = joint_nccl_all_gather("first2", nullptr, nullptr, 1,
                                    JOINT_NCCL_DTYPE_F32, "gather_nocolor");
    expect(h == nullptr, "nocolor handle");
  }).join();
  status("nocolor rank", JOINT_STATUS_INVALID_ARGUMENT);

  // all_to_all_single with unequal counts: rank r sends (r + p) % 3 + (p
  // == 1) elements to peer p.
  auto sendCount = [](int r, int p) { return (r + p) % 3 + (p == 1 ? 1 : 0); };
  for (const Type &t : {kF32, kI64}) {
    ranks(4, [&](int r) {
      std::vector<int64_t> sends(4), recvs(4);
      int64_t sendTotal = 0, recvTotal = 0;
      for (int p = 0; p < 4; ++p) {
        sends[p] = sendCount(r, p);
        recvs[p] = sendCount(p, r);
        sendTotal += sends[p];
        recvTotal += recvs[p];
      }
      std::vector<char> in(sendTotal * t.bytes), out(recvTotal * t.bytes);
      for (int64_t k = 0; k < sendTotal; ++k)
        put(t, in, k, 100 * r + k);
      runOn(
          in, out,
          [&](void *din, void *dout) {
            return joint_nccl_all_to_all("world4", din, dout, sends.data(),
                                         recvs.data(), 4, t.dtype,
                                         "all_to_all_4");
          },
          "all_to_all");
      // Block from p: p's elements at p's displacement for r.
      size_t at = 0;
      for (int p = 0; p < 4; ++p) {
        int64_t displ = 0;
        for (int q = 0; q < r; ++q)
          displ += sendCount(p, q);
        for (int64_t k = 0; k < sendCount(p, r); ++k)
          expect(get(t, out, at++) == 100 * p + displ + k,
                 std::string("all_to_all ") + t.name + " rank " +
                     std::to_string(r));
      }
      if (r == 1 && t.integer) {
        std::printf("all_to_all rank 1 receives");
        for (size_t k = 0; k < at; ++k)
          std::printf(" %g", get(t, out, k));
        std::printf("\n");
      }
    });
  }
  status("all_to_all");

  // Argument errors name the entry point, the group and the node.
  void *h = joint_nccl_all_reduce("tp_group_9", nullptr, nullptr, 4,
                                  JOINT_NCCL_DTYPE_F32, JOINT_REDUCE_SUM,
                                  "all_reduce_7");
  expect(h == nullptr, "unknown group handle");
  status("unknown group", JOINT_STATUS_INVALID_ARGUMENT);
  h = joint_nccl_all_gather("world4", nullptr, nullptr, 4, 42, "all_gather_8");
  status("bad dtype", JOINT_STATUS_INVALID_ARGUMENT);
  h = joint_nccl_reduce_scatter("world4", nullptr, nullptr, 4,
                                JOINT_NCCL_DTYPE_F32, 9, "reduce_scatter_9");
  status("bad op", JOINT_STATUS_INVALID_ARGUMENT);
  int64_t counts[3] = {1, 1, 1};
  h = joint_nccl_all_to_all("world4", nullptr, nullptr, counts, counts, 3,
                            JOINT_NCCL_DTYPE_F32, "all_to_all_10");
  status("all_to_all ranks", JOINT_STATUS_INVALID_ARGUMENT);
  expect(joint_nccl_wait(nullptr) != 0, "wait on null");
  status("wait null", JOINT_STATUS_INVALID_ARGUMENT);

  // Ranks that disagree on the count: found on the communication stream.
  ranks(2, [&](int r) {
    std::vector<char> in(8 * 4), out(16 * 4);
    runOn(
        in, out,
        [&](void *din, void *dout) {
          return joint_nccl_all_gather("world2", din, dout, r ? 8 : 4,
                                       JOINT_NCCL_DTYPE_F32, "all_gather_11");
        },
        "mismatch", false);
  });
  status("count mismatch", JOINT_STATUS_DEVICE_CHECK);

  // Rank 0 reads `out` on the compute stream before joint_nccl_wait: a race
  // with the collective's write on the communication stream.
  ranks(2, [&](int r) {
    std::vector<char> in(16), out(32);
    void *din = mgpuMemAlloc(16, nullptr, false);
    void *dout = mgpuMemAlloc(32, nullptr, false);
    mgpuMemcpy(din, in.data(), 16, nullptr);
    void *handle = joint_nccl_all_gather("world2", din, dout, 4,
                                         JOINT_NCCL_DTYPE_F32, "all_gather_12");
    if (r == 0)
      mgpuMemcpy(out.data(), dout, 32, nullptr); // no wait: a race
    joint_nccl_wait(handle);
    mgpuStreamSynchronize(nullptr);
    mgpuMemFree(din, nullptr);
    mgpuMemFree(dout, nullptr);
  });
  status("read before wait", JOINT_STATUS_DEVICE_CHECK);
  // Rank 1 frees `in` before the wait: the free races the collective's read.
  ranks(2, [&](int r) {
    void *din = mgpuMemAlloc(16, nullptr, false);
    void *dout = mgpuMemAlloc(32, nullptr, false);
    std::vector<char> in(16);
    mgpuMemcpy(din, in.data(), 16, nullptr);
    void *handle = joint_nccl_all_gather("world2", din, dout, 4,
                                         JOINT_NCCL_DTYPE_F32, "all_gather_13");
    if (r == 1)
      mgpuMemFree(din, nullptr);
    joint_nccl_wait(handle);
    mgpuStreamSynchronize(nullptr);
    if (r == 0)
      mgpuMemFree(din, nullptr);
    mgpuMemFree(dout, nullptr);
  });
  status("free before wait", JOINT_STATUS_DEVICE_CHECK);
  // With the wait, the same read is clean.
  ranks(2, [&](int r) {
    std::vector<char> in(16), out(32);
    runOn(
        in, out,
        [&](void *din, void *dout) {
          return joint_nccl_all_gather("world2", din, dout, 4,
                                       JOINT_NCCL_DTYPE_F32, "all_gather_14");
        },
        "clean");
  });
  status("with the wait");

  ranks(4,
        [&](int r) { expect(joint_nccl_comm_destroy_all() == 0, "destroy"); });
  // Gone: the group is unknown now.
  h = joint_nccl_all_gather("world4", nullptr, nullptr, 1, JOINT_NCCL_DTYPE_F32,
                            "all_gather_15");
  status("after destroy", JOINT_STATUS_INVALID_ARGUMENT);
  JointEmuStats stats;
  joint_emu_get_stats(&stats);
  std::printf("collectives %llu, live bytes %llu\n",
              static_cast<unsigned long long>(joint_emu_collectives()),
              static_cast<unsigned long long>(stats.live_bytes));
  expect(stats.live_bytes == 0, "leaked device bytes");
  status("shutdown", 0);
  expect(joint_runtime_shutdown() == 0, "shutdown");
}

/// Run with JOINT_EMU_NCCL_TIMEOUT_S=1: ranks that never arrive are an
/// error, not a hang (init, then a collective whose peer skips it); only
/// waits for a rank that never comes use the short timeout.
void timeout() {
  unsigned char id[JOINT_NCCL_UNIQUE_ID_BYTES];
  expect(joint_nccl_get_unique_id(id) == 0, "id");
  int s = joint_nccl_comm_init("world3", 3, 1, id); // ranks 0 and 2 never come
  std::printf("lonely init: %d %s\n", s, joint_runtime_last_error());
  expect(s == JOINT_STATUS_COLLECTIVE_FAILURE, "lonely init status");
  joint_runtime_clear_error();
  expect(joint_nccl_get_unique_id(id) == 0, "id");
  // Both ranks arrive at this init: the default wait, so that a loaded
  // machine cannot make it time out; only the skipped peer below does.
  ::setenv("JOINT_EMU_NCCL_TIMEOUT_S", "300", 1);
  ranks(2, [&](int r) {
    expect(joint_nccl_comm_init("world2", 2, r, id) == 0, "init");
  });
  ::setenv("JOINT_EMU_NCCL_TIMEOUT_S", "1", 1);
  ranks(2, [&](int r) {
    if (r == 1)
      return; // rank 1 skips the all_gather
    std::vector<char> in(4), out(8);
    runOn(
        in, out,
        [&](void *din, void *dout) {
          return joint_nccl_all_gather("world2", din, dout, 1,
                                       JOINT_NCCL_DTYPE_F32, "all_gather_1");
        },
        "skipped", false);
  });
  std::printf("skipped collective: %d %s\n", joint_runtime_status(),
              joint_runtime_last_error());
  expect(joint_runtime_status() == JOINT_STATUS_DEVICE_CHECK, "skipped");
}

/// Two ranks on one device: NCCL refuses it on every rank (no hang, no
/// communicator), and the next init with one rank per device works.
void sameDevice() {
  unsigned char id[JOINT_NCCL_UNIQUE_ID_BYTES];
  expect(joint_nccl_get_unique_id(id) == 0, "id");
  std::vector<int> statuses(2);
  std::vector<std::string> messages(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      mgpuSetDefaultDevice(3);
      statuses[r] = joint_nccl_comm_init("pair", 2, r, id);
      messages[r] = joint_runtime_last_error();
      joint_runtime_clear_error();
    });
  for (std::thread &t : threads)
    t.join();
  for (int r = 0; r < 2; ++r) {
    std::printf("rank %d on device 3: %d %s\n", r, statuses[r],
                messages[r].c_str());
    expect(statuses[r] == JOINT_STATUS_COLLECTIVE_FAILURE, "same device");
  }
  expect(joint_nccl_get_unique_id(id) == 0, "id");
  ranks(2, [&](int r) {
    expect(joint_nccl_comm_init("pair", 2, r, id) == 0, "one per device");
  });
  status("one rank per device");
}

void missingNccl() {
  unsigned char id[JOINT_NCCL_UNIQUE_ID_BYTES];
  int s = joint_nccl_get_unique_id(id);
  std::printf("get_unique_id: %d %s\n", s, joint_runtime_last_error());
  expect(s == JOINT_STATUS_COLLECTIVE_FAILURE, "missing library status");
  joint_runtime_clear_error();
  s = joint_nccl_comm_init("world", 2, 0, id);
  std::printf("comm_init: %d %s\n", s, joint_runtime_last_error());
  expect(s == JOINT_STATUS_COLLECTIVE_FAILURE, "comm_init status");
  joint_runtime_clear_error();
  void *h = joint_nccl_all_gather("world", id, id, 1, JOINT_NCCL_DTYPE_F32,
                                  "all_gather_1");
  expect(h == nullptr, "collective without NCCL");
  std::printf("all_gather: %d %s\n", joint_runtime_status(),
              joint_runtime_last_error());
}

} // namespace

int main(int argc, char **argv) {
  std::string which = argc > 1 ? argv[1] : "";
  if (which == "emulated")
    emulated();
  else if (which == "timeout")
    timeout();
  else if (which == "same-device")
    sameDevice();
  else if (which == "missing-nccl")
    missingNccl();
  else {
    std::fprintf(stderr, "usage: joint-cuda-nccl-test "
                         "emulated|timeout|same-device|missing-nccl\n");
    return 2;
  }
  std::printf(bad ? "FAILED\n" : "PASSED\n");
  return bad ? 1 : 0;
}

//===- EmulatedDriver.h - A CUDA device emulated on the host ----*- C++ -*-===//
//
// `emulatedDriver()` is a `DriverApi` that never calls libcuda: device memory
// is host memory from a tracking allocator (live bytes, high-water mark,
// freed memory poisoned with 0xFF bytes, a NaN in every float format, and
// quarantined), each stream is a worker thread, events and stream waits
// follow CUDA semantics, and kernels are host functions from a table
// (joint_cuda_emulator.h). A race checker gives every enqueued operation the
// byte ranges it reads and writes and a vector clock; conflicting accesses
// that no stream order, event wait or host synchronisation orders, uses
// after free, double frees and out-of-range copies become findings that the
// runtime turns into its error status (`DriverApi::takeFinding`). The
// emulator is one process-wide device, like a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_RUNTIME_CUDA_EMULATEDDRIVER_H
#define JOINT_RUNTIME_CUDA_EMULATEDDRIVER_H

#include "Driver.h"
#include "joint_cuda_emulator.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace joint::cuda {

/// The emulated device's driver table.
const DriverApi &emulatedDriver();

/// True when `api` is the emulated device's table.
bool isEmulated(const DriverApi &api);

namespace emu {

/// Ordinals of the emulated machine's devices (0 to kDevices - 1). They
/// share one address space, one allocator and one set of counters.
constexpr int kDevices = 8;

/// Ordinal of the calling thread's current context (cuCtxPushCurrent), or
/// -1 when none is current; what cudaGetDevice tells NCCL on a real GPU.
int currentDevice();
/// Counters of the emulated device (see JointEmuStats for units).
JointEmuStats stats();
/// Copies (any direction) enqueued so far on `stream`; -1 when it is not a
/// live stream of the emulated device.
int64_t streamCopies(CUstream stream);
/// Takes the live device allocation starting at `ptr` out of the live bytes
/// until an operation enqueued later writes it (a step's output buffer,
/// counted from its first write like the memory model counts a graph
/// output); 0, or -1 when `ptr` starts no such allocation.
int countFromFirstWrite(const void *ptr);
/// Restarts the high-water mark at the current live bytes.
void resetPeak();
/// Declares a range the next launch of this thread reads and/or writes
/// (`mode`: JOINT_EMU_READ | JOINT_EMU_WRITE).
void declareAccess(const void *ptr, uint64_t bytes, int mode);
/// Host wait for every stream; joins the host's clock with all of them.
void synchronizeAll();

/// One byte range [ptr, ptr + bytes) of a library call's operand `role`
/// ("operand A"), read and/or written.
struct LibraryRange {
  const void *ptr;
  uint64_t bytes;
  bool read, write;
  const char *role;
};

/// Enqueues a library call (a CPU reference of a cuBLAS/cuDNN shim) on
/// `stream` as the operation `kind` ("cuBLAS GEMM"), for the current node:
/// every range must lie inside one device allocation (else the call is
/// refused with CUDA_ERROR_INVALID_VALUE naming the role), the ranges go to
/// the race checker like a copy's, `library_calls` counts it, and
/// `work(workers)` runs on the stream's worker in stream order, with up to
/// `workers` host threads (JOINT_EMU_BLOCK_WORKERS) to share out.
CUresult submitLibraryCall(CUstream stream, const std::string &kind,
                           const std::vector<LibraryRange> &ranges,
                           std::function<void(unsigned workers)> work);

/// As `submitLibraryCall`, for an NCCL collective (or a group of sends and
/// receives) of the emulated NCCL on its communication stream: counted in
/// `collectives()`, not in `library_calls`; `work` runs on the stream's
/// worker and may block there until the other ranks' workers arrive.
CUresult submitCollective(CUstream stream, const std::string &kind,
                          const std::vector<LibraryRange> &ranges,
                          std::function<void()> work);
/// NCCL collectives and send/receive groups enqueued so far.
uint64_t collectives();
/// Queues a finding that fails no call (e.g. ranks of one collective that
/// disagree on its count), counted in `errors`; the runtime records it as
/// JOINT_STATUS_DEVICE_CHECK at its next driver call.
void reportFinding(const std::string &message);

/// bf16 and f16 from and to float, rounding to nearest even (NaN stays NaN).
float bf16ToFloat(uint16_t h);
uint16_t floatToBf16(float f);
float f16ToFloat(uint16_t h);
uint16_t floatToF16(float f);

/// The simulated schedule (EmulatedTrace.h). Starts a traced interval
/// (host<->device copies at `linkBytesPerSecond`, > 0); false when the
/// bandwidth is not a positive number.
bool traceStart(double linkBytesPerSecond);
/// Sets node `node`'s cost-model seconds (finite, >= 0); false otherwise.
bool setNodeSeconds(const char *node, double seconds);
/// The interval's totals; zero when not tracing.
JointEmuTraceSummary traceSummary();
/// Writes the interval as Chrome trace JSON to `path`; false with
/// `*error` set when not tracing or the file cannot be written.
bool writeTrace(const char *path, std::string *error);

} // namespace emu
} // namespace joint::cuda

#endif // JOINT_RUNTIME_CUDA_EMULATEDDRIVER_H

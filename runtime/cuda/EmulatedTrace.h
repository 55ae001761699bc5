//===- EmulatedTrace.h - Simulated schedule of the emulator -----*- C++ -*-===//
//
// `Schedule` logs what the program enqueues on the emulated device, in
// enqueue order (operations, event records, stream waits, host
// synchronisations), and places it on a simulated clock, never wall time:
// an operation starts when its stream is free, every event it waits on has
// completed and the host has enqueued it (after its last synchronisation);
// work (kernels, library calls, memsets, device copies) takes its node's
// cost-model seconds split evenly over the node's work in the log, a
// host<->device copy bytes / link bandwidth, allocations and frees nothing.
// The log is written as a Chrome trace (Perfetto JSON) with a summary: step
// time and exposed transfer time. The emulated device calls it with its
// mutex held; the result depends on the enqueue order only.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_RUNTIME_CUDA_EMULATEDTRACE_H
#define JOINT_RUNTIME_CUDA_EMULATEDTRACE_H

#include "joint_cuda_emulator.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace joint::cuda::emu {

/// What an enqueued operation costs in simulated time.
enum class TraceKind {
  Work,         ///< kernel, library call, memset, device-to-device copy
  CopyToHost,   ///< bytes / link bandwidth
  CopyToDevice, ///< bytes / link bandwidth
  Memory,       ///< zero time (stream-ordered allocations and frees)
};

/// The trace entry of one operation handed to `Device::submit`: its kind,
/// a short name ("kernel 'k'", "copy D2H") and its bytes (copies).
struct TraceOp {
  TraceKind kind = TraceKind::Work;
  std::string name; ///< empty: the operation's label up to its node
  uint64_t bytes = 0;
};

class Schedule {
public:
  /// Clears the log and records from now on; `linkBytesPerSecond` prices
  /// host<->device copies (> 0). Node costs are kept.
  void start(double linkBytesPerSecond);
  bool recording() const { return on; }
  /// The cost-model seconds of node `node` (>= 0), split over its work.
  void setNodeSeconds(const std::string &node, double seconds);

  /// Stream `stream` (1-based) runs `op` for node `node`; `what` is the
  /// operation's label, `op.name`'s fallback.
  void operation(unsigned stream, const TraceOp &op, const std::string &node,
                 const std::string &what);
  /// An event record on `stream`; returns its id (never 0).
  uint64_t record(unsigned stream);
  /// `stream` waits for record `id` (0 or a record before start: no wait).
  void wait(unsigned stream, uint64_t id);
  /// The host waits for all work enqueued on `stream` (0: every stream).
  void hostWaitsStream(unsigned stream);
  /// The host waits for record `id`.
  void hostWaitsRecord(uint64_t id);

  /// The simulated schedule's totals (seconds; see JointEmuTraceSummary).
  JointEmuTraceSummary summary() const;
  /// The Chrome trace JSON (timestamps in microseconds, 3 decimals).
  std::string json() const;

private:
  enum class Entry { Operation, Record, Wait, HostStream, HostRecord };
  struct Logged {
    Entry entry;
    unsigned stream = 0;
    uint64_t id = 0; ///< record id (Record, Wait, HostRecord)
    TraceOp op;
    std::string node;
  };
  /// One placed entry of the simulation.
  struct Placed {
    size_t log; ///< index into `log`
    double start = 0, seconds = 0;
    unsigned onStream = 0; ///< Wait: the stream of the awaited record
  };
  struct Simulation {
    std::vector<Placed> slices; ///< operations and stalls, in log order
    JointEmuTraceSummary summary = {};
    std::map<unsigned, bool> computeStreams; ///< streams that ran work
  };
  Simulation simulate() const;

  bool on = false;
  double linkBytesPerSecond = 55e9;
  uint64_t nextRecord = 1;
  std::vector<Logged> log;
  std::map<std::string, double> nodeSeconds;
};

} // namespace joint::cuda::emu

#endif // JOINT_RUNTIME_CUDA_EMULATEDTRACE_H

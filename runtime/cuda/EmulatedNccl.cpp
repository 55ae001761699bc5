//===- EmulatedNccl.cpp - NCCL between rank threads on the emulated device ===//
//
// `emulatedNccl()`: the ranks of a communicator are threads of this process
// (thread r on emulated device r). ncclCommInitRank meets the other ranks by
// unique id and, as NCCL does, fails on every rank when two ranks share a
// device (the calling thread's current context); ncclCommSplit is a rendezvous
// over the parent's ranks (ranks grouped by color, ordered by key, then parent
// rank). A collective (or a group of sends and receives) is stream work on the
// communication stream: its reads and writes go to the race checker when it is
// enqueued, and on the stream's worker the ranks meet per (communicator,
// sequence number), every rank deposits its buffers, computes its own output
// from all of them (reductions in rank order 0..n-1, f16/bf16 widened to float
// and rounded back at each step, avg = sum / nranks, integers exact, wrapping),
// waits until every rank has done so (no input is released early), then writes
// its output. Ranks that disagree (counts, types, unmatched sends) are
// reported as findings and leave their outputs unwritten.
//
//===----------------------------------------------------------------------===//

#include "EmulatedDriver.h"
#include "Nccl.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <type_traits>
#include <unistd.h>

using namespace joint::cuda;

namespace {

//===----------------------------------------------------------------------===//
// Rendezvous
//===----------------------------------------------------------------------===//

/// How long a rank waits for the others at a rendezvous before giving up
/// (JOINT_EMU_NCCL_TIMEOUT_S, default 300, read at each wait): a rank that
/// never arrives is an error, not a hang.
std::chrono::seconds timeout() {
  const char *text = std::getenv("JOINT_EMU_NCCL_TIMEOUT_S");
  long long s = text && *text ? std::atoll(text) : 300;
  return std::chrono::seconds(s > 0 ? s : 300);
}

/// " 1, 3": the ranks whose slot is empty.
std::string missingRanks(const std::vector<const void *> &slots) {
  std::string text;
  for (size_t r = 0; r < slots.size(); ++r)
    if (!slots[r])
      text += (text.empty() ? " " : ", ") + std::to_string(r);
  return text;
}

/// The ranks of one communicator.
struct Clique {
  explicit Clique(int nranks) : nranks(nranks) {}

  struct Round {
    std::vector<const void *> slots; ///< one deposit per rank
    int arrived = 0, done = 0, left = 0;
    /// ncclCommSplit: the new clique of each color.
    std::map<int, std::shared_ptr<Clique>> created;
  };

  /// Rank `rank`'s part of round `seq`: deposits `mine`, waits for every
  /// rank, runs `body(round)` (which may read every slot), then waits until
  /// every rank ran its body, so no deposit is released early. "" or, when
  /// some rank did not arrive within the timeout, which ones (the deposit
  /// is withdrawn, `body` does not run).
  template <typename F>
  std::string exchange(uint64_t seq, int rank, const void *mine, F body) {
    std::unique_lock<std::mutex> lock(mutex);
    Round &round = rounds[seq];
    if (round.slots.empty())
      round.slots.resize(nranks, nullptr);
    round.slots[rank] = mine;
    ++round.arrived;
    changed.notify_all();
    if (!changed.wait_for(lock, timeout(),
                          [&] { return round.arrived == nranks; })) {
      std::string missing = missingRanks(round.slots);
      round.slots[rank] = nullptr;
      if (--round.arrived == 0)
        rounds.erase(seq);
      return "rank " + std::to_string(rank) + " waited " +
             std::to_string(timeout().count()) + " s for rank(s)" + missing +
             " (JOINT_EMU_NCCL_TIMEOUT_S)";
    }
    lock.unlock();
    body(round);
    lock.lock();
    ++round.done;
    changed.notify_all();
    changed.wait(lock, [&] { return round.done == nranks; });
    if (++round.left == nranks)
      rounds.erase(seq);
    return "";
  }

  const int nranks;
  std::mutex mutex;
  std::condition_variable changed;
  std::map<uint64_t, Round> rounds;
};

struct EmuComm {
  std::shared_ptr<Clique> clique;
  int rank = 0;
  uint64_t collectives = 0; ///< enqueued so far (even round numbers)
  uint64_t splits = 0;      ///< ncclCommSplit calls (odd round numbers)
};

EmuComm *unwrap(ncclComm_t comm) { return reinterpret_cast<EmuComm *>(comm); }

thread_local std::string lastError;

ncclResult_t fail(ncclResult_t result, const std::string &why) {
  lastError = why;
  return result;
}

//===----------------------------------------------------------------------===//
// Element arithmetic
//===----------------------------------------------------------------------===//

template <typename T>
struct Plain {
  using Storage = T;
  using Acc = T;
  static Acc load(T v) { return v; }
  static T store(Acc a) { return a; }
};
struct Bf16 {
  using Storage = uint16_t;
  using Acc = float;
  static float load(uint16_t v) { return emu::bf16ToFloat(v); }
  static uint16_t store(float a) { return emu::floatToBf16(a); }
};
struct F16 {
  using Storage = uint16_t;
  using Acc = float;
  static float load(uint16_t v) { return emu::f16ToFloat(v); }
  static uint16_t store(float a) { return emu::floatToF16(a); }
};

template <typename Acc>
Acc combine(Acc a, Acc b, ncclRedOp_t op) {
  switch (op) {
  case ncclProd:
    if constexpr (std::is_integral_v<Acc>) {
      using U = std::make_unsigned_t<Acc>;
      return static_cast<Acc>(static_cast<U>(a) * static_cast<U>(b));
    }
    return a * b;
  case ncclMin:
    return b < a ? b : a;
  case ncclMax:
    return a < b ? b : a;
  default: // sum, and avg's sum
    if constexpr (std::is_integral_v<Acc>) {
      using U = std::make_unsigned_t<Acc>;
      return static_cast<Acc>(static_cast<U>(a) + static_cast<U>(b));
    }
    return a + b;
  }
}

/// out[i] = op over r of ins[r][offset + i], in rank order, rounded to the
/// storage type after each step.
template <typename Traits>
void reduceAs(const std::vector<const void *> &ins, size_t offset, size_t count,
              ncclRedOp_t op, void *out) {
  using S = typename Traits::Storage;
  using Acc = typename Traits::Acc;
  S *o = static_cast<S *>(out);
  for (size_t i = 0; i < count; ++i) {
    Acc acc = Traits::load(static_cast<const S *>(ins[0])[offset + i]);
    for (size_t r = 1; r < ins.size(); ++r)
      acc = Traits::load(Traits::store(combine<Acc>(
          acc, Traits::load(static_cast<const S *>(ins[r])[offset + i]), op)));
    if (op == ncclAvg)
      acc = acc / static_cast<Acc>(ins.size());
    o[i] = Traits::store(acc);
  }
}

void reduce(ncclDataType_t type, const std::vector<const void *> &ins,
            size_t offset, size_t count, ncclRedOp_t op, void *out) {
  switch (type) {
  case ncclInt8:
    return reduceAs<Plain<int8_t>>(ins, offset, count, op, out);
  case ncclUint8:
    return reduceAs<Plain<uint8_t>>(ins, offset, count, op, out);
  case ncclInt32:
    return reduceAs<Plain<int32_t>>(ins, offset, count, op, out);
  case ncclUint32:
    return reduceAs<Plain<uint32_t>>(ins, offset, count, op, out);
  case ncclInt64:
    return reduceAs<Plain<int64_t>>(ins, offset, count, op, out);
  case ncclUint64:
    return reduceAs<Plain<uint64_t>>(ins, offset, count, op, out);
  case ncclFloat16:
    return reduceAs<F16>(ins, offset, count, op, out);
  case ncclBfloat16:
    return reduceAs<Bf16>(ins, offset, count, op, out);
  case ncclFloat32:
    return reduceAs<Plain<float>>(ins, offset, count, op, out);
  case ncclFloat64:
    return reduceAs<Plain<double>>(ins, offset, count, op, out);
  default:
    return;
  }
}

//===----------------------------------------------------------------------===//
// Operations
//===----------------------------------------------------------------------===//

enum class Kind { AllGather, ReduceScatter, AllReduce, Group };

const char *kindName(Kind kind) {
  switch (kind) {
  case Kind::AllGather:
    return "all_gather";
  case Kind::ReduceScatter:
    return "reduce_scatter";
  case Kind::AllReduce:
    return "all_reduce";
  case Kind::Group:
    return "send/recv group";
  }
  return "";
}

struct PeerTransfer {
  int peer;
  const void *send; ///< for a send
  void *recv;       ///< for a receive
  size_t count;
  ncclDataType_t type;
};

/// One rank's deposit in a collective's round.
struct Op {
  Kind kind;
  const void *send = nullptr;
  void *recv = nullptr;
  size_t count = 0; ///< sendcount, recvcount or count, as NCCL names it
  ncclDataType_t type = ncclFloat32;
  ncclRedOp_t op = ncclSum;
  std::vector<PeerTransfer> sends, recvs;
};

/// Computes rank `rank`'s outputs into `results` (one per receive buffer)
/// from every rank's deposit; "" or why the ranks disagree.
std::string compute(const Op &mine, const std::vector<const void *> &slots,
                    int rank, std::vector<std::vector<char>> &results) {
  int n = static_cast<int>(slots.size());
  std::string prefix = std::string("NCCL ") + kindName(mine.kind) + " (rank " +
                       std::to_string(rank) + " of " + std::to_string(n) +
                       "): ";
  if (mine.kind == Kind::Group) {
    results.resize(mine.recvs.size());
    std::map<int, int> seen; // receives from each peer so far
    for (size_t k = 0; k < mine.recvs.size(); ++k) {
      const PeerTransfer &r = mine.recvs[k];
      const Op &theirs = *static_cast<const Op *>(slots[r.peer]);
      int skip = seen[r.peer]++;
      const PeerTransfer *match = nullptr;
      for (const PeerTransfer &s : theirs.sends)
        if (s.peer == rank && skip-- == 0) {
          match = &s;
          break;
        }
      if (!match)
        return prefix + "receives " + std::to_string(r.count) +
               " elements from rank " + std::to_string(r.peer) +
               ", which sends nothing to it";
      if (match->count != r.count || match->type != r.type)
        return prefix + "receives " + std::to_string(r.count) +
               " elements of type " + std::to_string(r.type) + " from rank " +
               std::to_string(r.peer) + ", which sends " +
               std::to_string(match->count) + " of type " +
               std::to_string(match->type);
      size_t bytes = r.count * ncclTypeBytes(r.type);
      results[k].resize(bytes);
      std::memcpy(results[k].data(), match->send, bytes);
    }
    // Sends nobody receives are reported by the receiving side's view too.
    for (int p = 0; p < n; ++p) {
      const Op &theirs = *static_cast<const Op *>(slots[p]);
      int sent = 0, received = 0;
      for (const PeerTransfer &s : theirs.sends)
        sent += s.peer == rank;
      for (const PeerTransfer &r : mine.recvs)
        received += r.peer == p;
      if (sent > received)
        return prefix + "rank " + std::to_string(p) + " sends " +
               std::to_string(sent) + " buffers to it but it receives " +
               std::to_string(received);
    }
    return "";
  }
  std::vector<const void *> ins(n);
  for (int r = 0; r < n; ++r) {
    const Op &theirs = *static_cast<const Op *>(slots[r]);
    if (theirs.kind != mine.kind)
      return prefix + "rank " + std::to_string(r) + " runs NCCL " +
             kindName(theirs.kind) + " in the same position";
    if (theirs.count != mine.count || theirs.type != mine.type ||
        theirs.op != mine.op)
      return prefix + "count " + std::to_string(mine.count) + ", type " +
             std::to_string(mine.type) + ", op " + std::to_string(mine.op) +
             ", but rank " + std::to_string(r) + " passes count " +
             std::to_string(theirs.count) + ", type " +
             std::to_string(theirs.type) + ", op " + std::to_string(theirs.op);
    ins[r] = theirs.send;
  }
  size_t bytes = ncclTypeBytes(mine.type);
  results.resize(1);
  switch (mine.kind) {
  case Kind::AllGather:
    results[0].resize(mine.count * bytes * n);
    for (int r = 0; r < n; ++r)
      if (mine.count)
        std::memcpy(results[0].data() + r * mine.count * bytes, ins[r],
                    mine.count * bytes);
    break;
  case Kind::ReduceScatter:
    results[0].resize(mine.count * bytes);
    reduce(mine.type, ins, rank * mine.count, mine.count, mine.op,
           results[0].data());
    break;
  case Kind::AllReduce:
    results[0].resize(mine.count * bytes);
    reduce(mine.type, ins, 0, mine.count, mine.op, results[0].data());
    break;
  case Kind::Group:
    break;
  }
  return "";
}

/// Enqueues `op` of `comm` on `stream` (ranges to the race checker).
ncclResult_t enqueue(EmuComm *comm, CUstream stream, Op op,
                     const std::vector<emu::LibraryRange> &ranges) {
  uint64_t seq = 2 * comm->collectives;
  std::shared_ptr<Clique> clique = comm->clique;
  int rank = comm->rank;
  std::string kind = std::string("NCCL ") + kindName(op.kind);
  auto work = [clique, rank, seq, op = std::move(op)] {
    std::vector<std::vector<char>> results;
    std::string problem;
    std::string late =
        clique->exchange(seq, rank, &op, [&](Clique::Round &round) {
          problem = compute(op, round.slots, rank, results);
        });
    if (!late.empty())
      problem = std::string("NCCL ") + kindName(op.kind) + ": " + late;
    if (!problem.empty()) {
      emu::reportFinding(problem);
      return;
    }
    // Every rank has read every input: outputs may alias inputs.
    if (op.kind == Kind::Group) {
      for (size_t k = 0; k < op.recvs.size(); ++k)
        if (!results[k].empty())
          std::memcpy(op.recvs[k].recv, results[k].data(), results[k].size());
    } else if (!results[0].empty()) {
      std::memcpy(op.recv, results[0].data(), results[0].size());
    }
  };
  if (CUresult result =
          emu::submitCollective(stream, kind, ranges, std::move(work)))
    return fail(ncclUnhandledCudaError,
                "the emulated device refused the " + kind + " (CUresult " +
                    std::to_string(static_cast<int>(result)) + ")");
  ++comm->collectives;
  return ncclSuccess;
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

ncclResult_t eGetUniqueId(ncclUniqueId *id) {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t salt = [] {
    std::random_device device;
    return (uint64_t(device()) << 32) ^ device();
  }();
  std::memset(id->internal, 0, sizeof(id->internal));
  uint64_t words[3] = {++counter, salt, static_cast<uint64_t>(getpid())};
  std::memcpy(id->internal, "JEMUNCCL", 8);
  std::memcpy(id->internal + 8, words, sizeof(words));
  return ncclSuccess;
}

struct PendingInit {
  std::shared_ptr<Clique> clique;
  std::vector<bool> joined;
  std::vector<int> devices; ///< each rank's current device (-1: none)
  int arrived = 0, left = 0;
};

/// NCCL's "Duplicate GPU detected": "" or which ranks share a device.
std::string duplicateDevice(const std::vector<int> &devices) {
  for (size_t a = 0; a < devices.size(); ++a)
    for (size_t b = a + 1; b < devices.size(); ++b)
      if (devices[a] >= 0 && devices[a] == devices[b])
        return "ranks " + std::to_string(a) + " and " + std::to_string(b) +
               " both use device " + std::to_string(devices[a]) +
               " (one rank per device: select each rank's device before "
               "joining)";
  return "";
}

ncclResult_t eCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id,
                           int rank) {
  static std::mutex mutex;
  static std::condition_variable changed;
  static std::map<std::string, PendingInit> pending;
  if (!comm || nranks < 1 || rank < 0 || rank >= nranks)
    return fail(ncclInvalidArgument, "rank " + std::to_string(rank) + " of " +
                                         std::to_string(nranks));
  std::string key(id.internal, sizeof(id.internal));
  std::unique_lock<std::mutex> lock(mutex);
  PendingInit &p = pending[key];
  if (!p.clique) {
    p.clique = std::make_shared<Clique>(nranks);
    p.joined.resize(nranks, false);
    p.devices.resize(nranks, -1);
  }
  if (p.clique->nranks != nranks)
    return fail(ncclInvalidUsage,
                "rank " + std::to_string(rank) + " passes " +
                    std::to_string(nranks) + " ranks, another rank passed " +
                    std::to_string(p.clique->nranks) + " for the same id");
  if (p.joined[rank])
    return fail(ncclInvalidUsage,
                "rank " + std::to_string(rank) + " joined this id twice");
  p.joined[rank] = true;
  p.devices[rank] = emu::currentDevice();
  ++p.arrived;
  changed.notify_all();
  if (!changed.wait_for(lock, timeout(), [&] { return p.arrived == nranks; })) {
    std::vector<const void *> joined(nranks, nullptr);
    for (int r = 0; r < nranks; ++r)
      joined[r] = p.joined[r] ? &p : nullptr;
    std::string missing = missingRanks(joined);
    p.joined[rank] = false;
    if (--p.arrived == 0)
      pending.erase(key);
    return fail(ncclSystemError, "rank " + std::to_string(rank) + " waited " +
                                     std::to_string(timeout().count()) +
                                     " s for rank(s)" + missing +
                                     " (JOINT_EMU_NCCL_TIMEOUT_S)");
  }
  // Every rank sees the same devices, so all fail together.
  std::string duplicate = duplicateDevice(p.devices);
  std::shared_ptr<Clique> clique = p.clique;
  if (++p.left == nranks)
    pending.erase(key);
  if (!duplicate.empty())
    return fail(ncclInvalidUsage, duplicate);
  auto *c = new EmuComm;
  c->clique = std::move(clique);
  c->rank = rank;
  *comm = reinterpret_cast<ncclComm_t>(c);
  return ncclSuccess;
}

ncclResult_t eCommSplit(ncclComm_t comm, int color, int key,
                        ncclComm_t *newcomm, ncclConfig_t *) {
  EmuComm *parent = unwrap(comm);
  if (!parent || !newcomm)
    return fail(ncclInvalidArgument, "null communicator");
  struct Mine {
    int color, key;
  } mine{color, key};
  uint64_t seq = 2 * parent->splits++ + 1;
  std::shared_ptr<Clique> clique;
  int newRank = -1;
  std::string late = parent->clique->exchange(
      seq, parent->rank, &mine, [&](Clique::Round &round) {
        if (color == NCCL_SPLIT_NOCOLOR)
          return;
        std::vector<std::pair<int, int>> members; // (key, parent rank)
        for (int r = 0; r < parent->clique->nranks; ++r) {
          const Mine &theirs = *static_cast<const Mine *>(round.slots[r]);
          if (theirs.color == color)
            members.emplace_back(theirs.key, r);
        }
        std::sort(members.begin(), members.end());
        for (size_t i = 0; i < members.size(); ++i)
          if (members[i].second == parent->rank)
            newRank = static_cast<int>(i);
        std::lock_guard<std::mutex> lock(parent->clique->mutex);
        std::shared_ptr<Clique> &created = round.created[color];
        if (!created)
          created = std::make_shared<Clique>(static_cast<int>(members.size()));
        clique = created;
      });
  if (!late.empty())
    return fail(ncclSystemError, late);
  if (!clique) {
    *newcomm = nullptr;
    return ncclSuccess;
  }
  auto *c = new EmuComm;
  c->clique = std::move(clique);
  c->rank = newRank;
  *newcomm = reinterpret_cast<ncclComm_t>(c);
  return ncclSuccess;
}

ncclResult_t eCommDestroy(ncclComm_t comm) {
  delete unwrap(comm);
  return ncclSuccess;
}

ncclResult_t eCommCount(const ncclComm_t comm, int *count) {
  if (!comm || !count)
    return fail(ncclInvalidArgument, "null communicator");
  *count = unwrap(comm)->clique->nranks;
  return ncclSuccess;
}

const char *eGetErrorString(ncclResult_t result) {
  switch (result) {
  case ncclSuccess:
    return "ncclSuccess";
  case ncclUnhandledCudaError:
    return "ncclUnhandledCudaError";
  case ncclSystemError:
    return "ncclSystemError";
  case ncclInternalError:
    return "ncclInternalError";
  case ncclInvalidArgument:
    return "ncclInvalidArgument";
  case ncclInvalidUsage:
    return "ncclInvalidUsage";
  case ncclRemoteError:
    return "ncclRemoteError";
  case ncclInProgress:
    return "ncclInProgress";
  default:
    return "ncclResult";
  }
}

const char *eGetLastError(ncclComm_t) { return lastError.c_str(); }

/// Checks a communicator and a type; NCCL's own argument checks.
ncclResult_t checkArgs(EmuComm *comm, ncclDataType_t type, const char *call) {
  if (!comm)
    return fail(ncclInvalidArgument, std::string(call) + ": null communicator");
  if (!ncclTypeBytes(type))
    return fail(ncclInvalidArgument, std::string(call) + ": unsupported type " +
                                         std::to_string(type));
  return ncclSuccess;
}

ncclResult_t checkOp(ncclRedOp_t op, const char *call) {
  if (op < ncclSum || op > ncclAvg)
    return fail(ncclInvalidArgument, std::string(call) +
                                         ": unsupported reduction " +
                                         std::to_string(op));
  return ncclSuccess;
}

ncclResult_t eAllGather(const void *send, void *recv, size_t count,
                        ncclDataType_t type, ncclComm_t comm,
                        cudaStream_t stream) {
  EmuComm *c = unwrap(comm);
  if (ncclResult_t r = checkArgs(c, type, "ncclAllGather"))
    return r;
  size_t bytes = count * ncclTypeBytes(type);
  Op op{Kind::AllGather, send, recv, count, type};
  return enqueue(
      c, stream, std::move(op),
      {{send, bytes, true, false, "send buffer"},
       {recv, bytes * c->clique->nranks, false, true, "receive buffer"}});
}

ncclResult_t eReduceScatter(const void *send, void *recv, size_t count,
                            ncclDataType_t type, ncclRedOp_t redOp,
                            ncclComm_t comm, cudaStream_t stream) {
  EmuComm *c = unwrap(comm);
  if (ncclResult_t r = checkArgs(c, type, "ncclReduceScatter"))
    return r;
  if (ncclResult_t r = checkOp(redOp, "ncclReduceScatter"))
    return r;
  size_t bytes = count * ncclTypeBytes(type);
  Op op{Kind::ReduceScatter, send, recv, count, type, redOp};
  return enqueue(c, stream, std::move(op),
                 {{send, bytes * c->clique->nranks, true, false, "send buffer"},
                  {recv, bytes, false, true, "receive buffer"}});
}

ncclResult_t eAllReduce(const void *send, void *recv, size_t count,
                        ncclDataType_t type, ncclRedOp_t redOp, ncclComm_t comm,
                        cudaStream_t stream) {
  EmuComm *c = unwrap(comm);
  if (ncclResult_t r = checkArgs(c, type, "ncclAllReduce"))
    return r;
  if (ncclResult_t r = checkOp(redOp, "ncclAllReduce"))
    return r;
  size_t bytes = count * ncclTypeBytes(type);
  Op op{Kind::AllReduce, send, recv, count, type, redOp};
  return enqueue(c, stream, std::move(op),
                 {{send, bytes, true, false, "send buffer"},
                  {recv, bytes, false, true, "receive buffer"}});
}

/// Sends and receives between ncclGroupStart and ncclGroupEnd (a lone one
/// is a group of its own).
struct PendingPeer {
  bool isSend;
  EmuComm *comm;
  CUstream stream;
  PeerTransfer transfer;
};
struct Group {
  int depth = 0;
  std::vector<PendingPeer> ops;
};
thread_local Group group;

ncclResult_t flushGroup() {
  std::vector<PendingPeer> ops;
  ops.swap(group.ops);
  // One enqueue per communicator, in order of first use.
  std::vector<EmuComm *> order;
  for (const PendingPeer &p : ops)
    if (std::find(order.begin(), order.end(), p.comm) == order.end())
      order.push_back(p.comm);
  ncclResult_t status = ncclSuccess;
  for (EmuComm *comm : order) {
    Op op{Kind::Group};
    std::vector<emu::LibraryRange> ranges;
    CUstream stream = nullptr;
    for (const PendingPeer &p : ops) {
      if (p.comm != comm)
        continue;
      if (stream && p.stream != stream)
        return fail(ncclInvalidUsage,
                    "sends and receives of one communicator in one group "
                    "use two streams");
      stream = p.stream;
      size_t bytes = p.transfer.count * ncclTypeBytes(p.transfer.type);
      if (p.isSend) {
        op.sends.push_back(p.transfer);
        ranges.push_back({p.transfer.send, bytes, true, false, "send buffer"});
      } else {
        op.recvs.push_back(p.transfer);
        ranges.push_back(
            {p.transfer.recv, bytes, false, true, "receive buffer"});
      }
    }
    if (ncclResult_t r = enqueue(comm, stream, std::move(op), ranges))
      status = r;
  }
  return status;
}

ncclResult_t addPeer(bool isSend, const void *send, void *recv, size_t count,
                     ncclDataType_t type, int peer, ncclComm_t comm,
                     cudaStream_t stream) {
  EmuComm *c = unwrap(comm);
  const char *call = isSend ? "ncclSend" : "ncclRecv";
  if (ncclResult_t r = checkArgs(c, type, call))
    return r;
  if (peer < 0 || peer >= c->clique->nranks)
    return fail(ncclInvalidArgument,
                std::string(call) + ": peer " + std::to_string(peer) +
                    " is not a rank of a communicator of " +
                    std::to_string(c->clique->nranks));
  group.ops.push_back({isSend, c, stream, {peer, send, recv, count, type}});
  return group.depth == 0 ? flushGroup() : ncclSuccess;
}

ncclResult_t eSend(const void *send, size_t count, ncclDataType_t type,
                   int peer, ncclComm_t comm, cudaStream_t stream) {
  return addPeer(true, send, nullptr, count, type, peer, comm, stream);
}

ncclResult_t eRecv(void *recv, size_t count, ncclDataType_t type, int peer,
                   ncclComm_t comm, cudaStream_t stream) {
  return addPeer(false, nullptr, recv, count, type, peer, comm, stream);
}

ncclResult_t eGroupStart() {
  ++group.depth;
  return ncclSuccess;
}

ncclResult_t eGroupEnd() {
  if (group.depth == 0)
    return fail(ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
  if (--group.depth > 0)
    return ncclSuccess;
  return flushGroup();
}

} // namespace

const NcclApi &joint::cuda::emulatedNccl() {
  static const NcclApi api = {
      "emulated NCCL", eGetUniqueId,   eCommInitRank,   eCommSplit,
      eCommDestroy,    eCommCount,     eGetErrorString, eGetLastError,
      eAllGather,      eReduceScatter, eAllReduce,      eSend,
      eRecv,           eGroupStart,    eGroupEnd,
  };
  return api;
}

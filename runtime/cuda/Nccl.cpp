//===- Nccl.cpp - The runtime's collectives over an NcclApi ---------------===//
//
// `loadNccl` fills `NcclApi` from libnccl.so.2 with dlopen/dlsym; the
// `Collectives` class keeps communicators per (device, torch group name)
// and runs each collective on the device's communication stream, ordered
// after the compute stream by an event and followed by an event that
// joint_nccl_wait makes the compute stream wait on.
//
//===----------------------------------------------------------------------===//

#include "Nccl.h"
#include "joint_cuda_runtime.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

using namespace joint::cuda;

//===----------------------------------------------------------------------===//
// Tables
//===----------------------------------------------------------------------===//

int joint::cuda::ncclDataTypeOf(int dtype) {
  switch (dtype) {
  case JOINT_NCCL_DTYPE_F32:
    return ncclFloat32;
  case JOINT_NCCL_DTYPE_F16:
    return ncclFloat16;
  case JOINT_NCCL_DTYPE_BF16:
    return ncclBfloat16;
  case JOINT_NCCL_DTYPE_F64:
    return ncclFloat64;
  case JOINT_NCCL_DTYPE_I64:
    return ncclInt64;
  case JOINT_NCCL_DTYPE_I32:
    return ncclInt32;
  case JOINT_NCCL_DTYPE_I8:
    return ncclInt8;
  case JOINT_NCCL_DTYPE_U8:
    return ncclUint8;
  }
  return -1;
}

int joint::cuda::ncclRedOpOf(int op) {
  switch (op) {
  case JOINT_REDUCE_SUM:
    return ncclSum;
  case JOINT_REDUCE_AVG:
    return ncclAvg;
  case JOINT_REDUCE_PRODUCT:
    return ncclProd;
  case JOINT_REDUCE_MIN:
    return ncclMin;
  case JOINT_REDUCE_MAX:
    return ncclMax;
  }
  return -1;
}

size_t joint::cuda::ncclTypeBytes(ncclDataType_t type) {
  switch (type) {
  case ncclInt8:
  case ncclUint8:
    return 1;
  case ncclFloat16:
  case ncclBfloat16:
    return 2;
  case ncclInt32:
  case ncclUint32:
  case ncclFloat32:
    return 4;
  case ncclInt64:
  case ncclUint64:
  case ncclFloat64:
    return 8;
  default:
    return 0;
  }
}

//===----------------------------------------------------------------------===//
// libnccl.so.2
//===----------------------------------------------------------------------===//

const NcclApi *joint::cuda::loadNccl(std::string *error) {
  static std::mutex mutex;
  static NcclApi api;
  static bool done = false;
  static std::string failure;
  std::lock_guard<std::mutex> lock(mutex);
  if (!done) {
    done = true;
    const char *env = std::getenv("JOINT_NCCL_LIBRARY");
    static std::string library = env && *env ? env : "libnccl.so.2";
    void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *why = dlerror();
      failure = "cannot load " + library +
                " (NCCL 2.x, needed by the "
                "collectives): " +
                (why ? why : "unknown reason");
    } else {
      api.name = library.c_str();
      auto bind = [&](auto &member, const char *symbol) {
        void *address = dlsym(handle, symbol);
        if (!address && failure.empty())
          failure = library + " has no symbol " + symbol;
        member = reinterpret_cast<std::remove_reference_t<decltype(member)>>(
            address);
      };
      bind(api.getUniqueId, "ncclGetUniqueId");
      bind(api.commInitRank, "ncclCommInitRank");
      bind(api.commSplit, "ncclCommSplit");
      bind(api.commDestroy, "ncclCommDestroy");
      bind(api.commCount, "ncclCommCount");
      bind(api.getErrorString, "ncclGetErrorString");
      bind(api.getLastError, "ncclGetLastError");
      bind(api.allGather, "ncclAllGather");
      bind(api.reduceScatter, "ncclReduceScatter");
      bind(api.allReduce, "ncclAllReduce");
      bind(api.send, "ncclSend");
      bind(api.recv, "ncclRecv");
      bind(api.groupStart, "ncclGroupStart");
      bind(api.groupEnd, "ncclGroupEnd");
    }
  }
  if (!failure.empty()) {
    *error = failure;
    return nullptr;
  }
  return &api;
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

Collectives::Collectives(Runtime &rt, const NcclApi *(*api)(std::string *error))
    : rt(rt), api(api) {}

Collectives::~Collectives() { shutdown(); }

const NcclApi *Collectives::table(const char *entry) {
  if (loaded)
    return loaded;
  std::string error;
  loaded = api(&error);
  if (!loaded)
    rt.recordError(kStatusCollectiveFailure, entry, error);
  return loaded;
}

bool Collectives::ncclCheck(ncclResult_t result, const char *entry,
                            const char *call, ncclComm_t comm,
                            const std::string &detail) {
  // Findings of the emulated device (races of the collective's accesses,
  // refused ranges) are recorded with this call.
  rt.check(CUDA_SUCCESS, entry, call, detail);
  if (result == ncclSuccess || result == ncclInProgress)
    return true;
  std::string text = std::string(call) +
                     " failed: " + loaded->getErrorString(result) + " (" +
                     std::to_string(static_cast<int>(result)) + ")";
  const char *last = loaded->getLastError(comm);
  std::string why = last && *last ? std::string(": ") + last : "";
  rt.recordError(kStatusCollectiveFailure, entry, text, why + detail);
  return false;
}

static std::string groupDetail(const char *group) {
  return std::string(", group '") + (group ? group : "") + "'";
}

ncclComm_t Collectives::find(const char *entry, const char *group) {
  int device = rt.defaultDevice();
  auto it = comms.find({device, group ? group : ""});
  if (it != comms.end())
    return it->second;
  rt.recordError(kStatusInvalidArgument, entry,
                 std::string("unknown group '") + (group ? group : "") +
                     "' on device " + std::to_string(device) +
                     " (no joint_nccl_comm_init or joint_nccl_comm_split "
                     "created it here)");
  return nullptr;
}

CUstream Collectives::commStream(const char *entry) {
  DeviceState &dev = devices[rt.defaultDevice()];
  if (dev.stream)
    return dev.stream;
  CUstream stream = nullptr;
  if (!rt.check(rt.driverApi().streamCreate(&stream, CU_STREAM_NON_BLOCKING),
                entry, "cuStreamCreate", ", communication stream"))
    return nullptr;
  dev.stream = stream;
  return stream;
}

CUevent Collectives::acquireEvent(const char *entry) {
  std::vector<CUevent> &pool = devices[rt.defaultDevice()].freeEvents;
  if (!pool.empty()) {
    CUevent event = pool.back();
    pool.pop_back();
    return event;
  }
  CUevent event = nullptr;
  if (!rt.check(rt.driverApi().eventCreate(&event, CU_EVENT_DISABLE_TIMING),
                entry, "cuEventCreate"))
    return nullptr;
  return event;
}

int Collectives::uniqueId(unsigned char id[NCCL_UNIQUE_ID_BYTES]) {
  const char *entry = "joint_nccl_get_unique_id";
  if (!id) {
    rt.recordError(kStatusInvalidArgument, entry, "null id buffer");
    return rt.status();
  }
  const NcclApi *nccl = table(entry);
  if (!nccl)
    return rt.status();
  ncclUniqueId unique;
  if (!ncclCheck(nccl->getUniqueId(&unique), entry, "ncclGetUniqueId", nullptr,
                 ""))
    return rt.status();
  std::memcpy(id, unique.internal, NCCL_UNIQUE_ID_BYTES);
  return kStatusOk;
}

int Collectives::commInit(const char *group, int nranks, int rank,
                          const unsigned char *id) {
  const char *entry = "joint_nccl_comm_init";
  std::string detail = groupDetail(group);
  if (!group || !id || nranks < 1 || rank < 0 || rank >= nranks) {
    rt.recordError(kStatusInvalidArgument, entry,
                   "bad arguments (rank " + std::to_string(rank) + " of " +
                       std::to_string(nranks) + ", group and id non-null)",
                   detail);
    return rt.status();
  }
  int device = rt.defaultDevice();
  if (comms.count({device, group})) {
    rt.recordError(kStatusInvalidArgument, entry,
                   "device " + std::to_string(device) +
                       " already has a communicator for this group",
                   detail);
    return rt.status();
  }
  const NcclApi *nccl = table(entry);
  if (!nccl)
    return rt.status();
  Runtime::ContextScope scope(rt, entry);
  if (!scope)
    return rt.status();
  ncclUniqueId unique;
  std::memcpy(unique.internal, id, NCCL_UNIQUE_ID_BYTES);
  ncclComm_t comm = nullptr;
  ncclResult_t result;
  {
    // Blocks until every rank joined: other rank threads need the lock.
    Runtime::Unlocked unlocked(rt);
    result = nccl->commInitRank(&comm, nranks, unique, rank);
  }
  if (!ncclCheck(result, entry, "ncclCommInitRank", comm,
                 ", rank " + std::to_string(rank) + " of " +
                     std::to_string(nranks) + detail))
    return rt.status();
  return keep(entry, device, group, comm, detail);
}

int Collectives::keep(const char *entry, int device, const char *group,
                      ncclComm_t comm, const std::string &detail) {
  // Another thread on this device made the same name meanwhile.
  if (!comms.emplace(std::make_pair(device, std::string(group)), comm).second) {
    loaded->commDestroy(comm);
    rt.recordError(kStatusInvalidArgument, entry,
                   "device " + std::to_string(device) +
                       " already has a communicator for this group (two "
                       "ranks on one device)",
                   detail);
    return rt.status();
  }
  return kStatusOk;
}

int Collectives::commSplit(const char *parent, const char *group, int color,
                           int key) {
  const char *entry = "joint_nccl_comm_split";
  std::string detail =
      groupDetail(group) + ", parent '" + (parent ? parent : "") + "'";
  if (!group || color < NCCL_SPLIT_NOCOLOR) {
    rt.recordError(kStatusInvalidArgument, entry,
                   "bad arguments (color " + std::to_string(color) +
                       ", group non-null)",
                   detail);
    return rt.status();
  }
  ncclComm_t parentComm = find(entry, parent);
  if (!parentComm)
    return rt.status();
  int device = rt.defaultDevice();
  if (color != NCCL_SPLIT_NOCOLOR && comms.count({device, group})) {
    rt.recordError(kStatusInvalidArgument, entry,
                   "device " + std::to_string(device) +
                       " already has a communicator for this group",
                   detail);
    return rt.status();
  }
  Runtime::ContextScope scope(rt, entry);
  if (!scope)
    return rt.status();
  ncclComm_t comm = nullptr;
  ncclResult_t result;
  {
    Runtime::Unlocked unlocked(rt);
    result = loaded->commSplit(parentComm, color, key, &comm, nullptr);
  }
  if (!ncclCheck(result, entry, "ncclCommSplit", parentComm,
                 ", color " + std::to_string(color) + ", key " +
                     std::to_string(key) + detail))
    return rt.status();
  return comm ? keep(entry, device, group, comm, detail) : kStatusOk;
}

int Collectives::commSize(const char *group) {
  auto it = group ? comms.find({rt.defaultDevice(), group}) : comms.end();
  int count = -1;
  if (it == comms.end() || !loaded ||
      loaded->commCount(it->second, &count) != ncclSuccess)
    return -1;
  return count;
}

int Collectives::destroyAll() {
  const char *entry = "joint_nccl_comm_destroy_all";
  int device = rt.defaultDevice();
  for (auto it = comms.begin(); it != comms.end();) {
    if (it->first.first != device) {
      ++it;
      continue;
    }
    ncclCheck(loaded->commDestroy(it->second), entry, "ncclCommDestroy",
              nullptr, groupDetail(it->first.second.c_str()));
    it = comms.erase(it);
  }
  return rt.status();
}

template <typename F>
CollectiveHandle *Collectives::launch(const char *entry, const char *group,
                                      const char *node,
                                      const std::string &detail, F enqueue) {
  Runtime::ContextScope scope(rt, entry);
  if (!scope)
    return nullptr;
  CUstream compute = rt.computeStream();
  CUstream stream = compute ? commStream(entry) : nullptr;
  if (!stream)
    return nullptr;
  const DriverApi &driver = rt.driverApi();
  CUevent produced = acquireEvent(entry);
  CUevent done = produced ? acquireEvent(entry) : nullptr;
  int device = rt.defaultDevice();
  auto giveBack = [&](CUevent event) {
    if (event)
      devices[device].freeEvents.push_back(event);
  };
  bool ok =
      done &&
      rt.check(driver.eventRecord(produced, compute), entry, "cuEventRecord",
               ", compute stream" + detail) &&
      rt.check(driver.streamWaitEvent(stream, produced, CU_EVENT_WAIT_DEFAULT),
               entry, "cuStreamWaitEvent", ", communication stream" + detail) &&
      enqueue(stream) &&
      rt.check(driver.eventRecord(done, stream), entry, "cuEventRecord",
               ", communication stream" + detail);
  // A wait already enqueued keeps the state the event had then.
  giveBack(produced);
  if (!ok) {
    giveBack(done);
    return nullptr;
  }
  auto owned = std::make_unique<CollectiveHandle>();
  owned->device = device;
  owned->event = done;
  owned->group = group ? group : "";
  owned->node = node ? node : "";
  CollectiveHandle *handle = owned.get();
  handles.emplace(handle, std::move(owned));
  return handle;
}

CollectiveHandle *Collectives::allGather(const char *group, const void *in,
                                         void *out, uint64_t sendcount,
                                         int dtype, const char *node) {
  const char *entry = "joint_nccl_all_gather";
  rt.setNode(node);
  std::string detail = groupDetail(group);
  int type = ncclDataTypeOf(dtype);
  if (type < 0) {
    rt.recordError(kStatusInvalidArgument, entry,
                   "unknown dtype " + std::to_string(dtype), detail);
    return nullptr;
  }
  ncclComm_t comm = find(entry, group);
  if (!comm)
    return nullptr;
  if (sendcount > 0 && (!in || !out)) {
    rt.recordError(kStatusInvalidArgument, entry, "null buffer", detail);
    return nullptr;
  }
  return launch(entry, group, node, detail, [&](CUstream stream) {
    return ncclCheck(loaded->allGather(in, out, sendcount,
                                       static_cast<ncclDataType_t>(type), comm,
                                       stream),
                     entry, "ncclAllGather", comm,
                     ", count " + std::to_string(sendcount) + detail);
  });
}

CollectiveHandle *Collectives::reduceScatter(const char *group, const void *in,
                                             void *out, uint64_t recvcount,
                                             int dtype, int op,
                                             const char *node) {
  const char *entry = "joint_nccl_reduce_scatter";
  rt.setNode(node);
  std::string detail = groupDetail(group);
  int type = ncclDataTypeOf(dtype), redOp = ncclRedOpOf(op);
  if (type < 0 || redOp < 0) {
    rt.recordError(kStatusInvalidArgument, entry,
                   type < 0 ? "unknown dtype " + std::to_string(dtype)
                            : "unknown reduction " + std::to_string(op),
                   detail);
    return nullptr;
  }
  ncclComm_t comm = find(entry, group);
  if (!comm)
    return nullptr;
  if (recvcount > 0 && (!in || !out)) {
    rt.recordError(kStatusInvalidArgument, entry, "null buffer", detail);
    return nullptr;
  }
  return launch(entry, group, node, detail, [&](CUstream stream) {
    return ncclCheck(loaded->reduceScatter(
                         in, out, recvcount, static_cast<ncclDataType_t>(type),
                         static_cast<ncclRedOp_t>(redOp), comm, stream),
                     entry, "ncclReduceScatter", comm,
                     ", count " + std::to_string(recvcount) + detail);
  });
}

CollectiveHandle *Collectives::allReduce(const char *group, const void *in,
                                         void *out, uint64_t count, int dtype,
                                         int op, const char *node) {
  const char *entry = "joint_nccl_all_reduce";
  rt.setNode(node);
  std::string detail = groupDetail(group);
  int type = ncclDataTypeOf(dtype), redOp = ncclRedOpOf(op);
  if (type < 0 || redOp < 0) {
    rt.recordError(kStatusInvalidArgument, entry,
                   type < 0 ? "unknown dtype " + std::to_string(dtype)
                            : "unknown reduction " + std::to_string(op),
                   detail);
    return nullptr;
  }
  ncclComm_t comm = find(entry, group);
  if (!comm)
    return nullptr;
  if (count > 0 && (!in || !out)) {
    rt.recordError(kStatusInvalidArgument, entry, "null buffer", detail);
    return nullptr;
  }
  return launch(entry, group, node, detail, [&](CUstream stream) {
    return ncclCheck(
        loaded->allReduce(in, out, count, static_cast<ncclDataType_t>(type),
                          static_cast<ncclRedOp_t>(redOp), comm, stream),
        entry, "ncclAllReduce", comm,
        ", count " + std::to_string(count) + detail);
  });
}

CollectiveHandle *Collectives::allToAll(const char *group, const void *in,
                                        void *out, const int64_t *sendcounts,
                                        const int64_t *recvcounts, int nranks,
                                        int dtype, const char *node) {
  const char *entry = "joint_nccl_all_to_all";
  rt.setNode(node);
  std::string detail = groupDetail(group);
  int type = ncclDataTypeOf(dtype);
  if (type < 0) {
    rt.recordError(kStatusInvalidArgument, entry,
                   "unknown dtype " + std::to_string(dtype), detail);
    return nullptr;
  }
  ncclComm_t comm = find(entry, group);
  if (!comm)
    return nullptr;
  int size = 0;
  if (!ncclCheck(loaded->commCount(comm, &size), entry, "ncclCommCount", comm,
                 detail))
    return nullptr;
  if (nranks != size || !sendcounts || !recvcounts) {
    rt.recordError(kStatusInvalidArgument, entry,
                   "count arrays have " + std::to_string(nranks) +
                       " entries but the group has " + std::to_string(size) +
                       " ranks (or are null)",
                   detail);
    return nullptr;
  }
  uint64_t sendTotal = 0, recvTotal = 0;
  for (int r = 0; r < nranks; ++r) {
    if (sendcounts[r] < 0 || recvcounts[r] < 0) {
      rt.recordError(kStatusInvalidArgument, entry,
                     "negative count for rank " + std::to_string(r), detail);
      return nullptr;
    }
    sendTotal += sendcounts[r];
    recvTotal += recvcounts[r];
  }
  if ((sendTotal > 0 && !in) || (recvTotal > 0 && !out)) {
    rt.recordError(kStatusInvalidArgument, entry, "null buffer", detail);
    return nullptr;
  }
  size_t bytes = ncclTypeBytes(static_cast<ncclDataType_t>(type));
  return launch(entry, group, node, detail, [&](CUstream stream) {
    auto t = static_cast<ncclDataType_t>(type);
    if (!ncclCheck(loaded->groupStart(), entry, "ncclGroupStart", comm, detail))
      return false;
    bool ok = true;
    uint64_t sendAt = 0, recvAt = 0;
    // Every pair exchanges, zero counts included (a no-op in NCCL), so
    // every rank takes part in the group.
    for (int r = 0; r < nranks && ok; ++r) {
      ok = ncclCheck(
          loaded->send(static_cast<const char *>(in) + sendAt * bytes,
                       sendcounts[r], t, r, comm, stream),
          entry, "ncclSend", comm, ", peer " + std::to_string(r) + detail);
      if (ok)
        ok = ncclCheck(loaded->recv(static_cast<char *>(out) + recvAt * bytes,
                                    recvcounts[r], t, r, comm, stream),
                       entry, "ncclRecv", comm,
                       ", peer " + std::to_string(r) + detail);
      sendAt += sendcounts[r];
      recvAt += recvcounts[r];
    }
    // The group is always closed, even after a failed call.
    bool closed =
        ncclCheck(loaded->groupEnd(), entry, "ncclGroupEnd", comm, detail);
    return ok && closed;
  });
}

int Collectives::wait(CollectiveHandle *handle) {
  const char *entry = "joint_nccl_wait";
  auto it = handles.find(handle);
  if (it == handles.end()) {
    rt.recordError(kStatusInvalidArgument, entry,
                   "not a live collective handle");
    return rt.status();
  }
  std::unique_ptr<CollectiveHandle> owned = std::move(it->second);
  handles.erase(it);
  rt.setNode(owned->node.c_str());
  std::string detail = groupDetail(owned->group.c_str());
  int saved = rt.defaultDevice();
  rt.setDefaultDevice(owned->device);
  {
    Runtime::ContextScope scope(rt, entry);
    CUstream compute = scope ? rt.computeStream() : nullptr;
    if (compute)
      rt.check(rt.driverApi().streamWaitEvent(compute, owned->event,
                                              CU_EVENT_WAIT_DEFAULT),
               entry, "cuStreamWaitEvent", ", compute stream" + detail);
    devices[owned->device].freeEvents.push_back(owned->event);
  }
  rt.setDefaultDevice(saved);
  return rt.status();
}

int Collectives::shutdown() {
  const char *entry = "joint_runtime_shutdown";
  const DriverApi &driver = rt.driverApi();
  int saved = rt.defaultDevice();
  for (auto &[device, dev] : devices) {
    rt.setDefaultDevice(device);
    Runtime::ContextScope scope(rt, entry);
    if (!scope)
      continue;
    if (dev.stream) {
      CUresult result;
      {
        Runtime::Unlocked unlocked(rt);
        result = driver.streamSynchronize(dev.stream);
      }
      rt.check(result, entry, "cuStreamSynchronize", ", communication stream");
    }
    for (auto &[handle, owned] : handles)
      if (owned->device == device)
        dev.freeEvents.push_back(owned->event);
    for (CUevent event : dev.freeEvents)
      rt.check(driver.eventDestroy(event), entry, "cuEventDestroy");
    dev.freeEvents.clear();
  }
  handles.clear();
  for (auto &[key, comm] : comms)
    ncclCheck(loaded->commDestroy(comm), entry, "ncclCommDestroy", nullptr,
              groupDetail(key.second.c_str()));
  comms.clear();
  for (auto &[device, dev] : devices) {
    if (!dev.stream)
      continue;
    rt.setDefaultDevice(device);
    Runtime::ContextScope scope(rt, entry);
    if (scope)
      rt.check(driver.streamDestroy(dev.stream), entry, "cuStreamDestroy",
               ", communication stream");
  }
  devices.clear();
  rt.setDefaultDevice(saved);
  return rt.status();
}

//===- Nccl.h - NCCL behind a table, and the runtime's collectives -*- C++
//-*-===//
//
// The runtime reaches NCCL only through `NcclApi`, a table of function
// pointers with NCCL's own signatures (nccl.h, NCCL 2.28). Two fillers:
// `loadNccl()` dlopens libnccl.so.2 on first use (no link-time dependency),
// `emulatedNccl()` runs the collectives between the rank threads of one
// process on the emulated device (EmulatedNccl.cpp). `Collectives` is the
// runtime side of joint_nccl_*: communicators keyed by (device, torch group
// name), one communication stream per device, pooled events and handles.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_RUNTIME_CUDA_NCCL_H
#define JOINT_RUNTIME_CUDA_NCCL_H

#include "Runtime.h"

#include <nccl.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace joint::cuda {

/// One member per NCCL call the runtime makes; names drop the `nccl`
/// prefix.
struct NcclApi {
  const char *name; ///< "libnccl.so.2" or "emulated NCCL", for messages
  ncclResult_t (*getUniqueId)(ncclUniqueId *id);
  ncclResult_t (*commInitRank)(ncclComm_t *comm, int nranks, ncclUniqueId id,
                               int rank);
  ncclResult_t (*commSplit)(ncclComm_t comm, int color, int key,
                            ncclComm_t *newcomm, ncclConfig_t *config);
  ncclResult_t (*commDestroy)(ncclComm_t comm);
  ncclResult_t (*commCount)(const ncclComm_t comm, int *count);
  const char *(*getErrorString)(ncclResult_t result);
  const char *(*getLastError)(ncclComm_t comm);
  ncclResult_t (*allGather)(const void *send, void *recv, size_t sendcount,
                            ncclDataType_t type, ncclComm_t comm,
                            cudaStream_t stream);
  ncclResult_t (*reduceScatter)(const void *send, void *recv, size_t recvcount,
                                ncclDataType_t type, ncclRedOp_t op,
                                ncclComm_t comm, cudaStream_t stream);
  ncclResult_t (*allReduce)(const void *send, void *recv, size_t count,
                            ncclDataType_t type, ncclRedOp_t op,
                            ncclComm_t comm, cudaStream_t stream);
  ncclResult_t (*send)(const void *send, size_t count, ncclDataType_t type,
                       int peer, ncclComm_t comm, cudaStream_t stream);
  ncclResult_t (*recv)(void *recv, size_t count, ncclDataType_t type, int peer,
                       ncclComm_t comm, cudaStream_t stream);
  ncclResult_t (*groupStart)();
  ncclResult_t (*groupEnd)();
};

/// The table of libnccl.so.2 (or `JOINT_NCCL_LIBRARY`), loaded on the first
/// call; null with `*error` naming the library and dlerror() when it cannot
/// be loaded or lacks a symbol.
const NcclApi *loadNccl(std::string *error);

/// NCCL's semantics between the rank threads of this process on the
/// emulated device: rendezvous by unique id, ncclCommSplit, the collectives
/// and grouped send/receive as stream work on the communication stream,
/// their reads and writes given to the race checker.
const NcclApi &emulatedNccl();

/// Element types and reductions of the C ABI (JOINT_NCCL_DTYPE_*,
/// JOINT_REDUCE_*) as NCCL's; -1 when unknown.
int ncclDataTypeOf(int dtype);
int ncclRedOpOf(int op);
/// Bytes of one element of an NCCL data type (0 when unknown).
size_t ncclTypeBytes(ncclDataType_t type);

/// One collective in flight: the event recorded on the communication
/// stream after it.
struct CollectiveHandle {
  int device = 0;
  CUevent event = nullptr;
  std::string group, node;
};

/// The runtime side of joint_nccl_*, over one `Runtime` (whose lock the
/// caller holds). Errors go to the runtime's status naming the entry point,
/// the group and the node.
class Collectives {
public:
  /// `api` gives the NCCL table on first use (null with a message when it
  /// cannot be loaded).
  Collectives(Runtime &rt, const NcclApi *(*api)(std::string *error));
  ~Collectives();

  int uniqueId(unsigned char id[NCCL_UNIQUE_ID_BYTES]);
  /// ncclCommInitRank for `group` on the calling thread's device; blocks
  /// (with the runtime's lock released) until every rank joined.
  int commInit(const char *group, int nranks, int rank,
               const unsigned char *id);
  /// ncclCommSplit of `parent` into `group` (color -1: no communicator).
  int commSplit(const char *parent, const char *group, int color, int key);
  /// Destroys the calling thread's device's communicators.
  int destroyAll();
  /// Ranks of the calling thread's device's communicator for `group`; -1
  /// when there is none (nothing recorded).
  int commSize(const char *group);

  /// The collectives; counts in elements. Null on failure.
  CollectiveHandle *allGather(const char *group, const void *in, void *out,
                              uint64_t sendcount, int dtype, const char *node);
  CollectiveHandle *reduceScatter(const char *group, const void *in, void *out,
                                  uint64_t recvcount, int dtype, int op,
                                  const char *node);
  CollectiveHandle *allReduce(const char *group, const void *in, void *out,
                              uint64_t count, int dtype, int op,
                              const char *node);
  CollectiveHandle *allToAll(const char *group, const void *in, void *out,
                             const int64_t *sendcounts,
                             const int64_t *recvcounts, int nranks, int dtype,
                             const char *node);
  /// The compute stream waits on the handle's event; the handle is freed.
  int wait(CollectiveHandle *handle);

  /// Handles not yet waited for.
  size_t liveHandles() const { return handles.size(); }
  /// Synchronises and destroys the communication streams, events and
  /// communicators of every device. Returns the runtime's status.
  int shutdown();

private:
  struct DeviceState {
    CUstream stream = nullptr;
    std::vector<CUevent> freeEvents;
  };

  const NcclApi *table(const char *entry);
  /// Registers `comm` as `group` on `device`; when the name is taken there
  /// (two ranks on one device), destroys it and records the error.
  int keep(const char *entry, int device, const char *group, ncclComm_t comm,
           const std::string &detail);
  bool ncclCheck(ncclResult_t result, const char *entry, const char *call,
                 ncclComm_t comm, const std::string &detail);
  /// The communicator of `group` on the current device, else an error.
  ncclComm_t find(const char *entry, const char *group);
  CUstream commStream(const char *entry);
  CUevent acquireEvent(const char *entry);
  /// Runs `enqueue` on the communication stream after the compute stream's
  /// work; returns the handle of the event recorded after it.
  template <typename F>
  CollectiveHandle *launch(const char *entry, const char *group,
                           const char *node, const std::string &detail,
                           F enqueue);

  Runtime &rt;
  const NcclApi *(*api)(std::string *error);
  const NcclApi *loaded = nullptr;
  std::map<std::pair<int, std::string>, ncclComm_t> comms;
  std::map<int, DeviceState> devices;
  std::unordered_map<CollectiveHandle *, std::unique_ptr<CollectiveHandle>>
      handles;
};

} // namespace joint::cuda

#endif // JOINT_RUNTIME_CUDA_NCCL_H

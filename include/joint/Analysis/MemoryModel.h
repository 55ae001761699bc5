//===- MemoryModel.h - Storage-level liveness of a joint graph --*- C++ -*-===//
//
// The memory model: when each storage of a joint graph is allocated and
// freed in op order, how many device and host bytes are live during every
// op, the peak, the activation bytes saved across the forward/backward
// boundary and a per-block breakdown. Built on StorageAliasAnalysis so the
// report, the remat pass and the offload pass share one notion of storage.
// Rules and their sources: docs/cost-model.md, "Memory model".
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_ANALYSIS_MEMORYMODEL_H
#define JOINT_ANALYSIS_MEMORYMODEL_H

#include "joint/Analysis/StorageAliasAnalysis.h"
#include "mlir/Pass/AnalysisManager.h"
#include "llvm/ADT/DenseMap.h"
#include <optional>
#include <string>

namespace mlir {
namespace joint {

/// Lifetime of one non-input storage, as op indices into
/// MemoryModel::getOps(). The storage is live during ops [alloc, free].
struct StorageLifetime {
  const Storage *storage = nullptr;
  /// Bytes of the allocation (see MemoryModel::computeStorageBytes); 0 when
  /// unknown (`sizeKnown` false).
  int64_t bytes = 0;
  unsigned alloc = 0;
  unsigned free = 0;
  /// Host memory (an ao.offload copy) rather than device memory.
  bool onHost = false;
  /// A value the trace placed on the host (device "cpu") in a graph that
  /// computes on an accelerator: no device bytes, never an activation.
  bool hostValue = false;
  bool sizeKnown = true;
};

/// One transformer block (ModelStructure: `joint.model` block_containers, or
/// module-stack paths `<container>.<int>` when the graph has none).
struct BlockMemory {
  std::string fqn;
  /// Device bytes this block allocated in the forward and still live at the
  /// first backward op (its saved activations).
  int64_t activationBytes = 0;
  /// Host bytes of ao.offload copies of this block's storages.
  int64_t offloadedBytes = 0;
};

/// Storage-level liveness over the graph's op order. Every op of the graph
/// body, ao ops and the terminating joint.output included, gets one index;
/// the timeline holds the bytes live *during* each op (its operands and its
/// results coexist). O(#ops + #uses).
///
/// Rules:
/// - A storage is allocated at its owner's defining op and freed after the
///   last op that uses any of its members; `joint.output` is the last op, so
///   graph outputs live to the end. A storage nobody reads is live only
///   during the op that made it.
/// - Graph inputs (parameters, buffers, user inputs) are resident for the
///   whole step and reported apart (getResidentBytes), not in the timeline's
///   transient part.
/// - ao.offload allocates a host copy (host bytes = the source's elements);
///   it lives until the last use of its forward wait's result, extended to
///   the wait of each ao.reload that reads it (the host copy must survive
///   until the device copy is complete). The offloaded device storage is an
///   ordinary storage: the forward wait reads it as `keepalive`, so it stays
///   live up to that wait and is freed after it unless some op still reads
///   an alias later (then the offload saved nothing; see
///   getIneffectiveOffloads). ao.reload allocates a new device storage.
/// - In a graph with values on an accelerator, values on device "cpu" (host
///   values) count no device bytes and are no saved activations.
class MemoryModel {
public:
  /// The model of `graph`, from the StorageAliasAnalysis `am` holds for it.
  MemoryModel(GraphOp graph, AnalysisManager &am);
  /// Same, from an already built alias analysis (for tools and tests).
  explicit MemoryModel(const StorageAliasAnalysis &aliases);

  /// Bytes of storage `s`: max over its members of
  /// (storage offset + extent) * element size, where the extent of a view
  /// with sizes n_i and strides s_i is 1 + sum (n_i - 1) * s_i (0 when any
  /// n_i is 0), from trace-time hints. Members without facts count their
  /// static type (numel * element size). ao copies are contiguous: their
  /// bytes are the source's numel * element size. A size without a
  /// trace-time hint (unbacked SymInt) counts at the largest value its
  /// expression takes under the `min`/`max` of `joint.symbols`;
  /// std::nullopt when there is no such bound.
  static std::optional<int64_t> computeStorageBytes(const Storage &s);

  /// The ops in order; indices below refer to this list.
  ArrayRef<Operation *> getOps() const { return ops; }
  /// Index of `op` in getOps(); std::nullopt for ops outside the graph.
  std::optional<unsigned> getIndex(Operation *op) const;
  /// Lifetime of a non-input storage; null for graph inputs and SymInts.
  const StorageLifetime *getLifetime(const Storage *s) const;
  ArrayRef<StorageLifetime> getLifetimes() const { return lifetimes; }

  /// Bytes of graph-input storages by role, resident throughout (bytes).
  int64_t getResidentBytes() const {
    return paramBytes + bufferBytes + inputBytes;
  }
  int64_t getParamBytes() const { return paramBytes; }
  int64_t getBufferBytes() const { return bufferBytes; }
  int64_t getInputBytes() const { return inputBytes; }

  /// Device bytes live during op `i` that are not graph inputs.
  ArrayRef<int64_t> getTransientTimeline() const { return deviceLive; }
  /// Host bytes live during op `i` (ao.offload copies).
  ArrayRef<int64_t> getHostTimeline() const { return hostLive; }

  /// Peak device bytes, resident included (bytes).
  int64_t getPeakBytes() const { return getResidentBytes() + peakTransient; }
  /// Peak of the transient part alone (bytes).
  int64_t getPeakTransientBytes() const { return peakTransient; }
  /// The first op at which the peak is reached; null for an empty graph.
  Operation *getPeakOp() const;
  unsigned getPeakIndex() const { return peakIndex; }
  /// Peak host bytes (bytes).
  int64_t getPeakHostBytes() const { return peakHost; }
  /// Total bytes copied to host by ao.offload (bytes).
  int64_t getOffloadedBytes() const { return offloadedBytes; }

  /// Index of the first backward joint.call_function; std::nullopt when the
  /// graph has no backward half.
  std::optional<unsigned> getBoundaryIndex() const { return boundary; }
  /// Device bytes allocated before the boundary and still live at it: the
  /// activations the forward saves for the backward, plus forward-made graph
  /// outputs such as the loss (bytes). 0 without a backward half.
  int64_t getActivationBytes() const { return activationBytes; }

  /// Blocks in model order; storages outside every block are not listed.
  ArrayRef<BlockMemory> getBlocks() const { return blocks; }
  /// Index into getBlocks() of the block `op` runs in (by its module stack;
  /// ao ops take their source's block).
  std::optional<unsigned> getBlockOf(Operation *op) const;
  /// How blocks were found: "model" (joint.model block_containers),
  /// "module-stack" (frames named `<container>.<int>`) or "none".
  StringRef getBlockSource() const { return blockSource; }

  /// Storages whose size has neither a trace-time hint nor a recorded
  /// bound (counted as 0 bytes).
  ArrayRef<const Storage *> getUnknownSizeStorages() const {
    return unknownSize;
  }
  /// ao.offload ops whose source storage is still read after the forward
  /// wait, with the last such reader: the offload frees no device memory.
  ArrayRef<std::pair<Operation *, Operation *>> getIneffectiveOffloads() const {
    return ineffectiveOffloads;
  }

private:
  void build(const StorageAliasAnalysis &aliases);
  void findBlocks(GraphOp graph);

  SmallVector<Operation *> ops;
  llvm::DenseMap<Operation *, unsigned> indexOf;
  std::vector<StorageLifetime> lifetimes;
  llvm::DenseMap<const Storage *, unsigned> lifetimeOf;
  std::vector<int64_t> deviceLive, hostLive;
  int64_t paramBytes = 0, bufferBytes = 0, inputBytes = 0;
  int64_t peakTransient = 0, peakHost = 0, offloadedBytes = 0;
  unsigned peakIndex = 0;
  std::optional<unsigned> boundary;
  int64_t activationBytes = 0;
  std::vector<BlockMemory> blocks;
  llvm::StringMap<unsigned> blockByFqn;
  llvm::DenseMap<Operation *, unsigned> blockOfOp;
  std::string blockSource = "none";
  SmallVector<const Storage *> unknownSize;
  SmallVector<std::pair<Operation *, Operation *>> ineffectiveOffloads;
};

} // namespace joint
} // namespace mlir

#endif // JOINT_ANALYSIS_MEMORYMODEL_H

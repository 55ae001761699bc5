//===- CostModel.h - FLOPs, op time and transfer overlap --------*- C++ -*-===//
//
// What a joint graph costs to run: FLOPs per op (formulas of
// torch.utils.flop_counter for matmuls, convolutions and attention; element
// counts for everything else), a roofline time per op, recompute FLOPs of
// remat clones, and the ao.offload / ao.reload transfers with the part of
// their time that the compute between each copy and its wait cannot hide.
// Formulas, defaults and sources: docs/cost-model.md.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_ANALYSIS_COSTMODEL_H
#define JOINT_ANALYSIS_COSTMODEL_H

#include "joint/Analysis/StorageAliasAnalysis.h"
#include "llvm/ADT/DenseMap.h"
#include <cstdint>
#include <optional>

namespace mlir {
namespace joint {

/// The machine the estimate is for. Defaults: one H200 (989 TFLOP/s dense
/// bf16 tensor-core peak, 4.8 TB/s HBM3e, ~55 GB/s achieved per direction on
/// PCIe Gen5 x16), 100 GB/s collective bus bandwidth per rank (between
/// NVLink within a node and 400 Gb/s InfiniBand across nodes).
struct HardwareModel {
  double flopsPerSecond = 989e12;          // FLOP/s
  double hbmBytesPerSecond = 4.8e12;       // bytes/s
  double linkBytesPerSecond = 55e9;        // bytes/s, each direction
  double collectiveBytesPerSecond = 100e9; // bytes/s a rank sends, busbw
};

/// One ao.offload (device to host) or ao.reload (host to device) copy.
struct Transfer {
  Operation *copy = nullptr; // ao.offload or ao.reload
  Operation *wait = nullptr; // its ao.wait_tensor
  int64_t bytes = 0;
  bool toHost = true;
  double seconds = 0;        // bytes / link bandwidth
  double doneAt = 0;         // seconds from step start when the copy ends
  double exposedSeconds = 0; // how long the wait stalls compute
};

/// Costs of every op of one graph, in one pass over the ops (O(#ops +
/// #operands)). Time model: ops run one after another on one compute
/// stream, each taking max(FLOPs / FLOP/s, bytes moved / HBM bytes/s); each
/// direction of the host link is one FIFO copy stream; a copy starts when it
/// is issued and its direction's previous copy is done; a wait stalls the
/// compute stream until its copy is done.
class CostModel {
public:
  CostModel(const StorageAliasAnalysis &aliases, const HardwareModel &hw);

  /// FLOPs of `op` (0 for ops that are not joint.call_function).
  uint64_t getFlops(Operation *op) const { return flopsOf.lookup(op); }
  /// Estimated seconds `op` occupies the compute stream.
  double getSeconds(Operation *op) const { return secondsOf.lookup(op); }

  /// All FLOPs of the step, recompute included.
  uint64_t getTotalFlops() const { return totalFlops; }
  /// FLOPs of ops that remat cloned (`recomputed_from` set).
  uint64_t getRecomputeFlops() const { return recomputeFlops; }
  /// Compute-stream seconds of all ops, and of the recompute clones.
  double getComputeSeconds() const { return computeSeconds; }
  double getRecomputeSeconds() const { return recomputeSeconds; }
  /// Compute seconds plus transfer stalls: the estimated step time.
  double getStepSeconds() const { return computeSeconds + exposedSeconds; }

  ArrayRef<Transfer> getTransfers() const { return transfers; }
  int64_t getOffloadBytes() const { return offloadBytes; }
  int64_t getReloadBytes() const { return reloadBytes; }
  /// Link seconds of all copies, and the part of it compute cannot hide.
  double getTransferSeconds() const { return transferSeconds; }
  double getExposedSeconds() const { return exposedSeconds; }
  /// joint.ops whose FLOPs could not be estimated (counted as 0).
  ArrayRef<Operation *> getUnknownFlopOps() const { return unknownFlops; }
  /// joint.call_functions with no FLOP rule (a typo'd or custom target):
  /// they count one FLOP per element of their largest tensor, a guess.
  /// Views, tensor-free ops and torch's `pointwise`/`reduction` ops are
  /// never listed (docs/cost-model.md). In program order.
  ArrayRef<CallFunctionOp> getGuessedFlopOps() const { return guessedFlops; }

private:
  llvm::DenseMap<Operation *, uint64_t> flopsOf;
  llvm::DenseMap<Operation *, double> secondsOf;
  uint64_t totalFlops = 0, recomputeFlops = 0;
  double computeSeconds = 0, recomputeSeconds = 0;
  SmallVector<Transfer> transfers;
  int64_t offloadBytes = 0, reloadBytes = 0;
  double transferSeconds = 0, exposedSeconds = 0;
  SmallVector<Operation *> unknownFlops;
  SmallVector<CallFunctionOp> guessedFlops;
};

} // namespace joint
} // namespace mlir

#endif // JOINT_ANALYSIS_COSTMODEL_H

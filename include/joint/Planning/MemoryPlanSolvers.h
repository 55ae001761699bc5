//===- MemoryPlanSolvers.h - Memory plan solvers ----------------*- C++ -*-===//
//
// Solvers over a MemoryPlanProblem (free functions, as CIRCT's schedulers
// are) and the plan they produce. The greedy frees the most bytes at the
// current peak per added second, as the greedy knapsack of torch's min-cut
// partitioner under `activation_memory_budget` does (problem as in
// Checkmate, Jain et al. 2020), with offloads priced by their exposed
// transfer time on the link's FIFO copy streams.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_PLANNING_MEMORYPLANSOLVERS_H
#define JOINT_PLANNING_MEMORYPLANSOLVERS_H

#include "joint/Planning/MemoryPlanProblem.h"
#include "llvm/ADT/DenseSet.h"
#include <memory>

namespace mlir {
namespace joint {

/// One offload group the solver formed (a candidate whose storages are all
/// tracked, read by the backward and not claimed by an earlier candidate).
struct PlannedOffload {
  unsigned producer = 0;
  /// Storages moved, and the positions of the ops defining them.
  SmallVector<unsigned, 2> members, defs;
  int64_t bytes = 0;
  std::optional<unsigned> block;
  bool chosen = false;
  /// Distances in regions (0 .. kPlanDistances-1) when chosen.
  unsigned prefetch = 0, defer = 0;
};

/// The decisions: per storage recompute or not, per formed group offload or
/// not.
struct MemoryPlan {
  std::vector<bool> recompute; // by storage
  std::vector<PlannedOffload> offloads;
  unsigned numCandidates = 0, numRecomputed = 0, numOffloaded = 0;
  /// Bytes recomputed / moved to host.
  int64_t recomputedBytes = 0, offloadedBytes = 0;
  /// The transient peak of the solver's interval model, bytes.
  int64_t modelledTransientBytes = 0;

  /// Ops replayed under the plan (the closures of recomputed storages).
  llvm::DenseSet<unsigned> getReplayedOps(const MemoryPlanProblem &p) const;
  /// One line per decision: "recompute <storage>", "offload <op> prefetch N
  /// defer N", then the totals.
  void print(const MemoryPlanProblem &p, raw_ostream &os) const;
  /// The same as one JSON object: recomputed storages, every formed group
  /// (chosen or not, with its distances) and the totals.
  void printJSON(raw_ostream &os) const;
};

struct GreedyOptions {
  /// Offload off (recompute only).
  bool allowOffload = true;
  /// Lowest peak first: any offload that lowers the peak goes before any
  /// recompute, whatever its exposed transfer time.
  bool preferOffload = false;
  /// Recompute first: an offload is taken only when no recompute lowers the
  /// peak (few copies, so few that the link cannot hide).
  bool offloadLast = false;
  /// Offload candidates excluded when their producer or a target's defining
  /// op is at one of these positions.
  llvm::DenseSet<unsigned> excludedOps;
};

/// The greedy's state, resumable: lowerPeakTo may be called again with a
/// lower target and continues from the decisions kept so far.
class GreedyPlanner {
public:
  GreedyPlanner(const MemoryPlanProblem &problem, const GreedyOptions &options);
  ~GreedyPlanner();
  /// Decides until the modelled transient peak is at most `target` bytes,
  /// then undoes the recomputes no longer needed for it; false when no
  /// decision lowers the peak any more. O(#decisions * (#candidates +
  /// #groups) * closure) worst case, O(log #ops) per update, plus one
  /// replay of the decisions per undo tried.
  bool lowerPeakTo(int64_t targetTransientBytes);
  /// The decisions so far.
  MemoryPlan getPlan() const;
  /// Groups formed (ops the plan could tag must_cpu_offload).
  size_t getNumOffloadable() const;

private:
  class Impl;
  /// Undoes redundant recomputes while the peak stays within `target`.
  void prune(int64_t target);
  std::unique_ptr<Impl> impl;
};

/// Runs the greedy once down to the problem's budget (less its resident
/// bytes). Returns the plan and sets `reached` to whether the model's peak
/// fits.
MemoryPlan solveGreedy(const MemoryPlanProblem &problem,
                       const GreedyOptions &options, bool &reached);

} // namespace joint
} // namespace mlir

#endif // JOINT_PLANNING_MEMORYPLANSOLVERS_H

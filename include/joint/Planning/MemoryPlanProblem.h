//===- MemoryPlanProblem.h - The memory planning problem --------*- C++ -*-===//
//
// The interface between the clients of memory planning (joint-plan-memory
// builds a problem from a graph and its analyses; tests write one by hand)
// and its solvers, as CIRCT's scheduling problems are: plain data about a
// step's timeline, with no IR. Units: sizes in bytes, durations in seconds,
// positions are op indices of the graph body (0 .. numOps-1).
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_PLANNING_MEMORYPLANPROBLEM_H
#define JOINT_PLANNING_MEMORYPLANPROBLEM_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir {
namespace joint {

/// No position (a storage the backward never reads).
inline constexpr unsigned kNoPosition = std::numeric_limits<unsigned>::max();
/// Prefetch and defer distances the planner may choose: 0 .. this - 1
/// regions.
inline constexpr unsigned kPlanDistances = 3;

/// One op of the step.
struct PlanOp {
  std::string name;
  /// Modelled run time of the op (and of its replay), seconds.
  double seconds = 0;
  /// The transformer block the op runs in (index < numBlocks), if any.
  std::optional<unsigned> block;
  /// The tracked storages (indices into storages) of the op's results, one
  /// entry per result that has one, in result order (repeats kept): they
  /// coexist at the replay point when the op is replayed.
  SmallVector<unsigned, 2> resultStorages;
};

/// One forward-allocated device storage.
struct PlanStorage {
  std::string name;
  int64_t bytes = 0;
  /// Positions: allocation, last use in the input, last forward use, first
  /// backward use (kNoPosition when the backward never reads it).
  unsigned alloc = 0, free = 0, lastForward = 0, firstBackward = kNoPosition;
  /// A saved activation the plan may recompute.
  bool recomputable = false;
  /// Ops replayed when it is recomputed, in replay discovery order.
  SmallVector<unsigned, 4> closure;
  /// Storages the replay reads, sorted, without itself.
  SmallVector<unsigned, 4> frontier;
};

/// One op the plan may tag must_cpu_offload and the storages the applier
/// would move to host for it.
struct PlanOffloadCandidate {
  unsigned producer = 0;
  /// (defining op position, storage index or kNoPosition when the storage
  /// is not tracked), in the applier's order.
  SmallVector<std::pair<unsigned, unsigned>, 2> targets;
};

/// The problem: choose for each storage save, recompute or offload (with
/// prefetch/defer distances) so that the device peak is within the budget at
/// the least added step time.
struct MemoryPlanProblem {
  /// Device budget and host budget (0: no limit), bytes.
  int64_t budgetBytes = 0, hostBudgetBytes = 0;
  /// Bytes live all step (parameters, inputs), outside the timeline.
  int64_t residentBytes = 0;
  /// Transient device bytes live during each op with everything saved.
  std::vector<int64_t> timeline;
  /// First backward position; no offload without one.
  std::optional<unsigned> boundary;
  /// Host link bandwidth, bytes per second per direction.
  double linkBytesPerSecond = 0;
  unsigned numBlocks = 0;
  std::vector<PlanOp> ops;
  std::vector<PlanStorage> storages;
  std::vector<PlanOffloadCandidate> offloadCandidates;

  size_t getNumOps() const { return ops.size(); }
  /// First position of each block's run in the forward / backward (the
  /// applier's region anchors, approximated by blocks).
  SmallVector<unsigned> getForwardAnchors() const;
  SmallVector<unsigned> getBackwardAnchors() const;

  /// Validates the problem; emits one error at `loc` naming the element and
  /// the rule it breaks, and fails, for a malformed problem.
  LogicalResult check(Location loc) const;
  /// Prints the problem, one line per op, storage and candidate.
  void print(raw_ostream &os) const;
  /// Prints the problem as one JSON object, one line per op, storage and
  /// candidate, no trailing newline (bytes, seconds, positions; null for
  /// kNoPosition), for tools outside the compiler (bench/plan_optimality).
  void printJSON(raw_ostream &os) const;
};

} // namespace joint
} // namespace mlir

#endif // JOINT_PLANNING_MEMORYPLANPROBLEM_H

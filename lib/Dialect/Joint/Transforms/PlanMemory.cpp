//===- PlanMemory.cpp - Recompute/offload planner under a budget ----------===//
//
// joint-plan-memory, the memory planner, and the joint-optimize-memory
// pipeline (plan, then the offload and remat appliers). The planner decides,
// per saved activation storage, save, recompute or offload to the host: a
// greedy by freed bytes per added second with re-evaluation of the peak, as
// the greedy knapsack solver of torch's min-cut partitioner under
// `activation_memory_budget` (problem as in Checkmate, Jain et al. 2020).
// Lifetimes are intervals over op indices kept in a max segment tree, so one
// decision updates the timeline in O(log #ops). The recomputable set is what
// full checkpointing tags (tagRecomputePolicy, mode=full, on a copy) and the
// offloadable set what OffloadEligibility accepts, so the safety rules are
// those passes' own. An offload is priced by its exposed transfer time (a
// per-block estimate of the link's FIFO copy streams) at prefetch/defer
// distances 0-2. Each plan is measured by applying it to a copy (offload
// applier, rematerialize, MemoryModel, CostModel); offloads whose copies
// stall are dropped in the next round, and the fastest measured plan within
// the budget (the recompute-only plan is always one) is written; when none
// fits, a last plan offloads before it recomputes (lowest peak first). Only
// the final `policy` values, distances and `joint.plan` touch the input.
//
//===----------------------------------------------------------------------===//

#include "CheckpointScope.h"
#include "FlopRules.h"
#include "joint/Analysis/CostModel.h"
#include "joint/Analysis/MemoryModel.h"
#include "joint/Dialect/Joint/IR/OpSets.h"
#include "joint/Dialect/Joint/Transforms/CpuOffload.h"
#include "joint/Dialect/Joint/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Format.h"
#include <array>
#include <cmath>
#include <limits>

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTPLANMEMORY
#include "joint/Dialect/Joint/Transforms/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

static constexpr unsigned kNone = std::numeric_limits<unsigned>::max();
static constexpr double kBytesPerGB = 1e9;
static constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;
/// Rounds of "measure the applied plan, continue the greedy" before giving
/// up (each round lowers the internal target by the measured overshoot).
static constexpr unsigned kMaxRounds = 8;
/// Prefetch and defer distances the planner tries: 0 .. kDistances-1
/// regions.
static constexpr unsigned kDistances = 3;

namespace {

//===----------------------------------------------------------------------===//
// Max segment tree over op indices
//===----------------------------------------------------------------------===//

/// Range add, global max and first index of the max, point query; all
/// O(log n). Holds the device bytes live during each op.
class LiveBytesTree {
public:
  explicit LiveBytesTree(ArrayRef<int64_t> init) : n(init.size()) {
    size_t size = 1;
    while (size < n)
      size <<= 1;
    mx.assign(2 * size, std::numeric_limits<int64_t>::min() / 4);
    lazy.assign(2 * size, 0);
    if (n)
      build(1, 0, n - 1, init);
  }

  /// Adds `delta` to every op index in [lo, hi].
  void add(unsigned lo, unsigned hi, int64_t delta) {
    if (n && lo <= hi && delta)
      add(1, 0, n - 1, lo, std::min<size_t>(hi, n - 1), delta);
  }
  int64_t max() const { return n ? mx[1] : 0; }
  /// The first index holding the maximum.
  unsigned argmax() const {
    unsigned node = 1;
    size_t lo = 0, hi = n - 1;
    while (lo != hi) {
      int64_t want = mx[node] - lazy[node];
      size_t mid = (lo + hi) / 2;
      if (mx[2 * node] == want) {
        node = 2 * node;
        hi = mid;
      } else {
        node = 2 * node + 1;
        lo = mid + 1;
      }
    }
    return lo;
  }
  int64_t at(unsigned i) const {
    unsigned node = 1;
    size_t lo = 0, hi = n - 1;
    int64_t sum = 0;
    while (lo != hi) {
      sum += lazy[node];
      size_t mid = (lo + hi) / 2;
      if (i <= mid) {
        node = 2 * node;
        hi = mid;
      } else {
        node = 2 * node + 1;
        lo = mid + 1;
      }
    }
    return sum + mx[node];
  }

private:
  void build(unsigned node, size_t lo, size_t hi, ArrayRef<int64_t> init) {
    if (lo == hi) {
      mx[node] = init[lo];
      return;
    }
    size_t mid = (lo + hi) / 2;
    build(2 * node, lo, mid, init);
    build(2 * node + 1, mid + 1, hi, init);
    mx[node] = std::max(mx[2 * node], mx[2 * node + 1]);
  }
  void add(unsigned node, size_t lo, size_t hi, size_t l, size_t r,
           int64_t delta) {
    if (r < lo || hi < l)
      return;
    if (l <= lo && hi <= r) {
      mx[node] += delta;
      lazy[node] += delta;
      return;
    }
    size_t mid = (lo + hi) / 2;
    add(2 * node, lo, mid, l, r, delta);
    add(2 * node + 1, mid + 1, hi, l, r, delta);
    mx[node] = std::max(mx[2 * node], mx[2 * node + 1]) + lazy[node];
  }

  size_t n;
  std::vector<int64_t> mx, lazy;
};

//===----------------------------------------------------------------------===//
// Planner state
//===----------------------------------------------------------------------===//

/// Up to two closed intervals of op indices during which a storage occupies
/// device memory.
using Intervals = SmallVector<std::pair<unsigned, unsigned>, 2>;

static bool covers(const Intervals &iv, unsigned p) {
  return llvm::any_of(iv,
                      [&](auto i) { return i.first <= p && p <= i.second; });
}

/// One forward-allocated storage the planner tracks.
struct Unit {
  const Storage *storage = nullptr;
  int64_t bytes = 0;
  /// Op indices: allocation, last use in the input graph, last forward use,
  /// first backward use (kNone when the backward never reads it).
  unsigned alloc = 0, free = 0, lastForward = 0, firstBackward = kNone;
  /// A saved activation the plan may recompute.
  bool candidate = false;
  bool recompute = false;
  /// Offloaded: on device until `waitEnd` in the forward and again from
  /// `reloadStart` in the backward. `group` indexes Planner::groups.
  bool offload = false;
  unsigned waitEnd = 0, reloadStart = kNone;
  int group = -1;
  /// (wait end, reload start) per (prefetch, defer) < kDistances.
  std::array<std::pair<unsigned, unsigned>, kDistances * kDistances> placed;
  /// Latest / earliest position of a planned replay that reads this storage.
  unsigned maxReaderNeed = 0, minReaderNeed = kNone;
  /// What the tree currently holds for this storage.
  Intervals applied;
  /// Forward ops replayed when this storage is recomputed: its members'
  /// producers plus the tagged ancestors no backward op reads.
  SmallVector<CallFunctionOp, 4> closure;
  /// Storages the replay reads (units), deduplicated.
  SmallVector<unsigned, 4> frontier;
};

/// Where the replay of a recomputed unit sits: before its first backward
/// reader, or earlier when a replay that needs it comes first.
static unsigned needOf(const Unit &u) {
  return std::min(u.firstBackward, u.minReaderNeed);
}

/// The device intervals of `u` under a decision: saved, it lives from its
/// allocation to its last reader (a replay included); recomputed, it is
/// freed after its last forward reader and lives again from its replay.
static Intervals intervalsOf(const Unit &u, bool recompute,
                             unsigned maxReaderNeed, unsigned minReaderNeed) {
  unsigned end = std::max(u.free, maxReaderNeed);
  if (!recompute)
    return {{u.alloc, end}};
  unsigned start = std::min(u.firstBackward, minReaderNeed);
  if (start <= u.lastForward + 1)
    return {{u.alloc, end}};
  return {{u.alloc, u.lastForward}, {start, end}};
}

/// Offloaded: on device until the forward wait (`waitEnd`), and from the
/// reload (or an earlier replay reading it) to its last reader.
static Intervals offloadIntervals(const Unit &u, unsigned waitEnd,
                                  unsigned reloadStart, unsigned maxReaderNeed,
                                  unsigned minReaderNeed) {
  unsigned end = std::max(u.free, maxReaderNeed);
  unsigned start = std::min(reloadStart, minReaderNeed);
  if (start <= waitEnd + 1)
    return {{u.alloc, end}};
  return {{u.alloc, waitEnd}, {start, end}};
}

static Intervals intervalsOf(const Unit &u) {
  if (u.offload)
    return offloadIntervals(u, u.waitEnd, u.reloadStart, u.maxReaderNeed,
                            u.minReaderNeed);
  return intervalsOf(u, u.recompute, u.maxReaderNeed, u.minReaderNeed);
}

/// One op the planner may tag must_cpu_offload: the storages the applier
/// would offload for it (OffloadEligibility::check) and the chosen
/// distances.
struct OffloadGroup {
  unsigned producer = 0; // body index
  SmallVector<unsigned, 2> members;
  /// Body indices of the ops defining the offloaded storages.
  SmallVector<unsigned, 2> defs;
  int64_t bytes = 0;
  /// The smallest last forward use and the largest first backward use of
  /// the members: no member is backward-only live outside (begin, end).
  unsigned spanBegin = 0, spanEnd = 0;
  std::optional<unsigned> block;
  bool chosen = false, disabled = false;
  unsigned prefetch = 0, defer = 0;
};

/// The measured numbers of a plan applied to a copy of the module.
struct Measurement {
  int64_t peakBytes = 0;
  double stepSeconds = 0;
  double recomputeSeconds = 0;
  double exposedSeconds = 0;
  std::string peakNode;
  /// The largest device storages live at the peak op of the applied plan
  /// (bytes, owner's name), largest first, at most five.
  SmallVector<std::pair<int64_t, std::string>, 5> peakLive;
  /// Body indices of the ops defining the storages whose planned copies
  /// stall the compute stream (exposed transfer time > 0): excluded by
  /// storage, not by tagged op, since another view of a stalled storage
  /// would offload it again.
  SmallVector<unsigned> exposedOffloads;
  /// The same for every offload candidate in the transformer blocks of those
  /// stalls (the link is saturated there: a neighbour would stall next).
  SmallVector<unsigned> exposedBlockOffloads;
};

/// The planner for one graph: analyses of the input, the greedy, and the
/// measurement of an applied plan on a copy.
class Planner {
public:
  /// `memory` and `cost` model the unchanged input graph; every round's
  /// planner shares them.
  Planner(ModuleOp module, GraphOp graph, const StorageAliasAnalysis &aliases,
          const MemoryModel &memory, const CostModel &cost,
          const HardwareModel &hw, int64_t budgetBytes)
      : module(module), graph(graph), aliases(aliases), memory(memory),
        cost(cost), hw(hw), budgetBytes(budgetBytes) {}

  /// Plans and measures. Failure: an error was emitted (a graph the
  /// planner does not take, or an applier refusal). Otherwise `fits` says
  /// whether the measured peak is within the budget; getMeasurement() holds
  /// the last measurement either way.
  LogicalResult run(bool &fits);
  /// Writes the plan (policies, distances, `joint.plan`) and the remark.
  void write() { writePlan(*last); }
  /// The error for a budget this planner cannot reach.
  LogicalResult reportInfeasible() { return reportInfeasible(*last); }
  const Measurement &getMeasurement() const { return *last; }
  /// Offload decisions off (recompute only), or off for the ops at these
  /// body indices.
  void setOffload(bool enabled, const llvm::DenseSet<unsigned> &excludedOps) {
    allowOffload = enabled;
    excluded = excludedOps;
  }
  /// Lowest peak first: take any offload that lowers the peak before any
  /// recompute, whatever its exposed transfer time (a recompute blocks the
  /// offload of the storages its replay reads, so the default order can
  /// stop above a peak that offloading reaches).
  void setPreferOffload(bool enabled) { preferOffload = enabled; }

  unsigned getNumCandidates() const { return numCandidates; }
  unsigned getNumRecomputed() const { return numRecomputed; }

private:
  LogicalResult findRecomputable();
  void buildUnits();
  void computeClosure(unsigned ui);
  /// Bytes the decision "recompute unit `ui`" changes at op index `p`.
  int64_t deltaAt(unsigned ui, unsigned p) const;
  double addedSeconds(unsigned ui) const;
  /// Updates the cached seconds of the candidates whose closure holds `op`.
  void markCloned(CallFunctionOp op);
  void recompute(unsigned ui);
  void refresh(unsigned ui);
  /// Runs the greedy until the tree's peak is at most `target` bytes
  /// (transient); false when no candidate lowers the peak any more.
  bool greedy(int64_t target);
  /// Policies for the body's ops (by index) under the current decisions.
  std::vector<std::optional<CheckpointPolicy>> policies() const;
  /// (joint.prefetch, joint.defer) of each op tagged must_cpu_offload.
  llvm::DenseMap<unsigned, std::pair<unsigned, unsigned>> distances() const;
  FailureOr<Measurement> measure();
  void writePlan(const Measurement &m);
  LogicalResult reportInfeasible(const Measurement &measured);

  ModuleOp module;
  GraphOp graph;
  const StorageAliasAnalysis &aliases;
  const MemoryModel &memory;
  const CostModel &cost;
  HardwareModel hw;
  int64_t budgetBytes;

  /// Body ops in order (MemoryModel indices) and their tagged policies
  /// under mode=full; `recomputable` marks must_recompute ones.
  std::vector<std::optional<CheckpointPolicy>> fullPolicies;
  llvm::DenseSet<Operation *> recomputable;
  std::vector<Unit> units;
  llvm::DenseMap<const Storage *, unsigned> unitOf;
  SmallVector<unsigned> candidates;
  /// Candidates not recomputed yet, in scan order.
  SmallVector<unsigned> pending;
  /// Seconds a candidate's replay adds now (its closure minus what is
  /// already replayed), and the candidates whose closure holds an op.
  std::vector<double> seconds;
  llvm::DenseMap<Operation *, SmallVector<unsigned, 2>> closureUsers;
  llvm::DenseSet<Operation *> cloned;
  std::unique_ptr<LiveBytesTree> tree;
  unsigned numCandidates = 0, numRecomputed = 0;
  bool noBlocks = false;

  // Offload. Regions are runs of ops of one block (the applier's region
  // anchors, approximated by blocks); transfer capacity per block is its
  // compute seconds in that phase.
  int64_t hostBudgetBytes = 0, hostUsed = 0;
  std::vector<OffloadGroup> groups;
  /// Body index -> storages (original graph) OffloadEligibility accepts for
  /// the op at that index, found on the policy-free copy.
  /// In body order, so which op's group claims a storage two ops would
  /// offload is fixed by the graph, not by a hash table's layout.
  llvm::MapVector<unsigned, SmallVector<std::pair<unsigned, unsigned>, 2>>
      offloadable; // (defining op index, result number)
  SmallVector<unsigned> forwardAnchors, backwardAnchors;
  std::vector<double> startSeconds; // compute seconds before op i
  std::vector<double> capD2H, capH2D, loadD2H, loadH2D; // per block
  llvm::DenseSet<Operation *> offloadedProducers;
  unsigned numOffloaded = 0;
  int64_t offloadedBytes = 0;
  bool allowOffload = true, preferOffload = false;
  llvm::DenseSet<unsigned> excluded;
  std::optional<Measurement> last;

  void buildOffloadGroups();
  /// Wait end and reload start of group member `u` under the distances.
  std::pair<unsigned, unsigned> placement(const Unit &u, unsigned prefetch,
                                          unsigned defer) const {
    return u.placed[prefetch * kDistances + defer];
  }
  std::pair<unsigned, unsigned>
  computePlacement(const Unit &u, unsigned prefetch, unsigned defer) const;
  /// The block whose backward a reload of a value of `block` runs under.
  unsigned h2dBlock(unsigned block, unsigned prefetch) const;
  /// Estimated exposed transfer seconds of group `g` with the distances.
  double exposedSeconds(const OffloadGroup &g, unsigned prefetch,
                        unsigned defer) const;
  int64_t offloadDeltaAt(const OffloadGroup &g, unsigned prefetch,
                         unsigned defer, unsigned p) const;
  void offload(unsigned gi, unsigned prefetch, unsigned defer);

public:
  void setHostBudget(int64_t bytes) { hostBudgetBytes = bytes; }
  unsigned getNumOffloaded() const { return numOffloaded; }
  /// Ops the planner could tag must_cpu_offload.
  size_t getNumOffloadable() const { return groups.size(); }
};

} // namespace

LogicalResult Planner::findRecomputable() {
  ArrayRef<Operation *> ops = memory.getOps();
  fullPolicies.assign(ops.size(), std::nullopt);
  noBlocks = memory.getBlockSource() == "none";
  // Full checkpointing on a copy without policies: its must_recompute set
  // is everything the tag pass's rules allow to be replayed.
  OwningOpRef<ModuleOp> copy = cast<ModuleOp>(module->clone());
  GraphOp copyGraph;
  for (GraphOp g : copy->getOps<GraphOp>())
    if (g.getSymName() == graph.getSymName())
      copyGraph = g;
  Block &body = copyGraph.getBody().front();
  for (CallFunctionOp op : body.getOps<CallFunctionOp>())
    if (op.isForward())
      op.removePolicyAttr();
  StorageAliasAnalysis copyAliases(copyGraph);
  {
    // Offload eligibility on the policy-free copy (the applier's own rules;
    // it re-checks them on the planned graph).
    OffloadEligibility eligibility(copyGraph, copyAliases);
    std::optional<unsigned> boundary = memory.getBoundaryIndex();
    for (auto [i, op] : llvm::enumerate(body)) {
      auto call = dyn_cast<CallFunctionOp>(op);
      if (!boundary || i >= *boundary)
        break;
      if (!call || !call.isForward())
        continue;
      std::string why;
      FailureOr<SmallVector<const OffloadTarget *>> targets =
          eligibility.check(call, why);
      if (failed(targets))
        continue;
      auto &list = offloadable[i];
      for (const OffloadTarget *t : *targets) {
        auto result = dyn_cast<OpResult>(t->base);
        if (!result)
          continue;
        list.push_back({eligibility.position(result.getOwner()),
                        result.getResultNumber()});
      }
    }
  }
  if (noBlocks)
    return success(); // nothing is in a checkpoint scope
  CheckpointOptions options;
  options.mode = CheckpointMode::full;
  if (failed(tagRecomputePolicy(copyGraph, copyAliases, options)))
    return failure();
  for (auto [i, op] : llvm::enumerate(body)) {
    auto call = dyn_cast<CallFunctionOp>(op);
    if (!call || !call.isForward())
      continue;
    fullPolicies[i] = call.getPolicy();
    // A plan never replays a collective, not even a forward all-gather that
    // mode=full's rule recomputes (torch's partitioner forbids it too).
    if (isCollective(call.getTarget()))
      fullPolicies[i] = CheckpointPolicy::must_save;
    else if (call.getPolicy() == CheckpointPolicy::must_recompute)
      recomputable.insert(ops[i]);
  }
  return success();
}

void Planner::buildUnits() {
  std::optional<unsigned> boundary = memory.getBoundaryIndex();
  for (const StorageLifetime &life : memory.getLifetimes()) {
    auto owner = life.storage->owner.getDefiningOp<CallFunctionOp>();
    if (!owner || !owner.isForward() || life.onHost)
      continue;
    Unit u;
    u.storage = life.storage;
    u.bytes = life.bytes;
    u.alloc = life.alloc;
    u.free = life.free;
    u.lastForward = life.alloc;
    u.applied = {{life.alloc, life.free}};
    bool allRecomputable = true;
    for (Value m : life.storage->members) {
      auto def = m.getDefiningOp<CallFunctionOp>();
      if (def && def.isForward() && !recomputable.contains(def))
        allRecomputable = false;
      for (Operation *user : m.getUsers()) {
        auto call = dyn_cast<CallFunctionOp>(user);
        if (!call)
          continue;
        unsigned pos = *memory.getIndex(user);
        if (call.isForward())
          u.lastForward = std::max(u.lastForward, pos);
        else
          u.firstBackward = std::min(u.firstBackward, pos);
      }
    }
    bool crossing =
        boundary && life.alloc < *boundary && life.free >= *boundary;
    u.candidate = crossing && allRecomputable && u.firstBackward != kNone &&
                  !life.storage->isGraphOutput && u.bytes > 0 &&
                  u.lastForward < u.firstBackward;
    unitOf[life.storage] = units.size();
    if (u.candidate)
      candidates.push_back(units.size());
    units.push_back(std::move(u));
  }
  for (unsigned ui : candidates)
    computeClosure(ui);
  numCandidates = candidates.size();
  // Scan order: most bytes per second first, so the bound prunes early.
  seconds.assign(units.size(), 0);
  for (unsigned ui : candidates) {
    seconds[ui] = addedSeconds(ui);
    for (CallFunctionOp op : units[ui].closure)
      closureUsers[op].push_back(ui);
  }
  pending = candidates;
  llvm::stable_sort(pending, [&](unsigned a, unsigned b) {
    return double(units[a].bytes) * seconds[b] >
           double(units[b].bytes) * seconds[a];
  });
}

void Planner::computeClosure(unsigned ui) {
  Unit &u = units[ui];
  llvm::SmallDenseSet<Operation *, 8> seen;
  llvm::SmallDenseSet<unsigned, 8> frontier;
  SmallVector<CallFunctionOp> stack;
  for (Value m : u.storage->members)
    if (auto def = m.getDefiningOp<CallFunctionOp>();
        def && def.isForward() && seen.insert(def).second)
      stack.push_back(def);
  while (!stack.empty()) {
    CallFunctionOp op = stack.pop_back_val();
    u.closure.push_back(op);
    for (Value v : op->getOperands()) {
      const Storage *s = aliases.lookup(v);
      if (!s || s->isGraphInput)
        continue;
      auto it = unitOf.find(s);
      if (it == unitOf.end())
        continue;
      const Unit &p = units[it->second];
      auto def = v.getDefiningOp<CallFunctionOp>();
      // A tagged intermediate no backward op reads is replayed with us;
      // saved and candidate storages are read (the latter from its replay).
      bool intermediate = def && recomputable.contains(def) &&
                          p.firstBackward == kNone && s != u.storage;
      if (s == u.storage || intermediate) {
        if (def && seen.insert(def).second)
          stack.push_back(def);
        continue;
      }
      frontier.insert(it->second);
    }
  }
  u.frontier.assign(frontier.begin(), frontier.end());
  llvm::sort(u.frontier);
}

void Planner::buildOffloadGroups() {
  ArrayRef<Operation *> ops = memory.getOps();
  std::optional<unsigned> boundary = memory.getBoundaryIndex();
  if (!boundary)
    return;
  startSeconds.assign(ops.size() + 1, 0);
  for (auto [i, op] : llvm::enumerate(ops))
    startSeconds[i + 1] = startSeconds[i] + cost.getSeconds(op);
  size_t numBlocks = memory.getBlocks().size();
  capD2H.assign(numBlocks, 0);
  capH2D.assign(numBlocks, 0);
  loadD2H.assign(numBlocks, 0);
  loadH2D.assign(numBlocks, 0);
  std::optional<unsigned> previous;
  for (auto [i, op] : llvm::enumerate(ops)) {
    if (i == *boundary)
      previous.reset();
    std::optional<unsigned> block = memory.getBlockOf(op);
    if (!block)
      continue;
    (i < *boundary ? capD2H : capH2D)[*block] += cost.getSeconds(op);
    if (block != previous)
      (i < *boundary ? forwardAnchors : backwardAnchors).push_back(i);
    previous = block;
  }
  for (auto &[index, list] : offloadable) {
    if (!allowOffload || excluded.contains(index) ||
        llvm::any_of(
            list, [&](auto entry) { return excluded.contains(entry.first); }))
      continue;
    OffloadGroup g;
    g.producer = index;
    g.block = memory.getBlockOf(ops[index]);
    bool usable = !list.empty();
    for (auto [def, result] : list) {
      const Storage *st = aliases.lookup(ops[def]->getResult(result));
      auto it = st ? unitOf.find(st) : unitOf.end();
      if (it == unitOf.end() || units[it->second].group >= 0 ||
          units[it->second].firstBackward == kNone ||
          units[it->second].bytes == 0) {
        usable = false;
        break;
      }
      if (!llvm::is_contained(g.members, it->second)) {
        g.members.push_back(it->second);
        g.defs.push_back(def);
      }
    }
    if (!usable)
      continue;
    g.spanBegin = kNone;
    for (unsigned ui : g.members) {
      units[ui].group = groups.size();
      g.bytes += units[ui].bytes;
      g.spanBegin = std::min(g.spanBegin, units[ui].lastForward);
      g.spanEnd = std::max(g.spanEnd, units[ui].firstBackward);
    }
    groups.push_back(std::move(g));
  }
  llvm::sort(groups, [](const OffloadGroup &a, const OffloadGroup &b) {
    return a.producer < b.producer;
  });
  for (auto [gi, g] : llvm::enumerate(groups))
    for (unsigned ui : g.members) {
      Unit &u = units[ui];
      u.group = gi;
      for (unsigned prefetch = 0; prefetch < kDistances; ++prefetch)
        for (unsigned defer = 0; defer < kDistances; ++defer)
          u.placed[prefetch * kDistances + defer] =
              computePlacement(u, prefetch, defer);
    }
}

std::pair<unsigned, unsigned> Planner::computePlacement(const Unit &u,
                                                        unsigned prefetch,
                                                        unsigned defer) const {
  unsigned waitEnd = u.lastForward, reloadStart = u.firstBackward;
  if (defer) {
    auto after = llvm::upper_bound(forwardAnchors, u.lastForward);
    size_t index = (after - forwardAnchors.begin()) + defer;
    unsigned anchor = index < forwardAnchors.size()
                          ? forwardAnchors[index]
                          : *memory.getBoundaryIndex();
    if (anchor > u.lastForward)
      waitEnd = anchor - 1;
  }
  if (prefetch) {
    auto after = llvm::upper_bound(backwardAnchors, u.firstBackward);
    if (after != backwardAnchors.begin()) {
      size_t own = (after - backwardAnchors.begin()) - 1;
      size_t target = own > prefetch ? own - prefetch : 0;
      while (target < own && backwardAnchors[target] <= waitEnd)
        ++target;
      if (backwardAnchors[target] > waitEnd &&
          backwardAnchors[target] < u.firstBackward)
        reloadStart = backwardAnchors[target];
    }
  }
  return {waitEnd, reloadStart};
}

unsigned Planner::h2dBlock(unsigned block, unsigned prefetch) const {
  return std::min<size_t>(block + prefetch, capH2D.size() - 1);
}

double Planner::exposedSeconds(const OffloadGroup &g, unsigned prefetch,
                               unsigned defer) const {
  double transfer = double(g.bytes) / hw.linkBytesPerSecond;
  // The compute each copy can hide behind, for the group's first member.
  const Unit &u = units[g.members.front()];
  auto [waitEnd, reloadStart] = placement(u, prefetch, defer);
  double d2hWindow = startSeconds[waitEnd + 1] - startSeconds[u.alloc + 1];
  double h2dWindow = startSeconds[u.firstBackward] - startSeconds[reloadStart];
  // Each direction is one FIFO: the copy may queue behind every copy
  // already planned under the same block (conservative: as if all were
  // issued before it).
  unsigned r = g.block ? h2dBlock(*g.block, prefetch) : 0;
  double d2hAhead = g.block ? loadD2H[*g.block] : 0;
  double h2dAhead = g.block ? loadH2D[r] : 0;
  double exposed = std::max(0.0, d2hAhead + transfer - d2hWindow) +
                   std::max(0.0, h2dAhead + transfer - h2dWindow);
  // Link capacity: copies queue behind the ones already planned in the
  // block whose compute they run under (the D2H copy under its own block's
  // forward, the reload under the backward of the block `prefetch` later).
  if (g.block) {
    unsigned b = *g.block;
    auto over = [](double load, double cap) {
      return std::max(0.0, load - cap);
    };
    exposed = std::max(exposed, over(loadD2H[b] + transfer, capD2H[b]) -
                                    over(loadD2H[b], capD2H[b]) +
                                    over(loadH2D[r] + transfer, capH2D[r]) -
                                    over(loadH2D[r], capH2D[r]));
  }
  return exposed;
}

int64_t Planner::offloadDeltaAt(const OffloadGroup &g, unsigned prefetch,
                                unsigned defer, unsigned p) const {
  int64_t delta = 0;
  for (unsigned ui : g.members) {
    const Unit &u = units[ui];
    auto [waitEnd, reloadStart] = placement(u, prefetch, defer);
    Intervals next = offloadIntervals(u, waitEnd, reloadStart, u.maxReaderNeed,
                                      u.minReaderNeed);
    delta +=
        u.bytes * (int64_t(covers(next, p)) - int64_t(covers(u.applied, p)));
  }
  return delta;
}

void Planner::offload(unsigned gi, unsigned prefetch, unsigned defer) {
  OffloadGroup &g = groups[gi];
  g.chosen = true;
  g.prefetch = prefetch;
  g.defer = defer;
  double transfer = double(g.bytes) / hw.linkBytesPerSecond;
  if (g.block) {
    loadD2H[*g.block] += transfer;
    loadH2D[h2dBlock(*g.block, prefetch)] += transfer;
  }
  hostUsed += g.bytes;
  offloadedProducers.insert(memory.getOps()[g.producer]);
  ++numOffloaded;
  for (unsigned ui : g.members) {
    Unit &u = units[ui];
    std::tie(u.waitEnd, u.reloadStart) = placement(u, prefetch, defer);
    u.offload = true;
    offloadedBytes += u.bytes;
    llvm::erase(pending, ui);
    refresh(ui);
  }
}

int64_t Planner::deltaAt(unsigned ui, unsigned p) const {
  const Unit &u = units[ui];
  int64_t delta = 0;
  Intervals next = intervalsOf(u, true, u.maxReaderNeed, u.minReaderNeed);
  delta += u.bytes * (int64_t(covers(next, p)) - int64_t(covers(u.applied, p)));
  unsigned need = needOf(u);
  for (unsigned fi : u.frontier) {
    const Unit &f = units[fi];
    Intervals fNext =
        intervalsOf(f, f.recompute, std::max(f.maxReaderNeed, need),
                    std::min(f.minReaderNeed, need));
    delta +=
        f.bytes * (int64_t(covers(fNext, p)) - int64_t(covers(f.applied, p)));
  }
  if (need == p)
    for (CallFunctionOp op : u.closure)
      if (!cloned.contains(op))
        for (Value r : op->getResults())
          if (const Storage *s = aliases.lookup(r); s && s != u.storage)
            if (auto it = unitOf.find(s); it != unitOf.end())
              delta += units[it->second].bytes;
  return delta;
}

double Planner::addedSeconds(unsigned ui) const {
  double seconds = 0;
  for (CallFunctionOp op : units[ui].closure)
    if (!cloned.contains(op))
      seconds += cost.getSeconds(op);
  return seconds;
}

void Planner::markCloned(CallFunctionOp op) {
  for (unsigned ui : closureUsers.lookup(op))
    seconds[ui] = addedSeconds(ui);
}

void Planner::refresh(unsigned ui) {
  Unit &u = units[ui];
  Intervals next = intervalsOf(u);
  if (next == u.applied)
    return;
  for (auto [lo, hi] : u.applied)
    tree->add(lo, hi, -u.bytes);
  for (auto [lo, hi] : next)
    tree->add(lo, hi, u.bytes);
  u.applied = std::move(next);
}

void Planner::recompute(unsigned root) {
  Unit &u = units[root];
  unsigned need = needOf(u);
  // Intermediates replayed for the first time coexist at the replay point.
  for (CallFunctionOp op : u.closure) {
    if (!cloned.insert(op).second)
      continue;
    markCloned(op);
    for (Value r : op->getResults())
      if (const Storage *s = aliases.lookup(r); s && s != u.storage)
        if (auto it = unitOf.find(s); it != unitOf.end())
          tree->add(need, need, units[it->second].bytes);
  }
  u.recompute = true;
  ++numRecomputed;
  if (u.group >= 0)
    groups[u.group].disabled = true;
  llvm::erase(pending, root);
  refresh(root);
  // Readers of the replay: saved inputs live until it, recomputed inputs are
  // replayed no later than it (and so are their own inputs).
  SmallVector<std::pair<unsigned, unsigned>> work = {{root, need}};
  while (!work.empty()) {
    auto [ui, at] = work.pop_back_val();
    for (unsigned fi : units[ui].frontier) {
      Unit &f = units[fi];
      unsigned before = needOf(f);
      f.maxReaderNeed = std::max(f.maxReaderNeed, at);
      f.minReaderNeed = std::min(f.minReaderNeed, at);
      refresh(fi);
      if (f.recompute && needOf(f) < before)
        work.push_back({fi, needOf(f)});
    }
  }
}

bool Planner::greedy(int64_t target) {
  while (tree->max() > target) {
    unsigned p = tree->argmax();
    std::optional<unsigned> best;
    double bestScore = 0;
    for (unsigned ui : pending) {
      const Unit &u = units[ui];
      // Only a candidate whose own storage stops being live at `p` can lower
      // it (the inputs it keeps alive only add), by at most its bytes.
      if (p <= u.lastForward || p >= needOf(u))
        continue;
      double perSecond = 1.0 / std::max(seconds[ui], 1e-12);
      if (best && double(u.bytes) * perSecond <= bestScore)
        continue;
      if (!offloadedProducers.empty() &&
          llvm::any_of(u.closure, [&](CallFunctionOp op) {
            return offloadedProducers.contains(op);
          }))
        continue;
      int64_t delta = deltaAt(ui, p);
      if (delta >= 0)
        continue;
      double score = double(-delta) * perSecond;
      if (!best || score > bestScore) {
        best = ui;
        bestScore = score;
      }
    }
    // Offload. A copy the link hides (estimated exposure 0) adds no step
    // time, so it goes first, the storage whose recompute would cost most
    // per byte first: the link's time is the scarce resource, spent where
    // recompute is dearest. Otherwise an offload is scored like a recompute:
    // bytes freed at the peak per exposed second. Smaller distances first
    // (they keep less memory live).
    std::optional<std::tuple<unsigned, unsigned, unsigned>> bestOffload, hidden;
    double hiddenValue = -1;
    for (auto [gi, g] : llvm::enumerate(groups)) {
      // Only a member live at `p` only for the backward can lower it (the
      // span test first: it is the one that rejects most groups).
      if (p <= g.spanBegin || p >= g.spanEnd || g.chosen || g.disabled ||
          (hostBudgetBytes && hostUsed + g.bytes > hostBudgetBytes) ||
          llvm::none_of(g.members,
                        [&](unsigned ui) {
                          return units[ui].lastForward < p &&
                                 p < units[ui].firstBackward;
                        }) ||
          cloned.contains(memory.getOps()[g.producer]))
        continue;
      double avoided = 0;
      for (unsigned ui : g.members)
        avoided += units[ui].candidate ? seconds[ui] : 1e30;
      avoided /= double(std::max<int64_t>(g.bytes, 1));
      // Once a hidden copy is found only a dearer hidden one can replace it.
      if (hidden && avoided <= hiddenValue)
        continue;
      // The applier places values outside every region without distances.
      unsigned distances = g.block ? kDistances : 1;
      bool found = false;
      for (unsigned prefetch = 0; prefetch < distances && !found; ++prefetch)
        for (unsigned defer = 0; defer < distances && !found; ++defer) {
          // A distance that moves nothing is not written.
          const Unit &first = units[g.members.front()];
          if ((prefetch && placement(first, prefetch, defer) ==
                               placement(first, prefetch - 1, defer)) ||
              (defer && placement(first, prefetch, defer) ==
                            placement(first, prefetch, defer - 1)))
            continue;
          int64_t delta = offloadDeltaAt(g, prefetch, defer, p);
          if (delta >= 0)
            continue;
          double exposed = exposedSeconds(g, prefetch, defer);
          if (exposed <= 0 || preferOffload) {
            hidden = {unsigned(gi), prefetch, defer};
            hiddenValue = avoided;
            found = true; // the smallest hiding distances
            continue;
          }
          double score = double(-delta) / exposed;
          if ((!best && !bestOffload) || score > bestScore) {
            bestOffload = {unsigned(gi), prefetch, defer};
            bestScore = score;
          }
        }
    }
    if (hidden)
      bestOffload = hidden;
    if (bestOffload) {
      auto [gi, prefetch, defer] = *bestOffload;
      offload(gi, prefetch, defer);
      continue;
    }
    if (!best)
      return false;
    recompute(*best);
  }
  return true;
}

std::vector<std::optional<CheckpointPolicy>> Planner::policies() const {
  std::vector<std::optional<CheckpointPolicy>> out = fullPolicies;
  llvm::DenseSet<Operation *> replayed;
  for (const Unit &u : units)
    if (u.recompute)
      for (CallFunctionOp op : u.closure)
        replayed.insert(op);
  ArrayRef<Operation *> ops = memory.getOps();
  for (auto [i, p] : llvm::enumerate(out))
    if (p == CheckpointPolicy::must_recompute && !replayed.contains(ops[i]))
      p = CheckpointPolicy::must_save;
  for (const OffloadGroup &g : groups)
    if (g.chosen)
      out[g.producer] = CheckpointPolicy::must_cpu_offload;
  return out;
}

llvm::DenseMap<unsigned, std::pair<unsigned, unsigned>>
Planner::distances() const {
  llvm::DenseMap<unsigned, std::pair<unsigned, unsigned>> out;
  for (const OffloadGroup &g : groups)
    if (g.chosen)
      out[g.producer] = {g.prefetch, g.defer};
  return out;
}

/// The node name of `op` (a joint.call_function), else its op name.
static std::string nodeNameOf(Operation *op) {
  if (auto call = dyn_cast<CallFunctionOp>(op))
    return call.getName().str();
  return op->getName().getStringRef().str();
}

/// The node name of the op defining `v`; an ao op as "ao.reload(<node>)",
/// naming the node its chain starts from; a block argument as "%arg<N>".
static std::string valueName(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return "%arg" + std::to_string(arg.getArgNumber());
  Operation *def = v.getDefiningOp();
  if (!def)
    return "?";
  if (auto call = dyn_cast<CallFunctionOp>(def))
    return call.getName().str();
  Operation *src = def;
  while (src && !isa<CallFunctionOp>(src) && src->getNumOperands())
    src = src->getOperand(0).getDefiningOp();
  std::string name = def->getName().getStringRef().str();
  if (auto call = dyn_cast_or_null<CallFunctionOp>(src))
    name += "(" + call.getName().str() + ")";
  return name;
}

/// Writes `policies` (by body op index) on the forward joint.call_functions
/// of `graph`, removing any other policy.
static void applyPolicies(
    GraphOp graph, ArrayRef<std::optional<CheckpointPolicy>> policies,
    const llvm::DenseMap<unsigned, std::pair<unsigned, unsigned>> &distances) {
  MLIRContext *ctx = graph.getContext();
  Builder b(ctx);
  for (auto [i, op] : llvm::enumerate(graph.getBody().front())) {
    auto call = dyn_cast<CallFunctionOp>(op);
    if (!call || !call.isForward())
      continue;
    if (policies[i])
      call.setPolicyAttr(CheckpointPolicyAttr::get(ctx, *policies[i]));
    else
      call.removePolicyAttr();
    call->removeAttr(kPrefetchAttr);
    call->removeAttr(kDeferAttr);
    auto it = distances.find(i);
    if (it == distances.end())
      continue;
    if (it->second.first)
      call->setAttr(kPrefetchAttr, b.getI64IntegerAttr(it->second.first));
    if (it->second.second)
      call->setAttr(kDeferAttr, b.getI64IntegerAttr(it->second.second));
  }
}

FailureOr<Measurement> Planner::measure() {
  OwningOpRef<ModuleOp> copy = cast<ModuleOp>(module->clone());
  GraphOp copyGraph;
  for (GraphOp g : copy->getOps<GraphOp>())
    if (g.getSymName() == graph.getSymName())
      copyGraph = g;
  applyPolicies(copyGraph, policies(), distances());
  if (numOffloaded) {
    readForwardSizes(copyGraph);
    StorageAliasAnalysis before(copyGraph);
    OffloadEligibility eligibility(copyGraph, before);
    ModelStructure copyModel(copyGraph.getOperation());
    if (failed(applyCpuOffload(copyGraph, eligibility, copyModel,
                               OffloadApplyOptions())))
      return failure();
  }
  {
    StorageAliasAnalysis before(copyGraph);
    if (failed(rematerialize(copyGraph, before)))
      return failure();
  }
  StorageAliasAnalysis after(copyGraph);
  MemoryModel mem(after);
  CostModel costs(after, hw);
  Measurement m;
  m.peakBytes = mem.getPeakBytes();
  m.stepSeconds = costs.getStepSeconds();
  m.recomputeSeconds = costs.getRecomputeSeconds();
  m.exposedSeconds = costs.getExposedSeconds();
  // Which planned offload each stalled copy belongs to, by the node name of
  // the offloaded base's producer (names survive the clone and rewrites).
  llvm::StringMap<unsigned> groupOfBase;
  for (const OffloadGroup &g : groups)
    if (g.chosen)
      for (unsigned ui : g.members)
        if (auto def = units[ui].storage->owner.getDefiningOp<CallFunctionOp>())
          groupOfBase[def.getName()] = &g - groups.data();
  llvm::DenseSet<unsigned> stalled;
  for (const Transfer &t : costs.getTransfers()) {
    if (t.exposedSeconds <= 0 || !t.copy || t.copy->getNumOperands() == 0)
      continue;
    // offload(base) or reload(wait(offload(base), ...)).
    Value v = t.copy->getOperand(0);
    for (unsigned hops = 0;
         hops < 2 && v.getDefiningOp<CallFunctionOp>() == nullptr; ++hops)
      if (Operation *def = v.getDefiningOp(); def && def->getNumOperands())
        v = def->getOperand(0);
    auto def = v.getDefiningOp<CallFunctionOp>();
    if (!def)
      continue;
    auto it = groupOfBase.find(def.getName());
    if (it != groupOfBase.end())
      stalled.insert(it->second);
  }
  llvm::DenseSet<unsigned> stalledBlocks;
  for (unsigned gi : stalled)
    if (groups[gi].block)
      stalledBlocks.insert(*groups[gi].block);
  for (auto [gi, g] : llvm::enumerate(groups)) {
    if (stalled.contains(gi))
      llvm::append_range(m.exposedOffloads, g.defs);
    if (stalled.contains(gi) || (g.block && stalledBlocks.contains(*g.block)))
      llvm::append_range(m.exposedBlockOffloads, g.defs);
  }
  if (Operation *op = mem.getPeakOp()) {
    m.peakNode = nodeNameOf(op);
    // What the applied plan keeps live at its peak, largest first (stable:
    // equal sizes in storage order).
    unsigned p = mem.getPeakIndex();
    SmallVector<std::pair<int64_t, Value>> live;
    for (const StorageLifetime &life : mem.getLifetimes())
      if (!life.onHost && !life.hostValue && life.bytes && life.alloc <= p &&
          p <= life.free)
        live.push_back({life.bytes, life.storage->owner});
    llvm::stable_sort(live, [](auto a, auto b) { return a.first > b.first; });
    for (auto [bytes, owner] : llvm::ArrayRef(live).take_front(5))
      m.peakLive.push_back({bytes, valueName(owner)});
  }
  return m;
}

/// `value` printed with a printf `format` holding one double.
static std::string formatFixed(const char *format, double value) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format(format, value);
  return s;
}

/// Seconds as "1.234 s", "12.34 ms" or "5.678 us" (4 significant digits).
static std::string formatSeconds(double s) {
  if (s >= 1 || s == 0)
    return formatFixed("%.4g s", s);
  if (s >= 1e-3)
    return formatFixed("%.4g ms", s * 1e3);
  return formatFixed("%.4g us", s * 1e6);
}

/// `bytes` in binary units, as joint-memory-report prints them: "59.89 GiB",
/// "1.50 KiB", "648 B" (budget-gb counts 1e9 bytes, budget-gib 2^30).
static std::string formatBytes(int64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(bytes);
  unsigned u = 0;
  while (std::abs(v) >= 1024 && u + 1 < std::size(units)) {
    v /= 1024;
    ++u;
  }
  if (u == 0)
    return std::to_string(bytes) + " B";
  return formatFixed("%.2f ", v) + units[u];
}

/// formatBytes with the exact count when it is rounded: "59.89 GiB
/// (64309264900 B)", "648 B".
static std::string formatBytesExact(int64_t bytes) {
  std::string s = formatBytes(bytes);
  if (std::abs(bytes) >= 1024)
    s += " (" + std::to_string(bytes) + " B)";
  return s;
}

LogicalResult Planner::reportInfeasible(const Measurement &measured) {
  // Everything named comes from the applied plan's measurement: its peak,
  // the one node where it occurs and what is live there.
  InFlightDiagnostic d = emitError(graph.getLoc());
  d << "joint-plan-memory: budget " << formatBytesExact(budgetBytes)
    << " is not reachable: the lowest modelled peak is "
    << formatBytesExact(measured.peakBytes);
  if (!measured.peakNode.empty())
    d << " at node '" << measured.peakNode << "'";
  d << ", of which " << formatBytes(memory.getResidentBytes())
    << " are resident inputs; no decision lowers it further";
  if (!measured.peakLive.empty())
    d << "; the largest values live there are";
  for (auto [i, entry] : llvm::enumerate(measured.peakLive))
    d << (i ? ", '" : " '") << entry.second << "' (" << formatBytes(entry.first)
      << ")";
  return failure();
}

void Planner::writePlan(const Measurement &m) {
  MLIRContext *ctx = graph.getContext();
  Builder b(ctx);
  applyPolicies(graph, policies(), distances());
  int64_t recomputedBytes = 0;
  for (const Unit &u : units)
    if (u.recompute)
      recomputedBytes += u.bytes;
  NamedAttrList plan;
  plan.append("budget_bytes", b.getI64IntegerAttr(budgetBytes));
  plan.append("peak_bytes", b.getI64IntegerAttr(m.peakBytes));
  plan.append("step_seconds", b.getF64FloatAttr(m.stepSeconds));
  plan.append("baseline_peak_bytes",
              b.getI64IntegerAttr(memory.getPeakBytes()));
  plan.append("baseline_step_seconds",
              b.getF64FloatAttr(cost.getStepSeconds()));
  plan.append("recompute_seconds", b.getF64FloatAttr(m.recomputeSeconds));
  plan.append("recomputed_storages", b.getI64IntegerAttr(numRecomputed));
  plan.append("recomputed_bytes", b.getI64IntegerAttr(recomputedBytes));
  plan.append("candidate_storages", b.getI64IntegerAttr(numCandidates));
  plan.append("offloaded_ops", b.getI64IntegerAttr(numOffloaded));
  plan.append("offloaded_bytes", b.getI64IntegerAttr(offloadedBytes));
  plan.append("exposed_transfer_seconds", b.getF64FloatAttr(m.exposedSeconds));
  plan.append("host_budget_bytes", b.getI64IntegerAttr(hostBudgetBytes));
  plan.append("method", b.getStringAttr("greedy-bytes-per-second"));
  graph->setAttr("joint.plan", plan.getDictionary(ctx));

  double base = cost.getStepSeconds();
  InFlightDiagnostic r = emitRemark(graph.getLoc());
  r << "joint-plan-memory: budget " << formatBytesExact(budgetBytes)
    << "; recompute " << numRecomputed << " of " << numCandidates
    << " saved storages (" << formatBytes(recomputedBytes) << "); offload "
    << numOffloaded << " op(s) (" << formatBytes(offloadedBytes) << " to host, "
    << formatSeconds(m.exposedSeconds) << " transfer exposed); modelled peak "
    << formatBytes(m.peakBytes) << " (save-all "
    << formatBytes(memory.getPeakBytes()) << "), step "
    << formatSeconds(m.stepSeconds) << " ("
    << formatFixed("%+.1f", base > 0 ? (m.stepSeconds / base - 1) * 100 : 0.0)
    << "% over save-all)";
  if (noBlocks)
    r << "; no transformer blocks, so nothing is recomputable";
}

LogicalResult Planner::run(bool &fits) {
  fits = false;
  Block &body = graph.getBody().front();
  for (Operation &op : body) {
    auto call = dyn_cast<CallFunctionOp>(op);
    if (isa<ao::OffloadOp, ao::ReloadOp, ao::WaitTensorOp>(op) ||
        (call && call.getRecomputedFromAttr()))
      return op.emitOpError()
             << "joint-plan-memory plans an untransformed graph, but this "
                "graph already holds "
             << (call ? "remat clones" : "ao transfers")
             << "; plan the graph before joint-remat / joint-cpu-offload";
  }
  if (failed(findRecomputable()))
    return failure();
  buildUnits();
  buildOffloadGroups();
  tree = std::make_unique<LiveBytesTree>(memory.getTransientTimeline());

  int64_t target = budgetBytes - memory.getResidentBytes();
  for (unsigned round = 0;; ++round) {
    bool reached = greedy(target);
    FailureOr<Measurement> m = measure();
    if (failed(m))
      return failure();
    last = *m;
    if (m->peakBytes <= budgetBytes) {
      fits = true;
      return success();
    }
    if (!reached || round + 1 == kMaxRounds)
      return success();
    // The interval model under-counted: continue the same greedy sequence
    // with the overshoot taken off the target.
    target -= m->peakBytes - budgetBytes;
  }
}

//===----------------------------------------------------------------------===//
// The pass and the pipeline
//===----------------------------------------------------------------------===//

namespace {

/// The budget in bytes from one of two spellings; emits an error and fails
/// when both or neither are given (`required`) or the value is invalid.
static FailureOr<int64_t> budgetFrom(Location loc, StringRef what,
                                     const Pass::Option<double> &gb,
                                     const Pass::Option<double> &gib,
                                     bool required) {
  if (gb.hasValue() && gib.hasValue())
    return emitError(loc) << "joint-plan-memory: give " << what << "-gb or "
                          << what << "-gib, not both";
  if (!gb.hasValue() && !gib.hasValue()) {
    if (required)
      return emitError(loc) << "joint-plan-memory: give the device budget "
                               "as budget-gb (1e9 bytes) or budget-gib "
                               "(2^30 bytes)";
    return int64_t(0);
  }
  double value = gb.hasValue() ? gb : gib;
  StringRef unit = gb.hasValue() ? "-gb" : "-gib";
  if (!std::isfinite(value) || value < 0 || (required && value == 0) ||
      value * kBytesPerGB > 9e18)
    return emitError(loc) << "joint-plan-memory: " << what << unit
                          << " must be a finite number "
                          << (required ? "> 0" : ">= 0 (0 means no limit)")
                          << ", got " << formatOptionValue(value);
  return int64_t(
      std::llround(value * (gb.hasValue() ? kBytesPerGB : kBytesPerGiB)));
}

/// Rounds of "plan with offload, measure, drop the offloads whose copies
/// stall" (each round is one planner run and one measurement).
static constexpr unsigned kOffloadRounds = 3;

/// The fastest measured plan of `graph` within the budget, or null after an
/// error. Candidates: recompute only, and recompute + offload, where each
/// round excludes the offloads whose copies the cost model found exposed in
/// the previous round's measurement: after the first round the stalled
/// storages, after later rounds every candidate of their blocks (the
/// greedy's link-capacity estimate is optimistic; the measurement is the
/// FIFO copy streams of the cost model). The recompute-only plan is always a
/// candidate, so adding offload never gives a slower plan.
static std::unique_ptr<Planner>
planGraph(ModuleOp module, GraphOp graph, const StorageAliasAnalysis &aliases,
          const MemoryModel &memory, const CostModel &cost,
          const HardwareModel &hw, int64_t budget, int64_t hostBudget) {
  std::unique_ptr<Planner> best, lowest;
  auto consider = [&](std::unique_ptr<Planner> p, bool fits) {
    const Measurement &m = p->getMeasurement();
    if (!fits) {
      if (!lowest || m.peakBytes < lowest->getMeasurement().peakBytes)
        lowest = std::move(p);
      return;
    }
    if (!best || m.stepSeconds < best->getMeasurement().stepSeconds)
      best = std::move(p);
  };
  llvm::DenseSet<unsigned> excluded;
  for (unsigned round = 0; round <= kOffloadRounds; ++round) {
    bool offload = round < kOffloadRounds;
    auto p = std::make_unique<Planner>(module, graph, aliases, memory, cost, hw,
                                       budget);
    p->setHostBudget(hostBudget);
    p->setOffload(offload, excluded);
    bool fits = false;
    if (failed(p->run(fits)))
      return nullptr;
    bool again = false;
    // Nothing can be offloaded: the recompute-only plan is this one.
    if (offload && !p->getNumOffloadable()) {
      consider(std::move(p), fits);
      break;
    }
    if (offload) {
      // First the stalled storages only, then their whole blocks.
      ArrayRef<unsigned> exposed =
          round == 0 ? p->getMeasurement().exposedOffloads
                     : p->getMeasurement().exposedBlockOffloads;
      again = !exposed.empty() && p->getNumOffloaded();
      excluded.insert(exposed.begin(), exposed.end());
    }
    consider(std::move(p), fits);
    if (offload && !again)
      round = kOffloadRounds - 1; // no stall left: only recompute-only remains
  }
  if (best)
    return best;
  // Nothing fits: the lowest peak comes first. Offload everything that
  // lowers the peak before recomputing (exposed copies only cost time), so
  // no recompute blocks an offload the budget needs.
  {
    auto p = std::make_unique<Planner>(module, graph, aliases, memory, cost, hw,
                                       budget);
    p->setHostBudget(hostBudget);
    p->setOffload(/*enabled=*/true, /*excludedOps=*/{});
    p->setPreferOffload(true);
    bool fits = false;
    if (failed(p->run(fits)))
      return nullptr;
    consider(std::move(p), fits);
  }
  if (best)
    return best;
  (void)lowest->reportInfeasible();
  return nullptr;
}

struct PlanMemoryPass : joint::impl::JointPlanMemoryBase<PlanMemoryPass> {
  using Base::Base;

  /// Option errors once per run, before any graph, without a location (they
  /// are about the command line; drivers print them as their own errors).
  LogicalResult initialize(MLIRContext *context) override {
    Location loc = UnknownLoc::get(context);
    FailureOr<int64_t> device =
        budgetFrom(loc, "budget", budgetGB, budgetGiB, /*required=*/true);
    if (failed(device))
      return failure();
    FailureOr<int64_t> host = budgetFrom(loc, "host-budget", hostBudgetGB,
                                         hostBudgetGiB, /*required=*/false);
    if (failed(host))
      return failure();
    for (auto [name, value] :
         {std::pair<StringRef, double>{"peak-tflops", peakTflops},
          {"hbm-gbps", hbmGbps},
          {"link-gbps", linkGbps}})
      if (!(value > 0) || !std::isfinite(value))
        return emitError(loc) << "joint-plan-memory: " << name
                              << " must be a positive number, got "
                              << formatOptionValue(value);
    budget = *device;
    hostBudget = *host;
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    Location loc = module.getLoc();
    // Module-level: each graph's plan is measured on a clone of the module
    // (the operator table lives there); graphs are planned one by one.
    auto graphs = llvm::to_vector(module.getOps<GraphOp>());
    if (graphs.empty()) {
      emitError(loc) << "joint-plan-memory: the module holds no joint.graph";
      return signalPassFailure();
    }
    HardwareModel hw;
    hw.flopsPerSecond = peakTflops * 1e12;
    hw.hbmBytesPerSecond = hbmGbps * 1e9;
    hw.linkBytesPerSecond = linkGbps * 1e9;
    for (GraphOp graph : graphs) {
      StorageAliasAnalysis &aliases =
          getChildAnalysis<StorageAliasAnalysis>(graph);
      MemoryModel memory(aliases);
      // A data-dependent size is counted at its symbols' recorded bound;
      // without one the storage counts as 0 bytes and the budget is unsound.
      if (ArrayRef<const Storage *> unknown = memory.getUnknownSizeStorages();
          !unknown.empty()) {
        Value owner = unknown.front()->owner;
        InFlightDiagnostic d = allowUnboundedSizes ? emitWarning(owner.getLoc())
                                                   : emitError(owner.getLoc());
        d << "joint-plan-memory: " << unknown.size()
          << " storage(s) have a data-dependent size without a recorded "
             "bound and count as 0 bytes";
        if (Operation *def = owner.getDefiningOp())
          d << " (first: '" << nodeNameOf(def) << "')";
        d << "; the budget is not guaranteed";
        if (!allowUnboundedSizes) {
          d << " (trace with bounded sizes, or pass "
               "allow-unbounded-sizes=true to plan anyway)";
          return signalPassFailure();
        }
      }
      CostModel cost(aliases, hw);
      // The plan trades bytes for seconds: name the ops priced by a guess.
      warnOpsWithoutFlopRule(cost.getGuessedFlopOps(), "joint-plan-memory");
      std::unique_ptr<Planner> planner = planGraph(
          module, graph, aliases, memory, cost, hw, budget, hostBudget);
      if (!planner)
        return signalPassFailure();
      planner->write();
      numCandidates += planner->getNumCandidates();
      numRecomputed += planner->getNumRecomputed();
    }
  }

private:
  int64_t budget = 0, hostBudget = 0; // bytes, from initialize
};

} // namespace

void mlir::joint::registerOptimizeMemoryPipeline() {
  registerDeciderPipeline(
      "joint-optimize-memory",
      "Memory planning: joint-plan-memory (decide), then "
      "joint-apply-cpu-offload and joint-remat (apply), with the planner's "
      "options (listed under joint-plan-memory)",
      createJointPlanMemory, {createJointApplyCpuOffload, createJointRemat});
}

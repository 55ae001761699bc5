//===- PlanMemory.cpp - Recompute planner under a device budget -----------===//
//
// joint-plan-memory, the memory planner, and the joint-optimize-memory
// pipeline (plan, then the offload and remat appliers). The planner decides,
// per saved activation storage, save or recompute: a greedy by freed bytes per
// added second with re-evaluation of the peak, as the greedy knapsack solver of
// torch's min-cut partitioner under `activation_memory_budget` (problem as in
// Checkmate, Jain et al. 2020). Lifetimes are intervals over op indices kept
// in a max segment tree, so one decision updates the timeline in O(log #ops).
// The recomputable set is what full checkpointing tags (tagRecomputePolicy,
// mode=full, on a copy), so the safety rules are the tag pass's own. The
// plan is measured by applying it to a copy (rematerialize, MemoryModel,
// CostModel); the greedy continues while that measured peak exceeds the
// budget. Only the final `policy` values and `joint.plan` touch the input.
//
//===----------------------------------------------------------------------===//

#include "CheckpointScope.h"
#include "joint/Analysis/CostModel.h"
#include "joint/Analysis/MemoryModel.h"
#include "joint/Dialect/Joint/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Format.h"
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

static Intervals intervalsOf(const Unit &u) {
  return intervalsOf(u, u.recompute, u.maxReaderNeed, u.minReaderNeed);
}

/// The measured numbers of a plan applied to a copy of the module.
struct Measurement {
  int64_t peakBytes = 0;
  double stepSeconds = 0;
  double recomputeSeconds = 0;
  std::string peakNode;
};

/// The planner for one graph: analyses of the input, the greedy, and the
/// measurement of an applied plan on a copy.
class Planner {
public:
  Planner(ModuleOp module, GraphOp graph, const StorageAliasAnalysis &aliases,
          const HardwareModel &hw, int64_t budgetBytes)
      : module(module), graph(graph), aliases(aliases), memory(aliases),
        cost(aliases, hw), hw(hw), budgetBytes(budgetBytes) {}

  LogicalResult run();

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
  FailureOr<Measurement> measure();
  void writePlan(const Measurement &m);
  LogicalResult reportInfeasible(const Measurement &measured);

  ModuleOp module;
  GraphOp graph;
  const StorageAliasAnalysis &aliases;
  MemoryModel memory;
  CostModel cost;
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
};

} // namespace

LogicalResult Planner::findRecomputable() {
  ArrayRef<Operation *> ops = memory.getOps();
  fullPolicies.assign(ops.size(), std::nullopt);
  if (memory.getBlockSource() == "none") {
    noBlocks = true; // nothing is in a checkpoint scope
    return success();
  }
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
  CheckpointOptions options;
  options.mode = CheckpointMode::full;
  if (failed(tagRecomputePolicy(copyGraph, copyAliases, options)))
    return failure();
  for (auto [i, op] : llvm::enumerate(body)) {
    auto call = dyn_cast<CallFunctionOp>(op);
    if (!call || !call.isForward())
      continue;
    fullPolicies[i] = call.getPolicy();
    if (call.getPolicy() == CheckpointPolicy::must_recompute)
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
      int64_t delta = deltaAt(ui, p);
      if (delta >= 0)
        continue;
      double score = double(-delta) * perSecond;
      if (!best || score > bestScore) {
        best = ui;
        bestScore = score;
      }
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
  return out;
}

/// Writes `policies` (by body op index) on the forward joint.call_functions
/// of `graph`, removing any other policy.
static void applyPolicies(GraphOp graph,
                          ArrayRef<std::optional<CheckpointPolicy>> policies) {
  MLIRContext *ctx = graph.getContext();
  for (auto [i, op] : llvm::enumerate(graph.getBody().front())) {
    auto call = dyn_cast<CallFunctionOp>(op);
    if (!call || !call.isForward())
      continue;
    if (policies[i])
      call.setPolicyAttr(CheckpointPolicyAttr::get(ctx, *policies[i]));
    else
      call.removePolicyAttr();
  }
}

FailureOr<Measurement> Planner::measure() {
  OwningOpRef<ModuleOp> copy = cast<ModuleOp>(module->clone());
  GraphOp copyGraph;
  for (GraphOp g : copy->getOps<GraphOp>())
    if (g.getSymName() == graph.getSymName())
      copyGraph = g;
  applyPolicies(copyGraph, policies());
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
  if (Operation *op = mem.getPeakOp())
    if (auto call = dyn_cast<CallFunctionOp>(op))
      m.peakNode = call.getName().str();
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

/// `bytes` in decimal units: "12.34 GB", "443.05 kB", "12 bytes".
static std::string formatGB(int64_t bytes) {
  const char *units[] = {"bytes", "kB", "MB", "GB", "TB"};
  double v = double(bytes);
  unsigned u = 0;
  while (std::abs(v) >= 1000 && u + 1 < std::size(units)) {
    v /= 1000;
    ++u;
  }
  if (u == 0)
    return std::to_string(bytes) + " bytes";
  return formatFixed("%.2f ", v) + units[u];
}

/// The node name of `op` (a joint.call_function), else its op name.
static std::string nodeNameOf(Operation *op) {
  if (auto call = dyn_cast<CallFunctionOp>(op))
    return call.getName().str();
  return op->getName().getStringRef().str();
}

/// The node name of the op defining `v`, or "%arg<N>".
static std::string valueName(Value v) {
  if (auto call = v.getDefiningOp<CallFunctionOp>())
    return call.getName().str();
  if (auto arg = dyn_cast<BlockArgument>(v))
    return "%arg" + std::to_string(arg.getArgNumber());
  return "?";
}

LogicalResult Planner::reportInfeasible(const Measurement &measured) {
  unsigned p = tree->argmax();
  int64_t lowest = measured.peakBytes;
  // Storages live at the peak op, largest first.
  SmallVector<std::pair<int64_t, const Storage *>> live;
  for (const StorageLifetime &life : memory.getLifetimes()) {
    if (life.onHost || !life.bytes)
      continue;
    auto it = unitOf.find(life.storage);
    bool isLive = it != unitOf.end() ? covers(units[it->second].applied, p)
                                     : life.alloc <= p && p <= life.free;
    if (isLive)
      live.push_back({life.bytes, life.storage});
  }
  llvm::stable_sort(live, [](auto a, auto b) { return a.first > b.first; });
  ArrayRef<Operation *> ops = memory.getOps();
  InFlightDiagnostic d = emitError(graph.getLoc());
  d << "joint-plan-memory: budget " << formatGB(budgetBytes) << " ("
    << budgetBytes << " bytes) is not reachable: the lowest modelled peak is "
    << formatGB(lowest) << " (" << lowest << " bytes)";
  if (!measured.peakNode.empty())
    d << " at node '" << measured.peakNode << "'";
  d << ", of which " << formatGB(memory.getResidentBytes())
    << " are resident inputs; no decision lowers the bytes live at node '"
    << nodeNameOf(ops[p]) << "', the largest being";
  for (auto [i, entry] : llvm::enumerate(llvm::ArrayRef(live).take_front(5)))
    d << (i ? ", '" : " '") << valueName(entry.second->owner) << "' ("
      << entry.first << " bytes)";
  return failure();
}

void Planner::writePlan(const Measurement &m) {
  MLIRContext *ctx = graph.getContext();
  Builder b(ctx);
  applyPolicies(graph, policies());
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
  plan.append("method", b.getStringAttr("greedy-bytes-per-second"));
  graph->setAttr("joint.plan", plan.getDictionary(ctx));

  double base = cost.getStepSeconds();
  InFlightDiagnostic r = emitRemark(graph.getLoc());
  r << "joint-plan-memory: budget " << formatGB(budgetBytes) << "; recompute "
    << numRecomputed << " of " << numCandidates << " saved storages ("
    << recomputedBytes << " bytes); modelled peak " << formatGB(m.peakBytes)
    << " (save-all " << formatGB(memory.getPeakBytes()) << "), step "
    << formatSeconds(m.stepSeconds) << " ("
    << formatFixed("%+.1f", base > 0 ? (m.stepSeconds / base - 1) * 100 : 0.0)
    << "% over save-all)";
  if (noBlocks)
    r << "; no transformer blocks, so nothing is recomputable";
}

LogicalResult Planner::run() {
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
  tree = std::make_unique<LiveBytesTree>(memory.getTransientTimeline());

  int64_t target = budgetBytes - memory.getResidentBytes();
  for (unsigned round = 0;; ++round) {
    bool reached = greedy(target);
    FailureOr<Measurement> m = measure();
    if (failed(m))
      return failure();
    if (m->peakBytes <= budgetBytes) {
      writePlan(*m);
      return success();
    }
    if (!reached || round + 1 == kMaxRounds)
      return reportInfeasible(*m);
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
                          << ", got " << value;
  return int64_t(
      std::llround(value * (gb.hasValue() ? kBytesPerGB : kBytesPerGiB)));
}

struct PlanMemoryPass : joint::impl::JointPlanMemoryBase<PlanMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    Location loc = module.getLoc();
    FailureOr<int64_t> budget =
        budgetFrom(loc, "budget", budgetGB, budgetGiB, /*required=*/true);
    if (failed(budget))
      return signalPassFailure();
    if (failed(budgetFrom(loc, "host-budget", hostBudgetGB, hostBudgetGiB,
                          /*required=*/false)))
      return signalPassFailure();
    for (auto [name, value] :
         {std::pair<StringRef, double>{"peak-tflops", peakTflops},
          {"hbm-gbps", hbmGbps},
          {"link-gbps", linkGbps}})
      if (!(value > 0) || !std::isfinite(value)) {
        emitError(loc) << "joint-plan-memory: " << name
                       << " must be a positive number, got " << value;
        return signalPassFailure();
      }
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
      Planner planner(module, graph, aliases, hw, *budget);
      if (failed(planner.run()))
        return signalPassFailure();
      numCandidates += planner.getNumCandidates();
      numRecomputed += planner.getNumRecomputed();
    }
  }
};

/// The options of joint-plan-memory, repeated for the pipeline (a
/// pipeline's options are a C++ struct); the string is handed to the
/// planner verbatim, so it validates them.
struct OptimizeMemoryOptions : PassPipelineOptions<OptimizeMemoryOptions> {
  Option<double> budgetGB{*this, "budget-gb",
                          llvm::cl::desc("Device peak budget in GB (1e9 "
                                         "bytes); excludes budget-gib")};
  Option<double> budgetGiB{*this, "budget-gib",
                           llvm::cl::desc("Device peak budget in GiB (2^30 "
                                          "bytes); excludes budget-gb")};
  Option<double> hostBudgetGB{
      *this, "host-budget-gb",
      llvm::cl::desc("Host budget for offloaded activations in GB (1e9 "
                     "bytes); 0 means no limit")};
  Option<double> hostBudgetGiB{
      *this, "host-budget-gib",
      llvm::cl::desc("Host budget for offloaded activations in GiB (2^30 "
                     "bytes); 0 means no limit")};
  Option<double> peakTflops{*this, "peak-tflops",
                            llvm::cl::desc("Device TFLOP/s (1e12 FLOP/s)"),
                            llvm::cl::init(989.0)};
  Option<double> hbmGbps{*this, "hbm-gbps",
                         llvm::cl::desc("Device memory GB/s (1e9 bytes/s)"),
                         llvm::cl::init(4800.0)};
  Option<double> linkGbps{
      *this, "link-gbps",
      llvm::cl::desc("Host link GB/s per direction (1e9 bytes/s)"),
      llvm::cl::init(55.0)};
};

} // namespace

void mlir::joint::registerOptimizeMemoryPipeline() {
  registerDeciderPipeline<OptimizeMemoryOptions>(
      "joint-optimize-memory",
      "Memory planning: joint-plan-memory (decide), then "
      "joint-apply-cpu-offload and joint-remat (apply), with the planner's "
      "options",
      createJointPlanMemory,
      [](OpPassManager &pm, const OptimizeMemoryOptions &,
         std::unique_ptr<Pass> plan) {
        pm.addPass(std::move(plan));
        pm.addPass(createJointApplyCpuOffload());
        pm.addPass(createJointRemat());
      });
}

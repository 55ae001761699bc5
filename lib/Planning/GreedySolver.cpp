//===- GreedySolver.cpp - Greedy solver of the memory plan problem --------===//
//
// The greedy over a MemoryPlanProblem: while the modelled peak is over the
// target, take at the peak op the decision that frees the most bytes per
// added second: recompute a storage (its replay closure's seconds) or
// offload a group at prefetch/defer distances 0-2 (its exposed transfer
// seconds; a copy the link hides goes first). Lifetimes are intervals over
// op positions kept in a max segment tree, so one decision updates the
// timeline in O(log #ops).
//
//===----------------------------------------------------------------------===//

#include "joint/Planning/MemoryPlanSolvers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include <algorithm>
#include <array>
#include <tuple>

using namespace mlir;
using namespace mlir::joint;

static constexpr unsigned kNone = kNoPosition;
static constexpr unsigned kDistances = kPlanDistances;

namespace {

//===----------------------------------------------------------------------===//
// Max segment tree over op positions
//===----------------------------------------------------------------------===//

/// Range add, global max and first index of the max; all O(log n). Holds
/// the device bytes live during each op.
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

  /// Adds `delta` to every position in [lo, hi].
  void add(unsigned lo, unsigned hi, int64_t delta) {
    if (n && lo <= hi && delta)
      add(1, 0, n - 1, lo, std::min<size_t>(hi, n - 1), delta);
  }
  int64_t max() const { return n ? mx[1] : 0; }
  /// The maximum over [lo, hi] (lo <= hi < n).
  int64_t max(unsigned lo, unsigned hi) const {
    return max(1, 0, n - 1, lo, hi);
  }
  /// The first position holding the maximum.
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

private:
  int64_t max(unsigned node, size_t lo, size_t hi, size_t l, size_t r) const {
    if (l <= lo && hi <= r)
      return mx[node];
    size_t mid = (lo + hi) / 2;
    int64_t best = std::numeric_limits<int64_t>::min() / 4;
    if (l <= mid)
      best = std::max(best, max(2 * node, lo, mid, l, r));
    if (r > mid)
      best = std::max(best, max(2 * node + 1, mid + 1, hi, l, r));
    return best + lazy[node];
  }
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

/// Up to two closed intervals of positions during which a storage occupies
/// device memory.
using Intervals = SmallVector<std::pair<unsigned, unsigned>, 2>;

static bool covers(const Intervals &iv, unsigned p) {
  return llvm::any_of(iv,
                      [&](auto i) { return i.first <= p && p <= i.second; });
}

/// A storage's decision and what the tree holds for it.
struct Unit {
  const PlanStorage *s = nullptr;
  bool recompute = false;
  /// Offloaded: on device until `waitEnd` in the forward and again from
  /// `reloadStart` in the backward. `group` indexes the formed groups.
  bool offload = false;
  unsigned waitEnd = 0, reloadStart = kNone;
  int group = -1;
  /// (wait end, reload start) per (prefetch, defer) < kDistances.
  std::array<std::pair<unsigned, unsigned>, kDistances * kDistances> placed;
  /// Latest / earliest position of a planned replay that reads this storage.
  unsigned maxReaderNeed = 0, minReaderNeed = kNone;
  /// What the tree currently holds for this storage.
  Intervals applied;
};

/// Where the replay of a recomputed unit sits: before its first backward
/// reader, or earlier when a replay that needs it comes first.
static unsigned needOf(const Unit &u) {
  return std::min(u.s->firstBackward, u.minReaderNeed);
}

/// The device intervals of `u` under a decision: saved, it lives from its
/// allocation to its last reader (a replay included); recomputed, it is
/// freed after its last forward reader and lives again from its replay.
static Intervals intervalsOf(const Unit &u, bool recompute,
                             unsigned maxReaderNeed, unsigned minReaderNeed) {
  unsigned end = std::max(u.s->free, maxReaderNeed);
  if (!recompute)
    return {{u.s->alloc, end}};
  unsigned start = std::min(u.s->firstBackward, minReaderNeed);
  if (start <= u.s->lastForward + 1)
    return {{u.s->alloc, end}};
  return {{u.s->alloc, u.s->lastForward}, {start, end}};
}

/// Offloaded: on device until the forward wait (`waitEnd`), and from the
/// reload (or an earlier replay reading it) to its last reader.
static Intervals offloadIntervals(const Unit &u, unsigned waitEnd,
                                  unsigned reloadStart, unsigned maxReaderNeed,
                                  unsigned minReaderNeed) {
  unsigned end = std::max(u.s->free, maxReaderNeed);
  unsigned start = std::min(reloadStart, minReaderNeed);
  if (start <= waitEnd + 1)
    return {{u.s->alloc, end}};
  return {{u.s->alloc, waitEnd}, {start, end}};
}

static Intervals intervalsOf(const Unit &u) {
  if (u.offload)
    return offloadIntervals(u, u.waitEnd, u.reloadStart, u.maxReaderNeed,
                            u.minReaderNeed);
  return intervalsOf(u, u.recompute, u.maxReaderNeed, u.minReaderNeed);
}

/// A formed group and the solver's bookkeeping for it.
struct Group : PlannedOffload {
  /// The smallest last forward use and the largest first backward use of
  /// the members: no member is backward-only live outside (begin, end).
  unsigned spanBegin = 0, spanEnd = 0;
  bool disabled = false;
};

} // namespace

class mlir::joint::GreedyPlanner::Impl {
public:
  Impl(const MemoryPlanProblem &problem, const GreedyOptions &options);
  bool greedy(int64_t target);
  MemoryPlan plan() const;
  /// One decision of the greedy: recompute unit `index`, or offload group
  /// `index` at the distances.
  struct Decision {
    bool offload = false;
    unsigned index = 0, prefetch = 0, defer = 0;
  };
  /// Applies `d` as the greedy would.
  void apply(const Decision &d) {
    if (d.offload)
      offload(d.index, d.prefetch, d.defer);
    else
      recompute(d.index);
    decisions.push_back(d);
  }
  /// The modelled transient peak, bytes.
  int64_t peak() const { return tree->max(); }
  /// Bytes `u` would add at most were it saved again: its bytes on top of
  /// the highest point of the gap its recompute opens.
  int64_t peakIfSaved(const Unit &u) const {
    unsigned need = needOf(u);
    if (need <= u.s->lastForward + 1)
      return peak();
    return tree->max(u.s->lastForward + 1, need - 1) + u.s->bytes;
  }

  /// The decisions so far, in order.
  std::vector<Decision> decisions;

  const MemoryPlanProblem &problem;
  GreedyOptions options;
  std::vector<Unit> units;
  std::vector<Group> groups;

private:
  void buildOffloadGroups();
  /// Bytes the decision "recompute unit `ui`" changes at position `p`.
  int64_t deltaAt(unsigned ui, unsigned p) const;
  double addedSeconds(unsigned ui) const;
  /// Updates the cached seconds of the candidates whose closure holds `op`.
  void markCloned(unsigned op);
  void recompute(unsigned ui);
  void refresh(unsigned ui);
  std::pair<unsigned, unsigned> placement(const Unit &u, unsigned prefetch,
                                          unsigned defer) const {
    return u.placed[prefetch * kDistances + defer];
  }
  std::pair<unsigned, unsigned>
  computePlacement(const Unit &u, unsigned prefetch, unsigned defer) const;
  /// The block whose backward a reload of a value of `block` runs under.
  unsigned h2dBlock(unsigned block, unsigned prefetch) const {
    return std::min<size_t>(block + prefetch, capH2D.size() - 1);
  }
  /// Estimated exposed transfer seconds of group `g` with the distances.
  double exposedSeconds(const Group &g, unsigned prefetch,
                        unsigned defer) const;
  int64_t offloadDeltaAt(const Group &g, unsigned prefetch, unsigned defer,
                         unsigned p) const;
  void offload(unsigned gi, unsigned prefetch, unsigned defer);

  SmallVector<unsigned> candidates;
  /// Candidates not recomputed yet, in scan order.
  SmallVector<unsigned> pending;
  /// Seconds a candidate's replay adds now (its closure minus what is
  /// already replayed), and the candidates whose closure holds an op.
  std::vector<double> seconds;
  llvm::DenseMap<unsigned, SmallVector<unsigned, 2>> closureUsers;
  llvm::DenseSet<unsigned> cloned;
  /// Storages of cloned ops already counted at a replay point (a storage is
  /// defined by its producer and each of its views).
  llvm::DenseSet<unsigned> replayed;
  std::unique_ptr<LiveBytesTree> tree;
  unsigned numRecomputed = 0;

  // Offload. Transfer capacity per block is its compute seconds in that
  // phase.
  int64_t hostUsed = 0;
  SmallVector<unsigned> forwardAnchors, backwardAnchors;
  std::vector<double> startSeconds; // compute seconds before op i
  std::vector<double> capD2H, capH2D, loadD2H, loadH2D; // per block
  llvm::DenseSet<unsigned> offloadedProducers;
  unsigned numOffloaded = 0;
  int64_t offloadedBytes = 0;
};

GreedyPlanner::Impl::Impl(const MemoryPlanProblem &problem,
                          const GreedyOptions &options)
    : problem(problem), options(options) {
  units.resize(problem.storages.size());
  for (auto [ui, s] : llvm::enumerate(problem.storages)) {
    Unit &u = units[ui];
    u.s = &s;
    u.applied = {{s.alloc, s.free}};
    if (s.recomputable)
      candidates.push_back(ui);
  }
  // Scan order: most bytes per second first, so the bound prunes early.
  seconds.assign(units.size(), 0);
  for (unsigned ui : candidates) {
    seconds[ui] = addedSeconds(ui);
    for (unsigned op : problem.storages[ui].closure)
      closureUsers[op].push_back(ui);
  }
  pending = candidates;
  llvm::stable_sort(pending, [&](unsigned a, unsigned b) {
    return double(units[a].s->bytes) * seconds[b] >
           double(units[b].s->bytes) * seconds[a];
  });
  buildOffloadGroups();
  tree = std::make_unique<LiveBytesTree>(problem.timeline);
}

void GreedyPlanner::Impl::buildOffloadGroups() {
  if (!problem.boundary)
    return;
  unsigned boundary = *problem.boundary;
  size_t numOps = problem.getNumOps();
  startSeconds.assign(numOps + 1, 0);
  for (auto [i, op] : llvm::enumerate(problem.ops))
    startSeconds[i + 1] = startSeconds[i] + op.seconds;
  capD2H.assign(problem.numBlocks, 0);
  capH2D.assign(problem.numBlocks, 0);
  loadD2H.assign(problem.numBlocks, 0);
  loadH2D.assign(problem.numBlocks, 0);
  for (auto [i, op] : llvm::enumerate(problem.ops))
    if (op.block)
      (i < boundary ? capD2H : capH2D)[*op.block] += op.seconds;
  forwardAnchors = problem.getForwardAnchors();
  backwardAnchors = problem.getBackwardAnchors();
  const llvm::DenseSet<unsigned> &excluded = options.excludedOps;
  for (const PlanOffloadCandidate &c : problem.offloadCandidates) {
    if (!options.allowOffload || excluded.contains(c.producer) ||
        llvm::any_of(c.targets, [&](auto entry) {
          return excluded.contains(entry.first);
        }))
      continue;
    Group g;
    g.producer = c.producer;
    g.block = problem.ops[c.producer].block;
    bool usable = !c.targets.empty();
    for (auto [def, ui] : c.targets) {
      if (ui == kNone || units[ui].group >= 0 ||
          units[ui].s->firstBackward == kNone || units[ui].s->bytes == 0) {
        usable = false;
        break;
      }
      if (!llvm::is_contained(g.members, ui)) {
        g.members.push_back(ui);
        g.defs.push_back(def);
      }
    }
    if (!usable)
      continue;
    g.spanBegin = kNone;
    for (unsigned ui : g.members) {
      units[ui].group = groups.size();
      g.bytes += units[ui].s->bytes;
      g.spanBegin = std::min(g.spanBegin, units[ui].s->lastForward);
      g.spanEnd = std::max(g.spanEnd, units[ui].s->firstBackward);
    }
    groups.push_back(std::move(g));
  }
  llvm::sort(groups, [](const Group &a, const Group &b) {
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

std::pair<unsigned, unsigned>
GreedyPlanner::Impl::computePlacement(const Unit &u, unsigned prefetch,
                                      unsigned defer) const {
  unsigned waitEnd = u.s->lastForward, reloadStart = u.s->firstBackward;
  if (defer) {
    auto after = llvm::upper_bound(forwardAnchors, u.s->lastForward);
    size_t index = (after - forwardAnchors.begin()) + defer;
    unsigned anchor = index < forwardAnchors.size() ? forwardAnchors[index]
                                                    : *problem.boundary;
    if (anchor > u.s->lastForward)
      waitEnd = anchor - 1;
  }
  if (prefetch) {
    auto after = llvm::upper_bound(backwardAnchors, u.s->firstBackward);
    if (after != backwardAnchors.begin()) {
      size_t own = (after - backwardAnchors.begin()) - 1;
      size_t target = own > prefetch ? own - prefetch : 0;
      while (target < own && backwardAnchors[target] <= waitEnd)
        ++target;
      if (backwardAnchors[target] > waitEnd &&
          backwardAnchors[target] < u.s->firstBackward)
        reloadStart = backwardAnchors[target];
    }
  }
  return {waitEnd, reloadStart};
}

double GreedyPlanner::Impl::exposedSeconds(const Group &g, unsigned prefetch,
                                           unsigned defer) const {
  double transfer = double(g.bytes) / problem.linkBytesPerSecond;
  // The compute each copy can hide behind, for the group's first member.
  const Unit &u = units[g.members.front()];
  auto [waitEnd, reloadStart] = placement(u, prefetch, defer);
  double d2hWindow = startSeconds[waitEnd + 1] - startSeconds[u.s->alloc + 1];
  double h2dWindow =
      startSeconds[u.s->firstBackward] - startSeconds[reloadStart];
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

int64_t GreedyPlanner::Impl::offloadDeltaAt(const Group &g, unsigned prefetch,
                                            unsigned defer, unsigned p) const {
  int64_t delta = 0;
  for (unsigned ui : g.members) {
    const Unit &u = units[ui];
    auto [waitEnd, reloadStart] = placement(u, prefetch, defer);
    Intervals next = offloadIntervals(u, waitEnd, reloadStart, u.maxReaderNeed,
                                      u.minReaderNeed);
    delta +=
        u.s->bytes * (int64_t(covers(next, p)) - int64_t(covers(u.applied, p)));
  }
  return delta;
}

void GreedyPlanner::Impl::offload(unsigned gi, unsigned prefetch,
                                  unsigned defer) {
  Group &g = groups[gi];
  g.chosen = true;
  g.prefetch = prefetch;
  g.defer = defer;
  double transfer = double(g.bytes) / problem.linkBytesPerSecond;
  if (g.block) {
    loadD2H[*g.block] += transfer;
    loadH2D[h2dBlock(*g.block, prefetch)] += transfer;
  }
  hostUsed += g.bytes;
  offloadedProducers.insert(g.producer);
  ++numOffloaded;
  for (unsigned ui : g.members) {
    Unit &u = units[ui];
    std::tie(u.waitEnd, u.reloadStart) = placement(u, prefetch, defer);
    u.offload = true;
    offloadedBytes += u.s->bytes;
    llvm::erase(pending, ui);
    refresh(ui);
  }
}

int64_t GreedyPlanner::Impl::deltaAt(unsigned ui, unsigned p) const {
  const Unit &u = units[ui];
  int64_t delta = 0;
  Intervals next = intervalsOf(u, true, u.maxReaderNeed, u.minReaderNeed);
  delta +=
      u.s->bytes * (int64_t(covers(next, p)) - int64_t(covers(u.applied, p)));
  unsigned need = needOf(u);
  for (unsigned fi : u.s->frontier) {
    const Unit &f = units[fi];
    Intervals fNext =
        intervalsOf(f, f.recompute, std::max(f.maxReaderNeed, need),
                    std::min(f.minReaderNeed, need));
    delta += f.s->bytes *
             (int64_t(covers(fNext, p)) - int64_t(covers(f.applied, p)));
  }
  if (need == p) {
    // Each storage once: views in the closure define their base's storage.
    llvm::SmallDenseSet<unsigned, 8> counted;
    for (unsigned op : u.s->closure)
      if (!cloned.contains(op))
        for (unsigned si : problem.ops[op].resultStorages)
          if (si != ui && !replayed.contains(si) && counted.insert(si).second)
            delta += units[si].s->bytes;
  }
  return delta;
}

double GreedyPlanner::Impl::addedSeconds(unsigned ui) const {
  double seconds = 0;
  for (unsigned op : units[ui].s->closure)
    if (!cloned.contains(op))
      seconds += problem.ops[op].seconds;
  return seconds;
}

void GreedyPlanner::Impl::markCloned(unsigned op) {
  for (unsigned ui : closureUsers.lookup(op))
    seconds[ui] = addedSeconds(ui);
}

void GreedyPlanner::Impl::refresh(unsigned ui) {
  Unit &u = units[ui];
  Intervals next = intervalsOf(u);
  if (next == u.applied)
    return;
  for (auto [lo, hi] : u.applied)
    tree->add(lo, hi, -u.s->bytes);
  for (auto [lo, hi] : next)
    tree->add(lo, hi, u.s->bytes);
  u.applied = std::move(next);
}

void GreedyPlanner::Impl::recompute(unsigned root) {
  Unit &u = units[root];
  unsigned need = needOf(u);
  // Intermediates replayed for the first time coexist at the replay point.
  for (unsigned op : u.s->closure) {
    if (!cloned.insert(op).second)
      continue;
    markCloned(op);
    for (unsigned si : problem.ops[op].resultStorages)
      if (si != root && replayed.insert(si).second)
        tree->add(need, need, units[si].s->bytes);
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
    for (unsigned fi : units[ui].s->frontier) {
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

bool GreedyPlanner::Impl::greedy(int64_t target) {
  int64_t hostBudgetBytes = problem.hostBudgetBytes;
  while (tree->max() > target) {
    unsigned p = tree->argmax();
    std::optional<unsigned> best;
    double bestScore = 0;
    for (unsigned ui : pending) {
      const Unit &u = units[ui];
      // Only a candidate whose own storage stops being live at `p` can lower
      // it (the inputs it keeps alive only add), by at most its bytes.
      if (p <= u.s->lastForward || p >= needOf(u))
        continue;
      double perSecond = 1.0 / std::max(seconds[ui], 1e-12);
      if (best && double(u.s->bytes) * perSecond <= bestScore)
        continue;
      if (!offloadedProducers.empty() &&
          llvm::any_of(u.s->closure, [&](unsigned op) {
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
      if (options.offloadLast && best)
        break;
      // Only a member live at `p` only for the backward can lower it (the
      // span test first: it is the one that rejects most groups).
      if (p <= g.spanBegin || p >= g.spanEnd || g.chosen || g.disabled ||
          (hostBudgetBytes && hostUsed + g.bytes > hostBudgetBytes) ||
          llvm::none_of(g.members,
                        [&](unsigned ui) {
                          return units[ui].s->lastForward < p &&
                                 p < units[ui].s->firstBackward;
                        }) ||
          cloned.contains(g.producer))
        continue;
      double avoided = 0;
      for (unsigned ui : g.members)
        avoided += units[ui].s->recomputable ? seconds[ui] : 1e30;
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
          if (exposed <= 0 || options.preferOffload) {
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
      apply({/*offload=*/true, gi, prefetch, defer});
      continue;
    }
    if (!best)
      return false;
    apply({/*offload=*/false, *best, 0, 0});
  }
  return true;
}

MemoryPlan GreedyPlanner::Impl::plan() const {
  MemoryPlan plan;
  plan.recompute.assign(units.size(), false);
  for (auto [ui, u] : llvm::enumerate(units))
    if (u.recompute) {
      plan.recompute[ui] = true;
      plan.recomputedBytes += u.s->bytes;
    }
  for (const Group &g : groups)
    plan.offloads.push_back(g);
  plan.numCandidates = candidates.size();
  plan.numRecomputed = numRecomputed;
  plan.numOffloaded = numOffloaded;
  plan.offloadedBytes = offloadedBytes;
  plan.modelledTransientBytes = tree->max();
  return plan;
}

GreedyPlanner::GreedyPlanner(const MemoryPlanProblem &problem,
                             const GreedyOptions &options)
    : impl(std::make_unique<Impl>(problem, options)) {}
GreedyPlanner::~GreedyPlanner() = default;

bool GreedyPlanner::lowerPeakTo(int64_t target) {
  if (!impl->greedy(target))
    return false;
  prune(target);
  return true;
}

void GreedyPlanner::prune(int64_t target) {
  // The greedy only looks at the current peak, so a recompute taken for an
  // early peak may be redundant once later decisions lowered the peaks
  // around it. Undo such recomputes, the dearest replay first: one whose
  // gap has no room for its bytes is kept at once (a tree query); any other
  // is confirmed by replaying the other decisions on a fresh state (undoing
  // one changes replay points and who brings shared replays back).
  using Decision = Impl::Decision;
  std::vector<Decision> kept = impl->decisions;
  SmallVector<std::pair<double, unsigned>> order; // (replay seconds, unit)
  for (const Decision &d : kept) {
    if (d.offload)
      continue;
    double seconds = 0;
    for (unsigned op : impl->units[d.index].s->closure)
      seconds += impl->problem.ops[op].seconds;
    order.push_back({seconds, d.index});
  }
  llvm::stable_sort(order, [](auto a, auto b) { return a.first > b.first; });
  for (auto [seconds, ui] : order) {
    if (impl->peakIfSaved(impl->units[ui]) > target)
      continue;
    auto fresh = std::make_unique<Impl>(impl->problem, impl->options);
    for (const Decision &d : kept)
      if (d.offload || d.index != ui)
        fresh->apply(d);
    if (fresh->peak() > target)
      continue;
    llvm::erase_if(kept, [&, ui = ui](const Decision &d) {
      return !d.offload && d.index == ui;
    });
    impl = std::move(fresh);
  }
}
MemoryPlan GreedyPlanner::getPlan() const { return impl->plan(); }
size_t GreedyPlanner::getNumOffloadable() const { return impl->groups.size(); }

MemoryPlan mlir::joint::solveGreedy(const MemoryPlanProblem &problem,
                                    const GreedyOptions &options,
                                    bool &reached) {
  GreedyPlanner planner(problem, options);
  reached = planner.lowerPeakTo(problem.budgetBytes - problem.residentBytes);
  return planner.getPlan();
}

//===- MemoryPlanProblem.cpp - The memory planning problem ----------------===//
//
// Validation and printing of MemoryPlanProblem and MemoryPlan, and the
// region anchors the solvers place transfers by.
//
//===----------------------------------------------------------------------===//

#include "joint/Planning/MemoryPlanProblem.h"
#include "joint/Planning/MemoryPlanSolvers.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::joint;

/// First position of each run of one block on one side of the boundary.
static SmallVector<unsigned> anchors(const MemoryPlanProblem &p,
                                     bool backward) {
  SmallVector<unsigned> out;
  if (!p.boundary)
    return out;
  int64_t previous = -1; // the block of the last op in a block
  for (auto [i, op] : llvm::enumerate(p.ops)) {
    if (i == *p.boundary)
      previous = -1;
    if (!op.block)
      continue;
    if (int64_t(*op.block) != previous && (i >= *p.boundary) == backward)
      out.push_back(i);
    previous = *op.block;
  }
  return out;
}

SmallVector<unsigned> MemoryPlanProblem::getForwardAnchors() const {
  return anchors(*this, /*backward=*/false);
}

SmallVector<unsigned> MemoryPlanProblem::getBackwardAnchors() const {
  return anchors(*this, /*backward=*/true);
}

LogicalResult MemoryPlanProblem::check(Location loc) const {
  size_t n = ops.size();
  auto fail = [&]() { return emitError(loc) << "memory plan problem: "; };
  if (timeline.size() != n)
    return fail() << "the timeline has " << timeline.size() << " entries for "
                  << n << " ops";
  if (budgetBytes <= 0)
    return fail() << "the budget must be > 0 bytes, got " << budgetBytes;
  if (hostBudgetBytes < 0 || residentBytes < 0)
    return fail() << "host budget and resident bytes must be >= 0";
  if (boundary && *boundary > n)
    return fail() << "boundary " << *boundary << " is past the last op";
  if (!offloadCandidates.empty() && !(linkBytesPerSecond > 0))
    return fail() << "link bandwidth must be > 0 bytes/s to offload";
  for (auto [i, op] : llvm::enumerate(ops)) {
    if (!(op.seconds >= 0))
      return fail() << "op '" << op.name << "' has negative seconds";
    if (op.block && *op.block >= numBlocks)
      return fail() << "op '" << op.name << "' is in block " << *op.block
                    << " of " << numBlocks;
    for (unsigned s : op.resultStorages)
      if (s >= storages.size())
        return fail() << "op '" << op.name << "' defines unknown storage " << s;
  }
  for (auto [i, s] : llvm::enumerate(storages)) {
    auto bad = [&, &s = s]() {
      return fail() << "storage '" << s.name << "' ";
    };
    if (s.bytes < 0)
      return bad() << "has negative bytes";
    if (!(s.alloc <= s.lastForward && s.lastForward <= s.free && s.free < n))
      return bad() << "needs alloc <= last forward use <= free < " << n;
    if (s.firstBackward != kNoPosition &&
        (s.firstBackward >= n || s.firstBackward > s.free))
      return bad() << "has its first backward use past its free";
    if (s.recomputable &&
        (s.closure.empty() || s.firstBackward == kNoPosition ||
         s.lastForward >= s.firstBackward))
      return bad() << "is recomputable but has no replay closure or no "
                      "backward reader after its last forward use";
    for (unsigned op : s.closure)
      if (op >= n)
        return bad() << "replays unknown op " << op;
    for (unsigned f : s.frontier)
      if (f >= storages.size() || f == i)
        return bad() << "reads unknown storage " << f;
  }
  for (const PlanOffloadCandidate &c : offloadCandidates) {
    if (c.producer >= n || (boundary && c.producer >= *boundary))
      return fail() << "offload candidate " << c.producer
                    << " is not a forward op";
    for (auto [def, s] : c.targets)
      if (def >= n || (s != kNoPosition && s >= storages.size()))
        return fail() << "offload candidate '" << ops[c.producer].name
                      << "' names an unknown target";
  }
  return success();
}

static void printPosition(raw_ostream &os, unsigned p) {
  if (p == kNoPosition)
    os << "none";
  else
    os << p;
}

void MemoryPlanProblem::print(raw_ostream &os) const {
  os << "problem: " << ops.size() << " ops, " << storages.size()
     << " storages, " << offloadCandidates.size()
     << " offload candidates; budget " << budgetBytes << " B, host budget "
     << hostBudgetBytes << " B, resident " << residentBytes << " B, boundary ";
  if (boundary)
    os << *boundary;
  else
    os << "none";
  os << ", " << numBlocks << " blocks, link "
     << llvm::format("%g", linkBytesPerSecond) << " B/s\n";
  for (auto [i, op] : llvm::enumerate(ops)) {
    os << "op " << i << " '" << op.name
       << "': " << llvm::format("%g", op.seconds) << " s, live " << timeline[i]
       << " B, block ";
    if (op.block)
      os << *op.block;
    else
      os << "none";
    if (!op.resultStorages.empty()) {
      os << ", defines";
      for (unsigned s : op.resultStorages)
        os << " " << s;
    }
    os << "\n";
  }
  for (auto [i, s] : llvm::enumerate(storages)) {
    os << "storage " << i << " '" << s.name << "': " << s.bytes << " B, alloc "
       << s.alloc << ", free " << s.free << ", last forward " << s.lastForward
       << ", first backward ";
    printPosition(os, s.firstBackward);
    if (s.recomputable) {
      os << ", recompute replays [";
      llvm::interleaveComma(s.closure, os);
      os << "] reading [";
      llvm::interleaveComma(s.frontier, os);
      os << "]";
    }
    os << "\n";
  }
  for (const PlanOffloadCandidate &c : offloadCandidates) {
    os << "offload candidate " << c.producer << " '" << ops[c.producer].name
       << "': targets";
    for (auto [def, s] : c.targets) {
      os << " " << def << ":";
      printPosition(os, s);
    }
    os << "\n";
  }
}

/// A position, or null for kNoPosition.
static llvm::json::Value jsonPosition(unsigned p) {
  if (p == kNoPosition)
    return nullptr;
  return int64_t(p);
}

template <typename Range>
static llvm::json::Value jsonArray(Range &&r) {
  llvm::json::Array out;
  for (auto v : r)
    out.push_back(int64_t(v));
  return out;
}

/// Prints `items` as a JSON array of one element per line under `key`.
static void printJSONLines(raw_ostream &os, StringRef key,
                           ArrayRef<llvm::json::Value> items) {
  os << ",\n \"" << key << "\": [";
  for (auto [i, item] : llvm::enumerate(items))
    os << (i ? ",\n  " : "\n  ") << item;
  os << "]";
}

void MemoryPlanProblem::printJSON(raw_ostream &os) const {
  // One line for the scalars, one per op, storage and candidate (keys in
  // llvm::json's sorted order).
  llvm::json::Object head{
      {"budget_bytes", budgetBytes},
      {"host_budget_bytes", hostBudgetBytes},
      {"resident_bytes", residentBytes},
      {"boundary", jsonPosition(boundary ? *boundary : kNoPosition)},
      {"num_blocks", int64_t(numBlocks)},
      {"link_bytes_per_second", linkBytesPerSecond},
      {"forward_anchors", jsonArray(getForwardAnchors())},
      {"backward_anchors", jsonArray(getBackwardAnchors())}};
  std::string text;
  llvm::raw_string_ostream(text) << llvm::json::Value(std::move(head));
  os << StringRef(text).drop_back(); // reopen the object
  os << ",\n \"timeline\": " << jsonArray(timeline);
  std::vector<llvm::json::Value> items;
  for (const PlanOp &op : ops)
    items.push_back(llvm::json::Object{
        {"name", op.name},
        {"seconds", op.seconds},
        {"block", jsonPosition(op.block ? *op.block : kNoPosition)},
        {"defines", jsonArray(op.resultStorages)}});
  printJSONLines(os, "ops", items);
  items.clear();
  for (const PlanStorage &s : storages)
    items.push_back(
        llvm::json::Object{{"name", s.name},
                           {"bytes", s.bytes},
                           {"alloc", int64_t(s.alloc)},
                           {"free", int64_t(s.free)},
                           {"last_forward", int64_t(s.lastForward)},
                           {"first_backward", jsonPosition(s.firstBackward)},
                           {"recomputable", s.recomputable},
                           {"closure", jsonArray(s.closure)},
                           {"frontier", jsonArray(s.frontier)}});
  printJSONLines(os, "storages", items);
  items.clear();
  for (const PlanOffloadCandidate &c : offloadCandidates) {
    llvm::json::Array targets;
    for (auto [def, s] : c.targets)
      targets.push_back(llvm::json::Array{int64_t(def), jsonPosition(s)});
    items.push_back(llvm::json::Object{{"producer", int64_t(c.producer)},
                                       {"targets", std::move(targets)}});
  }
  printJSONLines(os, "offload_candidates", items);
  os << "}";
}

llvm::DenseSet<unsigned>
MemoryPlan::getReplayedOps(const MemoryPlanProblem &p) const {
  llvm::DenseSet<unsigned> out;
  for (auto [i, s] : llvm::enumerate(p.storages))
    if (recompute[i])
      out.insert(s.closure.begin(), s.closure.end());
  return out;
}

void MemoryPlan::print(const MemoryPlanProblem &p, raw_ostream &os) const {
  for (auto [i, s] : llvm::enumerate(p.storages))
    if (recompute[i])
      os << "recompute " << i << " '" << s.name << "'\n";
  for (const PlannedOffload &o : offloads)
    if (o.chosen)
      os << "offload " << o.producer << " '" << p.ops[o.producer].name
         << "' prefetch " << o.prefetch << " defer " << o.defer << "\n";
  os << "recomputed " << numRecomputed << " of " << numCandidates << " ("
     << recomputedBytes << " B), offloaded " << numOffloaded << " of "
     << offloads.size() << " (" << offloadedBytes
     << " B), modelled transient peak " << modelledTransientBytes << " B\n";
}

void MemoryPlan::printJSON(raw_ostream &os) const {
  llvm::json::Array recomputed;
  for (auto [i, r] : llvm::enumerate(recompute))
    if (r)
      recomputed.push_back(int64_t(i));
  os << "{\"recompute\": " << llvm::json::Value(std::move(recomputed))
     << ",\n \"recomputed_bytes\": " << recomputedBytes
     << ", \"offloaded_bytes\": " << offloadedBytes
     << ", \"modelled_transient_bytes\": " << modelledTransientBytes;
  std::vector<llvm::json::Value> items;
  for (const PlannedOffload &o : offloads)
    items.push_back(llvm::json::Object{
        {"producer", int64_t(o.producer)},
        {"members", jsonArray(o.members)},
        {"defs", jsonArray(o.defs)},
        {"bytes", o.bytes},
        {"block", jsonPosition(o.block ? *o.block : kNoPosition)},
        {"chosen", o.chosen},
        {"prefetch", int64_t(o.prefetch)},
        {"defer", int64_t(o.defer)}});
  printJSONLines(os, "groups", items);
  os << "}";
}

//===- PlanMemoryProblem.cpp - The planning problem of a joint.graph ------===//
//
// Builds the MemoryPlanProblem of one graph from its analyses: storages from
// MemoryModel's lifetimes (forward-allocated device storages), recompute
// candidates and their replay closures from RecomputeEligibility under
// full checkpointing (a plan never replays a collective), offload
// candidates from OffloadEligibility on the policy-free view, seconds and
// blocks from CostModel and MemoryModel. Also the policies a plan writes.
//
//===----------------------------------------------------------------------===//

#include "joint/Analysis/OffloadEligibility.h"
#include "joint/Analysis/RecomputeEligibility.h"
#include "joint/Analysis/UnshardChain.h"
#include "joint/Dialect/Joint/IR/OpSets.h"
#include "joint/Dialect/Joint/Transforms/CpuOffload.h"
#include "joint/Dialect/Joint/Transforms/PlanMemory.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

using namespace mlir;
using namespace mlir::joint;

static constexpr unsigned kNone = kNoPosition;

std::string mlir::joint::planNodeName(Operation *op) {
  if (auto call = dyn_cast<CallFunctionOp>(op))
    return call.getName().str();
  return op->getName().getStringRef().str();
}

/// The name of a storage: its owner's node, with the result number when not
/// the first.
static std::string storageName(const Storage *s) {
  auto result = cast<OpResult>(s->owner);
  std::string name = planNodeName(result.getOwner());
  if (result.getResultNumber())
    name += "#" + std::to_string(result.getResultNumber());
  return name;
}

namespace {

/// Builds one GraphPlanProblem.
class ProblemBuilder {
public:
  ProblemBuilder(GraphOp graph, const StorageAliasAnalysis &aliases,
                 const MemoryModel &memory, GraphPlanProblem &gp)
      : graph(graph), aliases(aliases), memory(memory), gp(gp), p(gp.problem) {}

  void findOffloadable();
  LogicalResult findRecomputable();
  void buildStorages();

private:
  void computeClosure(unsigned si);

  GraphOp graph;
  const StorageAliasAnalysis &aliases;
  const MemoryModel &memory;
  GraphPlanProblem &gp;
  MemoryPlanProblem &p;
  llvm::DenseSet<Operation *> recomputable;
  llvm::DenseMap<const Storage *, unsigned> indexOf;
};

} // namespace

void ProblemBuilder::findOffloadable() {
  // The applier's own rules, as if no forward op carried a policy (the plan
  // replaces them all; the applier re-checks them on the planned graph).
  OffloadEligibility eligibility(graph, aliases);
  eligibility.setIgnoreForwardPolicies(true);
  std::optional<unsigned> boundary = memory.getBoundaryIndex();
  for (auto [i, op] : llvm::enumerate(graph.getBody().front())) {
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
    PlanOffloadCandidate c;
    c.producer = i;
    for (const OffloadTarget *t : *targets)
      if (auto result = dyn_cast<OpResult>(t->base))
        c.targets.push_back({eligibility.position(result.getOwner()),
                             result.getResultNumber()});
    p.offloadCandidates.push_back(std::move(c));
  }
}

LogicalResult ProblemBuilder::findRecomputable() {
  ArrayRef<Operation *> ops = memory.getOps();
  gp.fullPolicies.assign(ops.size(), std::nullopt);
  gp.noBlocks = memory.getBlockSource() == "none";
  if (gp.noBlocks)
    return success(); // nothing is in a checkpoint scope
  // Full checkpointing's must_recompute set, as if the graph carried no
  // policy: everything the tag rules allow to be replayed.
  CheckpointOptions options;
  options.mode = CheckpointMode::full;
  FailureOr<RecomputeEligibility> rules = RecomputeEligibility::compute(
      graph, aliases, options, RecomputeEligibility::ExistingPolicies::Ignore);
  if (failed(rules))
    return failure();
  UnshardChain unshard(graph);
  for (auto [i, op] : llvm::enumerate(graph.getBody().front())) {
    auto call = dyn_cast<CallFunctionOp>(op);
    if (!call || !call.isForward())
      continue;
    std::optional<CheckpointPolicy> policy = rules->getPolicy(call);
    gp.fullPolicies[i] = policy;
    // A plan never replays a collective, except an FSDP unshard chain's
    // all-gather: re-gathering from the resident shards is FSDP's
    // reshard_after_forward, priced at the collective bandwidth.
    if (isCollective(call.getTarget()) && !unshard.contains(call))
      gp.fullPolicies[i] = CheckpointPolicy::must_save;
    else if (policy == CheckpointPolicy::must_recompute)
      recomputable.insert(ops[i]);
  }
  return success();
}

void ProblemBuilder::buildStorages() {
  std::optional<unsigned> boundary = memory.getBoundaryIndex();
  for (const StorageLifetime &life : memory.getLifetimes()) {
    auto owner = life.storage->owner.getDefiningOp<CallFunctionOp>();
    if (!owner || !owner.isForward() || life.onHost)
      continue;
    PlanStorage s;
    s.name = storageName(life.storage);
    s.bytes = life.bytes;
    s.alloc = life.alloc;
    s.free = life.free;
    s.lastForward = life.alloc;
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
          s.lastForward = std::max(s.lastForward, pos);
        else
          s.firstBackward = std::min(s.firstBackward, pos);
      }
    }
    bool crossing =
        boundary && life.alloc < *boundary && life.free >= *boundary;
    s.recomputable = crossing && allRecomputable && s.firstBackward != kNone &&
                     !life.storage->isGraphOutput && s.bytes > 0 &&
                     s.lastForward < s.firstBackward;
    indexOf[life.storage] = p.storages.size();
    gp.storages.push_back(life.storage);
    p.storages.push_back(std::move(s));
  }
  for (unsigned si = 0; si < p.storages.size(); ++si)
    if (p.storages[si].recomputable)
      computeClosure(si);
  // The tracked storages each op defines (replayed ops' results coexist at
  // the replay point) and the targets of the offload candidates.
  for (auto [i, op] : llvm::enumerate(gp.ops))
    for (Value r : op->getResults())
      if (const Storage *s = aliases.lookup(r))
        if (auto it = indexOf.find(s); it != indexOf.end())
          p.ops[i].resultStorages.push_back(it->second);
  for (PlanOffloadCandidate &c : p.offloadCandidates)
    for (auto &[def, target] : c.targets) {
      const Storage *s = aliases.lookup(gp.ops[def]->getResult(target));
      auto it = s ? indexOf.find(s) : indexOf.end();
      target = it == indexOf.end() ? kNone : it->second;
    }
}

void ProblemBuilder::computeClosure(unsigned si) {
  PlanStorage &u = p.storages[si];
  const Storage *storage = gp.storages[si];
  llvm::SmallDenseSet<Operation *, 8> seen;
  llvm::SmallDenseSet<unsigned, 8> frontier;
  SmallVector<CallFunctionOp> stack;
  for (Value m : storage->members)
    if (auto def = m.getDefiningOp<CallFunctionOp>();
        def && def.isForward() && seen.insert(def).second)
      stack.push_back(def);
  while (!stack.empty()) {
    CallFunctionOp op = stack.pop_back_val();
    u.closure.push_back(*memory.getIndex(op));
    for (Value v : op->getOperands()) {
      const Storage *s = aliases.lookup(v);
      if (!s || s->isGraphInput)
        continue;
      auto it = indexOf.find(s);
      if (it == indexOf.end())
        continue;
      const PlanStorage &f = p.storages[it->second];
      auto def = v.getDefiningOp<CallFunctionOp>();
      // A tagged intermediate no backward op reads is replayed with us;
      // saved and candidate storages are read (the latter from its replay).
      bool intermediate = def && recomputable.contains(def) &&
                          f.firstBackward == kNone && s != storage;
      if (s == storage || intermediate) {
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

FailureOr<GraphPlanProblem> mlir::joint::buildGraphPlanProblem(
    GraphOp graph, const StorageAliasAnalysis &aliases,
    const MemoryModel &memory, const CostModel &cost, const HardwareModel &hw,
    int64_t budgetBytes, int64_t hostBudgetBytes) {
  GraphPlanProblem gp;
  gp.ops = memory.getOps();
  MemoryPlanProblem &p = gp.problem;
  p.budgetBytes = budgetBytes;
  p.hostBudgetBytes = hostBudgetBytes;
  p.residentBytes = memory.getResidentBytes();
  ArrayRef<int64_t> timeline = memory.getTransientTimeline();
  p.timeline.assign(timeline.begin(), timeline.end());
  p.boundary = memory.getBoundaryIndex();
  p.linkBytesPerSecond = hw.linkBytesPerSecond;
  p.numBlocks = memory.getBlocks().size();
  for (Operation *op : gp.ops) {
    PlanOp o;
    o.name = planNodeName(op);
    o.seconds = cost.getSeconds(op);
    o.block = memory.getBlockOf(op);
    p.ops.push_back(std::move(o));
  }
  ProblemBuilder builder(graph, aliases, memory, gp);
  builder.findOffloadable();
  if (failed(builder.findRecomputable()))
    return failure();
  builder.buildStorages();
  return gp;
}

std::vector<std::optional<CheckpointPolicy>>
mlir::joint::getPlanPolicies(const GraphPlanProblem &gp,
                             const MemoryPlan &plan) {
  std::vector<std::optional<CheckpointPolicy>> out = gp.fullPolicies;
  llvm::DenseSet<unsigned> replayed = plan.getReplayedOps(gp.problem);
  for (auto [i, p] : llvm::enumerate(out))
    if (p == CheckpointPolicy::must_recompute && !replayed.contains(i))
      p = CheckpointPolicy::must_save;
  for (const PlannedOffload &o : plan.offloads)
    if (o.chosen)
      out[o.producer] = CheckpointPolicy::must_cpu_offload;
  return out;
}

llvm::DenseMap<unsigned, std::pair<unsigned, unsigned>>
mlir::joint::getPlanDistances(const MemoryPlan &plan) {
  llvm::DenseMap<unsigned, std::pair<unsigned, unsigned>> out;
  for (const PlannedOffload &o : plan.offloads)
    if (o.chosen)
      out[o.producer] = {o.prefetch, o.defer};
  return out;
}

void mlir::joint::applyPlanPolicies(
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

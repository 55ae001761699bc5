//===- PlanMemorySimulator.cpp - Price a memory plan by applying it -------===//
//
// The plan simulator of joint-plan-memory: writes a plan's policies on a
// copy of the module, runs the real appliers on it (joint-apply-cpu-offload's
// applyCpuOffload, joint-remat's rematerialize) and prices the result with
// MemoryModel and CostModel, so a plan is judged by the models
// joint-memory-report uses, not by the solver's interval estimate. It also
// names the offloads whose copies the cost model finds exposed, which the
// planner's next round excludes.
//
//===----------------------------------------------------------------------===//

#include "joint/Analysis/ModelStructure.h"
#include "joint/Analysis/OffloadEligibility.h"
#include "joint/Dialect/Joint/Transforms/ActivationCheckpoint.h"
#include "joint/Dialect/Joint/Transforms/CpuOffload.h"
#include "joint/Dialect/Joint/Transforms/PlanMemory.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace mlir::joint;

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

FailureOr<PlanMeasurement> mlir::joint::simulateMemoryPlan(
    ModuleOp module, GraphOp graph, const GraphPlanProblem &gp,
    const MemoryPlan &plan, const HardwareModel &hw) {
  OwningOpRef<ModuleOp> copy = cast<ModuleOp>(module->clone());
  GraphOp copyGraph;
  for (GraphOp g : copy->getOps<GraphOp>())
    if (g.getSymName() == graph.getSymName())
      copyGraph = g;
  applyPlanPolicies(copyGraph, getPlanPolicies(gp, plan),
                    getPlanDistances(plan));
  if (plan.numOffloaded) {
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
  PlanMeasurement m;
  m.peakBytes = mem.getPeakBytes();
  m.stepSeconds = costs.getStepSeconds();
  m.recomputeSeconds = costs.getRecomputeSeconds();
  m.exposedSeconds = costs.getExposedSeconds();
  // Which planned offload each stalled copy belongs to, by the node name of
  // the offloaded base's producer (names survive the clone and rewrites).
  ArrayRef<PlannedOffload> groups = plan.offloads;
  llvm::StringMap<unsigned> groupOfBase;
  for (auto [gi, g] : llvm::enumerate(groups))
    if (g.chosen)
      for (unsigned si : g.members)
        if (auto def = gp.storages[si]->owner.getDefiningOp<CallFunctionOp>())
          groupOfBase[def.getName()] = gi;
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
    m.peakNode = planNodeName(op);
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

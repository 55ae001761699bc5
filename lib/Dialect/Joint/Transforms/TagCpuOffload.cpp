//===- TagCpuOffload.cpp - Decide which activations go to host ------------===//
//
// joint-tag-cpu-offload, the offload decider, and the joint-cpu-offload
// pipeline (decide, then apply). The decider only writes decisions:
// `policy = must_cpu_offload` on the forward ops in scope whose saved
// results live in a storage that passes OffloadEligibility, at least
// min-bytes large, chosen largest first within the host budget
// (graph_trainer's `_select_within_budget`), plus `joint.prefetch` and
// `joint.defer` when the options ask for distances. Scope `attention` is
// graph_trainer's rule with attention modules found by ModelStructure;
// `block` and `all` widen it. In those two scopes the storages of the block
// whose backward runs first are offloaded only when the cost model says
// their reload can hide behind the backward compute before their first
// reader. Linear in ops and uses plus a sort of the candidates.
//
//===----------------------------------------------------------------------===//

#include "joint/Analysis/CostModel.h"
#include "joint/Analysis/ModelStructure.h"
#include "joint/Dialect/Joint/Transforms/CpuOffload.h"
#include "joint/Dialect/Joint/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FormatVariadic.h"
#include <cmath>

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTTAGCPUOFFLOAD
#include "joint/Dialect/Joint/Transforms/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

/// Bytes per GiB: budget-gib counts in 2^30 bytes.
static constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

/// The option spelling of `scope` (OffloadScope's enumerators, in order).
static StringRef stringifyScope(OffloadScope scope) {
  static constexpr StringLiteral kNames[] = {"attention", "block", "all"};
  return kNames[static_cast<unsigned>(scope)];
}

namespace {

/// One storage the decider may select, and the in-scope ops whose saved
/// results live in it.
struct Candidate {
  const OffloadTarget *target;
  SmallVector<CallFunctionOp, 2> ops;
  bool selected = false;
  /// Kept on the device (the last block's exposed reloads): never selected,
  /// and its ops stay untagged even when they save other storages.
  bool kept = false;
};

struct TagCpuOffloadPass
    : joint::impl::JointTagCpuOffloadBase<TagCpuOffloadPass> {
  using Base::Base;

  /// Option errors are reported once per run, before any graph, with no
  /// location (they are about the command line, not the document).
  LogicalResult initialize(MLIRContext *ctx) override {
    return checkOptions(UnknownLoc::get(ctx));
  }

  void runOnOperation() override {
    if (failed(runOnGraph(getOperation())))
      return signalPassFailure();
    // Only decision attributes changed, and no analysis reads them: the
    // applier reuses the alias analysis, ModelStructure and eligibility, and
    // MLIR does not re-verify ops whose operands and types are unchanged.
    markAllAnalysesPreserved();
  }

private:
  LogicalResult checkOptions(Location loc) {
    // `-gb` means 1e9 bytes in every pass; this spelling counted 2^30
    // bytes, so it is refused rather than silently reinterpreted.
    if (budgetGB.hasValue())
      return emitError(loc)
             << "joint-tag-cpu-offload: budget-gb is no longer accepted (it "
                "counted GiB, 2^30 bytes, unlike the planner's budget-gb); "
                "give the host budget as budget-gib";
    if (!std::isfinite(budgetGiB) || budgetGiB < 0)
      return emitError(loc)
             << "joint-tag-cpu-offload: budget-gib must be a finite number "
                "of GiB >= 0 (0 means no limit), got "
             << formatOptionValue(budgetGiB);
    if (minBytes < 0)
      return emitError(loc)
             << "joint-tag-cpu-offload: min-bytes must be >= 0, got "
             << static_cast<int64_t>(minBytes);
    return success();
  }

  LogicalResult runOnGraph(GraphOp graph);
};

} // namespace

/// Storages of the block whose backward runs first whose reload cannot
/// hide behind the backward compute before their first reader (bytes /
/// link bandwidth > compute seconds of the backward ops before it; the
/// memory report's CostModel and its default hardware). Returns how many
/// were dropped.
static unsigned dropExposedLastBlock(GraphOp graph,
                                     const StorageAliasAnalysis &aliases,
                                     ModelStructure &model,
                                     std::vector<Candidate> &candidates) {
  std::optional<unsigned> lastBlock;
  for (Candidate &c : candidates)
    if (std::optional<unsigned> b = model.getBlockIndex(c.target->producer))
      lastBlock = std::max(lastBlock.value_or(0), *b);
  if (!lastBlock)
    return 0;
  HardwareModel hw;
  CostModel cost(aliases, hw);
  // Backward compute seconds before each op, by position.
  llvm::DenseMap<Operation *, double> before;
  double seconds = 0;
  for (CallFunctionOp op : graph.getBody().front().getOps<CallFunctionOp>()) {
    if (!op.isBackward())
      continue;
    before[op] = seconds;
    seconds += cost.getSeconds(op);
  }
  unsigned dropped = 0;
  for (Candidate &c : candidates) {
    if (model.getBlockIndex(c.target->producer) != lastBlock)
      continue;
    double reload =
        static_cast<double>(c.target->bytes) / hw.linkBytesPerSecond;
    if (reload <= before.lookup(c.target->firstBackwardUse))
      continue;
    c.kept = true;
    ++dropped;
  }
  return dropped;
}

LogicalResult TagCpuOffloadPass::runOnGraph(GraphOp graph) {
  ModelStructure &model = getAnalysis<ModelStructure>();
  StringRef scopeName = stringifyScope(scope);
  if (scope == OffloadScope::attention && model.getAttentionModules().empty() &&
      !model.getBlockComputingAttention().empty())
    return emitError(graph.getLoc())
           << "joint-tag-cpu-offload scope=attention: graph @"
           << graph.getSymName() << " has no attention module: block '"
           << model.getBlockComputingAttention()
           << "' computes attention itself, and offloading the whole block "
              "is scope=block; use scope=block or scope=all";
  if (scope == OffloadScope::attention && model.getAttentionModules().empty())
    // Not emitOpError: the note would print the whole graph.
    return emitError(graph.getLoc())
           << "joint-tag-cpu-offload scope=attention: graph @"
           << graph.getSymName() << " has no attention module (no '"
           << kModelAttr
           << "' attention entry, no module named 'self_attn', no module "
              "computing scaled-dot-product attention or bmm -> softmax -> "
              "bmm); use scope=block or scope=all";
  if (scope == OffloadScope::block && model.getBlocks().empty())
    return emitError(graph.getLoc())
           << "joint-tag-cpu-offload scope=block: graph @" << graph.getSymName()
           << " has no transformer block (no '" << kModelAttr
           << "' block_containers and no module path '<container>.<int>'); "
              "use scope=all";

  StorageAliasAnalysis &aliases = getAnalysis<StorageAliasAnalysis>();
  OffloadEligibility &eligibility = getAnalysis<OffloadEligibility>();
  auto inScope = [&](CallFunctionOp op) {
    switch (scope) {
    case OffloadScope::attention: {
      ModelStructure::Place place;
      model.getAttentionOf(op, &place);
      return place == ModelStructure::Place::Inside;
    }
    case OffloadScope::block:
      return model.getBlockIndex(op).has_value();
    case OffloadScope::all:
      return true;
    }
    return false;
  };

  // Candidates: storages of the saved results of in-scope forward ops.
  std::vector<Candidate> candidates;
  llvm::DenseMap<const Storage *, unsigned> candidateOf;
  llvm::DenseSet<const Storage *> belowMinBytes, recomputeTagged;
  for (CallFunctionOp op : graph.getBody().front().getOps<CallFunctionOp>()) {
    if (!op.isForward() || !inScope(op))
      continue;
    std::string why;
    OffloadRefusal refusal;
    FailureOr<SmallVector<const OffloadTarget *>> targets =
        eligibility.check(op, why, &refusal);
    if (failed(targets)) {
      if (refusal == OffloadRefusal::RecomputeTagged)
        for (Value r : op->getResults())
          if (const Storage *s = aliases.lookup(r))
            recomputeTagged.insert(s);
      continue;
    }
    // Rank >= 2 (graph_trainer: `value.dim() < 2` stays), min-bytes, and
    // storages already offloaded by an earlier run.
    bool usable = true;
    for (const OffloadTarget *t : *targets) {
      auto type = cast<RankedTensorType>(t->base.getType());
      if (type.getRank() < 2 || eligibility.isOffloaded(t->storage)) {
        usable = false;
        break;
      }
      if (t->bytes < minBytes) {
        belowMinBytes.insert(t->storage);
        usable = false;
      }
    }
    if (!usable)
      continue;
    for (const OffloadTarget *t : *targets) {
      auto [it, inserted] =
          candidateOf.try_emplace(t->storage, candidates.size());
      if (inserted)
        candidates.push_back(Candidate{t, {}});
      candidates[it->second].ops.push_back(op);
    }
  }
  for (const Candidate &c : candidates)
    belowMinBytes.erase(c.target->storage);

  unsigned exposed = 0;
  if (scope != OffloadScope::attention)
    exposed = dropExposedLastBlock(graph, aliases, model, candidates);

  // Largest first while the running total fits the budget; a storage that
  // does not fit is skipped and smaller ones are still tried. Stable: equal
  // sizes keep program order, so every rank decides the same.
  double budget = budgetGiB * kBytesPerGiB;
  SmallVector<Candidate *> order;
  for (Candidate &c : candidates)
    if (!c.ops.empty() && !c.kept)
      order.push_back(&c);
  unsigned numCandidates = order.size();
  llvm::stable_sort(order, [](Candidate *a, Candidate *b) {
    return a->target->bytes > b->target->bytes;
  });
  int64_t total = 0;
  for (Candidate *c : order) {
    if (budget > 0 && static_cast<double>(total + c->target->bytes) > budget)
      continue;
    c->selected = true;
    total += c->target->bytes;
  }

  // Tag an op only when every storage it saves is selected (a multi-output
  // op with one storage over budget stays saved, with its other storages).
  llvm::DenseMap<Operation *, bool> tagOp;
  for (Candidate &c : candidates)
    for (CallFunctionOp op : c.ops) {
      auto [it, inserted] = tagOp.try_emplace(op, true);
      it->second &= c.selected;
    }
  llvm::DenseSet<const Storage *> tagged;
  MLIRContext *ctx = graph.getContext();
  auto i64 = IntegerType::get(ctx, 64);
  unsigned numOps = 0;
  for (CallFunctionOp op : graph.getBody().front().getOps<CallFunctionOp>()) {
    auto it = tagOp.find(op);
    if (it == tagOp.end() || !it->second)
      continue;
    op.setPolicyAttr(
        CheckpointPolicyAttr::get(ctx, CheckpointPolicy::must_cpu_offload));
    if (prefetchRegions > 0)
      op->setAttr(kPrefetchAttr, IntegerAttr::get(i64, prefetchRegions));
    if (deferRegions > 0)
      op->setAttr(kDeferAttr, IntegerAttr::get(i64, deferRegions));
    ++numOps;
    std::string why;
    if (auto targets = eligibility.check(op, why); succeeded(targets))
      for (const OffloadTarget *t : *targets)
        tagged.insert(t->storage);
  }
  int64_t bytes = 0;
  for (const Candidate &c : candidates)
    if (tagged.contains(c.target->storage))
      bytes += c.target->bytes;

  numTagged += numOps;
  numSelectedBytes += bytes;
  InFlightDiagnostic remark = emitRemark(graph.getLoc());
  remark << "joint-tag-cpu-offload: " << numOps
         << " op(s) tagged must_cpu_offload: selected " << tagged.size()
         << " of " << numCandidates << " activation(s) in scope=" << scopeName
         << ", " << bytes << " bytes";
  if (!belowMinBytes.empty())
    remark << "; " << belowMinBytes.size()
           << " more below min-bytes=" << static_cast<int64_t>(minBytes);
  if (!recomputeTagged.empty())
    remark << "; " << recomputeTagged.size()
           << " tagged for recompute (never offloaded)";
  if (scope == OffloadScope::attention &&
      !model.getBlockComputingAttention().empty())
    remark << "; block '" << model.getBlockComputingAttention()
           << "' computes attention itself (no attention module), so none of "
              "it is offloaded (scope=block takes it)";
  if (exposed)
    remark << "; " << exposed
           << " of the last block kept on the device (cost model: their "
              "reload cannot hide behind the backward compute before their "
              "first reader)";
  return success();
}

//===----------------------------------------------------------------------===//
// The joint-cpu-offload pipeline
//===----------------------------------------------------------------------===//

void mlir::joint::registerCpuOffloadPipeline() {
  registerDeciderPipeline(
      "joint-cpu-offload",
      "CPU offload: joint-tag-cpu-offload (decide), then "
      "joint-apply-cpu-offload (apply), with the tag pass's options (listed "
      "under joint-tag-cpu-offload)",
      createJointTagCpuOffload, {createJointApplyCpuOffload});
}

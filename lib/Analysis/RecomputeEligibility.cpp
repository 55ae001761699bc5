//===- RecomputeEligibility.cpp - What checkpointing may recompute --------===//
//
// The tagging rules of activation checkpointing, in the order of torchtitan
// graph trainer's tagging: (1) the mode policy with structural exceptions
// (RNG, SymInt, communication; transparent ops inherit their producer's),
// (2) in-place saves over the storage closure of every mutated storage, (3)
// cross-unit saves. Each step is one walk over ops or uses; policies live in
// a map, so the graph is never written.
//
//===----------------------------------------------------------------------===//

#include "joint/Analysis/RecomputeEligibility.h"
#include "joint/Analysis/CheckpointScope.h"
#include "joint/Dialect/Joint/IR/OpSets.h"

using namespace mlir;
using namespace mlir::joint;

static bool isRecompute(std::optional<CheckpointPolicy> p) {
  return p && (*p == CheckpointPolicy::must_recompute ||
               *p == CheckpointPolicy::prefer_recompute);
}

/// A forward joint.call_function user, or null.
static CallFunctionOp forwardAtenUser(Operation *user) {
  auto aten = dyn_cast<CallFunctionOp>(user);
  return aten && aten.isForward() ? aten : CallFunctionOp();
}

/// The producer whose policy a transparent op inherits (its operand 0).
static CallFunctionOp transparentProducer(CallFunctionOp op) {
  if (op->getNumOperands() == 0)
    return CallFunctionOp();
  return op->getOperand(0).getDefiningOp<CallFunctionOp>();
}

namespace mlir {
namespace joint {

/// The rules, run once over one graph into a RecomputeEligibility.
class RecomputeRules {
public:
  RecomputeRules(GraphOp graph, const StorageAliasAnalysis &aliases,
                 const CheckpointOptions &options, RecomputeEligibility &out)
      : graph(graph), aliases(aliases), mutations(aliases), options(options),
        out(out) {}

  LogicalResult run(RecomputeEligibility::ExistingPolicies existing);

private:
  std::optional<CheckpointPolicy> policyOf(Operation *op) const {
    return op ? out.getPolicy(op) : std::nullopt;
  }
  bool isRecomputeOp(Operation *op) const { return isRecompute(policyOf(op)); }
  void setPolicy(Operation *op, CheckpointPolicy policy) {
    out.policies[op] = policy;
  }
  /// Saved in every mode: RNG (unless replay-random), SymInt-valued,
  /// communication (and forward all-gathers with save-forward-all-gather).
  bool isStructurallySaved(CallFunctionOp op) const;
  CheckpointPolicy modePolicy(CallFunctionOp op) const;
  void tagPolicies(CheckpointScope &scope);
  void tagInPlaceSaves();
  void tagCrossUnitSaves(CheckpointScope &scope);
  void propagateTransparentSaves();

  GraphOp graph;
  const StorageAliasAnalysis &aliases;
  MutationFacts mutations;
  const CheckpointOptions &options;
  RecomputeEligibility &out;
};

} // namespace joint
} // namespace mlir

bool RecomputeRules::isStructurallySaved(CallFunctionOp op) const {
  if (!options.replayRandom && aliases.getSchemaTable().isRandom(op))
    return true;
  StringRef target = op.getTarget();
  if (isInOpSet(OpSet::Communication, target) ||
      (options.saveForwardAllGather &&
       isInOpSet(OpSet::ForwardAllGather, target)))
    return true;
  // SymInt/SymBool scalars: backward reads them as sizes; keep them.
  return llvm::any_of(op->getResultTypes(),
                      [](Type t) { return !isa<RankedTensorType>(t); });
}

CheckpointPolicy RecomputeRules::modePolicy(CallFunctionOp op) const {
  if (options.mode == CheckpointMode::full)
    return CheckpointPolicy::must_recompute;
  StringRef target = op.getTarget();
  if (isInOpSet(OpSet::ForceRecompute, target))
    return CheckpointPolicy::must_recompute;
  if (isInOpSet(OpSet::ComputeIntensive, target))
    return CheckpointPolicy::must_save;
  return CheckpointPolicy::prefer_recompute;
}

void RecomputeRules::tagPolicies(CheckpointScope &scope) {
  for (CallFunctionOp op : out.forwardOps) {
    if (isInOpSet(OpSet::Transparent, op.getTarget())) {
      if (CallFunctionOp producer = transparentProducer(op))
        if (auto p = policyOf(producer))
          setPolicy(op, *p);
      continue;
    }
    if (scope.isEligible(op)) {
      setPolicy(op, isStructurallySaved(op) ? CheckpointPolicy::must_save
                                            : modePolicy(op));
      continue;
    }
    // Out of scope: never tagged, but a recompute policy the graph already
    // carries obeys the same structural exceptions.
    if (isRecomputeOp(op) && isStructurallySaved(op))
      setPolicy(op, CheckpointPolicy::must_save);
  }
}

void RecomputeRules::tagInPlaceSaves() {
  auto save = [&](CallFunctionOp op) {
    if (op && isRecomputeOp(op))
      setPolicy(op, CheckpointPolicy::must_save);
  };
  // Forward writers (tagged ones) and their forward consumers.
  for (CallFunctionOp op : out.forwardOps) {
    if (!mutations.isWriter(op) || !policyOf(op))
      continue;
    setPolicy(op, CheckpointPolicy::must_save);
    for (Operation *user : op->getUsers())
      if (CallFunctionOp u = forwardAtenUser(user); u && policyOf(u))
        setPolicy(u, CheckpointPolicy::must_save);
  }
  // Every producer and forward reader of a written storage. A storage is the
  // undirected closure of schema aliases and tracer storage identity (views,
  // multi-output views, in-place results), so a write through one view
  // reaches the base and its sibling views; writers in any phase and outside
  // the scope count.
  for (const Storage *s : aliases.getStorages()) {
    if (!s->isWritten())
      continue;
    for (Value member : s->members) {
      if (auto def = member.getDefiningOp<CallFunctionOp>();
          def && def.isForward())
        save(def);
      for (Operation *user : member.getUsers())
        save(forwardAtenUser(user));
    }
  }
}

void RecomputeRules::tagCrossUnitSaves(CheckpointScope &scope) {
  scope.assignUnits(graph);
  SmallVector<Operation *> stack;
  for (CallFunctionOp op : out.forwardOps) {
    auto policy = policyOf(op);
    if (!isRecompute(policy))
      continue;
    unsigned unit = scope.getUnit(op);
    bool crosses = false;
    stack.assign({op.getOperation()});
    // Walk through transparent users that share the policy (their chains
    // are one value); the DAG below one op is tiny, so no visited set.
    while (!stack.empty() && !crosses) {
      Operation *current = stack.pop_back_val();
      for (Operation *user : current->getUsers()) {
        CallFunctionOp u = forwardAtenUser(user);
        if (!u)
          continue; // backward, joint.output, ao ops
        if (isInOpSet(OpSet::Transparent, u.getTarget()) &&
            policyOf(u) == policy) {
          stack.push_back(u);
          continue;
        }
        if (scope.getUnit(u) != unit) {
          crosses = true;
          break;
        }
      }
    }
    if (crosses)
      setPolicy(op, CheckpointPolicy::must_save);
  }
}

void RecomputeRules::propagateTransparentSaves() {
  // A transparent op must not replay in backward what its producer saved.
  for (CallFunctionOp op : out.forwardOps)
    if (isInOpSet(OpSet::Transparent, op.getTarget()) && isRecomputeOp(op))
      if (CallFunctionOp producer = transparentProducer(op))
        if (policyOf(producer) == CheckpointPolicy::must_save)
          setPolicy(op, CheckpointPolicy::must_save);
}

LogicalResult
RecomputeRules::run(RecomputeEligibility::ExistingPolicies existing) {
  for (CallFunctionOp op : graph.getBody().front().getOps<CallFunctionOp>()) {
    if (op.isForward())
      out.forwardOps.push_back(op);
    if (existing == RecomputeEligibility::ExistingPolicies::Honour)
      if (std::optional<CheckpointPolicy> p = op.getPolicy())
        out.policies[op] = *p;
  }
  TagSummary &summary = out.summary;
  if (options.mode == CheckpointMode::off)
    return success();

  FailureOr<CheckpointScope> scope = CheckpointScope::resolve(graph, options);
  if (failed(scope))
    return failure();
  summary.numBlocks = scope->getBlocks().size();
  summary.numSelectedBlocks = scope->getNumSelected();

  // A must_recompute the graph already carries (torch selective
  // checkpointing) is a request we cannot honour on RNG or in-place ops.
  for (CallFunctionOp op : out.forwardOps)
    if (policyOf(op) == CheckpointPolicy::must_recompute &&
        failed(verifyRecomputable(op, "a must_recompute request", mutations,
                                  options.replayRandom)))
      return failure();

  if (!scope->isEmpty()) {
    tagPolicies(*scope);
    tagInPlaceSaves();
    tagCrossUnitSaves(*scope);
    propagateTransparentSaves();
  }
  for (CallFunctionOp op : out.forwardOps) {
    if (scope->isEligible(op))
      summary.scopeMatched = true;
    switch (policyOf(op).value_or(CheckpointPolicy::prefer_save)) {
    case CheckpointPolicy::must_save:
      ++summary.numMustSave;
      break;
    case CheckpointPolicy::must_recompute:
      ++summary.numMustRecompute;
      break;
    case CheckpointPolicy::prefer_recompute:
      ++summary.numPreferRecompute;
      break;
    default:
      break;
    }
  }
  return success();
}

FailureOr<RecomputeEligibility> RecomputeEligibility::compute(
    GraphOp graph, const StorageAliasAnalysis &aliases,
    const CheckpointOptions &options, ExistingPolicies existing) {
  RecomputeEligibility result;
  if (failed(RecomputeRules(graph, aliases, options, result).run(existing)))
    return failure();
  return result;
}

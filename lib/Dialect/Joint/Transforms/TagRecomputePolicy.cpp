//===- TagRecomputePolicy.cpp - Decide save/recompute per forward op ------===//
//
// joint-tag-recompute-policy: writes `policy` on forward joint.ops, in the
// order of torchtitan graph trainer's tagging: (1) the mode policy with
// structural exceptions (RNG, SymInt, communication, transparent ops inherit),
// (2) in-place saves over the storage closure of every mutated storage, (3)
// cross-unit saves. Each step is one walk over ops or uses.
//
//===----------------------------------------------------------------------===//

#include "CheckpointScope.h"
#include "joint/Dialect/Joint/IR/OpSets.h"
#include "joint/Dialect/Joint/Transforms/Passes.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTTAGRECOMPUTEPOLICY
#include "joint/Dialect/Joint/Transforms/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

StringRef mlir::joint::stringifyCheckpointMode(CheckpointMode mode) {
  // In CheckpointMode's order.
  static constexpr llvm::StringLiteral kNames[] = {"off", "full", "selective"};
  return kNames[static_cast<size_t>(mode)];
}

static bool isRecompute(std::optional<CheckpointPolicy> p) {
  return p && (*p == CheckpointPolicy::must_recompute ||
               *p == CheckpointPolicy::prefer_recompute);
}

static bool isRecompute(CallFunctionOp op) {
  return isRecompute(op.getPolicy());
}

static void setPolicy(CallFunctionOp op, CheckpointPolicy policy) {
  op.setPolicyAttr(CheckpointPolicyAttr::get(op.getContext(), policy));
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

namespace {

class Tagger {
public:
  Tagger(GraphOp graph, const StorageAliasAnalysis &aliases,
         const CheckpointOptions &options)
      : graph(graph), aliases(aliases), mutations(aliases), options(options) {}

  FailureOr<TagSummary> run();

private:
  /// Saved in every mode: RNG, SymInt-valued, communication (and forward
  /// all-gathers with save-forward-all-gather).
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
  SmallVector<CallFunctionOp> forwardOps;
};

} // namespace

bool Tagger::isStructurallySaved(CallFunctionOp op) const {
  if (aliases.getOperatorTable().isRandom(op))
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

CheckpointPolicy Tagger::modePolicy(CallFunctionOp op) const {
  if (options.mode == CheckpointMode::full)
    return CheckpointPolicy::must_recompute;
  StringRef target = op.getTarget();
  if (isInOpSet(OpSet::ForceRecompute, target))
    return CheckpointPolicy::must_recompute;
  if (isInOpSet(OpSet::ComputeIntensive, target))
    return CheckpointPolicy::must_save;
  return CheckpointPolicy::prefer_recompute;
}

void Tagger::tagPolicies(CheckpointScope &scope) {
  for (CallFunctionOp op : forwardOps) {
    if (isInOpSet(OpSet::Transparent, op.getTarget())) {
      if (CallFunctionOp producer = transparentProducer(op))
        if (auto p = producer.getPolicy())
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
    if (isRecompute(op) && isStructurallySaved(op))
      setPolicy(op, CheckpointPolicy::must_save);
  }
}

void Tagger::tagInPlaceSaves() {
  auto save = [](CallFunctionOp op) {
    if (op && isRecompute(op))
      setPolicy(op, CheckpointPolicy::must_save);
  };
  // Forward writers (tagged ones) and their forward consumers.
  for (CallFunctionOp op : forwardOps) {
    if (!mutations.isWriter(op) || !op.getPolicy())
      continue;
    setPolicy(op, CheckpointPolicy::must_save);
    for (Operation *user : op->getUsers())
      if (CallFunctionOp u = forwardAtenUser(user); u && u.getPolicy())
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

void Tagger::tagCrossUnitSaves(CheckpointScope &scope) {
  scope.assignUnits(graph);
  SmallVector<Operation *> stack;
  for (CallFunctionOp op : forwardOps) {
    auto policy = op.getPolicy();
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
            u.getPolicy() == policy) {
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

void Tagger::propagateTransparentSaves() {
  // A transparent op must not replay in backward what its producer saved.
  for (CallFunctionOp op : forwardOps)
    if (isInOpSet(OpSet::Transparent, op.getTarget()) && isRecompute(op))
      if (CallFunctionOp producer = transparentProducer(op))
        if (producer.getPolicy() == CheckpointPolicy::must_save)
          setPolicy(op, CheckpointPolicy::must_save);
}

FailureOr<TagSummary> Tagger::run() {
  TagSummary summary;
  if (options.mode == CheckpointMode::off)
    return summary;
  for (CallFunctionOp op : graph.getBody().front().getOps<CallFunctionOp>())
    if (op.isForward())
      forwardOps.push_back(op);

  FailureOr<CheckpointScope> scope = CheckpointScope::resolve(graph, options);
  if (failed(scope))
    return failure();
  summary.numBlocks = scope->getBlocks().size();
  summary.numSelectedBlocks = scope->getNumSelected();

  // A must_recompute the graph already carries (torch selective
  // checkpointing) is a request we cannot honour on RNG or in-place ops.
  for (CallFunctionOp op : forwardOps)
    if (op.getPolicy() == CheckpointPolicy::must_recompute &&
        failed(verifyRecomputable(op, "a must_recompute request", mutations)))
      return failure();

  if (!scope->isEmpty()) {
    tagPolicies(*scope);
    tagInPlaceSaves();
    tagCrossUnitSaves(*scope);
    propagateTransparentSaves();
  }
  for (CallFunctionOp op : forwardOps) {
    if (scope->isEligible(op))
      summary.scopeMatched = true;
    switch (op.getPolicy().value_or(CheckpointPolicy::prefer_save)) {
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
  return summary;
}

FailureOr<TagSummary>
mlir::joint::tagRecomputePolicy(GraphOp graph,
                                const StorageAliasAnalysis &aliases,
                                const CheckpointOptions &options) {
  return Tagger(graph, aliases, options).run();
}

CheckpointOptions mlir::joint::makeCheckpointOptions(
    CheckpointMode mode, int64_t layerCount, bool layerCountGiven,
    ArrayRef<int64_t> layerIndices, ArrayRef<std::string> regionPatterns,
    ArrayRef<std::string> excludePatterns, bool saveForwardAllGather) {
  CheckpointOptions options;
  options.mode = mode;
  if (layerCountGiven || layerCount != -1)
    options.layerCount = layerCount;
  options.layerIndices.assign(layerIndices.begin(), layerIndices.end());
  options.regionPatterns.assign(regionPatterns.begin(), regionPatterns.end());
  options.excludePatterns.assign(excludePatterns.begin(),
                                 excludePatterns.end());
  options.saveForwardAllGather = saveForwardAllGather;
  return options;
}

std::string mlir::joint::describeTagSummary(const CheckpointOptions &options,
                                            const TagSummary &summary) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "mode=" << stringifyCheckpointMode(options.mode) << ", "
     << summary.numSelectedBlocks << " of " << summary.numBlocks
     << " blocks selected; must_save " << summary.numMustSave
     << ", must_recompute " << summary.numMustRecompute << ", prefer_recompute "
     << summary.numPreferRecompute;
  return text;
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

struct TagRecomputePolicyPass
    : joint::impl::JointTagRecomputePolicyBase<TagRecomputePolicyPass> {
  using Base::Base;

  void runOnOperation() override {
    CheckpointOptions options = makeCheckpointOptions(
        mode, layerCount, layerCount.hasValue(), layerIndices, regionPatterns,
        excludePatterns, saveForwardAllGather);
    if (options.mode == CheckpointMode::off)
      return markAllAnalysesPreserved();
    GraphOp graph = getOperation();
    StorageAliasAnalysis &aliases = getAnalysis<StorageAliasAnalysis>();
    FailureOr<TagSummary> summary = tagRecomputePolicy(graph, aliases, options);
    if (failed(summary))
      return signalPassFailure();
    numMustSave = summary->numMustSave;
    numMustRecompute = summary->numMustRecompute;
    numPreferRecompute = summary->numPreferRecompute;
    if (summary->numSelectedBlocks == 0)
      emitRemark(graph.getLoc())
          << "activation checkpointing: the layer selection matched zero of "
          << summary->numBlocks << " blocks; nothing is tagged";
    else
      emitRemark(graph.getLoc()) << "joint-tag-recompute-policy: "
                                 << describeTagSummary(options, *summary);
    // Only policy tags changed, and no analysis reads them: remat reuses the
    // alias analysis, and MLIR does not re-verify unchanged ops and types.
    markAllAnalysesPreserved();
  }
};

} // namespace

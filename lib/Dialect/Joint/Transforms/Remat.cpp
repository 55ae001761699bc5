//===- Remat.cpp - Clone tagged forward ops into the backward -------------===//
//
// joint-remat, the applier of recompute decisions: every forward op tagged
// must/prefer_recompute that the backward reads, directly or through other
// tagged ops, is cloned right before its earliest backward consumer (one
// clone per forward op, so a block traversed twice gets one chain per
// traversal). The decision is the `policy` attribute; application is one
// rewrite pattern rooted at a backward op that reads a recomputable
// producer, driven in program order by walkAndApplyPatterns: the first
// backward reader met is the earliest consumer, so the pattern clones the
// not yet cloned tagged producers it needs (in forward order) before it and
// redirects every backward reader of them. Originals left without users are
// erased afterwards. O(#ops + #uses).
//
// Composition with joint-cpu-offload (tag -> offload -> remat, as in torch's
// graph trainer): a clone reading an offloaded forward value reads the wait
// of its reload instead; the wait is moved before the clone when it comes
// later, the reload only when it does too (a prefetched reload keeps its
// place); a clone reading a forward view of an offloaded storage reads the
// view replayed on the reload. Before cloning, backward size queries of forward
// tensors are made to read the forward SymInt, and after it backward views of a
// clone follow the clone's storage id.
//
//===----------------------------------------------------------------------===//

#include "StatePattern.h"
#include "joint/Analysis/CheckpointScope.h"
#include "joint/Dialect/Joint/IR/OpSets.h"
#include "joint/Dialect/Joint/IR/TensorMeta.h"
#include "joint/Dialect/Joint/Transforms/Passes.h"
#include "joint/Support/Namespace.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTREADFORWARDSIZES
#define GEN_PASS_DEF_JOINTREMAT
#include "joint/Dialect/Joint/Transforms/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

namespace {

/// The reload chain of one offloaded forward value.
struct ReloadChain {
  ao::ReloadOp reload;
  ao::WaitTensorOp wait;
};

} // namespace

/// The state the remat pattern shares: names in use, reload chains, clones
/// made so far and the storage ids given to recomputed allocations.
class mlir::joint::RematState {
public:
  RematState(GraphOp graph, const StorageAliasAnalysis &aliases)
      : graph(graph), body(graph.getBody().front()), aliases(aliases),
        mutations(aliases) {}

  FailureOr<RematSummary> run();

  /// Clones the tagged producers `user` needs before it and redirects their
  /// backward readers; failure when `user` reads no uncloned tagged producer.
  LogicalResult recomputeFor(CallFunctionOp user, PatternRewriter &rewriter);

private:
  void collectReloadChains();
  int64_t maxStorageId();
  std::string uniqueName(StringRef base);
  /// The value a clone placed before `target` reads for forward value `v`.
  FailureOr<Value> operandForClone(Value v, Operation *target,
                                   RewriterBase &rewriter);
  /// A forward view of an offloaded base, replayed (once) before `target`
  /// on the base's reload, since the forward wait freed the forward view's
  /// storage; `v` itself when it is no such view.
  FailureOr<Value> replayViewOfOffloaded(Value v, Operation *target,
                                         RewriterBase &rewriter);
  void finishClone(CallFunctionOp original, CallFunctionOp clone);

  GraphOp graph;
  Block &body;
  const StorageAliasAnalysis &aliases;
  MutationFacts mutations;
  RematSummary summary;
  Namespace names{graph.getContext()};
  llvm::DenseMap<Value, ReloadChain> reloads;
  /// Tagged forward ops some backward op reads (verified recomputable).
  llvm::DenseSet<Operation *> recomputable;
  /// Original tagged op -> its clone.
  llvm::DenseMap<Operation *, CallFunctionOp> cloneOf;
  llvm::DenseSet<Operation *> clones;
  /// Storage id of a recomputed allocation -> the clones' fresh id.
  llvm::DenseMap<int64_t, int64_t> storageRemap;
  /// Forward views of offloaded storages replayed on the reload, and the
  /// fresh storage id of each such storage's replays.
  llvm::DenseMap<Value, Value> replayedViews;
  llvm::DenseMap<const Storage *, int64_t> offloadedStorageRemap;
  int64_t nextStorage = 0;
  /// First failure inside the pattern (a diagnostic was emitted).
  bool failedInPattern = false;
};

namespace {
/// Root: a backward op reading a recomputable forward producer.
using RecomputeForBackwardUse =
    StatePattern<CallFunctionOp, RematState, &RematState::recomputeFor>;
} // namespace

static bool isRecompute(CallFunctionOp op) {
  auto p = op.getPolicy();
  return p && (*p == CheckpointPolicy::must_recompute ||
               *p == CheckpointPolicy::prefer_recompute);
}

/// The one tensor a size query reads, or null when `op` is not a query of a
/// single tensor returning only non-tensors.
static Value queriedTensor(CallFunctionOp op, OpSetCache &opSets) {
  if (!opSets.contains(OpSet::SizeQuery, op.getTargetAttr()) ||
      op->getNumOperands() == 0)
    return Value();
  Value t = op->getOperand(0);
  if (!isa<RankedTensorType>(t.getType()) ||
      llvm::any_of(op->getOperands(), [&](Value v) { return v != t; }) ||
      llvm::any_of(op->getResultTypes(), llvm::IsaPred<TensorType>))
    return Value();
  return t;
}

unsigned mlir::joint::readForwardSizes(GraphOp graph) {
  Block &body = graph.getBody().front();
  using Key = std::tuple<Value, Attribute, Attribute, Attribute>;
  auto keyOf = [](CallFunctionOp q, Value t) -> Key {
    return {t, q.getTargetAttr(), q.getArgsAttr(), q.getKwargsAttr()};
  };
  llvm::DenseMap<Key, CallFunctionOp> forwardQueries;
  llvm::DenseMap<Operation *, Operation *> lastHoisted;
  IRRewriter rewriter(graph.getContext());
  OpSetCache opSets;
  unsigned moved = 0;
  for (CallFunctionOp q :
       llvm::make_early_inc_range(body.getOps<CallFunctionOp>())) {
    Value t = queriedTensor(q, opSets);
    if (!t)
      continue;
    if (q.isForward()) {
      forwardQueries.try_emplace(keyOf(q, t), q);
      continue;
    }
    auto producer = t.getDefiningOp<CallFunctionOp>();
    if (!producer || !producer.isForward())
      continue;
    if (CallFunctionOp known = forwardQueries.lookup(keyOf(q, t))) {
      rewriter.replaceOp(q, known->getResults());
      continue;
    }
    // After the producer and the queries already moved there, in order.
    Operation *&anchor = lastHoisted[producer];
    rewriter.moveOpAfter(q, anchor ? anchor : producer.getOperation());
    anchor = q;
    rewriter.modifyOpInPlace(q, [&] { q.setPhase(Phase::forward); });
    forwardQueries.try_emplace(keyOf(q, t), q);
    ++moved;
  }
  return moved;
}

std::string RematState::uniqueName(StringRef base) {
  return names.newName(base + "_recomputed");
}

void RematState::collectReloadChains() {
  for (auto offload : body.getOps<ao::OffloadOp>()) {
    for (Operation *w : offload->getUsers()) {
      auto forwardWait = dyn_cast<ao::WaitTensorOp>(w);
      if (!forwardWait)
        continue;
      for (Operation *r : forwardWait->getUsers()) {
        auto reload = dyn_cast<ao::ReloadOp>(r);
        if (!reload || !reload->hasOneUse())
          continue;
        auto wait = dyn_cast<ao::WaitTensorOp>(*reload->user_begin());
        if (!wait)
          continue;
        auto [it, inserted] =
            reloads.try_emplace(offload.getInput(), ReloadChain{reload, wait});
        // Several reloads of one offload: use the earliest.
        if (!inserted && reload->isBeforeInBlock(it->second.reload))
          it->second = ReloadChain{reload, wait};
      }
    }
  }
}

int64_t RematState::maxStorageId() {
  int64_t maxId = -1;
  for (BlockArgument arg : body.getArguments())
    if (TensorMetaAttr m = getTensorMeta(arg))
      maxId = std::max(maxId, m.getStorage());
  for (CallFunctionOp op : body.getOps<CallFunctionOp>())
    if (ArrayAttr metas = op.getResultMetaAttr())
      for (Attribute m : metas)
        if (auto t = dyn_cast<TensorMetaAttr>(m))
          maxId = std::max(maxId, t.getStorage());
  return maxId;
}

FailureOr<Value> RematState::operandForClone(Value v, Operation *target,
                                             RewriterBase &rewriter) {
  if (Operation *def = v.getDefiningOp())
    if (CallFunctionOp clone = cloneOf.lookup(def))
      return clone->getResult(cast<OpResult>(v).getResultNumber());
  auto it = reloads.find(v);
  if (it == reloads.end())
    return replayViewOfOffloaded(v, target, rewriter);
  ReloadChain &chain = it->second;
  if (chain.wait->isBeforeInBlock(target))
    return chain.wait.getResult();
  // Only what comes after the clone moves: a reload that offload already
  // issued earlier (prefetch) keeps its place, and just its wait moves.
  if (!chain.reload->isBeforeInBlock(target)) {
    Operation *forwardWait = chain.reload.getInput().getDefiningOp();
    if (!forwardWait || target->isBeforeInBlock(forwardWait))
      return target->emitOpError()
             << "needs the reload of an offloaded value before it, but the "
                "offload's forward wait comes later";
    rewriter.moveOpBefore(chain.reload, target);
    ++summary.numReloadsMoved;
  }
  rewriter.moveOpBefore(chain.wait, target);
  return chain.wait.getResult();
}

FailureOr<Value> RematState::replayViewOfOffloaded(Value v, Operation *target,
                                                   RewriterBase &rewriter) {
  if (Value done = replayedViews.lookup(v))
    return done;
  auto def = v.getDefiningOp<CallFunctionOp>();
  const Storage *s = aliases.lookup(v);
  if (!def || !def.isForward() || !s || s->owner == v ||
      !reloads.count(s->owner) || !aliases.isView(def))
    return v;
  Value parent = aliases.getOperandIn(def, s);
  if (!parent)
    return v;
  FailureOr<Value> reloaded = operandForClone(parent, target, rewriter);
  if (failed(reloaded) || *reloaded == parent)
    return reloaded;
  IRMapping mapping;
  mapping.map(parent, *reloaded);
  rewriter.setInsertionPoint(target);
  auto replay = cast<CallFunctionOp>(rewriter.clone(*def, mapping));
  MLIRContext *ctx = replay.getContext();
  auto [idIt, inserted] = offloadedStorageRemap.try_emplace(s, 0);
  if (inserted)
    idIt->second = nextStorage++;
  int64_t newId = idIt->second;
  rewriter.modifyOpInPlace(replay, [&] {
    replay.setPhaseAttr(PhaseAttr::get(ctx, Phase::backward));
    replay.removePolicyAttr();
    replay.setNameAttr(
        StringAttr::get(ctx, names.newName(def.getName() + "_reload")));
    if (ArrayAttr rn = def.getResultNamesAttr()) {
      SmallVector<Attribute> fresh;
      for (Attribute n : rn)
        fresh.push_back(StringAttr::get(
            ctx, names.newName(cast<StringAttr>(n).getValue() + "_reload")));
      replay.setResultNamesAttr(ArrayAttr::get(ctx, fresh));
    }
    if (ArrayAttr metas = def.getResultMetaAttr()) {
      SmallVector<Attribute> fresh(metas.begin(), metas.end());
      for (Attribute &m : fresh)
        if (auto t = dyn_cast<TensorMetaAttr>(m); t && t.getStorage() == s->id)
          m = TensorMetaAttr::get(ctx, t.getSizes(), t.getStrides(),
                                  t.getOffset(), t.getDevice(), newId);
      replay.setResultMetaAttr(ArrayAttr::get(ctx, fresh));
    }
  });
  Value result = replay->getResult(cast<OpResult>(v).getResultNumber());
  replayedViews[v] = result;
  return result;
}

void RematState::finishClone(CallFunctionOp original, CallFunctionOp clone) {
  MLIRContext *ctx = clone.getContext();
  clone.setPhaseAttr(PhaseAttr::get(ctx, Phase::backward));
  clone.setRecomputedFromAttr(original.getNameAttr());
  clone.removePolicyAttr();
  clone.setNameAttr(StringAttr::get(ctx, uniqueName(original.getName())));
  if (ArrayAttr rn = original.getResultNamesAttr()) {
    SmallVector<Attribute> fresh;
    for (Attribute n : rn) {
      StringRef s = cast<StringAttr>(n).getValue();
      fresh.push_back(StringAttr::get(ctx, s.empty() ? "" : uniqueName(s)));
    }
    clone.setResultNamesAttr(ArrayAttr::get(ctx, fresh));
  }
  // A clone of an allocating op owns a new allocation; views of a saved
  // tensor keep its storage.
  if (ArrayAttr metas = original.getResultMetaAttr()) {
    SmallVector<Attribute> fresh(metas.begin(), metas.end());
    bool changed = false;
    for (auto [i, m] : llvm::enumerate(fresh)) {
      auto t = dyn_cast<TensorMetaAttr>(m);
      if (!t || i >= original->getNumResults())
        continue;
      const Storage *s = aliases.lookup(original->getResult(i));
      Operation *owner = s ? s->owner.getDefiningOp() : nullptr;
      if (!owner || !cloneOf.count(owner))
        continue;
      auto [it, inserted] = storageRemap.try_emplace(t.getStorage(), 0);
      if (inserted)
        it->second = nextStorage++;
      m = TensorMetaAttr::get(ctx, t.getSizes(), t.getStrides(), t.getOffset(),
                              t.getDevice(), it->second);
      changed = true;
    }
    if (changed)
      clone.setResultMetaAttr(ArrayAttr::get(ctx, fresh));
  }
}

LogicalResult RematState::recomputeFor(CallFunctionOp user,
                                       PatternRewriter &rewriter) {
  if (failedInPattern || !user.isBackward() || clones.contains(user))
    return failure();
  // The uncloned tagged producers `user` reads, directly or through other
  // tagged forward ops: `user` is their earliest backward consumer.
  SmallVector<CallFunctionOp> needed;
  llvm::DenseSet<Operation *> seen;
  SmallVector<Value> worklist(user->getOperands());
  while (!worklist.empty()) {
    auto producer = worklist.pop_back_val().getDefiningOp<CallFunctionOp>();
    if (!producer || !recomputable.contains(producer) ||
        cloneOf.count(producer) || !seen.insert(producer).second)
      continue;
    needed.push_back(producer);
    llvm::append_range(worklist, producer->getOperands());
  }
  if (needed.empty())
    return failure();
  llvm::sort(needed, [](CallFunctionOp a, CallFunctionOp b) {
    return a->isBeforeInBlock(b);
  });

  for (CallFunctionOp op : needed) {
    IRMapping mapping;
    for (Value v : op->getOperands()) {
      FailureOr<Value> mapped = operandForClone(v, user, rewriter);
      if (failed(mapped)) {
        failedInPattern = true;
        return failure();
      }
      if (*mapped != v)
        mapping.map(v, *mapped);
    }
    rewriter.setInsertionPoint(user);
    auto clone = cast<CallFunctionOp>(rewriter.clone(*op, mapping));
    cloneOf[op] = clone;
    clones.insert(clone);
    rewriter.modifyOpInPlace(clone, [&] { finishClone(op, clone); });
    ++summary.numClones;
  }
  // Backward consumers read the clones; their views of a clone live in the
  // clone's allocation, not in the forward one.
  for (CallFunctionOp op : needed) {
    CallFunctionOp clone = cloneOf.lookup(op);
    for (OpResult r : op->getResults()) {
      Value c = clone->getResult(r.getResultNumber());
      rewriter.replaceUsesWithIf(r, c, [&](OpOperand &use) {
        auto reader = dyn_cast<CallFunctionOp>(use.getOwner());
        return reader && reader.isBackward() && !clones.contains(reader);
      });
      if (std::optional<int64_t> oldId = getStorageId(r))
        followStorage(c, *oldId);
    }
  }
  return success();
}

FailureOr<RematSummary> RematState::run() {
  summary.numSizeQueriesHoisted = readForwardSizes(graph);
  SmallVector<CallFunctionOp> forwardOps;
  for (CallFunctionOp op : body.getOps<CallFunctionOp>()) {
    if (op.isForward())
      forwardOps.push_back(op);
    if (op.getRecomputedFromAttr())
      summary.alreadyRematerialized = true;
  }

  // Tagged ops the backward reads, directly or through tagged forward
  // users: one reverse walk. Verified before any rewrite, so a bad tag
  // changes nothing.
  for (CallFunctionOp op : llvm::reverse(forwardOps)) {
    if (!isRecompute(op))
      continue;
    ++summary.numTagged;
    bool read = llvm::any_of(op->getUsers(), [&](Operation *user) {
      auto u = dyn_cast<CallFunctionOp>(user);
      return u && (u.isBackward() || recomputable.contains(u));
    });
    if (read)
      recomputable.insert(op);
  }
  if (recomputable.empty())
    return summary;
  for (CallFunctionOp op : forwardOps)
    if (recomputable.contains(op) &&
        failed(verifyRecomputable(op, "a recompute policy", mutations)))
      return failure();

  names.addGraph(graph);
  collectReloadChains();
  nextStorage = maxStorageId() + 1;

  RewritePatternSet patterns(graph.getContext());
  populateRematerializationPatterns(patterns, *this);
  walkAndApplyPatterns(graph, std::move(patterns));
  if (failedInPattern)
    return failure();

  // Originals no forward code reads any more.
  IRRewriter rewriter(graph.getContext());
  for (CallFunctionOp op : llvm::reverse(forwardOps))
    if (cloneOf.count(op) && op->use_empty()) {
      rewriter.eraseOp(op);
      ++summary.numErased;
    }
  return summary;
}

void mlir::joint::populateRematerializationPatterns(RewritePatternSet &patterns,
                                                    RematState &state) {
  patterns.add<RecomputeForBackwardUse>(patterns.getContext(), state);
}

FailureOr<RematSummary>
mlir::joint::rematerialize(GraphOp graph, const StorageAliasAnalysis &aliases) {
  return RematState(graph, aliases).run();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

struct ReadForwardSizesPass
    : joint::impl::JointReadForwardSizesBase<ReadForwardSizesPass> {
  using Base::Base;

  void runOnOperation() override {
    if (!readForwardSizes(getOperation()))
      markAllAnalysesPreserved();
  }
};

struct RematPass : joint::impl::JointRematBase<RematPass> {
  using Base::Base;

  void runOnOperation() override {
    GraphOp graph = getOperation();
    StorageAliasAnalysis &aliases = getAnalysis<StorageAliasAnalysis>();
    FailureOr<RematSummary> summary = rematerialize(graph, aliases);
    if (failed(summary))
      return signalPassFailure();
    numClones = summary->numClones;
    numErased = summary->numErased;
    numReloadsMoved = summary->numReloadsMoved;
    if (summary->numTagged && !summary->numClones &&
        !summary->alreadyRematerialized)
      emitWarning(graph.getLoc())
          << "joint-remat: " << summary->numTagged
          << " forward ops are tagged for recompute but the backward reads "
             "none of them; nothing was recomputed (the graph may already "
             "contain eager activation checkpointing)";
    emitRemark(graph.getLoc())
        << "joint-remat: " << summary->numClones << " ops recomputed, "
        << summary->numErased << " originals erased, "
        << summary->numReloadsMoved << " reload chains moved";
    if (!summary->numClones && !summary->numSizeQueriesHoisted)
      markAllAnalysesPreserved();
  }
};

} // namespace

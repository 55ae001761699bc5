//===- Remat.cpp - Clone tagged forward ops into the backward -------------===//
//
// joint-remat, the applier of recompute decisions: every forward op tagged
// must/prefer_recompute that the backward reads, directly or through other
// tagged ops, is cloned right before its earliest backward consumer (one
// clone per forward op, so a block traversed twice gets one chain per
// traversal). The decision is the `policy` attribute. First a plan is built
// on the unchanged graph (RematPlan): which backward op is the earliest
// consumer of which tagged producers, and every check that can fail, so an
// error names the node and changes nothing. Then one pattern, rooted at
// those backward ops and holding the plan read-only, clones the producers
// (forward order) before its root and redirects their backward readers,
// driven in program order by walkAndApplyPatterns. Originals left without
// users are erased afterwards. O(#ops + #uses).
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

/// What joint-remat does, decided on the graph before any rewrite.
struct mlir::joint::RematPlan {
  /// Backward op -> the tagged producers it is the earliest backward reader
  /// of (directly or through other tagged ops), in forward order.
  llvm::DenseMap<Operation *, SmallVector<CallFunctionOp>> cloneBefore;
  /// Every producer cloned, in forward order.
  SmallVector<CallFunctionOp> recomputed;
  /// Offloaded forward value -> its earliest reload chain.
  llvm::DenseMap<Value, ReloadChain> reloads;
};

/// What applying the plan has made so far: the clones and view replays later
/// roots read, fresh names and fresh storage ids.
struct mlir::joint::RematClones {
  RematClones(GraphOp graph, int64_t firstFreshStorage)
      : names(graph.getContext()), nextStorage(firstFreshStorage) {
    names.addGraph(graph);
  }

  Namespace names;
  /// Original tagged op -> its clone.
  llvm::DenseMap<Operation *, CallFunctionOp> cloneOf;
  /// Forward views of offloaded storages replayed on the reload.
  llvm::DenseMap<Value, Value> replayedViews;
  /// Storage id of a recomputed allocation -> the clones' fresh id, and the
  /// fresh id of each offloaded storage's replays.
  llvm::DenseMap<int64_t, int64_t> storageRemap;
  llvm::DenseMap<const Storage *, int64_t> offloadedStorageRemap;
  int64_t nextStorage;
};

namespace {

/// Root: a backward op that is the earliest backward reader of tagged
/// producers; clones them before it and redirects their backward readers.
class RecomputeBeforeFirstUse : public OpRewritePattern<CallFunctionOp> {
public:
  RecomputeBeforeFirstUse(MLIRContext *ctx, const RematPlan &plan,
                          const StorageAliasAnalysis &aliases,
                          RematClones &made)
      : OpRewritePattern(ctx), plan(plan), aliases(aliases), made(made) {}

  LogicalResult matchAndRewrite(CallFunctionOp user,
                                PatternRewriter &rewriter) const override;

private:
  /// The value a clone placed before `target` reads for forward value `v`.
  Value operandForClone(Value v, Operation *target,
                        RewriterBase &rewriter) const;
  /// A forward view of an offloaded base, replayed (once) before `target`
  /// on the base's reload, since the forward wait freed the forward view's
  /// storage; `v` itself when it is no such view, its parent when the
  /// parent resolves to itself.
  Value replayViewOfOffloaded(Value v, Operation *target,
                              RewriterBase &rewriter) const;
  void finishClone(CallFunctionOp original, CallFunctionOp clone) const;

  const RematPlan &plan;
  const StorageAliasAnalysis &aliases;
  RematClones &made;
};

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

//===----------------------------------------------------------------------===//
// Deciding
//===----------------------------------------------------------------------===//

/// Offloaded forward value -> the earliest of its reload chains.
static llvm::DenseMap<Value, ReloadChain> collectReloadChains(Block &body) {
  llvm::DenseMap<Value, ReloadChain> reloads;
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
  return reloads;
}

static int64_t maxStorageId(Block &body) {
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

/// The operand in the offloaded base's storage of `v` when `v` is a forward
/// view of an offloaded storage (a clone reads it replayed on the reload);
/// null otherwise.
static Value
offloadedViewParent(Value v, const StorageAliasAnalysis &aliases,
                    const llvm::DenseMap<Value, ReloadChain> &reloads) {
  auto def = v.getDefiningOp<CallFunctionOp>();
  const Storage *s = aliases.lookup(v);
  if (!def || !def.isForward() || !s || s->owner == v ||
      !reloads.count(s->owner) || !aliases.isView(def))
    return Value();
  return aliases.getOperandIn(def, s);
}

namespace {

/// Replays, on the unchanged graph, how the clones' operands will resolve
/// (clone, reload chain, view replayed on a reload), to reject before any
/// rewrite a clone that needs a reload issued after it and to count the
/// reload chains that move.
class OperandCheck {
public:
  OperandCheck(const RematPlan &plan, const StorageAliasAnalysis &aliases)
      : plan(plan), aliases(aliases) {}

  /// Whether a clone placed before `target` reads something other than `v`
  /// for `v`; failure (with an error on `target`) when it cannot.
  FailureOr<bool> resolve(Value v, Operation *target) {
    if (Operation *def = v.getDefiningOp())
      if (cloned.contains(def))
        return true;
    auto it = plan.reloads.find(v);
    if (it == plan.reloads.end())
      return resolveView(v, target);
    ReloadChain chain = it->second; // op handles, copied
    // The chain moves once, before its first reader; later ones find it in
    // place.
    if (!movedChains.insert(v).second || chain.wait->isBeforeInBlock(target))
      return true;
    if (!chain.reload->isBeforeInBlock(target)) {
      Operation *forwardWait = chain.reload.getInput().getDefiningOp();
      if (!forwardWait || target->isBeforeInBlock(forwardWait))
        return target->emitOpError()
               << "needs the reload of an offloaded value before it, but the "
                  "offload's forward wait comes later";
      ++numReloadsMoved;
    }
    return true;
  }

  void markCloned(Operation *op) { cloned.insert(op); }

  unsigned numReloadsMoved = 0;

private:
  FailureOr<bool> resolveView(Value v, Operation *target) {
    if (replayed.contains(v))
      return true;
    Value parent = offloadedViewParent(v, aliases, plan.reloads);
    if (!parent)
      return false;
    FailureOr<bool> changed = resolve(parent, target);
    if (failed(changed))
      return failure();
    if (*changed)
      replayed.insert(v);
    return true; // the replay, or `parent` itself when nothing was reloaded
  }

  const RematPlan &plan;
  const StorageAliasAnalysis &aliases;
  llvm::DenseSet<Operation *> cloned;
  llvm::DenseSet<Value> replayed, movedChains;
};

} // namespace

/// Decides what to clone where, on the graph after readForwardSizes. Fails,
/// with an error naming the node, when a tagged op cannot be recomputed or a
/// clone would read a reload issued after it. O(#ops + #uses).
static LogicalResult planRemat(GraphOp graph,
                               const StorageAliasAnalysis &aliases,
                               RematPlan &plan, RematSummary &summary) {
  Block &body = graph.getBody().front();
  SmallVector<CallFunctionOp> forwardOps, backwardOps;
  for (CallFunctionOp op : body.getOps<CallFunctionOp>()) {
    if (op.isForward())
      forwardOps.push_back(op);
    else if (op.isBackward())
      backwardOps.push_back(op);
    if (op.getRecomputedFromAttr())
      summary.alreadyRematerialized = true;
  }

  // Tagged ops the backward reads, directly or through tagged forward
  // users: one reverse walk.
  llvm::DenseSet<Operation *> recomputable;
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
    return success();
  MutationFacts mutations(aliases);
  for (CallFunctionOp op : forwardOps)
    if (recomputable.contains(op) &&
        failed(verifyRecomputable(op, "a recompute policy", mutations,
                                  graph->hasAttr(kReplayRandomAttr))))
      return failure();
  plan.reloads = collectReloadChains(body);

  // In program order, each backward op claims the unclaimed tagged
  // producers it reads, directly or through other tagged forward ops: it is
  // their earliest backward consumer.
  llvm::DenseSet<Operation *> claimed;
  OperandCheck check(plan, aliases);
  for (CallFunctionOp user : backwardOps) {
    SmallVector<CallFunctionOp> needed;
    SmallVector<Value> worklist(user->getOperands());
    while (!worklist.empty()) {
      auto producer = worklist.pop_back_val().getDefiningOp<CallFunctionOp>();
      if (!producer || !recomputable.contains(producer) ||
          !claimed.insert(producer).second)
        continue;
      needed.push_back(producer);
      llvm::append_range(worklist, producer->getOperands());
    }
    if (needed.empty())
      continue;
    llvm::sort(needed, [](CallFunctionOp a, CallFunctionOp b) {
      return a->isBeforeInBlock(b);
    });
    for (CallFunctionOp op : needed) {
      for (Value v : op->getOperands())
        if (failed(check.resolve(v, user)))
          return failure();
      check.markCloned(op);
    }
    summary.numClones += needed.size();
    plan.cloneBefore[user] = std::move(needed);
  }
  summary.numReloadsMoved = check.numReloadsMoved;
  for (CallFunctionOp op : forwardOps)
    if (claimed.contains(op))
      plan.recomputed.push_back(op);
  return success();
}

//===----------------------------------------------------------------------===//
// Applying
//===----------------------------------------------------------------------===//

Value RecomputeBeforeFirstUse::operandForClone(Value v, Operation *target,
                                               RewriterBase &rewriter) const {
  if (Operation *def = v.getDefiningOp())
    if (CallFunctionOp clone = made.cloneOf.lookup(def))
      return clone->getResult(cast<OpResult>(v).getResultNumber());
  auto it = plan.reloads.find(v);
  if (it == plan.reloads.end())
    return replayViewOfOffloaded(v, target, rewriter);
  ReloadChain chain = it->second; // op handles, copied
  if (chain.wait->isBeforeInBlock(target))
    return chain.wait.getResult();
  // Only what comes after the clone moves: a reload that offload already
  // issued earlier (prefetch) keeps its place, and just its wait moves. The
  // plan made sure the forward wait comes before `target`.
  if (!chain.reload->isBeforeInBlock(target))
    rewriter.moveOpBefore(chain.reload, target);
  rewriter.moveOpBefore(chain.wait, target);
  return chain.wait.getResult();
}

Value RecomputeBeforeFirstUse::replayViewOfOffloaded(
    Value v, Operation *target, RewriterBase &rewriter) const {
  if (Value done = made.replayedViews.lookup(v))
    return done;
  Value parent = offloadedViewParent(v, aliases, plan.reloads);
  if (!parent)
    return v;
  Value reloaded = operandForClone(parent, target, rewriter);
  if (reloaded == parent)
    return parent;
  auto def = v.getDefiningOp<CallFunctionOp>();
  const Storage *s = aliases.lookup(v);
  IRMapping mapping;
  mapping.map(parent, reloaded);
  rewriter.setInsertionPoint(target);
  auto replay = cast<CallFunctionOp>(rewriter.clone(*def, mapping));
  MLIRContext *ctx = replay.getContext();
  auto [idIt, inserted] = made.offloadedStorageRemap.try_emplace(s, 0);
  if (inserted)
    idIt->second = made.nextStorage++;
  int64_t newId = idIt->second;
  Namespace &names = made.names;
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
  made.replayedViews[v] = result;
  return result;
}

void RecomputeBeforeFirstUse::finishClone(CallFunctionOp original,
                                          CallFunctionOp clone) const {
  MLIRContext *ctx = clone.getContext();
  auto uniqueName = [&](StringRef base) {
    return made.names.newName(base + "_recomputed");
  };
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
      if (!owner || !made.cloneOf.count(owner))
        continue;
      auto [it, inserted] = made.storageRemap.try_emplace(t.getStorage(), 0);
      if (inserted)
        it->second = made.nextStorage++;
      m = TensorMetaAttr::get(ctx, t.getSizes(), t.getStrides(), t.getOffset(),
                              t.getDevice(), it->second);
      changed = true;
    }
    if (changed)
      clone.setResultMetaAttr(ArrayAttr::get(ctx, fresh));
  }
}

LogicalResult
RecomputeBeforeFirstUse::matchAndRewrite(CallFunctionOp user,
                                         PatternRewriter &rewriter) const {
  auto it = plan.cloneBefore.find(user);
  if (it == plan.cloneBefore.end())
    return failure();
  ArrayRef<CallFunctionOp> needed = it->second;
  // Met again: moving a reload chain before the root can make the walk
  // step back onto it.
  if (made.cloneOf.count(needed.front()))
    return failure();
  for (CallFunctionOp op : needed) {
    IRMapping mapping;
    for (Value v : op->getOperands()) {
      Value mapped = operandForClone(v, user, rewriter);
      if (mapped != v)
        mapping.map(v, mapped);
    }
    rewriter.setInsertionPoint(user);
    auto clone = cast<CallFunctionOp>(rewriter.clone(*op, mapping));
    made.cloneOf[op] = clone;
    rewriter.modifyOpInPlace(clone, [&] { finishClone(op, clone); });
  }
  // Backward consumers read the clones (no clone reads an original: the
  // producers it reads were cloned before it); their views of a clone live
  // in the clone's allocation, not in the forward one.
  for (CallFunctionOp op : needed) {
    CallFunctionOp clone = made.cloneOf.lookup(op);
    for (OpResult r : op->getResults()) {
      Value c = clone->getResult(r.getResultNumber());
      rewriter.replaceUsesWithIf(r, c, [&](OpOperand &use) {
        auto reader = dyn_cast<CallFunctionOp>(use.getOwner());
        return reader && reader.isBackward();
      });
      if (std::optional<int64_t> oldId = getStorageId(r))
        followStorage(c, *oldId);
    }
  }
  return success();
}

void mlir::joint::populateRematerializationPatterns(
    RewritePatternSet &patterns, const RematPlan &plan,
    const StorageAliasAnalysis &aliases, RematClones &made) {
  patterns.add<RecomputeBeforeFirstUse>(patterns.getContext(), plan, aliases,
                                        made);
}

FailureOr<RematSummary>
mlir::joint::rematerialize(GraphOp graph, const StorageAliasAnalysis &aliases) {
  RematSummary summary;
  summary.numSizeQueriesHoisted = readForwardSizes(graph);
  RematPlan plan;
  if (failed(planRemat(graph, aliases, plan, summary)))
    return failure();
  if (plan.cloneBefore.empty())
    return summary;

  Block &body = graph.getBody().front();
  RematClones made(graph, maxStorageId(body) + 1);
  RewritePatternSet patterns(graph.getContext());
  populateRematerializationPatterns(patterns, plan, aliases, made);
  walkAndApplyPatterns(graph, std::move(patterns));

  // Originals no forward code reads any more.
  IRRewriter rewriter(graph.getContext());
  for (CallFunctionOp op : llvm::reverse(plan.recomputed))
    if (op->use_empty()) {
      rewriter.eraseOp(op);
      ++summary.numErased;
    }
  return summary;
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

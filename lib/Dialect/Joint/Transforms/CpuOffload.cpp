//===- CpuOffload.cpp - Apply must_cpu_offload decisions ------------------===//
//
// joint-apply-cpu-offload, the applier of offload decisions. A forward op
// tagged `policy = must_cpu_offload` has the base storage of each saved
// result moved to host between its last forward use and its first backward
// use with the ao protocol (ao.offload -> forward ao.wait_tensor ->
// ao.reload -> backward ao.wait_tensor), each storage once however many of
// its views are tagged; forward views the backward reads are replayed on
// the reloaded base. The plan (OffloadPlan: targets, anchors, region
// distances, the order the reloads are made in and their fresh storage ids)
// is decided on the unchanged graph first and every tag is re-checked, so a
// bad hand tag fails with one error and changes nothing; then two patterns
// holding the plan read-only (one at the first tagged op of each storage,
// one at its first backward reader) edit the IR through the rewriter, driven
// by one walkAndApplyPatterns. The safety rules are
// Analysis/OffloadEligibility; placement follows torchtitan graph_trainer's
// cpu_offload (forward placement, backward reload with view replay, prefetch
// by region) and torch's ao offload ops.
//
//===----------------------------------------------------------------------===//

#include "joint/Dialect/Joint/Transforms/CpuOffload.h"
#include "joint/Analysis/MemoryModel.h"
#include "joint/Analysis/ModelStructure.h"
#include "joint/Dialect/Joint/IR/OpSets.h"
#include "joint/Dialect/Joint/IR/TensorMeta.h"
#include "joint/Dialect/Joint/Transforms/Passes.h"
#include "joint/Support/NamedDiagnostics.h"
#include "joint/Support/Namespace.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTAPPLYCPUOFFLOAD
#include "joint/Dialect/Joint/Transforms/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

//===----------------------------------------------------------------------===//
// Regions (prefetch and defer distances)
//===----------------------------------------------------------------------===//

namespace {

/// Regions of one phase: runs of ops in one attention module (values
/// produced inside attention) or one transformer block (other values). A
/// run opens when the module changes and is closed by an op of a module
/// outside every such unit; unlabeled ops (root module only) are
/// transparent. Regions are found by position, so a module reused in
/// several blocks gives one region per traversal.
class RegionIndex {
public:
  /// The region key of an op: an attention module or a block, "" outside.
  using Key = std::string;

  RegionIndex(ModelStructure &model, bool attention, ArrayRef<Operation *> ops)
      : model(model), attention(attention) {
    Key previous;
    for (Operation *op : ops) {
      ModelStructure::Place place;
      Key key = keyOf(cast<CallFunctionOp>(op), &place);
      if (place == ModelStructure::Place::Outside) {
        previous.clear();
        continue;
      }
      if (place != ModelStructure::Place::Inside || key == previous)
        continue;
      anchorsOfKey[key].push_back(anchors.size());
      anchors.push_back(op);
      previous = key;
    }
  }

  /// The unit an op runs in ("" and Outside/Unlabeled when none).
  Key keyOf(CallFunctionOp op, ModelStructure::Place *place) {
    if (attention)
      return model.getAttentionOf(op, place).str();
    std::optional<unsigned> block = model.getBlockIndex(op);
    ArrayAttr stack = op.getModuleStackAttr();
    bool labeled = stack && llvm::any_of(stack, [](Attribute f) {
                     return !cast<ModuleFrameAttr>(f).getFqn().empty();
                   });
    *place = block ? ModelStructure::Place::Inside
                   : (labeled ? ModelStructure::Place::Outside
                              : ModelStructure::Place::Unlabeled);
    return block ? model.getBlocks()[*block] : Key();
  }

  ArrayRef<Operation *> getAnchors() const { return anchors; }
  ArrayRef<unsigned> anchorsOf(const Key &key) const {
    auto it = anchorsOfKey.find(key);
    return it == anchorsOfKey.end() ? ArrayRef<unsigned>() : it->second;
  }

private:
  ModelStructure &model;
  bool attention;
  SmallVector<Operation *> anchors;
  llvm::StringMap<SmallVector<unsigned>> anchorsOfKey;
};

} // namespace

//===----------------------------------------------------------------------===//
// Deciding
//===----------------------------------------------------------------------===//

/// What joint-apply-cpu-offload does, decided on the unchanged graph before
/// any rewrite; the patterns only read it.
struct mlir::joint::OffloadPlan {
  /// One storage to offload.
  struct Entry {
    const OffloadTarget *target = nullptr;
    unsigned prefetch = 0, defer = 0;
    /// Where the forward wait goes: before this op; null: right after the
    /// last forward use (or the offload when the forward never reads it).
    Operation *waitBefore = nullptr;
    /// Where a prefetched reload goes: before this op; null: no prefetch.
    Operation *reloadBefore = nullptr;
    /// The storage prefetched to the same op just before this one: this
    /// reload goes before that one's, so they keep the forward order.
    const Storage *prefetchedBefore = nullptr;
    /// Fresh storage id of the reloaded allocation.
    int64_t reloadStorageId = 0;
  };

  llvm::DenseMap<const Storage *, Entry> entries;
  /// First tagged op of each storage -> the storages offloaded there.
  llvm::DenseMap<Operation *, SmallVector<const Storage *, 1>> offloadAt;
  /// First backward reader -> the storages reloaded before it, in the order
  /// of their forward waits.
  llvm::DenseMap<Operation *, SmallVector<const Storage *, 1>> reloadAt;
};

/// The ops the patterns made that later roots read, and fresh names.
struct mlir::joint::OffloadMade {
  explicit OffloadMade(GraphOp graph) : names(graph.getContext()) {
    names.addGraph(graph);
  }

  Namespace names;
  llvm::DenseMap<const Storage *, ao::WaitTensorOp> forwardWait;
  llvm::DenseMap<const Storage *, ao::ReloadOp> reload;
};

namespace {

/// Builds the OffloadPlan: targets re-checked, region distances resolved,
/// the placement of every op the patterns make fixed.
class OffloadPlanner {
public:
  OffloadPlanner(GraphOp graph, OffloadEligibility &eligibility,
                 ModelStructure &model, const OffloadApplyOptions &options,
                 OffloadPlan &plan, OffloadApplySummary &summary)
      : graph(graph), aliases(eligibility.getAliases()), options(options),
        eligibility(eligibility), model(model), plan(plan), summary(summary) {}

  /// Fails, with one error naming the node, when a tagged op breaks a rule.
  LogicalResult run();

private:
  LogicalResult collectTargets();
  void placeRegions(OffloadPlan::Entry &e, RegionIndex *forward,
                    RegionIndex *backward, Operation *boundary);
  void orderReloads();
  std::optional<unsigned> regionAttr(CallFunctionOp op, StringRef name,
                                     bool &bad);

  GraphOp graph;
  const StorageAliasAnalysis &aliases;
  const OffloadApplyOptions &options;
  OffloadEligibility &eligibility;
  ModelStructure &model;
  OffloadPlan &plan;
  OffloadApplySummary &summary;
  /// Storages in the order their first tagged op appears (the order the
  /// offload pattern makes them in).
  SmallVector<const Storage *> order;
};

} // namespace

std::optional<unsigned> OffloadPlanner::regionAttr(CallFunctionOp op,
                                                   StringRef name, bool &bad) {
  Attribute a = op->getAttr(name);
  if (!a)
    return std::nullopt;
  auto i = dyn_cast<IntegerAttr>(a);
  if (!i || i.getValue().isNegative() || i.getValue().getActiveBits() > 31) {
    markNamed(op.emitOpError(), op.getName())
        << "node '" << op.getName() << "': '" << name
        << "' must be a non-negative integer number of regions";
    bad = true;
    return std::nullopt;
  }
  return static_cast<unsigned>(i.getInt());
}

LogicalResult OffloadPlanner::collectTargets() {
  Block &body = graph.getBody().front();
  for (CallFunctionOp op : body.getOps<CallFunctionOp>()) {
    if (op.getPolicy() != CheckpointPolicy::must_cpu_offload)
      continue;
    // Applied before: the tag stays and the IR already has the chain.
    if (llvm::any_of(op->getResults(), [&](Value r) {
          const Storage *s = aliases.lookup(r);
          return s && eligibility.isOffloaded(s);
        }))
      continue;
    std::string why;
    FailureOr<SmallVector<const OffloadTarget *>> targets =
        eligibility.check(op, why);
    if (failed(targets))
      return markNamed(op.emitOpError(), op.getName())
             << "node '" << op.getName() << "' (" << op.getTarget()
             << ") is tagged must_cpu_offload but " << why;
    bool bad = false;
    std::optional<unsigned> prefetch = regionAttr(op, kPrefetchAttr, bad);
    std::optional<unsigned> defer = regionAttr(op, kDeferAttr, bad);
    if (bad)
      return failure();
    for (const OffloadTarget *t : *targets) {
      if (eligibility.isOffloaded(t->storage))
        continue; // applied before: tags stay, the IR already has the chain
      auto [it, inserted] = plan.entries.try_emplace(t->storage);
      OffloadPlan::Entry &e = it->second;
      if (inserted) {
        e.target = t;
        e.prefetch = options.prefetchRegions;
        e.defer = options.deferRegions;
        order.push_back(t->storage);
        plan.offloadAt[op].push_back(t->storage);
        if (prefetch)
          e.prefetch = *prefetch;
        if (defer)
          e.defer = *defer;
      } else {
        e.prefetch = std::max(e.prefetch, prefetch.value_or(0));
        e.defer = std::max(e.defer, defer.value_or(0));
      }
    }
  }
  return success();
}

LogicalResult OffloadPlanner::run() {
  if (failed(collectTargets()))
    return failure();
  if (plan.entries.empty())
    return success();

  // Region anchors, on the unchanged graph.
  Block &body = graph.getBody().front();
  SmallVector<Operation *> forwardOps, backwardOps;
  Operation *boundary = nullptr;
  for (CallFunctionOp op : body.getOps<CallFunctionOp>()) {
    if (op.isForward()) {
      forwardOps.push_back(op);
    } else {
      backwardOps.push_back(op);
      if (!boundary)
        boundary = op;
    }
  }
  std::optional<RegionIndex> fwdAttention, bwdAttention, fwdBlock, bwdBlock;
  for (const Storage *s : order) {
    OffloadPlan::Entry &e = plan.entries[s];
    summary.numBytes += e.target->bytes;
    if (!e.prefetch && !e.defer)
      continue;
    ModelStructure::Place place;
    model.getAttentionOf(e.target->producer, &place);
    bool attention = place == ModelStructure::Place::Inside;
    if (!attention && !model.getBlockIndex(e.target->producer))
      continue; // in no region: placed as without distances
    std::optional<RegionIndex> &fwd = attention ? fwdAttention : fwdBlock;
    std::optional<RegionIndex> &bwd = attention ? bwdAttention : bwdBlock;
    if (!fwd) {
      fwd.emplace(model, attention, forwardOps);
      bwd.emplace(model, attention, backwardOps);
    }
    placeRegions(e, &*fwd, &*bwd, boundary);
  }
  summary.numStorages = order.size();
  orderReloads();
  return success();
}

/// The reloads are made in the program order of the forward waits, which
/// fixes their fresh storage ids, the order of reloads sharing a first
/// backward reader, and the order of prefetched reloads sharing an anchor.
/// A forward wait goes right after an op (the last forward reader, or the
/// offload right after the producer) or right before one (a deferred
/// anchor); of the waits in one gap, those inserted after an op come first,
/// in reverse order of creation, then those inserted before one, in order.
void OffloadPlanner::orderReloads() {
  struct Slot {
    Operation *op;
    bool after;
    int tie;
    const Storage *storage;
  };
  SmallVector<Slot> waits;
  for (auto [i, s] : llvm::enumerate(order)) {
    const OffloadPlan::Entry &e = plan.entries[s];
    int created = static_cast<int>(i);
    if (e.waitBefore)
      waits.push_back({e.waitBefore, false, created, s});
    else
      waits.push_back({e.target->lastForwardUse, true, -created, s});
  }
  llvm::sort(waits, [](const Slot &a, const Slot &b) {
    if (a.op != b.op)
      return a.op->isBeforeInBlock(b.op);
    return std::tie(a.after, a.tie) < std::tie(b.after, b.tie);
  });

  // Fresh ids in that order (after every id the graph uses); roots in
  // program order, each with its reloads in that order.
  Block &body = graph.getBody().front();
  int64_t nextStorageId = 0;
  for (BlockArgument arg : body.getArguments())
    if (TensorMetaAttr m = getTensorMeta(arg))
      nextStorageId = std::max(nextStorageId, m.getStorage() + 1);
  for (CallFunctionOp op : body.getOps<CallFunctionOp>())
    if (ArrayAttr metas = op.getResultMetaAttr())
      for (Attribute a : metas)
        if (auto m = dyn_cast_or_null<TensorMetaAttr>(a))
          nextStorageId = std::max(nextStorageId, m.getStorage() + 1);
  SmallVector<const Storage *> reloads;
  for (const Slot &wait : waits) {
    OffloadPlan::Entry &e = plan.entries[wait.storage];
    e.reloadStorageId = nextStorageId++;
    plan.reloadAt[e.target->firstBackwardUse].push_back(wait.storage);
    reloads.push_back(wait.storage);
  }
  // Prefetched reloads sharing an anchor: each goes before the one moved
  // there before it, in the program order of the reloads.
  llvm::stable_sort(reloads, [&](const Storage *a, const Storage *b) {
    Operation *x = plan.entries[a].target->firstBackwardUse;
    Operation *y = plan.entries[b].target->firstBackwardUse;
    return x != y && x->isBeforeInBlock(y);
  });
  llvm::DenseMap<Operation *, const Storage *> lastAtAnchor;
  for (const Storage *s : reloads) {
    OffloadPlan::Entry &e = plan.entries[s];
    if (!e.reloadBefore)
      continue;
    ++summary.numPrefetched;
    const Storage *&last = lastAtAnchor[e.reloadBefore];
    e.prefetchedBefore = last;
    last = s;
  }
}

/// Defer: the forward wait goes before the (defer+1)-th region that starts
/// after the last forward use, or before the first backward op when fewer
/// remain. Prefetch (graph_trainer `_prefetch_reloads`): the reload goes to
/// the start of the region `prefetch` regions before its own (the latest
/// region of its unit at or before the first backward reader), never above
/// its forward wait.
void OffloadPlanner::placeRegions(OffloadPlan::Entry &e, RegionIndex *forward,
                                  RegionIndex *backward, Operation *boundary) {
  const OffloadTarget &t = *e.target;
  auto pos = [&](Operation *op) { return eligibility.position(op); };
  unsigned waitPos = pos(t.lastForwardUse);
  if (e.defer) {
    ArrayRef<Operation *> anchors = forward->getAnchors();
    auto after = llvm::partition_point(
        anchors, [&](Operation *a) { return pos(a) <= waitPos; });
    size_t index = (after - anchors.begin()) + e.defer;
    Operation *anchor = index < anchors.size() ? anchors[index] : boundary;
    if (anchor && pos(anchor) > waitPos &&
        pos(anchor) <= pos(t.firstBackwardUse)) {
      e.waitBefore = anchor;
      waitPos = pos(anchor) - 1;
      ++summary.numDeferred;
    }
  }
  if (!e.prefetch)
    return;
  ModelStructure::Place place;
  RegionIndex::Key key = backward->keyOf(t.producer, &place);
  ArrayRef<unsigned> indices = backward->anchorsOf(key);
  if (indices.empty())
    return;
  ArrayRef<Operation *> anchors = backward->getAnchors();
  unsigned reloadPos = pos(t.firstBackwardUse);
  auto after = llvm::partition_point(
      indices, [&](unsigned i) { return pos(anchors[i]) <= reloadPos; });
  unsigned own = after == indices.begin() ? indices.front() : *(after - 1);
  unsigned target = own > e.prefetch ? own - e.prefetch : 0;
  while (target < own && pos(anchors[target]) <= waitPos)
    ++target;
  Operation *anchor = anchors[target];
  if (pos(anchor) >= reloadPos || pos(anchor) <= waitPos)
    return;
  e.reloadBefore = anchor;
}

/// `meta` with storage id `id`.
static TensorMetaAttr withStorage(TensorMetaAttr meta, int64_t id) {
  return TensorMetaAttr::get(meta.getContext(), meta.getSizes(),
                             meta.getStrides(), meta.getOffset(),
                             meta.getDevice(), id);
}

/// Rewrites the storage id `from` to `to` in `op`'s result facts.
static void renumberStorage(RewriterBase &rewriter, CallFunctionOp op,
                            int64_t from, int64_t to) {
  ArrayAttr metas = op.getResultMetaAttr();
  if (!metas)
    return;
  SmallVector<Attribute> updated(metas.begin(), metas.end());
  bool changed = false;
  for (Attribute &a : updated)
    if (auto m = dyn_cast_or_null<TensorMetaAttr>(a))
      if (m.getStorage() == from) {
        a = withStorage(m, to);
        changed = true;
      }
  if (changed)
    rewriter.modifyOpInPlace(op, [&] {
      op.setResultMetaAttr(ArrayAttr::get(op.getContext(), updated));
    });
}

namespace {

/// Root: the first op tagged must_cpu_offload of a storage. ao.offload of the
/// base right after its producer, and its forward wait after the last
/// forward reader (or before the planned deferred anchor).
class OffloadAfterProducer : public OpRewritePattern<CallFunctionOp> {
public:
  OffloadAfterProducer(MLIRContext *ctx, const OffloadPlan &plan,
                       OffloadMade &made)
      : OpRewritePattern(ctx), plan(plan), made(made) {}

  LogicalResult matchAndRewrite(CallFunctionOp op,
                                PatternRewriter &rewriter) const override {
    auto it = plan.offloadAt.find(op);
    if (it == plan.offloadAt.end() || made.forwardWait.count(it->second[0]))
      return failure();
    for (const Storage *s : it->second) {
      const OffloadPlan::Entry &e = plan.entries.at(s);
      const OffloadTarget &t = *e.target;
      Value base = t.base;
      Type type = base.getType();
      CallFunctionOp producer = t.producer;
      Location loc = producer.getLoc();
      rewriter.setInsertionPointAfter(producer);
      auto offload =
          ao::OffloadOp::create(rewriter, loc, type, base, StringAttr());
      if (e.waitBefore)
        rewriter.setInsertionPoint(e.waitBefore);
      else if (t.lastForwardUse == producer.getOperation())
        rewriter.setInsertionPointAfter(offload);
      else
        rewriter.setInsertionPointAfter(t.lastForwardUse);
      made.forwardWait[s] = ao::WaitTensorOp::create(
          rewriter, loc, type, offload, base, t.lastUseValue, StringAttr());
    }
    return success();
  }

private:
  const OffloadPlan &plan;
  OffloadMade &made;
};

/// Root: the first backward reader of offloaded storages. For each, in the
/// order of their forward waits: ao.reload (moved to its prefetch anchor
/// when planned) and its wait before the root; backward readers of the base
/// read the wait, forward views the backward reads are replayed on it.
class ReloadBeforeFirstBackwardUse : public OpRewritePattern<CallFunctionOp> {
public:
  ReloadBeforeFirstBackwardUse(MLIRContext *ctx, const OffloadPlan &plan,
                               OffloadMade &made)
      : OpRewritePattern(ctx), plan(plan), made(made) {}

  LogicalResult matchAndRewrite(CallFunctionOp op,
                                PatternRewriter &rewriter) const override {
    auto it = plan.reloadAt.find(op);
    if (it == plan.reloadAt.end() || made.reload.count(it->second[0]))
      return failure();
    for (const Storage *s : it->second)
      reload(s, rewriter);
    return success();
  }

private:
  void reload(const Storage *s, PatternRewriter &rewriter) const;

  const OffloadPlan &plan;
  OffloadMade &made;
};

} // namespace

void ReloadBeforeFirstBackwardUse::reload(const Storage *s,
                                          PatternRewriter &rewriter) const {
  const OffloadPlan::Entry &e = plan.entries.at(s);
  const OffloadTarget &t = *e.target;
  // The offload pattern ran at a forward op, before the walk got here.
  ao::WaitTensorOp wait = made.forwardWait.lookup(s);
  assert(wait && "the forward wait is made before the first backward reader");
  MLIRContext *ctx = rewriter.getContext();
  Type type = t.base.getType();
  Location loc = CallFunctionOp(t.producer).getLoc();
  rewriter.setInsertionPoint(t.firstBackwardUse);
  auto toAttr = [&](const std::optional<SmallVector<int64_t>> &v) {
    if (!v)
      return ArrayAttr();
    SmallVector<Attribute> attrs;
    for (int64_t x : *v)
      attrs.push_back(IntegerAttr::get(IntegerType::get(ctx, 64), x));
    return ArrayAttr::get(ctx, attrs);
  };
  auto reload = ao::ReloadOp::create(rewriter, loc, type, wait, t.device,
                                     toAttr(t.reloadSizes),
                                     toAttr(t.reloadStrides), StringAttr());
  made.reload[s] = reload;
  // The host copy stays alive until the copy back has finished (torch:
  // gpu = ao.wait_tensor(gpu, keepalive=cpu)).
  auto backwardWait = ao::WaitTensorOp::create(rewriter, loc, type, reload,
                                               wait, Value(), StringAttr());
  for (OpOperand *use : t.directBackwardUses)
    rewriter.modifyOpInPlace(use->getOwner(), [&] { use->set(backwardWait); });

  // Backward aliases now live in the reloaded allocation, not in the
  // forward storage that the forward wait releases.
  int64_t oldId = s->id, newId = e.reloadStorageId;
  rewriter.modifyOpInPlace(reload, [&] {
    reload->setAttr(kReloadStorageAttr,
                    IntegerAttr::get(IntegerType::get(ctx, 64), newId));
  });
  for (Value m : s->members)
    if (auto def = m.getDefiningOp<CallFunctionOp>(); def && def.isBackward())
      renumberStorage(rewriter, def, oldId, newId);

  // Replay the forward views the backward reads, in forward order.
  IRMapping mapping;
  mapping.map(t.base, backwardWait.getResult());
  for (Operation *view : t.replayOps) {
    auto replay = cast<CallFunctionOp>(rewriter.clone(*view, mapping));
    auto original = cast<CallFunctionOp>(view);
    rewriter.modifyOpInPlace(replay, [&] {
      replay.setPhase(Phase::backward);
      replay.removePolicyAttr();
      replay->removeAttr(kPrefetchAttr);
      replay->removeAttr(kDeferAttr);
      made.names.nameClone(replay, original, "_reload");
    });
    renumberStorage(rewriter, replay, oldId, newId);
  }
  for (OpOperand *use : t.viewBackwardUses)
    rewriter.modifyOpInPlace(use->getOwner(),
                             [&] { use->set(mapping.lookup(use->get())); });

  // Prefetch: to the planned anchor, before the reload moved there before.
  if (e.reloadBefore)
    rewriter.moveOpBefore(reload, e.prefetchedBefore
                                      ? made.reload.lookup(e.prefetchedBefore)
                                      : e.reloadBefore);
}

void mlir::joint::populateCpuOffloadPatterns(RewritePatternSet &patterns,
                                             const OffloadPlan &plan,
                                             OffloadMade &made) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<OffloadAfterProducer, ReloadBeforeFirstBackwardUse>(ctx, plan,
                                                                   made);
}

FailureOr<OffloadApplySummary>
mlir::joint::applyCpuOffload(GraphOp graph, OffloadEligibility &eligibility,
                             ModelStructure &model,
                             const OffloadApplyOptions &options) {
  // The ao ops are built through OpTy::create, which yields a null op when
  // the dialect is not loaded: a calling pass must declare AODialect.
  if (!graph.getContext()->getLoadedDialect<ao::AODialect>())
    return emitError(graph.getLoc())
           << "applyCpuOffload: the ao dialect is not loaded; the calling "
              "pass must list it in dependentDialects";
  // A backward size query reads the forward SymInt, so no activation is
  // offloaded and reloaded only for its size.
  readForwardSizes(graph);
  OffloadPlan plan;
  OffloadApplySummary summary;
  if (failed(OffloadPlanner(graph, eligibility, model, options, plan, summary)
                 .run()))
    return failure();
  if (plan.entries.empty())
    return summary;

  // One walk in program order: every storage's first tagged op (forward)
  // comes before its first backward reader.
  OffloadMade made(graph);
  RewritePatternSet patterns(graph.getContext());
  populateCpuOffloadPatterns(patterns, plan, made);
  walkAndApplyPatterns(graph, std::move(patterns));
  return summary;
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

struct ApplyCpuOffloadPass
    : joint::impl::JointApplyCpuOffloadBase<ApplyCpuOffloadPass> {
  using Base::Base;

  void runOnOperation() override {
    GraphOp graph = getOperation();
    // Built once per pipeline: the decider preserves these.
    OffloadEligibility &eligibility = getAnalysis<OffloadEligibility>();
    ModelStructure &model = getAnalysis<ModelStructure>();
    OffloadApplyOptions options;
    options.prefetchRegions = prefetchRegions;
    options.deferRegions = deferRegions;
    FailureOr<OffloadApplySummary> summary =
        applyCpuOffload(graph, eligibility, model, options);
    if (failed(summary))
      return signalPassFailure();
    numOffloaded += summary->numStorages;
    numOffloadedBytes += summary->numBytes;
    numPrefetched += summary->numPrefetched;
    emitRemark(graph.getLoc())
        << "joint-apply-cpu-offload: offloaded " << summary->numStorages
        << " storage(s), " << summary->numBytes << " bytes, prefetched "
        << summary->numPrefetched << " reload(s), deferred "
        << summary->numDeferred << " wait(s)";
  }
};

} // namespace

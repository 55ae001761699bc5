//===- CpuOffload.cpp - Apply must_cpu_offload decisions ------------------===//
//
// joint-apply-cpu-offload, the applier of offload decisions. A forward op
// tagged `policy = must_cpu_offload` has the base storage of each saved
// result moved to host between its last forward use and its first backward
// use with the ao protocol (ao.offload -> forward ao.wait_tensor ->
// ao.reload -> backward ao.wait_tensor), each storage once however many of
// its views are tagged; forward views the backward reads are replayed on
// the reloaded base. The plan (targets, anchors, region distances) is
// resolved on the unchanged graph first and every tag is re-checked, so a
// bad hand tag fails with one error and changes nothing; then three
// patterns (one per root: tagged forward op, forward wait without reload,
// reload to prefetch) edit the IR through the rewriter, driven by
// walkAndApplyPatterns. The safety rules are Analysis/OffloadEligibility;
// placement follows torchtitan graph_trainer's cpu_offload (forward
// placement, backward reload with view replay, prefetch by region) and
// torch's ao offload ops.
//
//===----------------------------------------------------------------------===//

#include "joint/Dialect/Joint/Transforms/CpuOffload.h"
#include "StatePattern.h"
#include "joint/Analysis/MemoryModel.h"
#include "joint/Analysis/ModelStructure.h"
#include "joint/Dialect/Joint/IR/OpSets.h"
#include "joint/Dialect/Joint/IR/TensorMeta.h"
#include "joint/Dialect/Joint/Transforms/Passes.h"
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
// The applier
//===----------------------------------------------------------------------===//

/// One storage to offload and the ops made for it.
struct OffloadEntry {
  const OffloadTarget *target = nullptr;
  unsigned prefetch = 0, defer = 0;
  /// Where the forward wait goes: before this op; null: right after the
  /// last forward use (or the offload when the forward never reads it).
  Operation *waitBefore = nullptr;
  /// Where a prefetched reload goes: before this op; null: no prefetch.
  Operation *reloadBefore = nullptr;
  ao::OffloadOp offload;
  ao::WaitTensorOp forwardWait;
  ao::ReloadOp reload;
  bool prefetched = false;
};

class mlir::joint::OffloadApplyState {
public:
  OffloadApplyState(GraphOp graph, OffloadEligibility &eligibility,
                    ModelStructure &model, const OffloadApplyOptions &options)
      : graph(graph), aliases(eligibility.getAliases()), options(options),
        eligibility(eligibility), model(model) {}

  FailureOr<OffloadApplySummary> run();

  LogicalResult offloadFor(CallFunctionOp op, PatternRewriter &rewriter);
  LogicalResult reloadFor(ao::WaitTensorOp wait, PatternRewriter &rewriter);
  LogicalResult prefetchReload(ao::ReloadOp reload, PatternRewriter &rewriter);

private:
  LogicalResult plan();
  void placeRegions(OffloadEntry &e, RegionIndex *forward,
                    RegionIndex *backward, Operation *boundary);
  std::optional<unsigned> regionAttr(CallFunctionOp op, StringRef name,
                                     bool &bad);
  /// The entry of the storage `op` (a forward wait or a reload) was made
  /// for; null for ops the applier did not make.
  OffloadEntry *
  entryOf(const llvm::DenseMap<Operation *, const Storage *> &storageOf,
          Operation *op);

  GraphOp graph;
  const StorageAliasAnalysis &aliases;
  OffloadApplyOptions options;
  OffloadEligibility &eligibility;
  ModelStructure &model;
  Namespace names{graph.getContext()};
  int64_t nextStorageId = 0;
  /// Storages in the order their first tagged op appears.
  SmallVector<const Storage *> order;
  llvm::DenseMap<const Storage *, OffloadEntry> entries;
  llvm::DenseMap<Operation *, SmallVector<const Storage *, 1>> storagesOf;
  llvm::DenseMap<Operation *, const Storage *> storageOfWait, storageOfReload;
  /// Prefetch anchor -> the first reload moved before it.
  llvm::DenseMap<Operation *, Operation *> firstAtAnchor;
  OffloadApplySummary summary;
};

namespace {

/// Root: a forward op tagged must_cpu_offload whose storage is not offloaded
/// yet.
using OffloadTaggedOp = StatePattern<CallFunctionOp, OffloadApplyState,
                                     &OffloadApplyState::offloadFor>;
/// Root: the forward wait of an offload that has no reload yet.
using ReloadForBackward = StatePattern<ao::WaitTensorOp, OffloadApplyState,
                                       &OffloadApplyState::reloadFor>;
/// Root: a reload with a prefetch distance, not moved yet.
using PrefetchReload = StatePattern<ao::ReloadOp, OffloadApplyState,
                                    &OffloadApplyState::prefetchReload>;

} // namespace

/// Debug labels of the three roots (each walk enables one).
static constexpr StringLiteral kOffloadLabel = "offload-tagged-op";
static constexpr StringLiteral kReloadLabel = "reload-forward-wait";
static constexpr StringLiteral kPrefetchLabel = "prefetch-reload";

void mlir::joint::populateCpuOffloadPatterns(RewritePatternSet &patterns,
                                             OffloadApplyState &state) {
  MLIRContext *ctx = patterns.getContext();
  patterns.addWithLabel<OffloadTaggedOp>({kOffloadLabel}, ctx, state);
  patterns.addWithLabel<ReloadForBackward>({kReloadLabel}, ctx, state);
  patterns.addWithLabel<PrefetchReload>({kPrefetchLabel}, ctx, state);
}

std::optional<unsigned>
OffloadApplyState::regionAttr(CallFunctionOp op, StringRef name, bool &bad) {
  Attribute a = op->getAttr(name);
  if (!a)
    return std::nullopt;
  auto i = dyn_cast<IntegerAttr>(a);
  if (!i || i.getValue().isNegative() || i.getValue().getActiveBits() > 31) {
    op.emitOpError() << "node '" << op.getName() << "': '" << name
                     << "' must be a non-negative integer number of regions";
    bad = true;
    return std::nullopt;
  }
  return static_cast<unsigned>(i.getInt());
}

LogicalResult OffloadApplyState::plan() {
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
      return op.emitOpError()
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
      auto [it, inserted] = entries.try_emplace(t->storage);
      OffloadEntry &e = it->second;
      if (inserted) {
        e.target = t;
        e.prefetch = options.prefetchRegions;
        e.defer = options.deferRegions;
        order.push_back(t->storage);
        if (prefetch)
          e.prefetch = *prefetch;
        if (defer)
          e.defer = *defer;
      } else {
        e.prefetch = std::max(e.prefetch, prefetch.value_or(0));
        e.defer = std::max(e.defer, defer.value_or(0));
      }
      storagesOf[op].push_back(t->storage);
    }
  }
  if (entries.empty())
    return success();

  // Region anchors, on the unchanged graph.
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
    OffloadEntry &e = entries[s];
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
  return success();
}

/// Defer: the forward wait goes before the (defer+1)-th region that starts
/// after the last forward use, or before the first backward op when fewer
/// remain. Prefetch (graph_trainer `_prefetch_reloads`): the reload goes to
/// the start of the region `prefetch` regions before its own (the latest
/// region of its unit at or before the first backward reader), never above
/// its forward wait.
void OffloadApplyState::placeRegions(OffloadEntry &e, RegionIndex *forward,
                                     RegionIndex *backward,
                                     Operation *boundary) {
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

LogicalResult OffloadApplyState::offloadFor(CallFunctionOp op,
                                            PatternRewriter &rewriter) {
  auto it = storagesOf.find(op);
  if (it == storagesOf.end())
    return failure();
  bool changed = false;
  for (const Storage *s : it->second) {
    OffloadEntry &e = entries[s];
    if (e.offload)
      continue;
    const OffloadTarget &t = *e.target;
    Value base = t.base;
    Type type = base.getType();
    CallFunctionOp producer = t.producer;
    Location loc = producer.getLoc();
    rewriter.setInsertionPointAfter(producer);
    e.offload = ao::OffloadOp::create(rewriter, loc, type, base, StringAttr());
    if (e.waitBefore)
      rewriter.setInsertionPoint(e.waitBefore);
    else if (t.lastForwardUse == producer.getOperation())
      rewriter.setInsertionPointAfter(e.offload);
    else
      rewriter.setInsertionPointAfter(t.lastForwardUse);
    e.forwardWait = ao::WaitTensorOp::create(
        rewriter, loc, type, e.offload, base, t.lastUseValue, StringAttr());
    storageOfWait[e.forwardWait] = s;
    ++summary.numStorages;
    summary.numBytes += t.bytes;
    changed = true;
  }
  return success(changed);
}

OffloadEntry *OffloadApplyState::entryOf(
    const llvm::DenseMap<Operation *, const Storage *> &storageOf,
    Operation *op) {
  const Storage *s = storageOf.lookup(op);
  return s ? &entries[s] : nullptr;
}

LogicalResult OffloadApplyState::reloadFor(ao::WaitTensorOp wait,
                                           PatternRewriter &rewriter) {
  OffloadEntry *entry = entryOf(storageOfWait, wait);
  if (!entry || entry->reload)
    return failure();
  OffloadEntry &e = *entry;
  const Storage *s = e.target->storage;
  const OffloadTarget &t = *e.target;
  MLIRContext *ctx = graph.getContext();
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
  e.reload = ao::ReloadOp::create(rewriter, loc, type, wait, t.device,
                                  toAttr(t.reloadSizes),
                                  toAttr(t.reloadStrides), StringAttr());
  storageOfReload[e.reload] = s;
  // The host copy stays alive until the copy back has finished (torch:
  // gpu = ao.wait_tensor(gpu, keepalive=cpu)).
  auto backwardWait = ao::WaitTensorOp::create(rewriter, loc, type, e.reload,
                                               wait, Value(), StringAttr());
  for (OpOperand *use : t.directBackwardUses)
    rewriter.modifyOpInPlace(use->getOwner(), [&] { use->set(backwardWait); });

  // Backward aliases now live in the reloaded allocation, not in the
  // forward storage that the forward wait releases.
  int64_t oldId = s->id, newId = nextStorageId++;
  rewriter.modifyOpInPlace(e.reload, [&] {
    e.reload->setAttr(kReloadStorageAttr,
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
      names.nameClone(replay, original, "_reload");
    });
    renumberStorage(rewriter, replay, oldId, newId);
  }
  for (OpOperand *use : t.viewBackwardUses)
    rewriter.modifyOpInPlace(use->getOwner(),
                             [&] { use->set(mapping.lookup(use->get())); });
  return success();
}

LogicalResult OffloadApplyState::prefetchReload(ao::ReloadOp reload,
                                                PatternRewriter &rewriter) {
  OffloadEntry *entry = entryOf(storageOfReload, reload);
  if (!entry || !entry->reloadBefore || entry->prefetched)
    return failure();
  OffloadEntry &e = *entry;
  // Reloads sharing an anchor keep the forward order of their values (the
  // walk meets the later value's reload first).
  Operation *&first = firstAtAnchor[e.reloadBefore];
  rewriter.moveOpBefore(reload, first ? first : e.reloadBefore);
  first = reload;
  e.prefetched = true;
  ++summary.numPrefetched;
  return success();
}

FailureOr<OffloadApplySummary> OffloadApplyState::run() {
  if (failed(plan()))
    return failure();
  if (entries.empty())
    return summary;
  names.addGraph(graph);
  Block &body = graph.getBody().front();
  for (BlockArgument arg : body.getArguments())
    if (TensorMetaAttr m = getTensorMeta(arg))
      nextStorageId = std::max(nextStorageId, m.getStorage() + 1);
  for (CallFunctionOp op : body.getOps<CallFunctionOp>())
    if (ArrayAttr metas = op.getResultMetaAttr())
      for (Attribute a : metas)
        if (auto m = dyn_cast_or_null<TensorMetaAttr>(a))
          nextStorageId = std::max(nextStorageId, m.getStorage() + 1);

  // The walk does not visit ops it created, so each root kind gets its own
  // walk, with only its pattern enabled: tagged ops, then the forward waits
  // they made, then the reloads.
  for (StringRef root : {kOffloadLabel, kReloadLabel, kPrefetchLabel}) {
    RewritePatternSet patterns(graph.getContext());
    populateCpuOffloadPatterns(patterns, *this);
    walkAndApplyPatterns(graph,
                         FrozenRewritePatternSet(std::move(patterns),
                                                 /*disabled=*/{},
                                                 /*enabled=*/{root.str()}));
  }
  return summary;
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
  return OffloadApplyState(graph, eligibility, model, options).run();
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

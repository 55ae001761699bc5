//===- OffloadEligibility.cpp - What may move to host ---------------------===//
//
// The safety rules of CPU offload that every decider (joint-tag-cpu-offload,
// the memory planner) and the applier (joint-apply-cpu-offload) share: which
// storages a forward op's saved results live in and whether each may move to
// host between its last forward use and its first backward use. Rules follow
// torchtitan graph_trainer's cpu_offload (candidates and storage safety).
//
//===----------------------------------------------------------------------===//

#include "joint/Analysis/OffloadEligibility.h"
#include "joint/Analysis/MemoryModel.h"
#include "joint/Dialect/AO/IR/AOOps.h"
#include "joint/Dialect/Joint/IR/OpSets.h"
#include "joint/Dialect/Joint/IR/TensorMeta.h"

using namespace mlir;
using namespace mlir::joint;

/// A collective or its wait (isCollective): its result is never moved to
/// host (graph_trainer: `_is_collective_or_wait`).
static bool isCollectiveOrWait(CallFunctionOp op) {
  return isCollective(op.getTarget());
}

static bool isRecomputeTagged(Operation *op, bool ignoreForwardPolicies) {
  auto call = dyn_cast_or_null<CallFunctionOp>(op);
  if (!call || !call.getPolicy() || (ignoreForwardPolicies && call.isForward()))
    return false;
  CheckpointPolicy p = *call.getPolicy();
  return p == CheckpointPolicy::must_recompute ||
         p == CheckpointPolicy::prefer_recompute;
}

static std::string nodeName(Operation *op) {
  if (auto call = dyn_cast<CallFunctionOp>(op))
    return call.getName().str();
  if (auto n = op->getAttrOfType<StringAttr>("name"))
    return n.str();
  return op->getName().getStringRef().str();
}

/// True for a device string naming host memory ("cpu", "cpu:0").
static bool isHostDevice(StringRef device) {
  return device == "cpu" || device.starts_with("cpu:");
}

/// Static sizes and strides when the layout is dense and non-overlapping
/// (a permutation of a contiguous layout, size-1 dims ignored); std::nullopt
/// otherwise or when a size or stride is symbolic.
static std::optional<std::pair<SmallVector<int64_t>, SmallVector<int64_t>>>
denseStaticLayout(TensorMetaAttr meta) {
  SmallVector<int64_t> sizes, strides;
  for (auto [n, s] : llvm::zip(meta.getSizes(), meta.getStrides())) {
    if (!n.isStatic() || !s.isStatic())
      return std::nullopt;
    sizes.push_back(n.hint);
    strides.push_back(s.hint);
  }
  SmallVector<unsigned> dims;
  for (unsigned i = 0; i < sizes.size(); ++i)
    if (sizes[i] != 1)
      dims.push_back(i);
  llvm::stable_sort(
      dims, [&](unsigned a, unsigned b) { return strides[a] < strides[b]; });
  int64_t expected = 1;
  for (unsigned d : dims) {
    if (strides[d] != expected)
      return std::nullopt;
    expected *= sizes[d];
  }
  return std::make_pair(sizes, strides);
}

//===----------------------------------------------------------------------===//
// Eligibility
//===----------------------------------------------------------------------===//

OffloadEligibility::OffloadEligibility(Operation *graph, AnalysisManager &am)
    : OffloadEligibility(cast<GraphOp>(graph),
                         am.getAnalysis<StorageAliasAnalysis, GraphOp>()) {}

OffloadEligibility::OffloadEligibility(GraphOp graph,
                                       const StorageAliasAnalysis &aliases)
    : graph(graph), aliases(aliases), unshard(graph) {
  Block &body = graph.getBody().front();
  for (BlockArgument arg : body.getArguments())
    if (TensorMetaAttr m = getTensorMeta(arg))
      accelerator |= !isHostDevice(m.getDevice());
  for (Operation &op : body) {
    if (accelerator)
      break;
    if (auto call = dyn_cast<CallFunctionOp>(op))
      if (ArrayAttr metas = call.getResultMetaAttr())
        for (Attribute a : metas)
          if (auto m = dyn_cast_or_null<TensorMetaAttr>(a))
            accelerator |= !isHostDevice(m.getDevice());
  }
}

bool OffloadEligibility::isOffloaded(const Storage *s) const {
  for (Value m : s->members)
    for (Operation *user : m.getUsers())
      if (isa<ao::OffloadOp>(user))
        return true;
  return false;
}

/// Why an op must not be offloaded whatever its storage; "" when none. A
/// random op (nondeterministic_seeded) is no refusal: offload copies the
/// bits it drew and never runs it again (only a recompute replays RNG), so
/// its result reloads bitwise equal, as graph_trainer's offload allows.
static std::string opRefusal(CallFunctionOp op,
                             const StorageAliasAnalysis &aliases,
                             const UnshardChain &unshard) {
  if (op.getTarget().starts_with("ao::"))
    return "is an ao transfer op";
  if (isCollectiveOrWait(op))
    return "is a collective or its wait: its result stays on the device";
  if (unshard.contains(op))
    return "unshards FSDP parameters: re-gathering replaces a copy";
  if (aliases.isWriter(op))
    return "writes its input in place";
  return "";
}

/// The base itself tagged for recompute does not stay saved; a view of it
/// tagged must_recompute is a user's demand to rebuild it from the device
/// base. A view tagged prefer_recompute (selective checkpointing) is
/// replayed on the reload instead, which is the same recompute.
static std::optional<std::string> recomputeRefusal(const Storage *s,
                                                   bool ignoreForwardPolicies) {
  for (Value m : s->members) {
    auto call = m.getDefiningOp<CallFunctionOp>();
    if (!call || !isRecomputeTagged(call, ignoreForwardPolicies))
      continue;
    if (m == s->owner || call.getPolicy() == CheckpointPolicy::must_recompute)
      return "its storage is shared with '" + nodeName(call) +
             "', which is tagged for recompute";
  }
  return std::nullopt;
}

std::optional<std::string>
OffloadEligibility::resolve(const Storage *s, OffloadTarget &t,
                            bool &checkedBeforeRecompute,
                            OffloadRefusal &kind) {
  checkedBeforeRecompute = true;
  kind = OffloadRefusal::Other; // but for the backward-read rule
  if (s->isGraphInput)
    return std::string("lives in a graph input's storage (parameter, buffer "
                       "or user input)");
  if (s->isGraphOutput)
    return std::string("is returned by the graph");
  if (s->isWritten())
    return "its storage is written in place by '" +
           nodeName(s->writers.front()) + "'";
  auto producer = s->owner.getDefiningOp<CallFunctionOp>();
  if (!producer || !producer.isForward())
    return std::string("its storage is not allocated by a forward op");
  if (std::string why = opRefusal(producer, aliases, unshard); !why.empty())
    return "its storage is allocated by '" + producer.getName().str() +
           "', which " + why;
  // The recompute rule (recomputeRefusal) comes here; it reads policy tags,
  // so it is checked per query, not memoized with the rules below.
  checkedBeforeRecompute = false;
  TensorMetaAttr meta = getTensorMeta(s->owner);
  if (!meta)
    return std::string("its base has no tensor facts (layout unknown)");
  if (accelerator && isHostDevice(meta.getDevice()))
    return "is already on the host (device '" + meta.getDevice().str() + "')";
  std::optional<int64_t> bytes = MemoryModel::computeStorageBytes(*s);
  std::optional<int64_t> baseBytes = getNumBytesHint(s->owner);
  if (!bytes || !baseBytes)
    return std::string("has a data-dependent size (no trace-time hint)");
  if (!meta.getOffset().isStatic() || meta.getOffset().hint != 0 ||
      *bytes != *baseBytes)
    return std::string("its base does not cover its whole storage (offset "
                       "or gaps)");
  t = OffloadTarget();
  t.storage = s;
  t.base = s->owner;
  t.producer = producer;
  t.bytes = *bytes;
  t.device = meta.getDevice();
  if (!meta.isContiguous()) {
    auto layout = denseStaticLayout(meta);
    if (!layout)
      return std::string("its base is neither contiguous nor a dense layout "
                         "with static strides");
    t.reloadSizes = layout->first;
    t.reloadStrides = layout->second;
  }

  // Backward readers, view replay set, last forward use, over the whole
  // storage (graph_trainer: `_view_chain`, `_collect_offload_info`).
  Value base = s->owner;
  t.lastForwardUse = producer;
  llvm::SetVector<Operation *> needed;
  for (Value m : s->members) {
    auto def = m.getDefiningOp<CallFunctionOp>();
    if (m != base && (!def || !def.isForward()))
      continue; // backward aliases are reached through their readers
    for (OpOperand &use : m.getUses()) {
      auto user = dyn_cast<CallFunctionOp>(use.getOwner());
      if (!user)
        continue; // ao ops and the terminator (no graph outputs here)
      // Size queries read metadata only; the applier makes backward ones
      // read the forward SymInt (readForwardSizes), so they are no readers.
      if (opSets.contains(OpSet::SizeQuery, user.getTargetAttr()))
        continue;
      if (user.isBackward()) {
        if (!t.firstBackwardUse || user->isBeforeInBlock(t.firstBackwardUse))
          t.firstBackwardUse = user;
        if (m == base) {
          t.directBackwardUses.push_back(&use);
          continue;
        }
        t.viewBackwardUses.push_back(&use);
        // Mark the view and its ancestors up to the base for replay.
        Operation *op = def;
        while (op && needed.insert(op)) {
          Value parent = aliases.getOperandIn(op, s);
          if (!parent)
            return "the backward reads view '" + nodeName(op) +
                   "', which cannot be rebuilt from the base";
          if (parent == base)
            break;
          auto pdef = parent.getDefiningOp<CallFunctionOp>();
          if (!pdef || !pdef.isForward())
            return "the backward reads view '" + nodeName(op) +
                   "', which cannot be rebuilt from the base";
          op = pdef;
        }
        continue;
      }
      if (t.lastForwardUse->isBeforeInBlock(user))
        t.lastForwardUse = user;
    }
  }
  if (!t.firstBackwardUse) {
    kind = OffloadRefusal::NotReadByBackward;
    return std::string("is not read by the backward");
  }
  kind = OffloadRefusal::Other;
  if (!t.lastForwardUse->isBeforeInBlock(t.firstBackwardUse))
    return "the forward still reads it ('" + nodeName(t.lastForwardUse) +
           "') after the backward starts";
  if (t.lastForwardUse == producer.getOperation()) {
    t.lastUseValue = base;
  } else {
    // The wait frees the storage, so it depends on a tensor result of the
    // last reader (one result of a multi-output op).
    for (Value r : t.lastForwardUse->getResults())
      if (isa<RankedTensorType>(r.getType())) {
        t.lastUseValue = r;
        break;
      }
    if (!t.lastUseValue)
      return "its last forward reader '" + nodeName(t.lastForwardUse) +
             "' has no tensor result to order the wait after";
  }
  t.replayOps.assign(needed.begin(), needed.end());
  llvm::sort(t.replayOps,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  kind = OffloadRefusal::None;
  return std::nullopt;
}

const OffloadTarget *OffloadEligibility::targetOf(const Storage *s,
                                                  std::string &why,
                                                  OffloadRefusal *kind) {
  std::unique_ptr<Resolved> &entry = cache[s];
  if (!entry) {
    entry = std::make_unique<Resolved>();
    if (std::optional<std::string> refusal = resolve(
            s, entry->target, entry->refusedBeforeRecompute, entry->kind))
      entry->refusal = *refusal;
  }
  // The rules in their order: those before the recompute rule, the
  // recompute rule (policy tags, read now), then the rest.
  OffloadRefusal k = entry->kind;
  if (!entry->refusal.empty() && entry->refusedBeforeRecompute) {
    why = entry->refusal;
  } else if (std::optional<std::string> r =
                 recomputeRefusal(s, ignoreForwardPolicies)) {
    why = *r;
    k = OffloadRefusal::RecomputeTagged;
  } else {
    why = entry->refusal;
  }
  if (kind)
    *kind = why.empty() ? OffloadRefusal::None : k;
  return why.empty() ? &entry->target : nullptr;
}

FailureOr<SmallVector<const OffloadTarget *>>
OffloadEligibility::check(CallFunctionOp op, std::string &why,
                          OffloadRefusal *kind) {
  OffloadRefusal k = OffloadRefusal::Other;
  auto refuse = [&](OffloadRefusal refusal) {
    if (kind)
      *kind = refusal;
    return failure();
  };
  if (!op.isForward()) {
    why = "is not a forward op";
    return refuse(OffloadRefusal::Other);
  }
  if (why = opRefusal(op, aliases, unshard); !why.empty())
    return refuse(OffloadRefusal::Other);
  SmallVector<const OffloadTarget *> targets;
  std::string notRead;
  for (OpResult r : op->getResults()) {
    const Storage *s = aliases.lookup(r);
    if (!s || !isa<RankedTensorType>(r.getType()) ||
        llvm::any_of(targets, [&](auto *t) { return t->storage == s; }))
      continue;
    std::string reason;
    if (const OffloadTarget *t = targetOf(s, reason, &k)) {
      targets.push_back(t);
      continue;
    }
    // A result the backward does not read is simply not saved.
    if (k == OffloadRefusal::NotReadByBackward) {
      notRead = reason;
      continue;
    }
    why = reason;
    return refuse(k);
  }
  if (targets.empty()) {
    why = notRead.empty() ? "has no tensor result" : notRead;
    return refuse(notRead.empty() ? OffloadRefusal::Other
                                  : OffloadRefusal::NotReadByBackward);
  }
  if (kind)
    *kind = OffloadRefusal::None;
  return targets;
}

LogicalResult mlir::joint::checkOffloadable(CallFunctionOp op,
                                            const StorageAliasAnalysis &aliases,
                                            std::string &why) {
  auto graph = op->getParentOfType<GraphOp>();
  if (!graph) {
    why = "is not inside a joint.graph";
    return failure();
  }
  OffloadEligibility eligibility(graph, aliases);
  return success(succeeded(eligibility.check(op, why)));
}

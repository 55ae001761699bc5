//===- CpuOffload.cpp - Offload saved activations to host -----*- C++ -*-===//
//
// joint-cpu-offload: selects forward activations produced inside `self_attn`
// modules that the backward reads, and moves them to host memory between
// their last forward use and their first backward use with the ao protocol
// (ao.offload -> forward ao.wait_tensor -> ao.reload -> backward
// ao.wait_tensor). The rules follow seeds/cpu_offload.py (torchtitan
// graph_trainer's cpu_offload): candidates and storage safety (section 1 of
// its docstring), forward placement (2), backward reload with view replay
// (3) and prefetch by attention region. Storage identity, owners and
// in-place writers come from StorageAliasAnalysis, so this pass and remat
// agree on aliasing. The analysis is global and done first; the rewrite only
// inserts ops next to ops recorded by the analysis. Everything is linear in
// the number of ops and uses, plus a sort of the candidates.
//
//===----------------------------------------------------------------------===//

#include "joint/Analysis/StorageAliasAnalysis.h"
#include "joint/Dialect/Joint/IR/TensorMeta.h"
#include "joint/Dialect/Joint/Transforms/ActivationCheckpoint.h"
#include "joint/Dialect/Joint/Transforms/Passes.h"
#include "joint/Support/Namespace.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include <cmath>

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTCPUOFFLOAD
#include "joint/Dialect/Joint/Transforms/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

/// Name of the module attribute the eager attention-swap path matches
/// (seed: `_attention_roots`, "modules literally named self_attn").
static constexpr StringLiteral kSelfAttn = "self_attn";

/// Graph attribute holding the exporter's model structure (docs/format.md).
static constexpr StringLiteral kModelAttr = "joint.model";

/// Bytes per GiB: budget-gb counts in 2^30 bytes (seed: `* (1024**3)`).
static constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

/// True when the last dotted component of `fqn` is `self_attn`.
static bool isSelfAttnName(StringRef fqn) {
  return fqn.rsplit('.').second == kSelfAttn || fqn == kSelfAttn;
}

/// Namespace of a `ns::op.overload` target.
static StringRef targetNamespace(CallFunctionOp op) {
  return op.getTarget().split("::").first;
}

/// Functional collectives and their waits (seed: `_is_collective_or_wait`,
/// both namespaces), plus the in-place `c10d` ops: a collective's result is
/// never moved to host.
static bool isCollectiveOrWait(CallFunctionOp op) {
  StringRef ns = targetNamespace(op);
  return ns == "_c10d_functional" || ns == "_c10d_functional_autograd" ||
         ns == "c10d";
}

/// True when the schema says result `i` of `op` aliases an argument (a view,
/// an in-place result or a `Tensor(a)[]` projection). Views alias their base,
/// so offloading them frees nothing (seed: `_can_offload`).
static bool isSchemaView(CallFunctionOp op, SchemaOp entry, unsigned i) {
  if (!entry)
    return false;
  ArrayAttr returns = entry.getReturns();
  if (returns.empty())
    return false;
  auto ret =
      cast<SchemaArgAttr>(returns[std::min<size_t>(i, returns.size() - 1)]);
  return !ret.getAlias().empty() || !ret.getAliasAfter().empty() ||
         ret.getWrite();
}

/// True when `policy` sends the op to recompute (torch CheckpointPolicy
/// MUST_RECOMPUTE / PREFER_RECOMPUTE): such a value does not stay saved.
static bool isRecomputeTagged(Operation *op) {
  auto aten = dyn_cast_or_null<CallFunctionOp>(op);
  if (!aten || !aten.getPolicy())
    return false;
  CheckpointPolicy p = *aten.getPolicy();
  return p == CheckpointPolicy::must_recompute ||
         p == CheckpointPolicy::prefer_recompute;
}

namespace {

//===----------------------------------------------------------------------===//
// Attention scope
//===----------------------------------------------------------------------===//

/// The `self_attn` modules of a graph and, per module stack, the innermost
/// one an op runs in (seed: `_attention_roots`, `_attention_root_of`).
/// Module-stack attributes are uniqued, so each distinct stack is resolved
/// once.
class AttentionScope {
public:
  /// Where an op sits relative to the attention modules.
  enum class Place {
    /// No module frame besides the root module (autograd accumulation and
    /// other unlabeled ops): neither opens nor closes a region.
    Unlabeled,
    /// In a module outside every attention root: closes a region.
    Outside,
    /// Inside an attention root.
    Inside,
  };

  /// Collects roots from `joint.model`'s `attention` list (entries whose FQN
  /// ends in `self_attn`) and from every module-stack frame named
  /// `self_attn`. Fails with a diagnostic on a malformed `joint.model`.
  LogicalResult build(GraphOp graph) {
    if (Attribute model = graph->getAttr(kModelAttr)) {
      auto dict = dyn_cast<DictionaryAttr>(model);
      if (!dict)
        return emitError(graph.getLoc())
               << "graph @" << graph.getSymName() << ": '" << kModelAttr
               << "' must be a dictionary (docs/format.md, model)";
      if (Attribute attention = dict.get("attention")) {
        auto list = dyn_cast<ArrayAttr>(attention);
        if (!list)
          return emitError(graph.getLoc())
                 << "graph @" << graph.getSymName() << ": '" << kModelAttr
                 << "' entry 'attention' must be a list of {fqn, class}";
        for (auto [i, entry] : llvm::enumerate(list)) {
          auto e = dyn_cast<DictionaryAttr>(entry);
          auto fqn = e ? e.getAs<StringAttr>("fqn") : StringAttr();
          if (!fqn)
            return emitError(graph.getLoc())
                   << "graph @" << graph.getSymName() << ": '" << kModelAttr
                   << "' attention entry " << i << " has no string 'fqn'";
          if (isSelfAttnName(fqn.getValue()))
            roots.insert(fqn.getValue());
          else
            otherAttention.push_back(fqn.getValue());
        }
      }
    }
    llvm::DenseSet<Attribute> seen;
    for (CallFunctionOp op : graph.getBody().getOps<CallFunctionOp>()) {
      ArrayAttr stack = op.getModuleStackAttr();
      if (!stack || !seen.insert(stack).second)
        continue;
      for (Attribute frame : stack) {
        StringRef fqn = cast<ModuleFrameAttr>(frame).getFqn();
        if (isSelfAttnName(fqn))
          roots.insert(fqn);
      }
    }
    return success();
  }

  bool empty() const { return roots.empty(); }
  /// Attention modules of `joint.model` not named `self_attn` (for the
  /// error message).
  ArrayRef<StringRef> getOtherAttention() const { return otherAttention; }

  /// The innermost attention root `op` runs in, or "" (with `place`).
  StringRef rootOf(CallFunctionOp op, Place *place = nullptr) {
    ArrayAttr stack = op.getModuleStackAttr();
    if (!stack) {
      if (place)
        *place = Place::Unlabeled;
      return {};
    }
    auto [it, inserted] = cache.try_emplace(stack);
    if (inserted)
      it->second = resolve(stack);
    if (place)
      *place = it->second.second;
    return it->second.first;
  }

private:
  /// The root `fqn` is, or is nested in; "" when none. Checks every dotted
  /// prefix, so the cost is the FQN's length.
  StringRef rootContaining(StringRef fqn) const {
    for (size_t dot = fqn.find('.'); dot != StringRef::npos;
         dot = fqn.find('.', dot + 1)) {
      auto it = roots.find(fqn.take_front(dot));
      if (it != roots.end())
        return it->first();
    }
    auto it = roots.find(fqn);
    return it != roots.end() ? it->first() : StringRef();
  }

  std::pair<StringRef, Place> resolve(ArrayAttr stack) const {
    Place place = Place::Unlabeled;
    // Innermost first (seed: `_stack_fqns`).
    for (Attribute frame : llvm::reverse(stack)) {
      StringRef fqn = cast<ModuleFrameAttr>(frame).getFqn();
      if (fqn.empty())
        continue;
      place = Place::Outside;
      if (StringRef root = rootContaining(fqn); !root.empty())
        return {root, Place::Inside};
    }
    return {StringRef(), place};
  }

  llvm::StringSet<> roots;
  SmallVector<StringRef> otherAttention;
  llvm::DenseMap<Attribute, std::pair<StringRef, Place>> cache;
};

//===----------------------------------------------------------------------===//
// Candidates
//===----------------------------------------------------------------------===//

/// One offloadable activation: the owner of a storage group and everything
/// the rewrite needs, resolved before any IR changes.
struct Candidate {
  Value value;
  CallFunctionOp producer;
  const Storage *storage = nullptr;
  int64_t bytes = 0;
  StringRef root;
  StringRef device;
  /// Last forward reader of the whole storage group (the producer when the
  /// forward never reads it) and the result of it the forward wait depends
  /// on.
  Operation *lastForwardUse = nullptr;
  Value lastUseValue;
  /// First backward reader of the group (owner or a view of it).
  Operation *firstBackwardUse = nullptr;
  /// Backward uses of the owner itself.
  SmallVector<OpOperand *> directBackwardUses;
  /// Backward uses of forward views; rewired to the replayed views.
  SmallVector<OpOperand *> viewBackwardUses;
  /// Forward view ops the backward reads (or whose descendants it reads), in
  /// forward order; replayed on the reloaded value.
  SmallVector<Operation *> replayOps;
};

/// Why a value of an in-scope forward op is not offloaded. Every rule of the
/// seed's `_can_offload` and `_collect_offload_info`; the pass only counts
/// them, tests observe the resulting IR.
class CandidateFinder {
public:
  CandidateFinder(const StorageAliasAnalysis &aliases,
                  const llvm::DenseMap<Operation *, unsigned> &position,
                  int64_t minBytes)
      : aliases(aliases), position(position), minBytes(minBytes) {}

  /// Fills `c` for result `result` of forward op `op`; false when a rule
  /// rejects it.
  bool find(CallFunctionOp op, OpResult result, Candidate &c) {
    auto type = dyn_cast<RankedTensorType>(result.getType());
    // Rank >= 2 (seed: `value.dim() < 2`).
    if (!type || type.getRank() < 2)
      return false;
    if (targetNamespace(op) == "ao" || isCollectiveOrWait(op))
      return false;
    if (isSchemaView(op, aliases.getOperatorTable().lookup(op),
                     result.getResultNumber()))
      return false;
    // Only the owner of a safe storage group (seed: `_StorageIndex`).
    const Storage *s = aliases.lookup(result);
    if (!s || s->owner != result || s->isGraphInput || s->isGraphOutput ||
        s->isWritten())
      return false;
    // Layout: contiguous, storage offset 0 (seed: `_is_contiguous`; C9).
    // Without facts the layout is unknown and the value is skipped.
    TensorMetaAttr meta = getTensorMeta(result);
    if (!meta || !meta.isContiguous() || !meta.getOffset().isStatic() ||
        meta.getOffset().hint != 0)
      return false;
    // Size from trace-time hints; unbacked sizes have none (seed:
    // `_hint_to_int`).
    std::optional<int64_t> bytes = getNumBytesHint(result);
    if (!bytes)
      return false;
    // Policy conflict (C11) and an existing offload: look at every alias.
    for (Value m : s->members) {
      if (isRecomputeTagged(m.getDefiningOp())) {
        ++numRecomputeTagged;
        return false;
      }
      for (Operation *user : m.getUsers())
        if (isa<ao::OffloadOp>(user))
          return false;
    }

    c = Candidate();
    c.value = result;
    c.producer = op;
    c.storage = s;
    c.bytes = *bytes;
    c.device = meta.getDevice();
    if (!resolveUses(c))
      return false;
    // Size last, so the remark can say how many values only min-bytes kept
    // on the device.
    if (*bytes < minBytes) {
      ++numBelowMinBytes;
      return false;
    }
    return true;
  }

  /// Values that passed every rule but min-bytes.
  unsigned numBelowMinBytes = 0;
  /// Owners kept on device because they or an alias are tagged for
  /// recompute (C11).
  unsigned numRecomputeTagged = 0;

private:
  unsigned pos(Operation *op) const { return position.lookup(op); }

  /// Backward readers, view replay set, last forward use (seed:
  /// `_view_chain`, `_collect_offload_info`), over the whole storage group.
  bool resolveUses(Candidate &c) {
    const Storage &s = *c.storage;
    Value owner = c.value;
    unsigned producerPos = pos(c.producer);
    unsigned lastPos = producerPos, firstBwdPos = UINT_MAX;
    c.lastForwardUse = c.producer;
    // Forward view ops with a backward reader below them.
    llvm::SetVector<Operation *> needed;
    for (Value m : s.members) {
      auto def = m.getDefiningOp<CallFunctionOp>();
      if (m != owner && (!def || !def.isForward()))
        continue; // backward aliases are reached through their readers
      for (OpOperand &use : m.getUses()) {
        auto user = dyn_cast<CallFunctionOp>(use.getOwner());
        if (!user)
          continue; // ao ops and the terminator (no graph outputs here)
        unsigned userPos = pos(user);
        if (user.isBackward()) {
          if (userPos < firstBwdPos) {
            firstBwdPos = userPos;
            c.firstBackwardUse = user;
          }
          if (m == owner) {
            c.directBackwardUses.push_back(&use);
          } else {
            c.viewBackwardUses.push_back(&use);
            if (!markReplayChain(def, owner, s, needed))
              return false;
          }
          continue;
        }
        if (userPos > lastPos) {
          lastPos = userPos;
          c.lastForwardUse = user;
        }
      }
    }
    // Not saved for backward.
    if (!c.firstBackwardUse)
      return false;
    // The forward wait must precede the reload.
    if (lastPos >= firstBwdPos)
      return false;
    if (c.lastForwardUse == c.producer.getOperation()) {
      c.lastUseValue = owner;
    } else {
      // The wait frees the storage, so it depends on a tensor result of the
      // last reader (a specific result of a multi-output op, C10). A reader
      // without tensor results gives no edge to pin: skip (seed).
      for (Value r : c.lastForwardUse->getResults())
        if (isa<RankedTensorType>(r.getType())) {
          c.lastUseValue = r;
          break;
        }
      if (!c.lastUseValue)
        return false;
    }
    c.replayOps.assign(needed.begin(), needed.end());
    llvm::sort(c.replayOps,
               [&](Operation *a, Operation *b) { return pos(a) < pos(b); });
    return true;
  }

  /// Marks `view` and its view ancestors up to `owner` for replay. Fails
  /// when a view cannot be rebuilt from the owner (no operand in the group).
  bool markReplayChain(CallFunctionOp view, Value owner, const Storage &s,
                       llvm::SetVector<Operation *> &needed) {
    Operation *op = view;
    while (op && needed.insert(op)) {
      Value parent;
      for (Value operand : op->getOperands())
        if (aliases.lookup(operand) == &s) {
          parent = operand;
          break;
        }
      if (!parent)
        return false;
      if (parent == owner)
        return true;
      auto def = parent.getDefiningOp<CallFunctionOp>();
      if (!def || !def.isForward())
        return false;
      op = def;
    }
    return true; // already marked with its ancestors
  }

  const StorageAliasAnalysis &aliases;
  const llvm::DenseMap<Operation *, unsigned> &position;
  int64_t minBytes;
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct CpuOffload : joint::impl::JointCpuOffloadBase<CpuOffload> {
  using JointCpuOffloadBase::JointCpuOffloadBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkOptions(module)))
      return signalPassFailure();
    for (GraphOp graph : module.getOps<GraphOp>())
      if (failed(runOnGraph(graph)))
        return signalPassFailure();
  }

private:
  /// Option values the command-line parser accepts but the pass does not.
  LogicalResult checkOptions(ModuleOp module) {
    if (budgetGB.hasValue() && budgetGiB.hasValue())
      return emitError(module.getLoc())
             << "joint-cpu-offload: give budget-gib or its old spelling "
                "budget-gb, not both";
    double budget = budgetGB.hasValue() ? budgetGB : budgetGiB;
    StringRef budgetName = budgetGB.hasValue() ? "budget-gb" : "budget-gib";
    if (!std::isfinite(budget) || budget < 0)
      return emitError(module.getLoc())
             << "joint-cpu-offload: " << budgetName
             << " must be a finite number of GiB >= 0 (0 means no limit), got "
             << llvm::formatv("{0}", budget).str();
    if (minBytes < 0)
      return emitError(module.getLoc())
             << "joint-cpu-offload: min-bytes must be >= 0, got "
             << static_cast<int64_t>(minBytes);
    return success();
  }

  LogicalResult runOnGraph(GraphOp graph);
  unsigned prefetch(ArrayRef<Operation *> backwardOps,
                    ArrayRef<std::pair<Candidate *, ao::ReloadOp>> reloads,
                    AttentionScope &scope,
                    const llvm::DenseMap<Operation *, unsigned> &position);
};

} // namespace

/// Largest first while the running total fits the budget; a candidate that
/// does not fit is skipped and smaller ones are still tried (seed:
/// `_select_within_budget`). `budgetBytes` 0 means no limit.
static SmallVector<Candidate *>
selectWithinBudget(MutableArrayRef<Candidate> candidates, double budgetBytes,
                   int64_t &totalBytes) {
  SmallVector<Candidate *> order;
  for (Candidate &c : candidates)
    order.push_back(&c);
  // Stable: equal sizes keep program order, so every rank decides the same.
  llvm::stable_sort(
      order, [](Candidate *a, Candidate *b) { return a->bytes > b->bytes; });
  SmallVector<Candidate *> selected;
  totalBytes = 0;
  for (Candidate *c : order) {
    if (budgetBytes > 0 &&
        static_cast<double>(totalBytes) + static_cast<double>(c->bytes) >
            budgetBytes)
      continue;
    selected.push_back(c);
    totalBytes += c->bytes;
  }
  return selected;
}

/// `meta` with storage id `id`.
static TensorMetaAttr withStorage(TensorMetaAttr meta, int64_t id) {
  return TensorMetaAttr::get(meta.getContext(), meta.getSizes(),
                             meta.getStrides(), meta.getOffset(),
                             meta.getDevice(), id);
}

/// Rewrites the storage id `from` to `to` in `op`'s result facts.
static void renumberStorage(CallFunctionOp op, int64_t from, int64_t to) {
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
    op.setResultMetaAttr(ArrayAttr::get(op.getContext(), updated));
}

/// A node name not used yet: `base`, else `base_1`, `base_2`, ...
static StringAttr uniqueName(MLIRContext *ctx, Namespace &used,
                             const Twine &base) {
  return StringAttr::get(ctx, used.newName(base));
}

LogicalResult CpuOffload::runOnGraph(GraphOp graph) {
  MLIRContext *ctx = graph.getContext();
  AttentionScope attention;
  if (failed(attention.build(graph)))
    return failure();
  if (attention.empty()) {
    // Not emitOpError: the note would print the whole graph.
    InFlightDiagnostic d =
        emitError(graph.getLoc())
        << "joint-cpu-offload scope=attention: graph @" << graph.getSymName()
        << " has no self_attn module (neither '" << kModelAttr
        << "' attention nor any op's module stack names "
           "a module 'self_attn')";
    if (!attention.getOtherAttention().empty())
      d << "; attention modules under other names ("
        << attention.getOtherAttention().front()
        << ", ...) are not in this scope";
    return failure();
  }

  // A backward size query reads the forward SymInt, so no activation is
  // offloaded and reloaded only for its size (C16).
  readForwardSizes(graph);
  Block &body = graph.getBody().front();
  const StorageAliasAnalysis &aliases =
      getChildAnalysis<StorageAliasAnalysis>(graph);

  // Program positions of the original ops; the analysis and the prefetch
  // anchors refer only to these.
  llvm::DenseMap<Operation *, unsigned> position;
  SmallVector<Operation *> backwardOps;
  Namespace usedNames;
  usedNames.addGraph(graph);
  int64_t nextStorageId = 0;
  auto noteStorage = [&](TensorMetaAttr m) {
    if (m)
      nextStorageId = std::max(nextStorageId, m.getStorage() + 1);
  };
  for (BlockArgument arg : body.getArguments())
    noteStorage(getTensorMeta(arg));
  for (auto [i, op] : llvm::enumerate(body)) {
    position[&op] = i;
    auto aten = dyn_cast<CallFunctionOp>(op);
    if (!aten)
      continue;
    if (ArrayAttr metas = aten.getResultMetaAttr())
      for (Attribute m : metas)
        noteStorage(dyn_cast_or_null<TensorMetaAttr>(m));
    if (aten.isBackward())
      backwardOps.push_back(aten);
  }

  // 1. Candidates: forward ops in scope, every rule of the seed.
  CandidateFinder finder(aliases, position, minBytes);
  std::vector<Candidate> candidates;
  for (CallFunctionOp op : body.getOps<CallFunctionOp>()) {
    if (!op.isForward())
      continue;
    StringRef root = attention.rootOf(op);
    if (root.empty())
      continue;
    for (OpResult r : op->getResults()) {
      Candidate c;
      if (!finder.find(op, r, c))
        continue;
      c.root = root;
      candidates.push_back(std::move(c));
    }
  }

  // 2. Selection within the host budget.
  int64_t totalBytes = 0;
  SmallVector<Candidate *> selected = selectWithinBudget(
      candidates, (budgetGB.hasValue() ? budgetGB : budgetGiB) * kBytesPerGiB,
      totalBytes);

  // 3. Rewrite: forward offload + wait, backward reload + wait, view replay.
  OpBuilder b(ctx);
  SmallVector<std::pair<Candidate *, ao::ReloadOp>> reloads;
  for (Candidate *c : selected) {
    Value value = c->value;
    Type type = value.getType();
    Location loc = c->producer.getLoc();

    b.setInsertionPointAfter(c->producer);
    auto offload = ao::OffloadOp::create(b, loc, type, value, StringAttr());
    if (c->lastForwardUse == c->producer.getOperation())
      b.setInsertionPointAfter(offload);
    else
      b.setInsertionPointAfter(c->lastForwardUse);
    auto forwardWait = ao::WaitTensorOp::create(b, loc, type, offload, value,
                                                c->lastUseValue, StringAttr());

    b.setInsertionPoint(c->firstBackwardUse);
    auto reload = ao::ReloadOp::create(b, loc, type, forwardWait, c->device,
                                       ArrayAttr(), ArrayAttr(), StringAttr());
    // The host copy stays alive until the copy back has finished (torch:
    // gpu = ao.wait_tensor(gpu, keepalive=cpu)).
    auto backwardWait = ao::WaitTensorOp::create(
        b, loc, type, reload, forwardWait, Value(), StringAttr());
    for (OpOperand *use : c->directBackwardUses)
      use->set(backwardWait);

    // Backward aliases now live in the reloaded allocation, not in the
    // forward storage that the forward wait releases.
    int64_t oldId = c->storage->id, newId = nextStorageId++;
    for (Value m : c->storage->members)
      if (auto def = m.getDefiningOp<CallFunctionOp>(); def && def.isBackward())
        renumberStorage(def, oldId, newId);

    // Replay the forward views the backward reads, in forward order.
    IRMapping mapping;
    mapping.map(value, backwardWait.getResult());
    for (Operation *view : c->replayOps) {
      auto replay = cast<CallFunctionOp>(b.clone(*view, mapping));
      auto original = cast<CallFunctionOp>(view);
      replay.setPhase(Phase::backward);
      replay.removePolicyAttr();
      replay.setNameAttr(
          uniqueName(ctx, usedNames, original.getName() + "_reload"));
      if (ArrayAttr names = original.getResultNamesAttr()) {
        SmallVector<Attribute> renamed;
        for (Attribute n : names)
          renamed.push_back(uniqueName(
              ctx, usedNames, cast<StringAttr>(n).getValue() + "_reload"));
        replay.setResultNamesAttr(ArrayAttr::get(ctx, renamed));
      }
      renumberStorage(replay, oldId, newId);
    }
    for (OpOperand *use : c->viewBackwardUses)
      use->set(mapping.lookup(use->get()));
    reloads.emplace_back(c, reload);
  }

  // 4. Prefetch by attention region.
  unsigned moved = 0;
  if (prefetchRegions > 0 && !reloads.empty())
    moved = prefetch(backwardOps, reloads, attention, position);

  numOffloaded += selected.size();
  numOffloadedBytes += totalBytes;
  numPrefetched += moved;
  InFlightDiagnostic remark = emitRemark(graph.getLoc());
  remark << "joint-cpu-offload: offloaded " << selected.size() << " of "
         << candidates.size() << " attention activation(s), " << totalBytes
         << " bytes, prefetched " << moved << " reload(s)";
  if (finder.numBelowMinBytes)
    remark << "; " << finder.numBelowMinBytes
           << " more below min-bytes=" << static_cast<int64_t>(minBytes);
  if (finder.numRecomputeTagged)
    remark << "; " << finder.numRecomputeTagged
           << " tagged for recompute (never offloaded)";
  return success();
}

/// Moves each reload `prefetchRegions` attention regions earlier (seed:
/// `_prefetch_reloads`). A region is a run of backward ops inside one
/// attention root; it opens when the root changes and is closed by an op of
/// a module outside attention, while unlabeled ops (no module frame besides
/// the root module) are transparent. Regions are found by position, so a
/// module reused in several blocks maps each reload to its own region: the
/// latest region of its root that starts at or before the reload. A reload
/// never moves above its forward wait. Returns the number of moved reloads.
unsigned
CpuOffload::prefetch(ArrayRef<Operation *> backwardOps,
                     ArrayRef<std::pair<Candidate *, ao::ReloadOp>> reloads,
                     AttentionScope &scope,
                     const llvm::DenseMap<Operation *, unsigned> &position) {
  SmallVector<Operation *> anchors;
  llvm::StringMap<SmallVector<unsigned>> anchorsOfRoot;
  StringRef previous;
  for (Operation *op : backwardOps) {
    AttentionScope::Place place;
    StringRef root = scope.rootOf(cast<CallFunctionOp>(op), &place);
    if (place == AttentionScope::Place::Outside) {
      previous = StringRef();
      continue;
    }
    if (place != AttentionScope::Place::Inside || root == previous)
      continue;
    anchorsOfRoot[root].push_back(anchors.size());
    anchors.push_back(op);
    previous = root;
  }

  unsigned moved = 0;
  for (auto [c, reload] : reloads) {
    auto it = anchorsOfRoot.find(c->root);
    if (it == anchorsOfRoot.end())
      continue;
    unsigned reloadPos = position.lookup(c->firstBackwardUse);
    unsigned waitPos = position.lookup(c->lastForwardUse);
    // Its own region: the latest of its root at or before the reload, else
    // the first one (binary search: a root's regions are in program order).
    ArrayRef<unsigned> indices = it->second;
    auto after = llvm::partition_point(indices, [&](unsigned i) {
      return position.lookup(anchors[i]) <= reloadPos;
    });
    unsigned own = after == indices.begin() ? indices.front() : *(after - 1);
    unsigned target = own > prefetchRegions ? own - prefetchRegions : 0;
    while (target < own && position.lookup(anchors[target]) <= waitPos)
      ++target;
    Operation *anchor = anchors[target];
    unsigned anchorPos = position.lookup(anchor);
    if (anchorPos >= reloadPos || anchorPos <= waitPos)
      continue;
    reload->moveBefore(anchor);
    ++moved;
  }
  return moved;
}

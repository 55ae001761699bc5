//===- CheckpointScope.cpp - Ops checkpointing may tag --------------------===//
//
// Resolves the recompute scope: blocks from
// ModelStructure (the exporter's block containers in `joint.model`, else
// module-stack paths `<container>.<int>`); layer selection in
// flattened block order (hyper_parallel _selected_checkpoint_layer_fqns);
// region patterns narrowing the selected blocks to their outermost matching
// modules and exclude patterns pulling subtrees back out (the model-adapter
// safe regions). All work is per distinct module FQN or module-stack
// attribute, not per op. Errors name the pass and the option: those about
// the options alone have no location (the driver prints them as its own),
// those about what the options select in the graph are on the graph.
//
//===----------------------------------------------------------------------===//

#include "joint/Analysis/CheckpointScope.h"
#include "joint/Analysis/ModelStructure.h"
#include "joint/Support/NamedDiagnostics.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/GlobPattern.h"

using namespace mlir;
using namespace mlir::joint;

/// The pass that resolves the scope, first in each of its errors.
static constexpr llvm::StringLiteral kPass = "joint-tag-recompute-policy: ";

StringRef CheckpointScope::findContaining(StringRef fqn,
                                          const llvm::StringSet<> &set) {
  return ModelStructure::findContaining(fqn, set);
}

FailureOr<CheckpointScope>
CheckpointScope::resolve(GraphOp graph, const CheckpointOptions &options) {
  CheckpointScope scope;
  Location commandLine = UnknownLoc::get(graph.getContext());
  if (options.layerCount && *options.layerCount < 0)
    return emitError(commandLine)
           << kPass << "layer-count must be >= 0, got " << *options.layerCount;
  if (options.layerCount && !options.layerIndices.empty())
    return emitError(commandLine)
           << kPass
           << "layer-count and layer-indices are mutually "
              "exclusive; give one of them";

  // Blocks from ModelStructure: joint.model (verified by the dialect), else
  // module-stack paths `<container>.<int>`.
  ModelStructure model(graph.getOperation());
  scope.blocks.assign(model.getBlocks().begin(), model.getBlocks().end());
  scope.fallback = model.getBlockSource() != "model";
  if (scope.blocks.empty())
    return emitError(graph.getLoc())
           << "activation checkpointing found no transformer blocks: the "
              "graph has no 'joint.model' block_containers and no module "
              "stack path of the form '<container>.<int>'; export the model "
              "with python -m joint_mlir.export (it records block containers) "
              "or set joint.model = {block_containers = [{blocks = "
              "[\"<block fqn>\", ...]}]} on the joint.graph";
  for (const std::string &b : scope.blocks)
    scope.blockSet.insert(b);

  // Layer selection, in flattened block order.
  size_t numBlocks = scope.blocks.size();
  std::vector<StringRef> selected;
  if (options.layerCount) {
    size_t n = std::min<size_t>(*options.layerCount, numBlocks);
    for (size_t i = 0; i < n; ++i)
      selected.push_back(scope.blocks[i]);
  } else if (!options.layerIndices.empty()) {
    llvm::SmallDenseSet<int64_t> seen;
    for (int64_t i : options.layerIndices) {
      if (i < 0 || static_cast<size_t>(i) >= numBlocks)
        return emitError(graph.getLoc())
               << kPass << "layer-indices: index " << i
               << " is out of range; the largest valid index is "
               << numBlocks - 1 << " (" << numBlocks << " blocks)";
      if (seen.insert(i).second)
        selected.push_back(scope.blocks[i]);
    }
  } else {
    selected.assign(scope.blocks.begin(), scope.blocks.end());
  }
  scope.numSelected = selected.size();
  if (selected.empty())
    return scope;

  llvm::StringSet<> selectedSet;
  for (StringRef b : selected)
    selectedSet.insert(b);
  if (options.regionPatterns.empty() && options.excludePatterns.empty()) {
    scope.regions = std::move(selectedSet);
    return scope;
  }

  // Module FQNs inside the selected blocks, in first-appearance order.
  std::vector<std::string> modules(selected.begin(), selected.end());
  llvm::StringSet<> moduleSet(selectedSet);
  ModelStructure::forEachForwardModule(graph, [&](StringRef fqn) {
    if (!findContaining(fqn, selectedSet).empty() &&
        moduleSet.insert(fqn).second)
      modules.push_back(fqn.str());
  });

  auto compile = [&](StringRef option,
                     StringRef pattern) -> FailureOr<llvm::GlobPattern> {
    llvm::Expected<llvm::GlobPattern> glob = llvm::GlobPattern::create(pattern);
    if (!glob) {
      std::string msg = llvm::toString(glob.takeError());
      return emitError(commandLine)
             << kPass << option << ": invalid glob pattern '" << pattern
             << "': " << msg;
    }
    return std::move(*glob);
  };

  // Region roots: the outermost modules matching a region pattern.
  if (options.regionPatterns.empty()) {
    scope.regions = selectedSet;
  } else {
    llvm::StringSet<> matched;
    for (const std::string &p : options.regionPatterns) {
      FailureOr<llvm::GlobPattern> glob = compile("region-patterns", p);
      if (failed(glob))
        return failure();
      bool any = false;
      for (const std::string &m : modules)
        if (glob->match(m)) {
          matched.insert(m);
          any = true;
        }
      if (!any)
        return emitError(graph.getLoc())
               << kPass << "region-patterns: '" << p
               << "' matches no module inside the " << selected.size()
               << " selected blocks (first: '" << selected.front() << "')";
    }
    for (const auto &m : matched) {
      StringRef fqn = m.getKey();
      size_t dot = fqn.rfind('.');
      if (dot == StringRef::npos ||
          findContaining(fqn.take_front(dot), matched).empty())
        scope.regions.insert(fqn);
    }
  }

  // Exclusions: modules inside the regions matching an exclude pattern.
  for (const std::string &p : options.excludePatterns) {
    FailureOr<llvm::GlobPattern> glob = compile("exclude-patterns", p);
    if (failed(glob))
      return failure();
    bool any = false;
    for (const std::string &m : modules) {
      if (!glob->match(m) || findContaining(m, scope.regions).empty())
        continue;
      if (scope.regions.contains(m))
        return emitError(graph.getLoc()) << kPass << "exclude-patterns: '" << p
                                         << "' matches the region root '" << m
                                         << "'; a region cannot exclude itself";
      scope.excludes.insert(m);
      any = true;
    }
    if (!any)
      return emitError(graph.getLoc())
             << kPass << "exclude-patterns: '" << p
             << "' matches no module inside the selected regions";
  }
  return scope;
}

bool CheckpointScope::isEligible(CallFunctionOp op) {
  ArrayAttr stack = op.getModuleStackAttr();
  if (!stack || regions.empty())
    return false;
  auto [it, inserted] = eligibleCache.try_emplace(stack, false);
  if (!inserted)
    return it->second;
  bool inRegion = false, excluded = false;
  for (Attribute f : llvm::reverse(stack)) {
    StringRef fqn = cast<ModuleFrameAttr>(f).getFqn();
    excluded |= !findContaining(fqn, excludes).empty();
    inRegion |= !findContaining(fqn, regions).empty();
  }
  return it->second = inRegion && !excluded;
}

void CheckpointScope::assignUnits(GraphOp graph) {
  struct BlockState {
    llvm::StringMap<unsigned> children;
    llvm::BitVector seen;
    unsigned numSeen = 0;
    int lastChild = -1;
    unsigned unit = 0;
  };
  llvm::StringMap<BlockState> states;
  // Per module stack: the containing block and the index of its direct
  // child (-1: the op runs in the block's own forward). Copied into `ops`:
  // pointers into the map would dangle when it grows.
  struct Where {
    StringRef block;
    int childIndex = -1;
  };
  llvm::DenseMap<Attribute, Where> where;
  SmallVector<std::pair<CallFunctionOp, Where>> ops;
  for (CallFunctionOp op : graph.getBody().front().getOps<CallFunctionOp>()) {
    ArrayAttr stack = op.getModuleStackAttr();
    if (!op.isForward() || !stack)
      continue;
    auto it = where.find(stack);
    if (it == where.end()) {
      Where w;
      StringRef innermost;
      for (Attribute f : llvm::reverse(stack)) {
        StringRef fqn = cast<ModuleFrameAttr>(f).getFqn();
        w.block = findContaining(fqn, blockSet);
        if (!w.block.empty()) {
          innermost = fqn;
          break;
        }
      }
      if (!w.block.empty() && innermost.size() > w.block.size()) {
        std::string child =
            (w.block + "." +
             innermost.drop_front(w.block.size() + 1).split('.').first)
                .str();
        BlockState &state = states[w.block];
        w.childIndex = state.children.try_emplace(child, state.children.size())
                           .first->second;
      }
      it = where.try_emplace(stack, w).first;
    }
    if (!it->second.block.empty())
      ops.emplace_back(op, it->second);
  }
  // A block is traversed again when, after every direct child of it ran,
  // its first child runs anew (a shared block called twice). A child reused
  // inside one traversal (A B A C) does not start a new one.
  unsigned nextUnit = 1;
  units.clear();
  for (auto &[op, w] : ops) {
    BlockState &state = states[w.block];
    if (w.childIndex >= 0) {
      if (state.seen.empty())
        state.seen.resize(state.children.size());
      if (w.childIndex == 0 && state.lastChild > 0 &&
          state.numSeen == state.children.size()) {
        state.unit = 0;
        state.seen.reset();
        state.numSeen = 0;
      }
      if (!state.seen.test(w.childIndex)) {
        state.seen.set(w.childIndex);
        ++state.numSeen;
      }
      state.lastChild = w.childIndex;
    }
    if (!state.unit)
      state.unit = nextUnit++;
    units[op] = state.unit;
  }
}

//===----------------------------------------------------------------------===//
// Mutation facts
//===----------------------------------------------------------------------===//

MutationFacts::MutationFacts(const StorageAliasAnalysis &aliases)
    : aliases(aliases) {
  for (const Storage *s : aliases.getStorages())
    writers.insert(s->writers.begin(), s->writers.end());
}

Operation *MutationFacts::getWriterOf(Value value) const {
  const Storage *s = aliases.lookup(value);
  return s && s->isWritten() ? s->writers.front() : nullptr;
}

static std::string nodeName(Operation *op) {
  if (auto aten = dyn_cast<CallFunctionOp>(op))
    return aten.getName().str();
  return op->getName().getStringRef().str();
}

LogicalResult mlir::joint::verifyRecomputable(CallFunctionOp op,
                                              StringRef request,
                                              const MutationFacts &mutations,
                                              bool replayRandom) {
  auto fail = [&]() {
    InFlightDiagnostic d = op.emitOpError();
    markNamed(d, op.getName())
        << "node '" << op.getName() << "' (" << op.getTarget() << ") has "
        << request << " but ";
    return d;
  };
  if (!replayRandom && mutations.aliases.getSchemaTable().isRandom(op))
    return fail() << "is a random op (nondeterministic_seeded): its result "
                     "stays saved unless joint-tag-recompute-policy (or "
                     "joint-activation-checkpoint) runs with "
                     "replay-random=true, which lets joint-remat replay it";
  if (mutations.isWriter(op))
    return fail() << "writes its input in place: the mutation must run "
                     "exactly once, in forward";
  for (Value r : op->getResults())
    if (Operation *writer = mutations.getWriterOf(r))
      return fail() << "its result shares storage with a value mutated in "
                       "place by '"
                    << nodeName(writer)
                    << "': a recomputed copy would not hold the value "
                       "forward saw";
  return success();
}

//===- FuseParallelLoops.cpp - Adjacent parallel loops into one kernel ----===//
//
// Implements `joint-gpu-fuse-parallel-loops`: two adjacent `scf.parallel`
// nests on buffers with the same iterations (dimensions of one iteration
// aside) become one, the second's body after the first's in each iteration,
// so they become one kernel. Legal when every buffer one writes and the other
// accesses is accessed by both only at the iteration's own element (the same
// memref, seen through reshapes of unit dimensions, indexed by all the loop's
// induction variables in the same way), or only through disjoint static
// subviews: a fill and the reduction into its buffer, a reduction and the
// elementwise op that reads its result, the two halves of a cat. The step's
// peak is kept: the live bytes while the two run as one (LiveBytes below)
// never exceed the most live at any op before.
//
//===----------------------------------------------------------------------===//

#include "joint/Conversion/LowerToCUDA/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTGPUFUSEPARALLELLOOPS
#include "joint/Conversion/LowerToCUDA/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;

/// The allocation or argument `memref` is a view of.
static Value getRoot(Value memref) {
  while (auto view = memref.getDefiningOp<ViewLikeOpInterface>())
    memref = view.getViewSource();
  return memref;
}

/// Ops between two fused loops that move before the first: no kernel, no
/// side effect but an allocation.
static bool isMovable(Operation *op) {
  return isa<arith::ConstantOp, memref::AllocOp, memref::DimOp,
             ViewLikeOpInterface>(op) &&
         op->getNumRegions() == 0;
}

namespace {
/// One access of a loop nest to a buffer defined outside it, seen through
/// reshapes that only add or drop unit dimensions. An index is a constant
/// (>= 0) or the loop's k-th induction variable of more than one iteration
/// (-1 - k; one of a single iteration is the constant 0). `indices` is
/// empty when the access is not such a load or store.
struct Access {
  Value memref;
  bool write;
  SmallVector<int64_t> indices;
};

/// The accesses of `loop` per root buffer.
using Accesses = llvm::MapVector<Value, SmallVector<Access>>;
} // namespace

/// The trip counts of `loop`'s dimensions (ShapedType::kDynamic when not
/// constant), or none unless every dimension runs from 0 by 1.
static std::optional<SmallVector<int64_t>> getTripCounts(scf::ParallelOp loop) {
  SmallVector<int64_t> trips;
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    if (!isConstantIntValue(lb, 0) || !isConstantIntValue(step, 1))
      return std::nullopt;
    trips.push_back(getConstantIntValue(ub).value_or(ShapedType::kDynamic));
  }
  return trips;
}

/// True when `first` and `second` run the same iterations once their
/// dimensions of one iteration are dropped: the other upper bounds agree in
/// order (the same value or the same constant).
static bool haveSameIterations(scf::ParallelOp first, scf::ParallelOp second) {
  std::optional<SmallVector<int64_t>> a = getTripCounts(first);
  std::optional<SmallVector<int64_t>> b = getTripCounts(second);
  if (!a || !b)
    return false;
  auto wide = [](scf::ParallelOp loop, ArrayRef<int64_t> trips) {
    SmallVector<std::pair<int64_t, Value>> dims;
    for (auto [trip, ub] : llvm::zip(trips, loop.getUpperBound()))
      if (trip != 1)
        dims.push_back({trip, trip == ShapedType::kDynamic ? ub : Value()});
    return dims;
  };
  return wide(first, *a) == wide(second, *b);
}

/// `index` of an access in `loop` as above; none when neither.
static std::optional<int64_t>
canonicalIndex(scf::ParallelOp loop, ArrayRef<int64_t> trips, Value index) {
  int64_t ordinal = 0;
  for (auto [pos, iv] : llvm::enumerate(loop.getInductionVars())) {
    if (iv == index)
      return trips[pos] == 1 ? 0 : -1 - ordinal;
    ordinal += trips[pos] != 1;
  }
  return getConstantIntValue(index);
}

/// The indices of a reshape's source for `indices` of its result, when
/// every reassociation group holds at most one dimension of size other
/// than 1 (then the source index of a group is that dimension's).
static std::optional<SmallVector<int64_t>>
throughUnitReshape(ArrayRef<ReassociationIndices> groups,
                   ArrayRef<int64_t> expandedShape, ArrayRef<int64_t> indices,
                   bool toExpanded) {
  SmallVector<int64_t> result;
  for (auto [g, group] : llvm::enumerate(groups)) {
    int64_t wide = -1;
    for (int64_t d : group)
      if (expandedShape[d] != 1) {
        if (wide >= 0)
          return std::nullopt;
        wide = d;
      }
    if (toExpanded) {
      for (int64_t d : group)
        result.push_back(d == wide ? indices[g] : 0);
      continue;
    }
    result.push_back(wide >= 0 ? indices[wide] : 0);
  }
  return result;
}

/// Moves `access` from views that only add or drop unit dimensions to
/// their source.
static void normalize(Access &access) {
  while (!access.indices.empty()) {
    std::optional<SmallVector<int64_t>> indices;
    Value source;
    if (auto expand = access.memref.getDefiningOp<memref::ExpandShapeOp>()) {
      indices = throughUnitReshape(expand.getReassociationIndices(),
                                   expand.getResultType().getShape(),
                                   access.indices, /*toExpanded=*/false);
      source = expand.getSrc();
    } else if (auto collapse =
                   access.memref.getDefiningOp<memref::CollapseShapeOp>()) {
      indices = throughUnitReshape(collapse.getReassociationIndices(),
                                   collapse.getSrcType().getShape(),
                                   access.indices, /*toExpanded=*/true);
      source = collapse.getSrc();
    }
    if (!indices)
      return;
    access.memref = source;
    access.indices = std::move(*indices);
  }
}

static Accesses collectAccesses(scf::ParallelOp loop) {
  Accesses accesses;
  std::optional<SmallVector<int64_t>> trips = getTripCounts(loop);
  loop.getBody()->walk([&](Operation *op) {
    for (Value operand : op->getOperands()) {
      if (!isa<MemRefType>(operand.getType()))
        continue;
      if (loop->isAncestor(operand.getParentBlock()->getParentOp())) {
        // A buffer reached inside the loop: private when allocated on the
        // stack there; otherwise an access at unknown elements of its root.
        Value root = getRoot(operand);
        if (loop->isAncestor(root.getParentBlock()->getParentOp()) &&
            root.getDefiningOp<memref::AllocaOp>())
          continue;
        accesses[root].push_back(
            {operand, !isa<memref::LoadOp, memref::DimOp>(op), {}});
        continue;
      }
      Access access{operand, !isa<memref::LoadOp>(op), {}};
      ValueRange indices;
      if (auto load = dyn_cast<memref::LoadOp>(op))
        indices = load.getIndices();
      else if (auto store = dyn_cast<memref::StoreOp>(op);
               store && store.getMemRef() == operand)
        indices = store.getIndices();
      else
        access.write = true; // anything else may write
      bool known = trips && isa<memref::LoadOp, memref::StoreOp>(op);
      for (Value index : indices) {
        std::optional<int64_t> canonical =
            known ? canonicalIndex(loop, *trips, index) : std::nullopt;
        if (!canonical) {
          known = false;
          break;
        }
        access.indices.push_back(*canonical);
      }
      if (!known)
        access.indices.clear();
      normalize(access);
      accesses[getRoot(operand)].push_back(std::move(access));
    }
  });
  return accesses;
}

/// True when `accesses` all touch one element per iteration, the same one:
/// the same memref and index list, each of the `numWide` induction
/// variables of more than one iteration in it.
static bool isSameElementPerIteration(ArrayRef<Access> accesses,
                                      unsigned numWide) {
  const Access &first = accesses.front();
  if (first.indices.empty())
    return false;
  llvm::SmallBitVector ivs(numWide);
  for (int64_t index : first.indices) {
    if (index < 0)
      ivs.set(-1 - index);
    else if (index != 0)
      return false;
  }
  if (!ivs.all())
    return false;
  return llvm::all_of(accesses, [&](const Access &access) {
    return access.memref == first.memref && access.indices == first.indices;
  });
}

/// True when every access in `a` and every access in `b` go through
/// subviews of one buffer with static offsets and sizes, unit strides, and
/// no subview of `a` overlaps one of `b` (the two halves of a `cat`).
static bool areDisjoint(ArrayRef<Access> a, ArrayRef<Access> b) {
  auto box = [](const Access &access) -> memref::SubViewOp {
    auto subview = access.memref.getDefiningOp<memref::SubViewOp>();
    if (!subview || !subview.hasUnitStride() ||
        !ShapedType::isStaticShape(subview.getStaticOffsets()) ||
        !ShapedType::isStaticShape(subview.getStaticSizes()))
      return {};
    return subview;
  };
  for (const Access &x : a) {
    memref::SubViewOp p = box(x);
    if (!p)
      return false;
    for (const Access &y : b) {
      memref::SubViewOp q = box(y);
      if (!q || q.getSource() != p.getSource() ||
          q.getStaticOffsets().size() != p.getStaticOffsets().size())
        return false;
      bool apart = false;
      for (auto [po, ps, qo, qs] :
           llvm::zip(p.getStaticOffsets(), p.getStaticSizes(),
                     q.getStaticOffsets(), q.getStaticSizes()))
        apart |= po + ps <= qo || qo + qs <= po;
      if (!apart)
        return false;
    }
  }
  return true;
}

namespace {
/// The step's live bytes at each op of a block: buffers allocated in it,
/// from their allocation to their last use (through views), and the step's
/// outputs, from their first use on (the caller counts an output from its
/// first write). Outputs are the arguments from the function's
/// `joint.num_inputs` on (joint-cpu-entry); without it, the arguments it
/// may write. Inputs are a constant and left out. Ops are numbered in block
/// order; a fused loop covers the numbers from its first original loop to
/// its last. Queries take O(log n).
class LiveBytes {
public:
  explicit LiveBytes(Block &block) {
    for (Operation &op : block)
      position[&op] = positions++;
    SmallVector<int64_t> delta(positions + 1, 0);
    SmallVector<int64_t> unknownDelta(positions + 1, 0);
    std::optional<int64_t> numInputs;
    if (Operation *parent = block.getParentOp())
      if (auto attr = parent->getAttrOfType<IntegerAttr>("joint.num_inputs"))
        numInputs = attr.getInt();
    SmallVector<std::pair<int64_t, int64_t>> starts; // (first, bytes)
    auto add = [&](Value buffer, bool isArgument) {
      int64_t first = positions, last = -1;
      bool written = false;
      SmallVector<Value> values{buffer};
      while (!values.empty()) {
        Value value = values.pop_back_val();
        for (OpOperand &use : value.getUses()) {
          Operation *user = use.getOwner();
          if (auto view = dyn_cast<ViewLikeOpInterface>(user);
              view && view.getViewSource() == value) {
            values.push_back(view->getResult(0));
            continue;
          }
          written |= !isa<memref::LoadOp, memref::DimOp>(user);
          if (Operation *inBlock = block.findAncestorOpInBlock(*user)) {
            first = std::min(first, position[inBlock]);
            last = std::max(last, position[inBlock]);
          }
        }
      }
      if (isArgument) {
        auto number = cast<BlockArgument>(buffer).getArgNumber();
        bool output = numInputs ? int64_t(number) >= *numInputs : written;
        if (!output || last < 0)
          return;
        last = positions - 1;
      } else {
        first = position[buffer.getDefiningOp()];
        last = std::max(last, first);
      }
      auto type = cast<MemRefType>(buffer.getType());
      int64_t bytes = kUnknown;
      if (type.hasStaticShape() && type.getElementType().isIntOrFloat())
        bytes = type.getNumElements() *
                llvm::divideCeil(type.getElementTypeBitWidth(), 8);
      starts.push_back({first, bytes});
      lasts.push_back(last);
      if (bytes != kUnknown) {
        delta[first] += bytes;
        delta[last + 1] -= bytes;
      } else {
        ++unknownDelta[first];
        --unknownDelta[last + 1];
      }
    };
    for (BlockArgument argument : block.getArguments())
      if (isa<MemRefType>(argument.getType()))
        add(argument, /*isArgument=*/true);
    for (Operation &op : block)
      if (auto alloc = dyn_cast<memref::AllocOp>(op))
        add(alloc, /*isArgument=*/false);
    llvm::sort(starts);
    llvm::sort(lasts);
    int64_t unknown = 0;
    for (Operation &op : block) {
      unknown += unknownDelta[position[&op]];
      unknownLive[&op] = unknown;
    }
    startPositions.push_back(-1);
    startBytes.push_back(0);
    startsUnknown.push_back(0);
    for (auto [first, bytes] : starts) {
      startPositions.push_back(first);
      startBytes.push_back(startBytes.back() + std::max<int64_t>(bytes, 0));
      startsUnknown.push_back(startsUnknown.back() + (bytes == kUnknown));
    }
    int64_t running = 0;
    for (Operation &op : block) {
      running += delta[position[&op]];
      live[&op] = running;
      span[&op] = {position[&op], position[&op]};
      peak = std::max(peak, running);
    }
  }

  /// The live bytes while `first` and `second` (the next loop) run as one
  /// kernel: `first`'s and every buffer starting after it up to `second`;
  /// none when a buffer of dynamic size is live then (its bytes unknown)
  /// and the fusion makes a buffer ending in `first` overlap one starting
  /// after it.
  std::optional<int64_t> getFused(Operation *first, Operation *second) const {
    auto [begin, end] = span.lookup(first);
    int64_t through = position.lookup(second);
    // Starts in (end, through]: indices [from, to) past the sentinel.
    auto index = [&](int64_t pos) {
      return llvm::upper_bound(startPositions, pos) - startPositions.begin();
    };
    int64_t from = index(end), to = index(through);
    int64_t bytes =
        live.lookup(first) + startBytes[to - 1] - startBytes[from - 1];
    // A buffer of unknown size live while they run (at `first`'s start or
    // starting up to `second`): no more memory at any point only when
    // nothing ends in `first` or nothing starts after it up to `second`.
    bool dynamic = unknownLive.lookup(first) > 0 ||
                   startsUnknown[to - 1] != startsUnknown[index(begin) - 1];
    bool ending =
        llvm::lower_bound(lasts, begin) != llvm::upper_bound(lasts, end);
    if (dynamic && ending && to != from)
      return std::nullopt;
    return bytes;
  }

  /// The most live bytes at any op before fusion.
  int64_t getPeak() const { return peak; }

  /// Records `second` fused into `first`, `bytes` live while they run.
  void fuse(Operation *first, Operation *second, int64_t bytes) {
    live[first] = bytes;
    span[first].second = position[second];
  }

private:
  static constexpr int64_t kUnknown = -1;
  DenseMap<Operation *, int64_t> position, live, unknownLive;
  DenseMap<Operation *, std::pair<int64_t, int64_t>> span;
  /// Buffers by first position (after a -1 sentinel), with prefix sums of
  /// their bytes and of those of unknown size; their last positions.
  SmallVector<int64_t> startPositions, startBytes, startsUnknown, lasts;
  int64_t positions = 0, peak = 0;
};
} // namespace

/// The loop `first` fuses with (the next op but movable ones) and the live
/// bytes while they run, or null.
static std::pair<scf::ParallelOp, int64_t>
getFusableNext(scf::ParallelOp first, const LiveBytes &liveBytes) {
  Operation *op = first->getNextNode();
  while (op && isMovable(op))
    op = op->getNextNode();
  auto second = dyn_cast_or_null<scf::ParallelOp>(op);
  if (!second || first.getNumResults() || second.getNumResults() ||
      !haveSameIterations(first, second))
    return {};
  // The movable ops must not use what they would move above.
  for (Operation *between = first->getNextNode(); between != second;
       between = between->getNextNode())
    for (Value operand : between->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && def->getBlock() == first->getBlock() &&
          first->isBeforeInBlock(def) && !def->isBeforeInBlock(between) &&
          def != between)
        return {};

  Accesses firstAccesses = collectAccesses(first);
  Accesses secondAccesses = collectAccesses(second);
  // Buffers of other origins (globals, call results, block arguments of
  // other blocks, buffers made inside a loop) may alias one another: the
  // loops stay apart when one writes such a buffer and the other touches
  // one. Allocations and the function's arguments are distinct buffers (the
  // step's ABI: outputs do not overlap inputs).
  auto isDistinct = [&](Value root) {
    if (auto argument = dyn_cast<BlockArgument>(root))
      return argument.getOwner()->isEntryBlock() &&
             isa<FunctionOpInterface>(argument.getOwner()->getParentOp());
    Operation *def = root.getDefiningOp();
    return isa<memref::AllocOp, memref::AllocaOp>(def) &&
           !first->isAncestor(def) && !second->isAncestor(def);
  };
  auto others = [&](const Accesses &accesses, bool writesOnly) {
    return llvm::any_of(accesses, [&](const auto &entry) {
      return !isDistinct(entry.first) &&
             (!writesOnly ||
              llvm::any_of(entry.second, [](auto &a) { return a.write; }));
    });
  };
  if ((others(firstAccesses, true) && others(secondAccesses, false)) ||
      (others(secondAccesses, true) && others(firstAccesses, false)))
    return {};
  unsigned numWide = llvm::count_if(*getTripCounts(first),
                                    [](int64_t trip) { return trip != 1; });
  for (auto &[root, inFirst] : firstAccesses) {
    auto it = secondAccesses.find(root);
    if (it == secondAccesses.end())
      continue;
    bool written = llvm::any_of(inFirst, [](auto &a) { return a.write; }) ||
                   llvm::any_of(it->second, [](auto &a) { return a.write; });
    if (!written)
      continue;
    SmallVector<Access> both(inFirst.begin(), inFirst.end());
    both.append(it->second.begin(), it->second.end());
    if (!isSameElementPerIteration(both, numWide) &&
        !areDisjoint(inFirst, it->second))
      return {};
  }
  std::optional<int64_t> bytes = liveBytes.getFused(first, second);
  if (!bytes || *bytes > liveBytes.getPeak())
    return {};
  return {second, *bytes};
}

/// Moves the ops between `first` and `second` above `first`, then
/// `second`'s body into `first`'s, after its own: its k-th induction
/// variable of more than one iteration is `first`'s k-th, the others 0.
static void fuse(RewriterBase &rewriter, scf::ParallelOp first,
                 scf::ParallelOp second) {
  while (first->getNextNode() != second)
    rewriter.moveOpBefore(first->getNextNode(), first);
  SmallVector<int64_t> firstTrips = *getTripCounts(first);
  SmallVector<int64_t> secondTrips = *getTripCounts(second);
  SmallVector<Value> wide;
  for (auto [trip, iv] : llvm::zip(firstTrips, first.getInductionVars()))
    if (trip != 1)
      wide.push_back(iv);
  SmallVector<Value> ivs;
  Value zero;
  for (int64_t trip : secondTrips) {
    if (trip != 1) {
      ivs.push_back(wide[ivs.size() - llvm::count(ivs, zero)]);
      continue;
    }
    if (!zero) {
      rewriter.setInsertionPoint(first);
      zero = arith::ConstantIndexOp::create(rewriter, second.getLoc(), 0);
    }
    ivs.push_back(zero);
  }
  // The kernel runs both loops' nodes (the runtime prices it as their sum).
  first->setLoc(
      FusedLoc::get(first.getContext(), {first.getLoc(), second.getLoc()}));
  Block *body = second.getBody();
  rewriter.eraseOp(body->getTerminator());
  rewriter.inlineBlockBefore(body, first.getBody()->getTerminator(), ivs);
  rewriter.eraseOp(second);
}

namespace {
struct FuseParallelLoopsPass
    : public joint::impl::JointGPUFuseParallelLoopsBase<FuseParallelLoopsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<scf::ParallelOp> loops;
    getOperation().walk([&](scf::ParallelOp loop) {
      // Outermost loops only: a nest is one kernel.
      if (!loop->getParentOfType<scf::ParallelOp>())
        loops.push_back(loop);
    });
    DenseMap<Block *, std::unique_ptr<LiveBytes>> liveBytes;
    DenseSet<Operation *> erased;
    for (scf::ParallelOp first : loops) {
      if (erased.contains(first))
        continue;
      std::unique_ptr<LiveBytes> &live = liveBytes[first->getBlock()];
      if (!live)
        live = std::make_unique<LiveBytes>(*first->getBlock());
      while (true) {
        auto [second, bytes] = getFusableNext(first, *live);
        if (!second)
          break;
        live->fuse(first, second, bytes);
        erased.insert(second);
        fuse(rewriter, first, second);
      }
    }
  }
};
} // namespace

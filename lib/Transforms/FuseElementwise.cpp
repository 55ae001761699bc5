//===- FuseElementwise.cpp - Elementwise producers into their consumers ---===//
//
// Implements `joint-fuse-elementwise`: upstream's elementwise producer-
// consumer fusion on linalg on tensors (linalg::fuseElementwiseOps), driven
// so that no step needs more memory than before. An all-parallel producer is
// fused into every one of its (at most 4) users, a clone per user, when
// - each reads it through a permutation, or broadcasts a producer of at most
//   8 scalar ops (cheaper to repeat than to launch);
// - its last user is at most 8 ops after it (a value the memory model
//   counts is never dropped for long: the step's peak stays the modelled one);
// - the only user is the next op (nothing in between but constants, empty
//   tensors and size queries), or the producer's inputs that would now live
//   longer (not read at or after its last user, not arguments or constants)
//   take at most the bytes of its result, which is never materialised.
// The fused ops compute the same scalar ops in the same order, so results
// are bitwise unchanged.
//
//===----------------------------------------------------------------------===//

#include "joint/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTFUSEELEMENTWISE
#include "joint/Transforms/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;

/// Users of one producer fused at once (each gets a clone): more would
/// repeat its scalar work that many times.
static constexpr unsigned kMaxUsers = 4;

/// Ops (other than free ones) between a producer and its last user: a
/// value the memory model counts is never dropped for long, so the compiled
/// step's peak stays the modelled one (a forward producer never moves into
/// the backward, dropping a saved activation).
static constexpr unsigned kMaxDistance = 8;

/// Scalar ops of a producer that a user reading it broadcast may repeat for
/// every element it broadcasts to (a kernel launch costs far more).
static constexpr unsigned kMaxRepeatedOps = 8;

/// True when `map` reads each element once per consumer iteration it
/// broadcasts to: its results are distinct loop dimensions or constant 0
/// (a kept size-1 dimension).
static bool isBroadcastOfPermutation(AffineMap map) {
  llvm::SmallBitVector seen(map.getNumDims());
  for (AffineExpr expr : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      if (seen.test(dim.getPosition()))
        return false;
      seen.set(dim.getPosition());
      continue;
    }
    auto constant = dyn_cast<AffineConstantExpr>(expr);
    if (!constant || constant.getValue() != 0)
      return false;
  }
  return true;
}

/// Ops that take no memory and run no kernel of their own.
static bool isFree(Operation *op) {
  return isa<arith::ConstantOp, tensor::EmptyOp, tensor::DimOp>(op);
}

/// True when `consumer` is the next op after `producer` that is not free.
static bool isNextAfter(Operation *producer, Operation *consumer) {
  if (producer->getBlock() != consumer->getBlock())
    return false;
  for (Operation *op = producer->getNextNode(); op; op = op->getNextNode()) {
    if (op == consumer)
      return true;
    if (!isFree(op))
      return false;
  }
  return false;
}

/// Bytes of a statically shaped tensor of int or float elements, else none.
static std::optional<int64_t> staticBytes(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  return type.getNumElements() *
         llvm::divideCeil(type.getElementTypeBitWidth(), 8);
}

/// The bytes that would now stay alive until `last` runs if a producer
/// reading `value` were fused there: 0 when its storage is alive then
/// anyway (an argument, a constant, or a value, a view of it or the view's
/// source that `last` or an op after it reads); otherwise the whole
/// storage's (a view keeps its source alive); none when not static.
static std::optional<int64_t> getExtendedBytes(Value value, Operation *last) {
  while (true) {
    if (isa<BlockArgument>(value) || matchPattern(value, m_Constant()))
      return 0;
    for (OpOperand &use : value.getUses()) {
      Operation *user =
          last->getBlock()->findAncestorOpInBlock(*use.getOwner());
      if (user && (user == last || last->isBeforeInBlock(user)))
        return 0;
    }
    Operation *def = value.getDefiningOp();
    if (!isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
                         tensor::ExtractSliceOp>(def))
      return staticBytes(value);
    value = def->getOperand(0);
  }
}

/// True when `producer` is fused into all its users (the rules above).
static bool isFusableIntoUsers(linalg::GenericOp producer) {
  if (producer->getNumResults() != 1 || producer.getNumReductionLoops() != 0 ||
      !producer.hasPureTensorSemantics() ||
      producer.payloadUsesValueFromOperand(producer.getDpsInitOperand(0)))
    return false;
  Value result = producer->getResult(0);
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : result.getUses()) {
    auto consumer = dyn_cast<linalg::GenericOp>(use.getOwner());
    if (!consumer || consumer->getBlock() != producer->getBlock() ||
        !linalg::areElementwiseOpsFusable(&use))
      return false;
    AffineMap read = consumer.getMatchingIndexingMap(&use);
    if (!read.isPermutation() &&
        (!isBroadcastOfPermutation(read) ||
         producer.getBody()->getOperations().size() > kMaxRepeatedOps + 1))
      return false;
    uses.push_back(&use);
  }
  if (uses.empty() || uses.size() > kMaxUsers)
    return false;
  if (uses.size() == 1 && isNextAfter(producer, uses.front()->getOwner()))
    return true;

  Operation *last = uses.front()->getOwner();
  for (OpOperand *use : uses)
    if (last->isBeforeInBlock(use->getOwner()))
      last = use->getOwner();
  unsigned distance = 0;
  for (Operation *op = producer->getNextNode(); op != last;
       op = op->getNextNode())
    if ((distance += !isFree(op)) > kMaxDistance)
      return false;
  std::optional<int64_t> saved = staticBytes(result);
  if (!saved)
    return false;
  int64_t extended = 0;
  for (Value input : producer.getDpsInputs()) {
    std::optional<int64_t> bytes = getExtendedBytes(input, last);
    if (!bytes)
      return false;
    extended += *bytes;
  }
  if (extended > *saved)
    return false;
  return true;
}

/// Fuses `producer` into each of its users (a clone right before each
/// use; a user reading it twice is fused twice).
static LogicalResult fuseIntoUsers(RewriterBase &rewriter,
                                   linalg::GenericOp producer) {
  Value result = producer->getResult(0);
  while (!result.use_empty()) {
    OpOperand &use = *result.use_begin();
    Operation *consumer = use.getOwner();
    unsigned operand = use.getOperandNumber();
    rewriter.setInsertionPoint(consumer);
    Operation *clone = rewriter.clone(*producer);
    rewriter.modifyOpInPlace(
        consumer, [&] { consumer->setOperand(operand, clone->getResult(0)); });
    FailureOr<linalg::ElementwiseOpFusionResult> fused =
        linalg::fuseElementwiseOps(rewriter, &consumer->getOpOperand(operand));
    if (failed(fused))
      return producer.emitError("elementwise fusion failed after its check");
    // The fused op computes both ops' nodes.
    fused->fusedOp->setLoc(FusedLoc::get(
        consumer->getContext(), {consumer->getLoc(), producer.getLoc()}));
    for (auto [from, to] : fused->replacements)
      rewriter.replaceAllUsesWith(from, to);
    rewriter.eraseOp(consumer);
    rewriter.eraseOp(clone);
  }
  rewriter.eraseOp(producer);
  return success();
}

namespace {
struct FuseElementwisePass
    : public joint::impl::JointFuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // Last producer first, until nothing fuses: chains fuse from their end.
    bool changed = true;
    while (changed) {
      changed = false;
      SmallVector<linalg::GenericOp> producers;
      getOperation().walk(
          [&](linalg::GenericOp op) { producers.push_back(op); });
      for (linalg::GenericOp producer : llvm::reverse(producers)) {
        if (!producer)
          continue;
        if (!isFusableIntoUsers(producer))
          continue;
        // Its users are erased; none is visited again in this round (they
        // come after it in the block).
        if (failed(fuseIntoUsers(rewriter, producer)))
          return signalPassFailure();
        changed = true;
      }
    }
  }
};
} // namespace

//===- LossHeadRegion.cpp - The token rows of a loss head -----------------===//
//
// Follows row values (tensors whose leading dims are the T tokens of a
// linear head's [T, V] logits) from the head through ops with a row rule;
// see LossHeadRegion.h.
//
//===----------------------------------------------------------------------===//

#include "joint/Analysis/LossHeadRegion.h"
#include "joint/Dialect/Joint/IR/TensorMeta.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::joint;

Attribute mlir::joint::getPositionalArg(CallFunctionOp op, unsigned i) {
  ArrayAttr args = op.getArgsAttr();
  return args && i < args.size() ? args[i] : Attribute();
}

std::optional<int64_t> mlir::joint::getIntArg(CallFunctionOp op, unsigned i) {
  if (auto a = dyn_cast_or_null<IntegerAttr>(getPositionalArg(op, i)))
    return a.getInt();
  return std::nullopt;
}

/// The integers of list argument `i`, or std::nullopt when it is not a list
/// of static integers.
std::optional<SmallVector<int64_t>>
mlir::joint::getIntListArg(CallFunctionOp op, unsigned i) {
  auto list = dyn_cast_or_null<ArrayAttr>(getPositionalArg(op, i));
  if (!list)
    return std::nullopt;
  SmallVector<int64_t> out;
  for (Attribute a : list) {
    auto v = dyn_cast<IntegerAttr>(a);
    if (!v)
      return std::nullopt;
    out.push_back(v.getInt());
  }
  return out;
}

bool mlir::joint::isInPlaceTarget(StringRef target) {
  StringRef name = target.split('.').first;
  return name.ends_with("_") && !name.ends_with("__");
}
namespace {

/// The operand that positional argument `i` refers to, if any.
Value getOperandArg(CallFunctionOp op, unsigned i) {
  if (auto ref = dyn_cast_or_null<OperandRefAttr>(getPositionalArg(op, i)))
    if (ref.getIndex() < op->getNumOperands())
      return op->getOperand(ref.getIndex());
  return {};
}

std::optional<SmallVector<int64_t>> getStaticShape(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  return SmallVector<int64_t>(type.getShape());
}

int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

// Ops that apply elementwise (with broadcasting) to their tensor operands.
const llvm::StringSet<> &getElementwiseTargets() {
  static const llvm::StringSet<> set = {
      "aten::neg.default",         "aten::exp.default",
      "aten::log.default",         "aten::abs.default",
      "aten::bitwise_not.default", "aten::clone.default",
      "aten::_to_copy.default",    "aten::sigmoid.default",
      "aten::tanh.default",        "aten::relu.default",
      "aten::mul.Scalar",          "aten::add.Scalar",
      "aten::sub.Scalar",          "aten::div.Scalar",
      "aten::eq.Scalar",           "aten::ne.Scalar",
      "aten::lt.Scalar",           "aten::le.Scalar",
      "aten::gt.Scalar",           "aten::ge.Scalar",
      "aten::pow.Tensor_Scalar",   "aten::masked_fill.Scalar",
      "aten::masked_fill_.Scalar", "aten::masked_fill.Tensor",
      "aten::masked_fill_.Tensor", "aten::add.Tensor",
      "aten::sub.Tensor",          "aten::mul.Tensor",
      "aten::div.Tensor",          "aten::add_.Tensor",
      "aten::mul_.Tensor",         "aten::where.self",
      "aten::eq.Tensor",           "aten::ne.Tensor",
      "aten::logical_not.default", "aten::bitwise_and.Tensor",
      "aten::mul_.Scalar",         "aten::div_.Tensor",
  };
  return set;
}

const llvm::StringSet<> &getViewTargets() {
  static const llvm::StringSet<> set = {
      "aten::view.default", "aten::_unsafe_view.default",
      "aten::reshape.default", "aten::alias.default", "aten::detach.default"};
  return set;
}

} // namespace

bool LossHeadRegion::isTokenAligned(Value v) const {
  std::optional<SmallVector<int64_t>> shape = getStaticShape(v);
  TensorMetaAttr meta = getTensorMeta(v);
  return shape && !shape->empty() && (*shape)[0] == tokens &&
         (!meta || !meta.isSymbolic());
}

LogicalResult LossHeadRegion::classifyElementwise(CallFunctionOp op) {
  if (op->getNumResults() != 1)
    return fail(op, "an elementwise op with several results");
  std::optional<SmallVector<int64_t>> out = getStaticShape(op->getResult(0));
  if (!out)
    return fail(op, "a result without a static shape");
  int64_t rank = out->size();
  std::optional<unsigned> k;
  for (Value v : op->getOperands())
    if (isRow(v)) {
      if (int64_t(cast<RankedTensorType>(v.getType()).getRank()) != rank ||
          (k && *k != leading(v)))
        return fail(op, "row operands of different layouts");
      k = leading(v);
    }
  if (!k)
    return fail(op, "an elementwise op on a transposed row value");
  if (isInPlaceTarget(op.getTarget()) && !isRow(op->getOperand(0)))
    return fail(op, "an in-place write into a tensor outside the region");
  SmallVector<unsigned> slice;
  for (auto [idx, v] : llvm::enumerate(op->getOperands())) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (isRow(v) || !type || type.getRank() == 0 ||
        type.getRank() <= rank - int64_t(*k))
      continue;
    std::optional<SmallVector<int64_t>> shape = getStaticShape(v);
    if (!shape)
      return fail(op, "an operand without a static shape");
    if (type.getRank() == rank && *k == 1 && isTokenAligned(v)) {
      slice.push_back(idx);
      continue;
    }
    // Broadcast along the tokens: size 1 in every token dim it covers.
    int64_t first = rank - type.getRank();
    for (int64_t d = std::max<int64_t>(first, 0); d < int64_t(*k); ++d)
      if ((*shape)[d - first] != 1)
        return fail(op, "an operand that covers the tokens in another "
                        "layout");
  }
  rules[op] = RowRule::RowWise;
  rows[op->getResult(0)] = *k;
  if (!slice.empty())
    sliced[op] = std::move(slice);
  return success();
}

LogicalResult LossHeadRegion::classify(CallFunctionOp op) {
  StringRef target = op.getTarget();
  auto rowOperand = [&](unsigned i) {
    return i < op->getNumOperands() && isRow(op->getOperand(i));
  };
  auto setRow = [&](RowRule rule, unsigned k) {
    rules[op] = rule;
    rows[op->getResult(0)] = k;
    return success();
  };
  auto markSliced = [&](unsigned i) { sliced[op].push_back(i); };

  if (getViewTargets().contains(target)) {
    Value in = op->getOperand(0);
    if (!isRow(in))
      return fail(op, "a view of a row value as an extra operand");
    std::optional<SmallVector<int64_t>> inShape = getStaticShape(in);
    std::optional<SmallVector<int64_t>> outShape =
        getStaticShape(op->getResult(0));
    if (!inShape || !outShape)
      return fail(op, "a view without a static shape");
    ArrayRef<int64_t> features =
        ArrayRef<int64_t>(*inShape).drop_front(leading(in));
    ArrayRef<int64_t> out = *outShape;
    if (out.size() <= features.size() ||
        out.take_back(features.size()) != features ||
        product(out.drop_back(features.size())) != tokens)
      return fail(op, "a view that reshapes across the token dims");
    return setRow(RowRule::View, out.size() - features.size());
  }

  if (target == "aten::t.default") {
    Value in = op->getOperand(0);
    if (leading(in) != 1 || cast<RankedTensorType>(in.getType()).getRank() != 2)
      return fail(op, "a transpose of a row value that is not [T, F]");
    rules[op] = RowRule::Transpose;
    transposed[op->getResult(0)] = in;
    return success();
  }

  if (target == "aten::mm.default") {
    Value a = op->getOperand(0), b = op->getOperand(1);
    if (rowOperand(0) && leading(a) == 1 && !isRow(b) && !transposed.count(b)) {
      rules[op] = RowRule::RowWise;
      // The backward's input gradient ends the region; the forward head
      // starts it.
      if (op.isBackward())
        concatenated.insert(op->getResult(0));
      else
        rows[op->getResult(0)] = 1;
      return success();
    }
    if (transposed.count(a) &&
        (isRow(b) ? leading(b) == 1 : isTokenAligned(b))) {
      if (!isRow(b))
        markSliced(1);
      rules[op] = RowRule::MatmulRows;
      return success();
    }
    if (!isRow(a) && !transposed.count(a) && rowOperand(1) && leading(b) == 1) {
      auto t = a.getDefiningOp<CallFunctionOp>();
      if (t && t.getTarget() == "aten::t.default" &&
          isTokenAligned(t->getOperand(0))) {
        markSliced(0); // t() of the slice of its input
        rules[op] = RowRule::MatmulRows;
        return success();
      }
    }
    return fail(op, "a matmul that mixes tokens with a row operand");
  }

  if (target == "aten::addmm.default") {
    Value bias = op->getOperand(0);
    auto biasType = cast<RankedTensorType>(bias.getType());
    if (rowOperand(1) && leading(op->getOperand(1)) == 1 && !isRow(bias) &&
        !isRow(op->getOperand(2)) &&
        (biasType.getRank() <= 1 || biasType.getDimSize(0) == 1) &&
        op.isForward())
      return setRow(RowRule::RowWise, 1);
    return fail(op, "an addmm other than the head's");
  }

  if (target == "aten::nll_loss_forward.default" ||
      target == "aten::nll_loss_backward.default") {
    bool forward = target == "aten::nll_loss_forward.default";
    unsigned self = forward ? 0 : 1, tgt = forward ? 1 : 2;
    std::optional<int64_t> reduction = getIntArg(op, forward ? 3 : 4);
    if (!reduction || (*reduction != 1 && *reduction != 2))
      return fail(op, "reduction 'none'");
    Value selfV = getOperandArg(op, self), tgtV = getOperandArg(op, tgt);
    if (!selfV || !isRow(selfV) || leading(selfV) != 1 || !tgtV)
      return fail(op, "its input is not the chunked log-softmax");
    for (auto [idx, v] : llvm::enumerate(op->getOperands())) {
      if (v == selfV)
        continue;
      if (v == tgtV) {
        if (isRow(v) ? leading(v) != 1 : !isTokenAligned(v))
          return fail(op, "targets not aligned with the tokens");
        if (!isRow(v))
          markSliced(idx);
        continue;
      }
      if (isRow(v) || transposed.count(v))
        return fail(op, "a row value as class weight or scale");
    }
    if (forward) {
      rules[op] = RowRule::NllLoss;
      return success();
    }
    return setRow(RowRule::RowWise, 1);
  }

  if (target == "aten::sum.dim_IntList" || target == "aten::sum.default") {
    Value in = op->getOperand(0);
    if (!isRow(in))
      return fail(op, "a sum of a row value as an extra operand");
    if (target == "aten::sum.default") {
      rules[op] = RowRule::SumAll;
      return success();
    }
    std::optional<SmallVector<int64_t>> dims = getIntListArg(op, 1);
    int64_t rank = cast<RankedTensorType>(in.getType()).getRank();
    if (!dims || dims->empty())
      return fail(op, "a sum over unlisted dims");
    bool allFeatures = true, tokensOnly = leading(in) == 1 && dims->size() == 1;
    SmallVector<Attribute> mapped;
    for (int64_t d : *dims) {
      int64_t n = d < 0 ? d + rank : d;
      std::optional<int64_t> c = canonicalDim(n, leading(in));
      allFeatures &= c.has_value();
      tokensOnly &= n == 0;
    }
    if (allFeatures)
      return setRow(RowRule::RowWise, leading(in));
    if (tokensOnly) {
      rules[op] = RowRule::SumRows;
      return success();
    }
    return fail(op, "a sum over some but not all token dims");
  }

  if (target == "aten::_log_softmax.default" ||
      target == "aten::_softmax.default" ||
      target == "aten::_log_softmax_backward_data.default" ||
      target == "aten::_softmax_backward_data.default") {
    bool backward = target.contains("backward");
    unsigned dimArg = backward ? 2 : 1;
    std::optional<int64_t> dim = getIntArg(op, dimArg);
    std::optional<unsigned> k;
    for (unsigned i = 0, e = backward ? 2 : 1; i < e; ++i) {
      Value v = op->getOperand(i);
      if (isRow(v)) {
        if (k && *k != leading(v))
          return fail(op, "row operands of different layouts");
        k = leading(v);
      }
    }
    int64_t rank = cast<RankedTensorType>(op->getResult(0).getType()).getRank();
    if (!dim || !canonicalDim(*dim < 0 ? *dim + rank : *dim, *k))
      return fail(op, "a softmax across the tokens");
    for (unsigned i = 0, e = backward ? 2 : 1; i < e; ++i)
      if (!isRow(op->getOperand(i))) {
        if (*k != 1 || !isTokenAligned(op->getOperand(i)))
          return fail(op, "an operand not aligned with the tokens");
        markSliced(i);
      }
    return setRow(RowRule::RowWise, *k);
  }

  if (target == "aten::unsqueeze.default") {
    Value in = op->getOperand(0);
    std::optional<int64_t> dim = getIntArg(op, 1);
    int64_t rank = cast<RankedTensorType>(in.getType()).getRank() + 1;
    if (!dim || !canonicalDim(*dim < 0 ? *dim + rank : *dim, leading(in)))
      return fail(op, "an unsqueeze among the token dims");
    return setRow(RowRule::RowWise, leading(in));
  }

  if (target == "aten::expand.default") {
    Value in = op->getOperand(0);
    std::optional<SmallVector<int64_t>> sizes = getIntListArg(op, 1);
    if (leading(in) != 1 || !sizes ||
        int64_t(sizes->size()) !=
            cast<RankedTensorType>(in.getType()).getRank() ||
        ((*sizes)[0] != tokens && (*sizes)[0] != -1))
      return fail(op, "an expand across the tokens");
    return setRow(RowRule::RowWise, 1);
  }

  if (getElementwiseTargets().contains(target))
    return classifyElementwise(op);
  return fail(op, "no chunking rule for " + target);
}

LogicalResult LossHeadRegion::analyze(CallFunctionOp headOp) {
  head = headOp;
  std::optional<SmallVector<int64_t>> shape =
      getStaticShape(head->getResult(0));
  TensorMetaAttr meta = getTensorMeta(head->getResult(0));
  if (!shape || shape->size() != 2 || (meta && meta.isSymbolic()))
    return fail(head, "logits without a static [T, V] shape");
  tokens = (*shape)[0];
  unsigned lhs = head.getTarget() == "aten::addmm.default" ? 1 : 0;
  if (!isTokenAligned(head->getOperand(lhs)))
    return fail(head, "a head input not aligned with the logits");
  rules[head] = RowRule::RowWise;
  rows[head->getResult(0)] = 1;
  sliced[head].push_back(lhs);

  // The block is in topological order: one walk after the head sees every
  // producer before its users.
  for (Operation *it = head->getNextNode(); it; it = it->getNextNode()) {
    auto reads = [&](Value v) { return isRow(v) || transposed.count(v); };
    if (!llvm::any_of(it->getOperands(), reads))
      continue;
    auto op = dyn_cast<CallFunctionOp>(it);
    if (!op) {
      Value v = *llvm::find_if(it->getOperands(), reads);
      return fail(v.getDefiningOp() ? v.getDefiningOp() : it,
                  "its value is read outside the loss (by '" +
                      it->getName().getStringRef() + "')");
    }
    if (failed(classify(op)))
      return failure();
  }
  // Every transposed row value is folded into the matmul that reads it.
  for (auto &[value, source] : transposed)
    for (Operation *user : value.getUsers())
      if (rules.lookup(user) != RowRule::MatmulRows)
        return fail(user, "reads a transposed row value outside a matmul");
  if (concatenated.empty() && llvm::none_of(rules, [](auto &r) {
        return r.second == RowRule::NllLoss;
      }))
    return fail(head, "no cross-entropy reads these logits");
  return success();
}

SmallVector<CallFunctionOp> LossHeadRegion::findHeads(GraphOp graph) {
  SmallVector<CallFunctionOp> heads;
  llvm::SmallPtrSet<Operation *, 4> seen;
  for (CallFunctionOp loss : graph.getBody().front().getOps<CallFunctionOp>()) {
    if (loss.getTarget() != "aten::nll_loss_forward.default")
      continue;
    Value v = loss->getOperand(0);
    while (auto def = v.getDefiningOp<CallFunctionOp>()) {
      StringRef t = def.getTarget();
      if (t == "aten::mm.default" || t == "aten::addmm.default") {
        if (seen.insert(def).second)
          heads.push_back(def);
        break;
      }
      if (!getViewTargets().contains(t) && t != "aten::_log_softmax.default" &&
          t != "aten::_to_copy.default" && t != "aten::clone.default")
        break;
      v = def->getOperand(0);
    }
  }
  return heads;
}

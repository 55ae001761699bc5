//===- ChunkLoss.cpp - The loss head in token chunks ----------------------===//
//
// joint-chunk-loss: the output projection and the cross-entropy that reads it
// (forward and backward) in chunks of tokens. The region is found by
// following "row" values (tensors whose leading dims are the T tokens of the
// head's [T, V] logits) from the head through ops with a row rule; reductions
// over the tokens end it (their partial sums are accumulated chunk by chunk)
// and so does the backward matmul that gives the head's input gradient (its
// chunks are concatenated). Each row value is handled in its canonical form
// [rows, features...]: views that only regroup the token dims are dropped.
//
//===----------------------------------------------------------------------===//

#include "joint/Dialect/Joint/Transforms/ChunkLoss.h"
#include "joint/Dialect/Joint/IR/TensorMeta.h"
#include "joint/Dialect/Joint/Transforms/Passes.h"
#include "joint/Support/Namespace.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTCHUNKLOSS
#include "joint/Dialect/Joint/Transforms/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

namespace {

//===----------------------------------------------------------------------===//
// Argument helpers
//===----------------------------------------------------------------------===//

/// Positional argument `i` of `op` (null when absent).
Attribute getArg(CallFunctionOp op, unsigned i) {
  ArrayAttr args = op.getArgsAttr();
  return args && i < args.size() ? args[i] : Attribute();
}

std::optional<int64_t> getIntArg(CallFunctionOp op, unsigned i) {
  if (auto a = dyn_cast_or_null<IntegerAttr>(getArg(op, i)))
    return a.getInt();
  return std::nullopt;
}

/// The integers of list argument `i`, or std::nullopt when it is not a list
/// of static integers.
std::optional<SmallVector<int64_t>> getIntListArg(CallFunctionOp op,
                                                  unsigned i) {
  auto list = dyn_cast_or_null<ArrayAttr>(getArg(op, i));
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

/// The operand that positional argument `i` refers to, if any.
Value getOperandArg(CallFunctionOp op, unsigned i) {
  if (auto ref = dyn_cast_or_null<OperandRefAttr>(getArg(op, i)))
    if (ref.getIndex() < op->getNumOperands())
      return op->getOperand(ref.getIndex());
  return {};
}

/// The node name of `op`'s result `i`: its result name, else the op's name.
StringRef getResultName(CallFunctionOp op, unsigned i) {
  ArrayAttr names = op.getResultNamesAttr();
  if (names && i < names.size())
    if (StringRef n = cast<StringAttr>(names[i]).getValue(); !n.empty())
      return n;
  return op.getName();
}

void setArg(CallFunctionOp op, unsigned i, Attribute value) {
  SmallVector<Attribute> args(op.getArgsAttr().begin(), op.getArgsAttr().end());
  args[i] = value;
  op.setArgsAttr(ArrayAttr::get(op.getContext(), args));
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

bool isInPlace(StringRef target) {
  StringRef name = target.split('.').first;
  return name.ends_with("_") && !name.ends_with("__");
}

/// Row rules: how an op of the region treats its token rows.
enum class Rule {
  RowWise,    // output rows from input rows; cloned per chunk
  View,       // regroups the token dims only; dropped
  Transpose,  // t() of a [T, F] row value; folded into its matmul
  SumAll,     // sum over everything: partial sums added
  SumRows,    // sum over dim 0: partial sums added
  MatmulRows, // mm contracting the tokens: accumulated with addmm
  NllLoss,    // nll_loss_forward: sums of loss and weight, then the mean
};

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

/// Schema facts of the ops the rewrite creates, for graphs whose operator
/// table lacks them: (target, schema, argument specs name:type[:default]
/// with '*' before the keyword-only ones, returns alias set).
struct NewOpSchema {
  StringLiteral target, schema;
  ArrayRef<StringLiteral> args;
  StringLiteral alias; // alias set of self and the return ("" for none)
  ArrayRef<StringLiteral> tags;
};

//===----------------------------------------------------------------------===//
// The region of one loss head
//===----------------------------------------------------------------------===//

class HeadChunker {
public:
  HeadChunker(GraphOp graph, CallFunctionOp head, Namespace &names,
              int64_t &nextStorage)
      : graph(graph), head(head), names(names), nextStorage(nextStorage) {}

  /// Finds the region; on failure `reason` and `culprit` say why.
  LogicalResult analyze();
  /// Rewrites the region into `chunks` chunks.
  LogicalResult rewrite(unsigned chunks);

  std::string reason;
  Operation *culprit = nullptr;
  unsigned getNumRegionOps() const { return rules.size(); }
  unsigned numChunkOps = 0;

private:
  LogicalResult fail(Operation *op, const Twine &why) {
    culprit = op;
    reason = why.str();
    return failure();
  }
  LogicalResult classify(CallFunctionOp op);
  LogicalResult classifyElementwise(CallFunctionOp op);
  /// A non-row operand aligned with the tokens (dim 0 of size T, rank r).
  bool isTokenAligned(Value v) const;
  bool isRow(Value v) const { return rows.count(v); }
  unsigned leading(Value v) const { return rows.lookup(v); }
  /// Canonical dim of actual dim `d` (normalised) of a row value with `k`
  /// leading token dims; std::nullopt for a token dim.
  static std::optional<int64_t> canonicalDim(int64_t d, unsigned k) {
    if (d < int64_t(k))
      return std::nullopt;
    return d - k + 1;
  }

  // Rewrite helpers.
  Value chunkOf(Value v, unsigned i);
  Value sliceOf(Value v, unsigned i, Phase phase);
  void emitChunk(CallFunctionOp op, unsigned i);
  CallFunctionOp create(StringRef target, ValueRange inputs,
                        ArrayRef<Attribute> args, Type type,
                        CallFunctionOp origin, StringRef base,
                        Attribute meta = {});
  TensorMetaAttr freshMeta(ArrayRef<int64_t> shape, CallFunctionOp origin);
  RankedTensorType chunkType(Value original, unsigned k, unsigned i);
  void fixClone(CallFunctionOp op, CallFunctionOp clone, unsigned i);
  /// t() of a [rows, F] chunk (a view).
  Value transposeOf(Value v);
  /// Facts of an accumulator of `op`'s result: the original's for the last.
  Attribute accumulatorMeta(CallFunctionOp op, unsigned result, bool last);
  /// Adds `part` to the running sum of `op`'s result `result`.
  Value accumulate(CallFunctionOp op, unsigned result, Value part, bool last);

  GraphOp graph;
  CallFunctionOp head;
  OpBuilder builder{graph.getContext()};
  Namespace &names;
  int64_t &nextStorage;
  int64_t tokens = 0;
  unsigned numChunks = 1;
  SmallVector<int64_t> starts, sizes;

  /// Row values -> their number of leading token dims.
  DenseMap<Value, unsigned> rows;
  /// Results of t() of a row value -> that row value.
  DenseMap<Value, Value> transposed;
  /// Region ops in block order and their rules.
  llvm::MapVector<Operation *, Rule> rules;
  /// Non-row operands (by index) sliced along the tokens, per op.
  DenseMap<Operation *, SmallVector<unsigned>> sliced;
  /// Backward matmul results (the head's input gradient): concatenated.
  llvm::SetVector<Value> concatenated;

  /// Per chunk: original row value -> its chunk.
  SmallVector<DenseMap<Value, Value>> chunkValues;
  /// (value, chunk, phase) -> slice.
  DenseMap<std::tuple<Value, unsigned, unsigned>, Value> slices;
  /// Accumulators per (op, result).
  DenseMap<std::pair<Operation *, unsigned>, Value> accumulators;
  SmallVector<CallFunctionOp> forwardClones, backwardClones;
  /// The region op whose chunk is being emitted.
  CallFunctionOp currentOrigin;
};

bool HeadChunker::isTokenAligned(Value v) const {
  std::optional<SmallVector<int64_t>> shape = getStaticShape(v);
  TensorMetaAttr meta = getTensorMeta(v);
  return shape && !shape->empty() && (*shape)[0] == tokens &&
         (!meta || !meta.isSymbolic());
}

LogicalResult HeadChunker::classifyElementwise(CallFunctionOp op) {
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
  if (isInPlace(op.getTarget()) && !isRow(op->getOperand(0)))
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
  rules[op] = Rule::RowWise;
  rows[op->getResult(0)] = *k;
  if (!slice.empty())
    sliced[op] = std::move(slice);
  return success();
}

LogicalResult HeadChunker::classify(CallFunctionOp op) {
  StringRef target = op.getTarget();
  auto rowOperand = [&](unsigned i) {
    return i < op->getNumOperands() && isRow(op->getOperand(i));
  };
  auto setRow = [&](Rule rule, unsigned k) {
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
    return setRow(Rule::View, out.size() - features.size());
  }

  if (target == "aten::t.default") {
    Value in = op->getOperand(0);
    if (leading(in) != 1 || cast<RankedTensorType>(in.getType()).getRank() != 2)
      return fail(op, "a transpose of a row value that is not [T, F]");
    rules[op] = Rule::Transpose;
    transposed[op->getResult(0)] = in;
    return success();
  }

  if (target == "aten::mm.default") {
    Value a = op->getOperand(0), b = op->getOperand(1);
    if (rowOperand(0) && leading(a) == 1 && !isRow(b) && !transposed.count(b)) {
      rules[op] = Rule::RowWise;
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
      rules[op] = Rule::MatmulRows;
      return success();
    }
    if (!isRow(a) && !transposed.count(a) && rowOperand(1) && leading(b) == 1) {
      auto t = a.getDefiningOp<CallFunctionOp>();
      if (t && t.getTarget() == "aten::t.default" &&
          isTokenAligned(t->getOperand(0))) {
        markSliced(0); // t() of the slice of its input
        rules[op] = Rule::MatmulRows;
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
      return setRow(Rule::RowWise, 1);
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
      rules[op] = Rule::NllLoss;
      return success();
    }
    return setRow(Rule::RowWise, 1);
  }

  if (target == "aten::sum.dim_IntList" || target == "aten::sum.default") {
    Value in = op->getOperand(0);
    if (!isRow(in))
      return fail(op, "a sum of a row value as an extra operand");
    if (target == "aten::sum.default") {
      rules[op] = Rule::SumAll;
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
      return setRow(Rule::RowWise, leading(in));
    if (tokensOnly) {
      rules[op] = Rule::SumRows;
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
    return setRow(Rule::RowWise, *k);
  }

  if (target == "aten::unsqueeze.default") {
    Value in = op->getOperand(0);
    std::optional<int64_t> dim = getIntArg(op, 1);
    int64_t rank = cast<RankedTensorType>(in.getType()).getRank() + 1;
    if (!dim || !canonicalDim(*dim < 0 ? *dim + rank : *dim, leading(in)))
      return fail(op, "an unsqueeze among the token dims");
    return setRow(Rule::RowWise, leading(in));
  }

  if (target == "aten::expand.default") {
    Value in = op->getOperand(0);
    std::optional<SmallVector<int64_t>> sizes = getIntListArg(op, 1);
    if (leading(in) != 1 || !sizes ||
        int64_t(sizes->size()) !=
            cast<RankedTensorType>(in.getType()).getRank() ||
        ((*sizes)[0] != tokens && (*sizes)[0] != -1))
      return fail(op, "an expand across the tokens");
    return setRow(Rule::RowWise, 1);
  }

  if (getElementwiseTargets().contains(target))
    return classifyElementwise(op);
  return fail(op, "no chunking rule for " + target);
}

LogicalResult HeadChunker::analyze() {
  std::optional<SmallVector<int64_t>> shape =
      getStaticShape(head->getResult(0));
  TensorMetaAttr meta = getTensorMeta(head->getResult(0));
  if (!shape || shape->size() != 2 || (meta && meta.isSymbolic()))
    return fail(head, "logits without a static [T, V] shape");
  tokens = (*shape)[0];
  unsigned lhs = head.getTarget() == "aten::addmm.default" ? 1 : 0;
  if (!isTokenAligned(head->getOperand(lhs)))
    return fail(head, "a head input not aligned with the logits");
  rules[head] = Rule::RowWise;
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
      if (rules.lookup(user) != Rule::MatmulRows)
        return fail(user, "reads a transposed row value outside a matmul");
  if (concatenated.empty() &&
      llvm::none_of(rules, [](auto &r) { return r.second == Rule::NllLoss; }))
    return fail(head, "no cross-entropy reads these logits");
  return success();
}

//===----------------------------------------------------------------------===//
// The rewrite
//===----------------------------------------------------------------------===//

TensorMetaAttr HeadChunker::freshMeta(ArrayRef<int64_t> shape,
                                      CallFunctionOp origin) {
  TensorMetaAttr like;
  if (origin)
    for (Value r : origin->getResults())
      if ((like = getTensorMeta(r)))
        break;
  if (!like)
    return {};
  SmallVector<SymInt> sizes, strides(shape.size());
  int64_t stride = 1;
  for (int64_t i = shape.size() - 1; i >= 0; --i) {
    strides[i] = SymInt::getStatic(stride);
    stride *= shape[i];
  }
  for (int64_t s : shape)
    sizes.push_back(SymInt::getStatic(s));
  return TensorMetaAttr::get(graph.getContext(), sizes, strides,
                             SymInt::getStatic(0), like.getDevice(),
                             nextStorage++);
}

RankedTensorType HeadChunker::chunkType(Value original, unsigned k,
                                        unsigned i) {
  auto type = cast<RankedTensorType>(original.getType());
  SmallVector<int64_t> shape{sizes[i]};
  llvm::append_range(shape, type.getShape().drop_front(k));
  return RankedTensorType::get(shape, type.getElementType());
}

CallFunctionOp HeadChunker::create(StringRef target, ValueRange inputs,
                                   ArrayRef<Attribute> args, Type type,
                                   CallFunctionOp origin, StringRef base,
                                   Attribute meta) {
  MLIRContext *ctx = graph.getContext();
  OperationState state(origin.getLoc(), CallFunctionOp::getOperationName());
  state.addOperands(inputs);
  state.addTypes(type);
  state.addAttribute("target", StringAttr::get(ctx, target));
  state.addAttribute("args", ArrayAttr::get(ctx, args));
  state.addAttribute("name", StringAttr::get(ctx, names.newName(base)));
  state.addAttribute("phase", PhaseAttr::get(ctx, origin.getPhase()));
  if (ArrayAttr stack = origin.getModuleStackAttr())
    state.addAttribute("module_stack", stack);
  if (IntegerAttr seq = origin.getSeqNrAttr())
    state.addAttribute("seq_nr", seq);
  if (meta)
    state.addAttribute("result_meta", ArrayAttr::get(ctx, {meta}));
  auto op = cast<CallFunctionOp>(builder.insert(Operation::create(state)));
  ++numChunkOps;
  return op;
}

Value HeadChunker::chunkOf(Value v, unsigned i) {
  Value c = chunkValues[i].lookup(v);
  assert(c && "row value used before its chunk was emitted");
  return c;
}

Value HeadChunker::sliceOf(Value v, unsigned i, Phase phase) {
  Value &slot = slices[{v, i, static_cast<unsigned>(phase)}];
  if (slot)
    return slot;
  MLIRContext *ctx = graph.getContext();
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = sizes[i];
  Attribute meta;
  if (TensorMetaAttr m = getTensorMeta(v)) {
    SmallVector<SymInt> metaSizes(m.getSizes());
    metaSizes[0] = SymInt::getStatic(sizes[i]);
    int64_t offset = m.getOffset().hint + starts[i] * m.getStrides()[0].hint;
    meta = TensorMetaAttr::get(ctx, metaSizes, m.getStrides(),
                               SymInt::getStatic(offset), m.getDevice(),
                               m.getStorage());
  }
  auto i64 = [&](int64_t x) {
    return IntegerAttr::get(IntegerType::get(ctx, 64), x);
  };
  auto def = v.getDefiningOp<CallFunctionOp>();
  StringRef base = def ? def.getName() : StringRef("input");
  // The slice belongs to the chunk op that first reads it.
  CallFunctionOp slice =
      create("aten::slice.Tensor", v,
             {OperandRefAttr::get(ctx, 0), i64(0), i64(starts[i]),
              i64(starts[i] + sizes[i])},
             RankedTensorType::get(shape, type.getElementType()), currentOrigin,
             (base + "_chunk" + Twine(i)).str(), meta);
  slot = slice->getResult(0);
  return slot;
}

Value HeadChunker::transposeOf(Value v) {
  MLIRContext *ctx = graph.getContext();
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape{type.getDimSize(1), type.getDimSize(0)};
  Attribute meta;
  if (TensorMetaAttr m = getTensorMeta(v))
    meta = TensorMetaAttr::get(ctx, {m.getSizes()[1], m.getSizes()[0]},
                               {m.getStrides()[1], m.getStrides()[0]},
                               m.getOffset(), m.getDevice(), m.getStorage());
  auto def = v.getDefiningOp<CallFunctionOp>();
  StringRef base = def ? def.getName() : currentOrigin.getName();
  return create("aten::t.default", v, {OperandRefAttr::get(ctx, 0)},
                RankedTensorType::get(shape, type.getElementType()),
                currentOrigin, (base + "_t").str(), meta)
      ->getResult(0);
}

Attribute HeadChunker::accumulatorMeta(CallFunctionOp op, unsigned result,
                                       bool last) {
  if (last)
    if (ArrayAttr metas = op.getResultMetaAttr())
      return metas[result];
  auto type = cast<RankedTensorType>(op->getResult(result).getType());
  return freshMeta(type.getShape(), op);
}

Value HeadChunker::accumulate(CallFunctionOp op, unsigned result, Value part,
                              bool last) {
  MLIRContext *ctx = graph.getContext();
  Value &acc = accumulators[{op.getOperation(), result}];
  if (!acc) {
    acc = part;
    return acc;
  }
  acc = create("aten::add.Tensor", {acc, part},
               {OperandRefAttr::get(ctx, 0), OperandRefAttr::get(ctx, 1)},
               acc.getType(), op, (getResultName(op, result) + "_sum").str(),
               accumulatorMeta(op, result, last))
            ->getResult(0);
  return acc;
}

void HeadChunker::fixClone(CallFunctionOp op, CallFunctionOp clone,
                           unsigned i) {
  MLIRContext *ctx = graph.getContext();
  StringRef target = op.getTarget();
  auto i64 = [&](int64_t x) {
    return IntegerAttr::get(IntegerType::get(ctx, 64), x);
  };
  // Leading token dims of the op's row input (the dims args refer to).
  unsigned k = 1;
  for (Value v : op->getOperands())
    if (isRow(v)) {
      k = leading(v);
      break;
    }
  auto canonical = [&](int64_t d, int64_t rank) {
    return *canonicalDim(d < 0 ? d + rank : d, k);
  };
  int64_t inRank =
      op->getNumOperands()
          ? cast<RankedTensorType>(op->getOperand(0).getType()).getRank()
          : 0;
  if (target == "aten::_log_softmax.default" ||
      target == "aten::_softmax.default")
    setArg(clone, 1, i64(canonical(*getIntArg(op, 1), inRank)));
  else if (target.ends_with("softmax_backward_data.default"))
    setArg(clone, 2, i64(canonical(*getIntArg(op, 2), inRank)));
  else if (target == "aten::unsqueeze.default")
    setArg(clone, 1, i64(canonical(*getIntArg(op, 1), inRank + 1)));
  else if (target == "aten::sum.dim_IntList") {
    SmallVector<Attribute> dims;
    for (int64_t d : *getIntListArg(op, 1))
      dims.push_back(i64(canonical(d, inRank)));
    setArg(clone, 1, ArrayAttr::get(ctx, dims));
  } else if (target == "aten::expand.default") {
    SmallVector<Attribute> dims;
    for (auto [n, d] : llvm::enumerate(*getIntListArg(op, 1)))
      dims.push_back(i64(n == 0 ? sizes[i] : d));
    setArg(clone, 1, ArrayAttr::get(ctx, dims));
  }

  SmallVector<Attribute> metas;
  for (OpResult r : op->getResults()) {
    unsigned rk = concatenated.contains(r) ? 1 : leading(r);
    RankedTensorType type = chunkType(r, rk, i);
    clone->getResult(r.getResultNumber()).setType(type);
    if (isInPlace(target))
      metas.push_back(getTensorMeta(clone->getOperand(0)));
    else
      metas.push_back(freshMeta(type.getShape(), op));
  }
  if (llvm::all_of(metas, [](Attribute m) { return bool(m); }))
    clone.setResultMetaAttr(ArrayAttr::get(ctx, metas));
  else
    clone.removeResultMetaAttr();
  clone.removePolicyAttr();
  clone.removeRecomputedFromAttr();
  names.nameClone(clone, op, ("_chunk" + Twine(i)).str());
}

void HeadChunker::emitChunk(CallFunctionOp op, unsigned i) {
  MLIRContext *ctx = graph.getContext();
  currentOrigin = op;
  DenseMap<Value, Value> &map = chunkValues[i];
  bool last = i + 1 == numChunks;
  Phase phase = op.getPhase();
  auto ref = [&](unsigned n) { return OperandRefAttr::get(ctx, n); };
  auto mapOperands = [&](IRMapping &mapping) {
    ArrayRef<unsigned> toSlice = sliced.lookup(op);
    for (auto [idx, v] : llvm::enumerate(op->getOperands())) {
      if (isRow(v))
        mapping.map(v, chunkOf(v, i));
      else if (llvm::is_contained(toSlice, idx))
        mapping.map(v, sliceOf(v, i, phase));
    }
  };
  auto cloneOp = [&]() {
    IRMapping mapping;
    mapOperands(mapping);
    auto clone = cast<CallFunctionOp>(builder.clone(*op, mapping));
    ++numChunkOps;
    (op.isForward() ? forwardClones : backwardClones).push_back(clone);
    return clone;
  };

  switch (rules.lookup(op)) {
  case Rule::View:
    map[op->getResult(0)] = chunkOf(op->getOperand(0), i);
    return;
  case Rule::Transpose:
    return; // folded into the matmul that reads it
  case Rule::RowWise: {
    CallFunctionOp clone = cloneOp();
    fixClone(op, clone, i);
    for (OpResult r : op->getResults())
      map[r] = clone->getResult(r.getResultNumber());
    return;
  }
  case Rule::SumAll:
  case Rule::SumRows: {
    CallFunctionOp clone = cloneOp();
    clone.setResultMetaAttr(
        ArrayAttr::get(ctx, {accumulatorMeta(op, 0, false)}));
    clone.removePolicyAttr();
    names.nameClone(clone, op, ("_chunk" + Twine(i)).str());
    accumulate(op, 0, clone->getResult(0), last);
    return;
  }
  case Rule::MatmulRows: {
    Value a = op->getOperand(0), b = op->getOperand(1);
    Value aChunk;
    if (Value source = transposed.lookup(a))
      aChunk = transposeOf(chunkOf(source, i));
    else
      aChunk = transposeOf(sliceOf(a.getDefiningOp()->getOperand(0), i, phase));
    Value bChunk = isRow(b) ? chunkOf(b, i) : sliceOf(b, i, phase);
    Value &acc = accumulators[{op.getOperation(), 0}];
    Attribute meta = accumulatorMeta(op, 0, last);
    std::string name = (op.getName() + "_chunk" + Twine(i)).str();
    CallFunctionOp step =
        acc ? create("aten::addmm.default", {acc, aChunk, bChunk},
                     {ref(0), ref(1), ref(2)}, acc.getType(), op, name, meta)
            : create("aten::mm.default", {aChunk, bChunk}, {ref(0), ref(1)},
                     op->getResult(0).getType(), op, name, meta);
    acc = step->getResult(0);
    return;
  }
  case Rule::NllLoss: {
    CallFunctionOp clone = cloneOp();
    setArg(clone, 3, IntegerAttr::get(IntegerType::get(ctx, 64), /*sum=*/2));
    bool mean = *getIntArg(op, 3) == 1;
    clone.setResultMetaAttr(ArrayAttr::get(
        ctx, {accumulatorMeta(op, 0, false), accumulatorMeta(op, 1, false)}));
    clone.removePolicyAttr();
    names.nameClone(clone, op, ("_chunk" + Twine(i)).str());
    accumulate(op, 0, clone->getResult(0), last && !mean);
    accumulate(op, 1, clone->getResult(1), last);
    return;
  }
  }
}

LogicalResult HeadChunker::rewrite(unsigned chunks) {
  MLIRContext *ctx = graph.getContext();
  numChunks = std::min<int64_t>(chunks, tokens);
  for (unsigned i = 0, start = 0; i < numChunks; ++i) {
    int64_t size = tokens / numChunks + (i < tokens % numChunks ? 1 : 0);
    starts.push_back(start);
    sizes.push_back(size);
    start += size;
  }
  chunkValues.resize(numChunks);
  auto ref = [&](unsigned n) { return OperandRefAttr::get(ctx, n); };

  for (Phase phase : {Phase::forward, Phase::backward}) {
    SmallVector<CallFunctionOp> ops;
    for (auto &[op, rule] : rules)
      if (cast<CallFunctionOp>(op).getPhase() == phase)
        ops.push_back(cast<CallFunctionOp>(op));
    if (ops.empty())
      continue;
    builder.setInsertionPointAfter(ops.back());
    for (unsigned i = 0; i < numChunks; ++i)
      for (CallFunctionOp op : ops)
        emitChunk(op, i);
    // The partial sums and the concatenated chunks replace the originals.
    for (CallFunctionOp op : ops) {
      Rule rule = rules.lookup(op);
      if (rule == Rule::SumAll || rule == Rule::SumRows ||
          rule == Rule::MatmulRows) {
        op->getResult(0).replaceAllUsesWith(accumulators.lookup({op, 0}));
      } else if (rule == Rule::NllLoss) {
        Value loss = accumulators.lookup({op, 0});
        Value weight = accumulators.lookup({op, 1});
        if (*getIntArg(op, 3) == 1) {
          currentOrigin = op;
          loss =
              create("aten::div.Tensor", {loss, weight}, {ref(0), ref(1)},
                     loss.getType(), op, (getResultName(op, 0) + "_mean").str(),
                     accumulatorMeta(op, 0, true))
                  ->getResult(0);
        }
        op->getResult(0).replaceAllUsesWith(loss);
        op->getResult(1).replaceAllUsesWith(weight);
      }
      for (OpResult r : op->getResults()) {
        if (!concatenated.contains(r))
          continue;
        SmallVector<Value> parts;
        SmallVector<Attribute> refs;
        for (unsigned i = 0; i < numChunks; ++i) {
          parts.push_back(chunkValues[i].lookup(r));
          refs.push_back(ref(i));
        }
        Value whole = create("aten::cat.default", parts,
                             {ArrayAttr::get(ctx, refs),
                              IntegerAttr::get(IntegerType::get(ctx, 64), 0)},
                             r.getType(), op, (op.getName() + "_cat").str(),
                             accumulatorMeta(op, r.getResultNumber(), true))
                          ->getResult(0);
        r.replaceAllUsesWith(whole);
      }
    }
  }
  auto regionOps = rules.takeVector();
  for (auto &entry : llvm::reverse(regionOps)) {
    for (Value r : entry.first->getResults())
      if (!r.use_empty()) {
        InFlightDiagnostic diag = entry.first->emitError(
            "joint-chunk-loss: internal error: a rewritten op is still read "
            "by ");
        diag << *(*r.getUsers().begin());
        return failure();
      }
    entry.first->erase();
  }

  // Forward chunk values the backward reads, and the forward chunk ops they
  // come from, are replayed by joint-remat rather than saved.
  llvm::SmallPtrSet<Operation *, 16> backward(backwardClones.begin(),
                                              backwardClones.end());
  llvm::SmallPtrSet<Operation *, 16> recompute;
  for (CallFunctionOp op : llvm::reverse(forwardClones)) {
    bool read = llvm::any_of(op->getUsers(), [&](Operation *user) {
      return backward.contains(user) || recompute.contains(user);
    });
    if (!read)
      continue;
    recompute.insert(op);
    op.setPolicyAttr(
        CheckpointPolicyAttr::get(ctx, CheckpointPolicy::must_recompute));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Schema entries of the ops the rewrite creates
//===----------------------------------------------------------------------===//

/// Adds the operator-table entries of the targets the rewrite may create
/// (torch's schemas) to `module` when missing.
void addSchemas(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  b.setInsertionPointToStart(module.getBody());
  auto arg = [&](StringRef name, StringRef type, bool kwargOnly = false,
                 StringRef alias = "", StringRef def = "") {
    return SchemaArgAttr::get(ctx, name, type, kwargOnly, alias, "", false,
                              def.empty() ? StringAttr()
                                          : StringAttr::get(ctx, def));
  };
  auto tensorReturn = [&](StringRef alias = "") {
    return SchemaArgAttr::get(ctx, "", "Tensor", false, alias, "", false,
                              StringAttr());
  };
  struct Entry {
    StringRef target, schema;
    SmallVector<Attribute> args;
    StringRef alias;
    SmallVector<StringRef> tags;
  };
  SmallVector<Entry> entries;
  entries.push_back(
      {"aten::slice.Tensor",
       "aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, "
       "SymInt? end=None, SymInt step=1) -> Tensor(a)",
       {arg("self", "Tensor", false, "a"), arg("dim", "int", false, "", "0"),
        arg("start", "SymInt?", false, "", "None"),
        arg("end", "SymInt?", false, "", "None"),
        arg("step", "SymInt", false, "", "1")},
       "a",
       {"core", "pt2_compliant_tag"}});
  entries.push_back({"aten::t.default",
                     "aten::t(Tensor(a) self) -> Tensor(a)",
                     {arg("self", "Tensor", false, "a")},
                     "a",
                     {"pt2_compliant_tag"}});
  entries.push_back({"aten::add.Tensor",
                     "aten::add.Tensor(Tensor self, Tensor other, *, Scalar "
                     "alpha=1) -> Tensor",
                     {arg("self", "Tensor"), arg("other", "Tensor"),
                      arg("alpha", "Scalar", true, "", "1")},
                     "",
                     {"core", "pointwise", "pt2_compliant_tag"}});
  entries.push_back({"aten::div.Tensor",
                     "aten::div.Tensor(Tensor self, Tensor other) -> Tensor",
                     {arg("self", "Tensor"), arg("other", "Tensor")},
                     "",
                     {"core", "pointwise", "pt2_compliant_tag"}});
  entries.push_back(
      {"aten::addmm.default",
       "aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, "
       "Scalar alpha=1) -> Tensor",
       {arg("self", "Tensor"), arg("mat1", "Tensor"), arg("mat2", "Tensor"),
        arg("beta", "Scalar", true, "", "1"),
        arg("alpha", "Scalar", true, "", "1")},
       "",
       {"core", "pt2_compliant_tag"}});
  entries.push_back({"aten::mm.default",
                     "aten::mm(Tensor self, Tensor mat2) -> Tensor",
                     {arg("self", "Tensor"), arg("mat2", "Tensor")},
                     "",
                     {"core", "pt2_compliant_tag"}});
  entries.push_back(
      {"aten::cat.default",
       "aten::cat(Tensor[] tensors, int dim=0) -> Tensor",
       {arg("tensors", "Tensor[]"), arg("dim", "int", false, "", "0")},
       "",
       {"core", "pt2_compliant_tag"}});
  for (Entry &e : entries) {
    if (SymbolTable::lookupSymbolIn(module, e.target))
      continue;
    SmallVector<Attribute> tags;
    for (StringRef t : e.tags)
      tags.push_back(StringAttr::get(ctx, t));
    SmallVector<NamedAttribute> attrs{
        b.getNamedAttr(SymbolTable::getSymbolAttrName(),
                       b.getStringAttr(e.target)),
        b.getNamedAttr("schema", b.getStringAttr(e.schema)),
        b.getNamedAttr("arguments", b.getArrayAttr(e.args)),
        b.getNamedAttr("returns", b.getArrayAttr({tensorReturn(e.alias)})),
        b.getNamedAttr("tags", b.getArrayAttr(tags))};
    SchemaOp::create(b, module.getLoc(), TypeRange(), ValueRange(), attrs);
  }
}

/// Reorders `block` so every op follows its operands' producers, moving an op
/// only when it must and then right after its last producer (unlike
/// mlir::sortTopologically, which defers it past every op ready in a sweep).
/// False when the block has a cycle. O(ops + operands).
bool sortStably(Block &block) {
  SmallVector<Operation *> order;
  DenseMap<Operation *, unsigned> missing;
  DenseMap<Operation *, SmallVector<Operation *, 1>> waiters;
  llvm::SmallPtrSet<Operation *, 32> emitted;
  auto emit = [&](Operation *first) {
    SmallVector<Operation *> worklist{first};
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      order.push_back(op);
      emitted.insert(op);
      auto it = waiters.find(op);
      if (it == waiters.end())
        continue;
      // Waiters in reverse, so the worklist emits them in block order.
      for (Operation *w : llvm::reverse(it->second))
        if (--missing[w] == 0)
          worklist.push_back(w);
    }
  };
  Operation *terminator = block.getTerminator();
  for (Operation &op : block.without_terminator()) {
    llvm::SmallPtrSet<Operation *, 4> deps;
    for (Value v : op.getOperands())
      if (Operation *def = v.getDefiningOp())
        if (def->getBlock() == &block && !emitted.contains(def))
          deps.insert(def);
    if (deps.empty()) {
      emit(&op);
      continue;
    }
    missing[&op] = deps.size();
    for (Operation *def : deps)
      waiters[def].push_back(&op);
  }
  if (order.size() != block.getOperations().size() - 1)
    return false;
  for (Operation *op : order)
    op->moveBefore(terminator);
  return true;
}

} // namespace

FailureOr<ChunkLossSummary> mlir::joint::chunkLoss(GraphOp graph,
                                                   unsigned chunks) {
  if (chunks == 0)
    return emitError(graph.getLoc(), "joint-chunk-loss: chunks must be >= 1");
  ChunkLossSummary summary;
  if (chunks == 1)
    return summary;
  // Heads: the mm/addmm under each nll_loss_forward's log-softmax.
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
  if (heads.empty())
    return summary;

  Namespace names(graph.getContext());
  names.addGraph(graph);
  int64_t nextStorage = 0;
  for (BlockArgument arg : graph.getBody().front().getArguments())
    if (TensorMetaAttr m = getTensorMeta(arg))
      nextStorage = std::max(nextStorage, m.getStorage() + 1);
  for (CallFunctionOp op : graph.getBody().front().getOps<CallFunctionOp>())
    if (ArrayAttr metas = op.getResultMetaAttr())
      for (Attribute m : metas)
        if (auto t = dyn_cast<TensorMetaAttr>(m))
          nextStorage = std::max(nextStorage, t.getStorage() + 1);

  bool schemasAdded = false;
  for (CallFunctionOp head : heads) {
    HeadChunker chunker(graph, head, names, nextStorage);
    if (failed(chunker.analyze())) {
      Operation *at = chunker.culprit ? chunker.culprit : head;
      InFlightDiagnostic remark = emitRemark(at->getLoc())
                                  << "joint-chunk-loss: the loss head '"
                                  << head.getName() << "' stays whole: ";
      if (auto node = dyn_cast<CallFunctionOp>(at))
        remark << "node '" << node.getName() << "': ";
      remark << chunker.reason;
      ++summary.numLeftWhole;
      continue;
    }
    if (!schemasAdded) {
      addSchemas(graph->getParentOfType<ModuleOp>());
      schemasAdded = true;
    }
    summary.numOriginalOps += chunker.getNumRegionOps();
    if (failed(chunker.rewrite(chunks)))
      return failure();
    summary.numChunkOps += chunker.numChunkOps;
    ++summary.numChunked;
  }
  if (summary.numChunked && !sortStably(graph.getBody().front()))
    return emitError(graph.getLoc(),
                     "joint-chunk-loss: the rewritten graph has a cycle");
  return summary;
}

namespace {
struct ChunkLossPass : joint::impl::JointChunkLossBase<ChunkLossPass> {
  using Base::Base;
  void runOnOperation() override {
    FailureOr<ChunkLossSummary> summary = chunkLoss(getOperation(), chunks);
    if (failed(summary))
      return signalPassFailure();
    numChunked = summary->numChunked;
    numLeftWhole = summary->numLeftWhole;
    if (!summary->numChunked)
      markAllAnalysesPreserved();
  }
};
} // namespace

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
#include "joint/Analysis/LossHeadRegion.h"
#include "joint/Dialect/Joint/IR/BuiltinSchemas.h"
#include "joint/Dialect/Joint/IR/TensorMeta.h"
#include "joint/Dialect/Joint/Transforms/Passes.h"
#include "joint/Support/BlockOrder.h"
#include "joint/Support/NamedDiagnostics.h"
#include "joint/Support/Namespace.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"

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

//===----------------------------------------------------------------------===//
// The rewrite of one loss head
//===----------------------------------------------------------------------===//

/// Emits the region of a LossHeadRegion chunk by chunk.
class HeadChunker {
public:
  HeadChunker(GraphOp graph, const LossHeadRegion &region, Namespace &names,
              int64_t &nextStorage)
      : graph(graph), region(region), names(names), nextStorage(nextStorage),
        tokens(region.getTokens()) {}

  /// Rewrites the region into `chunks` chunks.
  LogicalResult rewrite(unsigned chunks);
  unsigned numChunkOps = 0;

private:
  bool isRow(Value v) const { return region.isRow(v); }
  unsigned leading(Value v) const { return region.getLeading(v); }
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
  const LossHeadRegion &region;
  OpBuilder builder{graph.getContext()};
  Namespace &names;
  int64_t &nextStorage;
  int64_t tokens = 0;
  unsigned numChunks = 1;
  SmallVector<int64_t> starts, sizes;

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
    return *LossHeadRegion::canonicalDim(d < 0 ? d + rank : d, k);
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
    SmallVector<int64_t> listed = *getIntListArg(op, 1);
    for (int64_t d : listed)
      dims.push_back(i64(canonical(d, inRank)));
    setArg(clone, 1, ArrayAttr::get(ctx, dims));
  } else if (target == "aten::expand.default") {
    SmallVector<Attribute> dims;
    SmallVector<int64_t> listed = *getIntListArg(op, 1);
    for (auto [n, d] : llvm::enumerate(listed))
      dims.push_back(i64(n == 0 ? sizes[i] : d));
    setArg(clone, 1, ArrayAttr::get(ctx, dims));
  }

  SmallVector<Attribute> metas;
  for (OpResult r : op->getResults()) {
    unsigned rk = region.isConcatenated(r) ? 1 : leading(r);
    RankedTensorType type = chunkType(r, rk, i);
    clone->getResult(r.getResultNumber()).setType(type);
    if (isInPlaceTarget(target))
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
    ArrayRef<unsigned> toSlice = region.getSlicedOperands(op);
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

  switch (region.getRule(op)) {
  case RowRule::View:
    map[op->getResult(0)] = chunkOf(op->getOperand(0), i);
    return;
  case RowRule::Transpose:
    return; // folded into the matmul that reads it
  case RowRule::RowWise: {
    CallFunctionOp clone = cloneOp();
    fixClone(op, clone, i);
    for (OpResult r : op->getResults())
      map[r] = clone->getResult(r.getResultNumber());
    return;
  }
  case RowRule::SumAll:
  case RowRule::SumRows: {
    CallFunctionOp clone = cloneOp();
    clone.setResultMetaAttr(
        ArrayAttr::get(ctx, {accumulatorMeta(op, 0, false)}));
    clone.removePolicyAttr();
    names.nameClone(clone, op, ("_chunk" + Twine(i)).str());
    accumulate(op, 0, clone->getResult(0), last);
    return;
  }
  case RowRule::MatmulRows: {
    Value a = op->getOperand(0), b = op->getOperand(1);
    Value aChunk;
    if (Value source = region.getTransposedSource(a))
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
  case RowRule::NllLoss: {
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
    for (auto &[op, rule] : region.getOps())
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
      RowRule rule = region.getRule(op);
      if (rule == RowRule::SumAll || rule == RowRule::SumRows ||
          rule == RowRule::MatmulRows) {
        op->getResult(0).replaceAllUsesWith(accumulators.lookup({op, 0}));
      } else if (rule == RowRule::NllLoss) {
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
        if (!region.isConcatenated(r))
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
  auto regionOps = llvm::to_vector(region.getOps());
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

} // namespace

FailureOr<ChunkLossSummary> mlir::joint::chunkLoss(GraphOp graph,
                                                   unsigned chunks) {
  if (chunks == 0)
    return emitError(graph.getLoc(), "joint-chunk-loss: chunks must be >= 1");
  ChunkLossSummary summary;
  if (chunks == 1)
    return summary;
  // A chunk's nll_loss_forward reads a dim-0 slice of the targets; torch's
  // reads a view of them.
  for (CallFunctionOp op : graph.getBody().front().getOps<CallFunctionOp>()) {
    if (op.getTarget() != "aten::nll_loss_forward.default" ||
        op->getNumOperands() < 2)
      continue;
    auto slice = op->getOperand(1).getDefiningOp<CallFunctionOp>();
    if (slice && slice.getTarget() == "aten::slice.Tensor" &&
        getIntArg(slice, 1) == 0) {
      emitRemark(graph.getLoc())
          << "joint-chunk-loss: the loss head is already in token chunks "
             "(node '"
          << op.getName() << "' reads a slice of the targets); nothing changed";
      return summary;
    }
  }
  SmallVector<CallFunctionOp> heads = LossHeadRegion::findHeads(graph);
  if (heads.empty()) {
    emitRemark(graph.getLoc())
        << "joint-chunk-loss: no cross-entropy over a linear head (an "
           "aten::nll_loss_forward over the log-softmax of an mm/addmm); "
           "nothing changed";
    return summary;
  }

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
    LossHeadRegion region;
    if (failed(region.analyze(head))) {
      Operation *at = region.getCulprit() ? region.getCulprit() : head;
      InFlightDiagnostic remark = emitRemark(at->getLoc());
      markNamed(remark, head.getName()) << "joint-chunk-loss: the loss head '"
                                        << head.getName() << "' stays whole: ";
      if (auto node = dyn_cast<CallFunctionOp>(at))
        markNamed(remark, node.getName())
            << "node '" << node.getName() << "': ";
      remark << region.getReason();
      ++summary.numLeftWhole;
      continue;
    }
    if (!schemasAdded) {
      if (failed(addBuiltinSchemas(graph->getParentOfType<ModuleOp>(),
                                   {"aten::slice.Tensor", "aten::t.default",
                                    "aten::add.Tensor", "aten::div.Tensor",
                                    "aten::addmm.default", "aten::mm.default",
                                    "aten::cat.default"})))
        return failure();
      schemasAdded = true;
    }
    summary.numOriginalOps += region.getOps().size();
    HeadChunker chunker(graph, region, names, nextStorage);
    std::string headName = head.getName().str();
    size_t regionOps = region.getOps().size();
    unsigned n = std::min<int64_t>(chunks, region.getTokens());
    if (failed(chunker.rewrite(chunks)))
      return failure();
    emitRemark(graph.getLoc())
        << "joint-chunk-loss: the loss head '" << headName << "' in " << n
        << " token chunks: " << chunker.numChunkOps << " ops in place of "
        << regionOps;
    summary.numChunkOps += chunker.numChunkOps;
    ++summary.numChunked;
  }
  if (summary.numChunked && !sortBlockStably(graph.getBody().front()))
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

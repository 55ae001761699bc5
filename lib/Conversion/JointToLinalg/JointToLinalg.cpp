//===- JointToLinalg.cpp - Driver of convert-joint-to-linalg --------------===//
//
// The pass numbers the RNG ops' draws (a graph that draws gets an
// `rng_state` argument), makes in-place writes explicit (later readers of a
// written storage read the new contents, writes into views scattered back
// into their base: ViewWrites; the final value of a written graph argument
// becomes an extra result), turns every `joint.graph` into a `func.func`,
// then runs one full dialect conversion with every family's
// patterns. An op that stays illegal fails the pass with one diagnostic at
// the op naming its target, its node and the pattern's reason.
//
//===----------------------------------------------------------------------===//

#include "joint/Conversion/JointToLinalg/JointToLinalg.h"
#include "Utils.h"
#include "UtilsOps.h"
#include "ViewWrites.h"
#include "joint/Conversion/Passes.h"
#include "joint/Dialect/Joint/IR/OpSets.h"
#include "joint/Dialect/Joint/IR/TensorMeta.h"
#include "joint/Support/NamedDiagnostics.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_CONVERTJOINTTOLINALG
#define GEN_PASS_DEF_JOINTFUNCTIONALIZE
#include "joint/Conversion/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

/// Attribute on an extra func result: index of the graph argument whose
/// updated value it is (docs/lowering.md).
static constexpr llvm::StringLiteral kUpdatesAttr = "joint.updates";

/// RNG targets recognised by name when the operator table has no entry.
static bool isRandomTargetName(StringRef target) {
  StringRef op = target.drop_front(target.find("::") + 2);
  op = op.take_front(op.find('.'));
  op.consume_back("_");
  return llvm::is_contained(
      {"native_dropout", "dropout",     "feature_dropout",
       "alpha_dropout",  "rrelu",       "rrelu_with_noise",
       "rand",           "rand_like",   "randn",
       "randn_like",     "randint",     "randint_like",
       "randperm",       "bernoulli",   "normal",
       "uniform",        "exponential", "geometric",
       "cauchy",         "log_normal",  "multinomial",
       "poisson"},
      op);
}

/// True when `op` (tagged `nondeterministic_seeded`) draws no random numbers
/// because its `dropout_p` is 0 (SDPA variants carry the tag for their
/// dropout; torch's default dropout_p is 0).
static bool hasZeroDropout(CallFunctionOp op, SchemaOp entry) {
  std::optional<unsigned> index = entry.getArgIndex("dropout_p");
  if (!index)
    return false;
  Attribute p = getArgAttr(op, {*index, "dropout_p"});
  if (!p)
    return true;
  if (auto f = dyn_cast<FloatAttr>(p))
    return f.getValueAsDouble() == 0.0;
  if (auto i = dyn_cast<IntegerAttr>(p))
    return i.getValue().isZero();
  return false;
}

/// Gives every RNG op of `graph` (tag `nondeterministic_seeded`, unless its
/// dropout probability is 0; by name without a table entry) its draw index
/// (kRngDrawAttr): originals are numbered in graph order, and a remat clone
/// takes the index of the op it was `recomputed_from`, so it replays the same
/// numbers. Returns the number of draws.
static int64_t numberRandomDraws(GraphOp graph, SymbolTableCollection &tables) {
  llvm::StringMap<int64_t> draws;
  Builder b(graph.getContext());
  graph.walk([&](CallFunctionOp op) {
    SchemaOp entry = op.lookupSchema(&tables);
    bool random = entry ? entry.isRandom() && !hasZeroDropout(op, entry)
                        : isRandomTargetName(op.getTarget());
    if (!random)
      return;
    std::optional<StringRef> from = op.getRecomputedFrom();
    StringRef key = from ? *from : op.getName();
    auto [it, fresh] = draws.try_emplace(key, draws.size());
    op->setAttr(kRngDrawAttr, b.getI64IntegerAttr(it->second));
  });
  return draws.size();
}

/// Refuses every collective left (the CPU target has no process group; the
/// CUDA pipeline lowers functional collectives before this pass), one error
/// per collective; a wait on a refused collective is not reported again.
static LogicalResult refuseCollectives(ModuleOp module) {
  bool refused = false;
  module.walk([&](CallFunctionOp op) {
    if (!isCollective(op.getTarget()))
      return;
    auto source = op.getInputs().empty()
                      ? CallFunctionOp()
                      : op.getInputs()[0].getDefiningOp<CallFunctionOp>();
    if (op.getTarget().contains("::wait_tensor") && source &&
        isCollective(source.getTarget()))
      return;
    op.emitError() << "no lowering for collective " << describeOp(op)
                   << ": collectives lower only on the CUDA target "
                      "(_c10d_functional all_gather_into_tensor, "
                      "reduce_scatter_tensor, all_reduce, all_to_all_single "
                      "and their wait_tensor)";
    refused = true;
  });
  return failure(refused);
}

/// Rewrites in-place writes of `graph` into value semantics: every read of
/// the written storage after the writer reads the new contents (the
/// writer's aliasing result, or for a write into a view, a view of the base
/// into which the new values were scattered back: ViewWrites). Returns, per
/// written graph argument, its final value.
static FailureOr<llvm::MapVector<unsigned, Value>>
functionalizeWrites(GraphOp graph, SymbolTableCollection &tables) {
  llvm::MapVector<unsigned, Value> updates;
  Block &body = graph.getBody().front();
  lowering::ViewWrites views(body, tables);
  IRRewriter rewriter(graph.getContext());
  // A graph argument's final value is its storage's last base.
  auto carryWrite = [&](CallFunctionOp op, Value target,
                        Value result) -> LogicalResult {
    if (!result || result.getType() != target.getType())
      return emitNodeError(op)
             << "in-place write of " << describeOp(op)
             << " has no result of the written tensor's type to "
                "carry the updated value";
    FailureOr<std::pair<Value, Value>> bases =
        views.carry(op, target, result, rewriter);
    if (failed(bases))
      return failure();
    auto [oldBase, newBase] = *bases;
    if (auto arg = dyn_cast<BlockArgument>(oldBase))
      updates[arg.getArgNumber()] = newBase;
    else
      for (auto &[argNumber, value] : updates)
        if (value == oldBase)
          value = newBase;
    return success();
  };
  for (CallFunctionOp op :
       llvm::make_early_inc_range(body.getOps<CallFunctionOp>())) {
    // Writes torch's schema does not declare (batch norm's running stats),
    // or declares without returning the written value (rrelu's noise).
    for (auto [target, result] :
         lowering::functionalizeBatchNormStats(op, rewriter))
      if (failed(carryWrite(op, target, result)))
        return failure();
    for (auto [target, result] :
         lowering::functionalizeRReluNoise(op, rewriter))
      if (failed(carryWrite(op, target, result)))
        return failure();
    SchemaOp entry = op.lookupSchema(&tables);
    if (!entry)
      continue;
    SmallVector<unsigned> written = entry.getWrittenArgs();
    if (written.empty())
      continue;
    ArrayRef<Attribute> schemaArgs = entry.getArguments().getValue();
    ArrayRef<Attribute> schemaReturns = entry.getReturns().getValue();
    for (unsigned argIndex : written) {
      SmallVector<unsigned> operandIndices;
      if (failed(op.getOperandsOfSchemaArg(entry, argIndex, operandIndices)))
        return emitNodeError(op) << "cannot resolve the written argument "
                                 << argIndex << " of " << describeOp(op),
               failure();
      StringRef alias = cast<SchemaArgAttr>(schemaArgs[argIndex]).getAlias();
      // The result that aliases the written argument (`-> Tensor(a!)`).
      Value result;
      for (auto [i, ret] : llvm::enumerate(schemaReturns))
        if (i < op->getNumResults() &&
            cast<SchemaArgAttr>(ret).getAlias() == alias)
          result = op->getResult(i);
      for (unsigned operandIndex : operandIndices)
        if (failed(carryWrite(op, op->getOperand(operandIndex), result)))
          return failure();
    }
  }
  return updates;
}

/// Unit attribute of a graph joint-functionalize has rewritten.
static constexpr llvm::StringLiteral kFunctionalizedAttr =
    "joint.functionalized";

/// joint-functionalize on one graph (once: kFunctionalizedAttr marks it):
/// numbers its RNG draws (the count becomes the graph's kRngDrawsAttr),
/// makes every in-place write a value, and returns each written graph
/// argument's final value as an extra result (role `output`,
/// `joint.updates = <argument index>`, the argument's fqn or path).
static LogicalResult functionalizeGraph(GraphOp graph,
                                        SymbolTableCollection &tables) {
  if (graph->hasAttr(kFunctionalizedAttr))
    return success();
  MLIRContext *context = graph.getContext();
  Builder b(context);
  int64_t numDraws = numberRandomDraws(graph, tables);
  FailureOr<llvm::MapVector<unsigned, Value>> updates =
      functionalizeWrites(graph, tables);
  if (failed(updates))
    return failure();
  OutputOp output = graph.getOutputOp();
  SmallVector<Type> resultTypes(graph.getResultTypes());
  SmallVector<Attribute> resultAttrs;
  for (unsigned i = 0, e = graph.getNumResults(); i < e; ++i)
    resultAttrs.push_back(graph.getResultAttrDict(i)
                              ? Attribute(graph.getResultAttrDict(i))
                              : DictionaryAttr::get(context));
  for (auto &[argNumber, value] : *updates) {
    output->insertOperands(output->getNumOperands(), value);
    resultTypes.push_back(value.getType());
    NamedAttrList attrs;
    attrs.set(kRoleAttr, RoleAttr::get(context, Role::output));
    if (Attribute fqn = graph.getArgAttr(argNumber, kFQNAttr))
      attrs.set(kFQNAttr, fqn);
    if (Attribute path = graph.getArgAttr(argNumber, kPathAttr))
      attrs.set(kPathAttr, path);
    attrs.set(kUpdatesAttr, b.getI64IntegerAttr(argNumber));
    resultAttrs.push_back(attrs.getDictionary(context));
  }
  graph.setFunctionTypeAttr(TypeAttr::get(
      FunctionType::get(context, graph.getArgumentTypes(), resultTypes)));
  graph.setAllResultAttrs(resultAttrs);
  graph->setAttr(kFunctionalizedAttr, b.getUnitAttr());
  if (numDraws)
    graph->setAttr(kRngDrawsAttr, b.getI64IntegerAttr(numDraws));
  return success();
}

/// Replaces `graph` (functionalized first if it is not) by a `func.func` of
/// the same name, argument and result types and attributes; an updated
/// argument's result takes the argument's role, and a graph that draws
/// random numbers gets a last `rng_state` argument.
static LogicalResult convertGraphToFunc(GraphOp graph,
                                        SymbolTableCollection &tables) {
  if (failed(functionalizeGraph(graph, tables)))
    return failure();
  MLIRContext *context = graph.getContext();
  IRRewriter rewriter(context);
  OutputOp output = graph.getOutputOp();
  SmallVector<Value> results(output.getOperands());
  SmallVector<Type> resultTypes(graph.getResultTypes());
  SmallVector<Attribute> resultAttrs;
  for (unsigned i = 0, e = graph.getNumResults(); i < e; ++i) {
    DictionaryAttr attrs = graph.getResultAttrDict(i);
    if (!attrs) {
      resultAttrs.push_back(DictionaryAttr::get(context));
      continue;
    }
    NamedAttrList list(attrs);
    if (auto arg = attrs.getAs<IntegerAttr>(kUpdatesAttr))
      list.set(kRoleAttr, graph.getArgAttr(arg.getInt(), kRoleAttr));
    resultAttrs.push_back(list.getDictionary(context));
  }

  // A graph that draws random numbers gets a last argument: the step's RNG
  // state (seed, offset), which the Random family reads.
  SmallVector<Type> argTypes(graph.getArgumentTypes());
  SmallVector<Attribute> argAttrs;
  if (ArrayAttr attrs = graph.getArgAttrsAttr())
    argAttrs.assign(attrs.begin(), attrs.end());
  else
    argAttrs.assign(argTypes.size(), DictionaryAttr::get(context));
  Block &body = graph.getBody().front();
  if (auto draws = graph->getAttrOfType<IntegerAttr>(kRngDrawsAttr)) {
    auto stateType = RankedTensorType::get({2}, rewriter.getI64Type());
    argTypes.push_back(stateType);
    body.addArgument(stateType, graph.getLoc());
    NamedAttrList attrs;
    attrs.set("joint.name", rewriter.getStringAttr("rng_state"));
    attrs.set(kRngDrawsAttr, draws);
    argAttrs.push_back(attrs.getDictionary(context));
  }

  rewriter.setInsertionPoint(graph);
  auto func =
      func::FuncOp::create(rewriter, graph.getLoc(), graph.getSymName(),
                           FunctionType::get(context, argTypes, resultTypes));
  for (NamedAttribute attr : graph->getDiscardableAttrs())
    if (attr.getName() != kFunctionalizedAttr &&
        attr.getName() != kRngDrawsAttr)
      func->setAttr(attr.getName(), attr.getValue());
  func.setAllArgAttrs(argAttrs);
  func.setAllResultAttrs(resultAttrs);
  rewriter.inlineRegionBefore(graph.getBody(), func.getBody(), func.end());
  rewriter.setInsertionPoint(output);
  func::ReturnOp::create(rewriter, output.getLoc(), results);
  rewriter.eraseOp(output);
  rewriter.eraseOp(graph);
  return success();
}

/// The backend contract after the conversion: every op is legal for
/// `target` (no `joint` op but the schema table, no `ao` op unless kept).
/// Reports every op left, one error each ("no lowering for
/// 'aten::x.default' (node 'n'): reason"), as torch-mlir's
/// VerifyLinalgOnTensorsBackendContract does; the reason is the refusal its
/// pattern recorded, if any.
static LogicalResult
checkLoweredContract(ModuleOp module, const ConversionTarget &target,
                     const LoweringTypeConverter &typeConverter) {
  bool clean = true;
  module.walk([&](Operation *op) {
    if (target.isLegal(op))
      return;
    clean = false;
    InFlightDiagnostic diag = op->emitError() << "no lowering for ";
    if (auto atenOp = dyn_cast<CallFunctionOp>(op))
      markNamed(diag, atenOp.getName()) << describeOp(atenOp);
    else if (auto name = op->getAttrOfType<StringAttr>("name"))
      markNamed(diag, name.getValue())
          << "'" << op->getName() << "' (node '" << name.getValue() << "')";
    else
      diag << "'" << op->getName() << "'";
    if (StringRef reason = typeConverter.getRefusal(op); !reason.empty())
      diag << ": " << reason;
  });
  return success(clean);
}

/// torch allows empty slices anywhere in [0, size]; MLIR's verifier refuses
/// a static offset equal to the dim size even for zero elements. An
/// extract_slice with a static zero size becomes an empty tensor, an
/// insert_slice of one its destination.
static void foldEmptySlices(ModuleOp module) {
  auto hasZero = [](ArrayRef<int64_t> shape) {
    return llvm::is_contained(shape, 0);
  };
  IRRewriter rewriter(module.getContext());
  module.walk([&](Operation *op) {
    if (auto extract = dyn_cast<tensor::ExtractSliceOp>(op)) {
      RankedTensorType type = extract.getResultType();
      if (!hasZero(type.getShape()))
        return;
      rewriter.setInsertionPoint(extract);
      SmallVector<OpFoldResult> sizes;
      llvm::SmallBitVector dropped = extract.getDroppedDims();
      for (auto [i, size] : llvm::enumerate(extract.getMixedSizes()))
        if (!dropped.test(i))
          sizes.push_back(size);
      rewriter.replaceOpWithNewOp<tensor::EmptyOp>(extract, sizes,
                                                   type.getElementType());
    } else if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
      if (hasZero(insert.getSourceType().getShape()))
        rewriter.replaceOp(insert, insert.getDest());
    }
  });
}

namespace {
struct JointFunctionalizePass
    : public joint::impl::JointFunctionalizeBase<JointFunctionalizePass> {
  void runOnOperation() override {
    SymbolTableCollection tables;
    for (GraphOp graph : getOperation().getOps<GraphOp>())
      if (failed(functionalizeGraph(graph, tables)))
        return signalPassFailure();
  }
};

struct ConvertJointToLinalgPass
    : public joint::impl::ConvertJointToLinalgBase<ConvertJointToLinalgPass> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

void ConvertJointToLinalgPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *context = &getContext();
  if (failed(refuseCollectives(module)))
    return signalPassFailure();

  // Kept ao ops lose sight of their source node below; name unnamed ones
  // after it (`x_offload`, `x_offload_wait`, `x_reload`, `x_reload_wait`)
  // for the target runtime's error messages.
  if (keepAo)
    module.walk([](Operation *op) {
      if (!isa<ao::OffloadOp, ao::ReloadOp, ao::WaitTensorOp>(op) ||
          op->hasAttr("name"))
        return;
      Operation *src = op->getOperand(0).getDefiningOp();
      auto base = src ? src->getAttrOfType<StringAttr>("name") : nullptr;
      if (!base)
        return;
      StringRef stem = base.getValue();
      if (isa<ao::ReloadOp>(op))
        stem.consume_back("_offload_wait");
      const char *suffix = isa<ao::OffloadOp>(op)  ? "_offload"
                           : isa<ao::ReloadOp>(op) ? "_reload"
                                                   : "_wait";
      op->setAttr("name", StringAttr::get(op->getContext(), stem + suffix));
    });

  SymbolTableCollection tables;
  for (GraphOp graph : llvm::make_early_inc_range(module.getOps<GraphOp>()))
    if (failed(convertGraphToFunc(graph, tables)))
      return signalPassFailure();

  LoweringTypeConverter typeConverter;
  RewritePatternSet patterns(context);
  ConversionTarget target(*context);
  target.addLegalDialect<arith::ArithDialect,
                         bufferization::BufferizationDialect, func::FuncDialect,
                         linalg::LinalgDialect, math::MathDialect,
                         scf::SCFDialect, tensor::TensorDialect>();
  target.addLegalOp<ModuleOp, SchemaOp>();
  // Buffers and runtime calls a target placed in the graph before (the CUDA
  // pipeline's joint-gpu-attention-calls) stay.
  target.addLegalDialect("memref", "llvm");
  // joint and (unless kept) ao ops have no legality: a partial conversion
  // leaves those no pattern lowers in place for the contract check below,
  // which reports them all.
  if (keepAo)
    target.addLegalDialect<ao::AODialect>();
  else
    populateOffloadPatterns(typeConverter, patterns);
  populateElementwisePatterns(typeConverter, patterns);
  populateTensorConstructorsPatterns(typeConverter, patterns);
  populateDataMovementPatterns(typeConverter, patterns);
  populateSymIntPatterns(typeConverter, patterns);
  populateLinearPatterns(typeConverter, patterns);
  populateReductionPatterns(typeConverter, patterns);
  populateNormalizationPatterns(typeConverter, patterns);
  populateBatchNormPatterns(typeConverter, patterns);
  populateAttentionPatterns(typeConverter, patterns, sdpaRowBlock);
  populateIndirectDataMovementPatterns(typeConverter, patterns);
  populateConvolutionPatterns(typeConverter, patterns);
  populatePoolingPatterns(typeConverter, patterns);
  populateRandomPatterns(typeConverter, patterns);
  if (failed(applyPartialConversion(module, target, std::move(patterns))))
    return signalPassFailure();
  if (failed(checkLoweredContract(module, target, typeConverter)))
    return signalPassFailure();
  // Slices the verifier would reject (a static offset at the end of a dim,
  // for an empty slice) become what they mean.
  foldEmptySlices(module);

  // The operator table has served the patterns; nothing refers to it now.
  for (SchemaOp entry : llvm::make_early_inc_range(module.getOps<SchemaOp>()))
    entry.erase();
}

//===- Collectives.cpp - Functional collectives as NCCL calls -------------===//
//
// Implements `joint-gpu-collectives`: before convert-joint-to-linalg, each
// functional collective of torch (`_c10d_functional::`) becomes a call to
// the runtime's NCCL entry points (docs/lowering.md, "CUDA"), which start
// it on the communication stream after the compute stream's work so far and
// return a handle; its `wait_tensor` becomes `joint_nccl_wait(handle)` (the
// compute stream waits on the collective's event; the handle is released).
//
//   all_gather_into_tensor(x, n, g)   joint_nccl_all_gather(g, x, out,
//                                       numel(x), dtype, node)
//   reduce_scatter_tensor(x, op, n, g) joint_nccl_reduce_scatter(g, x, out,
//                                       numel(out), dtype, op, node)
//   all_reduce(x, op, g)              joint_nccl_all_reduce(g, x, out,
//                                       numel(x), dtype, op, node)
//   all_to_all_single(x, o, i, g)     joint_nccl_all_to_all(g, x, out, send,
//                                       recv, nranks, dtype, node)
//
// The input reaches the call as the pointer of an identity-layout buffer
// (`bufferization.to_buffer read_only`: bufferization copies a strided or
// offset value into a contiguous one first); the output is a step allocation
// (`memref.alloc`, a stream-ordered device allocation later) seen as a
// tensor through `bufferization.to_tensor restrict writable`, which the wait
// returns as is (no copy). The call is marked joint.reads_until_result_use:
// its buffers stay alive until the wait, the first user of its handle
// (BufferLiveness.h). Group and node names are private string constants;
// all-to-all counts (elements per peer) private i64 arrays.
//
// Each op is one conversion pattern (populateCollectiveToNcclCallPatterns):
// the collective is replaced by its output tensor and its handle, which its
// wait takes. The pass first checks every collective and wait (diagnostics
// naming the node), then runs applyPartialConversion with them illegal.
//
//===----------------------------------------------------------------------===//

#include "joint/Conversion/LowerToCUDA/Collectives.h"
#include "RuntimeCalls.h"
#include "joint/Conversion/LowerToCUDA/Passes.h"
#include "joint/Dialect/Joint/IR/JointOps.h"
#include "joint/Transforms/BufferLiveness.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Transforms/DialectConversion.h"

#include <map>

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTGPUCOLLECTIVES
#include "joint/Conversion/LowerToCUDA/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

namespace {

enum class Kind { AllGather, ReduceScatter, AllReduce, AllToAll, Wait };

constexpr llvm::StringLiteral kWaitFn = "joint_nccl_wait";

// Symbol prefixes of the group names and the all-to-all count arrays.
constexpr llvm::StringLiteral kGroupPrefix = "__joint_group_",
                              kCountsPrefix = "__joint_nccl_counts_";

/// The collective `target` names (`ns::op.overload`), if lowered here.
std::optional<Kind> getKind(StringRef target) {
  auto [ns, rest] = target.split("::");
  if (ns != "_c10d_functional" && ns != "_c10d_functional_autograd")
    return std::nullopt;
  return llvm::StringSwitch<std::optional<Kind>>(rest.split('.').first)
      .Case("all_gather_into_tensor", Kind::AllGather)
      .Case("reduce_scatter_tensor", Kind::ReduceScatter)
      .Case("all_reduce", Kind::AllReduce)
      .Case("all_to_all_single", Kind::AllToAll)
      .Case("wait_tensor", Kind::Wait)
      .Default(std::nullopt);
}

/// The runtime's JOINT_NCCL_DTYPE_* code for elements
/// of `type`, or -1 when NCCL moves no such elements here.
int32_t getDtypeCode(Type type) {
  if (type.isF32())
    return 0;
  if (type.isF16())
    return 1;
  if (type.isBF16())
    return 2;
  if (type.isF64())
    return 3;
  if (auto integer = dyn_cast<IntegerType>(type)) {
    unsigned width = integer.getWidth();
    if (integer.isUnsigned())
      return width == 8 ? 7 : -1;
    return width == 64 ? 4 : width == 32 ? 5 : width == 8 ? 6 : -1;
  }
  return -1;
}

/// The runtime's JOINT_REDUCE_* code of funcol's reduce op `name`, or -1.
int32_t getReduceCode(StringRef name) {
  return llvm::StringSwitch<int32_t>(name)
      .Case("sum", 0)
      .Case("avg", 1)
      .Case("product", 2)
      .Case("min", 3)
      .Case("max", 4)
      .Default(-1);
}

/// Argument `index` (`name` as a keyword) of `op`; null when not passed.
Attribute getArg(CallFunctionOp op, unsigned index, StringRef name) {
  ArrayAttr args = op.getArgsAttr();
  DictionaryAttr kwargs = op.getKwargsAttr();
  if (!args && !kwargs)
    return index < op.getInputs().size()
               ? OperandRefAttr::get(op.getContext(), index)
               : Attribute();
  if (args && index < args.size())
    return args[index];
  return kwargs ? kwargs.get(name) : Attribute();
}

/// One collective as the runtime runs it.
struct Collective {
  Kind kind;
  Value input;         // the tensor sent
  StringRef group;     // the process group's name
  int32_t dtype = -1;  // JOINT_NCCL_DTYPE_*
  int32_t reduce = -1; // JOINT_REDUCE_*, when it reduces
  int64_t count = 0;   // elements: send (gather, all-reduce), receive (RS)
  SmallVector<int64_t> send, recv; // all-to-all: elements per peer
  int64_t ranks = 0; // the group's size when the op states it, else 0
};

/// Elements of one dim-0 row of static-shaped `type`.
int64_t getRowElements(RankedTensorType type) {
  int64_t n = 1;
  for (int64_t size : type.getShape().drop_front())
    n *= size;
  return n;
}

/// The split sizes of `attr` (None or [] -> empty); failure when one is not
/// a static integer.
FailureOr<SmallVector<int64_t>> getSplits(Attribute attr) {
  SmallVector<int64_t> splits;
  if (!attr || isa<UnitAttr>(attr))
    return splits;
  auto array = dyn_cast<ArrayAttr>(attr);
  if (!array)
    return failure();
  for (Attribute a : array) {
    auto i = dyn_cast<IntegerAttr>(a);
    if (!i || i.getInt() < 0)
      return failure();
    splits.push_back(i.getInt());
  }
  return splits;
}

/// Reads collective `op` (not a wait); on failure `why` says what keeps
/// the CUDA target from lowering it.
FailureOr<Collective> readCollective(CallFunctionOp op, Kind kind,
                                     std::string &why) {
  auto fail = [&](const Twine &reason) {
    why = reason.str();
    return failure();
  };
  Collective c;
  c.kind = kind;
  auto input = dyn_cast_or_null<OperandRefAttr>(getArg(op, 0, "input"));
  if (!input || input.getIndex() >= op.getInputs().size() ||
      op->getNumResults() != 1)
    return fail("its input is not a tensor operand or it has not one result");
  c.input = op.getInputs()[input.getIndex()];
  auto in = dyn_cast<RankedTensorType>(c.input.getType());
  auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!in || !out || in.getElementType() != out.getElementType())
    return fail("its input and result are not tensors of one element type");
  if (!in.hasStaticShape() || !out.hasStaticShape())
    return fail("it has dynamic sizes; the CUDA target lowers collectives "
                "of static shapes");
  if (in.getRank() == 0 && kind != Kind::AllReduce)
    return fail("its input is a scalar; it needs a dim 0");
  c.dtype = getDtypeCode(in.getElementType());
  if (c.dtype < 0) {
    std::string type;
    llvm::raw_string_ostream os(type);
    os << in.getElementType();
    return fail("elements of type " + type +
                " (NCCL lowers f32, f16, bf16, f64, i64, i32, i8, ui8)");
  }
  // Arguments after the input: (reduce_op,) (group_size,) group_name.
  bool reduces = kind == Kind::ReduceScatter || kind == Kind::AllReduce;
  if (reduces) {
    auto op0 = dyn_cast_or_null<StringAttr>(getArg(op, 1, "reduce_op"));
    if (!op0)
      return fail("its reduce_op is not a string");
    c.reduce = getReduceCode(op0.getValue());
    if (c.reduce < 0)
      return fail("reduce op '" + op0.getValue() +
                  "' (NCCL lowers sum, avg, product, min, max)");
  }
  unsigned groupIndex =
      kind == Kind::AllGather || kind == Kind::AllReduce ? 2 : 3;
  auto group =
      dyn_cast_or_null<StringAttr>(getArg(op, groupIndex, "group_name"));
  if (!group)
    return fail("its group_name is not a string");
  c.group = group.getValue();
  int64_t numel = in.getNumElements();
  if (kind == Kind::AllGather || kind == Kind::ReduceScatter) {
    auto size = dyn_cast_or_null<IntegerAttr>(
        getArg(op, kind == Kind::AllGather ? 1 : 2, "group_size"));
    if (!size || size.getInt() <= 0)
      return fail("its group_size is not a positive integer");
    int64_t n = size.getInt();
    auto [small, large] = kind == Kind::AllGather ? std::make_pair(in, out)
                                                  : std::make_pair(out, in);
    auto shapeText = [](RankedTensorType t) {
      std::string text;
      llvm::raw_string_ostream os(text);
      llvm::interleave(t.getShape(), os, "x");
      return text;
    };
    if (small.getRank() != large.getRank() ||
        small.getShape().drop_front() != large.getShape().drop_front() ||
        small.getDimSize(0) * n != large.getDimSize(0))
      return fail("group_size " + Twine(n) +
                  " is not the dim-0 ratio of its output to its input (" +
                  shapeText(out) + " from " + shapeText(in) + ")");
    c.count = small.getNumElements();
    c.ranks = n;
    return c;
  }
  if (kind == Kind::AllReduce) {
    if (in != out)
      return fail("its result type differs from its input's");
    c.count = numel;
    return c;
  }
  // All-to-all: per-peer dim-0 rows, given or equal splits.
  if (in.getRank() != out.getRank() ||
      in.getShape().drop_front() != out.getShape().drop_front())
    return fail("its input and output rows differ in shape");
  FailureOr<SmallVector<int64_t>> outSplits =
      getSplits(getArg(op, 1, "output_split_sizes"));
  FailureOr<SmallVector<int64_t>> inSplits =
      getSplits(getArg(op, 2, "input_split_sizes"));
  if (failed(outSplits) || failed(inSplits))
    return fail("its split sizes are not static integers (or None)");
  size_t nranks = std::max(outSplits->size(), inSplits->size());
  if (nranks == 0)
    return fail("no split sizes give the group's size");
  auto fill = [&](SmallVector<int64_t> &splits, RankedTensorType type,
                  SmallVector<int64_t> &counts) -> LogicalResult {
    int64_t rows = type.getDimSize(0);
    if (splits.empty()) {
      if (rows % int64_t(nranks) != 0)
        return failure();
      splits.assign(nranks, rows / int64_t(nranks));
    }
    int64_t sum = 0;
    for (int64_t s : splits)
      sum += s;
    if (splits.size() != nranks || sum != rows)
      return failure();
    for (int64_t s : splits)
      counts.push_back(s * getRowElements(type));
    return success();
  };
  c.ranks = static_cast<int64_t>(nranks);
  if (failed(fill(*inSplits, in, c.send)) ||
      failed(fill(*outSplits, out, c.recv)))
    return fail("its split sizes do not cover the dim 0 of its input and "
                "output for " +
                Twine(nranks) + " ranks");
  return c;
}

/// The runtime's NCCL entry point `name` with its C signature.
func::FuncOp lookupOrDeclareNcclFunction(OpBuilder &b, Operation *op,
                                         StringRef name) {
  MLIRContext *ctx = b.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  Type i64 = b.getI64Type(), i32 = b.getI32Type();
  FunctionType type =
      llvm::StringSwitch<FunctionType>(name)
          .Case("joint_nccl_all_gather",
                FunctionType::get(ctx, {ptr, ptr, ptr, i64, i32, ptr}, ptr))
          .Cases(
              {"joint_nccl_reduce_scatter", "joint_nccl_all_reduce"},
              FunctionType::get(ctx, {ptr, ptr, ptr, i64, i32, i32, ptr}, ptr))
          .Case("joint_nccl_all_to_all",
                FunctionType::get(ctx, {ptr, ptr, ptr, ptr, ptr, i32, i32, ptr},
                                  ptr))
          .Default(FunctionType::get(ctx, {ptr}, i32));
  return lookupOrDeclareRuntimeFunction(b, op->getParentOfType<ModuleOp>(),
                                        name, type);
}

/// A collective -> `joint_nccl_<kind>(group, in, out, counts..., dtype,
/// (op,) node)` into a fresh allocation; replaced by that allocation as a
/// tensor and the call's handle.
struct CollectiveToNcclCall : public OpConversionPattern<CallFunctionOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(CallFunctionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<Kind> kind = getKind(op.getTarget());
    if (!kind || *kind == Kind::Wait)
      return rewriter.notifyMatchFailure(op, "not a lowered collective");
    std::string why;
    FailureOr<Collective> c = readCollective(op, *kind, why);
    if (failed(c))
      return rewriter.notifyMatchFailure(op, why);
    Location loc = op.getLoc();
    Value input = adaptor.getInputs()[llvm::find(op.getInputs(), c->input) -
                                      op.getInputs().begin()];
    auto inType = cast<RankedTensorType>(input.getType());
    auto outType = cast<RankedTensorType>(op->getResult(0).getType());
    Value in = bufferization::ToBufferOp::create(
        rewriter, loc,
        MemRefType::get(inType.getShape(), inType.getElementType()), input,
        /*read_only=*/true);
    Value out = memref::AllocOp::create(
        rewriter, loc,
        MemRefType::get(outType.getShape(), outType.getElementType()));
    Type i32 = rewriter.getI32Type(), i64 = rewriter.getI64Type();
    SmallVector<Value> args = {
        getStringPointer(rewriter, loc, kGroupPrefix, c->group),
        getBufferPointer(rewriter, loc, in),
        getBufferPointer(rewriter, loc, out)};
    StringRef fn;
    if (c->kind == Kind::AllToAll) {
      fn = "joint_nccl_all_to_all";
      args.push_back(
          getInt64ArrayPointer(rewriter, loc, kCountsPrefix, c->send));
      args.push_back(
          getInt64ArrayPointer(rewriter, loc, kCountsPrefix, c->recv));
      args.push_back(
          arith::ConstantIntOp::create(rewriter, loc, i32, c->send.size()));
    } else {
      fn = c->kind == Kind::AllGather       ? "joint_nccl_all_gather"
           : c->kind == Kind::ReduceScatter ? "joint_nccl_reduce_scatter"
                                            : "joint_nccl_all_reduce";
      args.push_back(
          arith::ConstantIntOp::create(rewriter, loc, i64, c->count));
    }
    args.push_back(arith::ConstantIntOp::create(rewriter, loc, i32, c->dtype));
    if (c->reduce >= 0)
      args.push_back(
          arith::ConstantIntOp::create(rewriter, loc, i32, c->reduce));
    args.push_back(getNodeNamePointer(rewriter, loc, op.getName()));
    auto call = func::CallOp::create(
        rewriter, loc, lookupOrDeclareNcclFunction(rewriter, op, fn), args);
    // NCCL reads the input and writes the output until the wait.
    call->setAttr(kReadsUntilResultUseAttr, rewriter.getUnitAttr());
    Value tensor = bufferization::ToTensorOp::create(
        rewriter, loc, outType, out, /*restrict=*/true, /*writable=*/true);
    SmallVector<SmallVector<Value>> replacement = {{tensor, call.getResult(0)}};
    rewriter.replaceOpWithMultiple(op, std::move(replacement));
    return success();
  }
};

/// `wait_tensor` of a collective -> `joint_nccl_wait(handle)`; replaced by
/// the collective's output tensor.
struct WaitToNcclWait : public OpConversionPattern<CallFunctionOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(CallFunctionOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (getKind(op.getTarget()) != Kind::Wait)
      return rewriter.notifyMatchFailure(op, "not a wait_tensor");
    auto inputs = adaptor.getInputs();
    if (inputs.size() != 1 || inputs[0].size() != 2 ||
        !isa<LLVM::LLVMPointerType>(inputs[0][1].getType()))
      return rewriter.notifyMatchFailure(op, "not the wait of a collective");
    Value tensor = inputs[0][0], handle = inputs[0][1];
    func::CallOp::create(rewriter, op.getLoc(),
                         lookupOrDeclareNcclFunction(rewriter, op, kWaitFn),
                         handle);
    rewriter.replaceOp(op, tensor);
    return success();
  }
};

/// Emits the error that keeps `op` (a collective or wait lowered here) from
/// being lowered and fails; succeeds when none does.
LogicalResult checkCollective(CallFunctionOp op, Kind kind) {
  auto error = [&]() {
    return op.emitOpError()
           << "'" << op.getTarget() << "' (node '" << op.getName() << "'): ";
  };
  if (kind == Kind::Wait) {
    auto source = op.getInputs().empty()
                      ? nullptr
                      : op.getInputs()[0].getDefiningOp<CallFunctionOp>();
    std::optional<Kind> sourceKind =
        source ? getKind(source.getTarget()) : std::nullopt;
    if (op.getInputs().size() != 1 || !sourceKind || *sourceKind == Kind::Wait)
      return error() << "waits on a value that is not the result of a "
                        "collective the CUDA target lowers";
    return success();
  }
  std::string why;
  if (failed(readCollective(op, kind, why)))
    return error() << why;
  Value result = op->getResult(0);
  auto wait = result.hasOneUse()
                  ? dyn_cast<CallFunctionOp>(*result.getUsers().begin())
                  : CallFunctionOp();
  if (!wait || getKind(wait.getTarget()) != Kind::Wait)
    return error() << "its result is used other than by one wait_tensor";
  return success();
}

/// Checks the collectives, then converts them all.
struct CollectivesPass
    : public joint::impl::JointGPUCollectivesBase<CollectivesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool failed = false;
    std::map<std::string, int64_t> groups; // name -> size (0: not stated)
    module.walk([&](CallFunctionOp op) {
      std::optional<Kind> kind = getKind(op.getTarget());
      if (!kind)
        return;
      failed |= mlir::failed(checkCollective(op, *kind));
      std::string why;
      if (*kind != Kind::Wait)
        if (FailureOr<Collective> c = readCollective(op, *kind, why);
            succeeded(c))
          groups[c->group.str()] = std::max(groups[c->group.str()], c->ranks);
    });
    if (failed)
      return signalPassFailure();
    MLIRContext *ctx = &getContext();
    if (!groups.empty()) {
      Builder b(ctx);
      SmallVector<NamedAttribute> sizes;
      for (const auto &[name, ranks] : groups)
        sizes.push_back(b.getNamedAttr(name, b.getI64IntegerAttr(ranks)));
      module->setAttr(kCollectiveGroupsAttr, b.getDictionaryAttr(sizes));
    }
    ConversionTarget target(*ctx);
    target.addDynamicallyLegalOp<CallFunctionOp>(
        [](CallFunctionOp op) { return !getKind(op.getTarget()); });
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(ctx);
    populateCollectiveToNcclCallPatterns(patterns);
    ConversionConfig config;
    config.foldingMode = DialectConversionFoldingMode::Never;
    if (mlir::failed(applyPartialConversion(module, target, std::move(patterns),
                                            config)))
      signalPassFailure();
  }
};

} // namespace

void joint::populateCollectiveToNcclCallPatterns(RewritePatternSet &patterns) {
  patterns.add<CollectiveToNcclCall, WaitToNcclWait>(patterns.getContext());
}

//===- AttentionCalls.cpp - SDPA through the runtime's cuDNN shim ---------===//
//
// Implements `joint-gpu-attention-calls`: before convert-joint-to-linalg
// (which decomposes every SDPA variant into contractions and softmax
// kernels), each recorded SDPA forward and backward that cuDNN's fused flash
// attention supports becomes a call to `joint_cudnn_sdpa_forward` /
// `joint_cudnn_sdpa_backward` on the compute stream. Operands reach the shim
// as pointers of identity-layout buffers (`bufferization.to_buffer
// read_only`; bufferization copies a strided value first), results are step
// allocations (`memref.alloc`, stream-ordered device allocations later) seen
// as tensors through `bufferization.to_tensor restrict writable`, as
// joint-gpu-offload's reloads. The support rule is the shim's (cuDNN 9
// frontend: bf16/f16, head_dim a multiple of 8 up to 256, query heads a
// multiple of key/value heads) plus what the lowering can describe: static
// shapes, no dropout, a float mask of the operands' type broadcast over batch
// and heads only (an additive bias), and the statistics as cuDNN keeps them
// (f32 natural-log logsumexp, contiguous [B, H, L] = torch's flash and cuDNN
// layouts; the efficient variant's [B, H, pad32(L)] only when L needs no
// padding). Anything else stays the decomposition (the fallback), with a
// remark under `remarks`.
//
// The rewrite is one conversion pattern (populateSdpaToCudnnCallPatterns)
// run by applyPartialConversion: it visits a forward before its backward,
// and the driver keeps the forward's bookkeeping results, which only the
// backward reads, until the backward is replaced too.
//
//===----------------------------------------------------------------------===//

#include "joint/Conversion/LowerToCUDA/AttentionCalls.h"
#include "RuntimeCalls.h"

#include "joint/Conversion/JointToLinalg/JointToLinalg.h"
#include "joint/Conversion/LowerToCUDA/Passes.h"
#include "joint/Dialect/Joint/IR/JointOps.h"
#include "joint/Support/NamedDiagnostics.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTGPUATTENTIONCALLS
#include "joint/Conversion/LowerToCUDA/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

namespace {

// joint_cuda_runtime.h's JOINT_DTYPE_* codes.
constexpr int32_t kBF16 = 1, kF16 = 2;

// Symbol prefix of the constant size and stride arrays.
constexpr llvm::StringLiteral kSizesPrefix = "__joint_sdpa_sizes_";

/// One SDPA call cuDNN runs, with its sizes.
struct Plan {
  CallFunctionOp op;
  SdpaCall call;
  int64_t batch, heads, headsKV, seqQ, seqKV, headDim;
};

std::string str(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

/// Row-major strides of `shape`.
SmallVector<int64_t> contiguousStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = int64_t(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// Replaces a recorded SDPA forward or backward call that cuDNN supports by
/// the shim call; with `remarks`, says why any other SDPA call stays.
struct SdpaToCudnnCall : public OpConversionPattern<CallFunctionOp> {
  SdpaToCudnnCall(MLIRContext *ctx, bool remarks)
      : OpConversionPattern(ctx), remarks(remarks) {}

  // One-to-N adaptor: a forward's bookkeeping results, which feed only
  // backward calls replaced here too, are replaced by no value. The shim
  // call reads the op's own operands instead (replaced when it commits).
  LogicalResult
  matchAndRewrite(CallFunctionOp op, OneToNOpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::string reason;
    FailureOr<SdpaCall> call = readSdpaCall(op, op.getInputs(), reason);
    if (failed(call)) // not SDPA, or refused by the decomposition
      return rewriter.notifyMatchFailure(op, "not an SDPA call");
    Plan plan{op, *call, 0, 0, 0, 0, 0, 0};
    reason = checkSupport(plan);
    if (!reason.empty()) {
      if (remarks)
        markNamed(op.emitRemark(), op.getName())
            << "SDPA of node '" << op.getName()
            << "' stays generated kernels: " << reason;
      return failure();
    }
    rewrite(rewriter, plan);
    return success();
  }

  /// True when `user` is a backward SDPA call that cuDNN runs.
  static bool isCudnnBackward(Operation *user) {
    auto op = dyn_cast<CallFunctionOp>(user);
    if (!op)
      return false;
    std::string reason;
    FailureOr<SdpaCall> call = readSdpaCall(op, op.getInputs(), reason);
    if (failed(call) || !call->backward)
      return false;
    Plan plan{op, *call, 0, 0, 0, 0, 0, 0};
    return checkSupport(plan).empty();
  }

  /// Why cuDNN cannot run `p.op` (empty when it can); fills the sizes.
  static std::string checkSupport(Plan &p) {
    const SdpaCall &c = p.call;
    auto q = cast<RankedTensorType>(c.q.getType());
    auto k = cast<RankedTensorType>(c.k.getType());
    auto v = cast<RankedTensorType>(c.v.getType());
    if (!q.hasStaticShape() || !k.hasStaticShape() || !v.hasStaticShape())
      return "dynamic sizes (the shim's graphs are built for static shapes)";
    Type elem = q.getElementType();
    if (!elem.isBF16() && !elem.isF16())
      return "element type " + str(elem) + " (cuDNN SDPA runs bf16 or f16)";
    if (k.getElementType() != elem || v.getElementType() != elem)
      return "query, key and value differ in element type";
    p.batch = q.getDimSize(0);
    p.heads = q.getDimSize(1);
    p.seqQ = q.getDimSize(2);
    p.headDim = q.getDimSize(3);
    p.headsKV = k.getDimSize(1);
    p.seqKV = k.getDimSize(2);
    if (k.getShape() != v.getShape() || k.getDimSize(0) != p.batch ||
        k.getDimSize(3) != p.headDim)
      return "key/value shapes do not match the query's";
    if (p.headDim % 8 != 0 || p.headDim > 256)
      return "head_dim " + std::to_string(p.headDim) +
             " (cuDNN: a multiple of 8 up to 256)";
    if (p.headsKV == 0 || p.heads % p.headsKV != 0)
      return "query heads are not a multiple of key/value heads";
    if (c.mask) {
      auto m = cast<RankedTensorType>(c.mask.getType());
      if (m.getElementType() != elem || m.getRank() != 4 ||
          !m.hasStaticShape() ||
          (m.getDimSize(0) != 1 && m.getDimSize(0) != p.batch) ||
          (m.getDimSize(1) != 1 && m.getDimSize(1) != p.heads) ||
          m.getDimSize(2) != p.seqQ || m.getDimSize(3) != p.seqKV)
        return "mask " + str(m) +
               " is not an additive bias [1|B, 1|H, L, S] of the "
               "operands' element type";
    }
    auto out =
        RankedTensorType::get({p.batch, p.heads, p.seqQ, p.headDim}, elem);
    Operation *op = p.op;
    if (c.backward) {
      if (c.gradOut.getType() != out || c.out.getType() != out)
        return "grad_out/out are not " + str(out);
      if (!isStats(c.logsumexp.getType(), p))
        return "saved logsumexp " + str(c.logsumexp.getType()) +
               " is not cuDNN's f32 [B, H, L] statistics";
      if (op->getNumResults() < 3 || op->getResult(0).getType() != q ||
          op->getResult(1).getType() != k || op->getResult(2).getType() != v)
        return "gradients do not have the operands' types";
      for (Value r : op->getResults().drop_front(3))
        if (!r.use_empty())
          return "the attention bias gradient is used";
      return "";
    }
    if (op->getNumResults() < 2 || op->getResult(0).getType() != out)
      return "output is not " + str(out);
    Value second = op->getResult(1);
    if (c.math ? !second.use_empty() : !isStats(second.getType(), p))
      return c.math ? "the attention weights are used"
                    : "logsumexp " + str(second.getType()) +
                          " is not cuDNN's f32 [B, H, L] statistics";
    // Its bookkeeping results (RNG state, sequence offsets) may feed only
    // backward calls that cuDNN runs too (they ignore them).
    for (Value r : op->getResults().drop_front(2))
      for (Operation *user : r.getUsers())
        if (!isCudnnBackward(user))
          return "a result beyond output/logsumexp feeds node '" +
                 (isa<CallFunctionOp>(user)
                      ? cast<CallFunctionOp>(user).getName().str()
                      : user->getName().getStringRef().str()) +
                 "', which cuDNN does not run";
    return "";
  }

  /// f32 [B, H, L] or [B, H, L, 1]: cuDNN's contiguous statistics.
  static bool isStats(Type type, const Plan &p) {
    auto t = dyn_cast<RankedTensorType>(type);
    if (!t || !t.getElementType().isF32())
      return false;
    SmallVector<int64_t> flat = {p.batch, p.heads, p.seqQ};
    if (t.getShape() == ArrayRef<int64_t>(flat))
      return true;
    flat.push_back(1);
    return t.getShape() == ArrayRef<int64_t>(flat);
  }

  /// Replaces `p.op` by the shim call.
  static void rewrite(ConversionPatternRewriter &b, Plan &p) {
    MLIRContext *ctx = b.getContext();
    Location loc = p.op.getLoc();
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    Type i32 = b.getI32Type(), i64 = b.getI64Type(), f32 = b.getF32Type();
    const SdpaCall &c = p.call;
    SmallVector<Value> args;
    SmallVector<Type> types;
    auto add = [&](Value v) {
      args.push_back(v);
      types.push_back(v.getType());
    };
    auto i32Const = [&](int64_t v) {
      add(arith::ConstantIntOp::create(b, loc, i32, v));
    };
    auto i64Const = [&](int64_t v) {
      add(arith::ConstantIntOp::create(b, loc, i64, v));
    };
    // Operand `t` read in place, with its contiguous strides.
    auto operand = [&](Value t) {
      auto type = cast<RankedTensorType>(t.getType());
      Value buffer = bufferization::ToBufferOp::create(
          b, loc, MemRefType::get(type.getShape(), type.getElementType()), t,
          /*read_only=*/true);
      add(getBufferPointer(b, loc, buffer));
      add(getInt64ArrayPointer(b, loc, kSizesPrefix,
                               contiguousStrides(type.getShape())));
    };
    // A result of type `type` written by the shim: its pointer (and strides
    // unless `stats`); returns the tensor that replaces the op's result.
    auto result = [&](Type type, bool stats) -> Value {
      auto t = cast<RankedTensorType>(type);
      auto bufferType = MemRefType::get(t.getShape(), t.getElementType());
      Value buffer = memref::AllocOp::create(b, loc, bufferType);
      add(getBufferPointer(b, loc, buffer));
      if (!stats)
        add(getInt64ArrayPointer(b, loc, kSizesPrefix,
                                 contiguousStrides(t.getShape())));
      return buffer;
    };
    add(getNodeNamePointer(b, loc, p.op.getName()));
    auto elem = cast<RankedTensorType>(c.q.getType()).getElementType();
    i32Const(elem.isBF16() ? kBF16 : kF16);
    for (int64_t size :
         {p.batch, p.heads, p.headsKV, p.seqQ, p.seqKV, p.headDim})
      i64Const(size);
    double scale =
        std::isnan(c.scale) ? 1.0 / std::sqrt(double(p.headDim)) : c.scale;
    add(arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f32),
                                       APFloat(float(scale))));
    i32Const(c.causal ? 1 : 0);
    operand(c.q);
    operand(c.k);
    operand(c.v);
    SmallVector<Value> buffers; // the results' buffers, in result order
    if (c.backward) {
      operand(c.out);
      operand(c.gradOut);
      Value lse = c.logsumexp;
      auto lseType = cast<RankedTensorType>(lse.getType());
      add(getBufferPointer(
          b, loc,
          bufferization::ToBufferOp::create(
              b, loc,
              MemRefType::get(lseType.getShape(), lseType.getElementType()),
              lse, /*read_only=*/true)));
      for (unsigned i = 0; i < 3; ++i)
        buffers.push_back(result(p.op->getResult(i).getType(), false));
    } else {
      buffers.push_back(result(p.op->getResult(0).getType(), false));
      if (c.math) // the attention weights are unused: no statistics
        add(LLVM::ZeroOp::create(b, loc, ptr));
      else
        buffers.push_back(result(p.op->getResult(1).getType(), true));
    }
    if (c.mask) {
      auto m = cast<RankedTensorType>(c.mask.getType());
      Value buffer = bufferization::ToBufferOp::create(
          b, loc, MemRefType::get(m.getShape(), m.getElementType()), c.mask,
          /*read_only=*/true);
      add(getBufferPointer(b, loc, buffer));
      add(getInt64ArrayPointer(b, loc, kSizesPrefix, m.getShape()));
      add(getInt64ArrayPointer(b, loc, kSizesPrefix,
                               contiguousStrides(m.getShape())));
    } else {
      for (int i = 0; i < 3; ++i)
        add(LLVM::ZeroOp::create(b, loc, ptr));
    }
    StringRef name =
        c.backward ? "joint_cudnn_sdpa_backward" : "joint_cudnn_sdpa_forward";
    func::FuncOp fn = lookupOrDeclareRuntimeFunction(
        b, p.op->getParentOfType<ModuleOp>(), name,
        FunctionType::get(ctx, types, {i32}));
    func::CallOp::create(b, loc, fn, args);
    // The other results are unused, or bookkeeping only cuDNN's backward
    // calls take: replaced by nothing.
    SmallVector<Value> replacements(p.op->getNumResults());
    for (auto [i, buffer] : llvm::enumerate(buffers))
      replacements[i] = bufferization::ToTensorOp::create(
          b, loc, p.op->getResult(i).getType(), buffer, /*restrict=*/true,
          /*writable=*/true);
    b.replaceOp(p.op, replacements);
  }

  bool remarks;
};

/// Converts every SDPA call cuDNN supports; the others stay.
struct AttentionCallsPass
    : public joint::impl::JointGPUAttentionCallsBase<AttentionCallsPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    // A joint.call_function is left to the pattern: an SDPA call cuDNN does
    // not run stays (the decomposition's fallback), as do all other calls.
    target.addDynamicallyLegalOp<CallFunctionOp>(
        [](Operation *) -> std::optional<bool> { return std::nullopt; });
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(ctx);
    populateSdpaToCudnnCallPatterns(patterns, remarks);
    ConversionConfig config;
    config.foldingMode = DialectConversionFoldingMode::Never;
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace

void joint::populateSdpaToCudnnCallPatterns(RewritePatternSet &patterns,
                                            bool remarks) {
  patterns.add<SdpaToCudnnCall>(patterns.getContext(), remarks);
}

//===- LibraryCalls.cpp - GEMMs through the cuBLAS shim -------------------===//
//
// Implements `joint-gpu-library-calls`: on the bufferized step, every
// top-level `linalg.matmul` / `linalg.batch_matmul` that cuBLAS supports
// becomes a call to the runtime's `joint_cublas_gemm` /
// `joint_cublas_gemm_strided_batched`, which run `cublasGemmEx` /
// `cublasGemmStridedBatchedEx` on the compute stream (the stream of the
// step's kernels). The lowered op accumulates into its output (C += A B), so
// the call passes alpha = beta = 1, except after a `linalg.fill` of zero into
// exactly C with nothing in between touching C's allocation: that fill is
// erased and the call passes beta = 0 (cuBLAS then never reads C), one
// kernel fewer per GEMM. Supported
// (as XLA and torch do): identity-layout buffers, indexing maps reading A
// and B plain or transposed (cuBLAS transpose flags), and
// A/B/C all f32 (no TF32), or bf16/f16 A and B into an f32 C
// (CUBLAS_COMPUTE_32F, the lowering's f32 accumulator, rounded afterwards by
// its own kernel) or into a C of their type. Anything else (integers, mixed
// A/B, strided views, other maps) stays a generated kernel. The rewrites are
// two patterns (populateGemmToCublasCallPatterns: the fill, then the GEMM it
// marks with `joint.gemm_beta_zero`), applied by a single walk.
//
//===----------------------------------------------------------------------===//

#include "joint/Conversion/LowerToCUDA/LibraryCalls.h"
#include "RuntimeCalls.h"
#include "Utils.h"
#include "joint/Conversion/LowerToCUDA/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTGPULIBRARYCALLS
#include "joint/Conversion/LowerToCUDA/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

namespace {

// joint_cuda_runtime.h's JOINT_DTYPE_* codes.
constexpr int32_t kF32 = 0, kBF16 = 1, kF16 = 2, kBF16F32 = 3, kF16F32 = 4;

/// The shim's dtype code for A/B elements `in` and C elements `out`, or -1
/// when cuBLAS is not used for them.
static int32_t gemmDtype(Type in, Type out) {
  if (in.isF32())
    return out.isF32() ? kF32 : -1;
  if (in.isBF16())
    return out.isF32() ? kBF16F32 : out.isBF16() ? kBF16 : -1;
  if (in.isF16())
    return out.isF32() ? kF16F32 : out.isF16() ? kF16 : -1;
  return -1;
}

/// Marks a GEMM whose output a zero fill just wrote: the call passes beta = 0.
constexpr llvm::StringLiteral kBetaZeroAttr = "joint.gemm_beta_zero";

/// A GEMM the shim runs: operands, shim dtype code and transpose flags.
struct CublasGemm {
  Value a, b, c;
  int32_t dtype;
  bool transA, transB;
};

/// (transA, transB) when `op`'s maps read A as [(batch,) m, k] or
/// [(batch,) k, m], B as [k, n] or [n, k] and write C as [m, n] (the
/// transposes `joint-fold-transposes` folds); nullopt otherwise.
static std::optional<std::pair<bool, bool>> getTransposes(linalg::LinalgOp op) {
  MLIRContext *ctx = op.getContext();
  unsigned lead = isa<linalg::BatchMatmulOp>(op) ? 1 : 0;
  auto map = [&](unsigned i, unsigned j) {
    SmallVector<AffineExpr> e;
    if (lead)
      e.push_back(getAffineDimExpr(0, ctx));
    e.push_back(getAffineDimExpr(lead + i, ctx));
    e.push_back(getAffineDimExpr(lead + j, ctx));
    return AffineMap::get(lead + 3, 0, e, ctx);
  };
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  // Loops (batch,) m = 0, n = 1, k = 2.
  if (maps[2] != map(0, 1))
    return std::nullopt;
  bool transA = maps[0] == map(2, 0), transB = maps[1] == map(1, 2);
  if ((!transA && maps[0] != map(0, 2)) || (!transB && maps[1] != map(2, 1)))
    return std::nullopt;
  return std::make_pair(transA, transB);
}

/// `op` as a GEMM of the shim when it is a top-level `linalg.matmul` /
/// `linalg.batch_matmul` cuBLAS supports; failure with the reason.
static FailureOr<CublasGemm> getCublasGemm(Operation *op, std::string &why) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) || !linalgOp) {
    why = "not a matmul";
    return failure();
  }
  auto func = dyn_cast<func::FuncOp>(op->getParentOp());
  if (!func || op->getBlock() != &func.getBody().front()) {
    why = "not in a step's top level";
    return failure();
  }
  Value a = linalgOp.getDpsInputs()[0], b = linalgOp.getDpsInputs()[1];
  Value c = linalgOp.getDpsInits()[0];
  auto typeA = dyn_cast<MemRefType>(a.getType());
  auto typeB = dyn_cast<MemRefType>(b.getType());
  auto typeC = dyn_cast<MemRefType>(c.getType());
  if (!typeA || !typeB || !typeC || !hasIdentityLayout(a) ||
      !hasIdentityLayout(b) || !hasIdentityLayout(c) ||
      typeA.getElementType() != typeB.getElementType()) {
    why = "unsupported operand types";
    return failure();
  }
  std::optional<std::pair<bool, bool>> trans = getTransposes(linalgOp);
  int32_t dtype = gemmDtype(typeA.getElementType(), typeC.getElementType());
  if (!trans || dtype < 0) {
    why = "unsupported maps or types";
    return failure();
  }
  return CublasGemm{a, b, c, dtype, trans->first, trans->second};
}

/// The allocation `v` views (through view-like ops).
static Value getRootBuffer(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

/// A `linalg.fill` of zero whose buffer the next op touching its allocation
/// (nested ops included) takes as the output of a shim GEMM: erased, the
/// GEMM marked to pass beta = 0 (it overwrites every element of C).
struct ZeroFillIntoGemm : public OpRewritePattern<linalg::FillOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::FillOp fill,
                                PatternRewriter &rewriter) const override {
    if (!fill.hasPureBufferSemantics() ||
        !matchPattern(fill.value(), m_AnyZeroFloat()))
      return rewriter.notifyMatchFailure(fill, "not a zero fill of a buffer");
    Value c = fill.getDpsInits()[0];
    Value root = getRootBuffer(c);
    for (Operation *it = fill->getNextNode(); it; it = it->getNextNode()) {
      WalkResult touches = it->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands())
          if (isa<BaseMemRefType>(operand.getType()) &&
              getRootBuffer(operand) == root)
            return WalkResult::interrupt();
        return WalkResult::advance();
      });
      if (!touches.wasInterrupted())
        continue;
      std::string why;
      FailureOr<CublasGemm> gemm = getCublasGemm(it, why);
      if (failed(gemm) || gemm->c != c || gemm->a == c || gemm->b == c ||
          getRootBuffer(gemm->a) == root || getRootBuffer(gemm->b) == root)
        return rewriter.notifyMatchFailure(fill, "not read first by a GEMM "
                                                 "that overwrites it");
      rewriter.modifyOpInPlace(
          it, [&] { it->setAttr(kBetaZeroAttr, rewriter.getUnitAttr()); });
      rewriter.eraseOp(fill);
      return success();
    }
    return rewriter.notifyMatchFailure(fill, "no GEMM reads it");
  }
};

/// Replaces a top-level `linalg.matmul` / `linalg.batch_matmul` that cuBLAS
/// supports by the shim call computing C = op(A) op(B) + beta C; others
/// stay.
struct GemmToCublasCall : public OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    std::string why;
    FailureOr<CublasGemm> gemm = getCublasGemm(op, why);
    if (failed(gemm))
      return rewriter.notifyMatchFailure(op, why);
    replace(rewriter, op, gemm->a, gemm->b, gemm->c, gemm->dtype, gemm->transA,
            gemm->transB, op->hasAttr(kBetaZeroAttr));
    return success();
  }

  /// C[(batch,) m, n] = op(A) op(B) + beta C as a shim call (beta 0 when
  /// `betaZero`, else 1); op(A) = A[(batch,) m, k] or, with `transA`, the
  /// transpose of A[(batch,) k, m] (B likewise).
  static void replace(RewriterBase &b0, linalg::LinalgOp op, Value a, Value b,
                      Value c, int32_t dtype, bool transA, bool transB,
                      bool betaZero) {
    Location loc = op.getLoc();
    Type i64 = b0.getI64Type(), i32 = b0.getI32Type(), f32 = b0.getF32Type();
    Type ptr = LLVM::LLVMPointerType::get(b0.getContext());
    bool batched = isa<linalg::BatchMatmulOp>(op);
    unsigned lead = batched ? 1 : 0;
    auto dim = [&](Value v, unsigned i) -> Value {
      Value d = memref::DimOp::create(b0, loc, v, i);
      return arith::IndexCastOp::create(b0, loc, i64, d);
    };
    auto pointer = [&](Value v) { return joint::getBufferPointer(b0, loc, v); };
    auto i32Const = [&](int32_t v) -> Value {
      return arith::ConstantIntOp::create(b0, loc, i32, v);
    };
    Value m = dim(a, transA ? lead + 1 : lead),
          k = dim(a, transA ? lead : lead + 1),
          n = dim(b, transB ? lead : lead + 1);
    Value one = arith::ConstantFloatOp::create(b0, loc, cast<FloatType>(f32),
                                               APFloat(1.0f));
    Value flagA = i32Const(transA);
    Value flagB = transB == transA ? flagA : i32Const(transB);
    // The node the GEMM came from (joint-gpu-name-locations), for messages.
    StringRef nodeName = joint::getNodeName(loc);
    Value node = nodeName.empty()
                     ? Value(LLVM::ZeroOp::create(b0, loc, ptr))
                     : joint::getNodeNamePointer(b0, loc, nodeName);
    // Row-major: lda = k (m when transposed), ldb = n (k), ldc = n.
    SmallVector<Value> args = {node, i32Const(dtype), flagA, flagB, m, n, k,
                               one};
    SmallVector<Type> types = {ptr, i32, i32, i32, i64, i64, i64, f32};
    auto operand = [&](Value buffer, Value ld, Value stride) {
      args.push_back(pointer(buffer));
      types.push_back(ptr);
      args.push_back(ld);
      types.push_back(i64);
      if (stride) {
        args.push_back(stride);
        types.push_back(i64);
      }
    };
    Value strideA, strideB, strideC;
    if (batched) {
      strideA = arith::MulIOp::create(b0, loc, m, k);
      strideB = arith::MulIOp::create(b0, loc, k, n);
      strideC = arith::MulIOp::create(b0, loc, m, n);
    }
    operand(a, transA ? m : k, strideA);
    operand(b, transB ? k : n, strideB);
    args.push_back(betaZero ? Value(arith::ConstantFloatOp::create(
                                  b0, loc, cast<FloatType>(f32), APFloat(0.0f)))
                            : one); // beta
    types.push_back(f32);
    operand(c, n, strideC);
    if (batched) {
      args.push_back(dim(a, 0));
      types.push_back(i64);
    }
    StringRef name =
        batched ? "joint_cublas_gemm_strided_batched" : "joint_cublas_gemm";
    auto fnType = FunctionType::get(b0.getContext(), types, {i32});
    func::FuncOp fn = joint::lookupOrDeclareRuntimeFunction(
        b0, op->getParentOfType<ModuleOp>(), name, fnType);
    func::CallOp::create(b0, loc, fn, args);
    b0.eraseOp(op);
  }
};

/// The ops of `block` using a buffer of allocation `root` (views of it
/// included; a nested use counts at its ancestor in `block`), in block
/// order: found through the use lists, not by scanning the block.
static SmallVector<Operation *> getTouchingOps(Value root, Block *block) {
  llvm::SetVector<Operation *> ops;
  SmallVector<Value> values{root};
  while (!values.empty()) {
    Value value = values.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == value)
        values.push_back(view->getResult(0));
      if (Operation *inBlock = block->findAncestorOpInBlock(*user))
        ops.insert(inBlock);
    }
  }
  SmallVector<Operation *> sorted = ops.takeVector();
  llvm::sort(sorted,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return sorted;
}

/// True when `op` is an all-parallel generic rounding its one f32 input,
/// read and written with identity maps, to its output's 16-bit type.
static bool isTruncation(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 || !generic.hasPureBufferSemantics() ||
      generic.getNumReductionLoops() != 0 ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return false;
  Block *body = generic.getBody();
  if (body->getOperations().size() != 2)
    return false;
  auto trunc = dyn_cast<arith::TruncFOp>(body->front());
  return trunc && trunc.getIn() == body->getArgument(0) &&
         trunc.getIn().getType().isF32() &&
         body->getTerminator()->getOperand(0) == trunc.getResult();
}

/// A bf16/f16 GEMM into an f32 accumulator that a zero fill wrote and that
/// a truncation alone reads afterwards (the lowering of a 16-bit matmul):
/// the GEMM becomes the shim call writing the truncation's output in its
/// type instead (cuBLAS accumulates in f32 and rounds to nearest even when
/// it stores C, as the truncation does), with beta = 0; the fill, the
/// truncation and the unused accumulator are erased. Only for a GEMM the
/// shim runs.
static void fuseTruncationIntoGemm(linalg::LinalgOp gemm) {
  if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(gemm) ||
      !gemm.hasPureBufferSemantics())
    return;
  OpOperand *init = gemm.getDpsInitOperand(0);
  Value c = init->get(), root = getRootBuffer(c);
  Block *block = gemm->getBlock();
  // The accumulator's users: the fill right before the GEMM, the
  // truncation right after it and last.
  SmallVector<Operation *> users = getTouchingOps(root, block);
  auto at = llvm::find(users, gemm.getOperation());
  if (at == users.end() || at == users.begin() || at + 2 != users.end())
    return;
  Operation *fill = *(at - 1), *next = *(at + 1);
  auto zero = dyn_cast<linalg::FillOp>(fill);
  if (!zero || zero.getDpsInits()[0] != c ||
      !matchPattern(zero.value(), m_AnyZeroFloat()))
    return;
  if (!isTruncation(next) || next->getOperand(0) != c)
    return;
  Value d = cast<linalg::GenericOp>(next).getDpsInits()[0];
  Value rootD = getRootBuffer(d);
  if (rootD == root || llvm::any_of(gemm.getDpsInputs(), [&](Value v) {
        return getRootBuffer(v) == rootD;
      }))
    return;
  // Nothing between the GEMM and the truncation uses the output's buffer.
  if (llvm::any_of(getTouchingOps(rootD, block), [&](Operation *op) {
        return gemm->isBeforeInBlock(op) && op->isBeforeInBlock(next);
      }))
    return;
  std::string why;
  FailureOr<CublasGemm> call = getCublasGemm(gemm, why);
  auto typeC = cast<MemRefType>(c.getType());
  auto typeD = cast<MemRefType>(d.getType());
  if (failed(call) || (call->dtype != kBF16F32 && call->dtype != kF16F32) ||
      !hasIdentityLayout(d) || typeD.getShape() != typeC.getShape() ||
      typeD.getElementType() !=
          cast<MemRefType>(call->a.getType()).getElementType())
    return;
  // D's allocation and views move above the GEMM when they are after it
  // (their other operands, sizes, must already be defined above it).
  SmallVector<Operation *> defs;
  for (Value v = d; Operation *def = v.getDefiningOp();) {
    if (def->getBlock() != gemm->getBlock() || def->isBeforeInBlock(gemm))
      break;
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view && !isa<memref::AllocOp>(def))
      return;
    for (Value operand : def->getOperands()) {
      Operation *o = operand.getDefiningOp();
      if (o && o->getBlock() == gemm->getBlock() && !o->isBeforeInBlock(gemm) &&
          !(view && operand == view.getViewSource()))
        return;
    }
    defs.push_back(def);
    if (!view)
      break;
    v = view.getViewSource();
  }
  for (Operation *def : llvm::reverse(defs))
    def->moveBefore(gemm);
  IRRewriter rewriter(gemm.getContext());
  rewriter.setInsertionPoint(gemm);
  GemmToCublasCall::replace(rewriter, gemm, call->a, call->b, d,
                            call->dtype == kBF16F32 ? kBF16 : kF16,
                            call->transA, call->transB, /*betaZero=*/true);
  fill->erase();
  next->erase();
  // The accumulator and its views, now unused.
  for (Value value = c; value.use_empty();) {
    Operation *def = value.getDefiningOp();
    if (!def || !isa<ViewLikeOpInterface, memref::AllocOp>(def))
      break;
    value = isa<memref::AllocOp>(def)
                ? Value()
                : cast<ViewLikeOpInterface>(def).getViewSource();
    def->erase();
    if (!value)
      break;
  }
}

/// Applies the pattern to every op of the function once, in order.
struct LibraryCallsPass
    : public joint::impl::JointGPULibraryCallsBase<LibraryCallsPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> gemms;
    if (getOperation().isDeclaration())
      return;
    for (Operation &op : getOperation().getBody().front())
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
        gemms.push_back(cast<linalg::LinalgOp>(op));
    for (linalg::LinalgOp gemm : gemms)
      fuseTruncationIntoGemm(gemm);
    RewritePatternSet patterns(&getContext());
    populateGemmToCublasCallPatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void joint::populateGemmToCublasCallPatterns(RewritePatternSet &patterns) {
  patterns.add<ZeroFillIntoGemm, GemmToCublasCall>(patterns.getContext());
}

//===- OutlineLoops.cpp - One function per top-level loop nest ------------===//
//
// Implements `joint-outline-loops`: every loop nest at the top level of a
// bufferized function moves into its own private `noinline` function, with
// the values it reads from above as arguments (constants cloned in), so the
// LLVM optimizer sees many small functions instead of one body holding every
// loop of the step, whose loop passes cost more than linear in its size.
//
//===----------------------------------------------------------------------===//

#include "joint/Conversion/LowerToCPU/Passes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTOUTLINELOOPS
#include "joint/Conversion/LowerToCPU/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

namespace {

/// Marks a function this pass created, so a second run leaves it alone.
constexpr llvm::StringLiteral kOutlinedAttr = "joint.outlined";

/// Moves `nest` (at the top level of `parent`) into a new function inserted
/// after `previous` in `symbols`, and calls it in its place; returns it.
static func::FuncOp outlineNest(IRRewriter &rewriter, SymbolTable &symbols,
                                func::FuncOp parent, Operation *previous,
                                Operation *nest, unsigned index) {
  MLIRContext *ctx = nest->getContext();
  Location loc = nest->getLoc();
  llvm::SetVector<Value> captured;
  captured.insert(nest->operand_begin(), nest->operand_end());
  for (Region &region : nest->getRegions())
    getUsedValuesDefinedAbove(region, captured);
  // Constants are cloned (static trip counts for LLVM), the rest passed.
  SmallVector<Value> args;
  llvm::SetVector<Operation *> constants;
  for (Value v : captured) {
    Operation *def = v.getDefiningOp();
    if (def && def->hasTrait<OpTrait::ConstantLike>())
      constants.insert(def);
    else
      args.push_back(v);
  }

  OpBuilder builder(ctx);
  auto type = FunctionType::get(ctx, ValueRange(args).getTypes(),
                                nest->getResultTypes());
  auto callee = func::FuncOp::create(
      builder, loc, (parent.getName() + "_loop" + Twine(index)).str(), type);
  callee.setPrivate();
  callee->setAttr(kOutlinedAttr, builder.getUnitAttr());
  callee->setAttr("passthrough",
                  builder.getArrayAttr({builder.getStringAttr("noinline")}));
  symbols.insert(callee, std::next(Block::iterator(previous)));

  Block *entry = callee.addEntryBlock();
  IRMapping mapping;
  mapping.map(args, entry->getArguments());
  rewriter.setInsertionPointToStart(entry);
  for (Operation *constant : constants)
    rewriter.clone(*constant, mapping);
  Operation *copy = rewriter.clone(*nest, mapping);
  func::ReturnOp::create(rewriter, loc, copy->getResults());

  rewriter.setInsertionPoint(nest);
  auto call = func::CallOp::create(rewriter, loc, callee, args);
  rewriter.replaceOp(nest, call.getResults());
  return callee;
}

struct OutlineLoopsPass
    : public joint::impl::JointOutlineLoopsBase<OutlineLoopsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    IRRewriter rewriter(&getContext());
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      if (func.isDeclaration() || func->hasAttr(kOutlinedAttr))
        continue;
      SmallVector<Operation *> nests;
      for (Block &block : func.getBody())
        for (Operation &op : block)
          if (isa<LoopLikeOpInterface>(op))
            nests.push_back(&op);
      Operation *previous = func;
      for (auto [index, nest] : llvm::enumerate(nests))
        previous = outlineNest(rewriter, symbols, func, previous, nest, index);
    }
  }
};

} // namespace

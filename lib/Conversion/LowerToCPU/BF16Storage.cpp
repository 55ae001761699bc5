//===- BF16Storage.cpp - bf16 as 16-bit integers in LLVM ------------------===//
//
// Implements `joint-llvm-bf16-storage`: once bf16 is storage only, every
// bf16 type of the module becomes i16 (bf16 constants their bit patterns),
// so no bf16 value reaches LLVM's code generator.
//
//===----------------------------------------------------------------------===//

#include "joint/Conversion/LowerToCPU/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTLLVMBF16STORAGE
#include "joint/Conversion/LowerToCPU/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;

namespace {

static bool containsBF16(Type type) {
  bool found = false;
  type.walk([&](BFloat16Type) { found = true; });
  return found;
}

/// Whether `op` computes on floats (and so would change meaning on i16).
static bool computesOnFloats(Operation *op) {
  if (isa<LLVM::SelectOp>(op)) // fast-math flags, but only moves bits
    return false;
  return isa<LLVM::FastmathFlagsInterface, LLVM::FPExtOp, LLVM::FPTruncOp,
             LLVM::SIToFPOp, LLVM::UIToFPOp, LLVM::FPToSIOp, LLVM::FPToUIOp>(
      op);
}

struct BF16StoragePass
    : public joint::impl::JointLLVMBF16StorageBase<BF16StoragePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    WalkResult result = module.walk([](Operation *op) {
      if (!computesOnFloats(op))
        return WalkResult::advance();
      auto bf16 = [](Value v) { return containsBF16(v.getType()); };
      if (llvm::none_of(op->getOperands(), bf16) &&
          llvm::none_of(op->getResults(), bf16))
        return WalkResult::advance();
      op->emitOpError() << "computes on bf16 in the LLVM dialect; the CPU "
                           "target keeps bf16 as storage only (arithmetic "
                           "in f32, arith-emulate-unsupported-floats)";
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      return signalPassFailure();

    auto i16 = IntegerType::get(&getContext(), 16);
    AttrTypeReplacer replacer;
    replacer.addReplacement([&](BFloat16Type) -> Type { return i16; });
    replacer.addReplacement([&](FloatAttr attr) -> std::optional<Attribute> {
      if (!isa<BFloat16Type>(attr.getType()))
        return std::nullopt;
      return IntegerAttr::get(i16, attr.getValue().bitcastToAPInt());
    });
    replacer.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/true,
                                          /*replaceLocs=*/false,
                                          /*replaceTypes=*/true);
  }
};

} // namespace

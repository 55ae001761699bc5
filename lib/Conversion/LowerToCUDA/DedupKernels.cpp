//===- DedupKernels.cpp - Distinct kernels, compiled once, in one module
//---===//
//
// Implements `joint-gpu-dedup-kernels`. Outlining makes one gpu.module per
// launch, and the launches of one op shape in every layer (and many
// elementwise ops of equal shape within one) outline to identical kernels.
// Every outlined kernel (a gpu.module holding one gpu.func) moves into the
// first such module with the same module attributes, renamed after its old
// module; a kernel whose content (type, attributes but its name, body;
// locations aside: OperationEquivalence) equals one already there is
// dropped, and its launches take that one. Each distinct kernel is then
// compiled once, and NVVM, libdevice and ptxas run once per module rather than
// once per launch. The launches, their arguments and their order are unchanged.
//
//===----------------------------------------------------------------------===//

#include "joint/Conversion/LowerToCUDA/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/OperationSupport.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTGPUDEDUPKERNELS
#include "joint/Conversion/LowerToCUDA/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

/// The attributes of `op` but its symbol name (uniqued: equal when equal).
static SmallVector<NamedAttribute> attributesButName(Operation *op) {
  return llvm::filter_to_vector(op->getAttrs(), [](NamedAttribute attr) {
    return attr.getName() != SymbolTable::getSymbolAttrName();
  });
}

/// A hash of the content of kernel `func`: its attributes but its name (the
/// function type included) and its ops, locations aside.
static llvm::hash_code contentHash(gpu::GPUFuncOp func) {
  llvm::hash_code hash = llvm::hash_combine_range(attributesButName(func));
  func.getBody().walk([&](Operation *op) {
    hash =
        llvm::hash_combine(hash, OperationEquivalence::computeHash(
                                     op, OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::IgnoreLocations));
  });
  return hash;
}

/// Whether kernels `a` and `b` have the same content (names and locations
/// aside).
static bool sameContent(gpu::GPUFuncOp a, gpu::GPUFuncOp b) {
  return attributesButName(a) == attributesButName(b) &&
         OperationEquivalence::isRegionEquivalentTo(
             &a.getBody(), &b.getBody(), OperationEquivalence::IgnoreLocations);
}

namespace {
/// The merged module of one set of module attributes and its kernels by
/// content hash.
struct Merged {
  gpu::GPUModuleOp module;
  llvm::DenseMap<llvm::hash_code, SmallVector<gpu::GPUFuncOp, 1>> byHash;
};

struct DedupKernelsPass
    : public joint::impl::JointGPUDedupKernelsBase<DedupKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // By module attributes (but the name): one merged module each.
    llvm::DenseMap<DictionaryAttr, Merged> merged;
    // (old module, old kernel) -> (new module, new kernel).
    llvm::DenseMap<std::pair<StringAttr, StringAttr>, SymbolRefAttr> moved;
    SmallVector<gpu::GPUModuleOp> emptied;
    for (auto kernels :
         llvm::make_early_inc_range(module.getOps<gpu::GPUModuleOp>())) {
      Block *body = kernels.getBody();
      auto funcs = body->getOps<gpu::GPUFuncOp>();
      // Only outlined kernels: one gpu.func and nothing else.
      if (!llvm::hasSingleElement(funcs) || !llvm::hasSingleElement(*body))
        continue;
      gpu::GPUFuncOp func = *funcs.begin();
      StringAttr oldModule = kernels.getSymNameAttr();
      StringAttr oldName = func.getNameAttr();
      auto [it, fresh] = merged.try_emplace(
          DictionaryAttr::get(&getContext(), attributesButName(kernels)));
      Merged &into = it->second;
      if (fresh)
        into.module = kernels;
      SmallVector<gpu::GPUFuncOp, 1> &candidates =
          into.byHash[contentHash(func)];
      auto known = llvm::find_if(candidates, [&](gpu::GPUFuncOp other) {
        return sameContent(func, other);
      });
      StringAttr target = into.module.getSymNameAttr();
      if (known != candidates.end()) {
        moved[{oldModule, oldName}] = SymbolRefAttr::get(
            target, {FlatSymbolRefAttr::get((*known).getNameAttr())});
        ++numErased;
        func.erase();
      } else {
        // Renamed after its module, so every merged name is unique.
        SymbolTable::setSymbolName(func, oldModule);
        moved[{oldModule, oldName}] =
            SymbolRefAttr::get(target, {FlatSymbolRefAttr::get(oldModule)});
        candidates.push_back(func);
        if (kernels != into.module)
          func->moveBefore(into.module.getBody(), into.module.getBody()->end());
      }
      if (kernels != into.module)
        emptied.push_back(kernels);
    }
    if (moved.empty())
      return markAllAnalysesPreserved();
    module.walk([&](gpu::LaunchFuncOp launch) {
      if (SymbolRefAttr to = moved.lookup(
              {launch.getKernelModuleName(), launch.getKernelName()}))
        launch.setKernelAttr(to);
    });
    for (gpu::GPUModuleOp kernels : emptied)
      kernels.erase();
  }
};
} // namespace

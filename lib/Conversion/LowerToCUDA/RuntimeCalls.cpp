//===- RuntimeCalls.cpp - Building calls into the CUDA runtime ------------===//
//
// Implements the helpers of RuntimeCalls.h: runtime declarations, buffer
// pointers, the node-name strings the runtime's messages quote and constant
// i64 arrays, each looked up before it is created.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::joint;

static constexpr llvm::StringLiteral kNodePrefix = "__joint_node_";

/// The module holding `b`'s insertion point.
static ModuleOp getEnclosingModule(OpBuilder &b) {
  Operation *parent = b.getInsertionBlock()->getParentOp();
  if (auto module = dyn_cast<ModuleOp>(parent))
    return module;
  return parent->getParentOfType<ModuleOp>();
}

/// The private constant global `@<prefix><i>` of `module` holding `value`;
/// when none does, a new one of type `type` at the module's start, with the
/// next index after those in use.
static LLVM::GlobalOp lookupOrCreateConstant(OpBuilder &b, ModuleOp module,
                                             StringRef prefix, Type type,
                                             Attribute value) {
  unsigned next = 0;
  for (auto global : module.getOps<LLVM::GlobalOp>()) {
    StringRef symbol = global.getSymName();
    unsigned index;
    if (!symbol.consume_front(prefix) || symbol.getAsInteger(10, index))
      continue;
    if (global.getValueOrNull() == value)
      return global;
    next = std::max(next, index + 1);
  }
  std::string symbol = (prefix + Twine(next++)).str();
  while (module.lookupSymbol(symbol))
    symbol = (prefix + Twine(next++)).str();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  return LLVM::GlobalOp::create(b, module.getLoc(), type, /*isConstant=*/true,
                                LLVM::Linkage::Private, symbol, value);
}

func::FuncOp joint::lookupOrDeclareRuntimeFunction(OpBuilder &b,
                                                   ModuleOp module,
                                                   StringRef name,
                                                   FunctionType type) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  auto fn = func::FuncOp::create(b, module.getLoc(), name, type);
  fn.setPrivate();
  return fn;
}

Value joint::getBufferPointer(OpBuilder &b, Location loc, Value buffer) {
  Value index = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), i64);
}

StringRef joint::getNodeName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().getValue();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (StringRef name = getNodeName(inner); !name.empty())
        return name;
  if (auto site = dyn_cast<CallSiteLoc>(loc))
    return getNodeName(site.getCallee());
  return "";
}

std::string joint::getNodeNames(Location loc) {
  SmallVector<StringRef> names;
  SmallVector<Location> pending{loc};
  while (!pending.empty()) {
    Location next = pending.pop_back_val();
    if (auto name = dyn_cast<NameLoc>(next)) {
      if (!llvm::is_contained(names, name.getName().getValue()))
        names.push_back(name.getName().getValue());
    } else if (auto fused = dyn_cast<FusedLoc>(next)) {
      for (Location inner : llvm::reverse(fused.getLocations()))
        pending.push_back(inner);
    } else if (auto site = dyn_cast<CallSiteLoc>(next)) {
      pending.push_back(site.getCallee());
    }
  }
  return llvm::join(names, ", ");
}

Value joint::getNodeNamePointer(OpBuilder &b, Location loc, StringRef name) {
  return getStringPointer(b, loc, kNodePrefix, name);
}

Value joint::getStringPointer(OpBuilder &b, Location loc, StringRef prefix,
                              StringRef value) {
  std::string text = value.str() + '\0';
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), text.size());
  LLVM::GlobalOp global = lookupOrCreateConstant(
      b, getEnclosingModule(b), prefix, type, b.getStringAttr(text));
  return LLVM::AddressOfOp::create(b, loc, global);
}

Value joint::getInt64ArrayPointer(OpBuilder &b, Location loc, StringRef prefix,
                                  ArrayRef<int64_t> values) {
  auto type = LLVM::LLVMArrayType::get(b.getI64Type(), values.size());
  auto value = DenseElementsAttr::get(
      RankedTensorType::get({int64_t(values.size())}, b.getI64Type()), values);
  LLVM::GlobalOp global =
      lookupOrCreateConstant(b, getEnclosingModule(b), prefix, type, value);
  return LLVM::AddressOfOp::create(b, loc, global);
}

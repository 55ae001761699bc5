//===- RuntimeCalls.cpp - Building calls into the CUDA runtime ------------===//
//
// Implements the helpers of RuntimeCalls.h: runtime declarations, buffer
// pointers and the node-name strings the runtime's messages quote.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::joint;

static constexpr llvm::StringLiteral kNodePrefix = "__joint_node_";

func::FuncOp joint::declareRuntimeFunction(ModuleOp module, StringRef name,
                                           FunctionType type) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
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

NodeNameTable::NodeNameTable(ModuleOp module) : module(module) {
  for (auto global : module.getOps<LLVM::GlobalOp>()) {
    StringRef symbol = global.getSymName();
    unsigned index;
    if (!symbol.consume_front(kNodePrefix) || symbol.getAsInteger(10, index))
      continue;
    next = std::max(next, index + 1);
    if (auto value = dyn_cast_or_null<StringAttr>(global.getValueOrNull()))
      globals[value.getValue().drop_back()] = global; // without the NUL
  }
}

Value NodeNameTable::getPointer(OpBuilder &b, Location loc, StringRef name) {
  LLVM::GlobalOp &global = globals[name];
  if (!global) {
    OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
    std::string value = name.str() + '\0';
    auto type = LLVM::LLVMArrayType::get(mb.getI8Type(), value.size());
    std::string symbol = (kNodePrefix + Twine(next++)).str();
    while (module.lookupSymbol(symbol))
      symbol = (kNodePrefix + Twine(next++)).str();
    global = LLVM::GlobalOp::create(mb, module.getLoc(), type,
                                    /*isConstant=*/true, LLVM::Linkage::Private,
                                    symbol, mb.getStringAttr(value));
  }
  return LLVM::AddressOfOp::create(b, loc, global);
}

//===- EmulateLaunches.cpp - Kernel tables for emulation ------------------===//
//
// Implements `joint-gpu-emulate-launches`: on the host module in the LLVM
// dialect, the host kernel functions of every `gpu.module` (from
// `joint-gpu-emulate-kernels`) move into the host module, and the module
// becomes the emulator's image (runtime/cuda/joint_cuda_emulator.h): constant
// globals holding the kernel table, loaded with `mgpuModuleLoad` by a global
// constructor where `#gpu.select_object` would load a cubin. Every
// `gpu.launch_func` becomes the runtime calls upstream's translation emits
// for a cubin (`mgpuModuleGetFunction`, `mgpuLaunchKernel` with a params
// array on the stack), so the step library needs no symbol lookup at run time.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"
#include "joint/Conversion/LowerToCUDA/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTGPUEMULATELAUNCHES
#include "joint/Conversion/LowerToCUDA/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

namespace {

constexpr uint32_t kImageMagic = 0x554D454Au; // "JEMU"
constexpr uint32_t kImageVersion = 1;
constexpr int64_t kImageBytes = 24;    // {u32, u32, u64, ptr}
constexpr int32_t kCtorPriority = 123; // any: the runtime starts on first use

/// The kernel table of one gpu.module: its module handle global and the
/// name string of each kernel.
struct EmulatedModule {
  LLVM::GlobalOp handle;
  llvm::StringMap<LLVM::GlobalOp> names;
};

class TableBuilder {
public:
  explicit TableBuilder(ModuleOp module)
      : module(module), symbols(module), b(module.getContext()),
        ptr(LLVM::LLVMPointerType::get(module.getContext())) {}

  LogicalResult run();

private:
  LLVM::GlobalOp createString(Location loc, StringRef symbol, StringRef value);
  LLVM::LLVMFuncOp declare(StringRef name, Type result, ArrayRef<Type> args);
  FailureOr<EmulatedModule> lowerModule(gpu::GPUModuleOp gpuModule);
  LogicalResult lowerLaunch(gpu::LaunchFuncOp launch,
                            const EmulatedModule &emulated);

  ModuleOp module;
  SymbolTable symbols;
  OpBuilder b;
  Type ptr;
  SmallVector<Attribute> ctors, dtors;
};

LLVM::GlobalOp TableBuilder::createString(Location loc, StringRef symbol,
                                          StringRef value) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  std::string bytes = (value + Twine('\0')).str();
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), bytes.size());
  auto global = LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true,
                                       LLVM::Linkage::Private, symbol,
                                       b.getStringAttr(bytes));
  symbols.insert(global); // renames on collision
  return global;
}

LLVM::LLVMFuncOp TableBuilder::declare(StringRef name, Type result,
                                       ArrayRef<Type> args) {
  if (auto existing = symbols.lookup<LLVM::LLVMFuncOp>(name))
    return existing;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  auto func = LLVM::LLVMFuncOp::create(
      b, module.getLoc(), name, LLVM::LLVMFunctionType::get(result, args));
  symbols.insert(func);
  return func;
}

FailureOr<EmulatedModule>
TableBuilder::lowerModule(gpu::GPUModuleOp gpuModule) {
  MLIRContext *ctx = module.getContext();
  Location loc = gpuModule.getLoc();
  StringRef moduleName = gpuModule.getName();
  std::string prefix = ("__joint_emu_" + moduleName).str();
  EmulatedModule emulated;

  // Kernels and the declarations they call move to the host module.
  struct Kernel {
    LLVM::GlobalOp name, kinds;
    LLVM::LLVMFuncOp fn;
  };
  SmallVector<Kernel> kernels;
  for (Operation &op : llvm::make_early_inc_range(*gpuModule.getBody())) {
    auto func = dyn_cast<LLVM::LLVMFuncOp>(op);
    if (!func)
      return op.emitOpError() << "in gpu.module '" << moduleName
                              << "' was not lowered for the emulated device "
                                 "(joint-gpu-emulate-kernels)";
    if (func.isExternal()) {
      if (!symbols.lookup(func.getName())) {
        func->moveBefore(module.getBody(), module.getBody()->end());
        symbols.insert(func);
      }
      continue;
    }
    auto kinds = func->getAttrOfType<StringAttr>(kEmuParamKindsAttr);
    if (!func->hasAttr(gpu::GPUDialect::getKernelFuncAttrName()) || !kinds)
      return func.emitOpError()
             << "in gpu.module '" << moduleName
             << "' is not a kernel of joint-gpu-emulate-kernels (no "
             << kEmuParamKindsAttr << ")";
    std::string kernelName = func.getName().str();
    Kernel kernel;
    kernel.name = createString(loc, prefix + "_name", kernelName);
    kernel.kinds = createString(loc, prefix + "_kinds", kinds.getValue());
    func->removeAttr(kEmuParamKindsAttr);
    func->removeAttr(gpu::GPUDialect::getKernelFuncAttrName());
    func.setLinkage(LLVM::Linkage::Private);
    // Only the table refers to it: a host name unique in the module.
    func.setSymName(prefix + "_" + kernelName);
    func->moveBefore(module.getBody(), module.getBody()->end());
    symbols.insert(func);
    kernel.fn = func;
    emulated.names[kernelName] = kernel.name;
    kernels.push_back(kernel);
  }

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  Type i32 = b.getI32Type(), i64 = b.getI64Type();

  // JointEmuKernel kernels[n] = {{name, fn, param_kinds, flags}, ...};
  auto entryType = LLVM::LLVMStructType::getLiteral(ctx, {ptr, ptr, ptr, i32});
  auto tableType = LLVM::LLVMArrayType::get(entryType, kernels.size());
  auto table = LLVM::GlobalOp::create(b, loc, tableType, /*isConstant=*/true,
                                      LLVM::Linkage::Private,
                                      prefix + "_kernels", Attribute());
  symbols.insert(table);
  {
    Block *init = b.createBlock(&table.getInitializerRegion());
    b.setInsertionPointToStart(init);
    Value array = LLVM::UndefOp::create(b, loc, tableType);
    Value noFlags = LLVM::ConstantOp::create(b, loc, i32, 0);
    for (auto [i, kernel] : llvm::enumerate(kernels)) {
      Value entry = LLVM::UndefOp::create(b, loc, entryType);
      Value fields[] = {LLVM::AddressOfOp::create(b, loc, kernel.name),
                        LLVM::AddressOfOp::create(b, loc, kernel.fn),
                        LLVM::AddressOfOp::create(b, loc, kernel.kinds),
                        noFlags};
      for (auto [j, field] : llvm::enumerate(fields))
        entry = LLVM::InsertValueOp::create(b, loc, entry, field,
                                            ArrayRef<int64_t>{(int64_t)j});
      array = LLVM::InsertValueOp::create(b, loc, array, entry,
                                          ArrayRef<int64_t>{(int64_t)i});
    }
    LLVM::ReturnOp::create(b, loc, array);
  }

  // JointEmuModuleImage image = {magic, version, n, kernels};
  b.setInsertionPointToEnd(module.getBody());
  auto imageType = LLVM::LLVMStructType::getLiteral(ctx, {i32, i32, i64, ptr});
  auto image = LLVM::GlobalOp::create(b, loc, imageType, /*isConstant=*/true,
                                      LLVM::Linkage::Private, prefix + "_image",
                                      Attribute());
  symbols.insert(image);
  {
    Block *init = b.createBlock(&image.getInitializerRegion());
    b.setInsertionPointToStart(init);
    Value fields[] = {
        LLVM::ConstantOp::create(b, loc, i32, kImageMagic),
        LLVM::ConstantOp::create(b, loc, i32, kImageVersion),
        LLVM::ConstantOp::create(b, loc, i64, (int64_t)kernels.size()),
        LLVM::AddressOfOp::create(b, loc, table)};
    Value value = LLVM::UndefOp::create(b, loc, imageType);
    for (auto [j, field] : llvm::enumerate(fields))
      value = LLVM::InsertValueOp::create(b, loc, value, field,
                                          ArrayRef<int64_t>{(int64_t)j});
    LLVM::ReturnOp::create(b, loc, value);
  }

  // The module handle, loaded when the library is loaded.
  b.setInsertionPointToEnd(module.getBody());
  emulated.handle = LLVM::GlobalOp::create(b, loc, ptr, /*isConstant=*/false,
                                           LLVM::Linkage::Internal,
                                           prefix + "_module", Attribute());
  symbols.insert(emulated.handle);
  {
    Block *init = b.createBlock(&emulated.handle.getInitializerRegion());
    b.setInsertionPointToStart(init);
    LLVM::ReturnOp::create(b, loc, LLVM::ZeroOp::create(b, loc, ptr).getRes());
  }
  auto voidType = LLVM::LLVMVoidType::get(ctx);
  auto load = declare("mgpuModuleLoad", ptr, {ptr, i64});
  auto unload = declare("mgpuModuleUnload", voidType, {ptr});

  b.setInsertionPointToEnd(module.getBody());
  auto ctor = LLVM::LLVMFuncOp::create(
      b, loc, prefix + "_load", LLVM::LLVMFunctionType::get(voidType, {}),
      LLVM::Linkage::Internal);
  symbols.insert(ctor);
  b.setInsertionPointToStart(ctor.addEntryBlock(b));
  Value handle =
      LLVM::CallOp::create(
          b, loc, load,
          ValueRange{LLVM::AddressOfOp::create(b, loc, image),
                     LLVM::ConstantOp::create(b, loc, i64, kImageBytes)})
          .getResult();
  LLVM::StoreOp::create(b, loc, handle,
                        LLVM::AddressOfOp::create(b, loc, emulated.handle));
  LLVM::ReturnOp::create(b, loc, ValueRange());

  b.setInsertionPointToEnd(module.getBody());
  auto dtor = LLVM::LLVMFuncOp::create(
      b, loc, prefix + "_unload", LLVM::LLVMFunctionType::get(voidType, {}),
      LLVM::Linkage::Internal);
  symbols.insert(dtor);
  b.setInsertionPointToStart(dtor.addEntryBlock(b));
  Value loaded = LLVM::LoadOp::create(
      b, loc, ptr, LLVM::AddressOfOp::create(b, loc, emulated.handle));
  LLVM::CallOp::create(b, loc, unload, ValueRange{loaded});
  LLVM::ReturnOp::create(b, loc, ValueRange());

  ctors.push_back(FlatSymbolRefAttr::get(ctor));
  dtors.push_back(FlatSymbolRefAttr::get(dtor));
  return emulated;
}

LogicalResult TableBuilder::lowerLaunch(gpu::LaunchFuncOp launch,
                                        const EmulatedModule &emulated) {
  Location loc = launch.getLoc();
  StringRef kernelName = launch.getKernelName().getValue();
  auto name = emulated.names.find(kernelName);
  if (name == emulated.names.end())
    return launch.emitOpError()
           << "launches '" << kernelName << "', which gpu.module '"
           << launch.getKernelModuleName().getValue() << "' does not define";
  if (launch.hasClusterSize())
    return launch.emitOpError()
           << "of '" << kernelName
           << "' has a cluster size, which the emulated device does not run";
  Value stream = launch.getAsyncObject();
  if (!stream || !launch.getAsyncDependencies().empty() ||
      launch.getAsyncToken())
    return launch.emitOpError()
           << "of '" << kernelName
           << "' is not on a stream (expected after gpu-to-llvm)";

  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto getFunction = declare("mgpuModuleGetFunction", ptr, {ptr, ptr});
  auto launchKernel =
      declare("mgpuLaunchKernel", LLVM::LLVMVoidType::get(b.getContext()),
              {ptr, i64, i64, i64, i64, i64, i64, i32, ptr, ptr, ptr, i64});

  b.setInsertionPoint(launch);
  Value handle = LLVM::LoadOp::create(
      b, loc, ptr, LLVM::AddressOfOp::create(b, loc, emulated.handle));
  Value fn =
      LLVM::CallOp::create(
          b, loc, getFunction,
          ValueRange{handle, LLVM::AddressOfOp::create(b, loc, name->second)})
          .getResult();

  // The arguments in one stack struct, and an array of pointers to its fields.
  ValueRange args = launch.getKernelOperands();
  SmallVector<Type> argTypes(args.getTypes());
  auto argsType = LLVM::LLVMStructType::getLiteral(b.getContext(), argTypes);
  Value one = LLVM::ConstantOp::create(b, loc, i64, 1);
  Value argsPtr = LLVM::AllocaOp::create(b, loc, ptr, argsType, one);
  auto paramsType = LLVM::LLVMArrayType::get(ptr, args.size());
  Value params = LLVM::AllocaOp::create(b, loc, ptr, paramsType, one);
  for (auto [i, arg] : llvm::enumerate(args)) {
    int32_t index = static_cast<int32_t>(i);
    Value field = LLVM::GEPOp::create(b, loc, ptr, argsType, argsPtr,
                                      ArrayRef<LLVM::GEPArg>{0, index});
    LLVM::StoreOp::create(b, loc, arg, field);
    Value slot = LLVM::GEPOp::create(b, loc, ptr, paramsType, params,
                                     ArrayRef<LLVM::GEPArg>{0, index});
    LLVM::StoreOp::create(b, loc, field, slot);
  }

  auto toI64 = [&](Value v) -> Value {
    if (v.getType() == i64)
      return v;
    return LLVM::ZExtOp::create(b, loc, i64, v);
  };
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  Value smem = launch.getDynamicSharedMemorySize();
  if (!smem)
    smem = LLVM::ConstantOp::create(b, loc, i32, 0);
  Value extra = LLVM::ZeroOp::create(b, loc, ptr);
  Value count = LLVM::ConstantOp::create(b, loc, i64, (int64_t)args.size());
  LLVM::CallOp::create(b, loc, launchKernel,
                       ValueRange{fn, toI64(grid.x), toI64(grid.y),
                                  toI64(grid.z), toI64(block.x), toI64(block.y),
                                  toI64(block.z), smem, stream, params, extra,
                                  count});
  launch.erase();
  return success();
}

LogicalResult TableBuilder::run() {
  llvm::StringMap<EmulatedModule> emulated;
  for (auto gpuModule :
       llvm::to_vector(module.getBody()->getOps<gpu::GPUModuleOp>())) {
    FailureOr<EmulatedModule> lowered = lowerModule(gpuModule);
    if (failed(lowered))
      return failure();
    emulated[gpuModule.getName()] = *lowered;
  }

  SmallVector<gpu::LaunchFuncOp> launches;
  module.walk([&](gpu::LaunchFuncOp launch) { launches.push_back(launch); });
  for (gpu::LaunchFuncOp launch : launches) {
    StringRef container = launch.getKernelModuleName().getValue();
    auto it = emulated.find(container);
    if (it == emulated.end())
      return launch.emitOpError()
             << "launches a kernel of '" << container
             << "', which is not a gpu.module lowered for the emulated device";
    if (failed(lowerLaunch(launch, it->second)))
      return failure();
  }

  for (auto gpuModule :
       llvm::to_vector(module.getBody()->getOps<gpu::GPUModuleOp>()))
    gpuModule.erase();
  module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());

  if (ctors.empty())
    return success();
  if (!module.getBody()->getOps<LLVM::GlobalCtorsOp>().empty() ||
      !module.getBody()->getOps<LLVM::GlobalDtorsOp>().empty())
    return module.emitOpError()
           << "already has global constructors or destructors";
  b.setInsertionPointToEnd(module.getBody());
  auto zero = LLVM::ZeroAttr::get(b.getContext());
  SmallVector<int32_t> priorities(ctors.size(), kCtorPriority);
  SmallVector<Attribute> data(ctors.size(), zero);
  LLVM::GlobalCtorsOp::create(b, module.getLoc(), b.getArrayAttr(ctors),
                              b.getI32ArrayAttr(priorities),
                              b.getArrayAttr(data));
  LLVM::GlobalDtorsOp::create(b, module.getLoc(), b.getArrayAttr(dtors),
                              b.getI32ArrayAttr(priorities),
                              b.getArrayAttr(data));
  return success();
}

struct EmulateLaunchesPass
    : joint::impl::JointGPUEmulateLaunchesBase<EmulateLaunchesPass> {
  void runOnOperation() override {
    if (failed(TableBuilder(getOperation()).run()))
      signalPassFailure();
  }
};

} // namespace

//===- Compile.cpp - Compile a joint graph into a step library ------------===//
//
// compileStep: the user's passes, the target's lowering pipeline, LLVM IR
// with the C entry `joint_step`, LLVM's -O pipeline, an object file for the
// host CPU, `cc -shared` against the step runtime (and, for CUDA, the CUDA
// runtime of this build), and the descriptor (docs/lowering.md).
//
//===----------------------------------------------------------------------===//

#include "joint/Compile/Compile.h"
#include "joint/Conversion/LowerToCPU/Passes.h"
#include "joint/Conversion/LowerToCUDA/Collectives.h"
#include "joint/Conversion/LowerToCUDA/Passes.h"
#include "joint/Dialect/Joint/IR/JointOps.h"
#include "joint/Dialect/Joint/IR/TensorMeta.h"
#include "joint/Dialect/Joint/Transforms/Passes.h"
#include "joint/Support/OutputFiles.h"
#include "joint/Support/PassPipeline.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace mlir;
using namespace mlir::joint;

namespace {

/// One slot of the C ABI: a graph argument or an output, in ABI order.
struct Slot {
  bool isOutput = false;
  Type type;                         // memref (tensor) or i64 (SymInt argument)
  DictionaryAttr attrs;              // joint.role, joint.fqn, ... of the graph
  SmallVector<std::string> symbolic; // per dim: expression or "" (static)
};
} // namespace

/// Symbolic size expressions of `meta` ("" for static sizes).
static SmallVector<std::string> getSymbolicSizes(joint::TensorMetaAttr meta,
                                                 unsigned rank) {
  SmallVector<std::string> out(rank);
  if (!meta || meta.getSizes().size() != rank)
    return out;
  for (auto [i, s] : llvm::enumerate(meta.getSizes()))
    if (!s.isStatic())
      out[i] = s.expr.str();
  return out;
}

/// The torch dtype name of an element type ("float32"), or its MLIR spelling.
static std::string getDtypeName(Type elementType) {
  if (std::optional<joint::ScalarType> dtype =
          joint::getScalarType(elementType))
    return joint::stringifyScalarType(*dtype).str();
  std::string s;
  llvm::raw_string_ostream os(s);
  os << elementType;
  return s;
}

namespace {
/// Symbolic sizes of the graph's arguments and results (from `joint.meta`
/// and the producers' result facts), read before lowering erases them.
struct GraphFacts {
  std::string name;
  SmallVector<SmallVector<std::string>> args, results;
};
} // namespace

static GraphFacts collectGraphFacts(ModuleOp module) {
  GraphFacts facts;
  for (auto graph : module.getOps<joint::GraphOp>()) {
    facts.name = graph.getSymName().str();
    Block &body = graph.getBody().front();
    for (BlockArgument arg : body.getArguments()) {
      auto shaped = dyn_cast<ShapedType>(arg.getType());
      facts.args.push_back(getSymbolicSizes(joint::getTensorMeta(arg),
                                            shaped ? shaped.getRank() : 0));
    }
    for (Value v : graph.getOutputOp().getOperands()) {
      auto shaped = dyn_cast<ShapedType>(v.getType());
      facts.results.push_back(getSymbolicSizes(joint::getTensorMeta(v),
                                               shaped ? shaped.getRank() : 0));
    }
    break;
  }
  return facts;
}

/// The ABI slots of `@joint_entry` (after joint-cpu-entry), or failure.
static FailureOr<SmallVector<Slot>>
collectSlots(ModuleOp module, const GraphFacts &facts, std::string &graphName) {
  auto entry = module.lookupSymbol<func::FuncOp>(joint::kCPUEntryName);
  if (!entry) {
    module.emitError() << "joint-compile: no @" << joint::kCPUEntryName
                       << " after joint-cpu-entry";
    return failure();
  }
  if (auto name = entry->getAttrOfType<StringAttr>("joint.graph_name"))
    graphName = name.str();
  auto numInputs = entry->getAttrOfType<IntegerAttr>("joint.num_inputs");
  if (!numInputs) {
    entry.emitError() << "joint-compile: @" << joint::kCPUEntryName
                      << " has no joint.num_inputs";
    return failure();
  }
  unsigned numArgs = numInputs.getInt();
  SmallVector<Slot> slots;
  for (auto [i, type] : llvm::enumerate(entry.getArgumentTypes())) {
    Slot slot;
    slot.type = type;
    slot.attrs = entry.getArgAttrDict(i);
    if (!slot.attrs)
      slot.attrs = DictionaryAttr::get(module.getContext());
    slot.isOutput = i >= numArgs; // graph arguments first, then outputs
    unsigned rank = 0;
    if (auto memref = dyn_cast<MemRefType>(type))
      rank = memref.getRank();
    slot.symbolic.assign(rank, "");
    if (!slot.isOutput && i < facts.args.size() && facts.args[i].size() == rank)
      slot.symbolic = facts.args[i];
    else if (slot.isOutput && i - numArgs < facts.results.size() &&
             facts.results[i - numArgs].size() == rank)
      slot.symbolic = facts.results[i - numArgs];
    else if (auto updates = slot.attrs.getAs<IntegerAttr>("joint.updates"))
      if (uint64_t arg = updates.getInt();
          arg < facts.args.size() && facts.args[arg].size() == rank)
        slot.symbolic = facts.args[arg]; // an updated argument's sizes
    slots.push_back(std::move(slot));
  }
  return slots;
}

/// The descriptor (docs/lowering.md, "Descriptor").
static std::string buildDescriptor(StringRef graphName, StringRef library,
                                   ArrayRef<Slot> slots, bool cuda,
                                   bool emulated, DictionaryAttr groups) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream j(os, 2);
  unsigned dynamicIndex = 0;
  auto writeSlots = [&](bool outputs) {
    for (const Slot &slot : slots) {
      if (slot.isOutput != outputs)
        continue;
      j.object([&] {
        for (NamedAttribute attr : slot.attrs) {
          StringRef key = attr.getName().strref();
          if (!key.consume_front("joint."))
            continue;
          if (auto role = dyn_cast<joint::RoleAttr>(attr.getValue()))
            j.attribute(key, joint::stringifyRole(role.getValue()));
          else if (auto s = dyn_cast<StringAttr>(attr.getValue()))
            j.attribute(key, s.getValue());
          else if (auto flag = dyn_cast<BoolAttr>(attr.getValue()))
            j.attribute(key, flag.getValue()); // joint.requires_grad
          else if (auto i = dyn_cast<IntegerAttr>(attr.getValue()))
            j.attribute(key, i.getInt()); // joint.updates: argument index
        }
        auto memref = dyn_cast<MemRefType>(slot.type);
        if (!memref) {
          j.attribute("kind", "symint");
          j.attribute("dtype", "int64");
          return;
        }
        j.attribute("kind", "tensor");
        j.attribute("dtype", getDtypeName(memref.getElementType()));
        j.attributeArray("shape", [&] {
          for (auto [d, size] : llvm::enumerate(memref.getShape())) {
            if (!ShapedType::isDynamic(size)) {
              j.value(size);
              continue;
            }
            j.object([&] {
              j.attribute("dynamic_index", dynamicIndex++);
              if (!slot.symbolic[d].empty())
                j.attribute("expr", slot.symbolic[d]);
            });
          }
        });
      });
    }
  };
  j.object([&] {
    j.attribute("format", cuda ? "joint-cuda-step" : "joint-cpu-step");
    // Kernels compiled for the host: the emulated device only.
    if (emulated)
      j.attribute("device", "emulated");
    j.attribute("version", 1);
    j.attribute("graph", graphName);
    j.attribute("library", llvm::sys::path::filename(library));
    j.attribute("entry", joint::kCPUStepSymbol);
    j.attribute("signature",
                "int32_t joint_step(void *const *inputs, void *const "
                "*outputs, const int64_t *dims)");
    j.attributeArray("arguments", [&] { writeSlots(false); });
    j.attributeArray("outputs", [&] { writeSlots(true); });
    j.attribute("num_dims", dynamicIndex);
    // Communicators the step needs on the calling thread's device.
    if (groups) {
      j.attributeArray("collective_groups", [&] {
        for (NamedAttribute group : groups)
          j.value(group.getName().strref());
      });
      j.attributeObject("collective_group_sizes", [&] {
        for (NamedAttribute group : groups)
          if (int64_t ranks = cast<IntegerAttr>(group.getValue()).getInt())
            j.attribute(group.getName().strref(), ranks);
      });
    }
  });
  os << "\n";
  return text;
}

/// Adds `int32_t joint_step(void *const *inputs, void *const *outputs,
/// const int64_t *dims)` calling the expanded memref signature of
/// `joint_entry`; every other defined function becomes internal. Returns 1
/// without calling the step when a dynamic size is negative.
static LogicalResult addCEntry(llvm::Module &module, ArrayRef<Slot> slots,
                               bool cuda, std::string &error) {
  llvm::Function *entry = module.getFunction(joint::kCPUEntryName);
  if (!entry) {
    error = "no joint_entry function in the LLVM module";
    return failure();
  }
  llvm::LLVMContext &ctx = module.getContext();
  auto *ptrTy = llvm::PointerType::getUnqual(ctx);
  auto *i64 = llvm::Type::getInt64Ty(ctx);
  auto *i32 = llvm::Type::getInt32Ty(ctx);
  auto *fnTy = llvm::FunctionType::get(i32, {ptrTy, ptrTy, ptrTy}, false);
  auto *fn = llvm::Function::Create(fnTy, llvm::GlobalValue::ExternalLinkage,
                                    joint::kCPUStepSymbol, module);
  llvm::Value *inputs = fn->getArg(0), *outputs = fn->getArg(1),
              *dims = fn->getArg(2);
  auto *body = llvm::BasicBlock::Create(ctx, "entry", fn);
  auto *run = llvm::BasicBlock::Create(ctx, "run", fn);
  auto *bad = llvm::BasicBlock::Create(ctx, "bad_dims", fn);
  llvm::IRBuilder<> b(body);
  SmallVector<llvm::Value *> args;
  llvm::Value *anyNegative = b.getFalse();
  unsigned inputIndex = 0, outputIndex = 0, dimIndex = 0;
  for (const Slot &slot : slots) {
    llvm::Value *table = slot.isOutput ? outputs : inputs;
    unsigned index = slot.isOutput ? outputIndex++ : inputIndex++;
    llvm::Value *ptr =
        b.CreateLoad(ptrTy, b.CreateConstInBoundsGEP1_64(ptrTy, table, index));
    auto memref = dyn_cast<MemRefType>(slot.type);
    if (!memref) {
      args.push_back(b.CreateLoad(i64, ptr)); // a SymInt argument
      continue;
    }
    SmallVector<llvm::Value *> sizes;
    for (int64_t size : memref.getShape()) {
      if (!ShapedType::isDynamic(size)) {
        sizes.push_back(b.getInt64(size));
        continue;
      }
      llvm::Value *v = b.CreateLoad(
          i64, b.CreateConstInBoundsGEP1_64(i64, dims, dimIndex++));
      anyNegative = b.CreateOr(anyNegative, b.CreateICmpSLT(v, b.getInt64(0)));
      sizes.push_back(v);
    }
    // Contiguous row-major strides.
    SmallVector<llvm::Value *> strides(sizes.size());
    llvm::Value *stride = b.getInt64(1);
    for (int64_t d = sizes.size() - 1; d >= 0; --d) {
      strides[d] = stride;
      stride = b.CreateMul(stride, sizes[d]);
    }
    args.append({ptr, ptr, b.getInt64(0)});
    args.append(sizes.begin(), sizes.end());
    args.append(strides.begin(), strides.end());
  }
  if (args.size() != entry->arg_size()) {
    error = "joint_entry takes " + std::to_string(entry->arg_size()) +
            " LLVM arguments, the ABI slots give " +
            std::to_string(args.size());
    fn->eraseFromParent();
    return failure();
  }
  b.CreateCondBr(anyNegative, bad, run);
  b.SetInsertPoint(run);
  // The step runtime's high-water mark starts again (joint_step_peak_bytes).
  auto *voidTy = llvm::Type::getVoidTy(ctx);
  b.CreateCall(module.getOrInsertFunction(
      "joint_step_runtime_begin", llvm::FunctionType::get(voidTy, false)));
  if (!cuda) {
    b.CreateCall(entry, args);
    b.CreateRet(b.getInt32(0));
  } else {
    // CUDA: the step enqueues its work on the runtime's compute stream and
    // returns the runtime's status (0, or the first failed call's code).
    llvm::FunctionCallee clear = module.getOrInsertFunction(
        "joint_runtime_clear_error", llvm::FunctionType::get(voidTy, false));
    llvm::FunctionCallee status = module.getOrInsertFunction(
        "joint_runtime_status", llvm::FunctionType::get(i32, false));
    b.CreateCall(clear);
    b.CreateCall(entry, args);
    b.CreateRet(b.CreateCall(status));
  }
  b.SetInsertPoint(bad);
  b.CreateRet(b.getInt32(1));
  for (llvm::Function &f : module)
    if (!f.isDeclaration() && &f != fn && !f.hasLocalLinkage() &&
        !f.hasAppendingLinkage())
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  return success();
}

/// Runs LLVM's default module pipeline at `level` (0-3) on `module`, with
/// the standard instrumentations (so --time-passes reports every pass).
static void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine,
                           unsigned level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassInstrumentationCallbacks callbacks;
  llvm::StandardInstrumentations instrumentations(module.getContext(),
                                                  /*DebugLogging=*/false);
  instrumentations.registerCallbacks(callbacks, &mam);
  llvm::PassBuilder builder(&machine, llvm::PipelineTuningOptions(),
                            std::nullopt, &callbacks);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  static const llvm::OptimizationLevel levels[] = {
      llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1,
      llvm::OptimizationLevel::O2, llvm::OptimizationLevel::O3};
  llvm::ModulePassManager mpm =
      level == 0 ? builder.buildO0DefaultPipeline(levels[0])
                 : builder.buildPerModuleDefaultPipeline(levels[level]);
  mpm.run(module, mam);
}

/// Emits `module` as an object file for the host CPU into `path`, optimized
/// at `level` (0-3); `timing` gets one scope per stage.
static LogicalResult emitObject(llvm::Module &module, StringRef path,
                                unsigned level, TimingScope &timing,
                                std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  const llvm::Target *tgt = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!tgt)
    return failure();
  llvm::SubtargetFeatures features;
  for (const auto &f : llvm::sys::getHostCPUFeatures())
    features.AddFeature(f.first(), f.second);
  std::unique_ptr<llvm::TargetMachine> machine(tgt->createTargetMachine(
      triple, llvm::sys::getHostCPUName(), features.getString(),
      llvm::TargetOptions(), llvm::Reloc::PIC_, std::nullopt,
      static_cast<llvm::CodeGenOptLevel>(level)));
  if (!machine) {
    error = "no target machine for " + triple.str();
    return failure();
  }
  module.setDataLayout(machine->createDataLayout());
  module.setTargetTriple(triple);
  {
    TimingScope scope =
        timing.nest("LLVM optimization (-O" + std::to_string(level) + ")");
    optimizeModule(module, *machine, level);
  }
  TimingScope scope = timing.nest("LLVM code generation");
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    error = path.str() + ": " + ec.message();
    return failure();
  }
  llvm::legacy::PassManager pm;
  if (machine->addPassesToEmitFile(pm, os, nullptr,
                                   llvm::CodeGenFileType::ObjectFile)) {
    error = "the target cannot emit object files";
    return failure();
  }
  pm.run(module);
  os.close();
  if (os.has_error()) {
    error = path.str() + ": " + os.error().message();
    os.clear_error();
    return failure();
  }
  return success();
}

namespace {
/// A unique temporary path in `dir` with `suffix`, removed on destruction
/// unless released.
struct TempFile {
  SmallString<256> path;
  bool keep = false;
  ~TempFile() {
    if (!path.empty() && !keep)
      llvm::sys::fs::remove(path);
  }
  LogicalResult create(StringRef dir, StringRef suffix, std::string &error) {
    SmallString<256> model(dir);
    llvm::sys::path::append(model, ".joint-compile-%%%%%%%%" + suffix.str());
    int fd;
    if (std::error_code ec = llvm::sys::fs::createUniqueFile(model, fd, path)) {
      error = model.str().str() + ": " + ec.message();
      return failure();
    }
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
    return success();
  }
};

} // namespace

LogicalResult mlir::joint::verifyCompileOptions(const CompileOptions &options,
                                                std::string &error) {
  if (options.target != "cpu" && options.target != "cuda") {
    error = "unknown --target '" + options.target + "' (expected cpu or cuda)";
    return failure();
  }
#ifndef JOINT_CUDA_RUNTIME_DIR
  if (options.target == "cuda") {
    error = "--target=cuda needs a build with the CUDA toolkit (this one was "
            "configured with JOINT_ENABLE_CUDA=OFF: no toolkit found); use "
            "--target=cpu";
    return failure();
  }
#endif
  if (options.optLevel > 3) {
    error = "-O" + std::to_string(options.optLevel) +
            ": the optimization level is 0, 1, 2 or 3";
    return failure();
  }
  return success();
}

LogicalResult mlir::joint::checkStepOutputPaths(StringRef input,
                                                StringRef library,
                                                std::string &error) {
  for (std::string path : {library.str(), (library + ".json").str()}) {
    SmallString<256> dir(path);
    llvm::sys::path::remove_filename(dir);
    if (!dir.empty() && !llvm::sys::fs::is_directory(dir)) {
      error =
          "cannot open output file '" + path + "': " +
          std::make_error_code(std::errc::no_such_file_or_directory).message();
      return failure();
    }
    llvm::sys::fs::file_status status;
    if (!llvm::sys::fs::status(path, status, /*Follow=*/false) &&
        status.type() != llvm::sys::fs::file_type::regular_file) {
      error = "cannot write '" + path +
              "': it exists and is not a regular file (the library is "
              "renamed into place, which would replace it)";
      return failure();
    }
    if (isSameFile(path, input)) {
      error = "cannot write '" + path +
              "': it is the input file; write the library to another path";
      return failure();
    }
  }
  return success();
}

/// Runs `build`'s passes on `module` with the pass manager command-line
/// options (--mlir-print-ir-*, ...) and `timing`.
static LogicalResult
runPasses(ModuleOp module, TimingScope &timing,
          function_ref<LogicalResult(PassManager &)> build) {
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  pm.enableTiming(timing);
  if (failed(build(pm)))
    return failure();
  return pm.run(module);
}

LogicalResult mlir::joint::compileStep(ModuleOp module,
                                       const CompileOptions &options,
                                       StringRef library, TimingScope &timing,
                                       std::string &error) {
  if (failed(verifyCompileOptions(options, error)))
    return failure();
  bool cuda = options.target == "cuda";
  LowerToCPUOptions cpuOptions;
  LowerToCUDAOptions cudaOptions;
  if (failed(cuda ? cudaOptions.parseFromString(options.loweringOptions)
                  : cpuOptions.parseFromString(options.loweringOptions))) {
    error = "bad --lowering-options '" + options.loweringOptions + "'";
    return failure();
  }

  // 1. The user's passes; size queries read forward SymInts in every
  // compiled step, the identity one too, so no tensor stays allocated only
  // for its size.
  if (failed(runPasses(module, timing, [&](PassManager &pm) {
        pm.addNestedPass<GraphOp>(createJointReadForwardSizes());
        std::string why;
        llvm::raw_string_ostream whyStream(why);
        if (succeeded(addPassPipeline(pm, options.pipeline, whyStream)))
          return success();
        error = "bad --pipeline '" + options.pipeline + "': " + why;
        return failure();
      })))
    return failure();
  GraphFacts facts = collectGraphFacts(module);

  // 2. Lowering: to the destination-passing entry on tensors, then LLVM.
  if (failed(runPasses(module, timing, [&](PassManager &pm) {
        if (cuda)
          buildLowerToCUDATensorPipeline(pm, cudaOptions);
        else
          buildLowerToCPUTensorPipeline(pm, cpuOptions);
        return success();
      })))
    return failure();
  std::string graphName = facts.name;
  FailureOr<SmallVector<Slot>> slots = collectSlots(module, facts, graphName);
  if (failed(slots))
    return failure();
  if (failed(runPasses(module, timing, [&](PassManager &pm) {
        if (cuda)
          buildLowerToCUDALLVMPipeline(pm, cudaOptions);
        else
          buildLowerToCPULLVMPipeline(pm, cpuOptions);
        return success();
      })))
    return failure();

  // 3. LLVM IR, the C entry, an object file, a shared library.
  llvm::LLVMContext llvmContext;
  TimingScope translateTiming = timing.nest("Translation to LLVM IR");
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, graphName);
  if (!llvmModule) {
    error = "translation to LLVM IR failed";
    return failure();
  }
  if (failed(addCEntry(*llvmModule, *slots, cuda, error)))
    return failure();
  if (llvm::verifyModule(*llvmModule, &llvm::errs())) {
    error = "the generated LLVM IR does not verify";
    return failure();
  }
  translateTiming.stop();

  SmallString<256> outDir(library);
  llvm::sys::path::remove_filename(outDir);
  if (outDir.empty())
    outDir = ".";
  TempFile object, linked, descriptor;
  if (failed(object.create(outDir, ".o", error)) ||
      failed(linked.create(outDir, ".so", error)) ||
      failed(descriptor.create(outDir, ".json", error)))
    return failure();
  if (failed(emitObject(*llvmModule, object.path, options.optLevel, timing,
                        error)))
    return failure();
  TimingScope linkTiming = timing.nest("Link");
  llvm::ErrorOr<std::string> cc = llvm::sys::findProgramByName(options.cc);
  if (!cc) {
    error = "no C compiler driver '" + options.cc + "' on PATH to link";
    return failure();
  }
  // The step runtime (allocator with statistics, memrefCopy) is linked in
  // statically: the library needs libc and libm only.
  SmallVector<StringRef> linkArgs = {
      *cc,         "-shared",          "-o", linked.path,
      object.path, JOINT_STEP_RUNTIME, "-lm"};
#ifdef JOINT_CUDA_RUNTIME_DIR
  // The runtime (mgpu*, joint_runtime_*) from this build; its libcuda.so.1
  // resolves against the toolkit's stub at link time, the driver at run time.
  if (cuda)
    linkArgs.append({"-L" JOINT_CUDA_RUNTIME_DIR, "-ljoint_cuda_runtime",
                     "-Wl,-rpath," JOINT_CUDA_RUNTIME_DIR,
                     "-Wl,-rpath-link," JOINT_CUDA_STUB_DIR});
#endif
  std::string linkError;
  if (llvm::sys::ExecuteAndWait(*cc, linkArgs, std::nullopt, {}, 0, 0,
                                &linkError) != 0) {
    error = "linking with '" + *cc + "' failed" +
            (linkError.empty() ? "" : ": " + linkError);
    return failure();
  }
  linkTiming.stop();

  {
    std::error_code ec;
    llvm::raw_fd_ostream os(descriptor.path, ec);
    if (ec) {
      error = descriptor.path.str().str() + ": " + ec.message();
      return failure();
    }
    os << buildDescriptor(
        graphName, library, *slots, cuda, cuda && cudaOptions.emulate,
        module->getAttrOfType<DictionaryAttr>(joint::kCollectiveGroupsAttr));
    os.close();
    if (os.has_error()) {
      os.clear_error();
      error = descriptor.path.str().str() + ": write failed";
      return failure();
    }
  }
  std::string descriptorName = (library + ".json").str();
  if (std::error_code ec = llvm::sys::fs::rename(linked.path, library)) {
    error = library.str() + ": " + ec.message();
    return failure();
  }
  if (std::error_code ec =
          llvm::sys::fs::rename(descriptor.path, descriptorName)) {
    llvm::sys::fs::remove(library);
    error = descriptorName + ": " + ec.message();
    return failure();
  }
  linked.keep = descriptor.keep = true;
  return success();
}

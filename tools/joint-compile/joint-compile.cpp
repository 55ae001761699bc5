//===- joint-compile.cpp - Compile a joint graph to a shared library -----===//
//
// joint-compile g.json|g.json.gz|g.mlir --target=cpu|cuda -o step.so
//   [--pipeline=<joint passes>] [-O0..-O3]: imports the graph, runs the
// user's passes,
// then `joint-lower-to-cpu` (or `joint-lower-to-cuda`: kernels as cubins
// embedded in the host code, which calls libjoint_cuda_runtime), translates
// to LLVM IR, wraps `@joint_entry` into
// the one exported C function `joint_step` (docs/lowering.md, "ABI"),
// optimizes it with LLVM's default pipeline at the -O level, emits an object
// file for the host CPU through LLVM's TargetMachine, links it
// with the system C compiler driver (`cc -shared`), and writes the
// descriptor `step.so.json` (names, roles, shapes, dtypes of every argument
// and output). Both files, and any file a pass writes (joint-memory-report's
// output=), appear only when everything succeeded: they are written to
// temporary files and renamed last.
// A successful CPU or CUDA compile is also stored in the step cache that
// `python -m joint_mlir.run --backend mlir-cpu` reads (`$JOINT_MLIR_CACHE`,
// default ~/.cache/joint_mlir), under the key python/joint_mlir/mlir_cpu.py
// computes for the same inputs, so running the graph does not compile it
// again (--no-cache turns this off).
// --mlir-timing times every stage (MLIR passes, LLVM optimization, code
// generation, link); LLVM's --time-passes breaks down the LLVM part.
//
//===----------------------------------------------------------------------===//

#include "joint/Conversion/LowerToCPU/Passes.h"
#include "joint/Conversion/LowerToCUDA/Passes.h"
#include "joint/Dialect/Joint/IR/JointOps.h"
#include "joint/Dialect/Joint/IR/TensorMeta.h"
#include "joint/InitAll.h"
#include "joint/Support/OutputFiles.h"
#include "joint/Support/PassPipeline.h"
#include "joint/Support/ToolDiagnostics.h"
#include "joint/Support/ToolHelp.h"
#include "joint/Target/JSON/Diagnostics.h"
#include "joint/Target/JSON/Import.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <sys/utsname.h>

using namespace mlir;
namespace cl = llvm::cl;

/// joint-compile's own options: --help lists these and MLIR's, not LLVM's
/// code-generation flags (ToolHelp.h).
static cl::OptionCategory compileCategory("joint-compile options");

static cl::opt<std::string>
    inputFilename(cl::Positional, cl::desc("<graph .json/.json.gz/.mlir>"),
                  cl::Required, cl::cat(compileCategory));
static cl::opt<std::string>
    outputFilename("o",
                   cl::desc("shared library to write; its descriptor goes to "
                            "<output>.json"),
                   cl::value_desc("step.so"), cl::Required,
                   cl::cat(compileCategory));
static cl::opt<std::string>
    target("target",
           cl::desc("cpu (the host CPU) or cuda (kernels for an NVIDIA GPU, "
                    "host code linked with libjoint_cuda_runtime)"),
           cl::init("cpu"), cl::cat(compileCategory));
static cl::opt<std::string> userPipeline(
    "pipeline",
    cl::desc("joint passes to run before lowering, as a textual pass list, "
             "e.g. joint-tag-recompute-policy{mode=full},joint-remat"),
    cl::init(""), cl::cat(compileCategory));
static cl::opt<std::string> loweringOptions(
    "lowering-options",
    cl::desc("options of joint-lower-to-cpu (e.g. \"tile-matmuls=false\") "
             "or joint-lower-to-cuda (e.g. \"chip=sm_90 tile-sizes=32,8\")"),
    cl::init(""), cl::cat(compileCategory));
static cl::opt<unsigned> optLevel(
    "O", cl::Prefix,
    cl::desc("LLVM optimization level of the step, 0-3 (default 2; "
             "measured on llama-tiny by bench/lowering: step 0.25x torch "
             "eager after 12.8 s of compile CPU, -O0 0.88x after 5.4 s, "
             "-O1 0.24x after 12.4 s, -O3 0.28x after 48.9 s; -O2 has the "
             "lowest compile + 10,000 steps)"),
    cl::init(2), cl::cat(compileCategory));
static cl::opt<bool> noCache(
    "no-cache",
    cl::desc("do not store the library in the step cache of `python -m "
             "joint_mlir.run --backend mlir-cpu` ($JOINT_MLIR_CACHE, default "
             "~/.cache/joint_mlir)"),
    cl::init(false), cl::cat(compileCategory));
static cl::opt<std::string>
    ccProgram("cc", cl::desc("C compiler driver that links the library"),
              cl::init("cc"), cl::cat(compileCategory));

namespace {

/// One slot of the C ABI: a graph argument or an output, in ABI order.
struct Slot {
  bool isOutput = false;
  Type type;                         // memref (tensor) or i64 (SymInt argument)
  DictionaryAttr attrs;              // joint.role, joint.fqn, ... of the graph
  SmallVector<std::string> symbolic; // per dim: expression or "" (static)
};

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

/// Symbolic sizes of the graph's arguments and results (from `joint.meta`
/// and the producers' result facts), read before lowering erases them.
struct GraphFacts {
  std::string name;
  SmallVector<SmallVector<std::string>> args, results;
};

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
                                   bool emulated) {
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

/// The step cache's key (32 hex digits) of this compile: SHA-256 over the
/// SHA-256 of each part, the parts being the input bytes, --pipeline,
/// --lowering-options, --target, -O<level>, "<tool path>:<size>:<mtime ns>"
/// and the host's machine and node names. python/joint_mlir/mlir_cpu.py
/// (compile_graph) computes the same key; keep the two in step.
static std::string getCacheKey(StringRef input, const char *argv0) {
  std::string tool = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&getCacheKey));
  SmallString<256> real;
  if (!llvm::sys::fs::real_path(tool, real))
    tool = real.str().str();
  llvm::sys::fs::file_status status;
  std::string toolId = tool;
  if (!llvm::sys::fs::status(tool, status)) {
    auto mtime = std::chrono::duration_cast<std::chrono::nanoseconds>(
        status.getLastModificationTime().time_since_epoch());
    toolId += ":" + std::to_string(status.getSize()) + ":" +
              std::to_string(mtime.count());
  }
  struct utsname host = {};
  uname(&host);
  std::string level = "O" + std::to_string(optLevel);
  StringRef parts[] = {input, userPipeline, loweringOptions, target,
                       level, toolId,       host.machine,    host.nodename};
  llvm::SHA256 key;
  for (StringRef part : parts)
    key.update(llvm::SHA256::hash(llvm::arrayRefFromStringRef(part)));
  return llvm::toHex(key.final(), /*LowerCase=*/true).substr(0, 32);
}

/// Copies `library` and its descriptor into `<cache>/<key>/step.so(.json)`
/// (temporary names, renamed last; the descriptor last, since a reader
/// takes an entry only when both exist). A failure only warns.
static void storeInCache(StringRef key, StringRef library,
                         StringRef descriptor) {
  SmallString<256> dir;
  if (std::optional<std::string> env =
          llvm::sys::Process::GetEnv("JOINT_MLIR_CACHE")) {
    dir = *env;
  } else {
    if (!llvm::sys::path::home_directory(dir))
      return;
    llvm::sys::path::append(dir, ".cache", "joint_mlir");
  }
  llvm::sys::path::append(dir, key);
  SmallString<256> lib(dir), desc(dir), realLib, realOut;
  llvm::sys::path::append(lib, "step.so");
  desc = lib;
  desc += ".json";
  if (!llvm::sys::fs::real_path(lib, realLib) &&
      !llvm::sys::fs::real_path(library, realOut) && realLib == realOut)
    return; // compiled into the cache already
  auto warn = [&](const Twine &what, std::error_code ec) {
    llvm::errs() << "joint-compile: warning: not cached in " << dir << ": "
                 << what << ": " << ec.message() << "\n";
  };
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return warn("mkdir", ec);
  for (auto [from, to] : {std::pair<StringRef, StringRef>(library, lib),
                          std::pair<StringRef, StringRef>(descriptor, desc)}) {
    SmallString<256> temp;
    int fd;
    if (std::error_code ec =
            llvm::sys::fs::createUniqueFile(to + ".%%%%%%%%", fd, temp))
      return warn(to, ec);
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
    std::error_code ec = llvm::sys::fs::copy_file(from, temp);
    if (!ec)
      ec = llvm::sys::fs::rename(temp, to);
    if (ec) {
      llvm::sys::fs::remove(temp);
      return warn(to, ec);
    }
  }
}

static int fail(const std::string &message) {
  llvm::errs() << "joint-compile: error: " << message << "\n";
  return 1;
}

} // namespace

/// Refuses, before compiling, an -o that the library (or its `.json`
/// descriptor) cannot be renamed onto: a path in a missing directory, an
/// existing path that is not a regular file (a rename would replace a
/// device node or symbolic link itself), or the input file.
static LogicalResult checkOutputPaths(std::string &error) {
  for (std::string path :
       {outputFilename.getValue(), outputFilename.getValue() + ".json"}) {
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
    if (joint::isSameFile(path, inputFilename)) {
      error = "cannot write '" + path +
              "': it is the input file; write the library to another path";
      return failure();
    }
  }
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::StringSet<> staticOptions = joint::getRegisteredOptionNames();
  DialectRegistry registry;
  joint::registerAllDialects(registry);
  joint::registerAllPasses();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  joint::hideLibraryOptions(staticOptions, &compileCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "joint-compile: compile a joint graph into a shared library with one C "
      "entry point (docs/lowering.md)\n");

  bool cuda = target == "cuda";
  if (target != "cpu" && !cuda)
    return fail("unknown --target '" + target + "' (expected cpu or cuda)");
#ifndef JOINT_CUDA_RUNTIME_DIR
  if (cuda)
    return fail("--target=cuda needs a build with the CUDA toolkit (this one "
                "was configured with JOINT_ENABLE_CUDA=OFF: no toolkit found); "
                "use --target=cpu");
#endif
  if (optLevel > 3)
    return fail("-O" + std::to_string(optLevel) +
                ": the optimization level is 0, 1, 2 or 3");

  DefaultTimingManager timingManager;
  applyDefaultTimingManagerCLOptions(timingManager);
  TimingScope timing = timingManager.getRootScope();

  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false); // diagnostics name the node already
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  // Option errors (no location) read `joint-compile: error: <pass>: ...`.
  joint::registerToolDiagnostics(&context, "joint-compile");
  // Files the user's passes write, renamed into place after the library.
  joint::DeferredOutputFiles passOutputs;
  passOutputs.attach(&context);
  passOutputs.protect(inputFilename, "the input file");
  passOutputs.protect(outputFilename, "the -o library");
  passOutputs.protect(outputFilename + ".json", "the library's descriptor");

  std::string error;
  if (failed(checkOutputPaths(error)))
    return fail(error);
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &error);
  if (!input)
    return fail(error);
  std::string cacheKey = getCacheKey(input->getBuffer(), argv[0]);
  OwningOpRef<ModuleOp> module;
  // Diagnostics on JSON input quote the node and an excerpt, not its line
  // (asked before `handler`; the buffer lives until main returns).
  joint::ExcerptDiagnostics excerpts;
  ScopedDiagnosticHandler excerptHandler(
      &context, [&](Diagnostic &diag) { return excerpts.handle(diag); });
  if (joint::isJointJSON(inputFilename, input->getBuffer())) {
    excerpts.addBuffer(inputFilename, input->getBuffer());
    module =
        joint::importJointGraph(input->getBuffer(), &context, inputFilename);
  } else {
    sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  }
  if (!module)
    return 1;

  // 1. The user's passes (implicit nesting, as joint-opt flags).
  {
    PassManager pm(&context, ModuleOp::getOperationName(),
                   OpPassManager::Nesting::Implicit);
    if (failed(applyPassManagerCLOptions(pm)))
      return 1;
    pm.enableTiming(timing);
    // Size queries read forward SymInts in every compiled step, the
    // identity one too: no tensor stays allocated only for its size.
    pm.addNestedPass<joint::GraphOp>(joint::createJointReadForwardSizes());
    std::string why;
    llvm::raw_string_ostream whyStream(why);
    if (!userPipeline.empty() &&
        failed(joint::addPassPipeline(pm, userPipeline, whyStream)))
      return fail("bad --pipeline '" + userPipeline + "': " + why);
    if (failed(pm.run(*module)))
      return 1;
  }
  GraphFacts facts = collectGraphFacts(*module);

  // 2. Lowering: to the destination-passing entry on tensors, then LLVM.
  joint::LowerToCPUOptions options;
  joint::LowerToCUDAOptions cudaOptions;
  if (failed(cuda ? cudaOptions.parseFromString(loweringOptions)
                  : options.parseFromString(loweringOptions)))
    return fail("bad --lowering-options '" + loweringOptions + "'");
  SmallVector<Slot> slots;
  std::string graphName = facts.name;
  {
    PassManager pm(&context, ModuleOp::getOperationName());
    if (failed(applyPassManagerCLOptions(pm)))
      return 1;
    pm.enableTiming(timing);
    if (cuda)
      joint::buildLowerToCUDATensorPipeline(pm, cudaOptions);
    else
      joint::buildLowerToCPUTensorPipeline(pm, options);
    if (failed(pm.run(*module)))
      return 1;
    FailureOr<SmallVector<Slot>> collected =
        collectSlots(*module, facts, graphName);
    if (failed(collected))
      return 1;
    slots = std::move(*collected);
  }
  {
    PassManager pm(&context, ModuleOp::getOperationName());
    if (failed(applyPassManagerCLOptions(pm)))
      return 1;
    pm.enableTiming(timing);
    if (cuda)
      joint::buildLowerToCUDALLVMPipeline(pm, cudaOptions);
    else
      joint::buildLowerToCPULLVMPipeline(pm, options);
    if (failed(pm.run(*module)))
      return 1;
  }

  // 3. LLVM IR, the C entry, an object file, a shared library.
  llvm::LLVMContext llvmContext;
  TimingScope translateTiming = timing.nest("Translation to LLVM IR");
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*module, llvmContext, graphName);
  if (!llvmModule)
    return fail("translation to LLVM IR failed");
  if (failed(addCEntry(*llvmModule, slots, cuda, error)))
    return fail(error);
  if (llvm::verifyModule(*llvmModule, &llvm::errs()))
    return fail("the generated LLVM IR does not verify");
  translateTiming.stop();

  SmallString<256> outDir(outputFilename.getValue());
  llvm::sys::path::remove_filename(outDir);
  if (outDir.empty())
    outDir = ".";
  TempFile object, library, descriptor;
  if (failed(object.create(outDir, ".o", error)) ||
      failed(library.create(outDir, ".so", error)) ||
      failed(descriptor.create(outDir, ".json", error)))
    return fail(error);
  if (failed(emitObject(*llvmModule, object.path, optLevel, timing, error)))
    return fail(error);
  TimingScope linkTiming = timing.nest("Link");

  llvm::ErrorOr<std::string> cc = llvm::sys::findProgramByName(ccProgram);
  if (!cc)
    return fail("no C compiler driver '" + ccProgram + "' on PATH to link");
  // The step runtime (allocator with statistics, memrefCopy) is linked in
  // statically: the library needs libc and libm only.
  SmallVector<StringRef> linkArgs = {
      *cc,         "-shared",          "-o", library.path,
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
  int rc = llvm::sys::ExecuteAndWait(*cc, linkArgs, std::nullopt, {}, 0, 0,
                                     &linkError);
  if (rc != 0)
    return fail("linking with '" + *cc + "' failed" +
                (linkError.empty() ? "" : ": " + linkError));

  {
    std::error_code ec;
    llvm::raw_fd_ostream os(descriptor.path, ec);
    if (ec)
      return fail(descriptor.path.str().str() + ": " + ec.message());
    os << buildDescriptor(graphName, outputFilename, slots, cuda,
                          cuda && cudaOptions.emulate);
    os.close();
    if (os.has_error()) {
      os.clear_error();
      return fail(descriptor.path.str().str() + ": write failed");
    }
  }
  std::string descriptorName = outputFilename + ".json";
  if (std::error_code ec = llvm::sys::fs::rename(library.path, outputFilename))
    return fail(outputFilename + ": " + ec.message());
  if (std::error_code ec =
          llvm::sys::fs::rename(descriptor.path, descriptorName)) {
    llvm::sys::fs::remove(outputFilename);
    return fail(descriptorName + ": " + ec.message());
  }
  library.keep = descriptor.keep = true;
  if (failed(passOutputs.commit(error))) {
    llvm::sys::fs::remove(outputFilename);
    llvm::sys::fs::remove(descriptorName);
    return fail(error);
  }
  if (!noCache)
    storeInCache(cacheKey, outputFilename, descriptorName);
  return 0;
}

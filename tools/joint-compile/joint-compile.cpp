//===- joint-compile.cpp - Compile a joint graph to a shared library ------===//
//
// joint-compile g.json|g.json.gz|g.mlir --target=cpu|cuda -o step.so: imports
// the graph, compiles it with joint::compileStep (joint/Compile/Compile.h)
// and stores the library in the step cache (joint/Compile/StepCache.h).
//
//===----------------------------------------------------------------------===//

#include "joint/Compile/Compile.h"
#include "joint/Compile/StepCache.h"
#include "joint/InitAll.h"
#include "joint/Support/OutputFiles.h"
#include "joint/Support/ToolDiagnostics.h"
#include "joint/Support/ToolHelp.h"
#include "joint/Target/JSON/Diagnostics.h"
#include "joint/Target/JSON/Import.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"

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
             "or joint-lower-to-cuda (e.g. \"chip=sm_90 fuse-loops=false\"); "
             "all listed under --joint-lower-to-cpu / --joint-lower-to-cuda "
             "in joint-opt --help and in docs/lowering.md"),
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

static int fail(const std::string &message) {
  llvm::errs() << "joint-compile: error: " << message << "\n";
  return 1;
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
  joint::CompileOptions options{userPipeline, loweringOptions, target, optLevel,
                                ccProgram};
  std::string error;
  if (failed(joint::verifyCompileOptions(options, error)) ||
      failed(joint::checkStepOutputPaths(inputFilename, outputFilename, error)))
    return fail(error);
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
  joint::DeferredOutputFiles passOutputs; // renamed after the library
  passOutputs.attach(&context);
  passOutputs.protect(inputFilename, "the input file");
  passOutputs.protect(outputFilename, "the -o library");
  passOutputs.protect(outputFilename + ".json", "the library's descriptor");
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &error);
  if (!input)
    return fail(error);
  std::string self = llvm::sys::fs::getMainExecutable(
      argv[0], reinterpret_cast<void *>(&fail));
  std::string cacheKey =
      joint::getStepCacheKey(input->getBuffer(), options, self);
  // Diagnostics on JSON input quote the node and an excerpt, not its line
  // (asked before `handler`; the buffer lives until main returns).
  joint::ExcerptDiagnostics excerpts;
  ScopedDiagnosticHandler excerptHandler(
      &context, [&](Diagnostic &diag) { return excerpts.handle(diag); });
  OwningOpRef<ModuleOp> module;
  if (joint::isJointJSON(inputFilename, input->getBuffer())) {
    excerpts.addBuffer(inputFilename, input->getBuffer());
    module =
        joint::importJointGraph(input->getBuffer(), &context, inputFilename);
  } else {
    sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  }
  std::string descriptor = outputFilename + ".json";
  // A failed compile leaves no library behind, not even an older one a
  // caller could take for this graph's (as joint-opt removes its -o file).
  auto removeStale = [&] {
    llvm::sys::fs::remove(outputFilename);
    llvm::sys::fs::remove(descriptor);
  };
  if (!module)
    return removeStale(), 1;
  if (failed(joint::compileStep(*module, options, outputFilename, timing,
                                error))) {
    removeStale();
    return error.empty() ? 1 : fail(error);
  }
  if (failed(passOutputs.commit(error))) {
    removeStale();
    return fail(error);
  }
  if (!noCache)
    joint::storeInStepCache(cacheKey, outputFilename, descriptor);
  return 0;
}

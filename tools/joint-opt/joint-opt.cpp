//===- joint-opt.cpp - The joint-mlir optimizer driver --------------------===//
//
// mlir-opt for joint graphs. Besides .mlir input it reads joint-graph JSON
// (.json, .json.gz, or any file starting with '{' or the gzip magic), so the
// main job is one command: joint-opt model.json --joint-... -o out.mlir.
// --help shows the driver's MLIR options and the joint passes (LLVM's static
// flags and upstream passes only under --help-hidden), and a bad pass option
// is one error naming the pass and its options before anything runs. Files
// the passes write (joint-memory-report's output=) appear only when the whole
// run succeeds, as the -o file does, and may not be the input or -o file.
//
//===----------------------------------------------------------------------===//

#include "joint/InitAll.h"
#include "joint/Support/OutputFiles.h"
#include "joint/Support/PassPipeline.h"
#include "joint/Support/ToolDiagnostics.h"
#include "joint/Support/ToolHelp.h"
#include "joint/Target/JSON/Diagnostics.h"
#include "joint/Target/JSON/Import.h"
#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

/// Builds each `--<pass or pipeline>=<options>` flag, and the passes of a
/// `--pass-pipeline` text, once before the run (PassPipeline.h), so a bad
/// option is one error naming the pass, the option and the options it takes
/// (MLIR's own says only `no such option X`). Arguments after `--` are
/// inputs.
static LogicalResult checkPassFlags(int argc, char **argv) {
  std::string error;
  llvm::raw_string_ostream os(error);
  for (int i = 1; i < argc && error.empty(); ++i) {
    StringRef arg = argv[i];
    if (arg == "--")
      break;
    if (!arg.consume_front("-"))
      continue;
    arg.consume_front("-");
    auto [name, options] = arg.split('=');
    if (name == "pass-pipeline") {
      if (!arg.contains('=') && i + 1 < argc)
        options = argv[++i];
      (void)joint::verifyAnchoredPassPipeline(options, os);
    } else if (PassPipelineInfo::lookup(name) || PassInfo::lookup(name)) {
      OpPassManager scratch(ModuleOp::getOperationName(),
                            OpPassManager::Nesting::Implicit);
      (void)joint::addRegisteredPass(scratch, name, options, os);
    }
  }
  if (error.empty())
    return success();
  llvm::errs() << "joint-opt: error: " << error << "\n";
  return failure();
}

/// The option that lists every registered pass and pipeline as a flag
/// (MLIR's "Compiler passes to run"), found by one of our passes.
static llvm::cl::Option *passListOption() {
  return llvm::cl::getRegisteredOptions().lookup("joint-remat");
}

/// Hides from --help the options registered before main (ToolHelp.h) and
/// MLIR's list of all passes, which printJointPasses replaces. --help-hidden
/// still lists them all.
static void hideUnrelatedOptions(const llvm::StringSet<> &staticOptions) {
  joint::hideLibraryOptions(staticOptions);
  if (llvm::cl::Option *passes = passListOption())
    passes->setHiddenFlag(llvm::cl::Hidden);
}

/// Prints the joint passes and pipelines (every registered name containing
/// "joint") with their options, in MLIR's --help layout.
static void printJointPasses() {
  llvm::cl::Option *passes = passListOption();
  SmallVector<StringRef> names[2]; // passes, pipelines
  size_t width = 0;
  for (auto &[name, option] : llvm::cl::getRegisteredOptions()) {
    if (option != passes || !name.contains("joint"))
      continue;
    const PassRegistryEntry *entry = PassPipelineInfo::lookup(name);
    names[entry != nullptr].push_back(name);
    if (!entry)
      entry = PassInfo::lookup(name);
    width = std::max({width, entry->getOptionWidth() + 4, name.size() + 8});
  }
  llvm::outs() << "\njoint-mlir passes and pipelines (upstream MLIR passes: "
                  "--help-hidden):\n";
  for (auto [header, list] :
       {std::pair<StringRef, SmallVector<StringRef> &>{"Passes", names[0]},
        {"Pass Pipelines", names[1]}}) {
    llvm::sort(list);
    llvm::outs() << "  " << header << ":\n";
    for (StringRef name : list) {
      const PassRegistryEntry *entry = PassPipelineInfo::lookup(name);
      if (!entry)
        entry = PassInfo::lookup(name);
      entry->printHelpStr(/*indent=*/4, width);
    }
  }
}

#ifdef JOINT_INCLUDE_TESTS
namespace mlir::joint {
void registerTestMemoryPlanPasses();
} // namespace mlir::joint
#endif

int main(int argc, char **argv) {
  // Before MLIR registers its options: what remains was registered by
  // static initializers.
  llvm::StringSet<> staticOptions = joint::getRegisteredOptionNames();
  DialectRegistry registry;
  joint::registerAllDialects(registry);
  joint::registerAllPasses();
#ifdef JOINT_INCLUDE_TESTS
  joint::registerTestMemoryPlanPasses();
#endif
  std::string helpHeader =
      registerCLIOptions("joint-mlir optimizer driver\n", registry);
  hideUnrelatedOptions(staticOptions);
  // --help / --help-list: LLVM prints the visible options, then the joint
  // passes follow (LLVM's printer would exit first).
  SmallVector<char *> args;
  std::optional<bool> help; // categorized?
  bool inputsOnly = false;  // after `--`
  for (int i = 0; i < argc; ++i) {
    StringRef arg = argv[i];
    inputsOnly |= arg == "--";
    if (i && !inputsOnly && (arg == "--help" || arg == "-help"))
      help = true;
    else if (i && !inputsOnly && (arg == "--help-list" || arg == "-help-list"))
      help = false;
    else
      args.push_back(argv[i]);
  }
  auto [inputFilename, outputFilename] =
      parseCLIOptions(args.size(), args.data(), helpHeader);
  if (help) {
    llvm::cl::PrintHelpMessage(/*Hidden=*/false, /*Categorized=*/*help);
    printJointPasses();
    return 0;
  }
  // -o onto the input would truncate the file the parser reads (mapped:
  // SIGBUS) and lose it.
  if (inputFilename != "-" && outputFilename != "-" &&
      joint::isSameFile(outputFilename, inputFilename)) {
    llvm::errs() << "joint-opt: error: cannot write '" << outputFilename
                 << "': it is the input file; write the output to another "
                    "path\n";
    return 1;
  }
  if (failed(checkPassFlags(args.size(), args.data())))
    return 1;
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  // Report files go to temporaries, renamed into place after the run.
  joint::DeferredOutputFiles passOutputs;
  // A report onto the input or the -o file would replace it at commit.
  passOutputs.protect(inputFilename, "the input file");
  passOutputs.protect(outputFilename, "the -o output file");
  MlirOptMainConfig base = config;
  // The input as its locations name it (set below): pass diagnostics on
  // stdin input, which no handler can read back from disk, quote it too.
  std::pair<std::string, StringRef> source;
  config.setPassPipelineSetupFn([base, &passOutputs, &source](PassManager &pm) {
    // One context per --split-input-file chunk: attach to each.
    passOutputs.attach(pm.getContext());
    if (!base.shouldVerifyDiagnostics()) {
      // Pass diagnostics on ops imported from JSON quote the node and an
      // excerpt, not the source line, and option errors (no location) read
      // `joint-opt: error: <pass>: ...` (the pipeline is set up after the
      // driver's own handler, so these are asked first).
      joint::registerExcerptDiagnostics(pm.getContext(), source.first,
                                        source.second);
      joint::registerToolDiagnostics(pm.getContext(), "joint-opt");
    }
    return base.setupPassPipeline(pm);
  });

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &errorMessage);
  if (!input) {
    llvm::errs() << "joint-opt: error: " << errorMessage << "\n";
    return 1;
  }
  // JSON read from stdin, kept for its excerpts until MlirOptMain returns
  // (a file's text is read back from disk only if a diagnostic needs it);
  // MLIR text lives as long in the buffer MlirOptMain takes over.
  std::unique_ptr<llvm::MemoryBuffer> stdinJSON;
  source = {input->getBufferIdentifier().str(), input->getBuffer()};
  if (joint::isJointJSON(inputFilename, input->getBuffer())) {
    // Import, then hand the module to MlirOptMain as bytecode (locations
    // included), so every opt flag works on JSON input unchanged.
    MLIRContext context(registry);
    llvm::SourceMgr sourceMgr;
    SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    // Quote the node and an excerpt, not the line (a lone `{` in an indented
    // graph, megabytes in a one-line one).
    joint::ExcerptDiagnostics excerpts;
    excerpts.addBuffer(inputFilename, input->getBuffer());
    ScopedDiagnosticHandler quoted(
        &context, [&](Diagnostic &diag) { return excerpts.handle(diag); });
    OwningOpRef<ModuleOp> module =
        joint::importJointGraph(input->getBuffer(), &context, inputFilename);
    if (!module)
      return 1;
    std::string bytes;
    llvm::raw_string_ostream os(bytes);
    if (failed(writeBytecodeToFile(*module, os)))
      return 1;
    // A distinct buffer name: diagnostics locate ops in the JSON file, whose
    // lines the handler then reads from disk, not in these bytes.
    source = {};
    if (inputFilename == "-") {
      stdinJSON = std::move(input);
      source = {inputFilename, stdinJSON->getBuffer()};
    }
    input = llvm::MemoryBuffer::getMemBufferCopy(
        bytes, "<bytecode imported from " + inputFilename + ">");
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << "joint-opt: error: " << errorMessage << "\n";
    return 1;
  }
  LogicalResult result =
      MlirOptMain(output->os(), std::move(input), registry, config);
  // A write that failed (a full disk) is an error naming the file, not the
  // stream's abort when it closes; the reports then stay unwritten too.
  llvm::raw_fd_ostream &os = output->os();
  os.flush();
  if (std::error_code ec = os.error()) {
    os.clear_error();
    llvm::errs() << "joint-opt: error: cannot write '"
                 << (outputFilename == "-" ? "<stdout>" : outputFilename)
                 << "': " << ec.message() << "\n";
    return 1;
  }
  if (failed(result))
    return 1; // the output and report files are removed: no partial output
  if (failed(passOutputs.commit(errorMessage))) {
    llvm::errs() << "joint-opt: error: " << errorMessage << "\n";
    return 1;
  }
  output->keep();
  return 0;
}

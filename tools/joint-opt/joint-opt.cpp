//===- joint-opt.cpp - The joint-mlir optimizer driver ----------*- C++ -*-===//
//
// mlir-opt for joint graphs. Besides .mlir input it reads joint-graph JSON
// (.json, .json.gz, or any file starting with '{' or the gzip magic), so the
// main job is one command: joint-opt model.json --joint-... -o out.mlir.
//
//===----------------------------------------------------------------------===//

#include "joint/InitAll.h"
#include "joint/Target/JSON/Diagnostics.h"
#include "joint/Target/JSON/Import.h"
#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

int main(int argc, char **argv) {
  DialectRegistry registry;
  joint::registerAllDialects(registry);
  joint::registerAllPasses();
  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv, "joint-mlir optimizer driver\n", registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  if (!config.shouldVerifyDiagnostics()) {
    // Pass diagnostics on ops imported from JSON quote the node and an
    // excerpt, not the source line (the pipeline is set up after the
    // driver's own handler, so this one is asked first).
    MlirOptMainConfig base = config;
    config.setPassPipelineSetupFn([base](PassManager &pm) {
      joint::registerExcerptDiagnostics(pm.getContext());
      return base.setupPassPipeline(pm);
    });
  }

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &errorMessage);
  if (!input) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
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
    input = llvm::MemoryBuffer::getMemBufferCopy(
        bytes, "<bytecode imported from " + inputFilename + ">");
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  if (failed(MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1; // the output file is removed: no partial output
  output->keep();
  return 0;
}

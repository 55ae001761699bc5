//===- joint-translate.cpp - joint-graph JSON <-> MLIR --------------------===//
//
// mlir-translate for joint graphs: --import-joint-json reads format v1
// (plain or gzip) into the joint dialect, --export-joint-json writes it back.
// Errors about the files themselves (an input that cannot be read, an -o
// that cannot be created or written, e.g. a full disk) are one line in the
// form `joint-translate: error: ...`, as joint-opt and joint-compile print
// them, checked before the translation starts where they can be.
//
//===----------------------------------------------------------------------===//

#include "joint/Support/OutputFiles.h"
#include "joint/Support/ToolHelp.h"
#include "joint/Target/JSON/Export.h"
#include "joint/Target/JSON/Import.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/Timing.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"
#include <string>

namespace {

/// Whether the option `-name` (given without `=value`) takes the next
/// argument as its value: a registered option that requires a value, or one
/// of the driver's own that mlirTranslateMain registers only when it runs.
bool takesValue(llvm::StringRef name) {
  if (name == "o" || name == "output-split-marker" ||
      name == "input-split-marker")
    return true;
  llvm::cl::Option *option = llvm::cl::getRegisteredOptions().lookup(name);
  return option && option->getValueExpectedFlag() == llvm::cl::ValueRequired;
}

/// The input and output files a command line names ("-": stdin, stdout),
/// found as llvm::cl finds them: the first argument not starting with '-'
/// that is no option's value (every one after `--`), and `-o FILE` /
/// `-o=FILE`.
struct Files {
  llvm::StringRef input = "-", output = "-";
  bool exporting = false;
};

Files findFiles(int argc, char **argv) {
  Files files;
  bool inputSeen = false, inputsOnly = false;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (!inputsOnly && arg == "--") {
      inputsOnly = true;
    } else if (!inputsOnly &&
               (arg == "--export-joint-json" || arg == "-export-joint-json")) {
      files.exporting = true;
    } else if (!inputsOnly && (arg == "-o" || arg == "--o")) {
      if (i + 1 < argc)
        files.output = argv[++i];
    } else if (!inputsOnly &&
               (arg.consume_front("-o=") || arg.consume_front("--o="))) {
      files.output = arg;
    } else if (!inputsOnly && arg.size() > 1 && arg.starts_with("-") &&
               !arg.contains('=') &&
               takesValue(arg.drop_while([](char c) { return c == '-'; }))) {
      ++i; // the option's value
    } else if ((inputsOnly || !arg.starts_with("-") || arg == "-") &&
               !inputSeen) {
      files.input = arg;
      inputSeen = true;
    }
  }
  return files;
}

/// The -o path, as error messages name it.
std::string outputName;

/// An output stream that fails when it closes (a full disk) is one error
/// naming the file; LLVM would print "LLVM ERROR: IO failure on output
/// stream" and exit 1 after this returns.
void reportFatalError(void *, const char *reason, bool) {
  llvm::StringRef text(reason);
  if (text.consume_front("IO failure on output stream: "))
    llvm::errs() << "joint-translate: error: cannot write '" << outputName
                 << "': " << text << "\n";
  else // as LLVM prints it without a handler
    llvm::errs() << "LLVM ERROR: " << text << "\n";
  llvm::errs().flush();
}

/// Checks that the input can be read and the output created, without
/// changing either (an output created here is removed again): an error is
/// printed in the tool's form and true returned.
bool rejectUnusableFiles(const Files &files) {
  // -o onto the input would truncate the file being read (mapped: SIGBUS).
  if (files.input != "-" && files.output != "-" &&
      mlir::joint::isSameFile(files.output, files.input)) {
    llvm::errs() << "joint-translate: error: cannot write '" << files.output
                 << "': it is the input file; write the output to another "
                    "path\n";
    return true;
  }
  if (files.input != "-") {
    auto buffer = llvm::MemoryBuffer::getFile(files.input, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!buffer) {
      llvm::errs() << "joint-translate: error: cannot open input file '"
                   << files.input << "': " << buffer.getError().message()
                   << "\n";
      return true;
    }
  }
  if (files.output != "-") {
    bool existed = llvm::sys::fs::exists(files.output);
    int fd = -1;
    if (std::error_code ec = llvm::sys::fs::openFileForWrite(
            files.output, fd, llvm::sys::fs::CD_OpenAlways,
            llvm::sys::fs::OF_Append)) {
      llvm::errs() << "joint-translate: error: cannot open output file '"
                   << files.output << "': " << ec.message() << "\n";
      return true;
    }
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
    if (!existed)
      llvm::sys::fs::remove(files.output);
  }
  return false;
}

/// --export-joint-json reads MLIR. Given a JSON (or gzip) file instead, the
/// MLIR parser would report a syntax error and echo binary bytes; say what
/// the user meant instead. Returns true when such an input was found.
bool rejectJSONInputForExport(const Files &files) {
  if (!files.exporting || files.input == "-")
    return false;
  auto buffer = llvm::MemoryBuffer::getFile(files.input);
  if (!buffer)
    return false; // rejectUnusableFiles reports unreadable files
  llvm::StringRef head = (*buffer)->getBuffer();
  bool gzip = head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
              static_cast<unsigned char>(head[1]) == 0x8b;
  if (!gzip && !head.ltrim().starts_with("{"))
    return false;
  llvm::errs() << files.input
               << ": error: --export-joint-json reads MLIR, but this is "
                  "joint-graph JSON; use --import-joint-json (or joint-opt, "
                  "which reads JSON directly)\n";
  return true;
}

} // namespace

int main(int argc, char **argv) {
  // --help: the translation options, not LLVM's code-generation flags.
  llvm::StringSet<> staticOptions = mlir::joint::getRegisteredOptionNames();
  // The options mlirTranslateMain registers (idempotent), so that their
  // values are not taken for the input file.
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerTranslationCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  mlir::joint::hideLibraryOptions(staticOptions);
  Files files = findFiles(argc, argv);
  if (rejectUnusableFiles(files) || rejectJSONInputForExport(files))
    return 1;
  outputName = files.output == "-" ? "<stdout>" : files.output.str();
  llvm::install_fatal_error_handler(reportFatalError);
  mlir::joint::registerImportJointJSONTranslation();
  mlir::joint::registerExportJointJSONTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "joint-mlir translation driver"));
}

//===- joint-translate.cpp - joint-graph JSON <-> MLIR ----------*- C++ -*-===//
//
// mlir-translate for joint graphs: --import-joint-json reads format v1
// (plain or gzip) into the joint dialect, --export-joint-json writes it back.
//
//===----------------------------------------------------------------------===//

#include "joint/Target/JSON/Export.h"
#include "joint/Target/JSON/Import.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

/// --export-joint-json reads MLIR. Given a JSON (or gzip) file instead, the
/// MLIR parser would report a syntax error and echo binary bytes; say what
/// the user meant instead. Returns true when such an input was found.
static bool rejectJSONInputForExport(int argc, char **argv) {
  bool exporting = false;
  llvm::StringRef input;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (arg == "--export-joint-json" || arg == "-export-joint-json")
      exporting = true;
    else if (arg == "-o")
      ++i; // skip the output file
    else if (!arg.starts_with("-") && input.empty())
      input = arg;
  }
  if (!exporting || input.empty())
    return false;
  auto buffer = llvm::MemoryBuffer::getFile(input);
  if (!buffer)
    return false; // the driver reports unreadable files itself
  llvm::StringRef head = (*buffer)->getBuffer();
  bool gzip = head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
              static_cast<unsigned char>(head[1]) == 0x8b;
  if (!gzip && !head.ltrim().starts_with("{"))
    return false;
  llvm::errs() << input
               << ": error: --export-joint-json reads MLIR, but this is "
                  "joint-graph JSON; use --import-joint-json (or joint-opt, "
                  "which reads JSON directly)\n";
  return true;
}

int main(int argc, char **argv) {
  if (rejectJSONInputForExport(argc, argv))
    return 1;
  mlir::joint::registerImportJointJSONTranslation();
  mlir::joint::registerExportJointJSONTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "joint-mlir translation driver"));
}

//===- joint-import-fuzzer.cpp - libFuzzer target for the importer --------===//
//
// Feeds arbitrary bytes to importJointGraph. Any crash, hang, sanitizer
// report or verifier-accepted-but-invalid module is a bug; diagnostics are the
// expected outcome for bad input and are swallowed. Built only with
// -DJOINT_ENABLE_FUZZER=ON and clang (scripts/fuzz-import runs it).
//
//===----------------------------------------------------------------------===//

#include "joint/Dialect/AO/IR/AOOps.h"
#include "joint/Dialect/Joint/IR/JointOps.h"
#include "joint/Target/JSON/Export.h"
#include "joint/Target/JSON/Import.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  context.loadDialect<mlir::joint::JointDialect, mlir::ao::AODialect>();
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::joint::importJointGraph(input, &context, "fuzz.json");
  if (!module)
    return 0;
  // An accepted module must verify and export again.
  if (mlir::failed(mlir::verify(*module)))
    std::abort();
  std::string out;
  llvm::raw_string_ostream os(out);
  if (mlir::failed(mlir::joint::exportJointGraph(*module, os)))
    std::abort();
  return 0;
}

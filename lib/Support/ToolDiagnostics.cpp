//===- ToolDiagnostics.cpp - Location-less errors as tool errors ----------===//
//
// The handler behind registerToolDiagnostics: a diagnostic at an UnknownLoc
// is printed with the tool's name in place of `<unknown>:0`, once (a
// per-graph pass checks its options on every graph of the module).
//
//===----------------------------------------------------------------------===//

#include "joint/Support/ToolDiagnostics.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/StringSet.h"
#include <memory>

using namespace mlir;

namespace {

StringRef label(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Remark:
    return "remark";
  case DiagnosticSeverity::Note:
    return "note";
  }
  llvm_unreachable("unknown diagnostic severity");
}

} // namespace

void mlir::joint::registerToolDiagnostics(MLIRContext *context, StringRef tool,
                                          raw_ostream &os) {
  // Handlers run under the engine's lock: `printed` needs no other.
  auto printed = std::make_shared<llvm::StringSet<>>();
  context->getDiagEngine().registerHandler(
      [tool = tool.str(), &os, printed](Diagnostic &diag) -> LogicalResult {
        if (!isa<UnknownLoc>(diag.getLocation()))
          return failure();
        std::string text;
        llvm::raw_string_ostream ts(text);
        ts << tool << ": " << label(diag.getSeverity()) << ": " << diag << "\n";
        for (Diagnostic &note : diag.getNotes())
          ts << tool << ": note: " << note << "\n";
        if (printed->insert(text).second) {
          os << text;
          os.flush();
        }
        return success();
      });
}

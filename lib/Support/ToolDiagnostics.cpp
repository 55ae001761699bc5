//===- ToolDiagnostics.cpp - Location-less errors as tool errors -*- C++ -*-//
//
// The handler behind registerToolDiagnostics: a diagnostic at an UnknownLoc
// is printed with the tool's name in place of `<unknown>:0`.
//
//===----------------------------------------------------------------------===//

#include "joint/Support/ToolDiagnostics.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"

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
  context->getDiagEngine().registerHandler(
      [tool = tool.str(), &os](Diagnostic &diag) -> LogicalResult {
        if (!isa<UnknownLoc>(diag.getLocation()))
          return failure();
        os << tool << ": " << label(diag.getSeverity()) << ": " << diag << "\n";
        for (Diagnostic &note : diag.getNotes())
          os << tool << ": note: " << note << "\n";
        os.flush();
        return success();
      });
}

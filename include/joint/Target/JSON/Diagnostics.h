//===- Diagnostics.h - Short source quotes for one-line JSON ----*- C++ -*-===//
//
// MLIR's SourceMgrDiagnosticHandler quotes the whole source line of a
// diagnostic; a graph written without indentation is one line of megabytes.
// LongLineDiagnostics takes the diagnostics located on a long line and
// prints them as that handler would, with the line cut to a window around
// the column; everything else falls through to the tool's handler unchanged.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_TARGET_JSON_DIAGNOSTICS_H
#define JOINT_TARGET_JSON_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include <memory>
#include <vector>

namespace mlir {
namespace joint {

/// A diagnostic handler body: for a diagnostic (or one of its notes) whose
/// FileLineColLoc lies on a line longer than kLongLine bytes, prints it and
/// its notes as `file:line:col: error: message`, then at most kContext bytes
/// either side of the column with `...` where the line was cut, then the
/// caret; returns failure() for every other diagnostic (the next handler
/// prints it). Lines come from addBuffer texts or are read from disk by the
/// location's file name, as SourceMgrDiagnosticHandler reads them.
class LongLineDiagnostics {
public:
  /// Lines up to this many bytes are quoted in full (by the next handler).
  static constexpr size_t kLongLine = 256;
  /// Bytes kept on each side of the column in a cut line.
  static constexpr size_t kContext = 64;

  explicit LongLineDiagnostics(llvm::raw_ostream &os = llvm::errs()) : os(os) {}

  /// Use `text` (not copied; it must outlive this object) for locations
  /// naming `filename` instead of reading the file.
  void addBuffer(llvm::StringRef filename, llvm::StringRef text);

  /// The handler: success() when the diagnostic was printed here.
  LogicalResult handle(Diagnostic &diag);

  /// The quoted form of `line` around the 0-based byte `column`: the line
  /// itself when short, else a window with `...` marks; `caret` is set to
  /// the column's position in the returned text.
  static std::string window(llvm::StringRef line, size_t column, size_t &caret);

private:
  struct Source {
    std::unique_ptr<llvm::MemoryBuffer> owned;
    llvm::StringRef text;
    std::vector<size_t> lineStarts; // filled on first use
    bool valid = false;
  };
  /// The 1-based `line` of `filename`; false when the file cannot be read
  /// or has no such line.
  bool getLine(llvm::StringRef filename, unsigned line, llvm::StringRef &out);
  bool isOnLongLine(Location loc);
  void print(Location loc, llvm::StringRef message, DiagnosticSeverity kind);

  llvm::raw_ostream &os;
  llvm::StringMap<Source> sources;
};

/// Registers a LongLineDiagnostics on `context` for the context's lifetime
/// (tools whose driver owns the context, e.g. joint-opt's pass pipeline).
void registerLongLineDiagnostics(MLIRContext *context);

} // namespace joint
} // namespace mlir

#endif // JOINT_TARGET_JSON_DIAGNOSTICS_H

//===- Diagnostics.h - Source excerpts for JSON and long lines --*- C++ -*-===//
//
// MLIR's SourceMgrDiagnosticHandler quotes the whole source line of a
// diagnostic: a graph written without indentation is one line of megabytes,
// and in an indented graph the line of the document (or of a node object)
// may be a lone `{`. ExcerptDiagnostics takes the diagnostics located in a
// joint-graph JSON source, or on a long line of any source, and prints them
// as that handler would, with a short excerpt for the line: around the column,
// across line breaks for JSON, after the name of the node (or graph) whose
// object the location points at; everything else falls through to the
// tool's handler unchanged.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_TARGET_JSON_DIAGNOSTICS_H
#define JOINT_TARGET_JSON_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include <memory>
#include <vector>

namespace mlir {
namespace joint {

/// The SourceMgr kind (and so the printed label: `error:`, `remark:`, ...)
/// of an MLIR diagnostic severity.
llvm::SourceMgr::DiagKind getDiagKind(DiagnosticSeverity severity);

/// A diagnostic handler body: for a diagnostic (or one of its notes) whose
/// FileLineColLoc lies in a joint-graph JSON source (Import.h, isJointJSON)
/// or on a line longer than kLongLine bytes, prints it and its notes as
/// `file:line:col: error: message`, then the excerpt (JSON: after
/// `node 'x': `, or the message followed by ` (graph 'g')`, when the location
/// is that object's `{` and the diagnostic is not marked as naming it
/// already, NamedDiagnostics.h), then the caret; returns
/// failure() for every other diagnostic (the next handler prints it). Sources
/// come from addBuffer texts or are read from disk by the location's file name,
/// as SourceMgrDiagnosticHandler reads them.
class ExcerptDiagnostics {
public:
  /// Lines of other sources up to this many bytes are quoted in full (by the
  /// next handler).
  static constexpr size_t kLongLine = 256;
  /// Bytes kept on each side of the column in an excerpt (the importer's
  /// cut of a malformed token is as long).
  static constexpr size_t kContext = 64;

  explicit ExcerptDiagnostics(llvm::raw_ostream &os = llvm::errs()) : os(os) {}

  /// Use `text` (not copied; it must outlive this object) for locations
  /// naming `filename` instead of reading the file.
  void addBuffer(llvm::StringRef filename, llvm::StringRef text);

  /// The handler: success() when the diagnostic was printed here.
  LogicalResult handle(Diagnostic &diag);

  /// The quoted form of `line` around the 0-based byte `column`: the line
  /// itself when short, else a window with `...` marks; `caret` is set to
  /// the column's position in the returned text.
  static std::string window(llvm::StringRef line, size_t column, size_t &caret);

  /// The excerpt of JSON `text` at byte `offset` (on the line starting at
  /// `lineStart`): up to kContext bytes before it on its line (indentation
  /// dropped) and kContext + 1 bytes from it on, across line breaks, each
  /// whitespace run shown as one space, with `...` where cut; `caret` is set
  /// to the offset's position in the returned text.
  static std::string jsonExcerpt(llvm::StringRef text, size_t lineStart,
                                 size_t offset, size_t &caret);

  /// The "name" of the JSON object starting at byte `offset` of `text` (a
  /// node, or the document: the graph), or "" when there is none before its
  /// "nodes" or its end; reads only that far.
  static std::string objectName(llvm::StringRef text, size_t offset);

private:
  struct Source {
    std::unique_ptr<llvm::MemoryBuffer> owned;
    llvm::StringRef text;
    std::vector<size_t> lineStarts; // filled as far as lines are asked for
    bool fullyIndexed = false;      // lineStarts holds every line
    bool valid = false;
    bool json = false;
  };
  /// The source named `filename` (read on first use), or null.
  Source *getSource(llvm::StringRef filename);
  /// The byte offset of the 1-based `line` in `s`; false when there is no
  /// such line. `end` is set to its end (line break excluded).
  static bool getLine(Source &s, unsigned line, size_t &start, size_t &end);
  bool isQuoted(Location loc);
  /// Prints one diagnostic (or note) without its notes.
  void print(Diagnostic &diag);

  llvm::raw_ostream &os;
  llvm::StringMap<Source> sources;
};

/// Registers an ExcerptDiagnostics on `context` for the context's lifetime
/// (tools whose driver owns the context, e.g. joint-opt's pass pipeline).
/// `text`, when given, is the source named `filename` (addBuffer: not
/// copied, it must outlive the context); a source that is no file on disk
/// (stdin: `<stdin>` for MLIR, `-` for JSON) is quoted only so.
void registerExcerptDiagnostics(MLIRContext *context,
                                llvm::StringRef filename = {},
                                llvm::StringRef text = {});

} // namespace joint
} // namespace mlir

#endif // JOINT_TARGET_JSON_DIAGNOSTICS_H

//===- Diagnostics.cpp - Short source quotes for one-line JSON --*- C++ -*-===//
//
// Prints diagnostics located on long source lines with the line cut to a
// window around the column, in SourceMgrDiagnosticHandler's layout, so an
// error on a one-line graph of megabytes stays a few lines long.
//
//===----------------------------------------------------------------------===//

#include "joint/Target/JSON/Diagnostics.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
using namespace mlir::joint;

namespace {

llvm::SourceMgr::DiagKind diagKind(DiagnosticSeverity kind) {
  switch (kind) {
  case DiagnosticSeverity::Note:
    return llvm::SourceMgr::DK_Note;
  case DiagnosticSeverity::Warning:
    return llvm::SourceMgr::DK_Warning;
  case DiagnosticSeverity::Remark:
    return llvm::SourceMgr::DK_Remark;
  case DiagnosticSeverity::Error:
    return llvm::SourceMgr::DK_Error;
  }
  return llvm::SourceMgr::DK_Error;
}

/// True for a UTF-8 continuation byte (a window never starts or ends in
/// the middle of a character).
bool isContinuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

} // namespace

void LongLineDiagnostics::addBuffer(StringRef filename, StringRef text) {
  Source &s = sources[filename];
  s.owned.reset();
  s.text = text;
  s.lineStarts.clear();
  s.valid = true;
}

bool LongLineDiagnostics::getLine(StringRef filename, unsigned line,
                                  StringRef &out) {
  auto [it, inserted] = sources.try_emplace(filename);
  Source &s = it->second;
  if (inserted && filename != "-") {
    auto buf = llvm::MemoryBuffer::getFile(filename, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
    if (buf) {
      s.owned = std::move(*buf);
      s.text = s.owned->getBuffer();
      s.valid = true;
    }
  }
  if (!s.valid || line == 0)
    return false;
  if (s.lineStarts.empty()) {
    s.lineStarts.push_back(0);
    for (size_t i = 0; i < s.text.size(); ++i)
      if (s.text[i] == '\n')
        s.lineStarts.push_back(i + 1);
  }
  if (line > s.lineStarts.size())
    return false;
  size_t start = s.lineStarts[line - 1];
  size_t end =
      line < s.lineStarts.size() ? s.lineStarts[line] - 1 : s.text.size();
  out = s.text.slice(start, end);
  out.consume_back("\r");
  return true;
}

bool LongLineDiagnostics::isOnLongLine(Location loc) {
  auto fileLoc = loc->findInstanceOf<FileLineColLoc>();
  if (!fileLoc || fileLoc.getColumn() == 0)
    return false;
  StringRef line;
  return getLine(fileLoc.getFilename(), fileLoc.getLine(), line) &&
         line.size() > kLongLine;
}

std::string LongLineDiagnostics::window(StringRef line, size_t column,
                                        size_t &caret) {
  column = std::min(column, line.size());
  if (line.size() <= kLongLine) {
    caret = column;
    return line.str();
  }
  size_t begin = column > kContext ? column - kContext : 0;
  size_t end = std::min(line.size(), column + kContext + 1);
  while (begin > 0 && begin < line.size() && isContinuation(line[begin]))
    --begin;
  while (end < line.size() && isContinuation(line[end]))
    ++end;
  std::string out = begin > 0 ? "..." : "";
  caret = out.size() + (column - begin);
  out += line.slice(begin, end).str();
  if (end < line.size())
    out += "...";
  return out;
}

void LongLineDiagnostics::print(Location loc, StringRef message,
                                DiagnosticSeverity kind) {
  llvm::SourceMgr::DiagKind diagnosticKind = diagKind(kind);
  auto fileLoc = loc->findInstanceOf<FileLineColLoc>();
  if (!fileLoc) {
    // As SourceMgrDiagnosticHandler: the location, printed, before the text.
    std::string text;
    llvm::raw_string_ostream textOS(text);
    if (!isa<UnknownLoc>(loc))
      textOS << loc << ": ";
    textOS << message;
    llvm::SMDiagnostic("", diagnosticKind, text).print(nullptr, os);
    return;
  }
  StringRef filename = fileLoc.getFilename();
  unsigned lineNo = fileLoc.getLine(), col = fileLoc.getColumn();
  StringRef line;
  if (col == 0 || !getLine(filename, lineNo, line)) {
    // As SourceMgrDiagnosticHandler for a location it cannot quote.
    std::string where =
        (filename + ":" + Twine(lineNo) + ":" + Twine(col)).str();
    llvm::SMDiagnostic(where, diagnosticKind, message).print(nullptr, os);
    return;
  }
  // The location as the SourceMgr prints it, then the message and the
  // (windowed) line with its caret.
  {
    llvm::WithColor header(os, llvm::raw_ostream::SAVEDCOLOR, /*Bold=*/true);
    header << filename << ':' << lineNo << ':' << col << ": ";
  }
  size_t caret = 0;
  std::string quoted = window(line, col - 1, caret);
  llvm::SourceMgr none;
  llvm::SMDiagnostic(none, llvm::SMLoc(), filename, lineNo,
                     static_cast<int>(caret), diagnosticKind, message, quoted,
                     {})
      .print(nullptr, os, /*ShowColors=*/true, /*ShowKindLabel=*/true,
             /*ShowLocation=*/false);
}

LogicalResult LongLineDiagnostics::handle(Diagnostic &diag) {
  bool anyLong = isOnLongLine(diag.getLocation()) ||
                 llvm::any_of(diag.getNotes(), [&](Diagnostic &note) {
                   return isOnLongLine(note.getLocation());
                 });
  if (!anyLong)
    return failure();
  print(diag.getLocation(), diag.str(), diag.getSeverity());
  for (Diagnostic &note : diag.getNotes())
    print(note.getLocation(), note.str(), note.getSeverity());
  os.flush();
  return success();
}

void mlir::joint::registerLongLineDiagnostics(MLIRContext *context) {
  // The context owns the handler (and so the cached files) until it dies.
  auto state = std::make_shared<LongLineDiagnostics>();
  context->getDiagEngine().registerHandler(
      [state](Diagnostic &diag) { return state->handle(diag); });
}

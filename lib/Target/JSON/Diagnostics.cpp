//===- Diagnostics.cpp - Excerpts for JSON and long lines -----------------===//
//
// Prints diagnostics located in joint-graph JSON, or on long source lines,
// with a short excerpt instead of the source line, in
// SourceMgrDiagnosticHandler's layout: an error in a one-line graph of
// megabytes stays a few lines long, and one in an indented graph shows the
// node it is about rather than a lone `{`. A diagnostic on the graph itself
// names the graph in its one line instead of quoting the document's start.
//
//===----------------------------------------------------------------------===//

#include "joint/Target/JSON/Diagnostics.h"
#include "joint/Support/NamedDiagnostics.h"
#include "joint/Target/JSON/Import.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace mlir::joint;

llvm::SourceMgr::DiagKind joint::getDiagKind(DiagnosticSeverity kind) {
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

namespace {

/// True for a UTF-8 continuation byte (an excerpt never starts or ends in
/// the middle of a character).
bool isContinuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

bool isBlank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/// Reads one JSON object up to its depth-1 "name" string: stops there, at a
/// depth-1 "nodes" key (the graph's nodes follow), or at the object's end.
struct NameSax : nlohmann::json_sax<nlohmann::json> {
  using json = nlohmann::json;
  std::string name;
  unsigned depth = 0;
  bool nameNext = false;

  bool value() {
    nameNext = false;
    return true;
  }
  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(json::number_integer_t) override { return value(); }
  bool number_unsigned(json::number_unsigned_t) override { return value(); }
  bool number_float(json::number_float_t, const json::string_t &) override {
    return value();
  }
  bool binary(json::binary_t &) override { return value(); }
  bool string(json::string_t &s) override {
    if (depth == 1 && nameNext) {
      name = s;
      return false;
    }
    return value();
  }
  bool start_object(std::size_t) override {
    nameNext = false;
    ++depth;
    return true;
  }
  bool end_object() override { return --depth > 0; }
  bool start_array(std::size_t) override {
    nameNext = false;
    ++depth;
    return true;
  }
  bool end_array() override {
    --depth;
    return true;
  }
  bool key(json::string_t &k) override {
    if (depth == 1 && k == "nodes")
      return false;
    nameNext = depth == 1 && k == "name";
    return true;
  }
  bool parse_error(std::size_t, const std::string &,
                   const nlohmann::detail::exception &) override {
    return false;
  }
};

} // namespace

void ExcerptDiagnostics::addBuffer(StringRef filename, StringRef text) {
  Source &s = sources[filename];
  s.owned.reset();
  s.text = text;
  s.lineStarts.clear();
  s.fullyIndexed = false;
  s.valid = true;
  s.json = isJointJSON(filename, text);
}

ExcerptDiagnostics::Source *ExcerptDiagnostics::getSource(StringRef filename) {
  auto [it, inserted] = sources.try_emplace(filename);
  Source &s = it->second;
  if (inserted && filename != "-") {
    auto buf = llvm::MemoryBuffer::getFile(filename, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
    if (buf) {
      s.owned = std::move(*buf);
      s.text = s.owned->getBuffer();
      s.valid = true;
      s.json = isJointJSON(filename, s.text);
    }
  }
  return s.valid ? &s : nullptr;
}

bool ExcerptDiagnostics::getLine(Source &s, unsigned line, size_t &start,
                                 size_t &end) {
  if (line == 0)
    return false;
  // Lines are indexed only as far as asked: a remark on line 1 of a graph
  // of megabytes costs one line, not a scan of the whole text.
  if (s.lineStarts.empty())
    s.lineStarts.push_back(0);
  while (!s.fullyIndexed && s.lineStarts.size() <= line) {
    size_t newline = s.text.find('\n', s.lineStarts.back());
    if (newline == StringRef::npos) {
      s.fullyIndexed = true;
      break;
    }
    s.lineStarts.push_back(newline + 1);
  }
  if (line > s.lineStarts.size())
    return false;
  start = s.lineStarts[line - 1];
  end = line < s.lineStarts.size() ? s.lineStarts[line] - 1 : s.text.size();
  if (end > start && s.text[end - 1] == '\r')
    --end;
  return true;
}

bool ExcerptDiagnostics::isQuoted(Location loc) {
  auto fileLoc = loc->findInstanceOf<FileLineColLoc>();
  if (!fileLoc || fileLoc.getColumn() == 0)
    return false;
  Source *s = getSource(fileLoc.getFilename());
  size_t start, end;
  return s && getLine(*s, fileLoc.getLine(), start, end) &&
         (s->json || end - start > kLongLine);
}

std::string ExcerptDiagnostics::window(StringRef line, size_t column,
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

std::string ExcerptDiagnostics::jsonExcerpt(StringRef text, size_t lineStart,
                                            size_t offset, size_t &caret) {
  offset = std::min(offset, text.size());
  size_t begin = offset - lineStart > kContext ? offset - kContext : lineStart;
  while (begin > lineStart && isContinuation(text[begin]))
    --begin;
  bool cutBefore = begin > lineStart;
  if (!cutBefore) // indentation says nothing
    while (begin < offset && isBlank(text[begin]))
      ++begin;
  std::string out = cutBefore ? "..." : "";
  // Copies text[from, to) with each whitespace run as one space; stops once
  // `limit` bytes are out (at a character boundary) and returns where.
  auto copy = [&](size_t from, size_t to, size_t limit) {
    size_t written = 0, i = from;
    while (i < to && (written < limit || isContinuation(text[i]))) {
      if (isBlank(text[i])) {
        while (i < to && isBlank(text[i]))
          ++i;
        out += ' ';
      } else {
        out += text[i++];
      }
      ++written;
    }
    return i;
  };
  copy(begin, offset, kContext);
  caret = out.size();
  size_t end = copy(offset, text.size(), kContext + 1);
  // Trailing whitespace of the document is no text left out.
  if (StringRef(text).drop_front(end).ltrim().empty()) {
    StringRef kept(out);
    out.resize(std::max(caret, kept.rtrim().size()));
  } else {
    out += "...";
  }
  return out;
}

std::string ExcerptDiagnostics::objectName(StringRef text, size_t offset) {
  if (offset >= text.size() || text[offset] != '{')
    return "";
  NameSax sax;
  nlohmann::json::sax_parse(text.begin() + offset, text.end(), &sax,
                            nlohmann::json::input_format_t::json,
                            /*strict=*/false);
  return sax.name;
}

void ExcerptDiagnostics::print(Diagnostic &diag) {
  Location loc = diag.getLocation();
  std::string message = diag.str();
  llvm::SourceMgr::DiagKind diagnosticKind = getDiagKind(diag.getSeverity());
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
  Source *s = getSource(filename);
  size_t start = 0, end = 0;
  if (col == 0 || !s || !getLine(*s, lineNo, start, end)) {
    // As SourceMgrDiagnosticHandler for a location it cannot quote.
    std::string where =
        (filename + ":" + Twine(lineNo) + ":" + Twine(col)).str();
    llvm::SMDiagnostic(where, diagnosticKind, message).print(nullptr, os);
    return;
  }
  if (s->json) {
    size_t offset = std::min(start + col - 1, end);
    if (s->text.find_first_not_of(" \t\r\n") == offset) {
      // The graph itself: named in the message; its first bytes say
      // nothing, so no excerpt.
      std::string name = objectName(s->text, offset);
      std::string text = message;
      if (!name.empty() && !isNamed(diag, name))
        text += " (graph '" + name + "')";
      std::string where =
          (filename + ":" + Twine(lineNo) + ":" + Twine(col)).str();
      llvm::SMDiagnostic(where, diagnosticKind, text).print(nullptr, os);
      return;
    }
  }
  // The location as the SourceMgr prints it, then the message and the
  // excerpt with its caret.
  {
    llvm::WithColor header(os, llvm::raw_ostream::SAVEDCOLOR, /*Bold=*/true);
    header << filename << ':' << lineNo << ':' << col << ": ";
  }
  size_t caret = 0;
  std::string quoted;
  if (s->json) {
    size_t offset = std::min(start + col - 1, end);
    // The node named once: the importer and per-node checks name it in
    // their message and say so in the diagnostic's metadata (markNamed).
    std::string name = objectName(s->text, offset);
    if (!name.empty() && !isNamed(diag, name))
      quoted = "node '" + name + "': ";
    size_t prefix = quoted.size();
    quoted += jsonExcerpt(s->text, start, offset, caret);
    caret += prefix;
  } else {
    quoted = window(s->text.slice(start, end), col - 1, caret);
  }
  llvm::SourceMgr none;
  llvm::SMDiagnostic(none, llvm::SMLoc(), filename, lineNo,
                     static_cast<int>(caret), diagnosticKind, message, quoted,
                     {})
      .print(nullptr, os, /*ShowColors=*/true, /*ShowKindLabel=*/true,
             /*ShowLocation=*/false);
}

LogicalResult ExcerptDiagnostics::handle(Diagnostic &diag) {
  bool anyQuoted = isQuoted(diag.getLocation()) ||
                   llvm::any_of(diag.getNotes(), [&](Diagnostic &note) {
                     return isQuoted(note.getLocation());
                   });
  if (!anyQuoted)
    return failure();
  print(diag);
  for (Diagnostic &note : diag.getNotes())
    print(note);
  os.flush();
  return success();
}

void mlir::joint::registerExcerptDiagnostics(MLIRContext *context,
                                             StringRef filename,
                                             StringRef text) {
  // The context owns the handler (and so the cached files) until it dies.
  auto state = std::make_shared<ExcerptDiagnostics>();
  if (!filename.empty())
    state->addBuffer(filename, text);
  context->getDiagEngine().registerHandler(
      [state](Diagnostic &diag) { return state->handle(diag); });
}

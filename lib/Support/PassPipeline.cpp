//===- PassPipeline.cpp - Pass pipelines from text and flags --------------===//
//
// MLIR's parser (mlir::parsePassPipeline) adds every pass: this file only
// cuts a pipeline at its top-level commas, so that bare per-graph passes
// share one joint.graph pass manager (MLIR's parser nests explicitly only),
// and turns MLIR's refusal of a pass's options into one message that names
// the pass, the option and the options the pass takes, read from the table
// generated from the Passes.td files (PassOptions.h.inc).
//
//===----------------------------------------------------------------------===//

#include "joint/Support/PassPipeline.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::joint;

namespace {
/// A joint pass's options, from its Passes.td.
struct PassOptionNames {
  /// The pass argument, e.g. "joint-remat".
  const char *pass;
  /// The options messages list: ", "-joined, without hidden (removed) ones.
  const char *listed;
  /// Every option the pass parses, space-joined.
  const char *known;
};
} // namespace

/// joint.graph, GraphOp::getOperationName() (Support does not link the
/// dialect).
static constexpr llvm::StringLiteral kGraphOpName = "joint.graph";

static constexpr PassOptionNames kPassOptionNames[] = {
#define GEN_PASS_OPTION_TABLE
#include "joint/Support/PassOptions.h.inc"
};

static const PassRegistryEntry *lookupEntry(StringRef name) {
  // Pipelines first, as MLIR's parser looks them up.
  if (const PassRegistryEntry *entry = PassPipelineInfo::lookup(name))
    return entry;
  return PassInfo::lookup(name);
}

/// The options row of pass or pipeline `name`: a pipeline's is its first
/// pass's (a decide-then-apply pipeline takes its decider's options).
static const PassOptionNames *lookupOptionNames(StringRef name) {
  if (PassPipelineInfo::lookup(name)) {
    OpPassManager scratch(OpPassManager::Nesting::Explicit);
    auto ignore = [](const Twine &) { return failure(); };
    if (failed(lookupEntry(name)->addToPipeline(scratch, "", ignore)) ||
        scratch.getPasses().empty())
      return nullptr;
    name = scratch.getPasses().begin()->getArgument();
  }
  for (const PassOptionNames &row : kPassOptionNames)
    if (name == row.pass)
      return &row;
  return nullptr;
}

std::optional<std::string> mlir::joint::getListedOptionNames(StringRef name) {
  if (const PassOptionNames *row = lookupOptionNames(name))
    return std::string(row->listed);
  return std::nullopt;
}

/// The end of the group `text` opens at `begin` (`{`, `(` or a quote): the
/// index of its closing character, skipping nested groups; npos if none.
static size_t findGroupEnd(StringRef text, size_t begin) {
  SmallVector<char> closers;
  for (size_t i = begin; i < text.size(); ++i) {
    char c = text[i];
    if (!closers.empty() && (closers.back() == '"' || closers.back() == '\'')) {
      if (c == closers.back())
        closers.pop_back();
    } else if (c == '{' || c == '(' || c == '"' || c == '\'') {
      closers.push_back(c == '{' ? '}' : c == '(' ? ')' : c);
    } else if (c == '}' || c == ')') {
      if (closers.empty() || closers.back() != c)
        return StringRef::npos;
      closers.pop_back();
    }
    if (closers.empty())
      return i;
  }
  return StringRef::npos;
}

/// `text` cut at the separators `sep` outside groups (MLIR's `,` between
/// pipeline elements, ` ` between options), empty pieces dropped; nullopt
/// when a group does not close (MLIR's parser then says where).
static std::optional<SmallVector<StringRef>> splitTopLevel(StringRef text,
                                                           char sep) {
  SmallVector<StringRef> pieces;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != sep) {
      if (StringRef("{(\"'").contains(text[i]) &&
          (i = findGroupEnd(text, i)) == StringRef::npos)
        return std::nullopt;
      continue;
    }
    if (StringRef piece = text.slice(start, i).trim(); !piece.empty())
      pieces.push_back(piece);
    start = i + 1;
  }
  return pieces;
}

/// Writes why registered `name` refused `options`: the unknown option, or
/// the options with `reason` (MLIR's; llvm::cl prints a bad value's on its
/// own), then the options `name` takes.
static void describeOptionError(StringRef name, StringRef options,
                                StringRef reason, raw_ostream &errors) {
  const PassOptionNames *row = lookupOptionNames(name);
  std::optional<StringRef> unknown;
  if (row) {
    SmallVector<StringRef> known;
    StringRef(row->known).split(known, ' ', -1, /*KeepEmpty=*/false);
    for (StringRef option :
         splitTopLevel(options, ' ').value_or(SmallVector<StringRef>())) {
      StringRef key = option.take_until([](char c) { return c == '='; });
      if (!llvm::is_contained(known, key.trim())) {
        unknown = key.trim();
        break;
      }
    }
  }
  errors << name << ": ";
  if (unknown)
    errors << "no such option '" << *unknown << "'";
  else if (!(reason = reason.trim()).empty())
    errors << reason;
  else
    errors << "invalid options '" << options << "'";
  if (!row)
    errors << "; joint-opt --help-hidden lists its options";
  else if (StringRef(row->listed).empty())
    errors << "; it takes no options";
  else
    errors << "; valid options: " << row->listed
           << " (joint-opt --help describes them)";
}

LogicalResult mlir::joint::addRegisteredPass(OpPassManager &pm, StringRef name,
                                             StringRef options,
                                             raw_ostream &errors) {
  const PassRegistryEntry *entry = lookupEntry(name);
  if (!entry) {
    errors << "'" << name
           << "' does not refer to a registered pass or pass pipeline";
    return failure();
  }
  std::string reason;
  auto handler = [&](const Twine &message) {
    reason = message.str();
    return failure();
  };
  if (succeeded(entry->addToPipeline(pm, options, handler)))
    return success();
  describeOptionError(name, options, reason, errors);
  return failure();
}

/// Writes why MLIR's parser refused `text` (`mlirError`, its message): for
/// an element whose pass refuses its options, describeOptionError's message.
static LogicalResult explainRefusal(StringRef text, StringRef mlirError,
                                    raw_ostream &errors) {
  std::optional<SmallVector<StringRef>> elements = splitTopLevel(text, ',');
  for (StringRef element : elements.value_or(SmallVector<StringRef>())) {
    size_t open = element.find_first_of("{(");
    StringRef name = element.take_front(open).trim();
    if (open != StringRef::npos && element[open] == '(') {
      if (element.ends_with(")") &&
          failed(explainRefusal(element.slice(open + 1, element.size() - 1),
                                mlirError, errors)))
        return failure();
      continue;
    }
    StringRef options;
    if (open != StringRef::npos && element.ends_with("}"))
      options = element.slice(open + 1, element.size() - 1);
    if (!lookupEntry(name)) {
      errors << "'" << name
             << "' does not refer to a registered pass or pass pipeline";
      return failure();
    }
    OpPassManager scratch(OpPassManager::Nesting::Implicit);
    std::string ignored;
    llvm::raw_string_ostream ignore(ignored);
    if (failed(addRegisteredPass(scratch, name, options, ignore))) {
      errors << ignored;
      return failure();
    }
  }
  // MLIR's own message (unbalanced brackets, an unknown anchor, a pass
  // under the wrong anchor): its first line, which says where.
  errors << StringRef(mlirError).trim().split('\n').first;
  return failure();
}

/// Whether element `element` (a pass, a pipeline or an anchored list) adds
/// only passes that run on joint.graph.
static bool addsOnlyGraphPasses(StringRef element) {
  OpPassManager scratch(OpPassManager::Nesting::Explicit);
  std::string ignored;
  llvm::raw_string_ostream ignore(ignored);
  if (failed(parsePassPipeline(element, scratch, ignore)))
    return false;
  return llvm::all_of(scratch.getPasses(), [](Pass &pass) {
    return pass.getOpName() == kGraphOpName;
  });
}

LogicalResult mlir::joint::addPassPipeline(OpPassManager &pm,
                                           StringRef pipeline,
                                           raw_ostream &errors) {
  StringRef text = pipeline.trim();
  // The anchor `pm` already has.
  if (text.starts_with("builtin.module(") && text.ends_with(")"))
    text = text.drop_front(StringRef("builtin.module(").size()).drop_back();
  std::optional<SmallVector<StringRef>> elements = splitTopLevel(text, ',');
  std::string mlirError;
  llvm::raw_string_ostream mlirErrors(mlirError);
  if (!elements) {
    OpPassManager scratch(OpPassManager::Nesting::Explicit);
    (void)parsePassPipeline(text, scratch, mlirErrors);
    return explainRefusal(text, mlirError, errors);
  }
  // Consecutive per-graph elements share one joint.graph pass manager, as
  // `joint.graph(a,b)` would; the others go on `pm` (a pipeline nests its
  // per-graph passes itself).
  OpPassManager *graphPM = nullptr;
  for (StringRef element : *elements) {
    OpPassManager *target = &pm;
    if (pm.getOpName() != kGraphOpName && addsOnlyGraphPasses(element)) {
      if (!graphPM)
        graphPM = &pm.nest(kGraphOpName);
      target = graphPM;
    } else {
      graphPM = nullptr;
    }
    if (failed(parsePassPipeline(element, *target, mlirErrors)))
      return explainRefusal(element, mlirError, errors);
  }
  return success();
}

LogicalResult mlir::joint::verifyAnchoredPassPipeline(StringRef pipeline,
                                                      raw_ostream &errors) {
  std::string mlirError;
  llvm::raw_string_ostream mlirErrors(mlirError);
  if (succeeded(parsePassPipeline(pipeline, mlirErrors)))
    return success();
  StringRef text = pipeline.trim();
  size_t open = text.find('(');
  if (open != StringRef::npos && text.ends_with(")"))
    text = text.slice(open + 1, text.size() - 1);
  return explainRefusal(text, mlirError, errors);
}

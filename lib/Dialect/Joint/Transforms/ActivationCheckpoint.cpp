//===- ActivationCheckpoint.cpp - The tag + remat pipeline ----------------===//
//
// joint-activation-checkpoint: a registered pass pipeline, the decider
// joint-tag-recompute-policy followed by the applier joint-remat (both per
// joint.graph), with the tag pass's options (the ActivationCheckpointConfig
// vocabulary). Each pass emits its own summary remark; mode=off adds no pass,
// so the pipeline then changes nothing, not even hand-written tags. Also the
// registry helpers of the joint pipelines: registerDeciderPipeline,
// addJointPassPipeline (joint-opt's flag syntax as one string) and
// addRegisteredPass, whose option errors name the pass and its options.
//
//===----------------------------------------------------------------------===//

#include "joint/Dialect/Joint/Transforms/CpuOffload.h"
#include "joint/Dialect/Joint/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include <unistd.h>

using namespace mlir;
using namespace mlir::joint;

namespace {

/// The options of joint-tag-recompute-policy (Passes.td), repeated because a
/// pipeline's options are a C++ struct.
struct ActivationCheckpointOptions
    : PassPipelineOptions<ActivationCheckpointOptions> {
  Option<CheckpointMode> mode{
      *this, "mode",
      llvm::cl::desc("off: change nothing; full: recompute every scoped op; "
                     "selective: save the compute-intensive set, recompute "
                     "the rest"),
      llvm::cl::init(CheckpointMode::full),
      llvm::cl::values(clEnumValN(CheckpointMode::off, "off", "change nothing"),
                       clEnumValN(CheckpointMode::full, "full",
                                  "every scoped op must_recompute"),
                       clEnumValN(CheckpointMode::selective, "selective",
                                  "must_save for compute/communication ops, "
                                  "prefer_recompute otherwise"))};
  Option<int64_t> layerCount{
      *this, "layer-count",
      llvm::cl::desc("Checkpoint the first N blocks in flattened order "
                     "(default: all blocks)"),
      llvm::cl::init(-1)};
  ListOption<int64_t> layerIndices{
      *this, "layer-indices",
      llvm::cl::desc("Checkpoint these flattened block indices (0-based)")};
  ListOption<std::string> regionPatterns{
      *this, "region-patterns",
      llvm::cl::desc("Glob patterns on module FQNs: recompute only the "
                     "outermost matching modules inside the selected blocks")};
  ListOption<std::string> excludePatterns{
      *this, "exclude-patterns",
      llvm::cl::desc("Glob patterns on module FQNs whose subtrees stay saved")};
  Option<bool> saveForwardAllGather{
      *this, "save-forward-all-gather",
      llvm::cl::desc("Save forward all-gathers instead of replaying them"),
      llvm::cl::init(false)};
};

/// Adds the tag pass, then remat, both on joint.graph: nested under `pm`
/// unless `pm` already runs on graphs (or on any op), so the pipeline works
/// in explicit-nesting pass managers too.
void buildActivationCheckpointPipeline(
    OpPassManager &pm, const ActivationCheckpointOptions &options,
    std::unique_ptr<Pass> tag) {
  if (options.mode == CheckpointMode::off)
    return;
  OpPassManager &graphPM = nestOnGraphs(pm);
  graphPM.addPass(std::move(tag));
  graphPM.addPass(createJointRemat());
}

} // namespace

OpPassManager &mlir::joint::nestOnGraphs(OpPassManager &pm) {
  std::optional<StringRef> anchor = pm.getOpName();
  return !anchor || *anchor == GraphOp::getOperationName() ? pm
                                                           : pm.nest<GraphOp>();
}

void mlir::joint::registerDeciderPipeline(
    StringRef argument, StringRef description,
    std::unique_ptr<Pass> (*createDecider)(), DeciderPipelineBuilder build,
    PipelineOptionsPrinter printOptions) {
  if (!printOptions) // --help lists the options under the decider
    printOptions = [](function_ref<void(const mlir::detail::PassOptions &)>) {};
  registerPassPipeline(
      argument, description,
      [createDecider,
       build](OpPassManager &pm, StringRef optionString,
              function_ref<LogicalResult(const Twine &)> errorHandler)
          -> LogicalResult {
        std::unique_ptr<Pass> decider = createDecider();
        if (failed(decider->initializeOptions(optionString, errorHandler)))
          return failure();
        return build(pm, optionString, std::move(decider));
      },
      printOptions);
}

void mlir::joint::registerDeciderPipeline(
    StringRef argument, StringRef description,
    std::unique_ptr<Pass> (*createDecider)(),
    ArrayRef<std::unique_ptr<Pass> (*)()> appliers) {
  std::vector<std::unique_ptr<Pass> (*)()> list(appliers.begin(),
                                                appliers.end());
  registerDeciderPipeline(
      argument, description, createDecider,
      [list](OpPassManager &pm, StringRef,
             std::unique_ptr<Pass> decider) -> LogicalResult {
        bool onGraphs = decider->getOpName() == GraphOp::getOperationName();
        if (!onGraphs) // before the nested graph pass manager
          pm.addPass(std::move(decider));
        OpPassManager &graphPM = nestOnGraphs(pm);
        if (onGraphs)
          graphPM.addPass(std::move(decider));
        for (auto create : list)
          graphPM.addPass(create());
        return success();
      });
}

void mlir::joint::registerJointPipelines() {
  registerDeciderPipeline(
      "joint-activation-checkpoint",
      "Activation checkpointing: joint-tag-recompute-policy (decide), then "
      "joint-remat (apply), with the tag pass's options",
      createJointTagRecomputePolicy,
      [](OpPassManager &pm, StringRef optionString,
         std::unique_ptr<Pass> tag) -> LogicalResult {
        ActivationCheckpointOptions options; // for `mode=off`
        if (failed(options.parseFromString(optionString)))
          return failure();
        buildActivationCheckpointPipeline(pm, options, std::move(tag));
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> print) {
        print(ActivationCheckpointOptions());
      });
  registerCpuOffloadPipeline();
  registerOptimizeMemoryPipeline();
}

LogicalResult mlir::joint::addJointPassPipeline(StringRef pipeline,
                                                OpPassManager &pm,
                                                raw_ostream &errors) {
  StringRef text = pipeline.trim();
  if (text.consume_front("builtin.module(") && !text.consume_back(")")) {
    errors << "missing ')' after builtin.module(";
    return failure();
  }
  // Split at top-level commas.
  SmallVector<StringRef> elements;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0, e = text.size(); i <= e; ++i) {
    char c = i < e ? text[i] : ',';
    if (c == '{' || c == '(')
      ++depth;
    else if (c == '}' || c == ')')
      --depth;
    if (depth < 0) {
      errors << "unbalanced '" << c << "' in '" << text << "'";
      return failure();
    }
    if (c == ',' && depth == 0) {
      if (StringRef element = text.slice(start, i).trim(); !element.empty())
        elements.push_back(element);
      start = i + 1;
    }
  }
  if (depth != 0) {
    errors << "unbalanced brackets in '" << text << "'";
    return failure();
  }
  for (StringRef element : elements) {
    size_t cut = element.find_first_of("{(");
    StringRef name = element.take_front(cut).trim();
    if (cut != StringRef::npos && element[cut] == '(') {
      // Anchored: MLIR's parser nests it explicitly.
      if (failed(parsePassPipeline(element, pm, errors)))
        return failure();
      continue;
    }
    StringRef options;
    if (cut != StringRef::npos) {
      if (!element.ends_with("}")) {
        errors << "options of '" << name << "' must end with '}'";
        return failure();
      }
      options = element.drop_front(cut + 1).drop_back();
    }
    // The registry's builders add to `pm`, whose implicit nesting puts
    // per-graph passes under joint.graph.
    if (failed(addRegisteredPass(pm, name, options, errors)))
      return failure();
  }
  return success();
}

/// The registry entry of pass or pipeline `name` (pipelines first, as
/// MLIR's parser looks them up), or null.
static const PassRegistryEntry *lookupPassOrPipeline(StringRef name) {
  if (const PassRegistryEntry *entry = PassPipelineInfo::lookup(name))
    return entry;
  return PassInfo::lookup(name);
}

/// What `print` writes to llvm::outs(), the only stream MLIR prints a pass's
/// option help to (PassRegistryEntry::printHelpStr); nullopt if stdout
/// cannot be redirected. stdout goes to a temporary file meanwhile.
static std::optional<std::string> captureOuts(function_ref<void()> print) {
  int fd;
  SmallString<128> path;
  if (llvm::sys::fs::createTemporaryFile("joint-pass-help", "txt", fd, path))
    return std::nullopt;
  llvm::FileRemover remover(path);
  llvm::outs().flush();
  int saved = ::dup(STDOUT_FILENO);
  if (saved < 0 || ::dup2(fd, STDOUT_FILENO) < 0) {
    ::close(fd);
    if (saved >= 0)
      ::close(saved);
    return std::nullopt;
  }
  print();
  llvm::outs().flush();
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  ::close(fd);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text =
      llvm::MemoryBuffer::getFile(path);
  if (!text)
    return std::nullopt;
  return (*text)->getBuffer().str();
}

/// The option names of `entry` ("budget-gib, min-bytes"), "" when it has
/// none, nullopt when its help cannot be captured: the `--name` lines of its
/// --help entry after its own line (the printed pipeline form would drop
/// list options left at their default).
static std::optional<std::string> optionNames(const PassRegistryEntry &entry) {
  // Descriptions start past the widest option, as in --help.
  size_t width =
      std::max(entry.getOptionWidth() + 4, entry.getPassArgument().size() + 8);
  std::optional<std::string> help =
      captureOuts([&] { entry.printHelpStr(/*indent=*/0, width); });
  if (!help)
    return std::nullopt;
  SmallVector<StringRef> lines, names;
  StringRef(*help).split(lines, '\n');
  for (StringRef line : llvm::drop_begin(lines)) {
    line = line.trim();
    if (line.consume_front("--"))
      names.push_back(line.take_until(
          [](char c) { return c == '=' || c == '[' || c == ' '; }));
  }
  return llvm::join(names, ", ");
}

LogicalResult mlir::joint::addRegisteredPass(OpPassManager &pm, StringRef name,
                                             StringRef options,
                                             raw_ostream &errors) {
  const PassRegistryEntry *entry = lookupPassOrPipeline(name);
  if (!entry) {
    errors << "'" << name
           << "' does not refer to a registered pass or pass pipeline";
    return failure();
  }
  std::string why;
  auto handler = [&](const Twine &message) {
    why = message.str();
    return failure();
  };
  if (succeeded(entry->addToPipeline(pm, options, handler)))
    return success();
  // MLIR's option parser names neither the pass nor the options it knows.
  StringRef reason = StringRef(why).trim();
  if (reason.consume_front("<Pass-Options-Parser>: no such option "))
    errors << name << ": no such option '" << reason << "'";
  else if (!reason.empty())
    errors << name << ": " << reason;
  else // llvm::cl has printed why (a value it cannot parse)
    errors << name << ": invalid options '" << options << "'";
  std::optional<std::string> valid = optionNames(*entry);
  OpPassManager scratch(OpPassManager::Nesting::Implicit);
  auto ignore = [](const Twine &) { return failure(); };
  // A decider pipeline lists its options under its first pass, the decider.
  if (valid && valid->empty() && !PassInfo::lookup(name) &&
      succeeded(entry->addToPipeline(scratch, "", ignore)) &&
      !scratch.getPasses().empty())
    if (const PassInfo *first =
            PassInfo::lookup(scratch.getPasses().begin()->getArgument()))
      valid = optionNames(*first);
  if (!valid)
    errors << "; joint-opt --help lists its options";
  else if (valid->empty())
    errors << "; it takes no options";
  else
    errors << "; valid options: " << *valid
           << " (joint-opt --help describes them)";
  return failure();
}

//===- Core.cpp - joint_mlir._core: pass pipelines in process -------------===//
//
// The nanobind module behind joint_mlir.run_pipeline. One call imports a
// format v1 document with the C++ importer, runs a textual pass pipeline (the
// --pass-pipeline syntax joint-opt accepts, with or without the
// builtin.module(...) anchor), exports the result with the C++ exporter and
// optionally writes the joint-memory-report as JSON: all in memory, no
// subprocess, with the GIL released. The only files are those the pipeline's
// passes write (joint-memory-report's output=), renamed into place only when
// the whole call succeeds. The input is read in place
// from the Python bytes or str, and the document comes back as one str.
// Diagnostics are collected by a handler; on failure they are raised as
// joint_mlir.PipelineError.
//
//===----------------------------------------------------------------------===//

#include "joint/Compile/Compile.h"
#include "joint/Compile/StepCache.h"
#include "joint/InitAll.h"
#include "joint/Support/OutputFiles.h"
#include "joint/Support/PassPipeline.h"
#include "joint/Target/JSON/Diagnostics.h"
#include "joint/Target/JSON/Export.h"
#include "joint/Target/JSON/Import.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <optional>

namespace nb = nanobind;
using namespace mlir;

namespace {

/// One diagnostic, rendered as "<file>:<line>:<col>: <severity>: <message>"
/// with its notes on following lines, and the FX node its location names.
struct RenderedDiagnostic {
  DiagnosticSeverity severity;
  std::string text;
  std::optional<std::string> node;
};

/// What one run produced: the exported document and the JSON report on
/// success, the diagnostics in either case.
struct Outcome {
  bool ok = false;
  std::string document;
  std::optional<std::string> report;
  std::vector<RenderedDiagnostic> diagnostics;
};

/// The dialects and passes joint-opt registers, set up once per process.
const DialectRegistry &registry() {
  static const DialectRegistry *instance = [] {
    auto *r = new DialectRegistry();
    joint::registerAllDialects(*r);
    joint::registerAllPasses();
    return r;
  }();
  return *instance;
}

/// The JSON location (file:line:col) of `loc`, or null.
FileLineColLoc jsonLocation(Location loc) {
  return loc->findInstanceOf<FileLineColLoc>();
}

/// `<file>:<line>:<col>: <severity>: <message>` (the location only when it
/// is a JSON one), labelled as LLVM's SourceMgr labels a diagnostic.
std::string render(Location loc, DiagnosticSeverity severity,
                   StringRef message) {
  std::string where;
  if (FileLineColLoc flc = jsonLocation(loc))
    where = (flc.getFilename().getValue() + ":" + Twine(flc.getLine()) + ":" +
             Twine(flc.getColumn()))
                .str();
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::SMDiagnostic(where, joint::getDiagKind(severity), message)
      .print(/*ProgName=*/nullptr, os, /*ShowColors=*/false);
  return StringRef(out).drop_back().str(); // without the final newline
}

/// Imports, runs `pipeline`, exports. Needs no Python object and no GIL.
/// `inputPath` (may be empty) is the file the document was read from: no
/// pass may write it.
Outcome runPipeline(StringRef document, const std::string &pipeline,
                    const std::string &filename, bool report,
                    const std::string &label, const std::string &inputPath) {
  Outcome out;
  MLIRContext context(registry());
  // Destroyed before `context`: files of a failed call are removed.
  joint::DeferredOutputFiles passOutputs;
  passOutputs.attach(&context);
  passOutputs.protect(inputPath, "the input file");
  // A failing op would otherwise attach itself, printed, to its diagnostic:
  // for a graph op that is the whole (200k-op) graph.
  context.printOpOnDiagnostic(false);
  // FX node name by JSON location, filled after the import: passes keep
  // (or clone) the locations of the ops they rewrite.
  llvm::DenseMap<const void *, std::string> nodeAt;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    RenderedDiagnostic d{
        diag.getSeverity(),
        render(diag.getLocation(), diag.getSeverity(), diag.str()),
        std::nullopt};
    for (Diagnostic &note : diag.getNotes())
      d.text +=
          "\n" + render(note.getLocation(), note.getSeverity(), note.str());
    if (FileLineColLoc flc = jsonLocation(diag.getLocation())) {
      auto it = nodeAt.find(flc.getAsOpaquePointer());
      if (it != nodeAt.end())
        d.node = it->second;
    }
    out.diagnostics.push_back(std::move(d));
    return success();
  });

  // Per-graph passes given without an anchor ("joint-remat") run on each
  // joint.graph of the module (PassPipeline.h).
  PassManager pm(&context, ModuleOp::getOperationName());
  std::string pipelineError;
  llvm::raw_string_ostream es(pipelineError);
  if (failed(joint::addPassPipeline(pm, pipeline, es))) {
    emitError(UnknownLoc::get(&context))
        << "invalid pass pipeline '" << pipeline << "': " << pipelineError;
    return out;
  }

  OwningOpRef<ModuleOp> module =
      joint::importJointGraph(document, &context, filename);
  if (!module)
    return out;
  module->walk([&](joint::CallFunctionOp op) {
    if (FileLineColLoc flc = jsonLocation(op->getLoc()))
      nodeAt.try_emplace(flc.getAsOpaquePointer(), op.getName().str());
  });
  if (failed(pm.run(*module)))
    return out;

  llvm::raw_string_ostream docStream(out.document);
  if (failed(joint::exportJointGraph(*module, docStream)))
    return out;
  if (report) {
    joint::JointMemoryReportOptions options;
    options.format = joint::ReportFormat::json;
    options.label = label;
    std::string json;
    llvm::raw_string_ostream reportStream(json);
    if (failed(joint::writeMemoryReport(*module, options, reportStream)))
      return out;
    out.report = std::move(json);
  }
  std::string error;
  if (failed(passOutputs.commit(error))) {
    emitError(UnknownLoc::get(&context)) << error;
    return out;
  }
  out.ok = true;
  return out;
}

/// Raises joint_mlir.PipelineError(message, node, diagnostics).
[[noreturn]] void raisePipelineError(const Outcome &out) {
  std::vector<std::string> texts;
  std::optional<std::string> node;
  std::string message;
  for (const RenderedDiagnostic &d : out.diagnostics) {
    texts.push_back(d.text);
    if (d.severity != DiagnosticSeverity::Error)
      continue;
    if (!message.empty())
      message += "\n";
    message += d.text;
    if (!node)
      node = d.node;
  }
  if (message.empty())
    message = "pass pipeline failed without an error diagnostic";
  nb::object type =
      nb::module_::import_("joint_mlir.pipeline").attr("PipelineError");
  nb::object error = type(message, node, texts);
  PyErr_SetObject(type.ptr(), error.ptr());
  throw nb::python_error();
}

/// The bytes of `document` (bytes, or str as UTF-8), borrowed without a
/// copy: both types are immutable and the caller holds a reference for the
/// whole call, also while the GIL is released.
StringRef documentBytes(nb::handle document) {
  if (nb::isinstance<nb::bytes>(document)) {
    auto b = nb::borrow<nb::bytes>(document);
    return StringRef(b.c_str(), b.size());
  }
  if (nb::isinstance<nb::str>(document)) {
    // The str's own UTF-8 form (its data for ASCII text, else cached on it).
    Py_ssize_t size = 0;
    const char *data = PyUnicode_AsUTF8AndSize(document.ptr(), &size);
    if (!data) // lone surrogates: not encodable as UTF-8
      throw nb::python_error();
    return StringRef(data, size);
  }
  throw nb::type_error("document must be str (JSON text) or bytes (JSON "
                       "or gzip-compressed JSON)");
}

nb::tuple runPipelineBinding(nb::object document, const std::string &pipeline,
                             const std::string &filename, bool report,
                             const std::string &label,
                             const std::string &inputPath) {
  StringRef bytes = documentBytes(document);
  Outcome out;
  {
    nb::gil_scoped_release release;
    out = runPipeline(bytes, pipeline, filename, report, label, inputPath);
  }
  if (!out.ok)
    raisePipelineError(out);
  std::vector<std::string> remarks;
  for (const RenderedDiagnostic &d : out.diagnostics)
    remarks.push_back(d.text);
  nb::object reportText = nb::none();
  if (out.report)
    reportText = nb::str(out.report->data(), out.report->size());
  return nb::make_tuple(nb::str(out.document.data(), out.document.size()),
                        reportText, remarks);
}

} // namespace

/// joint::getStepCacheKey for `data` compiled with the given joint-compile
/// options by the joint-compile binary `compiler`.
static std::string stepCacheKeyBinding(nb::bytes data,
                                       const std::string &pipeline,
                                       const std::string &loweringOptions,
                                       const std::string &target,
                                       unsigned optLevel,
                                       const std::string &compiler) {
  joint::CompileOptions options;
  options.pipeline = pipeline;
  options.loweringOptions = loweringOptions;
  options.target = target;
  options.optLevel = optLevel;
  return joint::getStepCacheKey(StringRef(data.c_str(), data.size()), options,
                                compiler);
}

NB_MODULE(_core, m) {
  m.doc() = "joint-mlir pass pipelines in process (see joint_mlir.pipeline) "
            "and the step cache's key";
  m.def("step_cache_key", &stepCacheKeyBinding, nb::arg("data"),
        nb::arg("pipeline"), nb::arg("lowering_options"), nb::arg("target"),
        nb::arg("opt_level"), nb::arg("compiler"),
        "The step cache's key (32 hex digits) under which joint-compile "
        "(the binary at compiler) stores the library of graph bytes data "
        "compiled with --pipeline, --lowering-options, --target and "
        "-O<opt_level> (include/joint/Compile/StepCache.h).");
  m.def("run_pipeline", &runPipelineBinding, nb::arg("document"),
        nb::arg("pipeline"), nb::arg("filename") = "<document>",
        nb::arg("report") = true, nb::arg("label") = "",
        nb::arg("input_path") = "",
        "Imports a format v1 document (str, or bytes: JSON or gzip), runs "
        "the textual pass pipeline (joint-opt's --pass-pipeline syntax, "
        "e.g. 'joint-tag-recompute-policy{mode=full},joint-remat'; empty runs "
        "nothing) and exports it. No pass may write input_path (the file the "
        "document was read from). Returns (document JSON text, memory report "
        "JSON text or None, remarks and warnings as strings). Raises "
        "joint_mlir.PipelineError carrying the diagnostics on any error. The "
        "GIL is released while the passes run.");
}

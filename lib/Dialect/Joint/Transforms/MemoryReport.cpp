//===- MemoryReport.cpp - Memory and cost report of a joint graph ---------===//
//
// joint-memory-report: queries the MemoryModel and CostModel analyses and
// writes one table (text) or one JSON document (same numbers plus the per-op
// timeline) for the module's joint.graph, to stderr by default (stdout stays
// the IR's, as for upstream's -print-op-stats and --mlir-timing) or to a file
// that appears only when the driver's whole run succeeds (OutputFiles.h). It
// changes nothing; warnings name the nodes whose facts make a number
// unreliable.
//
//===----------------------------------------------------------------------===//

#include "FlopRules.h"
#include "joint/Analysis/CostModel.h"
#include "joint/Analysis/MemoryModel.h"
#include "joint/Dialect/Joint/Transforms/Passes.h"
#include "joint/Support/NamedDiagnostics.h"
#include "joint/Support/OutputFiles.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include <cmath>

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTMEMORYREPORT
#include "joint/Dialect/Joint/Transforms/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

namespace {

/// The FX node name of an op; ao ops as `ao.offload(<source node>)`.
std::string nodeName(Operation *op) {
  if (auto aten = dyn_cast<CallFunctionOp>(op))
    return aten.getName().str();
  std::string name = op->getName().getStringRef().str();
  if (op->getNumOperands())
    if (auto src = op->getOperand(0).getDefiningOp()) {
      // Walk back through the ao chain to the aten node that made the value.
      while (src && !isa<CallFunctionOp>(src) && src->getNumOperands())
        src = src->getOperand(0).getDefiningOp();
      if (auto aten = dyn_cast_or_null<CallFunctionOp>(src))
        name += "(" + aten.getName().str() + ")";
    }
  return name;
}

/// `count` in the largest of `units` (each `step` times the previous) that
/// keeps |value| >= 1, with two decimals; in units[0], the integer itself.
template <typename IntT>
std::string formatScaled(IntT count, ArrayRef<const char *> units,
                         double step) {
  double v = double(count);
  unsigned u = 0;
  while (std::fabs(v) >= step && u + 1 < units.size()) {
    v /= step;
    ++u;
  }
  if (u == 0)
    return std::to_string(count) + " " + units[0];
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%.2f %s", v, units[u]);
  return s;
}

/// Writes `fields` (key, value) in order as attributes of `j`'s open object.
void writeFields(
    llvm::json::OStream &j,
    std::initializer_list<std::pair<StringRef, llvm::json::Value>> fields) {
  for (const auto &[key, value] : fields)
    j.attribute(key, value);
}

/// 1536 -> "1.50 KiB"; below 1 KiB, "N B".
std::string formatBytes(int64_t bytes) {
  return formatScaled(bytes, {"B", "KiB", "MiB", "GiB", "TiB", "PiB"}, 1024);
}

/// 2.5e9 -> "2.50 GFLOP".
std::string formatFlops(uint64_t flops) {
  return formatScaled(
      flops, {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP", "EFLOP"},
      1000);
}

/// Seconds as "12.3 us" / "4.56 ms" / "1.23 s".
std::string formatSeconds(double s) {
  std::string out;
  llvm::raw_string_ostream os(out);
  if (s == 0)
    os << "0 s";
  else if (s < 1e-3)
    os << llvm::format("%.1f us", s * 1e6);
  else if (s < 1)
    os << llvm::format("%.2f ms", s * 1e3);
  else
    os << llvm::format("%.2f s", s);
  return out;
}

/// The report's options and writers, shared by the pass and
/// writeMemoryReport (the in-process entry point of the Python bindings).
struct ReportWriter {
  ReportFormat format;
  std::string label;
  double peakTflops, hbmGbps, linkGbps, collectiveGbps;

  /// Validates the options: an error without location (about the command
  /// line, printed as the driver's own error) naming the pass and option.
  LogicalResult checkOptions(MLIRContext *context);
  /// Validates `graphs`, the joint.graphs of one module: the report is one
  /// document about exactly one graph. Emits an error at `loc` and returns
  /// null on a bad count, else returns the graph.
  GraphOp checkGraphs(ArrayRef<GraphOp> graphs, Location loc);
  /// Warns about unreliable facts, then writes the report in `format`.
  /// Returns the number of ops whose FLOPs are unknown (a pass statistic).
  size_t write(raw_ostream &os, GraphOp graph, const MemoryModel &mem,
               const StorageAliasAnalysis &aliases);

private:
  void warnAboutFacts(GraphOp graph, const MemoryModel &mem,
                      const CostModel &cost,
                      ArrayRef<CallFunctionOp> withoutRule);
  /// Remarks on decisions the graph carries that no applier has applied.
  void remarkUnapplied(GraphOp graph, const StorageAliasAnalysis &aliases);
  void writeText(raw_ostream &os, GraphOp graph, const MemoryModel &mem,
                 const CostModel &cost, const HardwareModel &hw);
  void writeJSON(raw_ostream &os, GraphOp graph, const MemoryModel &mem,
                 const CostModel &cost, const HardwareModel &hw,
                 ArrayRef<CallFunctionOp> withoutRule);
  /// Recompute FLOPs per block (index into MemoryModel::getBlocks()).
  SmallVector<uint64_t> blockRecompute(const MemoryModel &mem,
                                       const CostModel &cost);
};

struct MemoryReport : joint::impl::JointMemoryReportBase<MemoryReport> {
  using Base::Base;

  /// Option errors once per run, before any graph.
  LogicalResult initialize(MLIRContext *context) override {
    return ReportWriter{format,  label,    peakTflops,
                        hbmGbps, linkGbps, collectiveGbps}
        .checkOptions(context);
  }
  void runOnOperation() override;
};

LogicalResult ReportWriter::checkOptions(MLIRContext *context) {
  for (auto [name, value] :
       {std::pair<StringRef, double>{"peak-tflops", peakTflops},
        {"hbm-gbps", hbmGbps},
        {"link-gbps", linkGbps},
        {"collective-gbps", collectiveGbps}})
    if (!(value > 0) || !std::isfinite(value))
      return emitError(UnknownLoc::get(context))
             << "joint-memory-report: " << name
             << " must be a positive number, got " << formatOptionValue(value);
  return success();
}

void ReportWriter::warnAboutFacts(GraphOp graph, const MemoryModel &mem,
                                  const CostModel &cost,
                                  ArrayRef<CallFunctionOp> withoutRule) {
  if (ArrayRef<const Storage *> unknown = mem.getUnknownSizeStorages();
      !unknown.empty()) {
    Value owner = unknown.front()->owner;
    InFlightDiagnostic d = emitWarning(owner.getLoc());
    d << "joint-memory-report: " << unknown.size()
      << " storage(s) have a size without trace-time hint or recorded "
         "bound and count as 0 bytes";
    if (Operation *def = owner.getDefiningOp())
      markNamed(d, nodeName(def)) << " (first: '" << nodeName(def) << "')";
  }
  if (ArrayRef<Operation *> unknown = cost.getUnknownFlopOps();
      !unknown.empty())
    markNamed(emitWarning(unknown.front()->getLoc()), nodeName(unknown.front()))
        << "joint-memory-report: FLOPs of " << unknown.size()
        << " op(s) count as 0: a shape has no trace-time hint (first: '"
        << nodeName(unknown.front()) << "')";
  warnOpsWithoutFlopRule(withoutRule, "joint-memory-report");
  for (auto [offload, reader] : mem.getIneffectiveOffloads())
    emitWarning(offload->getLoc())
        << "joint-memory-report: " << nodeName(offload)
        << " frees no device memory: '" << nodeName(reader)
        << "' reads the offloaded storage after its forward ao.wait_tensor";
}

/// The report measures the graph as it is. A decision pass (the recompute
/// tagger, joint-tag-cpu-offload, joint-plan-memory) only writes `policy`;
/// until joint-remat / joint-apply-cpu-offload apply it, the peak is the
/// undecided graph's. Unapplied: a forward op tagged must_recompute or
/// prefer_recompute that a backward op still reads (remat redirects every
/// such reader), or one tagged must_cpu_offload none of whose result
/// storages has an ao.offload (the applier's own "applied before" test).
void ReportWriter::remarkUnapplied(GraphOp graph,
                                   const StorageAliasAnalysis &aliases) {
  unsigned numRecompute = 0, numOffload = 0;
  CallFunctionOp firstRecompute, firstOffload;
  auto offloaded = [&](Value r) {
    const Storage *s = aliases.lookup(r);
    return s && llvm::any_of(s->members, [](Value m) {
             return llvm::any_of(m.getUsers(), llvm::IsaPred<ao::OffloadOp>);
           });
  };
  for (CallFunctionOp op : graph.getBody().front().getOps<CallFunctionOp>()) {
    std::optional<CheckpointPolicy> policy = op.getPolicy();
    if (!policy || !op.isForward())
      continue;
    if (*policy == CheckpointPolicy::must_recompute ||
        *policy == CheckpointPolicy::prefer_recompute) {
      bool read = llvm::any_of(op->getUsers(), [](Operation *user) {
        auto u = dyn_cast<CallFunctionOp>(user);
        return u && u.isBackward();
      });
      if (read && !numRecompute++)
        firstRecompute = op;
    } else if (*policy == CheckpointPolicy::must_cpu_offload &&
               op->getNumResults() &&
               llvm::none_of(op->getResults(), offloaded)) {
      if (!numOffload++)
        firstOffload = op;
    }
  }
  if (!numRecompute && !numOffload)
    return;
  InFlightDiagnostic r = emitRemark(graph.getLoc());
  r << "joint-memory-report: the graph carries decisions no applier has "
       "applied, so the numbers are those of the graph without them:";
  if (numRecompute)
    r << " " << numRecompute
      << " op(s) tagged for recompute are still read by the backward (first: '"
      << firstRecompute.getName() << "'; run joint-remat)";
  if (numRecompute && numOffload)
    r << ";";
  if (numOffload)
    r << " " << numOffload
      << " op(s) tagged must_cpu_offload have no ao.offload (first: '"
      << firstOffload.getName() << "'; run joint-apply-cpu-offload)";
  if (auto plan = graph->getAttrOfType<DictionaryAttr>("joint.plan"))
    if (auto peak = plan.getAs<IntegerAttr>("peak_bytes"))
      r << "; joint.plan models a peak of " << formatBytes(peak.getInt())
        << " once applied";
}

SmallVector<uint64_t> ReportWriter::blockRecompute(const MemoryModel &mem,
                                                   const CostModel &cost) {
  SmallVector<uint64_t> perBlock(mem.getBlocks().size(), 0);
  for (Operation *op : mem.getOps()) {
    auto aten = dyn_cast<CallFunctionOp>(op);
    if (!aten || !aten.getRecomputedFrom())
      continue;
    if (std::optional<unsigned> b = mem.getBlockOf(op))
      perBlock[*b] += cost.getFlops(op);
  }
  return perBlock;
}

/// "forward" / "backward" for op index `i`.
StringRef phaseAt(const MemoryModel &mem, unsigned i) {
  std::optional<unsigned> b = mem.getBoundaryIndex();
  return b && i >= *b ? "backward" : "forward";
}

double percent(uint64_t part, uint64_t whole) {
  return whole ? 100.0 * double(part) / double(whole) : 0.0;
}

void ReportWriter::writeText(raw_ostream &os, GraphOp graph,
                             const MemoryModel &mem, const CostModel &cost,
                             const HardwareModel &hw) {
  auto exact = [](int64_t bytes) {
    return formatBytes(bytes) + " (" + std::to_string(bytes) + " B)";
  };
  os << "== joint-memory-report @" << graph.getSymName();
  if (!label.empty())
    os << " [" << label << "]";
  os << "\n";
  unsigned n = mem.getOps().size();
  std::optional<unsigned> boundary = mem.getBoundaryIndex();
  os << llvm::format("%-14s", "ops") << n;
  if (boundary)
    os << " (" << *boundary << " forward, " << n - *boundary
       << " backward); backward starts at op " << *boundary << " '"
       << nodeName(mem.getOps()[*boundary]) << "'";
  os << "\n";
  os << llvm::format("%-14s", "peak device") << exact(mem.getPeakBytes());
  if (Operation *peak = mem.getPeakOp())
    os << " at op " << mem.getPeakIndex() << " '" << nodeName(peak) << "' ("
       << phaseAt(mem, mem.getPeakIndex()) << ")";
  os << "\n";
  os << llvm::format("%-14s", "  resident") << exact(mem.getResidentBytes())
     << ": params " << formatBytes(mem.getParamBytes()) << ", buffers "
     << formatBytes(mem.getBufferBytes()) << ", inputs "
     << formatBytes(mem.getInputBytes()) << "\n";
  os << llvm::format("%-14s", "  transient")
     << exact(mem.getPeakTransientBytes()) << "\n";
  os << llvm::format("%-14s", "activations") << exact(mem.getActivationBytes())
     << " live across forward/backward\n";
  os << llvm::format("%-14s", "host (ao)") << "peak "
     << exact(mem.getPeakHostBytes()) << ", offloaded "
     << formatBytes(mem.getOffloadedBytes()) << "\n";
  os << llvm::format("%-14s", "compute") << formatFlops(cost.getTotalFlops())
     << ", " << formatSeconds(cost.getComputeSeconds()) << " (roofline "
     << llvm::format("%g", hw.flopsPerSecond / 1e12) << " TFLOP/s, "
     << llvm::format("%g", hw.hbmBytesPerSecond / 1e9) << " GB/s)\n";
  os << llvm::format("%-14s", "recompute")
     << formatFlops(cost.getRecomputeFlops())
     << llvm::format(" (%.2f%% of step FLOPs), ",
                     percent(cost.getRecomputeFlops(), cost.getTotalFlops()))
     << formatSeconds(cost.getRecomputeSeconds()) << "\n";
  os << llvm::format("%-14s", "transfers") << "offload "
     << formatBytes(cost.getOffloadBytes()) << ", reload "
     << formatBytes(cost.getReloadBytes()) << ": "
     << formatSeconds(cost.getTransferSeconds()) << " at "
     << llvm::format("%g", hw.linkBytesPerSecond / 1e9) << " GB/s, "
     << formatSeconds(cost.getExposedSeconds()) << " exposed\n";
  os << llvm::format("%-14s", "step estimate")
     << formatSeconds(cost.getStepSeconds()) << "\n";
  ArrayRef<BlockMemory> blocks = mem.getBlocks();
  if (blocks.empty())
    return;
  SmallVector<uint64_t> recompute = blockRecompute(mem, cost);
  size_t width = 5;
  for (const BlockMemory &b : blocks)
    width = std::max(width, b.fqn.size());
  os << llvm::format("%-*s  %-22s  %-12s  %s\n", int(width), "block",
                     "activations", "offloaded", "recompute");
  for (auto [b, flops] : llvm::zip_equal(blocks, recompute))
    os << llvm::format("%-*s  %-22s  %-12s  %s\n", int(width), b.fqn.c_str(),
                       exact(b.activationBytes).c_str(),
                       formatBytes(b.offloadedBytes).c_str(),
                       formatFlops(flops).c_str());
}

void ReportWriter::writeJSON(raw_ostream &os, GraphOp graph,
                             const MemoryModel &mem, const CostModel &cost,
                             const HardwareModel &hw,
                             ArrayRef<CallFunctionOp> withoutRule) {
  llvm::json::OStream j(os, /*IndentSize=*/1);
  ArrayRef<Operation *> ops = mem.getOps();
  std::optional<unsigned> boundary = mem.getBoundaryIndex();
  j.object([&] {
    j.attribute("format", "joint-memory-report");
    j.attribute("version", 1);
    j.attribute("graph", graph.getSymName());
    j.attribute("label", label);
    j.attribute("ops", int64_t(ops.size()));
    j.attribute("boundary_index",
                boundary ? llvm::json::Value(int64_t(*boundary)) : nullptr);
    j.attribute("peak_bytes", mem.getPeakBytes());
    j.attribute("peak_index", int64_t(mem.getPeakIndex()));
    j.attribute("peak_op", ops.empty() ? "" : nodeName(mem.getPeakOp()));
    j.attribute("peak_phase", phaseAt(mem, mem.getPeakIndex()));
    j.attribute("peak_transient_bytes", mem.getPeakTransientBytes());
    j.attributeObject("resident_bytes", [&] {
      writeFields(j, {{"total", mem.getResidentBytes()},
                      {"param", mem.getParamBytes()},
                      {"buffer", mem.getBufferBytes()},
                      {"input", mem.getInputBytes()}});
    });
    writeFields(j, {{"activation_bytes", mem.getActivationBytes()},
                    {"peak_host_bytes", mem.getPeakHostBytes()},
                    {"offloaded_bytes", mem.getOffloadedBytes()}});
    j.attributeObject("cost", [&] {
      writeFields(j, {{"flops", cost.getTotalFlops()},
                      {"recompute_flops", cost.getRecomputeFlops()},
                      {"recompute_percent",
                       percent(cost.getRecomputeFlops(), cost.getTotalFlops())},
                      {"compute_seconds", cost.getComputeSeconds()},
                      {"recompute_seconds", cost.getRecomputeSeconds()},
                      {"offload_bytes", cost.getOffloadBytes()},
                      {"reload_bytes", cost.getReloadBytes()},
                      {"transfer_seconds", cost.getTransferSeconds()},
                      {"exposed_transfer_seconds", cost.getExposedSeconds()},
                      {"step_seconds", cost.getStepSeconds()}});
      // Nodes priced one FLOP per element for want of a rule.
      j.attributeArray("no_flop_rule", [&] {
        for (CallFunctionOp op : withoutRule)
          j.object([&] {
            j.attribute("op", op.getName());
            j.attribute("target", op.getTarget());
          });
      });
      j.attributeObject("hardware", [&] {
        writeFields(
            j, {{"flops_per_second", hw.flopsPerSecond},
                {"hbm_bytes_per_second", hw.hbmBytesPerSecond},
                {"link_bytes_per_second", hw.linkBytesPerSecond},
                {"collective_bytes_per_second", hw.collectiveBytesPerSecond}});
      });
    });
    j.attributeArray("transfers", [&] {
      for (const Transfer &t : cost.getTransfers())
        j.object([&] {
          j.attribute("op", nodeName(t.copy));
          j.attribute("direction", t.toHost ? "to_host" : "to_device");
          j.attribute("bytes", t.bytes);
          j.attribute("seconds", t.seconds);
          j.attribute("exposed_seconds", t.exposedSeconds);
        });
    });
    j.attribute("block_source", mem.getBlockSource());
    SmallVector<uint64_t> recompute = blockRecompute(mem, cost);
    j.attributeArray("blocks", [&] {
      // Plain loop: lambdas capturing structured bindings need C++20.
      for (size_t i = 0, e = recompute.size(); i < e; ++i) {
        const auto &b = mem.getBlocks()[i];
        j.object([&] {
          j.attribute("fqn", b.fqn);
          j.attribute("activation_bytes", b.activationBytes);
          j.attribute("offloaded_bytes", b.offloadedBytes);
          j.attribute("recompute_flops", recompute[i]);
        });
      }
    });
    // Columns, one entry per op, so 200k-op graphs stay compact.
    j.attributeObject("timeline", [&] {
      j.attributeArray("op", [&] {
        for (Operation *op : ops)
          j.value(nodeName(op));
      });
      j.attributeArray("device_bytes", [&] {
        for (int64_t live : mem.getTransientTimeline())
          j.value(mem.getResidentBytes() + live);
      });
      j.attributeArray("host_bytes", [&] {
        for (int64_t live : mem.getHostTimeline())
          j.value(live);
      });
      // Compute-stream seconds of each op (0 for ao and output ops): what
      // the emulated device's simulated schedule gives each node's work.
      j.attributeArray("seconds", [&] {
        for (Operation *op : ops)
          j.value(cost.getSeconds(op));
      });
    });
  });
  os << "\n";
}

GraphOp ReportWriter::checkGraphs(ArrayRef<GraphOp> graphs, Location loc) {
  if (graphs.size() != 1) {
    emitError(loc) << "joint-memory-report: expects a module with exactly one "
                      "joint.graph, found "
                   << graphs.size();
    return nullptr;
  }
  return graphs.front();
}

size_t ReportWriter::write(raw_ostream &os, GraphOp graph,
                           const MemoryModel &mem,
                           const StorageAliasAnalysis &aliases) {
  HardwareModel hw;
  hw.flopsPerSecond = peakTflops * 1e12;
  hw.hbmBytesPerSecond = hbmGbps * 1e9;
  hw.linkBytesPerSecond = linkGbps * 1e9;
  hw.collectiveBytesPerSecond = collectiveGbps * 1e9;
  CostModel cost(aliases, hw);
  ArrayRef<CallFunctionOp> withoutRule = cost.getGuessedFlopOps();
  warnAboutFacts(graph, mem, cost, withoutRule);
  remarkUnapplied(graph, aliases);
  if (format == ReportFormat::json)
    writeJSON(os, graph, mem, cost, hw, withoutRule);
  else
    writeText(os, graph, mem, cost, hw);
  return cost.getUnknownFlopOps().size();
}

void MemoryReport::runOnOperation() {
  GraphOp graph = getOperation();
  ReportWriter writer{format,  label,    peakTflops,
                      hbmGbps, linkGbps, collectiveGbps};
  // The sibling graphs are only counted (no IR is read or written there).
  if (!writer.checkGraphs(llvm::to_vector(graph->getBlock()->getOps<GraphOp>()),
                          graph.getLoc()))
    return signalPassFailure();
  const MemoryModel &mem = getAnalysis<MemoryModel>();
  const StorageAliasAnalysis &aliases = getAnalysis<StorageAliasAnalysis>();
  numOps = mem.getOps().size();
  numStorages = mem.getLifetimes().size();
  numUnknownSize = mem.getUnknownSizeStorages().size();
  numIneffectiveOffloads = mem.getIneffectiveOffloads().size();

  if (output.empty()) {
    numUnknownFlops = writer.write(llvm::errs(), graph, mem, aliases);
    llvm::errs().flush();
    return markAllAnalysesPreserved();
  }
  std::string error;
  std::unique_ptr<PassOutputFile> file =
      openPassOutputFile(&getContext(), output.getValue(), error);
  if (!file) {
    emitError(graph.getLoc())
        << "joint-memory-report: cannot write '" << output << "': " << error;
    return signalPassFailure();
  }
  numUnknownFlops = writer.write(file->os(), graph, mem, aliases);
  if (failed(file->keep(error))) {
    emitError(graph.getLoc())
        << "joint-memory-report: cannot write '" << output << "': " << error;
    return signalPassFailure();
  }
  markAllAnalysesPreserved();
}

} // namespace

LogicalResult mlir::joint::writeMemoryReport(
    ModuleOp module, const JointMemoryReportOptions &options, raw_ostream &os) {
  ReportWriter writer{options.format,     options.label,
                      options.peakTflops, options.hbmGbps,
                      options.linkGbps,   options.collectiveGbps};
  if (failed(writer.checkOptions(module.getContext())))
    return failure();
  auto graphs = llvm::to_vector(module.getOps<GraphOp>());
  GraphOp graph = writer.checkGraphs(
      graphs, graphs.empty() ? module.getLoc() : graphs.front().getLoc());
  if (!graph)
    return failure();
  StorageAliasAnalysis aliases(graph);
  MemoryModel mem(aliases);
  writer.write(os, graph, mem, aliases);
  return success();
}

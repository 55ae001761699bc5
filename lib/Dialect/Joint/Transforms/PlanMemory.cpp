//===- PlanMemory.cpp - Recompute/offload planner under a budget ----------===//
//
// joint-plan-memory, the memory planner, and the joint-optimize-memory
// pipeline (plan, then the offload and remat appliers). The pass builds the
// graph's MemoryPlanProblem (PlanMemoryProblem.cpp), runs the greedy solver
// on it (lib/Planning) and prices each plan with the simulator
// (PlanMemorySimulator.cpp: the real appliers and models on a copy). Rounds:
// when the applied plan overshoots the budget the greedy continues with the
// overshoot taken off its target; offloads whose copies stall are excluded
// in the next plan; one more plan recomputes first and offloads only where
// no recompute lowers the peak; the fastest measured plan within the budget
// (the recompute-only plan is always one) is written; when none fits, a last
// plan offloads before it recomputes (lowest peak first). Only the final
// `policy` values, distances and `joint.plan` touch the input.
//
//===----------------------------------------------------------------------===//

#include "joint/Dialect/Joint/Transforms/PlanMemory.h"
#include "FlopRules.h"
#include "joint/Dialect/Joint/Transforms/ChunkLoss.h"
#include "joint/Dialect/Joint/Transforms/CpuOffload.h"
#include "joint/Dialect/Joint/Transforms/Passes.h"
#include "joint/Support/NamedDiagnostics.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Format.h"
#include <cmath>

namespace mlir {
namespace joint {
#define GEN_PASS_DEF_JOINTPLANMEMORY
#include "joint/Dialect/Joint/Transforms/Passes.h.inc"
} // namespace joint
} // namespace mlir

using namespace mlir;
using namespace mlir::joint;

static constexpr double kBytesPerGB = 1e9;
static constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;
/// Rounds of "measure the applied plan, continue the greedy" before giving
/// up (each round lowers the internal target by the measured overshoot).
static constexpr unsigned kMaxRounds = 8;

namespace {

/// One solved and measured plan of a graph.
struct MeasuredPlan {
  MemoryPlan plan;
  PlanMeasurement measurement;
  /// Ops the plan could have tagged must_cpu_offload.
  size_t numOffloadable = 0;
};

/// The planner of one graph: its problem, the solver rounds and the output.
class Planner {
public:
  Planner(ModuleOp module, GraphOp graph, const GraphPlanProblem &gp,
          const MemoryModel &memory, const CostModel &cost,
          const HardwareModel &hw)
      : module(module), graph(graph), gp(gp), memory(memory), cost(cost),
        hw(hw) {}

  /// Solves with `options` and measures, continuing the greedy while the
  /// measured peak overshoots. Failure: an applier refused the plan (an
  /// error was emitted). `fits`: the measured peak is within the budget.
  FailureOr<MeasuredPlan> run(const GreedyOptions &options, bool &fits);
  /// Writes the plan (policies, distances, `joint.plan`) and the remark.
  void write(const MeasuredPlan &p);
  /// The error for a budget no plan reaches; `lowest` has the lowest peak.
  LogicalResult reportInfeasible(const MeasuredPlan &lowest);

private:
  ModuleOp module;
  GraphOp graph;
  const GraphPlanProblem &gp;
  const MemoryModel &memory;
  const CostModel &cost;
  HardwareModel hw;
};

} // namespace

FailureOr<MeasuredPlan> Planner::run(const GreedyOptions &options, bool &fits) {
  fits = false;
  const MemoryPlanProblem &problem = gp.problem;
  GreedyPlanner solver(problem, options);
  MeasuredPlan out;
  out.numOffloadable = solver.getNumOffloadable();
  int64_t target = problem.budgetBytes - problem.residentBytes;
  for (unsigned round = 0;; ++round) {
    bool reached = solver.lowerPeakTo(target);
    out.plan = solver.getPlan();
    FailureOr<PlanMeasurement> m =
        simulateMemoryPlan(module, graph, gp, out.plan, hw);
    if (failed(m))
      return failure();
    out.measurement = *m;
    if (m->peakBytes <= problem.budgetBytes) {
      fits = true;
      return out;
    }
    if (!reached || round + 1 == kMaxRounds)
      return out;
    // The interval model under-counted: continue the same greedy sequence
    // with the overshoot taken off the target.
    target -= m->peakBytes - problem.budgetBytes;
  }
}

/// `value` printed with a printf `format` holding one double.
static std::string formatFixed(const char *format, double value) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format(format, value);
  return s;
}

/// Seconds as "1.234 s", "12.34 ms" or "5.678 us" (4 significant digits).
static std::string formatSeconds(double s) {
  if (s >= 1 || s == 0)
    return formatFixed("%.4g s", s);
  if (s >= 1e-3)
    return formatFixed("%.4g ms", s * 1e3);
  return formatFixed("%.4g us", s * 1e6);
}

/// `bytes` in binary units, as joint-memory-report prints them: "59.89 GiB",
/// "1.50 KiB", "648 B" (budget-gb counts 1e9 bytes, budget-gib 2^30).
static std::string formatBytes(int64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(bytes);
  unsigned u = 0;
  while (std::abs(v) >= 1024 && u + 1 < std::size(units)) {
    v /= 1024;
    ++u;
  }
  if (u == 0)
    return std::to_string(bytes) + " B";
  return formatFixed("%.2f ", v) + units[u];
}

/// formatBytes with the exact count when it is rounded: "59.89 GiB
/// (64309264900 B)", "648 B".
static std::string formatBytesExact(int64_t bytes) {
  std::string s = formatBytes(bytes);
  if (std::abs(bytes) >= 1024)
    s += " (" + std::to_string(bytes) + " B)";
  return s;
}

LogicalResult Planner::reportInfeasible(const MeasuredPlan &lowest) {
  const PlanMeasurement &measured = lowest.measurement;
  int64_t budgetBytes = gp.problem.budgetBytes;
  // Everything named comes from the applied plan's measurement: its peak,
  // the one node where it occurs and what is live there.
  InFlightDiagnostic d = emitError(graph.getLoc());
  d << "joint-plan-memory: budget " << formatBytesExact(budgetBytes)
    << " is not reachable: the lowest modelled peak is "
    << formatBytesExact(measured.peakBytes);
  if (!measured.peakNode.empty())
    d << " at node '" << measured.peakNode << "'";
  d << ", of which " << formatBytes(memory.getResidentBytes())
    << " are resident inputs; no decision lowers it further";
  if (!measured.peakLive.empty())
    d << "; the largest values live there are";
  for (auto [i, entry] : llvm::enumerate(measured.peakLive))
    d << (i ? ", '" : " '") << entry.second << "' (" << formatBytes(entry.first)
      << ")";
  return failure();
}

void Planner::write(const MeasuredPlan &p) {
  const PlanMeasurement &m = p.measurement;
  const MemoryPlan &decided = p.plan;
  int64_t budgetBytes = gp.problem.budgetBytes;
  MLIRContext *ctx = graph.getContext();
  Builder b(ctx);
  applyPlanPolicies(graph, getPlanPolicies(gp, decided),
                    getPlanDistances(decided));
  NamedAttrList plan;
  plan.append("budget_bytes", b.getI64IntegerAttr(budgetBytes));
  plan.append("peak_bytes", b.getI64IntegerAttr(m.peakBytes));
  plan.append("step_seconds", b.getF64FloatAttr(m.stepSeconds));
  plan.append("baseline_peak_bytes",
              b.getI64IntegerAttr(memory.getPeakBytes()));
  plan.append("baseline_step_seconds",
              b.getF64FloatAttr(cost.getStepSeconds()));
  plan.append("recompute_seconds", b.getF64FloatAttr(m.recomputeSeconds));
  plan.append("recomputed_storages",
              b.getI64IntegerAttr(decided.numRecomputed));
  plan.append("recomputed_bytes", b.getI64IntegerAttr(decided.recomputedBytes));
  plan.append("candidate_storages", b.getI64IntegerAttr(decided.numCandidates));
  plan.append("offloaded_ops", b.getI64IntegerAttr(decided.numOffloaded));
  plan.append("offloaded_bytes", b.getI64IntegerAttr(decided.offloadedBytes));
  plan.append("exposed_transfer_seconds", b.getF64FloatAttr(m.exposedSeconds));
  plan.append("host_budget_bytes",
              b.getI64IntegerAttr(gp.problem.hostBudgetBytes));
  plan.append("method", b.getStringAttr("greedy-bytes-per-second"));
  graph->setAttr("joint.plan", plan.getDictionary(ctx));

  double base = cost.getStepSeconds();
  InFlightDiagnostic r = emitRemark(graph.getLoc());
  r << "joint-plan-memory: budget " << formatBytesExact(budgetBytes)
    << "; recompute " << decided.numRecomputed << " of "
    << decided.numCandidates << " saved storages ("
    << formatBytes(decided.recomputedBytes) << "); offload "
    << decided.numOffloaded << " op(s) (" << formatBytes(decided.offloadedBytes)
    << " to host, " << formatSeconds(m.exposedSeconds)
    << " transfer exposed); modelled peak " << formatBytes(m.peakBytes)
    << " (save-all " << formatBytes(memory.getPeakBytes()) << "), step "
    << formatSeconds(m.stepSeconds) << " ("
    << formatFixed("%+.1f", base > 0 ? (m.stepSeconds / base - 1) * 100 : 0.0)
    << "% over save-all)";
  if (gp.noBlocks)
    r << "; no transformer blocks, so nothing is recomputable";
}

//===----------------------------------------------------------------------===//
// The pass and the pipeline
//===----------------------------------------------------------------------===//

namespace {

/// The budget in bytes from one of two spellings; emits an error and fails
/// when both or neither are given (`required`) or the value is invalid.
static FailureOr<int64_t> budgetFrom(Location loc, StringRef what,
                                     const Pass::Option<double> &gb,
                                     const Pass::Option<double> &gib,
                                     bool required) {
  if (gb.hasValue() && gib.hasValue())
    return emitError(loc) << "joint-plan-memory: give " << what << "-gb or "
                          << what << "-gib, not both";
  if (!gb.hasValue() && !gib.hasValue()) {
    if (required)
      return emitError(loc) << "joint-plan-memory: give the device budget "
                               "as budget-gb (1e9 bytes) or budget-gib "
                               "(2^30 bytes)";
    return int64_t(0);
  }
  double value = gb.hasValue() ? gb : gib;
  StringRef unit = gb.hasValue() ? "-gb" : "-gib";
  if (!std::isfinite(value) || value < 0 || (required && value == 0) ||
      value * kBytesPerGB > 9e18)
    return emitError(loc) << "joint-plan-memory: " << what << unit
                          << " must be a finite number "
                          << (required ? "> 0" : ">= 0 (0 means no limit)")
                          << ", got " << formatOptionValue(value);
  return int64_t(
      std::llround(value * (gb.hasValue() ? kBytesPerGB : kBytesPerGiB)));
}

/// Rounds of "plan with offload, measure, drop the offloads whose copies
/// stall" (each round is one planner run and one measurement).
static constexpr unsigned kOffloadRounds = 3;

/// Fails with an error when `graph` already holds remat clones or ao
/// transfers: the planner plans an untransformed graph.
static LogicalResult checkUntransformed(GraphOp graph) {
  for (Operation &op : graph.getBody().front()) {
    auto call = dyn_cast<CallFunctionOp>(op);
    if (isa<ao::OffloadOp, ao::ReloadOp, ao::WaitTensorOp>(op) ||
        (call && call.getRecomputedFromAttr()))
      return op.emitOpError()
             << "joint-plan-memory plans an untransformed graph, but this "
                "graph already holds "
             << (call ? "remat clones" : "ao transfers")
             << "; plan the graph before joint-remat / joint-cpu-offload";
  }
  return success();
}

/// Writes the fastest measured plan of `graph` within the budget; fails
/// after an error. Candidates: recompute only, and recompute + offload,
/// where each round excludes the offloads whose copies the cost model found
/// exposed in the previous round's measurement: after the first round the
/// stalled storages, after later rounds every candidate of their blocks (the
/// greedy's link-capacity estimate is optimistic; the measurement is the
/// FIFO copy streams of the cost model). The recompute-only plan is always a
/// candidate, so adding offload never gives a slower plan.
static FailureOr<MemoryPlan>
planGraph(ModuleOp module, GraphOp graph, const StorageAliasAnalysis &aliases,
          const MemoryModel &memory, const CostModel &cost,
          const HardwareModel &hw, int64_t budget, int64_t hostBudget,
          double *stepSeconds = nullptr) {
  if (failed(checkUntransformed(graph)))
    return failure();
  FailureOr<GraphPlanProblem> gp = buildGraphPlanProblem(
      graph, aliases, memory, cost, hw, budget, hostBudget);
  if (failed(gp) || failed(gp->problem.check(graph.getLoc())))
    return failure();
  Planner planner(module, graph, *gp, memory, cost, hw);
  std::optional<MeasuredPlan> best, lowest;
  auto consider = [&](MeasuredPlan p, bool fits) {
    const PlanMeasurement &m = p.measurement;
    if (!fits) {
      if (!lowest || m.peakBytes < lowest->measurement.peakBytes)
        lowest = std::move(p);
      return;
    }
    if (!best || m.stepSeconds < best->measurement.stepSeconds)
      best = std::move(p);
  };
  llvm::DenseSet<unsigned> excluded;
  bool canOffload = false;
  for (unsigned round = 0; round <= kOffloadRounds; ++round) {
    bool offload = round < kOffloadRounds;
    GreedyOptions options;
    options.allowOffload = offload;
    options.excludedOps = excluded;
    bool fits = false;
    FailureOr<MeasuredPlan> p = planner.run(options, fits);
    if (failed(p))
      return failure();
    bool again = false;
    canOffload |= offload && p->numOffloadable;
    // Nothing can be offloaded: the recompute-only plan is this one.
    if (offload && !p->numOffloadable) {
      consider(std::move(*p), fits);
      break;
    }
    if (offload) {
      // First the stalled storages only, then their whole blocks.
      ArrayRef<unsigned> exposed = round == 0
                                       ? p->measurement.exposedOffloads
                                       : p->measurement.exposedBlockOffloads;
      again = !exposed.empty() && p->plan.numOffloaded;
      excluded.insert(exposed.begin(), exposed.end());
    }
    consider(std::move(*p), fits);
    if (offload && !again)
      round = kOffloadRounds - 1; // no stall left: only recompute-only remains
  }
  if (canOffload) {
    // Recompute first, offloading only where no recompute lowers the peak:
    // where the link cannot hide the copies the rounds above keep, a plan
    // with a few copies is often the fastest.
    GreedyOptions options;
    options.offloadLast = true;
    bool fits = false;
    FailureOr<MeasuredPlan> p = planner.run(options, fits);
    if (failed(p))
      return failure();
    consider(std::move(*p), fits);
  }
  if (!best) {
    // Nothing fits: the lowest peak comes first. Offload everything that
    // lowers the peak before recomputing (exposed copies only cost time), so
    // no recompute blocks an offload the budget needs.
    GreedyOptions options;
    options.preferOffload = true;
    bool fits = false;
    FailureOr<MeasuredPlan> p = planner.run(options, fits);
    if (failed(p))
      return failure();
    consider(std::move(*p), fits);
  }
  if (!best) {
    (void)planner.reportInfeasible(*lowest);
    return failure();
  }
  planner.write(*best);
  if (stepSeconds)
    *stepSeconds = best->measurement.stepSeconds;
  return best->plan;
}

/// The token chunks of `graph`'s loss head (1: whole, 2, 4 or 8) whose plan
/// is the fastest within the budget, each planned on a clone of `module`
/// with its diagnostics dropped; 1 when no chunked plan is faster. When no
/// candidate fits, the most chunks tried (whose floor is the lowest), so the
/// infeasible-budget error names the lowest peak any candidate reaches.
/// Costs one planner run per candidate (only with allow-chunk-loss).
static unsigned chooseLossChunks(ModuleOp module, GraphOp graph,
                                 const HardwareModel &hw, int64_t budget,
                                 int64_t hostBudget, double &wholeSeconds,
                                 double &chunkedSeconds) {
  unsigned index = 0;
  for (GraphOp g : module.getOps<GraphOp>()) {
    if (g == graph)
      break;
    ++index;
  }
  std::optional<double> best;
  unsigned bestChunks = 1, mostChunks = 1;
  for (unsigned chunks : {1u, 2u, 4u, 8u}) {
    OwningOpRef<ModuleOp> copy = module.clone();
    GraphOp g = *std::next(copy->getOps<GraphOp>().begin(), index);
    ScopedDiagnosticHandler quiet(module.getContext(),
                                  [](Diagnostic &) { return success(); });
    if (chunks > 1) {
      FailureOr<ChunkLossSummary> s = chunkLoss(g, chunks);
      if (failed(s) || !s->numChunked)
        break; // no head to chunk
      mostChunks = chunks;
    }
    StorageAliasAnalysis aliases(g);
    MemoryModel memory(aliases);
    CostModel cost(aliases, hw);
    double seconds = 0;
    if (failed(planGraph(*copy, g, aliases, memory, cost, hw, budget,
                         hostBudget, &seconds)))
      continue;
    if (chunks == 1)
      wholeSeconds = seconds;
    if (!best || seconds < *best) {
      best = seconds;
      bestChunks = chunks;
    }
  }
  chunkedSeconds = best ? *best : 0;
  return best ? bestChunks : mostChunks;
}

struct PlanMemoryPass : joint::impl::JointPlanMemoryBase<PlanMemoryPass> {
  using Base::Base;

  /// Option errors once per run, before any graph, without a location (they
  /// are about the command line; drivers print them as their own errors).
  LogicalResult initialize(MLIRContext *context) override {
    Location loc = UnknownLoc::get(context);
    FailureOr<int64_t> device =
        budgetFrom(loc, "budget", budgetGB, budgetGiB, /*required=*/true);
    if (failed(device))
      return failure();
    FailureOr<int64_t> host = budgetFrom(loc, "host-budget", hostBudgetGB,
                                         hostBudgetGiB, /*required=*/false);
    if (failed(host))
      return failure();
    for (auto [name, value] :
         {std::pair<StringRef, double>{"peak-tflops", peakTflops},
          {"hbm-gbps", hbmGbps},
          {"link-gbps", linkGbps},
          {"collective-gbps", collectiveGbps}})
      if (!(value > 0) || !std::isfinite(value))
        return emitError(loc) << "joint-plan-memory: " << name
                              << " must be a positive number, got "
                              << formatOptionValue(value);
    budget = *device;
    hostBudget = *host;
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    Location loc = module.getLoc();
    // Module-level: each graph's plan is measured on a clone of the module
    // (the operator table lives there); graphs are planned one by one.
    auto graphs = llvm::to_vector(module.getOps<GraphOp>());
    if (graphs.empty()) {
      emitError(loc) << "joint-plan-memory: the module holds no joint.graph";
      return signalPassFailure();
    }
    HardwareModel hw;
    hw.flopsPerSecond = peakTflops * 1e12;
    hw.hbmBytesPerSecond = hbmGbps * 1e9;
    hw.linkBytesPerSecond = linkGbps * 1e9;
    hw.collectiveBytesPerSecond = collectiveGbps * 1e9;
    for (GraphOp graph : graphs) {
      StorageAliasAnalysis &aliases =
          getChildAnalysis<StorageAliasAnalysis>(graph);
      MemoryModel memory(aliases);
      // A data-dependent size is counted at its symbols' recorded bound;
      // without one the storage counts as 0 bytes and the budget is unsound.
      if (ArrayRef<const Storage *> unknown = memory.getUnknownSizeStorages();
          !unknown.empty()) {
        Value owner = unknown.front()->owner;
        InFlightDiagnostic d = allowUnboundedSizes ? emitWarning(owner.getLoc())
                                                   : emitError(owner.getLoc());
        d << "joint-plan-memory: " << unknown.size()
          << " storage(s) have a data-dependent size without a recorded "
             "bound and count as 0 bytes";
        if (Operation *def = owner.getDefiningOp())
          markNamed(d, planNodeName(def))
              << " (first: '" << planNodeName(def) << "')";
        d << "; the budget is not guaranteed";
        if (!allowUnboundedSizes) {
          d << " (trace with bounded sizes, or pass "
               "allow-unbounded-sizes=true to plan anyway)";
          return signalPassFailure();
        }
      }
      // With allow-chunk-loss, the loss head in the chunks whose plan is
      // fastest (joint-chunk-loss rewrites the graph before it is planned).
      std::optional<StorageAliasAnalysis> chunkedAliases;
      std::optional<MemoryModel> chunkedMemory;
      const StorageAliasAnalysis *planAliases = &aliases;
      const MemoryModel *planMemory = &memory;
      if (allowChunkLoss) {
        double whole = 0, chunked = 0;
        unsigned chunks = chooseLossChunks(module, graph, hw, budget,
                                           hostBudget, whole, chunked);
        if (chunks > 1) {
          if (failed(chunkLoss(graph, chunks)))
            return signalPassFailure();
          chunkedAliases.emplace(graph);
          chunkedMemory.emplace(*chunkedAliases);
          planAliases = &*chunkedAliases;
          planMemory = &*chunkedMemory;
          InFlightDiagnostic remark = emitRemark(graph.getLoc());
          remark << "joint-plan-memory: the loss head in " << chunks
                 << " token chunks (joint-chunk-loss)";
          if (chunked == 0)
            remark << ", the lowest floor of the chunk counts tried: no "
                      "candidate fits the budget";
          else if (whole > 0)
            remark << " plans to " << formatSeconds(chunked)
                   << " per step against " << formatSeconds(whole) << " whole";
          else
            remark << " plans to " << formatSeconds(chunked)
                   << " per step; whole, no plan fits the budget";
          ++numLossChunked;
        }
      }
      CostModel cost(*planAliases, hw);
      // The plan trades bytes for seconds: name the ops priced by a guess.
      warnOpsWithoutFlopRule(cost.getGuessedFlopOps(), "joint-plan-memory");
      FailureOr<MemoryPlan> plan =
          planGraph(module, graph, *planAliases, *planMemory, cost, hw, budget,
                    hostBudget);
      if (failed(plan))
        return signalPassFailure();
      numCandidates += plan->numCandidates;
      numRecomputed += plan->numRecomputed;
    }
  }

private:
  int64_t budget = 0, hostBudget = 0; // bytes, from initialize
};

} // namespace

void mlir::joint::registerOptimizeMemoryPipeline() {
  registerDeciderPipeline(
      "joint-optimize-memory",
      "Memory planning: joint-plan-memory (decide), then "
      "joint-apply-cpu-offload and joint-remat (apply), with the planner's "
      "options (listed under joint-plan-memory)",
      createJointPlanMemory, {createJointApplyCpuOffload, createJointRemat});
}

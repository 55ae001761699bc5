//===- TestMemoryPlan.cpp - Test passes of the memory plan problem --------===//
//
// Test-only passes, registered by joint-opt alone (as upstream registers its
// test passes), that let lit check the planner's problem and solver apart:
// test-print-memory-plan-problem prints the MemoryPlanProblem that
// joint-plan-memory builds from each graph (and, with solve=true, the greedy's
// decisions on it; with price=true, what a given plan costs once applied;
// with format=json, all of it as one JSON object per graph);
// test-solve-memory-plan-problem reads a hand-made problem from the module
// attribute `test.plan_problem`, checks it and prints the greedy's decisions.
//
//===----------------------------------------------------------------------===//

#include "joint/Analysis/CostModel.h"
#include "joint/Analysis/MemoryModel.h"
#include "joint/Dialect/AO/IR/AOOps.h"
#include "joint/Dialect/Joint/Transforms/PlanMemory.h"
#include "joint/Planning/MemoryPlanSolvers.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InterleavedRange.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::joint;

namespace {

//===----------------------------------------------------------------------===//
// test-print-memory-plan-problem
//===----------------------------------------------------------------------===//

struct TestPrintPlanProblemPass
    : PassWrapper<TestPrintPlanProblemPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPrintPlanProblemPass)

  TestPrintPlanProblemPass() = default;
  TestPrintPlanProblemPass(const TestPrintPlanProblemPass &other)
      : PassWrapper(other) {}

  StringRef getArgument() const final {
    return "test-print-memory-plan-problem";
  }
  StringRef getDescription() const final {
    return "Print the memory plan problem of each joint.graph (test only)";
  }
  /// price=true runs the offload applier on a copy, which builds ao ops.
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<ao::AODialect>();
  }

  Option<int64_t> budget{*this, "budget-bytes",
                         llvm::cl::desc("Device budget, bytes"),
                         llvm::cl::init(1)};
  Option<bool> solve{*this, "solve",
                     llvm::cl::desc("Also print the greedy's decisions"),
                     llvm::cl::init(false)};
  Option<bool> allowOffload{
      *this, "allow-offload",
      llvm::cl::desc("With solve=true: let the greedy offload"),
      llvm::cl::init(true)};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("text (one line per element) or json (one object per "
                     "graph, for bench/plan_optimality)"),
      llvm::cl::init("text")};
  Option<bool> price{
      *this, "price",
      llvm::cl::desc("Also price the plan given by recompute= and offload= "
                     "with the planner's simulator (the real appliers, "
                     "memory and cost models)"),
      llvm::cl::init(false)};
  ListOption<unsigned> recomputeList{
      *this, "recompute",
      llvm::cl::desc("With price=true: storage indices to recompute")};
  ListOption<std::string> offloadList{
      *this, "offload",
      llvm::cl::desc("With price=true: offloads as producer:prefetch:defer "
                     "(producer: op position of a formed group)")};

  /// The plan named by recompute= and offload=, over the groups the greedy
  /// forms for `problem`; fails with an error naming a bad entry.
  FailureOr<MemoryPlan> givenPlan(GraphOp graph,
                                  const MemoryPlanProblem &problem) {
    MemoryPlan plan = GreedyPlanner(problem, GreedyOptions()).getPlan();
    plan.recompute.assign(problem.storages.size(), false);
    for (unsigned si : recomputeList) {
      if (si >= problem.storages.size() || !problem.storages[si].recomputable)
        return graph.emitError()
               << "price: storage " << si << " is not a recompute candidate";
      plan.recompute[si] = true;
      ++plan.numRecomputed;
      plan.recomputedBytes += problem.storages[si].bytes;
    }
    for (StringRef entry : offloadList) {
      SmallVector<StringRef, 3> fields;
      entry.split(fields, ':');
      unsigned producer = 0, prefetch = 0, defer = 0;
      if (fields.size() != 3 || fields[0].getAsInteger(10, producer) ||
          fields[1].getAsInteger(10, prefetch) ||
          fields[2].getAsInteger(10, defer) || prefetch >= kPlanDistances ||
          defer >= kPlanDistances)
        return graph.emitError()
               << "price: offload '" << entry
               << "' is not producer:prefetch:defer with distances < "
               << kPlanDistances;
      auto it = llvm::find_if(plan.offloads, [&](const PlannedOffload &o) {
        return o.producer == producer;
      });
      if (it == plan.offloads.end())
        return graph.emitError()
               << "price: op " << producer << " heads no offload group";
      it->chosen = true;
      it->prefetch = prefetch;
      it->defer = defer;
      ++plan.numOffloaded;
      plan.offloadedBytes += it->bytes;
    }
    return plan;
  }

  void runOnOperation() override {
    HardwareModel hw;
    bool json = format == "json";
    if (!json && format != "text") {
      emitError(getOperation().getLoc()) << "test-print-memory-plan-problem: "
                                            "format must be text or json, got '"
                                         << format << "'";
      return signalPassFailure();
    }
    for (GraphOp graph : getOperation().getOps<GraphOp>()) {
      StorageAliasAnalysis &aliases =
          getChildAnalysis<StorageAliasAnalysis>(graph);
      MemoryModel memory(aliases);
      CostModel cost(aliases, hw);
      FailureOr<GraphPlanProblem> gp = buildGraphPlanProblem(
          graph, aliases, memory, cost, hw, budget, /*hostBudgetBytes=*/0);
      if (failed(gp) || failed(gp->problem.check(graph.getLoc())))
        return signalPassFailure();
      // A bad plan to price fails before anything is printed.
      std::optional<MemoryPlan> given;
      if (price) {
        FailureOr<MemoryPlan> plan = givenPlan(graph, gp->problem);
        if (failed(plan))
          return signalPassFailure();
        given = std::move(*plan);
      }
      raw_ostream &os = llvm::outs();
      if (json) {
        // One object per graph: {"graph", "problem", "greedy"?, "price"?}.
        os << "{\"graph\": " << llvm::json::Value(graph.getSymName().str())
           << ",\n \"problem\": ";
        gp->problem.printJSON(os);
      } else {
        os << "graph @" << graph.getSymName() << "\n";
        gp->problem.print(os);
      }
      if (solve) {
        bool reached = false;
        GreedyOptions options;
        options.allowOffload = allowOffload;
        MemoryPlan plan = solveGreedy(gp->problem, options, reached);
        if (json) {
          os << ",\n \"greedy\": ";
          plan.printJSON(os);
          os << ",\n \"reached\": " << (reached ? "true" : "false");
        } else {
          plan.print(gp->problem, os);
          os << (reached ? "reached" : "not reached") << "\n";
        }
      }
      if (given) {
        FailureOr<PlanMeasurement> m =
            simulateMemoryPlan(getOperation(), graph, *gp, *given, hw);
        if (failed(m))
          return signalPassFailure();
        if (json)
          os << ",\n \"price\": {\"peak_bytes\": " << m->peakBytes
             << ", \"step_seconds\": " << llvm::format("%.17g", m->stepSeconds)
             << ", \"recompute_seconds\": "
             << llvm::format("%.17g", m->recomputeSeconds)
             << ", \"exposed_seconds\": "
             << llvm::format("%.17g", m->exposedSeconds)
             << ", \"exposed_offloads\": ["
             << llvm::interleaved(m->exposedOffloads, ", ")
             << "], \"exposed_block_offloads\": ["
             << llvm::interleaved(m->exposedBlockOffloads, ", ") << "]}";
        else
          os << "priced: peak " << m->peakBytes << " B, step "
             << llvm::format("%g", m->stepSeconds) << " s, recompute "
             << llvm::format("%g", m->recomputeSeconds) << " s, exposed "
             << llvm::format("%g", m->exposedSeconds) << " s\n";
      }
      if (json)
        os << "}\n";
    }
    markAllAnalysesPreserved();
  }
};

//===----------------------------------------------------------------------===//
// test-solve-memory-plan-problem
//===----------------------------------------------------------------------===//

/// Reads a MemoryPlanProblem from a dictionary attribute; every error names
/// the field.
class ProblemReader {
public:
  ProblemReader(Location loc) : loc(loc) {}

  FailureOr<MemoryPlanProblem> read(DictionaryAttr dict);

private:
  InFlightDiagnostic error(const Twine &where) {
    return emitError(loc) << "test.plan_problem: " << where << ": ";
  }
  LogicalResult getInt(DictionaryAttr d, StringRef key, const Twine &where,
                       int64_t &out, bool required = true);
  LogicalResult getUnsigned(DictionaryAttr d, StringRef key, const Twine &where,
                            unsigned &out, bool required = true);
  LogicalResult getDouble(DictionaryAttr d, StringRef key, const Twine &where,
                          double &out);
  LogicalResult getList(DictionaryAttr d, StringRef key, const Twine &where,
                        SmallVectorImpl<unsigned> &out);
  FailureOr<ArrayAttr> getArray(DictionaryAttr d, StringRef key,
                                const Twine &where);

  Location loc;
};

LogicalResult ProblemReader::getInt(DictionaryAttr d, StringRef key,
                                    const Twine &where, int64_t &out,
                                    bool required) {
  Attribute a = d.get(key);
  if (!a) {
    if (!required)
      return success();
    return error(where) << "missing integer '" << key << "'";
  }
  auto i = dyn_cast<IntegerAttr>(a);
  if (!i)
    return error(where) << "'" << key << "' must be an integer";
  out = i.getInt();
  return success();
}

LogicalResult ProblemReader::getUnsigned(DictionaryAttr d, StringRef key,
                                         const Twine &where, unsigned &out,
                                         bool required) {
  int64_t v = out;
  if (failed(getInt(d, key, where, v, required)))
    return failure();
  if (v < 0 || v > int64_t(kNoPosition))
    return error(where) << "'" << key << "' must be >= 0";
  out = unsigned(v);
  return success();
}

LogicalResult ProblemReader::getDouble(DictionaryAttr d, StringRef key,
                                       const Twine &where, double &out) {
  Attribute a = d.get(key);
  if (auto f = dyn_cast_or_null<FloatAttr>(a))
    out = f.getValueAsDouble();
  else if (auto i = dyn_cast_or_null<IntegerAttr>(a))
    out = double(i.getInt());
  else
    return error(where) << "missing number '" << key << "'";
  return success();
}

FailureOr<ArrayAttr> ProblemReader::getArray(DictionaryAttr d, StringRef key,
                                             const Twine &where) {
  Attribute a = d.get(key);
  if (!a)
    return ArrayAttr::get(loc.getContext(), {});
  auto array = dyn_cast<ArrayAttr>(a);
  if (!array)
    return error(where) << "'" << key << "' must be an array";
  return array;
}

LogicalResult ProblemReader::getList(DictionaryAttr d, StringRef key,
                                     const Twine &where,
                                     SmallVectorImpl<unsigned> &out) {
  FailureOr<ArrayAttr> array = getArray(d, key, where);
  if (failed(array))
    return failure();
  for (Attribute a : *array) {
    auto i = dyn_cast<IntegerAttr>(a);
    if (!i || i.getInt() < 0)
      return error(where) << "'" << key << "' must hold integers >= 0";
    out.push_back(unsigned(i.getInt()));
  }
  return success();
}

FailureOr<MemoryPlanProblem> ProblemReader::read(DictionaryAttr dict) {
  MemoryPlanProblem p;
  unsigned boundary = kNoPosition;
  if (failed(getInt(dict, "budget", "problem", p.budgetBytes)) ||
      failed(getInt(dict, "host_budget", "problem", p.hostBudgetBytes,
                    /*required=*/false)) ||
      failed(getInt(dict, "resident", "problem", p.residentBytes,
                    /*required=*/false)) ||
      failed(getUnsigned(dict, "boundary", "problem", boundary,
                         /*required=*/false)) ||
      failed(getUnsigned(dict, "blocks", "problem", p.numBlocks,
                         /*required=*/false)))
    return failure();
  if (boundary != kNoPosition)
    p.boundary = boundary;
  if (dict.get("link_bytes_per_second") &&
      failed(getDouble(dict, "link_bytes_per_second", "problem",
                       p.linkBytesPerSecond)))
    return failure();
  FailureOr<ArrayAttr> ops = getArray(dict, "ops", "problem");
  FailureOr<ArrayAttr> storages = getArray(dict, "storages", "problem");
  FailureOr<ArrayAttr> offloads = getArray(dict, "offload", "problem");
  if (failed(ops) || failed(storages) || failed(offloads))
    return failure();
  for (auto [i, a] : llvm::enumerate(*ops)) {
    std::string where = "ops[" + std::to_string(i) + "]";
    auto d = dyn_cast<DictionaryAttr>(a);
    if (!d)
      return error(where) << "must be a dictionary";
    PlanOp op;
    if (auto name = d.getAs<StringAttr>("name"))
      op.name = name.str();
    else
      op.name = "op" + std::to_string(i);
    unsigned block = kNoPosition;
    if (failed(getDouble(d, "seconds", where, op.seconds)) ||
        failed(getUnsigned(d, "block", where, block, /*required=*/false)) ||
        failed(getList(d, "defines", where, op.resultStorages)))
      return failure();
    if (block != kNoPosition)
      op.block = block;
    p.ops.push_back(std::move(op));
  }
  for (auto [i, a] : llvm::enumerate(*storages)) {
    std::string where = "storages[" + std::to_string(i) + "]";
    auto d = dyn_cast<DictionaryAttr>(a);
    if (!d)
      return error(where) << "must be a dictionary";
    PlanStorage s;
    if (auto name = d.getAs<StringAttr>("name"))
      s.name = name.str();
    else
      s.name = "s" + std::to_string(i);
    s.lastForward = kNoPosition;
    if (failed(getInt(d, "bytes", where, s.bytes)) ||
        failed(getUnsigned(d, "alloc", where, s.alloc)) ||
        failed(getUnsigned(d, "free", where, s.free)) ||
        failed(getUnsigned(d, "last_forward", where, s.lastForward,
                           /*required=*/false)) ||
        failed(getUnsigned(d, "first_backward", where, s.firstBackward,
                           /*required=*/false)) ||
        failed(getList(d, "closure", where, s.closure)) ||
        failed(getList(d, "frontier", where, s.frontier)))
      return failure();
    if (s.lastForward == kNoPosition)
      s.lastForward = s.alloc;
    s.recomputable = !s.closure.empty();
    p.storages.push_back(std::move(s));
  }
  for (auto [i, a] : llvm::enumerate(*offloads)) {
    std::string where = "offload[" + std::to_string(i) + "]";
    auto d = dyn_cast<DictionaryAttr>(a);
    if (!d)
      return error(where) << "must be a dictionary";
    PlanOffloadCandidate c;
    SmallVector<unsigned> targets;
    if (failed(getUnsigned(d, "producer", where, c.producer)) ||
        failed(getList(d, "targets", where, targets)))
      return failure();
    // Each target storage is defined by the producer unless `defs` says.
    SmallVector<unsigned> defs;
    if (failed(getList(d, "defs", where, defs)))
      return failure();
    if (!defs.empty() && defs.size() != targets.size())
      return error(where) << "'defs' must name one op per target";
    for (auto [t, s] : llvm::enumerate(targets))
      c.targets.push_back({defs.empty() ? c.producer : defs[t], s});
    p.offloadCandidates.push_back(std::move(c));
  }
  // The timeline with everything saved, unless given: each storage's bytes
  // over [alloc, free].
  if (dict.get("timeline")) {
    FailureOr<ArrayAttr> timeline = getArray(dict, "timeline", "problem");
    if (failed(timeline))
      return failure();
    for (Attribute a : *timeline) {
      auto i = dyn_cast<IntegerAttr>(a);
      if (!i)
        return error("problem") << "'timeline' must hold integers";
      p.timeline.push_back(i.getInt());
    }
  } else {
    p.timeline.assign(p.ops.size(), 0);
    for (const PlanStorage &s : p.storages)
      for (unsigned i = s.alloc; i <= s.free && i < p.ops.size(); ++i)
        p.timeline[i] += s.bytes;
  }
  return p;
}

struct TestSolvePlanProblemPass
    : PassWrapper<TestSolvePlanProblemPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestSolvePlanProblemPass)

  TestSolvePlanProblemPass() = default;
  TestSolvePlanProblemPass(const TestSolvePlanProblemPass &other)
      : PassWrapper(other) {}

  StringRef getArgument() const final {
    return "test-solve-memory-plan-problem";
  }
  StringRef getDescription() const final {
    return "Solve the memory plan problem in the module attribute "
           "test.plan_problem with the greedy and print the plan (test only)";
  }

  Option<bool> allowOffload{*this, "allow-offload",
                            llvm::cl::desc("Let the greedy offload"),
                            llvm::cl::init(true)};
  Option<bool> preferOffload{
      *this, "prefer-offload",
      llvm::cl::desc("Offload before recomputing (lowest peak first)"),
      llvm::cl::init(false)};

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto dict = module->getAttrOfType<DictionaryAttr>("test.plan_problem");
    if (!dict) {
      emitError(module.getLoc())
          << "test.plan_problem: the module has no dictionary "
             "attribute 'test.plan_problem'";
      return signalPassFailure();
    }
    FailureOr<MemoryPlanProblem> problem =
        ProblemReader(module.getLoc()).read(dict);
    if (failed(problem) || failed(problem->check(module.getLoc())))
      return signalPassFailure();
    GreedyOptions options;
    options.allowOffload = allowOffload;
    options.preferOffload = preferOffload;
    bool reached = false;
    MemoryPlan plan = solveGreedy(*problem, options, reached);
    plan.print(*problem, llvm::outs());
    llvm::outs() << (reached ? "reached" : "not reached") << "\n";
    markAllAnalysesPreserved();
  }
};

} // namespace

namespace mlir {
namespace joint {
/// Registers the memory planner's test passes.
void registerTestMemoryPlanPasses() {
  PassRegistration<TestPrintPlanProblemPass>();
  PassRegistration<TestSolvePlanProblemPass>();
}
} // namespace joint
} // namespace mlir

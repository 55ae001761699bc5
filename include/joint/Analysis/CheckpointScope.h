//===- CheckpointScope.h - Scope of activation checkpointing ----*- C++ -*-===//
//
// The recompute scope of one graph: the transformer blocks (graph attribute
// `joint.model`, else module-stack paths `<container>.<int>`), narrowed by the
// layer selection and the region/exclude glob patterns, and the boundary
// units used by the cross-unit save rule.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_ANALYSIS_CHECKPOINTSCOPE_H
#define JOINT_ANALYSIS_CHECKPOINTSCOPE_H

#include "joint/Analysis/StorageAliasAnalysis.h"
#include "joint/Dialect/Joint/Transforms/ActivationCheckpoint.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace mlir {
namespace joint {

class CheckpointScope {
public:
  /// Resolves the scope of `graph`; emits an error (without location for
  /// options invalid on their own, else on the graph) and returns failure
  /// for invalid options or when no blocks can be found.
  static FailureOr<CheckpointScope> resolve(GraphOp graph,
                                            const CheckpointOptions &options);

  /// All blocks in flattened order, and how many the selection kept.
  ArrayRef<std::string> getBlocks() const { return blocks; }
  unsigned getNumSelected() const { return numSelected; }
  /// True when the blocks came from module-stack paths, not joint.model.
  bool usedFallback() const { return fallback; }
  /// True when nothing may be tagged (zero blocks selected).
  bool isEmpty() const { return regions.empty(); }

  /// Whether `op` lies in a selected region and outside every exclusion
  /// (innermost module frame first). Memoized per module-stack attribute.
  bool isEligible(CallFunctionOp op);

  /// Assigns boundary units to the forward ops of `graph` in program order:
  /// one unit per traversal of one block (any block, selected or not), 0 for
  /// ops outside every block. A new traversal of a block starts when its
  /// ops return to an earlier direct child module (a shared block called
  /// twice), so each traversal is its own unit.
  void assignUnits(GraphOp graph);
  /// The unit of a forward op (after assignUnits); 0 = outside every block.
  unsigned getUnit(Operation *op) const { return units.lookup(op); }

  /// The longest of `fqn` and its dotted prefixes found in `set`, or "".
  static StringRef findContaining(StringRef fqn, const llvm::StringSet<> &set);

private:
  std::vector<std::string> blocks;
  llvm::StringSet<> blockSet;
  unsigned numSelected = 0;
  bool fallback = false;
  llvm::StringSet<> regions;
  llvm::StringSet<> excludes;
  llvm::DenseMap<Attribute, bool> eligibleCache;
  llvm::DenseMap<Operation *, unsigned> units;
};

/// Ops that write storage in place and storages written by any op, from
/// StorageAliasAnalysis (schema write marks, ops returning nothing
/// included). Shared by the tag and remat rules.
struct MutationFacts {
  explicit MutationFacts(const StorageAliasAnalysis &aliases);
  /// True when `op` writes some storage in place.
  bool isWriter(Operation *op) const { return writers.contains(op); }
  /// A writer of `value`'s storage, or null when it is never written.
  Operation *getWriterOf(Value value) const;

  const StorageAliasAnalysis &aliases;
  llvm::DenseSet<Operation *> writers;
};

/// Fails with an error naming `op` when recomputing it would change the
/// step's result: it is random (nondeterministic_seeded) and `replayRandom`
/// is off (cases C4), writes storage in place, or produces a value whose
/// storage is written in place. `request` says where the recompute request
/// came from.
LogicalResult verifyRecomputable(CallFunctionOp op, StringRef request,
                                 const MutationFacts &mutations,
                                 bool replayRandom = false);

} // namespace joint
} // namespace mlir

#endif // JOINT_ANALYSIS_CHECKPOINTSCOPE_H

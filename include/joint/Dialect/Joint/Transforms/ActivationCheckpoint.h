//===- ActivationCheckpoint.h - Tag and rematerialize -----------*- C++ -*-===//
//
// The library behind joint-tag-recompute-policy, joint-remat and
// joint-activation-checkpoint: the checkpoint scope (transformer blocks,
// layer selection, region/exclude patterns), the tagging rules that write
// `policy` on forward joint.ops, and the rematerialization that clones
// tagged ops in front of their earliest backward consumer. Re-creates
// torchtitan graph_trainer's tag_with_memory_policy_pass +
// selective_activation_remat_pass.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_DIALECT_JOINT_TRANSFORMS_ACTIVATIONCHECKPOINT_H
#define JOINT_DIALECT_JOINT_TRANSFORMS_ACTIVATIONCHECKPOINT_H

#include "joint/Dialect/Joint/IR/JointOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>
#include <string>

namespace mlir {
namespace joint {

class StorageAliasAnalysis;

/// `mode` of the activation-checkpoint passes (ActivationCheckpointConfig).
enum class CheckpointMode { off, full, selective };

/// The user-facing knobs, shared by the tag pass and the combined pass.
struct CheckpointOptions {
  CheckpointMode mode = CheckpointMode::full;
  /// Select the first N blocks in flattened order; std::nullopt = all.
  std::optional<int64_t> layerCount;
  /// Select these flattened block indices; empty = not given.
  SmallVector<int64_t> layerIndices;
  /// Glob patterns on module FQNs narrowing the selected blocks.
  SmallVector<std::string> regionPatterns;
  /// Glob patterns on module FQNs whose subtrees stay saved.
  SmallVector<std::string> excludePatterns;
  /// Save forward all-gathers instead of replaying them in backward.
  bool saveForwardAllGather = false;
  /// Let RNG ops follow the mode like any op: a recomputed RNG op replays
  /// its original's draw (kReplayRandomAttr). Off: RNG results stay saved.
  bool replayRandom = false;
};

/// Unit attribute the tag pass puts on a graph tagged with replay-random:
/// its RNG ops may carry recompute policies, which joint-remat then honours
/// (a clone keeps `recomputed_from`, by which the lowering and
/// joint_mlir.fx replay the original's draw).
inline constexpr llvm::StringLiteral kReplayRandomAttr = "joint.replay_random";

/// What tagging did, for statistics and the summary remark.
struct TagSummary {
  /// Blocks found (joint.model or the module-stack fallback) / selected.
  unsigned numBlocks = 0;
  unsigned numSelectedBlocks = 0;
  /// True when some block was selected and the scope holds at least one op.
  bool scopeMatched = false;
  /// Forward ops carrying each policy after tagging.
  unsigned numMustSave = 0;
  unsigned numMustRecompute = 0;
  unsigned numPreferRecompute = 0;
};

/// Writes `policy` on the forward joint.ops of `graph` (docs/passes.md,
/// "Activation checkpointing"). Emits a diagnostic naming the option or the
/// node and returns failure on invalid options, a missing scope, or a
/// must_recompute request on a random or in-place op. mode=off changes
/// nothing. O(#ops + #uses) after the O(#distinct module stacks) scope work.
FailureOr<TagSummary> tagRecomputePolicy(GraphOp graph,
                                         const StorageAliasAnalysis &aliases,
                                         const CheckpointOptions &options);

/// What rematerialization did.
struct RematSummary {
  unsigned numClones = 0;
  unsigned numErased = 0;
  unsigned numReloadsMoved = 0;
  /// Backward size queries of forward tensors moved into the forward.
  unsigned numSizeQueriesHoisted = 0;
  /// Forward ops carrying a recompute policy (must/prefer_recompute).
  unsigned numTagged = 0;
  /// The graph already held clones (`recomputed_from`) before this run.
  bool alreadyRematerialized = false;
};

/// Makes every backward size query (OpSet::SizeQuery: sym_size, sym_stride,
/// sym_numel, sym_storage_offset) of a tensor produced by a forward op read
/// the SymInt computed in the forward: an equal forward query of the same
/// tensor, else the query itself moved right after the producer. The
/// tensor is then neither saved, offloaded nor recomputed for its size.
/// Returns the number of backward queries replaced or moved. O(#ops).
unsigned readForwardSizes(GraphOp graph);

/// Runs readForwardSizes, then clones every forward op tagged
/// must/prefer_recompute that the backward
/// consumes (directly or through other tagged ops) right before its earliest
/// backward consumer, redirects the backward consumers and erases originals
/// left without users. Operands that were offloaded (ao.offload ... reload
/// chain) are read from the reload's wait, moved before the clone when
/// needed. Fails before any rewrite (only readForwardSizes has run) with a
/// diagnostic naming the node when a tagged op is random or touches mutated
/// storage, or a clone would read a reload issued after it. O(#ops + #uses).
FailureOr<RematSummary> rematerialize(GraphOp graph,
                                      const StorageAliasAnalysis &aliases);

/// What joint-remat decided (which producers are cloned before which
/// backward op, the reload chains clones read), built before any rewrite;
/// and what applying it has made so far (clones, fresh names and ids).
struct RematPlan;
struct RematClones;

/// The applier of recompute tags: one pattern rooted at a backward
/// joint.call_function that the plan makes the earliest backward reader of
/// tagged producers; it clones them before it (forward order) and redirects
/// every backward reader of them. Meant for walkAndApplyPatterns in program
/// order; `plan` and `aliases` are read only.
void populateRematerializationPatterns(RewritePatternSet &patterns,
                                       const RematPlan &plan,
                                       const StorageAliasAnalysis &aliases,
                                       RematClones &made);

/// The FX-style name of a checkpoint mode ("off", "full", "selective").
StringRef stringifyCheckpointMode(CheckpointMode mode);

} // namespace joint
} // namespace mlir

#endif // JOINT_DIALECT_JOINT_TRANSFORMS_ACTIVATIONCHECKPOINT_H

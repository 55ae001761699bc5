//===- ModelStructure.h - Blocks and attention modules ----------*- C++ -*-===//
//
// Where the transformer blocks and attention modules of a joint graph are,
// and which of them each op runs in. Blocks come from the graph attribute
// `joint.model` (`block_containers`, written by the exporter, verified by
// the dialect), else from module-stack paths `<container>.<int>`. Attention
// modules are the `joint.model` `attention` entries, every module named
// `self_attn`, and every module that owns an attention computation: any
// scaled-dot-product-attention variant, or the eager pattern
// bmm/matmul -> softmax -> bmm/matmul (GPT-NeoX, BERT, T5, ViT). One
// analysis for the checkpoint scope, the offload scope and the memory
// model's per-block breakdown.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_ANALYSIS_MODELSTRUCTURE_H
#define JOINT_ANALYSIS_MODELSTRUCTURE_H

#include "joint/Dialect/Joint/IR/JointOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace joint {

/// Blocks and attention modules of one joint.graph. Built in
/// O(#ops + #distinct module stacks * stack depth); per-op queries are
/// memoized per module-stack attribute (stacks are uniqued).
class ModelStructure {
public:
  /// Where an op sits relative to the attention modules.
  enum class Place {
    /// No module frame besides the root module (autograd accumulation and
    /// other unlabeled ops).
    Unlabeled,
    /// In a module outside every attention module.
    Outside,
    /// Inside an attention module.
    Inside,
  };

  /// `op` is a joint.graph or a module holding one (the first).
  explicit ModelStructure(Operation *op);

  GraphOp getGraph() const { return graph; }

  /// Blocks in model (flattened) order.
  ArrayRef<std::string> getBlocks() const { return blocks; }
  /// "model" (joint.model block_containers), "module-stack" (frames
  /// `<container>.<int>`) or "none".
  StringRef getBlockSource() const { return blockSource; }
  /// Index into getBlocks() of the block `op` runs in (innermost frame
  /// inside a block, longest block prefix); std::nullopt outside blocks.
  std::optional<unsigned> getBlockIndex(CallFunctionOp op);
  /// The longest of `fqn` and its dotted prefixes that is a block, or "".
  StringRef findBlock(StringRef fqn) const {
    return findContaining(fqn, blockSet);
  }

  /// Attention modules, in first-appearance order (found on first use:
  /// block queries alone never pay for the search).
  ArrayRef<std::string> getAttentionModules() {
    findAttention();
    return attention;
  }
  /// The first transformer block that computes attention directly (no
  /// attention submodule), or "": such a block is no attention module.
  StringRef getBlockComputingAttention() {
    findAttention();
    return blockComputingAttention;
  }
  /// The outermost attention module `op` runs in, or "" (with `place`).
  StringRef getAttentionOf(CallFunctionOp op, Place *place = nullptr);

  /// The longest of `fqn` and its dotted prefixes found in `set`, or "".
  static StringRef findContaining(StringRef fqn, const llvm::StringSet<> &set);

  /// Calls `fn` with every module FQN on the stacks of forward ops of
  /// `graph`, each distinct stack visited once (stacks are uniqued
  /// attributes), outermost frame first, in op order: O(#ops + #distinct
  /// frames).
  static void forEachForwardModule(GraphOp graph,
                                   function_ref<void(StringRef)> fn);

private:
  void findBlocks();
  void findAttention();

  GraphOp graph;
  std::vector<std::string> blocks;
  llvm::StringMap<unsigned> blockIndex;
  llvm::StringSet<> blockSet;
  std::string blockSource = "none";
  bool attentionFound = false;
  std::string blockComputingAttention;
  std::vector<std::string> attention;
  llvm::StringSet<> attentionSet;
  llvm::DenseMap<Attribute, std::optional<unsigned>> blockCache;
  llvm::DenseMap<Attribute, std::pair<StringRef, Place>> attentionCache;
};

} // namespace joint
} // namespace mlir

#endif // JOINT_ANALYSIS_MODELSTRUCTURE_H

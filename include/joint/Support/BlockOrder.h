//===- BlockOrder.h - Stable topological order of a block -------*- C++ -*-===//
//
// Restores def-before-use order in a block after a rewrite placed new
// producers after some of their users, moving as little as possible.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_SUPPORT_BLOCKORDER_H
#define JOINT_SUPPORT_BLOCKORDER_H

#include "mlir/IR/Block.h"

namespace mlir {
namespace joint {

/// Reorders `block` so every op follows its operands' producers, moving an op
/// only when it must and then right after its last producer (unlike
/// mlir::sortTopologically, which defers it past every op ready in a sweep).
/// False when the block has a cycle. O(ops + operands).
bool sortBlockStably(Block &block);

} // namespace joint
} // namespace mlir

#endif // JOINT_SUPPORT_BLOCKORDER_H

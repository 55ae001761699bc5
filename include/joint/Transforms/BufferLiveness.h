//===- BufferLiveness.h - Last use of a buffer and its aliases --*- C++ -*-===//
//
// One answer, shared by every target, to "after which op of this block is a
// buffer dead?" on bufferized IR: `joint-free-at-last-use` (both targets)
// places frees with it, and `joint-gpu-device-memory` places `gpu.dealloc`.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_TRANSFORMS_BUFFERLIVENESS_H
#define JOINT_TRANSFORMS_BUFFERLIVENESS_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
namespace joint {

/// Unit attribute on an op (a runtime call) that starts an asynchronous read
/// of the buffers whose pointers it takes: they stay in use up to the first
/// op that uses the op's first result (the read's completion, e.g. the
/// forward wait of an offload copy).
inline constexpr llvm::StringLiteral kReadsUntilResultUseAttr =
    "joint.reads_until_result_use";

/// The last op of `block` (an op of `block` itself, the ancestor of the
/// actual user) that uses `buffer` or a memref derived from it: any result
/// of memref type of an op that takes it (views, casts, subviews, region
/// results), transitively; a pointer taken with
/// `memref.extract_aligned_pointer_as_index` counts through index and
/// int-to-pointer casts, extended by kReadsUntilResultUseAttr. `ignore` is
/// not a use (the free being placed). Null when nothing uses it. Sets
/// `escapes` when an alias reaches a `func.return` or is used outside
/// `block` (no op of `block` encloses the user): then no op of `block` is
/// safe to free it after. O(uses of the aliases).
Operation *findLastUseInBlock(Value buffer, Block &block, bool &escapes,
                              Operation *ignore = nullptr);

} // namespace joint
} // namespace mlir

#endif // JOINT_TRANSFORMS_BUFFERLIVENESS_H

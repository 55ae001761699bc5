//===- TensorMeta.h - One query API for per-value tensor facts --*- C++ -*-===//
//
// Passes read dtype, sizes, strides, storage offset, device and storage
// identity of any SSA value through these helpers instead of re-parsing
// attributes: op results (`result_meta`), graph arguments (`joint.meta`) and
// ao results (forwarded from their source).
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_DIALECT_JOINT_IR_TENSORMETA_H
#define JOINT_DIALECT_JOINT_IR_TENSORMETA_H

#include "joint/Dialect/Joint/IR/JointOps.h"
#include <optional>

namespace mlir {
namespace joint {

/// MLIR element type of a torch dtype: float32 -> f32, bfloat16 -> bf16,
/// int8..int64 -> i8..i64 (signless), uint8..uint64 -> ui8..ui64, bool -> i1,
/// float8_* -> f8E*, complex64 -> complex<f32>.
Type getElementType(MLIRContext *context, ScalarType dtype);

/// torch dtype of an MLIR element type; std::nullopt for types torch lacks.
std::optional<ScalarType> getScalarType(Type elementType);

/// Bytes per element of `dtype` (torch's element_size()).
int64_t getElementBytes(ScalarType dtype);

/// Tensor facts of `value`; null when none were recorded.
TensorMetaAttr getTensorMeta(Value value);

/// Storage id of `value`; std::nullopt when unknown.
std::optional<int64_t> getStorageId(Value value);

/// After a rewrite made ops read `value` instead of a value recorded in
/// storage `oldId` (a recompute clone read instead of its original): every
/// result of `value`'s users recorded in `oldId` (a view or in-place result
/// of what they read) takes `value`'s storage id, and so on through their
/// users, so views follow the allocation they view. O(#users reached).
void followStorage(Value value, int64_t oldId);

/// Bytes of `value`'s elements (numel * element size) from trace-time hints,
/// falling back to the static type; std::nullopt when a size has no hint.
std::optional<int64_t> getNumBytesHint(Value value);

} // namespace joint
} // namespace mlir

#endif // JOINT_DIALECT_JOINT_IR_TENSORMETA_H

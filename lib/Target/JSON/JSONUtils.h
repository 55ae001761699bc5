//===- JSONUtils.h - Helpers of the JSON importer/exporter ------*- C++ -*-===//
//
// Generic JSON <-> attribute conversion for graph-level metadata that passes
// do not interpret (producer, symbols, model structure), kept losslessly.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_LIB_TARGET_JSON_JSONUTILS_H
#define JOINT_LIB_TARGET_JSON_JSONUTILS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/MLIRContext.h"
#include <nlohmann/json.hpp>

namespace mlir {
namespace joint {
namespace json_detail {

using json = nlohmann::json;

/// Graph attributes the importer sets and the exporter reads.
inline constexpr llvm::StringLiteral kFormatMinorAttr = "joint.format_minor";
inline constexpr llvm::StringLiteral kProducerAttr = "joint.producer";
inline constexpr llvm::StringLiteral kBackwardTagsAttr = "joint.backward_tags";
inline constexpr llvm::StringLiteral kSymbolsAttr = "joint.symbols";
inline constexpr llvm::StringLiteral kOutputNameAttr = "joint.output_name";
/// Argument attributes: the placeholder's node name, requires_grad.
inline constexpr llvm::StringLiteral kNodeNameAttr = "joint.name";
inline constexpr llvm::StringLiteral kRequiresGradAttr = "joint.requires_grad";
/// Maximum nesting of lists inside one argument; deeper input is rejected.
inline constexpr int kMaxValueDepth = 64;

/// Lossless JSON -> attribute: object -> dictionary, array -> array, string,
/// i64, f64, bool, and null -> unit. Returns null past kMaxValueDepth.
Attribute jsonToAttr(MLIRContext *ctx, const json &value, int depth = 0);
/// The inverse of jsonToAttr.
json attrToJson(Attribute attr);

} // namespace json_detail
} // namespace joint
} // namespace mlir

#endif // JOINT_LIB_TARGET_JSON_JSONUTILS_H

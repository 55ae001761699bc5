//===- NamedDiagnostics.h - Diagnostics that name their node ----*- C++ -*-===//
//
// A diagnostic on an imported node (or on the graph) is located at that
// object in the JSON document; ExcerptDiagnostics then names the object
// (`node 'x': ` before the excerpt, ` (graph 'g')` after the message) so
// that the reader knows which one it is. Most emitters about a node name it
// in their message already ("node 'x' (/nodes/3): ...", "'aten::mm.default'
// (node 'mm')"): they say so in the Diagnostic's metadata, never in its text,
// and the handler names the object only when the diagnostic does not.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_SUPPORT_NAMEDDIAGNOSTICS_H
#define JOINT_SUPPORT_NAMEDDIAGNOSTICS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
namespace joint {

/// The key of the metadata entry markNamed adds: a one-entry dictionary
/// {joint.names = "<name>"}.
inline constexpr llvm::StringLiteral kNamesMetadataKey = "joint.names";

/// Records in `diag`'s metadata that its message names the node (or graph)
/// `name`; a no-op for an empty name. Returns `diag`.
inline Diagnostic &markNamed(Diagnostic &diag, StringRef name) {
  if (name.empty())
    return diag;
  MLIRContext *context = diag.getLocation()->getContext();
  NamedAttribute entry(StringAttr::get(context, kNamesMetadataKey),
                       StringAttr::get(context, name));
  diag.getMetadata().push_back(
      DiagnosticArgument(DictionaryAttr::get(context, entry)));
  return diag;
}

/// markNamed on an in-flight diagnostic (nothing when it is inactive).
inline InFlightDiagnostic &markNamed(InFlightDiagnostic &diag, StringRef name) {
  if (Diagnostic *d = diag.getUnderlyingDiagnostic())
    markNamed(*d, name);
  return diag;
}

/// markNamed on a temporary, for `return markNamed(op.emitError(), n) << ..`.
inline InFlightDiagnostic &&markNamed(InFlightDiagnostic &&diag,
                                      StringRef name) {
  markNamed(diag, name);
  return std::move(diag);
}

/// Whether markNamed recorded that `diag`'s message names `name`.
inline bool isNamed(Diagnostic &diag, StringRef name) {
  return !name.empty() &&
         llvm::any_of(diag.getMetadata(), [&](const DiagnosticArgument &arg) {
           if (arg.getKind() !=
               DiagnosticArgument::DiagnosticArgumentKind::Attribute)
             return false;
           auto dict = dyn_cast<DictionaryAttr>(arg.getAsAttribute());
           auto named =
               dict ? dict.getAs<StringAttr>(kNamesMetadataKey) : StringAttr();
           return named && named.getValue() == name;
         });
}

} // namespace joint
} // namespace mlir

#endif // JOINT_SUPPORT_NAMEDDIAGNOSTICS_H

//===- ToolDiagnostics.h - Location-less errors as tool errors --*- C++ -*-===//
//
// An error with no location is about the command line (a pass option, the
// pipeline text), not the input: passes report option errors that way, once,
// before any graph is read. SourceMgr's handler would print it as
// `<unknown>:0: error: ...`; the drivers print it as their own errors are
// printed, `joint-opt: error: <pass>: <option> ...`, like a bad option that
// the driver itself rejects.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_SUPPORT_TOOLDIAGNOSTICS_H
#define JOINT_SUPPORT_TOOLDIAGNOSTICS_H

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir {
namespace joint {

/// Registers on `context` a handler that prints each diagnostic located at
/// an UnknownLoc (and its notes) as `<tool>: <severity>: <message>` on `os`,
/// each distinct text once; every other diagnostic goes on to the handlers
/// registered before it.
void registerToolDiagnostics(MLIRContext *context, StringRef tool,
                             raw_ostream &os = llvm::errs());

} // namespace joint
} // namespace mlir

#endif // JOINT_SUPPORT_TOOLDIAGNOSTICS_H

//===- ToolHelp.h - A short --help for the joint tools ----------*- C++ -*-===//
//
// LLVM's libraries register hundreds of code-generation flags at static
// initialization, which every tool's --help then lists before its own
// options. The tools record the options registered before main and hide
// those from --help (not from parsing; --help-hidden lists them all).
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_SUPPORT_TOOLHELP_H
#define JOINT_SUPPORT_TOOLHELP_H

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"

namespace mlir {
namespace joint {

/// The names of the command-line options registered so far: called first in
/// main, before MLIR registers its options, these are the static ones.
llvm::StringSet<> getRegisteredOptionNames();

/// Hides from --help the options named in `registeredBefore`, except the
/// help and version flags and the options in `toolCategory` (a tool's own
/// static options). Parsing is unchanged; --help-hidden lists them all.
void hideLibraryOptions(const llvm::StringSet<> &registeredBefore,
                        const llvm::cl::OptionCategory *toolCategory = nullptr);

} // namespace joint
} // namespace mlir

#endif // JOINT_SUPPORT_TOOLHELP_H

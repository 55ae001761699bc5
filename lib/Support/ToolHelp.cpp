//===- ToolHelp.cpp - A short --help for the joint tools ------------------===//
//
// Hides the statically registered library options from --help (see
// ToolHelp.h): each keeps parsing and stays listed by --help-hidden.
//
//===----------------------------------------------------------------------===//

#include "joint/Support/ToolHelp.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;

llvm::StringSet<> joint::getRegisteredOptionNames() {
  llvm::StringSet<> names;
  for (auto &entry : llvm::cl::getRegisteredOptions())
    names.insert(entry.first);
  return names;
}

void joint::hideLibraryOptions(const llvm::StringSet<> &registeredBefore,
                               const llvm::cl::OptionCategory *toolCategory) {
  for (auto &[name, option] : llvm::cl::getRegisteredOptions()) {
    if (!registeredBefore.contains(name) ||
        option->getOptionHiddenFlag() != llvm::cl::NotHidden ||
        llvm::is_contained(
            {"help", "help-list", "help-hidden", "help-list-hidden", "version"},
            name))
      continue;
    if (toolCategory && llvm::is_contained(option->Categories, toolCategory))
      continue;
    option->setHiddenFlag(llvm::cl::Hidden);
  }
}

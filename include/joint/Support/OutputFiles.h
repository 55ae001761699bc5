//===- OutputFiles.h - Files passes write, kept only on success -*- C++ -*-===//
//
// A pass that writes a file of its own (joint-memory-report's `output=`)
// opens it with openPassOutputFile. Under a driver that owns a
// DeferredOutputFiles for the pass's context (joint-opt, joint-compile,
// joint_mlir.run_pipeline) the pass writes a temporary next to the target,
// and the driver renames every temporary into place only when the whole run
// succeeded, or removes them all: a failing run leaves no report behind, the
// rule `-o` follows for the IR. The driver also protects its own files (the
// input, -o): a pass asked to write one of them fails naming both, as the
// rename would replace it. Two passes writing one path: the last wins, as
// when written directly. Anywhere else (a plain PassManager) the file is
// written when the pass keeps it.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_SUPPORT_OUTPUTFILES_H
#define JOINT_SUPPORT_OUTPUTFILES_H

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/ToolOutputFile.h"
#include <memory>
#include <mutex>
#include <string>

namespace mlir {
namespace joint {

/// The files the passes of one driver run wrote, as (temporary, target)
/// pairs in the order the passes kept them. A driver attaches it to every
/// context its passes run in, calls commit() after the run succeeded, and
/// lets it go out of scope otherwise (the temporaries are removed).
class DeferredOutputFiles {
public:
  DeferredOutputFiles() = default;
  DeferredOutputFiles(const DeferredOutputFiles &) = delete;
  DeferredOutputFiles &operator=(const DeferredOutputFiles &) = delete;
  /// Removes the temporaries not committed and detaches from every context.
  ~DeferredOutputFiles();

  /// Passes running in `context` write through this object from now on.
  void attach(MLIRContext *context);
  /// Renames each temporary onto its target, in order (a later file to the
  /// same path wins, as when written directly). On a failed rename, sets
  /// `error` (naming the target), removes the remaining temporaries and
  /// fails; the files renamed before stay.
  LogicalResult commit(std::string &error);

  /// The object attached to `context`, or null.
  static DeferredOutputFiles *lookup(MLIRContext *context);
  /// No pass may write `path` ("-" and "" are ignored), described in errors
  /// as `role` (e.g. "the -o output file"): the driver's input and outputs.
  void protect(StringRef path, StringRef role);
  /// "<role> '<path>'" of the protected path that is the same file as
  /// `path` (llvm::sys::fs::equivalent when both exist, else equal
  /// normalized real paths), or "" when none is. An existing path that is no
  /// regular file (/dev/null) is never the same: writing it loses nothing.
  std::string findProtected(StringRef path);
  /// Records a kept temporary to be renamed onto `target` at commit.
  void add(StringRef temporary, StringRef target);

private:
  void discard();

  std::mutex mutex; // passes on several graphs may keep files at once
  SmallVector<std::pair<std::string, std::string>> files;
  SmallVector<std::pair<std::string, std::string>> protectedPaths; // role
  SmallVector<MLIRContext *> contexts;
};

/// A file a pass writes: `os()` to write, `keep()` when the pass succeeded.
/// Without keep() (an error after opening) nothing is left on disk.
class PassOutputFile {
public:
  /// `file` is open on `temporary`, to be renamed onto `target` at
  /// `deferred`'s commit; without `deferred`, on `target` itself.
  PassOutputFile(std::unique_ptr<llvm::ToolOutputFile> file,
                 DeferredOutputFiles *deferred, StringRef temporary,
                 StringRef target)
      : file(std::move(file)), deferred(deferred), temporary(temporary),
        target(target) {}
  /// Closes the file; a kept temporary is removed if the process is killed
  /// before the driver commits or discards it.
  ~PassOutputFile();
  raw_ostream &os() { return file->os(); }
  /// Flushes; the file is the target's content at commit (deferred) or now.
  /// Fails, setting `error` and keeping nothing, when a write failed (a
  /// full disk).
  LogicalResult keep(std::string &error);

private:
  std::unique_ptr<llvm::ToolOutputFile> file;
  DeferredOutputFiles *deferred;
  std::string temporary, target;
  bool kept = false;
};

/// Whether writing `a` would replace the regular file `b` (or the reverse):
/// llvm::sys::fs::equivalent when both exist, else equal normalized paths.
bool isSameFile(StringRef a, StringRef b);

/// Opens `path` for a pass running in `context` ("-" is stdout; it, and a
/// path that exists but is not a regular file, e.g. /dev/null or a symbolic
/// link, are written in place, never deferred). Returns null and sets `error`
/// when the file (or, deferred, a temporary in its directory) cannot be
/// created, or when it is a file the driver protects (its input or -o).
std::unique_ptr<PassOutputFile>
openPassOutputFile(MLIRContext *context, StringRef path, std::string &error);

} // namespace joint
} // namespace mlir

#endif // JOINT_SUPPORT_OUTPUTFILES_H

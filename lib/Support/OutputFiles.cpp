//===- OutputFiles.cpp - Files passes write, kept only on success ---------===//
//
// The process-wide map from MLIR contexts to the DeferredOutputFiles of the
// driver running passes in them, and the temporaries behind PassOutputFile:
// created next to the target (so that the rename at commit stays on one
// file system and is atomic), renamed at commit, removed otherwise. Targets
// that are not regular files (/dev/null, a pipe, a symbolic link) are written
// in place, as a rename would replace the node itself. A target that is a
// file the driver protects (its input, its -o) is refused before anything
// is created.
//
//===----------------------------------------------------------------------===//

#include "joint/Support/OutputFiles.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"

using namespace mlir;
using namespace mlir::joint;

namespace {

/// Contexts to the driver object attached to them.
struct Registry {
  std::mutex mutex;
  llvm::DenseMap<MLIRContext *, DeferredOutputFiles *> attached;
};

Registry &registry() {
  static Registry instance;
  return instance;
}

/// `path` absolute, without `.`/`..`, its directory's symbolic links
/// resolved when the directory exists (the file itself may not yet).
std::string normalizedPath(StringRef path) {
  SmallString<256> absolute(path);
  llvm::sys::fs::make_absolute(absolute);
  llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
  SmallString<256> real;
  if (llvm::sys::fs::real_path(llvm::sys::path::parent_path(absolute), real))
    return absolute.str().str();
  llvm::sys::path::append(real, llvm::sys::path::filename(absolute));
  return real.str().str();
}

} // namespace

bool joint::isSameFile(StringRef a, StringRef b) {
  bool existsA = llvm::sys::fs::exists(a), existsB = llvm::sys::fs::exists(b);
  if (existsA != existsB)
    return false;
  if (!existsA)
    return normalizedPath(a) == normalizedPath(b);
  bool same = false;
  return llvm::sys::fs::is_regular_file(a) &&
         !llvm::sys::fs::equivalent(a, b, same) && same;
}

DeferredOutputFiles::~DeferredOutputFiles() {
  discard();
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (MLIRContext *context : contexts) {
    auto it = r.attached.find(context);
    if (it != r.attached.end() && it->second == this)
      r.attached.erase(it);
  }
}

void DeferredOutputFiles::attach(MLIRContext *context) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.attached[context] = this;
  contexts.push_back(context);
}

DeferredOutputFiles *DeferredOutputFiles::lookup(MLIRContext *context) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.attached.lookup(context);
}

void DeferredOutputFiles::protect(StringRef path, StringRef role) {
  if (path.empty() || path == "-")
    return;
  std::lock_guard<std::mutex> lock(mutex);
  protectedPaths.emplace_back(path.str(), role.str());
}

std::string DeferredOutputFiles::findProtected(StringRef path) {
  std::lock_guard<std::mutex> lock(mutex);
  for (auto &[other, role] : protectedPaths)
    if (isSameFile(path, other))
      return role + " '" + other + "'";
  return "";
}

void DeferredOutputFiles::add(StringRef temporary, StringRef target) {
  std::lock_guard<std::mutex> lock(mutex);
  files.emplace_back(temporary.str(), target.str());
}

LogicalResult DeferredOutputFiles::commit(std::string &error) {
  std::lock_guard<std::mutex> lock(mutex);
  for (size_t i = 0; i < files.size(); ++i) {
    auto &[temporary, target] = files[i];
    if (std::error_code ec = llvm::sys::fs::rename(temporary, target)) {
      error = "cannot write '" + target + "': " + ec.message();
      files.erase(files.begin(), files.begin() + i);
      return failure(); // the rest are removed by the destructor
    }
    llvm::sys::DontRemoveFileOnSignal(temporary);
  }
  files.clear();
  return success();
}

void DeferredOutputFiles::discard() {
  std::lock_guard<std::mutex> lock(mutex);
  for (auto &[temporary, target] : files) {
    llvm::sys::fs::remove(temporary);
    llvm::sys::DontRemoveFileOnSignal(temporary);
  }
  files.clear();
}

PassOutputFile::~PassOutputFile() {
  file.reset(); // closes; removes the file unless kept
  if (kept && deferred)
    llvm::sys::RemoveFileOnSignal(temporary);
}

LogicalResult PassOutputFile::keep(std::string &error) {
  llvm::raw_fd_ostream &os = file->os();
  os.flush();
  if (std::error_code ec = os.error()) {
    error = ec.message();
    os.clear_error(); // else the stream aborts the process when it closes
    return failure();
  }
  file->keep();
  kept = true;
  if (deferred)
    deferred->add(temporary, target);
  return success();
}

std::unique_ptr<PassOutputFile>
mlir::joint::openPassOutputFile(MLIRContext *context, StringRef path,
                                std::string &error) {
  DeferredOutputFiles *deferred =
      path == "-" ? nullptr : DeferredOutputFiles::lookup(context);
  if (deferred) {
    std::string owner = deferred->findProtected(path);
    if (!owner.empty()) {
      error = "it is the same file as " + owner +
              "; write the report to another path";
      return nullptr;
    }
  }
  // Only a regular file (or a new one) is replaced by a rename: a device
  // (/dev/null), pipe or symbolic link is written in place.
  llvm::sys::fs::file_status status;
  if (deferred && !llvm::sys::fs::status(path, status, /*Follow=*/false) &&
      status.type() != llvm::sys::fs::file_type::regular_file)
    deferred = nullptr;
  if (!deferred) {
    std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(path, &error);
    if (!file)
      return nullptr;
    return std::make_unique<PassOutputFile>(std::move(file), nullptr, path,
                                            path);
  }
  int fd = -1;
  SmallString<128> temporary;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(path + "-%%%%%%.tmp",
                                                           fd, temporary)) {
    error = ec.message();
    return nullptr;
  }
  auto file = std::make_unique<llvm::ToolOutputFile>(temporary, fd);
  return std::make_unique<PassOutputFile>(std::move(file), deferred, temporary,
                                          path);
}

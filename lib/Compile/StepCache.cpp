//===- StepCache.cpp - Where compiled steps are kept ----------------------===//
//
// The step cache's key and store (StepCache.h); the one definition of the
// key, which joint-compile and joint_mlir._core.step_cache_key share.
//
//===----------------------------------------------------------------------===//

#include "joint/Compile/StepCache.h"
#include "joint/Compile/Compile.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <sys/utsname.h>

using namespace mlir;
using namespace mlir::joint;

std::string mlir::joint::getStepCacheKey(StringRef input,
                                         const CompileOptions &options,
                                         StringRef compiler) {
  std::string compilerId = compiler.str();
  SmallString<256> real;
  if (!llvm::sys::fs::real_path(compiler, real))
    compilerId = real.str().str();
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(compilerId, status)) {
    auto mtime = std::chrono::duration_cast<std::chrono::nanoseconds>(
        status.getLastModificationTime().time_since_epoch());
    compilerId += ":" + std::to_string(status.getSize()) + ":" +
                  std::to_string(mtime.count());
  }
  struct utsname host = {};
  uname(&host);
  std::string level = "O" + std::to_string(options.optLevel);
  StringRef parts[] = {input,
                       options.pipeline,
                       options.loweringOptions,
                       options.target,
                       level,
                       compilerId,
                       host.machine,
                       host.nodename};
  llvm::SHA256 key;
  for (StringRef part : parts)
    key.update(llvm::SHA256::hash(llvm::arrayRefFromStringRef(part)));
  return llvm::toHex(key.final(), /*LowerCase=*/true).substr(0, 32);
}

std::string mlir::joint::getStepCacheDir() {
  if (std::optional<std::string> env =
          llvm::sys::Process::GetEnv("JOINT_MLIR_CACHE"))
    return *env;
  SmallString<256> dir;
  if (!llvm::sys::path::home_directory(dir))
    return "";
  llvm::sys::path::append(dir, ".cache", "joint_mlir");
  return dir.str().str();
}

void mlir::joint::storeInStepCache(StringRef key, StringRef library,
                                   StringRef descriptor) {
  SmallString<256> dir(getStepCacheDir());
  if (dir.empty())
    return;
  llvm::sys::path::append(dir, key);
  SmallString<256> lib(dir), desc(dir), realLib, realOut;
  llvm::sys::path::append(lib, "step.so");
  desc = lib;
  desc += ".json";
  if (!llvm::sys::fs::real_path(lib, realLib) &&
      !llvm::sys::fs::real_path(library, realOut) && realLib == realOut)
    return; // compiled into the cache already
  auto warn = [&](const Twine &what, std::error_code ec) {
    llvm::errs() << "joint-compile: warning: not cached in " << dir << ": "
                 << what << ": " << ec.message() << "\n";
  };
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return warn("mkdir", ec);
  for (auto [from, to] : {std::pair<StringRef, StringRef>(library, lib),
                          std::pair<StringRef, StringRef>(descriptor, desc)}) {
    SmallString<256> temp;
    int fd;
    if (std::error_code ec =
            llvm::sys::fs::createUniqueFile(to + ".%%%%%%%%", fd, temp))
      return warn(to, ec);
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
    std::error_code ec = llvm::sys::fs::copy_file(from, temp);
    if (!ec)
      ec = llvm::sys::fs::rename(temp, to);
    if (ec) {
      llvm::sys::fs::remove(temp);
      return warn(to, ec);
    }
  }
}

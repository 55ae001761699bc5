//===- StepCache.h - Where compiled steps are kept --------------*- C++ -*-===//
//
// The step cache: every library joint-compile builds is also kept under
// `<cache>/<key>/step.so` (+ `step.so.json`), where `<cache>` is
// $JOINT_MLIR_CACHE (default ~/.cache/joint_mlir) and `<key>` depends on
// everything the library does. joint-compile stores; python's
// joint_mlir.mlir_cpu.compile_graph looks up, with the key computed here
// (joint_mlir._core.step_cache_key).
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_COMPILE_STEPCACHE_H
#define JOINT_COMPILE_STEPCACHE_H

#include "mlir/Support/LLVM.h"
#include <string>

namespace mlir {
namespace joint {

struct CompileOptions;

/// The step cache's key (32 hex digits) of compiling graph bytes `input`
/// with `options` by the compiler binary at `compiler`: SHA-256 over the
/// SHA-256 of each part, the parts being the input bytes, the pipeline, the
/// lowering options, the target, `O<level>`, "<compiler's real path>:<size
/// in bytes>:<mtime in ns>" and the host's machine and node names.
std::string getStepCacheKey(StringRef input, const CompileOptions &options,
                            StringRef compiler);

/// The cache directory: $JOINT_MLIR_CACHE, else ~/.cache/joint_mlir; empty
/// when neither is known.
std::string getStepCacheDir();

/// Copies `library` and `descriptor` to `<cache>/<key>/step.so(.json)`
/// (temporary names renamed last, the descriptor last: a reader takes an
/// entry only when both exist). A failure only warns on stderr.
void storeInStepCache(StringRef key, StringRef library, StringRef descriptor);

} // namespace joint
} // namespace mlir

#endif // JOINT_COMPILE_STEPCACHE_H

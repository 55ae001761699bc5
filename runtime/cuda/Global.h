//===- Global.h - The process-wide runtime behind the C ABI -----*- C++ -*-===//
//
// The C entry points (CApi.cpp, Blas.cpp) share one `Runtime` over the system
// driver and one lock; `GlobalLock` holds both for the duration of a call.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_RUNTIME_CUDA_GLOBAL_H
#define JOINT_RUNTIME_CUDA_GLOBAL_H

#include "Runtime.h"

#include <mutex>

namespace joint::cuda {

/// Locks the global runtime for one C call; recursive so that shims may call
/// other entry points. The runtime releases it while a thread waits for
/// others (Runtime::Unlocked).
class GlobalLock {
public:
  GlobalLock();
  ~GlobalLock();
  Runtime &operator*() const { return rt; }
  Runtime *operator->() const { return &rt; }

private:
  std::lock_guard<std::recursive_mutex> guard;
  Runtime &rt;
};

/// Destroy the library handles (and give back the cuBLAS workspaces) of
/// every device; called by joint_runtime_shutdown before the runtime shuts
/// down, with the lock held.
void shutdownBlas(Runtime &rt);
void shutdownDnn(Runtime &rt);

} // namespace joint::cuda

#endif // JOINT_RUNTIME_CUDA_GLOBAL_H

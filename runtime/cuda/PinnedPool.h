//===- PinnedPool.h - Page-locked host buffers pooled by size ---*- C++ -*-===//
//
// Host buffers for `ao` transfers. A fresh `cuMemHostAlloc` costs
// milliseconds (torch's activation offloading measures about 3 ms), so
// released buffers are kept and handed out again to requests of exactly the
// same byte size, as torch pools its pinned buffers by numel and dtype.
// Buffers are allocated portable (usable from every context) and freed only
// by `trim`.
//
//===----------------------------------------------------------------------===//

#ifndef JOINT_RUNTIME_CUDA_PINNEDPOOL_H
#define JOINT_RUNTIME_CUDA_PINNEDPOOL_H

#include "Driver.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace joint::cuda {

/// Counters of a pool; all sizes in bytes.
struct PinnedPoolStats {
  uint64_t inUseBytes = 0;       ///< handed out and not yet released
  uint64_t cachedBytes = 0;      ///< released, kept for reuse
  uint64_t peakBytes = 0;        ///< high-water mark of inUse + cached
  uint64_t freshAllocations = 0; ///< cuMemHostAlloc calls that succeeded
  uint64_t reuses = 0;           ///< acquisitions served from the cache
};

class PinnedPool {
public:
  explicit PinnedPool(const DriverApi &driver) : driver(driver) {}
  PinnedPool(const PinnedPool &) = delete;
  PinnedPool &operator=(const PinnedPool &) = delete;

  /// Sets `*out` to a pinned buffer of exactly `bytes` bytes (bytes > 0):
  /// a cached one of that size when there is one, else a fresh
  /// cuMemHostAlloc. Needs a current context; returns the driver's result.
  CUresult acquire(size_t bytes, void **out);
  /// Returns a buffer from `acquire` to the cache; false when `ptr` is not
  /// a buffer handed out by this pool (nothing changes then).
  bool release(void *ptr);
  /// Frees every cached buffer with cuMemFreeHost and returns the first
  /// failure; buffers still handed out are kept.
  CUresult trim();
  /// Size of a handed-out buffer, or 0 when `ptr` is not one.
  size_t sizeOf(void *ptr) const;

  const PinnedPoolStats &stats() const { return counters; }

private:
  const DriverApi &driver;
  std::unordered_map<size_t, std::vector<void *>> cache;
  std::unordered_map<void *, size_t> inUse;
  PinnedPoolStats counters;
};

} // namespace joint::cuda

#endif // JOINT_RUNTIME_CUDA_PINNEDPOOL_H

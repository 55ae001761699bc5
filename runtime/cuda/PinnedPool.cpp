//===- PinnedPool.cpp - Page-locked host buffers pooled by size -----------===//
//
// Exact-size reuse keeps the bookkeeping O(1) per transfer: offloaded
// activations of one model repeat a handful of sizes (one per layer kind), so
// a best-fit search would buy little and would pin more memory than asked.
//
//===----------------------------------------------------------------------===//

#include "PinnedPool.h"

#include <algorithm>

using namespace joint::cuda;

CUresult PinnedPool::acquire(size_t bytes, void **out) {
  *out = nullptr;
  if (bytes == 0)
    return CUDA_ERROR_INVALID_VALUE;
  auto it = cache.find(bytes);
  if (it != cache.end() && !it->second.empty()) {
    void *ptr = it->second.back();
    it->second.pop_back();
    counters.cachedBytes -= bytes;
    counters.inUseBytes += bytes;
    ++counters.reuses;
    inUse.emplace(ptr, bytes);
    *out = ptr;
    return CUDA_SUCCESS;
  }
  void *ptr = nullptr;
  CUresult result = driver.memHostAlloc(&ptr, bytes, CU_MEMHOSTALLOC_PORTABLE);
  if (result != CUDA_SUCCESS)
    return result;
  ++counters.freshAllocations;
  counters.inUseBytes += bytes;
  counters.peakBytes =
      std::max(counters.peakBytes, counters.inUseBytes + counters.cachedBytes);
  inUse.emplace(ptr, bytes);
  *out = ptr;
  return CUDA_SUCCESS;
}

bool PinnedPool::release(void *ptr) {
  auto it = inUse.find(ptr);
  if (it == inUse.end())
    return false;
  size_t bytes = it->second;
  inUse.erase(it);
  counters.inUseBytes -= bytes;
  counters.cachedBytes += bytes;
  cache[bytes].push_back(ptr);
  return true;
}

CUresult PinnedPool::trim() {
  CUresult first = CUDA_SUCCESS;
  for (auto &[bytes, buffers] : cache) {
    for (void *ptr : buffers) {
      CUresult result = driver.memFreeHost(ptr);
      if (result != CUDA_SUCCESS && first == CUDA_SUCCESS)
        first = result;
      counters.cachedBytes -= bytes;
    }
  }
  cache.clear();
  return first;
}

size_t PinnedPool::sizeOf(void *ptr) const {
  auto it = inUse.find(ptr);
  return it == inUse.end() ? 0 : it->second;
}

/*===- StepRuntime.c - The runtime linked into every compiled step --------===*\
|*                                                                            *|
|* The few helpers a step library needs besides libc and libm, linked        *|
|* statically into each step so it depends on system libraries only          *|
|* (docs/lowering.md, "ABI"):                                                *|
|* - the allocator finalize-memref-to-llvm{use-generic-functions} calls,     *|
|*   counting the live bytes and their high-water mark of the step running   *|
|*   on the calling thread;                                                  *|
|* - memrefCopy, the copy of strided views that memref.copy lowers to when a *|
|*   side is not contiguous.                                                 *|
|* Everything is hidden except the statistics entry points.                  *|
\*===----------------------------------------------------------------------===*/

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define JOINT_HIDDEN __attribute__((visibility("hidden")))
#define JOINT_EXPORT __attribute__((visibility("default")))

/* Bytes of step allocations live on this thread; bytes of the running
   step's outputs written so far (joint-cpu-count-outputs); the high-water
   mark of their sum since the last joint_step_runtime_begin. */
static _Thread_local int64_t liveBytes;
static _Thread_local int64_t outputBytes;
static _Thread_local int64_t peakBytes;

static void notePeak(void) {
  if (liveBytes + outputBytes > peakBytes)
    peakBytes = liveBytes + outputBytes;
}

/* Each block starts with a header before the aligned user pointer: the
   requested size and the pointer malloc returned. */
typedef struct {
  int64_t bytes;
  void *base;
} BlockHeader;

static void *allocate(size_t alignment, size_t bytes) {
  if (alignment < _Alignof(max_align_t))
    alignment = _Alignof(max_align_t);
  /* Room for the header and for moving the user pointer to `alignment`. */
  size_t room = sizeof(BlockHeader) + alignment - 1;
  char *base = malloc(bytes + room);
  if (!base)
    return NULL;
  uintptr_t user = ((uintptr_t)base + sizeof(BlockHeader) + alignment - 1) &
                   ~(uintptr_t)(alignment - 1);
  BlockHeader *header = (BlockHeader *)user - 1;
  header->bytes = (int64_t)bytes;
  header->base = base;
  liveBytes += (int64_t)bytes;
  notePeak();
  return (void *)user;
}

JOINT_HIDDEN void *_mlir_memref_to_llvm_alloc(size_t bytes) {
  return allocate(0, bytes);
}

JOINT_HIDDEN void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                      size_t bytes) {
  return allocate(alignment, bytes);
}

JOINT_HIDDEN void _mlir_memref_to_llvm_free(void *ptr) {
  if (!ptr)
    return;
  BlockHeader *header = (BlockHeader *)ptr - 1;
  liveBytes -= header->bytes;
  free(header->base);
}

/* Called by joint_step before the step body: the high-water mark starts
   again from the bytes live now (0 unless a step is running further up this
   thread's stack). */
JOINT_HIDDEN void joint_step_runtime_begin(void) {
  outputBytes = 0;
  peakBytes = liveBytes;
}

/* Called before the first op that writes an output buffer of `bytes`
   bytes: from there on the output counts towards the high-water mark, as
   the memory model counts a graph output from the op that produces it. */
JOINT_HIDDEN void joint_step_output_written(int64_t bytes) {
  outputBytes += bytes;
  notePeak();
}

/* The high-water mark of the last joint_step call on this thread, in bytes:
   its temporaries plus each output from the op that first writes it
   (caller-owned inputs are not counted). */
JOINT_EXPORT int64_t joint_step_peak_bytes(void) { return peakBytes; }

/* Bytes of step allocations live on this thread now: 0 after every
   joint_step call returned (a step frees all it allocates). */
JOINT_EXPORT int64_t joint_step_live_bytes(void) { return liveBytes; }

/* A ranked memref descriptor as MLIR lays it out: allocated and aligned
   pointers, offset, then `rank` sizes and `rank` strides (in elements). */
typedef struct {
  char *allocated;
  char *aligned;
  int64_t offset;
  int64_t sizesAndStrides[];
} RankedDescriptor;

typedef struct {
  int64_t rank;
  RankedDescriptor *descriptor;
} UnrankedMemRef;

/* memref.copy between views of any strides: elements of `elementBytes`
   bytes, in row-major order of the (equal) sizes. */
JOINT_HIDDEN void memrefCopy(int64_t elementBytes, UnrankedMemRef *source,
                             UnrankedMemRef *target) {
  int64_t rank = source->rank;
  const RankedDescriptor *src = source->descriptor;
  const RankedDescriptor *dst = target->descriptor;
  const int64_t *sizes = src->sizesAndStrides;
  const int64_t *srcStrides = src->sizesAndStrides + rank;
  const int64_t *dstStrides = dst->sizesAndStrides + rank;
  for (int64_t d = 0; d < rank; ++d)
    if (sizes[d] == 0)
      return;
  char *from = src->aligned + src->offset * elementBytes;
  char *to = dst->aligned + dst->offset * elementBytes;
  if (rank == 0) {
    memcpy(to, from, (size_t)elementBytes);
    return;
  }
  /* An odometer over the indices; the innermost dimension is a loop. */
  int64_t index[rank];
  memset(index, 0, sizeof(index));
  int64_t inner = rank - 1;
  for (;;) {
    int64_t srcOffset = 0, dstOffset = 0;
    for (int64_t d = 0; d < inner; ++d) {
      srcOffset += index[d] * srcStrides[d];
      dstOffset += index[d] * dstStrides[d];
    }
    if (srcStrides[inner] == 1 && dstStrides[inner] == 1) {
      memcpy(to + dstOffset * elementBytes, from + srcOffset * elementBytes,
             (size_t)(sizes[inner] * elementBytes));
    } else {
      for (int64_t i = 0; i < sizes[inner]; ++i)
        memcpy(to + (dstOffset + i * dstStrides[inner]) * elementBytes,
               from + (srcOffset + i * srcStrides[inner]) * elementBytes,
               (size_t)elementBytes);
    }
    int64_t d = inner - 1;
    while (d >= 0 && ++index[d] == sizes[d])
      index[d--] = 0;
    if (d < 0)
      return;
  }
}

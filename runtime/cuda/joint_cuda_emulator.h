/*===- joint_cuda_emulator.h - C ABI of the emulated CUDA device --*- C -*-===*\
|*                                                                            *|
|* With JOINT_CUDA_DEVICE=emulated, libjoint_cuda_runtime.so runs on an       *|
|* emulated device instead of libcuda: device memory is host memory, streams  *|
|* are worker threads, and a "module image" is a table of host-compiled       *|
|* kernels, laid out below. This header is the contract with the code that    *|
|* emits such tables (the CUDA lowering's emulation variant) and with tests.  *|
|* runtime/cuda/README.md, section "Emulated device", documents the rest.     *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef JOINT_CUDA_EMULATOR_H
#define JOINT_CUDA_EMULATOR_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Ids of one kernel invocation: one call per (block, thread) of the grid.
 * The threads of one block run one after another (x fastest) on one host
 * thread; blocks may run concurrently on several host threads. */
typedef struct JointEmuLaunch {
  uint32_t grid_dim[3];   /* gridDim.{x,y,z} */
  uint32_t block_dim[3];  /* blockDim.{x,y,z} */
  uint32_t block_idx[3];  /* blockIdx.{x,y,z} */
  uint32_t thread_idx[3]; /* threadIdx.{x,y,z} */
} JointEmuLaunch;

/* A host-compiled kernel: `params[i]` points to the value of argument i
 * (the cuLaunchKernel convention, values copied at launch time). */
typedef void (*JointEmuKernelFn)(void **params, const JointEmuLaunch *launch);

/* Kinds of kernel arguments, one character per argument in `param_kinds`:
 * a pointer read only, written only, or read and written (the conservative
 * default for a buffer), or a scalar of 1, 2, 4 or 8 bytes. */
#define JOINT_EMU_PARAM_READ 'r'
#define JOINT_EMU_PARAM_WRITE 'w'
#define JOINT_EMU_PARAM_READ_WRITE 'p'
/* Scalars: '1', '2', '4', '8' (bytes). */

/* Flags of a kernel that emulation refuses to launch (one host thread per
 * block runs its threads one after another, so nothing can wait for a
 * sibling thread). */
#define JOINT_EMU_KERNEL_USES_BARRIER 1u
#define JOINT_EMU_KERNEL_USES_SHARED_MEMORY 2u

typedef struct JointEmuKernel {
  const char *name; /* the gpu.func's symbol, as mgpuModuleGetFunction asks */
  JointEmuKernelFn fn;
  const char *param_kinds; /* one kind per argument, NUL-terminated */
  uint32_t flags;          /* JOINT_EMU_KERNEL_USES_* */
} JointEmuKernel;

/* The "module image" handed to mgpuModuleLoad / cuModuleLoadData in
 * emulation, where a cubin would be. */
#define JOINT_EMU_IMAGE_MAGIC 0x554D454Au /* "JEMU" little-endian */
#define JOINT_EMU_IMAGE_VERSION 1u
typedef struct JointEmuModuleImage {
  uint32_t magic;   /* JOINT_EMU_IMAGE_MAGIC */
  uint32_t version; /* JOINT_EMU_IMAGE_VERSION */
  uint64_t num_kernels;
  const JointEmuKernel *kernels;
} JointEmuModuleImage;

/* Counters of the emulated device; sizes in bytes. Device bytes are counted
 * when an allocation or free is enqueued (stream order). */
typedef struct JointEmuStats {
  uint64_t live_bytes;        /* device bytes allocated and not freed */
  uint64_t peak_bytes;        /* high-water mark of live_bytes */
  uint64_t quarantined_bytes; /* freed, poisoned, not yet given back */
  uint64_t allocations;
  uint64_t frees;
  uint64_t kernel_launches;
  uint64_t copies; /* memcpy of any direction */
  uint64_t memsets;
  uint64_t races; /* conflicting accesses with no ordering */
  uint64_t use_after_frees;
  uint64_t errors;           /* calls refused (bad range, double free, ...) */
  uint64_t tracked_accesses; /* accesses the race checker keeps now */
  uint64_t library_calls;    /* cuBLAS GEMM and cuDNN SDPA shim calls run by
                                their CPU references */
} JointEmuStats;

/* 1 when this process runs on the emulated device (JOINT_CUDA_DEVICE=
 * emulated), else 0. */
int32_t joint_emu_active(void);
/* Zeroes `stats` when not emulated. */
void joint_emu_get_stats(JointEmuStats *stats);

/* NCCL collectives (and send/receive groups) the emulated NCCL enqueued so
 * far, over all devices; 0 when not emulated. */
uint64_t joint_emu_collectives(void);

/* Copies (memcpy of any direction) enqueued so far on `stream`, e.g. the
 * runtime's transfer stream (joint_runtime_transfer_stream); -1 when not
 * emulated or `stream` is not a live emulated stream. */
int64_t joint_emu_stream_copies(void *stream);

/* Takes the device allocation starting at `ptr` (live, from cuMemAlloc*)
 * out of live_bytes until an operation enqueued later writes any of it,
 * when its whole size counts again (and may raise peak_bytes): a step's
 * caller-allocated output buffer then counts from its first write, as the
 * memory model counts a graph output. 0, or -1 when not emulated or `ptr`
 * starts no live device allocation not already taken out. */
int32_t joint_emu_count_from_first_write(void *ptr);

/* Declares one byte range [ptr, ptr + bytes) that the next kernel launched
 * by this thread reads (mode JOINT_EMU_READ), writes (JOINT_EMU_WRITE) or
 * both; once any is declared, the race checker uses exactly the declared
 * ranges for that launch instead of whole buffers from `param_kinds`. */
#define JOINT_EMU_READ 1
#define JOINT_EMU_WRITE 2
void joint_emu_declare_access(const void *ptr, uint64_t bytes, int32_t mode);

/* The simulated schedule (runtime/cuda/README.md, "Simulated schedule"):
 * what the program enqueues, placed on a simulated clock (never wall
 * time) in the program's own stream order, events, waits and host
 * synchronisations. Work (kernels, library calls, memsets, device-to-
 * device copies) takes its node's cost-model seconds, split evenly over
 * the node's work in the traced interval; a host<->device copy bytes /
 * link bandwidth; allocations and frees nothing. Times in seconds from
 * joint_emu_trace_start. */
typedef struct JointEmuTraceSummary {
  double step_seconds; /* end of the last operation, stall or host wait */
  /* time streams that run work stall on events recorded on other streams
   * (the compute stream waiting on a transfer) */
  double exposed_transfer_seconds;
  double work_seconds;     /* sum of the work's durations */
  double transfer_seconds; /* sum of the host<->device copies' durations */
  uint64_t operations;     /* operations traced */
  uint64_t uncosted_work;  /* work whose node has no cost (took 0 s) */
} JointEmuTraceSummary;

/* Starts a traced interval (clearing the previous one); host<->device
 * copies take bytes / `link_bytes_per_second` (joint-memory-report's
 * link-gbps times 1e9). Returns 0, or -1 (not emulated, or a bandwidth
 * that is not a positive number). JOINT_EMU_TRACE=path starts one at the
 * first driver call (JOINT_EMU_LINK_GBPS, default 55) and writes it to
 * `path` at exit. */
int32_t joint_emu_trace_start(double link_bytes_per_second);
/* The cost-model seconds of graph node `node` (as joint_runtime_set_node
 * and the ao calls name it); kept across intervals. -1 for a null node or
 * a negative or non-finite time, else 0. */
int32_t joint_emu_set_node_seconds(const char *node, double seconds);
/* Zeroes `summary` when not emulated or not tracing. */
void joint_emu_trace_summary(JointEmuTraceSummary *summary);
/* Writes the interval as Chrome trace JSON (Perfetto) to `path`; 0, or -1
 * (not emulated, not tracing, or the file cannot be written: the message
 * is printed to stderr). */
int32_t joint_emu_write_trace(const char *path);

#ifdef __cplusplus
}
#endif

#endif /* JOINT_CUDA_EMULATOR_H */

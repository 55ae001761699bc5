/*===- joint_cuda_runtime.h - C ABI of the joint CUDA runtime -----*- C -*-===*\
|*                                                                            *|
|* Functions the lowered host code (and the Python runner, through ctypes)    *|
|* calls besides the mgpu* entry points of MLIR's gpu-to-llvm: error status,  *|
|* streams, device-memory and pinned-pool counters, the `ao` offload          *|
|* protocol, the cuBLAS GEMM and cuDNN SDPA shims and the NCCL collectives.   *|
|* All act on the calling thread's current device (mgpuSetDefaultDevice) and  *|
|* are serialised by one lock, released while a thread waits for others.      *|
|* docs/lowering.md, section "CUDA runtime", documents the protocol.          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef JOINT_CUDA_RUNTIME_H
#define JOINT_CUDA_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes besides CUresult values (which are positive). */
#define JOINT_STATUS_OK 0
#define JOINT_STATUS_INVALID_ARGUMENT (-1)
#define JOINT_STATUS_BLAS_FAILURE (-2)
#define JOINT_STATUS_DNN_FAILURE (-3)
/* The emulated device (JOINT_CUDA_DEVICE=emulated) found a race or a use
 * after free; the call itself ran (joint_cuda_emulator.h). */
#define JOINT_STATUS_DEVICE_CHECK (-4)
/* An NCCL call failed, or libnccl.so.2 could not be loaded. */
#define JOINT_STATUS_COLLECTIVE_FAILURE (-5)

/* Counters; sizes in bytes. Device bytes are counted when an allocation or
 * free is enqueued on its stream, so they follow the step's memory model. */
typedef struct JointRuntimeStats {
  uint64_t live_bytes;  /* device bytes allocated and not yet freed */
  uint64_t peak_bytes;  /* high-water mark of live_bytes */
  uint64_t allocations; /* device allocations */
  uint64_t frees;       /* device frees */
  uint64_t pinned_in_use_bytes;
  uint64_t pinned_cached_bytes;
  uint64_t pinned_peak_bytes;        /* high-water mark of in use + cached */
  uint64_t pinned_fresh_allocations; /* cuMemHostAlloc calls */
  uint64_t pinned_reuses;            /* pinned requests served by the pool */
  uint64_t live_transfers;           /* ao transfers not yet released */
} JointRuntimeStats;

/* The error state is per thread: status, message and clear concern the
 * failures of the calling thread's own calls, so rank threads never clear
 * each other's. A failure a thread left uncleared when it exited is seen by
 * every thread whose own state is clean, until one clears. Every failure is
 * also printed to stderr when recorded. */
/* This thread's first failure since its last clear: 0, a CUresult or a
 * JOINT_STATUS_*. The lowered step returns it, so any failed call fails the
 * step. */
int32_t joint_runtime_status(void);
/* "entry: call failed: NAME (code), kernel 'k', node 'n'" or "" when none;
 * valid until this thread's next clear. */
const char *joint_runtime_last_error(void);
/* Clears this thread's failures (and those exited threads left). */
void joint_runtime_clear_error(void);
/* Names the node whose host code runs next; errors report it. */
void joint_runtime_set_node(const char *name);

/* The compute stream (a CUstream) of the current device; every stream the
 * generated code creates and the null stream alias it. */
void *joint_runtime_compute_stream(void);
/* The transfer stream (a CUstream) of the current device, on which the ao
 * offload and reload copies run; created on first use, NULL on failure. */
void *joint_runtime_transfer_stream(void);
/* Makes `stream` (e.g. torch.cuda.current_stream().cuda_stream) the compute
 * stream; the runtime never destroys it. */
void joint_runtime_set_compute_stream(void *stream);
/* Host wait for the compute and transfer streams; returns the status. */
int32_t joint_runtime_synchronize(void);

void joint_runtime_get_stats(JointRuntimeStats *stats);
uint64_t joint_runtime_peak_bytes(void);
/* Restarts the high-water mark at the current live bytes (the emulated
 * device's too, when it is used). */
void joint_runtime_reset_peak(void);
/* Free and total bytes of the current device (cuMemGetInfo: every
 * allocation on it, torch's included); returns the status. */
int32_t joint_runtime_mem_info(uint64_t *free_bytes, uint64_t *total_bytes);
/* Synchronises, then frees pooled events and pinned buffers, owned streams,
 * and releases the primary contexts. Returns the status. */
int32_t joint_runtime_shutdown(void);

/* ao: D2H copy of `bytes` at device pointer `src` on the transfer stream,
 * ordered after the work enqueued so far on the compute stream. Returns a
 * transfer handle, NULL on failure. */
void *joint_ao_offload(const void *src, uint64_t bytes, const char *node);
/* The compute stream waits (on the device) for the transfer's latest copy. */
int32_t joint_ao_wait(void *transfer);
/* Device allocation on the compute stream, H2D copy on the transfer stream;
 * returns the device pointer (free it with mgpuMemFree), NULL on failure.
 * Call joint_ao_wait before the first consumer. */
void *joint_ao_reload(void *transfer, const char *node);
/* As joint_ao_reload, into `dst`: a device buffer of the transfer's size
 * allocated on the compute stream by the caller (the lowered step allocates
 * it with mgpuMemAlloc and frees it at its last use). Returns the status. */
int32_t joint_ao_reload_into(void *transfer, void *dst, const char *node);
/* Drops the handle; its pinned buffer returns to the pool. */
int32_t joint_ao_release(void *transfer);

/* Element types of the library shims. */
#define JOINT_DTYPE_F32 0
#define JOINT_DTYPE_BF16 1
#define JOINT_DTYPE_F16 2
/* GEMM only: bf16 / f16 A and B into an f32 C (f32 accumulation kept). */
#define JOINT_DTYPE_BF16_F32 3
#define JOINT_DTYPE_F16_F32 4

/* Row-major GEMM on the compute stream, torch's convention:
 * C[m,n] = alpha * op(A)[m,k] @ op(B)[k,n] + beta * C, op = transpose when
 * trans_* != 0; lda/ldb/ldc are row strides in elements. bf16/f16 accumulate
 * in f32 (CUBLAS_COMPUTE_32F); f32 stays f32 (no TF32, as torch's default).
 * Batched form: `batch` matrices at element strides stride_a/b/c. */
int32_t joint_cublas_gemm(const char *node, int32_t dtype, int32_t trans_a,
                          int32_t trans_b, int64_t m, int64_t n, int64_t k,
                          float alpha, const void *a, int64_t lda,
                          const void *b, int64_t ldb, float beta, void *c,
                          int64_t ldc);
int32_t joint_cublas_gemm_strided_batched(
    const char *node, int32_t dtype, int32_t trans_a, int32_t trans_b,
    int64_t m, int64_t n, int64_t k, float alpha, const void *a, int64_t lda,
    int64_t stride_a, const void *b, int64_t ldb, int64_t stride_b, float beta,
    void *c, int64_t ldc, int64_t stride_c, int64_t batch);

/* 1 when the runtime was built with the cuDNN frontend (SDPA shims work),
 * 0 when those shims only report that. */
int32_t joint_cudnn_sdpa_available(void);

/* Scaled dot-product attention through cuDNN's fused flash attention on the
 * compute stream (torch's _scaled_dot_product_cudnn_attention). Operands are
 * [batch, heads, seq, head_dim] with 4 element strides each; k and v have
 * heads_kv heads (heads_q a multiple of it). `stats` is the f32 logsumexp,
 * contiguous [batch, heads_q, seq_q]; NULL skips it (inference). `causal` is
 * torch's is_causal (top-left aligned). `bias` (NULL: none) is an additive
 * mask of the io dtype (torch's float attn_mask), dims `bias_dims`
 * [1|batch, 1|heads_q, seq_q, seq_kv] with element strides `bias_strides`.
 * Supported: bf16/f16, head_dim a multiple of 8 up to 256; anything else
 * returns JOINT_STATUS_INVALID_ARGUMENT, so the lowering keeps its
 * decomposition. */
int32_t joint_cudnn_sdpa_forward(
    const char *node, int32_t dtype, int64_t batch, int64_t heads_q,
    int64_t heads_kv, int64_t seq_q, int64_t seq_kv, int64_t head_dim,
    float scale, int32_t causal, const void *q, const int64_t *q_strides,
    const void *k, const int64_t *k_strides, const void *v,
    const int64_t *v_strides, void *o, const int64_t *o_strides, float *stats,
    const void *bias, const int64_t *bias_dims, const int64_t *bias_strides);
/* Backward of the above from the saved o and stats: dq, dk, dv (dk, dv with
 * heads_kv heads); the same bias as the forward (no bias gradient). */
int32_t joint_cudnn_sdpa_backward(
    const char *node, int32_t dtype, int64_t batch, int64_t heads_q,
    int64_t heads_kv, int64_t seq_q, int64_t seq_kv, int64_t head_dim,
    float scale, int32_t causal, const void *q, const int64_t *q_strides,
    const void *k, const int64_t *k_strides, const void *v,
    const int64_t *v_strides, const void *o, const int64_t *o_strides,
    const void *d_o, const int64_t *d_o_strides, const float *stats, void *d_q,
    const int64_t *d_q_strides, void *d_k, const int64_t *d_k_strides,
    void *d_v, const int64_t *d_v_strides, const void *bias,
    const int64_t *bias_dims, const int64_t *bias_strides);

/* Collectives (NCCL). N ranks are N processes, or N threads of one process
 * (thread r calls mgpuSetDefaultDevice(r); the current device is per thread).
 * NCCL is loaded with dlopen("libnccl.so.2") on first use (JOINT_NCCL_LIBRARY
 * overrides the name); JOINT_CUDA_DEVICE=emulated uses the emulated NCCL
 * between the rank threads. Counts are in elements. */

/* Element types of collective buffers; joint_nccl_data_type maps them to
 * ncclDataType_t. Not the JOINT_DTYPE_* codes of the GEMM shims above (f16
 * and bf16 are swapped there), hence the prefix. */
enum {
  JOINT_NCCL_DTYPE_F32 = 0,
  JOINT_NCCL_DTYPE_F16 = 1,
  JOINT_NCCL_DTYPE_BF16 = 2,
  JOINT_NCCL_DTYPE_F64 = 3,
  JOINT_NCCL_DTYPE_I64 = 4,
  JOINT_NCCL_DTYPE_I32 = 5,
  JOINT_NCCL_DTYPE_I8 = 6,
  JOINT_NCCL_DTYPE_U8 = 7
};
/* Reductions: ncclSum, ncclAvg, ncclProd, ncclMin, ncclMax. */
enum {
  JOINT_REDUCE_SUM = 0,
  JOINT_REDUCE_AVG = 1,
  JOINT_REDUCE_PRODUCT = 2,
  JOINT_REDUCE_MIN = 3,
  JOINT_REDUCE_MAX = 4
};
#define JOINT_NCCL_UNIQUE_ID_BYTES 128

/* The ncclDataType_t value of JOINT_NCCL_DTYPE_* `dtype`, or -1. */
int joint_nccl_data_type(int dtype);
/* Fresh id for joint_nccl_comm_init (ncclGetUniqueId); returns the status. */
int joint_nccl_get_unique_id(unsigned char id[JOINT_NCCL_UNIQUE_ID_BYTES]);
/* Communicator of torch group `group` for the calling thread's current
 * device (mgpuSetDefaultDevice): ncclCommInitRank, blocking until all
 * `nranks` ranks joined. Returns the status. */
int joint_nccl_comm_init(const char *group, int nranks, int rank,
                         const unsigned char *id);
/* ncclCommSplit of `parent` (collective over parent's ranks) into `group`;
 * color -1 = NCCL_SPLIT_NOCOLOR (no comm created); ranks ordered by key,
 * then parent rank. Returns the status. */
int joint_nccl_comm_split(const char *parent, const char *group, int color,
                          int key);
/* Destroys this thread's device's communicators. Returns the status. */
int joint_nccl_comm_destroy_all(void);
/* Ranks of this thread's device's communicator for `group` (ncclCommCount),
 * or -1 when there is none (no status recorded): a step checks its groups
 * before its first collective. */
int joint_nccl_comm_size(const char *group);

/* Each collective: the comm stream waits on the compute stream (event), the
 * NCCL call runs on the device's communication stream, an event is recorded
 * there; returns an opaque handle (NULL on failure, status/last error set
 * naming `node` and `group`). The caller keeps `in` alive until
 * joint_nccl_wait. */
/* out[r * sendcount + i] = in_r[i] over the group's ranks r. */
void *joint_nccl_all_gather(const char *group, const void *in, void *out,
                            uint64_t sendcount, int dtype, const char *node);
/* out[i] = op over ranks r of in_r[rank * recvcount + i]. */
void *joint_nccl_reduce_scatter(const char *group, const void *in, void *out,
                                uint64_t recvcount, int dtype, int op,
                                const char *node);
/* out[i] = op over ranks r of in_r[i]; in == out is allowed. */
void *joint_nccl_all_reduce(const char *group, const void *in, void *out,
                            uint64_t count, int dtype, int op,
                            const char *node);
/* all_to_all_single: sendcounts/recvcounts have nranks entries (elements),
 * displacements are their prefix sums (grouped ncclSend/ncclRecv). */
void *joint_nccl_all_to_all(const char *group, const void *in, void *out,
                            const int64_t *sendcounts,
                            const int64_t *recvcounts, int nranks, int dtype,
                            const char *node);
/* The compute stream waits on the collective's event (device side); the
 * handle is released. Returns the status. */
int joint_nccl_wait(void *handle);

#ifdef __cplusplus
}
#endif

#endif /* JOINT_CUDA_RUNTIME_H */

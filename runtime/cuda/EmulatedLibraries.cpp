//===- EmulatedLibraries.cpp - CPU references of the library shims --------===//
//
// On the emulated device the cuBLAS GEMM and cuDNN SDPA shims run CPU
// references as stream work on the compute stream (emu::submitLibraryCall):
// the race checker sees the exact span of every operand, `library_calls`
// counts them, and they run in stream order with the kernels and copies.
// Numerics follow the libraries' documented contracts: bf16/f16 operands are
// widened to f32, products are accumulated in f32 (cuBLAS's
// CUBLAS_COMPUTE_32F, cuDNN's f32 compute and intermediate types) in
// increasing k order, and each result is rounded once, to nearest even, on
// store; beta = 0 never reads C. The SDPA is cuDNN's fused flash attention
// (and torch's flash kernels): scores = scale * q k^T + bias in f32, keys
// after the query masked when causal (top-left), softmax in f32, where the
// matmuls that take probabilities or their gradients round those operands to
// the io type as the tensor-core GEMMs do: out = round(exp(s - max)) v /
// sum exp(s - max); backward dV = round(P)^T dO, dQ = scale round(dS) k,
// dK = scale round(dS)^T q with dS = P (dO v^T - rowsum(dO o)) and P from
// the saved statistics. Query head h reads key/value head h / (heads_q /
// heads_kv); the statistics are the natural-log logsumexp of the scores.
// Workspaces: the references use host scratch only, so the emulated device
// allocates neither cuBLAS's 32 MiB workspace nor a cuDNN graph workspace
// and its high-water mark stays the step's own buffers, as the memory model
// counts them (on a GPU the runtime adds both; runtime/cuda/README.md).
//
//===----------------------------------------------------------------------===//

#include "EmulatedDriver.h"
#include "Libraries.h"
#include "joint_cuda_runtime.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <thread>
#include <vector>

using namespace joint::cuda;

namespace {

//===----------------------------------------------------------------------===//
// Element formats
//===----------------------------------------------------------------------===//

enum class Format { F32, BF16, F16 };

using emu::bf16ToFloat;
using emu::f16ToFloat;
using emu::floatToBf16;
using emu::floatToF16;

size_t formatBytes(Format f) { return f == Format::F32 ? 4 : 2; }

float load(Format f, const void *base, int64_t index) {
  switch (f) {
  case Format::F32:
    return static_cast<const float *>(base)[index];
  case Format::BF16:
    return bf16ToFloat(static_cast<const uint16_t *>(base)[index]);
  case Format::F16:
    return f16ToFloat(static_cast<const uint16_t *>(base)[index]);
  }
  return 0;
}

void store(Format f, void *base, int64_t index, float value) {
  switch (f) {
  case Format::F32:
    static_cast<float *>(base)[index] = value;
    return;
  case Format::BF16:
    static_cast<uint16_t *>(base)[index] = floatToBf16(value);
    return;
  case Format::F16:
    static_cast<uint16_t *>(base)[index] = floatToF16(value);
    return;
  }
}

/// Runs body(i) for every i in [0, n) on up to `workers` host threads.
template <typename Body>
void parallelFor(int64_t n, unsigned workers, const Body &body) {
  if (n <= 0)
    return;
  std::atomic<int64_t> next{0};
  auto run = [&] {
    for (int64_t i; (i = next.fetch_add(1)) < n;)
      body(i);
  };
  unsigned extra = unsigned(std::min<int64_t>(n, std::max(1u, workers))) - 1;
  std::vector<std::thread> helpers;
  for (unsigned i = 0; i < extra; ++i)
    helpers.emplace_back(run);
  run();
  for (std::thread &t : helpers)
    t.join();
}

/// Element span [lo, hi) of `count` batches at `stride` of one matrix whose
/// own span is `span` elements.
std::pair<int64_t, int64_t> batchSpan(int64_t count, int64_t stride,
                                      int64_t span) {
  int64_t last = (count - 1) * stride;
  return {std::min<int64_t>(0, last), std::max<int64_t>(0, last) + span};
}

emu::LibraryRange range(const void *base, size_t elemBytes,
                        std::pair<int64_t, int64_t> span, bool read, bool write,
                        const char *role) {
  return {static_cast<const char *>(base) + span.first * int64_t(elemBytes),
          uint64_t(span.second - span.first) * elemBytes, read, write, role};
}

/// Submits `work` as the library call `kind` on the compute stream and
/// records what the emulator found; 0 when nothing was recorded.
int32_t submit(Runtime &rt, const char *entry, const char *call,
               const std::string &kind,
               const std::vector<emu::LibraryRange> &ranges,
               std::function<void(unsigned)> work,
               const std::string &detail = "") {
  uint64_t before = rt.errorCount();
  Runtime::ContextScope scope(rt, entry);
  if (!scope)
    return rt.status();
  CUstream stream = rt.computeStream();
  if (!stream)
    return rt.status();
  CUresult result =
      emu::submitLibraryCall(stream, kind, ranges, std::move(work));
  rt.check(result, entry, call, detail);
  return rt.errorCount() == before ? kStatusOk : rt.status();
}

//===----------------------------------------------------------------------===//
// GEMM
//===----------------------------------------------------------------------===//

/// C rows [i0, i1) of batch `batch`; `bf` is op(B) of the batch widened to
/// f32, [k, n] row-major (or [n, k] when `transposed`).
void gemmRows(const GemmArgs &g, Format in, Format out, int64_t batch,
              const std::vector<float> &bf, bool transposed, int64_t i0,
              int64_t i1) {
  // A is not read (and may be null) when k is 0.
  const char *a = g.k == 0 ? nullptr
                           : static_cast<const char *>(g.a) +
                                 batch * g.strideA * int64_t(formatBytes(in));
  char *c =
      static_cast<char *>(g.c) + batch * g.strideC * int64_t(formatBytes(out));
  std::vector<float> row(g.k), acc(g.n);
  for (int64_t i = i0; i < i1; ++i) {
    for (int64_t p = 0; p < g.k; ++p)
      row[p] = load(in, a, g.transA ? p * g.lda + i : i * g.lda + p);
    if (!transposed) {
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (int64_t p = 0; p < g.k; ++p) {
        float ap = row[p];
        const float *bp = bf.data() + p * g.n;
        for (int64_t j = 0; j < g.n; ++j)
          acc[j] += ap * bp[j];
      }
    } else {
      for (int64_t j = 0; j < g.n; ++j) {
        const float *bj = bf.data() + j * g.k;
        float sum = 0.0f;
        for (int64_t p = 0; p < g.k; ++p)
          sum += row[p] * bj[p];
        acc[j] = sum;
      }
    }
    for (int64_t j = 0; j < g.n; ++j) {
      float value = g.alpha * acc[j];
      // cuBLAS reads C only when beta is non-zero.
      if (g.beta != 0.0f)
        value += g.beta * load(out, c, i * g.ldc + j);
      store(out, c, i * g.ldc + j, value);
    }
  }
}

/// op(B) of one batch widened to f32: [k, n] when B is not transposed
/// (rows of B), else B's own rows [n, k].
std::vector<float> widenB(const GemmArgs &g, Format in, int64_t batch) {
  if (g.k == 0)
    return {};
  const char *b = static_cast<const char *>(g.b) +
                  batch * g.strideB * int64_t(formatBytes(in));
  int64_t rows = g.transB ? g.n : g.k, cols = g.transB ? g.k : g.n;
  std::vector<float> out(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out[r * cols + c] = load(in, b, r * g.ldb + c);
  return out;
}

void runGemmOnHost(const GemmArgs &g, unsigned workers) {
  Format in = g.dtype == JOINT_DTYPE_F32 ? Format::F32
              : (g.dtype == JOINT_DTYPE_BF16 || g.dtype == JOINT_DTYPE_BF16_F32)
                  ? Format::BF16
                  : Format::F16;
  Format out = (g.dtype == JOINT_DTYPE_BF16 || g.dtype == JOINT_DTYPE_F16)
                   ? in
                   : Format::F32;
  int64_t spanC = (g.m - 1) * g.ldc + g.n;
  // Batches whose C spans overlap run one after another.
  bool separate = g.batch == 1 || std::abs(g.strideC) >= spanC;
  if (separate && g.batch >= int64_t(workers) && g.batch > 1) {
    parallelFor(g.batch, workers, [&](int64_t b) {
      std::vector<float> bf = widenB(g, in, b);
      gemmRows(g, in, out, b, bf, g.transB, 0, g.m);
    });
    return;
  }
  // Rows in blocks, a few per worker.
  int64_t block =
      std::max<int64_t>(1, (g.m + 4 * workers - 1) / (4 * int64_t(workers)));
  int64_t blocks = (g.m + block - 1) / block;
  for (int64_t b = 0; b < g.batch; ++b) {
    std::vector<float> bf = widenB(g, in, b);
    parallelFor(blocks, workers, [&](int64_t r) {
      gemmRows(g, in, out, b, bf, g.transB, r * block,
               std::min(g.m, (r + 1) * block));
    });
  }
}

//===----------------------------------------------------------------------===//
// SDPA
//===----------------------------------------------------------------------===//

/// Everything a queued SDPA needs, copied (the caller's stride arrays may
/// not outlive the call).
struct SdpaJob {
  Format io;
  int64_t batch, headsQ, headsKV, seqQ, seqKV, headDim;
  float scale;
  bool causal;
  int64_t strides[8][4];
  bool hasBias = false;
  int64_t biasDims[4], biasStrides[4];
  SdpaBuffers buffers;

  int64_t group() const { return headsQ / headsKV; }

  /// `x` rounded to the io type (an operand of a reduced-precision GEMM).
  float reduce(float x) const {
    return io == Format::BF16 ? bf16ToFloat(floatToBf16(x))
                              : f16ToFloat(floatToF16(x));
  }

  static int64_t offset(const int64_t s[4], int64_t b, int64_t h, int64_t i,
                        int64_t j) {
    return b * s[0] + h * s[1] + i * s[2] + j * s[3];
  }

  /// Operand `which` (0..7: q k v o dO dQ dK dV) row `i` of head `h`, f32.
  void loadRow(int which, const void *base, int64_t b, int64_t h, int64_t i,
               float *row) const {
    for (int64_t d = 0; d < headDim; ++d)
      row[d] = load(io, base, offset(strides[which], b, h, i, d));
  }

  /// The widened [seqKV, headDim] rows of key (which 1) or value (2) head
  /// `h` of batch `b`.
  std::vector<float> loadKV(int which, const void *base, int64_t b,
                            int64_t h) const {
    std::vector<float> out(seqKV * headDim);
    for (int64_t j = 0; j < seqKV; ++j)
      loadRow(which, base, b, h, j, out.data() + j * headDim);
    return out;
  }

  /// Scores of query row `q` (head `h`) against every key: scale * q k^T +
  /// bias, -inf where the causal mask hides the key.
  void scores(const float *q, const std::vector<float> &k, int64_t b, int64_t h,
              int64_t i, float *s) const {
    for (int64_t j = 0; j < seqKV; ++j) {
      if (causal && j > i) {
        s[j] = -std::numeric_limits<float>::infinity();
        continue;
      }
      const float *kj = k.data() + j * headDim;
      float dot = 0.0f;
      for (int64_t d = 0; d < headDim; ++d)
        dot += q[d] * kj[d];
      float value = scale * dot;
      if (hasBias)
        value += load(io, buffers.bias,
                      offset(biasStrides, biasDims[0] == 1 ? 0 : b,
                             biasDims[1] == 1 ? 0 : h, i, j));
      s[j] = value;
    }
  }

  int64_t statsIndex(int64_t b, int64_t h, int64_t i) const {
    return (b * headsQ + h) * seqQ + i;
  }

  /// Forward of query head `h` in batch `b`.
  void forward(int64_t b, int64_t h) const {
    int64_t kvh = h / group();
    std::vector<float> k = loadKV(1, buffers.k, b, kvh);
    std::vector<float> v = loadKV(2, buffers.v, b, kvh);
    std::vector<float> q(headDim), s(seqKV), o(headDim);
    for (int64_t i = 0; i < seqQ; ++i) {
      loadRow(0, buffers.q, b, h, i, q.data());
      scores(q.data(), k, b, h, i, s.data());
      float max = -std::numeric_limits<float>::infinity();
      for (float x : s)
        max = std::max(max, x);
      float sum = 0.0f;
      std::fill(o.begin(), o.end(), 0.0f);
      for (int64_t j = 0; j < seqKV; ++j) {
        float p = std::exp(s[j] - max);
        sum += p;
        float rounded = reduce(p); // the P v GEMM's operand
        const float *vj = v.data() + j * headDim;
        for (int64_t d = 0; d < headDim; ++d)
          o[d] += rounded * vj[d];
      }
      for (int64_t d = 0; d < headDim; ++d)
        store(io, buffers.o, offset(strides[3], b, h, i, d), o[d] / sum);
      if (buffers.stats)
        buffers.stats[statsIndex(b, h, i)] = max + std::log(sum);
    }
  }

  /// Backward of key/value head `kvh` in batch `b` and of the query heads
  /// that read it: P from the saved statistics, dS = P (dO v^T - rowsum(dO
  /// o)), dQ = scale round(dS) k, dK = scale round(dS)^T q, dV = round(P)^T
  /// dO (dK, dV summed over the group's query heads in f32, stored once).
  void backward(int64_t b, int64_t kvh) const {
    std::vector<float> k = loadKV(1, buffers.k, b, kvh);
    std::vector<float> v = loadKV(2, buffers.v, b, kvh);
    std::vector<float> dk(seqKV * headDim, 0.0f), dv(seqKV * headDim, 0.0f);
    std::vector<float> q(headDim), o(headDim), dO(headDim), dq(headDim);
    std::vector<float> s(seqKV), ds(seqKV);
    for (int64_t h = kvh * group(); h < (kvh + 1) * group(); ++h) {
      for (int64_t i = 0; i < seqQ; ++i) {
        loadRow(0, buffers.q, b, h, i, q.data());
        loadRow(3, buffers.o, b, h, i, o.data());
        loadRow(4, buffers.dO, b, h, i, dO.data());
        float lse = buffers.stats[statsIndex(b, h, i)];
        float rowDot = 0.0f; // rowsum(dO o)
        for (int64_t d = 0; d < headDim; ++d)
          rowDot += dO[d] * o[d];
        scores(q.data(), k, b, h, i, s.data());
        for (int64_t j = 0; j < seqKV; ++j) {
          float p = std::exp(s[j] - lse);
          const float *vj = v.data() + j * headDim;
          float dp = 0.0f;
          for (int64_t d = 0; d < headDim; ++d)
            dp += dO[d] * vj[d];
          s[j] = reduce(p);
          ds[j] = reduce(p * (dp - rowDot));
        }
        std::fill(dq.begin(), dq.end(), 0.0f);
        for (int64_t j = 0; j < seqKV; ++j) {
          const float *kj = k.data() + j * headDim;
          float *dkj = dk.data() + j * headDim, *dvj = dv.data() + j * headDim;
          for (int64_t d = 0; d < headDim; ++d) {
            dq[d] += ds[j] * kj[d];
            dkj[d] += ds[j] * q[d];
            dvj[d] += s[j] * dO[d];
          }
        }
        for (int64_t d = 0; d < headDim; ++d)
          store(io, buffers.dQ, offset(strides[5], b, h, i, d), scale * dq[d]);
      }
    }
    for (int64_t j = 0; j < seqKV; ++j)
      for (int64_t d = 0; d < headDim; ++d) {
        store(io, buffers.dK, offset(strides[6], b, kvh, j, d),
              scale * dk[j * headDim + d]);
        store(io, buffers.dV, offset(strides[7], b, kvh, j, d),
              dv[j * headDim + d]);
      }
  }
};

/// Element span of a [d0, d1, d2, d3] operand with element strides `s`.
std::pair<int64_t, int64_t> span4(const int64_t dims[4], const int64_t s[4]) {
  int64_t lo = 0, hi = 0;
  for (int i = 0; i < 4; ++i) {
    int64_t last = (dims[i] - 1) * s[i];
    (last < 0 ? lo : hi) += last;
  }
  return {lo, hi + 1};
}

} // namespace

int32_t joint::cuda::emulateGemm(Runtime &rt, const GemmArgs &g) {
  size_t inBytes = g.dtype == JOINT_DTYPE_F32 ? 4 : 2;
  size_t outBytes =
      (g.dtype == JOINT_DTYPE_BF16 || g.dtype == JOINT_DTYPE_F16) ? 2 : 4;
  std::vector<emu::LibraryRange> ranges;
  if (g.k > 0) {
    int64_t rowsA = g.transA ? g.k : g.m, colsA = g.transA ? g.m : g.k;
    int64_t rowsB = g.transB ? g.n : g.k, colsB = g.transB ? g.k : g.n;
    ranges.push_back(
        range(g.a, inBytes,
              batchSpan(g.batch, g.strideA, (rowsA - 1) * g.lda + colsA), true,
              false, "operand A"));
    ranges.push_back(
        range(g.b, inBytes,
              batchSpan(g.batch, g.strideB, (rowsB - 1) * g.ldb + colsB), true,
              false, "operand B"));
  }
  ranges.push_back(range(g.c, outBytes,
                         batchSpan(g.batch, g.strideC, (g.m - 1) * g.ldc + g.n),
                         g.beta != 0.0f, true, "operand C"));
  bool batched = std::strcmp(g.entry, "joint_cublas_gemm") != 0;
  GemmArgs copy = g;
  return submit(
      rt, g.entry, batched ? "cublasGemmStridedBatchedEx" : "cublasGemmEx",
      batched ? "cuBLAS strided batched GEMM" : "cuBLAS GEMM", ranges,
      [copy](unsigned workers) { runGemmOnHost(copy, workers); },
      ", m=" + std::to_string(g.m) + " n=" + std::to_string(g.n) +
          " k=" + std::to_string(g.k));
}

int32_t joint::cuda::emulateSdpa(Runtime &rt, const SdpaArgs &a,
                                 const SdpaBuffers &buffers, bool backward) {
  auto job = std::make_shared<SdpaJob>();
  job->io = a.dtype == JOINT_DTYPE_BF16 ? Format::BF16 : Format::F16;
  job->batch = a.batch;
  job->headsQ = a.headsQ;
  job->headsKV = a.headsKV;
  job->seqQ = a.seqQ;
  job->seqKV = a.seqKV;
  job->headDim = a.headDim;
  job->scale = a.scale;
  job->causal = a.causal;
  job->buffers = buffers;
  if (!backward)
    job->buffers.dO = job->buffers.dQ = job->buffers.dK = job->buffers.dV =
        nullptr;
  int used = backward ? 8 : 4;
  for (int w = 0; w < 8; ++w)
    for (int i = 0; i < 4; ++i)
      job->strides[w][i] = w < used ? a.strides[w][i] : 0;
  if (buffers.bias) {
    job->hasBias = true;
    std::copy(a.biasDims, a.biasDims + 4, job->biasDims);
    std::copy(a.biasStrides, a.biasStrides + 4, job->biasStrides);
  }
  const int64_t qDims[4] = {a.batch, a.headsQ, a.seqQ, a.headDim};
  const int64_t kvDims[4] = {a.batch, a.headsKV, a.seqKV, a.headDim};
  const int64_t *dims[8] = {qDims, kvDims, kvDims, qDims,
                            qDims, qDims,  kvDims, kvDims};
  static const char *roles[8] = {"operand q",  "operand k",  "operand v",
                                 "operand o",  "operand dO", "operand dQ",
                                 "operand dK", "operand dV"};
  const void *pointers[8] = {buffers.q,  buffers.k,  buffers.v,  buffers.o,
                             buffers.dO, buffers.dQ, buffers.dK, buffers.dV};
  std::vector<emu::LibraryRange> ranges;
  for (int w = 0; w < used; ++w) {
    bool written = backward ? w >= 5 : w == 3;
    ranges.push_back(range(pointers[w], 2, span4(dims[w], job->strides[w]),
                           !written, written, roles[w]));
  }
  if (buffers.stats)
    ranges.push_back({buffers.stats,
                      uint64_t(a.batch * a.headsQ * a.seqQ) * sizeof(float),
                      backward, !backward, "statistics"});
  if (buffers.bias)
    ranges.push_back(range(buffers.bias, 2, span4(a.biasDims, a.biasStrides),
                           true, false, "bias"));
  std::function<void(unsigned)> work;
  if (backward)
    work = [job](unsigned workers) {
      parallelFor(job->batch * job->headsKV, workers, [&](int64_t u) {
        job->backward(u / job->headsKV, u % job->headsKV);
      });
    };
  else
    work = [job](unsigned workers) {
      parallelFor(job->batch * job->headsQ, workers, [&](int64_t u) {
        job->forward(u / job->headsQ, u % job->headsQ);
      });
    };
  return submit(rt, a.entry, "cudnn_frontend::Graph::execute",
                backward ? "cuDNN SDPA backward" : "cuDNN SDPA forward", ranges,
                std::move(work), sdpaDims(a));
}

//===----------------------------------------------------------------------===//
// Element conversions (EmulatedDriver.h)
//===----------------------------------------------------------------------===//

namespace joint::cuda::emu {

float bf16ToFloat(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN stays a (quiet) NaN
    return uint16_t((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1); // round to nearest even
  return uint16_t(bits >> 16);
}

float f16ToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // subnormal: normalise
      int shift = 0;
      while (!(mant & 0x400)) {
        mant <<= 1;
        ++shift;
      }
      mant &= 0x3ff;
      bits = sign | uint32_t(127 - 15 + 1 - shift) << 23 | (mant << 13);
    }
  } else {
    bits = sign | (exp + 127 - 15) << 23 | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToF16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint16_t sign = uint16_t((bits >> 16) & 0x8000);
  uint32_t absBits = bits & 0x7fffffffu;
  if (absBits > 0x7f800000u)
    return sign | 0x7e00;     // NaN
  if (absBits >= 0x477ff000u) // rounds to at least 65520: infinity
    return sign | 0x7c00;
  int exp = int(absBits >> 23) - 127 + 15;
  uint32_t mant = (absBits & 0x7fffff) | 0x800000; // with the hidden bit
  if (exp <= 0) {                                  // subnormal or zero in f16
    if (exp < -10)
      return sign;
    int shift = 14 - exp; // 13 + (1 - exp)
    uint32_t half = mant >> shift;
    uint32_t rest = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1)))
      ++half;
    return sign | uint16_t(half);
  }
  uint32_t half = (uint32_t(exp) << 10) | ((mant >> 13) & 0x3ff);
  uint32_t rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half; // may carry into the exponent, up to infinity
  return sign | uint16_t(half);
}

} // namespace joint::cuda::emu

//===- Attention.cpp - cuDNN SDPA shim on the compute stream --------------===//
//
// joint_cudnn_sdpa_forward / _backward: scaled dot-product attention through
// the cuDNN frontend's `Graph::sdpa` and `Graph::sdpa_backward` (the fused
// flash-attention kernels that torch's `_scaled_dot_product_cudnn_attention`
// uses), run on the runtime's compute stream. Operands are 4-d
// [batch, heads, seq, head_dim] with element strides (torch views pass as
// they are); the statistics are the f32 logsumexp [batch, heads_q, seq_q],
// which the backward consumes; an optional additive bias (torch's float
// attn_mask, broadcast over batch and heads) goes to `set_bias`. One graph
// per distinct shape, stride, dtype, scale, mask and bias is built once and
// cached; its workspace is a stream-ordered runtime allocation, so it counts in
// the device high-water mark. Without the frontend headers at build time the
// entry points report that on a GPU (the lowering keeps its generated-kernel
// decomposition then). The argument checks, and the CPU reference that runs
// instead on the emulated device (with or without the frontend), are shared
// with the runtime core (Libraries.h).
//
//===----------------------------------------------------------------------===//

#include "EmulatedDriver.h"
#include "Global.h"
#include "Libraries.h"
#include "joint_cuda_runtime.h"

#include <cstring>
#include <string>

using namespace joint::cuda;

#ifdef JOINT_HAVE_CUDNN_FRONTEND

#include <cudnn_frontend.h>

#include <map>
#include <memory>
#include <unordered_map>

namespace fe = cudnn_frontend;

namespace {

enum Uid : int64_t { kQ = 1, kK, kV, kO, kStats, kDO, kDQ, kDK, kDV, kBias };

struct DnnState {
  std::map<int, cudnnHandle_t> handles;
  std::unordered_map<std::string, std::shared_ptr<fe::graph::Graph>> graphs;
};

DnnState &state() {
  static DnnState s;
  return s;
}

std::string cacheKey(const SdpaArgs &a, bool backward, bool stats, int device) {
  std::string key = std::to_string(device) + (backward ? "b" : "f") +
                    (stats ? "s" : "") + (a.causal ? "c" : "") + sdpaDims(a) +
                    " t" + std::to_string(a.dtype);
  uint32_t scaleBits;
  std::memcpy(&scaleBits, &a.scale, sizeof(scaleBits));
  key += " x" + std::to_string(scaleBits);
  for (const int64_t *s : a.strides)
    if (s)
      for (int i = 0; i < 4; ++i)
        key += "," + std::to_string(s[i]);
  if (a.biasDims)
    for (int i = 0; i < 4; ++i)
      key += " b" + std::to_string(a.biasDims[i]) + ":" +
             std::to_string(a.biasStrides[i]);
  return key;
}

std::shared_ptr<fe::graph::Tensor_attributes>
input(fe::graph::Graph &g, const char *name, Uid uid, int64_t b, int64_t h,
      int64_t s, int64_t d, const int64_t *strides) {
  return g.tensor(
      fe::graph::Tensor_attributes()
          .set_name(name)
          .set_uid(uid)
          .set_dim({b, h, s, d})
          .set_stride({strides[0], strides[1], strides[2], strides[3]}));
}

void output(const std::shared_ptr<fe::graph::Tensor_attributes> &t, Uid uid,
            int64_t b, int64_t h, int64_t s, int64_t d,
            const int64_t *strides) {
  t->set_output(true)
      .set_uid(uid)
      .set_dim({b, h, s, d})
      .set_stride({strides[0], strides[1], strides[2], strides[3]});
}

/// Builds (or finds) the graph; null with the error recorded on failure.
std::shared_ptr<fe::graph::Graph> graphFor(Runtime &rt, cudnnHandle_t handle,
                                           const SdpaArgs &a, bool backward,
                                           bool stats) {
  std::string key = cacheKey(a, backward, stats, rt.defaultDevice());
  auto &cache = state().graphs;
  auto it = cache.find(key);
  if (it != cache.end())
    return it->second;
  auto g = std::make_shared<fe::graph::Graph>();
  fe::DataType_t io = a.dtype == JOINT_DTYPE_BF16 ? fe::DataType_t::BFLOAT16
                                                  : fe::DataType_t::HALF;
  g->set_io_data_type(io)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  auto q =
      input(*g, "Q", kQ, a.batch, a.headsQ, a.seqQ, a.headDim, a.strides[0]);
  auto k =
      input(*g, "K", kK, a.batch, a.headsKV, a.seqKV, a.headDim, a.strides[1]);
  auto v =
      input(*g, "V", kV, a.batch, a.headsKV, a.seqKV, a.headDim, a.strides[2]);
  // Statistics: contiguous f32 [batch, heads_q, seq_q, 1].
  int64_t statsStrides[4] = {a.headsQ * a.seqQ, a.seqQ, 1, 1};
  std::shared_ptr<fe::graph::Tensor_attributes> bias;
  if (a.biasDims)
    bias = input(*g, "Bias", kBias, a.biasDims[0], a.biasDims[1], a.biasDims[2],
                 a.biasDims[3], a.biasStrides);
  if (!backward) {
    auto options = fe::graph::SDPA_attributes()
                       .set_name("sdpa")
                       .set_generate_stats(stats)
                       .set_attn_scale(a.scale)
                       .set_causal_mask(a.causal);
    if (bias)
      options.set_bias(bias);
    auto [o, lse] = g->sdpa(q, k, v, options);
    output(o, kO, a.batch, a.headsQ, a.seqQ, a.headDim, a.strides[3]);
    if (stats) {
      output(lse, kStats, a.batch, a.headsQ, a.seqQ, 1, statsStrides);
      lse->set_data_type(fe::DataType_t::FLOAT);
    }
  } else {
    auto o =
        input(*g, "O", kO, a.batch, a.headsQ, a.seqQ, a.headDim, a.strides[3]);
    auto dO = input(*g, "dO", kDO, a.batch, a.headsQ, a.seqQ, a.headDim,
                    a.strides[4]);
    auto lse = g->tensor(fe::graph::Tensor_attributes()
                             .set_name("Stats")
                             .set_uid(kStats)
                             .set_dim({a.batch, a.headsQ, a.seqQ, 1})
                             .set_stride({statsStrides[0], statsStrides[1],
                                          statsStrides[2], statsStrides[3]})
                             .set_data_type(fe::DataType_t::FLOAT));
    auto options = fe::graph::SDPA_backward_attributes()
                       .set_name("sdpa_backward")
                       .set_attn_scale(a.scale)
                       .set_causal_mask(a.causal);
    if (bias)
      options.set_bias(bias);
    auto [dQ, dK, dV] = g->sdpa_backward(q, k, v, o, dO, lse, options);
    output(dQ, kDQ, a.batch, a.headsQ, a.seqQ, a.headDim, a.strides[5]);
    output(dK, kDK, a.batch, a.headsKV, a.seqKV, a.headDim, a.strides[6]);
    output(dV, kDV, a.batch, a.headsKV, a.seqKV, a.headDim, a.strides[7]);
  }
  fe::error_t status = g->validate();
  const char *step = "validate";
  if (status.is_good()) {
    step = "build_operation_graph";
    status = g->build_operation_graph(handle);
  }
  if (status.is_good()) {
    step = "create_execution_plans";
    status = g->create_execution_plans({fe::HeurMode_t::A});
  }
  if (status.is_good()) {
    step = "check_support";
    status = g->check_support(handle);
  }
  if (status.is_good()) {
    step = "build_plans";
    status = g->build_plans(handle);
  }
  if (status.is_bad()) {
    rt.recordError(kStatusDnnFailure, a.entry,
                   std::string("cudnn_frontend::Graph::") + step +
                       " failed: " + status.get_message(),
                   sdpaDims(a));
    return nullptr;
  }
  cache.emplace(key, g);
  return g;
}

/// The cuDNN graph for `a` on the compute stream (arguments already checked).
int32_t cudnnSdpa(Runtime &rt, const SdpaArgs &a, const SdpaBuffers &buffers,
                  bool backward) {
  std::unordered_map<int64_t, void *> pack = {
      {kQ, const_cast<void *>(buffers.q)},
      {kK, const_cast<void *>(buffers.k)},
      {kV, const_cast<void *>(buffers.v)},
      {kO, buffers.o}};
  bool stats = backward || buffers.stats;
  if (stats)
    pack[kStats] = buffers.stats;
  if (backward) {
    pack[kDO] = const_cast<void *>(buffers.dO);
    pack[kDQ] = buffers.dQ;
    pack[kDK] = buffers.dK;
    pack[kDV] = buffers.dV;
  }
  if (buffers.bias)
    pack[kBias] = const_cast<void *>(buffers.bias);
  Runtime::ContextScope scope(rt, a.entry);
  if (!scope)
    return rt.status();
  CUstream stream = rt.computeStream();
  if (!stream)
    return rt.status();
  cudnnHandle_t &handle = state().handles[rt.defaultDevice()];
  if (!handle) {
    cudnnStatus_t status = cudnnCreate(&handle);
    if (status != CUDNN_STATUS_SUCCESS) {
      handle = nullptr;
      rt.recordError(kStatusDnnFailure, a.entry,
                     std::string("cudnnCreate failed: ") +
                         cudnnGetErrorString(status));
      return rt.status();
    }
  }
  cudnnStatus_t status =
      cudnnSetStream(handle, reinterpret_cast<cudaStream_t>(stream));
  if (status != CUDNN_STATUS_SUCCESS) {
    rt.recordError(kStatusDnnFailure, a.entry,
                   std::string("cudnnSetStream failed: ") +
                       cudnnGetErrorString(status));
    return rt.status();
  }
  auto graph = graphFor(rt, handle, a, backward, stats);
  if (!graph)
    return rt.status();
  int64_t workspaceBytes = 0;
  fe::error_t err = graph->get_workspace_size(workspaceBytes);
  void *workspace = nullptr;
  if (err.is_good() && workspaceBytes > 0) {
    workspace = rt.memAlloc(workspaceBytes, stream, false);
    if (!workspace)
      return rt.status();
  }
  if (err.is_good())
    err = graph->execute(handle, pack, workspace);
  rt.memFree(workspace, stream);
  if (err.is_bad()) {
    rt.recordError(kStatusDnnFailure, a.entry,
                   std::string("cudnn_frontend::Graph::execute failed: ") +
                       err.get_message(),
                   sdpaDims(a));
    return rt.status();
  }
  return kStatusOk;
}

} // namespace

#define JOINT_SDPA_AVAILABLE 1

void joint::cuda::shutdownDnn(Runtime &rt) {
  state().graphs.clear();
  int saved = rt.defaultDevice();
  for (auto &[device, handle] : state().handles) {
    rt.setDefaultDevice(device);
    Runtime::ContextScope scope(rt, "joint_runtime_shutdown");
    if (!scope)
      continue;
    cudnnStatus_t status = cudnnDestroy(handle);
    if (status != CUDNN_STATUS_SUCCESS)
      rt.recordError(kStatusDnnFailure, "joint_runtime_shutdown",
                     std::string("cudnnDestroy failed: ") +
                         cudnnGetErrorString(status));
  }
  state().handles.clear();
  rt.setDefaultDevice(saved);
}

#else // !JOINT_HAVE_CUDNN_FRONTEND

#define JOINT_SDPA_AVAILABLE 0

void joint::cuda::shutdownDnn(Runtime &) {}

#endif // JOINT_HAVE_CUDNN_FRONTEND

namespace {

/// One SDPA call through the shared path (Libraries.h). Without the cuDNN
/// frontend a GPU run is refused before any check; the emulated device runs
/// its CPU reference either way.
int32_t sdpa(const SdpaArgs &a, const SdpaBuffers &buffers, bool backward,
             const char *node) {
  GlobalLock rt;
#if JOINT_SDPA_AVAILABLE
  return runSdpa(*rt, a, buffers, backward, node, cudnnSdpa);
#else
  if (isEmulated(rt->driverApi()))
    return runSdpa(*rt, a, buffers, backward, node, nullptr);
  rt->setNode(node);
  rt->recordError(kStatusDnnFailure, a.entry,
                  "this runtime was built without the cuDNN frontend "
                  "headers (pip install nvidia-cudnn-frontend, reconfigure)");
  return rt->status();
#endif
}

} // namespace

#define JOINT_EXPORT extern "C" __attribute__((visibility("default")))

/// Name of the first null entry, or null when all are set.
static const char *
firstNull(std::initializer_list<std::pair<const char *, const void *>> args) {
  for (const auto &[name, ptr] : args)
    if (!ptr)
      return name;
  return nullptr;
}

JOINT_EXPORT int32_t joint_cudnn_sdpa_available(void) {
  return JOINT_SDPA_AVAILABLE;
}

JOINT_EXPORT int32_t joint_cudnn_sdpa_forward(
    const char *node, int32_t dtype, int64_t batch, int64_t heads_q,
    int64_t heads_kv, int64_t seq_q, int64_t seq_kv, int64_t head_dim,
    float scale, int32_t causal, const void *q, const int64_t *q_strides,
    const void *k, const int64_t *k_strides, const void *v,
    const int64_t *v_strides, void *o, const int64_t *o_strides, float *stats,
    const void *bias, const int64_t *bias_dims, const int64_t *bias_strides) {
  SdpaArgs a{"joint_cudnn_sdpa_forward",
             dtype,
             batch,
             heads_q,
             heads_kv,
             seq_q,
             seq_kv,
             head_dim,
             {q_strides, k_strides, v_strides, o_strides},
             scale,
             causal != 0,
             bias ? bias_dims : nullptr,
             bias ? bias_strides : nullptr};
  a.missing = firstNull({{"q", q},
                         {"q strides", q_strides},
                         {"k", k},
                         {"k strides", k_strides},
                         {"v", v},
                         {"v strides", v_strides},
                         {"o", o},
                         {"o strides", o_strides}});
  if (!a.missing && bias)
    a.missing =
        firstNull({{"bias dims", bias_dims}, {"bias strides", bias_strides}});
  SdpaBuffers buffers;
  buffers.q = q;
  buffers.k = k;
  buffers.v = v;
  buffers.o = o;
  buffers.stats = stats;
  buffers.bias = bias;
  return sdpa(a, buffers, /*backward=*/false, node);
}

JOINT_EXPORT int32_t joint_cudnn_sdpa_backward(
    const char *node, int32_t dtype, int64_t batch, int64_t heads_q,
    int64_t heads_kv, int64_t seq_q, int64_t seq_kv, int64_t head_dim,
    float scale, int32_t causal, const void *q, const int64_t *q_strides,
    const void *k, const int64_t *k_strides, const void *v,
    const int64_t *v_strides, const void *o, const int64_t *o_strides,
    const void *d_o, const int64_t *d_o_strides, const float *stats, void *d_q,
    const int64_t *d_q_strides, void *d_k, const int64_t *d_k_strides,
    void *d_v, const int64_t *d_v_strides, const void *bias,
    const int64_t *bias_dims, const int64_t *bias_strides) {
  SdpaArgs a{"joint_cudnn_sdpa_backward",
             dtype,
             batch,
             heads_q,
             heads_kv,
             seq_q,
             seq_kv,
             head_dim,
             {q_strides, k_strides, v_strides, o_strides, d_o_strides,
              d_q_strides, d_k_strides, d_v_strides},
             scale,
             causal != 0,
             bias ? bias_dims : nullptr,
             bias ? bias_strides : nullptr};
  a.missing = firstNull({{"q", q},
                         {"q strides", q_strides},
                         {"k", k},
                         {"k strides", k_strides},
                         {"v", v},
                         {"v strides", v_strides},
                         {"o", o},
                         {"o strides", o_strides},
                         {"dO", d_o},
                         {"dO strides", d_o_strides},
                         {"stats", stats},
                         {"dQ", d_q},
                         {"dQ strides", d_q_strides},
                         {"dK", d_k},
                         {"dK strides", d_k_strides},
                         {"dV", d_v},
                         {"dV strides", d_v_strides}});
  if (!a.missing && bias)
    a.missing =
        firstNull({{"bias dims", bias_dims}, {"bias strides", bias_strides}});
  SdpaBuffers buffers;
  buffers.q = q;
  buffers.k = k;
  buffers.v = v;
  buffers.o = const_cast<void *>(o);
  buffers.dO = d_o;
  buffers.stats = const_cast<float *>(stats);
  buffers.dQ = d_q;
  buffers.dK = d_k;
  buffers.dV = d_v;
  buffers.bias = bias;
  return sdpa(a, buffers, /*backward=*/true, node);
}

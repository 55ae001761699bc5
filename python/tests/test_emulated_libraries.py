"""The CPU references of the CUDA runtime's library shims on the emulated
device (runtime/cuda/README.md, "Emulated device") against torch:
``joint_cudnn_sdpa_forward``/``_backward`` in bf16 with grouped key/value
heads, an additive bias broadcast over the batch, with and without the
causal flag, against torch's math attention in float64 on the same inputs
(output, logsumexp statistics, dQ, dK, dV), and against torch's CPU flash
kernel; and a strided-batched bf16 GEMM with a transposed operand against
``torch.matmul``. Runs in a child process: the runtime picks its device
(``JOINT_CUDA_DEVICE=emulated``) once, when loaded.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from graph_tools import build_dir, cuda_built

CHILD = r"""
import ctypes, json, sys
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

lib = ctypes.CDLL(sys.argv[1])
P, I64, I32, F = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int32, ctypes.c_float
A = ctypes.POINTER(I64)
lib.mgpuMemAlloc.restype = P
lib.mgpuMemAlloc.argtypes = [ctypes.c_uint64, P, ctypes.c_bool]
lib.mgpuMemcpy.argtypes = [P, P, ctypes.c_size_t, P]
lib.mgpuMemFree.argtypes = [P, P]
lib.mgpuStreamCreate.restype = P
lib.mgpuStreamSynchronize.argtypes = [P]
lib.joint_runtime_last_error.restype = ctypes.c_char_p
lib.joint_cudnn_sdpa_forward.argtypes = (
    [ctypes.c_char_p, I32] + [I64] * 6 + [F, I32] + [P, A] * 4 + [P, P, A, A])
lib.joint_cudnn_sdpa_backward.argtypes = (
    [ctypes.c_char_p, I32] + [I64] * 6 + [F, I32] + [P, A] * 5 + [P] +
    [P, A] * 3 + [P, A, A])
lib.joint_cublas_gemm_strided_batched.argtypes = (
    [ctypes.c_char_p, I32, I32, I32, I64, I64, I64, F, P, I64, I64, P, I64,
     I64, F, P, I64, I64, I64])
BF16 = 1
stream = lib.mgpuStreamCreate()
pairs = []  # (device pointer, host tensor)

def device(t):
    t = t.contiguous()
    p = lib.mgpuMemAlloc(t.numel() * t.element_size(), stream, False)
    lib.mgpuMemcpy(p, t.data_ptr(), t.numel() * t.element_size(), stream)
    pairs.append((p, t))
    return p

def output(shape, dtype):
    t = torch.empty(shape, dtype=dtype)
    p = lib.mgpuMemAlloc(t.numel() * t.element_size(), stream, False)
    pairs.append((p, t))
    return p, t

def fetch(*outs):
    for p, t in outs:
        lib.mgpuMemcpy(t.data_ptr(), p, t.numel() * t.element_size(), stream)
    lib.mgpuStreamSynchronize(stream)

def ints(values):
    return (I64 * len(values))(*values)

def rel(got, want):
    return float((got.double() - want.double()).abs().max() /
                 want.double().abs().max())

torch.manual_seed(0)
B, H, Hkv, L, S, D, scale = 2, 4, 2, 16, 16, 16, 0.25
bf = torch.bfloat16
q, dO = torch.randn(B, H, L, D).to(bf), torch.randn(B, H, L, D).to(bf)
k, v = torch.randn(B, Hkv, S, D).to(bf), torch.randn(B, Hkv, S, D).to(bf)
bias = (torch.randn(1, H, L, S) * 0.5).to(bf)
result = {}
for causal in (0, 1):
    qs, ks, bs = ints([H * L * D, L * D, D, 1]), ints([Hkv * S * D, S * D, D, 1]), ints([H * L * S, L * S, S, 1])
    pq, pk, pv, pb, pdo = map(device, (q, k, v, bias, dO))
    o, stats = output((B, H, L, D), bf), output((B, H, L), torch.float32)
    lib.joint_cudnn_sdpa_forward(b"sdpa", BF16, B, H, Hkv, L, S, D, scale,
                                 causal, pq, qs, pk, ks, pv, ks, o[0], qs,
                                 stats[0], pb, ints([1, H, L, S]), bs)
    dq, dk, dv = (output((B, H, L, D), bf), output((B, Hkv, S, D), bf),
                  output((B, Hkv, S, D), bf))
    lib.joint_cudnn_sdpa_backward(b"sdpa_bwd", BF16, B, H, Hkv, L, S, D,
                                  scale, causal, pq, qs, pk, ks, pv, ks, o[0],
                                  qs, pdo, qs, stats[0], dq[0], qs, dk[0], ks,
                                  dv[0], ks, pb, ints([1, H, L, S]), bs)
    fetch(o, stats, dq, dk, dv)
    # torch's math attention in float64 (GQA: key/value head h // (H/Hkv)).
    # The mask passed to torch is the bias with -inf where causal hides a
    # key; torch's own is_causal is bottom-right for L != S, cuDNN's
    # top-left, so the mask spells it out.
    q64, k64, v64 = (t.double().requires_grad_() for t in (q, k, v))
    kk = k64.repeat_interleave(H // Hkv, 1)
    vv = v64.repeat_interleave(H // Hkv, 1)
    s = q64 @ kk.transpose(-1, -2) * scale + bias.double()
    if causal:  # top-left: query i sees keys j <= i
        s = s.masked_fill(~torch.ones(L, S, dtype=torch.bool).tril(), float("-inf"))
    mask = bias.double().expand(B, H, L, S)
    if causal:
        mask = mask.masked_fill(~torch.ones(L, S, dtype=torch.bool).tril(),
                                float("-inf"))
    with sdpa_kernel([SDPBackend.MATH]):
        ref = torch.nn.functional.scaled_dot_product_attention(
            q64, k64, v64, attn_mask=mask, scale=scale,
            enable_gqa=True)
    ref.backward(dO.double())
    flash = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
        q, k.repeat_interleave(H // Hkv, 1), v.repeat_interleave(H // Hkv, 1),
        0.0, bool(causal), attn_mask=bias, scale=scale)[0]
    result[f"causal={causal}"] = {
        "status": lib.joint_runtime_status(),
        "error": lib.joint_runtime_last_error().decode(),
        "o": rel(o[1], ref.detach()),
        "lse": float((stats[1].double() - torch.logsumexp(s, -1)).abs().max()),
        "dq": rel(dq[1], q64.grad), "dk": rel(dk[1], k64.grad),
        "dv": rel(dv[1], v64.grad),
        "flash_o": rel(o[1], flash),
    }
# C[b] = A[b] B[b]^T, bf16 into bf16, batch 3.
a, b = torch.randn(3, 5, 7).to(bf), torch.randn(3, 6, 7).to(bf)
c = output((3, 5, 6), bf)
lib.joint_cublas_gemm_strided_batched(b"bmm", BF16, 0, 1, 5, 6, 7, 1.0,
                                      device(a), 7, 35, device(b), 7, 42, 0.0,
                                      c[0], 6, 30, 3)
fetch(c)
want = (a.float() @ b.float().transpose(1, 2)).to(bf)
result["gemm"] = {"status": lib.joint_runtime_status(),
                  "ulps_off": int(((c[1].view(torch.int16).int() -
                                    want.view(torch.int16).int()).abs()).max())}
for p, _ in pairs:
    lib.mgpuMemFree(p, stream)
print(json.dumps(result))
"""


def test_library_references_match_torch() -> None:
    cuda_built()
    env = dict(os.environ, JOINT_CUDA_DEVICE="emulated")
    # The runtime links libcuda.so.1, which the emulated device never calls.
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        [str(build_dir() / "lib" / "cuda-stub")] +
        ([env["LD_LIBRARY_PATH"]] if env.get("LD_LIBRARY_PATH") else []))
    r = subprocess.run([sys.executable, "-c", CHILD,
                        str(build_dir() / "lib" / "libjoint_cuda_runtime.so")],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-4000:]
    result = json.loads(r.stdout.strip().splitlines()[-1])
    for case in ("causal=0", "causal=1"):
        got = result[case]
        assert got["status"] == 0, got["error"]
        # bf16 storage of outputs and of the flash GEMMs' operands (P, dS):
        # within 1% of the largest value; the f32 statistics to roundoff.
        for name in ("o", "dq", "dk", "dv"):
            assert got[name] < 1e-2, (case, name, got)
        assert got["lse"] < 1e-5, (case, got)
        # torch's CPU flash kernel differs by its approximate exp only.
        assert got["flash_o"] < 1e-2, (case, got)
    # One rounding of the f32 sum, as torch's bf16 matmul on the CPU.
    assert result["gemm"] == {"status": 0, "ulps_off": 0}, result["gemm"]

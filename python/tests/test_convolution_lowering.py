"""Convolution forward and backward lowered for the CPU
(convert-joint-to-linalg, Convolution.cpp): 1-d with groups, dilation and
stride, 2-d with padding, stride and bias, 3-d without bias, traced from one
module in f32 and bf16, compiled and compared with torch within the compiled
tolerances (loss and every gradient: input, weight and bias gradients).
Transposed convolutions (ConvTranspose1d/2d/3d with stride, padding,
output_padding, dilation, groups, bias on and off) likewise (output_padding
not below stride in f32 only: torch's CPU kernel for it rounds bf16 per
kernel tap), and built for the CUDA target by joint-compile --target=cuda.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

from graph_tools import build_dir, cuda_built, tool
from helpers import assert_compiled_matches_torch
from joint_mlir import trace_joint_graph


class _Convs(nn.Module):
    def __init__(self, dtype: torch.dtype) -> None:
        super().__init__()
        torch.manual_seed(4)
        # The first conv of each pair makes the second one's input need a
        # gradient, so grad_input is lowered with stride, dilation, groups
        # and padding.
        self.c1a = nn.Conv1d(4, 4, 1).to(dtype)
        self.c1 = nn.Conv1d(4, 6, 3, stride=2, padding=1, dilation=2,
                            groups=2).to(dtype)
        self.c2a = nn.Conv2d(3, 3, 1, bias=False).to(dtype)
        self.c2 = nn.Conv2d(3, 5, 3, stride=2, padding=1).to(dtype)
        self.c3a = nn.Conv3d(2, 2, 1).to(dtype)
        self.c3 = nn.Conv3d(2, 3, 2, bias=False).to(dtype)

    def forward(self, a: torch.Tensor, b: torch.Tensor,
                c: torch.Tensor) -> torch.Tensor:
        return ((self.c1(self.c1a(a)).float() ** 2).mean()
                + self.c2(self.c2a(b)).float().tanh().sum()
                + (self.c3(self.c3a(c)).float() * 0.5).sum())


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16],
                         ids=["f32", "bf16"])
def test_convolutions_match_torch(dtype: torch.dtype, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    g = torch.Generator().manual_seed(6)
    inputs = {"a": torch.randn(2, 4, 11, generator=g).to(dtype),
              "b": torch.randn(2, 3, 7, 6, generator=g).to(dtype),
              "c": torch.randn(1, 2, 3, 4, 3, generator=g).to(dtype)}
    doc = trace_joint_graph(_Convs(dtype), lambda m, **kw: m(**kw),
                            inputs).to_json_dict()
    backward = [n["args"][-1]["v"] for n in doc["nodes"]
                if n["target"] == "aten::convolution_backward.default"]
    # output_mask: grad_input for the second conv of each pair only.
    assert sorted(m[0]["v"] for m in backward) == [False] * 3 + [True] * 3
    assert_compiled_matches_torch(doc, tmp_path / "convs.json", monkeypatch)


class _TransposedConvs(nn.Module):
    def __init__(self, dtype: torch.dtype) -> None:
        super().__init__()
        torch.manual_seed(5)
        # As above, the first module of each chain makes the next one's input
        # need a gradient; t1a and t3a are transposed convolutions whose
        # grad_input is not asked for.
        self.t1a = nn.ConvTranspose1d(4, 4, 1).to(dtype)
        self.t1 = nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1,
                                     output_padding=1, dilation=2,
                                     groups=2).to(dtype)
        self.t2a = nn.Conv2d(3, 4, 1, bias=False).to(dtype)
        self.t2 = nn.ConvTranspose2d(4, 6, (3, 2), stride=(2, 3),
                                     padding=(1, 0), output_padding=(1, 2),
                                     groups=2, bias=False).to(dtype)
        # output_padding >= stride makes torch's CPU pick its slow
        # transposed kernel (col2im), which rounds bf16 once per kernel tap;
        # the lowering rounds once (as torch's oneDNN path), so that case is
        # compared in f32 only.
        self.t2b = nn.ConvTranspose2d(
            6, 2, 3, padding=2, dilation=2,
            output_padding=1 if dtype == torch.float32 else 0).to(dtype)
        self.t3a = nn.ConvTranspose3d(2, 2, 1, bias=False).to(dtype)
        self.t3 = nn.ConvTranspose3d(2, 3, 2, stride=2, padding=1,
                                     output_padding=1,
                                     dilation=(1, 2, 1)).to(dtype)

    def forward(self, a: torch.Tensor, b: torch.Tensor,
                c: torch.Tensor) -> torch.Tensor:
        return ((self.t1(self.t1a(a)).float() ** 2).mean()
                + self.t2b(self.t2(self.t2a(b))).float().tanh().sum()
                + (self.t3(self.t3a(c)).float() * 0.5).sum())


def _transposed_doc(dtype: torch.dtype) -> dict:
    g = torch.Generator().manual_seed(7)
    inputs = {"a": torch.randn(2, 4, 5, generator=g).to(dtype),
              "b": torch.randn(2, 3, 4, 3, generator=g).to(dtype),
              "c": torch.randn(1, 2, 3, 2, 3, generator=g).to(dtype)}
    return trace_joint_graph(_TransposedConvs(dtype), lambda m, **kw: m(**kw),
                             inputs).to_json_dict()


def _conv_nodes(doc: dict) -> tuple[list, list]:
    fwd = [n["args"] for n in doc["nodes"]
           if n["target"] == "aten::convolution.default"]
    bwd = [n["args"] for n in doc["nodes"]
           if n["target"] == "aten::convolution_backward.default"]
    return fwd, bwd


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16],
                         ids=["f32", "bf16"])
def test_transposed_convolutions_match_torch(
        dtype: torch.dtype, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    doc = _transposed_doc(dtype)
    fwd, bwd = _conv_nodes(doc)
    # transposed (args[6] forward, args[7] backward): all but t2a.
    assert sorted(a[6]["v"] for a in fwd) == [False] + [True] * 6
    assert sorted(a[7]["v"] for a in bwd) == [False] + [True] * 6
    # output_mask: grad_input for t1, t2, t2b, t3 (and t2a's is not asked).
    masks = sorted(tuple(x["v"] for x in a[-1]["v"]) for a in bwd if a[7]["v"])
    assert [m[0] for m in masks] == [False] * 2 + [True] * 4
    assert_compiled_matches_torch(doc, tmp_path / "tconvs.json", monkeypatch)


def test_transposed_convolutions_build_for_cuda() -> None:
    cuda_built()
    tool("joint-compile")
    import json
    import re
    import subprocess

    from joint_mlir.mlir_cpu import compile_graph
    out = compile_graph(_transposed_doc(torch.float32), target="cuda",
                        cache_dir=build_dir() / "test-step-cache")
    desc = json.loads(Path(str(out) + ".json").read_text())
    assert desc["format"] == "joint-cuda-step"
    assert desc["entry"] == "joint_step"
    syms = subprocess.run(["nm", "-D", str(out)], capture_output=True,
                          text=True).stdout
    assert re.search(r" T joint_step$", syms, re.M)
    assert re.search(r" U mgpuLaunchKernel$", syms, re.M)

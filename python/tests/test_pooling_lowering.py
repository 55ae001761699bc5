"""2-d pooling forward and backward lowered for the CPU
(convert-joint-to-linalg, Pooling.cpp): a small conv net with max pooling
(padding and stride; ceil_mode; dilation), average pooling (count_include_pad
True and False, ceil_mode, divisor_override) and adaptive average pooling
(output size dividing the input, and general overlapping bins), traced in
f32 and bf16, compiled and compared with torch within the compiled
tolerances: the loss, every gradient (through the three backwards), and the
max pooling values and int64 indices (exactly). The ReLU in front of the max
pools makes ties (zeros), which keep the first index as torch does. The bf16
net also runs as a CUDA step on the emulated device (the same lowering
through the GPU pipeline's kernels). Edge cases on given inputs: NaNs (the
last NaN of a window wins), a window of -inf, ceil_mode's partial windows
with and without the padding counted, adaptive bins overlapping in both dims.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from helpers import assert_compiled_matches_torch
from joint_mlir import trace_joint_graph


class _PoolNet(nn.Module):
    def __init__(self, dtype: torch.dtype) -> None:
        super().__init__()
        torch.manual_seed(5)
        self.conv1 = nn.Conv2d(3, 4, 3, padding=1).to(dtype)
        self.conv2 = nn.Conv2d(4, 4, 1).to(dtype)
        self.head = nn.Linear(4 * 9, 3).to(dtype)

    def forward(self, x: torch.Tensor
                ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        y = torch.relu(self.conv1(x))  # [2, 4, 9, 9]
        p, idx = F.max_pool2d(y, 3, stride=2, padding=1,
                              return_indices=True)  # [2, 4, 5, 5]
        c, idx_ceil = F.max_pool2d(y, 2, stride=2, ceil_mode=True,
                                   return_indices=True)  # [2, 4, 5, 5]
        z = self.conv2(p + c)
        d, idx_dil = F.max_pool2d(z, 3, stride=1, padding=1, dilation=2,
                                  return_indices=True)  # [2, 4, 3, 3]
        avg_excl = F.avg_pool2d(y, 3, stride=2, padding=1,
                                count_include_pad=False)  # [2, 4, 5, 5]
        avg_incl = F.avg_pool2d(y, 3, stride=2, padding=1)
        avg_ceil = F.avg_pool2d(z, 2, ceil_mode=True, count_include_pad=False)
        avg_div = F.avg_pool2d(z, 2, divisor_override=3)  # [2, 4, 2, 2]
        bins = F.adaptive_avg_pool2d(z, (3, 2))  # overlapping bins of 5
        even = F.adaptive_avg_pool2d(y, 3)  # 9 -> 3: bins of 3
        loss = ((self.head(even.flatten(1)).float() ** 2).mean()
                + (d.float() ** 2).sum() * 0.1
                + (avg_excl.float() * avg_incl.float()).sum()
                + avg_ceil.float().tanh().sum()
                + (avg_div.float() ** 3).sum()
                + (bins.float() ** 2).sum())
        return loss, {"pooled": p, "indices": idx, "indices_ceil": idx_ceil,
                      "indices_dilated": idx_dil}


def _trace(dtype: torch.dtype) -> dict:
    g = torch.Generator().manual_seed(7)
    inputs = {"x": torch.randn(2, 3, 9, 9, generator=g).to(dtype)}
    return trace_joint_graph(_PoolNet(dtype), lambda m, **kw: m(**kw),
                             inputs).to_json_dict()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16],
                         ids=["f32", "bf16"])
def test_pooling_matches_torch(dtype: torch.dtype, tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    doc = _trace(dtype)
    targets = {n["target"] for n in doc["nodes"]}
    for op in ("max_pool2d_with_indices", "avg_pool2d",
               "_adaptive_avg_pool2d"):
        assert f"aten::{op}.default" in targets
        assert f"aten::{op}_backward.default" in targets
    assert_compiled_matches_torch(doc, tmp_path / "pool.json", monkeypatch)


def test_pooling_on_the_emulated_cuda_device(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from graph_tools import build_dir, tool
    from joint_mlir.executor import compare_scaled, format_differences, run

    tool("joint-compile")
    monkeypatch.setenv("JOINT_MLIR_CACHE",
                       str(build_dir() / "joint_mlir_cache"))
    path = tmp_path / "pool-bf16.json"
    path.write_text(json.dumps(_trace(torch.bfloat16)))
    want = run(str(path), seed=0)
    got = run(str(path), seed=0, backend="mlir-cuda-emulated")
    diffs = compare_scaled(got, want)
    assert diffs and all(d.ok for d in diffs), format_differences(diffs)


class _EdgeCases(nn.Module):
    """Max pooling indices over NaNs (the last NaN of a window wins), a
    window of -inf (its first position) and zeros (ties: the first), and
    average pooling with ceil_mode's partial windows, including and excluding
    the padding, and adaptive bins overlapping in both dims (7x6 -> 4x3)."""

    def __init__(self, dtype: torch.dtype) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.ones(3, dtype=dtype))

    def forward(self, x: torch.Tensor, y: torch.Tensor
                ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        _, strided = F.max_pool2d(x, 3, stride=2, padding=1,
                                  return_indices=True)
        _, dilated = F.max_pool2d(x, 2, stride=1, dilation=2, ceil_mode=True,
                                  return_indices=True)
        incl = F.avg_pool2d(y * self.w[0], 3, stride=2, padding=1,
                            ceil_mode=True)
        excl = F.avg_pool2d(y * self.w[1], 3, stride=2, padding=1,
                            ceil_mode=True, count_include_pad=False)
        bins = F.adaptive_avg_pool2d(y * self.w[2], (4, 3))
        loss = ((incl.float() ** 2).sum() + (excl.float() ** 3).sum()
                + bins.float().tanh().sum())
        return loss, {"strided": strided, "dilated": dilated, "incl": incl,
                      "excl": excl, "bins": bins}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16],
                         ids=["f32", "bf16"])
def test_pooling_edge_cases_match_torch(dtype: torch.dtype, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch
                                        ) -> None:
    from graph_tools import build_dir, tool
    from joint_mlir.executor import compare_scaled, format_differences, run
    from safetensors.torch import save_file

    tool("joint-compile")
    monkeypatch.setenv("JOINT_MLIR_CACHE",
                       str(build_dir() / "joint_mlir_cache"))

    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 2, 8, 7, generator=g)
    x[0, 0, 1, 1] = x[0, 0, 1, 2] = float("nan")
    x[1, 1, 4, 4] = float("nan")
    x[1, 0, :3, :3] = float("-inf")
    x[1, 0, 5:, 5:] = 0.0
    y = torch.randn(2, 2, 7, 6, generator=g)
    given = {"x": x.to(dtype), "y": y.to(dtype)}
    model = _EdgeCases(dtype)
    doc = trace_joint_graph(model, lambda m, **kw: m(**kw),
                            given).to_json_dict()
    path = tmp_path / "edges.json"
    path.write_text(json.dumps(doc))
    values = tmp_path / "values.safetensors"
    save_file({**given, **{k: v.detach() for k, v in
                           model.state_dict().items()}}, str(values))
    want = run(str(path), safetensors=str(values))
    got = run(str(path), backend="mlir-cpu", safetensors=str(values))
    # The NaN windows: the last NaN's flat index (1 * 7 + 2 = 9 in the
    # second window of the first row), the -inf window its first position.
    strided = want.named_outputs()["loss_dict strided"]
    assert strided[0, 0, 0, :2].tolist() == [8, 9]
    assert strided[1, 0, 0, 0].item() == 0
    diffs = compare_scaled(got, want)
    assert diffs and all(d.ok for d in diffs), format_differences(diffs)

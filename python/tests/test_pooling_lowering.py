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
through the GPU pipeline's kernels).
"""

from __future__ import annotations

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
    import json

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

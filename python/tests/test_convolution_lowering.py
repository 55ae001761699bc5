"""Convolution forward and backward lowered for the CPU
(convert-joint-to-linalg, Convolution.cpp): 1-d with groups, dilation and
stride, 2-d with padding, stride and bias, 3-d without bias, traced from one
module in f32 and bf16, compiled and compared with torch within the compiled
tolerances (loss and every gradient: input, weight and bias gradients).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

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

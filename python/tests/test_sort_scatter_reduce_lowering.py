"""``sort`` lowered for the CPU (convert-joint-to-linalg,
IndirectDataMovement), traced from a small module in f32 and bf16, compiled
for the CPU and compared with torch within the compiled tolerances (loss,
every gradient). ``sort.default`` and ``sort.stable`` along either dim, both
orders; its backward is ``scatter.src`` through the indices. Ties (from
``clamp``) and NaN (``sqrt`` of negatives, sorted as the largest value) are
sorted stably; their int64 indices enter the loss with a weight large enough
that one swapped pair fails the f32 tolerance.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

from helpers import assert_compiled_matches_torch
from joint_mlir import trace_joint_graph


class _Sorting(nn.Module):
    def __init__(self, dtype: torch.dtype) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(11)
        self.w = nn.Parameter(torch.randn(4, 6, generator=g).to(dtype))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(6, dtype=torch.float32)
        v, i = torch.sort(self.w * x, dim=1, descending=True)
        v2, i2 = torch.sort(self.w, dim=0, stable=True)
        ties = torch.clamp(self.w, -0.2, 0.2)
        v3, i3 = torch.sort(ties, dim=-1, stable=True)
        nan = torch.sqrt(self.w)
        _, i4 = torch.sort(nan, dim=1, stable=True)
        _, i5 = torch.sort(nan, dim=1, descending=True, stable=True)
        values = ((v.float() * pos).sum() + (v2.float() ** 2).sum()
                  + (v3.float() * pos * 2).sum())
        indices = ((i.float() * pos).sum() + (i2.float() * 3).sum()
                   + (i3.float() * pos).sum() + (i4.float() * pos).sum()
                   + (i5.float() * pos).sum())
        return values + indices


SORT = {"aten::sort.default", "aten::sort.stable", "aten::scatter.src"}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16],
                         ids=["f32", "bf16"])
def test_sort_matches_torch(dtype: torch.dtype, tmp_path: Path,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = {"x": torch.randn(4, 6,
                               generator=torch.Generator().manual_seed(2)
                               ).to(dtype)}
    doc = trace_joint_graph(_Sorting(dtype), lambda m, **kw: m(**kw),
                            inputs).to_json_dict()
    targets = {n["target"] for n in doc["nodes"]
               if isinstance(n.get("target"), str)}
    assert SORT <= targets, SORT - targets
    assert_compiled_matches_torch(doc, tmp_path / "sort.json", monkeypatch)

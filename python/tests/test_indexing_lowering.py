"""Gathers, scatters and selection lowered for the CPU (convert-joint-to-linalg,
IndirectDataMovement): ``gather`` (its backward is ``scatter_add``), advanced
indexing with repeated rows (its backward is ``index_put`` with
accumulate), ``index_add`` with alpha, ``topk`` (its backward scatters) and
``scatter.src``, traced from one module in f32 and bf16, compiled for the CPU
and compared with torch within the compiled tolerances (loss, every
gradient); ``topk``'s int64 indices must be exact.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

from helpers import assert_compiled_matches_torch
from joint_mlir import trace_joint_graph


class _Indexing(nn.Module):
    def __init__(self, dtype: torch.dtype) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(3)
        self.w = nn.Parameter(torch.randn(6, 8, generator=g).to(dtype))
        self.v = nn.Parameter(torch.randn(4, 8, generator=g).to(dtype))

    def forward(self, idx: torch.Tensor, rows: torch.Tensor,
                dst: torch.Tensor) -> torch.Tensor:
        gathered = torch.gather(self.w, 1, idx)
        picked = self.w[rows]
        added = self.w.index_add(0, dst, self.v, alpha=2)
        vals, ind = torch.topk(self.w, 3, dim=1)
        spread = torch.zeros_like(self.w).scatter(1, ind, vals)
        return ((gathered.float() * 1.5).sum() + (picked.float() ** 2).sum()
                + (added.float() ** 2).sum() + (vals.float() ** 2).sum()
                + spread.float().sum() + ind.sum().float() * 1e-3)


TARGETS = {"aten::gather.default", "aten::scatter_add.default",
           "aten::index.Tensor", "aten::index_put.default",
           "aten::index_add.default", "aten::topk.default",
           "aten::scatter.src"}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16],
                         ids=["f32", "bf16"])
def test_indexing_ops_match_torch(dtype: torch.dtype, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    g = torch.Generator().manual_seed(5)
    inputs = {
        "idx": torch.randint(0, 8, (6, 5), generator=g),
        "rows": torch.tensor([0, 3, 3, 5, 0, 3]),      # repeated rows
        "dst": torch.tensor([1, 4, 1, -1]),             # repeated, negative
    }
    doc = trace_joint_graph(_Indexing(dtype), lambda m, **kw: m(**kw),
                            inputs).to_json_dict()
    targets = {n["target"] for n in doc["nodes"]
               if isinstance(n.get("target"), str)}
    assert TARGETS <= targets, TARGETS - targets
    assert_compiled_matches_torch(doc, tmp_path / "indexing.json", monkeypatch)


class _Selecting(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(7)
        self.w = nn.Parameter(torch.randn(5, 6, generator=g))

    def forward(self, ints: torch.Tensor) -> torch.Tensor:
        top, at = self.w.max(dim=1)
        low, at_low = self.w.min(dim=0, keepdim=True)
        picks = (self.w.argmax() + self.w.argmin(dim=1, keepdim=True).sum()
                 + ints.argmax(dim=1).sum() + ints.argmin(dim=0).sum())
        return ((top ** 2).sum() + low.sum() * 0.5
                + (at.sum() + at_low.sum() + picks).float() * 1e-3)


SELECTING = {"aten::max.dim", "aten::min.dim", "aten::argmax.default",
             "aten::argmin.default"}


def test_selecting_reductions_match_torch(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    """max.dim / min.dim (values and indices, their backward) and argmax /
    argmin over a dim and over the flattened tensor; the integer input has
    ties, where torch returns the first index."""
    ints = torch.tensor([[3, 7, 7, 1], [2, 2, 0, 0], [5, 1, 5, 9]])
    doc = trace_joint_graph(_Selecting(), lambda m, **kw: m(**kw),
                            {"ints": ints}).to_json_dict()
    targets = {n["target"] for n in doc["nodes"]
               if isinstance(n.get("target"), str)}
    assert SELECTING <= targets, SELECTING - targets
    assert_compiled_matches_torch(doc, tmp_path / "selecting.json",
                                  monkeypatch)

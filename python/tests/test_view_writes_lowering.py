"""In-place writes through views lowered for the CPU (convert-joint-to-linalg,
ViewWrites.cpp): a fresh tensor shifted right by copy_ into a slice and
fill_ of a column (T5's decoder inputs), a write through a transpose and a
select read back through a view taken before it, a narrowed piece scaled
in place, and a buffer updated through a reshaped view. Traced from one module
in f32 and bf16, compiled and compared with torch within the compiled
tolerances (loss, every gradient, the updated buffer).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

from helpers import assert_compiled_matches_torch
from joint_mlir import trace_joint_graph


class _ViewWrites(nn.Module):
    def __init__(self, dtype: torch.dtype) -> None:
        super().__init__()
        torch.manual_seed(3)
        self.w = nn.Parameter(torch.randn(4, 6).to(dtype))
        self.register_buffer("seen", torch.zeros(6, dtype=dtype))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x @ self.w                                   # [3, 6]
        # Shift right along dim 1 into a fresh tensor, first column 0.5.
        shifted = h.new_zeros(h.shape)
        shifted[:, 1:] = h[:, :-1].clone()
        shifted[:, 0] = 0.5
        # A view taken before two writes through other views of `t`.
        t = torch.zeros(6, 3, dtype=h.dtype)
        row = t[2]
        t.t()[1].copy_(h[0])                             # column 1 of t
        t.narrow(0, 4, 2).mul_(3.0).add_(1.0)            # rows 4 and 5
        # The buffer, updated through a reshaped view.
        self.seen.view(2, 3)[1].add_(h[1, :3].detach())
        return ((shifted * h).sum() + (t.sum(0) * row).sum()
                + t.square().mean() + self.seen.sum())


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16],
                         ids=["f32", "bf16"])
def test_view_writes_match_torch(dtype: torch.dtype, tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    g = torch.Generator().manual_seed(5)
    inputs = {"x": torch.randn(3, 4, generator=g).to(dtype)}
    doc = trace_joint_graph(_ViewWrites(dtype), lambda m, **kw: m(**kw),
                            inputs).to_json_dict()
    writes = sorted({n["target"] for n in doc["nodes"]
                    if n.get("target") and
                    n["target"].split("::")[1].split(".")[0].endswith("_")})
    assert writes == ["aten::add_.Tensor", "aten::copy_.default",
                      "aten::fill_.Scalar", "aten::mul_.Tensor"], writes
    assert_compiled_matches_torch(doc, tmp_path / "view_writes.json",
                                  monkeypatch)

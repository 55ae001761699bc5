"""``remainder`` (Python's %: the result takes the divisor's sign) and
``floor_divide`` lowered for the CPU, floats and integers, Tensor and Scalar
overloads, with every sign combination of dividend and divisor; compared
with torch exactly for integers and within the compiled tolerances for
floats."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

from helpers import assert_compiled_matches_torch
from joint_mlir import trace_joint_graph


class _Remainders(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.linspace(-3.0, 3.0, 8))

    def forward(self, k: torch.Tensor):
        x = self.w * 2.5                       # floats of both signs
        # Nonzero divisors of alternating sign (state and inputs are
        # materialized at random, so they are built here).
        i = torch.arange(8)
        sign = 1 - 2 * (i % 2)
        di = (i // 2 + 1) * sign               # 1, -1, 2, -2, ...
        d = (i.float() * 0.5 + 0.75) * sign
        ints = k - 5                           # ints of both signs
        loss = (torch.remainder(x, d) * x).sum() + (x % 1.25).sum()
        return loss, {"int": torch.remainder(ints, di), "int_scalar": ints % -3,
                      "float": torch.remainder(x, d),
                      "int_floor": torch.floor_divide(ints, di),
                      "int_floor_scalar": ints // -3}


def test_remainder_matches_torch(tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    doc = trace_joint_graph(_Remainders(), lambda m, **kw: m(**kw),
                            {"k": torch.arange(8)}).to_json_dict()
    targets = {n.get("target") for n in doc["nodes"]}
    assert {"aten::remainder.Tensor", "aten::remainder.Scalar"} <= targets
    assert_compiled_matches_torch(doc, tmp_path / "remainder.json",
                                  monkeypatch)

"""``sort``, ``scatter_reduce`` (IndirectDataMovement) and bilinear
upsampling (Pooling) lowered for the CPU (convert-joint-to-linalg), traced
from small modules in f32 and bf16, compiled for the CPU and compared with
torch within the compiled tolerances (loss, every gradient).

``sort.default`` and ``sort.stable`` along either dim, both orders; its
backward is ``scatter.src`` through the indices. Ties (from ``clamp``) and
NaN (``sqrt`` of negatives, sorted as the largest value) are sorted stably;
their int64 indices enter the loss with a weight large enough that one
swapped pair fails the f32 tolerance. ``scatter_reduce.two`` with every
reduce, with and without include_self, along both dims, repeated indices.
``upsample_bilinear2d`` and its backward, align_corners both ways, sizes and
scale factors. The bf16 modules also run as CUDA steps on the emulated
device. Integer keys: int64 sort and argsort, int32 topk, a bool sort, the
values and indices exact.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
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


class _ScatterReducing(nn.Module):
    def __init__(self, dtype: torch.dtype) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(13)
        self.w = nn.Parameter(torch.randn(4, 6, generator=g).to(dtype))
        self.s = nn.Parameter(torch.randn(4, 5, generator=g).to(dtype))

    def forward(self, idx: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(6, dtype=torch.float32)
        total = torch.zeros((), dtype=torch.float32)
        for k, reduce in enumerate(["sum", "prod", "mean", "amax", "amin"]):
            for include_self in (True, False):
                r = self.w.scatter_reduce(1, idx, self.s, reduce,
                                          include_self=include_self)
                total = total + (r.float() * (pos + k)).sum()
        c = self.w.scatter_reduce(0, rows, self.s * 2, "mean",
                                  include_self=False)
        return total + (c.float() ** 2).sum()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16],
                         ids=["f32", "bf16"])
def test_scatter_reduce_matches_torch(dtype: torch.dtype, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch
                                      ) -> None:
    g = torch.Generator().manual_seed(4)
    inputs = {"idx": torch.randint(0, 6, (4, 5), generator=g),
              "rows": torch.randint(0, 4, (4, 5), generator=g)}
    doc = trace_joint_graph(_ScatterReducing(dtype), lambda m, **kw: m(**kw),
                            inputs).to_json_dict()
    targets = {n["target"] for n in doc["nodes"]
               if isinstance(n.get("target"), str)}
    assert "aten::scatter_reduce.two" in targets
    assert_compiled_matches_torch(doc, tmp_path / "scatter_reduce.json",
                                  monkeypatch)


class _Bilinear(nn.Module):
    def __init__(self, dtype: torch.dtype) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(17)
        self.w = nn.Parameter(torch.randn(2, 3, 4, 5, generator=g).to(dtype))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.w * x
        up = F.interpolate(y, size=(7, 9), mode="bilinear",
                           align_corners=False)
        corners = F.interpolate(y, scale_factor=1.7, mode="bilinear",
                                align_corners=True)
        scaled = F.interpolate(y, scale_factor=1.5, mode="bilinear",
                               align_corners=False)
        down = F.interpolate(y, size=(3, 2), mode="bilinear",
                             align_corners=False)
        same = F.interpolate(y, size=(4, 8), mode="bilinear",
                             align_corners=True)
        # The loss stays in the step's dtype: the forward matches torch to
        # f32 roundoff, so a bf16 element can differ from torch's by an ulp.
        return ((up ** 2).sum() + (corners * 1.5).sum()
                + (scaled ** 2).sum() * 0.5 + (down ** 2).sum()
                + (same ** 2).sum())


BILINEAR = {"aten::upsample_bilinear2d.default",
            "aten::upsample_bilinear2d_backward.default"}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16],
                         ids=["f32", "bf16"])
def test_upsample_bilinear_matches_torch(dtype: torch.dtype, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    """Bilinear up- and downsampling, align_corners both ways, to sizes and
    by scale factors (torch passes the scales; align_corners ignores them),
    one dim kept (out == in); forward and backward."""
    inputs = {"x": torch.randn(2, 3, 4, 5,
                               generator=torch.Generator().manual_seed(6)
                               ).to(dtype)}
    doc = trace_joint_graph(_Bilinear(dtype), lambda m, **kw: m(**kw),
                            inputs).to_json_dict()
    targets = {n["target"] for n in doc["nodes"]
               if isinstance(n.get("target"), str)}
    assert BILINEAR <= targets, BILINEAR - targets
    assert_compiled_matches_torch(doc, tmp_path / "bilinear.json",
                                  monkeypatch)


@pytest.mark.parametrize("make,inputs", [
    (_Sorting, lambda: {"x": torch.randn(4, 6)}),
    (_ScatterReducing, lambda: {"idx": torch.randint(0, 6, (4, 5)),
                                "rows": torch.randint(0, 4, (4, 5))}),
    (_Bilinear, lambda: {"x": torch.randn(2, 3, 4, 5)}),
], ids=["sort", "scatter_reduce", "bilinear"])
def test_on_the_emulated_cuda_device(make, inputs, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The bf16 modules as CUDA steps on the emulated device."""
    import json

    from graph_tools import build_dir, tool
    from joint_mlir.executor import compare_scaled, format_differences, run

    tool("joint-compile")
    monkeypatch.setenv("JOINT_MLIR_CACHE",
                       str(build_dir() / "joint_mlir_cache"))
    torch.manual_seed(8)
    kw = {k: v.to(torch.bfloat16) if v.is_floating_point() else v
          for k, v in inputs().items()}
    doc = trace_joint_graph(make(torch.bfloat16), lambda m, **a: m(**a),
                            kw).to_json_dict()
    path = tmp_path / "step.json"
    path.write_text(json.dumps(doc))
    want = run(str(path), seed=0)
    got = run(str(path), seed=0, backend="mlir-cuda-emulated")
    diffs = compare_scaled(got, want)
    assert diffs and all(d.ok for d in diffs), format_differences(diffs)


class _IntegerSelection(nn.Module):
    """Integer keys (token ids, counts): sort and argsort of int64 along
    both dims, both orders, with ties (sort is stable); topk of int32 keys
    without ties (torch leaves the order of tied topk indices open), largest
    and smallest; a bool sort; the results weight a float loss so the step
    has a gradient."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.linspace(-1.0, 1.0, 6))

    def forward(self, ids: torch.Tensor, counts: torch.Tensor,
                flags: torch.Tensor):
        asc, asc_idx = torch.sort(ids, dim=1, stable=True)
        desc, desc_idx = torch.sort(ids, dim=0, descending=True, stable=True)
        # Distinct keys per row: torch orders topk's ties as it likes.
        keys = counts * 8 + torch.arange(6, dtype=torch.int32)
        top, top_idx = torch.topk(keys, 3, dim=1)
        low, low_idx = torch.topk(keys, 2, dim=1, largest=False)
        flag_sorted, flag_idx = torch.sort(flags, dim=1, descending=True,
                                           stable=True)
        gathered = self.w[asc_idx].sum() + self.w[top_idx].sum()
        return gathered, {"asc": asc, "asc_idx": asc_idx, "desc": desc,
                          "desc_idx": desc_idx, "top": top, "top_idx": top_idx,
                          "low": low, "low_idx": low_idx,
                          "flag_sorted": flag_sorted, "flag_idx": flag_idx}


def test_integer_sort_and_topk_match_torch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    g = torch.Generator().manual_seed(4)
    inputs = {"ids": torch.randint(-5, 5, (4, 6), generator=g),
              "counts": torch.randint(0, 4, (4, 6), generator=g,
                                      dtype=torch.int32),
              "flags": torch.randint(0, 2, (4, 6), generator=g).bool()}
    doc = trace_joint_graph(_IntegerSelection(), lambda m, **kw: m(**kw),
                            inputs).to_json_dict()
    assert_compiled_matches_torch(doc, tmp_path / "int_sort.json",
                                  monkeypatch)


class _IntegerScatterReducing(nn.Module):
    """scatter_reduce on int64 and int32 (counts, id histograms): every
    reduce, with and without include_self; mean divides with floor as
    torch does for integers. Exact results through loss_dict."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.ones(6))

    def forward(self, idx: torch.Tensor, vals: torch.Tensor):
        out = {}
        for dtype in (torch.int64, torch.int32):
            base = (torch.arange(24, dtype=dtype).reshape(4, 6) % 7) - 3
            src = vals.to(dtype)
            for reduce in ("sum", "prod", "mean", "amax", "amin"):
                for include_self in (True, False):
                    r = base.scatter_reduce(1, idx, src, reduce,
                                            include_self=include_self)
                    out[f"{dtype}-{reduce}-{include_self}"] = r
        loss = (self.w * out["torch.int64-sum-True"].float()).sum()
        return loss, out


def test_integer_scatter_reduce_matches_torch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    g = torch.Generator().manual_seed(5)
    inputs = {"idx": torch.randint(0, 6, (4, 5), generator=g),
              "vals": torch.randint(-4, 5, (4, 5), generator=g)}
    doc = trace_joint_graph(_IntegerScatterReducing(), lambda m, **kw: m(**kw),
                            inputs).to_json_dict()
    assert_compiled_matches_torch(doc, tmp_path / "int_scatter.json",
                                  monkeypatch)

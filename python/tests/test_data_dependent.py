"""Data-dependent ops stop a trace with one line naming the module,
the op and the fix (unbacked sizes, or a static-shape implementation)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from torch import nn

from joint_mlir import DataDependentError, TraceError, trace_joint_graph
from joint_mlir.executor import compare, run

UNBACKED_FIX = ("trace with unbacked sizes (trace_joint_graph(..., "
                "unbacked=True) or python -m joint_mlir.export "
                "--unbacked-sizes)")
STATIC_FIX = ("use a static-shape implementation (e.g. transformers "
              "experts_implementation='grouped_mm' or 'batched_mm' for MoE "
              "experts)")


class Inner(nn.Module):
    def __init__(self, fn: Callable[[torch.Tensor], torch.Tensor]) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.fn = fn

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fn(self.lin(x))


class Outer(nn.Module):
    def __init__(self, fn: Callable[[torch.Tensor], torch.Tensor]) -> None:
        super().__init__()
        self.block = Inner(fn)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.block(x)


def _trace(fn: Callable[[torch.Tensor], torch.Tensor], **kw: object) -> None:
    trace_joint_graph(Outer(fn), lambda m, x: m(x).sum(),
                      {"x": torch.randn(4, 8)}, **kw)


def _router(h: torch.Tensor) -> torch.Tensor:
    """A tiny MoE router: tokens of expert 0 through a nonzero index."""
    idx = torch.nonzero(h.argmax(-1) == 0).squeeze(-1)
    return h.index_add(0, idx, h[idx] * 2)


# Every kind of data-dependent op met with static shapes: the op's output
# shape depends on values, or a value is read into Python.
SHAPE_OPS = {
    "nonzero-router": (_router, "aten::nonzero.default"),
    "masked_select": (lambda h: torch.masked_select(h, h > 0),
                      "aten::masked_select.default"),
    "bool-mask-index": (lambda h: h[h > 0], "aten::nonzero.default"),
    "unique": (lambda h: h * torch.unique(h.argmax(-1)).float().sum(),
               "aten::_unique2.default"),
    "repeat_interleave": (lambda h: h.repeat_interleave(
        (h[:, 0] > 0).long(), dim=0), "aten::repeat_interleave.Tensor"),
    "bincount": (lambda h: h * torch.bincount(h.argmax(-1)).sum(),
                 "aten::bincount.default"),
}
VALUE_OPS = {
    "item": lambda h: h[: int((h > 0).sum().item())],
    "bool": lambda h: h * 2 if (h > 0).any() else h,
    "tolist": lambda h: h[: (h > 0).sum(0).tolist()[0]],
}


@pytest.mark.parametrize("case", list(SHAPE_OPS))
def test_static_trace_of_data_dependent_shape_is_one_line(case: str) -> None:
    fn, op = SHAPE_OPS[case]
    with pytest.raises(DataDependentError) as info:
        _trace(fn)
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith("block (Inner) at test_data_dependent.py:")
    assert msg.endswith(
        f": {op} has a data-dependent output shape, which a trace with "
        f"static shapes cannot represent; {UNBACKED_FIX} or {STATIC_FIX}")


@pytest.mark.parametrize("case", list(VALUE_OPS))
def test_static_trace_of_value_read_is_one_line(case: str) -> None:
    with pytest.raises(DataDependentError) as info:
        _trace(VALUE_OPS[case])
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith("block (Inner) at test_data_dependent.py:")
    assert msg.endswith(
        ": aten::_local_scalar_dense.default reads a tensor value into "
        "Python (item, bool, tolist) that decides a shape or a branch, which "
        "a trace with static shapes cannot represent; "
        f"{UNBACKED_FIX} or {STATIC_FIX}")


def _branch_on_count(h: torch.Tensor) -> torch.Tensor:
    idx = torch.nonzero(h[:, 0] > 0).squeeze(-1)
    if idx.numel() == 0:  # Mixtral's eager experts skip unused experts so
        return h
    return h.index_add(0, idx, h[idx])


@pytest.mark.parametrize("fn,cond,op", [
    (_branch_on_count, "Eq(u0, 0)", "aten::nonzero.default"),
    (VALUE_OPS["bool"], "Eq(u0, 1)", "aten::_local_scalar_dense.default"),
], ids=["nonzero-count", "any"])
def test_guard_on_unbacked_size_is_one_line(fn: Callable, cond: str,
                                            op: str) -> None:
    with pytest.raises(DataDependentError) as info:
        _trace(fn, unbacked=True)
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith("block (Inner) at test_data_dependent.py:")
    assert msg.endswith(
        f": branches on the data-dependent condition {cond} (u0 from {op}), "
        f"which a trace cannot follow; {STATIC_FIX} or make the branch "
        "size-oblivious (torch._check, guard_or_false)")


def test_data_dependent_error_is_a_trace_error() -> None:
    assert issubclass(DataDependentError, TraceError)
    assert issubclass(DataDependentError, ValueError)


def test_unbacked_trace_of_router_runs_bitwise() -> None:
    """The fix the message names works: the router traces and runs."""
    jg = trace_joint_graph(Outer(_router), lambda m, x: m(x).sum(),
                           {"x": torch.randn(16, 8)}, unbacked=True)
    targets = {n.target for n in jg.graph_module.graph.nodes}
    assert torch.ops.aten.nonzero.default in targets
    doc = jg.to_json_dict()
    assert all(d.ok for d in compare(run(doc), run(doc)))


FACTORY = '''
import torch
from torch import nn

class Router(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(8, 4)

    def forward(self, x):
        idx = torch.nonzero(self.gate(x).argmax(-1) == 0).squeeze(-1)
        return x.index_add(0, idx, x[idx])

def router():
    return (Router(), lambda m, x: (m(x) * m.gate.weight.sum()).sum(),
            {"x": torch.randn(16, 8)})
'''


def test_cli_data_dependent_is_one_line_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from joint_mlir.cli import export
    (tmp_path / "dd_factories.py").write_text(FACTORY)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "dd_factories", raising=False)
    out = tmp_path / "g.json"
    args = ["--model", "python:dd_factories:router", "--no-progress",
            "-o", str(out)]
    assert export.main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("python -m joint_mlir.export: error: Router at "
                          "dd_factories.py:11: aten::nonzero.default has a "
                          "data-dependent output shape")
    assert "--unbacked-sizes" in err and "batched_mm" in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()
    assert export.main(args + ["--unbacked-sizes"]) == 0, \
        capsys.readouterr().err
    assert out.exists()

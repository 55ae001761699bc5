"""Checkpointing hazards as numerics tests: a write through an op that
returns nothing, an in-place activation, a buffer update, random ops and
training batch norm's hidden writes.

Each case is a small torch module traced with joint_mlir's tracer. The graph
must match eager (``assert_close_to_eager``, the same 8u bound as the
examples), run bitwise-identically twice, and stay bitwise identical through
every available pass pipeline (the identity pipeline now; checkpointing and
offload switch on when joint-opt lists them).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

from graph_tools import (PIPELINES, assert_close_to_eager, eager_step,
                         run_pipeline, skip_unless_available)
from helpers import trace_doc
from joint_mlir import compare, run


# --------------------------------------------------------------------------
# A custom op that writes arg 0 and returns ()
# --------------------------------------------------------------------------

@torch.library.custom_op("jmtest::bump_", mutates_args=("x",))
def bump_(x: torch.Tensor) -> None:
    x.add_(1.0)


@bump_.register_fake
def _(x: torch.Tensor) -> None:
    return None


class HiddenWrite(nn.Module):
    """``c = clone(x); bump_(c); y = c * w`` (backward reads post-write c)."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = x.clone()
        torch.ops.jmtest.bump_(c)
        return (c * c * 0.5 + c * self.w).sum()


def _loss(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    return model(x)


# --------------------------------------------------------------------------
# In-place activation on a recompute candidate
# --------------------------------------------------------------------------

class InplaceElu(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(8, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.mm(x, self.w)
        y2 = torch.nn.functional.elu_(y)
        z = torch.sigmoid(y2)
        return (z * y2).sum()


# --------------------------------------------------------------------------
# Stateful buffer update
# --------------------------------------------------------------------------

class CountingRouter(nn.Module):
    def __init__(self, experts: int = 4) -> None:
        super().__init__()
        self.experts = experts
        self.proj = nn.Linear(8, 8)
        self.register_buffer("counts", torch.zeros(experts, dtype=torch.long))

    def forward(self, x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        cnt = torch.nn.functional.one_hot(idx, self.experts).sum(0)
        self.counts.add_(cnt)
        return torch.tanh(self.proj(x)).sum()


def _router_loss(model: nn.Module, x: torch.Tensor,
                 idx: torch.Tensor) -> torch.Tensor:
    return model(x, idx)


# --------------------------------------------------------------------------
# Random ops
# --------------------------------------------------------------------------

class Dropout(nn.Module):
    def __init__(self, mode: str) -> None:
        super().__init__()
        self.mode = mode
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc1(x)
        if self.mode == "native_dropout":
            h = torch.ops.aten.native_dropout.default(h, 0.1, True)[0]
        else:
            h = h * torch.gt(torch.rand_like(h), 0.1)
        # An RNG op whose value backward never needs.
        unused = torch.rand_like(h).sum() * 0.0
        return (self.fc2(torch.relu(h)) ** 2).mean() + unused


# --------------------------------------------------------------------------
# Batch norm in training mode writes its running statistics through
# arguments its schema does not mark as written
# --------------------------------------------------------------------------

class LinearBatchNorm(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(10, 10)
        self.bn = nn.BatchNorm1d(10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.fc(x))).sum()


class OneBlock(nn.Module):
    """The case module as the one block of a block container.

    The owner carries ``gradient_checkpointing`` (the Hugging Face marker the
    exporter discovers), so activation checkpointing has a scope, as on a real
    transformer; without blocks the pass rejects the graph by design.
    """

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.gradient_checkpointing = False
        self.layers = nn.ModuleList([inner])

    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        return self.layers[0](*args)


def _blocked(factory: Any) -> Any:
    return lambda: OneBlock(factory())


CASES: dict[str, tuple[Any, Any, dict[str, Any], dict[str, Any]]] = {
    # name: (model factory, train_fn, inputs, expected targets)
    "hidden-write": (_blocked(HiddenWrite), _loss,
                        {"x": torch.randn(4, 8)}, {"jmtest::bump_.default"}),
    "inplace-elu": (_blocked(InplaceElu), _loss, {"x": torch.randn(4, 8)},
                       {"aten::elu_.default"}),
    "buffer-update": (_blocked(CountingRouter), _router_loss,
                         {"x": torch.randn(6, 8),
                          "idx": torch.zeros(6, dtype=torch.long)},
                         # one_hot is traced as eq(unsqueeze(idx), arange)
                         {"aten::add_.Tensor", "aten::eq.Tensor"}),
    "native-dropout": (_blocked(lambda: Dropout("native_dropout")), _loss,
                          {"x": torch.randn(4, 8)},
                          {"aten::native_dropout.default",
                           "aten::native_dropout_backward.default"}),
    "rand-like": (_blocked(lambda: Dropout("rand_like")), _loss,
                     {"x": torch.randn(4, 8)},
                     {"aten::rand_like.default", "aten::gt.Scalar"}),
    "batch-norm-training": (_blocked(LinearBatchNorm), _loss,
                       {"x": torch.randn(4, 10)},
                       {"aten::native_batch_norm.default"}),
}


@pytest.fixture(scope="module")
def traced() -> dict[str, tuple[nn.Module, Any, dict[str, Any]]]:
    out = {}
    for name, (factory, fn, inputs, _) in CASES.items():
        torch.manual_seed(0)
        model = factory()
        _, doc = trace_doc(model, fn, inputs, name=name)
        out[name] = (model, fn, doc)
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_case_graph_has_the_pattern(case: str, traced: Any) -> None:
    _, _, doc = traced[case]
    targets = {n["target"] for n in doc["nodes"] if n["kind"] == "call_function"}
    missing = CASES[case][3] - targets
    assert not missing, f"{case}: traced graph lacks {missing}"
    if case == "hidden-write":
        entry = doc["operators"]["jmtest::bump_.default"]
        assert entry["args"][0]["is_write"] and entry["returns"] == []


@pytest.mark.parametrize("case", list(CASES))
def test_case_matches_eager_and_is_deterministic(case: str,
                                                 traced: Any) -> None:
    model, fn, doc = traced[case]
    got = run(doc, seed=0)
    assert_close_to_eager(got, eager_step(model, fn, doc, seed=0), case)
    again = run(doc, seed=0)
    assert all(d.ok for d in compare(again, got)), case


def test_buffer_updated_exactly_once(traced: Any) -> None:
    _, _, doc = traced["buffer-update"]
    from joint_mlir.executor import index_bounds
    idx = next(i["input"] for i in doc["inputs"] if i["path"] == "idx")
    assert index_bounds(doc)[idx] == 4
    got = run(doc, seed=0)
    # idx ~ U[0, 4) (the bound comes from one_hot's num_classes); the buffer
    # starts at zero, so after one step it holds each expert's count once.
    assert int(got.buffers["layers.0.counts"].sum()) == 6


def test_seed_drives_the_mask(traced: Any) -> None:
    _, _, doc = traced["native-dropout"]
    a, b = run(doc, seed=0), run(doc, seed=1)
    assert not torch.equal(a.grads["layers.0.fc1.weight"],
                           b.grads["layers.0.fc1.weight"])


def test_random_op_result_is_offloaded_bitwise(tmp_path: Path) -> None:
    """The dropout mask moves to host and back: the copy carries the bits the
    op drew and the op never runs again, so the step stays bitwise equal.
    (No block, so the last-block cost rule keeps nothing on the device.)"""
    torch.manual_seed(0)
    _, doc = trace_doc(Dropout("native_dropout"), _loss,
                       {"x": torch.randn(4, 8)}, name="dropout")
    src = tmp_path / "dropout.json"
    src.write_text(json.dumps(doc))
    out = run_pipeline(src, ("--joint-cpu-offload=scope=all min-bytes=0",),
                       tmp_path)
    nodes = json.loads(out.read_text())["nodes"]
    by = {n["name"]: n for n in nodes}
    sources = [by[n["args"][0]["v"]] for n in nodes
               if n["target"] == "ao::offload.default"]
    # A multi-output op's results are getitem nodes in format v1.
    offloaded = [by[s["args"][0]["v"]]["target"] if s["target"] == "getitem"
                 else s["target"] for s in sources]
    assert "aten::native_dropout.default" in offloaded
    dropout = [n for n in nodes if n["target"] == "aten::native_dropout.default"]
    assert [n["backward"] for n in dropout] == [False]
    bad = [d for d in compare(run(str(out), seed=0), run(doc, seed=0))
           if not d.ok]
    assert not bad, bad


@pytest.mark.parametrize("pipeline", PIPELINES, ids=[p.id for p in PIPELINES])
@pytest.mark.parametrize("case", list(CASES))
def test_case_pipeline_is_bitwise_identical(case: str, pipeline: Any,
                                            traced: Any,
                                            tmp_path: Path) -> None:
    _, _, doc = traced[case]
    skip_unless_available(pipeline, doc)
    src = tmp_path / f"{case}.json"
    src.write_text(json.dumps(doc))
    out = run_pipeline(src, pipeline.flags, tmp_path)
    diffs = compare(run(str(out), seed=0), run(doc, seed=0))
    bad = [d for d in diffs if not d.ok]
    assert not bad, f"{case} / {pipeline.id}: {bad}"


@pytest.mark.parametrize("mode", ["full", "selective"])
def test_running_stats_updated_once(mode: str, traced: Any,
                                        tmp_path: Path) -> None:
    """The checkpointed step leaves the running statistics bitwise equal."""
    _, _, doc = traced["batch-norm-training"]
    src = tmp_path / "c14.json"
    src.write_text(json.dumps(doc))
    out = run_pipeline(src, (f"--joint-activation-checkpoint=mode={mode}",),
                       tmp_path)
    got, want = run(str(out), seed=0), run(doc, seed=0)
    assert set(want.buffers) == {"layers.0.bn.running_mean",
                                 "layers.0.bn.running_var",
                                 "layers.0.bn.num_batches_tracked"}
    for name, value in want.buffers.items():
        assert torch.equal(got.buffers[name], value), f"{mode}: buffer {name}"
    bad = [d for d in compare(got, want) if not d.ok]
    assert not bad, f"{mode}: {bad}"
    # Batch norm ran once, in the forward: it was saved, not recomputed.
    nodes = json.loads(out.read_text())["nodes"]
    bn = [n for n in nodes if n["target"] == "aten::native_batch_norm.default"]
    assert [n["backward"] for n in bn] == [False]


# --------------------------------------------------------------------------
# A backward size query of a forward tensor (dynamic first dimension)
# --------------------------------------------------------------------------

class CatSum(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(16, 16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([x @ self.w, x @ self.w]).sum(0)


def _sum_loss(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    return model(x).sum()


@pytest.mark.parametrize("mode", ["full", "selective"])
def test_size_query_reads_forward_symint(mode: str,
                                             tmp_path: Path) -> None:
    """No tensor is saved or recomputed only to read its size."""
    torch.manual_seed(0)
    model = OneBlock(CatSum())
    _, doc = trace_doc(model, _sum_loss, {"x": torch.randn(8, 16)},
                       dynamic_dims={"x": 0}, name="cat-size")
    src = tmp_path / "cat-size.json"
    src.write_text(json.dumps(doc))
    out = run_pipeline(src, (f"--joint-activation-checkpoint=mode={mode}",),
                       tmp_path)
    nodes = json.loads(out.read_text())["nodes"]
    assert not [n["name"] for n in nodes if n.get("recomputed_from")]
    sizes = [n for n in nodes if n["target"] == "aten::sym_size.int"
             and n["args"][0]["v"] == "cat"]
    assert [n["backward"] for n in sizes] == [False]
    bad = [d for d in compare(run(str(out), seed=0), run(doc, seed=0))
           if not d.ok]
    assert not bad, f"{mode}: {bad}"

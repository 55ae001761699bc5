"""Collectives are one kind everywhere: a tensor-parallel model's functional
all-reduce is saved by every checkpoint mode, never recomputed by the memory
planner, and free (and unnamed) in the cost model. Before, only
reduce-scatter, all-to-all and the in-place c10d all-reduce were known: the
planner cloned the functional all-reduce and its wait into the backward."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from collections.abc import Iterator
from typing import Any

import pytest
import torch
from torch import nn

from graph_tools import run_pipeline, tool
from joint_mlir import compare, run
from joint_mlir.executor import format_differences

COLLECTIVE_TARGETS = ("_c10d_functional::all_reduce.default",
                      "_c10d_functional::wait_tensor.default")


@pytest.fixture(scope="module")
def tp_doc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Two blocks, each with a row-parallel Linear whose output is summed
    over a fake process group of two ranks."""
    import torch.distributed as dist
    import torch.distributed._functional_collectives as funcol
    from torch.testing._internal.distributed.fake_pg import FakeStore

    from joint_mlir import trace_joint_graph

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.up = nn.Linear(16, 64)
            self.down = nn.Linear(64, 16, bias=False)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h = torch.relu(self.up(x))
            # gelu's backward reads the all-reduced value: a saved
            # activation the planner would rather replay than keep.
            return x + nn.functional.gelu(
                funcol.all_reduce(self.down(h), "sum", dist.group.WORLD))

    class Model(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layers = nn.ModuleList([Block(), Block()])

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            for layer in self.layers:
                x = layer(x)
            return x

    # The group lives for the module: the steps run its all-reduces too.
    owns_group = not dist.is_initialized()
    if owns_group:
        dist.init_process_group("fake", store=FakeStore(), rank=0,
                                world_size=2)
    try:
        torch.manual_seed(0)
        jg = trace_joint_graph(Model(), lambda m, x: m(x).sum(),
                               {"x": torch.randn(256, 16)}, name="tp")
        path = tmp_path_factory.mktemp("tp") / "tp.json"
        jg.save(str(path))
        yield path
    finally:
        if owns_group:
            dist.destroy_process_group()


def _report(src: Path, flags: list[str], out: Path) -> dict[str, Any]:
    r = subprocess.run([str(tool("joint-opt")), *flags,
                        f"--joint-memory-report=format=json output={out}",
                        str(src), "-o", "/dev/null"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr, r.stderr
    return json.loads(out.read_text())


def test_the_trace_has_the_collectives(tp_doc: Path) -> None:
    doc = json.loads(tp_doc.read_text())
    targets = [n["target"] for n in doc["nodes"] if n["target"]
               and "c10d" in n["target"] and not n["backward"]]
    assert targets == list(COLLECTIVE_TARGETS) * 2


def test_cost_model_prices_collectives_free(tp_doc: Path,
                                            tmp_path: Path) -> None:
    rep = _report(tp_doc, [], tmp_path / "r.json")
    assert rep["cost"]["no_flop_rule"] == []


@pytest.mark.parametrize("mode", ["full", "selective"])
def test_checkpointing_saves_the_all_reduce(tp_doc: Path, tmp_path: Path,
                                            mode: str) -> None:
    out = run_pipeline(tp_doc, [f"--joint-activation-checkpoint=mode={mode}"],
                       tmp_path)
    doc = json.loads(out.read_text())
    assert not [n["name"] for n in doc["nodes"]
                if n.get("recomputed_from") and n["target"] in
                COLLECTIVE_TARGETS]
    tags = {n["target"]: set() for n in doc["nodes"]}
    for n in doc["nodes"]:
        if n["target"] in COLLECTIVE_TARGETS and not n["backward"]:
            tags[n["target"]].add(n["recompute"])
    assert tags["_c10d_functional::all_reduce.default"] == {"must_save"}
    assert tags["_c10d_functional::wait_tensor.default"] == {"must_save"}


def test_planner_never_recomputes_a_collective(tp_doc: Path,
                                               tmp_path: Path) -> None:
    full = _report(tp_doc, ["--joint-activation-checkpoint=mode=full"],
                   tmp_path / "full.json")
    budget = full["peak_bytes"]
    flag = f"--joint-optimize-memory=budget-gb={budget / 1e9!r}"
    rep = _report(tp_doc, [flag], tmp_path / "plan.json")
    assert rep["peak_bytes"] <= budget
    out = run_pipeline(tp_doc, [flag], tmp_path)
    doc = json.loads(out.read_text())
    clones = [n for n in doc["nodes"] if n.get("recomputed_from")]
    assert clones, "the budget needs some recompute"
    assert not [n["name"] for n in clones if n["target"] in
                COLLECTIVE_TARGETS]
    diffs = compare(run(str(out), seed=0), run(str(tp_doc), seed=0))
    assert all(d.ok for d in diffs), format_differences(diffs)

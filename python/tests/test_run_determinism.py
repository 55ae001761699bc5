"""``run --compare`` is reproducible; identical files compare equal.

The backward of indexing (``index_put(accumulate=True)``) sums on the CPU in
a thread-dependent order; the runner runs every step with torch's
deterministic algorithms, and names any op that has no deterministic kernel.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from torch import nn

import joint_custom_ops
from joint_mlir import trace_joint_graph
from joint_mlir.cli.run import main
from joint_mlir.executor import compare, not_bitwise, run


class Gather(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(16, 64))

    def forward(self, x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        return (self.w[idx] * x).sum()


@pytest.fixture
def two_threads() -> Iterator[None]:
    """The fault needs more than one intra-op thread (this machine has 2)."""
    prev = torch.get_num_threads()
    torch.set_num_threads(max(prev, 2))
    try:
        yield
    finally:
        torch.set_num_threads(prev)


@pytest.fixture(scope="module")
def gather_graph(tmp_path_factory: pytest.TempPathFactory) -> Path:
    jg = trace_joint_graph(
        Gather(), lambda m, x, idx: m(x, idx),
        {"x": torch.randn(65536, 64), "idx": torch.randint(0, 16, (65536,))})
    path = tmp_path_factory.mktemp("c21") / "g.json"
    jg.save(str(path))
    return path


def test_index_backward_compares_equal_to_itself(
        gather_graph: Path, two_threads: None,
        capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(gather_graph.read_text())
    assert "aten::index_put.default" in doc["operators"]
    for _ in range(3):
        assert main([str(gather_graph), "--compare", str(gather_graph)]) == 0
        out = capsys.readouterr().out
        assert out.strip().endswith("all 2 outputs match (bitwise)"), out
        assert "note:" not in out
    first = run(str(gather_graph))
    assert first.nondeterministic == {}
    assert first.threads == torch.get_num_threads()


def test_run_restores_the_determinism_setting(gather_graph: Path) -> None:
    assert not torch.are_deterministic_algorithms_enabled()
    run(str(gather_graph))
    assert not torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        run(str(gather_graph))
        assert torch.are_deterministic_algorithms_enabled()
        assert not torch.is_deterministic_algorithms_warn_only_enabled()
    finally:
        torch.use_deterministic_algorithms(False)


@pytest.fixture(scope="module")
def unordered_doc() -> dict:
    model, fn, inputs = joint_custom_ops.unordered()
    return trace_joint_graph(model, fn, inputs).to_json_dict()


WHY = ("the comparison cannot be bitwise: torch has no deterministic kernel "
       "for node unordered_scale: joint_test::unordered_scale.default "
       "(joint_test::unordered_scale does not have a deterministic "
       "implementation)")


def test_op_without_deterministic_kernel_is_named(
        unordered_doc: dict, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    a = run(unordered_doc)
    assert a.nondeterministic == {
        "unordered_scale": "joint_test::unordered_scale.default "
        "(joint_test::unordered_scale does not have a deterministic "
        "implementation)"}
    b = run(unordered_doc)
    assert not_bitwise(a, b) == WHY
    # An output that differs says why it may.
    b.grads["proj.weight"] = b.grads["proj.weight"] + 1
    bad = [d for d in compare(a, b) if not d.ok]
    assert [d.name for d in bad] == ["grad proj.weight"]
    assert bad[0].note == "bits differ; " + WHY
    path = tmp_path / "u.json"
    path.write_text(json.dumps(unordered_doc))
    assert main([str(path), "--compare", str(path)]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-2:] == ["note: " + WHY, "all 3 outputs match (bitwise)"]


def test_thread_counts_that_differ_are_named(gather_graph: Path) -> None:
    a = run(str(gather_graph))
    b = dataclasses.replace(a, threads=a.threads + 1)
    assert not_bitwise(a, b) == (
        "the comparison cannot be bitwise: the steps ran with "
        f"{a.threads} and {a.threads + 1} threads")

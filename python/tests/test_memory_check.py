"""bench/memory_model_check: measured peak on CPU, estimate column pending."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

from graph_tools import (EXAMPLES, PIPELINES, REPO_ROOT, has_attention,
                         has_blocks, require_passes, run_pipeline,
                         tool)


def _load_bench():
    path = REPO_ROOT / "bench" / "memory_model_check"
    loader = importlib.machinery.SourceFileLoader("memory_model_check", str(path))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


_MEASURE_IN_A_FRESH_PROCESS = """
import importlib.machinery, importlib.util, json, sys
loader = importlib.machinery.SourceFileLoader("memory_model_check", sys.argv[1])
spec = importlib.util.spec_from_loader(loader.name, loader)
bench = importlib.util.module_from_spec(spec)
loader.exec_module(bench)
from joint_mlir.format import read_document
print(json.dumps([bench.measure(read_document(p), "cpu", 0)
                  for p in sys.argv[2:]]))
"""


def _measure_in_a_fresh_process(graphs: list[Path]) -> list[int]:
    """bench.measure of each graph, in one new interpreter: what earlier
    tests did to this process (torch's thread count, allocator and profiler
    state) moved the measured peak by up to 2.5%."""
    r = subprocess.run(
        [sys.executable, "-c", _MEASURE_IN_A_FRESH_PROCESS,
         str(REPO_ROOT / "bench" / "memory_model_check"),
         *[str(g) for g in graphs]],
        capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "python")})
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_measured_peak_covers_state_inputs_and_outputs(tmp_path: Path) -> None:
    bench = _load_bench()
    from joint_mlir.format import read_document
    doc = read_document(str(REPO_ROOT / "examples" / "mlp.json"))
    peak = bench.measure(doc, "cpu", 0)
    # State (params) + inputs stay resident; gradients (same bytes as the
    # params) and the loss are allocated during the step.
    params = 4 * (32 * 64 + 64 + 64 * 32 + 32) * 2 + 4 * (16 * 32 + 16)
    inputs = 4 * 4 * 8 * 32 + 8 * 4 * 8
    assert peak >= 2 * params + inputs
    assert peak < 10 * (2 * params + inputs)


def test_table_lists_the_identity_pipeline(tmp_path: Path) -> None:
    bench = _load_bench()
    out = tmp_path / "memory.md"
    assert bench.main([str(REPO_ROOT / "examples" / "mlp.json"),
                       "-o", str(out)]) == 0
    rows = out.read_text().splitlines()
    assert rows[0].startswith("| graph | pipeline |")
    assert any(r.startswith("| mlp | identity | cpu |") for r in rows)


# --------------------------------------------------------------------------
# The torch executor frees values exactly where the memory model does
# --------------------------------------------------------------------------

class _ScratchBlock(nn.Module):
    """Writes a scratch tensor through views nobody reads afterwards (the
    results of ``copy_``/``add_`` and the views themselves have no reader),
    and takes an argmax through a multi-result op whose values nobody
    reads."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(hidden, hidden)
        self.fc2 = nn.Linear(hidden, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.fc1(x))
        buf = torch.zeros(2, *y.shape[1:])
        buf[0].copy_(y[0])
        buf.select(0, 1).add_(y[1])
        with torch.no_grad():
            top = torch.max(y.detach(), dim=-1)[1]
        return self.fc2(y) + top.unsqueeze(-1).to(y.dtype)


class _ScratchModel(nn.Module):
    def __init__(self, hidden: int = 64) -> None:
        super().__init__()
        self.layers = nn.ModuleList([_ScratchBlock(hidden) for _ in range(2)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


def _scratch_doc(hidden: int = 64, rows: int = 64) -> dict:
    from helpers import trace_doc

    torch.manual_seed(0)
    _, doc = trace_doc(_ScratchModel(hidden), lambda m, x: m(x).sum(),
                       {"x": torch.randn(4, rows, hidden)}, name="scratch")
    return doc


def test_step_holds_only_values_read_later() -> None:
    """After each node, the executor holds exactly the values a later node
    (or the output) reads: a value at its last reader is gone, one with no
    reader never stays, and a multi-result op keeps only the elements some
    getitem reads."""
    from joint_mlir.executor import _StepInterpreter, materialize
    from joint_mlir.fx import build_graph_module

    doc = _scratch_doc(hidden=8, rows=4)
    gm = build_graph_module(doc)
    order = {n: i for i, n in enumerate(gm.graph.nodes)}
    last_read = {n: max((order[u] for u in n.users), default=-1)
                 for n in gm.graph.nodes}
    seen: list[tuple[int, set[str]]] = []
    pruned: list[str] = []

    class Watch(_StepInterpreter):
        def run_node(self, n: torch.fx.Node) -> Any:
            out = super().run_node(n)
            if isinstance(out, tuple) and any(v is None for v in out):
                pruned.append(n.name)
            return out

    interp = Watch(gm, [])
    orig = interp.run_node

    def run_node(n: torch.fx.Node) -> Any:
        # The env as the previous node left it, once its frees are done.
        seen.append((order[n], {m.name for m in interp.env}))
        return orig(n)

    interp.run_node = run_node  # type: ignore[method-assign]
    state, inputs = materialize(doc)
    flat = [state[f] for f in gm.state_fqns] + [inputs[p]
                                                 for p in gm.input_paths]
    with torch.no_grad():
        interp.run(*flat)
    for i, live in seen:
        want = {n.name for n in gm.graph.nodes
                if order[n] < i and last_read[n] >= i}
        assert live == want, (i, sorted(live ^ want))
    maxes = [n.name for n in gm.graph.nodes
             if n.target is torch.ops.aten.max.dim]
    assert len(maxes) == 2 and pruned == maxes


@pytest.mark.parametrize("pipeline", PIPELINES, ids=lambda p: p.id)
def test_measured_peak_matches_the_memory_model(pipeline: Any,
                                                tmp_path: Path) -> None:
    """Measured CPU peak of the step within 2% of joint-memory-report's
    (device + host) peak, on the scratch-writing model and every bundled
    example."""
    require_passes(pipeline.flags)
    bench = _load_bench()
    from joint_mlir.format import read_document
    src = tmp_path / "scratch.json"
    src.write_text(json.dumps(_scratch_doc()))
    help_text = bench.opt_passes(tool("joint-opt"))
    graphs, outs, models = [], [], []
    for i, g in enumerate([src, *EXAMPLES]):
        doc = read_document(str(g))
        if (pipeline.needs_attention and not has_attention(doc)) or (
                pipeline.needs_blocks and not has_blocks(doc)):
            continue
        work = tmp_path / str(i)
        work.mkdir()
        graphs.append(g)
        outs.append(run_pipeline(g, pipeline.flags, work)
                    if pipeline.flags else g)
        models.append(bench.estimate(g, pipeline.flags, help_text, work))
    bad = []
    for g, measured, model in zip(graphs, _measure_in_a_fresh_process(outs),
                                  models):
        if abs(measured - model) > 0.02 * model:
            bad.append(f"{g.stem}: measured {measured} B, model {model} B "
                       f"({measured / model:.3f}x)")
    assert not bad, "\n".join(bad)

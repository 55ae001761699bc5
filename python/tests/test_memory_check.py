"""bench/memory_model_check: measured peak on CPU, estimate column pending."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path

from graph_tools import REPO_ROOT


def _load_bench():
    path = REPO_ROOT / "bench" / "memory_model_check"
    loader = importlib.machinery.SourceFileLoader("memory_model_check", str(path))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


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

"""joint-optimize-memory (the memory planner, then joint-apply-cpu-offload
and joint-remat) on every bundled example at three device budgets: the
save-all peak, the lowest peak the planner reaches (named by its
infeasible-budget error), and halfway; once with the default hardware model
and once with a fast host link (1 PB/s), where the planner offloads.

Each planned graph must run bit-identically to the untransformed one in
torch, its modelled peak (joint-memory-report) must be within the budget and
equal to the peak the planner wrote in ``joint.plan``, and a tighter budget
must never give a faster modelled step.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from graph_tools import EXAMPLES, run_pipeline, tool
from joint_mlir import run
from joint_mlir.executor import compare, format_differences

IDS = [p.stem for p in EXAMPLES]

_LOWEST = re.compile(r"the lowest modelled peak is (?:[\d.]+ \w+ \()?(\d+) B")
#: Hardware options shared by the planner and the report.
HARDWARE = {"default": "", "fast-link": "link-gbps=1000000"}


def _report(mlir: Path, flags: list[str], out: Path, hw: str = "") -> dict:
    """joint-memory-report (JSON) of `mlir` after `flags`."""
    subprocess.run([str(tool("joint-opt")), str(mlir), *flags,
                    f"--joint-memory-report=format=json output={out} {hw}",
                    "-o", "/dev/null"], check=True, capture_output=True)
    return json.loads(out.read_text())


def _lowest_peak(mlir: Path, hw: str) -> int:
    """The lowest peak the planner reaches, from its error at a 1-byte budget."""
    r = subprocess.run([str(tool("joint-opt")), str(mlir),
                        f"--joint-plan-memory=budget-gb=1e-9 {hw}", "-o",
                        "/dev/null"], capture_output=True, text=True)
    assert r.returncode != 0, "a 1-byte budget cannot be reachable"
    errors = [ln for ln in r.stderr.splitlines() if "error:" in ln]
    assert len(errors) == 1, r.stderr
    m = _LOWEST.search(errors[0])
    assert m, errors[0]
    return int(m.group(1))


@pytest.mark.parametrize("hardware", list(HARDWARE))
@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_planned_graphs_fit_and_run_bitwise(path: Path, hardware: str,
                                            tmp_path: Path) -> None:
    hw = HARDWARE[hardware]
    mlir = tmp_path / "in.mlir"
    subprocess.run([str(tool("joint-translate")), "--import-joint-json",
                    str(path), "-o", str(mlir)], check=True)
    save_all = _report(mlir, [], tmp_path / "base.json")
    lowest = _lowest_peak(mlir, hw)
    assert lowest <= save_all["peak_bytes"]
    budgets = sorted({save_all["peak_bytes"],
                      (save_all["peak_bytes"] + lowest) // 2, lowest},
                     reverse=True)
    want = run(str(path), seed=0)
    previous_step = None
    offloaded = 0
    for budget in budgets:
        flag = f"--joint-optimize-memory=budget-gb={budget / 1e9!r} {hw}"
        rep = _report(mlir, [flag], tmp_path / f"r{budget}.json", hw)
        offloaded += rep["cost"]["offload_bytes"]
        assert rep["peak_bytes"] <= budget, (budget, rep["peak_bytes"])
        step = rep["cost"]["step_seconds"]
        if previous_step is not None:
            assert step >= previous_step, (
                f"budget {budget} B gives a faster plan ({step} s) than a "
                f"looser one ({previous_step} s)")
        previous_step = step

        out_dir = tmp_path / f"b{budget}"
        out_dir.mkdir()
        out = run_pipeline(path, [flag], out_dir)
        planned = (out_dir / (path.stem + ".opt.mlir")).read_text()
        m = re.search(r"joint\.plan = \{[^}]*peak_bytes = (\d+)", planned)
        assert m and int(m.group(1)) == rep["peak_bytes"], "joint.plan peak"
        diffs = compare(run(str(out), seed=0), want)
        bad = [d for d in diffs if not d.ok]
        assert not bad, (f"budget {budget} B: {len(bad)} outputs differ\n"
                         + format_differences(diffs))
    if hardware == "fast-link" and lowest < save_all["peak_bytes"]:
        # With copies that cost nothing, some activation goes to the host
        # (unless no decision lowers the peak at all).
        assert offloaded > 0, "the planner offloaded nothing on a fast link"


def _moe_doc(path: Path) -> Path:
    """A 2-layer MoE whose dispatch uses ``nonzero`` on the router's choice,
    traced with unbacked sizes (``u0..u7``, each at most the token count)."""
    import torch
    from torch import nn

    from joint_mlir import trace_joint_graph

    class Expert(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(16, 64)
            self.out = nn.Linear(64, 16)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.out(torch.relu(self.fc(x)))

    class MoE(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.router = nn.Linear(16, 4)
            self.experts = nn.ModuleList([Expert() for _ in range(4)])

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            choice = self.router(x).argmax(-1)
            out = x * 0
            for e, expert in enumerate(self.experts):
                idx = torch.nonzero(choice == e).squeeze(-1)
                out = out.index_add(0, idx, expert(x[idx]))
            return out

    class Layer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.proj = nn.Linear(16, 16)
            self.moe = MoE()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x + self.moe(torch.tanh(self.proj(x)))

    class Model(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layers = nn.ModuleList([Layer(), Layer()])

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            for layer in self.layers:
                x = layer(x)
            return x

    torch.manual_seed(0)
    jg = trace_joint_graph(Model(), lambda m, x: m(x).sum(),
                           {"x": torch.randn(64, 16)}, unbacked=True,
                           name="moe")
    jg.save(str(path))
    return path


def test_data_dependent_sizes_keep_the_budget_sound(tmp_path: Path) -> None:
    """Storages sized by nonzero count at their symbols' recorded bound in
    the model, the report and the planner: the planned step's measured peak
    stays within a budget between full checkpointing's peak and the
    baseline's (it used to plan against storages counted as 0 bytes and
    measure 33% over)."""
    import importlib.machinery
    import importlib.util

    from graph_tools import REPO_ROOT
    from joint_mlir.format import read_document

    src = _moe_doc(tmp_path / "moe.json")
    base = _report(src, [], tmp_path / "base.json")
    full = _report(src, ["--joint-activation-checkpoint=mode=full"],
                   tmp_path / "full.json")
    assert full["peak_bytes"] < base["peak_bytes"]
    budget = (full["peak_bytes"] + base["peak_bytes"]) // 2
    flag = f"--joint-optimize-memory=budget-gb={budget / 1e9!r}"
    planned = _report(src, [flag], tmp_path / "plan.json")
    assert planned["peak_bytes"] <= budget
    out = run_pipeline(src, [flag], tmp_path)

    loader = importlib.machinery.SourceFileLoader(
        "memory_model_check", str(REPO_ROOT / "bench" / "memory_model_check"))
    bench = importlib.util.module_from_spec(
        importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(bench)
    measured = bench.measure(read_document(str(out)), "cpu", 0)
    assert measured <= budget, (measured, budget)
    diffs = compare(run(str(out), seed=0), run(str(src), seed=0))
    assert all(d.ok for d in diffs), format_differences(diffs)


@pytest.mark.parametrize("path", EXAMPLES, ids=IDS)
def test_plans_are_deterministic_in_process(path: Path) -> None:
    """Planning the same document twice in one process (the Python API's
    case: MLIR contexts and caches reused) gives the same planned document
    byte for byte; test/.../plan-memory-determinism.test checks separate
    processes and --mlir-disable-threading."""
    from joint_mlir import PipelineError
    from joint_mlir import run_pipeline as plan

    base = plan(path, "").report["peak_bytes"]
    with pytest.raises(PipelineError) as e:
        plan(path, "joint-plan-memory{budget-gb=1e-9}")
    m = _LOWEST.search(str(e.value))
    assert m, str(e.value)
    lowest = int(m.group(1))
    budget = (base + lowest) // 2
    pipeline = f"joint-optimize-memory{{budget-gb={budget / 1e9!r}}}"
    first, second = plan(path, pipeline), plan(path, pipeline)
    assert first.text == second.text
    assert first.remarks == second.remarks
    if lowest < base:  # the plan decides something
        assert '"recomputed_from"' in first.text or \
            '"ao::offload.default"' in first.text

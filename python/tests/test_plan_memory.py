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

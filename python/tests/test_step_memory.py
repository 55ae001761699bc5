"""A compiled CPU step uses the memory the plan promised.

Each buffer is freed right after its last use (joint-free-at-last-use), so
the step's measured high-water mark (``joint_step_peak_bytes``: its
temporaries plus each output from its first write, docs/lowering.md "ABI")
follows the memory model of the graph it was compiled from: on a 4-layer
mid-size Llama, full checkpointing's measured peak is at most 0.6x the
untransformed step's, and every measured peak is within 5% of the model's
transient peak (``joint-memory-report``, resident inputs excluded on both
sides). A step frees everything it allocates.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from graph_tools import REPO_ROOT, build_dir, tool
from joint_mlir.executor import materialize
from joint_mlir.format import read_document
from joint_mlir.mlir_cpu import CompiledStep, compile_graph, run_compiled

CACHE = build_dir() / "joint_mlir_cache"
MID_LLAMA = ["--model", "llama", "--layers", "4", "--hidden", "256",
             "--heads", "8", "--kv-heads", "4", "--intermediate", "768",
             "--vocab", "2048", "--batch", "2", "--seq", "128"]
PIPELINES = {"identity": "",
             "full": "joint-activation-checkpoint{mode=full}"}


def model_transient_peak(graph: Path, pipeline: str, tmp: Path) -> int:
    """The model's peak of non-resident bytes (device + host: on the CPU an
    offloaded copy lives on the same heap) after ``pipeline``."""
    out = tmp / "report.json"
    # joint-compile runs joint-read-forward-sizes first (the step compiled).
    passes = "joint.graph(joint-read-forward-sizes)," + \
        (pipeline + "," if pipeline else "") + \
        f"joint.graph(joint-memory-report{{format=json output={out}}})"
    subprocess.run([str(tool("joint-opt")), str(graph),
                    f"--pass-pipeline=builtin.module({passes})", "-o",
                    os.devnull], check=True, capture_output=True)
    report = json.loads(out.read_text())
    timeline = report["timeline"]
    return max(d + h for d, h in zip(timeline["device_bytes"],
                                     timeline["host_bytes"])) \
        - report["resident_bytes"]["total"]


def measured_peak(graph: Path, pipeline: str) -> tuple[int, int]:
    """(peak, live bytes after the step) of one compiled step."""
    step = CompiledStep(compile_graph(graph, pipeline=pipeline,
                                      cache_dir=CACHE))
    state, inputs = materialize(read_document(str(graph)), seed=0)
    run_compiled(step, state, inputs)
    return step.peak_bytes, int(step._lib.joint_step_live_bytes())


@pytest.fixture(scope="module")
def mid_llama(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mid") / "llama-mid.json"
    subprocess.run([sys.executable, "-m", "joint_mlir.export",
                    "--no-progress", *MID_LLAMA, "-o", str(out)], check=True,
                   capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "python")})
    return out


def test_mid_llama_peaks_follow_the_model(mid_llama: Path,
                                          tmp_path: Path) -> None:
    tool("joint-compile")
    measured, model = {}, {}
    for name, pipeline in PIPELINES.items():
        measured[name], live = measured_peak(mid_llama, pipeline)
        model[name] = model_transient_peak(mid_llama, pipeline, tmp_path)
        assert live == 0, f"{name}: {live} bytes still allocated"
        assert abs(measured[name] / model[name] - 1) <= 0.05, (
            name, measured[name], model[name])
    assert measured["full"] <= 0.6 * measured["identity"], measured

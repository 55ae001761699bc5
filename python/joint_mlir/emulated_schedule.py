"""The schedule a compiled CUDA step really emits, next to the model.

A step compiled with ``joint-compile --target=cuda
--lowering-options=emulate`` runs on the emulated device, which places
every operation on a simulated clock (runtime/cuda/README.md, "Simulated
schedule"): kernels take their node's cost-model seconds, copies bytes /
link bandwidth, ordered only by the program's own streams, events and
waits. :func:`compare` runs it once and returns its step time and exposed
transfer time next to what ``joint-memory-report`` models for the same
graph after the same pipeline, with the same hardware numbers (the node
costs are the report's ``timeline.seconds``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .mlir_cpu import find_tool

#: joint-memory-report's defaults (H200): TFLOP/s, GB/s HBM, GB/s host link.
DEFAULT_HARDWARE = {"peak-tflops": 989.0, "hbm-gbps": 4800.0,
                    "link-gbps": 55.0}

# Runs in the child (the runtime picks its device once per process): one
# traced step; prints the schedule's totals as one JSON line.
_CHILD = r"""
import json, sys
from joint_mlir.executor import materialize
from joint_mlir.format import read_document
from joint_mlir.mlir_cpu import CompiledStep, run_compiled

graph, lib, table, link, trace = sys.argv[1:6]
step = CompiledStep(lib)
step.trace_schedule(json.loads(open(table).read()), float(link),
                    trace or None)
state, inputs = materialize(read_document(graph), seed=0, device="cpu")
run_compiled(step, state, inputs)
print(json.dumps(step.schedule))
"""


def model_report(graph: str | Path, pipeline: str = "",
                 hardware: dict[str, float] | None = None) -> dict[str, Any]:
    """joint-memory-report (JSON, as a dict) of ``graph`` after
    ``pipeline`` (joint-compile's ``--pipeline``, after the
    joint-read-forward-sizes joint-compile runs first), with
    ``hardware`` overriding :data:`DEFAULT_HARDWARE`."""
    hw = {**DEFAULT_HARDWARE, **(hardware or {})}
    opts = " ".join(f"{k}={v!r}" for k, v in hw.items())
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        passes = ("joint.graph(joint-read-forward-sizes),"
                  + (pipeline + "," if pipeline else "")
                  + f"joint.graph(joint-memory-report{{format=json "
                  f"output={out} {opts}}})")
        r = subprocess.run([str(find_tool("joint-opt")), str(graph),
                            f"--pass-pipeline=builtin.module({passes})",
                            "-o", os.devnull], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"joint-memory-report failed on {graph}: "
                               f"{r.stderr[-2000:]}")
        return json.loads(out.read_text())


def node_seconds(report: dict[str, Any]) -> dict[str, float]:
    """Node name -> compute-stream seconds of a joint-memory-report (its
    ``timeline``), for the nodes that cost anything."""
    t = report["timeline"]
    return {op: s for op, s in zip(t["op"], t["seconds"]) if s > 0}


def child_env() -> dict[str, str]:
    """The environment of a child on the emulated device: the package on
    PYTHONPATH, the toolkit's libcuda stub (never called) for the loader."""
    env = dict(os.environ)
    env["JOINT_CUDA_DEVICE"] = "emulated"
    env.pop("JOINT_EMU_TRACE", None)
    python = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(
        [python] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    stub = find_tool("joint-opt").resolve().parents[1] / "lib" / "cuda-stub"
    if stub.is_dir():
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            [str(stub)] + ([env["LD_LIBRARY_PATH"]]
                           if env.get("LD_LIBRARY_PATH") else []))
    return env


def emulated_schedule(graph: str | Path, lib: str | Path,
                      seconds: dict[str, float], link_bytes_per_second: float,
                      trace: str | Path | None = None) -> dict[str, Any]:
    """The simulated schedule's totals (seconds, counts) of one step of
    ``lib`` (compiled from ``graph`` for the emulated device) with node
    costs ``seconds``; the Chrome trace goes to ``trace`` if given."""
    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "nodes.json"
        table.write_text(json.dumps(seconds))
        r = subprocess.run([sys.executable, "-c", _CHILD, str(graph),
                            str(lib), str(table),
                            repr(float(link_bytes_per_second)),
                            str(trace or "")], capture_output=True,
                           text=True, env=child_env(), timeout=1200)
    if r.returncode != 0:
        raise RuntimeError(f"the traced step of {lib} failed: "
                           f"{r.stderr[-4000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def compare(graph: str | Path, pipeline: str, lib: str | Path,
            hardware: dict[str, float] | None = None,
            trace: str | Path | None = None) -> dict[str, Any]:
    """``{"model": {...}, "emulated": {...}}``: step and exposed transfer
    seconds of joint-memory-report and of the compiled step ``lib`` (from
    ``graph`` after ``pipeline``) on the emulated device, plus the model's
    compute and transfer seconds and the schedule's work and transfer
    seconds (what the kernels and copies took), and ratios emulated /
    model."""
    report = model_report(graph, pipeline, hardware)
    cost = report["cost"]
    link = cost["hardware"]["link_bytes_per_second"]
    emu = emulated_schedule(graph, lib, node_seconds(report), link, trace)
    model = {"step_seconds": cost["step_seconds"],
             "exposed_transfer_seconds": cost["exposed_transfer_seconds"],
             "compute_seconds": cost["compute_seconds"],
             "transfer_seconds": cost["transfer_seconds"]}

    def ratio(a: float, b: float) -> float | None:
        return a / b if b else (1.0 if a == b else None)

    return {"model": model, "emulated": emu,
            "step_ratio": ratio(emu["step_seconds"], model["step_seconds"]),
            "exposed_ratio": ratio(emu["exposed_transfer_seconds"],
                                   model["exposed_transfer_seconds"])}

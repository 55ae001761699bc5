"""The emulated-device matrix: bundled examples x memory pipelines compiled
for the CUDA target with host kernels and run on the CUDA runtime's emulated
device (runtime/cuda/README.md, "Emulated device"), each checked against the
torch backend, ``joint-memory-report``'s modelled peak and the transfer
protocol.

:func:`run_example` runs every pipeline of one example in this process
(it selects the emulated device, :func:`~joint_mlir.mlir_cpu.
load_emulated_runtime`, so run it in a process of its own: ``python -m
joint_mlir.emulated GRAPH [--pipelines a,b] [--cache DIR]`` prints one JSON
line per case). Used by ``python/tests/test_emulated_matrix.py``,
``bench/emulated`` and ``scripts/device-check``.

Per case: the graph after the pipeline (joint passes run in process, with
``joint-read-forward-sizes`` first as joint-compile does) gives the model's
peak (``peak_bytes``: device bytes, parameters, buffers and inputs
included) and the number of ``ao.offload``/``ao.reload`` ops; the step is
compiled at ``-O0`` (:data:`OPT_LEVEL`) with
:data:`~joint_mlir.mlir_cpu.EMULATED_LOWERING` through the compile cache,
run once on the materialized state (seed 0), and measured: the emulator's
high-water mark with arguments and outputs staged on the device, copies on
the runtime's transfer stream, races, uses after free, refused calls and
bytes left allocated.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

__all__ = ["EXAMPLES", "OPT_LEVEL", "PIPELINES", "pipeline_for", "run_example",
           "run_matrix", "verdict"]

EXAMPLES = ["mlp", "mlp-dynamic-seq", "gpt2-tiny", "llama-tiny-fp32",
            "llama-tiny-bf16"]

# The matrix compiles at -O0: the emulate lowering at -O2 spends ~25 s of a
# 35 s compile of the tiny Llama in LLVM's optimizer, -O0 compiles it in
# ~10 s, and the tiny examples' kernels run in well under a second either
# way.
OPT_LEVEL = 0

_OFFLOAD = "joint-cpu-offload{min-bytes=1024 scope=SCOPE"
# name -> joint passes; SCOPE is "block" on graphs with transformer blocks
# and "all" on the others (scope=block needs a block), BUDGET the planner's
# budget in GB (:func:`pipeline_for`).
PIPELINES = {
    "identity": "",
    "ckpt-full": "joint-activation-checkpoint{mode=full}",
    "ckpt-selective": "joint-activation-checkpoint{mode=selective}",
    "offload-block": _OFFLOAD + "}",
    "planner-mid": "joint-optimize-memory{budget-gb=BUDGET}",
    "ckpt-offload-prefetch":
        "joint-activation-checkpoint{mode=selective}," + _OFFLOAD +
        " prefetch-regions=1 defer-regions=1}",
}

# The fields of JointEmuStats (runtime/cuda/joint_cuda_emulator.h) and
# JointRuntimeStats (joint_cuda_runtime.h), in order: the C side writes the
# whole struct, so a missing field here overruns the buffer
# (test_emulated_matrix.py compares these with the headers).
_EMU_FIELDS = ("live_bytes", "peak_bytes", "quarantined_bytes", "allocations",
               "frees", "kernel_launches", "copies", "memsets", "races",
               "use_after_frees", "errors", "tracked_accesses",
               "library_calls")
_RUNTIME_FIELDS = ("live_bytes", "peak_bytes", "allocations", "frees",
                   "pinned_in_use_bytes", "pinned_cached_bytes",
                   "pinned_peak_bytes", "pinned_fresh_allocations",
                   "pinned_reuses", "live_transfers")


_ROOT = Path(__file__).resolve().parents[2]


class _EmuStats(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in _EMU_FIELDS]


class _RuntimeStats(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in _RUNTIME_FIELDS]


def _has_blocks(doc: dict[str, Any]) -> bool:
    import re
    if any(c.get("blocks") for c in doc["model"].get("block_containers", [])):
        return True
    return any(re.fullmatch(r".+\.\d+", m["fqn"])
               for n in doc["nodes"] for m in n.get("module_stack") or [])


def _report(graph: Path, pipeline: str):
    from .api import with_forward_sizes
    from .pipeline import run_pipeline
    return run_pipeline(graph, with_forward_sizes(pipeline))


def pipeline_for(graph: Path, name: str, doc: dict[str, Any]) -> str:
    """The joint passes of case ``name`` on ``graph``. The planner's mid
    budget is halfway between the modelled peaks of the untransformed step
    and of full checkpointing (bytes, printed in GB with 9 digits)."""
    text = PIPELINES[name]
    if "BUDGET" in text:
        low = _report(graph, PIPELINES["ckpt-full"]).report["peak_bytes"]
        high = _report(graph, "").report["peak_bytes"]
        text = text.replace("BUDGET", f"{(low + high) / 2 / 1e9:.9f}")
    return text.replace("SCOPE", "block" if _has_blocks(doc) else "all")


def run_example(graph: Path, names: list[str] | None = None,
                cache_dir: Path | None = None) -> list[dict[str, Any]]:
    """Every case of ``graph`` (``names``: a subset of :data:`PIPELINES`)
    on the emulated device; one dict per case (see the module doc). A case
    that fails to compile or run has ``error`` set."""
    import torch

    from .executor import compare_scaled, materialize, run
    from .format import read_document
    from .errors import JointMlirError
    from .mlir_cpu import (EMULATED_LOWERING, CompiledStep, compile_graph,
                           load_emulated_runtime, run_compiled)

    torch.manual_seed(0)
    doc = read_document(str(graph))
    ref = run(str(graph), backend="torch")
    rt = load_emulated_runtime()
    P = ctypes.c_void_p
    rt.joint_runtime_compute_stream.restype = P
    rt.joint_runtime_transfer_stream.restype = P
    rt.joint_emu_stream_copies.restype = ctypes.c_int64
    rt.joint_emu_stream_copies.argtypes = [P]
    # Compute stream first: messages then call it stream 1.
    rt.joint_runtime_compute_stream()
    transfer = rt.joint_runtime_transfer_stream()

    def stats() -> tuple[dict[str, int], dict[str, int]]:
        e, r = _EmuStats(), _RuntimeStats()
        rt.joint_emu_get_stats(ctypes.byref(e))
        rt.joint_runtime_get_stats(ctypes.byref(r))
        return ({n: int(getattr(e, n)) for n in _EMU_FIELDS},
                {n: int(getattr(r, n)) for n in _RUNTIME_FIELDS})

    cases = []
    # Graph text after the passes -> its library: a pipeline that leaves the
    # graph as another left it (the planner when the budget holds the
    # baseline, an offload that finds nothing) runs the same step.
    libraries: dict[str, Path] = {}
    for name in names or list(PIPELINES):
        case: dict[str, Any] = {"graph": graph.stem, "pipeline": name}
        cases.append(case)
        try:
            pipe = pipeline_for(graph, name, doc)
            case["passes"] = pipe
            result = _report(graph, pipe)
            targets = [n.get("target") for n in result.document["nodes"]]
            case["model_peak"] = result.report["peak_bytes"]
            case["offloads"] = targets.count("ao::offload.default")
            case["reloads"] = targets.count("ao::reload.default")
            t0 = time.perf_counter()
            lib = libraries.get(result.text)
            if lib is None:
                lib = compile_graph(graph, pipeline=pipe, target="cuda",
                                    lowering_options=EMULATED_LOWERING,
                                    opt_level=OPT_LEVEL, cache_dir=cache_dir)
                libraries[result.text] = lib
            case["compile_s"] = round(time.perf_counter() - t0, 2)
            step = CompiledStep(lib)
            state, inputs = materialize(doc, seed=0, device="cpu")
            before, _ = stats()
            xfer0 = rt.joint_emu_stream_copies(transfer)
            rt.joint_runtime_reset_peak()
            t0 = time.perf_counter()
            got = run_compiled(step, state, inputs)
            case["run_s"] = round(time.perf_counter() - t0, 2)
            after, runtime = stats()
            case["transfer_copies"] = rt.joint_emu_stream_copies(transfer) - \
                xfer0
            case["emulated_peak"] = after["peak_bytes"]
            case["stats"] = {k: after[k] - before[k] for k in
                             ("allocations", "frees", "kernel_launches",
                              "copies", "races", "use_after_frees",
                              "errors")}
            case["live_bytes"] = after["live_bytes"]
            case["live_transfers"] = runtime["live_transfers"]
            case["mismatches"] = [[d.name, d.max_abs, d.note]
                                  for d in compare_scaled(got, ref)
                                  if not d.ok]
            case["outputs"] = len(compare_scaled(got, ref))
        except (JointMlirError, OSError, ValueError, RuntimeError) as e:
            case["error"] = str(e)[-3000:]
    return cases


def run_matrix(cache: Path | None, jobs: int = 1,
               examples: list[str] | None = None,
               pipelines: list[str] | None = None) -> list[dict]:
    """The cases of ``examples`` x ``pipelines`` (default: all), one child
    process per example; ``cache`` is the compile cache (None: the
    default). Cases in example, then pipeline order."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("JOINT_CUDA_DEVICE", "LD_LIBRARY_PATH")}
    env["PYTHONPATH"] = str(_ROOT / "python")
    if cache is not None:
        env["JOINT_MLIR_CACHE"] = str(cache)

    def one(example: str) -> list[dict]:
        graph = _ROOT / "examples" / f"{example}.json"
        r = subprocess.run([sys.executable, "-m", "joint_mlir.emulated",
                            str(graph), "--pipelines",
                            ",".join(pipelines or PIPELINES)],
                           capture_output=True, text=True, env=env)
        # The cases the child finished before it failed are kept.
        cases = []
        for line in r.stdout.splitlines():
            try:
                cases.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        if r.returncode != 0:
            why = (f"killed by signal {-r.returncode}" if r.returncode < 0
                   else f"exit status {r.returncode}")
            tail = r.stderr.strip().splitlines()
            cases.append({"graph": example, "pipeline": "*",
                          "error": f"the child for {example} failed ({why})"
                                   + (f": {tail[-1]}" if tail else "")})
        return cases

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return [c for cases in pool.map(one, examples or EXAMPLES)
                for c in cases]


def verdict(c: dict) -> str:
    """"ok", or what failed."""
    if "error" in c:
        lines = c["error"].strip().splitlines()
        return "ERROR: " + (lines[-1][:200] if lines else "(no message)")
    bad = []
    if c["mismatches"]:
        bad.append("numerics")
    if abs(c["emulated_peak"] / c["model_peak"] - 1) > 0.05:
        bad.append("peak")
    if c["transfer_copies"] != c["offloads"] + c["reloads"]:
        bad.append("transfer copies")
    s = c["stats"]
    if s["races"] or s["use_after_frees"] or s["errors"]:
        bad.append("emulator findings")
    if c["live_bytes"] or s["allocations"] != s["frees"] or \
            c["live_transfers"]:
        bad.append("leak")
    return ", ".join(bad) or "ok"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m joint_mlir.emulated",
        description="Run one example's pipelines on the emulated CUDA "
        "device; one JSON line per case.")
    p.add_argument("graph", type=Path)
    p.add_argument("--pipelines", default=",".join(PIPELINES),
                   help="comma-separated subset of " + ", ".join(PIPELINES))
    p.add_argument("--cache", type=Path, default=None,
                   help="compile cache directory (default $JOINT_MLIR_CACHE)")
    a = p.parse_args(argv)
    names = a.pipelines.split(",")
    unknown = [n for n in names if n not in PIPELINES]
    if unknown:
        p.error(f"unknown pipeline {unknown[0]!r}")
    for case in run_example(a.graph, names, a.cache):
        print(json.dumps(case), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

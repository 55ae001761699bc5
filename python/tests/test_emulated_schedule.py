"""The simulated schedule of a compiled CUDA step on the emulated device
(runtime/cuda/README.md, "Simulated schedule"), next to joint-memory-report.

The tiny Llama offloaded per block (the step test_emulated_cuda.py compiles,
from the same cache) runs once with a trace. With compute priced at
(almost) nothing, every ``ao`` copy is fully exposed in the model (its wait
follows it with no compute between), so the exposed transfer time is the
copies' bytes / link bandwidth, computed exactly; the compiled program must
give the same: each copy on the transfer stream with the modelled bytes,
and the compute stream waiting for each before going on.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from graph_tools import REPO_ROOT
from test_emulated_cuda import _compile

GRAPH = REPO_ROOT / "examples" / "llama-tiny-fp32.json"
PIPELINE = "joint-cpu-offload{min-bytes=1024 scope=block}"
# Compute at 1e15 TFLOP/s and 1e15 GB/s takes ~1e-21 s per node; the link
# stays the report's default.
HARDWARE = {"peak-tflops": 1e15, "hbm-gbps": 1e15, "link-gbps": 55.0}


def test_compiled_offload_step_exposes_what_the_model_does(
        tmp_path: Path) -> None:
    from joint_mlir.emulated_schedule import compare, model_report
    lib = _compile(GRAPH, PIPELINE)
    trace_path = tmp_path / "trace.json"
    r = compare(GRAPH, PIPELINE, lib, HARDWARE, trace_path)
    report = model_report(GRAPH, PIPELINE, HARDWARE)
    link = 55e9
    transfers = report["transfers"]
    assert transfers, "the pipeline offloads nothing"
    exact = sum(t["bytes"] for t in transfers) / link
    model, emu = r["model"], r["emulated"]
    assert abs(model["exposed_transfer_seconds"] - exact) <= 1e-9 * exact
    assert abs(emu["exposed_transfer_seconds"] - exact) <= 1e-9 * exact, r
    assert abs(emu["transfer_seconds"] - exact) <= 1e-9 * exact, r
    assert abs(emu["step_seconds"] - model["step_seconds"]) <= \
        1e-6 * model["step_seconds"], r

    trace = json.loads(trace_path.read_text())
    assert trace["displayTimeUnit"] == "ns"
    tracks = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"]
              if e["ph"] == "M" and e["name"] == "thread_name"}
    assert tracks == {1: "stream 1 (compute)", 2: "stream 2 (transfer)"}
    slices = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    # Every ao copy on the transfer stream, with the bytes the model moves.
    copies = [e for e in slices if e["cat"].startswith("copy")]
    assert {e["tid"] for e in copies} == {2}
    want = Counter(("copy D2H" if t["direction"] == "to_host" else
                    "copy H2D", t["bytes"]) for t in transfers)
    assert Counter((e["cat"], e["args"]["bytes"]) for e in copies) == want
    # Kernels and library calls on the compute stream, each named by its node; on each track
    # slices follow one another in time (to the printed nanosecond).
    work = [e for e in slices if e["cat"] == "work"]
    assert work and {e["tid"] for e in work} == {1}
    # (library calls: the GEMMs run on the cuBLAS shim's reference.)
    assert all(e["name"].startswith(("kernel '", "cuBLAS GEMM"))
               and e["args"]["node"] for e in work)
    assert any(e["name"].startswith("cuBLAS GEMM") for e in work)
    for tid in tracks:
        end = 0.0
        for e in sorted((e for e in slices if e["tid"] == tid),
                        key=lambda e: (e["ts"], e["dur"])):
            assert e["ts"] >= end - 2e-3, e
            end = max(end, e["ts"] + e["dur"])
    # The compute stream's stalls on the transfer stream are the exposed
    # time; the summary repeats the totals.
    stalls = [e["dur"] for e in slices if e["cat"] == "wait" and
              e["tid"] == 1]
    # (durations are printed to the nanosecond: 0.5 ns of rounding each)
    assert abs(sum(stalls) * 1e-6 - exact) <= 0.5e-9 * len(stalls) + \
        1e-9 * exact
    assert trace["joint"]["exposed_transfer_seconds"] == \
        emu["exposed_transfer_seconds"]
    assert trace["joint"]["operations"] == emu["operations"]

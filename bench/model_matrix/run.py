#!/usr/bin/env python3
"""The model-family matrix: every family of python/tests/model_families.py
traced, compiled and run against torch.

For each family (one child process each, so a crash in one does not hide
the others):

1. trace: ``trace_joint_graph`` of the tiny config (wall seconds; the model
   and its inputs are built before the clock starts);
2. cpu identity: ``joint-compile --target=cpu -O0`` of the traced graph
   (wall and CPU seconds of the child, no cache) and one step on
   ``mlir-cpu`` compared with torch running the same graph
   (``compare_scaled``: every output within the compiled tolerance x
   max|ref|), with the largest relative error over the outputs (those
   whose reference is roundoff, passing by compare_scaled's absolute
   bound, are counted apart);
3. cpu ckpt-full: the same for the graph after
   ``joint-activation-checkpoint{mode=full}`` (run in process), compared
   with torch on that checkpointed graph;
4. cuda: ``joint-compile --target=cuda`` (default -O, build only: no GPU
   is needed) of the traced graph, wall seconds and the descriptor's
   format.

A failing stage prints joint-compile's first error line (node, target,
message) below the table. Prints the machine and the table (markdown).

  bench/model_matrix/run.py [--families llama,gpt2] [--json out.json]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "python" / "tests"))
from common import BUILD, machine  # noqa: E402

# The 14 families of the matrix: Mixtral with its static-shape
# batched_mm experts (the eager experts refuse by design).
FAMILIES = ["llama", "gemma", "phi3", "qwen2", "qwen3", "mistral",
            "mixtral_batched_mm", "gpt_neox", "olmo", "gpt2", "bert", "t5",
            "vit", "resnet"]
CKPT_FULL = "joint-activation-checkpoint{mode=full}"


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _first_error(text: str) -> str:
    for line in text.splitlines():
        if "error:" in line:
            return line.strip()
    lines = [x for x in text.strip().splitlines() if x.strip()]
    return lines[-1].strip() if lines else "(no message)"


def _compile(doc: dict[str, Any] | Path, target: str, cache: Path,
             opt_level: int | None) -> tuple[Path, float, float]:
    from joint_mlir.mlir_cpu import compile_graph
    cpu0, t0 = _children_cpu(), time.perf_counter()
    lib = compile_graph(doc, target=target, cache_dir=cache,
                        opt_level=opt_level)
    return lib, time.perf_counter() - t0, _children_cpu() - cpu0


def _cpu_stage(doc: dict[str, Any], tmp: Path, tag: str) -> dict[str, Any]:
    """Compile ``doc`` for the CPU at -O0 (fresh cache) and compare one
    mlir-cpu step with torch on the same graph."""
    from joint_mlir.executor import compare_scaled, format_differences, run
    from joint_mlir.mlir_cpu import CompileError
    out: dict[str, Any] = {}
    cache = tmp / f"cache-{tag}"
    path = tmp / f"{tag}.json"
    path.write_text(json.dumps(doc))
    try:
        _, out["compile_s"], out["compile_cpu_s"] = _compile(path, "cpu",
                                                             cache, 0)
    except CompileError as e:
        out.update(ok=False, error=_first_error(str(e)))
        return out
    os.environ["JOINT_MLIR_CACHE"] = str(cache)  # run() finds the library
    t0 = time.perf_counter()
    want = run(str(path), seed=0)
    out["torch_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    got = run(str(path), seed=0, backend="mlir-cpu", opt_level=0)
    out["step_s"] = time.perf_counter() - t0  # cached library: load + step
    diffs = compare_scaled(got, want)
    out["ok"] = bool(diffs) and all(d.ok for d in diffs)
    # Outputs whose reference is roundoff (a gradient that is zero in exact
    # arithmetic, e.g. BERT's key biases) pass by an absolute bound; their
    # relative error means nothing and is left out of max_rel.
    roundoff = [d for d in diffs if "roundoff" in d.note]
    out["roundoff"] = len(roundoff)
    out["max_rel"] = max((d.max_rel for d in diffs if "roundoff" not in d.note),
                         default=float("nan"))
    out["outputs"] = len(diffs)
    if not out["ok"]:
        bad = [d for d in diffs if not d.ok]
        out["error"] = (f"{len(bad)} of {len(diffs)} outputs beyond the "
                        f"tolerance, first:\n"
                        + format_differences(bad[:5]))
    return out


def measure(name: str) -> dict[str, Any]:
    import torch

    import model_families
    from joint_mlir import run_pipeline, trace_joint_graph
    from joint_mlir.mlir_cpu import CompileError
    torch.set_num_threads(1)
    res: dict[str, Any] = {"family": name}
    model, fn, inputs = getattr(model_families, name)()
    t0 = time.perf_counter()
    doc = trace_joint_graph(model, fn, inputs).to_json_dict()
    res["trace_s"] = time.perf_counter() - t0
    res["nodes"] = sum(n["kind"] == "call_function" for n in doc["nodes"])
    with tempfile.TemporaryDirectory(prefix=f"matrix-{name}-") as d:
        tmp = Path(d)
        def ckpt() -> dict[str, Any]:
            out = run_pipeline(doc, CKPT_FULL).document
            res["ckpt_nodes"] = sum(n["kind"] == "call_function"
                                    for n in out["nodes"])
            return out

        stages = {"identity": lambda: doc, "ckpt_full": ckpt}
        for stage, make in stages.items():
            try:
                res[stage] = _cpu_stage(make(), tmp, stage)
            except Exception as e:  # noqa: BLE001 - reported in the table
                res[stage] = {"ok": False,
                              "error": _first_error(
                                  f"{type(e).__name__}: {e}")}
                traceback.print_exc()
        try:
            lib, wall, cpu = _compile(doc, "cuda", tmp / "cache-cuda", None)
            desc = json.loads(Path(str(lib) + ".json").read_text())
            res["cuda"] = {"ok": desc["format"] == "joint-cuda-step",
                           "compile_s": wall, "compile_cpu_s": cpu,
                           "format": desc["format"]}
        except CompileError as e:
            res["cuda"] = {"ok": False, "error": _first_error(str(e))}
    return res


def _cell_cpu(s: dict[str, Any]) -> str:
    if not s.get("ok"):
        return "FAIL"
    extra = f", {s['roundoff']} roundoff" if s["roundoff"] else ""
    return f"ok {s['max_rel']:.1e} ({s['compile_s']:.1f} s{extra})"


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| family | ops (ckpt-full) | trace s | cpu identity: max rel "
             "err (compile -O0) | cpu ckpt-full: max rel err (compile -O0) | "
             "cuda compile s (-O2) |",
             "| --- | ---: | ---: | --- | --- | --- |"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['family']} | | | FAIL | FAIL | FAIL |")
            continue
        cuda = r["cuda"]
        lines.append(
            f"| {r['family']} | {r['nodes']} ({r.get('ckpt_nodes', '-')}) | "
            f"{r['trace_s']:.1f} | "
            f"{_cell_cpu(r['identity'])} | {_cell_cpu(r['ckpt_full'])} | "
            + (f"{cuda['compile_s']:.1f}" if cuda.get("ok") else "FAIL")
            + " |")
    return "\n".join(lines)


def failures(rows: list[dict[str, Any]]) -> str:
    out = []
    for r in rows:
        if "error" in r:
            out.append(f"- {r['family']}: {r['error']}")
            continue
        for stage in ("identity", "ckpt_full", "cuda"):
            if not r[stage].get("ok"):
                out.append(f"- {r['family']} / {stage}: "
                           f"{r[stage].get('error')}")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--families", default=",".join(FAMILIES),
                    help="comma-separated factory names (default: the 14)")
    ap.add_argument("--json", help="write the raw measurements here")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(args.one)))
        return
    print(f"machine: {machine()}; joint-compile: {BUILD / 'bin'}; "
          f"{datetime.date.today()}", flush=True)
    rows = []
    env = dict(os.environ, PATH=f"{BUILD / 'bin'}:{os.environ['PATH']}")
    for name in args.families.split(","):
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, __file__, "--one", name],
                           capture_output=True, text=True, env=env)
        try:
            row = json.loads(r.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            row = {"family": name,
                   "error": f"exit {r.returncode}: "
                            + _first_error(r.stderr or r.stdout)}
        row["total_s"] = time.perf_counter() - t0
        rows.append(row)
        print(f"[{name}] {row['total_s']:.0f} s", file=sys.stderr, flush=True)
    print(table(rows))
    bad = failures(rows)
    print("\nfailures:\n" + (bad or "none"))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()

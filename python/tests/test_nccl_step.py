"""A 2-rank FSDP2 step compiled for CUDA, its collectives on NCCL, against
the eager gloo step (docs/lowering.md, "CUDA", joint-gpu-collectives).

Two gloo ranks on the CPU (one process each, test_fsdp's model) each run the
eager FSDP2 step and trace the same step's joint graph; each writes its
graph, its inputs and local state (the padded shards the graph takes) and
the eager loss, gradient shards and buffers. Under full checkpointing each
rank's graph goes through joint-opt first (the backward re-gathers the
parameters: more all-gathers, the same reduce-scatters). The rank graphs
are compiled
with ``joint-compile --target=cuda --lowering-options=emulate`` (one library
when the two documents are identical). One child process with
``JOINT_CUDA_DEVICE=emulated`` then runs the ranks as two threads: thread r
selects device r, creates its communicators with
``joint_mlir.collectives.init_communicators`` over a shared
``torch.distributed.HashStore`` and runs its rank's compiled step. The loss,
every gradient shard and every updated buffer match the eager run within
f32 tolerance, the emulator found no race or use after free, every
collective ran once per rank, and the runtime freed every buffer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.distributed as dist

from graph_tools import REPO_ROOT, build_dir, cuda_built, run_pipeline, tool

WORLD = 2
# Hang guard for the spawned ranks and the child (each takes seconds to a
# minute on a loaded 2-core machine); never reached otherwise.
_HANG_GUARD_S = 900
# f32: eager gloo vs kernels and emulated NCCL summing in their own order.
RTOL, ATOL = 1e-5, 1e-6


def _rank_main(rank: int, port: int, out: str) -> None:
    """One gloo rank: the eager FSDP2 step and the traced graph of the same
    step from the same initial model, written to ``out`` (a folder)."""
    from joint_mlir.sharded import local_state
    from joint_mlir.tracer import extract_module_state, trace_joint_graph
    from test_fsdp import _local, _sharded, _train_fn

    folder = Path(out)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=WORLD)
    try:
        torch.manual_seed(1000 + rank)
        x = torch.randn(12, 8)
        y = torch.randint(0, 6, (12,))
        ref = _sharded(True)
        loss = _train_fn(ref, x, y)
        loss.backward()
        model = _sharded(True)
        state = local_state(model, extract_module_state(model))
        # Cloned before the trace: the graph reads these initial values.
        state = {k: t.detach().clone() for k, t in state.items()}
        jg = trace_joint_graph(model, _train_fn, {"x": x, "y": y})
        (folder / f"graph{rank}.json").write_text(
            json.dumps(jg.to_json_dict(), sort_keys=True))
        torch.save({
            "state": state, "inputs": {"x": x, "y": y},
            "loss": loss.detach(),
            "grads": {n: _local(p.grad).detach().clone()
                      for n, p in ref.named_parameters()
                      if p.grad is not None},
            "buffers": {n: b.detach().clone()
                        for n, b in ref.named_buffers()},
            "unreached": list(jg.unreached_grad_fqns),
        }, folder / f"rank{rank}.pt")
    except Exception:  # reported to the parent through the file
        (folder / f"error{rank}.txt").write_text(traceback.format_exc())
    finally:
        dist.destroy_process_group()


def _rank_entry(rank: int, port: int, out: str) -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    torch.set_num_threads(1)
    _rank_main(rank, port, out)


# Runs in the child: the ranks as threads on the emulated device; prints one
# JSON line. argv: folder, then each rank's library.
CHILD = r"""
import ctypes, json, os, sys, threading, time
from pathlib import Path
import torch
import torch.distributed as dist
from joint_mlir.collectives import init_communicators, runtime_library
from joint_mlir.mlir_cpu import CompiledStep, load_emulated_runtime, run_compiled

folder, libs = Path(sys.argv[1]), sys.argv[2:]
N = len(libs)
runtime = runtime_library(load_emulated_runtime())
steps = {}
for path in libs:  # one CompiledStep per distinct library
    if path not in steps:
        steps[path] = CompiledStep(path)
groups = json.loads((folder / "groups.json").read_text())
store = dist.HashStore()
results, errors = {}, []

# Before any communicator exists: one error naming the missing groups, and
# nothing of the step runs.
data0 = torch.load(folder / "rank0.pt")
try:
    run_compiled(steps[libs[0]], data0["state"], data0["inputs"])
    uninitialised = None
except Exception as e:
    uninitialised = [type(e).__name__, str(e), runtime.joint_runtime_status()]

# Groups that do not match the step: refused by init_communicators given the
# step, and (a one-rank communicator made from the runtime alone, on a
# device no rank uses) by the step's own check before its first call.
mismatch = []
step0 = steps[libs[0]]
for bad in ({}, {g: [0] for g in groups}):
    try:
        init_communicators(step0, bad, 0, store, device=7, world_size=N)
    except Exception as e:
        mismatch.append([type(e).__name__, str(e)])
init_communicators(runtime, {g: [0] for g in groups}, 0, dist.HashStore(),
                   device=7, world_size=1)
try:
    run_compiled(step0, data0["state"], data0["inputs"])
except Exception as e:
    mismatch.append([type(e).__name__, str(e)])
assert runtime.joint_nccl_comm_destroy_all() == 0

def rank_main(rank):
    try:
        data = torch.load(folder / f"rank{rank}.pt")
        init_communicators(runtime, groups, rank, store, device=rank,
                           world_size=N)
        got = run_compiled(steps[libs[rank]], data["state"], data["inputs"])
        results[rank] = {"loss": got.loss, "grads": got.grads,
                         "buffers": got.buffers}
    except Exception as e:  # reported by the parent
        import traceback
        errors.append(f"rank {rank}: {traceback.format_exc()}")

threads = [threading.Thread(target=rank_main, args=(r,), daemon=True)
           for r in range(N)]
for t in threads:
    t.start()
# A rank whose step failed leaves the others waiting for its collectives:
# give up on them shortly after the first error (os._exit below).
deadline, first_error = time.monotonic() + 600, None
while any(t.is_alive() for t in threads) and time.monotonic() < deadline:
    if errors and first_error is None:
        first_error = time.monotonic()
    if first_error is not None and time.monotonic() > first_error + 20:
        break
    time.sleep(0.2)

def compare(got, want):
    diff = (got.double() - want.double()).abs()
    scale = want.double().abs().max().item() if want.numel() else 0.0
    return [diff.max().item() if diff.numel() else 0.0, scale]

report = {}
for rank, res in results.items():
    data = torch.load(folder / f"rank{rank}.pt")
    rows = {"loss": compare(res["loss"], data["loss"])}
    for name, want in data["grads"].items():
        g = res["grads"].get(name)
        if g is None:
            rows["grad " + name] = None
            continue
        if g.dim() and g.shape[0] != want.shape[0]:  # FSDP's padded rows
            g = g.narrow(0, 0, want.shape[0])
        rows["grad " + name] = compare(g, want)
    for name in res["grads"]:
        if name not in data["grads"] and name not in data["unreached"]:
            rows["extra grad " + name] = None
    for name, want in data["buffers"].items():
        rows["buffer " + name] = compare(res["buffers"][name], want)
    report[rank] = rows

lib = runtime
FIELDS = ("live_bytes", "peak_bytes", "quarantined_bytes", "allocations",
          "frees", "kernel_launches", "copies", "memsets", "races",
          "use_after_frees", "errors", "tracked_accesses", "library_calls")
class Stats(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in FIELDS]
stats = Stats()
lib.joint_emu_get_stats(ctypes.byref(stats))
lib.joint_emu_collectives.restype = ctypes.c_uint64
RUNTIME = ("live_bytes", "peak_bytes", "allocations", "frees")
class RuntimeStats(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in RUNTIME] + \
        [("rest%d" % i, ctypes.c_uint64) for i in range(6)]
runtime_stats = RuntimeStats()
lib.joint_runtime_get_stats(ctypes.byref(runtime_stats))
print(json.dumps({
    "alive": [t.is_alive() for t in threads], "errors": errors,
    "report": report, "status": lib.joint_runtime_status(),
    "message": (lib.joint_runtime_last_error() or b"").decode(),
    "stats": {name: getattr(stats, name) for name in FIELDS},
    "runtime": {name: getattr(runtime_stats, name) for name in RUNTIME},
    "collectives": lib.joint_emu_collectives(),
    "uninitialised": uninitialised, "mismatch": mismatch,
    "descriptor_groups": [steps[path].collective_groups for path in libs],
}), flush=True)
os._exit(0)  # rank threads stuck in a rendezvous must not keep us alive
"""


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["JOINT_CUDA_DEVICE"] = "emulated"
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT / "python")] +
        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    stub = build_dir() / "lib" / "cuda-stub"
    if stub.is_dir():
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            [str(stub)] + ([env["LD_LIBRARY_PATH"]]
                           if env.get("LD_LIBRARY_PATH") else []))
    return env


def _collectives(doc: dict[str, Any]) -> tuple[dict[str, int], set[str]]:
    """Count of each functional collective of ``doc`` (waits included) and
    the group names they talk to (each collective's last string argument)."""
    counts: dict[str, int] = {}
    groups: set[str] = set()
    for node in doc["nodes"]:
        target = str(node.get("target", ""))
        if not target.startswith("_c10d_functional::"):
            continue
        op = target.split("::")[1].split(".")[0]
        counts[op] = counts.get(op, 0) + 1
        if op != "wait_tensor":
            names = [a["v"] for a in node.get("args", [])
                     if isinstance(a, dict) and a.get("t") == "str"]
            groups.add(names[-1])
    return counts, groups


@pytest.mark.parametrize("flags", [(), ("--joint-activation-checkpoint=mode=full",)],
                         ids=["identity", "ckpt-full"])
def test_fsdp_step_on_nccl_matches_gloo(flags: tuple[str, ...],
                                        tmp_path: Path) -> None:
    if not dist.is_available():
        pytest.skip("torch.distributed (gloo, HashStore) is not available")
    cuda_built()
    tool("joint-compile")
    import torch.multiprocessing as mp
    from test_fsdp import _free_port
    from joint_mlir.mlir_cpu import compile_graph
    from joint_mlir.emulated import OPT_LEVEL

    ctx = mp.start_processes(_rank_entry,
                             args=(_free_port(), str(tmp_path)),
                             nprocs=WORLD, join=False, start_method="spawn")
    deadline = time.monotonic() + _HANG_GUARD_S
    while not ctx.join(timeout=max(deadline - time.monotonic(), 0)):
        if time.monotonic() >= deadline:
            for p in ctx.processes:
                p.kill()
            pytest.fail(f"gloo ranks still running after {_HANG_GUARD_S} s")
    for r in range(WORLD):
        err = tmp_path / f"error{r}.txt"
        assert not err.exists(), f"rank {r}:\n{err.read_text()}"

    graphs = [tmp_path / f"graph{r}.json" for r in range(WORLD)]
    traced, _ = _collectives(json.loads(graphs[0].read_text()))
    if flags:  # each rank's graph through joint-opt
        graphs = [run_pipeline(g, flags, tmp_path) for g in graphs]
    texts = [g.read_text() for g in graphs]
    docs = [json.loads(t) for t in texts]
    counts, groups = _collectives(docs[0])
    if flags:
        # Full checkpointing re-gathers the parameters in the backward; the
        # gradient reduce-scatters are never recomputed.
        assert counts["all_gather_into_tensor"] > \
            traced["all_gather_into_tensor"], (counts, traced)
        assert counts["reduce_scatter_tensor"] == \
            traced["reduce_scatter_tensor"], (counts, traced)
    # FSDP2: one all-gather per group forward, one reduce-scatter backward.
    assert counts.get("all_gather_into_tensor", 0) >= 1, counts
    assert counts.get("reduce_scatter_tensor", 0) >= 1, counts
    assert counts["wait_tensor"] == sum(
        n for op, n in counts.items() if op != "wait_tensor"), counts
    (tmp_path / "groups.json").write_text(
        json.dumps({g: list(range(WORLD)) for g in sorted(groups)}))
    libs = []
    for r in range(WORLD):
        if r and texts[r] == texts[0]:
            libs.append(libs[0])  # identical graphs: one library
            continue
        libs.append(str(compile_graph(
            graphs[r], target="cuda",
            lowering_options="emulate", opt_level=OPT_LEVEL,
            cache_dir=build_dir() / "test-step-cache")))

    r = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path), *libs],
                       capture_output=True, text=True, env=_child_env(),
                       timeout=_HANG_GUARD_S)
    assert r.returncode == 0, r.stderr[-4000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["errors"] == [], "\n".join(got["errors"])
    assert got["alive"] == [False] * WORLD, got
    assert got["status"] == 0, got["message"]
    # The descriptor names the groups; a call before init_communicators is
    # one CollectiveError naming them, with no runtime error recorded.
    assert got["descriptor_groups"] == [sorted(groups)] * WORLD, got
    kind, message, status = got["uninitialised"]
    assert kind == "CollectiveError" and status == 0, got["uninitialised"]
    named = ", ".join(repr(g) for g in sorted(groups))
    assert (f"the step's collectives use group(s) {named}; this thread's "
            f"device has no communicator for {named}: create them on every "
            "rank with joint_mlir.collectives.init_communicators(step, "
            "groups, rank, store, device=...) before the first call"
            ) in message, message
    names = sorted(groups)
    assert [kind for kind, _ in got["mismatch"]] == ["CollectiveError"] * 3
    assert got["mismatch"][0][1] == (
        f"the step's collectives use group(s) "
        f"{', '.join(map(repr, names))}, which `groups` ([]) does not name")
    assert got["mismatch"][1][1] == (
        f"group {names[0]!r} has 1 rank(s) in `groups` ([0]), the step's "
        f"collectives use {WORLD}")
    assert got["mismatch"][2][1].endswith(
        f": this thread's device's communicator for group {names[0]!r} has "
        f"1 rank(s), the step's collectives use {WORLD}: every rank must "
        "pass the groups' full member lists to init_communicators"
        ), got["mismatch"][2][1]
    worst = {}
    for rank, rows in got["report"].items():
        for name, row in rows.items():
            assert row is not None, f"rank {rank}: {name} missing or extra"
            max_abs, scale = row
            worst[name] = max(worst.get(name, 0.0), max_abs)
            assert max_abs <= ATOL + RTOL * scale, (
                f"rank {rank}: {name} differs by {max_abs} (scale {scale})")
    print("collectives per rank:", counts, "groups:", sorted(groups),
          "one library:", libs[0] == libs[-1])
    print("emulator:", got["stats"], "runtime:", got["runtime"],
          "collectives run:", got["collectives"])
    print("max abs diffs over the ranks:", json.dumps(worst, sort_keys=True))
    stats = got["stats"]
    assert stats["races"] == 0 and stats["use_after_frees"] == 0, stats
    assert stats["errors"] == 0, stats
    assert stats["live_bytes"] == 0, stats
    assert got["runtime"]["live_bytes"] == 0, got["runtime"]
    # Every collective (not the waits) ran once on each rank.
    assert got["collectives"] == WORLD * sum(
        n for op, n in counts.items() if op != "wait_tensor"), got

"""The collectives' bootstrap (``joint_mlir.collectives``) on the emulated
device: two rank threads of one child process (``JOINT_CUDA_DEVICE=
emulated``, the runtime loaded once) share a ``torch.distributed.HashStore``,
each selects its device, creates the world communicator and the groups
(``init_communicators``), then runs an all_gather and a reduce_scatter
(sum and avg) on buffers from ``mgpuMemAlloc``; the outputs are exact and
the runtime reports no error, race or leaked byte.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from graph_tools import REPO_ROOT, build_dir, cuda_built

# Runs in the child; prints one JSON line.
CHILD = r"""
import ctypes, json, threading
import torch.distributed as dist
from joint_mlir.collectives import (DTYPES, REDUCE_OPS, init_communicators,
                                    runtime_library)
from joint_mlir.mlir_cpu import load_emulated_runtime

lib = runtime_library(load_emulated_runtime())
P = ctypes.c_void_p
lib.mgpuMemAlloc.restype = P
lib.mgpuMemAlloc.argtypes = [ctypes.c_uint64, P, ctypes.c_bool]
lib.mgpuMemcpy.argtypes = [P, P, ctypes.c_size_t, P]
lib.mgpuMemFree.argtypes = [P, P]
lib.mgpuStreamSynchronize.argtypes = [P]
store = dist.HashStore()
N, COUNT = 2, 3
groups = {"tp": [0, 1], "solo": [1]}
results, errors = {}, []
F32 = ctypes.c_float

def device_copy(values):
    host = (F32 * len(values))(*values)
    dev = lib.mgpuMemAlloc(ctypes.sizeof(host), None, False)
    lib.mgpuMemcpy(dev, ctypes.addressof(host), ctypes.sizeof(host), None)
    lib.mgpuStreamSynchronize(None)  # the copy is asynchronous: keep `host`
    return dev

def host_copy(dev, n):
    host = (F32 * n)()
    lib.mgpuMemcpy(ctypes.addressof(host), dev, ctypes.sizeof(host), None)
    lib.mgpuStreamSynchronize(None)
    return list(host)

def rank_main(rank):
    try:
        mine = init_communicators(lib, groups, rank, store, device=rank,
                                  world_size=N)
        x = [10.0 * rank + i for i in range(COUNT)]
        din = device_copy(x)
        dout = lib.mgpuMemAlloc(4 * COUNT * N, None, False)
        h = lib.joint_nccl_all_gather(b"tp", din, dout, COUNT,
                                      DTYPES["float32"], b"all_gather_1")
        assert h, lib.joint_runtime_last_error()
        assert lib.joint_nccl_wait(h) == 0, lib.joint_runtime_last_error()
        gathered = host_copy(dout, COUNT * N)
        out = {"groups": mine, "all_gather": gathered}
        big = device_copy([rank + 1.0 + i for i in range(COUNT * N)])
        part = lib.mgpuMemAlloc(4 * COUNT, None, False)
        for op in ("sum", "avg"):
            h = lib.joint_nccl_reduce_scatter(b"tp", big, part, COUNT,
                                              DTYPES["float32"],
                                              REDUCE_OPS[op],
                                              b"reduce_scatter_2")
            assert h, lib.joint_runtime_last_error()
            assert lib.joint_nccl_wait(h) == 0
            out["reduce_scatter_" + op] = host_copy(part, COUNT)
        for p in (din, dout, big, part):
            lib.mgpuMemFree(p, None)
        lib.mgpuStreamSynchronize(None)
        results[rank] = out
    except Exception as e:  # reported by the parent
        errors.append(f"rank {rank}: {e!r}")

threads = [threading.Thread(target=rank_main, args=(r,)) for r in range(N)]
for t in threads:
    t.start()
for t in threads:
    t.join(timeout=120)
lib.joint_emu_get_stats.argtypes = [P]
stats = (ctypes.c_uint64 * 13)()
lib.joint_emu_get_stats(stats)
lib.joint_emu_collectives.restype = ctypes.c_uint64
print(json.dumps({
    "alive": [t.is_alive() for t in threads], "errors": errors,
    "results": results, "status": lib.joint_runtime_status(),
    "message": (lib.joint_runtime_last_error() or b"").decode(),
    "live_bytes": stats[0], "races": stats[8],
    "collectives": lib.joint_emu_collectives(),
}))
"""


def _child_env() -> dict[str, str]:
    import os
    env = dict(os.environ)
    env["JOINT_CUDA_DEVICE"] = "emulated"
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT / "python")] +
        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


def test_two_rank_threads_bootstrap_and_collectives() -> None:
    cuda_built()
    import torch.distributed as dist
    if not dist.is_available():
        pytest.skip("torch.distributed (HashStore) is not available")
    assert (build_dir() / "lib" / "libjoint_cuda_runtime.so").exists()
    r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True,
                       text=True, env=_child_env(), timeout=300)
    assert r.returncode == 0, r.stderr[-4000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["alive"] == [False, False], got
    assert got["errors"] == [], got
    assert got["status"] == 0, got["message"]
    res = {int(k): v for k, v in got["results"].items()}
    assert res[0]["groups"] == ["tp"]
    assert res[1]["groups"] == ["solo", "tp"]
    gathered = [0.0, 1.0, 2.0, 10.0, 11.0, 12.0]
    for rank in (0, 1):
        assert res[rank]["all_gather"] == gathered
        # in_r[j] = r + 1 + j; rank r's block is j = 3 rank + i.
        sums = [(1 + 3 * rank + i) + (2 + 3 * rank + i) for i in range(3)]
        assert res[rank]["reduce_scatter_sum"] == sums
        assert res[rank]["reduce_scatter_avg"] == [s / 2 for s in sums]
    assert got["live_bytes"] == 0 and got["races"] == 0, got
    # One all_gather and two reduce_scatters per rank.
    assert got["collectives"] == 6, got


# Two rank threads that select the same device: NCCL's refusal on both ranks
# (no hang); prints one JSON line.
SAME_DEVICE = r"""
import json, threading
import torch.distributed as dist
from joint_mlir.collectives import init_communicators, runtime_library
from joint_mlir.mlir_cpu import load_emulated_runtime

lib = runtime_library(load_emulated_runtime())
store = dist.HashStore()
errors = {}

def rank_main(rank):
    try:
        init_communicators(lib, {"0": [0, 1]}, rank, store, device=0,
                           world_size=2)
    except Exception as e:
        errors[rank] = [type(e).__name__, str(e)]

threads = [threading.Thread(target=rank_main, args=(r,)) for r in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join(timeout=120)
print(json.dumps({"alive": [t.is_alive() for t in threads],
                  "errors": errors}))
"""


def test_two_ranks_on_one_device_are_refused() -> None:
    cuda_built()
    import torch.distributed as dist
    if not dist.is_available():
        pytest.skip("torch.distributed (HashStore) is not available")
    r = subprocess.run([sys.executable, "-c", SAME_DEVICE],
                       capture_output=True, text=True, env=_child_env(),
                       timeout=300)
    assert r.returncode == 0, r.stderr[-4000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["alive"] == [False, False], got
    for rank in ("0", "1"):
        kind, message = got["errors"][rank]
        assert kind == "CollectiveError", got
        assert message == (
            f"joint_nccl_comm_init('joint_world', rank {rank} of 2): status "
            "-5: joint_nccl_comm_init: ncclCommInitRank failed: "
            "ncclInvalidUsage (5): ranks 0 and 1 both use device 0 (one rank "
            "per device: select each rank's device before joining), rank "
            f"{rank} of 2, group 'joint_world'"), message


# Ranks that disagree on the groups all fail at once (no rendezvous wait);
# a failed init leaves no error behind for the next call. One JSON line.
DISAGREE = r"""
import json, threading
import torch.distributed as dist
from joint_mlir.collectives import init_communicators, runtime_library
from joint_mlir.mlir_cpu import load_emulated_runtime

lib = runtime_library(load_emulated_runtime())
store = dist.HashStore()
errors, after = {}, {}

def rank_main(rank):
    groups = {"0": [0, 1]} if rank == 0 else {}
    try:
        init_communicators(lib, groups, rank, store, device=rank,
                           world_size=2)
    except Exception as e:
        errors[rank] = [type(e).__name__, str(e)]
    after[rank] = lib.joint_runtime_status()

threads = [threading.Thread(target=rank_main, args=(r,)) for r in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join(timeout=120)
# Twice on one device: the second fails and takes its error with it.
init_communicators(lib, {"0": [0]}, 0, dist.HashStore(), device=5,
                   world_size=1)
try:
    init_communicators(lib, {"0": [0]}, 0, dist.HashStore(), device=5,
                       world_size=1)
except Exception as e:
    errors["twice"] = [type(e).__name__, str(e)]
after["twice"] = lib.joint_runtime_status()
print(json.dumps({"alive": [t.is_alive() for t in threads],
                  "errors": errors, "after": after}))
"""


def test_ranks_that_disagree_fail_together() -> None:
    cuda_built()
    import torch.distributed as dist
    if not dist.is_available():
        pytest.skip("torch.distributed (HashStore) is not available")
    r = subprocess.run([sys.executable, "-c", DISAGREE],
                       capture_output=True, text=True, env=_child_env(),
                       timeout=300)
    assert r.returncode == 0, r.stderr[-4000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["alive"] == [False, False], got
    zero = '{"groups": {"0": [0, 1]}, "world_size": 2}'
    one = '{"groups": {}, "world_size": 2}'
    assert got["errors"]["0"] == [
        "CollectiveError", f"rank 0 passes {zero} to init_communicators, "
        f"rank 1 passes {one}: every rank must pass the same groups and "
        "world size"], got
    assert got["errors"]["1"] == [
        "CollectiveError", f"rank 1 passes {one} to init_communicators, "
        f"rank 0 passes {zero}: every rank must pass the same groups and "
        "world size"], got
    assert got["errors"]["twice"] == [
        "CollectiveError", "joint_nccl_comm_init('joint_world', rank 0 of 1): "
        "status -1: joint_nccl_comm_init: device 5 already has a communicator "
        "for this group, group 'joint_world'"], got
    assert got["after"] == {"0": 0, "1": 0, "twice": 0}, got

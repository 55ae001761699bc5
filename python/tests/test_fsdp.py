"""FSDP2 (fully_shard) steps through joint_mlir.optimize, and the planner's
rules for the unshard chain.

The multi-rank tests run 2 and 4 ranks on the CPU (gloo, one process per
rank): each rank runs the eager FSDP2 step and the optimized step of the same
sharded model under the untransformed graph, full checkpointing and the
memory planner, and compares the loss, every gradient shard and every buffer
bitwise; the planned graphs are compared across ranks. The planner tests
trace one rank under a fake process group of 8 ranks.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.distributed as dist
from torch import nn

from graph_tools import tool

# A hang guard for the spawned ranks, far above their run time (~20 s each
# on a loaded 2-core machine); a test never passes or fails by it otherwise.
_HANG_GUARD_S = 1200


class _Block(nn.Module):
    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down(nn.functional.gelu(self.up(self.norm(x))))


class _Model(nn.Module):
    """Blocks with LayerNorm and MLP, a BatchNorm (buffer updates), a head
    and a module the loss never reaches (torch leaves its grads None). The
    head has 6 rows: uneven shards on 4 ranks (2, 2, 2 and 0 rows)."""

    def __init__(self, dim: int = 16, hidden: int = 32, layers: int = 2,
                 classes: int = 6) -> None:
        super().__init__()
        self.embed = nn.Linear(8, dim)
        self.layers = nn.ModuleList([_Block(dim, hidden)
                                     for _ in range(layers)])
        self.bn = nn.BatchNorm1d(dim)
        self.head = nn.Linear(dim, classes)
        self.unused = nn.Linear(dim, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.embed(x)
        for layer in self.layers:
            h = layer(h)
        return self.head(self.bn(h))


def _train_fn(model: nn.Module, x: torch.Tensor,
              y: torch.Tensor) -> torch.Tensor:
    return nn.functional.cross_entropy(model(x), y)


def _sharded(reshard_after_forward: bool, mesh: Any = None,
             **sizes: int) -> nn.Module:
    """The model with each block and the root under fully_shard."""
    from torch.distributed.fsdp import fully_shard
    torch.manual_seed(0)
    model = _Model(**sizes)
    for layer in model.layers:
        fully_shard(layer, mesh=mesh,
                    reshard_after_forward=reshard_after_forward)
    fully_shard(model, mesh=mesh, reshard_after_forward=reshard_after_forward)
    return model


def _build(kind: str, raf: bool, meshes: dict[str, Any]) -> nn.Module:
    """``fsdp``; ``tp``: each block's MLP colwise/rowwise parallel;
    ``fsdp+tp``: tp on the mesh's "tp" dim, fully_shard on "dp"."""
    from torch.distributed.tensor.parallel import (ColwiseParallel,
                                                   RowwiseParallel,
                                                   parallelize_module)
    if kind == "fsdp":
        return _sharded(raf)
    torch.manual_seed(0)
    model = _Model()
    tp = meshes["1d"] if kind == "tp" else meshes["2d"]["tp"]
    for layer in model.layers:
        parallelize_module(layer, tp, {"up": ColwiseParallel(),
                                       "down": RowwiseParallel()})
    if kind == "fsdp+tp":
        from torch.distributed.fsdp import fully_shard
        for layer in model.layers:
            fully_shard(layer, mesh=meshes["2d"]["dp"],
                        reshard_after_forward=raf)
        fully_shard(model, mesh=meshes["2d"]["dp"], reshard_after_forward=raf)
    return model


def _local(t: torch.Tensor) -> torch.Tensor:
    return t.to_local() if hasattr(t, "to_local") else t


def _differences(ref: nn.Module, got: nn.Module, ref_loss: torch.Tensor,
                 loss: torch.Tensor) -> list[str]:
    bad = [] if torch.equal(ref_loss, loss) else [
        f"loss {loss.item()!r} != eager {ref_loss.item()!r}"]
    for (name, p), (_, q) in zip(ref.named_parameters(),
                                 got.named_parameters()):
        if p.grad is None or q.grad is None:
            if (p.grad is None) != (q.grad is None):
                bad.append(f"grad of {name}: {q.grad is None=}, eager "
                           f"{p.grad is None=}")
        elif not torch.equal(_local(p.grad), _local(q.grad)):
            bad.append(f"grad shard of {name}")
    if ref.unused.weight.grad is not None:
        bad.append("eager grad of the unused module is not None")
    for (name, b), (_, c) in zip(ref.named_buffers(), got.named_buffers()):
        if not torch.equal(b, c):
            bad.append(f"buffer {name}")
    return bad


# (kind, reshard_after_forward) per rank run; TP replicates the batch.
_CONFIGS = [("fsdp", True), ("fsdp", False), ("tp", True), ("fsdp+tp", True)]
_PIPELINES = ("identity", "full", "planner")


def _rank_main(rank: int, world: int, port: int, out: str) -> None:
    """One rank: for each config and pipeline, the eager step and the
    optimized step from the same initial model; writes what differs."""
    import joint_mlir
    from torch.distributed.device_mesh import init_device_mesh
    report: dict[str, Any] = {"rank": rank, "runs": {}, "plans": {}}
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=world)
    try:
        meshes = {"1d": init_device_mesh("cpu", (world,)),
                  "2d": init_device_mesh("cpu", (world // 2, 2),
                                         mesh_dim_names=("dp", "tp"))}
        for kind, raf in _CONFIGS:
            # Data-parallel ranks get their own batch, TP ranks share one.
            data_rank = {"fsdp": rank, "tp": 0, "fsdp+tp": rank // 2}[kind]
            torch.manual_seed(1000 + data_rank)
            x = torch.randn(12, 8)
            y = torch.randint(0, 6, (12,))
            ref = _build(kind, raf, meshes)
            ref_loss = _train_fn(ref, x, y)
            ref_loss.backward()
            peaks: dict[str, int] = {}
            for name in _PIPELINES:
                model = _build(kind, raf, meshes)
                options: dict[str, Any] = {
                    "identity": {"pipeline": ""},
                    "full": {"checkpoint": "full"},
                    # Halfway from full checkpointing's peak to the
                    # untransformed one: the plan must decide.
                    "planner": {"budget_gb": sum(peaks.values()) / 2e9},
                }[name]
                step = joint_mlir.optimize(model, _train_fn,
                                           {"x": x, "y": y}, **options)
                peaks[name] = step.report["peak_bytes"]
                loss = step(x=x, y=y)
                key = f"{kind} reshard_after_forward={raf} {name}"
                report["runs"][key] = _differences(ref, model, ref_loss, loss)
                # The plan: every node's name and target, in order (clones,
                # transfers); group names differ between ranks of 2-D
                # meshes ({0, 2} and {1, 3}), so arguments are left out.
                text = json.dumps([(n["name"], n["target"])
                                   for n in step.graph["nodes"]])
                report["plans"][key] = hashlib.sha256(
                    text.encode()).hexdigest()
        gathered: list[Any] = [None] * world
        dist.all_gather_object(gathered, report["plans"])
        report["same_plans"] = all(g == report["plans"] for g in gathered)
    except Exception:  # reported to the parent through the file
        report["error"] = traceback.format_exc()
    finally:
        dist.destroy_process_group()
        Path(out).write_text(json.dumps(report))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("world", [2, 4])
def test_fsdp_steps_bitwise_on_every_rank(world: int, tmp_path: Path) -> None:
    import torch.multiprocessing as mp
    port = _free_port()
    outs = [str(tmp_path / f"rank{r}.json") for r in range(world)]
    ctx = mp.start_processes(_rank_entry, args=(world, port, outs),
                             nprocs=world, join=False, start_method="spawn")
    deadline = time.monotonic() + _HANG_GUARD_S
    # join returns True once every rank is done, False after each exit.
    while not ctx.join(timeout=max(deadline - time.monotonic(), 0)):
        if time.monotonic() >= deadline:
            for p in ctx.processes:
                p.kill()
            pytest.fail(f"{world} ranks still running after "
                        f"{_HANG_GUARD_S} s")
    reports = [json.loads(Path(o).read_text()) for o in outs]
    for r in reports:
        assert "error" not in r, f"rank {r['rank']}:\n{r['error']}"
        assert r["runs"] and all(not bad for bad in r["runs"].values()), (
            f"rank {r['rank']}: {r['runs']}")
        assert len(r["runs"]) == len(_CONFIGS) * len(_PIPELINES)
        assert r["same_plans"], f"rank {r['rank']}: plans differ across ranks"


def _rank_entry(rank: int, world: int, port: int, outs: list[str]) -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    torch.set_num_threads(1)
    _rank_main(rank, world, port, outs[rank])


# -- one rank under a fake process group ----------------------------------

@pytest.fixture
def fake_world() -> Iterator[None]:
    from torch.testing._internal.distributed.fake_pg import FakeStore
    assert not dist.is_initialized()
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=8)
    try:
        yield
    finally:
        dist.destroy_process_group()


def _trace_big(path: Path) -> dict[str, Any]:
    """Parameters dominate (batch 16, 256 -> 1024 -> 256, 4 blocks)."""
    from joint_mlir import trace_joint_graph
    model = _sharded(True, dim=256, hidden=1024, layers=4, classes=6)
    jg = trace_joint_graph(model, _train_fn,
                           {"x": torch.randn(16, 8),
                            "y": torch.randint(0, 6, (16,))}, name="fsdp")
    jg.save(str(path))
    return json.loads(path.read_text())


def _plan(src: Path, options: str) -> dict[str, Any]:
    """The document planned by joint-optimize-memory{options}."""
    from joint_mlir.pipeline import run_pipeline
    doc = json.loads(src.read_text())
    return run_pipeline(doc, f"joint-optimize-memory{{{options}}}",
                        report=False).document


def _unshard_chain(doc: dict[str, Any]) -> set[str]:
    """Forward nodes computed from parameters alone and connected to a
    forward all-gather (the rule of the planner's UnshardChain, restated)."""
    params = {s["input"] for s in doc["state"] if s["is_param"]}
    nodes = [n for n in doc["nodes"] if n["kind"] == "call_function"
             and not n["backward"]]

    def reads(n: dict[str, Any]) -> list[str]:
        found: list[str] = []
        stack: list[Any] = [*n["args"], *n["kwargs"].values()]
        while stack:
            a = stack.pop()
            if isinstance(a, dict) and a.get("t") == "node":
                found.append(a["v"])
            elif isinstance(a, dict) and a.get("t") == "list":
                stack.extend(a["v"])
        return found

    derived: dict[str, list[str]] = {}
    chain: set[str] = set()
    for n in nodes:
        ins = reads(n)
        if all(i in params or i in derived for i in ins):
            derived[n["name"]] = ins
            if "all_gather" in n["target"] or any(i in chain for i in ins):
                chain.add(n["name"])
    for name in reversed(list(derived)):
        if name in chain:
            chain.update(i for i in derived[name] if i in derived)
    return chain


def test_planner_regathers_and_never_offloads_unshard_chain(
        fake_world: None, tmp_path: Path) -> None:
    src = tmp_path / "fsdp.json"
    doc = _trace_big(src)
    chain = _unshard_chain(doc)
    assert sum("all_gather" in n for n in chain) == 5  # root + 4 blocks
    budget = "budget-gb=0.008"
    planned = _plan(src, budget)
    names = {n["name"] for n in planned["nodes"]}
    regathered = {n for n in names if n.startswith("all_gather_into_tensor")
                  and n.endswith("_recomputed")}
    assert regathered, "the plan re-gathers no parameters"
    offloaded = {a["v"] for n in planned["nodes"]
                 if n["target"] == "ao::offload.default"
                 for a in n["args"] if a.get("t") == "node"}
    assert offloaded and not offloaded & chain


def _bytes(out: dict[str, Any]) -> int:
    n = 1
    for d in out["sizes"]:
        n *= d
    return n * torch.empty((), dtype=getattr(torch, out["dtype"])).itemsize


def test_collectives_priced_by_bus_bytes(fake_world: None,
                                         tmp_path: Path) -> None:
    """Each rank sends (n-1)/n of an all-gather's result and of a
    reduce-scatter's input, at collective-gbps; waits are free."""
    src = tmp_path / "fsdp.json"
    doc = _trace_big(src)
    outs = {n["name"]: n["outputs"] for n in doc["nodes"]}
    wire = 0
    for n in doc["nodes"]:
        if n["target"] == "_c10d_functional::all_gather_into_tensor.default":
            wire += _bytes(n["outputs"][0]) // 8 * 7
        elif n["target"] == "_c10d_functional::reduce_scatter_tensor.default":
            wire += _bytes(outs[n["args"][0]["v"]][0]) // 8 * 7
    assert wire > 0
    seconds = {}
    for gbps in (100, 1):
        out = tmp_path / f"report{gbps}.json"
        r = subprocess.run(
            [str(tool("joint-opt")), str(src), "-o", "/dev/null",
             f"--joint-memory-report=format=json output={out} "
             f"collective-gbps={gbps}"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        cost = json.loads(out.read_text())["cost"]
        assert cost["hardware"]["collective_bytes_per_second"] == gbps * 1e9
        seconds[gbps] = cost["compute_seconds"]
    assert seconds[1] - seconds[100] == pytest.approx(
        wire * (1 / 1e9 - 1 / 100e9), rel=1e-9)


def test_plan_identical_across_ranks(tmp_path: Path) -> None:
    from torch.testing._internal.distributed.fake_pg import FakeStore
    docs = []
    # Rank 7 holds no row of the 6-row head (rank 0 holds one).
    for rank in (0, 7):
        dist.init_process_group("fake", store=FakeStore(), rank=rank,
                                world_size=8)
        try:
            _trace_big(tmp_path / f"r{rank}.json")
        finally:
            dist.destroy_process_group()
        docs.append(_plan(tmp_path / f"r{rank}.json", "budget-gb=0.008"))
    # seq_nr counts autograd nodes made earlier in the process: the second
    # trace here starts later; on real ranks (above) it is equal as well.
    for d in docs:
        for n in d["nodes"]:
            n.pop("seq_nr")
    assert docs[0] == docs[1]


@pytest.mark.parametrize("config,reason", [
    ("mp", "a MixedPrecisionPolicy with dtype casts"),
    ("group", "one fully_shard call over several modules"),
])
def test_unsupported_fsdp_is_one_clear_error(fake_world: None, config: str,
                                             reason: str) -> None:
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    from joint_mlir import trace_joint_graph
    from joint_mlir.sharded import ShardingError
    model = _Model()
    if config == "mp":
        fully_shard(model.layers[0], mp_policy=MixedPrecisionPolicy(
            param_dtype=torch.bfloat16))
        where = "layers.0"
    else:
        fully_shard([model.layers[0], model.layers[1]])
        where = "layers.0"
    fully_shard(model)
    with pytest.raises(ShardingError) as e:
        trace_joint_graph(model, _train_fn, {"x": torch.randn(4, 8),
                                             "y": torch.zeros(4, dtype=int)})
    assert str(e.value) == (
        f"fully_shard module '{where}': {reason}; joint_mlir traces FSDP2 "
        "only as plain Shard(0) fully_shard without these")


def test_mixed_precision_policy_without_casts_traces(fake_world: None
                                                    ) -> None:
    """A policy naming the parameters' own dtype casts nothing."""
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    from joint_mlir import trace_joint_graph
    model = _Model()
    fully_shard(model, mp_policy=MixedPrecisionPolicy(
        reduce_dtype=torch.float32))
    jg = trace_joint_graph(model, _train_fn, {"x": torch.randn(4, 8),
                                              "y": torch.zeros(4, dtype=int)})
    assert jg.unreached_grad_fqns == ["unused.weight", "unused.bias"]

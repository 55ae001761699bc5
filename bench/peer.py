"""torchtitan's graph_trainer passes on our joint FX graphs (the peer).

The peer is the PyPI package ``torchtitan`` (0.3.0), module
``torchtitan.experiments.graph_trainer``:

- ``memory_policy.tag_sac_policy`` with ``_make_default_memory_policy()``
  (selective) or ``_make_full_memory_policy()`` (full): writes
  ``node.meta["recompute"]`` on forward nodes;
- ``selective_activation_remat.selective_activation_remat_pass``: duplicates
  recomputed nodes before their earliest backward consumer;
- ``cpu_offload.tag_all_offloadable_activations`` (budget, largest first) and
  ``cpu_offload.apply_cpu_offload_pass`` (inserts ``ao.offload``/``ao.reload``/
  ``ao.wait_tensor``, defers forward waits, prefetches reloads).

The graph is the same one joint-opt reads: the exported JSON rebuilt with
``joint_mlir.fx.build_graph_module`` (same node names, same order). The peer
reads metadata that a torchtitan trace carries and ours spells differently;
:func:`adapt` writes it from the document:

- ``meta["autograd_backward"]`` from the node's ``backward`` flag;
- ``meta["custom"]["module_fqn"]`` from the innermost module-stack entry with
  the Hugging Face ``model.`` prefix removed (``model.layers.3.mlp`` ->
  ``layers.3.mlp``, torchtitan's Decoder naming, which ``_get_layer_id``
  parses); forward nodes at the root module after ``lm_head`` (the loss) and
  their backward get ``loss``;
- ``meta["val"]``: a FakeTensor per tensor result with the recorded sizes,
  strides, dtype and device (exactly the facts the tracer's own ``val`` had;
  ``fx.build_graph_module`` does not restore ``val``), ints for int results.

The torchtitan package is installed on demand (see :func:`ensure_torchtitan`).
"""

from __future__ import annotations

import importlib
import logging
import subprocess
import sys
import time
from typing import Any, Callable

import torch
import torch.fx

PEER_PACKAGES = ["torchtitan==0.3.0", "spmd_types==0.2.3", "tyro",
                 "docstring-parser", "typeguard"]

_DTYPES = {str(d).removeprefix("torch."): d for d in vars(torch).values()
           if isinstance(d, torch.dtype)}


def ensure_torchtitan() -> str:
    """Import the peer modules, installing torchtitan without its training
    dependencies (datasets, wandb, tensorboard, ...) when missing."""
    try:
        import torchtitan  # noqa: F401
        _import_peer()
    except ImportError:
        print("[peer] installing " + " ".join(PEER_PACKAGES)
              + " (pip --no-deps)", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q",
                        "--no-deps", *PEER_PACKAGES], check=True)
        importlib.invalidate_caches()
        _import_peer()
    import torchtitan
    # The peer logs a summary per pass; keep it out of the tables.
    logging.getLogger().setLevel(logging.WARNING)
    for name in ("torchtitan", "torchtitan.tools.logging"):
        logging.getLogger(name).setLevel(logging.WARNING)
    try:
        from torchtitan.tools.logging import logger
        logger.setLevel(logging.WARNING)
    except ImportError:
        pass
    return getattr(torchtitan, "__version__", "0.3.0")


def _import_peer() -> dict[str, Any]:
    gt = "torchtitan.experiments.graph_trainer."
    return {m: importlib.import_module(gt + m) for m in (
        "memory_policy", "selective_activation_remat", "cpu_offload")}


# -- metadata adaptation -------------------------------------------------------

def _fqn(stack: list[dict[str, str]] | None) -> str:
    if not stack:
        return ""
    fqn = stack[-1].get("fqn", "")
    return fqn.removeprefix("model.") if fqn != "model" else ""


def _fake(fact: dict[str, Any], mode: Any) -> Any:
    t = fact.get("t")
    if t == "tensor":
        with mode:
            return torch.empty_strided(
                [int(s) if not isinstance(s, dict) else int(s["hint"])
                 for s in fact["sizes"]],
                [int(s) if not isinstance(s, dict) else int(s["hint"])
                 for s in fact["strides"]],
                dtype=_DTYPES[fact["dtype"]], device="cpu")
    if t == "int":
        return int(fact.get("v", 0))
    return None


def adapt(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """Write the metadata the peer passes read (see the module docstring)."""
    from torch._subclasses import FakeTensorMode
    mode = FakeTensorMode(allow_non_fake_inputs=True)
    after_head = False
    for node in gm.graph.nodes:
        j = node.meta.get("joint")
        if j is None:
            continue
        fqn = _fqn(j.get("module_stack"))
        bwd = bool(j.get("backward"))
        if not bwd and fqn.startswith("lm_head"):
            after_head = True
        elif not bwd and after_head and fqn == "" and node.op != "placeholder":
            fqn = "loss"
        node.meta["custom"] = {"module_fqn": fqn}
        node.meta["autograd_backward"] = bwd
        outs = j.get("outputs") or []
        vals = [_fake(f, mode) for f in outs]
        if len(vals) == 1:
            node.meta["val"] = vals[0]
        elif vals:
            node.meta["val"] = tuple(vals)
    # The loss backward runs first: unowned backward ops before the first
    # lm_head backward op are the loss's (torchtitan annotates them "loss").
    for n in gm.graph.nodes:
        if not n.meta.get("autograd_backward"):
            continue
        fqn = n.meta["custom"]["module_fqn"]
        if fqn.startswith("lm_head"):
            break
        if fqn == "":
            n.meta["custom"]["module_fqn"] = "loss"
    return gm


# -- the passes ------------------------------------------------------------------

def selective(gm: torch.fx.GraphModule) -> dict[str, float]:
    m = _import_peer()
    mp, remat = m["memory_policy"], m["selective_activation_remat"]
    t0 = time.perf_counter()
    mp.tag_sac_policy(gm, policy_fn=mp._make_default_memory_policy())
    t1 = time.perf_counter()
    remat.selective_activation_remat_pass(gm)
    t2 = time.perf_counter()
    return {"tag": t1 - t0, "remat": t2 - t1, "total": t2 - t0}


def full(gm: torch.fx.GraphModule) -> dict[str, float]:
    m = _import_peer()
    mp, remat = m["memory_policy"], m["selective_activation_remat"]
    t0 = time.perf_counter()
    mp.tag_sac_policy(gm, policy_fn=mp._make_full_memory_policy())
    t1 = time.perf_counter()
    remat.selective_activation_remat_pass(gm)
    t2 = time.perf_counter()
    return {"tag": t1 - t0, "remat": t2 - t1, "total": t2 - t0}


def offload(gm: torch.fx.GraphModule, budget_gib: float = 100.0
            ) -> dict[str, float]:
    """The peer's offload tagging within ``budget_gib`` GiB of host memory
    (its ``cpu_budget_gb`` counts 1024**3 bytes), then its offload pass."""
    off = _import_peer()["cpu_offload"]
    t0 = time.perf_counter()
    off.tag_all_offloadable_activations(gm, cpu_budget_gb=budget_gib)
    t1 = time.perf_counter()
    off.apply_cpu_offload_pass(gm)
    t2 = time.perf_counter()
    return {"tag": t1 - t0, "apply": t2 - t1, "total": t2 - t0}


def pipeline(gm: torch.fx.GraphModule, budget_gib: float = 100.0
             ) -> dict[str, float]:
    """The peer's "sac_and_offload" memory policy, then offload (within
    ``budget_gib`` GiB of host memory: the peer's ``cpu_budget_gb`` counts
    1024**3 bytes), then remat (graph_trainer's pass order)."""
    m = _import_peer()
    mp, off = m["memory_policy"], m["cpu_offload"]
    t0 = time.perf_counter()
    mp.tag_sac_policy(gm, policy_fn=mp._make_default_memory_policy())
    off.tag_all_offloadable_activations(gm, cpu_budget_gb=budget_gib)
    off.apply_cpu_offload_pass(gm)
    m["selective_activation_remat"].selective_activation_remat_pass(gm)
    return {"total": time.perf_counter() - t0}


PASSES: dict[str, Callable[..., dict[str, float]]] = {
    "selective": selective, "full": full, "offload": offload,
    "pipeline": pipeline}


def records(gm: torch.fx.GraphModule) -> list[dict[str, Any]]:
    """The peer's result as format-v1-like node records (see decisions.py)."""
    out = []
    for n in gm.graph.nodes:
        if n.op not in ("placeholder", "call_function"):
            continue
        j = n.meta.get("joint") or {}
        tgt = n.target
        if n.op == "placeholder":
            target = None
        elif tgt.__module__ == "_operator" or tgt is getattr(
                __import__("operator"), "getitem"):
            target = "getitem"
        else:
            target = str(getattr(tgt, "_name", tgt)).replace(".", "::", 1) \
                if hasattr(tgt, "_name") else str(tgt)
            ns = getattr(tgt, "namespace", None)
            if ns is not None and hasattr(tgt, "_overloadname"):
                target = f"{ns}::{tgt._opname}.{tgt._overloadname}"
        pol = n.meta.get("recompute")
        dup = n.name.endswith("_recomputed")
        out.append({
            "name": n.name,
            "kind": n.op,
            "target": target,
            "backward": bool(n.meta.get("autograd_backward")),
            "inputs": [(i.name, 0) for i in n.all_input_nodes],
            "outputs": j.get("outputs") or [],
            "recompute": pol.name.lower() if pol is not None and not dup
            else None,
            "recomputed_from": n.name.removesuffix("_recomputed") if dup
            else None,
        })
    return out

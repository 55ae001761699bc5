"""Baseline: torch's own partitioner on the same model.

The recipe that `python -m joint_mlir.export` traces (Hugging Face Llama with
the preset's real dimensions, batch 2, fp32, SDPA) goes through AOTAutograd
(`aot_module` with `partition_fn=min_cut_rematerialization_partition`) under
FakeTensorMode. The forward graph the partitioner returns outputs the loss
and then the values it saves for the backward; saved activation bytes are
those values' storages (graph inputs such as weights excluded, views of one
storage counted once).
"""

from __future__ import annotations

import time
from typing import Any

import torch


def saved_activation_bytes(layers: int, preset: str, seq: int,
                           batch: int = 2) -> dict[str, Any]:
    """Saved activation storages of torch's default min-cut partition:
    {saved (count), activation_bytes, forward_nodes, seconds}."""
    from torch._functorch.partitioners import (
        min_cut_rematerialization_partition)

    got: dict[str, Any] = {}

    def fw_compiler(gm: torch.fx.GraphModule, _inputs: Any) -> Any:
        count, total = _activation_storages(gm)
        got.update(saved=count, activation_bytes=total,
                   forward_nodes=len(gm.graph.nodes))
        return gm

    _, got["seconds"] = _trace(layers, preset, seq, batch,
                               min_cut_rematerialization_partition,
                               fw_compiler=fw_compiler)
    return got


def _trace(layers: int, preset: str, seq: int, batch: int,
           partition_fn: Any, fw_compiler: Any = None
           ) -> tuple[list[str], float]:
    """AOTAutograd over the recipe's step with `partition_fn`, in fake mode;
    `fw_compiler` sees the partitioned forward graph (default: keep it).
    Returns the primal names (parameters, buffers, then input_ids, labels)
    and the seconds taken."""
    from torch._functorch.aot_autograd import aot_function
    from torch._guards import TracingContext, tracing
    from torch._subclasses import FakeTensorMode
    from torch.func import functional_call

    import transformers.masking_utils as mu

    from joint_mlir.recipes import build_recipe
    from joint_mlir.tracer import _non_strict

    r = build_recipe("llama", preset=preset, layers=layers, seq=seq,
                     batch=batch)
    names = [n for n, _ in r.model.named_parameters()]
    bufs = dict(r.model.named_buffers())

    def step(*args: torch.Tensor) -> torch.Tensor:
        n = len(names)
        params = dict(zip(names, args[:n]))
        bvals = dict(zip(bufs, args[n:n + len(bufs)]))
        ids, labels = args[n + len(bufs):]
        return functional_call(r.model, {**params, **bvals},
                               (), {"input_ids": ids, "labels": labels,
                                    "use_cache": False}).loss

    mode = FakeTensorMode(allow_non_fake_inputs=True)
    t0 = time.perf_counter()
    # AOTAutograd hands the model functional tensors, which transformers'
    # is_tracing() does not recognise; our tracer's fake tensors are. Say
    # "tracing" so the mask code takes the same branches as in our export.
    mu.is_tracing = lambda *_a, **_k: True
    with mode, tracing(TracingContext(mode)), _non_strict():
        params = [torch.empty(p.shape, dtype=p.dtype, requires_grad=True)
                  for p in r.model.parameters()]
        fake_bufs = {k: torch.empty(b.shape, dtype=b.dtype)
                     for k, b in bufs.items()}
        ids = torch.zeros(batch, seq, dtype=torch.long)
        labels = torch.zeros(batch, seq, dtype=torch.long)
        compiled = aot_function(step,
                                fw_compiler=fw_compiler or (lambda gm, _: gm),
                                bw_compiler=lambda gm, _: gm,
                                partition_fn=partition_fn)
        compiled(*params, *fake_bufs.values(), ids, labels)
    return names + list(bufs) + ["input_ids", "labels"], \
        time.perf_counter() - t0


def _activation_storages(fw: torch.fx.GraphModule) -> tuple[int, int]:
    """(count, bytes) of the activation storages a forward graph returning
    (loss, *saved) saves: storages of graph inputs (weights and their
    views such as t(w)) excluded, views of one storage counted once."""
    from torch.multiprocessing.reductions import StorageWeakRef
    out = next(n for n in fw.graph.nodes if n.op == "output")
    seen = {StorageWeakRef(n.meta["val"].untyped_storage())
            for n in fw.graph.nodes if n.op == "placeholder"
            and isinstance(n.meta.get("val"), torch.Tensor)}
    count = total = 0
    for v in list(out.args[0])[1:]:
        if not isinstance(v, torch.fx.Node) or v.op == "placeholder":
            continue
        t = v.meta.get("val")
        if not isinstance(t, torch.Tensor):
            continue
        key = StorageWeakRef(t.untyped_storage())
        if key not in seen:
            seen.add(key)
            count += 1
            total += t.untyped_storage().nbytes()
    return count, total


def _saved(fw: torch.fx.GraphModule) -> tuple[int, int, int]:
    """(activation bytes, saved primal bytes, all saved bytes) of a forward
    graph that returns (loss, *saved): activations are non-input storages,
    counted once per storage; the other two in torch's own `_size_of`."""
    from torch._functorch.partitioners import _size_of
    out = next(n for n in fw.graph.nodes if n.op == "output")
    vals = [v for v in list(out.args[0])[1:] if isinstance(v, torch.fx.Node)]
    _, act = _activation_storages(fw)
    prim = sum(_size_of(v) for v in vals if v.op == "placeholder")
    return act, prim, sum(_size_of(v) for v in vals)


def plans(layers: int, preset: str, seq: int, source: dict[str, Any],
          targets: list[int], batch: int = 2) -> dict[str, Any]:
    """torch's min-cut partition of the recipe at `activation_memory_budget`
    values chosen to save about `targets[k]` activation bytes each, as
    format v1 joint documents shaped like `source` (our export of the same
    model) for pricing by `joint-memory-report`.

    torch's budget b is the capacity of a 0-1 knapsack over the nodes the
    aggressive cut would recompute: the nodes it keeps weigh at most
    b * (hi - lo) of torch's `_size_of` bytes, where hi is what the
    runtime-optimised cut saves and lo what all inputs weigh
    (partitioners.choose_saved_values_set). So a target of T activation
    bytes is b = (T - A0) / (hi - lo), A0 being the cut at b ~ 0 (nothing
    kept), clamped to [0, 1], then one secant step on the measured bytes
    when they miss T by over 10%. Returns {"default", "plans": [{target,
    budget, activation_bytes,
    doc}]} with the partitioner's own saved activation bytes."""
    from torch._functorch import config
    from torch._functorch.partitioners import (
        _size_of, min_cut_rematerialization_partition)

    import fxdoc

    cuts: list[tuple[float, Any, Any]] = []
    info: dict[str, Any] = {}

    def partition(joint: torch.fx.GraphModule, inputs: Any, **kw: Any
                  ) -> Any:
        fw, bw = min_cut_rematerialization_partition(joint, inputs, **kw)
        hi = _saved(fw)[2]
        lo = sum(_size_of(n) for n in joint.graph.nodes
                 if n.op == "placeholder" and n.name.startswith("primals"))
        with config.patch(activation_memory_budget=1e-6):
            a0 = _saved(min_cut_rematerialization_partition(
                joint, inputs, **kw)[0])[0]
        info.update(lo=lo, hi=hi, a0=a0)
        cuts.append((1.0, fw, bw))
        memo: dict[float, tuple[int, Any, Any]] = {1.0: (_saved(fw)[0], fw,
                                                         bw)}

        def cut(b: float) -> tuple[int, Any, Any]:
            if b not in memo:
                with config.patch(activation_memory_budget=b):
                    f, g = min_cut_rematerialization_partition(joint, inputs,
                                                               **kw)
                memo[b] = (_saved(f)[0], f, g)
            return memo[b]

        for t in targets:
            b = (t - a0) / (hi - lo) if hi > lo else 1.0
            b = min(1.0, max(0.0, b))
            got = cut(b)[0]
            if abs(got - t) > 0.1 * t and got > a0 and b > 0:
                # One secant step on the measured bytes.
                b2 = min(1.0, max(0.0, b * (t - a0) / (got - a0)))
                if abs(cut(b2)[0] - t) < abs(got - t):
                    b = b2
            cuts.append((b, *cut(b)[1:]))
        return fw, bw

    primals, secs = _trace(layers, preset, seq, batch, partition)
    order = [s["fqn"] for s in source["state"]] + \
        [i["path"] for i in source["inputs"]]
    if order != primals:
        raise ValueError("min-cut primals and the document's placeholders "
                         "differ in order")
    ph = [n["name"] for n in source["nodes"] if n["kind"] == "placeholder"]
    grads = [primals.index(o["fqn"]) for o in source["outputs"]
             if o["role"] == "grad"]

    def doc_of(fw: Any, bw: Any, label: str) -> dict[str, Any]:
        gm, rec = fxdoc.joint_of_partition(fw, bw, ph, grads)
        return fxdoc.document_of(gm, source, label,
                                 lambda n: rec.get(n.name))

    out: dict[str, Any] = {"seconds": secs, **info, "plans": []}
    out["default"] = {"budget": 1.0, "activation_bytes": _saved(cuts[0][1])[0],
                      "doc": doc_of(cuts[0][1], cuts[0][2], "mincut-1.0")}
    for t, (b, fw, bw) in zip(targets, cuts[1:]):
        out["plans"].append({"target": t, "budget": b,
                             "activation_bytes": _saved(fw)[0],
                             "doc": doc_of(fw, bw, f"mincut-{b:.3f}")})
    return out


if __name__ == "__main__":
    import sys
    print(saved_activation_bytes(int(sys.argv[1]), sys.argv[2],
                                 int(sys.argv[3])))

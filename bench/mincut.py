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
    from torch._functorch.partitioners import (
        min_cut_rematerialization_partition)
    from torch._subclasses import FakeTensorMode
    from torch.multiprocessing.reductions import StorageWeakRef

    from joint_mlir.recipes import build_recipe

    r = build_recipe("llama", preset=preset, layers=layers, seq=seq,
                     batch=batch)
    got: dict[str, Any] = {}

    def fw_compiler(gm: torch.fx.GraphModule, _inputs: Any) -> Any:
        out = next(n for n in gm.graph.nodes if n.op == "output")
        vals = list(out.args[0])
        n_user = 1  # the loss
        # Views of weights (t(w)) share the weight's storage: not activations.
        seen: set[Any] = {StorageWeakRef(n.meta["val"].untyped_storage())
                          for n in gm.graph.nodes if n.op == "placeholder"
                          and isinstance(n.meta.get("val"), torch.Tensor)}
        total = count = 0
        for v in vals[n_user:]:
            if not isinstance(v, torch.fx.Node) or v.op == "placeholder":
                continue
            t = v.meta.get("val")
            if not isinstance(t, torch.Tensor):
                continue
            key = StorageWeakRef(t.untyped_storage())
            if key in seen:
                continue
            seen.add(key)
            count += 1
            total += t.untyped_storage().nbytes()
        got.update(saved=count, activation_bytes=total,
                   forward_nodes=len(gm.graph.nodes))
        return gm

    from torch._functorch.aot_autograd import aot_function
    from torch.func import functional_call

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
    from torch._guards import TracingContext, tracing

    import transformers.masking_utils as mu

    from joint_mlir.tracer import _non_strict
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
        compiled = aot_function(step, fw_compiler=fw_compiler,
                                bw_compiler=lambda gm, _: gm,
                                partition_fn=min_cut_rematerialization_partition)
        compiled(*params, *fake_bufs.values(), ids, labels)
    got["seconds"] = time.perf_counter() - t0
    return got


if __name__ == "__main__":
    import sys
    print(saved_activation_bytes(int(sys.argv[1]), sys.argv[2],
                                 int(sys.argv[3])))

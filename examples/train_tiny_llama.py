#!/usr/bin/env python3
"""Train a tiny Llama with AdamW: eagerly and through joint_mlir.optimize.

Four runs from the same initial weights and the same batches:

- eager: ``loss = train_fn(model, **batch); loss.backward()``;
- joint graph: ``optimize(..., pipeline="")``, the traced joint graph with no
  pass (the reference the transformed runs must match bit for bit);
- checkpoint: ``optimize(..., checkpoint="full")``;
- offload: ``optimize(..., offload={"min-bytes": 1024})`` (the tiny model's
  activations are far below the 1 MiB default), which offloads the attention
  activations of every block.

It prints the four loss curves and the memory reports, and exits 1 unless
every optimized run's per-step losses equal the joint graph's bitwise and
the joint graph's stay within 8 units in the last place of eager
(``|graph - eager| <= 8 u |eager|``, u the dtype's unit roundoff, the bound
``python -m joint_mlir.run --compare`` uses against eager).

  PYTHONPATH=python python3 examples/train_tiny_llama.py [--steps 20]
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
import joint_mlir  # noqa: E402


def tiny_llama(seed: int) -> torch.nn.Module:
    from transformers import LlamaConfig, LlamaForCausalLM
    from transformers.utils import logging

    logging.set_verbosity_error()
    cfg = LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128,
                      num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, max_position_embeddings=64,
                      use_cache=False, attention_dropout=0.0)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(cfg)
    model.config._attn_implementation = "sdpa"
    model.train()
    return model


def train_fn(model: torch.nn.Module, input_ids: torch.Tensor,
             labels: torch.Tensor) -> torch.Tensor:
    return model(input_ids=input_ids, labels=labels, use_cache=False).loss


def batches(steps: int, seed: int) -> list[dict[str, torch.Tensor]]:
    """Four fixed batches, cycled, so the loss curve falls."""
    g = torch.Generator().manual_seed(seed)
    fixed = []
    for _ in range(4):
        ids = torch.randint(0, 256, (2, 16), generator=g)
        fixed.append({"input_ids": ids, "labels": ids.clone()})
    return [fixed[i % len(fixed)] for i in range(steps)]


def train(model: torch.nn.Module, data: list[dict[str, torch.Tensor]],
          step=None) -> list[torch.Tensor]:
    """Losses of AdamW steps; ``step`` None trains eagerly."""
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    losses = []
    for batch in data:
        opt.zero_grad(set_to_none=True)
        if step is None:
            loss = train_fn(model, **batch)
            loss.backward()
        else:
            loss = step(**batch)
        opt.step()
        losses.append(loss.detach().clone())
    return losses


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    ints = {2: torch.int16, 4: torch.int32, 8: torch.int64}[a.element_size()]
    return torch.equal(a.view(ints), b.view(ints))


def within_ulps(a: torch.Tensor, ref: torch.Tensor, ulps: int = 8) -> bool:
    u = torch.finfo(ref.dtype).eps / 2
    return bool((a.double() - ref.double()).abs()
                <= ulps * u * ref.double().abs())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)

    base = tiny_llama(a.seed)
    data = batches(a.steps, a.seed)
    configs = {
        "joint graph": dict(pipeline=""),
        "checkpoint": dict(checkpoint="full"),
        "offload": dict(offload={"min-bytes": 1024}),
    }
    curves = {"eager": train(copy.deepcopy(base), data)}
    steps = {}
    for name, opts in configs.items():
        model = copy.deepcopy(base)
        steps[name] = joint_mlir.optimize(model, train_fn, data[0], **opts)
        curves[name] = train(model, data, steps[name])

    names = list(curves)
    print("step  " + "  ".join(f"{n:>14}" for n in names))
    for i in range(a.steps):
        print(f"{i:4d}  " + "  ".join(f"{float(curves[n][i]):14.9f}"
                                      for n in names))
    for name, step in steps.items():
        r = step.report
        print(f"\n[{name}] pipeline: {step.pipeline or '(none)'}")
        print(f"  peak {r['peak_bytes']} B, activations "
              f"{r['activation_bytes']} B, recompute "
              f"{r['cost']['recompute_flops']} FLOP, offloaded "
              f"{r['offloaded_bytes']} B, host peak {r['peak_host_bytes']} B")

    ok = True
    ref = curves["joint graph"]
    for name in ("checkpoint", "offload"):
        bad = [i for i, (x, y) in enumerate(zip(curves[name], ref))
               if not same_bits(x, y)]
        print(f"{name}: losses bitwise equal to the joint graph's: "
              f"{'yes' if not bad else f'NO (steps {bad})'}")
        ok &= not bad
    far = [i for i, (x, y) in enumerate(zip(ref, curves["eager"]))
           if not within_ulps(x, y)]
    print(f"joint graph within 8 ulp of eager at every step: "
          f"{'yes' if not far else f'NO (steps {far})'}")
    ok &= not far
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""``python -m joint_mlir.export``: trace a model recipe into a format-v1 file.

Example::

    python -m joint_mlir.export --model llama --preset llama3-8b --seq 4096 \\
        -o /tmp/llama3-8b.json.gz

User errors (unknown preset, a model without parameters, a non-scalar loss,
an unsupported input leaf, an ``-o`` path that cannot be written, ...) print
one ``error:`` line and exit with 2. ``-o`` is checked before tracing and its
directory is not created; the file appears only complete.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

from ..format import FormatError, graph_stats
from ..recipes import MODELS, PRESETS, RecipeError, build_recipe
from . import EXIT_USAGE, OneLineParser, output_path_error

PROG = "python -m joint_mlir.export"


def _positive(text: str) -> int:
    try:
        v = int(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from e
    if v <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {v}")
    return v


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog=PROG,
        description="Trace a model and its training step (forward, loss and "
        "torch.autograd.grad) into one joint forward+backward graph, written "
        "as joint-graph JSON format v1 (docs/format.md). Models are built "
        "from configs on the meta device: no weights are downloaded or "
        "allocated, so real-size presets trace in a few GiB of host memory.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--model", default="llama",
                   help=f"model family: {', '.join(MODELS)}; or "
                   "python:MODULE:FUNCTION, a factory returning "
                   "(model, train_fn, inputs)")
    p.add_argument("--preset", default=None,
                   help="real model shape: " + ", ".join(sorted(PRESETS)) +
                   "; explicit shape options override it")
    p.add_argument("--layers", type=_positive, help="number of blocks")
    p.add_argument("--hidden", type=_positive, help="hidden size (elements)")
    p.add_argument("--heads", type=_positive, help="attention heads")
    p.add_argument("--kv-heads", type=_positive,
                   help="key/value heads (grouped-query attention)")
    p.add_argument("--intermediate", type=_positive,
                   help="MLP intermediate size (elements)")
    p.add_argument("--vocab", type=_positive,
                   help="vocabulary size (classes for --model mlp)")
    p.add_argument("--batch", type=_positive, default=2,
                   help="batch size (sequences)")
    p.add_argument("--seq", type=_positive, default=16,
                   help="sequence length (tokens)")
    p.add_argument("--dtype", choices=("fp32", "bf16"), default="fp32",
                   help="parameter and activation dtype")
    p.add_argument("--attn", choices=("sdpa", "eager"), default="sdpa",
                   help="transformers attention implementation")
    p.add_argument("--dynamic-seq", action="store_true",
                   help="make the sequence length a symbol (hint = --seq)")
    p.add_argument("--unbacked-sizes", action="store_true",
                   help="trace with symbolic sizes so ops whose output size "
                   "depends on data (nonzero, masked_select, .item()) get "
                   "unbacked symbols u0... instead of failing; input sizes "
                   "stay static unless --dynamic-seq")
    p.add_argument("--device", default="cpu",
                   help="device recorded for the (fake) tensors")
    p.add_argument("--name", default=None, help="graph name; when unset, the "
                   "preset or model name")
    p.add_argument("--stack-traces", action="store_true",
                   help="record Python stack traces per node (large)")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bar")
    p.add_argument("-o", "--output", required=True,
                   help="output path; .json or .json.gz (gzip)")
    return p


class _Progress:
    """A tqdm bar over forward blocks, backward and serialization."""

    def __init__(self, enabled: bool, blocks: list[Any]) -> None:
        self.bar = None
        self.hooks: list[Any] = []
        if not enabled:
            return
        from tqdm import tqdm

        self.bar = tqdm(total=len(blocks) + 2, desc="trace", unit="step",
                        file=sys.stderr, leave=False,
                        disable=None)  # None: off when not a tty
        for b in blocks:
            self.hooks.append(b.register_forward_hook(self._block_done))

    def _block_done(self, *_: Any) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def stage(self, name: str) -> None:
        if self.bar is None:
            return
        self.bar.set_description(name)
        if name == "backward":
            self.bar.update(0)

    def step(self) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def close(self) -> None:
        for h in self.hooks:
            h.remove()
        if self.bar is not None:
            self.bar.close()


def _human(n: int) -> str:
    v = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if v < 1024 or unit == "TiB":
            return f"{v:.0f} {unit}" if unit == "B" else f"{v:.2f} {unit}"
        v /= 1024
    return f"{n} B"  # pragma: no cover


def run(args: argparse.Namespace) -> dict[str, Any]:
    import torch

    from ..model_structure import discover_structure
    from ..tracer import trace_joint_graph

    recipe = build_recipe(
        args.model, preset=args.preset, layers=args.layers, hidden=args.hidden,
        heads=args.heads, kv_heads=args.kv_heads,
        intermediate=args.intermediate, vocab=args.vocab, batch=args.batch,
        seq=args.seq, dtype=args.dtype, dynamic_seq=args.dynamic_seq,
        attn=args.attn)
    try:
        dev = torch.device(args.device)
    except RuntimeError as e:
        raise RecipeError(f"bad --device {args.device!r}: {e}") from e
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise RecipeError(f"--device {args.device} needs a visible CUDA device "
                          "(the autograd engine initializes it even for fake "
                          "tensors); trace with --device cpu")
    if not isinstance(recipe.model, torch.nn.Module):
        raise RecipeError("factory model is not an nn.Module")
    blocks: list[Any] = []
    modules = dict(recipe.model.named_modules())
    for c in discover_structure(recipe.model).containers:
        blocks.extend(modules[b] for b in c.blocks)
    prog = _Progress(not args.no_progress, blocks)
    t0 = time.perf_counter()
    try:
        jg = trace_joint_graph(
            recipe.model, recipe.train_fn, recipe.inputs,
            dynamic_dims=recipe.dynamic_dims, unbacked=args.unbacked_sizes,
            name=args.name or recipe.name,
            device=args.device, progress=prog.stage)
        prog.step()
        t_trace = time.perf_counter() - t0
        prog.stage("serialize")
        doc = jg.save(args.output, stack_traces=args.stack_traces,
                      progress=not args.no_progress)
        prog.step()
    finally:
        prog.close()
    st = graph_stats(doc)
    print(f"{doc['name']}: {st['nodes']} nodes ({st['forward']} forward, "
          f"{st['backward']} backward), {len(doc['state'])} state inputs "
          f"({_human(st['state_bytes'])}), saved activations "
          f"{_human(st['activation_bytes'])}; traced in {t_trace:.1f}s, "
          f"total {time.perf_counter() - t0:.1f}s -> {args.output}")
    return doc


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Before tracing, which can take minutes.
    if why := output_path_error(args.output):
        sys.stderr.write(f"{PROG}: error: {why}\n")
        return EXIT_USAGE
    try:
        run(args)
    except (RecipeError, FormatError, ValueError, TypeError) as e:
        msg = " ".join(str(e).split()) or type(e).__name__
        sys.stderr.write(f"{PROG}: error: {msg}\n")
        return EXIT_USAGE
    except OSError as e:
        # The output went away or filled the disk while tracing.
        what = e.strerror or str(e)
        sys.stderr.write(f"{PROG}: error: cannot write '{args.output}': "
                         f"{what}\n")
        return EXIT_USAGE
    except Exception as e:  # noqa: BLE001 - a model library rejected the config
        if os.environ.get("JOINT_MLIR_DEBUG"):
            raise
        msg = " ".join(str(e).split())[:500] or type(e).__name__
        sys.stderr.write(f"{PROG}: error: {type(e).__name__}: {msg} "
                         "(set JOINT_MLIR_DEBUG=1 for the traceback)\n")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""``python -m joint_mlir.run``: run one joint-graph step in torch (or a
compiled backend) and, with ``--compare``, compare it output by output with a
second document; exit 1 on a mismatch, 2 on bad input (one
``python -m joint_mlir.run: error: ...`` line, as the other commands print),
two documents of different models included: they cannot be compared.

The step itself (materialized state and inputs, the FX interpreter, the
comparison) is :mod:`joint_mlir.executor`.
"""

from __future__ import annotations

import sys
from typing import Any

import torch

from ..executor import (BACKENDS, compare, compare_scaled, format_differences,
                        not_bitwise, run)
from ..format import read_document
from ..validate import FormatViolation, validate_document
from . import EXIT_USAGE, OneLineParser

__all__ = ["main"]

PROG = "python -m joint_mlir.run"


def _random_ops(doc: dict) -> list[str]:
    """Nodes of ``doc`` that draw random numbers (operator tag
    ``nondeterministic_seeded``; SDPA draws only with dropout_p != 0)."""
    ops = doc.get("operators", {})
    out = []
    for n in doc.get("nodes", []):
        tags = (ops.get(n.get("target")) or {}).get("tags") or ()
        if "nondeterministic_seeded" not in tags:
            continue
        if "scaled_dot_product" in n["target"]:
            p = n.get("kwargs", {}).get("dropout_p") or (
                n["args"][3] if len(n.get("args", ())) > 3 else None)
            if not p or not p.get("v"):
                continue
        out.append(n["name"])
    return out

def _error(message: str) -> int:
    """Prints ``message`` as the command's one error line; the exit status."""
    sys.stderr.write(f"{PROG}: error: {message}\n")
    return EXIT_USAGE


def _describe(e: Exception) -> str:
    """The text of an error; an OSError names its file, without errno."""
    if isinstance(e, OSError) and e.strerror and e.filename:
        return f"cannot read '{e.filename}': {e.strerror}"
    return str(e) or type(e).__name__


def _state_mismatch(first: dict[str, Any],
                    second: dict[str, Any]) -> str | None:
    """Why two documents cannot be compared output by output, or None.

    Transformed graphs keep the model state (FQN, shape, dtype) and inputs
    of the original; anything else is another model, and a per-output table
    of infinities would only hide that.
    """
    def layout(doc: dict[str, Any]) -> list[tuple[str, Any, Any]]:
        facts = {n["name"]: n["outputs"][0] for n in doc["nodes"]
                 if n["kind"] == "placeholder" and n["outputs"]}
        rows = [(s["fqn"], facts[s["input"]].get("sizes"),
                 facts[s["input"]].get("dtype")) for s in doc["state"]]
        rows += [(i["path"], facts[i["input"]].get("sizes"),
                  facts[i["input"]].get("dtype")) for i in doc["inputs"]]
        return rows

    a, b = layout(first), layout(second)
    for x, y in zip(a, b):
        if x != y:
            return f"{x[0]} {x[1]} {x[2]} vs {y[0]} {y[1]} {y[2]}"
    if len(a) != len(b):
        return f"{len(a)} vs {len(b)} state tensors and inputs"
    return None


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(
        prog=PROG,
        description="Run one training step of a joint-graph JSON file in "
        "torch with deterministic seeded state and inputs; with --compare, "
        "run a second file on the same tensors and compare every output "
        "(loss, gradient per FQN, loss_dict entries, buffers after the step).")
    p.add_argument("graph", help="format v1 file (.json or .json.gz)")
    p.add_argument("--compare", metavar="OTHER",
                   help="second graph (e.g. after joint-opt passes) to "
                   "compare against; exit status 1 on any mismatch")
    p.add_argument("--device", default="cpu",
                   help="cpu, cuda or cuda:N (default cpu)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed for state, inputs and torch's RNG (default 0)")
    p.add_argument("--safetensors", metavar="FILE",
                   help="take tensors from FILE (keys: state FQNs, input "
                   "paths) instead of the seeded init")
    p.add_argument("--rtol", type=float, default=None,
                   help="relative tolerance (unitless); with --atol replaces "
                   "the default bitwise comparison, e.g. against an eager run")
    p.add_argument("--atol", type=float, default=None,
                   help="absolute tolerance, in the outputs' units")
    p.add_argument("--scaled", action="store_true",
                   help="compare each output within the compiled backends' "
                   "tolerance x max|ref| (1e-5 float32, 1e-2 bf16) instead "
                   "of bitwise: for steps that change summation order "
                   "(joint-chunk-loss)")
    p.add_argument("--import", dest="imports", action="append", default=[],
                   metavar="MODULE",
                   help="import MODULE before running (repeatable): a "
                   "library that registers operators of the graph; modules "
                   "recorded in the operator table (python_module) are "
                   "imported without it")
    p.add_argument("--backend", default="torch", choices=BACKENDS,
                   help="torch (default) runs the FX graph; mlir-cpu "
                   "compiles GRAPH with joint-compile (cached by content "
                   "hash) and runs the library; mlir-cuda the same with "
                   "--target=cuda on torch CUDA tensors (the reference then "
                   "runs on cuda); mlir-cuda-emulated compiles for cuda with "
                   "host kernels and runs on the CUDA runtime's emulated "
                   "device (no GPU; races and uses after free fail the "
                   "run); with --compare, OTHER then "
                   "runs on torch as the reference and each output must be "
                   "within tol x max|ref| (tol 1e-5 float32, 1e-2 bfloat16)")
    p.add_argument("--pipeline", default="",
                   help="compiled backends: joint passes joint-compile runs before "
                   "lowering, e.g. 'joint-tag-recompute-policy{mode=full},"
                   "joint-remat'")
    p.add_argument("-O", dest="opt_level", type=int, choices=range(4),
                   default=None, metavar="LEVEL",
                   help="compiled backends: joint-compile's LLVM "
                   "optimization level, 0-3 (default: joint-compile's, 2)")
    p.add_argument("--ao", default="auto", choices=("auto", "torch", "fallback"),
                   help="ao op implementation: torch's ops on cuda when "
                   "available (auto), always torch's, or the synchronous "
                   "fallback")
    a = p.parse_args(argv)
    if a.scaled and (a.rtol is not None or a.atol is not None):
        return _error("give --scaled or --rtol/--atol, not both")
    try:
        if a.device.startswith("cuda") and not torch.cuda.is_available():
            raise RuntimeError("--device cuda: no CUDA device is available")
        # A document that breaks format v1 gets the validator's one error
        # (exit 2), not a traceback from the middle of a run.
        docs = {path: read_document(path) for path in (a.graph, a.compare)
                if path is not None}
        for path, doc in docs.items():
            try:
                validate_document(doc)
            except FormatViolation as e:
                raise FormatViolation(f"{path}: {e}") from e
        first = run(a.graph if a.backend != "torch" else docs[a.graph],
                    seed=a.seed, device=a.device,
                    safetensors=a.safetensors, ao_impl=a.ao,
                    imports=a.imports, backend=a.backend,
                    pipeline=a.pipeline, opt_level=a.opt_level)
        if a.compare is None:
            print(f"loss {float(first.loss):.9g}")
            for k, v in first.grads.items():
                print(f"grad {k}: norm {float(v.double().norm()):.9g}")
            for k, v in first.loss_dict.items():
                print(f"loss_dict {k}: {v.double().sum().item():.9g}")
            for k, v in first.nondeterministic.items():
                print(f"note: node {k}: {v}: its bits may differ between "
                      "runs")
            return 0
        mismatch = _state_mismatch(docs[a.graph], docs[a.compare])
        if mismatch:  # nothing to compare: bad input, not a mismatch
            return _error(f"{a.graph} and {a.compare} are not the same "
                          f"model: {mismatch}")
        # mlir-cuda: the torch reference runs on CUDA too (same init).
        ref_device = "cuda" if a.backend == "mlir-cuda" else a.device
        second = run(docs[a.compare], seed=a.seed, device=ref_device,
                     safetensors=a.safetensors, ao_impl=a.ao,
                     imports=a.imports)
    except (OSError, ValueError, RuntimeError) as e:
        return _error(_describe(e))
    if a.backend == "torch" and not a.scaled:
        diffs = compare(first, second, rtol=a.rtol, atol=a.atol)
        mode = ("bitwise" if a.rtol is None and a.atol is None
                else f"rtol={a.rtol} atol={a.atol}")
    else:
        diffs = compare_scaled(first, second)
        mode = (f"{a.backend} vs torch, " if a.backend != "torch" else "") \
            + "tol x max|ref|"
    print(format_differences(diffs))
    why = not_bitwise(first, second) \
        if a.backend == "torch" and not a.scaled else None
    if why and a.rtol is None and a.atol is None:
        print(f"note: {why}")
    bad = [d.name for d in diffs if not d.ok]
    if bad:
        print(f"{len(bad)} of {len(diffs)} outputs differ ({mode}): "
              + ", ".join(bad[:5]) + (" ..." if len(bad) > 5 else ""))
        random = _random_ops(docs[a.graph])
        if a.backend != "torch" and random:
            print("note: the graph draws random numbers (" +
                  ", ".join(random[:3]) + (" ..." if len(random) > 3
                                           else "") +
                  "): a compiled step draws with Philox 4x32-10 from its "
                  "rng_state, torch with its own generator, so outputs "
                  "that depend on the draws differ (docs/lowering.md, "
                  "\"Random ops\"); compare two compiled steps instead")
        return 1
    print(f"all {len(diffs)} outputs match ({mode})")
    return 0

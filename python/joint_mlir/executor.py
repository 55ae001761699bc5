"""Run one training step of a joint graph in torch and compare steps.

:func:`materialize` builds the model state and user inputs of a format v1
document deterministically:

- every tensor gets its own generator, seeded from ``(seed, name)`` (the FQN
  for state, the input path for inputs), so values do not depend on the
  order of tensors or on which other tensors exist, and are drawn in float32
  on the CPU before the cast and the move, so ``cpu`` and ``cuda`` runs (and
  the eager model) see the same numbers;
- floating state: matrices ``N(0, 1/fan_in)`` with ``fan_in`` the last
  dimension; 1-D ``*weight`` (norm scales) ``1 + N(0, 0.1^2)``; other 1-D and
  scalars ``N(0, 0.1^2)``; floating inputs ``N(0, 1)``;
- integer inputs are uniform in ``[0, bound)`` where ``bound`` is found from
  the graph: the rows of the embedding weight the ids index, the classes of
  the ``nll_loss`` they are targets of, ``one_hot``'s ``num_classes`` (also
  in its traced form ``eq(unsqueeze(ids, -1), arange(K))``), the indexed
  dimension of ``index_select``/``gather`` (following the ids through
  integer-valued ops such as views, slices and pads, and taking the smallest
  bound when there are several); ``2`` when no such use exists; bool inputs
  are fair coin flips; integer state is zero;
- a ``safetensors`` file overrides any tensor it holds (keys are state FQNs
  or input paths).

:func:`run` rebuilds the FX graph (:func:`joint_mlir.fx.load`), seeds torch's
global RNG with ``seed`` (so random ops such as dropout replay identically),
runs the step under ``torch.no_grad()`` and returns a :class:`StepResult`.

Steps are reproducible: every step runs with
``torch.use_deterministic_algorithms(True, warn_only=True)`` (and cuBLAS's
fixed workspace, ``CUBLAS_WORKSPACE_CONFIG=:4096:8``), so two runs of one
file with the same thread count are bitwise equal; an op that torch flags as
having no deterministic kernel on the run device is recorded by node in
:attr:`StepResult.nondeterministic`, and :func:`compare` says that outputs
cannot be compared bitwise because of it (the backward of indexing on the
CPU, ``index_put(accumulate=True)``, otherwise sums in a thread-dependent
order).
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import operator
import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

from . import ao as _ao
from .format import FormatError, read_document, value_refs
from .fx import build_graph_module

__all__ = ["StepResult", "Difference", "materialize", "index_bounds",
           "run", "run_graph", "compare", "compare_scaled", "not_bitwise",
           "deterministic_algorithms", "format_differences"]

_INDEX_USES = {
    # target: (index arg position, how to get the bound)
    "aten::embedding.default": 1,
    "aten::nll_loss_forward.default": 1,
    "aten::nll_loss2d_forward.default": 1,
    "aten::one_hot.default": 0,
    "aten::index_select.default": 2,
    "aten::gather.default": 2,
}


@dataclass
class StepResult:
    """One training step: loss, gradients by FQN, loss_dict, state after."""

    loss: torch.Tensor
    grads: dict[str, torch.Tensor]
    loss_dict: dict[str, torch.Tensor]
    # Buffers after the step (an in-place buffer update shows up here).
    buffers: dict[str, torch.Tensor] = field(default_factory=dict)
    # Node name -> "target (torch's message)" for ops that have no
    # deterministic kernel on the run device (their bits may vary per run).
    nondeterministic: dict[str, str] = field(default_factory=dict)
    # torch.get_num_threads() of the run (CPU reductions split by it).
    threads: int = 0

    def named_outputs(self) -> dict[str, torch.Tensor]:
        out = {"loss": self.loss}
        out.update({f"grad {k}": v for k, v in self.grads.items()})
        out.update({f"loss_dict {k}": v for k, v in self.loss_dict.items()})
        out.update({f"buffer {k}": v for k, v in self.buffers.items()})
        return out


@dataclass
class Difference:
    name: str
    max_abs: float
    max_rel: float
    ok: bool
    note: str = ""


def _seed_for(seed: int, name: str) -> int:
    h = hashlib.sha256(f"{seed}:{name}".encode()).digest()
    return int.from_bytes(h[:8], "little") & ((1 << 63) - 1)


def _dim(d: Any) -> int:
    if isinstance(d, int):
        return d
    if d.get("hint") is None:
        raise FormatError(f"symbolic size {d['expr']!r} has no hint")
    return int(d["hint"])


def _dtype(name: str) -> torch.dtype:
    d = getattr(torch, name, None)
    if not isinstance(d, torch.dtype):
        raise FormatError(f"unknown dtype {name!r}")
    return d


def _facts(doc: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return {n["name"]: n["outputs"] for n in doc["nodes"]}


def _ref_fact(facts: dict[str, list[dict[str, Any]]],
              v: dict[str, Any]) -> dict[str, Any] | None:
    if v.get("t") != "node":
        return None
    outs = facts.get(v["v"]) or []
    i = v.get("i", 0)
    return outs[i] if i < len(outs) else None


def _is_int_fact(f: dict[str, Any] | None) -> bool:
    return bool(f) and f.get("t") == "tensor" and (
        f["dtype"].startswith(("int", "uint")))


def index_bounds(doc: dict[str, Any]) -> dict[str, int]:
    """Exclusive upper bound per integer input placeholder (see module doc)."""
    facts = _facts(doc)
    inputs = {i["input"] for i in doc["inputs"]}
    # node name -> set of input placeholders its integer value derives from
    origin: dict[str, set[str]] = {}
    for name in inputs:
        if _is_int_fact((facts.get(name) or [None])[0]):
            origin[name] = {name}
    bounds: dict[str, int] = {}

    for n in doc["nodes"]:
        if n["kind"] != "call_function":
            continue
        args = list(n["args"])
        srcs = set().union(*(origin.get(r, set()) for a in args
                             for r in value_refs(a)),
                           *(origin.get(r, set()) for a in n["kwargs"].values()
                             for r in value_refs(a)))
        if not srcs:
            continue
        if any(_is_int_fact(o) for o in n["outputs"]):
            origin[n["name"]] = srcs
        if n["target"] == "aten::eq.Tensor" and len(args) == 2:
            # one_hot as traced: eq(unsqueeze(idx, -1), arange(K))
            byname = {m["name"]: m for m in doc["nodes"]}
            for a, b in ((args[0], args[1]), (args[1], args[0])):
                idx_srcs = set().union(*(origin.get(r, set()) for r in value_refs(a)))
                m = byname.get(b.get("v")) if b.get("t") == "node" else None
                if idx_srcs and m and m["target"] == "aten::arange.default" \
                        and len(m["args"]) == 1 and m["args"][0]["t"] == "int":
                    for s in idx_srcs:
                        bounds[s] = min(bounds.get(s, m["args"][0]["v"]),
                                        m["args"][0]["v"])
            continue
        pos = _INDEX_USES.get(n["target"])
        if pos is None or pos >= len(args):
            continue
        idx_srcs = set().union(*(origin.get(r, set()) for r in value_refs(args[pos])))
        if not idx_srcs:
            continue
        bound = None
        t = n["target"]
        if t == "aten::embedding.default":
            w = _ref_fact(facts, args[0])
            bound = _dim(w["sizes"][0]) if w else None
        elif t.startswith("aten::nll_loss"):
            x = _ref_fact(facts, args[0])
            if x:
                bound = _dim(x["sizes"][1 if len(x["sizes"]) > 1 else 0])
        elif t == "aten::one_hot.default":
            k = n["kwargs"].get("num_classes") or (
                args[1] if len(args) > 1 else None)
            if k and k.get("t") == "int" and k["v"] > 0:
                bound = k["v"]
        else:
            x = _ref_fact(facts, args[0])
            dim = args[1].get("v") if args[1].get("t") == "int" else None
            if x and dim is not None:
                bound = _dim(x["sizes"][dim])
        if bound is None:
            continue
        for s in idx_srcs:
            bounds[s] = min(bounds.get(s, bound), bound)
    return bounds


def _init_tensor(fact: dict[str, Any], name: str, seed: int, *,
                 is_state: bool, bound: int | None,
                 device: torch.device) -> torch.Tensor:
    sizes = [_dim(d) for d in fact["sizes"]]
    strides = [_dim(d) for d in fact["strides"]]
    dtype = _dtype(fact["dtype"])
    g = torch.Generator().manual_seed(_seed_for(seed, name))
    if dtype.is_floating_point or dtype.is_complex:
        x = torch.randn(sizes, generator=g, dtype=torch.float32)
        if is_state:
            if len(sizes) >= 2:
                x = x / math.sqrt(max(sizes[-1], 1))
            elif name.endswith("weight"):
                x = 1 + 0.1 * x
            else:
                x = 0.1 * x
        x = x.to(dtype)
    elif dtype == torch.bool:
        x = torch.randint(0, 2, sizes, generator=g).bool()
    elif is_state:
        x = torch.zeros(sizes, dtype=dtype)
    else:
        x = torch.randint(0, bound or 2, sizes, generator=g, dtype=torch.int64
                          ).to(dtype)
    out = torch.empty_strided(sizes, strides, dtype=dtype, device=device)
    out.copy_(x)
    return out


def materialize(doc: dict[str, Any], *, seed: int = 0,
                device: str | torch.device = "cpu",
                safetensors: str | None = None
                ) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """(state by FQN, inputs by path) for ``doc``; see the module docstring."""
    device = torch.device(device)
    facts = _facts(doc)
    given: dict[str, torch.Tensor] = {}
    if safetensors is not None:
        from safetensors.torch import load_file
        given = load_file(safetensors)
    bounds = index_bounds(doc)
    state: dict[str, torch.Tensor] = {}
    for s in doc["state"]:
        fact = facts[s["input"]][0]
        if s["fqn"] in given:
            state[s["fqn"]] = given[s["fqn"]].to(device)
        else:
            state[s["fqn"]] = _init_tensor(fact, s["fqn"], seed, is_state=True,
                                           bound=None, device=device)
    inputs: dict[str, torch.Tensor] = {}
    for i in doc["inputs"]:
        fact = facts[i["input"]][0]
        if fact.get("t") != "tensor":
            raise FormatError(f"input {i['path']}: only tensor inputs can be "
                             "materialized")
        if i["path"] in given:
            inputs[i["path"]] = given[i["path"]].to(device)
        else:
            inputs[i["path"]] = _init_tensor(
                fact, "input:" + i["path"], seed, is_state=False,
                bound=bounds.get(i["input"]), device=device)
    return state, inputs


# Texts of torch's alerts for an op without a deterministic kernel
# (at::globalContext().alertNotDeterministic and the cuBLAS workspace check).
_NONDETERMINISTIC_ALERTS = ("does not have a deterministic implementation",
                            "this operation is not deterministic")


@contextlib.contextmanager
def deterministic_algorithms() -> Iterator[None]:
    """``torch.use_deterministic_algorithms(True, warn_only=True)`` for a step.

    The previous setting is restored on exit. cuBLAS needs a fixed workspace
    for reproducible matmuls; it is set when CUDA is not initialized yet
    (``CUBLAS_WORKSPACE_CONFIG``, as torch's reproducibility notes ask).
    """
    if not torch.cuda.is_initialized():
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    prev = (torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled())
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(prev[0], warn_only=prev[1])


def _read_items(n: torch.fx.Node) -> set[int] | None:
    """Indices of ``n``'s tuple result that a ``getitem`` with a reader of
    its own takes, or None when a user reads the result other than by a
    constant index. (FX keeps a ``getitem`` for a result nobody reads.)"""
    read: set[int] = set()
    for u in n.users:
        if u.op != "call_function" or u.target is not operator.getitem or \
                not isinstance(u.args[1], int):
            return None
        if u.users:
            read.add(u.args[1])
    return read


class _StepInterpreter(torch.fx.Interpreter):
    """Runs the graph node by node, attributing determinism alerts to nodes.

    Values are freed as the memory model assumes: each at its last reader
    (``torch.fx.Interpreter``'s rule), a value nothing reads (the result of
    an in-place write, a view nobody uses) as soon as its op returns, and
    an element of a multi-result op that no ``getitem`` reads as soon as
    the op returns too (the other elements stay until read).
    """

    def __init__(self, gm: torch.fx.GraphModule,
                 log: list[warnings.WarningMessage]) -> None:
        super().__init__(gm)
        self.log = log
        self.nondeterministic: dict[str, str] = {}
        self.others: list[warnings.WarningMessage] = []
        for n in self.graph.nodes:
            if not n.users and n.op != "output":
                # Interpreter.run drops these right after storing them.
                self.user_to_last_uses.setdefault(n, []).append(n)

    def run_node(self, n: torch.fx.Node) -> Any:
        seen = len(self.log)
        out = super().run_node(n)
        if isinstance(out, (tuple, list)) and n.users:
            read = _read_items(n)
            if read is not None and len(read) < len(out):
                out = tuple(v if i in read else None
                            for i, v in enumerate(out))
        for w in self.log[seen:]:
            text = str(w.message)
            if any(a in text for a in _NONDETERMINISTIC_ALERTS):
                target = (n.meta.get("joint") or {}).get("target") or str(
                    n.target)
                self.nondeterministic.setdefault(
                    n.name, f"{target} ({text.split(', but')[0]})")
            else:
                self.others.append(w)
        del self.log[seen:]
        return out


def run_graph(gm: torch.fx.GraphModule, state: dict[str, torch.Tensor],
              inputs: dict[str, torch.Tensor], *,
              seed: int | None = 0) -> StepResult:
    """Run a graph from :func:`joint_mlir.fx.load` on given tensors.

    ``seed`` seeds torch's global RNG first; ``None`` leaves the RNG as it is
    (a training loop, where random ops continue the user's stream). Buffers
    the graph updates in place are updated in ``state``'s tensors.
    Deterministic algorithms are on for the step (see the module docstring);
    ops without a deterministic kernel are listed in
    ``StepResult.nondeterministic``.
    """
    doc = gm.joint_doc
    flat = [state[f] for f in gm.state_fqns] + [inputs[p]
                                                 for p in gm.input_paths]
    if seed is not None:
        torch.manual_seed(seed)
    with warnings.catch_warnings(record=True) as log:
        warnings.simplefilter("always")
        interp = _StepInterpreter(gm, log)
        with torch.no_grad(), _ao.protect_storages(flat), \
                deterministic_algorithms():
            outs = interp.run(*flat)
    for w in interp.others:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    loss, grads, loss_dict = None, {}, {}
    for role, v in zip(gm.output_roles, outs):
        if role["role"] == "loss":
            loss = v
        elif role["role"] == "grad":
            grads[role["fqn"]] = v
        elif role["role"] == "loss_dict":
            loss_dict[role["key"]] = v
    buffers = {s["fqn"]: state[s["fqn"]] for s in doc["state"]
               if not s["is_param"]}
    return StepResult(loss=loss, grads=grads, loss_dict=loss_dict,
                      buffers=buffers,
                      nondeterministic=interp.nondeterministic,
                      threads=torch.get_num_threads())


BACKENDS = ("torch", "mlir-cpu", "mlir-cuda", "mlir-cuda-emulated")

# --compare tolerance of a compiled backend against torch, per dtype: an
# output passes when max|got - ref| <= tol * max|ref|.
COMPILED_TOLERANCE = {torch.float32: 1e-5, torch.bfloat16: 1e-2,
                      torch.float16: 1e-2, torch.float64: 1e-12}


def run(path: str | dict[str, Any], *, seed: int = 0,
        device: str | torch.device = "cpu", safetensors: str | None = None,
        ao_impl: str = "auto",
        imports: list[str] | tuple[str, ...] = (), backend: str = "torch",
        pipeline: str = "", opt_level: int | None = None) -> StepResult:
    """Materialize state and inputs, run one step, return the results.

    ``path`` is a format v1 file or an already-parsed document; ``imports``
    are modules to import first (libraries registering the graph's
    operators, beyond the ``python_module`` the operator table records).
    ``backend``
    ``torch`` rebuilds the FX graph; ``mlir-cpu`` compiles it with
    ``joint-compile`` (cached; ``pipeline`` is its ``--pipeline``,
    ``opt_level`` its ``-O``) and calls the library
    (:mod:`joint_mlir.mlir_cpu`); ``mlir-cuda`` the same with
    ``--target=cuda`` on CUDA tensors; ``mlir-cuda-emulated`` compiles for
    the CUDA target with kernels for the host
    (:data:`~joint_mlir.mlir_cpu.EMULATED_LOWERING`) and runs the step on
    the CUDA runtime's emulated device on cpu tensors (no GPU needed; a
    race, use after free or refused call found by the emulator raises
    :class:`~joint_mlir.mlir_cpu.StepError` with the runtime's message).
    """
    doc = read_document(path) if isinstance(path, str) else path
    if backend == "mlir-cpu":
        from .mlir_cpu import CompiledStep, compile_graph, run_compiled
        if torch.device(device).type != "cpu":
            raise ValueError("--backend mlir-cpu runs on the cpu device only")
        step = CompiledStep(compile_graph(path, pipeline=pipeline,
                                          opt_level=opt_level))
        state, inputs = materialize(doc, seed=seed, device="cpu",
                                    safetensors=safetensors)
        return run_compiled(step, state, inputs, rng_seed=seed)
    if backend == "mlir-cuda":
        from .mlir_cpu import CompiledStep, compile_graph, run_compiled
        if not torch.cuda.is_available():
            raise RuntimeError("--backend mlir-cuda needs a CUDA device "
                               "(none is available)")
        lib = compile_graph(path, pipeline=pipeline, target="cuda",
                            opt_level=opt_level)
        step = CompiledStep(lib)
        state, inputs = materialize(doc, seed=seed, device="cuda",
                                    safetensors=safetensors)
        return run_compiled(step, state, inputs, rng_seed=seed)
    if backend == "mlir-cuda-emulated":
        from .mlir_cpu import (EMULATED_LOWERING, CompiledStep, compile_graph,
                               load_emulated_runtime, run_compiled)
        if torch.device(device).type != "cpu":
            raise ValueError("--backend mlir-cuda-emulated runs on the cpu "
                             "device only (the emulated device's memory is "
                             "host memory)")
        lib = compile_graph(path, pipeline=pipeline, target="cuda",
                            lowering_options=EMULATED_LOWERING,
                            opt_level=opt_level)
        load_emulated_runtime()
        step = CompiledStep(lib)
        state, inputs = materialize(doc, seed=seed, device="cpu",
                                    safetensors=safetensors)
        return run_compiled(step, state, inputs, rng_seed=seed)
    if backend != "torch":
        raise ValueError(f"unknown backend {backend!r} (expected one of "
                         f"{', '.join(BACKENDS)})")
    if pipeline or opt_level is not None:
        raise ValueError("--pipeline and -O are for compiled backends; run "
                         "joint-opt for the torch backend")
    gm = build_graph_module(doc, device=device, ao_impl=ao_impl,
                            imports=imports)
    state, inputs = materialize(doc, seed=seed, device=device,
                                safetensors=safetensors)
    return run_graph(gm, state, inputs, seed=seed)


def _bits(t: torch.Tensor) -> torch.Tensor:
    if t.is_complex():
        t = torch.view_as_real(t)
    if t.dtype == torch.bool or not t.is_floating_point():
        return t
    return t.view({1: torch.uint8, 2: torch.int16, 4: torch.int32,
                   8: torch.int64}[t.element_size()])


def _diff(name: str, a: Any, b: Any, rtol: float | None,
          atol: float | None) -> Difference:
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        ok = a == b
        return Difference(name, 0.0 if ok else math.inf,
                          0.0 if ok else math.inf, bool(ok), "not a tensor")
    if a.shape != b.shape or a.dtype != b.dtype:
        return Difference(name, math.inf, math.inf, False,
                          f"{tuple(a.shape)}/{a.dtype} vs "
                          f"{tuple(b.shape)}/{b.dtype}")
    a64 = a.detach().cpu().to(torch.complex128 if a.is_complex()
                              else torch.float64)
    b64 = b.detach().cpu().to(a64.dtype)
    same = (a64 == b64) | (a64.isnan() & b64.isnan())
    d = torch.where(same, torch.zeros((), dtype=torch.float64),
                    (a64 - b64).abs().to(torch.float64))
    max_abs = float(d.max()) if d.numel() else 0.0
    rel = d / b64.abs().to(torch.float64).clamp_min(1e-30)
    max_rel = float(rel.max()) if rel.numel() else 0.0
    if rtol is None and atol is None:
        ok = torch.equal(_bits(a.detach().cpu()), _bits(b.detach().cpu()))
        note = "" if ok else "bits differ"
    else:
        ok = bool(torch.allclose(a64, b64, rtol=rtol or 0.0, atol=atol or 0.0,
                                 equal_nan=True))
        note = "" if ok else f"beyond rtol={rtol} atol={atol}"
    return Difference(name, max_abs, max_rel, ok, note)


def not_bitwise(a: StepResult, b: StepResult) -> str | None:
    """Why two steps cannot be compared bit for bit, or None.

    Either step ran an op without a deterministic kernel (named with its
    node), or the steps ran with different CPU thread counts.
    """
    ops = {**a.nondeterministic, **b.nondeterministic}
    if ops:
        shown = [f"node {k}: {v}" for k, v in list(ops.items())[:3]]
        more = f" and {len(ops) - 3} more" if len(ops) > 3 else ""
        return ("the comparison cannot be bitwise: torch has no "
                "deterministic kernel for " + "; ".join(shown) + more)
    if a.threads and b.threads and a.threads != b.threads:
        return (f"the comparison cannot be bitwise: the steps ran with "
                f"{a.threads} and {b.threads} threads")
    return None

def _paired_outputs(first: dict[str, Any], second: dict[str, Any],
                    names: tuple[str, str]) -> Iterator[tuple[str, Any, Any,
                                                              Difference | None]]:
    """``(name, first value, second value, None)`` for every output of
    ``first`` then the extras of ``second``; where one side lacks the output,
    the last item is its failed Difference ("missing in <names[i]>")."""
    for k in list(first) + [k for k in second if k not in first]:
        if k in first and k in second:
            yield k, first[k], second[k], None
        else:
            side = names[0] if k not in first else names[1]
            yield k, None, None, Difference(k, math.inf, math.inf, False,
                                            "missing in " + side)


# A float32/float64 output whose reference is only roundoff (a gradient
# that is zero in exact arithmetic, such as an attention key bias's: its
# max|ref| is within ROUNDOFF_ULPS machine epsilons of the step's largest
# output of its dtype) cannot meet a bound relative to itself; it is
# accepted within that same roundoff bound (the role of
# torch.testing.assert_close's atol, at the step's own scale). bf16/f16
# outputs keep the relative bound only (their epsilon is 1e-2 to 1e-3).
ROUNDOFF_ULPS = 16


def compare_scaled(got: StepResult, ref: StepResult) -> list[Difference]:
    """Per-output differences of a compiled run against a torch reference:
    ``max|got - ref| <= tol * max|ref|`` with ``tol`` from
    :data:`COMPILED_TOLERANCE` by dtype, or, for a float32/64 reference that
    is only roundoff (max|ref| itself within the bound), ``<= ROUNDOFF_ULPS
    * eps(dtype) * S`` with ``S`` the largest max|ref| of that dtype in the
    step (said in the note); integer and bool outputs exactly."""
    step_scale: dict[torch.dtype, float] = {}
    for t in ref.named_outputs().values():
        if isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel():
            step_scale[t.dtype] = max(step_scale.get(t.dtype, 0.0),
                                      float(t.detach().double().abs().max()))
    out = []
    for k, b, a, missing in _paired_outputs(
            ref.named_outputs(), got.named_outputs(), ("reference", "compiled")):
        if missing:
            out.append(missing)
            continue
        if a is None or b is None or a.shape != b.shape or a.dtype != b.dtype:
            out.append(Difference(k, math.inf, math.inf, False,
                                  f"{None if a is None else (tuple(a.shape), a.dtype)} vs "
                                  f"{None if b is None else (tuple(b.shape), b.dtype)}"))
            continue
        a64, b64 = a.detach().double(), b.detach().double()
        d = (a64 - b64).abs()
        max_abs = float(d.max()) if d.numel() else 0.0
        scale = float(b64.abs().max()) if b64.numel() else 0.0
        tol = COMPILED_TOLERANCE.get(b.dtype, 0.0)
        ok = max_abs <= tol * scale  # NaN anywhere fails
        note = "" if ok else f"beyond {tol:g} x max|ref| = {tol * scale:.3g}"
        if not ok and b.dtype in (torch.float32, torch.float64):
            floor = (ROUNDOFF_ULPS * torch.finfo(b.dtype).eps
                     * step_scale.get(b.dtype, 0.0))
            if scale <= floor and max_abs <= floor:
                ok = True
                note = (f"reference is roundoff: max|ref| {scale:.3g}; within "
                        f"{ROUNDOFF_ULPS} eps x the step's largest output "
                        f"= {floor:.3g}")
            else:
                note += f" (and beyond the roundoff bound {floor:.3g})"
        out.append(Difference(k, max_abs, max_abs / scale if scale else 0.0,
                              ok, note))
    return out


def compare(a: StepResult, b: StepResult, *, rtol: float | None = None,
            atol: float | None = None) -> list[Difference]:
    """Per-output differences; bitwise unless ``rtol``/``atol`` is given.

    A differing output's note says when :func:`not_bitwise` explains it.
    """
    why = not_bitwise(a, b)
    out = _compare(a, b, rtol, atol)
    for d in out:
        if not d.ok and why:
            d.note = f"{d.note}; {why}" if d.note else why
    return out


def _compare(a: StepResult, b: StepResult, rtol: float | None,
             atol: float | None) -> list[Difference]:
    return [missing or _diff(k, x, y, rtol, atol)
            for k, x, y, missing in _paired_outputs(
                a.named_outputs(), b.named_outputs(), ("first", "second"))]


def format_differences(diffs: list[Difference]) -> str:
    w = max([len(d.name) for d in diffs] + [6])
    lines = [f"{'output':<{w}}  {'max abs':>11}  {'max rel':>11}  result"]
    for d in diffs:
        lines.append(f"{d.name:<{w}}  {d.max_abs:11.4g}  {d.max_rel:11.4g}  "
                     f"{'ok' if d.ok else 'MISMATCH'}"
                     + (f" ({d.note})" if d.note else ""))
    return "\n".join(lines)

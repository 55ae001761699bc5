"""``joint_mlir.optimize``: checkpointing and offload from a training loop.

::

    step = joint_mlir.optimize(model, train_fn, {"input_ids": ids,
                                                 "labels": labels},
                               checkpoint="full")
    for batch in data:
        opt.zero_grad()
        loss = step(**batch)      # writes p.grad, updates buffers
        opt.step()

:func:`optimize` traces ``train_fn(model, **example_inputs)`` once with the
joint-graph tracer (:func:`joint_mlir.trace_joint_graph`), runs the pass
pipeline in process (:func:`joint_mlir.pipeline.run_pipeline`), and rebuilds
the transformed graph as an FX module (:func:`joint_mlir.fx.build_graph_module`).
Calling the returned :class:`OptimizedStep` runs that graph on the model's
real parameters and buffers (:func:`joint_mlir.executor.run_graph`, no
reseeding) and does what ``loss.backward()`` would: each parameter's
``.grad`` is set, or accumulated into with ``+=`` when one exists (autograd's
AccumulateGrad rule), and buffers the step updates (batch-norm running
statistics) are updated in place. Any ``torch.optim`` optimizer then works
unchanged.

A call whose inputs the trace does not cover (another shape in a dimension
that was traced static, another dtype or device, other non-tensor values, or
model state that changed shape, dtype or device) retraces with those inputs
as the new example; ``retrace=False`` turns that into an error naming the
input and what changed. Dimensions traced symbolic (``dynamic_dims``) accept
any size.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.utils._pytree as pytree
from torch import nn

from .dynamic import DynamicDims
from .errors import JointMlirError
from .fx import build_graph_module
from .pipeline import PipelineError, run_pipeline
from .executor import run_graph
from .sharded import is_sharded, local_state, write_local_grad
from .tracer import TraceError, _key_path_str, extract_module_state, \
    trace_joint_graph

__all__ = ["OptimizeOptionError", "OptimizedStep", "RetraceError",
           "build_pipeline", "optimize"]

_CHECKPOINT_MODES = ("full", "selective")
_OFFLOAD_SCOPES = ("attention", "block", "all")


class RetraceError(JointMlirError, RuntimeError):
    """Inputs the trace does not cover, and retracing is off or failed."""


class OptimizeOptionError(JointMlirError, ValueError):
    """Arguments of :func:`optimize` / :func:`build_pipeline` that do not go
    together or are out of range (the message names them)."""


def _options(opts: Mapping[str, Any]) -> str:
    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (list, tuple)):
            return ",".join(str(x) for x in v)
        return str(v)
    return " ".join(f"{k}={value(v)}" for k, v in opts.items())


def _pass(name: str, opts: Mapping[str, Any]) -> str:
    return f"{name}{{{_options(opts)}}}" if opts else name


def _expand_name(value: Any, param: str, key: str, names: tuple[str, ...],
                 pass_name: str, *, true_ok: bool) -> Any:
    """``value`` with a bare name from ``names`` expanded to ``{key: name}``
    (``checkpoint="full"``, ``offload="block"``); None, a dict (and True
    where ``true_ok``) pass through. Anything else raises
    OptimizeOptionError naming the accepted forms."""
    if isinstance(value, str) and value in names:
        return {key: value}
    if value is None or isinstance(value, Mapping) or (
            true_ok and isinstance(value, bool)):
        return value
    forms = (("True, " if true_ok else "") + f"one of {', '.join(names)} or "
             f"a dict of {pass_name} options")
    raise OptimizeOptionError(f"{param} must be {forms}, not {value!r}")


# offload_host_budget_gb counted GiB while every other `_gb` counts 1e9
# bytes: it is refused rather than reinterpreted.
_REMOVED_HOST_GB = ("offload_host_budget_gb is no longer accepted: it counted "
                    "GiB (2^30 bytes), unlike budget_gb (1e9 bytes); give "
                    "offload_host_budget_gib")


def build_pipeline(*, checkpoint: str | Mapping[str, Any] | None = None,
                   offload: bool | str | Mapping[str, Any] | None = None,
                   offload_host_budget_gb: float | None = None,
                   budget_gb: float | None = None,
                   budget_gib: float | None = None,
                   offload_host_budget_gib: float | None = None,
                   chunk_loss: int | str | None = None) -> str:
    """The textual pipeline for ``checkpoint``/``offload``, in graph_trainer's
    order (tag recompute policy, offload, remat), or for a device budget.

    ``chunk_loss``: N >= 2 runs ``joint-chunk-loss{chunks=N}`` first (the
    linear head and cross-entropy in N token chunks, within rounding of the
    unchunked step, not bitwise) and ``joint-remat`` after the rest, which
    replays each chunk's logits; alone it gives that pipeline. ``"auto"``
    (with a budget) lets the planner choose whole, 2, 4 or 8 chunks
    (``allow-chunk-loss=true``).

    ``budget_gb`` / ``budget_gib``: a device peak budget in GB (1e9 bytes) or
    GiB (2^30 bytes), resident parameters included, as the planner's options
    ``budget-gb`` / ``budget-gib`` (give one): the memory planner
    ``joint-optimize-memory`` decides what to recompute and what to offload,
    so a budget excludes ``checkpoint`` and ``offload``.

    ``checkpoint``: ``"full"``, ``"selective"`` or a dict of
    ``joint-tag-recompute-policy`` options (``{"mode": "full",
    "layer-indices": [1]}``; ``"replay-random": True`` recomputes dropout
    and other random ops, replaying their draws). ``offload``: True, a scope (``"attention"``,
    ``"block"``, ``"all"``) or a dict of ``joint-cpu-offload`` options
    (``{"min-bytes": 1024}``).
    ``offload_host_budget_gib``: the offload pass's host (pinned CPU) budget
    in GiB (its ``budget-gib``), not a device budget. Empty string: no
    passes.

    Every ``_gb`` name counts 1e9 bytes and every ``_gib`` name 2^30 bytes.
    ``offload_host_budget_gb`` counted GiB, so it raises OptimizeOptionError
    instead of changing meaning; give ``offload_host_budget_gib``.
    """
    if offload_host_budget_gb is not None:
        raise OptimizeOptionError(_REMOVED_HOST_GB)
    chunk = ""
    if chunk_loss == "auto":
        if budget_gb is None and budget_gib is None:
            raise OptimizeOptionError("chunk_loss='auto' lets the memory "
                                      "planner choose: give budget_gb or "
                                      "budget_gib too")
        if checkpoint is not None or offload or offload_host_budget_gib:
            raise OptimizeOptionError("chunk_loss='auto' runs the memory "
                                      "planner, which decides recompute and "
                                      "offload itself: drop checkpoint=/"
                                      "offload=")
        name, value = (("budget-gb", budget_gb) if budget_gb is not None
                       else ("budget-gib", budget_gib))
        if budget_gb is not None and budget_gib is not None:
            raise OptimizeOptionError("give budget_gb (GB, 1e9 bytes) or "
                                      "budget_gib (GiB, 2^30 bytes), not both")
        build_pipeline(budget_gb=budget_gb, budget_gib=budget_gib)  # checks
        return _pass("joint-optimize-memory",
                     {name: repr(float(value)), "allow-chunk-loss": True})
    if chunk_loss is not None:
        if isinstance(chunk_loss, bool) or not isinstance(chunk_loss, int) \
                or chunk_loss < 2:
            raise OptimizeOptionError("chunk_loss must be an int >= 2 (token "
                                      f"chunks) or 'auto', not {chunk_loss!r}")
        chunk = _pass("joint-chunk-loss", {"chunks": chunk_loss})
        rest = build_pipeline(checkpoint=checkpoint, offload=offload,
                              budget_gb=budget_gb, budget_gib=budget_gib,
                              offload_host_budget_gib=offload_host_budget_gib)
        if not rest:
            return f"{chunk},joint-remat"
        return f"{chunk},{rest}" if "joint-remat" in rest or \
            rest.startswith("joint-optimize-memory") else \
            f"{chunk},{rest},joint-remat"
    host_gib = offload_host_budget_gib
    host_name = "offload_host_budget_gib"
    if budget_gb is not None and budget_gib is not None:
        raise OptimizeOptionError("give budget_gb (GB, 1e9 bytes) or budget_gib "
                                  "(GiB, 2^30 bytes), not both")
    if budget_gb is not None or budget_gib is not None:
        name, value, unit = (("budget_gb", budget_gb, "GB (1e9 bytes)")
                             if budget_gb is not None else
                             ("budget_gib", budget_gib, "GiB (2^30 bytes)"))
        if checkpoint is not None or offload or host_gib is not None:
            raise OptimizeOptionError(f"{name} runs the memory planner, which decides "
                             f"recompute and offload itself: give {name} or "
                             "checkpoint=/offload=, not both")
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not value > 0 or value == float("inf"):
            raise OptimizeOptionError(f"{name} must be a positive number of {unit}, "
                                      f"not {value!r}")
        return _pass("joint-optimize-memory",
                     {name.replace("_", "-"): repr(float(value))})
    parts = []
    tagged = False
    checkpoint = _expand_name(checkpoint, "checkpoint", "mode",
                              _CHECKPOINT_MODES, "joint-tag-recompute-policy",
                              true_ok=False)
    offload = _expand_name(offload, "offload", "scope", _OFFLOAD_SCOPES,
                           "joint-cpu-offload", true_ok=True)
    if checkpoint is not None:
        parts.append(_pass("joint-tag-recompute-policy", checkpoint))
        tagged = True
    if host_gib is not None and not offload:
        raise OptimizeOptionError(f"{host_name} needs offload=True")
    if offload:
        opts = dict(offload) if isinstance(offload, Mapping) else {}
        if host_gib is not None:
            opts["budget-gib"] = host_gib
        parts.append(_pass("joint-cpu-offload", opts))
    if tagged:
        parts.append("joint-remat")
    return ",".join(parts)


# Runs first in every pipeline optimize() runs, the identity one included:
# no tensor lives across the forward/backward boundary only for its size.
READ_FORWARD_SIZES = "joint-read-forward-sizes"


def with_forward_sizes(pipeline: str) -> str:
    """``pipeline`` preceded by ``joint-read-forward-sizes`` (see
    docs/passes.md); a pipeline spelled with its own ``builtin.module(...)``
    nesting is left as written."""
    text = pipeline.strip()
    if text.startswith("builtin.module("):
        return pipeline
    return f"{READ_FORWARD_SIZES},{text}" if text else READ_FORWARD_SIZES


def _flatten(inputs: Mapping[str, Any]) -> tuple[list[str], list[Any]]:
    leaves, _ = pytree.tree_flatten_with_path(dict(inputs))
    return [_key_path_str(p) for p, _ in leaves], [v for _, v in leaves]


def _symbolic_dims(doc: dict[str, Any]) -> dict[str, set[int]]:
    """Input path -> dims traced symbolic (sizes written as expressions)."""
    facts = {n["name"]: n["outputs"] for n in doc["nodes"]
             if n["kind"] == "placeholder"}
    out: dict[str, set[int]] = {}
    for i in doc["inputs"]:
        fact = (facts.get(i["input"]) or [{}])[0]
        out[i["path"]] = {d for d, s in enumerate(fact.get("sizes", []))
                          if isinstance(s, dict)}
    return out


@dataclass
class _Variant:
    """One trace: what it covers and the module that runs it."""

    graph: dict[str, Any]
    report: dict[str, Any] | None
    remarks: list[str]
    gm: torch.fx.GraphModule
    paths: list[str]
    # path -> (dtype, device, sizes, symbolic dims) for tensors, value else.
    inputs: dict[str, Any]
    state: dict[str, tuple[torch.dtype, torch.device, tuple[int, ...]]]
    loss_dict_keys: list[str]
    # Parameters the loss does not reach: their .grad is left alone (None
    # stays None), as torch's backward leaves it.
    unreached: set[str] = field(default_factory=set)

    def mismatch(self, paths: list[str], leaves: list[Any],
                 state: Mapping[str, torch.Tensor]) -> str | None:
        """Why these inputs/state are outside this trace, or None."""
        if paths != self.paths:
            return (f"inputs are {', '.join(paths) or '(none)'}, the trace "
                    f"has {', '.join(self.paths) or '(none)'}")
        for path, leaf in zip(paths, leaves):
            want = self.inputs[path]
            if not isinstance(leaf, torch.Tensor):
                if isinstance(want, tuple) or leaf != want:
                    return f"input {path} is {leaf!r}, traced with {want!r}"
                continue
            if not isinstance(want, tuple):
                return f"input {path} is a tensor, traced with {want!r}"
            dtype, device, sizes, symbolic = want
            if leaf.dtype != dtype:
                return f"input {path} has dtype {leaf.dtype}, traced {dtype}"
            if leaf.device != device:
                return (f"input {path} is on {leaf.device}, traced on "
                        f"{device}")
            if leaf.dim() != len(sizes) or any(
                    d not in symbolic and n != m
                    for d, (n, m) in enumerate(zip(leaf.shape, sizes))):
                return (f"input {path} has shape {tuple(leaf.shape)}, the "
                        f"trace covers {_shape_text(sizes, symbolic)}")
        if list(state) != list(self.state):
            return "the model's parameters and buffers are not the traced ones"
        for fqn, t in state.items():
            if (t.dtype, t.device, tuple(t.shape)) != self.state[fqn]:
                return (f"model state {fqn} is {tuple(t.shape)} {t.dtype} on "
                        f"{t.device}, traced {self.state[fqn][2]} "
                        f"{self.state[fqn][0]} on {self.state[fqn][1]}")
        return None


def _shape_text(sizes: tuple[int, ...], symbolic: set[int]) -> str:
    return "(" + ", ".join("*" if d in symbolic else str(n)
                           for d, n in enumerate(sizes)) + ")"


class OptimizedStep:
    """The transformed training step returned by :func:`optimize`.

    ``step(**inputs)`` returns the loss, or ``(loss, loss_dict)`` when
    ``train_fn`` returns a loss_dict; sets or accumulates ``.grad``; updates
    buffers in place. Attributes of the trace in use (the last call's):
    ``graph`` (the transformed format v1 document), ``report`` (the
    joint-memory-report as a dict), ``remarks`` (the passes' remarks);
    ``pipeline`` (the textual pipeline), ``traces`` (traces made so far).
    """

    def __init__(self, model: nn.Module, train_fn: Callable[..., Any],
                 pipeline: str, *, dynamic_dims: DynamicDims | None,
                 retrace: bool, report: bool) -> None:
        self.model = model
        self.train_fn = train_fn
        self.pipeline = pipeline
        self.dynamic_dims = dynamic_dims
        self.retrace = retrace
        self._want_report = report
        self._variants: list[_Variant] = []
        self._current: _Variant | None = None
        self.traces = 0

    @property
    def graph(self) -> dict[str, Any]:
        return self._latest().graph

    @property
    def report(self) -> dict[str, Any] | None:
        return self._latest().report

    @property
    def remarks(self) -> list[str]:
        return self._latest().remarks

    def _latest(self) -> _Variant:
        assert self._current is not None  # set by optimize()
        return self._current

    def _trace(self, inputs: Mapping[str, Any]) -> _Variant:
        state = extract_module_state(self.model)
        for fqn, t in state.items():
            if t.device.type == "meta":
                raise TraceError(f"model state {fqn} is on the meta device: "
                                 "optimize() runs the step on real tensors")
        jg = trace_joint_graph(self.model, self.train_fn, inputs,
                               dynamic_dims=self.dynamic_dims)
        doc = jg.to_json_dict()
        result = run_pipeline(doc, with_forward_sizes(self.pipeline),
                              report=self._want_report,
                              label=self.pipeline or "joint graph")
        device = next(iter(state.values())).device
        gm = build_graph_module(result.document, device=device)
        paths, leaves = _flatten(inputs)
        symbolic = _symbolic_dims(doc)
        covered: dict[str, Any] = {}
        for path, leaf in zip(paths, leaves):
            covered[path] = ((leaf.dtype, leaf.device, tuple(leaf.shape),
                              symbolic.get(path, set()))
                             if isinstance(leaf, torch.Tensor) else leaf)
        variant = _Variant(
            graph=result.document, report=result.report,
            remarks=result.remarks, gm=gm, paths=paths, inputs=covered,
            state={f: (t.dtype, t.device, tuple(t.shape))
                   for f, t in state.items()},
            loss_dict_keys=list(jg.loss_dict_keys),
            unreached=set(jg.unreached_grad_fqns))
        self.traces += 1
        self._variants.append(variant)
        self._current = variant
        return variant

    def _select(self, inputs: Mapping[str, Any],
                state: Mapping[str, torch.Tensor]) -> _Variant:
        paths, leaves = _flatten(inputs)
        reasons = []
        for v in reversed(self._variants):
            why = v.mismatch(paths, leaves, state)
            if why is None:
                self._current = v
                return v
            reasons.append(why)
        why = reasons[0]
        if not self.retrace:
            raise RetraceError(f"optimize(): {why}, and retrace=False")
        try:
            return self._trace(inputs)
        except (TraceError, PipelineError, ValueError, RuntimeError) as e:
            raise RetraceError(f"optimize(): {why}; retracing with these "
                               f"inputs failed: {e}") from e

    def __call__(self, **inputs: Any) -> Any:
        state = extract_module_state(self.model)
        variant = self._select(inputs, state)
        paths, leaves = _flatten(inputs)
        tensors = {p: x for p, x in zip(paths, leaves)
                   if isinstance(x, torch.Tensor)}
        result = run_graph(variant.gm, local_state(self.model, state), tensors,
                           seed=None)
        self._write_grads({k: g for k, g in result.grads.items()
                           if k not in variant.unreached})
        if variant.loss_dict_keys:
            return result.loss, dict(result.loss_dict)
        return result.loss

    def _write_grads(self, grads: Mapping[str, torch.Tensor]) -> None:
        params = dict(self.model.named_parameters(remove_duplicate=True))
        stolen: set[int] = set()
        for fqn, g in grads.items():
            p = params[fqn]
            if is_sharded(p):
                write_local_grad(p, g)
                continue
            if p.grad is not None:
                # AccumulateGrad outside grad mode: in place.
                p.grad += g
                continue
            # Keep the graph's tensor when it is a fresh, unshared result laid
            # out like the parameter, as autograd does; copy otherwise.
            if (g._base is not None or g.stride() != p.stride()
                    or g.untyped_storage().data_ptr() in stolen):
                g = torch.empty_strided(p.shape, p.stride(), dtype=p.dtype,
                                        device=p.device).copy_(g)
            stolen.add(g.untyped_storage().data_ptr())
            p.grad = g


def optimize(model: nn.Module, train_fn: Callable[..., Any],
             example_inputs: Mapping[str, Any], *,
             pipeline: str | None = None,
             checkpoint: str | Mapping[str, Any] | None = None,
             offload: bool | str | Mapping[str, Any] | None = None,
             offload_host_budget_gb: float | None = None,
             budget_gb: float | None = None,
             budget_gib: float | None = None,
             offload_host_budget_gib: float | None = None,
             chunk_loss: int | str | None = None,
             dynamic_dims: DynamicDims | None = None,
             retrace: bool = True, report: bool = True) -> OptimizedStep:
    """Trace ``train_fn(model, **example_inputs)``, transform, return a step.

    Args:
      model: the module, on the device it trains on, with real tensors;
        FSDP2 (``fully_shard``), tensor-parallel or both, on every rank of a
        process group (docs/running.md; grads are set as DTensors).
      train_fn: ``train_fn(model, **inputs)`` returning a scalar loss or
        ``(loss, loss_dict)``, as for :func:`joint_mlir.trace_joint_graph`.
      example_inputs: keyword inputs of one step (a pytree of tensors and
        primitives); primitives are baked into the trace.
      pipeline: a textual pass pipeline (joint-opt's ``--pass-pipeline``
        syntax, e.g. ``"joint-tag-recompute-policy{mode=full},joint-remat"``);
        ``""`` runs the untransformed joint graph. Excludes the next five.
      checkpoint: ``"full"``, ``"selective"`` or a dict of
        ``joint-tag-recompute-policy`` options (``"replay-random": True``
        recomputes random ops, replaying their draws); adds ``joint-remat``.
      offload: True, a scope (``"attention"``, ``"block"``, ``"all"``) or a
        dict of ``joint-cpu-offload`` options (``scope``: ``attention``
        (default), ``block`` or ``all``; ``min-bytes`` defaults to 1 MiB).
      offload_host_budget_gib: host memory for offloaded activations, GiB
        (2^30 bytes, the offload pass's ``budget-gib``).
      offload_host_budget_gb: no longer accepted (it counted GiB); raises
        OptimizeOptionError naming ``offload_host_budget_gib``.
      budget_gb: device peak budget in GB (1e9 bytes, parameters included):
        runs the memory planner (``joint-optimize-memory``), which picks what
        to recompute at the least modelled step time; excludes
        ``checkpoint``/``offload``. An unreachable budget raises
        PipelineError naming the lowest reachable peak.
      budget_gib: the same budget in GiB (2^30 bytes), the planner's
        ``budget-gib``; give ``budget_gb`` or ``budget_gib``.
      chunk_loss: N >= 2 computes the linear head and cross-entropy in N
        token chunks first (``joint-chunk-loss``): the logits are never live
        whole; loss and gradients match the unchunked step within rounding,
        not bitwise. Combines with the options above. ``"auto"`` (with a
        budget) lets the planner choose whole, 2, 4 or 8 chunks.
      dynamic_dims: input path -> dims traced symbolic, so other sizes there
        run without retracing.
      retrace: retrace on inputs the trace does not cover (else
        :class:`RetraceError`).
      report: compute the joint-memory-report (``step.report``).

    Raises:
      TraceError: the model or train function cannot be traced.
      PipelineError: a pass rejects the pipeline or the graph.
      ValueError: conflicting or unknown options.
    """
    if offload_host_budget_gb is not None:
        raise OptimizeOptionError(_REMOVED_HOST_GB)
    if pipeline is not None and (checkpoint is not None or offload
                                 or offload_host_budget_gib is not None
                                 or budget_gb is not None
                                 or budget_gib is not None
                                 or chunk_loss is not None):
        raise OptimizeOptionError("give either pipeline= or checkpoint=/offload=/"
                         "budget_gb=/budget_gib=/chunk_loss=, not both")
    if pipeline is None:
        pipeline = build_pipeline(checkpoint=checkpoint, offload=offload,
                                  offload_host_budget_gib=offload_host_budget_gib,
                                  budget_gb=budget_gb, budget_gib=budget_gib,
                                  chunk_loss=chunk_loss)
    if not isinstance(example_inputs, Mapping):
        raise TraceError("example_inputs must be a mapping of keyword "
                         "arguments of train_fn")
    step = OptimizedStep(model, train_fn, pipeline, dynamic_dims=dynamic_dims,
                         retrace=retrace, report=report)
    step._trace(example_inputs)
    return step

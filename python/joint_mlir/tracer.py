"""Trace a module and a train function into one joint forward+backward FX graph.

The capture follows the minimal make_fx tracer design:

1. The module's parameters and buffers are pulled out into a flat, deduplicated
   list (tied tensors appear once) and threaded through the graph as its
   leading placeholders, so the graph has no ``get_attr`` for model state.
2. ``torch.autograd.grad(loss, params)`` runs *inside* the traced function,
   so the backward ops are recorded as ordinary FX nodes next to the forward.
   When the installed torch provides ``torch.compiler._patch_engine_backward``
   and ``_non_strict_tracing_context`` the engine tags its nodes with
   ``autograd_backward`` and a backward ``seq_nr``; otherwise the tags are
   reconstructed structurally (see :func:`tag_backward_structurally`).
3. Everything runs under ``FakeTensorMode``: no real storage is allocated, so
   a model of real size (built on the ``meta`` device) traces in little memory.
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import itertools
import operator
import os
import warnings
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.utils._pytree as pytree
from torch import nn
from torch._decomp import get_decompositions
from torch._guards import TracingContext, tracing
from torch._subclasses import FakeTensorMode
from torch._subclasses.fake_tensor import (
    DataDependentOutputException,
    DynamicOutputShapeException,
)
from torch.fx.experimental.proxy_tensor import get_proxy_mode, make_fx
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode
from torch.fx.traceback import preserve_node_meta
from torch.nn.utils import stateless
from torch.utils._python_dispatch import TorchDispatchMode

from .dynamic import DynamicDims, make_fake_inputs
from .errors import JointMlirError
from .model_structure import ModelStructure, discover_structure

__all__ = [
    "JointGraph",
    "TraceError",
    "DataDependentError",
    "trace_joint_graph",
    "extract_module_state",
]

# Leaf types that may appear in the user inputs (and in the state, which only
# ever holds tensors). Anything else must live in train_fn's closure.
_ALLOWED_LEAF_TYPES = (torch.Tensor, int, float, bool, str, type(None))

_MAKE_FX_PARAMS = inspect.signature(make_fx).parameters
_MAKE_FX_KWARGS: dict[str, Any] = {
    k: True
    for k in ("record_module_stack", "record_stack_traces")
    if k in _MAKE_FX_PARAMS
}


class TraceError(JointMlirError, ValueError):
    """A model, train function or input that cannot be traced (user error)."""


class DataDependentError(TraceError):
    """An op whose output shape or value depends on tensor data stops the trace.

    One line: the module, the op and what to do (see :func:`data_dependent_error`).
    """


# Fake-tensor and symbolic-shape errors of data-dependent ops: an output shape
# a static trace cannot represent (nonzero, masked_select, unique), a tensor
# value read into Python (item, bool, tolist), a guard on an unbacked size.
_DATA_DEPENDENT = (DynamicOutputShapeException, DataDependentOutputException,
                   GuardOnDataDependentSymNode)

_STATIC_FIXES = ("use a static-shape implementation (e.g. transformers "
                 "experts_implementation='grouped_mm' or 'batched_mm' for MoE "
                 "experts)")
_UNBACKED_FIX = ("trace with unbacked sizes (trace_joint_graph(..., "
                 "unbacked=True) or python -m joint_mlir.export "
                 "--unbacked-sizes)")


@dataclass
class JointGraph:
    """A traced joint forward+backward graph plus the facts the format needs.

    ``graph_module`` holds only fake tensors in its node metadata; no real
    parameter or input storage is referenced.
    """

    name: str
    graph_module: torch.fx.GraphModule
    # Leading placeholders, one per unique parameter/buffer, in this order.
    state_fqns: list[str]
    state_is_param: list[bool]
    state_requires_grad: list[bool]
    # Dotted pytree paths of the user inputs, in placeholder order after state.
    input_paths: list[str]
    # FQNs whose gradients are outputs 1..n (loss is output 0).
    grad_fqns: list[str]
    # Keys of the loss_dict values, emitted after the gradients.
    loss_dict_keys: list[str]
    structure: ModelStructure
    shape_env: Any | None = None
    # "engine" when torch tagged the backward nodes, "structural" otherwise.
    backward_tag_source: str = "engine"
    # Grad FQNs the loss does not reach: torch leaves their .grad None; the
    # graph returns zeros for them (format v1 has no None output).
    unreached_grad_fqns: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def num_state_inputs(self) -> int:
        return len(self.state_fqns)

    def nodes(self) -> Iterator[torch.fx.Node]:
        return iter(self.graph_module.graph.nodes)

    def to_json_dict(self, *, stack_traces: bool = False,
                     progress: bool = False) -> dict[str, Any]:
        """Return the format-v1 document (see ``docs/format.md``)."""
        from .format import graph_to_dict

        return graph_to_dict(self, stack_traces=stack_traces, progress=progress)

    def save(self, path: str, *, stack_traces: bool = False,
             progress: bool = False) -> dict[str, Any]:
        """Write the format-v1 document to ``path`` (gzip when it ends in .gz).

        Returns the document that was written.
        """
        from .format import write_document

        doc = self.to_json_dict(stack_traces=stack_traces, progress=progress)
        write_document(doc, path)
        return doc


def extract_module_state(model: nn.Module) -> dict[str, torch.Tensor]:
    """Parameters then buffers of ``model``, each unique tensor once.

    Tied tensors (the same Parameter registered under two names) keep only
    their first FQN; ``_reparametrize_module(tie_weights=True)`` maps the other
    names back onto the same traced input.
    """
    state: dict[str, torch.Tensor] = {}
    seen: set[int] = set()
    for fqn, t in model.named_parameters(remove_duplicate=True):
        seen.add(id(t))
        state[fqn] = t
    for fqn, t in model.named_buffers(remove_duplicate=True):
        if id(t) in seen:
            continue
        seen.add(id(t))
        state[fqn] = t
    return state


@contextlib.contextmanager
def _engine_backward() -> Iterator[bool]:
    """Patch the autograd engine so backward nodes carry tags, if available."""
    patch = getattr(torch.compiler, "_patch_engine_backward", None)
    if patch is None:
        yield False
        return
    with patch():
        yield True


@contextlib.contextmanager
def _fresh_backward_hook_state() -> Iterator[None]:
    """Start the trace with torch's backward-hook globals clear; restore them.

    The engine hooks of ``_patch_engine_backward`` keep module globals: a
    ``callback_set`` flag (set when a backward starts, cleared by a callback
    the engine runs only when the backward succeeds) and the
    ``autograd_backward``/``grad_fn_seq_nr`` entries of
    ``torch.fx.traceback.current_meta``. A backward that raises leaves them
    set, and the next trace would then tag forward nodes and its output as
    backward. Each trace starts from the clear state, and whatever was there
    before is put back on every exit path.
    """
    from torch._functorch._aot_autograd import logging_utils
    import torch.fx.traceback as fx_traceback

    had_callback = getattr(logging_utils, "callback_set", False)
    saved_meta = fx_traceback.current_meta
    logging_utils.callback_set = False
    fx_traceback.current_meta = {
        k: v for k, v in saved_meta.items()
        if k not in ("autograd_backward", "grad_fn_seq_nr", "in_grad_fn")}
    try:
        yield
    finally:
        logging_utils.callback_set = had_callback
        fx_traceback.current_meta = saved_meta


_RECOMPUTE_POLICIES = ("MUST_RECOMPUTE", "PREFER_RECOMPUTE")


class _TagCheckpointRegion(TorchDispatchMode):
    """Tags every op traced inside a ``torch.utils.checkpoint`` region.

    The tag is the ``recompute`` node meta (``CheckpointPolicy``): the
    user's selective-checkpoint policy for the op when the region has one,
    else ``PREFER_RECOMPUTE`` (plain checkpointing recomputes the whole
    region). The innermost region's tag wins.
    """

    def __init__(self, policy_fn: Callable[..., Any] | None) -> None:
        super().__init__()
        self.policy_fn = policy_fn

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        from torch.utils import checkpoint as ckpt

        kwargs = kwargs or {}
        mode = get_proxy_mode()
        before = len(mode.tracer.graph.nodes) if mode is not None else 0
        out = func(*args, **kwargs)
        policy = ckpt.CheckpointPolicy.PREFER_RECOMPUTE
        if self.policy_fn is not None:
            policy = self.policy_fn(
                ckpt.SelectiveCheckpointContext(is_recompute=False,
                                                op_output=out),
                func, *args, **kwargs)
            if isinstance(policy, bool):
                policy = (ckpt.CheckpointPolicy.MUST_SAVE if policy
                          else ckpt.CheckpointPolicy.PREFER_RECOMPUTE)
        if mode is not None:
            nodes = mode.tracer.graph.nodes
            for node in itertools.islice(reversed(nodes),
                                         len(nodes) - before):
                node.meta["recompute"] = policy
        return out


@contextlib.contextmanager
def _checkpoint_region(context_fn: Callable[[], Any] | None
                       ) -> Iterator[None]:
    """One checkpoint region run plainly: its ops are tagged, and the
    forward context of a ``context_fn`` that is not torch's selective one is
    entered as torch would (its recompute context is never used)."""
    from torch.utils import checkpoint as ckpt

    policy_fn = None
    forward_ctx: Any = contextlib.nullcontext()
    if context_fn is not None and context_fn is not ckpt.noop_context_fn:
        forward_ctx, _ = context_fn()
        caching = getattr(ckpt, "_CachingTorchDispatchMode", None)
        if caching is not None and isinstance(forward_ctx, caching):
            policy_fn = forward_ctx.policy_fn
            forward_ctx = contextlib.nullcontext()
    with forward_ctx, _TagCheckpointRegion(policy_fn):
        yield


def _plain_checkpoint(function: Callable[..., Any], args: Sequence[Any],
                      kwargs: Mapping[str, Any], *,
                      context_fn: Callable[[], Any] | None = None,
                      **_options: Any) -> Any:
    with _checkpoint_region(context_fn):
        return function(*args, **kwargs)


def _plain_checkpoint_generator(function: Any, args: Any, kwargs: Any, *,
                                context_fn: Callable[[], Any] | None = None,
                                **_options: Any) -> Iterator[None]:
    with _checkpoint_region(context_fn):
        yield


@contextlib.contextmanager
def _checkpoint_regions_as_tags() -> Iterator[None]:
    """Turn off torch's own activation checkpointing while tracing.

    Eager checkpointing replays its region in the backward; traced, the
    replay becomes new ops, and its random ops new draws, so the traced
    gradients would belong to masks the forward never used. Recompute is
    decided by the passes instead: every ``torch.utils.checkpoint`` entry
    (``checkpoint``, ``checkpoint_sequential``, the decorator form, the
    generator the composable ``checkpoint(module)`` API and
    ``checkpoint_wrapper`` use) runs its function once, plainly, and the
    region's ops carry ``recompute`` tags (see :class:`_TagCheckpointRegion`;
    :func:`_settle_region_tags` keeps random and writing ops saved).
    """
    import sys

    from torch.utils import checkpoint as ckpt

    patches = [(ckpt, "_checkpoint_impl", _plain_checkpoint),
               (ckpt, "_checkpoint_without_reentrant_generator_impl",
                _plain_checkpoint_generator)]
    composable = sys.modules.get(
        "torch.distributed._composable.checkpoint_activation")
    if composable is not None:
        patches.append((composable,
                        "_checkpoint_without_reentrant_generator_impl",
                        _plain_checkpoint_generator))
    saved = []
    try:
        for module, name, fn in patches:
            if hasattr(module, name):
                saved.append((module, name, getattr(module, name)))
                setattr(module, name, fn)
        yield
    finally:
        for module, name, fn in reversed(saved):
            setattr(module, name, fn)


def _storage_keys(v: Any) -> set[int]:
    vals = v if isinstance(v, (list, tuple)) else [v]
    return {x.untyped_storage()._cdata for x in vals
            if isinstance(x, torch.Tensor)}


def _written_storages(gm: torch.fx.GraphModule) -> set[int]:
    """Storages some op writes in place (schema ``Tensor(a!)`` arguments)."""
    out: set[int] = set()
    for n in gm.graph.nodes:
        t = n.target
        if n.op != "call_function" or not isinstance(
                t, torch._ops.OpOverload) or not t._schema.is_mutable:
            continue
        for i, a in enumerate(t._schema.arguments):
            if a.alias_info is None or not a.alias_info.is_write:
                continue
            v = n.args[i] if i < len(n.args) else n.kwargs.get(a.name)
            for x in v if isinstance(v, (list, tuple)) else [v]:
                if isinstance(x, torch.fx.Node):
                    out |= _storage_keys(x.meta.get("val"))
    return out


def _settle_region_tags(gm: torch.fx.GraphModule) -> None:
    """Keep saved what a trace cannot recompute faithfully.

    A random op (operator tag ``nondeterministic_seeded``) would draw anew
    (eager checkpointing restores the RNG state; a graph cannot), an op whose
    result lives in a storage written in place (the writer included: the
    ``empty_like`` that eager dropout fills with ``bernoulli_``) would be
    replayed with other contents, and an op without a tensor result has
    nothing to recompute: a region's recompute tag on any of them becomes
    ``MUST_SAVE``, and a ``getitem`` follows its producer. A
    ``PREFER_CPU_OFFLOAD`` (advice the format has no word for) becomes
    ``PREFER_SAVE``. Backward nodes carry no region tag.
    """
    from torch.utils import checkpoint as ckpt

    written = _written_storages(gm)
    for n in gm.graph.nodes:
        pol = n.meta.get("recompute")
        if pol is None:
            continue
        if n.op != "call_function" or n.meta.get("autograd_backward"):
            del n.meta["recompute"]
            continue
        if getattr(pol, "name", None) == "PREFER_CPU_OFFLOAD":
            # The format knows only the binding offload request.
            n.meta["recompute"] = ckpt.CheckpointPolicy.PREFER_SAVE
            continue
        if getattr(pol, "name", None) not in _RECOMPUTE_POLICIES:
            continue
        t = n.target
        random = (isinstance(t, torch._ops.OpOverload)
                  and torch.Tag.nondeterministic_seeded in t.tags)
        keys = _storage_keys(n.meta.get("val"))
        if random or not keys or keys & written:
            n.meta["recompute"] = ckpt.CheckpointPolicy.MUST_SAVE
        elif t is operator.getitem and isinstance(n.args[0], torch.fx.Node):
            src = n.args[0].meta.get("recompute")
            if getattr(src, "name", None) == "MUST_SAVE":
                n.meta["recompute"] = src


@contextlib.contextmanager
def _non_strict() -> Iterator[None]:
    ctx = getattr(torch.compiler, "_non_strict_tracing_context", None)
    if ctx is None:
        yield
        return
    with ctx():
        yield


@contextlib.contextmanager
def _inline_nested_compile() -> Iterator[None]:
    """Let dynamo inline torch.compile'd callees met during make_fx."""
    cfg = torch._dynamo.config
    if not hasattr(cfg, "error_on_nested_fx_trace"):
        yield
        return
    prev = cfg.error_on_nested_fx_trace
    cfg.error_on_nested_fx_trace = False
    try:
        yield
    finally:
        cfg.error_on_nested_fx_trace = prev


def _check_leaves(leaves: Sequence[Any], what: str) -> None:
    for leaf in leaves:
        if isinstance(leaf, nn.Module):
            raise TraceError(
                f"{what} contains an nn.Module ({type(leaf).__name__}); pass "
                "tensors and primitives only and capture modules in train_fn's "
                "closure")
        if not isinstance(leaf, _ALLOWED_LEAF_TYPES):
            raise TraceError(
                f"{what} contains an unsupported leaf of type "
                f"{type(leaf).__name__}; leaves must be tensors or "
                "int/float/bool/str/None")


def _key_path_str(path: Sequence[Any]) -> str:
    parts: list[str] = []
    for k in path:
        if isinstance(k, pytree.MappingKey):
            parts.append(str(k.key))
        elif isinstance(k, pytree.SequenceKey):
            parts.append(str(k.idx))
        elif isinstance(k, pytree.GetAttrKey):
            parts.append(str(k.name))
        else:
            parts.append(str(k))
    return ".".join(parts)


def _fake_state(fake_mode: FakeTensorMode, t: torch.Tensor,
                device: torch.device) -> torch.Tensor:
    """Fake counterpart of a state tensor; meta tensors land on ``device``."""
    if t.device.type == "meta":
        with fake_mode:
            out = torch.empty_strided(tuple(t.shape), tuple(t.stride()),
                                      dtype=t.dtype, device=device)
        if t.requires_grad:
            out.requires_grad_(True)
        return out
    return fake_mode.from_tensor(t, static_shapes=True)


def _iter_arg_nodes(node: torch.fx.Node) -> Iterator[torch.fx.Node]:
    stack: list[Any] = [*node.args, *node.kwargs.values()]
    while stack:
        a = stack.pop()
        if isinstance(a, torch.fx.Node):
            yield a
        elif isinstance(a, (list, tuple)):
            stack.extend(a)
        elif isinstance(a, dict):
            stack.extend(a.values())


def _output_nodes(gm: torch.fx.GraphModule) -> list[torch.fx.Node]:
    out = next(n for n in reversed(gm.graph.nodes) if n.op == "output")
    flat, _ = pytree.tree_flatten(out.args)
    return [a for a in flat if isinstance(a, torch.fx.Node)]


def tag_backward_structurally(gm: torch.fx.GraphModule, num_grads: int) -> None:
    """Reconstruct ``autograd_backward`` tags when the engine did not set them.

    The outputs are ``[loss, grad_0 .. grad_{n-1}, loss_dict...]``. The loss and
    all of its producers are forward. Walking the producers of the gradient
    outputs, every ``call_function`` node that has no ``nn_module_stack`` (only
    module forwards record one) and is not a producer of the loss is backward;
    the walk stops at module-stack nodes and loss producers, which are forward.
    """
    outs = _output_nodes(gm)
    if not outs:
        return
    loss = outs[0]
    fwd: set[torch.fx.Node] = {loss}
    dq = deque([loss])
    while dq:
        for a in _iter_arg_nodes(dq.popleft()):
            if a.op != "placeholder" and a not in fwd:
                fwd.add(a)
                dq.append(a)

    bwd: set[torch.fx.Node] = set()
    dq = deque()
    for g in outs[1:1 + num_grads]:
        if (g.op == "call_function" and not g.meta.get("nn_module_stack")
                and g not in fwd and g not in bwd):
            bwd.add(g)
            dq.append(g)
    while dq:
        for a in _iter_arg_nodes(dq.popleft()):
            if (a.op != "call_function" or a in bwd or a in fwd
                    or a.meta.get("nn_module_stack")):
                continue
            bwd.add(a)
            dq.append(a)
    for n in gm.graph.nodes:
        n.meta.pop("autograd_backward", None)
    for n in bwd:
        n.meta["autograd_backward"] = True


def _copy_forward_meta_to_backward(gm: torch.fx.GraphModule) -> None:
    """Give each backward node the module stack/custom meta of its forward op.

    The autograd engine gives a backward node the ``seq_nr`` of the forward op
    whose grad_fn produced it; the first forward node with that ``seq_nr`` is
    the source.
    """
    by_seq: dict[int, torch.fx.Node] = {}
    for n in gm.graph.nodes:
        if (n.op == "call_function" and not n.meta.get("autograd_backward")
                and isinstance(n.meta.get("seq_nr"), int)):
            by_seq.setdefault(n.meta["seq_nr"], n)
    for n in gm.graph.nodes:
        if n.op != "call_function" or not n.meta.get("autograd_backward"):
            continue
        src = by_seq.get(n.meta.get("seq_nr", -1))
        if src is None or src is n:
            continue
        stack = src.meta.get("nn_module_stack")
        if stack:
            n.meta["nn_module_stack"] = stack.copy()
        custom = src.meta.get("custom")
        if custom:
            n.meta.setdefault("custom", {}).update(copy.deepcopy(custom))
        if "stack_trace" not in n.meta and src.meta.get("stack_trace"):
            n.meta["stack_trace"] = src.meta["stack_trace"]


def _module_and_line(exc: BaseException, model: nn.Module
                     ) -> tuple[str, str]:
    """Innermost module of ``model`` running when ``exc`` was raised, and the
    innermost source line outside torch and this package (``file.py:line``),
    from its traceback.
    """
    names = {id(m): fqn for fqn, m in model.named_modules()}
    skip = (os.path.dirname(torch.__file__) + os.sep,
            os.path.dirname(__file__) + os.sep)
    where, line = "train_fn", ""
    tb = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        me = frame.f_locals.get("self")
        if isinstance(me, nn.Module) and id(me) in names:
            fqn = names[id(me)]
            cls = type(me).__name__
            where = f"{fqn} ({cls})" if fqn else cls
        if not frame.f_code.co_filename.startswith(skip):
            line = (f"{os.path.basename(frame.f_code.co_filename)}:"
                    f"{tb.tb_lineno}")
        tb = tb.tb_next
    return where, line


def _free_symbols(v: Any) -> set[str]:
    if isinstance(v, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return {str(x) for x in v.node.expr.free_symbols}
    if isinstance(v, torch.Tensor):
        return set().union(*(_free_symbols(d) for d in v.shape))
    if isinstance(v, (list, tuple)):
        return set().union(*(_free_symbols(x) for x in v))
    return set()


def _symbol_producer(graph: torch.fx.Graph | None, symbols: set[str]
                     ) -> torch.fx.Node | None:
    """First traced op whose result mentions one of the unbacked ``symbols``."""
    if graph is None or not symbols:
        return None
    for n in graph.nodes:
        if n.op == "call_function" and _free_symbols(n.meta.get("val")
                                                      ) & symbols:
            return n
    return None


def data_dependent_error(exc: BaseException, model: nn.Module,
                         graph: torch.fx.Graph | None, *,
                         symbolic: bool) -> DataDependentError:
    """One-line error for a data-dependent op met while tracing ``model``.

    Names the innermost module (and source line) running when ``exc`` was
    raised, the op (``exc.func`` for fake-tensor errors; for a guard on an
    unbacked size, the op in ``graph`` that produced the size), and the fix:
    unbacked sizes when the trace had none (torch gives ``nonzero`` & co. an
    unbacked symbol only under a ShapeEnv), else a static-shape implementation
    or a size-oblivious branch (torch.fx.experimental.symbolic_shapes docs).
    """
    from .format import target_name

    where, line = _module_and_line(exc, model)
    at = f"{where} at {line}" if line else where
    if isinstance(exc, GuardOnDataDependentSymNode):
        syms = {str(x) for x in exc.cond.free_symbols}
        # Unbacked symbols are u<N>; backed input sizes (s<N>) made no guard.
        syms = {x for x in syms if x.startswith("u")} or syms
        src = _symbol_producer(graph, syms)
        made = ""
        if src is not None:
            made = (f" ({', '.join(sorted(syms))} from "
                    f"{target_name(src.target)})")
        return DataDependentError(
            f"{at}: branches on the data-dependent condition {exc.cond}{made}, "
            "which a trace cannot follow; " + _STATIC_FIXES + " or make the "
            "branch size-oblivious (torch._check, guard_or_false)")
    op = target_name(exc.func) if hasattr(exc, "func") else str(exc)
    fix = (_UNBACKED_FIX + " or " + _STATIC_FIXES if not symbolic
           else _STATIC_FIXES)
    if isinstance(exc, DynamicOutputShapeException):
        what = "has a data-dependent output shape"
    else:
        what = ("reads a tensor value into Python (item, bool, tolist) "
                "that decides a shape or a branch")
    mode = ("a trace with static shapes" if not symbolic
            else "torch's unbacked sizes")
    return DataDependentError(f"{at}: {op} {what}, which {mode} cannot "
                              f"represent; {fix}")


def _last_traced_node() -> torch.fx.Node | None:
    mode = get_proxy_mode()
    if mode is None:
        return None
    return next(reversed(mode.tracer.graph.nodes), None)


class _DropoutAsNativeDropout(torch.overrides.TorchFunctionMode):
    """Traces ``F.dropout`` in training (0 < p < 1, not in place) as
    ``aten::native_dropout``, as torch decomposes it on CUDA
    (``torch._decomp``'s dropout), instead of the CPU composite's
    ``empty_like`` + ``bernoulli_`` + ``div_`` + ``mul``: one functional op
    with a boolean mask, which checkpointing can recompute and replay
    (``replay-random``). On CPU it draws what eager dropout draws."""

    def __torch_function__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if func is torch.nn.functional.dropout:
            bound = dict(zip(("input", "p", "training", "inplace"), args))
            bound.update(kwargs)
            x = bound.get("input")
            p = bound.get("p", 0.5)
            if (isinstance(x, torch.Tensor) and x.is_floating_point()
                    and bound.get("training", True)
                    and not bound.get("inplace", False)
                    and isinstance(p, (int, float)) and 0 < p < 1):
                return torch.ops.aten.native_dropout.default(x, p, True)[0]
        return func(*args, **kwargs)


def trace_joint_graph(
    model: nn.Module,
    train_fn: Callable[..., Any],
    inputs: Mapping[str, Any],
    *,
    dynamic: bool = False,
    dynamic_dims: DynamicDims | None = None,
    unbacked: bool = False,
    name: str | None = None,
    device: str | torch.device = "cpu",
    backward_tags: str = "auto",
    progress: Callable[[str], None] | None = None,
) -> JointGraph:
    """Trace ``train_fn(model, **inputs)`` and its gradients into one graph.

    Args:
      model: the module; may live on the ``meta`` device (its state is then
        traced as fake tensors on ``device``). FSDP2 (``fully_shard``) and
        tensor-parallel (DTensor) state is traced as this rank's local
        tensors, with functional collectives (joint_mlir.sharded).
      train_fn: ``train_fn(model, **inputs)`` returning a scalar loss tensor or
        ``(loss, loss_dict)``; loss_dict values become outputs after the grads.
      inputs: keyword inputs (a pytree of tensors and primitives).
      dynamic: make every dimension of every user input tensor symbolic.
      dynamic_dims: dotted input path -> dim or list of dims to make symbolic
        (negative dims allowed); implies symbolic tracing. State stays static.
      unbacked: trace with a symbolic shape environment even when every input
        size is static, so ops with data-dependent sizes (``nonzero``,
        ``masked_select``, ``.item()``) get unbacked symbols ``u0``... instead
        of failing; implied by ``dynamic`` and ``dynamic_dims``.
      name: graph name (defaults to the model class name).
      device: device for fake copies of ``meta`` state and inputs.
      backward_tags: "auto" (engine tags when available, else structural),
        "structural" (always the structural rule).
      progress: optional callback receiving a stage name.

    Raises:
      TraceError (a ValueError) for bad leaves, a model without parameters or
      a loss that is not a scalar tensor; DataDependentError (a TraceError)
      for a data-dependent op the trace cannot represent, naming the module,
      the op and the fix.
    """
    if not isinstance(model, nn.Module):
        raise TraceError(f"model must be an nn.Module, got {type(model).__name__}")
    if not isinstance(inputs, Mapping):
        raise TraceError("inputs must be a mapping of keyword arguments")
    if not isinstance(dynamic, bool) or not isinstance(unbacked, bool):
        raise TraceError("dynamic and unbacked must be bools")
    if backward_tags not in ("auto", "structural"):
        raise TraceError("backward_tags must be 'auto' or 'structural'")
    device = torch.device(device)

    state = extract_module_state(model)
    param_ids = {id(p) for p in model.parameters()}
    if not param_ids:
        raise TraceError("model has no parameters; nothing to differentiate")
    state_fqns = list(state)
    state_tensors = list(state.values())
    state_is_param = [id(t) in param_ids for t in state_tensors]
    state_requires_grad = [bool(t.requires_grad) for t in state_tensors]
    # Sharded (DTensor) state enters the graph as this rank's local shard;
    # tensor-parallel parameters are rewrapped as DTensors inside the step.
    from .sharded import (dtensor_templates, functional_fsdp,  # TraceError
                          local_state, wrap_local)
    templates = dtensor_templates(model, state)
    state_tensors = list(local_state(model, state).values())
    grad_idx = [i for i, (p, rg) in enumerate(zip(state_is_param,
                                                   state_requires_grad))
                if p and rg]
    if not grad_idx:
        raise TraceError("model has no parameter that requires grad")

    leaves_with_path, input_spec = pytree.tree_flatten_with_path(dict(inputs))
    input_paths = [_key_path_str(p) for p, _ in leaves_with_path]
    input_leaves = [v for _, v in leaves_with_path]
    _check_leaves(input_leaves, "inputs")
    _check_leaves(state_tensors, "model state")

    symbolic = dynamic or dynamic_dims is not None or unbacked
    fake_mode, fake_inputs = make_fake_inputs(
        input_paths, input_leaves, device=device, dynamic=dynamic,
        dynamic_dims=dynamic_dims, symbolic=symbolic)
    fake_state = [_fake_state(fake_mode, t, device) for t in state_tensors]

    n_state = len(state_fqns)
    loss_dict_keys: list[str] = []
    grad_boundary: list[torch.fx.Node | None] = []
    engine_available: list[bool] = []
    unreached: list[str] = []

    def joint_fn(*flat: Any) -> list[Any]:
        try:
            return traced_step(*flat)
        except _DATA_DEPENDENT as e:
            mode = get_proxy_mode()
            raise data_dependent_error(
                e, model, mode.tracer.graph if mode is not None else None,
                symbolic=symbolic) from e

    def traced_step(*flat: Any) -> list[Any]:
        local = dict(zip(state_fqns, flat[:n_state]))
        st = {k: wrap_local(v, templates.get(k)) for k, v in local.items()}
        user = pytree.tree_unflatten(list(flat[n_state:]), input_spec)
        with stateless._reparametrize_module(model, st, tie_weights=True,
                                             strict=False), \
                _engine_backward() as engine:
            engine_available.append(engine)
            out = train_fn(model, **user)
            if (isinstance(out, tuple) and len(out) == 2
                    and isinstance(out[1], Mapping)):
                loss, loss_dict = out
            else:
                loss, loss_dict = out, {}
            if not isinstance(loss, torch.Tensor):
                raise TraceError(
                    f"train_fn must return a loss tensor or (loss, loss_dict), "
                    f"got {type(loss).__name__}")
            if loss.dim() != 0:
                raise TraceError(
                    f"loss must be a scalar tensor, got shape {tuple(loss.shape)}")
            if not loss.requires_grad:
                raise TraceError("loss does not depend on any parameter "
                                 "requiring grad")
            ld_values = []
            for k, v in loss_dict.items():
                if not isinstance(v, torch.Tensor):
                    raise TraceError(f"loss_dict[{k!r}] is not a tensor")
                loss_dict_keys.append(str(k))
                ld_values.append(v)
            if progress:
                progress("backward")
            grad_boundary.append(_last_traced_node())
            params = [local[state_fqns[i]] for i in grad_idx]
            grads = torch.autograd.grad(loss, params, allow_unused=True)
        unreached.extend(state_fqns[i] for i, g in zip(grad_idx, grads)
                         if g is None)
        grads = [torch.zeros_like(p) if g is None else g
                 for g, p in zip(grads, params)]
        return [loss, *grads, *ld_values]

    # make_fx records nn_module_stack only when the callable carries _orig_mod.
    joint_fn._orig_mod = model  # type: ignore[attr-defined]

    if progress:
        progress("forward")
    with contextlib.ExitStack() as es:
        es.enter_context(_fresh_backward_hook_state())
        es.enter_context(_checkpoint_regions_as_tags())
        es.enter_context(fake_mode)
        es.enter_context(tracing(TracingContext(fake_mode)))
        es.enter_context(preserve_node_meta())
        es.enter_context(_inline_nested_compile())
        es.enter_context(torch.autograd.set_multithreading_enabled(False))
        es.enter_context(_non_strict())
        es.enter_context(functional_fsdp(model))
        es.enter_context(_DropoutAsNativeDropout())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # The native constant_pad_nd specializes symbolic sizes (e.g. the
            # shifted causal-LM labels); its decomposition keeps them symbolic.
            decomp = (get_decompositions([torch.ops.aten.constant_pad_nd.default])
                      if symbolic else None)
            try:
                gm = make_fx(joint_fn, decomposition_table=decomp,
                             **_MAKE_FX_KWARGS)(*fake_state, *fake_inputs)
            except _DATA_DEPENDENT as e:  # raised outside the step itself
                raise data_dependent_error(e, model, None,
                                           symbolic=symbolic) from e

    engine_tagged = any(n.meta.get("autograd_backward") for n in gm.graph.nodes)
    if backward_tags == "auto" and engine_tagged:
        source = "engine"
        _complete_engine_tags(gm, grad_boundary[0] if grad_boundary else None)
    else:
        source = "structural"
        tag_backward_structurally(gm, len(grad_idx))
    _copy_forward_meta_to_backward(gm)
    _settle_region_tags(gm)
    read_forward_sizes(gm)

    return JointGraph(
        name=name or type(model).__name__,
        graph_module=gm,
        state_fqns=state_fqns,
        state_is_param=state_is_param,
        state_requires_grad=state_requires_grad,
        input_paths=input_paths,
        grad_fqns=[state_fqns[i] for i in grad_idx],
        loss_dict_keys=loss_dict_keys,
        structure=discover_structure(model),
        shape_env=fake_mode.shape_env if symbolic else None,
        backward_tag_source=source,
        unreached_grad_fqns=unreached,
    )


_SIZE_QUERIES = (torch.ops.aten.sym_size, torch.ops.aten.sym_stride,
                 torch.ops.aten.sym_numel, torch.ops.aten.sym_storage_offset)


def read_forward_sizes(gm: torch.fx.GraphModule) -> int:
    """Make each backward size query of a forward tensor read the forward.

    The traced document's own form of ``joint-read-forward-sizes`` (same
    rule, docs/passes.md): a backward ``sym_size``/``sym_stride``/
    ``sym_numel``/``sym_storage_offset`` of a tensor made by a forward op
    reuses an equal forward query, else moves right after the tensor's
    producer (and the queries moved there before it) and becomes forward.
    No tensor then lives across the boundary only for its size, in the trace
    itself. Returns how many queries moved.
    """
    forward: dict[tuple[Any, ...], torch.fx.Node] = {}
    last_moved: dict[torch.fx.Node, torch.fx.Node] = {}
    moved = 0
    changed = False
    for q in list(gm.graph.nodes):
        if (q.op != "call_function"
                or getattr(q.target, "overloadpacket", None)
                not in _SIZE_QUERIES
                or not q.args or not isinstance(q.args[0], torch.fx.Node)
                or any(isinstance(a, torch.fx.Node) for a in q.args[1:])
                or any(isinstance(a, torch.fx.Node)
                       for a in q.kwargs.values())):
            continue
        t = q.args[0]
        key = (q.target, t, repr(q.args[1:]), repr(sorted(q.kwargs.items())))
        if not q.meta.get("autograd_backward"):
            forward.setdefault(key, q)
            continue
        if t.op != "call_function" or t.meta.get("autograd_backward"):
            continue
        known = forward.get(key)
        if known is not None:
            q.replace_all_uses_with(known)
            gm.graph.erase_node(q)
            changed = True
            continue
        anchor = last_moved.get(t, t)
        anchor.append(q)
        last_moved[t] = q
        q.meta.pop("autograd_backward", None)
        forward[key] = q
        moved += 1
        changed = True
    if changed:
        gm.recompile()
    return moved


def _complete_engine_tags(gm: torch.fx.GraphModule,
                          boundary: torch.fx.Node | None) -> None:
    """Extend engine tags to every node created by the autograd.grad call.

    The engine tags nodes built inside grad_fns; the gradient seed
    (``ones_like`` of the loss) and the ``zeros_like`` of unused parameters
    are created around them, after the grad call starts, and are backward too.
    """
    if boundary is None:
        return
    after = False
    for n in gm.graph.nodes:
        if after and n.op == "call_function":
            n.meta["autograd_backward"] = True
        if n is boundary:
            after = True

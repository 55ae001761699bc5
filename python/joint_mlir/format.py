"""Serialize a :class:`~joint_mlir.tracer.JointGraph` to joint-graph format v1.

``docs/format.md`` is the specification; this module is its writer. The output
is deterministic (no timestamps, operator table sorted by target, storage ids
and symbols numbered in first-seen order) so committed examples diff cleanly.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import math
import operator
import os
import re
import tempfile
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import torch

from .errors import JointMlirError

# The process umask, read once at import (reading it means setting it).
_UMASK = os.umask(0o022)
os.umask(_UMASK)

if TYPE_CHECKING:
    from .tracer import JointGraph

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "PRODUCER_NAME",
    "graph_to_dict",
    "write_document",
    "read_document",
    "dumps_document",
    "target_name",
    "operator_entry",
    "graph_stats",
]

FORMAT_NAME = "joint-graph"
FORMAT_VERSION = {"major": 1, "minor": 0}
PRODUCER_NAME = "joint_mlir"
PRODUCER_VERSION = "0.1.0"


class FormatError(JointMlirError, ValueError):
    """A graph or document format v1 cannot represent or a reader rejects."""


# --------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------

def value_refs(v: dict[str, Any]) -> list[str]:
    """Names of the nodes an encoded argument value refers to (``node``
    values, also inside ``list`` values), in order (docs/format.md)."""
    if v.get("t") == "node":
        return [v["v"]]
    if v.get("t") == "list":
        return [r for x in v["v"] for r in value_refs(x)]
    return []


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def target_name(target: Any) -> str:
    """``namespace::op.overload`` for operators; see format.md "Targets"."""
    if isinstance(target, torch._ops.OpOverload):
        return f"{target.namespace}::{target._opname}.{target._overloadname}"
    if isinstance(target, torch._ops.HigherOrderOperator):
        return f"higher_order::{target.name()}"
    if target is operator.getitem:
        return "getitem"
    mod = getattr(target, "__module__", None) or ""
    name = getattr(target, "__name__", None) or repr(target)
    if mod in ("_operator", "operator"):
        return f"operator::{name}"
    if mod == "math":
        return f"math::{name}"
    if mod.startswith("torch") and name.startswith("sym_"):
        return f"torch::{name}"
    return f"python::{mod}.{name}"


# --------------------------------------------------------------------------
# Symbolic values
# --------------------------------------------------------------------------

class _SymContext:
    def __init__(self, shape_env: Any | None) -> None:
        self.shape_env = shape_env
        # Every symbol an encoded expression mentions, so the symbols table
        # can list the unbacked ones (``u0`` of a data-dependent size) too.
        self.mentioned: dict[str, Any] = {}

    def note(self, expr: Any) -> None:
        for sym in getattr(expr, "free_symbols", ()):
            self.mentioned.setdefault(str(sym), sym)

    def hint(self, expr: Any) -> int | float | bool | None:
        env = self.shape_env
        if env is None:
            return None
        try:
            val = expr.xreplace(_var_to_val(env))
        except AttributeError:
            return None
        if getattr(val, "free_symbols", None):
            return None
        if val.is_Boolean if hasattr(val, "is_Boolean") else False:
            return bool(val)
        if getattr(val, "is_Integer", False):
            return int(val)
        try:
            f = float(val)
        except (TypeError, ValueError):
            return None
        return f

    def sym(self, s: torch.SymInt | torch.SymFloat | torch.SymBool) -> dict[str, Any]:
        expr = s.node.expr
        self.note(expr)
        h = s.node.hint if s.node.hint is not None else self.hint(expr)
        if isinstance(s, torch.SymBool):
            kind, h = "symbool", (None if h is None else bool(h))
        elif isinstance(s, torch.SymFloat):
            kind, h = "symfloat", (None if h is None else float(h))
        else:
            kind, h = "symint", (None if h is None else int(h))
        return {"t": kind, "expr": str(expr), "hint": h}

    def dim(self, d: int | torch.SymInt) -> int | dict[str, Any]:
        """A size/stride/offset entry: an int, or {expr, hint} when symbolic."""
        if isinstance(d, torch.SymInt):
            expr = d.node.expr
            if getattr(expr, "is_Integer", False):
                return int(expr)
            self.note(expr)
            h = d.node.hint if d.node.hint is not None else self.hint(expr)
            return {"expr": str(expr), "hint": None if h is None else int(h)}
        return int(d)


def _float(v: float) -> float | str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


# --------------------------------------------------------------------------
# Values (node arguments)
# --------------------------------------------------------------------------

def encode_value(v: Any, ctx: _SymContext, where: str) -> dict[str, Any]:
    """Typed value; see format.md "Values"."""
    if v is None:
        return {"t": "none"}
    if isinstance(v, torch.fx.Node):
        return {"t": "node", "v": v.name, "i": 0}
    if isinstance(v, bool):
        return {"t": "bool", "v": v}
    if isinstance(v, int):
        return {"t": "int", "v": v}
    if isinstance(v, float):
        return {"t": "float", "v": _float(v)}
    if isinstance(v, str):
        return {"t": "str", "v": v}
    if isinstance(v, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return ctx.sym(v)
    if isinstance(v, torch.dtype):
        return {"t": "dtype", "v": dtype_name(v)}
    if isinstance(v, torch.device):
        return {"t": "device", "v": str(v)}
    if isinstance(v, torch.layout):
        return {"t": "layout", "v": str(v).removeprefix("torch.")}
    if isinstance(v, torch.memory_format):
        return {"t": "memory_format", "v": str(v).removeprefix("torch.")}
    if isinstance(v, complex):
        return {"t": "complex", "v": [_float(v.real), _float(v.imag)]}
    if isinstance(v, (list, tuple)):
        return {"t": "list", "v": [encode_value(x, ctx, where) for x in v]}
    raise FormatError(f"{where}: cannot encode argument of type "
                      f"{type(v).__name__} in format v1")


# --------------------------------------------------------------------------
# Node outputs (tensor facts)
# --------------------------------------------------------------------------

class _Storages:
    """Integer ids for storages, numbered in first-seen order."""

    def __init__(self) -> None:
        self.ids: dict[int, int] = {}
        # keep storages alive so their addresses cannot be reused
        self._keep: list[Any] = []

    def id_of(self, t: torch.Tensor) -> int:
        st = t.untyped_storage()
        key = st._cdata
        got = self.ids.get(key)
        if got is None:
            got = len(self.ids)
            self.ids[key] = got
            self._keep.append(st)
        return got

    def alias(self, t: torch.Tensor, of: torch.Tensor) -> None:
        """Give ``t``'s storage (and every later view of it) ``of``'s id."""
        st = t.untyped_storage()
        if st._cdata not in self.ids:
            self.ids[st._cdata] = self.id_of(of)
            self._keep.append(st)


def encode_result(v: Any, ctx: _SymContext, storages: _Storages,
                  where: str) -> dict[str, Any]:
    if isinstance(v, torch.Tensor):
        return {
            "t": "tensor",
            "sizes": [ctx.dim(d) for d in v.shape],
            "strides": [ctx.dim(d) for d in v.stride()],
            "offset": ctx.dim(v.storage_offset()),
            "dtype": dtype_name(v.dtype),
            "device": str(v.device),
            "storage": storages.id_of(v),
        }
    if v is None or isinstance(v, (bool, int, float, str,
                                   torch.SymInt, torch.SymFloat,
                                   torch.SymBool)):
        return encode_value(v, ctx, where)
    raise FormatError(f"{where}: cannot encode result of type "
                      f"{type(v).__name__} in format v1")


def _getitem_results(node: torch.fx.Node, ctx: _SymContext,
                     storages: _Storages) -> list[dict[str, Any]]:
    src, idx = node.args[0], node.args[1]
    val = src.meta.get("val") if isinstance(src, torch.fx.Node) else None
    if not isinstance(val, (list, tuple)) or not isinstance(idx, int) \
            or not -len(val) <= idx < len(val):
        raise FormatError(f"node {node.name}: no 'val' metadata and no "
                          "multi-result producer to take it from")
    return [encode_result(val[idx], ctx, storages, f"node {node.name}")]


# Operators that return their argument itself (the same tensor) at run time.
def _returns_its_input() -> frozenset[Any]:
    try:
        return frozenset({torch.ops._c10d_functional.wait_tensor.default})
    except (AttributeError, RuntimeError):  # torch without distributed
        return frozenset()


_RETURNS_ITS_INPUT = _returns_its_input()


def _node_results(node: torch.fx.Node, ctx: _SymContext,
                  storages: _Storages) -> list[dict[str, Any]]:
    if node.op == "output":
        return []
    if node.target is operator.getitem and node.meta.get("val") is None:
        # make_fx records no value for a getitem selecting a ``None`` result
        # (convolution_backward's grad_input under output_mask [False, ...]);
        # the getitem repeats the producer's result: ``{"t": "none"}``.
        return _getitem_results(node, ctx, storages)
    if "val" not in node.meta:
        # make_fx records no value for an operator that returns ``()``
        # (e.g. a custom op that only writes an argument).
        if (isinstance(node.target, torch._ops.OpOverload)
                and not node.target._schema.returns):
            return []
        raise FormatError(f"node {node.name}: no 'val' metadata")
    val = node.meta["val"]
    src = node.args[0] if node.args else None
    if (node.target in _RETURNS_ITS_INPUT and isinstance(val, torch.Tensor)
            and isinstance(src, torch.fx.Node)
            and isinstance(src.meta.get("val"), torch.Tensor)):
        # Fake tensors give the result a storage of its own; the real op
        # returns its input, so it and its views live in the input's.
        storages.alias(val, src.meta["val"])
    if isinstance(val, (list, tuple)):
        return [encode_result(x, ctx, storages, f"node {node.name}")
                for x in val]
    if val is None:
        return []
    return [encode_result(val, ctx, storages, f"node {node.name}")]


# --------------------------------------------------------------------------
# Operator table
# --------------------------------------------------------------------------

def _torchgen_args(schema_str: str) -> tuple[dict[str, Any], list[Any]] | None:
    try:
        from torchgen.model import FunctionSchema
        fs = FunctionSchema.parse(schema_str.split("::", 1)[-1])
    except Exception:  # noqa: BLE001 - unusual custom schemas
        return None
    return {a.name: a for a in fs.arguments.flat_all}, list(fs.returns)


def _alias_fields(ann: Any, c_alias: Any) -> dict[str, Any]:
    if ann is not None:
        return {"alias": sorted(ann.alias_set),
                "alias_after": sorted(ann.alias_set_after),
                "is_write": bool(ann.is_write)}
    if c_alias is not None:
        return {"alias": sorted(c_alias.before_set),
                "alias_after": sorted(c_alias.after_set - c_alias.before_set),
                "is_write": bool(c_alias.is_write)}
    return {"alias": [], "alias_after": [], "is_write": False}


# Namespaces torch itself registers; their operators need no module import.
_TORCH_NAMESPACES = frozenset({"aten", "prims", "prim", "rngprims", "ao",
                               "_c10d_functional", "c10d", "_dtensor",
                               "quantized", "profiler", "inductor"})


def _module_of_file(path: str) -> str | None:
    """The imported module whose source file is ``path``, if any."""
    import sys

    want = os.path.realpath(path)
    for name, mod in list(sys.modules.items()):
        f = getattr(mod, "__file__", None)
        if f and os.path.realpath(f) == want:
            return name
    return None


def registering_module(op: torch._ops.OpOverload) -> str | None:
    """Python module whose import registers ``op``, or None (torch's own ops).

    ``torch.library.custom_op`` keeps its definition in
    ``torch._library.custom_ops.OPDEFS`` (the decorated function's module);
    ops defined with ``torch.library.Library`` carry the defining source file
    in the dispatcher's registration record (``registered at FILE:LINE``),
    and ops of ``torch.library.define`` the source of their fake kernel;
    each is mapped back to an imported module. Ops from C++ extensions have
    no Python source and yield None.
    """
    if op.namespace in _TORCH_NAMESPACES:
        return None
    from torch._library.custom_ops import OPDEFS

    qualname = f"{op.namespace}::{op._opname}"
    opdef = OPDEFS.get(qualname)
    fn = getattr(opdef, "_init_fn", None)
    if fn is not None and not fn.__module__.startswith("torch."):
        return fn.__module__
    torch_dir = os.path.realpath(os.path.dirname(torch.__file__)) + os.sep
    sources = [m.group(1) for m in re.finditer(
        r"registered at (.+?\.py):\d+", torch._C._dispatch_dump(qualname))]
    # torch.library.define/impl register from torch/library.py; their fake
    # kernel (torch.library.register_fake) keeps the caller's source.
    from torch._library.simple_registry import singleton

    entry = singleton.find(qualname)
    kernel = entry.fake_impl.kernel if entry.fake_impl is not None else None
    if kernel is not None and getattr(kernel, "source", None):
        sources.append(kernel.source.rpartition(":")[0])
    for path in sources:
        if os.path.realpath(path).startswith(torch_dir):
            continue
        name = _module_of_file(path)
        if name is not None:
            return name
    return None


def operator_entry(op: torch._ops.OpOverload) -> dict[str, Any]:
    """Schema facts of one operator overload; see format.md "Operators"."""
    schema = op._schema
    text = str(schema)
    parsed = _torchgen_args(text)
    tg_args, tg_rets = parsed if parsed else ({}, [])
    args = []
    for a in schema.arguments:
        tg = tg_args.get(a.name)
        if tg is not None:
            ty = str(tg.type)
            default = tg.default
            ann = tg.annotation
        else:
            ty = str(a.type)
            default = repr(a.default_value) if a.has_default_value() else None
            ann = None
        args.append({
            "name": a.name,
            "type": ty,
            "kwarg_only": bool(a.kwarg_only),
            "default": default,
            **_alias_fields(ann, None if tg is not None else a.alias_info),
        })
    rets = []
    for i, r in enumerate(schema.returns):
        tg = tg_rets[i] if i < len(tg_rets) else None
        rets.append({
            "name": r.name or "",
            "type": str(tg.type) if tg is not None else str(r.type),
            **_alias_fields(tg.annotation if tg is not None else None,
                            None if tg is not None else r.alias_info),
        })
    return {
        "schema": text,
        "args": args,
        "returns": rets,
        "is_mutable": bool(schema.is_mutable),
        "tags": sorted(t.name for t in op.tags),
        **({"python_module": mod} if (mod := registering_module(op)) else {}),
    }


# --------------------------------------------------------------------------
# Graph
# --------------------------------------------------------------------------

def _module_stack(node: torch.fx.Node) -> list[dict[str, str]]:
    stack = node.meta.get("nn_module_stack") or {}
    out = []
    for fqn, ty in stack.values():
        cls = ty if isinstance(ty, str) else f"{ty.__module__}.{ty.__qualname__}"
        out.append({"fqn": str(fqn), "class": cls.rpartition(".")[2]})
    return out


def _recompute(node: torch.fx.Node) -> str | None:
    pol = node.meta.get("recompute")
    if pol is None:
        return None
    name = getattr(pol, "name", str(pol))
    return name.lower()


def _encode_args(node: torch.fx.Node, ctx: _SymContext) -> list[dict[str, Any]]:
    where = f"node {node.name}"
    if node.op == "output":
        flat, _ = torch.utils._pytree.tree_flatten(node.args[0])
        return [encode_value(a, ctx, where) for a in flat]
    args = [encode_value(a, ctx, where) for a in node.args]
    if node.target is operator.getitem and args and args[0]["t"] == "node":
        idx = node.args[1]
        args[0]["i"] = int(idx) if isinstance(idx, int) else 0
    return args


def _var_to_val(shape_env: Any) -> dict[Any, Any]:
    got = getattr(shape_env, "backed_var_to_val", None)
    return got if got is not None else shape_env.var_to_val


def _finite_int(x: Any) -> int | None:
    try:
        v = int(x)
    except (TypeError, ValueError, OverflowError, AttributeError):
        return None
    if abs(v) >= 2**62:  # int_oo and friends
        return None
    return v


def _symbols(shape_env: Any | None,
             mentioned: dict[str, Any]) -> list[dict[str, Any]]:
    """The symbols table: every backed symbol of the shape environment, and
    every symbol an encoded expression mentions (unbacked ``u<N>`` of
    data-dependent sizes have no example value: ``hint`` null)."""
    if shape_env is None:
        return []
    backed = _var_to_val(shape_env)
    syms: list[tuple[Any, int | None]] = [(s, int(v)) for s, v in backed.items()]
    names = {str(s) for s, _ in syms}
    syms += [(s, None) for n, s in mentioned.items() if n not in names]
    out = []
    for sym, val in syms:
        rng = shape_env.var_to_range.get(sym)
        lo = hi = None
        if rng is not None:
            lo, hi = _finite_int(rng.lower), _finite_int(rng.upper)
        sources = shape_env.var_to_sources.get(sym, [])
        out.append({
            "name": str(sym),
            "hint": val,
            "min": lo,
            "max": hi,
            "sources": [s.name if isinstance(s.name, str) else s.name() for s in sources],
        })
    out.sort(key=lambda s: (len(s["name"]), s["name"]))
    return out


def graph_to_dict(jg: JointGraph, *, stack_traces: bool = False,
                  progress: bool = False) -> dict[str, Any]:
    gm = jg.graph_module
    ctx = _SymContext(jg.shape_env)
    storages = _Storages()
    nodes: list[dict[str, Any]] = []
    ops: dict[str, dict[str, Any]] = {}
    placeholders: list[str] = []
    output_refs: list[dict[str, Any]] = []

    it: Iterable[torch.fx.Node] = gm.graph.nodes
    if progress:
        from tqdm import tqdm
        it = tqdm(it, total=len(gm.graph.nodes), desc="serialize",
                  unit="node", leave=False, disable=None)
    for n in it:
        if n.op not in ("placeholder", "call_function", "output"):
            raise FormatError(
                f"node {n.name}: op kind {n.op!r} is not representable in "
                "format v1 (constant tensors must be parameters or buffers)")
        target = None
        if n.op == "call_function":
            target = target_name(n.target)
            if (isinstance(n.target, torch._ops.OpOverload)
                    and target not in ops):
                ops[target] = operator_entry(n.target)
        elif n.op == "placeholder":
            placeholders.append(n.name)
        kwargs = {k: encode_value(v, ctx, f"node {n.name}")
                  for k, v in n.kwargs.items()}
        args = _encode_args(n, ctx)
        if n.op == "output":
            output_refs = args
        seq = n.meta.get("seq_nr")
        nodes.append({
            "name": n.name,
            "kind": n.op,
            "target": target,
            "args": args,
            "kwargs": kwargs,
            "outputs": _node_results(n, ctx, storages),
            # Only an op has a phase; placeholders and the output never do.
            "backward": n.op == "call_function"
            and bool(n.meta.get("autograd_backward", False)),
            "seq_nr": seq if isinstance(seq, int) and n.op == "call_function"
            else None,
            "module_stack": _module_stack(n),
            "recompute": _recompute(n),
            "stack_trace": (n.meta.get("stack_trace") or None)
            if stack_traces else None,
        })

    n_state = jg.num_state_inputs
    if len(placeholders) != n_state + len(jg.input_paths):
        raise FormatError(
            f"graph has {len(placeholders)} placeholders, expected "
            f"{n_state} state + {len(jg.input_paths)} user inputs")
    state = [{"input": placeholders[i], "fqn": fqn, "is_param": p,
              "requires_grad": rg}
             for i, (fqn, p, rg) in enumerate(zip(
                 jg.state_fqns, jg.state_is_param, jg.state_requires_grad))]
    inputs = [{"input": placeholders[n_state + i], "path": path}
              for i, path in enumerate(jg.input_paths)]

    roles: list[tuple[str, str | None, str | None]] = [("loss", None, None)]
    roles += [("grad", f, None) for f in jg.grad_fqns]
    roles += [("loss_dict", None, k) for k in jg.loss_dict_keys]
    if len(roles) != len(output_refs):
        raise FormatError(f"graph has {len(output_refs)} outputs, expected "
                          f"{len(roles)}")
    outputs = [{"role": r, "fqn": f, "key": k,
                "node": ref["v"] if ref["t"] == "node" else None}
               for (r, f, k), ref in zip(roles, output_refs)]

    s = jg.structure
    model = {
        "rule": s.rule,
        "block_containers": [
            {"owner": c.owner, "container": c.container,
             "block_class": c.block_class, "blocks": list(c.blocks)}
            for c in s.containers],
        "attention": [{"fqn": f, "class": c} for f, c in s.attention],
    }
    return {
        "format": FORMAT_NAME,
        "version": dict(FORMAT_VERSION),
        "name": jg.name,
        "producer": {"name": PRODUCER_NAME, "version": PRODUCER_VERSION,
                     "torch": torch.__version__.split("+")[0]},
        "backward_tags": jg.backward_tag_source,
        "symbols": _symbols(jg.shape_env, ctx.mentioned),
        "state": state,
        "inputs": inputs,
        "outputs": outputs,
        "model": model,
        "nodes": nodes,
        "operators": {k: ops[k] for k in sorted(ops)},
    }


# --------------------------------------------------------------------------
# Text
# --------------------------------------------------------------------------

def _dump(v: Any) -> str:
    return json.dumps(v, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)


def dumps_document(doc: dict[str, Any]) -> str:
    """Compact JSON with one array element / table entry per line.

    Valid JSON either way; the line layout only keeps diffs readable.
    """
    out = io.StringIO()
    out.write("{\n")
    keys = list(doc)
    for i, k in enumerate(keys):
        v = doc[k]
        out.write(f"{_dump(k)}:")
        if isinstance(v, list) and v:
            out.write("[\n")
            out.write(",\n".join(_dump(x) for x in v))
            out.write("\n]")
        elif isinstance(v, dict) and k == "operators" and v:
            out.write("{\n")
            out.write(",\n".join(f"{_dump(t)}:{_dump(e)}" for t, e in v.items()))
            out.write("\n}")
        else:
            out.write(_dump(v))
        out.write(",\n" if i + 1 < len(keys) else "\n")
    out.write("}\n")
    return out.getvalue()


def write_document(doc: dict[str, Any], path: str) -> None:
    """Write ``doc`` to ``path`` (gzip when it ends in .gz), whole or not at
    all: into a temporary next to it, renamed over ``path`` at the end (a
    path that exists and is no regular file is written in place)."""
    data = dumps_document(doc).encode("ascii")
    path = os.fspath(path)
    if os.path.lexists(path) and not (os.path.isfile(path)
                                      and not os.path.islink(path)):
        # /dev/null, a pipe, a symbolic link: written in place (a rename
        # would replace the node itself).
        with open(path, "wb") as f:
            _write_bytes(f, data, path)
        return
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".",
                               suffix=".tmp",
                               dir=os.path.dirname(path) or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            _write_bytes(f, data, path)
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp's 0600 -> open()'s mode
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _write_bytes(f: Any, data: bytes, path: str) -> None:
    """``data`` into the open binary file ``f``, gzipped for a .gz path."""
    if path.endswith(".gz"):
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0) as gz:
            gz.write(data)
    else:
        f.write(data)



def read_document(path: str) -> dict[str, Any]:
    """Load a document and reject an unknown major version.

    gzip is recognised by its magic bytes, not the file name (joint-translate
    writes plain JSON whatever the name). A file that is not readable JSON
    raises FormatError (a ValueError) naming the path.
    """
    with open(path, "rb") as f:
        gzipped = f.read(2) == b"\x1f\x8b"
    try:
        if gzipped:
            with gzip.open(path, "rt", encoding="ascii") as f:
                doc = json.load(f)
        else:
            with open(path, encoding="ascii") as f:
                doc = json.load(f)
    except (EOFError, gzip.BadGzipFile, UnicodeDecodeError,
            json.JSONDecodeError) as e:
        hint = ("; .mlir files are converted with joint-translate "
                "--export-joint-json" if str(path).endswith(".mlir") else "")
        raise FormatError(f"{path}: not a readable joint-graph JSON file "
                         f"({e}){hint}") from e
    if not isinstance(doc, dict) or doc.get("format") != FORMAT_NAME:
        raise FormatError(f"{path}: not a {FORMAT_NAME} document")
    major = doc.get("version", {}).get("major")
    if major != FORMAT_VERSION["major"]:
        raise FormatError(f"{path}: unsupported format major version {major}; "
                         f"this reader supports {FORMAT_VERSION['major']}")
    return doc


# --------------------------------------------------------------------------
# Summary
# --------------------------------------------------------------------------

def _hint_dim(d: Any) -> int:
    return d if isinstance(d, int) else int(d.get("hint") or 0)


def _tensor_bytes(fact: dict[str, Any]) -> int:
    n = 1
    for s in fact["sizes"]:
        n *= _hint_dim(s)
    dt = getattr(torch, fact["dtype"])
    return n * dt.itemsize if hasattr(dt, "itemsize") else n * 4


def graph_stats(doc: dict[str, Any]) -> dict[str, int]:
    """Node counts and bytes of a format-v1 document.

    ``activation_bytes``: bytes of the distinct storages produced by forward
    nodes and read by backward nodes (what a plain trainer saves); storages
    of parameters, buffers and inputs (and their views) are state, not
    activations, matching joint-memory-report's activation bytes.
    """
    by_name = {n["name"]: n for n in doc["nodes"]}
    fwd = bwd = 0
    saved: dict[int, int] = {}
    # Views of parameters, buffers and inputs (t(weight), ...) share their
    # storage: that memory is state, not a saved activation.
    state_storages = {f["storage"] for n in doc["nodes"]
                      if n["kind"] == "placeholder" for f in n["outputs"]
                      if f.get("t") == "tensor"}
    for n in doc["nodes"]:
        if n["kind"] != "call_function":
            continue
        if n["backward"]:
            bwd += 1
        else:
            fwd += 1
            continue
        stack = list(n["args"]) + list(n["kwargs"].values())
        while stack:
            a = stack.pop()
            if a["t"] == "list":
                stack.extend(a["v"])
                continue
            if a["t"] != "node":
                continue
            src = by_name[a["v"]]
            if src["kind"] != "call_function" or src["backward"]:
                continue
            facts = src["outputs"][:1]
            for f in facts:
                if f.get("t") == "tensor" and f["storage"] not in state_storages:
                    saved[f["storage"]] = max(saved.get(f["storage"], 0),
                                              _tensor_bytes(f))
    param_bytes = sum(
        _tensor_bytes(by_name[s["input"]]["outputs"][0]) for s in doc["state"])
    return {
        "nodes": len(doc["nodes"]),
        "forward": fwd,
        "backward": bwd,
        "activation_bytes": sum(saved.values()),
        "state_bytes": param_bytes,
    }

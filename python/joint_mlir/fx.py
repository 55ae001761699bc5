"""Rebuild an executable ``torch.fx.GraphModule`` from a format v1 document.

Any joint-graph document works: one written by this package's exporter, or
one written back by ``joint-translate --export-joint-json`` after the C++
passes (with ``ao::`` nodes and ``recomputed_from`` duplicates).

- Placeholders keep their names and order (state, then inputs).
- ``namespace::op.overload`` targets resolve through ``torch.ops``; an
  operator another library registers is looked up after importing the module
  its operator-table entry names (``python_module``) and any module given in
  ``imports``;
  ``getitem`` -> ``operator.getitem``; ``operator::``/``math::`` -> the
  Python function; ``torch::sym_*`` -> ``torch.sym_*``.
- ``ao::offload/reload/wait_tensor.default`` resolve through
  :func:`joint_mlir.ao.resolve` (torch's ops on an accelerator, else the
  synchronous fallback with the same semantics).
- A node with ``recomputed_from`` is an ordinary op (a remat duplicate);
  one of a random op replays the original's draw (:mod:`joint_mlir.rng`).
- ``device`` arguments recorded on the trace device are rewritten to the run
  device when ``device`` is given, so a CPU trace runs on ``cuda``.
- Raw ``symint``/``symfloat``/``symbool`` arguments (FX kept a SymInt
  constant-folded into an argument) are computed at run time from the input
  sizes named in ``symbols[].sources``.

The returned module carries the document's roles as attributes:
``state_fqns``, ``state_is_param``, ``input_paths``, ``output_roles`` and
``joint_doc`` (the document itself).
"""

from __future__ import annotations

import importlib
import math
import operator
import re
from typing import Any

import torch
import torch.fx

from . import ao as _ao
from . import rng as _rng
from .errors import JointMlirError
from .format import read_document

__all__ = ["LoadError", "load", "build_graph_module", "resolve_target",
           "import_modules"]


class LoadError(JointMlirError, ValueError):
    """The document cannot be rebuilt as an FX graph (unknown op, bad ref)."""


_DTYPES = {str(d).removeprefix("torch."): d for d in vars(torch).values()
           if isinstance(d, torch.dtype)}
_LAYOUTS = {str(v).removeprefix("torch."): v for v in vars(torch).values()
            if isinstance(v, torch.layout)}
_MEMORY_FORMATS = {str(v).removeprefix("torch."): v
                   for v in vars(torch).values()
                   if isinstance(v, torch.memory_format)}
_FLOATS = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def import_modules(names: list[str] | tuple[str, ...]) -> None:
    """Import modules that register operators (``--import``); LoadError if not."""
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as e:  # noqa: BLE001 - any failure of user code
            raise LoadError(f"cannot import module {name!r}: "
                            f"{type(e).__name__}: {e}") from e


def _lookup_op(ns: str, rest: str) -> Any:
    name, _, overload = rest.partition(".")
    try:
        packet = getattr(getattr(torch.ops, ns), name)
        return getattr(packet, overload or "default")
    except (AttributeError, RuntimeError):
        return None


def resolve_target(target: str, *, device: torch.device | None = None,
                   ao_impl: str = "auto", module: str | None = None) -> Any:
    """The callable for a format v1 target string (see format.md Targets).

    ``module`` is the operator table's ``python_module`` for the target: it
    is imported when the target does not resolve yet (its import registers
    the operator). LoadError names it when the target still does not resolve.
    """
    if target == "getitem":
        return operator.getitem
    if target in _ao.AO_TARGETS:
        return _ao.resolve(target, device, ao_impl)
    ns, sep, rest = target.partition("::")
    if not sep:
        raise LoadError(f"target {target!r}: expected namespace::name")
    if ns == "operator":
        fn = getattr(operator, rest, None)
    elif ns == "math":
        fn = getattr(math, rest, None)
    elif ns == "torch":
        fn = getattr(torch, rest, None)
    else:
        fn = _lookup_op(ns, rest)
        if fn is None and module:
            try:
                importlib.import_module(module)
            except Exception as e:  # noqa: BLE001 - any failure of user code
                raise LoadError(
                    f"target {target!r}: cannot import module {module!r}, "
                    f"which registers it: {type(e).__name__}: {e}") from e
            fn = _lookup_op(ns, rest)
    if fn is None:
        where = f"the installed torch {torch.__version__}"
        if module == "__main__":
            raise LoadError(
                f"target {target!r} does not resolve in {where}: it was "
                "registered by a script (__main__); define it in an "
                "importable module and export again, or --import that module")
        if module:
            raise LoadError(
                f"target {target!r} does not resolve in {where} after "
                f"importing {module!r}, the module recorded as registering it")
        hint = ("" if ns in ("operator", "math", "torch", "aten", "prims")
                else "; no module registering it is recorded: import the "
                "library that defines it (python -m joint_mlir.run --import "
                "MODULE)")
        raise LoadError(f"target {target!r} does not resolve in {where}{hint}")
    return fn


def _float(v: Any) -> float:
    return _FLOATS[v] if isinstance(v, str) else float(v)


def _eval_sym(expr: str, kind: str, names: tuple[str, ...],
              *values: int) -> Any:
    """Evaluate a sympy expression over the bound symbols (run-time helper)."""
    import sympy
    import torch.utils._sympy.functions as symfn

    local = {k: getattr(symfn, k) for k in dir(symfn) if k[:1].isupper()}
    local.update({n: sympy.Symbol(n, integer=True) for n in names})
    e = sympy.sympify(expr, locals=local)
    got = e.xreplace({sympy.Symbol(n, integer=True): sympy.Integer(v)
                      for n, v in zip(names, values)})
    if kind == "symbool":
        return bool(got)
    if kind == "symfloat":
        return float(got)
    return int(got)


class _Builder:
    def __init__(self, doc: dict[str, Any], device: torch.device | None,
                 ao_impl: str) -> None:
        self.doc = doc
        self.device = device
        self.ao_impl = ao_impl
        self.graph = torch.fx.Graph()
        self.env: dict[str, torch.fx.Node] = {}
        self.trace_devices = self._trace_devices()
        self.symbols: dict[str, torch.fx.Node] | None = None
        self.replayed = self._replayed()
        self.rng_states: dict[str, torch.fx.Node] = {}

    def _replayed(self) -> dict[str, str]:
        """Random nodes (operator tag ``nondeterministic_seeded``) that a
        remat duplicate copies -> a free name for their RNG-state node."""
        nodes = {n["name"]: n for n in self.doc["nodes"]}
        out: dict[str, str] = {}
        for n in self.doc["nodes"]:
            src = nodes.get(n.get("recomputed_from"))
            if n["kind"] != "call_function" or src is None or \
                    src["kind"] != "call_function" or src["name"] in out:
                continue
            entry = self.doc["operators"].get(src["target"]) or {}
            if "nondeterministic_seeded" in (entry.get("tags") or ()):
                name = f"{src['name']}_rng_state"
                while name in nodes:
                    name += "_"
                out[src["name"]] = name
        return out

    def _trace_devices(self) -> set[str]:
        devs: set[str] = set()
        for n in self.doc["nodes"]:
            if n["kind"] != "placeholder":
                break
            for o in n["outputs"]:
                if o.get("t") == "tensor":
                    devs.add(o["device"])
        return devs

    def _device(self, v: str) -> torch.device:
        if self.device is not None and v in self.trace_devices:
            return self.device
        return torch.device(v)

    def _symbol_nodes(self) -> dict[str, torch.fx.Node]:
        """One ``sym_size`` node per symbol, from its first source dimension."""
        if self.symbols is not None:
            return self.symbols
        by_path = {i["path"]: i["input"] for i in self.doc["inputs"]}
        self.symbols = {}
        for s in self.doc["symbols"]:
            for src in s["sources"]:
                m = re.fullmatch(r"(.+)\.size\(\)\[(\d+)\]", src)
                if m and m.group(1) in by_path:
                    ph = self.env[by_path[m.group(1)]]
                    self.symbols[s["name"]] = self.graph.call_function(
                        torch.ops.aten.sym_size.int, (ph, int(m.group(2))))
                    break
        return self.symbols

    def _sym(self, v: dict[str, Any], where: str) -> Any:
        expr = v["expr"]
        try:
            lit = float(expr) if v["t"] == "symfloat" else int(expr)
            return lit
        except ValueError:
            pass
        syms = self._symbol_nodes()
        names = tuple(sorted(syms, key=len, reverse=True))
        missing = [n for n in re.findall(r"\b[su]\d+\b", expr)
                   if n not in syms]
        if missing:
            raise LoadError(f"{where}: symbolic value {expr!r} uses "
                            f"{missing}, which no input size binds")
        return self.graph.call_function(
            _eval_sym, (expr, v["t"], names, *[syms[n] for n in names]))

    def value(self, v: dict[str, Any], where: str) -> Any:
        t = v.get("t")
        if t == "none":
            return None
        if t in ("int", "bool", "str"):
            return v["v"]
        if t == "float":
            return _float(v["v"])
        if t == "complex":
            return complex(_float(v["v"][0]), _float(v["v"][1]))
        if t == "dtype":
            if v["v"] not in _DTYPES:
                raise LoadError(f"{where}: unknown dtype {v['v']!r}")
            return _DTYPES[v["v"]]
        if t == "device":
            return self._device(v["v"])
        if t == "layout":
            return _LAYOUTS[v["v"]]
        if t == "memory_format":
            return _MEMORY_FORMATS[v["v"]]
        if t == "list":
            return [self.value(x, where) for x in v["v"]]
        if t == "node":
            ref = self.env.get(v["v"])
            if ref is None:
                raise LoadError(f"{where}: reference to unknown or later node "
                                f"{v['v']!r}")
            return ref
        if t in ("symint", "symfloat", "symbool"):
            return self._sym(v, where)
        raise LoadError(f"{where}: unknown value type {t!r}")

    def build(self) -> torch.fx.GraphModule:
        out_node = None
        for n in self.doc["nodes"]:
            where = f"node {n['name']}"
            kind = n["kind"]
            if kind == "placeholder":
                node = self.graph.placeholder(n["name"])
            elif kind == "call_function":
                entry = self.doc["operators"].get(n["target"]) or {}
                try:
                    target = resolve_target(
                        n["target"], device=self.device, ao_impl=self.ao_impl,
                        module=entry.get("python_module"))
                except LoadError as e:
                    raise LoadError(f"{where}: {e}") from e
                args = tuple(self.value(a, where) for a in n["args"])
                kwargs = {k: self.value(a, where)
                          for k, a in n["kwargs"].items()}
                if n["name"] in self.replayed:
                    # The generator state the original draws from, for its
                    # duplicates to replay.
                    self.rng_states[n["name"]] = self.graph.create_node(
                        "call_function", _rng.rng_state, args, kwargs,
                        name=self.replayed[n["name"]])
                src = n.get("recomputed_from")
                if src in self.replayed:
                    if src not in self.rng_states:
                        raise LoadError(f"{where}: duplicate of random node "
                                        f"{src!r} comes before it")
                    target, args = _rng.run_with_rng_state, (
                        self.rng_states[src], target, *args)
                node = self.graph.create_node("call_function", target, args,
                                              kwargs, name=n["name"])
            elif kind == "output":
                vals = [self.value(a, where) for a in n["args"]]
                out_node = self.graph.output(vals)
                continue
            else:
                raise LoadError(f"{where}: unsupported kind {kind!r}")
            node.meta["joint"] = {k: n.get(k) for k in (
                "target", "backward", "seq_nr", "recompute", "recomputed_from",
                "module_stack")}
            node.meta["joint"]["outputs"] = n["outputs"]
            self.env[n["name"]] = node
        if out_node is None:
            raise LoadError("document has no output node")
        gm = torch.fx.GraphModule(torch.nn.Module(), self.graph,
                                  class_name=f"Joint_{_ident(self.doc['name'])}")
        gm.joint_doc = self.doc
        gm.state_fqns = [s["fqn"] for s in self.doc["state"]]
        gm.state_is_param = [s["is_param"] for s in self.doc["state"]]
        gm.input_paths = [i["path"] for i in self.doc["inputs"]]
        gm.output_roles = [dict(o) for o in self.doc["outputs"]]
        return gm


def _ident(name: str) -> str:
    return re.sub(r"\W", "_", name) or "graph"


def build_graph_module(doc: dict[str, Any], *,
                       device: str | torch.device | None = None,
                       ao_impl: str = "auto",
                       imports: list[str] | tuple[str, ...] = ()
                       ) -> torch.fx.GraphModule:
    """Rebuild the FX graph of an already-parsed document.

    ``imports`` are modules imported first (libraries that register
    operators the document's table records no ``python_module`` for).
    """
    import_modules(imports)
    dev = torch.device(device) if device is not None else None
    return _Builder(doc, dev, ao_impl).build()


def load(path: str, *, device: str | torch.device | None = None,
         ao_impl: str = "auto",
         imports: list[str] | tuple[str, ...] = ()) -> torch.fx.GraphModule:
    """Read a format v1 file (``.json`` or ``.json.gz``) into a GraphModule.

    Args:
      path: the document.
      device: run device; device arguments recorded on the trace device are
        rewritten to it, and ``ao`` ops are chosen for it. ``None`` keeps the
        recorded devices.
      ao_impl: ``auto``, ``torch`` or ``fallback`` (see :mod:`joint_mlir.ao`).
      imports: modules to import first (they register operators).
    """
    return build_graph_module(read_document(path), device=device,
                              ao_impl=ao_impl, imports=imports)

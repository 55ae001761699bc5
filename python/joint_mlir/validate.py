"""Validator for joint-graph format v1 documents (``docs/format.md``).

This is the executable form of the specification: every rule marked "must"
in format.md is checked here. :func:`validate_document` raises
:class:`FormatViolation` with a JSON-path-like location on the first error.
"""

from __future__ import annotations

import re
from typing import Any

from .errors import JointMlirError

__all__ = ["FormatViolation", "validate_document", "DTYPES", "BUILTIN_TARGETS"]

# torch dtype names (str(torch.dtype) without "torch.") that v1 allows.
DTYPES = frozenset({
    "float64", "float32", "float16", "bfloat16",
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
    "float8_e8m0fnu", "float4_e2m1fn_x2",
    "int64", "int32", "int16", "int8", "uint8", "uint16", "uint32", "uint64",
    "bool", "complex32", "complex64", "complex128",
})

# Targets that are not operators (no operator-table entry); see "Targets".
BUILTIN_TARGETS = frozenset({"getitem"})
_BUILTIN_PREFIXES = ("operator::", "math::", "torch::")

_TOP_KEYS = ("format", "version", "name", "producer", "backward_tags",
             "symbols", "state", "inputs", "outputs", "model", "nodes",
             "operators")
_NODE_KEYS = ("name", "kind", "target", "args", "kwargs", "outputs",
              "backward", "seq_nr", "module_stack", "recompute", "stack_trace")
# Optional node keys written by the passes ("Keys added by the passes").
_PASS_NODE_KEYS = ("recomputed_from",)
_TENSOR_KEYS = ("t", "sizes", "strides", "offset", "dtype", "device",
                "storage")
_RECOMPUTE = ("must_save", "prefer_save", "must_recompute", "prefer_recompute",
              "must_cpu_offload")
_TARGET_RE = re.compile(r"^[A-Za-z_][\w]*::[\w]+\.[\w]+$")
_DEVICE_RE = re.compile(r"^[a-z_]+(:\d+)?$")
# Symbols in a sympy expression: lower-case prefix and a number (s28, u0);
# sympy functions (Max, FloorDiv, Eq, ...) are capitalised or called.
_SYMBOL_RE = re.compile(r"\b[a-z]+\d+\b(?!\()")
_SCALAR_KINDS = ("none", "int", "float", "bool", "str", "dtype", "device",
                 "layout", "memory_format", "complex", "list", "node",
                 "symint", "symfloat", "symbool")


class FormatViolation(JointMlirError, ValueError):
    """A document that does not follow format v1."""


def _fail(where: str, msg: str) -> None:
    raise FormatViolation(f"{where}: {msg}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _obj(v: Any, where: str, keys: tuple[str, ...] | None = None) -> dict:
    if not isinstance(v, dict):
        _fail(where, f"expected an object, got {type(v).__name__}")
    if keys is not None and tuple(v) != keys and set(v) != set(keys):
        _fail(where, f"keys {sorted(v)} != {sorted(keys)}")
    return v


def _list(v: Any, where: str) -> list:
    if not isinstance(v, list):
        _fail(where, f"expected an array, got {type(v).__name__}")
    return v


def _str(v: Any, where: str, nullable: bool = False) -> None:
    if v is None and nullable:
        return
    if not isinstance(v, str):
        _fail(where, f"expected a string, got {type(v).__name__}")


def _expr_symbols(expr: str, where: str, symbols: set[str] | None) -> None:
    """Every symbol an expression mentions must be in the symbols table."""
    if symbols is None:
        return
    for name in _SYMBOL_RE.findall(expr):
        if name not in symbols:
            _fail(where, f"symbol {name!r} is not in the symbols table")


def _dim(v: Any, where: str, symbols: set[str]) -> None:
    if _is_int(v):
        return
    d = _obj(v, where, ("expr", "hint"))
    _str(d["expr"], where + ".expr")
    _expr_symbols(d["expr"], where + ".expr", symbols)
    if d["hint"] is not None and not _is_int(d["hint"]):
        _fail(where + ".hint", "expected an integer or null")


def _float_ok(v: Any) -> bool:
    return (isinstance(v, (int, float)) and not isinstance(v, bool)) or v in (
        "inf", "-inf", "nan")


def _value(v: Any, where: str, defined: dict[str, int],
           symbols: set[str] | None = None) -> None:
    d = _obj(v, where)
    t = d.get("t")
    if t not in _SCALAR_KINDS:
        _fail(where, f"unknown value type {t!r}")
    if t == "none":
        _obj(d, where, ("t",))
    elif t == "int":
        _obj(d, where, ("t", "v"))
        if not _is_int(d["v"]):
            _fail(where, "int value must be an integer")
    elif t == "float":
        _obj(d, where, ("t", "v"))
        if not _float_ok(d["v"]):
            _fail(where, "float value must be a number or inf/-inf/nan")
    elif t == "bool":
        _obj(d, where, ("t", "v"))
        if not isinstance(d["v"], bool):
            _fail(where, "bool value must be true/false")
    elif t == "complex":
        _obj(d, where, ("t", "v"))
        if not (isinstance(d["v"], list) and len(d["v"]) == 2
                and all(_float_ok(x) for x in d["v"])):
            _fail(where, "complex value must be [re, im]")
    elif t in ("str", "dtype", "device", "layout", "memory_format"):
        _obj(d, where, ("t", "v"))
        _str(d["v"], where + ".v")
        if t == "dtype" and d["v"] not in DTYPES:
            _fail(where, f"unknown dtype {d['v']!r}")
    elif t == "list":
        _obj(d, where, ("t", "v"))
        for i, x in enumerate(_list(d["v"], where + ".v")):
            _value(x, f"{where}.v[{i}]", defined, symbols)
    elif t == "node":
        _obj(d, where, ("t", "v", "i"))
        if d["v"] not in defined:
            _fail(where, f"reference to undefined or later node {d['v']!r}")
        if not _is_int(d["i"]) or d["i"] < 0:
            _fail(where, "node reference index must be a non-negative integer")
        n_out = defined[d["v"]]
        if d["i"] >= max(n_out, 1):
            _fail(where, f"output index {d['i']} out of range for "
                  f"{d['v']!r} with {n_out} outputs")
    else:  # symint / symfloat / symbool
        _obj(d, where, ("t", "expr", "hint"))
        _str(d["expr"], where + ".expr")
        _expr_symbols(d["expr"], where + ".expr", symbols)
        h = d["hint"]
        ok = (h is None or (t == "symint" and _is_int(h))
              or (t == "symbool" and isinstance(h, bool))
              or (t == "symfloat" and _float_ok(h)))
        if not ok:
            _fail(where + ".hint", f"bad hint for {t}")


def _result(v: Any, where: str, symbols: set[str]) -> None:
    d = _obj(v, where)
    if d.get("t") != "tensor":
        _value(d, where, {}, symbols)
        if d["t"] in ("node", "list"):
            _fail(where, "a result cannot be a node reference or list")
        return
    _obj(d, where, _TENSOR_KEYS)
    sizes = _list(d["sizes"], where + ".sizes")
    strides = _list(d["strides"], where + ".strides")
    if len(sizes) != len(strides):
        _fail(where, "sizes and strides differ in rank")
    for i, s in enumerate(sizes):
        _dim(s, f"{where}.sizes[{i}]", symbols)
    for i, s in enumerate(strides):
        _dim(s, f"{where}.strides[{i}]", symbols)
    _dim(d["offset"], where + ".offset", symbols)
    if d["dtype"] not in DTYPES:
        _fail(where, f"unknown dtype {d['dtype']!r}")
    if not isinstance(d["device"], str) or not _DEVICE_RE.match(d["device"]):
        _fail(where, f"bad device {d['device']!r}")
    if not _is_int(d["storage"]) or d["storage"] < 0:
        _fail(where, "storage must be a non-negative integer")


def _is_builtin(target: str) -> bool:
    return target in BUILTIN_TARGETS or target.startswith(_BUILTIN_PREFIXES)


def _operator(name: str, e: Any, where: str) -> None:
    keys = ("schema", "args", "returns", "is_mutable", "tags")
    # python_module: optional, on operators registered outside torch.
    if isinstance(e, dict) and "python_module" in e:
        keys += ("python_module",)
    _obj(e, where, keys)
    if "python_module" in e:
        _str(e["python_module"], where + ".python_module")
    _str(e["schema"], where + ".schema")
    if not e["schema"].startswith(name.rsplit(".", 1)[0]):
        _fail(where, "schema does not start with the operator name")
    for i, a in enumerate(_list(e["args"], where + ".args")):
        w = f"{where}.args[{i}]"
        _obj(a, w, ("name", "type", "kwarg_only", "default", "alias",
                    "alias_after", "is_write"))
        _str(a["name"], w + ".name")
        _str(a["type"], w + ".type")
        _str(a["default"], w + ".default", nullable=True)
        if not isinstance(a["kwarg_only"], bool) or not isinstance(
                a["is_write"], bool):
            _fail(w, "kwarg_only/is_write must be booleans")
        for k in ("alias", "alias_after"):
            for s in _list(a[k], f"{w}.{k}"):
                _str(s, f"{w}.{k}")
    for i, r in enumerate(_list(e["returns"], where + ".returns")):
        w = f"{where}.returns[{i}]"
        _obj(r, w, ("name", "type", "alias", "alias_after", "is_write"))
        _str(r["name"], w + ".name")
        _str(r["type"], w + ".type")
        if not isinstance(r["is_write"], bool):
            _fail(w, "is_write must be a boolean")
    if not isinstance(e["is_mutable"], bool):
        _fail(where, "is_mutable must be a boolean")
    for t in _list(e["tags"], where + ".tags"):
        _str(t, where + ".tags")
    if e["tags"] != sorted(e["tags"]):
        _fail(where, "tags must be sorted")


def validate_document(doc: Any) -> None:
    """Raise :class:`FormatViolation` unless ``doc`` is a valid v1 document."""
    _obj(doc, "$", _TOP_KEYS)
    if doc["format"] != "joint-graph":
        _fail("$.format", "must be 'joint-graph'")
    ver = _obj(doc["version"], "$.version", ("major", "minor"))
    if ver["major"] != 1:
        _fail("$.version.major", f"unsupported major version {ver['major']}")
    if not _is_int(ver["minor"]) or ver["minor"] < 0:
        _fail("$.version.minor", "must be a non-negative integer")
    _str(doc["name"], "$.name")
    prod = _obj(doc["producer"], "$.producer", ("name", "version", "torch"))
    for k in prod:
        _str(prod[k], f"$.producer.{k}")
    if doc["backward_tags"] not in ("engine", "structural"):
        _fail("$.backward_tags", "must be 'engine' or 'structural'")

    symbols: set[str] = set()
    for i, s in enumerate(_list(doc["symbols"], "$.symbols")):
        w = f"$.symbols[{i}]"
        _obj(s, w, ("name", "hint", "min", "max", "sources"))
        _str(s["name"], w + ".name")
        if s["name"] in symbols:
            _fail(w, "duplicate symbol")
        symbols.add(s["name"])
        if s["hint"] is not None and not _is_int(s["hint"]):
            _fail(w + ".hint", "must be an integer or null")
        for k in ("min", "max"):
            if s[k] is not None and not _is_int(s[k]):
                _fail(f"{w}.{k}", "must be an integer or null")
        for src in _list(s["sources"], w + ".sources"):
            _str(src, w + ".sources")

    # Nodes: names unique, references only to earlier nodes.
    defined: dict[str, int] = {}
    kinds: dict[str, str] = {}
    targets: set[str] = set()
    nodes = _list(doc["nodes"], "$.nodes")
    n_output = 0
    placeholders: list[str] = []
    for i, n in enumerate(nodes):
        w = f"$.nodes[{i}]"
        _obj(n, w)
        extra = set(n) - set(_NODE_KEYS)
        if not set(_NODE_KEYS) <= set(n) or not extra <= set(_PASS_NODE_KEYS):
            _fail(w, f"keys {sorted(n)} != {sorted(_NODE_KEYS)} (plus "
                  f"optional {', '.join(_PASS_NODE_KEYS)})")
        _str(n["name"], w + ".name")
        w = f"$.nodes[{i}]({n['name']})"
        if n["name"] in defined:
            _fail(w, "duplicate node name")
        kind = n["kind"]
        if kind not in ("placeholder", "call_function", "output"):
            _fail(w, f"unknown kind {kind!r}")
        if kind == "call_function":
            _str(n["target"], w + ".target")
            t = n["target"]
            if not _is_builtin(t):
                if not _TARGET_RE.match(t):
                    _fail(w + ".target", f"malformed target {t!r}")
                targets.add(t)
        elif n["target"] is not None:
            _fail(w + ".target", f"{kind} node must have a null target")
        if kind == "placeholder":
            if placeholders and nodes[i - 1]["kind"] != "placeholder":
                _fail(w, "placeholders must lead the node list")
            placeholders.append(n["name"])
            if n["args"] or n["kwargs"]:
                _fail(w, "placeholder has arguments")
        for j, a in enumerate(_list(n["args"], w + ".args")):
            _value(a, f"{w}.args[{j}]", defined, symbols)
        for k, a in _obj(n["kwargs"], w + ".kwargs").items():
            _value(a, f"{w}.kwargs.{k}", defined, symbols)
        outs = _list(n["outputs"], w + ".outputs")
        for j, r in enumerate(outs):
            _result(r, f"{w}.outputs[{j}]", symbols)
        if kind == "placeholder" and len(outs) != 1:
            _fail(w, "placeholder must have exactly one output")
        if kind == "output":
            n_output += 1
            if outs:
                _fail(w, "output node has no outputs")
            if i != len(nodes) - 1:
                _fail(w, "output node must be last")
        if t_is_getitem(n):
            if len(n["args"]) != 2 or n["args"][0]["t"] != "node" or \
                    n["args"][1]["t"] != "int" or \
                    n["args"][0]["i"] != n["args"][1]["v"]:
                _fail(w, "getitem must be (node ref with i=k, int k)")
            if len(outs) != 1:
                _fail(w, "getitem must have exactly one output")
        if not isinstance(n["backward"], bool):
            _fail(w + ".backward", "must be a boolean")
        if kind != "call_function" and n["backward"]:
            _fail(w + ".backward", "only call_function nodes can be backward")
        if n["seq_nr"] is not None and not _is_int(n["seq_nr"]):
            _fail(w + ".seq_nr", "must be an integer or null")
        for j, m in enumerate(_list(n["module_stack"], w + ".module_stack")):
            _obj(m, f"{w}.module_stack[{j}]", ("fqn", "class"))
            _str(m["fqn"], f"{w}.module_stack[{j}].fqn")
            _str(m["class"], f"{w}.module_stack[{j}].class")
        if n["recompute"] is not None and n["recompute"] not in _RECOMPUTE:
            _fail(w + ".recompute", f"unknown policy {n['recompute']!r}")
        _str(n["stack_trace"], w + ".stack_trace", nullable=True)
        if "recomputed_from" in n:
            # A remat duplicate of a forward node, which may since be erased.
            src = n["recomputed_from"]
            _str(src, w + ".recomputed_from")
            if not src or src == n["name"]:
                _fail(w + ".recomputed_from", "must name another node")
            if kind != "call_function" or not n["backward"] or \
                    n["recompute"] is not None:
                _fail(w + ".recomputed_from", "only on backward call_function "
                      "nodes without a recompute tag")
        defined[n["name"]] = len(outs)
        kinds[n["name"]] = kind
    if n_output != 1:
        _fail("$.nodes", "exactly one output node is required (last)")

    state = _list(doc["state"], "$.state")
    inputs = _list(doc["inputs"], "$.inputs")
    if len(state) + len(inputs) != len(placeholders):
        _fail("$.state", "state + inputs must cover the placeholders")
    fqns: set[str] = set()
    for i, s in enumerate(state):
        w = f"$.state[{i}]"
        _obj(s, w, ("input", "fqn", "is_param", "requires_grad"))
        if s["input"] != placeholders[i]:
            _fail(w + ".input", "state entry i must name placeholder i")
        _str(s["fqn"], w + ".fqn")
        if s["fqn"] in fqns:
            _fail(w + ".fqn", "duplicate FQN")
        fqns.add(s["fqn"])
        if not isinstance(s["is_param"], bool) or not isinstance(
                s["requires_grad"], bool):
            _fail(w, "is_param/requires_grad must be booleans")
    for i, s in enumerate(inputs):
        w = f"$.inputs[{i}]"
        _obj(s, w, ("input", "path"))
        if s["input"] != placeholders[len(state) + i]:
            _fail(w + ".input", "inputs must name the placeholders after state")
        _str(s["path"], w + ".path")

    out_node = nodes[-1]
    outputs = _list(doc["outputs"], "$.outputs")
    if len(outputs) != len(out_node["args"]):
        _fail("$.outputs", "one entry per output-node argument is required")
    phase = 0  # 0 loss, 1 grads, 2 loss_dict
    grad_fqns: set[str] = set()
    for i, (o, ref) in enumerate(zip(outputs, out_node["args"])):
        w = f"$.outputs[{i}]"
        _obj(o, w, ("role", "fqn", "key", "node"))
        role = o["role"]
        want = {"loss": 0, "grad": 1, "loss_dict": 2}.get(role)
        if want is None:
            _fail(w + ".role", f"unknown role {role!r}")
        if (i == 0) != (role == "loss"):
            _fail(w + ".role", "output 0, and only output 0, is the loss")
        if want < phase:
            _fail(w + ".role", "order must be loss, grads, loss_dict")
        phase = want
        if role == "grad":
            if o["fqn"] not in fqns:
                _fail(w + ".fqn", f"gradient of unknown state {o['fqn']!r}")
            if o["fqn"] in grad_fqns:
                _fail(w + ".fqn", "duplicate gradient")
            grad_fqns.add(o["fqn"])
        elif o["fqn"] is not None:
            _fail(w + ".fqn", "only grad outputs carry an fqn")
        if role == "loss_dict":
            _str(o["key"], w + ".key")
        elif o["key"] is not None:
            _fail(w + ".key", "only loss_dict outputs carry a key")
        if ref["t"] == "node":
            if o["node"] != ref["v"]:
                _fail(w + ".node", "does not match the output node argument")
        elif o["node"] is not None:
            _fail(w + ".node", "must be null for a non-node output")

    model = _obj(doc["model"], "$.model",
                 ("rule", "block_containers", "attention"))
    if model["rule"] not in ("gradient_checkpointing", "repeated_modules",
                             "none"):
        _fail("$.model.rule", f"unknown rule {model['rule']!r}")
    for i, c in enumerate(_list(model["block_containers"],
                                "$.model.block_containers")):
        w = f"$.model.block_containers[{i}]"
        _obj(c, w, ("owner", "container", "block_class", "blocks"))
        for k in ("owner", "container", "block_class"):
            _str(c[k], f"{w}.{k}")
        for b in _list(c["blocks"], w + ".blocks"):
            _str(b, w + ".blocks")
            if not b.startswith(c["container"] + "."):
                _fail(w + ".blocks", f"{b!r} is not inside the container")
    for i, a in enumerate(_list(model["attention"], "$.model.attention")):
        _obj(a, f"$.model.attention[{i}]", ("fqn", "class"))

    ops = _obj(doc["operators"], "$.operators")
    if list(ops) != sorted(ops):
        _fail("$.operators", "entries must be sorted by target")
    for t in targets:
        if t not in ops:
            _fail("$.operators", f"missing entry for {t!r}")
    for t, e in ops.items():
        if t not in targets:
            _fail(f"$.operators[{t}]", "entry for an unused target")
        _operator(t, e, f"$.operators[{t}]")


def t_is_getitem(n: dict[str, Any]) -> bool:
    return n["kind"] == "call_function" and n["target"] == "getitem"

"""What a checkpoint/offload result decided, counted the same way for every
implementation.

Input: node records in format v1 shape (``name``, ``kind``, ``target``,
``backward``, ``outputs`` facts with ``storage`` ids, ``recompute`` policy,
``recomputed_from``) and the names each node reads. Our results come from
``joint-translate --export-joint-json``; the peer's from its FX graph
(peer.records); both keep the original node names.

- **saved**: storages that some backward node reads directly from a forward
  op (not a graph input's storage, not an ``ao`` op's host copy); views of
  one storage count once. **activation bytes** is their size.
- **recomputed**: duplicates created in the backward (``recomputed_from``).
- **offloaded**: ``ao::offload`` ops, and the bytes of their sources.
- **tags**: forward ops per checkpoint policy.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

_ITEMSIZE = {"float32": 4, "float": 4, "bfloat16": 2, "float16": 2,
             "half": 2, "int64": 8, "long": 8, "int32": 4, "int": 4,
             "bool": 1, "uint8": 1, "int8": 1, "float64": 8, "double": 8,
             "int16": 2, "float8_e4m3fn": 1, "float8_e5m2": 1,
             "complex64": 8}


def _dim(d: Any) -> int:
    return int(d["hint"]) if isinstance(d, dict) else int(d)


def fact_extent(f: dict[str, Any]) -> int:
    """Bytes a tensor fact reaches into its storage (offset included)."""
    sizes = [_dim(s) for s in f["sizes"]]
    if any(s == 0 for s in sizes):
        return 0
    strides = [_dim(s) for s in f["strides"]]
    last = _dim(f.get("offset", 0)) + sum((s - 1) * st
                                          for s, st in zip(sizes, strides))
    return (last + 1) * _ITEMSIZE.get(f["dtype"], 4)


def doc_records(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Records of a format v1 document (ours, after joint-opt)."""
    recs = []
    for n in doc["nodes"]:
        if n["kind"] not in ("placeholder", "call_function"):
            continue
        ins: list[tuple[str, int]] = []

        def walk(v: Any) -> None:
            if isinstance(v, dict):
                if v.get("t") == "node":
                    ins.append((v["v"], int(v.get("i", 0) or 0)))
                elif v.get("t") == "list":
                    for x in v["v"]:
                        walk(x)
        for a in n["args"]:
            walk(a)
        for a in n["kwargs"].values():
            walk(a)
        recs.append({"name": n["name"], "kind": n["kind"],
                     "target": n.get("target"),
                     "backward": bool(n.get("backward")), "inputs": ins,
                     "outputs": n.get("outputs") or [],
                     "recompute": n.get("recompute"),
                     "recomputed_from": n.get("recomputed_from")})
    return recs


def _is_ao(target: str | None) -> bool:
    return bool(target) and target.startswith("ao::")


def summarize(recs: list[dict[str, Any]]) -> dict[str, Any]:
    by_name = {r["name"]: r for r in recs}
    storage_bytes: dict[int, int] = {}
    input_storages: set[int] = set()
    for r in recs:
        if _is_ao(r["target"]):
            continue  # host copies and reloads reuse the source's facts
        for f in r["outputs"]:
            if f.get("t") != "tensor" or f.get("storage") is None:
                continue
            s = f["storage"]
            storage_bytes[s] = max(storage_bytes.get(s, 0), fact_extent(f))
            if r["kind"] == "placeholder":
                input_storages.add(s)
    saved: set[int] = set()
    saved_ops: set[str] = set()
    for r in recs:
        if not r["backward"]:
            continue
        for name, idx in r["inputs"]:
            p = by_name.get(name)
            if (p is None or p["backward"] or p["kind"] == "placeholder"
                    or _is_ao(p["target"]) or p["recomputed_from"]):
                continue
            outs = p["outputs"]
            f = outs[idx] if idx < len(outs) else None
            if not f or f.get("t") != "tensor":
                continue
            s = f.get("storage")
            if s is None or s in input_storages:
                continue
            saved.add(s)
            saved_ops.add(name)
    offloads = [r for r in recs if r["target"] == "ao::offload.default"]
    off_bytes = 0
    off_src: list[str] = []
    for r in offloads:
        src = by_name.get(r["inputs"][0][0]) if r["inputs"] else None
        if src is not None:
            off_src.append(src["name"])
            f = src["outputs"][0] if src["outputs"] else {}
            off_bytes += storage_bytes.get(f.get("storage"), 0)
    tags = Counter(r["recompute"] for r in recs
                   if not r["backward"] and r["kind"] == "call_function"
                   and r["recompute"] and not _is_ao(r["target"]))
    return {
        "nodes": len(recs),
        "saved_storages": len(saved),
        "saved_ops": sorted(saved_ops),
        "activation_bytes": sum(storage_bytes[s] for s in saved),
        "recomputed": sum(1 for r in recs if r["recomputed_from"]),
        "recomputed_from": sorted({r["recomputed_from"] for r in recs
                                   if r["recomputed_from"]}),
        "offloaded": len(offloads),
        "offloaded_from": sorted(off_src),
        "offloaded_bytes": off_bytes,
        "tags": dict(tags),
        "policy": {r["name"]: r["recompute"] for r in recs
                   if not r["backward"] and r["kind"] == "call_function"
                   and r["recompute"] and not _is_ao(r["target"])},
        "target": {r["name"]: r["target"] for r in recs},
    }

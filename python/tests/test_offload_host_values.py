"""CPU offload never moves a value that already lives on the host.

The tiny Llama example is traced on the CPU. Relabelled as a ``cuda:0``
graph with one forward value left on ``cpu`` (the attention mask ``where``
of layer 0, as if a small mask were computed on the host), joint-cpu-offload
leaves that value alone: no ``ao`` op reads it, and the memory report charges
no transfer for it, so its offload and reload bytes are exactly the all-CPU
graph's less the mask's. The all-CPU graph (every value on ``cpu``) still
offloads the mask: host values are only skipped next to an accelerator.
"""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

from graph_tools import REPO_ROOT, run_pipeline, tool

HOST_VALUE = "where"
# The mask's storage: [2, 1, 16, 16] bf16.
HOST_BYTES = 2 * 1 * 16 * 16 * 2
OFFLOAD = ("--joint-cpu-offload=min-bytes=1024",)


def _on_device(value: Any, device: str) -> None:
    """Sets every tensor fact's device under `value` to `device`."""
    if isinstance(value, dict):
        if value.get("t") == "tensor" and "device" in value:
            value["device"] = device
        for v in value.values():
            _on_device(v, device)
    elif isinstance(value, list):
        for v in value:
            _on_device(v, device)


def _mixed(doc: dict[str, Any]) -> dict[str, Any]:
    """`doc` on cuda:0 except HOST_VALUE, which stays on the host."""
    out = copy.deepcopy(doc)
    _on_device(out, "cuda:0")
    node = next(n for n in out["nodes"] if n["name"] == HOST_VALUE)
    _on_device(node["outputs"], "cpu")
    return out


def _offload(doc: dict[str, Any], name: str,
             tmp_path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Offloaded nodes and the memory report (JSON) of the result."""
    src = tmp_path / f"{name}.json"
    src.write_text(json.dumps(doc))
    out = run_pipeline(src, OFFLOAD, tmp_path)
    report = subprocess.run(
        [str(tool("joint-opt")), str(out),
         "--joint-memory-report=format=json output=-",
         "-o", "/dev/null"], capture_output=True, text=True, check=True)
    return json.loads(out.read_text())["nodes"], json.loads(report.stdout)


def _is_ao(node: dict[str, Any]) -> bool:
    return (node["target"] or "").startswith("ao::")


def _ao_reads(nodes: list[dict[str, Any]]) -> set[str]:
    """Names of the graph's own nodes (not ao ones) some ao op reads."""
    ao = {n["name"] for n in nodes if _is_ao(n)}
    return {a["v"] for n in nodes if _is_ao(n) for a in n["args"]
            if a.get("t") == "node" and a["v"] not in ao}


def _transfers_of(report: dict[str, Any], value: str) -> list[Any]:
    return [t for t in report["transfers"]
            if t["op"] in (f"ao.offload({value})", f"ao.reload({value})")]


def test_host_value_is_not_offloaded_and_not_charged(tmp_path: Path) -> None:
    doc = json.loads((REPO_ROOT / "examples" / "llama-tiny-bf16.json").read_text())
    host = next(n for n in doc["nodes"] if n["name"] == HOST_VALUE)
    assert host["outputs"][0]["device"] == "cpu"
    assert host["outputs"][0]["sizes"] == [2, 1, 16, 16]

    cpu_nodes, cpu_report = _offload(doc, "all_cpu", tmp_path)
    mixed_nodes, mixed_report = _offload(_mixed(doc), "mixed", tmp_path)

    # The all-CPU graph offloads the mask, one copy each way.
    assert HOST_VALUE in _ao_reads(cpu_nodes)
    assert sorted(t["direction"] for t in _transfers_of(cpu_report, HOST_VALUE)) \
        == ["to_device", "to_host"]
    assert {t["bytes"] for t in _transfers_of(cpu_report, HOST_VALUE)} \
        == {HOST_BYTES}

    # Next to an accelerator the host value is left alone...
    assert HOST_VALUE not in _ao_reads(mixed_nodes)
    assert _transfers_of(mixed_report, HOST_VALUE) == []
    # ...and every other value is offloaded as before.
    assert _ao_reads(mixed_nodes) == _ao_reads(cpu_nodes) - {HOST_VALUE}
    assert mixed_report["cost"]["offload_bytes"] \
        == cpu_report["cost"]["offload_bytes"] - HOST_BYTES
    assert mixed_report["cost"]["reload_bytes"] \
        == cpu_report["cost"]["reload_bytes"] - HOST_BYTES
    assert mixed_report["offloaded_bytes"] \
        == cpu_report["offloaded_bytes"] - HOST_BYTES

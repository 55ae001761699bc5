"""bench/fxdoc.py: other tools' FX joint graphs priced by our memory report.

The planner bench writes the peer's and min-cut's transformed FX graphs back
to format v1; a graph that goes FX -> document -> joint-memory-report must
be priced exactly like the document it came from, ao calls with defaulted
trailing arguments included (torchtitan leaves them out).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from graph_tools import REPO_ROOT, run_pipeline, tool
from joint_mlir import ao
from joint_mlir.format import read_document, write_document
from joint_mlir.fx import build_graph_module

sys.path.insert(0, str(REPO_ROOT / "bench"))
import fxdoc  # noqa: E402


def price(path: Path, tmp: Path) -> dict[str, Any]:
    out = tmp / (path.name + ".report.json")
    subprocess.run([str(tool("joint-opt")), str(path),
                    f"--joint-memory-report=format=json output={out}",
                    "-o", "/dev/null"], check=True, capture_output=True)
    r = json.loads(out.read_text())
    return {"peak": r["peak_bytes"], "act": r["activation_bytes"],
            "flops": r["cost"]["flops"], "recompute": r["cost"][
                "recompute_flops"], "step": r["cost"]["step_seconds"],
            "moved": r["cost"]["offload_bytes"]}


def test_round_trip_prices_the_same(tmp_path: Path) -> None:
    src = REPO_ROOT / "examples" / "llama-tiny-fp32.json"
    doc = read_document(str(src))
    gm = build_graph_module(doc)
    got = fxdoc.document_of(gm, doc, doc["name"], lambda n: None)
    assert [n["name"] for n in got["nodes"]] == [n["name"]
                                                 for n in doc["nodes"]]
    # Storage sharing re-derived by FakeTensorProp matches the trace's.
    assert [[o.get("storage") for o in n["outputs"]] for n in got["nodes"]] \
        == [[o.get("storage") for o in n["outputs"]] for n in doc["nodes"]]
    out = tmp_path / "rt.json"
    write_document(got, str(out))
    assert price(out, tmp_path) == price(src, tmp_path)


def test_offloaded_graph_with_short_ao_calls(tmp_path: Path) -> None:
    """ao.wait_tensor(t, keepalive) as torchtitan writes it (last_use left
    to its default) is spelled out, read by joint-opt and priced like the
    three-argument form; recomputed_from marks remat duplicates."""
    src = REPO_ROOT / "examples" / "llama-tiny-fp32.json"
    planned = run_pipeline(src, [
        "--joint-tag-recompute-policy=mode=full layer-indices=1",
        "--joint-cpu-offload=min-bytes=1024", "--joint-remat"], tmp_path)
    doc = read_document(str(planned))
    want = price(planned, tmp_path)
    assert want["moved"] > 0 and want["recompute"] > 0
    # The peer's graphs call torch.ops.ao (its fake kernels run anywhere);
    # the builder picks the CPU fallback here, so put the ops back.
    ops = ao.torch_ao_ops()
    if ops is None:
        pytest.skip("this torch has no torch.ops.ao")
    gm = build_graph_module(doc, ao_impl="fallback")
    back = {ao.fallback_offload: ops["ao::offload.default"],
            ao.fallback_reload: ops["ao::reload.default"],
            ao.fallback_wait_tensor: ops["ao::wait_tensor.default"]}
    short = 0
    for n in gm.graph.nodes:
        n.target = back.get(n.target, n.target)
        if n.target is ops["ao::wait_tensor.default"] and n.args[-1] is None:
            n.args = n.args[:-1]
            short += 1
    assert short > 0
    dups = {n["name"]: n["recomputed_from"] for n in doc["nodes"]
            if n.get("recomputed_from")}
    got = fxdoc.document_of(gm, doc, doc["name"],
                            lambda n: dups.get(n.name))
    out = tmp_path / "short.json"
    write_document(got, str(out))
    assert price(out, tmp_path) == want


def test_joint_of_partition_stitches_forward_and_backward() -> None:
    """A forward returning (loss, saved) and a backward taking (saved,
    tangent): one graph, the tangent is ones_like(loss), backward nodes
    named like forward nodes are recomputes."""
    fw, bw = torch.fx.Graph(), torch.fx.Graph()
    x = fw.placeholder("primals_1")
    y = fw.call_function(torch.ops.aten.sin.default, (x,))
    loss = fw.call_function(torch.ops.aten.sum.default, (y,))
    fw.output((loss, x))
    sx = bw.placeholder("x")
    t = bw.placeholder("tangents_1")
    rec = bw.call_function(torch.ops.aten.sin.default, (sx,))
    assert rec.name == y.name  # the partitioner keeps forward names
    cos = bw.call_function(torch.ops.aten.cos.default, (sx,))
    g = bw.call_function(torch.ops.aten.mul.Tensor, (cos, t))
    g2 = bw.call_function(torch.ops.aten.add.Tensor, (g, rec))
    bw.output((g2,))
    gm, recomputed = fxdoc.joint_of_partition(
        torch.fx.GraphModule(torch.nn.Module(), fw),
        torch.fx.GraphModule(torch.nn.Module(), bw), ["arg0_1"], [0])
    nodes = list(gm.graph.nodes)
    assert [n.op for n in nodes] == ["placeholder"] + ["call_function"] * 7 \
        + ["output"]
    assert nodes[3].target is torch.ops.aten.ones_like.default
    assert nodes[3].args == (nodes[2],)
    assert [n.meta["autograd_backward"] for n in nodes[1:-1]] == \
        [False, False, True, True, True, True, True]
    assert recomputed == {nodes[4].name: y.name}
    out = nodes[-1].args[0]
    assert out[0] is nodes[2] and out[1] is nodes[7]
    r = gm(torch.tensor([0.5, 1.0]))
    assert torch.equal(r[1], torch.cos(torch.tensor([0.5, 1.0]))
                       + torch.sin(torch.tensor([0.5, 1.0])))


if __name__ == "__main__":
    pytest.main([__file__, "-q"])

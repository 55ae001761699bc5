"""Block containers the exporter records: the outermost repeated container
wins, so a list nested inside a block (an MoE layer's experts) is part of
that block, never a block list of its own (ModuleList, Sequential and
ModuleDict nesting); the passes count those blocks."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import torch
from torch import nn

from graph_tools import tool
from joint_mlir import trace_joint_graph
from joint_mlir.model_structure import discover_structure

HIDDEN = 8
EXPERTS = 4


class Expert(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = nn.Linear(HIDDEN, 2 * HIDDEN)
        self.down = nn.Linear(2 * HIDDEN, HIDDEN)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(torch.relu(self.up(x)))


def _experts(kind: str) -> nn.Module:
    experts = [Expert() for _ in range(EXPERTS)]
    if kind == "ModuleDict":
        return nn.ModuleDict({f"e{i}": e for i, e in enumerate(experts)})
    if kind == "Sequential":
        return nn.Sequential(*experts)
    return nn.ModuleList(experts)


class MoE(nn.Module):
    """Dense MoE: every expert runs, weighted by the router's softmax."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.router = nn.Linear(HIDDEN, EXPERTS)
        self.experts = _experts(kind)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = torch.softmax(self.router(x), dim=-1)
        experts = (self.experts.values() if isinstance(self.experts,
                                                       nn.ModuleDict)
                   else self.experts)
        return sum(w[..., i:i + 1] * e(x) for i, e in enumerate(experts))


class Layer(nn.Module):
    def __init__(self, kind: str) -> None:
        super().__init__()
        self.proj = nn.Linear(HIDDEN, HIDDEN)
        self.mlp = MoE(kind)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + torch.tanh(self.proj(x))
        return x + self.mlp(x)


class Model(nn.Module):
    """Two layers in an outer container of ``outer`` kind, each holding its
    experts in an inner container of ``inner`` kind."""

    def __init__(self, outer: str, inner: str) -> None:
        super().__init__()
        if outer == "ModuleDict":
            self.layers = nn.ModuleDict({"0": Layer(inner), "1": Layer(inner)})
        elif outer == "Sequential":
            self.layers = nn.Sequential(Layer(inner), Layer(inner))
        else:
            self.layers = nn.ModuleList([Layer(inner), Layer(inner)])
        self.head = nn.Linear(HIDDEN, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        layers = (self.layers.values() if isinstance(self.layers,
                                                     nn.ModuleDict)
                  else self.layers)
        for layer in layers:
            x = layer(x)
        return self.head(x)


KINDS = ["ModuleList", "Sequential", "ModuleDict"]


@pytest.mark.parametrize("inner", KINDS)
@pytest.mark.parametrize("outer", KINDS)
def test_outermost_container_wins(outer: str, inner: str) -> None:
    s = discover_structure(Model(outer, inner))
    assert s.rule == "repeated_modules"
    assert [(c.owner, c.container, c.block_class, c.blocks)
            for c in s.containers] == [
        ("", "layers", "Layer", ["layers.0", "layers.1"])]


def test_sibling_containers_are_both_kept() -> None:
    """Two lists side by side (an encoder and a decoder) are two containers;
    only nesting inside a block merges."""
    class EncDec(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.enc = nn.ModuleList([Layer("ModuleList") for _ in range(2)])
            self.dec = nn.ModuleList([Expert() for _ in range(3)])

    s = discover_structure(EncDec())
    assert [(c.container, c.blocks) for c in s.containers] == [
        ("enc", ["enc.0", "enc.1"]), ("dec", ["dec.0", "dec.1", "dec.2"])]


def test_list_of_lists_takes_the_outer_entries() -> None:
    m = nn.Module()
    m.stages = nn.ModuleList(
        [nn.ModuleList([nn.Linear(2, 2) for _ in range(3)]) for _ in range(2)])
    s = discover_structure(m)
    assert [(c.container, c.block_class, c.blocks) for c in s.containers] == [
        ("stages", "ModuleList", ["stages.0", "stages.1"])]


def test_gradient_checkpointing_owner_inside_a_block_is_not_a_container(
        ) -> None:
    class Inner(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.gradient_checkpointing = False
            self.layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(2)])

    class Outer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.gradient_checkpointing = False
            self.layers = nn.ModuleList([Inner(), Inner()])

    s = discover_structure(Outer())
    assert s.rule == "gradient_checkpointing"
    assert [c.container for c in s.containers] == ["layers"]


def _trace(tmp_path: Path, outer: str = "ModuleList",
           inner: str = "ModuleList") -> Path:
    torch.manual_seed(0)
    jg = trace_joint_graph(Model(outer, inner), lambda m, x: m(x).sum(),
                           {"x": torch.randn(4, HIDDEN)}, name="nested")
    path = tmp_path / "nested.json"
    jg.save(str(path))
    return path


def _report(path: Path, flags: list[str], tmp_path: Path) -> dict:
    rep = tmp_path / "report.json"
    r = subprocess.run(
        [str(tool("joint-opt")), *flags,
         f"--joint-memory-report=format=json output={rep}", str(path),
         "-o", "/dev/null"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(rep.read_text())


def _layers_only(path: Path, tmp_path: Path) -> Path:
    doc = json.loads(path.read_text())
    doc["model"]["block_containers"] = [
        c for c in doc["model"]["block_containers"]
        if c["container"] == "layers"]
    out = tmp_path / "layers-only.json"
    out.write_text(json.dumps(doc))
    return out


def _nested_listed(path: Path, tmp_path: Path) -> Path:
    """The document an exporter without the outermost rule wrote: the
    experts lists as containers of their own."""
    doc = json.loads(path.read_text())
    doc["model"]["block_containers"] += [
        {"owner": f"layers.{i}.mlp", "container": f"layers.{i}.mlp.experts",
         "block_class": "Expert",
         "blocks": [f"layers.{i}.mlp.experts.{e}" for e in range(EXPERTS)]}
        for i in range(2)]
    out = tmp_path / "nested-listed.json"
    out.write_text(json.dumps(doc))
    return out


@pytest.mark.parametrize("listed", ["exported", "nested-listed"])
def test_full_checkpointing_checkpoints_the_layers(tmp_path: Path,
                                                   listed: str) -> None:
    """Full checkpointing of the nested model (as exported, and from a
    document listing the experts as containers too) is the checkpointing of
    the two layers."""
    path = _trace(tmp_path)
    doc = json.loads(path.read_text())
    assert [c["container"] for c in doc["model"]["block_containers"]] == [
        "layers"]
    src = path if listed == "exported" else _nested_listed(path, tmp_path)
    flags = ["--joint-activation-checkpoint=mode=full"]
    got = _report(src, flags, tmp_path)
    want = _report(_layers_only(path, tmp_path), flags, tmp_path)
    assert got["activation_bytes"] == want["activation_bytes"]
    assert got["peak_bytes"] == want["peak_bytes"]


@pytest.mark.parametrize("listed", ["exported", "nested-listed"])
def test_layer_indices_count_the_outer_blocks(tmp_path: Path,
                                              listed: str) -> None:
    path = _trace(tmp_path)
    src = path if listed == "exported" else _nested_listed(path, tmp_path)
    r = subprocess.run(
        [str(tool("joint-opt")),
         "--joint-activation-checkpoint=mode=full layer-indices=2", str(src),
         "-o", "/dev/null"], capture_output=True, text=True)
    assert r.returncode == 1
    assert ("joint-tag-recompute-policy: layer-indices: index 2 is out of "
            "range; the largest valid index is 1 (2 blocks)") in r.stderr

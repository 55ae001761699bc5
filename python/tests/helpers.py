"""Small models and helpers shared by the tests."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn


def trace_doc(model: nn.Module, train_fn: Any, inputs: dict[str, Any],
              **kw: Any) -> tuple[Any, dict[str, Any]]:
    from joint_mlir import trace_joint_graph, validate_document

    jg = trace_joint_graph(model, train_fn, inputs, **kw)
    doc = jg.to_json_dict()
    validate_document(doc)
    return jg, doc


def by_name(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n["name"]: n for n in doc["nodes"]}


def calls(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [n for n in doc["nodes"] if n["kind"] == "call_function"]


class TiedLM(nn.Module):
    """Embedding and output projection share one weight."""

    def __init__(self, vocab: int = 16, hidden: int = 8) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)
        self.lm_head.weight = self.embed.weight

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.lm_head(torch.tanh(self.proj(self.embed(ids))))


def lm_loss(model: nn.Module, ids: torch.Tensor) -> torch.Tensor:
    logits = model(ids)
    return nn.functional.cross_entropy(logits.flatten(0, 1), ids.flatten())


def assert_compiled_matches_torch(doc: dict[str, Any], path: Any,
                                  monkeypatch: Any,
                                  opt_level: int | None = None) -> None:
    """Writes ``doc`` to ``path``, runs one step on torch and on the
    ``mlir-cpu`` backend (compiled through the build's step cache) and
    asserts every output within the compiled tolerances (compare_scaled)."""
    import json

    from graph_tools import build_dir, tool
    from joint_mlir.executor import compare_scaled, format_differences, run

    tool("joint-compile")
    monkeypatch.setenv("JOINT_MLIR_CACHE", str(build_dir() / "joint_mlir_cache"))
    path.write_text(json.dumps(doc))
    want = run(str(path), seed=0)
    got = run(str(path), seed=0, backend="mlir-cpu", opt_level=opt_level)
    diffs = compare_scaled(got, want)
    assert diffs and all(d.ok for d in diffs), format_differences(diffs)

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

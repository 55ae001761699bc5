"""A model with dropout 0.1 under full checkpointing with ``replay-random``:
the remat pass recomputes ``native_dropout`` in the backward instead of
saving its mask, and the recomputed op replays the forward's draw.

- In torch (joint_mlir.fx replays the generator state), the checkpointed
  step is bit-identical to the unchanged one.
- Compiled for the CPU (the clone reuses its original's Philox draw index),
  the checkpointed step is bit-identical to the compiled unchanged step for
  the same seed, the masks really are drawn (another seed changes the
  loss), and its peak is below that of the checkpointed step that saves
  the masks.
- Without ``replay-random`` the mask stays saved (the cases' C4 rule).
- The same for a real model: tiny BERT with hidden dropout 0.1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from torch import nn

from graph_tools import build_dir, tool
from joint_mlir import trace_joint_graph
from joint_mlir.executor import materialize, not_bitwise, run
from joint_mlir.mlir_cpu import CompiledStep, compile_graph, run_compiled
from joint_mlir.pipeline import run_pipeline


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.drop = nn.Dropout(0.1)
        self.fc2 = nn.Linear(64, 32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(self.drop(torch.tanh(self.fc1(x))))


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.layers = nn.ModuleList([Block(), Block()])
        self.head = nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return (self.head(x) ** 2).mean()


@pytest.fixture(scope="module")
def docs() -> dict[str, dict]:
    doc = trace_joint_graph(Net(), lambda m, x: m(x),
                            {"x": torch.randn(256, 32)}).to_json_dict()
    out = {"plain": doc}
    for name, opts in (("replayed", "mode=full replay-random=true"),
                       ("saved", "mode=full")):
        out[name] = run_pipeline(
            doc, f"joint-activation-checkpoint{{{opts}}}",
            report=False).document
    return out


def _dropouts(doc: dict) -> list[dict]:
    return [n for n in doc["nodes"]
            if n.get("target") == "aten::native_dropout.default"]


def test_dropout_is_recomputed_only_with_replay(docs: dict) -> None:
    assert len(_dropouts(docs["plain"])) == 2
    clones = [n for n in _dropouts(docs["replayed"])
              if n.get("recomputed_from")]
    originals = {n["name"] for n in _dropouts(docs["plain"])}
    assert len(clones) == 2 and all(n["backward"] for n in clones)
    assert {n["recomputed_from"] for n in clones} == originals
    # The backward reads the clones' masks, not the forward's.
    clone_names = {n["name"] for n in clones}
    masks = [n for n in docs["replayed"]["nodes"]
             if n.get("target") == "aten::native_dropout_backward.default"]
    getitems = {n["name"]: n["args"][0]["v"] for n in docs["replayed"]["nodes"]
                if n.get("target") == "getitem"}
    for m in masks:
        src = m["args"][1]["v"]
        assert getitems.get(src, src) in clone_names, m["name"]
    assert not any(n.get("recomputed_from") for n in _dropouts(docs["saved"]))


def test_replayed_step_is_bitwise_in_torch(docs: dict) -> None:
    want = run(docs["plain"], seed=3)
    for name in ("replayed", "saved"):
        got = run(docs[name], seed=3)
        assert not_bitwise(got, want) is None, (name, not_bitwise(got, want))


def _compiled(doc: dict, tmp_path: Path, name: str) -> CompiledStep:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc))
    return CompiledStep(compile_graph(path))


def test_compiled_remat_replays_the_mask(docs: dict, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    tool("joint-compile")
    monkeypatch.setenv("JOINT_MLIR_CACHE",
                       str(build_dir() / "joint_mlir_cache"))
    plain = _compiled(docs["plain"], tmp_path, "plain")
    replayed = _compiled(docs["replayed"], tmp_path, "replayed")
    saved = _compiled(docs["saved"], tmp_path, "saved")
    assert plain.rng_draws == replayed.rng_draws == saved.rng_draws == 2

    def step(s: CompiledStep, seed: int):
        state, inputs = materialize(docs["plain"], seed=0)
        return run_compiled(s, state, inputs, rng_seed=seed)

    want = step(plain, 5)
    got = step(replayed, 5)
    assert not_bitwise(got, want) is None, not_bitwise(got, want)
    other = step(plain, 6)
    assert not torch.equal(other.loss, want.loss)
    # Checkpointing lowers the peak; recomputing the masks too lowers it
    # further (the masks are not held from forward to backward).
    assert not_bitwise(step(saved, 5), want) is None
    assert replayed.peak_bytes < saved.peak_bytes < plain.peak_bytes, (
        replayed.peak_bytes, saved.peak_bytes, plain.peak_bytes)


def test_bert_with_hidden_dropout_replays(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    """A real model: tiny BERT with hidden dropout 0.1 (four nn.Dropout
    sites; attention dropout stays 0, SDPA with dropout has no lowering),
    full checkpointing with replay-random, bitwise in torch and compiled."""
    from transformers import BertConfig, BertForMaskedLM

    import model_families

    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=model_families._VOCAB, hidden_size=32,
                     num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=64, max_position_embeddings=64,
                     hidden_dropout_prob=0.1,
                     attention_probs_dropout_prob=0.0)

    def loss(model: nn.Module, input_ids: torch.Tensor,
             labels: torch.Tensor) -> torch.Tensor:
        return model(input_ids=input_ids, labels=labels).loss

    doc = trace_joint_graph(BertForMaskedLM(cfg), loss,
                            model_families._ids()).to_json_dict()
    replayed = run_pipeline(
        doc, "joint-activation-checkpoint{mode=full replay-random=true}",
        report=False).document
    clones = [n for n in _dropouts(replayed) if n.get("recomputed_from")]
    assert len(_dropouts(doc)) == 5 and len(clones) == 4
    assert not_bitwise(run(replayed, seed=2), run(doc, seed=2)) is None

    tool("joint-compile")
    monkeypatch.setenv("JOINT_MLIR_CACHE",
                       str(build_dir() / "joint_mlir_cache"))
    results = []
    for name, d in (("plain", doc), ("replayed", replayed)):
        step = _compiled(d, tmp_path, name)
        state, inputs = materialize(doc, seed=0)
        results.append(run_compiled(step, state, inputs, rng_seed=4))
    assert not_bitwise(results[1], results[0]) is None

"""A remat duplicate of a random op replays the original's draw.

The documents are traced from a small model, then copied by hand the way
the remat pass would: the random op and the op between it and its backward
reader are duplicated (``recomputed_from``) right before that reader, which
then reads the duplicate. Built by :mod:`joint_mlir.fx`, the copy must give
the same bits as the original document and leave torch's global RNG where
the original leaves it (:mod:`joint_mlir.rng`).
"""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import torch

from graph_tools import tool
from helpers import trace_doc
from joint_mlir import fx, rng
from joint_mlir.format import read_document
from joint_mlir.executor import (StepResult, compare, format_differences,
                                 materialize, not_bitwise, run_graph)
from joint_mlir.validate import validate_document
# fc1 -> random mask -> relu -> fc2 -> (..**2).mean(), plus a later random
# op, so the stream after the step depends on every draw.
from test_cases_numerics import Dropout




# The forward chain a remat duplicates: the random op, then what the
# backward reads (the mask).
CHAINS = {"native_dropout": ["native_dropout", "getitem_1"],
          "rand_like": ["rand_like", "gt"]}


def _trace(mode: str) -> dict[str, Any]:
    torch.manual_seed(0)
    _, doc = trace_doc(Dropout(mode), lambda m, x: m(x),
                       {"x": torch.randn(4, 8)})
    return doc


def _refs(v: dict[str, Any]) -> list[dict[str, Any]]:
    if v.get("t") == "node":
        return [v]
    if v.get("t") == "list":
        return [r for x in v["v"] for r in _refs(x)]
    return []


def _remat(doc: dict[str, Any], chain: list[str],
           suffix: str = "_recomputed") -> dict[str, Any]:
    """Copy of ``doc`` with ``chain`` duplicated right before the first
    backward reader of its last node; every backward reader reads the
    duplicate."""
    doc = copy.deepcopy(doc)
    nodes = doc["nodes"]
    byname = {n["name"]: n for n in nodes}
    rename = {c: c + suffix for c in chain}
    storages = [o["storage"] for n in nodes for o in n["outputs"]
                if "storage" in o]
    fresh: dict[int, int] = {}
    clones = []
    for c in chain:
        d = copy.deepcopy(byname[c])
        d.update(name=rename[c], backward=True, recomputed_from=c)
        for a in d["args"] + list(d["kwargs"].values()):
            for r in _refs(a):
                r["v"] = rename.get(r["v"], r["v"])
        for o in d["outputs"]:
            if "storage" in o:
                o["storage"] = fresh.setdefault(
                    o["storage"], max(storages) + 1 + len(fresh))
        clones.append(d)
    readers = [i for i, n in enumerate(nodes) if n["backward"] and any(
        r["v"] == chain[-1] for a in n["args"] + list(n["kwargs"].values())
        for r in _refs(a))]
    assert readers, f"no backward reader of {chain[-1]}"
    for i in readers:
        for a in nodes[i]["args"] + list(nodes[i]["kwargs"].values()):
            for r in _refs(a):
                if r["v"] == chain[-1]:
                    r["v"] = rename[chain[-1]]
    nodes[readers[0]:readers[0]] = clones
    validate_document(doc)
    return doc


def _step(doc: dict[str, Any], seed: int = 0
          ) -> tuple[StepResult, torch.Tensor]:
    """One step with ``seed``, and ``torch.rand(4)`` drawn right after."""
    gm = fx.build_graph_module(doc)
    state, inputs = materialize(doc, seed=seed)
    got = run_graph(gm, state, inputs, seed=seed)
    return got, torch.rand(4)


def _assert_same_bits(a: StepResult, b: StepResult) -> None:
    assert not_bitwise(a, b) is None
    diffs = compare(a, b)
    assert all(d.ok for d in diffs), format_differences(diffs)


@pytest.fixture(scope="module", params=sorted(CHAINS))
def docs(request: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    doc = _trace(request.param)
    return doc, _remat(doc, CHAINS[request.param])


def test_graph_records_state_before_original(docs: Any) -> None:
    doc, remat = docs
    gm = fx.build_graph_module(remat)
    order = list(gm.graph.nodes)
    names = [n.name for n in order]
    random, mask = next(c for c in CHAINS.values() if c[0] in names)
    states = [n for n in order if n.target is rng.rng_state]
    assert [n.name for n in states] == [f"{random}_rng_state"]
    assert names.index(states[0].name) + 1 == names.index(random)
    assert "joint" not in states[0].meta
    orig = order[names.index(random)]
    assert states[0].args == orig.args and states[0].kwargs == orig.kwargs
    clone = order[names.index(random + "_recomputed")]
    assert clone.target is rng.run_with_rng_state
    assert clone.args[:2] == (states[0], orig.target)
    assert clone.meta["joint"]["recomputed_from"] == random
    # The mask's duplicate copies a deterministic op: an ordinary node.
    dup = order[names.index(mask + "_recomputed")]
    assert dup.target is not rng.run_with_rng_state
    # Nodes without duplicates build as before.
    assert not any(n.target in (rng.rng_state, rng.run_with_rng_state)
                   for n in fx.build_graph_module(doc).graph.nodes)


def test_duplicate_is_bitwise_identical(docs: Any) -> None:
    doc, remat = docs
    want, _ = _step(doc)
    got, _ = _step(remat)
    _assert_same_bits(got, want)
    assert (want.grads["fc1.weight"] != 0).any()


def test_without_replay_the_grads_differ(docs: Any, monkeypatch: Any
                                         ) -> None:
    """Negative control: a duplicate built as a plain op draws a new mask."""
    doc, remat = docs
    monkeypatch.setattr(fx._Builder, "_replayed", lambda self: {})
    assert not any(n.target is rng.run_with_rng_state
                   for n in fx.build_graph_module(remat).graph.nodes)
    want, _ = _step(doc)
    got, _ = _step(remat)
    assert not_bitwise(got, want) is None
    bad = {d.name for d in compare(got, want) if not d.ok}
    assert "grad fc1.weight" in bad and "loss" not in bad


def test_global_stream_continues_as_without_replay(docs: Any) -> None:
    doc, remat = docs
    _, want = _step(doc)
    _, got = _step(remat)
    assert torch.equal(got, want)


def test_unrestored_stream_is_detected(docs: Any, monkeypatch: Any) -> None:
    """Negative control: a replay that leaves the generator at the replayed
    draw moves the stream after the step."""
    doc, remat = docs

    def leaky(state: torch.Tensor, op: Any, *args: Any, **kwargs: Any
              ) -> Any:
        torch.set_rng_state(state)
        return op(*args, **kwargs)

    _, want = _step(doc)
    monkeypatch.setattr(rng, "run_with_rng_state", leaky)
    _, got = _step(remat)
    assert not torch.equal(got, want)


def test_one_state_for_several_duplicates() -> None:
    doc = _trace("native_dropout")
    chain = CHAINS["native_dropout"]
    twice = _remat(_remat(doc, chain), [c + "_recomputed" for c in chain],
                   suffix="_again")
    # The second duplicate copies the first; point it at the original.
    for n in twice["nodes"]:
        if n["name"].endswith("_again"):
            n["recomputed_from"] = n["recomputed_from"].removesuffix(
                "_recomputed")
    validate_document(twice)
    gm = fx.build_graph_module(twice)
    assert sum(n.target is rng.rng_state for n in gm.graph.nodes) == 1
    assert sum(n.target is rng.run_with_rng_state
               for n in gm.graph.nodes) == 2
    (want, after), (got, got_after) = _step(doc), _step(twice)
    _assert_same_bits(got, want)
    assert torch.equal(got_after, after)


def test_state_node_name_stays_free() -> None:
    doc = _remat(_trace("native_dropout"), CHAINS["native_dropout"])
    taken = next(n for n in doc["nodes"] if n["name"] == "relu")
    taken["name"] = "native_dropout_rng_state"
    for n in doc["nodes"]:
        for a in n["args"]:
            for r in _refs(a):
                if r["v"] == "relu":
                    r["v"] = "native_dropout_rng_state"
    gm = fx.build_graph_module(doc)
    names = [n.name for n in gm.graph.nodes]
    assert "native_dropout_rng_state_" in names
    assert names.count("native_dropout_rng_state") == 1


def test_duplicate_before_original_is_an_error() -> None:
    doc = _remat(_trace("native_dropout"), CHAINS["native_dropout"])
    nodes = doc["nodes"]
    clone = next(n for n in nodes if n["name"] == "native_dropout_recomputed")
    nodes.remove(clone)
    nodes.insert(next(i for i, n in enumerate(nodes)
                      if n["name"] == "native_dropout"), clone)
    with pytest.raises(fx.LoadError, match="comes before it"):
        fx.build_graph_module(doc)


def test_joint_translate_round_trip_replays(docs: Any, tmp_path: Path
                                            ) -> None:
    """The hand-made copy goes through the C++ side (import, export) and
    still replays bitwise."""
    translate = str(tool("joint-translate"))
    src, mlir, out = (tmp_path / n for n in ("in.json", "g.mlir", "out.json"))
    src.write_text(json.dumps(docs[1]))
    subprocess.run([translate, "--import-joint-json", str(src), "-o",
                    str(mlir)], check=True, capture_output=True)
    subprocess.run([translate, "--export-joint-json", str(mlir), "-o",
                    str(out)], check=True, capture_output=True)
    back = read_document(str(out))
    # (The export spells getitems anew, without recomputed_from.)
    assert {n["name"]: n["recomputed_from"] for n in back["nodes"]
            if "recomputed_from" in n} == {
                n["name"]: n["recomputed_from"] for n in docs[1]["nodes"]
                if "recomputed_from" in n and n["target"] != "getitem"}
    (want, after), (got, got_after) = _step(docs[0]), _step(back)
    _assert_same_bits(got, want)
    assert torch.equal(got_after, after)


# -------------------------------------------------------------------------
# rng_state / run_with_rng_state on the CPU
# -------------------------------------------------------------------------

def test_rng_state_is_the_cpu_generator() -> None:
    torch.manual_seed(3)
    x = torch.zeros(3)
    for args, kwargs in (((x, 0.5), {}), (([1, [x]],), {}), ((), {}),
                         ((3,), {"device": "cpu"}),
                         ((x,), {"device": None})):
        assert torch.equal(rng.rng_state(*args, **kwargs),
                           torch.get_rng_state())


def test_run_with_rng_state_replays_and_restores() -> None:
    torch.manual_seed(3)
    x = torch.zeros(1000)
    state = rng.rng_state(x)
    first = torch.rand_like(x)
    after = torch.get_rng_state()
    again = rng.run_with_rng_state(state, torch.rand_like, x)
    assert torch.equal(again, first)
    assert torch.equal(torch.get_rng_state(), after)
    kw = rng.run_with_rng_state(state, torch.rand, 1000, device="cpu")
    assert torch.equal(kw, first)
    assert torch.equal(torch.get_rng_state(), after)


def test_run_with_rng_state_restores_on_error() -> None:
    torch.manual_seed(3)
    state = rng.rng_state()
    torch.rand(5)
    after = torch.get_rng_state()

    def fails() -> None:
        torch.rand(5)
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        rng.run_with_rng_state(state, fails)
    assert torch.equal(torch.get_rng_state(), after)


def test_other_devices_are_refused() -> None:
    with pytest.raises(ValueError, match="meta"):
        rng.rng_state(torch.empty(2, device="meta"))
    with pytest.raises(ValueError, match="meta"):
        rng.run_with_rng_state(torch.get_rng_state(), torch.rand, 2,
                               device="meta")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_replays_and_restores() -> None:
    x = torch.zeros(1000, device="cuda")
    state = rng.rng_state(x)
    assert torch.equal(state, torch.cuda.get_rng_state(x.device))
    first = torch.rand_like(x)
    after = torch.cuda.get_rng_state(x.device)
    assert torch.equal(rng.run_with_rng_state(state, torch.rand_like, x),
                       first)
    assert torch.equal(torch.cuda.get_rng_state(x.device), after)

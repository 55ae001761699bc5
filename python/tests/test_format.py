"""Format v1: dynamic shapes, operator table, examples, determinism."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn
from torch.utils.checkpoint import CheckpointPolicy

from conftest import REPO_ROOT
from graph_tools import PIPELINES, run_pipeline, skip_unless_available
from helpers import by_name, calls, trace_doc
from joint_mlir import read_document, validate_document
from joint_mlir.format import dumps_document, operator_entry, write_document
from joint_mlir.recipes import build_recipe
from joint_mlir.validate import FormatViolation

EXAMPLES = sorted((REPO_ROOT / "examples").glob("*.json"))


def test_dynamic_dims_give_symbols_with_hints_and_symbolic_strides() -> None:
    r = build_recipe("mlp", layers=1, hidden=8, intermediate=8, vocab=4,
                     batch=3, seq=5, dynamic_seq=True)
    _, doc = trace_doc(r.model, r.train_fn, r.inputs,
                       dynamic_dims=r.dynamic_dims)
    assert len(doc["symbols"]) == 1
    sym = doc["symbols"][0]
    assert sym["hint"] == 5 and sym["min"] == 2 and sym["max"] is None
    assert sorted(sym["sources"]) == ["labels.size()[1]", "x.size()[1]"]
    nodes = by_name(doc)
    x = nodes[doc["inputs"][0]["input"]]["outputs"][0]
    assert x["sizes"] == [3, {"expr": sym["name"], "hint": 5}, 8]
    assert x["strides"][0] == {"expr": f"8*{sym['name']}", "hint": 40}
    symbolic_strides = [
        s for n in calls(doc) for r_ in n["outputs"] if r_["t"] == "tensor"
        for s in r_["strides"] if isinstance(s, dict)]
    assert symbolic_strides and all(s["hint"] is not None
                                    for s in symbolic_strides)
    sym_nodes = [n for n in calls(doc) if n["outputs"]
                 and n["outputs"][0]["t"] == "symint"]
    assert sym_nodes
    assert all(n["outputs"][0]["hint"] is not None for n in sym_nodes)


def test_dynamic_true_symbolizes_every_input_dim() -> None:
    m = nn.Linear(4, 2)
    _, doc = trace_doc(m, lambda mod, x: mod(x).sum(),
                       {"x": torch.randn(3, 5, 4)}, dynamic=True)
    x = by_name(doc)[doc["inputs"][0]["input"]]["outputs"][0]
    # Batch and sequence stay symbolic; the feature dim meets the static
    # weight and is specialized to 4 (its symbol's range collapses).
    assert [s["hint"] for s in x["sizes"][:2]] == [3, 5]
    assert x["sizes"][2] == 4
    ranges = {s["hint"]: (s["min"], s["max"]) for s in doc["symbols"]}
    assert ranges[3] == (2, None) and ranges[5] == (2, None)


def test_unknown_dynamic_path_is_rejected() -> None:
    from joint_mlir import trace_joint_graph
    with pytest.raises(ValueError, match="unknown input"):
        trace_joint_graph(nn.Linear(4, 2), lambda m, x: m(x).sum(),
                          {"x": torch.randn(3, 4)}, dynamic_dims={"y": 0})


def test_operator_table_add_inplace_writes_arg0() -> None:
    e = operator_entry(torch.ops.aten.add_.Tensor)
    assert e["is_mutable"]
    assert e["args"][0]["name"] == "self"
    assert e["args"][0]["is_write"] and e["args"][0]["alias"] == ["a"]
    assert not e["args"][1]["is_write"]
    assert e["returns"][0]["alias"] == ["a"] and e["returns"][0]["is_write"]
    assert e["args"][2] == {"name": "alpha", "type": "Scalar",
                            "kwarg_only": True, "default": "1", "alias": [],
                            "alias_after": [], "is_write": False}


def test_operator_table_split_outputs_alias_input() -> None:
    e = operator_entry(torch.ops.aten.split.Tensor)
    assert not e["is_mutable"]
    assert e["args"][0]["alias"] == ["a"]
    assert e["args"][0]["alias_after"] == ["*"]
    assert e["returns"] == [{"name": "", "type": "Tensor[]", "alias": ["a"],
                             "alias_after": [], "is_write": False}]


def test_operator_table_rand_like_is_nondeterministic_seeded() -> None:
    e = operator_entry(torch.ops.aten.rand_like.default)
    assert "nondeterministic_seeded" in e["tags"]
    assert e["tags"] == sorted(e["tags"])
    dtype = next(a for a in e["args"] if a["name"] == "dtype")
    assert dtype["kwarg_only"] and dtype["type"] == "ScalarType?"
    assert dtype["default"] == "None"


def test_traced_graph_table_covers_inplace_split_and_random_ops() -> None:
    class Odd(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            a, b = self.lin(x).split(2, dim=-1)
            h = a * torch.rand_like(a)
            h = h.clone()
            h.add_(b)
            return h

    _, doc = trace_doc(Odd(), lambda m, x: m(x).sum(),
                       {"x": torch.randn(3, 4)})
    ops = doc["operators"]
    assert "aten::split.Tensor" in ops and "aten::rand_like.default" in ops
    assert "aten::add_.Tensor" in ops
    nodes = by_name(doc)
    split = next(n for n in calls(doc) if n["target"] == "aten::split.Tensor")
    base = nodes[split["args"][0]["v"]]["outputs"][0]["storage"]
    assert [r["storage"] for r in split["outputs"]] == [base, base]
    gets = [n for n in calls(doc) if n["target"] == "getitem"
            and n["args"][0]["v"] == split["name"]]
    assert [g["args"][0]["i"] for g in gets] == [0, 1]
    assert all(g["outputs"][0]["storage"] == base for g in gets)
    add_ = next(n for n in calls(doc) if n["target"] == "aten::add_.Tensor")
    arg0 = nodes[add_["args"][0]["v"]]["outputs"][0]["storage"]
    assert add_["outputs"][0]["storage"] == arg0


def test_recompute_tags_are_exported() -> None:
    from joint_mlir import trace_joint_graph

    jg = trace_joint_graph(nn.Linear(4, 4), lambda m, x: m(x).relu().sum(),
                           {"x": torch.randn(2, 4)})
    relu = next(n for n in jg.graph_module.graph.nodes
                if n.target == torch.ops.aten.relu.default)
    relu.meta["recompute"] = CheckpointPolicy.PREFER_RECOMPUTE
    doc = jg.to_json_dict()
    validate_document(doc)
    assert by_name(doc)[relu.name]["recompute"] == "prefer_recompute"
    assert {n["recompute"] for n in doc["nodes"]} == {None, "prefer_recompute"}


def test_examples_exist() -> None:
    names = {p.name for p in EXAMPLES}
    assert {"llama-tiny-fp32.json", "llama-tiny-bf16.json", "gpt2-tiny.json",
            "mlp.json"} <= names
    for p in EXAMPLES:
        assert p.stat().st_size < 600_000, p.name


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_validates(path: Path) -> None:
    doc = read_document(str(path))
    validate_document(doc)
    assert doc["backward_tags"] == "engine"
    n_bwd = sum(n["backward"] for n in doc["nodes"])
    assert 0 < n_bwd < len(doc["nodes"])
    # The writer's layout is a fixed point.
    assert dumps_document(doc) == path.read_text()


def test_bf16_example_dtypes() -> None:
    doc = read_document(str(REPO_ROOT / "examples" / "llama-tiny-bf16.json"))
    nodes = by_name(doc)
    dts = {nodes[s["input"]]["outputs"][0]["dtype"] for s in doc["state"]
           if s["is_param"]}
    assert dts == {"bfloat16"}
    assert [c["blocks"] for c in doc["model"]["block_containers"]] == [
        ["model.layers.0", "model.layers.1"]]
    assert len(doc["model"]["attention"]) == 2


def test_gzip_roundtrip_is_deterministic(tmp_path: Path) -> None:
    doc = read_document(str(REPO_ROOT / "examples" / "mlp.json"))
    a, b = tmp_path / "a.json.gz", tmp_path / "b.json.gz"
    write_document(doc, str(a))
    write_document(doc, str(b))
    assert a.read_bytes() == b.read_bytes()
    assert gzip.decompress(a.read_bytes()).decode() == dumps_document(doc)
    assert read_document(str(a)) == doc


def test_write_is_whole_or_nothing(tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # A write that fails midway leaves the old file and no temporary; the
    # file that appears has open()'s mode, not the temporary's 0600.
    doc = read_document(str(REPO_ROOT / "examples" / "mlp.json"))
    out = tmp_path / "g.json.gz"
    out.write_bytes(b"old")

    def fail(self: Any, data: bytes) -> int:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(gzip.GzipFile, "write", fail)
        with pytest.raises(OSError, match="No space left"):
            write_document(doc, str(out))
    assert [p.name for p in tmp_path.iterdir()] == ["g.json.gz"]
    assert out.read_bytes() == b"old"
    write_document(doc, str(out))
    assert read_document(str(out)) == doc
    plain = tmp_path / "plain.json"
    plain.touch()
    assert out.stat().st_mode & 0o777 == plain.stat().st_mode & 0o777


def test_reader_rejects_unknown_major_version(tmp_path: Path) -> None:
    doc = read_document(str(REPO_ROOT / "examples" / "mlp.json"))
    doc["version"] = {"major": 2, "minor": 0}
    p = tmp_path / "v2.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="major version 2"):
        read_document(str(p))
    with pytest.raises(FormatViolation, match="major"):
        validate_document(doc)


@pytest.mark.parametrize("mutate,msg", [
    (lambda d: d["nodes"][20]["args"].append({"t": "node", "v": "output", "i": 0}),
     "undefined or later"),
    (lambda d: d["nodes"][0].pop("seq_nr"), "keys"),
    (lambda d: d["nodes"][0]["outputs"][0].update(dtype="fp32"), "dtype"),
    (lambda d: d["operators"].pop("aten::mm.default"), "missing entry"),
    (lambda d: d["outputs"].reverse(), "loss"),
])
def test_validator_catches_broken_documents(mutate, msg: str) -> None:
    doc = read_document(str(REPO_ROOT / "examples" / "mlp.json"))
    validate_document(doc)
    mutate(doc)
    with pytest.raises(FormatViolation, match=msg):
        validate_document(doc)


def test_read_document_errors_name_the_file(tmp_path: Path) -> None:
    from joint_mlir.format import read_document
    src = REPO_ROOT / "examples" / "mlp.json"
    truncated = tmp_path / "t.json.gz"
    truncated.write_bytes(gzip.compress(src.read_bytes())[:300])
    with pytest.raises(ValueError, match=r"t\.json\.gz: not a readable "
                       r"joint-graph JSON file"):
        read_document(str(truncated))
    mlir = tmp_path / "g.mlir"
    mlir.write_text("module {}\n")
    with pytest.raises(ValueError, match="joint-translate --export-joint-json"):
        read_document(str(mlir))
    # joint-translate writes plain JSON whatever the name: sniff, don't trust.
    plain = tmp_path / "p.json.gz"
    plain.write_bytes(src.read_bytes())
    assert read_document(str(plain))["name"] == read_document(str(src))["name"]


# --------------------------------------------------------------------------
# Every graph joint-translate --export-joint-json writes validates
# --------------------------------------------------------------------------

class DataDependent(nn.Module):
    """Rows selected by ``nonzero``: a size with an unbacked symbol ``u0``."""

    def __init__(self) -> None:
        super().__init__()
        self.gradient_checkpointing = False
        self.layers = nn.ModuleList([nn.Linear(8, 8)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        idx = torch.nonzero(x[:, 0] > 0).squeeze(1)
        return self.layers[0](x).index_select(0, idx).sum()


def _unbacked_doc() -> dict:
    _, doc = trace_doc(DataDependent(), lambda m, x: m(x),
                       {"x": torch.randn(6, 8)}, dynamic_dims={"x": 0},
                       name="data-dependent")
    return doc


def test_unbacked_symbols_are_in_the_table() -> None:
    doc = _unbacked_doc()
    table = {s["name"]: s for s in doc["symbols"]}
    assert table["u0"] == {"name": "u0", "hint": None, "min": 0, "max": None,
                           "sources": []}
    mentioned = {s for n in doc["nodes"] for f in n["outputs"]
                 if f["t"] == "tensor" for d in f["sizes"]
                 if isinstance(d, dict) for s in d["expr"].split()
                 if s == "u0"}
    assert mentioned == {"u0"}
    assert [s["name"] for s in doc["symbols"]] == sorted(
        table, key=lambda n: (len(n), n))


def test_validator_rejects_a_symbol_missing_from_the_table() -> None:
    doc = _unbacked_doc()
    doc["symbols"] = [s for s in doc["symbols"] if s["name"] != "u0"]
    with pytest.raises(FormatViolation, match="symbol 'u0' is not in the "
                       "symbols table"):
        validate_document(doc)


def test_validator_checks_recomputed_from() -> None:
    doc = read_document(str(REPO_ROOT / "examples" / "mlp.json"))
    bwd = next(n for n in doc["nodes"] if n["backward"])
    bwd["recomputed_from"] = "addmm"
    validate_document(doc)
    fwd = next(n for n in doc["nodes"]
               if n["kind"] == "call_function" and not n["backward"])
    fwd["recomputed_from"] = "addmm"
    with pytest.raises(FormatViolation, match="recomputed_from"):
        validate_document(doc)
    del fwd["recomputed_from"]
    bwd["recomputed_by"] = "x"
    with pytest.raises(FormatViolation, match="keys"):
        validate_document(doc)


def _traced_sources() -> dict[str, Any]:
    """Graphs traced here (not bundled): the nonzero graph and the numerics
    cases (custom op, in-place op, buffer update, random ops, batch norm)."""
    from test_cases_numerics import CASES

    out: dict[str, Any] = {"data-dependent": _unbacked_doc}
    for name, (factory, fn, inputs, _) in CASES.items():
        out[name] = (lambda f=factory, g=fn, i=inputs, n=name:
                     trace_doc(f(), g, i, name=n)[1])
    return out


TRACED = _traced_sources()
SOURCES = [p.stem for p in EXAMPLES] + list(TRACED)


@pytest.fixture(scope="module")
def pipeline_sources(tmp_path_factory: Any) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("sources")
    out = {p.stem: p for p in EXAMPLES}
    for name, build in TRACED.items():
        torch.manual_seed(0)
        out[name] = tmp / f"{name}.json"
        out[name].write_text(json.dumps(build()))
    return out


@pytest.mark.parametrize("pipeline", PIPELINES, ids=[p.id for p in PIPELINES])
@pytest.mark.parametrize("source", SOURCES)
def test_every_pipeline_output_validates(source: str, pipeline: Any,
                                         pipeline_sources: dict[str, Path],
                                         tmp_path: Path) -> None:
    src = pipeline_sources[source]
    doc = read_document(str(src))
    skip_unless_available(pipeline, doc)
    out = run_pipeline(src, pipeline.flags, tmp_path)
    got = read_document(str(out))
    validate_document(got)
    if (pipeline.id.startswith("ckpt") and src in EXAMPLES
            and "recomputed_from" not in str(got)):
        pytest.fail(f"{pipeline.id}: no node recomputed, so nothing checked")

"""joint-chunk-loss: the linear head and cross-entropy in token chunks.

Every chunked step must match the untransformed step in torch within
rounding (the partial sums change summation order: 1e-5 of max|ref| for
float32, the compiled bf16 tolerance for bf16), with joint-remat replaying
each chunk's logits in the backward so the whole logits tensor is never live:
full checkpointing's modelled peak falls by at least the float32 logits when
they bound it. Heads the rules do not cover stay whole with one remark.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from graph_tools import EXAMPLES
from helpers import trace_doc
from joint_mlir import run, run_pipeline
from joint_mlir.executor import COMPILED_TOLERANCE

EXAMPLE = {p.stem: p for p in EXAMPLES}
FULL = "joint-tag-recompute-policy{mode=full},joint-remat"


class Head(nn.Module):
    """One block (a projection) and a linear head with `vocab` classes."""

    def __init__(self, vocab: int = 6, hidden: int = 4, bias: bool = False,
                 class_weight: bool = False) -> None:
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(hidden, hidden)])
        self.head = nn.Linear(hidden, vocab, bias=bias)
        if class_weight:
            self.register_buffer("weight", torch.linspace(0.5, 2.0, vocab))
        else:
            self.weight = None


def loss_fn(smoothing: float = 0.0, reduction: str = "mean") -> Any:
    def fn(m: Head, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        logits = m.head(torch.tanh(m.layers[0](x)))
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1),
                               weight=m.weight, ignore_index=-100,
                               label_smoothing=smoothing, reduction=reduction)
    return fn


def make_head_doc(smoothing: float = 0.0, reduction: str = "mean",
                  bias: bool = False, class_weight: bool = False,
                  vocab: int = 6, tokens: tuple[int, int] = (2, 3),
                  ignore_all: bool = False) -> dict[str, Any]:
    """The traced joint graph of Head (test/.../Inputs/chunk-loss-head.json
    is make_head_doc() written with json.dump(sort_keys=True))."""
    torch.manual_seed(0)
    y = torch.randint(0, vocab, tokens)
    y[0, -1] = -100
    if ignore_all:
        y[0, :] = -100  # a chunk with no counted token
    _, doc = trace_doc(Head(vocab, bias=bias, class_weight=class_weight),
                       loss_fn(smoothing, reduction),
                       {"x": torch.randn(*tokens, 4), "y": y}, name="head")
    return doc


def _assert_within(ref: Any, got: Any, tol: float, what: str) -> None:
    want, have = ref.named_outputs(), got.named_outputs()
    assert set(want) == set(have)
    for name, e in want.items():
        g = have[name]
        assert g.dtype == e.dtype and g.shape == e.shape, name
        bound = tol * float(e.double().abs().max())
        err = float((g.double() - e.double()).abs().max())
        assert err <= bound, f"{what}: {name} off by {err:.3g} > {bound:.3g}"


def _remarks(out: Any) -> list[str]:
    """joint-chunk-loss's remarks without their source location."""
    return [r.split(" remark: ", 1)[1] for r in out.remarks
            if " remark: joint-chunk-loss: " in r]


def _chunked(doc: Any, chunks: int, after: str = "joint-remat") -> Any:
    pipe = f"joint-chunk-loss{{chunks={chunks}}}" + (f",{after}" if after else "")
    return run_pipeline(doc, pipe)


CASES = {
    "mean": {}, "sum": {"reduction": "sum"}, "smoothing": {"smoothing": 0.1},
    "bias": {"bias": True}, "class-weight": {"class_weight": True},
    "smoothing-sum-bias": {"smoothing": 0.2, "reduction": "sum", "bias": True},
    "ignored-chunk": {"ignore_all": True},
}


@pytest.mark.parametrize("chunks", [2, 4, 6])
@pytest.mark.parametrize("case", list(CASES))
def test_chunked_head_matches_torch(case: str, chunks: int) -> None:
    doc = make_head_doc(**CASES[case])
    out = _chunked(doc, chunks)
    nodes = {n["name"]: n for n in out.document["nodes"]}
    assert f"mm_chunk{chunks - 1}" in nodes or f"addmm_chunk{chunks - 1}" \
        in nodes, sorted(nodes)
    assert not any(n.get("target") == "aten::_log_softmax.default" and
                   n["outputs"][0]["sizes"][0] == 6
                   for n in out.document["nodes"])
    _assert_within(run(doc), run(out.document), 1e-5, case)


def test_remat_replays_each_chunk_and_full_checkpointing_composes() -> None:
    doc = make_head_doc()
    out = _chunked(doc, 3, after=FULL)
    replays = sorted(n["name"] for n in out.document["nodes"]
                     if n["name"].endswith("_recomputed"))
    # The forward values of each chunk that the backward reads are replayed
    # there: the head matmul and the log-softmax, nothing saved whole.
    for i in range(3):
        assert f"mm_chunk{i}_recomputed" in replays
        assert f"_log_softmax_chunk{i}_recomputed" in replays
    _assert_within(run(doc), run(out.document), 1e-5, "chunks+full")


@pytest.mark.parametrize("name", ["llama-tiny-fp32", "gpt2-tiny",
                                  "llama-tiny-bf16"])
def test_examples_match_torch(name: str) -> None:
    doc = str(EXAMPLE[name])
    out = _chunked(EXAMPLE[name], 4, after=FULL)
    assert not any("stays whole" in r for r in out.remarks), out.remarks
    tol = 1e-5 if "bf16" not in name else COMPILED_TOLERANCE[torch.bfloat16]
    _assert_within(run(doc), run(out.document), tol, name)


def test_full_checkpointing_peak_falls_by_the_logits() -> None:
    """A head whose float32 logits (64 tokens x 4096 classes, 1 MiB) bound
    the peak: with 4 chunks, full checkpointing's modelled peak falls by at
    least their size, and the modelled step pays the replayed matmuls."""
    doc = make_head_doc(vocab=4096, tokens=(4, 16))
    logits = 64 * 4096 * 4
    whole = run_pipeline(doc, FULL).report
    chunked = run_pipeline(doc, "joint-chunk-loss{chunks=4}," + FULL).report
    assert whole["peak_bytes"] - chunked["peak_bytes"] >= logits, (
        whole["peak_bytes"], chunked["peak_bytes"])
    assert whole["peak_op"] == "_log_softmax_backward_data"
    assert chunked["cost"]["recompute_flops"] > whole["cost"]["recompute_flops"]


def _logits_returned(m: Head, x: torch.Tensor, y: torch.Tensor) -> Any:
    logits = m.head(torch.tanh(m.layers[0](x))).view(-1, 6)
    return F.cross_entropy(logits, y.view(-1)), {"logits": logits}


def _unreduced(m: Head, x: torch.Tensor, y: torch.Tensor) -> Any:
    logits = m.head(torch.tanh(m.layers[0](x))).view(-1, 6)
    return F.cross_entropy(logits, y.view(-1), reduction="none").mean()


@pytest.mark.parametrize("fn,why", [
    (_logits_returned, "node 'view_2': its value is read outside the loss "
                       "(by 'joint.output')"),
    (_unreduced, "node 'nll_loss_forward': reduction 'none'")],
    ids=["logits-returned", "reduction-none"])
def test_uncovered_head_stays_whole_with_one_remark(fn: Any, why: str) -> None:
    torch.manual_seed(0)
    _, doc = trace_doc(Head(), fn, {"x": torch.randn(2, 3, 4),
                                    "y": torch.randint(0, 6, (2, 3))},
                       name="head")
    out = _chunked(doc, 2, after="")
    assert _remarks(out) == [
        f"joint-chunk-loss: the loss head 'mm' stays whole: {why}"]
    assert [n["name"] for n in out.document["nodes"]] == \
        [n["name"] for n in doc["nodes"]]


def test_chunked_step_compiles_and_matches_torch(tmp_path: Any,
                                                 monkeypatch: Any) -> None:
    """The created slices, concatenation and addmm accumulation lower: the
    chunked step compiled for the CPU matches torch."""
    from helpers import assert_compiled_matches_torch

    doc = make_head_doc(smoothing=0.1, bias=True)
    out = _chunked(doc, 3, after=FULL)
    assert_compiled_matches_torch(out.document, tmp_path / "chunked.json",
                                  monkeypatch)


def test_build_pipeline_places_the_chunks_first() -> None:
    from joint_mlir import OptimizeOptionError
    from joint_mlir.api import build_pipeline

    assert build_pipeline(chunk_loss=4) == "joint-chunk-loss{chunks=4},joint-remat"
    assert build_pipeline(chunk_loss=2, checkpoint="full") == (
        "joint-chunk-loss{chunks=2},joint-tag-recompute-policy{mode=full},"
        "joint-remat")
    assert build_pipeline(chunk_loss=3, budget_gib=40) == (
        "joint-chunk-loss{chunks=3},joint-optimize-memory{budget-gib=40.0}")
    assert build_pipeline(chunk_loss="auto", budget_gb=4) == (
        "joint-optimize-memory{budget-gb=4.0 allow-chunk-loss=true}")
    with pytest.raises(OptimizeOptionError, match="give budget_gb or "
                       "budget_gib too"):
        build_pipeline(chunk_loss="auto")
    for bad in (1, 0, 2.0, True, "4"):
        with pytest.raises(OptimizeOptionError, match="chunk_loss must be an "
                           "int >= 2 \\(token chunks\\) or 'auto'"):
            build_pipeline(chunk_loss=bad)


def test_optimize_with_chunk_loss_matches_eager() -> None:
    from joint_mlir import optimize

    torch.manual_seed(0)
    model = Head(vocab=32, bias=True)
    x, y = torch.randn(2, 8, 4), torch.randint(0, 32, (2, 8))
    fn = loss_fn(smoothing=0.1)
    step = optimize(model, fn, {"x": x, "y": y}, chunk_loss=4,
                    checkpoint="full")
    assert "joint-chunk-loss{chunks=4}" in step.pipeline
    loss = step(x=x, y=y)
    grads = {n: p.grad.clone() for n, p in model.named_parameters()}
    model.zero_grad(set_to_none=True)
    eager = fn(model, x, y)
    eager.backward()
    loss, eager = float(loss), float(eager.detach())
    assert abs(loss - eager) <= 1e-5 * abs(eager)
    for n, p in model.named_parameters():
        scale = float(p.grad.abs().max())
        assert float((grads[n] - p.grad).abs().max()) <= 1e-5 * scale, n


def test_chunked_step_runs_on_the_emulated_cuda_device(
        tmp_path: Any, monkeypatch: Any) -> None:
    """The same chunked step as a CUDA step (slices, cat and the addmm
    accumulation through the GPU pipeline and the cuBLAS shim's reference)
    on the emulated device matches torch."""
    import json

    from graph_tools import build_dir, tool
    from joint_mlir.executor import compare_scaled, format_differences

    tool("joint-compile")
    monkeypatch.setenv("JOINT_MLIR_CACHE", str(build_dir() / "joint_mlir_cache"))
    doc = make_head_doc(smoothing=0.1, bias=True)
    path = tmp_path / "chunked.json"
    path.write_text(_chunked(doc, 3, after=FULL).text)
    diffs = compare_scaled(run(str(path), backend="mlir-cuda-emulated"),
                           run(doc))
    assert diffs and all(d.ok for d in diffs), format_differences(diffs)


def _lowest_peak(doc: Any, before: str = "") -> int:
    """The lowest peak the planner reaches (bytes), from its error."""
    import re

    from joint_mlir import PipelineError

    with pytest.raises(PipelineError) as info:
        run_pipeline(doc, before + "joint-plan-memory{budget-gb=1e-9}")
    m = re.search(r"the lowest modelled peak is (?:[\d.]+ \w+ \()?(\d+) B",
                  str(info.value))
    assert m, str(info.value)
    return int(m.group(1))


def test_planner_chooses_chunks_only_when_allowed() -> None:
    """A budget between the lowest peak of the whole head and that of the
    head in 8 chunks: the planner alone cannot reach it; with
    allow-chunk-loss it plans the chunked graph, says so, and the step
    matches torch within rounding."""
    from joint_mlir import PipelineError

    doc = make_head_doc(vocab=4096, tokens=(4, 16))
    whole = _lowest_peak(doc)
    chunked = _lowest_peak(doc, "joint-chunk-loss{chunks=8},")
    assert chunked < whole
    budget = (whole + chunked) / 2 / 1e9
    with pytest.raises(PipelineError, match="lowest modelled peak"):
        run_pipeline(doc, f"joint-optimize-memory{{budget-gb={budget!r}}}")
    out = run_pipeline(doc, f"joint-optimize-memory{{budget-gb={budget!r} "
                            "allow-chunk-loss=true}")
    import re

    said = [re.fullmatch(
        r"joint-plan-memory: the loss head in ([248]) token chunks "
        r"\(joint-chunk-loss\) plans to [\d.]+ [um]?s per step; whole, no "
        r"plan fits the budget(?: \(graph 'head'\))?", r.split(" remark: ", 1)[1])
        for r in out.remarks if "joint-plan-memory: the loss head" in r]
    assert len(said) == 1 and said[0], out.remarks
    n = int(said[0].group(1))
    names = {n["name"] for n in out.document["nodes"]}
    assert f"mm_chunk{n - 1}" in names and f"mm_chunk{n}" not in names
    assert out.report["peak_bytes"] <= budget * 1e9
    _assert_within(run(doc), run(out.document), 1e-5, "planned chunks")


def test_one_remark_each_for_chunked_already_chunked_and_no_head() -> None:
    doc = make_head_doc()
    once = _chunked(doc, 2, after="")
    assert _remarks(once) == [
        "joint-chunk-loss: the loss head 'mm' in 2 token chunks: 28 ops in "
        "place of 14"]
    # Again, also after the JSON round trip: nothing changes.
    twice = _chunked(once.document, 2, after="")
    assert _remarks(twice) == [
        "joint-chunk-loss: the loss head is already in token chunks (node "
        "'nll_loss_forward_chunk0' reads a slice of the targets); nothing "
        "changed"]
    assert twice.text == once.text

    def mse(m: Head, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return F.mse_loss(m.head(torch.tanh(m.layers[0](x))), y)

    torch.manual_seed(0)
    _, plain = trace_doc(Head(), mse, {"x": torch.randn(2, 3, 4),
                                       "y": torch.randn(2, 3, 6)}, name="head")
    out = _chunked(plain, 2, after="")
    assert _remarks(out) == [
        "joint-chunk-loss: no cross-entropy over a linear head (an "
        "aten::nll_loss_forward over the log-softmax of an mm/addmm); nothing "
        "changed"]


def test_unreachable_budget_names_the_lowest_chunked_floor() -> None:
    """With allow-chunk-loss, a budget no candidate reaches fails naming the
    floor of the most chunks tried, not the whole head's higher one."""
    import re

    from joint_mlir import PipelineError

    doc = make_head_doc(vocab=4096, tokens=(4, 16))
    chunked = _lowest_peak(doc, "joint-chunk-loss{chunks=8},")
    with pytest.raises(PipelineError) as info:
        run_pipeline(doc, "joint-optimize-memory{budget-gb=1e-9 "
                          "allow-chunk-loss=true}")
    m = re.search(r"the lowest modelled peak is (?:[\d.]+ \w+ \()?(\d+) B",
                  str(info.value))
    assert m and int(m.group(1)) == chunked, str(info.value)


def test_run_cli_checks_a_chunked_step_within_the_scaled_tolerance(
        tmp_path: Any) -> None:
    """`python -m joint_mlir.run chunked.json --compare whole.json --scaled`
    passes where the bitwise default (rightly) reports the rounding."""
    import json

    from joint_mlir.cli.run import main

    doc = make_head_doc(smoothing=0.1)
    whole, chunked = tmp_path / "whole.json", tmp_path / "chunked.json"
    whole.write_text(json.dumps(doc))
    chunked.write_text(_chunked(doc, 3).text)
    assert main([str(chunked), "--compare", str(whole)]) == 1
    assert main([str(chunked), "--compare", str(whole), "--scaled"]) == 0
    assert main([str(chunked), "--compare", str(whole), "--scaled",
                 "--rtol", "1e-5"]) == 2

"""Third-party model families, tiny configurations.

Each family traces, goes through full and selective checkpointing, and runs
bitwise equal to the untransformed graph (offload scope=attention only
where the family has attention), or refuses with the one-line error
of its case (Mixtral's eager experts: the data-dependent-op refusal). Factories: ``model_families``.
torchtitan is optional (not a project requirement): its families skip
without it.

The model-family matrix: the 14 families of :data:`MATRIX`
compile for the CPU and match torch at identity and under full
checkpointing, build for ``--target=cuda``, and run that CUDA step on the
emulated device within the compiled tolerances. The default suite runs
every family at identity and a representative subset of the other three
columns; ``JOINT_MLIR_FULL_MATRIX=1`` runs every family in every column
(bench/model_matrix/run.py times the whole matrix).
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest

import model_families
from graph_tools import run_pipeline
from joint_mlir import DataDependentError, trace_joint_graph
from joint_mlir.executor import compare, format_differences, run

PIPELINES = {
    "ckpt-full": ("--joint-activation-checkpoint=mode=full",),
    "ckpt-selective": ("--joint-activation-checkpoint=mode=selective",),
    **{f"offload-{s}": (f"--joint-cpu-offload=min-bytes=1024 scope={s}",)
       for s in ("attention", "block", "all")},
    **{f"ckpt-offload-{s}": ("--joint-activation-checkpoint=mode=selective",
                             f"--joint-cpu-offload=min-bytes=1024 scope={s}")
       for s in ("attention", "block", "all")},
}
# Families without an attention module: offload scope=attention refuses them
# by design (it names scope=block / scope=all instead).
NO_ATTENTION = {"resnet"}
NEEDS_TORCHTITAN = pytest.mark.skipif(
    importlib.util.find_spec("torchtitan") is None,
    reason="torchtitan is not installed (optional: pip install --no-deps "
    "torchtitan==0.3.0 spmd_types==0.2.3 tyro docstring-parser typeguard)")


def _check_family(name: str, tmp_path: Path) -> dict[str, Any]:
    model, fn, inputs = getattr(model_families, name)()
    src = tmp_path / f"{name}.json"
    doc = trace_joint_graph(model, fn, inputs).save(str(src))
    base = run(str(src))
    for pid, flags in PIPELINES.items():
        if name in NO_ATTENTION and pid.endswith("attention"):
            continue
        out = run_pipeline(src, flags, tmp_path)
        diffs = compare(run(str(out)), base)
        assert all(d.ok for d in diffs), (
            f"{name} {pid}:\n" + format_differences(diffs))
        out.rename(tmp_path / f"{name}.{pid}.json")
    return doc


@pytest.mark.parametrize("name", [
    "olmo", "vit", "mixtral_batched_mm", "resnet", "t5",
    pytest.param("deepseek_v3", marks=NEEDS_TORCHTITAN),
    pytest.param("qwen3_moe", marks=NEEDS_TORCHTITAN),
])
def test_family_checkpoints_bitwise(name: str, tmp_path: Path) -> None:
    doc = _check_family(name, tmp_path)
    if name in ("deepseek_v3", "qwen3_moe"):
        # torchtitan's MoE combines expert outputs with its own operator.
        entry = doc["operators"]["torchtitan::deterministic_scatter_add.default"]
        assert entry["python_module"] == "torchtitan.ops.scatter_add"


def test_mixtral_eager_experts_refuse_in_one_line() -> None:
    model, fn, inputs = model_families.mixtral_eager()
    with pytest.raises(DataDependentError) as info:
        trace_joint_graph(model, fn, inputs)
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith("model.layers.0.mlp.experts (MixtralExperts) at "
                          "modeling_mixtral.py:")
    assert (": aten::nonzero.default has a data-dependent output shape, "
            "which a trace with static shapes cannot represent; trace with "
            "unbacked sizes") in msg
    assert "'grouped_mm' or 'batched_mm'" in msg
    with pytest.raises(DataDependentError) as info:
        trace_joint_graph(model, fn, inputs, unbacked=True)
    msg = str(info.value)
    assert msg.startswith("model.layers.0.mlp.experts (MixtralExperts) at "
                          "modeling_mixtral.py:")
    assert (": branches on the data-dependent condition Eq(u0, 0) (u0 from "
            "aten::nonzero.default), which a trace cannot follow; use a "
            "static-shape implementation") in msg


# The matrix's 14 families (Mixtral with its static-shape batched_mm experts;
# the eager ones refuse by design, above).
MATRIX = ["llama", "gemma", "phi3", "qwen2", "qwen3", "mistral",
          "mixtral_batched_mm", "gpt_neox", "olmo", "gpt2", "bert", "t5",
          "vit", "resnet"]
FULL_MATRIX = os.environ.get("JOINT_MLIR_FULL_MATRIX") == "1"
# The default suite's share of the slower columns (about 8 s per family
# under full checkpointing on the CPU, 10-30 s per CUDA build on 2 cores):
# a decoder with grouped-query attention and rotary embeddings, the MoE, an
# encoder with gathers, the patch-embedding convolution; for CUDA, the
# encoder and the ResNet-style net's convolutions, batch norm and pooling
# (decoders build for CUDA in test_lowering_cuda and test_emulated_cuda; the
# ResNet's checkpointed graph has its own test below).
_QUICK_CKPT = {"llama", "mixtral_batched_mm", "bert", "vit"}
_QUICK_CUDA = {"bert", "resnet"}
# On the emulated device: the encoder and the ResNet-style net (decoders
# run there in test_emulated_cuda).
_QUICK_EMULATED = {"bert", "resnet"}


@functools.lru_cache(maxsize=None)
def _traced(name: str) -> dict[str, Any]:
    model, fn, inputs = getattr(model_families, name)()
    return trace_joint_graph(model, fn, inputs).to_json_dict()


def traced(name: str) -> dict[str, Any]:
    """The family's traced document, traced once per session."""
    return copy.deepcopy(_traced(name))


@pytest.mark.parametrize("name", MATRIX)
def test_family_compiles_and_matches_torch(name: str, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    """Every family of the matrix compiles for the CPU and matches torch
    within the compiled tolerances, among them those whose ops the lowering
    once lacked: BERT (gather), Phi3 (an empty slice), ViT (convolution and
    its backward), Mixtral (topk, index_put, scatter), the ResNet-style net
    (batch norm in training, max and adaptive average pooling and their
    backwards), T5 (writes into views of its shifted decoder inputs,
    _safe_softmax)."""
    from helpers import assert_compiled_matches_torch
    assert_compiled_matches_torch(traced(name), tmp_path / f"{name}.json",
                                  monkeypatch, opt_level=0)


@pytest.mark.parametrize("name", [
    n for n in MATRIX if FULL_MATRIX or n in _QUICK_CKPT])
def test_family_compiles_under_full_checkpointing(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The family under full checkpointing (its forward recomputed in the
    backward) compiles for the CPU and matches torch on the same
    checkpointed graph."""
    from helpers import assert_compiled_matches_torch
    doc = traced(name)
    src = tmp_path / f"{name}.json"
    src.write_text(json.dumps(doc))
    out = run_pipeline(src, PIPELINES["ckpt-full"], tmp_path)
    ckpt = json.loads(out.read_text())
    assert len(ckpt["nodes"]) > len(doc["nodes"])  # something recomputed
    assert_compiled_matches_torch(ckpt, tmp_path / f"{name}-ckpt.json",
                                  monkeypatch, opt_level=0)


@pytest.mark.parametrize("name", [
    n for n in MATRIX if FULL_MATRIX or n in _QUICK_CUDA])
def test_family_builds_for_cuda(name: str) -> None:
    """The family builds with ``joint-compile --target=cuda`` (build only:
    no GPU is needed), a library with the CUDA step's descriptor."""
    from graph_tools import build_dir, cuda_built, tool
    from joint_mlir.mlir_cpu import compile_graph
    cuda_built()
    tool("joint-compile")
    out = compile_graph(traced(name), target="cuda",
                        cache_dir=build_dir() / "test-step-cache")
    desc = json.loads(Path(str(out) + ".json").read_text())
    assert desc["format"] == "joint-cuda-step"
    assert desc["entry"] == "joint_step"


@pytest.mark.parametrize("name", [
    n for n in MATRIX if FULL_MATRIX or n in _QUICK_EMULATED])
def test_family_runs_on_the_emulated_device(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The family's CUDA step (kernels compiled for the host) runs on the
    CUDA runtime's emulated device and matches torch within the compiled
    tolerances; a race, use after free or refused call would raise."""
    from graph_tools import build_dir, cuda_built, tool
    from joint_mlir.executor import compare_scaled, format_differences
    cuda_built()
    tool("joint-compile")
    monkeypatch.setenv("JOINT_MLIR_CACHE",
                       str(build_dir() / "joint_mlir_cache"))
    src = tmp_path / f"{name}.json"
    src.write_text(json.dumps(traced(name)))
    want = run(str(src), seed=0)
    got = run(str(src), seed=0, backend="mlir-cuda-emulated", opt_level=0)
    diffs = compare_scaled(got, want)
    assert diffs and all(d.ok for d in diffs), format_differences(diffs)


def test_resnet_compiles_under_full_checkpointing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ResNet-style net under full checkpointing (the convolutions, batch
    norms and residual adds of its two blocks recomputed in the backward)
    compiles for the CPU and matches torch on the same checkpointed graph."""
    from helpers import assert_compiled_matches_torch
    model, fn, inputs = model_families.resnet()
    src = tmp_path / "resnet.json"
    trace_joint_graph(model, fn, inputs).save(str(src))
    out = run_pipeline(src, PIPELINES["ckpt-full"], tmp_path)
    doc = json.loads(out.read_text())
    convs = [n for n in doc["nodes"]
             if n["target"] == "aten::convolution.default"]
    assert len(convs) == 6 + 5  # the blocks' five convolutions recomputed
    assert_compiled_matches_torch(doc, tmp_path / "resnet-ckpt.json",
                                  monkeypatch, opt_level=0)

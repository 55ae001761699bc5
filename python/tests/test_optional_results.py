"""Backward operators with ``None`` results.

An aten backward op whose ``output_mask`` leaves a gradient slot off returns
``None`` there: ``convolution_backward`` on the data input or without bias,
the norm backwards without an affine weight or on a user input. Every such
family is traced, exported with the slot as ``{"t": "none"}`` (on the op and
on the getitem that selects it), round-trips through joint-translate, runs in
torch close to eager, and stays bitwise identical through every pipeline.

The families were found by listing every aten schema
(``torch._C._jit_get_all_schemas()``) with an ``output_mask`` /
``grad_input_mask`` argument or an optional (``Tensor?``) return; those that
autograd emits on the CPU are here: convolution_backward,
native_{batch,layer,group}_norm_backward, grid_sampler_{2,3}d_backward.
linear_backward, mkldnn_linear_backward, the cudnn/miopen/mps variants,
_fused_rms_norm_backward (RMSNorm decomposes on the CPU) and the
efficient-attention backwards only occur on other devices; they export the
same way (the writer takes any getitem's result from its producer).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn
from torch.nn import functional as F

from graph_tools import (PIPELINES, assert_close_to_eager, eager_step,
                         require_module, run_pipeline, skip_unless_available,
                         tool)
from helpers import trace_doc
from joint_mlir import compare, read_document, run, validate_document



class OneBlock(nn.Module):
    """The module as the one block of a container (a checkpoint scope)."""

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.gradient_checkpointing = False
        self.layers = nn.ModuleList([inner])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers[0](x)


class GridSample(nn.Module):
    """A learned sampling grid over the data input: no grad for the input."""

    def __init__(self, dims: int = 2) -> None:
        super().__init__()
        self.grid = nn.Parameter(torch.rand(2, *[3] * dims, dims) * 2 - 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.grid_sample(x, self.grid, align_corners=False)


def _loss(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    return model(x).sum()


# name: (module factory, input shape, op, result slots that are None)
FAMILIES: dict[str, tuple[Any, tuple[int, ...], str, tuple[int, ...]]] = {
    "conv2d-on-input": (lambda: nn.Conv2d(4, 4, 3, padding=1), (2, 4, 5, 5),
                        "aten::convolution_backward.default", (0,)),
    "conv2d-no-bias": (lambda: nn.Conv2d(4, 4, 3, padding=1, bias=False),
                       (2, 4, 5, 5), "aten::convolution_backward.default",
                       (0, 2)),
    "conv-transpose1d": (lambda: nn.ConvTranspose1d(4, 4, 3), (2, 4, 5),
                         "aten::convolution_backward.default", (0,)),
    "instance-norm": (lambda: nn.Sequential(nn.Linear(5, 5),
                                            nn.InstanceNorm1d(8)),
                      (2, 8, 5), "aten::native_batch_norm_backward.default",
                      (1, 2)),
    "batch-norm-no-affine": (
        lambda: nn.Sequential(nn.Linear(8, 8),
                              nn.BatchNorm1d(8, affine=False,
                                             track_running_stats=False)),
        (4, 8), "aten::native_batch_norm_backward.default", (1, 2)),
    "batch-norm-no-affine-stats": (
        lambda: nn.Sequential(nn.Linear(8, 8),
                              nn.BatchNorm1d(8, affine=False)),
        (4, 8), "aten::native_batch_norm_backward.default", (1, 2)),
    "layer-norm-on-input": (lambda: nn.Sequential(nn.LayerNorm(8),
                                                  nn.Linear(8, 8)),
                            (4, 8), "aten::native_layer_norm_backward.default",
                            (0,)),
    "layer-norm-no-affine": (
        lambda: nn.Sequential(nn.Linear(8, 8),
                              nn.LayerNorm(8, elementwise_affine=False)),
        (4, 8), "aten::native_layer_norm_backward.default", (1, 2)),
    "group-norm-on-input": (lambda: nn.GroupNorm(2, 8), (4, 8, 3),
                            "aten::native_group_norm_backward.default", (0,)),
    "group-norm-no-affine": (
        lambda: nn.Sequential(nn.Linear(3, 3),
                              nn.GroupNorm(2, 8, affine=False)),
        (4, 8, 3), "aten::native_group_norm_backward.default", (1, 2)),
    "grid-sample-on-input": (GridSample, (2, 3, 4, 4),
                             "aten::grid_sampler_2d_backward.default", (0,)),
    "grid-sample-3d-on-input": (lambda: GridSample(3), (2, 3, 4, 4, 4),
                                "aten::grid_sampler_3d_backward.default",
                                (0,)),
}


@pytest.fixture(scope="module")
def traced() -> dict[str, tuple[nn.Module, dict[str, Any]]]:
    out = {}
    for name, (factory, shape, _, _) in FAMILIES.items():
        torch.manual_seed(0)
        model = OneBlock(factory())
        _, doc = trace_doc(model, _loss, {"x": torch.randn(*shape)}, name=name)
        out[name] = (model, doc)
    return out


def _translate(*args: str) -> None:
    r = subprocess.run([str(tool("joint-translate")), *args],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]


@pytest.mark.parametrize("family", list(FAMILIES))
def test_none_results_are_recorded(family: str, traced: Any) -> None:
    _, doc = traced[family]
    target, slots = FAMILIES[family][2], FAMILIES[family][3]
    ops = [n for n in doc["nodes"] if n["target"] == target]
    assert len(ops) == 1, f"{family}: expected one {target}"
    op = ops[0]
    got = [i for i, r in enumerate(op["outputs"]) if r == {"t": "none"}]
    assert got == list(slots), f"{family}: None slots {got}"
    for n in doc["nodes"]:
        if n["target"] == "getitem" and n["args"][0]["v"] == op["name"]:
            k = n["args"][1]["v"]
            assert n["outputs"] == [op["outputs"][k]], n["name"]


@pytest.mark.parametrize("family", list(FAMILIES))
def test_none_results_roundtrip(family: str, traced: Any,
                                tmp_path: Path) -> None:
    _, doc = traced[family]
    src = tmp_path / "g.json"
    src.write_text(json.dumps(doc))
    mlir, back, mlir2 = (tmp_path / "g.mlir", tmp_path / "back.json",
                         tmp_path / "g2.mlir")
    _translate("--import-joint-json", str(src), "-o", str(mlir))
    text = mlir.read_text()
    op, slots = FAMILIES[family][2], FAMILIES[family][3]
    line = next(ln for ln in text.splitlines() if f'joint.call_function "{op}"' in ln)
    types = line.rsplit(") -> (", 1)[1].rstrip(")").split(", ")
    assert [i for i, t in enumerate(types) if t == "none"] == list(slots), line
    _translate("--export-joint-json", str(mlir), "-o", str(back))
    assert json.loads(back.read_text()) == doc
    _translate("--import-joint-json", str(back), "-o", str(mlir2))
    assert mlir2.read_text() == text


@pytest.mark.parametrize("family", list(FAMILIES))
def test_none_results_run_like_eager(family: str, traced: Any) -> None:
    model, doc = traced[family]
    got = run(doc, seed=0)
    assert_close_to_eager(got, eager_step(model, _loss, doc, seed=0), family)


@pytest.mark.parametrize("pipeline", PIPELINES, ids=[p.id for p in PIPELINES])
@pytest.mark.parametrize("family", list(FAMILIES))
def test_none_results_pipeline_is_bitwise_identical(
        family: str, pipeline: Any, traced: Any, tmp_path: Path) -> None:
    _, doc = traced[family]
    skip_unless_available(pipeline, doc)
    src = tmp_path / f"{family}.json"
    src.write_text(json.dumps(doc))
    out = run_pipeline(src, pipeline.flags, tmp_path)
    validate_document(read_document(str(out)))
    bad = [d for d in compare(run(str(out), seed=0), run(doc, seed=0))
           if not d.ok]
    assert not bad, f"{family} / {pipeline.id}: {bad}"


# --------------------------------------------------------------------------
# The model families of the issue: ViT (patch-embedding conv on the pixels)
# and OLMo (layer norms without weights), tiny configs.
# --------------------------------------------------------------------------

def _vit() -> tuple[nn.Module, Any, dict[str, Any]]:
    from transformers import ViTConfig, ViTForImageClassification
    cfg = ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=64, image_size=16, patch_size=8,
                    num_labels=4, hidden_dropout_prob=0.0,
                    attention_probs_dropout_prob=0.0)
    cfg._attn_implementation = "sdpa"
    return (ViTForImageClassification(cfg),
            lambda m, pixel_values, labels: m(pixel_values=pixel_values,
                                              labels=labels).loss,
            {"pixel_values": torch.randn(2, 3, 16, 16),
             "labels": torch.tensor([1, 2])})


def _olmo() -> tuple[nn.Module, Any, dict[str, Any]]:
    from transformers import OlmoConfig, OlmoForCausalLM
    cfg = OlmoConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     num_key_value_heads=2, intermediate_size=64,
                     vocab_size=64, max_position_embeddings=32,
                     use_cache=False, pad_token_id=0, bos_token_id=1,
                     eos_token_id=2)
    return (OlmoForCausalLM(cfg),
            lambda m, input_ids: m(input_ids=input_ids,
                                   labels=input_ids).loss,
            {"input_ids": torch.randint(0, 64, (2, 8))})


# name: (builder, op with None results)
MODELS = {"vit": (_vit, "aten::convolution_backward.default"),
          "olmo": (_olmo, "aten::native_layer_norm_backward.default")}


@pytest.fixture(scope="module")
def models() -> dict[str, dict[str, Any]]:
    require_module("transformers")
    out = {}
    for name, (build, _) in MODELS.items():
        torch.manual_seed(0)
        model, fn, inputs = build()
        _, out[name] = trace_doc(model, fn, inputs, name=name)
    return out


@pytest.mark.parametrize("pipeline", PIPELINES, ids=[p.id for p in PIPELINES])
@pytest.mark.parametrize("name", list(MODELS))
def test_model_family_pipeline_is_bitwise_identical(
        name: str, pipeline: Any, models: Any, tmp_path: Path) -> None:
    doc = models[name]
    target = MODELS[name][1]
    assert any(n["target"] == target and {"t": "none"} in n["outputs"]
               for n in doc["nodes"]), f"{name}: no None result of {target}"
    skip_unless_available(pipeline, doc)
    src = tmp_path / f"{name}.json"
    src.write_text(json.dumps(doc))
    out = run_pipeline(src, pipeline.flags, tmp_path)
    validate_document(read_document(str(out)))
    bad = [d for d in compare(run(str(out), seed=0), run(doc, seed=0))
           if not d.ok]
    assert not bad, f"{name} / {pipeline.id}: {bad}"

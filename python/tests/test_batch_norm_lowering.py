"""Batch norm through the CPU lowering, against torch (BatchNorm.cpp).

Two small models, each traced in training and in eval mode, in float32 and
bfloat16, compiled (`--backend mlir-cpu`) and compared with the torch backend
on the loss, every gradient and every buffer (the running statistics and
`num_batches_tracked`, updated by the training step) within tol x max|ref|
(1e-5 f32, 1e-2 bf16). The layer in front of batch norm has no bias: its
gradient would be analytically zero (batch norm subtracts the batch mean),
so both backends return rounding noise (~1e-7) that no relative bound can
compare. Convolutions have no lowering yet; the 2-d model feeds BatchNorm2d
from a channels-last Linear instead of a Conv2d.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from torch import nn

from helpers import trace_doc
from joint_mlir import run
from joint_mlir.executor import compare_scaled, format_differences
from safetensors.torch import save_file


class LinearBatchNorm1d(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(10, 12, bias=False)
        self.bn = nn.BatchNorm1d(12)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.fc(x))).square().sum()


class ChannelsBatchNorm2d(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(3, 6, bias=False)
        self.bn = nn.BatchNorm2d(6, momentum=0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.proj(x).permute(0, 3, 1, 2)  # [N, H, W, 3] -> [N, 6, H, W]
        return torch.relu(self.bn(y)).square().mean()


MODELS = {"linear-bn1d": (LinearBatchNorm1d, (8, 10)),
          "channels-bn2d": (ChannelsBatchNorm2d, (2, 5, 4, 3))}


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("mode", ["train", "eval"])
@pytest.mark.parametrize("name", list(MODELS))
def test_batch_norm_matches_torch(name: str, mode: str, dtype: str,
                                  tmp_path: Path) -> None:
    factory, shape = MODELS[name]
    torch.manual_seed(0)
    model = factory().to(getattr(torch, dtype))
    # Non-trivial running statistics, so eval reads real values.
    model.bn.running_mean.uniform_(-0.5, 0.5)
    model.bn.running_var.uniform_(0.5, 2.0)
    model.train(mode == "train")
    x = torch.randn(*shape, dtype=getattr(torch, dtype))
    _, doc = trace_doc(model, lambda m, x: m(x), {"x": x}, name=name)
    targets = {n["target"] for n in doc["nodes"]
               if n["kind"] == "call_function"}
    assert any("batch_norm" in str(t) for t in targets), sorted(targets)
    path = tmp_path / "g.json"
    path.write_text(json.dumps(doc))
    # The model's own state (a materialized running_var could be negative).
    weights = tmp_path / "state.safetensors"
    save_file({k: v.contiguous() for k, v in model.state_dict().items()},
              str(weights))
    want = run(str(path), seed=0, safetensors=str(weights))
    got = run(str(path), seed=0, backend="mlir-cpu", safetensors=str(weights))
    if mode == "train":
        # The step updates the running statistics (step outputs written back).
        for buf in ("bn.running_mean", "bn.running_var"):
            assert not torch.equal(model.state_dict()[buf], got.buffers[buf])
    diffs = compare_scaled(got, want)
    bad = [d for d in diffs if not d.ok]
    assert not bad, format_differences(diffs)

"""Group norm and nearest 2-d upsampling, forward and backward, lowered for
the CPU (convert-joint-to-linalg: Normalization.cpp, Pooling.cpp): a small
conv net with nn.GroupNorm (affine, on 4-d activations and on 2-d [N, C]
features; without affine on a 3-d input; on the step input itself, whose
gradient is not requested), nn.Upsample(scale_factor=2, mode="nearest") and
F.interpolate to non-integer size ratios (down and up) and with a
non-integer scale_factor (torch passes the scales; 1.7 over 5x6 gives 8x10,
whose indices differ from those of the size ratio), traced in f32 and bf16,
compiled and compared with torch within the compiled tolerances: the loss,
the outputs and every gradient (through native_group_norm_backward and
upsample_nearest2d_backward). The bf16 net also runs as a CUDA step on the
emulated device.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from helpers import assert_compiled_matches_torch
from joint_mlir import trace_joint_graph


class _Net(nn.Module):
    def __init__(self, dtype: torch.dtype) -> None:
        super().__init__()
        torch.manual_seed(11)
        self.gn_in = nn.GroupNorm(3, 3).to(dtype)
        self.conv1 = nn.Conv2d(3, 4, 3, padding=1).to(dtype)
        self.gn = nn.GroupNorm(2, 4).to(dtype)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.conv2 = nn.Conv2d(4, 6, 1).to(dtype)
        self.gn_plain = nn.GroupNorm(3, 6, affine=False).to(dtype)
        self.gn_flat = nn.GroupNorm(2, 6).to(dtype)
        with torch.no_grad():
            for m in (self.gn_in, self.gn, self.gn_flat):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor
                ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        y = self.gn(torch.relu(self.conv1(self.gn_in(x))))  # [2, 4, 5, 6]
        up = self.up(y)  # [2, 4, 10, 12]
        down = F.interpolate(up, size=(7, 9), mode="nearest")
        wide = F.interpolate(y, size=(8, 13), mode="nearest")
        scaled = F.interpolate(y, scale_factor=1.7, mode="nearest")  # 8x10
        z = self.conv2(down)  # [2, 6, 7, 9]
        plain = self.gn_plain(z.flatten(2))  # [2, 6, 63], no weight/bias
        flat = self.gn_flat(z.mean((2, 3)))  # [2, 6]
        loss = ((plain.float() ** 3).mean() + wide.float().tanh().sum()
                + (up.float() ** 3).mean() + (scaled.float() ** 2).sum()
                + (flat.float() ** 3).sum())
        return loss, {"y": y, "down": down, "wide": wide, "scaled": scaled,
                      "plain": plain, "flat": flat}


def _trace(dtype: torch.dtype, channels_last: bool = False) -> dict:
    g = torch.Generator().manual_seed(2)
    x = torch.randn(2, 3, 5, 6, generator=g).to(dtype)
    model = _Net(dtype)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
        model = model.to(memory_format=torch.channels_last)
    return trace_joint_graph(model, lambda m, **kw: m(**kw),
                             {"x": x}).to_json_dict()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16],
                         ids=["f32", "bf16"])
def test_groupnorm_upsample_match_torch(dtype: torch.dtype, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch
                                        ) -> None:
    doc = _trace(dtype)
    targets = [n["target"] for n in doc["nodes"]]
    assert targets.count("aten::native_group_norm.default") == 4
    assert targets.count("aten::native_group_norm_backward.default") == 4
    assert targets.count("aten::upsample_nearest2d.default") == 4
    assert targets.count("aten::upsample_nearest2d_backward.default") == 4
    assert_compiled_matches_torch(doc, tmp_path / "gn_up.json", monkeypatch)


def test_channels_last_matches_torch(tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The lowerings see values, not layouts: a channels-last input and
    model (NHWC strides in the trace) give torch's results too."""
    doc = _trace(torch.float32, channels_last=True)
    up = next(n for n in doc["nodes"]
              if n["target"] == "aten::upsample_nearest2d.default")
    assert up["outputs"][0]["strides"] == [480, 1, 48, 4]
    assert_compiled_matches_torch(doc, tmp_path / "gn_up_cl.json",
                                  monkeypatch)


def test_groupnorm_upsample_on_the_emulated_cuda_device(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from graph_tools import build_dir, tool
    from joint_mlir.executor import compare_scaled, format_differences, run

    tool("joint-compile")
    monkeypatch.setenv("JOINT_MLIR_CACHE",
                       str(build_dir() / "joint_mlir_cache"))
    path = tmp_path / "gn-up-bf16.json"
    path.write_text(json.dumps(_trace(torch.bfloat16)))
    want = run(str(path), seed=0)
    got = run(str(path), seed=0, backend="mlir-cuda-emulated")
    diffs = compare_scaled(got, want)
    assert diffs and all(d.ok for d in diffs), format_differences(diffs)

"""joint-tag-cpu-offload keeps on the device the last block's storages whose
reload cannot hide behind the backward compute before their first reader.
A multi-result op (LayerNorm: output, mean, rstd) with one such kept storage
and another selected one stays untagged: tagging it would offload the kept
storage too. Before, the remark read "selected 17 of 16 activation(s)"."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from graph_tools import tool
from joint_mlir import trace_joint_graph


class _Block(nn.Module):
    def __init__(self, d: int = 48) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.up = nn.Linear(d, 4 * d)
        self.drop = nn.Dropout(0.1)
        self.down = nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.drop(self.down(F.gelu(self.up(self.ln(x)))))


class _Net(nn.Module):
    def __init__(self, d: int = 48) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.inp = nn.Linear(16, d)
        self.layers = nn.ModuleList([_Block(d) for _ in range(3)])
        self.edrop = nn.Dropout(0.2)
        self.head = nn.Linear(d, 5)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        h = self.edrop(self.inp(x))
        for layer in self.layers:
            h = layer(h)
        return F.cross_entropy(self.head(h).flatten(0, 1), y.flatten())


def test_kept_storage_vetoes_its_multi_result_op(tmp_path: Path) -> None:
    doc = trace_joint_graph(_Net(), lambda m, x, y: m(x, y),
                            {"x": torch.randn(64, 32, 16),
                             "y": torch.randint(0, 5, (64, 32))}
                            ).to_json_dict()
    src = tmp_path / "net.json"
    src.write_text(json.dumps(doc))
    out = tmp_path / "out.mlir"
    r = subprocess.run([str(tool("joint-opt")), str(src),
                        "--joint-tag-cpu-offload=scope=block min-bytes=1024",
                        "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    m = re.search(r"selected (\d+) of (\d+) activation\(s\).*; (\d+) of the "
                  r"last block kept on the device", r.stderr)
    assert m, r.stderr[-2000:]
    selected, candidates, kept = map(int, m.groups())
    assert kept > 0 and selected <= candidates, m.group(0)
    # No LayerNorm of the last block is offloaded (its output is kept).
    last = [line for line in out.read_text().splitlines()
            if '"aten::native_layer_norm.default"' in line
            and '#joint.module<"layers.2"' in line]
    assert last and not any("must_cpu_offload" in line for line in last)

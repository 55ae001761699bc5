"""``python -m joint_mlir.plot``: lines, labels, boundary marks and errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PYTHON_DIR, REPO_ROOT
from graph_tools import require_module, tool

require_module("matplotlib")

from joint_mlir.cli import plot  # noqa: E402


def _report(label: str, device: list[int], boundary: int | None) -> dict:
    return {"format": "joint-memory-report", "version": 1, "graph": "g",
            "label": label, "boundary_index": boundary,
            "peak_bytes": max(device),
            "timeline": {"op": [f"op{i}" for i in range(len(device))],
                         "device_bytes": device, "host_bytes": [0] * len(device)}}


def _write(tmp_path: Path, name: str, doc: dict) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_one_line_per_report_with_label_and_boundary(tmp_path):
    base = _write(tmp_path, "base.json",
                  _report("baseline", [1 << 20, 3 << 20, 2 << 20], 1))
    remat = _write(tmp_path, "remat.json", _report("", [1 << 20, 2 << 20], 1))
    reports = [(p, plot.load_report(p)) for p in (base, remat)]
    fig = plot.build_figure(reports)
    ax = fig.axes[0]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    # The label field names the pipeline; an empty label falls back to the file.
    assert legend == ["baseline (peak 3.00 MiB)", "remat (peak 2.00 MiB)"]
    assert ax.get_ylabel() == "device memory (MiB)"
    solid = [l for l in ax.get_lines() if l.get_linestyle() == "-"]
    assert [list(l.get_ydata()) for l in solid] == [[1.0, 3.0, 2.0], [1.0, 2.0]]
    dashed = [l for l in ax.get_lines() if l.get_linestyle() == "--"]
    assert [l.get_xdata()[0] for l in dashed] == [1, 1]


def test_cli_writes_png(tmp_path):
    report = _write(tmp_path, "r.json", _report("x", [10, 20, 5], None))
    out = tmp_path / "memory.png"
    assert plot.main([str(report), "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("content, message", [
    ("{", "not JSON"),
    ('{"format": "joint-graph"}', "not a joint-memory-report document"),
    ('{"format": "joint-memory-report", "timeline": {}}', "no timeline.device_bytes"),
])
def test_bad_report_is_one_error_line(tmp_path, capsys, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    assert plot.main([str(path), "-o", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
    assert not (tmp_path / "x.png").exists()


def test_end_to_end_with_joint_opt(tmp_path):
    """The pass's JSON is what the plot reads (needs a built joint-opt)."""
    joint_opt = str(tool("joint-opt"))
    report = tmp_path / "mlp.json"
    subprocess.run([joint_opt, str(REPO_ROOT / "examples/mlp.json"),
                    f"--joint-memory-report=format=json output={report} label=baseline",
                    "-o", os.devnull], check=True)
    out = tmp_path / "mlp.png"
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR))
    run = subprocess.run([sys.executable, "-m", "joint_mlir.plot", str(report),
                          "-o", str(out)], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    doc = plot.load_report(report)
    assert doc["label"] == "baseline"
    assert len(doc["timeline"]["device_bytes"]) == doc["ops"]
    assert max(doc["timeline"]["device_bytes"]) == doc["peak_bytes"]
    assert out.stat().st_size > 0

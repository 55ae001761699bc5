"""The exporter CLI: summaries, examples and one-line errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PYTHON_DIR, REPO_ROOT

FACTORIES = '''
import torch
from torch import nn

class NoParams(nn.Module):
    def forward(self, x):
        return x * 2

def no_params():
    return NoParams(), (lambda m, x: m(x).sum()), {"x": torch.randn(2)}

def vector_loss():
    return nn.Linear(2, 2), (lambda m, x: m(x)), {"x": torch.randn(3, 2)}

def module_leaf():
    return (nn.Linear(2, 2), (lambda m, x, extra: m(x).sum()),
            {"x": torch.randn(3, 2), "extra": nn.Linear(1, 1)})

def object_leaf():
    return (nn.Linear(2, 2), (lambda m, x, extra: m(x).sum()),
            {"x": torch.randn(3, 2), "extra": object()})
'''


def _run(args: list[str], cwd: Path, extra_path: Path | None = None
         ) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    paths = [str(PYTHON_DIR)] + ([str(extra_path)] if extra_path else [])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return subprocess.run([sys.executable, "-m", "joint_mlir.export", *args],
                          cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


def test_cli_exports_mlp_like_the_committed_example(tmp_path: Path) -> None:
    out = tmp_path / "mlp.json"
    p = _run(["--model", "mlp", "--layers", "2", "--hidden", "32",
              "--intermediate", "64", "--vocab", "16", "--batch", "4",
              "--seq", "8", "--no-progress", "-o", str(out)], tmp_path)
    assert p.returncode == 0, p.stderr
    line = p.stdout.strip()
    assert "\n" not in line
    assert "96 nodes (29 forward, 54 backward)" in line
    assert "saved activations" in line
    assert out.read_bytes() == (REPO_ROOT / "examples" / "mlp.json").read_bytes()


@pytest.mark.parametrize("args,needle", [
    (["--preset", "llama9-1t"], "unknown preset 'llama9-1t'"),
    (["--model", "bert"], "unknown model 'bert'"),
    (["--model", "gpt2", "--preset", "llama3-8b"], "is a llama model"),
    (["--model", "llama", "--heads", "3", "--kv-heads", "2"], "not a multiple"),
    (["--model", "llama", "--seq", "0"], "positive"),
    (["--model", "python:cli_factories:no_params"], "no parameters"),
    (["--model", "python:cli_factories:vector_loss"], "scalar"),
    (["--model", "python:cli_factories:module_leaf"], "nn.Module"),
    (["--model", "python:cli_factories:object_leaf"], "unsupported leaf"),
    (["--model", "python:cli_factories:missing"], "missing"),
])
def test_cli_bad_inputs_give_one_line_errors(tmp_path: Path, args: list[str],
                                             needle: str) -> None:
    (tmp_path / "cli_factories.py").write_text(FACTORIES)
    p = _run([*args, "--no-progress", "-o", str(tmp_path / "g.json")],
             tmp_path, extra_path=tmp_path)
    assert p.returncode == 2, p.stderr
    err = p.stderr.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("python -m joint_mlir.export: error:")
    assert "Traceback" not in err
    assert needle in err
    assert not (tmp_path / "g.json").exists()


def test_cli_help_mentions_units() -> None:
    p = _run(["--help"], REPO_ROOT)
    assert p.returncode == 0
    assert "sequence length (tokens)" in p.stdout
    assert "llama3-8b" in p.stdout

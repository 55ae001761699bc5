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
                          cwd=cwd, env=env, capture_output=True, text=True)


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
    (["--model", "llama", "--hidden", "100", "--heads", "3"],
     "--hidden 100 is not a multiple of --heads 3"),
    (["--model", "gpt2", "--kv-heads", "2"], "drop --kv-heads"),
    (["--model", "mlp", "--heads", "2"], "no attention"),
    (["--model", "llama", "--seq", "0"], "positive"),
    (["--model", "python:cli_factories:no_params"], "no parameters"),
    (["--model", "python:cli_factories:vector_loss"], "scalar"),
    (["--model", "python:cli_factories:module_leaf"], "nn.Module"),
    (["--model", "python:cli_factories:object_leaf"], "unsupported leaf"),
    (["--model", "python:cli_factories:missing"], "missing"),
])
def test_cli_bad_inputs_give_one_line_errors(
        tmp_path: Path, args: list[str], needle: str,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # In process (a subprocess per case spends ~3.5 s importing torch); the
    # real command line is checked once below.
    from joint_mlir.cli import export
    (tmp_path / "cli_factories.py").write_text(FACTORIES)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "cli_factories", raising=False)
    try:
        code = export.main([*args, "--no-progress", "-o",
                            str(tmp_path / "g.json")])
    except SystemExit as e:  # argparse rejects bad option values itself
        code = e.code
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1, err
    assert err.startswith("python -m joint_mlir.export: error:")
    assert "Traceback" not in err
    assert needle in err
    assert not (tmp_path / "g.json").exists()


@pytest.mark.parametrize("output, why", [
    ("missing/g.json", "directory '{d}/missing' does not exist (create it "
     "first)"),
    ("", "it is a directory"),
])
def test_cli_unwritable_output_is_bad_input(
        tmp_path: Path, output: str, why: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    # Exit 2 with one line naming the path, before any tracing.
    from joint_mlir.cli import export
    path = str(tmp_path / output) if output else str(tmp_path)
    code = export.main(["--model", "mlp", "--no-progress", "-o", path])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err == (f"python -m joint_mlir.export: error: cannot write "
                   f"'{path}': " + why.format(d=tmp_path))
    assert not (tmp_path / "missing").exists()


def test_plot_unwritable_output_is_bad_input(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from joint_mlir.cli import plot
    report = tmp_path / "r.json"
    report.write_text("{}")
    out = tmp_path / "missing" / "m.png"
    assert plot.main([str(report), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"python -m joint_mlir.plot: error: cannot write '{out}': "
                   f"directory '{out.parent}' does not exist (create it "
                   "first)")


def test_cli_process_error_is_one_line_without_traceback(tmp_path: Path) -> None:
    p = _run(["--preset", "llama9-1t", "--no-progress", "-o",
              str(tmp_path / "g.json")], tmp_path)
    assert p.returncode == 2, p.stderr
    err = p.stderr.strip()
    assert err == ("python -m joint_mlir.export: error: unknown preset "
                   "'llama9-1t'" + err.split("'llama9-1t'", 1)[1])
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_cli_help_mentions_units(capsys: pytest.CaptureFixture[str]) -> None:
    from joint_mlir.cli import export
    with pytest.raises(SystemExit) as exit_info:
        export.main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "sequence length (tokens)" in out
    assert "llama3-8b" in out


def test_cli_unexpected_library_error_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from joint_mlir.cli import export
    (tmp_path / "cli_boom.py").write_text(
        "def boom():\n    raise KeyError('config rejected')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("JOINT_MLIR_DEBUG", raising=False)
    code = export.main(["--model", "python:cli_boom:boom", "--no-progress",
                        "-o", str(tmp_path / "g.json")])
    err = capsys.readouterr().err.strip()
    assert code == 1
    assert len(err.splitlines()) == 1, err
    assert "KeyError" in err and "config rejected" in err
    assert "JOINT_MLIR_DEBUG=1" in err


@pytest.mark.parametrize("edit, needle", [
    (lambda d: d.pop("nodes"), "python -m joint_mlir.run: error: g.json: $: keys ["),
    (lambda d: d["nodes"][1].pop("target"), "python -m joint_mlir.run: error: g.json: $.nodes[1]"),
    (lambda d: d.__setitem__("state", 7), "python -m joint_mlir.run: error: g.json: $.state"),
])
def test_run_cli_rejects_a_format_violation_with_one_error(
        tmp_path: Path, edit, needle: str) -> None:
    """A document the importer rejects gets the validator's one error and
    exit 2 (bad input) from ``python -m joint_mlir.run``, not a traceback and
    exit 1 (which means a mismatch)."""
    import json
    doc = json.loads((REPO_ROOT / "examples" / "mlp.json").read_text())
    edit(doc)
    (tmp_path / "g.json").write_text(json.dumps(doc))
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR))
    p = subprocess.run([sys.executable, "-m", "joint_mlir.run", "g.json"],
                       cwd=tmp_path, env=env, capture_output=True, text=True)
    assert p.returncode == 2, p.stderr
    err = p.stderr.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith(needle), err

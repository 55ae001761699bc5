"""One base class for the package's errors, and the command-line entry points.

Every exception class defined in ``joint_mlir`` derives from
``joint_mlir.JointMlirError`` (and keeps the built-in base it always had), and
each documented ``python -m joint_mlir.X`` command still starts.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import joint_mlir
from joint_mlir import JointMlirError


def _error_classes() -> dict[str, type]:
    found: dict[str, type] = {}
    for info in pkgutil.walk_packages(joint_mlir.__path__, "joint_mlir."):
        if info.name in ("joint_mlir._core", "joint_mlir.run",
                         "joint_mlir.export", "joint_mlir.plot"):
            continue  # the extension is optional; forwarders define nothing
        mod = importlib.import_module(info.name)
        for name, obj in vars(mod).items():
            if (inspect.isclass(obj) and issubclass(obj, BaseException)
                    and obj.__module__ == info.name):
                found[f"{info.name}.{name}"] = obj
    return found


def test_every_package_error_derives_from_the_base() -> None:
    classes = _error_classes()
    assert {"joint_mlir.pipeline.PipelineError", "joint_mlir.format.FormatError",
            "joint_mlir.tracer.TraceError", "joint_mlir.tracer.DataDependentError",
            "joint_mlir.cli.plot.ReportError"} <= set(classes)
    stray = [n for n, c in classes.items()
             if c is not JointMlirError and not issubclass(c, JointMlirError)]
    assert stray == []


def test_errors_keep_their_builtin_bases(tmp_path: Path) -> None:
    from joint_mlir.format import FormatError
    from joint_mlir.pipeline import PipelineError
    assert issubclass(FormatError, ValueError)
    assert issubclass(PipelineError, RuntimeError)
    (tmp_path / "g.json").write_text('{"format": "other"}')
    with pytest.raises(JointMlirError, match="not a joint-graph"):
        joint_mlir.read_document(str(tmp_path / "g.json"))


def test_run_stays_the_function() -> None:
    import joint_mlir.cli.run  # noqa: F401
    assert callable(joint_mlir.run) and inspect.isfunction(joint_mlir.run)


@pytest.mark.parametrize("module", ["export", "run", "plot"])
def test_python_dash_m_entry_points_start(module: str) -> None:
    p = subprocess.run([sys.executable, "-m", f"joint_mlir.{module}", "--help"],
                       capture_output=True, text=True,
                       env={**__import__("os").environ,
                            "PYTHONPATH": joint_mlir.__path__[0] + "/.."})
    assert p.returncode == 0, p.stderr
    assert f"python -m joint_mlir.{module}" in p.stdout

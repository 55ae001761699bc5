"""Graphs with operators registered by other libraries run.

The exporter records, per operator-table entry, the Python module whose
import registers a non-torch operator (``python_module``); joint-translate
keeps it; the runner imports it (``--import`` adds modules) and names it when
the target still does not resolve. The library is ``joint_custom_ops``, a
test module with an operator of each registration form (``custom_op``,
``Library``, ``torch.library.define``).
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import joint_custom_ops
from conftest import PYTHON_DIR
from graph_tools import run_pipeline
from joint_mlir import fx, trace_joint_graph, validate_document

TESTS_DIR = Path(__file__).resolve().parent
CUSTOM = ("joint_test::scaled_tanh.default", "joint_test_lib::shift.default",
          "joint_test_fn::halve.default")


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> Path:
    model, fn, inputs = joint_custom_ops.factory()
    path = tmp_path_factory.mktemp("c22") / "custom.json"
    trace_joint_graph(model, fn, inputs).save(str(path))
    return path


def _doc(path: Path) -> dict:
    return json.loads(path.read_text())


def _run_cli(*args: str) -> subprocess.CompletedProcess:
    """``python -m joint_mlir.run`` in a fresh process: the test module is
    importable (on PYTHONPATH) but nothing imports it unless asked."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(PYTHON_DIR), str(TESTS_DIR)])
    return subprocess.run([sys.executable, "-m", "joint_mlir.run", *args],
                          env=env, capture_output=True, text=True)


def test_exporter_records_the_registering_module(graph: Path) -> None:
    doc = _doc(graph)
    validate_document(doc)
    mods = {t: e.get("python_module") for t, e in doc["operators"].items()}
    assert {t: mods[t] for t in CUSTOM} == {t: "joint_custom_ops"
                                            for t in CUSTOM}
    assert all(m is None for t, m in mods.items() if t.startswith("aten::"))


def test_cli_runs_a_graph_with_library_operators(graph: Path) -> None:
    p = _run_cli(str(graph), "--compare", str(graph))
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().endswith("all 7 outputs match (bitwise)")


@pytest.mark.parametrize("flags", [
    ("--joint-activation-checkpoint=mode=full",),
    ("--joint-activation-checkpoint=mode=selective",),
], ids=["ckpt-full", "ckpt-selective"])
def test_checkpointed_graph_keeps_modules_and_runs_bitwise(
        graph: Path, tmp_path: Path, flags: tuple[str, ...]) -> None:
    out = run_pipeline(graph, flags, tmp_path)
    doc = _doc(out)
    assert {t: doc["operators"][t].get("python_module") for t in CUSTOM} == {
        t: "joint_custom_ops" for t in CUSTOM}
    assert any(n.get("recomputed_from") for n in doc["nodes"])
    p = _run_cli(str(out), "--compare", str(graph))
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().endswith("all 7 outputs match (bitwise)")


def _without_modules(doc: dict) -> dict:
    doc = copy.deepcopy(doc)
    for e in doc["operators"].values():
        e.pop("python_module", None)
    return doc


def test_import_option_loads_unrecorded_libraries(graph: Path,
                                                  tmp_path: Path) -> None:
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(_without_modules(_doc(graph))))
    p = _run_cli(str(bare))
    assert p.returncode == 2
    assert p.stderr.strip() == (
        "python -m joint_mlir.run: error: node scaled_tanh: target 'joint_test::scaled_tanh.default' "
        "does not resolve in the installed torch "
        f"{__import__('torch').__version__}; no module registering it is "
        "recorded: import the library that defines it (python -m "
        "joint_mlir.run --import MODULE)")
    p = _run_cli(str(bare), "--import", "joint_custom_ops", "--compare",
                 str(graph))
    assert p.returncode == 0, p.stderr
    p = _run_cli(str(bare), "--import", "joint_no_such_module")
    assert p.returncode == 2
    assert p.stderr.strip() == (
        "python -m joint_mlir.run: error: cannot import module 'joint_no_such_module': "
        "ModuleNotFoundError: No module named 'joint_no_such_module'")


@pytest.mark.parametrize("module,reason", [
    ("joint_no_such_ops", "cannot import module 'joint_no_such_ops', which "
     "registers it: ModuleNotFoundError: No module named 'joint_no_such_ops'"),
    ("json", "does not resolve in the installed torch {v} after importing "
     "'json', the module recorded as registering it"),
    ("__main__", "does not resolve in the installed torch {v}: it was "
     "registered by a script (__main__); define it in an importable module "
     "and export again, or --import that module"),
])
def test_unresolvable_target_names_the_module(graph: Path, module: str,
                                              reason: str) -> None:
    import torch
    doc = _doc(graph)
    target = "joint_test::no_such_op.default"
    doc["operators"][target] = dict(
        doc["operators"]["joint_test::scaled_tanh.default"],
        python_module=module)
    node = next(n for n in doc["nodes"]
                if n["target"] == "joint_test::scaled_tanh.default")
    node["target"] = target
    with pytest.raises(fx.LoadError) as info:
        fx.build_graph_module(doc)
    assert str(info.value) == (
        f"node {node['name']}: target {target!r}: "
        + reason.format(v=torch.__version__)
        if reason.startswith("cannot") else
        f"node {node['name']}: target {target!r} "
        + reason.format(v=torch.__version__))

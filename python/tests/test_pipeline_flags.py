"""opt_flags: a flat pipeline as joint-opt flags, which nest per-graph passes
on joint.graph the way run_pipeline does (joint-opt's --pass-pipeline text
needs the explicit builtin.module(joint.graph(...)) form)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from graph_tools import REPO_ROOT, tool
from joint_mlir.pipeline import opt_flags


def test_flags_of_a_flat_pipeline() -> None:
    assert opt_flags("joint-tag-recompute-policy{mode=full layer-indices=1},"
                     "joint-cpu-offload{min-bytes=1024},joint-remat") == [
        "--joint-tag-recompute-policy=mode=full layer-indices=1",
        "--joint-cpu-offload=min-bytes=1024", "--joint-remat"]
    assert opt_flags("builtin.module(joint-remat)") == ["--joint-remat"]
    assert opt_flags("") == []
    nested = "joint.graph(joint-remat),joint-cpu-offload"
    assert opt_flags(nested) == [f"--pass-pipeline=builtin.module({nested})"]


def test_flags_and_nested_text_run_the_same_passes(tmp_path: Path) -> None:
    opt = tool("joint-opt")
    graph = str(REPO_ROOT / "examples" / "mlp.json")
    flat = subprocess.run(
        [str(opt), graph, *opt_flags(
            "joint-tag-recompute-policy{mode=full},joint-remat")],
        check=True, capture_output=True, text=True)
    nested = subprocess.run(
        [str(opt), graph, "--pass-pipeline=builtin.module(joint.graph("
         "joint-tag-recompute-policy{mode=full},joint-remat))"],
        check=True, capture_output=True, text=True)
    assert "recomputed_from" in flat.stdout
    assert flat.stdout == nested.stdout
    # Unnested text is MLIR's explicit-nesting error, not a crash.
    bad = subprocess.run(
        [str(opt), graph, "--pass-pipeline=builtin.module(joint-remat)"],
        capture_output=True, text=True)
    assert bad.returncode != 0
    assert "restricted to 'joint.graph'" in bad.stderr

"""After scripts/build (and so after scripts/test), ``import joint_mlir._core``
works from ``PYTHONPATH=python`` in a fresh interpreter. Not skipped when the
extension is missing: only a build configured with JOINT_ENABLE_PYTHON=OFF
(the sanitizer builds) has no extension to import.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from graph_tools import REPO_ROOT, build_dir


def test_import_core_after_build() -> None:
    cache = build_dir() / "CMakeCache.txt"
    if cache.exists() and re.search(r"^JOINT_ENABLE_PYTHON:BOOL=OFF$",
                                    cache.read_text(), re.M):
        pytest.skip(f"{build_dir()} is configured with JOINT_ENABLE_PYTHON=OFF")
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT / "python"))
    r = subprocess.run([sys.executable, "-c",
                        "import joint_mlir, joint_mlir._core; "
                        "print(joint_mlir._core.__file__)"],
                       capture_output=True, text=True, env=env, cwd="/")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().startswith(str(REPO_ROOT / "python" / "joint_mlir"))

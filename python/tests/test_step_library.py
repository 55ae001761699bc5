"""Compiled CPU step libraries stand alone and run on an ordinary stack:

- a step library's dynamic dependencies are system libraries only (libc,
  libm), every symbol it imports is defined by them (no compiler builtin
  such as ``__truncsfbf2`` for bf16, no ``memrefCopy`` from libMLIR), and it
  exports the ABI's three functions, for an f32 and a bf16 graph;
- steps whose tiled matmuls used to take stack on every tile (an MLP with
  hidden 512 over 1024 tokens, the tiny Llama at 256 tokens) run on the
  main thread of a process whose stack limit is 8 MiB, at every -O level,
  and match torch (docs/lowering.md, "ABI").
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from graph_tools import REPO_ROOT, build_dir, tool
from joint_mlir.mlir_cpu import compile_graph

EXAMPLES = REPO_ROOT / "examples"
# Shared with test_mlir_cpu.py: a library compiled there is reused here.
CACHE = build_dir() / "joint_mlir_cache"
# libc, libm and the dynamic loader (libc6's, for thread-local statistics).
SYSTEM_LIBRARIES = {"libc.so.6", "libm.so.6", "ld-linux-x86-64.so.2"}
EXPORTED = {"joint_step", "joint_step_peak_bytes", "joint_step_live_bytes"}


def _dynamic_section(lib: Path) -> list[str]:
    out = subprocess.run(["readelf", "-d", str(lib)], capture_output=True,
                         text=True, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def _symbols(lib: Path, which: str) -> dict[str, str]:
    """name -> nm type letter of the dynamic symbols (``which``:
    --undefined-only or --defined-only)."""
    out = subprocess.run(["nm", "-D", which, str(lib)], capture_output=True,
                         text=True, check=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        kind, name = parts[-2], parts[-1].split("@")[0]
        syms[name] = kind
    return syms


@pytest.mark.parametrize("graph", ["mlp.json", "llama-tiny-bf16.json"])
def test_step_library_needs_only_system_libraries(graph: str) -> None:
    tool("joint-compile")
    lib = compile_graph(EXAMPLES / graph, cache_dir=CACHE)
    assert set(_dynamic_section(lib)) <= SYSTEM_LIBRARIES, _dynamic_section(lib)
    assert "libc.so.6" in _dynamic_section(lib)
    system = [ctypes.CDLL(name) for name in sorted(_dynamic_section(lib))]
    imported = _symbols(lib, "--undefined-only")
    strong = sorted(n for n, kind in imported.items() if kind == "U")
    unresolved = [n for n in strong
                  if not any(hasattr(s, n) for s in system)]
    assert unresolved == [], f"{graph}: not in libc/libm: {unresolved}"
    assert not any(n.startswith(("__trunc", "__extend", "_mlir_", "memref"))
                   for n in imported), sorted(imported)
    exported = {n for n, kind in _symbols(lib, "--defined-only").items()
                if kind == "T"}
    assert exported == EXPORTED


def test_descriptor_writes_booleans_as_booleans() -> None:
    tool("joint-compile")
    lib = compile_graph(EXAMPLES / "mlp.json", cache_dir=CACHE)
    desc = json.loads(Path(str(lib) + ".json").read_text())
    assert desc["arguments"][0] == {
        "fqn": "layers.0.fc1.weight", "name": "arg0_1", "requires_grad": True,
        "role": "param", "kind": "tensor", "dtype": "float32",
        "shape": [64, 32]}


def _limit_stack_to_8_mib() -> None:
    resource.setrlimit(resource.RLIMIT_STACK, (8 << 20, 8 << 20))


def _export(tmp: Path, name: str, *args: str) -> Path:
    out = tmp / f"{name}.json"
    subprocess.run([sys.executable, "-m", "joint_mlir.export",
                    "--no-progress", *args, "-o", str(out)], check=True,
                   capture_output=True, env={**os.environ,
                                             "PYTHONPATH": str(REPO_ROOT / "python")})
    return out


@pytest.fixture(scope="module")
def stack_graphs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("stack")
    return {
        "mlp-512x1024": _export(tmp, "mlp", "--model", "mlp", "--layers", "1",
                                "--hidden", "512", "--intermediate", "1024",
                                "--vocab", "16", "--batch", "1",
                                "--seq", "1024"),
        "llama-tiny-seq256": _export(
            tmp, "llama", "--model", "llama", "--layers", "2", "--hidden",
            "64", "--heads", "4", "--kv-heads", "2", "--intermediate", "128",
            "--vocab", "256", "--batch", "2", "--seq", "256"),
    }


@pytest.mark.parametrize("level", [0, 1, 2, 3])
@pytest.mark.parametrize("name", ["mlp-512x1024", "llama-tiny-seq256"])
def test_step_runs_on_an_8_mib_stack(stack_graphs: dict[str, Path],
                                     name: str, level: int) -> None:
    tool("joint-compile")
    graph = stack_graphs[name]
    r = subprocess.run(
        [sys.executable, "-m", "joint_mlir.run", str(graph), "--backend",
         "mlir-cpu", f"-O{level}", "--compare", str(graph)],
        capture_output=True, text=True, preexec_fn=_limit_stack_to_8_mib,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "python"),
             "JOINT_MLIR_CACHE": str(CACHE)})
    assert r.returncode == 0, (r.returncode, r.stdout[-2000:],
                               r.stderr[-2000:])
    last = r.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"all \d+ outputs match \(mlir-cpu vs torch, tol x "
                        r"max\|ref\|\)", last), r.stdout


def test_step_loads_from_a_relative_path(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    """CompiledStep("step.so") loads the file in the working directory (a
    bare name given to dlopen would search the library path instead)."""
    import shutil
    from joint_mlir.mlir_cpu import CompiledStep

    tool("joint-compile")
    lib = compile_graph(EXAMPLES / "mlp.json", cache_dir=CACHE)
    shutil.copy(lib, tmp_path / "step.so")
    shutil.copy(str(lib) + ".json", tmp_path / "step.so.json")
    monkeypatch.chdir(tmp_path)
    for name in ("step.so", "./step.so"):
        step = CompiledStep(name)
        assert step.library == tmp_path / "step.so"

"""The CUDA lowering without a GPU: joint-lower-to-cuda produces a
cubin for every kernel of the tiny Llama (ptxas runs here), joint-compile
--target=cuda builds a library linked with the CUDA runtime, and the GPU-only
entry points (``--backend mlir-cuda``, ``scripts/device-check``) say why they
skip when no GPU is present.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from graph_tools import REPO_ROOT, build_dir, cuda_built, tool

TINY = REPO_ROOT / "examples" / "llama-tiny-fp32.json"



def _no_gpu() -> None:
    import torch
    if torch.cuda.is_available():
        pytest.skip("a GPU is present: the no-GPU messages do not apply")


def test_every_kernel_of_tiny_llama_has_a_cubin() -> None:
    cuda_built()
    r = subprocess.run(
        [str(tool("joint-opt")), str(TINY),
         "--pass-pipeline=builtin.module(joint-lower-to-cuda)"],
        capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    ir = r.stdout
    # Host code launches kernels by @<gpu module>::@<kernel>.
    launched = set(re.findall(r"gpu\.launch_func\s+@([\w$.-]+)::@", ir))
    launched |= set(re.findall(r"@([\w$.-]+)::@[\w$.-]+", ir))
    binaries = dict(re.findall(
        r'gpu\.binary @([\w$.-]+)\s+\[#gpu\.object<#nvvm\.target<[^>]*>, '
        r'(?:properties = \{[^}]*\}, )?bin = "(.{8})', ir))
    assert launched, "no kernel launches in the host code"
    assert launched <= set(binaries), sorted(launched - set(binaries))[:5]
    # Each object is a cubin (an ELF file), not PTX.
    assert all(v.startswith("\\7FELF") for v in binaries.values())
    assert "gpu.module" not in ir  # every kernel module became a binary
    # Nothing of the step computes on the host.
    host = ir[ir.index("llvm.func @joint_entry"):]
    assert "memref.load" not in host and "llvm.fadd" not in host.split(
        "llvm.func", 2)[1]


def _step_cache() -> Path:
    """A step cache kept in the build directory: the tiny Llama's CUDA step
    (identity, default -O) is compiled once per build of joint-compile (its
    path, size and mtime are part of the key) and shared by the tests below
    and by scripts/device-check."""
    return build_dir() / "test-step-cache"


def test_joint_compile_cuda_links_the_runtime() -> None:
    cuda_built()
    from joint_mlir.mlir_cpu import compile_graph
    out = compile_graph(TINY, target="cuda", cache_dir=_step_cache())
    desc = json.loads(Path(str(out) + ".json").read_text())
    assert desc["format"] == "joint-cuda-step"
    assert desc["entry"] == "joint_step"
    dyn = subprocess.run(["readelf", "-d", str(out)], capture_output=True,
                         text=True).stdout
    assert "libjoint_cuda_runtime.so" in dyn
    syms = subprocess.run(["nm", "-D", str(out)], capture_output=True,
                          text=True).stdout
    assert re.search(r" T joint_step$", syms, re.M)
    assert re.search(r" U mgpuLaunchKernel$", syms, re.M)
    assert re.search(r" U mgpuMemAlloc$", syms, re.M)


def test_bad_cuda_lowering_option_writes_nothing(tmp_path) -> None:
    cuda_built()
    out = tmp_path / "step.so"
    r = subprocess.run([str(tool("joint-compile")), str(TINY),
                        "--target=cuda", "-o", str(out),
                        "--lowering-options=tile-m=8"],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert "joint-compile: error: bad --lowering-options 'tile-m=8'" \
        in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_backend_mlir_cuda_without_gpu_says_so() -> None:
    _no_gpu()
    r = subprocess.run([sys.executable, "-m", "joint_mlir.run",
                        str(REPO_ROOT / "examples" / "mlp.json"),
                        "--backend", "mlir-cuda"],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert "--backend mlir-cuda needs a CUDA device (none is available)" \
        in r.stderr


def test_device_check_skips_gpu_parts_without_gpu(tmp_path) -> None:
    """The script's compile check, at most one compile (the step cache the
    test above fills), no time limit, without the emulated matrix
    (test_emulated_matrix.py runs it): what it printed is the assertion."""
    cuda_built()
    _no_gpu()
    out = tmp_path / "gpu.md"
    r = subprocess.run([str(REPO_ROOT / "scripts" / "device-check"),
                        "--graphs", "tiny", "--pipelines", "identity",
                        "--no-emulated", "--out", str(out)],
                       capture_output=True, text=True,
                       env={**os.environ,
                            "JOINT_MLIR_CACHE": str(_step_cache()),
                            "JOINT_DEVICE_CHECK_TIMEOUT": "0"})
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    lines = r.stdout.splitlines()
    assert lines[0] == (
        "device-check: GPU-only parts skipped: no NVIDIA GPU "
        "(torch.cuda.is_available() is False); only the compile checks run "
        "(numerics, peak, bandwidth and timings need a GPU)")
    assert re.fullmatch(r"compile tiny identity: ok \([0-9.]+ s\), SDPA "
                        r"(through cuDNN|as generated kernels)", lines[1])
    assert lines[2:] == ["device-check: cuDNN SDPA library check skipped: "
                         "no NVIDIA GPU (torch.cuda.is_available() is False)"]
    assert not out.exists()


def test_device_check_runs_the_emulated_matrix_without_gpu(tmp_path) -> None:
    """Without a GPU the emulated matrix still runs first (here the MLP's
    six pipelines, compiled by test_emulated_matrix.py into the same step
    cache), and its peaks end the output as the emulated/real/model table."""
    cuda_built()
    _no_gpu()
    r = subprocess.run([str(REPO_ROOT / "scripts" / "device-check"),
                        "--graphs", "tiny", "--pipelines", "identity",
                        "--emulated-examples", "mlp", "--emulated-jobs", "1",
                        "--out", str(tmp_path / "gpu.md")],
                       capture_output=True, text=True,
                       env={**os.environ,
                            "JOINT_MLIR_CACHE": str(build_dir() /
                                                    "test-step-cache"),
                            "JOINT_DEVICE_CHECK_TIMEOUT": "0"})
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    lines = r.stdout.splitlines()
    pipelines = ["identity", "ckpt-full", "ckpt-selective", "offload-block",
                 "planner-mid", "ckpt-offload-prefetch"]
    for line, name in zip(lines, pipelines):
        assert re.fullmatch(rf"emulated mlp {name}: ok, peak \d+ B / model "
                            r"\d+ B", line), line
    assert re.fullmatch(r"emulated matrix: 6 cases, 0 failed, \d+ s",
                        lines[6]), lines[6]
    table = lines[lines.index("| graph | pipeline | model peak | emulated "
                              "peak | emulated / model | real peak | real / "
                              "model | emulated run (s) | real step (ms) |"):]
    assert [row.split(" | ")[1] for row in table[2:]] == pipelines
    assert all(row.split(" | ")[5:7] == ["n/a", "n/a"] for row in table[2:])


"""Every bundled example x the memory pipelines, compiled for the CUDA target
with host kernels and run on the emulated device (joint_mlir.emulated):

- the outputs match the torch backend within the compiled tolerances;
- the emulator's high-water mark, with the parameters and inputs staged on
  the device and each output counted from its first write, is within 5% of
  ``joint-memory-report``'s modelled peak (parameters and inputs included);
- every ``ao.offload``/``ao.reload`` of the compiled graph is one copy on the
  runtime's transfer stream, counted by the emulator;
- no race, use after free or refused call; every device byte and transfer
  is given back.

One child process per example runs its six pipelines (the emulated device is
chosen once per process); compiles go through the step cache at -O0.
The ``mlir-cuda-emulated`` backend of ``python -m joint_mlir.run`` selects the
emulated device itself (no JOINT_CUDA_DEVICE, no LD_LIBRARY_PATH), fails
with the runtime's message when the emulator refuses a call, and refuses
when the runtime already runs on the real device in its process.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from graph_tools import REPO_ROOT, build_dir, tool, cuda_built

EXAMPLES = ["mlp", "mlp-dynamic-seq", "gpt2-tiny", "llama-tiny-fp32",
            "llama-tiny-bf16"]
PIPELINES = ["identity", "ckpt-full", "ckpt-selective", "offload-block",
             "planner-mid", "ckpt-offload-prefetch"]
OFFLOADING = {"offload-block", "ckpt-offload-prefetch"}


def _cuda_built() -> None:
    cuda_built()
    tool("joint-compile")


def _env() -> dict[str, str]:
    """The caller's environment without the emulator's variables: the
    backend selects the device and finds the libcuda stub itself."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("JOINT_CUDA_DEVICE", "LD_LIBRARY_PATH")}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT / "python")] +
        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["JOINT_MLIR_CACHE"] = str(build_dir() / "test-step-cache")
    return env


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_on_the_emulated_device(example: str) -> None:
    _cuda_built()
    graph = REPO_ROOT / "examples" / f"{example}.json"
    r = subprocess.run([sys.executable, "-m", "joint_mlir.emulated",
                        str(graph), "--pipelines", ",".join(PIPELINES)],
                       capture_output=True, text=True, env=_env(),
                       timeout=900)
    assert r.returncode == 0, r.stderr[-4000:]
    cases = [json.loads(line) for line in r.stdout.splitlines()]
    assert [c["pipeline"] for c in cases] == PIPELINES
    failures = []
    for c in cases:
        name = c["pipeline"]
        if "error" in c:
            failures.append(f"{name}: {c['error']}")
            continue
        ratio = c["emulated_peak"] / c["model_peak"]
        stats = c["stats"]
        checks = {
            "outputs match torch": c["outputs"] > 0 and not c["mismatches"],
            f"peak {c['emulated_peak']} B within 5% of the model's "
            f"{c['model_peak']} B ({ratio:.3f})": abs(ratio - 1) <= 0.05,
            f"{c['transfer_copies']} transfer-stream copies for "
            f"{c['offloads']} offloads + {c['reloads']} reloads":
                c["transfer_copies"] == c["offloads"] + c["reloads"],
            "offloads something": name not in OFFLOADING or
                c["offloads"] > 0,
            f"no race, use after free or refused call ({stats})":
                stats["races"] == stats["use_after_frees"] ==
                stats["errors"] == 0,
            f"every byte freed ({c['live_bytes']} live, "
            f"{stats['allocations']} allocations, {stats['frees']} frees)":
                c["live_bytes"] == 0 and
                stats["allocations"] == stats["frees"],
            "every transfer released": c["live_transfers"] == 0,
        }
        failures += [f"{name}: {what}: {c.get('mismatches') or ''}"
                     for what, ok in checks.items() if not ok]
    assert not failures, "\n".join(failures)


def test_run_cli_on_the_emulated_device() -> None:
    """``--backend mlir-cuda-emulated --compare``: compiled (the matrix's
    cached MLP at -O0), run on the emulated device, compared with torch."""
    _cuda_built()
    mlp = str(REPO_ROOT / "examples" / "mlp.json")
    r = subprocess.run([sys.executable, "-m", "joint_mlir.run", mlp,
                        "--backend", "mlir-cuda-emulated", "-O", "0",
                        "--compare", mlp], capture_output=True, text=True,
                       env=_env(), timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert re.search(r"^all \d+ outputs match \(mlir-cuda-emulated vs "
                     r"torch, tol x max\|ref\|\)$", r.stdout, re.M), r.stdout


def test_run_cli_fails_with_the_emulators_message() -> None:
    """A call the emulated device refuses (here: no capacity for the first
    staged buffer, the 4-byte loss) fails the run with the runtime's
    message, exit 2, and nothing is copied through the null pointer."""
    _cuda_built()
    mlp = str(REPO_ROOT / "examples" / "mlp.json")
    r = subprocess.run([sys.executable, "-m", "joint_mlir.run", mlp,
                        "--backend", "mlir-cuda-emulated", "-O", "0"],
                       capture_output=True, text=True,
                       env={**_env(), "JOINT_EMU_CAPACITY_MB": "0"},
                       timeout=600)
    assert r.returncode == 2, r.stdout + r.stderr[-3000:]
    assert r.stderr.splitlines()[-1] == (
        "python -m joint_mlir.run: error: staging the arguments on the "
        "emulated device failed: mgpuMemAlloc: cuMemAllocAsync failed: "
        "CUDA_ERROR_OUT_OF_MEMORY (2), 4 bytes: allocation of 4 bytes with 0 "
        "of 0 bytes live (JOINT_EMU_CAPACITY_MB)"), r.stderr[-2000:]


def test_emulated_backend_refuses_a_runtime_on_the_real_device() -> None:
    """The runtime picks its device at its first call: once it runs on
    libcuda (here the stub) in a process, the emulated backend says so."""
    _cuda_built()
    code = (
        "import ctypes, sys\n"
        "from joint_mlir.mlir_cpu import StepError, load_emulated_runtime\n"
        "lib = sys.argv[1]\n"
        "ctypes.CDLL(lib + '/cuda-stub/libcuda.so.1', "
        "mode=ctypes.RTLD_GLOBAL)\n"
        "rt = ctypes.CDLL(lib + '/libjoint_cuda_runtime.so')\n"
        "assert rt.joint_emu_active() == 0\n"
        "try:\n"
        "    load_emulated_runtime()\n"
        "except StepError as e:\n"
        "    print(e)\n")
    r = subprocess.run([sys.executable, "-c", code,
                        str(build_dir() / "lib")], capture_output=True,
                       text=True, env=_env(), timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().endswith(
        "libjoint_cuda_runtime.so: the CUDA runtime already runs on the real "
        "device in this process (it picks its device at its first call); "
        "run the mlir-cuda-emulated backend in a fresh process, or set "
        "JOINT_CUDA_DEVICE=emulated before anything loads the runtime"), \
        r.stdout


def _header_fields(header: str, struct: str) -> list[str]:
    text = (REPO_ROOT / "runtime" / "cuda" / header).read_text()
    body = re.search(r"typedef struct %s \{(.*?)\} %s;" % (struct, struct),
                     text, re.S)
    assert body, (header, struct)
    return re.findall(r"uint64_t\s+(\w+);", body.group(1))


def test_stats_mirrors_match_the_headers() -> None:
    """The ctypes mirrors of the runtime's and emulator's statistics have
    every field of the C structs, in order: the C side writes the whole
    struct, so a missing field overruns the Python buffer."""
    from joint_mlir import emulated
    import test_emulated_cuda
    emu = _header_fields("joint_cuda_emulator.h", "JointEmuStats")
    runtime = _header_fields("joint_cuda_runtime.h", "JointRuntimeStats")
    assert "library_calls" in emu and "live_transfers" in runtime
    assert list(emulated._EMU_FIELDS) == emu
    assert list(emulated._RUNTIME_FIELDS) == runtime
    child = test_emulated_cuda.CHILD
    fields = re.search(r"FIELDS = \((.*?)\)\n", child, re.S).group(1)
    assert re.findall(r'"(\w+)"', fields) == emu

"""The mlir-cpu backend against torch: every bundled example under every
pass pipeline (identity, full and selective checkpointing, offload,
checkpointing + offload) is compiled with joint-compile and run through its
C entry point; each output (loss, gradients, loss_dict, buffers after the
step) must be within tol x max|reference| of the torch run of the original
graph, tol 1e-5 for float32 and 1e-2 for bfloat16.

A graph with an op that does not lower fails here with joint-compile's
diagnostic (op and node named); only pipelines whose pass does not apply to
a model (offload with scope=attention needs an attention module) are skipped, with that reason.
Compiled libraries are cached under ``<build>/joint_mlir_cache``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from graph_tools import EXAMPLES, REPO_ROOT, build_dir, has_attention, has_pass, tool
from joint_mlir.executor import (COMPILED_TOLERANCE, Difference, StepResult,
                                 compare_scaled, format_differences, run)

IDS = [p.stem for p in EXAMPLES]

# id -> joint-compile --pipeline (joint passes before lowering)
PIPELINES = {
    "identity": "",
    "ckpt-full": "joint-activation-checkpoint{mode=full}",
    "ckpt-selective": "joint-activation-checkpoint{mode=selective}",
    "offload": "joint-cpu-offload{min-bytes=1024}",
    "ckpt-offload": "joint-activation-checkpoint{mode=selective},"
                    "joint-cpu-offload{min-bytes=1024}",
}


@pytest.fixture(autouse=True)
def _cache(monkeypatch: pytest.MonkeyPatch) -> None:
    tool("joint-compile")  # a failure under CI=true, a skip elsewhere, when not built
    monkeypatch.setenv("JOINT_MLIR_CACHE", str(build_dir() / "joint_mlir_cache"))


_BASE: dict[str, StepResult] = {}


def _base(path: Path) -> StepResult:
    if path.stem not in _BASE:
        _BASE[path.stem] = run(str(path), seed=0)
    return _BASE[path.stem]


def _assert_within(got: StepResult, want: StepResult, what: str) -> None:
    diffs = compare_scaled(got, want)
    bad = [d for d in diffs if not d.ok]
    assert not bad, (f"{what}: {len(bad)} of {len(diffs)} outputs beyond "
                     f"tol x max|ref|, first {bad[0].name}\n"
                     + format_differences(diffs))


def _has_attention(path: Path) -> bool:
    return has_attention(json.loads(path.read_text()))


# The default run compiles every example at identity and under one
# transformed pipeline each (about 10 s of CPU per Llama compile at the
# default -O2); JOINT_MLIR_FULL_MATRIX=1 runs every example x pipeline
# (docs/lowering.md, "Tests").
_QUICK = {("mlp", "ckpt-full"), ("mlp-dynamic-seq", "ckpt-selective"),
          ("gpt2-tiny", "ckpt-selective"), ("llama-tiny-fp32", "ckpt-offload"),
          ("llama-tiny-bf16", "offload")}
_CASES = [(p, q) for p in EXAMPLES for q in PIPELINES
          if os.environ.get("JOINT_MLIR_FULL_MATRIX") == "1"
          or q == "identity" or (p.stem, q) in _QUICK]

# bf16: the compiled step rounds where torch's kernels round (matmuls, SDPA's
# probabilities) and computes the CPU flash-attention forward's exp with
# torch's fast approximation (test_sdpa_cpu_exp.py): the tiny Llama's worst
# gradient is 0.3% of max|ref| (tol 1%), its loss 8e-8 relative.


@pytest.mark.parametrize("path,pipeline", [
    pytest.param(p, q, id=f"{p.stem}-{q}") for p, q in _CASES])
def test_mlir_cpu_matches_torch(path: Path, pipeline: str) -> None:
    passes = PIPELINES[pipeline]
    if "offload" in pipeline and not _has_attention(path):
        # No attention module (the default scope's target): offload every
        # forward activation instead.
        passes = passes.replace("joint-cpu-offload{",
                                "joint-cpu-offload{scope=all ")
    got = run(str(path), seed=0, backend="mlir-cpu", pipeline=passes)
    _assert_within(got, _base(path), f"{path.stem} / {pipeline}")


def test_compare_scaled_bounds_by_dtype() -> None:
    ref = StepResult(loss=torch.tensor(2.0),
                     grads={"w": torch.tensor([1.0, -4.0]),
                            "h": torch.tensor([8.0], dtype=torch.bfloat16)},
                     loss_dict={})
    # The bound for w is 1e-5 x 4 = 4e-5: 3e-5 passes, 5e-5 does not;
    # for h (bf16) 1e-2 x 8 = 0.08: one bf16 step (0.0625) passes, two fail.
    ok = StepResult(loss=torch.tensor(2.0),
                    grads={"w": torch.tensor([1.0, -4.0 + 3e-5]),
                           "h": torch.tensor([8.0625], dtype=torch.bfloat16)},
                    loss_dict={})
    assert all(d.ok for d in compare_scaled(ok, ref))
    bad = StepResult(loss=torch.tensor(2.0),
                     grads={"w": torch.tensor([1.0 + 5e-5, -4.0]),
                            "h": torch.tensor([8.125], dtype=torch.bfloat16)},
                     loss_dict={})
    assert [d.name for d in compare_scaled(bad, ref) if not d.ok] == [
        "grad w", "grad h"]
    assert COMPILED_TOLERANCE[torch.float32] == 1e-5
    nan = StepResult(loss=torch.tensor(float("nan")), grads=dict(ref.grads),
                     loss_dict={})
    assert [d.name for d in compare_scaled(nan, ref) if not d.ok] == ["loss"]


def test_compare_scaled_roundoff_reference() -> None:
    """A gradient that is zero in exact arithmetic holds only roundoff in
    both runs (an attention key bias): it passes within 16 float32 epsilons
    of the step's largest output, with a note; a real gradient of the same
    size is still held to tol x max|ref|."""
    ref = StepResult(loss=torch.tensor(2.0),
                     grads={"w": torch.tensor([1.0, -4.0]),
                            "k.bias": torch.tensor([7e-9, -3e-9])},
                     loss_dict={})
    # 16 x 2^-23 x 4 = 7.6e-6: the reference (7e-9) and the error (1e-8) are
    # both below it; tol x max|ref| would be 7e-14.
    got = StepResult(loss=torch.tensor(2.0),
                     grads={"w": torch.tensor([1.0, -4.0]),
                            "k.bias": torch.tensor([-3e-9, 2e-9])},
                     loss_dict={})
    diffs = {d.name: d for d in compare_scaled(got, ref)}
    assert diffs["grad k.bias"].ok
    assert diffs["grad k.bias"].note.startswith("reference is roundoff")
    # A reference above the roundoff bound keeps the relative bound.
    ref.grads["k.bias"] = torch.tensor([1e-5, 0.0])
    got.grads["k.bias"] = torch.tensor([1e-5 + 1e-8, 0.0])
    diffs = {d.name: d for d in compare_scaled(got, ref)}
    assert not diffs["grad k.bias"].ok


def _retarget_gelu(doc: dict[str, Any], new: str, schema: str) -> str:
    """Points the first gelu node at ``new`` (operator entry included);
    returns the node's name."""
    node = next(n for n in doc["nodes"] if n["target"] == "aten::gelu.default")
    node["target"] = new
    node["kwargs"] = {}
    entry = json.loads(json.dumps(doc["operators"]["aten::gelu.default"]))
    entry["schema"] = schema
    entry["args"] = entry["args"][:1]
    ops = dict(doc["operators"], **{new: entry})
    # A valid document: the table sorted by target, no entry left unused.
    used = {n["target"] for n in doc["nodes"] if n["kind"] == "call_function"}
    doc["operators"] = {t: ops[t] for t in sorted(ops) if t in used}
    return node["name"]


def _run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT / "python"))
    return subprocess.run([sys.executable, "-m", "joint_mlir.run", *args],
                          capture_output=True, text=True, env=env)


def test_cli_compare_passes_and_fails(tmp_path: Path) -> None:
    mlp = REPO_ROOT / "examples" / "mlp.json"
    r = _run_cli(str(mlp), "--backend", "mlir-cpu", "--compare", str(mlp))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "outputs match (mlir-cpu vs torch, tol x max|ref|)" in r.stdout
    # Another step of the same model (relu where gelu was): exit 1.
    doc = json.loads(mlp.read_text())
    _retarget_gelu(doc, "aten::relu.default",
                   "aten::relu(Tensor self) -> Tensor")
    other = tmp_path / "relu.json"
    other.write_text(json.dumps(doc))
    r = _run_cli(str(other), "--backend", "mlir-cpu", "--compare", str(mlp))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "MISMATCH" in r.stdout


def test_readme_llama_runs_compiled(tmp_path: Path) -> None:
    """README "Use" step 5 on step 1's 2-layer Llama: the compiled step
    needs more stack than the main thread's 8 MiB (it crashed with SIGSEGV
    and no message); the runner calls it on a thread with a large stack."""
    graph = tmp_path / "llama.json.gz"
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT / "python"))
    r = subprocess.run(
        [sys.executable, "-m", "joint_mlir.export", "--model", "llama",
         "--layers", "2", "--hidden", "256", "--heads", "4", "--kv-heads",
         "2", "--intermediate", "512", "--vocab", "1024", "--seq", "128",
         "-o", str(graph)], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    r = _run_cli(str(graph), "--backend", "mlir-cpu", "--compare", str(graph))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "all 24 outputs match (mlir-cpu vs torch, tol x max|ref|)" in r.stdout


def test_cli_unsupported_op_names_it(tmp_path: Path) -> None:
    doc = json.loads((REPO_ROOT / "examples" / "mlp.json").read_text())
    name = _retarget_gelu(doc, "aten::frobnicate.default",
                          "aten::frobnicate(Tensor self) -> Tensor")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    r = _run_cli(str(bad), "--backend", "mlir-cpu")
    assert r.returncode == 2
    assert (f"no lowering for 'aten::frobnicate.default' (node '{name}')"
            in r.stderr)


def test_run_reuses_what_joint_compile_built(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """joint-compile stores its library under the key compile_graph
    computes, so running the same graph compiles nothing; another -O level
    is another key."""
    from joint_mlir import mlir_cpu

    cache = tmp_path / "cache"
    monkeypatch.setenv("JOINT_MLIR_CACHE", str(cache))
    mlp = REPO_ROOT / "examples" / "mlp.json"
    r = subprocess.run([str(tool("joint-compile")), str(mlp), "--target=cpu",
                        "-o", str(tmp_path / "step.so")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    monkeypatch.setenv("PATH", f"{tool('joint-compile').parent}:"
                       + os.environ["PATH"])
    calls: list[list[str]] = []
    real_run = mlir_cpu.subprocess.run

    def spy(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        calls.append(cmd)
        return real_run(cmd, **kw)

    monkeypatch.setattr(mlir_cpu.subprocess, "run", spy)
    lib = mlir_cpu.compile_graph(mlp)
    assert calls == [] and lib.parent.parent == cache
    assert lib.read_bytes() == (tmp_path / "step.so").read_bytes()
    other = mlir_cpu.compile_graph(mlp, opt_level=1)
    assert len(calls) == 1 and "-O1" in calls[0] and other != lib


class _Embed(torch.nn.Module):
    """A bf16 embedding whose rows many tokens share, read in f32."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(8, 16).bfloat16()
        self.register_buffer("w", torch.randn(64, 16))

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        return (self.emb(idx).float() * self.w).sum()


def test_bf16_embedding_gradient_is_torchs_bitwise(tmp_path: Path) -> None:
    """embedding_dense_backward adds each bf16 row in f32 and rounds after
    every addition, as torch's CPU kernel does: the compiled gradient equals
    torch's bit for bit (an f32 accumulator rounded once does not)."""
    from joint_mlir import trace_joint_graph

    torch.manual_seed(0)
    idx = torch.randint(0, 8, (64,))
    doc = trace_joint_graph(_Embed(), lambda m, idx: m(idx),
                            {"idx": idx}).to_json_dict()
    path = tmp_path / "embed.json"
    path.write_text(json.dumps(doc))
    ref = run(str(path), seed=0)
    got = run(str(path), seed=0, backend="mlir-cpu")
    want = ref.named_outputs()["grad emb.weight"]
    assert want.dtype == torch.bfloat16
    assert torch.equal(got.named_outputs()["grad emb.weight"], want)

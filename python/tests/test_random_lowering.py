"""Random ops lowered with Philox 4x32-10 (Random.cpp): a step that draws
gets an ``rng_state`` argument ``[seed, offset]``, and element i of draw d
reads philox(key = seed, counter = (i, offset + d)).

- A NumPy reference of Philox 4x32-10 reproduces the Random123 known-answer
  vectors, and the compiled ``rand`` equals it bit for bit (f32 and bf16);
  ``rand_like`` in a later draw reads offset + 1.
- Distributions (mlir-cpu, and the CUDA step on the emulated device): the
  mean and variance of rand and randn, the keep probability and scale of
  native_dropout, bernoulli's hit rate, each within 6 standard errors.
- rrelu in training: x where x > 0, x r with r in [lower, upper] where
  x <= 0 (mean (lower + upper) / 2), and the backward reads the drawn r.
- The same seed and offset give the same step; another seed or offset
  gives other draws; CPU and emulated CUDA draw the same numbers.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from graph_tools import build_dir, tool
from joint_mlir import trace_joint_graph
from joint_mlir.mlir_cpu import (EMULATED_LOWERING, CompiledStep,
                                 compile_graph, load_emulated_runtime,
                                 run_compiled)
from joint_mlir.executor import materialize

M0, M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
W0, W1 = np.uint32(0x9E3779B9), np.uint32(0xBB67AE85)


def philox(ctr: list[np.ndarray], key: list[np.ndarray]) -> list[np.ndarray]:
    """Philox 4x32-10 on uint32 arrays (Salmon et al., SC'11)."""
    c = [np.asarray(x, dtype=np.uint32) for x in ctr]
    k = [np.asarray(x, dtype=np.uint32) for x in key]
    for r in range(10):
        if r:
            k = [k[0] + W0, k[1] + W1]
        p0 = c[0].astype(np.uint64) * M0
        p1 = c[2].astype(np.uint64) * M1
        hi0, lo0 = (p0 >> np.uint64(32)).astype(np.uint32), p0.astype(np.uint32)
        hi1, lo1 = (p1 >> np.uint64(32)).astype(np.uint32), p1.astype(np.uint32)
        c = [hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0]
    return c


def test_philox_reference_matches_random123() -> None:
    # Random123's kat_vectors for philox4x32_10.
    cases = [
        ([0, 0, 0, 0], [0, 0],
         [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]),
        ([0xffffffff] * 4, [0xffffffff] * 2,
         [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]),
        ([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
         [0xa4093822, 0x299f31d0],
         [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]),
    ]
    with np.errstate(over="ignore"):
        for ctr, key, want in cases:
            got = philox([np.uint32(x) for x in ctr],
                         [np.uint32(x) for x in key])
            assert [int(x) for x in got] == want


def reference_uniform(n: int, seed: int, offset: int, bits: int
                      ) -> np.ndarray:
    """What the lowering draws: the top ``bits`` bits of word 0 of the
    block at (element index, offset) under key ``seed``, times 2^-bits."""
    i = np.arange(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        w = philox([i.astype(np.uint32), (i >> np.uint64(32)).astype(np.uint32),
                    np.uint32(offset & 0xffffffff), np.uint32(offset >> 32)],
                   [np.uint32(seed & 0xffffffff), np.uint32(seed >> 32)])[0]
    return (w >> np.uint32(32 - bits)).astype(np.float64) * 2.0 ** -bits


class _Draws(nn.Module):
    """Every supported draw, returned through loss_dict."""

    def __init__(self, dtype: torch.dtype) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.ones(64, 64, dtype=dtype))
        self.dtype = dtype

    def forward(self, x: torch.Tensor):
        r = torch.rand(64, 64, dtype=self.dtype)          # draw 0
        r2 = torch.rand_like(x)                           # draw 1
        n = torch.randn_like(x)                           # draw 2
        d, mask = torch.ops.aten.native_dropout.default(x * self.w, 0.1,
                                                        True)  # draw 3
        b = torch.bernoulli(torch.full_like(x, 0.3))      # draw 4
        loss = (d.float() ** 2).mean()
        return loss, {"rand": r, "rand_like": r2, "randn": n,
                      "dropout": d, "mask": mask, "bernoulli": b}


def _trace(dtype: torch.dtype) -> dict:
    x = torch.ones(64, 64, dtype=dtype)
    return trace_joint_graph(_Draws(dtype), lambda m, **kw: m(**kw),
                             {"x": x}).to_json_dict()


def _step(doc: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
          emulated: bool = False) -> CompiledStep:
    tool("joint-compile")
    monkeypatch.setenv("JOINT_MLIR_CACHE",
                       str(build_dir() / "joint_mlir_cache"))
    path = tmp_path / "draws.json"
    path.write_text(json.dumps(doc))
    if emulated:
        monkeypatch.setenv("JOINT_CUDA_DEVICE", "emulated")
        load_emulated_runtime()
        return CompiledStep(compile_graph(path, target="cuda",
                                          lowering_options=EMULATED_LOWERING))
    return CompiledStep(compile_graph(path))


def _draws(step: CompiledStep, doc: dict, seed: int, offset: int = 0
           ) -> dict[str, torch.Tensor]:
    state, inputs = materialize(doc, seed=0)
    state = {k: torch.ones_like(v) for k, v in state.items()}
    inputs = {k: torch.ones_like(v) for k, v in inputs.items()}
    res = run_compiled(step, state, inputs, rng_seed=seed, rng_offset=offset)
    return res.loss_dict


@pytest.mark.parametrize("dtype,bits", [(torch.float32, 24),
                                        (torch.bfloat16, 8)],
                         ids=["f32", "bf16"])
def test_rand_is_the_reference_philox_draw(dtype: torch.dtype, bits: int,
                                           tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    doc = _trace(dtype)
    step = _step(doc, tmp_path, monkeypatch)
    assert step.rng_draws == 5
    seed, offset = 0x1234_5678_9abc, 7
    got = _draws(step, doc, seed, offset)
    want = reference_uniform(64 * 64, seed, offset, bits)
    np.testing.assert_array_equal(
        got["rand"].double().flatten().numpy(), want)
    # rand_like is the next draw: counter offset + 1.
    np.testing.assert_array_equal(
        got["rand_like"].double().flatten().numpy(),
        reference_uniform(64 * 64, seed, offset + 1, bits))


def _check_distributions(got: dict[str, torch.Tensor]) -> None:
    n = 64 * 64

    def within(value: float, mean: float, sd: float, what: str) -> None:
        assert abs(value - mean) <= 6 * sd / math.sqrt(n), (
            f"{what}: {value} vs {mean}")

    r = got["rand"].double()
    within(r.mean().item(), 0.5, math.sqrt(1 / 12), "rand mean")
    within(r.var().item(), 1 / 12, math.sqrt(1 / 180), "rand variance")
    assert 0.0 <= r.min().item() and r.max().item() < 1.0
    z = got["randn"].double()
    within(z.mean().item(), 0.0, 1.0, "randn mean")
    within(z.var().item(), 1.0, math.sqrt(2.0), "randn variance")
    keep = got["mask"].double()
    within(keep.mean().item(), 0.9, math.sqrt(0.09), "dropout keep rate")
    d = got["dropout"]
    kept = got["mask"]
    assert torch.equal(d[~kept], torch.zeros_like(d[~kept]))
    scale = torch.tensor(1 / 0.9, dtype=torch.float32).to(d.dtype)
    assert torch.equal(d[kept], scale.expand_as(d[kept]))
    b = got["bernoulli"].double()
    assert set(b.unique().tolist()) <= {0.0, 1.0}
    within(b.mean().item(), 0.3, math.sqrt(0.21), "bernoulli rate")


def test_distributions_and_determinism_on_cpu(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = _trace(torch.float32)
    step = _step(doc, tmp_path, monkeypatch)
    first = _draws(step, doc, seed=3)
    _check_distributions(first)
    again = _draws(step, doc, seed=3)
    for k, v in first.items():
        assert torch.equal(v, again[k]), k
    for other in (_draws(step, doc, seed=4), _draws(step, doc, seed=3,
                                                        offset=5)):
        for k in ("rand", "randn", "mask", "bernoulli"):
            assert not torch.equal(first[k], other[k]), k
    # Draws are independent of each other: different ops, different numbers.
    assert not torch.equal(first["rand"], first["rand_like"])


def test_emulated_cuda_draws_the_cpu_numbers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = _trace(torch.float32)
    cpu = _draws(_step(doc, tmp_path, monkeypatch), doc, seed=11, offset=2)
    emu = _draws(_step(doc, tmp_path, monkeypatch, emulated=True), doc,
                 seed=11, offset=2)
    _check_distributions(emu)
    for k, v in cpu.items():
        assert torch.equal(v, emu[k]), k


class _RRelu(nn.Module):
    """F.rrelu in training: rrelu_with_noise writes a noise buffer its
    schema does not return (functionalized into rrelu_with_noise_functional
    by the driver); the backward reads the noise."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.ones(64, 64))

    def forward(self, x: torch.Tensor, c: torch.Tensor):
        y = torch.nn.functional.rrelu(x * self.w, 0.1, 0.3, training=True)
        return (y * c).sum(), {"y": y}


def test_rrelu_draws_a_slope_per_negative_element(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(64, 64, generator=gen)
    c = torch.randn(64, 64, generator=gen)
    doc = trace_joint_graph(_RRelu(), lambda m, **kw: m(**kw),
                            {"x": x, "c": c}).to_json_dict()
    targets = {n.get("target") for n in doc["nodes"]}
    assert "aten::rrelu_with_noise.default" in targets
    assert "aten::rrelu_with_noise_backward.default" in targets
    step = _step(doc, tmp_path, monkeypatch)
    state = {"w": torch.ones(64, 64)}
    res = run_compiled(step, state, {"x": x, "c": c}, rng_seed=9)
    y = res.loss_dict["y"]
    pos = x > 0
    assert torch.equal(y[pos], x[pos])
    slope = (y[~pos] / x[~pos]).double()
    assert slope.min() >= 0.1 - 1e-6 and slope.max() <= 0.3 + 1e-6
    n = int((~pos).sum())
    assert abs(slope.mean().item() - 0.2) <= 6 * (0.2 / math.sqrt(12)) / \
        math.sqrt(n)
    # d loss / d w = c * noise * x = c * y: the backward read the drawn noise.
    torch.testing.assert_close(res.grads["w"], c * y, rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(res.loss, (y * c).sum(), rtol=1e-5, atol=0)
    other = run_compiled(step, state, {"x": x, "c": c}, rng_seed=10)
    assert not torch.equal(other.loss_dict["y"], y)


def test_compare_with_torch_says_why_draws_differ(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--compare`` of a compiled step against torch on a graph that draws
    fails (the generators differ) and says so, naming the random nodes."""
    import subprocess
    import sys
    tool("joint-compile")
    monkeypatch.setenv("JOINT_MLIR_CACHE",
                       str(build_dir() / "joint_mlir_cache"))
    path = tmp_path / "draws.json"
    path.write_text(json.dumps(_trace(torch.float32)))
    r = subprocess.run([sys.executable, "-m", "joint_mlir.run", str(path),
                        "--backend", "mlir-cpu", "--compare", str(path)],
                       capture_output=True, text=True)
    assert r.returncode == 1, r.stderr[-2000:]
    note = r.stdout.strip().splitlines()[-1]
    assert note.startswith("note: the graph draws random numbers (rand, "
                           "rand_like, randn_like ...): a compiled step "
                           "draws with Philox 4x32-10"), note

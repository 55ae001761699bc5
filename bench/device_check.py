"""Device check of the CUDA lowering (scripts/device-check).

First the emulated-device matrix (joint_mlir.emulated, no GPU needed: every
bundled example x identity, full and selective checkpointing, offload per
block, the planner at a mid budget, checkpointing + offload with prefetch
and defer, on the CUDA runtime's emulated device against torch, its peak
against the model's and its transfer-stream copies against the ao ops);
then the checks below.
For each graph (tiny Llama, 2-layer llama3-8b) x pipeline (identity, full
checkpointing, offload, checkpointing+offload): compile with
``joint-compile --target=cuda`` (runs anywhere with the toolkit). With a GPU,
also: numerics of the compiled step against torch CUDA on the same graph
(tol x max|ref|: 1e-5 f32, 1e-2 bf16); the runtime's device peak (high-water
mark of its allocations) against ``joint-memory-report``'s model; step time
against torch eager and torch.compile of the same graph; offload D2H/H2D
bandwidth of the runtime's transfer path against a plain pinned
``cuMemcpyAsync`` (torch ``copy_`` with ``non_blocking``) of the same size;
the share of transfer time hidden behind compute; the cuDNN SDPA library
path (the runtime's ``joint_cudnn_sdpa_forward``/``_backward`` with a causal
mask, an additive mask and grouped heads) against torch CUDA: output,
logsumexp statistics and the three gradients. Compiled bf16 graphs must call
the SDPA shims (checked without a GPU too). Results go to
``bench/gpu.md`` (GPU runs only). Without a GPU every GPU-only part prints
why it is skipped and the exit status reflects the emulated matrix and
the compile checks only. Last, one table puts the emulated, real (GPU) and
modelled peaks side by side, with the emulated run time and the GPU step
time where measured.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

GRAPHS = {
    "tiny": ROOT / "examples" / "llama-tiny-fp32.json",
    "llama3-8b-2l": ROOT / "examples" / "real" / "llama3-8b-2layers-bf16.json",
}
PIPELINES = {
    "identity": "",
    "ckpt-full": "joint-activation-checkpoint{mode=full}",
    "offload": "joint-cpu-offload{min-bytes=1024}",
    "ckpt-offload": "joint-activation-checkpoint{mode=selective},"
                    "joint-cpu-offload{min-bytes=1024}",
}


def gpu_reason() -> str | None:
    """None when a CUDA GPU is usable, else why not."""
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "no NVIDIA GPU (torch.cuda.is_available() is False)"
    return None


def model_peak_bytes(graph: Path, pipeline: str) -> int | None:
    """Peak device bytes of joint-memory-report's model after ``pipeline``
    (resident arguments included)."""
    from joint_mlir.pipeline import opt_flags

    args = ["joint-opt", str(graph), *opt_flags(pipeline),
            "--joint-memory-report=output=-", "-o", "/dev/null"]
    r = subprocess.run(args, capture_output=True, text=True)
    m = re.search(r"^peak device\s.*\((\d+) B\)", r.stdout, re.M)
    return int(m.group(1)) if m else None


def caller_bytes(descriptor: dict) -> int:
    """Bytes of a compiled step's caller-owned buffers (every tensor argument
    and output of static shape), live throughout the step."""
    sizes = {"float32": 4, "bfloat16": 2, "float16": 2, "int64": 8,
             "int32": 4, "bool": 1}
    total = 0
    for slot in descriptor["arguments"] + descriptor["outputs"]:
        if slot.get("kind") != "tensor":
            continue
        n = sizes.get(slot["dtype"], 0)
        for d in slot["shape"]:
            n *= d if isinstance(d, int) else 0
        total += n
    return total


def sdpa_symbols(library: Path) -> set[str]:
    """The cuDNN SDPA shims ``library`` calls (its undefined dynamic
    symbols), e.g. {"joint_cudnn_sdpa_forward", "joint_cudnn_sdpa_backward"}."""
    r = subprocess.run(["nm", "-D", "--undefined-only", str(library)],
                       capture_output=True, text=True)
    return set(re.findall(r"\b(joint_cudnn_sdpa_\w+)", r.stdout))


def runtime_library():
    """ctypes handle of the build's libjoint_cuda_runtime.so."""
    import os
    build = Path(os.environ.get("JOINT_BUILD_DIR", ROOT / "build"))
    return ctypes.CDLL(str(build / "lib" / "libjoint_cuda_runtime.so"))


def sdpa_library_check() -> tuple[list[str], int]:
    """The runtime's cuDNN SDPA forward and backward on torch CUDA tensors
    against torch's f32 reference (autograd through the math formula):
    output and gradients within 2e-2 x max|ref| (bf16), the statistics (f32
    natural-log logsumexp, [B, H, L]) within 1e-2 absolute. Markdown lines
    and the number of failures."""
    import torch
    rt = runtime_library()
    if not rt.joint_cudnn_sdpa_available():
        print("sdpa: skipped: the runtime was built without the cuDNN "
              "frontend (pip install nvidia-cudnn-frontend, reconfigure)")
        return ["", "cuDNN SDPA: skipped (runtime built without the "
                "frontend)."], 0
    P = ctypes.c_void_p
    rt.joint_runtime_last_error.restype = ctypes.c_char_p
    rt.joint_runtime_set_compute_stream.argtypes = [P]
    i64, f32, i32 = ctypes.c_int64, ctypes.c_float, ctypes.c_int32
    common = [ctypes.c_char_p, i32] + [i64] * 6 + [f32, i32]
    rt.joint_cudnn_sdpa_forward.argtypes = common + [P] * 12
    rt.joint_cudnn_sdpa_backward.argtypes = common + [P] * 20
    rt.joint_runtime_set_compute_stream(
        P(torch.cuda.current_stream().cuda_stream))
    keep = []  # stride arrays stay alive until the calls returned

    def st(t):
        a = (ctypes.c_int64 * 4)(*t.stride())
        keep.append(a)
        return ctypes.cast(a, P)

    def ptr(t):
        return P(t.data_ptr()) if t is not None else None

    lines = ["", "cuDNN SDPA through the runtime's shims against torch "
             "(f32 reference; max|got - ref| / max|ref|):", "",
             "| case | out | lse (abs) | dq | dk | dv | status |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    failures = 0
    torch.manual_seed(0)
    B, H, L, E = 2, 8, 128, 64
    for name, hk, causal, masked in (("causal", 8, True, False),
                                      ("additive mask", 8, False, True),
                                      ("grouped heads 8/2, causal", 2, True,
                                       False)):
        dev, bf = "cuda", torch.bfloat16
        q = torch.randn(B, H, L, E, device=dev, dtype=bf)
        k = torch.randn(B, hk, L, E, device=dev, dtype=bf)
        v = torch.randn(B, hk, L, E, device=dev, dtype=bf)
        do = torch.randn(B, H, L, E, device=dev, dtype=bf)
        mask = None
        if masked:  # Llama's form: 0 / -inf, [B, 1, L, S], bf16
            keepm = torch.rand(B, 1, L, L, device=dev) > 0.3
            keepm[..., 0] = True
            mask = torch.zeros(B, 1, L, L, device=dev, dtype=bf).masked_fill(
                ~keepm, float("-inf"))
        scale = E ** -0.5
        o = torch.empty_like(q)
        lse = torch.empty(B, H, L, device=dev, dtype=torch.float32)
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), \
            torch.empty_like(v)
        md = (ctypes.c_int64 * 4)(*mask.shape) if masked else None
        mdp = ctypes.cast(md, P) if masked else None
        head = [b"sdpa_check", 1, B, H, hk, L, L, E, scale, int(causal)]
        status = rt.joint_cudnn_sdpa_forward(
            *head, ptr(q), st(q), ptr(k), st(k), ptr(v), st(v), ptr(o), st(o),
            ptr(lse), ptr(mask), mdp, st(mask) if masked else None)
        if status == 0:
            status = rt.joint_cudnn_sdpa_backward(
                *head, ptr(q), st(q), ptr(k), st(k), ptr(v), st(v), ptr(o),
                st(o), ptr(do), st(do), ptr(lse), ptr(dq), st(dq), ptr(dk),
                st(dk), ptr(dv), st(dv), ptr(mask), mdp,
                st(mask) if masked else None)
        torch.cuda.synchronize()
        if status != 0:
            failures += 1
            err = rt.joint_runtime_last_error().decode()
            rt.joint_runtime_clear_error()
            print(f"sdpa {name}: FAILED: {err}")
            lines.append(f"| {name} | | | | | | FAILED: {err} |")
            continue
        # Reference in f32 with torch's semantics (is_causal top-left).
        qf, kf, vf = (t.float().requires_grad_() for t in (q, k, v))
        g = H // hk
        kr, vr = kf.repeat_interleave(g, 1), vf.repeat_interleave(g, 1)
        x = (qf @ kr.transpose(-1, -2)) * scale
        if masked:
            x = x + mask.float()
        if causal:
            x = x.masked_fill(torch.ones(L, L, device=dev, dtype=torch.bool)
                              .triu(1), float("-inf"))
        ref_lse = torch.logsumexp(x, -1)
        ref_o = torch.softmax(x, -1) @ vr
        ref_o.backward(do.float())

        def rel(got, ref):
            return ((got.float() - ref).abs().max() /
                    ref.abs().max().clamp_min(1e-30)).item()

        errs = [rel(o, ref_o.detach()),
                (lse - ref_lse.detach()).abs().max().item(),
                rel(dq, qf.grad), rel(dk, kf.grad), rel(dv, vf.grad)]
        ok = errs[1] <= 1e-2 and all(e <= 2e-2 for i, e in enumerate(errs)
                                     if i != 1)
        failures += 0 if ok else 1
        print(f"sdpa {name}: {'ok' if ok else 'MISMATCH'} "
              + " ".join(f"{e:.2e}" for e in errs))
        lines.append(f"| {name} | " + " | ".join(f"{e:.2e}" for e in errs)
                     + f" | {'ok' if ok else 'MISMATCH'} |")
    return lines, failures


def emulated_matrix(jobs: int,
                    examples: list[str]) -> tuple[list[dict], int]:
    """The emulated-device matrix of ``examples`` (joint_mlir.emulated.
    run_matrix, default compile cache): its cases and how many failed."""
    from joint_mlir.emulated import run_matrix, verdict
    t0 = time.perf_counter()
    cases = run_matrix(None, jobs, examples)
    bad = 0
    for c in cases:
        v = verdict(c)
        bad += v != "ok"
        peak = (f", peak {c['emulated_peak']} B / model {c['model_peak']} B"
                if "emulated_peak" in c else "")
        print(f"emulated {c['graph']} {c['pipeline']}: {v}{peak}")
    print(f"emulated matrix: {len(cases)} cases, {bad} failed, "
          f"{time.perf_counter() - t0:.0f} s")
    return cases, bad


def peak_table(emulated: list[dict], gpu_rows: list[tuple]) -> list[str]:
    """Markdown: emulated, real and modelled peaks (bytes; ratios to the
    model) per graph x pipeline, with the emulated run (s) and the GPU step
    (ms) where measured. ``gpu_rows`` are run_on_gpu's rows."""
    real = {(GRAPHS[r[0]].stem, r[1]): r for r in gpu_rows}
    lines = ["| graph | pipeline | model peak | emulated peak | emulated / "
             "model | real peak | real / model | emulated run (s) | real "
             "step (ms) |", "| --- | --- | --- | --- | --- | --- | --- | --- "
             "| --- |"]
    seen = set()
    for c in emulated:
        if "emulated_peak" not in c:
            continue
        key = (c["graph"], c["pipeline"])
        seen.add(key)
        r = real.get(key)
        rp = f"{r[3]} | {r[3] / c['model_peak']:.3f}" if r else "n/a | n/a"
        rt = f"{r[6] * 1e3:.2f}" if r else "n/a"
        lines.append(f"| {c['graph']} | {c['pipeline']} | {c['model_peak']} "
                     f"| {c['emulated_peak']} | "
                     f"{c['emulated_peak'] / c['model_peak']:.3f} | {rp} | "
                     f"{c['run_s']:.2f} | {rt} |")
    for key, r in real.items():
        if key in seen:
            continue
        ratio = f"{r[3] / r[5]:.3f}" if r[5] else "n/a"
        lines.append(f"| {key[0]} | {key[1]} | {r[5]} | n/a | n/a | {r[3]} "
                     f"| {ratio} | n/a | {r[6] * 1e3:.2f} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--graphs", default=",".join(GRAPHS),
                   help="comma-separated subset of " + ", ".join(GRAPHS))
    p.add_argument("--pipelines", default=",".join(PIPELINES),
                   help="comma-separated subset of " + ", ".join(PIPELINES))
    p.add_argument("--out", default=str(ROOT / "bench" / "gpu.md"))
    p.add_argument("--emulated-jobs", type=int,
                   default=min(5, os.cpu_count() or 1),
                   help="examples of the emulated matrix run at a time")
    p.add_argument("--emulated-examples", default=None,
                   help="comma-separated examples (examples/NAME.json) of "
                   "the emulated matrix (default: all bundled ones)")
    p.add_argument("--no-emulated", action="store_true",
                   help="skip the emulated-device matrix")
    a = p.parse_args(argv)
    from joint_mlir.emulated import EXAMPLES
    examples = a.emulated_examples.split(",") if a.emulated_examples \
        else EXAMPLES
    for e in examples:
        if not (ROOT / "examples" / f"{e}.json").exists():
            print(f"device-check: unknown example {e!r}", file=sys.stderr)
            return 2
    emulated, failures = ([], 0) if a.no_emulated else \
        emulated_matrix(a.emulated_jobs, examples)
    from joint_mlir.mlir_cpu import CompileError, compile_graph

    reason = gpu_reason()
    if reason:
        print(f"device-check: GPU-only parts skipped: {reason}; only the "
              "compile checks run (numerics, peak, bandwidth and timings "
              "need a GPU)")
    libs = {}
    for g in a.graphs.split(","):
        if g not in GRAPHS:
            print(f"device-check: unknown graph {g!r}", file=sys.stderr)
            return 2
        for name in a.pipelines.split(","):
            if name not in PIPELINES:
                print(f"device-check: unknown pipeline {name!r}",
                      file=sys.stderr)
                return 2
            pipe = PIPELINES[name]
            t0 = time.perf_counter()
            try:
                libs[g, name] = compile_graph(GRAPHS[g], pipeline=pipe,
                                              target="cuda")
                shims = sdpa_symbols(libs[g, name])
                print(f"compile {g} {name}: ok "
                      f"({time.perf_counter() - t0:.1f} s), SDPA "
                      f"{'through cuDNN' if shims else 'as generated kernels'}")
                if "bf16" in GRAPHS[g].name and len(shims) != 2:
                    # bf16 Llama attention is within cuDNN's support.
                    failures += 1
                    print(f"compile {g} {name}: FAILED: expected calls to "
                          f"both cuDNN SDPA shims, found {sorted(shims)}")
            except CompileError as e:
                failures += 1
                print(f"compile {g} {name}: FAILED\n{e}")
    if reason:
        print(f"device-check: cuDNN SDPA library check skipped: {reason}")
        if emulated:
            print("\n".join(["", "Peaks (bytes): emulated and modelled; "
                             f"real skipped: {reason}", ""] +
                             peak_table(emulated, [])))
        return 1 if failures else 0
    return run_on_gpu(a, libs, failures, emulated)


# Measurements stop after 7 minutes (later ones are skipped with a message),
# so the whole script stays under scripts/device-check's 12-minute limit.
BUDGET_S = 7 * 60
REPS = 3            # timed runs per measurement after a warm-up (median)


def offloaded_bytes(graph: Path, pipeline: str) -> int:
    """Bytes the `ao.offload`s of ``graph`` after ``pipeline`` copy (each
    also comes back once): the sum of their static tensor sizes."""
    args = ["joint-opt", str(graph),
            f"--pass-pipeline=builtin.module({pipeline})"]
    r = subprocess.run(args, capture_output=True, text=True)
    sizes = {"f32": 4, "bf16": 2, "f16": 2, "i64": 8, "i32": 4, "i1": 1}
    total = 0
    for m in re.finditer(r"ao\.offload [^\n]*: tensor<([^>]*)>", r.stdout):
        *dims, dtype = m.group(1).split("x")
        n = sizes.get(dtype, 0)
        for d in dims:
            n *= int(d) if d.isdigit() else 0
        total += n
    return total


def median_time(fn, reps: int = REPS) -> float:
    """Median wall time of ``fn()`` in seconds; ``fn`` synchronises."""
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2]


class DriverPool:
    """The default memory pool of the current device through libcuda: its
    ``CU_MEMPOOL_ATTR_USED_MEM_HIGH`` is the driver's high-water mark of the
    stream-ordered allocations (ours; torch's caching allocator does not use
    the pool)."""

    USED_MEM_HIGH = 8  # CUmemPool_attribute

    def __init__(self, ordinal: int) -> None:
        self.cu = ctypes.CDLL("libcuda.so.1")
        dev = ctypes.c_int()
        self.pool = ctypes.c_void_p()
        ok = (self.cu.cuDeviceGet(ctypes.byref(dev), ordinal) == 0 and
              self.cu.cuDeviceGetDefaultMemPool(ctypes.byref(self.pool),
                                                dev) == 0)
        if not ok:
            self.pool = None

    def reset(self) -> None:
        if self.pool:
            zero = ctypes.c_uint64(0)
            self.cu.cuMemPoolSetAttribute(self.pool, self.USED_MEM_HIGH,
                                          ctypes.byref(zero))

    def high(self) -> int | None:
        v = ctypes.c_uint64(0)
        if not self.pool or self.cu.cuMemPoolGetAttribute(
                self.pool, self.USED_MEM_HIGH, ctypes.byref(v)) != 0:
            return None
        return int(v.value)


def transfer_bandwidth(rt, nbytes: int):
    """GB/s of the runtime's ao path (joint_ao_offload + wait, joint_ao_reload
    + wait: pinned pool warm, transfer stream) and of a plain pinned
    cuMemcpyAsync (torch ``copy_(non_blocking=True)``) of the same size:
    (d2h_ours, d2h_plain, h2d_ours, h2d_plain)."""
    import torch
    rt.joint_ao_offload.restype = ctypes.c_void_p
    rt.joint_ao_offload.argtypes = [ctypes.c_void_p, ctypes.c_uint64,
                                    ctypes.c_char_p]
    rt.joint_ao_reload.restype = ctypes.c_void_p
    rt.joint_ao_reload.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    for f in ("joint_ao_wait", "joint_ao_release"):
        getattr(rt, f).argtypes = [ctypes.c_void_p]
    rt.mgpuMemFree.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    dev = torch.ones(nbytes, dtype=torch.uint8, device="cuda")
    host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    torch.cuda.synchronize()
    d2h, h2d = [], []
    for i in range(REPS + 1):  # the first fills the pinned pool
        t0 = time.perf_counter()
        h = rt.joint_ao_offload(dev.data_ptr(), nbytes, b"bandwidth")
        rt.joint_ao_wait(h)
        rt.joint_runtime_synchronize()
        t1 = time.perf_counter()
        d = rt.joint_ao_reload(h, b"bandwidth")
        rt.joint_ao_wait(h)
        rt.joint_runtime_synchronize()
        t2 = time.perf_counter()
        rt.joint_ao_release(h)
        rt.mgpuMemFree(d, None)
        if i:
            d2h.append(t1 - t0)
            h2d.append(t2 - t1)
    if rt.joint_runtime_status() != 0:
        raise RuntimeError(rt.joint_runtime_last_error().decode())

    def plain(dst, src):
        dst.copy_(src, non_blocking=True)
        torch.cuda.synchronize()

    plain(host, dev)
    pd2h = median_time(lambda: plain(host, dev))
    ph2d = median_time(lambda: plain(dev, host))
    gbs = lambda t: nbytes / t / 1e9  # noqa: E731
    return (gbs(sorted(d2h)[len(d2h) // 2]), gbs(pd2h),
            gbs(sorted(h2d)[len(h2d) // 2]), gbs(ph2d))


def run_on_gpu(a, libs, failures: int, emulated: list[dict]) -> int:
    import torch
    from joint_mlir.mlir_cpu import CompiledStep, run_compiled
    from joint_mlir.executor import compare_scaled, materialize, run_graph
    from joint_mlir.format import read_document
    from joint_mlir.fx import build_graph_module

    start = time.perf_counter()
    over = lambda: time.perf_counter() - start > BUDGET_S  # noqa: E731
    pool = DriverPool(torch.cuda.current_device())
    rows, torch_times, step_times, rt = [], {}, {}, None
    sdpa_lines, sdpa_failures = sdpa_library_check()
    failures += sdpa_failures
    for (g, name), lib in libs.items():
        graph = GRAPHS[g]
        doc = read_document(str(graph))
        step = CompiledStep(lib)
        rt = step._lib
        rt.joint_runtime_peak_bytes.restype = ctypes.c_uint64
        rt.joint_runtime_last_error.restype = ctypes.c_char_p
        state, inputs = materialize(doc, seed=0, device="cuda")
        gm = build_graph_module(doc, device="cuda")
        ref = run_graph(gm, state, inputs, seed=0)
        rt.joint_runtime_reset_peak()
        pool.reset()
        torch.cuda.synchronize()
        got = run_compiled(step, state, inputs)  # also the warm-up
        torch.cuda.synchronize()
        peak, driver_peak = int(rt.joint_runtime_peak_bytes()), pool.high()
        diffs = compare_scaled(got, ref)
        ok = all(d.ok for d in diffs)
        failures += 0 if ok else 1
        t_ours = median_time(lambda: (run_compiled(step, state, inputs),
                                      torch.cuda.synchronize()))
        step_times[g, name] = t_ours
        if g not in torch_times and not over():
            # torch eager and torch.compile on the same (original) graph.
            flat = [state[f] for f in gm.state_fqns] + [
                inputs[p] for p in gm.input_paths]

            def call(fn):
                with torch.no_grad():
                    fn(*flat)
                torch.cuda.synchronize()

            eager = median_time(lambda: call(gm))
            t0 = time.perf_counter()
            compiled = torch.compile(gm)
            call(compiled)
            print(f"torch.compile {g}: {time.perf_counter() - t0:.1f} s")
            torch_times[g] = (eager, median_time(lambda: call(compiled)))
        eager, tc = torch_times.get(g, (float("nan"), float("nan")))
        model = model_peak_bytes(graph, PIPELINES[name])
        peak += caller_bytes(step.descriptor)
        rows.append((g, name, "ok" if ok else "MISMATCH", peak, driver_peak,
                     model, t_ours, t_ours / eager, t_ours / tc))
        print(f"gpu {g} {name}: {rows[-1][2]}, peak {peak} B, "
              f"{t_ours * 1e3:.2f} ms")

    lines = ["# GPU device check (scripts/device-check)", "",
             f"GPU: {torch.cuda.get_device_name()}", "",
             "Peaks in bytes: the runtime's high-water mark of its "
             "allocations plus the caller's argument and output buffers, the "
             "driver's high-water mark of the step's allocations alone "
             "(default pool `USED_MEM_HIGH`), and `joint-memory-report`'s "
             "model peak (target: within 10%). Step times: "
             f"median of {REPS} after a warm-up; ratios against torch eager "
             "and `torch.compile` of the original graph on the same tensors.",
             "",
             "| graph | pipeline | numerics | runtime peak | driver peak "
             "| model peak | peak/model | step (ms) | / eager | / compile |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for g, name, ok, peak, dpeak, model, t, re_, rc in rows:
        pm = (f"{peak / model:.2f}" + (" ok" if abs(peak / model - 1) <= .1
                                       else " off")) if model else "n/a"
        lines.append(f"| {g} | {name} | {ok} | {peak} | {dpeak} | {model} | "
                     f"{pm} | {t * 1e3:.2f} | {re_:.2f} | {rc:.2f} |")

    table = peak_table(emulated, rows)
    print("\n".join(["", "Peaks (bytes): emulated, real, modelled", ""] +
                     table))
    lines += ["", "Emulated (scripts/device-check's emulated matrix: "
              "arguments staged, outputs from their first write), real "
              "(runtime peak plus caller buffers, as above) and modelled "
              "peaks; the emulated step's run time and the GPU step's:", "",
              *table]
    lines += sdpa_lines

    # Offload transfers: the runtime's path against a plain pinned copy.
    if rt is not None and not over():
        n = 256 << 20
        d2h, pd2h, h2d, ph2d = transfer_bandwidth(rt, n)
        lines += ["", f"Transfers of {n >> 20} MiB (GB/s; target >= 0.80 of "
                  "the plain copy):", "",
                  "| direction | runtime ao path | plain pinned cuMemcpyAsync "
                  "| ratio |", "| --- | --- | --- | --- |",
                  f"| D2H (offload) | {d2h:.1f} | {pd2h:.1f} | "
                  f"{d2h / pd2h:.2f} |",
                  f"| H2D (reload) | {h2d:.1f} | {ph2d:.1f} | "
                  f"{h2d / ph2d:.2f} |"]
        # Hidden share: 1 - (offload step - identity step) / transfer time.
        lines += ["", "Transfer time hidden behind compute (offload against "
                  "identity; transfer time = offloaded bytes at the measured "
                  "bandwidths, each way once):", "",
                  "| graph | offloaded (B) | transfer (ms) | step overhead "
                  "(ms) | hidden |", "| --- | --- | --- | --- | --- |"]
        for g in {g for g, _ in step_times}:
            if (g, "offload") not in step_times or (g, "identity") \
                    not in step_times:
                continue
            nb = offloaded_bytes(GRAPHS[g], PIPELINES["offload"])
            xfer = nb / (d2h * 1e9) + nb / (h2d * 1e9)
            extra = max(0.0, step_times[g, "offload"] -
                        step_times[g, "identity"])
            hidden = max(0.0, 1 - extra / xfer) if xfer else float("nan")
            lines.append(f"| {g} | {nb} | {xfer * 1e3:.3f} | "
                         f"{extra * 1e3:.3f} | {hidden:.2f} |")
    if over():
        lines += ["", f"Stopped early: past the {BUDGET_S} s budget."]
        print(f"device-check: past the {BUDGET_S} s budget, later "
              "measurements skipped")
    Path(a.out).write_text("\n".join(lines) + "\n")
    print(f"device-check: wrote {a.out}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

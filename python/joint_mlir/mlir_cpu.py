"""The ``mlir-cpu`` backend: compile a joint graph with ``joint-compile`` and
run the step through its C entry point (docs/lowering.md, "ABI").

:func:`compile_graph` calls ``joint-compile --target=cpu`` once per distinct
(graph bytes, user pipeline, lowering options, target, ``-O`` level, tool
binary, host) and keeps the library and its descriptor under
``$JOINT_MLIR_CACHE`` (default ``~/.cache/joint_mlir``), keyed by the SHA-256
of those. ``joint-compile`` run by hand stores what it builds under the same
key, so running a graph it already compiled does not compile it again. :class:`CompiledStep`
loads the library with ctypes and calls ``joint_step`` with the data pointers
of the caller's tensors (no copies, except a non-contiguous input, which is
made contiguous first) and of freshly allocated output tensors; dynamic sizes
are read from the argument tensors and the outputs' sizes are evaluated from
the symbolic expressions of the descriptor (``s0``, ``4*s0``, ...).

The ``mlir-cuda`` backend shares both: ``compile_graph(..., target="cuda")``
runs ``joint-compile --target=cuda``, and a step whose descriptor says
``joint-cuda-step`` takes and returns CUDA tensors; it runs on torch's
current stream (``joint_runtime_set_compute_stream``) and is synchronised
after the call, whose status (and the runtime's error text) is checked.
A CUDA step compiled with ``lowering_options="emulate"``
and loaded with ``JOINT_CUDA_DEVICE=emulated`` runs on the runtime's
emulated device (kernels compiled for the host): it takes and returns cpu
tensors, copied into and out of emulated device allocations on the
runtime's compute stream (:attr:`CompiledStep.emulated`).
:func:`load_emulated_runtime` selects the emulated device in process (the
``mlir-cuda-emulated`` backend), so neither ``JOINT_CUDA_DEVICE`` nor
``LD_LIBRARY_PATH`` has to be set by the user.
"""

from __future__ import annotations

import ast
import ctypes
import json
import operator
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import torch

from .errors import JointMlirError

__all__ = ["CompileError", "CompiledStep", "EMULATED_LOWERING", "StepError",
           "compile_graph", "find_tool", "load_emulated_runtime",
           "run_compiled"]


class CompileError(JointMlirError, RuntimeError):
    """joint-compile refused the graph; the message has its error lines."""


class StepError(JointMlirError, RuntimeError):
    """A compiled step returned an error status; the message has the
    runtime's first error (call and node)."""


def find_tool(name: str = "joint-compile") -> Path:
    """``$JOINT_BUILD_DIR/bin``, then ``PATH``, then ``<repo>/build/bin``."""
    repo = Path(__file__).resolve().parents[2]
    env = os.environ.get("JOINT_BUILD_DIR")
    candidates = []
    if env:
        p = Path(env)
        candidates.append((p if p.is_absolute() else repo / p) / "bin" / name)
    found = shutil.which(name)
    if found:
        candidates.append(Path(found))
    candidates.append(repo / "build" / "bin" / name)
    for c in candidates:
        if os.access(c, os.X_OK):
            return c
    raise CompileError(f"{name} is not built (run scripts/build, or put it "
                       "on PATH)")


# joint-compile's --lowering-options for the emulated device (the
# mlir-cuda-emulated backend, its tests and bench/emulated). The cuBLAS and
# cuDNN shims do not run on the emulated device yet, so GEMMs and attention
# are generated kernels; drop "library-calls=false" once they do.
EMULATED_LOWERING = "emulate library-calls=false"


def _build_root() -> Path:
    """The build directory whose tools and libraries are used."""
    env = os.environ.get("JOINT_BUILD_DIR")
    if env:
        p = Path(env)
        repo = Path(__file__).resolve().parents[2]
        return p if p.is_absolute() else repo / p
    return find_tool().resolve().parents[1]


def _mapped(fragment: str) -> bool:
    """Whether a file whose path contains ``fragment`` is mapped into this
    process (Linux: /proc/self/maps)."""
    try:
        with open("/proc/self/maps") as f:
            return any(fragment in line for line in f)
    except OSError:
        return False


_EMULATED_RUNTIME: ctypes.CDLL | None = None


def load_emulated_runtime() -> ctypes.CDLL:
    """The build's ``libjoint_cuda_runtime.so``, running on the emulated
    device (runtime/cuda/README.md, "Emulated device").

    Loads the build's libcuda stub (``lib/cuda-stub/libcuda.so.1``, which
    only satisfies the loader: the emulated device never calls libcuda)
    unless a libcuda is already loaded, then the runtime, both global so a
    step library loaded later binds to them, and selects the emulated
    device before the runtime's first call. The device is chosen once per
    process: raises :class:`StepError` when the runtime already runs on the
    real device here.
    """
    global _EMULATED_RUNTIME
    if _EMULATED_RUNTIME is not None:
        return _EMULATED_RUNTIME
    lib_dir = _build_root() / "lib"
    runtime = lib_dir / "libjoint_cuda_runtime.so"
    if not runtime.exists():
        raise StepError(f"{runtime} is not built (the CUDA runtime needs "
                        "JOINT_ENABLE_CUDA=ON and scripts/build)")
    if not _mapped("libcuda.so"):
        stub = lib_dir / "cuda-stub" / "libcuda.so.1"
        if stub.exists():
            ctypes.CDLL(str(stub), mode=ctypes.RTLD_GLOBAL)
    previous = os.environ.get("JOINT_CUDA_DEVICE")
    os.environ["JOINT_CUDA_DEVICE"] = "emulated"
    try:
        lib = ctypes.CDLL(str(runtime), mode=ctypes.RTLD_GLOBAL)
        lib.joint_emu_active.restype = ctypes.c_int32
        # The runtime's first call picks its device from the variable.
        active = bool(lib.joint_emu_active())
    finally:
        if previous is None:
            del os.environ["JOINT_CUDA_DEVICE"]
        else:
            os.environ["JOINT_CUDA_DEVICE"] = previous
    if not active:
        raise StepError(
            f"{runtime}: the CUDA runtime already runs on the real device in "
            "this process (it picks its device at its first call); run the "
            "mlir-cuda-emulated backend in a fresh process, or set "
            "JOINT_CUDA_DEVICE=emulated before anything loads the runtime")
    _EMULATED_RUNTIME = lib
    return lib


# joint-compile's default -O level (tools/joint-compile): the lowest compile
# time plus 10,000 steps measured by bench/lowering on llama-tiny.
DEFAULT_OPT_LEVEL = 2


def _cache_dir() -> Path:
    env = os.environ.get("JOINT_MLIR_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "joint_mlir"


def compile_graph(graph: str | Path | dict[str, Any], *, pipeline: str = "",
                  lowering_options: str = "",
                  cache_dir: str | Path | None = None,
                  target: str = "cpu", opt_level: int | None = None) -> Path:
    """Path of the compiled library of ``graph`` (a file or a document).

    ``pipeline`` is joint-compile's ``--pipeline`` (joint passes run first);
    ``target`` its ``--target`` (cpu or cuda); ``opt_level`` its ``-O``
    (0-3, default :data:`DEFAULT_OPT_LEVEL`). The cache key is the one
    joint-compile stores under (``joint_mlir._core.step_cache_key``).
    Raises :class:`CompileError` with joint-compile's diagnostics.
    """
    tool = find_tool()
    if isinstance(graph, dict):
        data = json.dumps(graph, sort_keys=True).encode()
        suffix = ".json"
    else:
        data = Path(graph).read_bytes()
        name = str(graph)
        suffix = ".json.gz" if name.endswith(".gz") else Path(name).suffix
    level = DEFAULT_OPT_LEVEL if opt_level is None else int(opt_level)
    if not 0 <= level <= 3:
        raise ValueError(f"opt_level {level}: the level is 0, 1, 2 or 3")
    from joint_mlir import _core
    key = _core.step_cache_key(data, pipeline, lowering_options, target,
                               level, str(tool.resolve()))
    out_dir = Path(cache_dir) if cache_dir else _cache_dir()
    out_dir = out_dir / key
    lib = out_dir / "step.so"
    if lib.exists() and Path(str(lib) + ".json").exists():
        return lib
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
        # A file compiles in place, so diagnostics name it.
        src = Path(tmp) / ("graph" + suffix)
        if isinstance(graph, dict):
            src.write_bytes(data)
        else:
            src = Path(graph)
        cmd = [str(tool), str(src), f"--target={target}", f"-O{level}",
               "--no-cache", "-o", str(lib)]
        if pipeline:
            cmd.append(f"--pipeline={pipeline}")
        if lowering_options:
            cmd.append(f"--lowering-options={lowering_options}")
        r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        # Diagnostics echo JSON source lines; keep the error lines, clipped.
        lines = [ln[:400] for ln in r.stderr.splitlines() if "error" in ln]
        raise CompileError(f"joint-compile failed ({r.returncode}) on "
                           f"{graph if not isinstance(graph, dict) else 'document'}:\n"
                           + "\n".join(lines[:10] or [r.stderr[-2000:]]))
    return lib


_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub,
           ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
           ast.Mod: operator.mod}


def _eval_expr(expr: str, env: dict[str, int]) -> int:
    """Value of a torch SymInt expression (names, ints, + - * // %)."""
    def ev(n: ast.AST) -> int:
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant) and isinstance(n.value, int):
            return n.value
        if isinstance(n, ast.Name):
            if n.id not in env:
                raise ValueError(f"symbol {n.id} of size {expr!r} is not "
                                 "bound by any argument")
            return env[n.id]
        if isinstance(n, ast.BinOp) and type(n.op) in _BINOPS:
            return _BINOPS[type(n.op)](ev(n.left), ev(n.right))
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -ev(n.operand)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and \
                n.func.id in ("floor", "ceiling", "FloorDiv") and n.args:
            vals = [ev(a) for a in n.args]
            return vals[0] // vals[1] if n.func.id == "FloorDiv" else vals[0]
        raise ValueError(f"cannot evaluate size expression {expr!r}")
    return ev(ast.parse(expr, mode="eval"))


class CompiledStep:
    """A loaded step library and its descriptor."""

    def __init__(self, library: str | Path) -> None:
        # Absolute: dlopen searches the library path for a bare file name
        # (`step.so`, or `./step.so` once Path drops the `./`).
        self.library = Path(library).resolve()
        self.descriptor = json.loads(
            Path(str(library) + ".json").read_text())
        try:
            self._lib = ctypes.CDLL(str(self.library))
        except OSError as e:
            hint = ""
            if "libcuda" in str(e):
                hint = (": a CUDA step needs the CUDA driver; without a GPU, "
                        "call joint_mlir.mlir_cpu.load_emulated_runtime() "
                        "before loading a step compiled with "
                        "lowering_options='emulate'")
            raise StepError(f"{self.library}: cannot load: {e}{hint}") from e
        fn = getattr(self._lib, self.descriptor["entry"])
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        fn.restype = ctypes.c_int32
        self._fn = fn
        for name in ("joint_step_peak_bytes", "joint_step_live_bytes"):
            getattr(self._lib, name).restype = ctypes.c_int64
        #: High-water mark of the last call, in bytes: temporaries plus each
        #: output from its first write (docs/lowering.md, "ABI"); inputs
        #: are not included.
        self.peak_bytes = 0
        self.device = ("cuda" if self.descriptor.get("format") ==
                       "joint-cuda-step" else "cpu")
        #: True when a CUDA step runs on the emulated device
        #: (``JOINT_CUDA_DEVICE=emulated`` when the library was loaded):
        #: it takes and returns cpu tensors, staged through the emulated
        #: device's memory (runtime/cuda/README.md, "Emulated device").
        self.emulated = False
        if self.device == "cuda":
            for name, res in (("joint_runtime_synchronize", ctypes.c_int32),
                              ("joint_runtime_last_error", ctypes.c_char_p),
                              ("joint_runtime_set_compute_stream", None),
                              ("joint_runtime_status", ctypes.c_int32),
                              ("joint_runtime_compute_stream",
                               ctypes.c_void_p),
                              ("joint_emu_active", ctypes.c_int32),
                              ("mgpuMemAlloc", ctypes.c_void_p),
                              ("mgpuMemcpy", None), ("mgpuMemFree", None)):
                getattr(self._lib, name).restype = res
            self._lib.joint_runtime_set_compute_stream.argtypes = [
                ctypes.c_void_p]
            P = ctypes.c_void_p
            self._lib.mgpuMemAlloc.argtypes = [ctypes.c_uint64, P,
                                               ctypes.c_bool]
            self._lib.mgpuMemcpy.argtypes = [P, P, ctypes.c_size_t, P]
            self._lib.mgpuMemFree.argtypes = [P, P]
            active = bool(self._lib.joint_emu_active())
            host_kernels = self.descriptor.get("device") == "emulated"
            if host_kernels and not active:
                raise StepError(
                    f"{self.library}: its kernels are compiled for the "
                    "emulated device (lowering option emulate); set "
                    "JOINT_CUDA_DEVICE=emulated before the library is loaded")
            if active and not host_kernels:
                raise StepError(
                    f"{self.library}: JOINT_CUDA_DEVICE=emulated, but its "
                    "kernels are cubins; compile it with "
                    "--lowering-options=emulate to run on the emulated device")
            if active:
                self.emulated = True
                self.device = "cpu"
        #: Torch group names of the step's collectives (the descriptor's
        #: ``collective_groups``): the calling thread's device needs a
        #: communicator for each before a call
        #: (:func:`joint_mlir.collectives.init_communicators`).
        self.collective_groups: list[str] = list(
            self.descriptor.get("collective_groups", []))
        #: Each group's size in ranks where the step's ops state it (the
        #: descriptor's ``collective_group_sizes``).
        self.collective_group_sizes: dict[str, int] = dict(
            self.descriptor.get("collective_group_sizes", {}))
        #: Draws per step of a step with random ops (its ``rng_state``
        #: argument's ``rng_draws``), 0 without: a training loop adds it to
        #: the offset it passes to :meth:`rng_state` after every step.
        self.rng_draws = next((int(a["rng_draws"]) for a in
                               self.descriptor["arguments"]
                               if "rng_draws" in a), 0)
        #: Set by :meth:`trace_schedule`: (link bytes/s, trace path or None).
        self._schedule: tuple[float, str | None] | None = None
        #: The simulated schedule of the last traced call (the runtime's
        #: JointEmuTraceSummary as a dict, seconds), or None.
        self.schedule: dict[str, float] | None = None

    def trace_schedule(self, node_seconds: dict[str, float],
                       link_bytes_per_second: float,
                       path: str | None = None) -> None:
        """Traces the simulated schedule of the following calls on the
        emulated device (runtime/cuda/README.md, "Simulated schedule"):
        each call's step alone (not the staging around it), kernels taking
        ``node_seconds[node]`` (seconds, split over the node's kernels),
        copies bytes / ``link_bytes_per_second``. After a call,
        :attr:`schedule` holds the totals and ``path`` (if given) the
        Chrome trace JSON. Raises StepError when not emulated."""
        if not self.emulated:
            raise StepError(f"{self.library}: the simulated schedule needs "
                            "the emulated device (JOINT_CUDA_DEVICE=emulated)")
        lib = self._lib
        lib.joint_emu_set_node_seconds.argtypes = [ctypes.c_char_p,
                                                   ctypes.c_double]
        lib.joint_emu_set_node_seconds.restype = ctypes.c_int32
        for node, seconds in node_seconds.items():
            if lib.joint_emu_set_node_seconds(node.encode(),
                                              float(seconds)) != 0:
                raise StepError(f"node {node!r}: {seconds!r} is not a "
                                "cost in seconds (finite, >= 0)")
        lib.joint_emu_trace_start.argtypes = [ctypes.c_double]
        lib.joint_emu_trace_start.restype = ctypes.c_int32
        lib.joint_emu_write_trace.argtypes = [ctypes.c_char_p]
        lib.joint_emu_write_trace.restype = ctypes.c_int32
        if not link_bytes_per_second > 0:
            raise StepError(f"link bandwidth {link_bytes_per_second!r} "
                            "bytes/s is not a positive number")
        self._schedule = (float(link_bytes_per_second), path)

    def _schedule_done(self) -> None:
        """Reads (and writes) the simulated schedule of the traced call."""
        names = ("step_seconds", "exposed_transfer_seconds", "work_seconds",
                 "transfer_seconds")
        counts = ("operations", "uncosted_work")

        class Summary(ctypes.Structure):
            _fields_ = [(n, ctypes.c_double) for n in names] + \
                [(n, ctypes.c_uint64) for n in counts]

        summary = Summary()
        self._lib.joint_emu_trace_summary(ctypes.byref(summary))
        self.schedule = {n: getattr(summary, n) for n in names + counts}
        path = self._schedule[1] if self._schedule else None
        if path and self._lib.joint_emu_write_trace(str(path).encode()) != 0:
            raise StepError(f"cannot write the trace to {path}")

    def rng_state(self, seed: int, offset: int = 0) -> torch.Tensor:
        """The ``rng_state`` argument of a step with random ops: int64
        ``[seed, offset]`` on the step's device. Draw d of the step uses
        Philox 4x32-10 with key ``seed`` and counter (element index,
        ``offset + d``) (docs/lowering.md, "Random ops"); the same seed and
        offset give the same draws, with or without remat."""
        for v, what in ((seed, "seed"), (offset, "offset")):
            if not isinstance(v, int) or not 0 <= v < 2**63:
                raise ValueError(f"rng {what} must be an int in [0, 2**63), "
                                 f"got {v!r}")
        return torch.tensor([seed, offset], dtype=torch.int64,
                            device=self.device)

    def __call__(self, args: list[Any]) -> list[torch.Tensor]:
        """Run one step on ``args`` (graph argument order); returns outputs."""
        d = self.descriptor
        if len(args) != len(d["arguments"]):
            raise ValueError(f"{len(args)} arguments for a step of "
                             f"{len(d['arguments'])}")
        dims = [0] * d["num_dims"]
        env: dict[str, int] = {}
        keep: list[torch.Tensor] = []
        in_ptrs = []
        for spec, a in zip(d["arguments"], args):
            label = spec.get("fqn") or spec.get("path") or spec.get("name")
            if spec["kind"] == "symint":
                t = torch.tensor(int(a), dtype=torch.int64)
            else:
                t = a
                want = getattr(torch, spec["dtype"])
                if not isinstance(t, torch.Tensor) or t.dtype != want \
                        or t.device.type != self.device:
                    raise ValueError(f"argument {label}: expected a "
                                     f"{self.device} {spec['dtype']} tensor")
                if t.dim() != len(spec["shape"]):
                    raise ValueError(f"argument {label}: rank {t.dim()}, "
                                     f"expected {len(spec['shape'])}")
                for size, s in zip(t.shape, spec["shape"]):
                    if isinstance(s, int):
                        if size != s:
                            raise ValueError(f"argument {label}: shape "
                                             f"{tuple(t.shape)} vs "
                                             f"{spec['shape']}")
                        continue
                    dims[s["dynamic_index"]] = int(size)
                    if "expr" in s and s["expr"].isidentifier():
                        env.setdefault(s["expr"], int(size))
                t = t.contiguous()
            keep.append(t)
            in_ptrs.append(t.data_ptr())
        outs = []
        for spec in d["outputs"]:
            shape = []
            for s in spec["shape"]:
                if isinstance(s, int):
                    shape.append(s)
                    continue
                if "expr" not in s:
                    raise ValueError("an output size has no symbolic "
                                     "expression in the descriptor")
                v = _eval_expr(s["expr"], env)
                dims[s["dynamic_index"]] = v
                shape.append(v)
            outs.append(torch.empty(shape, dtype=getattr(torch, spec["dtype"]),
                                    device=self.device))
        self._check_communicators()
        if self.emulated:
            return self._call_emulated(d, keep, in_ptrs, outs, dims)
        P = ctypes.c_void_p
        ins = (P * max(len(in_ptrs), 1))(*in_ptrs)
        ous = (P * max(len(outs), 1))(*[o.data_ptr() for o in outs])
        dv = (ctypes.c_int64 * max(len(dims), 1))(*dims)
        if self.device == "cuda":
            self._lib.joint_runtime_set_compute_stream(
                torch.cuda.current_stream().cuda_stream)
        # On the caller's thread: the step's stack use is bounded
        # (joint-check-bounded-stack), well within the default 8 MiB.
        rc = self._fn(ins, ous, dv)
        self.peak_bytes = int(self._lib.joint_step_peak_bytes())
        if self.device == "cuda":
            sync = self._lib.joint_runtime_synchronize()
            if rc != 0 or sync != 0:
                err = self._lib.joint_runtime_last_error() or b""
                raise StepError(f"joint_step failed ({rc or sync}): "
                                   f"{err.decode(errors='replace')}")
        if rc != 0:
            raise StepError(f"joint_step returned {rc} (a negative "
                               "dynamic size)")
        return outs

    def _check_communicators(self) -> None:
        """Raises CollectiveError, naming every missing group, when the
        calling thread's device lacks a communicator the step's collectives
        use (each would otherwise fail on its own, mid-step), or has one of
        another size than the step's ops state (its outputs would be left
        partly unwritten)."""
        if not self.collective_groups:
            return
        from .collectives import CollectiveError
        size = self._lib.joint_nccl_comm_size
        size.argtypes, size.restype = [ctypes.c_char_p], ctypes.c_int
        ranks = {g: size(g.encode()) for g in self.collective_groups}
        missing = [g for g, n in ranks.items() if n < 0]
        wrong = [f"{g!r} has {ranks[g]} rank(s), the step's collectives "
                 f"use {n}" for g, n in self.collective_group_sizes.items()
                 if ranks.get(g, -1) >= 0 and ranks[g] != n]
        if wrong:
            raise CollectiveError(
                f"{self.library}: this thread's device's communicator for "
                f"group {'; '.join(wrong)}: every rank must pass the groups' "
                "full member lists to init_communicators")
        if missing:
            raise CollectiveError(
                f"{self.library}: the step's collectives use group(s) "
                f"{', '.join(map(repr, self.collective_groups))}; this "
                f"thread's device has no communicator for "
                f"{', '.join(map(repr, missing))}: create them on every rank "
                "with joint_mlir.collectives.init_communicators(step, "
                "groups, rank, store, device=...) before the first call")

    def _call_emulated(self, d: dict[str, Any], keep: list[torch.Tensor],
                       in_ptrs: list[int], outs: list[torch.Tensor],
                       dims: list[int]) -> list[torch.Tensor]:
        """One step on the emulated device: tensor arguments are copied
        into emulated device allocations (SymInts stay host values), the
        outputs back into ``outs`` after the runtime synchronises. Output
        buffers are allocated first and count in the emulator's live bytes
        from the step's first write to each
        (``joint_emu_count_from_first_write``), as the memory model counts a
        graph output, so its high-water mark is the step's device peak with
        the arguments resident."""
        lib = self._lib
        P = ctypes.c_void_p
        stream = lib.joint_runtime_compute_stream()
        device: list[int] = []

        def check(what: str) -> None:
            if lib.joint_runtime_status() != 0:
                err = lib.joint_runtime_last_error() or b""
                raise StepError(f"{what} on the emulated device failed: "
                                f"{err.decode(errors='replace')}")

        def alloc(t: torch.Tensor) -> int:
            # The emulator refuses 0-byte allocations. A failed one stops
            # here: a copy into its null pointer would write host address 0.
            ptr = lib.mgpuMemAlloc(max(t.numel() * t.element_size(), 1),
                                   stream, False)
            if not ptr:
                check("staging the arguments")
                raise StepError("staging the arguments on the emulated "
                                "device failed: mgpuMemAlloc returned null")
            device.append(ptr)
            return ptr

        try:
            out_ptrs = [alloc(o) for o in outs]
            for ptr in out_ptrs:
                if ptr:
                    lib.joint_emu_count_from_first_write(P(ptr))
            args = []
            for spec, t, host in zip(d["arguments"], keep, in_ptrs):
                if spec["kind"] == "symint":
                    args.append(host)
                    continue
                ptr = alloc(t)
                if t.numel():
                    lib.mgpuMemcpy(ptr, host, t.numel() * t.element_size(),
                                   stream)
                args.append(ptr)
            check("staging the arguments")
            ins = (P * max(len(args), 1))(*args)
            ous = (P * max(len(out_ptrs), 1))(*out_ptrs)
            dv = (ctypes.c_int64 * max(len(dims), 1))(*dims)
            if self._schedule:
                lib.joint_emu_trace_start(self._schedule[0])
            rc = self._fn(ins, ous, dv)
            self.peak_bytes = int(self._lib.joint_step_peak_bytes())
            sync = lib.joint_runtime_synchronize()
            if self._schedule:
                self._schedule_done()
            if rc != 0 or sync != 0:
                err = lib.joint_runtime_last_error() or b""
                raise StepError(f"joint_step failed ({rc or sync}): "
                                f"{err.decode(errors='replace')}")
            for o, ptr in zip(outs, out_ptrs):
                if o.numel():
                    lib.mgpuMemcpy(o.data_ptr(), ptr,
                                   o.numel() * o.element_size(), stream)
            lib.joint_runtime_synchronize()
            check("copying the outputs back")
        finally:
            for ptr in device:
                if ptr:
                    lib.mgpuMemFree(ptr, stream)
        return outs


def run_compiled(step: CompiledStep, state: dict[str, torch.Tensor],
                 inputs: dict[str, torch.Tensor], *, rng_seed: int = 0,
                 rng_offset: int = 0) -> Any:
    """Run ``step`` on materialized state/inputs; a :class:`StepResult`.

    Arguments are matched by FQN (state) and path (inputs); a step with
    random ops draws from ``rng_seed`` and ``rng_offset``
    (:meth:`CompiledStep.rng_state`); buffer updates
    (outputs with ``updates``: the final value of an argument written in
    place, docs/lowering.md) are copied back into that argument's tensor.
    """
    from .executor import StepResult

    args = []
    for spec in step.descriptor["arguments"]:
        if spec.get("role") == "input":
            args.append(inputs[spec["path"]])
        elif "fqn" in spec:
            args.append(state[spec["fqn"]])
        elif "rng_draws" in spec:
            args.append(step.rng_state(rng_seed, rng_offset))
        else:
            raise ValueError(f"argument {spec.get('name')} has no fqn or path")
    outs = step(args)
    loss, grads, loss_dict = None, {}, {}
    for spec, v in zip(step.descriptor["outputs"], outs):
        role = spec.get("role")
        if role == "loss":
            loss = v
        elif role == "grad":
            grads[spec["fqn"]] = v
        elif role == "loss_dict":
            loss_dict[spec["key"]] = v
        elif "updates" in spec:
            args[spec["updates"]].copy_(v)
        # role "output" (other step outputs): not part of StepResult, as in
        # the torch backend
    buffers = {spec["fqn"]: state[spec["fqn"]]
               for spec in step.descriptor["arguments"]
               if spec.get("role") == "buffer"}
    return StepResult(loss=loss, grads=grads, loss_dict=loss_dict,
                      buffers=buffers)

"""The C++ tools for Python tests, the pass pipelines, and hand-made ao graphs.

Tools are found at ``$JOINT_BUILD_DIR/bin`` (relative paths are taken from the
repository root, as ``scripts/test`` does) or ``<repo>/build/bin``.

A tool, pass or extension of this project that is missing fails the test when
``CI`` is set to a true value (``CI=true scripts/test``), so a renamed pass or an
unbuilt binary cannot turn the suite green; on a developer machine it is a skip
whose reason says so (see :func:`missing`).

A *pipeline* is a list of ``joint-opt`` flags. The graph goes
JSON -> ``joint-translate --import-joint-json`` -> ``joint-opt <flags>`` ->
``joint-translate --export-joint-json`` -> JSON.
"""

from __future__ import annotations

import copy
import functools
import importlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest

from joint_mlir.format import value_refs

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO_ROOT / "examples").glob("*.json"))


def build_dir() -> Path:
    env = os.environ.get("JOINT_BUILD_DIR")
    if env:
        p = Path(env)
        return p if p.is_absolute() else REPO_ROOT / p
    return REPO_ROOT / "build"


def in_ci() -> bool:
    """Whether the suite runs in CI (``CI`` set to anything but empty, 0,
    false or no), where nothing the project builds or installs may be
    missing."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false",
                                                             "no")


def missing(what: str) -> NoReturn:
    """Fail (CI) or skip (developer machine) because ``what`` is missing: a
    tool, pass or extension of this project, or a package scripts/setup
    installs."""
    if in_ci():
        pytest.fail(f"{what}; CI=true: a missing tool, pass or package is a "
                    "failure, not a skip", pytrace=False)
    pytest.skip(f"{what} (skipped on a developer machine only; this fails "
                "under CI=true)")


def tool(name: str) -> Path:
    """Path of a built tool; :func:`missing` when it is not built."""
    p = build_dir() / "bin" / name
    if not os.access(p, os.X_OK):
        missing(f"{name} is not built at {p} (run scripts/build, or set "
                "JOINT_BUILD_DIR)")
    return p


def require_module(name: str) -> Any:
    """Import ``name``, a package scripts/setup installs
    (python/requirements.txt); :func:`missing` when it cannot be imported."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        missing(f"{name} cannot be imported ({e}; scripts/setup installs it)")


def core() -> Any:
    """``joint_mlir._core``: skipped only for a build configured without it
    (``JOINT_ENABLE_PYTHON=OFF``, the sanitizer builds); otherwise
    :func:`missing` when it does not import."""
    try:
        return importlib.import_module("joint_mlir._core")
    except ImportError as e:
        if cmake_option(build_dir(), "JOINT_ENABLE_PYTHON") is False:
            pytest.skip(f"{build_dir()} is configured with "
                        "JOINT_ENABLE_PYTHON=OFF: no joint_mlir._core")
        missing(f"joint_mlir._core is not built ({e}; run scripts/build)")


def cmake_option(build: Path, name: str) -> bool | None:
    """A BOOL option of ``build``'s CMakeCache.txt, None when unset."""
    cache = build / "CMakeCache.txt"
    text = cache.read_text() if cache.exists() else ""
    m = re.search(rf"^{re.escape(name)}:BOOL=(\S*)$", text, re.M)
    if m is None:
        return None
    return m.group(1).upper() in ("ON", "1", "TRUE", "YES", "Y")


def cuda_built() -> None:
    """Skip unless the build has the CUDA runtime (``JOINT_ENABLE_CUDA``): the
    CUDA toolkit is optional and scripts/setup does not install it. Under CI a
    build without it next to an installed toolkit (``nvcc``) fails."""
    if cmake_option(build_dir(), "JOINT_ENABLE_CUDA"):
        return
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.access(
        "/usr/local/cuda/bin/nvcc", os.X_OK) else None)
    if nvcc and in_ci():
        missing(f"{build_dir()} has no CUDA runtime although a CUDA toolkit is "
                f"installed ({nvcc})")
    pytest.skip("built without the CUDA toolkit (JOINT_ENABLE_CUDA=OFF; the "
                "toolkit is optional)")


def require_mlir_tool(name: str) -> Path:
    """An MLIR tool of Debian's mlir-22-tools (scripts/setup installs it),
    e.g. ``mlir-runner``; :func:`missing` when absent."""
    prefix = Path(subprocess.run(["llvm-config-22", "--prefix"],
                                 capture_output=True, text=True,
                                 check=True).stdout.strip())
    p = prefix / "bin" / name
    if not os.access(p, os.X_OK):
        missing(f"{name} is not installed at {p} (scripts/setup installs "
                "mlir-22-tools)")
    return p


@functools.cache
def _opt_help(opt: str) -> str:
    return subprocess.run([opt, "--help"], capture_output=True, text=True).stdout


def has_pass(flag: str) -> bool:
    """Whether ``joint-opt --help`` lists the pass a flag names."""
    name = flag.lstrip("-").split("=", 1)[0]
    return re.search(rf"--{re.escape(name)}(?![\w-])",
                     _opt_help(str(tool("joint-opt")))) is not None


def require_passes(flags: tuple[str, ...] | list[str]) -> None:
    """:func:`missing` unless ``joint-opt --help`` lists every flag's pass."""
    for f in flags:
        if not has_pass(f):
            missing(f"joint-opt has no pass {f.split('=', 1)[0]}")


@dataclass(frozen=True)
class Pipeline:
    id: str
    flags: tuple[str, ...]
    # joint-cpu-offload scope=attention needs an attention module, scope=block
    # a transformer block; scope=all runs on every graph.
    needs_attention: bool = False
    needs_blocks: bool = False


_OFFLOAD = "--joint-cpu-offload=min-bytes=1024"
PIPELINES = [
    Pipeline("identity", ()),
    Pipeline("ckpt-full", ("--joint-activation-checkpoint=mode=full",)),
    Pipeline("ckpt-selective",
             ("--joint-activation-checkpoint=mode=selective",)),
    Pipeline("ckpt-layer0",
             ("--joint-activation-checkpoint=mode=full layer-indices=0",)),
    Pipeline("offload", (_OFFLOAD,), needs_attention=True),
    Pipeline("offload-block", (_OFFLOAD + " scope=block",), needs_blocks=True),
    Pipeline("offload-all", (_OFFLOAD + " scope=all",)),
    Pipeline("ckpt-offload",
             ("--joint-activation-checkpoint=mode=selective", _OFFLOAD),
             needs_attention=True),
    Pipeline("ckpt-offload-block",
             ("--joint-activation-checkpoint=mode=selective",
              _OFFLOAD + " scope=block"), needs_blocks=True),
    Pipeline("ckpt-offload-all",
             ("--joint-activation-checkpoint=mode=selective",
              _OFFLOAD + " scope=all")),
]

_SDPA = ("scaled_dot_product", "flash_attention", "efficient_attention",
         "cudnn_attention", "flex_attention")


def has_attention(doc: dict[str, Any]) -> bool:
    """Whether the graph has an attention module the offload scope finds:
    listed by the exporter, named ``self_attn``, or computing attention (an
    SDPA variant, or softmax next to batched matmuls, which ModelStructure
    checks as bmm -> softmax -> bmm) in a module that is not itself a
    transformer block."""
    if doc["model"].get("attention"):
        return True
    blocks = {b for c in doc["model"].get("block_containers", [])
              for b in c.get("blocks", [])}

    def is_block(fqn: str) -> bool:
        return fqn in blocks if blocks else bool(re.fullmatch(r".+\.\d+", fqn))

    ops: set[str] = set()
    for n in doc["nodes"]:
        if n["kind"] != "call_function" or not n["target"] or n["backward"]:
            continue
        frames = [m["fqn"] for m in n.get("module_stack") or [] if m["fqn"]]
        if any(f == "self_attn" or f.endswith(".self_attn") for f in frames):
            return True
        if frames and is_block(frames[-1]):
            continue  # a block computing attention itself is no attention module
        ops.add(n["target"].split("::", 1)[-1].split(".", 1)[0])
    if any(k in op for op in ops for k in _SDPA):
        return True
    return bool(ops & {"_softmax", "softmax", "_safe_softmax"}) and bool(
        ops & {"bmm", "matmul", "baddbmm", "einsum"})


def has_blocks(doc: dict[str, Any]) -> bool:
    """Whether the graph has transformer blocks (joint.model block
    containers, or module paths ``<container>.<int>``)."""
    if any(c.get("blocks") for c in doc["model"].get("block_containers", [])):
        return True
    return any(re.fullmatch(r".+\.\d+", m["fqn"])
               for n in doc["nodes"] for m in n.get("module_stack") or [])


def skip_unless_available(p: Pipeline, doc: dict[str, Any]) -> None:
    """Check that ``p``'s passes exist (:func:`require_passes`), and skip
    when ``p`` does not apply to ``doc`` (an offload scope the model lacks)."""
    require_passes(p.flags)
    # scope=attention on a graph without attention (an MLP) is an error by
    # design (the pass says so); scope=all covers such graphs.
    if p.needs_attention and not has_attention(doc):
        pytest.skip(f"{p.id}: graph {doc['name']} has no attention module")
    if p.needs_blocks and not has_blocks(doc):
        pytest.skip(f"{p.id}: graph {doc['name']} has no transformer block")


class ToolError(AssertionError):
    """A C++ tool exited non-zero; the message keeps its error lines."""


def _check(cmd: list[str]) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        # Diagnostics echo the (one-line) JSON source; keep the error lines.
        errs = [ln[:400] for ln in r.stderr.splitlines() if "error" in ln]
        raise ToolError(f"{' '.join(cmd)} failed ({r.returncode}):\n"
                        + "\n".join(errs[:10] or [r.stderr[-2000:]]))


def run_pipeline(src: Path, flags: tuple[str, ...] | list[str],
                 out_dir: Path) -> Path:
    """JSON -> import -> joint-opt flags -> export -> JSON; returns the file."""
    translate = str(tool("joint-translate"))
    opt = str(tool("joint-opt"))
    mlir_in = out_dir / (src.stem + ".mlir")
    mlir_out = out_dir / (src.stem + ".opt.mlir")
    out = out_dir / (src.stem + ".out.json")
    _check([translate, "--import-joint-json", str(src), "-o", str(mlir_in)])
    _check([opt, *flags, str(mlir_in), "-o", str(mlir_out)])
    _check([translate, "--export-joint-json", str(mlir_out), "-o", str(out)])
    return out


# --------------------------------------------------------------------------
# Hand-made offload: the node shapes joint-translate --export-joint-json
# writes for ao ops, inserted by Python so the ao path runs before the C++
# offload pass exists.
# --------------------------------------------------------------------------

def _node_refs(n: dict[str, Any]) -> list[str]:
    return [r for a in list(n["args"]) + list(n["kwargs"].values())
            for r in value_refs(a)]


def _replace_ref(v: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    if v.get("t") == "node" and v["v"] == old:
        return {"t": "node", "v": new, "i": 0}
    if v.get("t") == "list":
        return {"t": "list", "v": [_replace_ref(x, old, new) for x in v["v"]]}
    return v


def _storage(n: dict[str, Any]) -> int | None:
    outs = n["outputs"]
    return outs[0].get("storage") if len(outs) == 1 else None


def name_of_storage_in(names: set[str], by: dict[str, Any], st: int) -> bool:
    return any(_storage(by[r]) == st for r in names
               if by[r]["kind"] != "placeholder")


def offload_candidates(doc: dict[str, Any]) -> list[str]:
    """Forward tensors saved for backward that can be offloaded safely:
    contiguous (offset 0), and the only value of their storage backward reads."""
    nodes = doc["nodes"]
    by = {n["name"]: n for n in nodes}
    out = []
    for n in nodes:
        if n["kind"] != "call_function" or n["backward"] or len(n["outputs"]) != 1:
            continue
        f = n["outputs"][0]
        if f.get("t") != "tensor" or f["offset"] != 0:
            continue
        st = f["storage"]
        bwd_readers = [m for m in nodes if m["kind"] == "call_function"
                       and m["backward"]
                       and any(_storage(by[r]) == st for r in _node_refs(m)
                               if by[r]["kind"] != "placeholder")]
        outputs = {r for m in nodes if m["kind"] == "output"
                   for r in _node_refs(m)}
        if name_of_storage_in(outputs, by, st):
            continue
        if bwd_readers and all(
                all(r == n["name"] or _storage(by[r]) != st
                    for r in _node_refs(m)) for m in bwd_readers):
            out.append(n["name"])
    return out


def largest_offload_candidate(doc: dict[str, Any]) -> str:
    """The biggest of :func:`offload_candidates` (by trace-time elements)."""
    by = {n["name"]: n for n in doc["nodes"]}

    def numel(name: str) -> int:
        n = 1
        for d in by[name]["outputs"][0]["sizes"]:
            n *= d if isinstance(d, int) else (d.get("hint") or 1)
        return n

    cands = offload_candidates(doc)
    assert cands, f"no offloadable saved activation in {doc['name']}"
    return max(cands, key=numel)


def insert_offload(doc: dict[str, Any], name: str) -> dict[str, Any]:
    """``doc`` with ``name`` offloaded after its storage's last forward use
    and reloaded before its first backward use, as the C++ exporter writes it."""
    doc = copy.deepcopy(doc)
    nodes = doc["nodes"]
    by = {n["name"]: n for n in nodes}
    src = by[name]
    st = src["outputs"][0]["storage"]
    fwd_last = max(i for i, m in enumerate(nodes)
                   if m["kind"] == "call_function" and not m["backward"]
                   and (m["name"] == name
                        or any(_storage(by[r]) == st for r in _node_refs(m))))
    bwd_first = min(i for i, m in enumerate(nodes)
                    if m["kind"] == "call_function" and m["backward"]
                    and name in _node_refs(m))
    nxt = 1 + max(o.get("storage", -1) for m in nodes for o in m["outputs"])
    fact = src["outputs"][0]
    host = dict(fact, device="cpu", storage=nxt)
    dev = dict(fact, storage=nxt + 1)

    def node(n: str, target: str, args: list[Any], out: dict[str, Any],
             backward: bool) -> dict[str, Any]:
        return {"name": n, "kind": "call_function", "target": target,
                "args": args, "kwargs": {}, "outputs": [out],
                "backward": backward, "seq_nr": None, "module_stack": [],
                "recompute": None, "stack_trace": None}

    ref = lambda n: {"t": "node", "v": n, "i": 0}  # noqa: E731
    none = {"t": "none"}
    off = node("ao_offload", "ao::offload.default", [ref(name)], host, False)
    wait = node("ao_wait_tensor", "ao::wait_tensor.default",
                [ref("ao_offload"), ref(name), ref(nodes[fwd_last]["name"])],
                host, False)
    rel = node("ao_reload", "ao::reload.default",
               [ref("ao_wait_tensor"), {"t": "device", "v": fact["device"]},
                none, none], dev, True)
    rwait = node("ao_wait_tensor_1", "ao::wait_tensor.default",
                 [ref("ao_reload"), ref("ao_wait_tensor"), none], dev, True)
    for m in nodes[bwd_first:]:
        m["args"] = [_replace_ref(a, name, "ao_wait_tensor_1")
                     for a in m["args"]]
        m["kwargs"] = {k: _replace_ref(a, name, "ao_wait_tensor_1")
                       for k, a in m["kwargs"].items()}
    nodes[bwd_first:bwd_first] = [rel, rwait]
    nodes[fwd_last + 1:fwd_last + 1] = [off, wait]
    return doc


# --------------------------------------------------------------------------
# Eager reference: model(...) + backward() on the tensors joint_mlir.run uses
# --------------------------------------------------------------------------

# Unit roundoff per dtype; see test_run.py for the 8u tolerance.
UNIT_ROUNDOFF = {"float32": 2.0 ** -24, "bfloat16": 2.0 ** -8,
                 "float16": 2.0 ** -11, "float64": 2.0 ** -53}


def eager_step(model: Any, train_fn: Any, doc: dict[str, Any], *,
               seed: int = 0) -> Any:
    """One eager step of ``model`` (real or ``to_empty`` storage) with the
    state and inputs :func:`joint_mlir.materialize` gives ``doc``."""
    import torch

    from joint_mlir import materialize
    from joint_mlir.executor import StepResult
    from joint_mlir.tracer import extract_module_state

    live = extract_module_state(model)
    assert list(live) == [s["fqn"] for s in doc["state"]]
    state, inputs = materialize(doc, seed=seed)
    with torch.no_grad():
        for fqn, t in live.items():
            t.copy_(state[fqn])
            t.grad = None
    torch.manual_seed(seed)
    out = train_fn(model, **inputs)
    loss, loss_dict = (out if isinstance(out, tuple) else (out, {}))
    loss.backward()
    is_param = {s["fqn"]: s["is_param"] for s in doc["state"]}
    return StepResult(
        loss=loss.detach(),
        grads={f: t.grad if t.grad is not None else torch.zeros_like(t)
               for f, t in live.items() if is_param[f]},
        loss_dict={k: v.detach() for k, v in loss_dict.items()},
        buffers={f: t.detach().clone() for f, t in live.items()
                 if not is_param[f]})


def assert_close_to_eager(got: Any, eager: Any, what: str) -> None:
    """Every output within ``8 u max|eager|`` (exact for integer outputs)."""
    want = eager.named_outputs()
    have = got.named_outputs()
    assert set(have) == set(want), (sorted(have), sorted(want))
    for name, e in want.items():
        g = have[name]
        assert g.dtype == e.dtype and g.shape == e.shape, (
            f"{what}: {name}: {g.dtype}{tuple(g.shape)} vs eager "
            f"{e.dtype}{tuple(e.shape)}")
        u = UNIT_ROUNDOFF.get(str(e.dtype).removeprefix("torch."), 0.0)
        bound = 8 * u * float(e.double().abs().max()) if e.numel() else 0.0
        err = float((g.double() - e.double()).abs().max()) if e.numel() else 0.0
        assert err <= bound, (f"{what}: {name} differs from eager by {err:.3g}"
                              f" > {bound:.3g} (8u * max|eager|)")

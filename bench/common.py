"""Shared helpers for bench/ scripts: cached fake-mode exports, timing.

Exports are cached outside the repository in $JOINT_BENCH_CACHE
(default ~/.cache/joint-mlir/bench), keyed by preset, layers and sequence.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("JOINT_BUILD_DIR", ROOT / "build"))
CACHE = Path(os.environ.get("JOINT_BENCH_CACHE",
                            Path.home() / ".cache" / "joint-mlir" / "bench"))


def exported_graph(layers: int, preset: str = "llama3-8b", seq: int = 2048) -> Path:
    """Path of a fake-mode export of `preset` cut to `layers` blocks."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"{preset}-l{layers}-s{seq}.json.gz"
    if not path.exists():
        tmp = path.with_suffix(".tmp.gz")
        env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
        print(f"[export] {preset} layers={layers} seq={seq} -> {path}",
              file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "joint_mlir.export", "--model",
                        "llama", "--preset", preset, "--layers", str(layers),
                        "--seq", str(seq), "-o", str(tmp)],
                       check=True, env=env, stdout=subprocess.DEVNULL)
        tmp.rename(path)
    return path


def node_count(path: Path) -> int:
    import gzip
    import json
    with gzip.open(path, "rt") as f:
        return len(json.load(f)["nodes"])


def median_seconds(cmd: list[str], repeat: int = 3) -> float:
    """Median wall time of `cmd` (stdout discarded) over `repeat` runs."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def machine() -> str:
    import platform
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores"

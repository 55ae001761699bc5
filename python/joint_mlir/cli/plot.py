"""``python -m joint_mlir.plot``: plot joint-memory-report JSON timelines.

Example::

    joint-opt g.json --joint-memory-report="format=json output=base.json label=baseline"
    python -m joint_mlir.plot base.json remat.json -o memory.png

One line per report: device bytes (graph inputs included) over op index, in
GiB/MiB/KiB as the largest peak suggests, labelled with the report's
``label`` (the pipeline that produced it; the file name when empty). A dashed
vertical line marks each report's forward/backward boundary and a dot its
peak. Bad input prints one ``error:`` line and exits with 2.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import JointMlirError
from . import EXIT_USAGE, OneLineParser, output_path_error

PROG = "python -m joint_mlir.plot"
REPORT_FORMAT = "joint-memory-report"


class ReportError(JointMlirError):
    """A file that is not a usable joint-memory-report JSON document."""


def load_report(path: Path) -> dict[str, Any]:
    """Reads and checks one report; raises ReportError naming the problem."""
    try:
        doc = json.loads(path.read_text())
    except OSError as e:
        raise ReportError(f"{path}: {e.strerror}") from e
    except json.JSONDecodeError as e:
        raise ReportError(f"{path}: not JSON ({e.msg}; line {e.lineno} "
                          f"column {e.colno})") from e
    if not isinstance(doc, dict) or doc.get("format") != REPORT_FORMAT:
        raise ReportError(f"{path}: not a {REPORT_FORMAT} document "
                          "(run joint-opt --joint-memory-report=format=json)")
    timeline = doc.get("timeline")
    if not isinstance(timeline, dict) or not isinstance(
            timeline.get("device_bytes"), list):
        raise ReportError(f"{path}: has no timeline.device_bytes list")
    if not all(isinstance(v, int) for v in timeline["device_bytes"]):
        raise ReportError(f"{path}: timeline.device_bytes must be integers (bytes)")
    return doc


def label_of(doc: dict[str, Any], path: Path) -> str:
    """The legend text: the report's label, else the file name."""
    return doc.get("label") or path.name.removesuffix(".json")


def _unit(peak: int) -> tuple[float, str]:
    for scale, name in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if peak >= scale:
            return float(scale), name
    return 1.0, "B"


def build_figure(reports: Sequence[tuple[Path, dict[str, Any]]],
                 title: str | None = None):
    """A matplotlib figure with one device-bytes line per report."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    peak = max((max(d["timeline"]["device_bytes"], default=0) for _, d in reports),
               default=0)
    scale, unit = _unit(peak)
    fig, ax = plt.subplots(figsize=(10, 5))
    for path, doc in reports:
        series = [v / scale for v in doc["timeline"]["device_bytes"]]
        label = label_of(doc, path)
        peak_bytes = doc.get("peak_bytes", max(doc["timeline"]["device_bytes"], default=0))
        (line,) = ax.plot(range(len(series)), series, linewidth=1.2,
                          label=f"{label} (peak {peak_bytes / scale:.2f} {unit})")
        boundary = doc.get("boundary_index")
        if isinstance(boundary, int):
            ax.axvline(boundary, color=line.get_color(), linestyle="--",
                       linewidth=0.8, alpha=0.7)
        if series:
            i = max(range(len(series)), key=series.__getitem__)
            ax.plot([i], [series[i]], "o", color=line.get_color(), markersize=4)
    ax.set_xlabel("op index (dashed: first backward op)")
    ax.set_ylabel(f"device memory ({unit})")
    graphs = sorted({str(d.get("graph", "")) for _, d in reports})
    ax.set_title(title or f"joint-memory-report: {', '.join(graphs)}")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    return fig


def plot(reports: Sequence[tuple[Path, dict[str, Any]]], output: Path,
         title: str | None = None) -> None:
    """Writes the figure of build_figure to `output` (format from the suffix)."""
    import matplotlib.pyplot as plt

    fig = build_figure(reports, title)
    try:
        fig.savefig(output, dpi=120)
    finally:
        plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineParser(
        prog=PROG,
        description="Plot device memory (bytes, graph inputs included) over op "
        "index for one or more joint-memory-report JSON files.")
    parser.add_argument("reports", nargs="+", type=Path,
                        help="JSON written by --joint-memory-report=format=json")
    parser.add_argument("-o", "--output", type=Path, default=Path("memory.png"),
                        help="image to write (format from the suffix; default memory.png)")
    parser.add_argument("--title", help="figure title (default: the graph names)")
    args = parser.parse_args(argv)
    if why := output_path_error(args.output):
        sys.stderr.write(f"{PROG}: error: {why}\n")
        return EXIT_USAGE
    try:
        reports = [(p, load_report(p)) for p in args.reports]
    except ReportError as e:
        sys.stderr.write(f"{PROG}: error: {e}\n")
        return EXIT_USAGE
    try:
        plot(reports, args.output, args.title)
    except (OSError, ValueError) as e:
        sys.stderr.write(f"{PROG}: error: cannot write {args.output}: {e}\n")
        return EXIT_USAGE
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

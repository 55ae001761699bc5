"""Run joint-mlir pass pipelines in process (the ``joint_mlir._core`` module).

:func:`run_pipeline` takes a format v1 document (a dict, JSON text, the
bytes of a ``.json``/``.json.gz`` file, or its path as a ``pathlib.Path``),
runs a textual pass pipeline through the C++ importer, the registered passes
and the C++ exporter, and returns the transformed document, the
``joint-memory-report`` as a dict and the remarks. The pipeline is a
comma-separated list of passes with their options, with or without the
``builtin.module(...)`` anchor, e.g.
``"joint-tag-recompute-policy{mode=full},joint-remat"``; per-graph passes
nest on each ``joint.graph`` implicitly, as joint-opt's pass flags do
(:func:`opt_flags` gives those flags; joint-opt's ``--pass-pipeline`` text
needs the explicit ``builtin.module(joint.graph(...))`` nesting). No process
is started and nothing is written to disk except the files the pipeline's
passes name (``joint-memory-report{output=...}``), which appear only when
the whole call succeeds; the GIL is released while passes run.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .errors import JointMlirError

__all__ = ["PipelineError", "PipelineResult", "opt_flags", "run_pipeline"]

_NODE_IN_TEXT = re.compile(r"node '([^']+)'")


class PipelineError(JointMlirError, RuntimeError):
    """An MLIR error while importing, transforming or exporting a graph.

    Attributes:
      diagnostic: the error text, ``<file>:<line>:<col>: error: <message>``
        (the location points into the JSON document; several errors are
        joined by newlines).
      node: the FX node the error is about, from the op at the error's
        location or a ``node '<name>'`` in the message; None when the error
        is about no node (unknown pass, bad option, malformed JSON).
      diagnostics: every diagnostic of the run (remarks and warnings too).
    """

    def __init__(self, diagnostic: str, node: str | None = None,
                 diagnostics: list[str] | None = None) -> None:
        super().__init__(diagnostic)
        self.diagnostic = diagnostic
        if node is None:
            m = _NODE_IN_TEXT.search(diagnostic)
            node = m.group(1) if m else None
        self.node = node
        self.diagnostics = list(diagnostics or [diagnostic])


def opt_flags(pipeline: str) -> list[str]:
    """The joint-opt arguments that run ``pipeline`` like :func:`run_pipeline`.

    ``"a{x=1 y=2},b"`` gives ``["--a=x=1 y=2", "--b"]``: one flag per pass,
    which joint-opt nests implicitly (per-graph passes on each joint.graph).
    A pipeline that spells its own nesting (``joint.graph(...)``) is passed
    as ``--pass-pipeline=builtin.module(...)`` unchanged.
    """
    text = pipeline.strip()
    if text.startswith("builtin.module(") and text.endswith(")"):
        text = text[len("builtin.module("):-1]
    passes, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "{(":
            depth += 1
        elif c in "})":
            depth -= 1
        elif c == "," and depth == 0:
            passes.append(text[start:i].strip())
            start = i + 1
    passes.append(text[start:].strip())
    passes = [p for p in passes if p]
    if any("(" in p.split("{", 1)[0] for p in passes):
        return [f"--pass-pipeline=builtin.module({text})"]
    flags = []
    for p in passes:
        name, _, options = p.partition("{")
        flags.append(f"--{name.strip()}" + (f"={options[:-1]}" if options
                                            else ""))
    return flags


@dataclass
class PipelineResult:
    """The transformed graph (format v1), its memory report and the remarks.

    ``text`` is the document exactly as the C++ exporter wrote it;
    ``document`` parses it on first access: the 80-layer llama3-8b graph is
    15 MB of text but about 0.5 s and 94 MB as dicts, which a caller that
    only saves or forwards the text never pays.
    """

    text: str
    # joint-memory-report format=json as a dict; None with report=False.
    report: dict[str, Any] | None
    remarks: list[str] = field(default_factory=list)

    @cached_property
    def document(self) -> dict[str, Any]:
        """The transformed graph as a dict (``json.loads(text)``, cached)."""
        return json.loads(self.text)


# A str this long is document text, never a path (Linux's PATH_MAX).
_MAX_PATH = 4096


def run_pipeline(document: dict[str, Any] | str | bytes | os.PathLike[str],
                 pipeline: str, *, report: bool = True, label: str = "",
                 filename: str = "<document>") -> PipelineResult:
    """Run ``pipeline`` on ``document`` in process; see the module docstring.

    ``document`` is the graph itself: a dict, the JSON text (str), the bytes
    of a ``.json`` or ``.json.gz`` file, or an ``os.PathLike``
    (``pathlib.Path``) naming such a file, which is read. A str is always
    text, as for ``json.loads``: one that names an existing file raises
    PipelineError saying to pass the text or a Path. ``filename`` names the
    document in diagnostics (default: the path of a PathLike, else
    ``<document>``); ``label`` is the report's label. The returned ``text``
    is byte for byte what ``joint-translate --export-joint-json`` writes for
    joint-opt's output; ``document`` is parsed from it when first read.

    Raises:
      PipelineError: unknown pass, invalid option, a document the importer
        rejects, a pass that fails (carries the diagnostic and node), a
        str that is a file path, a PathLike that cannot be read (naming the
        path; the OSError is its ``__cause__``) or that holds MLIR text, or
        a pass asked to write the PathLike's file.
      TypeError: ``document`` is none of dict, str, bytes, os.PathLike.
      ImportError: the extension was not built (``scripts/build``).
    """
    from . import _core

    input_path = ""
    if isinstance(document, os.PathLike):
        input_path = os.fspath(document)
        if isinstance(input_path, bytes):
            input_path = os.fsdecode(input_path)
        document = _read_document(input_path)
        if filename == "<document>":
            filename = input_path
    elif isinstance(document, str):
        _reject_path_text(document)
    elif not isinstance(document, (dict, bytes)):
        raise TypeError(
            "run_pipeline: document must be a dict (format v1), str (JSON "
            "text), bytes (JSON or gzip-compressed JSON) or os.PathLike (a "
            f".json/.json.gz file), not {type(document).__name__}")
    if isinstance(document, dict):
        document = json.dumps(document)
    text, report_text, remarks = _core.run_pipeline(
        document, pipeline, filename=filename, report=report, label=label,
        input_path=input_path)
    return PipelineResult(
        text=text,
        report=json.loads(report_text) if report_text is not None else None,
        remarks=list(remarks))


def _read_document(path: str) -> bytes:
    """The bytes of the document file ``path``; PipelineError when it cannot
    be read or holds MLIR text (run_pipeline reads format v1 JSON)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise PipelineError(
            f"error: cannot read the document '{path}': "
            f"{e.strerror or e}") from e
    head = data[:64].lstrip()
    if data[:2] != b"\x1f\x8b" and not head.startswith(b"{") and (
            path.endswith(".mlir") or head.startswith(
                (b"module", b"joint.graph", b"//", b"#", b'"builtin.module"'))):
        raise PipelineError(
            f"error: '{path}' is MLIR text: run_pipeline reads the JSON "
            "document (format v1, .json or .json.gz); export it first with "
            "joint-translate --export-joint-json")
    return data


def _reject_path_text(text: str) -> None:
    """Raises PipelineError when ``text`` is not JSON but names a file."""
    # Length first: a document's text is megabytes, never copied here.
    if (len(text) > _MAX_PATH or text.lstrip()[:1] in ("{", "[", "")
            or "\n" in text or "\0" in text):
        return
    if os.path.isfile(text):
        raise PipelineError(
            f"error: the document '{text}' is a file path, not JSON text: "
            "pass the text (Path(p).read_text()) or the path as a "
            f"pathlib.Path (run_pipeline(Path({text!r}), ...))")

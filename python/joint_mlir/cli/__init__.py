"""The command lines of joint_mlir: ``python -m joint_mlir.export``
(:mod:`.export`), ``python -m joint_mlir.run`` (:mod:`.run`) and
``python -m joint_mlir.plot`` (:mod:`.plot`).

Each prints bad input as one ``<prog>: error: ...`` line and exits with
:data:`EXIT_USAGE`, argparse's own errors included (:class:`OneLineParser`).
An ``-o`` path that cannot be written is bad input too: checked before any
work (:func:`output_path_error`), never created (as ``mlir-opt -o`` and
``torch.save`` do not create missing directories).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import NoReturn

__all__ = ["EXIT_USAGE", "OneLineParser", "output_path_error"]

EXIT_USAGE = 2


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line (no usage dump)."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def output_path_error(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` cannot be written as an output file, or None.

    The message names the path: its directory is missing or not a directory,
    it is a directory itself, or the directory is not writable.
    """
    path = os.fspath(path)
    parent = os.path.dirname(path) or "."
    if os.path.isdir(path):
        return f"cannot write '{path}': it is a directory"
    if not os.path.exists(parent):
        return (f"cannot write '{path}': directory '{parent}' does not exist "
                "(create it first)")
    if not os.path.isdir(parent):
        return f"cannot write '{path}': '{parent}' is not a directory"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"cannot write '{path}': directory '{parent}' is not writable"
    return None

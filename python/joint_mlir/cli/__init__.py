"""The command lines of joint_mlir: ``python -m joint_mlir.export``
(:mod:`.export`), ``python -m joint_mlir.run`` (:mod:`.run`) and
``python -m joint_mlir.plot`` (:mod:`.plot`).

Each prints bad input as one ``<prog>: error: ...`` line and exits with
:data:`EXIT_USAGE`, argparse's own errors included (:class:`OneLineParser`).
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

__all__ = ["EXIT_USAGE", "OneLineParser"]

EXIT_USAGE = 2


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line (no usage dump)."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(EXIT_USAGE)

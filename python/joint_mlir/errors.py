"""The base class of every error joint_mlir raises on bad input.

Each module's error (``FormatError``, ``PipelineError``, ``TraceError``, ...)
derives from :class:`JointMlirError` and from the built-in class it always
had (``ValueError`` for bad documents and recipes, ``RuntimeError`` for
failed pipelines and compiles), so ``except joint_mlir.JointMlirError``
catches them all and existing ``except ValueError`` code keeps working.
"""

from __future__ import annotations

__all__ = ["JointMlirError"]


class JointMlirError(Exception):
    """Bad input to joint_mlir or a step it cannot run; the message names
    the node, file or option and the reason."""

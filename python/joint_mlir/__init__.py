"""joint_mlir: export PyTorch joint forward+backward graphs (format v1) and
run them back in torch (``joint_mlir.fx.load``, ``joint_mlir.run``)."""

from .format import FORMAT_VERSION, graph_stats, read_document
from . import fx
from .model_structure import ModelStructure, discover_structure
from .tracer import (DataDependentError, JointGraph, TraceError,
                     extract_module_state, trace_joint_graph)
from .runner import StepResult, compare, materialize, run
from .validate import validate_document

__version__ = "0.1.0"

__all__ = [
    "FORMAT_VERSION",
    "JointGraph",
    "StepResult",
    "ModelStructure",
    "TraceError",
    "DataDependentError",
    "compare",
    "discover_structure",
    "extract_module_state",
    "fx",
    "graph_stats",
    "materialize",
    "read_document",
    "run",
    "trace_joint_graph",
    "validate_document",
]

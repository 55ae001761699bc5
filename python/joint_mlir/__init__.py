"""joint_mlir: export PyTorch joint forward+backward graphs (format v1)."""

from .format import FORMAT_VERSION, graph_stats, read_document
from .model_structure import ModelStructure, discover_structure
from .tracer import JointGraph, TraceError, extract_module_state, trace_joint_graph
from .validate import validate_document

__version__ = "0.1.0"

__all__ = [
    "FORMAT_VERSION",
    "JointGraph",
    "ModelStructure",
    "TraceError",
    "discover_structure",
    "extract_module_state",
    "graph_stats",
    "read_document",
    "trace_joint_graph",
    "validate_document",
]

"""joint_mlir: export PyTorch joint forward+backward graphs (format v1), run
them back in torch (``joint_mlir.fx.load``, ``joint_mlir.run``), run pass
pipelines in process (``joint_mlir.run_pipeline``) and optimize a training
step in one call (``joint_mlir.optimize``). Every error it raises on bad input
derives from :class:`JointMlirError`; the command lines are in
:mod:`joint_mlir.cli`."""

from .errors import JointMlirError
from .format import FORMAT_VERSION, graph_stats, read_document
from . import fx
from .model_structure import ModelStructure, discover_structure
from .tracer import (DataDependentError, JointGraph, TraceError,
                     extract_module_state, trace_joint_graph)
from .executor import StepResult, compare, compare_scaled, materialize, run
from .validate import validate_document
from .pipeline import PipelineError, PipelineResult, run_pipeline
from .api import (OptimizedStep, OptimizeOptionError, RetraceError,
                  build_pipeline, optimize)

__version__ = "0.1.0"

__all__ = [
    "FORMAT_VERSION",
    "JointGraph",
    "JointMlirError",
    "OptimizedStep",
    "PipelineError",
    "PipelineResult",
    "OptimizeOptionError",
    "RetraceError",
    "StepResult",
    "build_pipeline",
    "ModelStructure",
    "TraceError",
    "DataDependentError",
    "compare",
    "compare_scaled",
    "discover_structure",
    "extract_module_state",
    "fx",
    "graph_stats",
    "materialize",
    "optimize",
    "read_document",
    "run",
    "run_pipeline",
    "trace_joint_graph",
    "validate_document",
]

"""The real-world step graphs of test_cases_numerics.py (a hidden writer, an
in-place ELU, a buffer update, RNG ops, batch norm in training) through the
lowering: each traced graph converts with ``convert-joint-to-linalg``
(RNG ops as Philox draws), or is refused with one error per offending op
naming the op and the node, all of them (a custom op writing an argument it
does not return). The pass-level cases
(collectives, transfers, budgets) run as the bundled examples under the
offload and checkpointing pipelines, converted by test_mlir_cpu.py.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import torch

from graph_tools import tool
from helpers import trace_doc
from test_cases_numerics import CASES

# case -> the errors a refusal gives, in order, or None when the graph
# converts.
EXPECTED = {
    "hidden-write": ["in-place write of 'jmtest::bump_.default' (node "
                     "'bump_') has no result"],
    "inplace-elu": None,
    "buffer-update": None,
    # RNG ops lower to Philox draws (test_random_lowering.py).
    "native-dropout": None,
    "rand-like": None,
    # Batch norm in training: the running statistics become step outputs.
    "batch-norm-training": None,
}


@pytest.mark.parametrize("case", list(CASES))
def test_case_converts_or_is_refused_by_name(case: str,
                                             tmp_path: Path) -> None:
    factory, fn, inputs, _ = CASES[case]
    torch.manual_seed(0)
    _, doc = trace_doc(factory(), fn, inputs, name=case)
    path = tmp_path / "g.json"
    path.write_text(json.dumps(doc))
    r = subprocess.run([str(tool("joint-opt")), str(path),
                        "--convert-joint-to-linalg", "-o", "/dev/null"],
                       capture_output=True, text=True)
    want = EXPECTED[case]
    if want is None:
        assert r.returncode == 0, r.stderr[-2000:]
        return
    assert r.returncode != 0
    errors = [ln for ln in r.stderr.splitlines() if "error:" in ln]
    assert len(errors) == len(want), r.stderr[-2000:]
    for line, message in zip(errors, want):
        assert message in line, r.stderr[-2000:]

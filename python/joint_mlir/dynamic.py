"""Fake user inputs, optionally with symbolic (dynamic) dimensions.

State tensors always stay static; only user inputs get symbols. A dimension is
made dynamic either for every input dimension (``dynamic=True``) or for the
dimensions named in ``dynamic_dims``: a mapping from a dotted input path (as
in ``JointGraph.input_paths``) to one dimension or a list of dimensions.
Equal sizes share one symbol (duck sizing), so ``input_ids`` and ``labels``
of the same sequence length get the same ``s`` symbol.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch._dynamo.source import ConstantSource
from torch._subclasses import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import (
    DimDynamic,
    ShapeEnv,
    StatelessSymbolicContext,
)

DynamicDims = Mapping[str, int | Sequence[int]]

__all__ = ["DynamicDims", "make_fake_inputs"]


def _normalize_dims(dynamic_dims: DynamicDims | None,
                    paths: Sequence[str],
                    leaves: Sequence[Any]) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    if not dynamic_dims:
        return out
    by_path = dict(zip(paths, leaves))
    for path, dims in dynamic_dims.items():
        if path not in by_path:
            raise ValueError(
                f"dynamic_dims names unknown input {path!r}; inputs are "
                f"{', '.join(paths) or '(none)'}")
        t = by_path[path]
        if not isinstance(t, torch.Tensor):
            raise ValueError(f"dynamic_dims input {path!r} is not a tensor")
        dim_list = [dims] if isinstance(dims, int) else list(dims)
        norm: set[int] = set()
        for d in dim_list:
            if not -t.dim() <= d < t.dim():
                raise ValueError(
                    f"dynamic dim {d} out of range for input {path!r} of "
                    f"rank {t.dim()}")
            norm.add(d % t.dim())
        out[path] = norm
    return out


def make_fake_inputs(paths: Sequence[str], leaves: Sequence[Any], *,
                     device: torch.device, dynamic: bool,
                     dynamic_dims: DynamicDims | None,
                     symbolic: bool) -> tuple[FakeTensorMode, list[Any]]:
    """Return a fake mode and the fake counterparts of the input leaves.

    ``meta`` tensors become fake tensors on ``device``; primitives pass through.
    """
    dims = _normalize_dims(dynamic_dims, paths, leaves)
    shape_env = ShapeEnv() if symbolic else None
    fake_mode = FakeTensorMode(allow_non_fake_inputs=True, shape_env=shape_env)
    out: list[Any] = []
    for path, leaf in zip(paths, leaves):
        if not isinstance(leaf, torch.Tensor):
            out.append(leaf)
            continue
        t = leaf
        if not symbolic:
            if t.device.type == "meta":
                # A fake tensor with the same metadata on the target device;
                # nothing is allocated.
                with fake_mode:
                    out.append(torch.empty_strided(
                        tuple(t.shape), tuple(t.stride()), dtype=t.dtype,
                        device=device))
            else:
                out.append(fake_mode.from_tensor(t, static_shapes=True))
            continue
        if dynamic and path not in dims:
            want = set(range(t.dim()))
        else:
            want = dims.get(path, set())
        ctx = StatelessSymbolicContext(
            dynamic_sizes=[DimDynamic.DUCK if i in want else DimDynamic.STATIC
                           for i in range(t.dim())],
        )
        fake = fake_mode.from_tensor(t, source=ConstantSource(path),
                                     symbolic_context=ctx)
        if fake.device.type == "meta":
            with fake_mode:
                fake = fake.to(device)
        out.append(fake)
    return fake_mode, out

"""Replay a random op's draw: the run-time helpers of recomputed random ops.

A remat duplicate of a random op (``nondeterministic_seeded``) must draw
exactly what the original drew. :func:`joint_mlir.fx.build_graph_module`
records the generator state right before the original with
:func:`rng_state` and runs the duplicate through :func:`run_with_rng_state`
(as ``torch.utils.checkpoint`` preserves the RNG state).

The generator an op draws from is torch's default generator of its device:
the ``device`` keyword if given, else the device of the first tensor among
the positional arguments (lists and tuples flattened), else the CPU.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

__all__ = ["rng_state", "run_with_rng_state"]


def _first_tensor(args: Any) -> torch.Tensor | None:
    for a in args:
        if isinstance(a, torch.Tensor):
            return a
        if isinstance(a, (list, tuple)):
            t = _first_tensor(a)
            if t is not None:
                return t
    return None


def _device(args: tuple[Any, ...], kwargs: dict[str, Any]) -> torch.device:
    """The device whose default generator an op with these arguments uses."""
    if kwargs.get("device") is not None:
        dev = torch.device(kwargs["device"])
    else:
        t = _first_tensor(args)
        dev = t.device if t is not None else torch.device("cpu")
    if dev.type not in ("cpu", "cuda"):
        raise ValueError(f"cannot save or replay the random state of device "
                         f"{dev} (only cpu and cuda generators are supported)")
    return dev


def _get(dev: torch.device) -> torch.Tensor:
    return (torch.get_rng_state() if dev.type == "cpu"
            else torch.cuda.get_rng_state(dev))


def _set(dev: torch.device, state: torch.Tensor) -> None:
    if dev.type == "cpu":
        torch.set_rng_state(state)
    else:
        torch.cuda.set_rng_state(state, dev)


def rng_state(*args: Any, **kwargs: Any) -> torch.Tensor:
    """State (a CPU ``uint8`` tensor) of the generator that an op called with
    ``args``/``kwargs`` draws from; ValueError for a device other than cpu
    or cuda."""
    return _get(_device(args, kwargs))


def run_with_rng_state(state: torch.Tensor, op: Callable[..., Any], /,
                       *args: Any, **kwargs: Any) -> Any:
    """``op(*args, **kwargs)`` drawing from ``state`` (from :func:`rng_state`
    with the same arguments). The generator's state before the call is
    restored afterwards, also on error, so the global stream continues as if
    the call never drew. ValueError for a device other than cpu or cuda."""
    dev = _device(args, kwargs)
    saved = _get(dev)
    _set(dev, state)
    try:
        return op(*args, **kwargs)
    finally:
        _set(dev, saved)

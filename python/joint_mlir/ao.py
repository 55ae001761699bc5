"""The ``ao`` offload protocol at run time: torch's ops, or a synchronous fallback.

A transformed joint graph moves saved activations with three ops (see
``include/joint/Dialect/AO/IR/AOOps.td``)::

    h = ao.offload(a)                         # host copy of a device tensor
    h = ao.wait_tensor(h, keepalive=a, last_use_of_storage=u)
    r = ao.reload(h, device, size, stride)    # device copy of the host tensor
    r = ao.wait_tensor(r, keepalive=h)

torch (2.11 and later) implements them in
``torch._functorch._activation_offloading.offload_ops`` as ``torch.ops.ao.*``:
asynchronous copies on a transfer stream, a pinned host buffer, and a wait
that makes the compute stream wait on the copy's event and then frees the
``keepalive`` storage. Those ops need an accelerator stream, so they only
run on an accelerator device (``cuda``).

Everywhere else (CPU runs, or a torch without the ops) :func:`resolve` returns
the fallback below. It has the same observable semantics, done synchronously:

- ``offload``: a contiguous host copy (like torch's, which copies into a
  contiguous pinned buffer viewed to the source shape);
- ``reload``: ``empty_strided(size or shape, stride or stride)`` on ``device``
  and a copy, so a recorded non-contiguous layout is restored;
- ``wait_tensor``: synchronizes the device when the copy involved one
  (copies are synchronous here anyway), then releases ``keepalive``'s storage
  (``resize_(0)``) exactly like torch, so a graph that still reads a released
  tensor fails loudly instead of silently reading stale data; returns its
  input. ``last_use_of_storage`` is only a scheduling edge and is ignored.

Placeholders are never released by the fallback when ``protect`` holds their
storages (``joint_mlir.run`` passes the model state and inputs), because the
caller owns them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, Callable

import torch

__all__ = ["AO_TARGETS", "resolve", "torch_ao_ops", "fallback_offload",
           "fallback_reload", "fallback_wait_tensor", "protect_storages"]

AO_TARGETS = ("ao::offload.default", "ao::reload.default",
              "ao::wait_tensor.default")

# Storages (by data pointer) that the fallback wait must not release.
_protected: set[int] = set()


@contextlib.contextmanager
def protect_storages(tensors: list[Any]) -> Iterator[None]:
    """Within the block, fallback waits never free these tensors' storages."""
    ptrs = {t.untyped_storage().data_ptr() for t in tensors
            if isinstance(t, torch.Tensor) and t.untyped_storage().nbytes()}
    added = ptrs - _protected
    _protected.update(added)
    try:
        yield
    finally:
        _protected.difference_update(added)


def torch_ao_ops() -> dict[str, Any] | None:
    """torch's own ``ao`` op overloads by target name, or None when absent."""
    try:
        import torch._functorch._activation_offloading.offload_ops  # noqa: F401
    except ImportError:
        pass
    try:
        ns = torch.ops.ao
        return {"ao::offload.default": ns.offload.default,
                "ao::reload.default": ns.reload.default,
                "ao::wait_tensor.default": ns.wait_tensor.default}
    except (AttributeError, RuntimeError):
        return None


def _sync(*tensors: Any) -> None:
    for t in tensors:
        if isinstance(t, torch.Tensor) and t.device.type == "cuda":
            torch.cuda.synchronize(t.device)
            return


def fallback_offload(tensor: torch.Tensor) -> torch.Tensor:
    """``ao.offload``: contiguous host copy of ``tensor``."""
    out = torch.empty(tensor.shape, dtype=tensor.dtype, device="cpu")
    out.copy_(tensor)
    return out


def fallback_reload(tensor: torch.Tensor, device: torch.device | str,
                    original_size: list[int] | None = None,
                    original_stride: list[int] | None = None) -> torch.Tensor:
    """``ao.reload``: copy to ``device`` in the recorded size and stride."""
    size = list(tensor.shape) if original_size is None else list(original_size)
    stride = (list(tensor.stride()) if original_stride is None
              else list(original_stride))
    out = torch.empty_strided(size, stride, dtype=tensor.dtype, device=device)
    out.copy_(tensor)
    return out


def fallback_wait_tensor(tensor: torch.Tensor,
                         keepalive: torch.Tensor | None = None,
                         last_use_of_storage: torch.Tensor | None = None
                         ) -> torch.Tensor:
    """``ao.wait_tensor``: finish the copy, release ``keepalive``, return input."""
    _sync(tensor, keepalive)
    if keepalive is not None:
        st = keepalive.untyped_storage()
        if st.nbytes() and st.data_ptr() not in _protected \
                and st.data_ptr() != tensor.untyped_storage().data_ptr():
            st.resize_(0)
    return tensor


_FALLBACK: dict[str, Callable[..., Any]] = {
    "ao::offload.default": fallback_offload,
    "ao::reload.default": fallback_reload,
    "ao::wait_tensor.default": fallback_wait_tensor,
}


def resolve(target: str, device: torch.device | str | None,
            impl: str = "auto") -> Callable[..., Any]:
    """The callable for an ``ao::`` target on ``device``.

    ``impl``: ``auto`` (torch's ops on an accelerator device when the
    installed torch has them, else the fallback), ``torch`` (torch's ops or
    an error), ``fallback``.
    """
    if target not in _FALLBACK:
        raise ValueError(f"unknown ao target {target!r}")
    if impl not in ("auto", "torch", "fallback"):
        raise ValueError(f"ao impl must be auto, torch or fallback, not {impl!r}")
    if impl == "fallback":
        return _FALLBACK[target]
    dev = torch.device(device) if device is not None else torch.device("cpu")
    ops = torch_ao_ops()
    usable = ops is not None and dev.type == "cuda" and torch.cuda.is_available()
    if impl == "torch" and not usable:
        raise RuntimeError(
            f"torch.ops.ao.* cannot run on {dev}: "
            + ("the installed torch has no ao ops" if ops is None else
               "they need an accelerator stream (cuda)"))
    return ops[target] if usable else _FALLBACK[target]

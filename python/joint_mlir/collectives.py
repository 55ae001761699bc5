"""Communicators of the CUDA runtime's collectives (runtime/cuda/README.md,
"Collectives").

A compiled step calls ``joint_nccl_*`` with the torch group names of its
graph (``all_gather_into_tensor(x, n, "0")`` etc.); before its first call,
every rank creates one communicator per group on its device:

- :func:`init_communicators` creates a world communicator (rank 0 calls
  ``joint_nccl_get_unique_id`` and publishes the bytes with ``store.set``,
  the others ``store.get`` them), then one ``joint_nccl_comm_split`` per
  group (color = the group's smallest global rank, key = the global rank;
  ranks outside the group pass -1 and get no communicator);
- :func:`groups_of_process_group` resolves group names with
  ``torch.distributed`` for real multi-process runs.

Ranks may be processes (``torch.distributed`` with a TCPStore) or threads
of one process sharing a ``torch.distributed.HashStore``, thread r on device
r: the runtime's current device is per thread, and its lock is released
while a rank waits for the others (the emulated device's N-thread tests do
this).
"""

from __future__ import annotations

import ctypes
import json
from typing import Any, Iterable, Mapping, Sequence

from .errors import JointMlirError

#: Bytes of an NCCL unique id (``JOINT_NCCL_UNIQUE_ID_BYTES``).
UNIQUE_ID_BYTES = 128
#: Name of the world communicator that the groups are split from.
WORLD_GROUP = "joint_world"

#: ``JOINT_NCCL_DTYPE_*`` codes of joint_cuda_runtime.h, by torch dtype name.
DTYPES = {"float32": 0, "float16": 1, "bfloat16": 2, "float64": 3,
          "int64": 4, "int32": 5, "int8": 6, "uint8": 7}
#: ``JOINT_REDUCE_*`` codes, by reduction name as torch's funcol spells it.
REDUCE_OPS = {"sum": 0, "avg": 1, "product": 2, "min": 3, "max": 4}

_DECLARED = "_joint_nccl_declared"


class CollectiveError(JointMlirError, RuntimeError):
    """A ``joint_nccl_*`` call failed; the message is the runtime's."""


def runtime_library(lib: Any) -> ctypes.CDLL:
    """The ctypes library of the runtime, given it or a ``CompiledStep``
    (whose step library resolves the runtime's symbols), with the
    ``joint_nccl_*`` signatures declared."""
    cdll = getattr(lib, "_lib", lib)
    if getattr(cdll, _DECLARED, False):
        return cdll
    P, I, U64 = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64
    S = ctypes.c_char_p
    I64P = ctypes.POINTER(ctypes.c_int64)
    signatures = {
        "joint_nccl_data_type": (I, [I]),
        "joint_nccl_get_unique_id": (I, [P]),
        "joint_nccl_comm_init": (I, [S, I, I, P]),
        "joint_nccl_comm_split": (I, [S, S, I, I]),
        "joint_nccl_comm_destroy_all": (I, []),
        "joint_nccl_all_gather": (P, [S, P, P, U64, I, S]),
        "joint_nccl_reduce_scatter": (P, [S, P, P, U64, I, I, S]),
        "joint_nccl_all_reduce": (P, [S, P, P, U64, I, I, S]),
        "joint_nccl_all_to_all": (P, [S, P, P, I64P, I64P, I, I, S]),
        "joint_nccl_wait": (I, [P]),
        "joint_runtime_last_error": (S, []),
        "joint_runtime_status": (ctypes.c_int32, []),
        "joint_runtime_clear_error": (None, []),
        "mgpuSetDefaultDevice": (None, [ctypes.c_int32]),
    }
    for name, (res, args) in signatures.items():
        fn = getattr(cdll, name)
        fn.restype = res
        fn.argtypes = args
    setattr(cdll, _DECLARED, True)
    return cdll


def _check(lib: ctypes.CDLL, status: int, what: str) -> None:
    """Raises CollectiveError with the runtime's message, which it takes
    (clears) from the thread's status: the error is the exception's now,
    not the next call's."""
    if status != 0:
        message = (lib.joint_runtime_last_error() or b"").decode()
        lib.joint_runtime_clear_error()
        raise CollectiveError(f"{what}: status {status}: {message}")


def init_communicators(lib: Any, groups: Mapping[str, Sequence[int]],
                       rank: int, store: Any, device: int | None = None,
                       world_size: int | None = None,
                       world_group: str = WORLD_GROUP,
                       tag: str = "") -> list[str]:
    """Creates this rank's communicators and returns the names of the groups
    it belongs to.

    ``lib``: the runtime's ctypes library or a ``CompiledStep``; ``groups``:
    each torch group name to its global ranks, identical on every rank;
    ``rank``: this global rank; ``store``: a torch.distributed Store (or
    anything with ``set(key, bytes)`` and a blocking ``get(key)``) shared by
    all ranks; ``device``: the device to select first (mgpuSetDefaultDevice,
    for the calling thread); ``world_size``: number of ranks (default: torch
    distributed's, else one more than the largest rank in ``groups``);
    ``tag``: distinguishes the store key of repeated bootstraps.
    Every rank must call this with the same groups and world size; it
    blocks until all have, and every rank raises CollectiveError when they
    differ (each rank's groups go through the store first). Given a
    ``CompiledStep``, its ``collective_groups`` must all be in ``groups``
    with the sizes its ops state. A device keeps its communicators until
    ``joint_nccl_comm_destroy_all`` (a second bootstrap of the same names on
    a device fails). Raises :class:`CollectiveError` naming the runtime's
    message.
    """
    step_groups = getattr(lib, "collective_groups", None)
    if step_groups is not None:
        missing = [g for g in step_groups if g not in groups]
        if missing:
            raise CollectiveError(
                f"the step's collectives use group(s) "
                f"{', '.join(map(repr, missing))}, which `groups` "
                f"({sorted(groups)}) does not name")
        for name, n in getattr(lib, "collective_group_sizes", {}).items():
            if len(groups[name]) != n:
                raise CollectiveError(
                    f"group {name!r} has {len(groups[name])} rank(s) in "
                    f"`groups` ({list(groups[name])}), the step's "
                    f"collectives use {n}")
    lib = runtime_library(lib)
    if device is not None:
        lib.mgpuSetDefaultDevice(device)
    guessed = world_size is None
    if world_size is None:
        world_size = _default_world_size(groups)
    if not 0 <= rank < world_size:
        raise ValueError(
            f"rank {rank} is outside a world of {world_size}" +
            (" (world_size defaults to torch.distributed's, else to one "
             "more than the largest rank in `groups`; pass world_size=)"
             if guessed else ""))
    for name, members in groups.items():
        bad = [r for r in members if not 0 <= r < world_size]
        if bad or len(set(members)) != len(members) or not members:
            raise ValueError(f"group {name!r} has ranks {list(members)}, "
                             f"not distinct ranks of a world of "
                             f"{world_size}")
    # Every rank's groups through the store, so that ranks that disagree all
    # fail here instead of waiting in a rendezvous the others never join.
    prefix = f"joint_nccl/{world_group}/{tag}"
    mine_text = json.dumps({"world_size": world_size,
                            "groups": {k: list(v) for k, v in
                                       sorted(groups.items())}},
                           sort_keys=True)
    store.set(f"{prefix}/groups/{rank}", mine_text.encode())
    for other in range(world_size):
        theirs = bytes(store.get(f"{prefix}/groups/{other}")).decode()
        if theirs != mine_text:
            raise CollectiveError(
                f"rank {rank} passes {mine_text} to init_communicators, "
                f"rank {other} passes {theirs}: every rank must pass the same "
                "groups and world size")
    key = f"{prefix}/unique_id"
    unique = (ctypes.c_ubyte * UNIQUE_ID_BYTES)()
    if rank == 0:
        _check(lib, lib.joint_nccl_get_unique_id(unique),
               "joint_nccl_get_unique_id")
        store.set(key, bytes(unique))
    else:
        data = bytes(store.get(key))
        if len(data) != UNIQUE_ID_BYTES:
            raise CollectiveError(f"store key {key!r} holds {len(data)} "
                                  f"bytes, not an NCCL unique id")
        ctypes.memmove(unique, data, UNIQUE_ID_BYTES)
    _check(lib, lib.joint_nccl_comm_init(world_group.encode(), world_size,
                                         rank, unique),
           f"joint_nccl_comm_init({world_group!r}, rank {rank} of "
           f"{world_size})")
    mine = []
    # The same order on every rank: each split is collective over the world.
    for name in sorted(groups):
        members = list(groups[name])
        color = min(members) if rank in members else -1
        _check(lib, lib.joint_nccl_comm_split(world_group.encode(),
                                              name.encode(), color, rank),
               f"joint_nccl_comm_split({name!r}, color {color})")
        if color >= 0:
            mine.append(name)
    return mine


def _default_world_size(groups: Mapping[str, Sequence[int]]) -> int:
    try:
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized():
            return dist.get_world_size()
    except ImportError:
        pass
    return 1 + max((r for members in groups.values() for r in members),
                   default=0)


def groups_of_process_group(names: Iterable[str]) -> dict[str, list[int]]:
    """Each torch group name (as funcol and the graph name it) to its
    global ranks, resolved by the initialised ``torch.distributed``."""
    import torch.distributed as dist
    from torch.distributed.distributed_c10d import _resolve_process_group
    return {name: list(dist.get_process_group_ranks(
        _resolve_process_group(name))) for name in names}

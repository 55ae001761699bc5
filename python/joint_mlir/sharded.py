"""FSDP2 (``fully_shard``) modules traced as functional collectives.

FSDP2's own hooks unshard parameters with in-place c10d calls, streams and
storage resizes that a joint graph cannot hold. While a step is traced they
are suspended and each FSDP module unshards its parameter group the way
SimpleFSDP does, with functional collectives the passes understand:

  forward   padded local shards -> flat copy-in -> all_gather_into_tensor
            -> wait_tensor -> per-parameter copy-out -> unsharded parameters
  backward  unsharded grads -> pad dim 0, chunk_cat by rank -> divide factor
            -> reduce_scatter_tensor -> wait_tensor -> sharded grads

The layout (FSDP2's all-gather order, reduce-scatter order by gradient dtype,
dim-0 padding), the reduce op and the divide factors are FSDP2's own, so the
step's loss and every gradient shard are bitwise those of the eager FSDP2
step on the same ranks. The graph's state inputs are the ranks' padded
local shards (the same shapes on every rank, so every rank traces and plans
the same graph); ``optimize`` writes DTensor grads without the padding.

Tensor-parallel parameters (``parallelize_module``) enter as their local
tensors and are rewrapped as DTensors inside the step, so DTensor's own
dispatch traces their collectives; FSDP2 over tensor parallelism gathers
the TP-local tensor and rewraps it the same way.

Supported: one module per ``fully_shard`` call, Shard(0) placement, no
mixed-precision casts, no HSDP/replication, no CPU offload policy; anything
else raises ShardingError naming the module and the reason.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from .tracer import TraceError


class ShardingError(TraceError):
    """A sharded model this tracer cannot express as functional collectives."""


@dataclass(frozen=True)
class _Param:
    """One FSDP-managed parameter: where it lives and its shard geometry."""
    module: nn.Module           # owner (the first if shared)
    name: str                   # attribute on ``module``
    shared: tuple[tuple[nn.Module, str], ...]  # other owners (tied)
    orig_size: torch.Size       # unsharded size
    sharded_size: torch.Size    # the padded local shard (the graph's input)
    padded_rows: int            # dim-0 rows of every rank's padded shard
    tp_spec: Any = None         # DTensorSpec of a tensor-parallel parameter


@dataclass(frozen=True)
class _Group:
    """One ``fully_shard`` call's parameter group and its collectives."""
    module: nn.Module
    fqn: str
    params: tuple[_Param, ...]  # FSDP2's all-gather order
    reduce_order: tuple[int, ...]  # FSDP2's reduce-scatter order
    world_size: int
    group_name: str
    reduce_op: str              # funcol op name: "avg" or "sum"
    predivide: float | None
    postdivide: float | None


def is_sharded(t: torch.Tensor) -> bool:
    """Whether ``t`` is a DTensor (a sharded or replicated parameter)."""
    try:
        from torch.distributed.tensor import DTensor
    except ImportError:  # torch built without distributed
        return False
    return isinstance(t, DTensor)


def _padded_shards(model: nn.Module) -> dict[int, torch.Tensor]:
    """id(FSDP sharded parameter) -> its padded local shard (FSDP2's
    ``_sharded_param_data``, whose leading rows alias the DTensor's local
    tensor): every rank's has the same shape, so every rank traces the same
    graph even when dim 0 does not divide by the world size."""
    try:
        from torch.distributed.fsdp import FSDPModule
    except ImportError:
        return {}
    out = {}
    for module in model.modules():
        if isinstance(module, FSDPModule):
            pg = module._get_fsdp_state()._fsdp_param_group
            for fp in (pg.fsdp_params if pg is not None else ()):
                out[id(fp.sharded_param)] = fp._sharded_param_data.view(
                    fp.padded_sharded_param_size)
    return out


def local_state(model: nn.Module, state: Mapping[str, torch.Tensor]
                ) -> dict[str, torch.Tensor]:
    """``state`` as the step's graph takes it: an FSDP parameter as its
    padded local shard, another DTensor as its local tensor (aliases, grad
    flags kept); other tensors unchanged."""
    padded = _padded_shards(model)
    out = {}
    for k, t in state.items():
        if is_sharded(t):
            local = padded.get(id(t))
            if local is None:
                local = t._local_tensor  # type: ignore[attr-defined]
            t = local.detach().requires_grad_(t.requires_grad)
        out[k] = t
    return out


def write_local_grad(p: torch.Tensor, g: torch.Tensor) -> None:
    """Set or accumulate the grad of DTensor parameter ``p`` from the local
    gradient ``g`` (FSDP's padded rows dropped; placements and global shape
    are ``p``'s)."""
    from torch.distributed.tensor import DTensor
    rows = p._local_tensor.shape[0] if p.dim() else 0  # type: ignore
    if p.dim() and g.shape[0] != rows:
        g = g.narrow(0, 0, rows)
    if p.grad is not None:
        p.grad._local_tensor.add_(g)  # type: ignore[attr-defined]
        return
    p.grad = DTensor.from_local(g, p.device_mesh, p.placements,  # type: ignore
                                run_check=False, shape=p.shape,
                                stride=p.stride())


def dtensor_templates(model: nn.Module, state: Mapping[str, torch.Tensor]
                      ) -> dict[str, torch.Tensor]:
    """FQN -> DTensor for state that is a DTensor not managed by FSDP2
    (tensor-parallel parameters): the step sees them as DTensors again."""
    fsdp = set()
    try:
        from torch.distributed.fsdp import FSDPModule
    except ImportError:
        return {}
    for module in model.modules():
        if isinstance(module, FSDPModule):
            pg = module._get_fsdp_state()._fsdp_param_group
            if pg is not None:
                fsdp.update(id(fp.sharded_param) for fp in pg.fsdp_params)
    return {k: t for k, t in state.items()
            if is_sharded(t) and id(t) not in fsdp}


def wrap_local(local: torch.Tensor, template: torch.Tensor | None
               ) -> torch.Tensor:
    """``local`` as a DTensor laid out like ``template`` (differentiable:
    gradients flow back to ``local``); unchanged without a template."""
    if template is None:
        return local
    from torch.distributed.tensor import DTensor
    return DTensor.from_local(local, template.device_mesh,
                              template.placements, run_check=False,
                              shape=template.shape, stride=template.stride())


def _fsdp_groups(model: nn.Module) -> list[_Group]:
    try:
        from torch.distributed.fsdp import FSDPModule
        from torch.distributed.fsdp._fully_shard import _fsdp_collectives
        from torch.distributed.fsdp._fully_shard._fsdp_api import (
            CPUOffloadPolicy)
        from torch.distributed.fsdp._fully_shard._fsdp_common import (
            DDPMeshInfo)
        from torch.distributed.fsdp._fully_shard._fsdp_param import (
            ShardedState)
        from torch.distributed.tensor import Shard
    except ImportError:
        return []
    groups: list[_Group] = []
    names = {m: n for n, m in model.named_modules(remove_duplicate=False)}
    for module in model.modules():
        if not isinstance(module, FSDPModule):
            continue
        fqn = names.get(module, "") or "<root>"

        def refuse(why: str) -> ShardingError:
            return ShardingError(f"fully_shard module {fqn!r}: {why}; "
                                 "joint_mlir traces FSDP2 only as plain "
                                 "Shard(0) fully_shard without these")

        state = module._get_fsdp_state()
        if len(state._modules) != 1:
            raise refuse("one fully_shard call over several modules")
        pg = state._fsdp_param_group
        if pg is None:
            continue
        fps = pg.fsdp_params
        if any(fp.sharded_state != ShardedState.SHARDED for fp in fps):
            raise refuse("parameters are not resharded (call reshard() "
                         "before tracing)")
        if isinstance(pg.mesh_info, DDPMeshInfo):
            raise refuse("HSDP/replication mesh")
        mp = state._mp_policy
        dtypes = {fp.sharded_param.dtype for fp in pg.fsdp_params}
        if any(d is not None and d not in dtypes for d in
               (mp.param_dtype, mp.reduce_dtype)) or \
                mp.output_dtype is not None:
            raise refuse("a MixedPrecisionPolicy with dtype casts")
        if pg._all_reduce_hook is not None:
            raise refuse("an all-reduce hook")
        if pg.reduce_scatter_unused_params:
            raise refuse("reduce_scatter_unused_params")
        if isinstance(pg.offload_policy, CPUOffloadPolicy):
            raise refuse("a CPUOffloadPolicy")
        params = []
        for fp in fps:
            if fp.fsdp_placement != Shard(0):
                raise refuse(f"placement {fp.fsdp_placement} of "
                             f"{fp._module_info.param_name!r}")
            info = fp._module_info
            params.append(_Param(
                module=info.module, name=info.param_name,
                shared=tuple(zip(info.shared_modules,
                                 info.shared_param_names)),
                orig_size=fp._orig_size,
                sharded_size=fp.padded_sharded_param_size,
                padded_rows=fp.padded_sharded_param_size[0],
                tp_spec=fp._unsharded_dtensor_spec if fp.is_dtensor
                else None))
        # FSDP2 packs the reduce-scatter input by gradient dtype, stably.
        by_dtype: dict[torch.dtype, list[int]] = {}
        for i, fp in enumerate(fps):
            by_dtype.setdefault(fp.sharded_param.dtype, []).append(i)
        order = tuple(i for idx in by_dtype.values() for i in idx)
        rs_group = pg.mesh_info.shard_process_group
        dtype = fps[0].sharded_param.dtype
        pre, post, rs_op, _ = _fsdp_collectives._get_gradient_divide_factors(
            rs_group, None, dtype, pg.device.type, pg.gradient_divide_factor,
            pg.force_sum_reduction_for_comms)
        op = {torch.distributed.ReduceOp.AVG: "avg",
              torch.distributed.ReduceOp.SUM: "sum"}.get(rs_op)
        if op is None:
            raise refuse(f"reduce op {rs_op} (a custom divide factor)")
        if len(by_dtype) > 1:
            raise refuse("parameters of several dtypes in one group")
        groups.append(_Group(
            module=module, fqn=fqn, params=tuple(params),
            reduce_order=order,
            world_size=pg.mesh_info.shard_mesh_size,
            group_name=rs_group.group_name, reduce_op=op,
            predivide=pre, postdivide=post))
    return groups


def _pad_rows(t: torch.Tensor, rows: int) -> torch.Tensor:
    """``t`` with zero rows appended along dim 0 up to ``rows``."""
    extra = rows - t.shape[0]
    if extra == 0:
        return t
    return torch.cat([t, t.new_zeros((extra, *t.shape[1:]))])


class _Unshard(torch.autograd.Function):
    """All-gather a group's local shards; reduce-scatter their gradients."""

    @staticmethod
    def forward(ctx: Any, group: _Group, *shards: torch.Tensor) -> Any:
        ctx.group = group
        ctx.set_materialize_grads(False)
        ops = torch.ops._c10d_functional
        ws = group.world_size
        # The shards are FSDP2's padded ones: one flat copy-in, no padding.
        flat = torch.cat([s.reshape(-1) for s in shards])
        out = ops.wait_tensor(ops.all_gather_into_tensor(
            flat, ws, group.group_name))
        numels = [p.padded_rows * _row_numel(p) for p in group.params]
        pieces = torch.split(out.view(ws, -1), numels, dim=1)
        full = []
        for piece, p in zip(pieces, group.params):
            t = piece.contiguous().view(ws * p.padded_rows, *p.orig_size[1:])
            if t.shape[0] != p.orig_size[0]:
                t = t.narrow(0, 0, p.orig_size[0])
            full.append(t)
        return tuple(full)

    @staticmethod
    def backward(ctx: Any, *grads: torch.Tensor | None) -> Any:
        group: _Group = ctx.group
        ws = group.world_size
        ops = torch.ops._c10d_functional
        live = [i for i in group.reduce_order if grads[i] is not None]
        out: list[torch.Tensor | None] = [None] * len(group.params)
        if not live:
            return (None, *out)
        rows = [group.params[i].padded_rows * ws for i in live]
        flat = torch.cat(
            [_pad_rows(grads[i], r).reshape(ws, -1)  # type: ignore[arg-type]
             for i, r in zip(live, rows)], dim=1).reshape(-1)
        if group.predivide is not None and group.predivide > 1:
            flat = flat.div(group.predivide)
        red = ops.wait_tensor(ops.reduce_scatter_tensor(
            flat, group.reduce_op, ws, group.group_name))
        if group.postdivide is not None and group.postdivide > 1:
            red = red.div(group.postdivide)
        numels = [group.params[i].padded_rows * _row_numel(group.params[i])
                  for i in live]
        for i, piece in zip(live, torch.split(red, numels)):
            p = group.params[i]
            out[i] = piece.view(p.padded_rows, *p.orig_size[1:])
        return (None, *out)


def _row_numel(p: _Param) -> int:
    n = 1
    for d in p.orig_size[1:]:
        n *= d
    return n


def _fsdp_hook_ids(module: nn.Module) -> set[int]:
    state = module._get_fsdp_state()  # type: ignore[operator]
    ids = set()
    for h in (getattr(state, "_pre_forward_hook_handle", None),
              getattr(state, "_post_forward_hook_handle", None)):
        if h is not None:
            ids.add(h.id)
    return ids


_HOOK_DICTS = ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs",
               "_forward_hooks", "_forward_hooks_with_kwargs",
               "_forward_hooks_always_called")


@contextlib.contextmanager
def functional_fsdp(model: nn.Module) -> Iterator[list[_Group]]:
    """Within the block, each FSDP module of ``model`` unshards through
    :class:`_Unshard` instead of FSDP2's hooks (the module's parameter
    attributes must hold the local shards, as ``_reparametrize_module``
    installs them) and reshards after its forward. Yields the groups; a
    model without FSDP modules yields ``[]`` and changes nothing."""
    groups = _fsdp_groups(model)
    if not groups:
        yield groups
        return
    saved: list[tuple[nn.Module, str, dict]] = []
    handles = []
    try:
        for g in groups:
            ids = _fsdp_hook_ids(g.module)
            for attr in _HOOK_DICTS:
                d = getattr(g.module, attr)
                saved.append((g.module, attr, dict(d)))
                for k in list(d):
                    if k in ids:
                        del d[k]
            # The local shards each running forward replaced, innermost last
            # (a module may run again inside itself).
            shards: list[list[torch.Tensor]] = []
            handles.append(g.module.register_forward_pre_hook(
                _pre_hook(g, shards), prepend=True))
            handles.append(g.module.register_forward_hook(
                _post_hook(g, shards)))
        yield groups
    finally:
        for h in handles:
            h.remove()
        for module, attr, d in saved:
            live = getattr(module, attr)
            live.clear()
            live.update(d)


def _owners(p: _Param) -> list[tuple[nn.Module, str]]:
    return [(p.module, p.name), *p.shared]


def _pre_hook(g: _Group, stack: list[list[torch.Tensor]]) -> Any:
    def hook(module: nn.Module, args: Any) -> None:
        shards = [p.module._parameters[p.name] for p in g.params]
        for s, p in zip(shards, g.params):
            if s is None or tuple(s.shape) != tuple(p.sharded_size):
                raise ShardingError(
                    f"fully_shard module {g.fqn!r}: parameter {p.name!r} "
                    f"holds shape {None if s is None else tuple(s.shape)}, "
                    f"not its local shard {tuple(p.sharded_size)}")
        stack.append(shards)
        full = _Unshard.apply(g, *shards)
        for t, p in zip(full, g.params):
            if p.tp_spec is not None:  # the tensor-parallel local tensor
                from torch.distributed.tensor import DTensor
                spec = p.tp_spec
                t = DTensor.from_local(t, spec.mesh, spec.placements,
                                       run_check=False,
                                       shape=spec.tensor_meta.shape,
                                       stride=spec.tensor_meta.stride)
            for m, name in _owners(p):
                m._parameters[name] = t
    return hook


def _post_hook(g: _Group, stack: list[list[torch.Tensor]]) -> Any:
    def hook(module: nn.Module, args: Any, output: Any) -> None:
        shards = stack.pop()
        for s, p in zip(shards, g.params):
            for m, name in _owners(p):
                m._parameters[name] = s
    return hook

"""Operators registered outside torch, for the executor tests (operators from other libraries).

Importing this module registers ``joint_test::scaled_tanh`` (a
``torch.library.custom_op``, as torchtitan's ``deterministic_scatter_add``),
``joint_test_lib::shift`` (defined through ``torch.library.Library``) and
``joint_test_fn::halve`` (``torch.library.define`` and ``impl``).
A graph using them runs only in a process that imported this module.
``joint_test::unordered_scale`` stands for a library kernel without a
deterministic implementation: under ``torch.use_deterministic_algorithms`` it
raises torch's alert (``torch._prims_common.alert_not_deterministic``, the
Python form of ``alertNotDeterministic``) as CUDA's scatter_add would.
"""

from __future__ import annotations

import torch
from torch import nn


@torch.library.custom_op("joint_test::scaled_tanh", mutates_args=())
def scaled_tanh(x: torch.Tensor, scale: float) -> torch.Tensor:
    return torch.tanh(x) * scale


@scaled_tanh.register_fake
def _(x: torch.Tensor, scale: float) -> torch.Tensor:
    return torch.empty_like(x)


def _setup(ctx: object, inputs: tuple[torch.Tensor, float],
           output: torch.Tensor) -> None:
    ctx.save_for_backward(inputs[0])  # type: ignore[attr-defined]
    ctx.scale = inputs[1]  # type: ignore[attr-defined]


def _backward(ctx: object, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
    (x,) = ctx.saved_tensors  # type: ignore[attr-defined]
    t = torch.tanh(x)
    return grad * (1 - t * t) * ctx.scale, None  # type: ignore[attr-defined]


scaled_tanh.register_autograd(_backward, setup_context=_setup)

_LIB = torch.library.Library("joint_test_lib", "DEF")
_LIB.define("shift(Tensor x, float by) -> Tensor")


def _shift(x: torch.Tensor, by: float) -> torch.Tensor:
    return x + by


_LIB.impl("shift", _shift, "CompositeExplicitAutograd")
torch.library.register_fake("joint_test_lib::shift", lambda x, by:
                            torch.empty_like(x), lib=_LIB)
torch.library.register_autograd(
    "joint_test_lib::shift", lambda ctx, grad: (grad, None), lib=_LIB)

# The functional API registers from torch/library.py; only the fake kernel
# keeps this module's source.
torch.library.define("joint_test_fn::halve", "(Tensor x) -> Tensor")


@torch.library.impl("joint_test_fn::halve", "CompositeExplicitAutograd")
def _halve(x: torch.Tensor) -> torch.Tensor:
    return x * 0.5


@torch.library.register_fake("joint_test_fn::halve")
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


torch.library.register_autograd("joint_test_fn::halve",
                                lambda ctx, grad: grad * 0.5)


@torch.library.custom_op("joint_test::unordered_scale", mutates_args=())
def unordered_scale(x: torch.Tensor, scale: float) -> torch.Tensor:
    from torch._prims_common import alert_not_deterministic

    alert_not_deterministic("joint_test::unordered_scale")
    return x * scale


@unordered_scale.register_fake
def _(x: torch.Tensor, scale: float) -> torch.Tensor:
    return torch.empty_like(x)


def _scale_setup(ctx: object, inputs: tuple[torch.Tensor, float],
                 output: torch.Tensor) -> None:
    ctx.scale = inputs[1]  # type: ignore[attr-defined]


unordered_scale.register_autograd(
    lambda ctx, grad: (grad * ctx.scale, None), setup_context=_scale_setup)


class Block(nn.Module):
    """x + halve(shift(scaled_tanh(Linear(x)))): a Linear, then the
    operators of all three registration forms."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.ops.joint_test.scaled_tanh(self.proj(x), 0.5)
        return x + torch.ops.joint_test_fn.halve(
            torch.ops.joint_test_lib.shift(h, 0.25))


class CustomOpNet(nn.Module):
    """Two blocks (``layers.0``, ``layers.1``) and a Linear head."""

    def __init__(self, width: int = 16) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Block(width) for _ in range(2))
        self.head = nn.Linear(width, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.layers:
            x = block(x)
        return self.head(x)


def factory() -> tuple[nn.Module, object, dict[str, torch.Tensor]]:
    """``python -m joint_mlir.export --model python:joint_custom_ops:factory``."""
    torch.manual_seed(0)
    return (CustomOpNet(), lambda m, x: m(x).pow(2).mean(),
            {"x": torch.randn(4, 16)})


class UnorderedNet(nn.Module):
    """Linear -> unordered_scale (an op without a deterministic kernel)."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.joint_test.unordered_scale(self.proj(x), 2.0)


def unordered() -> tuple[nn.Module, object, dict[str, torch.Tensor]]:
    """``--model python:joint_custom_ops:unordered``."""
    torch.manual_seed(0)
    return UnorderedNet(), lambda m, x: m(x).sum(), {"x": torch.randn(4, 8)}

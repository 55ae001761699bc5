"""Discover transformer block containers and attention modules of a live model.

Two rules, tried in order (``docs/format.md``, "model"):

1. ``gradient_checkpointing``: every module that owns a
   ``gradient_checkpointing`` attribute (the Hugging Face convention for the
   module that loops over decoder blocks) and a direct child ``ModuleList``
   whose entries are all of one class is a block container; its entries, in
   registration order, are the blocks.
2. ``repeated_modules`` (fallback for plain models): every ``ModuleList``,
   ``Sequential`` or ``ModuleDict`` with at least two children all of one
   class.

Under either rule the outermost container wins: a container inside a block
of another one (the experts ``ModuleList`` of an MoE layer in ``layers``) is
part of that block, not a block list of its own.

Attention modules are those registered under the attribute name ``self_attn``
(Llama, Qwen, Mistral) or, failing any, whose class name ends in
``Attention`` (GPT-2's ``attn``) and are not nested in another attention.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from torch import nn

__all__ = ["BlockContainer", "ModelStructure", "discover_structure"]


@dataclass
class BlockContainer:
    owner: str
    container: str
    block_class: str
    blocks: list[str]


@dataclass
class ModelStructure:
    rule: str  # "gradient_checkpointing" | "repeated_modules" | "none"
    containers: list[BlockContainer] = field(default_factory=list)
    attention: list[tuple[str, str]] = field(default_factory=list)


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _uniform_children(mod: nn.Module, minimum: int) -> str | None:
    kids = list(mod.children())
    if len(kids) < minimum:
        return None
    classes = {type(k) for k in kids}
    if len(classes) != 1:
        return None
    return type(kids[0]).__name__


# Containers whose entries the repeated-modules rule takes as blocks.
_REPEATED_CONTAINERS = (nn.ModuleList, nn.Sequential, nn.ModuleDict)


def _inside(fqn: str, blocks: list[str]) -> bool:
    """Whether module ``fqn`` is one of ``blocks`` or lies inside one."""
    return any(fqn == b or fqn.startswith(b + ".") for b in blocks)


def _add_outermost(containers: list[BlockContainer], owner: str,
                   container: str, cls: str, mod: nn.Module) -> None:
    """Append ``container`` unless it lies inside a block found before.

    ``named_modules`` visits a module before its children, so an enclosing
    container is always seen first.
    """
    if _inside(container, [b for c in containers for b in c.blocks]):
        return
    containers.append(BlockContainer(
        owner=owner, container=container, block_class=cls,
        blocks=[_join(container, n) for n, _ in mod.named_children()]))


def discover_structure(model: nn.Module) -> ModelStructure:
    """Block containers and attention modules of ``model`` (module doc)."""
    containers: list[BlockContainer] = []
    for fqn, mod in model.named_modules():
        if not hasattr(mod, "gradient_checkpointing"):
            continue
        for child_name, child in mod.named_children():
            if not isinstance(child, nn.ModuleList):
                continue
            cls = _uniform_children(child, 1)
            if cls is None:
                continue
            _add_outermost(containers, fqn, _join(fqn, child_name), cls,
                           child)
    rule = "gradient_checkpointing"
    if not containers:
        rule = "repeated_modules"
        for fqn, mod in model.named_modules():
            if not isinstance(mod, _REPEATED_CONTAINERS) or not fqn:
                continue
            cls = _uniform_children(mod, 2)
            if cls is None:
                continue
            _add_outermost(containers, fqn.rpartition(".")[0], fqn, cls, mod)
    if not containers:
        rule = "none"

    attention = [(fqn, type(m).__name__) for fqn, m in model.named_modules()
                 if fqn.rpartition(".")[2] == "self_attn"]
    if not attention:
        for fqn, m in model.named_modules():
            if not type(m).__name__.endswith("Attention"):
                continue
            if any(fqn.startswith(a + ".") for a, _ in attention):
                continue
            attention.append((fqn, type(m).__name__))
    return ModelStructure(rule=rule, containers=containers, attention=attention)

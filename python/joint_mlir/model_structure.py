"""Discover transformer block containers and attention modules of a live model.

Two rules, tried in order (``docs/format.md``, "model"):

1. ``gradient_checkpointing``: every module that owns a
   ``gradient_checkpointing`` attribute (the Hugging Face convention for the
   module that loops over decoder blocks) and a direct child ``ModuleList``
   whose entries are all of one class is a block container; its entries, in
   registration order, are the blocks.
2. ``repeated_modules`` (fallback for plain models): every ``ModuleList`` or
   ``Sequential`` with at least two children all of one class.

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


def discover_structure(model: nn.Module) -> ModelStructure:
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
            cfqn = _join(fqn, child_name)
            containers.append(BlockContainer(
                owner=fqn, container=cfqn, block_class=cls,
                blocks=[_join(cfqn, n) for n, _ in child.named_children()]))
    rule = "gradient_checkpointing"
    if not containers:
        rule = "repeated_modules"
        for fqn, mod in model.named_modules():
            if not isinstance(mod, (nn.ModuleList, nn.Sequential)) or not fqn:
                continue
            cls = _uniform_children(mod, 2)
            if cls is None:
                continue
            parent = fqn.rpartition(".")[0]
            containers.append(BlockContainer(
                owner=parent, container=fqn, block_class=cls,
                blocks=[_join(fqn, n) for n, _ in mod.named_children()]))
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

"""Other tools' transformed FX joint graphs as format v1 documents.

The planner bench prices every plan with our memory and cost model
(`joint-memory-report`), so the peer's graph (torchtitan's passes applied
to our joint graph) and torch's min-cut partition (AOTAutograd's forward and
backward graphs) are written back to format v1 and read by joint-opt like
any export:

- :func:`document_of` re-derives every node's value with
  ``FakeTensorProp`` (placeholders faked from the source document's facts),
  so views share their base's storage exactly as in a trace, and writes the
  document with ``joint_mlir.format`` (state, inputs, outputs and model
  structure taken from the source document).
- :func:`joint_of_partition` stitches a forward and a backward graph into
  one joint graph: backward placeholders become the forward's saved values,
  the loss tangent becomes ``ones_like(loss)``.

Backward flags: ``True`` for remat duplicates, else a node's
``autograd_backward``, else the ``backward`` flag of the document node it was
built from (``meta["joint"]``), else the flag of the node before it. Remat duplicates carry
``recomputed_from`` (docs/format.md), so the report counts their FLOPs as
recompute.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
import torch.fx

_DTYPES = {str(d).removeprefix("torch."): d for d in vars(torch).values()
           if isinstance(d, torch.dtype)}


def _dim(d: Any) -> int:
    return int(d["hint"]) if isinstance(d, dict) else int(d)


def _fake_inputs(doc: dict[str, Any], mode: Any) -> list[Any]:
    """One fake tensor per placeholder of `doc`; placeholders that share a
    storage id share a fake storage."""
    bases: dict[int, torch.Tensor] = {}
    out = []
    for n in doc["nodes"]:
        if n["kind"] != "placeholder":
            continue
        f = n["outputs"][0]
        if f.get("t") != "tensor":
            out.append(int(f.get("v", 0)))
            continue
        sizes = [_dim(s) for s in f["sizes"]]
        strides = [_dim(s) for s in f["strides"]]
        offset = _dim(f.get("offset", 0))
        with mode:
            base = bases.get(f["storage"])
            if base is None:
                t = torch.empty_strided(sizes, strides,
                                        dtype=_DTYPES[f["dtype"]],
                                        device=f["device"])
                bases[f["storage"]] = t
            else:
                t = base.as_strided(sizes, strides, offset)
        out.append(t)
    return out


def _structure(doc: dict[str, Any]) -> Any:
    from joint_mlir.model_structure import BlockContainer, ModelStructure
    m = doc.get("model") or {}
    return ModelStructure(
        rule=m.get("rule", "none"),
        containers=[BlockContainer(c["owner"], c["container"],
                                   c["block_class"], list(c["blocks"]))
                    for c in m.get("block_containers", [])],
        attention=[(a["fqn"], a["class"]) for a in m.get("attention", [])])


_AO_ARITY = {"wait_tensor": ("keepalive", "last_use_of_storage"),
             "reload": ("device", "original_size", "original_stride")}


def _spell_out_ao_args(gm: torch.fx.GraphModule) -> None:
    """Every ``ao`` call with all its schema arguments positional: the
    importer reads ``ao::wait_tensor(t, keepalive, last_use)`` and
    ``ao::reload(t, device, size, stride)``, while torchtitan leaves the
    trailing defaults (None) out."""
    for n in gm.graph.nodes:
        if n.op != "call_function" or getattr(n.target, "namespace", "") \
                != "ao":
            continue
        names = _AO_ARITY.get(n.target._opname)
        if names is None:
            continue
        args = list(n.args)
        kw = dict(n.kwargs)
        for k in names[len(args) - 1:]:
            args.append(kw.pop(k, None))
        n.args, n.kwargs = tuple(args), kw


def document_of(gm: torch.fx.GraphModule, source: dict[str, Any],
                name: str,
                recomputed_from: Callable[[torch.fx.Node], str | None]
                ) -> dict[str, Any]:
    """Format v1 document of `gm`, a joint graph with `source`'s
    placeholders (same order) and outputs (loss, then one gradient per
    `source` grad output). `recomputed_from(node)` names the forward node a
    remat duplicate copies, or None."""
    from torch._subclasses import FakeTensorMode
    from torch.fx.passes.fake_tensor_prop import FakeTensorProp

    from joint_mlir.format import graph_to_dict
    from joint_mlir.tracer import JointGraph
    try:  # registers torch.ops.ao with its fake kernels
        import torch._functorch._activation_offloading.offload_ops  # noqa
    except ImportError:
        pass

    _spell_out_ao_args(gm)
    mode = FakeTensorMode(allow_non_fake_inputs=True)
    FakeTensorProp(gm, mode).propagate_dont_convert_inputs(
        *_fake_inputs(source, mode))
    backward = False
    dup: dict[str, str] = {}
    for n in gm.graph.nodes:
        src = recomputed_from(n) if n.op == "call_function" else None
        if src is not None:
            dup[n.name] = src
            n.meta["autograd_backward"] = True
        elif "autograd_backward" in n.meta:
            n.meta["autograd_backward"] = bool(n.meta["autograd_backward"])
        elif "backward" in (n.meta.get("joint") or {}):
            n.meta["autograd_backward"] = bool(n.meta["joint"]["backward"])
        else:
            n.meta["autograd_backward"] = backward
        backward = n.meta["autograd_backward"]
        # Applied decisions: the tags themselves are not part of a plan.
        n.meta.pop("recompute", None)
        stack = (n.meta.get("joint") or {}).get("module_stack") or []
        if stack and "nn_module_stack" not in n.meta:
            n.meta["nn_module_stack"] = {
                f"L{i}": (s["fqn"], s["class"]) for i, s in enumerate(stack)}
    state = source["state"]
    outs = source["outputs"]
    jg = JointGraph(
        name=name, graph_module=gm,
        state_fqns=[s["fqn"] for s in state],
        state_is_param=[bool(s["is_param"]) for s in state],
        state_requires_grad=[bool(s["requires_grad"]) for s in state],
        input_paths=[i["path"] for i in source["inputs"]],
        grad_fqns=[o["fqn"] for o in outs if o["role"] == "grad"],
        loss_dict_keys=[o["key"] for o in outs if o["role"] == "loss_dict"],
        structure=_structure(source),
        backward_tag_source=source.get("backward_tags", "engine"))
    doc = graph_to_dict(jg)
    for rec in doc["nodes"]:
        if rec["name"] in dup:
            rec["recomputed_from"] = dup[rec["name"]]
    return doc


def peer_recomputed_from(n: torch.fx.Node) -> str | None:
    """torchtitan's remat names a duplicate `<original>_recomputed`."""
    return n.name.removesuffix("_recomputed") \
        if n.name.endswith("_recomputed") else None


def joint_of_partition(fw: torch.fx.GraphModule, bw: torch.fx.GraphModule,
                       primal_names: list[str], grad_order: list[int]
                       ) -> tuple[torch.fx.GraphModule, set[str]]:
    """One joint graph from AOTAutograd's forward and backward graphs.

    `fw` returns (loss, *saved); `bw` takes (*saved, tangent) and returns one
    gradient per primal. `primal_names` name the joint graph's placeholders
    (the source document's), `grad_order[k]` is the primal index whose
    gradient is output k+1. Returns the graph and the names of backward
    nodes that recompute a forward node (same op as a forward node of that
    name in `fw`)."""
    g = torch.fx.Graph()
    env: dict[torch.fx.Node, torch.fx.Node] = {}
    fw_ph = [n for n in fw.graph.nodes if n.op == "placeholder"]
    if len(fw_ph) != len(primal_names):
        raise ValueError(f"forward graph has {len(fw_ph)} inputs, the "
                         f"document {len(primal_names)}")
    for n, name in zip(fw_ph, primal_names):
        p = g.placeholder(name)
        p.meta = dict(n.meta)
        env[n] = p
    fw_out = next(n for n in fw.graph.nodes if n.op == "output")
    fw_names: set[str] = set()
    for n in fw.graph.nodes:
        if n.op in ("placeholder", "output"):
            continue
        env[n] = g.node_copy(n, lambda x: env[x])
        env[n].meta["autograd_backward"] = False
        fw_names.add(n.name)
    vals = list(fw_out.args[0])
    loss, saved = env[vals[0]], [env[v] if isinstance(v, torch.fx.Node)
                                 else v for v in vals[1:]]
    bw_ph = [n for n in bw.graph.nodes if n.op == "placeholder"]
    n_tan = len(bw_ph) - len(saved)
    if n_tan != 1:
        raise ValueError(f"backward graph has {len(bw_ph)} inputs for "
                         f"{len(saved)} saved values: expected one tangent")
    benv: dict[torch.fx.Node, Any] = dict(zip(bw_ph, saved))
    tangent = g.call_function(torch.ops.aten.ones_like.default, (loss,))
    tangent.meta["autograd_backward"] = True
    benv[bw_ph[-1]] = tangent
    recomputed: dict[str, str] = {}
    bw_out = next(n for n in bw.graph.nodes if n.op == "output")
    for n in bw.graph.nodes:
        if n.op in ("placeholder", "output"):
            continue
        c = g.node_copy(n, lambda x: benv[x])
        c.meta["autograd_backward"] = True
        benv[n] = c
        # The partitioner keeps a recomputed node's forward name.
        if n.name in fw_names:
            recomputed[c.name] = n.name
    grads = list(bw_out.args[0])
    out = [loss] + [benv[grads[i]] for i in grad_order]
    g.output(tuple(out))
    gm = torch.fx.GraphModule(torch.nn.Module(), g)
    return gm, recomputed


__all__ = ["document_of", "peer_recomputed_from", "joint_of_partition"]

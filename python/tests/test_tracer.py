"""Tracer behaviour: inputs, outputs, tags and errors."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
import torch
from torch import nn

from helpers import TiedLM, by_name, calls, lm_loss, trace_doc
from joint_mlir import TraceError, trace_joint_graph
from joint_mlir.recipes import build_recipe

MLP_FORWARD = (
    # block 0: fc1, gelu, fc2 (Linear on 3-D input: view, t, addmm, view)
    ["aten::view.default", "aten::t.default", "aten::addmm.default",
     "aten::_unsafe_view.default", "aten::gelu.default",
     "aten::view.default", "aten::t.default", "aten::addmm.default",
     "aten::_unsafe_view.default"] * 2
    # head
    + ["aten::view.default", "aten::t.default", "aten::addmm.default",
       "aten::_unsafe_view.default"]
    # cross_entropy on flattened logits
    + ["aten::view.default", "aten::view.default",
       "aten::_log_softmax.default", "aten::alias.default",
       "aten::nll_loss_forward.default", "getitem", "getitem"]
)

MLP_BACKWARD = Counter({
    "aten::view.default": 15, "aten::t.default": 19, "aten::mm.default": 9,
    "aten::sum.dim_IntList": 5, "aten::gelu_backward.default": 2,
    "aten::ones_like.default": 1, "aten::nll_loss_backward.default": 1,
    "aten::alias.default": 1, "aten::_log_softmax_backward_data.default": 1,
})


@pytest.fixture(scope="module")
def mlp_doc() -> dict:
    r = build_recipe("mlp", layers=2, hidden=32, intermediate=64, vocab=16,
                     batch=4, seq=8)
    _, doc = trace_doc(r.model, r.train_fn, r.inputs, name="mlp")
    return doc


def test_mlp_exact_targets_and_counts(mlp_doc: dict) -> None:
    nodes = mlp_doc["nodes"]
    kinds = Counter(n["kind"] for n in nodes)
    assert kinds == {"placeholder": 12, "call_function": 83, "output": 1}
    fwd = [n["target"] for n in calls(mlp_doc) if not n["backward"]]
    bwd = Counter(n["target"] for n in calls(mlp_doc) if n["backward"])
    assert fwd == MLP_FORWARD
    assert bwd == MLP_BACKWARD
    assert len(nodes) == 96


def test_mlp_state_and_inputs(mlp_doc: dict) -> None:
    fqns = [s["fqn"] for s in mlp_doc["state"]]
    assert fqns == [f"layers.{i}.{fc}.{p}" for i in range(2)
                    for fc in ("fc1", "fc2") for p in ("weight", "bias")] + [
                        "head.weight", "head.bias"]
    assert all(s["is_param"] and s["requires_grad"] for s in mlp_doc["state"])
    assert [i["path"] for i in mlp_doc["inputs"]] == ["x", "labels"]
    names = [n["name"] for n in mlp_doc["nodes"][:12]]
    assert [s["input"] for s in mlp_doc["state"]] + [
        i["input"] for i in mlp_doc["inputs"]] == names
    roles = [(o["role"], o["fqn"]) for o in mlp_doc["outputs"]]
    assert roles == [("loss", None)] + [("grad", f) for f in fqns]


def test_backward_tags_only_on_backward_nodes(mlp_doc: dict) -> None:
    nodes = by_name(mlp_doc)
    loss = nodes[mlp_doc["outputs"][0]["node"]]
    assert not loss["backward"]
    for n in mlp_doc["nodes"]:
        if n["kind"] != "call_function":
            assert not n["backward"], n["name"]
    # Every gradient output is computed in the backward half.
    for o in mlp_doc["outputs"][1:]:
        assert nodes[o["node"]]["backward"]
    # Forward nodes come before every backward node (one contiguous split).
    flags = [n["backward"] for n in calls(mlp_doc)]
    first = flags.index(True)
    assert not any(flags[:first]) and all(flags[first:])
    # Backward ops inherit the module stack of their forward op by seq_nr.
    gb = [n for n in calls(mlp_doc)
          if n["target"] == "aten::gelu_backward.default"]
    assert {n["module_stack"][-1]["fqn"] for n in gb} == {
        "layers.0.act", "layers.1.act"}
    for n in calls(mlp_doc):
        if not n["backward"] and n["target"] == "aten::gelu.default":
            assert n["module_stack"][-1]["class"] == "GELU"


def test_structural_tags_match_the_seed_rule() -> None:
    r = build_recipe("mlp", layers=2, hidden=8, intermediate=8, vocab=4,
                     batch=2, seq=2)
    _, doc = trace_doc(r.model, r.train_fn, r.inputs,
                       backward_tags="structural")
    assert doc["backward_tags"] == "structural"
    nodes = by_name(doc)
    for o in doc["outputs"][1:]:
        assert nodes[o["node"]]["backward"]
    assert not nodes[doc["outputs"][0]["node"]]["backward"]
    tagged = {n["target"] for n in calls(doc) if n["backward"]}
    assert "aten::gelu_backward.default" in tagged
    assert "aten::mm.default" in tagged
    assert not any(n["backward"] for n in calls(doc)
                   if n["target"] == "aten::addmm.default")


def test_tied_weights_one_input_one_gradient() -> None:
    m = TiedLM()
    ids = torch.randint(0, 16, (2, 5))
    _, doc = trace_doc(m, lm_loss, {"ids": ids})
    fqns = [s["fqn"] for s in doc["state"]]
    assert fqns == ["embed.weight", "proj.weight", "proj.bias"]
    grads = [o["fqn"] for o in doc["outputs"] if o["role"] == "grad"]
    assert grads == fqns
    ph = [n for n in doc["nodes"] if n["kind"] == "placeholder"]
    assert len(ph) == 4  # three state tensors and ids
    # The tied weight feeds both the embedding and the lm_head matmul.
    users = {n["target"] for n in calls(doc) if not n["backward"]
             and any(a.get("v") == "arg0_1" for a in n["args"])}
    assert "aten::embedding.default" in users
    assert "aten::t.default" in users


def test_gpt2_tied_embeddings() -> None:
    r = build_recipe("gpt2", layers=1, hidden=32, heads=2, intermediate=64,
                     vocab=64, batch=1, seq=4)
    _, doc = trace_doc(r.model, r.train_fn, r.inputs)
    fqns = [s["fqn"] for s in doc["state"]]
    assert "transformer.wte.weight" in fqns
    assert "lm_head.weight" not in fqns
    grads = [o["fqn"] for o in doc["outputs"] if o["role"] == "grad"]
    assert len(grads) == len(set(grads))
    assert doc["model"]["block_containers"][0]["container"] == "transformer.h"
    assert [a["fqn"] for a in doc["model"]["attention"]] == ["transformer.h.0.attn"]


class TwoHeads(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.unused = nn.Linear(4, 4)
        self.register_buffer("scale", torch.ones(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.a(x) * self.scale


def test_loss_dict_after_gradients_and_unused_params_get_zeros() -> None:
    def train(model: nn.Module, x: torch.Tensor):
        y = model(x)
        mse = (y ** 2).mean()
        l1 = y.abs().mean()
        return mse + l1, {"mse": mse, "l1": l1}

    _, doc = trace_doc(TwoHeads(), train, {"x": torch.randn(3, 4)})
    roles = [o["role"] for o in doc["outputs"]]
    assert roles == ["loss"] + ["grad"] * 4 + ["loss_dict"] * 2
    assert [o["key"] for o in doc["outputs"][-2:]] == ["mse", "l1"]
    state = {s["fqn"]: s for s in doc["state"]}
    assert state["scale"]["is_param"] is False
    assert "scale" not in [o["fqn"] for o in doc["outputs"]]
    nodes = by_name(doc)
    for o in doc["outputs"]:
        if o["fqn"] and o["fqn"].startswith("unused."):
            n = nodes[o["node"]]
            assert n["target"] == "aten::zeros_like.default"
            assert n["backward"]
    for o in doc["outputs"][-2:]:
        assert not nodes[o["node"]]["backward"]


def test_storage_ids_shared_by_views_and_inputs(mlp_doc: dict) -> None:
    nodes = by_name(mlp_doc)
    w = mlp_doc["state"][0]["input"]
    t = next(n for n in calls(mlp_doc) if n["target"] == "aten::t.default"
             and n["args"][0]["v"] == w and not n["backward"])
    assert t["outputs"][0]["storage"] == nodes[w]["outputs"][0]["storage"]
    assert t["outputs"][0]["strides"] == list(
        reversed(nodes[w]["outputs"][0]["strides"]))
    ids = [n["outputs"][0]["storage"] for n in mlp_doc["nodes"]
           if n["kind"] == "placeholder"]
    assert ids == list(range(len(ids)))


class NoParams(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2


def test_no_parameters_is_a_clear_error() -> None:
    with pytest.raises(TraceError, match="no parameters"):
        trace_joint_graph(NoParams(), lambda m, x: m(x).sum(),
                          {"x": torch.randn(2)})


def test_non_scalar_loss_is_a_clear_error() -> None:
    with pytest.raises(TraceError, match="scalar"):
        trace_joint_graph(nn.Linear(2, 2), lambda m, x: m(x),
                          {"x": torch.randn(3, 2)})


@pytest.mark.parametrize("leaf,what", [(nn.Linear(2, 2), "nn.Module"),
                                       (object(), "unsupported leaf")])
def test_bad_leaves_raise_value_error(leaf: object, what: str) -> None:
    with pytest.raises(ValueError, match=what):
        trace_joint_graph(nn.Linear(2, 2), lambda m, x, extra: m(x).sum(),
                          {"x": torch.randn(3, 2), "extra": leaf})


def test_meta_model_keeps_no_real_storage() -> None:
    r = build_recipe("llama", layers=1, hidden=32, heads=2, kv_heads=1,
                     intermediate=64, vocab=64, batch=1, seq=4)
    jg = trace_joint_graph(r.model, r.train_fn, r.inputs)
    from torch._subclasses.fake_tensor import FakeTensor
    for n in jg.graph_module.graph.nodes:
        v = n.meta.get("val")
        vals = v if isinstance(v, (list, tuple)) else [v]
        for x in vals:
            if isinstance(x, torch.Tensor):
                assert isinstance(x, FakeTensor), n.name
                assert x.device.type == "cpu"
    assert not list(jg.graph_module.parameters())
    assert not list(jg.graph_module.buffers())


class _NoBackward(torch.autograd.Function):
    """An autograd function whose backward raises."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> torch.Tensor:
        raise RuntimeError("backward refused")


class _FailsInBackward(nn.Module):
    def __init__(self, how: str) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.how = how

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc(x)
        if self.how == "autograd_function":
            return _NoBackward.apply(y)
        # aten::special_zeta has no derivative formula for its input.
        return torch.special.zeta(y.abs() + 2, torch.full_like(y, 2.0))


class _BufferMLP(nn.Module):
    """Two blocks and a step counter buffer updated in place."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(4, 8), nn.ReLU(),
                                    nn.Linear(8, 4))
        self.register_buffer("steps", torch.zeros((), dtype=torch.int64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.steps.add_(1)
        return self.layers(x)


def _fail_after_loss(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    model(x).sum()
    raise KeyError("train_fn failed after the loss")


@pytest.mark.parametrize("how", ["autograd_function", "no_derivative",
                                 "train_fn"])
def test_trace_after_a_failed_trace_is_unchanged(how: str, tmp_path) -> None:
    """A trace that raises (in the backward or in train_fn) leaves no torch
    global state behind: the next trace in the process writes the same
    document as a trace in a fresh state, every phase tag included, and the
    runner accepts it (a leftover backward-hook flag used to tag the output
    node as backward, which the runner refuses)."""
    import torch.fx.traceback as fx_traceback
    from torch._functorch._aot_autograd import logging_utils
    from joint_mlir.executor import run

    def train(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
        return model(x).sum()

    x = torch.randn(3, 4)
    _, want = trace_doc(_BufferMLP(), train, {"x": x}, name="good")
    meta_before = dict(fx_traceback.current_meta)
    if how == "train_fn":
        bad, bad_fn = nn.Linear(4, 4), _fail_after_loss
    else:
        bad, bad_fn = _FailsInBackward(how), train
    with pytest.raises((RuntimeError, NotImplementedError, KeyError)):
        trace_joint_graph(bad, bad_fn, {"x": x})
    assert logging_utils.callback_set is False
    assert fx_traceback.current_meta == meta_before
    jg, got = trace_doc(_BufferMLP(), train, {"x": x}, name="good")
    # seq_nr continues torch's per-thread autograd counter across traces.
    for doc in (got, want):
        for n in doc["nodes"]:
            n.pop("seq_nr")
    assert got == want
    assert [n["name"] for n in got["nodes"]
            if n["kind"] != "call_function" and n["backward"]] == []
    path = tmp_path / "base.json"
    jg.save(str(path))
    assert int(run(str(path)).buffers["steps"]) == 1


def test_backward_flag_only_on_ops_even_if_meta_says_otherwise() -> None:
    """The document gives placeholders and the output no phase, whatever
    their FX metadata carries."""
    jg = trace_joint_graph(_BufferMLP(), lambda m, x: m(x).sum(),
                           {"x": torch.randn(2, 4)})
    for n in jg.graph_module.graph.nodes:
        if n.op != "call_function":
            n.meta["autograd_backward"] = True
    doc = jg.to_json_dict()
    assert [n["name"] for n in doc["nodes"]
            if n["kind"] != "call_function" and n["backward"]] == []
    assert sum(n["backward"] for n in doc["nodes"]) == sum(
        bool(n.meta.get("autograd_backward"))
        for n in jg.graph_module.graph.nodes if n.op == "call_function")

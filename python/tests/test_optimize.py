"""joint_mlir.optimize: the transformed step drives a torch.optim loop.

Gradients, buffer updates and losses of the optimized step are compared with
the untransformed joint graph bit for bit, and with eager autograd (same
kernels on these CPU models: bitwise too). Retracing and its errors, and the
example script with a few steps.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys

import pytest
import torch
from torch import nn

from graph_tools import REPO_ROOT, core
from joint_mlir import (JointMlirError, OptimizeOptionError, PipelineError,
                        RetraceError, build_pipeline, compare, optimize,
                        run_pipeline)

MLP = REPO_ROOT / "examples" / "mlp.json"

core()


class Block(nn.Module):
    def __init__(self, width: int, norm: str) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.norm = (nn.BatchNorm1d(width) if norm == "batch"
                     else nn.LayerNorm(width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.tanh(self.norm(self.fc(x)))


class Net(nn.Module):
    """Two residual Linear+norm blocks (a block container for the
    checkpointing scope) and a head."""

    def __init__(self, norm: str) -> None:
        super().__init__()
        self.layers = nn.ModuleList([Block(8, norm), Block(8, norm)])
        self.head = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def train_fn(model: nn.Module, x: torch.Tensor, y: torch.Tensor):
    out = model(x)
    loss = nn.functional.cross_entropy(out, y)
    return loss, {"mean_logit": out.mean().detach()}


def batch(n: int = 6, seed: int = 0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return {"x": torch.randn(n, 8, generator=g).to(dtype),
            "y": torch.randint(0, 4, (n,), generator=g)}


def net(seed: int = 0, norm: str = "layer") -> Net:
    torch.manual_seed(seed)
    return Net(norm).train()


def grads(model: nn.Module) -> dict[str, torch.Tensor]:
    return {k: p.grad.clone() for k, p in model.named_parameters()}


def test_build_pipeline() -> None:
    assert build_pipeline(checkpoint="full") == \
        "joint-tag-recompute-policy{mode=full},joint-remat"
    assert build_pipeline(checkpoint={"mode": "full", "layer-indices": [0, 1]},
                          offload={"min-bytes": 1024},
                          offload_host_budget_gib=2) == (
        "joint-tag-recompute-policy{mode=full layer-indices=0,1},"
        "joint-cpu-offload{min-bytes=1024 budget-gib=2},joint-remat")
    assert build_pipeline() == ""
    with pytest.raises(OptimizeOptionError, match="checkpoint must be one of"):
        build_pipeline(checkpoint="most")
    # A scope name is short for {"scope": ...}, as checkpoint="full" is for
    # {"mode": "full"}; any other string was silently scope=attention.
    assert build_pipeline(offload="block") == "joint-cpu-offload{scope=block}"
    with pytest.raises(OptimizeOptionError, match=(
            r"offload must be True, one of attention, block, all or a dict "
            r"of joint-cpu-offload options, not 'full'")):
        build_pipeline(offload="full")
    with pytest.raises(OptimizeOptionError, match="not 1"):
        build_pipeline(offload=1)
    # Every bad argument is a JointMlirError (and still a ValueError).
    with pytest.raises(JointMlirError, match="needs offload=True"):
        build_pipeline(offload_host_budget_gib=1)


def test_units_one_meaning_per_spelling() -> None:
    """`_gb` is 1e9 bytes and `_gib` 2^30 bytes everywhere; the host budget's
    `_gb` spelling counted GiB, so it is refused rather than reinterpreted."""
    removed = (r"^offload_host_budget_gb is no longer accepted: it counted "
               r"GiB \(2\^30 bytes\), unlike budget_gb \(1e9 bytes\); give "
               r"offload_host_budget_gib$")
    with pytest.raises(OptimizeOptionError, match=removed):
        build_pipeline(offload=True, offload_host_budget_gb=2)
    with pytest.raises(OptimizeOptionError, match=removed):
        optimize(net(), train_fn, batch(), offload=True,
                 offload_host_budget_gb=2)
    with pytest.raises(PipelineError, match=(
            r"joint-tag-cpu-offload: budget-gb is no longer accepted")):
        run_pipeline(MLP, build_pipeline(offload={"budget-gb": 1}))

    # A budget between the two readings of one number: V GiB holds the
    # save-all peak, V GB (7% less) does not, so only budget_gb makes the
    # planner lower the peak. Its remark names the budget in bytes.
    save_all = run_pipeline(MLP, "").report["peak_bytes"]
    value = save_all / 2**30
    assert value * 1e9 < save_all
    gib = run_pipeline(MLP, build_pipeline(budget_gib=value))
    assert f"budget {save_all / 1024:.2f} KiB ({save_all} B); recompute 0 " \
        in gib.remarks[0], gib.remarks
    assert gib.report["peak_bytes"] == save_all
    assert gib.report["cost"]["recompute_flops"] == 0
    gb_bytes = round(value * 1e9)
    gb = run_pipeline(MLP, build_pipeline(budget_gb=value))
    assert f"budget {gb_bytes / 1024:.2f} KiB ({gb_bytes} B); recompute " \
        in gb.remarks[0], gb.remarks
    assert gb.report["peak_bytes"] <= gb_bytes < save_all


def test_step_matches_eager_and_writes_grads() -> None:
    eager, model = net(), net()
    step = optimize(model, train_fn, batch(), checkpoint="full")
    assert step.report["format"] == "joint-memory-report"
    assert step.report["cost"]["recompute_flops"] > 0
    assert step.graph["format"] == "joint-graph"
    assert any(n.get("recomputed_from") for n in step.graph["nodes"])

    loss, ld = step(**batch(seed=1))
    ref_loss, ref_ld = train_fn(eager, **batch(seed=1))
    ref_loss.backward()
    assert torch.equal(loss, ref_loss.detach())
    assert torch.equal(ld["mean_logit"], ref_ld["mean_logit"])
    for k, g in grads(model).items():
        assert torch.equal(g, grads(eager)[k]), k


def _bn_step(pipeline: str) -> tuple[nn.Module, nn.Module]:
    eager, model = net(norm="batch"), net(norm="batch")
    step = optimize(model, train_fn, batch(), pipeline=pipeline)
    step(**batch(seed=1))
    train_fn(eager, **batch(seed=1))[0].backward()
    return model, eager


def test_batch_norm_running_stats_written_back() -> None:
    model, eager = _bn_step("")
    for k, v in model.named_buffers():
        assert torch.equal(v, dict(eager.named_buffers())[k]), k
    for k, g in grads(model).items():
        assert torch.equal(g, grads(eager)[k]), k
    assert model.layers[1].norm.num_batches_tracked.item() == 1
    assert not torch.equal(model.layers[0].norm.running_mean, torch.zeros(8))


def test_batch_norm_running_stats_under_checkpointing() -> None:
    # native_batch_norm writes its running statistics without a schema
    # annotation; the alias analysis treats it as a writer (hidden writers),
    # so checkpointing saves it instead of updating the statistics twice.
    model, eager = _bn_step("joint-tag-recompute-policy{mode=full},"
                            "joint-remat")
    for k, v in model.named_buffers():
        assert torch.equal(v, dict(eager.named_buffers())[k]), k


def test_grads_accumulate_like_autograd() -> None:
    eager, model = net(), net()
    step = optimize(model, train_fn, batch(), pipeline="")
    for seed in (1, 2):
        step(**batch(seed=seed))
        train_fn(eager, **batch(seed=seed))[0].backward()
    for k, g in grads(model).items():
        assert torch.equal(g, grads(eager)[k]), k


def test_optimizer_loop_bitwise_equal_to_joint_graph() -> None:
    runs = {}
    for name, opts in {"graph": dict(pipeline=""),
                       "ckpt": dict(checkpoint="full")}.items():
        model = net()
        step = optimize(model, train_fn, batch(), **opts)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
        losses = []
        for i in range(3):
            opt.zero_grad()
            losses.append(step(**batch(seed=i))[0])
            opt.step()
        runs[name] = (losses, copy.deepcopy(model.state_dict()))
    for a, b in zip(runs["graph"][0], runs["ckpt"][0]):
        assert torch.equal(a, b)
    for k, v in runs["graph"][1].items():
        assert torch.equal(v, runs["ckpt"][1][k]), k


def test_retrace_on_new_shape_and_dtype() -> None:
    model = net()
    step = optimize(model, train_fn, batch(n=6), checkpoint="full")
    step(**batch(n=6, seed=1))
    assert step.traces == 1
    loss, _ = step(**batch(n=10, seed=2))
    assert step.traces == 2
    # Back to the first shape: the first trace is reused.
    step(**batch(n=6, seed=3))
    assert step.traces == 2
    model.double()
    step(**batch(n=6, seed=4, dtype=torch.float64))
    assert step.traces == 3
    assert step.graph["nodes"][0]["outputs"][0]["dtype"] == "float64"


def test_dynamic_dims_cover_other_sizes() -> None:
    model = net()
    step = optimize(model, train_fn, batch(n=6), pipeline="",
                    dynamic_dims={"x": 0, "y": 0})
    step(**batch(n=9, seed=1))
    assert step.traces == 1


def test_retrace_off_names_the_input() -> None:
    step = optimize(net(), train_fn, batch(n=6), pipeline="", retrace=False)
    with pytest.raises(RetraceError, match=r"input x has shape \(10, 8\), the "
                       r"trace covers \(6, 8\), and retrace=False"):
        step(**batch(n=10))
    with pytest.raises(RetraceError, match="inputs are x, the trace has x, y"):
        step(x=batch()["x"])


def test_retrace_failure_is_explained() -> None:
    step = optimize(net(), train_fn, batch(n=6), pipeline="")
    with pytest.raises(RetraceError, match=r"input y has dtype torch.float32, "
                       r"traced torch.int64; retracing with these inputs "
                       r"failed"):
        step(x=batch()["x"], y=torch.zeros(6))


def test_bad_options() -> None:
    with pytest.raises(ValueError, match="not both"):
        optimize(net(), train_fn, batch(), pipeline="", checkpoint="full")
    with pytest.raises(PipelineError, match="joint-bogus"):
        optimize(net(), train_fn, batch(), pipeline="joint-bogus")


def test_example_script() -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT / "python"))
    r = subprocess.run([sys.executable,
                        str(REPO_ROOT / "examples" / "train_tiny_llama.py"),
                        "--steps", "3"], capture_output=True, text=True,
                       env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "checkpoint: losses bitwise equal to the joint graph's: yes" \
        in r.stdout
    assert "offload: losses bitwise equal to the joint graph's: yes" \
        in r.stdout
    assert "joint graph within 8 ulp of eager at every step: yes" in r.stdout
    assert "offloaded 0 B" in r.stdout  # the untransformed graph's report
    assert "[offload] pipeline: joint-cpu-offload{min-bytes=1024}" in r.stdout


def test_budget_gb_runs_the_memory_planner() -> None:
    assert build_pipeline(budget_gb=2) == "joint-optimize-memory{budget-gb=2.0}"
    with pytest.raises(OptimizeOptionError, match="not both"):
        build_pipeline(budget_gb=2, checkpoint="full")
    with pytest.raises(OptimizeOptionError, match="positive number of GB"):
        build_pipeline(budget_gb=0)
    with pytest.raises(ValueError, match="not both"):
        optimize(net(), train_fn, batch(), pipeline="", budget_gb=1)

    # budget_gib: GiB, as the planner's budget-gib; one of the two.
    assert build_pipeline(budget_gib=2) == \
        "joint-optimize-memory{budget-gib=2.0}"
    with pytest.raises(OptimizeOptionError, match=r"budget_gb \(GB, 1e9 bytes\) "
                       r"or budget_gib \(GiB, 2\^30 bytes\), not both"):
        build_pipeline(budget_gb=2, budget_gib=2)
    with pytest.raises(OptimizeOptionError,
                       match=r"budget_gib must be a positive number of GiB"):
        build_pipeline(budget_gib=-1)
    with pytest.raises(OptimizeOptionError, match="give budget_gib or"):
        build_pipeline(budget_gib=2, offload=True)
    with pytest.raises(ValueError, match="not both"):
        optimize(net(), train_fn, batch(), pipeline="", budget_gib=1)

    # Save-all peak, and the lowest peak the planner reaches (its error).
    full = optimize(net(), train_fn, batch(), pipeline="")
    save_all = full.report["peak_bytes"]
    with pytest.raises(PipelineError, match="lowest modelled peak is"):
        optimize(net(), train_fn, batch(), budget_gb=1e-9)

    with pytest.raises(PipelineError, match="lowest modelled peak is"):
        optimize(net(), train_fn, batch(), budget_gib=1e-9)

    eager, model = net(), net()
    budget = (save_all - 1) / 2**30
    step = optimize(model, train_fn, batch(), budget_gib=budget)
    assert step.pipeline == \
        f"joint-optimize-memory{{budget-gib={float(budget)!r}}}"
    assert step.report["peak_bytes"] <= save_all - 1
    assert step.report["cost"]["recompute_flops"] > 0
    assert any(n.get("recomputed_from") for n in step.graph["nodes"])
    loss, _ = step(**batch(seed=1))
    ref_loss, _ = train_fn(eager, **batch(seed=1))
    ref_loss.backward()
    assert torch.equal(loss, ref_loss.detach())
    for k, g in grads(model).items():
        assert torch.equal(g, grads(eager)[k]), k


class CatBlock(nn.Module):
    """cat([x @ w, x @ w]) over a dynamic sequence dimension; the backward
    of the slice reads only the cat's size."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(8, 8) / 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = torch.cat([x @ self.w, x @ self.w], dim=1)
        return c[:, :x.shape[1]] * 2


class CatNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([CatBlock(), CatBlock()])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


def _backward_size_queries_of_forward_tensors(doc: dict) -> list[str]:
    by = {n["name"]: n for n in doc["nodes"]}
    return [n["name"] for n in doc["nodes"]
            if n["backward"] and n["target"] and "sym_" in n["target"]
            and n["args"][0].get("t") == "node"
            and by[n["args"][0]["v"]]["kind"] == "call_function"
            and not by[n["args"][0]["v"]]["backward"]]


@pytest.mark.parametrize("options", [{}, {"checkpoint": "selective"},
                                     {"offload": "all"}])
def test_no_tensor_lives_across_the_boundary_for_its_size(options) -> None:
    """Every pipeline optimize() runs, the identity one included, reads the
    forward SymInt for a backward size query: the step saves what a bare
    remat saves, and still equals eager autograd bit for bit."""
    def loss_fn(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
        return model(x).sum()

    x = torch.randn(2, 16, 8)
    torch.manual_seed(0)
    model = CatNet()
    eager = copy.deepcopy(model)
    step = optimize(model, loss_fn, {"x": x}, dynamic_dims={"x": 1},
                    **options)
    assert _backward_size_queries_of_forward_tensors(step.graph) == []
    bare = optimize(copy.deepcopy(eager), loss_fn, {"x": x},
                    dynamic_dims={"x": 1}, pipeline="joint-remat")
    assert step.report["activation_bytes"] == \
        bare.report["activation_bytes"]
    loss = step(x=x)
    ref = loss_fn(eager, x)
    ref.backward()
    assert torch.equal(loss, ref.detach())
    for (k, p), (_, q) in zip(model.named_parameters(),
                              eager.named_parameters()):
        assert torch.equal(p.grad, q.grad), k


def test_the_traced_graph_reads_forward_sizes() -> None:
    """The trace itself makes backward size queries read the forward SymInt:
    no pass (the identity pipeline, `run`) keeps a tensor alive across the
    boundary only for its size, and the trace still runs bit for bit."""
    from joint_mlir import graph_stats, run, trace_joint_graph

    def loss_fn(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
        return model(x).sum()

    torch.manual_seed(0)
    doc = trace_joint_graph(CatNet(), loss_fn, {"x": torch.randn(2, 16, 8)},
                            dynamic_dims={"x": 1}).to_json_dict()
    assert _backward_size_queries_of_forward_tensors(doc) == []
    # Saved: the second block's input (2x16x8 f32, read by its weight
    # gradient; the first block's is the user input) and the 4-byte loss.
    # Before, the two cat tensors of each block (1 KiB each) were saved too.
    saved = graph_stats(doc)["activation_bytes"]
    assert saved == 2 * 16 * 8 * 4 + 4
    assert saved == run_pipeline(doc, "").report["activation_bytes"]
    assert saved == run_pipeline(doc, "joint-remat").report[
        "activation_bytes"]
    step = run(doc)
    again = run(run_pipeline(doc, "joint-remat").document)
    assert [d.name for d in compare(step, again) if not d.ok] == []

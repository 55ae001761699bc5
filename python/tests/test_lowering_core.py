"""Numerics of the core lowering (convert-joint-to-linalg) against torch.

Each case is one aten op on small f32 and bf16 tensors: the graph is lowered
with ``joint-opt --convert-joint-to-linalg``, compiled with the CPU pipeline of
docs/lowering.md, run under ``mlir-runner`` (results printed with
``printMemrefF32``) and compared with torch's CPU kernel. Tolerance: max abs
error <= tol x max |ref|, tol 1e-5 for f32 and 1e-2 for bf16.
Data movement (slices with negative start and step, cat, pad with a crop,
slice_backward, expand, split, permute) must match exactly.
"""

import json
import re
import subprocess
from pathlib import Path

import pytest
import torch

from graph_tools import require_mlir_tool, tool

N = 8
# name, target, operands ("x", "g"), extra attributes, torch reference.
CASES = [
    ("gelu", "aten::gelu.default", ["x"], "args = [#joint.operand<0>]",
     lambda x, g: torch.nn.functional.gelu(x)),
    ("gelu_tanh", "aten::gelu.default", ["x"],
     'args = [#joint.operand<0>], kwargs = {approximate = "tanh"}',
     lambda x, g: torch.nn.functional.gelu(x, approximate="tanh")),
    ("gelu_backward", "aten::gelu_backward.default", ["g", "x"], "",
     lambda x, g: torch.ops.aten.gelu_backward(g, x)),
    ("gelu_backward_tanh", "aten::gelu_backward.default", ["g", "x"],
     'args = [#joint.operand<0>, #joint.operand<1>], kwargs = {approximate = "tanh"}',
     lambda x, g: torch.ops.aten.gelu_backward(g, x, approximate="tanh")),
    ("silu", "aten::silu.default", ["x"], "", lambda x, g: torch.nn.functional.silu(x)),
    ("silu_backward", "aten::silu_backward.default", ["g", "x"], "",
     lambda x, g: torch.ops.aten.silu_backward(g, x)),
    ("tanh_backward", "aten::tanh_backward.default", ["g", "x"], "",
     lambda x, g: torch.ops.aten.tanh_backward(g, x)),
    ("sigmoid", "aten::sigmoid.default", ["x"], "", lambda x, g: torch.sigmoid(x)),
    ("rsqrt", "aten::rsqrt.default", ["g"], "", lambda x, g: torch.rsqrt(g)),
    ("elu", "aten::elu.default", ["x"], "args = [#joint.operand<0>, 1.500000e+00]",
     lambda x, g: torch.nn.functional.elu(x, 1.5)),
    ("pow3", "aten::pow.Tensor_Scalar", ["x"], "args = [#joint.operand<0>, 3]",
     lambda x, g: x ** 3),
    ("sub_alpha", "aten::sub.Tensor", ["x", "g"],
     "args = [#joint.operand<0>, #joint.operand<1>], kwargs = {alpha = 2 : i64}",
     lambda x, g: torch.sub(x, g, alpha=2)),
    ("div_floor", "aten::div.Tensor_mode", ["x", "g"],
     'args = [#joint.operand<0>, #joint.operand<1>], kwargs = {rounding_mode = "floor"}',
     lambda x, g: torch.div(x, g, rounding_mode="floor")),
]

PIPELINE = (
    "builtin.module(convert-elementwise-to-linalg,"
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "convert-bufferization-to-memref,func.func(convert-linalg-to-loops),"
    "convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-math-to-llvm,"
    "convert-math-to-libm,finalize-memref-to-llvm,convert-arith-to-llvm,"
    "convert-func-to-llvm,convert-cf-to-llvm,reconcile-unrealized-casts)")


def _graph(elem: str) -> str:
    """The joint graph with every case as one result, inputs x and g."""
    t = f"tensor<{N}x{elem}>"
    results = ", ".join(f"{t} {{joint.role = #joint.role<output>}}" for _ in CASES)
    lines = [f'joint.graph @g(%x: {t} {{joint.role = #joint.role<input>, joint.path = "x"}}, '
             f'%g: {t} {{joint.role = #joint.role<input>, joint.path = "g"}}) -> ({results}) {{']
    for name, target, operands, attrs, _ in CASES:
        attrs = (attrs + ", " if attrs else "") + f'name = "{name}"'
        ins = ", ".join("%" + o for o in operands)
        lines.append(f'  %{name} = joint.call_function "{target}"({ins}) {{{attrs}}} : '
                     f'({", ".join([t] * len(operands))}) -> {t}')
    lines.append(f'  joint.output {", ".join("%" + c[0] for c in CASES)} : '
                 f'{", ".join([t] * len(CASES))}')
    lines.append("}")
    return "\n".join(lines) + "\n"


def _main(elem: str, x: torch.Tensor, g: torch.Tensor) -> str:
    """A main that calls @g on constants and prints every result as f32."""
    t = f"tensor<{N}x{elem}>"

    def dense(v: torch.Tensor) -> str:
        return "dense<[" + ", ".join(f"{f:.9e}" for f in v.float().tolist()) + "]>"

    lines = ["func.func @main() {",
             f"  %x = arith.constant {dense(x)} : {t}",
             f"  %g = arith.constant {dense(g)} : {t}",
             f"  %r:{len(CASES)} = call @g(%x, %g) : ({t}, {t}) -> "
             f"({', '.join([t] * len(CASES))})"]
    for i in range(len(CASES)):
        value = f"%r#{i}"
        if elem != "f32":
            lines.append(f"  %e{i} = arith.extf %r#{i} : {t} to tensor<{N}xf32>")
            value = f"%e{i}"
        lines.append(f"  %c{i} = tensor.cast {value} : tensor<{N}xf32> to tensor<*xf32>")
        lines.append(f"  call @printMemrefF32(%c{i}) : (tensor<*xf32>) -> ()")
    lines += ["  return", "}", "func.func private @printMemrefF32(tensor<*xf32>)"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("elem", ["f32", "bf16"])
def test_elementwise_matches_torch(elem: str, tmp_path: Path) -> None:
    runner = require_mlir_tool("mlir-runner")
    prefix = runner.parents[1]
    libm = "/lib/x86_64-linux-gnu/libm.so.6"
    assert Path(libm).exists(), f"{libm} (glibc's libm) not found"
    opt = tool("joint-opt")
    dtype = torch.float32 if elem == "f32" else torch.bfloat16
    gen = torch.Generator().manual_seed(0)
    # x spans both signs; g is positive and away from 0 (rsqrt, div_floor).
    x = (torch.rand(N, generator=gen) * 6 - 3).to(dtype)
    g = (torch.rand(N, generator=gen) + 0.5).to(dtype)

    (tmp_path / "g.mlir").write_text(_graph(elem))
    lowered = subprocess.run([str(opt), str(tmp_path / "g.mlir"), "--convert-joint-to-linalg"],
                             capture_output=True, text=True)
    assert lowered.returncode == 0, lowered.stderr
    module = lowered.stdout.rstrip()
    assert module.endswith("}")
    (tmp_path / "full.mlir").write_text(module[:-1] + _main(elem, x, g) + "}\n")
    llvm = subprocess.run([str(opt), str(tmp_path / "full.mlir"), f"--pass-pipeline={PIPELINE}",
                           "-o", str(tmp_path / "full.ll.mlir")],
                          capture_output=True, text=True)
    assert llvm.returncode == 0, llvm.stderr
    libs = ",".join([str(prefix / "lib" / "libmlir_runner_utils.so"),
                     str(prefix / "lib" / "libmlir_c_runner_utils.so"), libm])
    run = subprocess.run([str(runner), str(tmp_path / "full.ll.mlir"), "-e", "main",
                          "-entry-point-result=void", f"-shared-libs={libs}"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    printed = [json.loads(m) for m in re.findall(r"\[[^\[\]]*\]", run.stdout.split("data =", 1)[1])]
    printed = [v for v in printed if len(v) == N]
    assert len(printed) == len(CASES)
    tol = 1e-5 if elem == "f32" else 1e-2
    for (name, _, _, _, ref_fn), got in zip(CASES, printed):
        ref = ref_fn(x, g).float()
        err = (torch.tensor(got) - ref).abs().max().item()
        bound = tol * max(ref.abs().max().item(), 1e-30)
        # printMemrefF32 prints 6 significant digits; allow that on top.
        assert err <= bound + 1e-6 * ref.abs().max().item(), (name, err, bound)


# Data movement: each case is joint IR on %x (4x6 f32) ending in a 1-D value
# %<name>, and its torch reference (flattened). Values must match exactly.
MOVES = [
    ("slice", 12, [
        '%s0 = joint.call_function "aten::slice.Tensor"(%x) {args = [#joint.operand<0>, 1, -5, 9223372036854775807, 2], name = "s0"} : (tensor<4x6xf32>) -> tensor<4x3xf32>',
        '%slice = joint.call_function "aten::view.default"(%s0) {args = [#joint.operand<0>, [-1]], name = "slice"} : (tensor<4x3xf32>) -> tensor<12xf32>'],
     lambda x: x[:, -5::2]),
    ("transpose", 24, [
        '%t0 = joint.call_function "aten::t.default"(%x) {name = "t0"} : (tensor<4x6xf32>) -> tensor<6x4xf32>',
        '%transpose = joint.call_function "aten::view.default"(%t0) {args = [#joint.operand<0>, [24]], name = "transpose"} : (tensor<6x4xf32>) -> tensor<24xf32>'],
     lambda x: x.t()),
    ("cat", 48, [
        '%c0 = joint.call_function "aten::cat.default"(%x, %x) {args = [[#joint.operand<0>, #joint.operand<1>], 1], name = "c0"} : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x12xf32>',
        '%cat = joint.call_function "aten::view.default"(%c0) {args = [#joint.operand<0>, [48]], name = "cat"} : (tensor<4x12xf32>) -> tensor<48xf32>'],
     lambda x: torch.cat([x, x], 1)),
    ("pad", 35, [
        '%p0 = joint.call_function "aten::constant_pad_nd.default"(%x) {args = [#joint.operand<0>, [2, -1, 1, 0], 5.000000e-01], name = "p0"} : (tensor<4x6xf32>) -> tensor<5x7xf32>',
        '%pad = joint.call_function "aten::view.default"(%p0) {args = [#joint.operand<0>, [35]], name = "pad"} : (tensor<5x7xf32>) -> tensor<35xf32>'],
     lambda x: torch.constant_pad_nd(x, [2, -1, 1, 0], 0.5)),
    ("slice_backward", 24, [
        '%b0 = joint.call_function "aten::slice.Tensor"(%x) {args = [#joint.operand<0>, 1, -5, 9223372036854775807, 2], name = "b0"} : (tensor<4x6xf32>) -> tensor<4x3xf32>',
        '%b1 = joint.call_function "aten::slice_backward.default"(%b0) {args = [#joint.operand<0>, [4, 6], 1, -5, 9223372036854775807, 2], name = "b1"} : (tensor<4x3xf32>) -> tensor<4x6xf32>',
        '%slice_backward = joint.call_function "aten::view.default"(%b1) {args = [#joint.operand<0>, [24]], name = "slice_backward"} : (tensor<4x6xf32>) -> tensor<24xf32>'],
     lambda x: torch.ops.aten.slice_backward(x[:, -5::2], [4, 6], 1, -5, 2**63 - 1, 2)),
    ("expand", 18, [
        '%e0 = joint.call_function "aten::select.int"(%x) {args = [#joint.operand<0>, 0, -1], name = "e0"} : (tensor<4x6xf32>) -> tensor<6xf32>',
        '%e1 = joint.call_function "aten::expand.default"(%e0) {args = [#joint.operand<0>, [3, -1]], name = "e1"} : (tensor<6xf32>) -> tensor<3x6xf32>',
        '%expand = joint.call_function "aten::view.default"(%e1) {args = [#joint.operand<0>, [18]], name = "expand"} : (tensor<3x6xf32>) -> tensor<18xf32>'],
     lambda x: x[-1].expand(3, 6)),
    ("split", 8, [
        '%q0, %q1, %q2 = joint.call_function "aten::split.Tensor"(%x) {args = [#joint.operand<0>, 2, 1], name = "q"} : (tensor<4x6xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>)',
        '%split = joint.call_function "aten::view.default"(%q1) {args = [#joint.operand<0>, [8]], name = "split"} : (tensor<4x2xf32>) -> tensor<8xf32>'],
     lambda x: x.split(2, 1)[1]),
    ("permute", 24, [
        '%u0 = joint.call_function "aten::unsqueeze.default"(%x) {args = [#joint.operand<0>, 0], name = "u0"} : (tensor<4x6xf32>) -> tensor<1x4x6xf32>',
        '%u1 = joint.call_function "aten::permute.default"(%u0) {args = [#joint.operand<0>, [2, 0, 1]], name = "u1"} : (tensor<1x4x6xf32>) -> tensor<6x1x4xf32>',
        '%permute = joint.call_function "aten::view.default"(%u1) {args = [#joint.operand<0>, [24]], name = "permute"} : (tensor<6x1x4xf32>) -> tensor<24xf32>'],
     lambda x: x.unsqueeze(0).permute(2, 0, 1)),
]


def test_data_movement_matches_torch(tmp_path: Path) -> None:
    runner = require_mlir_tool("mlir-runner")
    prefix = runner.parents[1]
    opt = tool("joint-opt")
    x = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    types = [f"tensor<{n}xf32>" for _, n, _, _ in MOVES]
    results = ", ".join(f"{t} {{joint.role = #joint.role<output>}}" for t in types)
    lines = ['joint.graph @g(%x: tensor<4x6xf32> {joint.role = #joint.role<input>, '
             f'joint.path = "x"}}) -> ({results}) {{']
    for _, _, body, _ in MOVES:
        lines += ["  " + line for line in body]
    lines.append(f'  joint.output {", ".join("%" + m[0] for m in MOVES)} : {", ".join(types)}')
    lines.append("}")
    (tmp_path / "g.mlir").write_text("\n".join(lines) + "\n")
    lowered = subprocess.run([str(opt), str(tmp_path / "g.mlir"), "--convert-joint-to-linalg"],
                             capture_output=True, text=True)
    assert lowered.returncode == 0, lowered.stderr
    dense = "dense<[" + ", ".join(
        "[" + ", ".join(f"{v:.1f}" for v in row) + "]" for row in x.tolist()) + "]>"
    main = ["func.func @main() {",
            f"  %x = arith.constant {dense} : tensor<4x6xf32>",
            f"  %r:{len(MOVES)} = call @g(%x) : (tensor<4x6xf32>) -> ({', '.join(types)})"]
    for i, t in enumerate(types):
        main.append(f"  %c{i} = tensor.cast %r#{i} : {t} to tensor<*xf32>")
        main.append(f"  call @printMemrefF32(%c{i}) : (tensor<*xf32>) -> ()")
    main += ["  return", "}", "func.func private @printMemrefF32(tensor<*xf32>)"]
    module = lowered.stdout.rstrip()
    (tmp_path / "full.mlir").write_text(module[:-1] + "\n".join(main) + "\n}\n")
    llvm = subprocess.run([str(opt), str(tmp_path / "full.mlir"), f"--pass-pipeline={PIPELINE}",
                           "-o", str(tmp_path / "full.ll.mlir")],
                          capture_output=True, text=True)
    assert llvm.returncode == 0, llvm.stderr
    libs = ",".join([str(prefix / "lib" / "libmlir_runner_utils.so"),
                     str(prefix / "lib" / "libmlir_c_runner_utils.so")])
    run = subprocess.run([str(runner), str(tmp_path / "full.ll.mlir"), "-e", "main",
                          "-entry-point-result=void", f"-shared-libs={libs}"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    printed = [json.loads(m) for m in re.findall(r"\[[^\[\]]*\]", run.stdout)]
    printed = [v for v in printed if len(v) > 1]
    assert len(printed) == len(MOVES)
    for (name, _, _, ref_fn), got in zip(MOVES, printed):
        assert got == ref_fn(x).flatten().tolist(), name

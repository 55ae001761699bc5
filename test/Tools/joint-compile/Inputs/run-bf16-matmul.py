"""Runs the compiled bf16 matmul step on random inputs; prints the largest
difference to torch's bf16 matmul (also f32-accumulated, rounded once)."""
import ctypes
import sys

import torch

lib = ctypes.CDLL(sys.argv[1])
g = torch.Generator().manual_seed(0)
a = torch.randn(16, 64, generator=g).bfloat16()
b = torch.randn(64, 32, generator=g).bfloat16()
out = torch.full((16, 32), float("nan"), dtype=torch.bfloat16)
P = ctypes.c_void_p
rc = lib.joint_step((P * 2)(a.data_ptr(), b.data_ptr()),
                    (P * 1)(out.data_ptr()), None)
err = (out.float() - (a @ b).float()).abs().max().item()
print("status", rc)
print("within 1e-2 x max|ref|", err <= 1e-2 * (a @ b).float().abs().max().item())

"""Calls joint_step of the compiled add-bias step through its C ABI (rows
passed as a dynamic size) and prints the result next to numpy's."""
import ctypes
import sys

import numpy as np

lib = ctypes.CDLL(sys.argv[1])
rows = 3
x = np.arange(rows * 8, dtype=np.float32).reshape(rows, 8)
b = np.linspace(-1, 1, 8, dtype=np.float32)
out = np.full((rows, 8), np.nan, dtype=np.float32)
P = ctypes.c_void_p
ins = (P * 2)(x.ctypes.data, b.ctypes.data)
outs = (P * 1)(out.ctypes.data)
dims = (ctypes.c_int64 * 2)(rows, rows)  # x's rows, then the output's rows
print("status", lib.joint_step(ins, outs, dims))
print("equal", bool((out == x + b).all()))
dims[0] = -1
print("negative size status", lib.joint_step(ins, outs, dims))

"""Calls joint_step of a CUDA step library against the toolkit's driver stub
(every driver call fails with CUDA_ERROR_STUB_LIBRARY): the step must return
a non-zero status and the runtime must name the failed call."""
import ctypes
import json
import sys

lib = ctypes.CDLL(sys.argv[1])
desc = json.load(open(sys.argv[1] + ".json"))
P = ctypes.c_void_p
ins = (P * max(len(desc["arguments"]), 1))()
outs = (P * max(len(desc["outputs"]), 1))()
dims = (ctypes.c_int64 * max(desc["num_dims"], 1))()
lib.joint_step.restype = ctypes.c_int32
lib.joint_runtime_last_error.restype = ctypes.c_char_p
rc = lib.joint_step(ins, outs, dims)
print("status", rc)
print("error", lib.joint_runtime_last_error().decode())

# -*- Python -*-
# lit configuration for the joint-mlir regression tests (check-joint).

import os
import shutil

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "JOINT"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.joint_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%joint_src_root", config.joint_src_root))
config.substitutions.append(("%joint_obj_root", config.joint_obj_root))
# %mutate IN EDITS... > OUT and %import_error IN OUT: see test/Target/JSON/Inputs.
json_inputs = os.path.join(config.joint_src_root, "test", "Target", "JSON", "Inputs")
config.substitutions.append(
    ("%mutate", "python3 " + os.path.join(json_inputs, "mutate.py")))
config.substitutions.append(
    ("%import_error", "sh " + os.path.join(json_inputs, "import-error.sh") + " "
     + os.path.join(config.joint_tools_dir, "joint-translate")))
config.substitutions.append(("%json_equal", "python3 " + os.path.join(json_inputs, "json_equal.py")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP",
                                     "ASAN_OPTIONS", "UBSAN_OPTIONS"])
llvm_config.use_default_substitutions()

# Under CI (CI=true scripts/test) nothing the project builds may be missing:
# an unbuilt tool stops the run instead of failing test by test, and a build
# without the CUDA runtime next to an installed toolkit is an error rather
# than a silent "UNSUPPORTED" for test/Runtime/CUDA.
in_ci = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
cuda_on = config.joint_enable_cuda in ("ON", "1", "TRUE", "YES", "On", "True")
if in_ci and not cuda_on and (shutil.which("nvcc")
                              or os.access("/usr/local/cuda/bin/nvcc", os.X_OK)):
    lit_config.fatal("CI=true: a CUDA toolkit is installed but this build has "
                     "no CUDA runtime (JOINT_ENABLE_CUDA=OFF)")

tool_dirs = [config.joint_tools_dir, config.llvm_tools_dir]
tools = ["joint-compile", "joint-opt", "joint-translate", "not"]
# The CUDA runtime tests (test/Runtime/CUDA) need a build with the toolkit;
# %cuda_stub_env runs a command against the toolkit's libcuda stub.
if cuda_on:
    config.available_features.add("cuda-runtime")
    tools += ["joint-cuda-runtime-test", "joint-cuda-stub-test",
              "joint-cuda-emulator-test", "joint-cuda-emulated-capi-test",
              "joint-cuda-nccl-test",
              "mlir-runner"]
    # The runtime library, for mlir-runner -shared-libs.
    config.substitutions.append(
        ("%joint_cuda_runtime_lib",
         os.path.join(config.joint_obj_root, "lib", "libjoint_cuda_runtime.so")))
    if config.joint_cudnn_frontend in ("ON", "1", "TRUE", "YES", "On", "True"):
        config.available_features.add("cudnn-frontend")
    config.substitutions.append(
        ("%cuda_stub_env", "env LD_LIBRARY_PATH=" + config.joint_cuda_stub_dir))
llvm_config.add_tool_substitutions(
    [ToolSubst(t, unresolved="fatal" if in_ci else "warn") for t in tools],
    tool_dirs)

# Sanitizer builds (-DJOINT_ENABLE_SANITIZERS=ON) link the uninstrumented
# Debian LLVM/MLIR libraries; LLVM headers inlined into our code poison
# allocator memory that those libraries then touch, so manual poisoning is
# turned off. Real ASan/UBSan findings still fail the test.
config.environment["ASAN_OPTIONS"] = os.environ.get(
    "ASAN_OPTIONS", "allow_user_poisoning=0:detect_leaks=1")
config.environment["UBSAN_OPTIONS"] = os.environ.get(
    "UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")

# joint-compile stores every library it builds in the step cache
# (docs/lowering.md, "Step cache"); tests keep it inside the build tree.
config.environment["JOINT_MLIR_CACHE"] = os.path.join(
    config.test_exec_root, "joint_mlir_cache")

# -*- Python -*-
# lit configuration for dt's regression tests.

import os
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "DT"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Unit", "GPU", "Inputs", "lit.cfg.py", "lit.site.cfg.py", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dt_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%dt_src_root", config.dt_src_root))
config.substitutions.append(("%dt_obj_root", config.dt_obj_root))
config.substitutions.append(("%dt_tools_dir", config.dt_tools_dir))
config.substitutions.append(("%python", config.python_executable))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
# The machine's choice of OpenBLAS kernels, where it makes one: some CPUs
# need it (older OpenBLAS builds miscompute on them with the kernels they
# would pick), so the tests run what a user's dt-run runs there.
llvm_config.with_system_environment(["OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"])
# dt-run's compile cache: the suite's own, not the user's ~/.cache/dt.
config.environment["DT_CACHE_DIR"] = os.path.join(config.test_exec_root, "dt-cache")
llvm_config.use_default_substitutions()
# FileCheck, not and count come from the LLVM tools directory.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.dt_tools_dir, config.llvm_tools_dir]
# DT_OPT_EXTRA adds flags to every dt-opt run: `make check` runs the suite a
# second time with DT_OPT_EXTRA=--verify-roundtrip, so every output is also
# printed, reparsed and compared.
extra = os.environ.get("DT_OPT_EXTRA", "").split()
tools = [
    ToolSubst("dt-opt", unresolved="fatal", extra_args=extra or None),
    "dt-lsp-server",
    "dt-compile",
    "dt-run",
    "dt-bench-pair",
    "dt-bench-baseline",
    "mlir-opt",
    "mlir-runner",
]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# The independent oracle: upstream's CPU pipeline and mlir-runner
# (shared/TOOLCHAIN.md), running the driver dt-test-add-driver adds.
lower_to_llvm = " ".join([
    "--convert-elementwise-to-linalg",
    # (Loops may yield fresh buffers, as a while loop's body does.)
    "'--one-shot-bufferize=bufferize-function-boundaries allow-return-allocs-from-loops'",
    "--convert-linalg-to-loops", "--convert-complex-to-standard",
    "--convert-scf-to-cf",
    "--expand-strided-metadata", "--lower-affine",
    "--finalize-memref-to-llvm", "--convert-math-to-llvm",
    "--convert-math-to-libm", "--convert-arith-to-llvm",
    "--convert-complex-to-llvm",
    "--convert-index-to-llvm", "--convert-cf-to-llvm",
    "--convert-func-to-llvm", "--reconcile-unrealized-casts",
])
runner_libs = ",".join(os.path.join(config.llvm_tools_dir, "..", "lib", lib)
                       for lib in ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so"))
config.substitutions.append(("%lower_to_llvm", lower_to_llvm))
config.substitutions.append(("%runner_libs", runner_libs))
config.substitutions.append((
    "%spmd_passes",
    "-dt-propagate -dt-insert-redistribute -dt-check -dt-lower-redistribute "
    "-dt-test-simulate-spmd -dt-strip-shardings -dt-decompose-aggregates -dt-test-add-driver"))
config.substitutions.append(("%oracle_passes", "-dt-strip-shardings -dt-decompose-aggregates -dt-test-add-driver"))
config.substitutions.append((
    "%run_driver",
    f"mlir-runner -e dt_test_driver -entry-point-result=void -shared-libs={runner_libs}"))

# Tests of how dt-run shares the CPUs out run it on one of this process's
# CPUs (taskset -c %one_cpu) and on two (%two_cpus, where there are two).
usable_cpus = sorted(os.sched_getaffinity(0))
config.substitutions.append(("%one_cpu", str(usable_cpus[0])))
if len(usable_cpus) >= 2:
    config.available_features.add("cpus2")
    config.substitutions.append(("%two_cpus", f"{usable_cpus[0]},{usable_cpus[1]}"))

# dt-run end to end: the path of dt-run for helper scripts, the .npy helper,
# and mpirun for the mpi backend (loopback, more ranks than cores allowed).
import shutil
config.substitutions.append(("%dt_run", os.path.join(config.dt_tools_dir, "dt-run")))
config.substitutions.append(("%npy", f"{config.python_executable} {config.dt_src_root}/scripts/npy.py"))
mpirun = shutil.which("mpirun")
if mpirun:
    config.available_features.add("mpi")
    # Each job with a TMPDIR of its own (Open MPI's session directory).
    config.substitutions.append((
        "%mpirun",
        f"{config.dt_src_root}/scripts/mpirun-own-tmp.sh {mpirun} "
        "--allow-run-as-root --oversubscribe --bind-to none"))
# Open MPI looks for network interfaces and a resource manager; loopback only.
config.environment["OMPI_MCA_btl"] = "self,vader"
config.environment["OMPI_MCA_plm_rsh_agent"] = ""
config.environment["OMPI_MCA_rmaps_base_oversubscribe"] = "1"

# The CUDA target: compiling needs the toolkit (no GPU); running needs a GPU
# (test/GPU, its own suite, which also runs where there is no LLVM).
if config.dt_cuda_root:
    config.available_features.add("cuda-toolkit")
    config.environment["PATH"] = os.path.join(config.dt_cuda_root, "bin") + ":" + config.environment["PATH"]
    # libdevice (math functions in kernels) is found through the toolkit root.
    config.environment["CUDA_ROOT"] = config.dt_cuda_root
    config.substitutions.append(("%cuda_root", config.dt_cuda_root))
sys.path.insert(0, os.path.join(config.dt_src_root, "test", "GPU"))
import gpu_probe
if gpu_probe.gpu_count() > 0:
    config.available_features.add("gpu")
config.substitutions.append(("%fatbin", f"{config.python_executable} {config.dt_src_root}/scripts/fatbin.py"))

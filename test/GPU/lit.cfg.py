# The GPU execution tests: CUDA artifacts built beforehand run on this
# machine's GPUs. A suite of its own that needs no LLVM (no FileCheck, no
# lit.llvm), so that it also runs from the bundle scripts/gpu-bundle.sh
# makes for a machine that has a GPU but no LLVM (scripts/gpu-check.sh).
# Without a GPU every test is reported unsupported (skipped).
#
#   lit test/GPU --param bin=DIR --param artifacts=DIR
#     bin: where dt-run is; artifacts: cuda/ and cpu/ artifacts of the
#     programs (scripts/gpu-bundle.sh compiles them).
import os
import sys

import lit.formats

config.name = "dt-gpu"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".test"]
config.test_source_root = os.path.dirname(__file__)
src_root = os.path.dirname(os.path.dirname(config.test_source_root))

bin_dir = lit_config.params.get("bin")
artifacts = lit_config.params.get("artifacts")
if not bin_dir or not artifacts:
    lit_config.fatal("pass --param bin=DIR (dt-run) and --param artifacts=DIR")
bin_dir, artifacts = os.path.abspath(bin_dir), os.path.abspath(artifacts)
config.test_exec_root = os.path.join(artifacts, "test-output")
os.makedirs(config.test_exec_root, exist_ok=True)

sys.path.insert(0, config.test_source_root)
import gpu_probe

gpus = gpu_probe.gpu_count()
if gpus >= 1:
    config.available_features.add("gpu")
    if not os.path.isdir(os.path.join(artifacts, "cuda")):
        lit_config.fatal(f"no CUDA artifacts in {artifacts}: run scripts/gpu-bundle.sh")
if gpus >= 2:
    config.available_features.add("multi-gpu")
# One GPU per rank for the 2x2 and 2x2x2 meshes of the exchange programs.
for n in (4, 8):
    if gpus >= n:
        config.available_features.add(f"gpus-{n}")

# A hung run fails its test in bounded time instead of eating the GPU
# machine's few minutes (lit's own --timeout needs psutil).
config.substitutions.append(("%dt_run", "timeout -k 5 120 " + os.path.join(bin_dir, "dt-run")))
config.substitutions.append(("%artifacts", artifacts))
config.substitutions.append(("%npy", f"{sys.executable} {src_root}/scripts/npy.py"))
for name in ("LD_LIBRARY_PATH", "PATH", "HOME", "CUDA_VISIBLE_DEVICES", "TMPDIR",
             "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
    if name in os.environ:
        config.environment[name] = os.environ[name]

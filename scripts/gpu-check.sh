#!/usr/bin/env bash
# The GPU checks, in one call on a machine with a GPU, the CUDA driver, CUDA
# libraries and NCCL but no LLVM/MLIR and no network. Everything comes from
# the bundle scripts/gpu-bundle.sh builds beforehand (carry build/gpu-bundle).
# Runs the GPU lit tests (test/GPU), the benchmarks (bench/gpu.py) and a
# profile of the benchmark steps (dt-run --profile), and writes their output
# to $OUT/gpu-check.txt (build/gpu-check without $OUT) as it goes. The tests get 4 minutes, the benchmarks 200 s, every command
# 120 s, so a hang still leaves the rest of the report.
#
#   scripts/gpu-check.sh
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=${DT_GPU_BUNDLE:-$root/build/gpu-bundle}
out=${OUT:-$root/build/gpu-check}
mkdir -p "$out"
summary=$out/gpu-check.txt
if [[ ! -x $bundle/bin/dt-run ]]; then
  echo "gpu-check: no bundle at $bundle: run scripts/gpu-bundle.sh where LLVM is, and carry build/gpu-bundle" >&2
  exit 2
fi

source "$root/scripts/gpu-env.sh"

status=0
{
  echo "== machine"
  date -u
  nvidia-smi -L 2>&1 || echo "nvidia-smi: not available"
  echo "== libraries the CUDA runtime resolves"
  ldd "$bundle/lib/libdt_runtime_cuda.so" | grep -E 'libcuda|nccl|cublas|not found'
  ldd "$bundle/bin/dt-run" | grep -E 'openblas|not found'
  echo "== GPU tests (test/GPU)"
  timeout -k 5 240 python3 -c "import sys; sys.path.insert(0, '$bundle'); from lit.main import main; main()" \
    -sv "$root/test/GPU" --param bin="$bin" --param artifacts="$bundle/artifacts" ||
    status=1
  echo "== benchmarks (bench/gpu.py)"
  timeout -k 5 200 python3 "$root/bench/gpu.py" --bundle "$bundle" --dt-run "$bin/dt-run" || status=1
  # Where the benchmark steps' time goes: every kernel and matmul, timed on
  # the GPU (dt-run --profile).
  for p in bench_transformer_bf16 bench_mlp_bf16; do
    echo "== profile: $p"
    timeout -k 5 60 "$bin/dt-run" "$bundle/artifacts/cuda/$p.so" --backend=nccl \
      --gpus=device-local --seed 0 --repeat 10 --profile || status=1
  done
  echo "== gpu-check: exit $status"
  exit "$status"
} 2>&1 | tee "$summary"
exit "${PIPESTATUS[0]}"

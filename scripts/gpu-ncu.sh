#!/usr/bin/env bash
# Nsight Compute's view of a benchmark step, on a GPU machine whose CUDA
# toolkit has ncu, written to $OUT/gpu-ncu.txt (build/gpu-check without
# $OUT), so that a gap bench/gpu.py reports can be put on kernels:
#
#   scripts/gpu-ncu.sh [transformer|mlp]
#     every kernel of one step of dt-run's program and of the hand-written
#     baseline (bench/gpu_baseline.cu; a warm-up and one step), each with
#     its time, registers, grid and block, achieved occupancy and DRAM
#     throughput;
#   scripts/gpu-ncu.sh [transformer|mlp] DT-KERNEL BASELINE-KERNEL
#     ncu's full report (stall reasons, instruction mix, memory) of the
#     first launch of each named kernel (a regex), dt-run's and the
#     baseline's.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=${DT_GPU_BUNDLE:-$root/build/gpu-bundle}
out=${OUT:-$root/build/gpu-check}
step=${1:-transformer}
mkdir -p "$out"
source "$root/scripts/gpu-env.sh"
ncu=$(command -v ncu || echo "${CUDA_HOME:-/usr/local/cuda}/bin/ncu")
if [[ $# -ge 3 ]]; then
  dtArgs=(--set full --kernel-name "regex:$2" --launch-count 1)
  baseArgs=(--set full --kernel-name "regex:$3" --launch-count 1)
else
  metrics=gpu__time_duration.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed
  dtArgs=(--metrics "$metrics" --csv --print-units base)
  baseArgs=("${dtArgs[@]}")
fi
{
  echo "== dt-run: bench_${step}_bf16, one step"
  timeout -k 5 200 "$ncu" "${dtArgs[@]}" \
    "$bin/dt-run" "$bundle/artifacts/cuda/bench_${step}_bf16.so" \
    --backend=nccl --gpus=device-local --seed 0
  echo "== baseline: $step, a warm-up and one step"
  timeout -k 5 200 "$ncu" "${baseArgs[@]}" "$bundle/bench/gpu-baseline" "$step" 1
} 2>&1 | tee "$out/gpu-ncu.txt"

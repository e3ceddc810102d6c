#!/usr/bin/env bash
# Builds, here, everything scripts/gpu-check.sh needs on a GPU machine that
# has the CUDA driver, CUDA libraries and NCCL but no LLVM/MLIR, no Abseil
# and no network: dt-run with the libraries a bare machine lacks, the CUDA
# runtime, CUDA and CPU artifacts of every test and benchmark program, the
# hand-written CUDA baseline, and lit. Output: build/gpu-bundle (carry it;
# at most 64 MiB).
#
#   scripts/gpu-bundle.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
out=$build/gpu-bundle
root=$(cd "$(dirname "$0")/.." && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}

ninja -C "$build" dt-run dt-compile dt_runtime dt_runtime_cuda
rm -rf "$out"
mkdir -p "$out"/{bin,lib,artifacts/cuda,artifacts/cuda-any-size,artifacts/cpu,bench}

cp "$build/bin/dt-run" "$out/bin/"
cp "$build/lib/libdt_runtime.so" "$build/lib/libdt_runtime_cuda.so" "$out/lib/"
# What dt-run and the runtimes link that a bare machine lacks (Abseil,
# OpenBLAS, Open MPI and theirs); the C/C++ runtime and the CUDA libraries
# are the machine's own.
ldd "$out/bin/dt-run" "$out"/lib/*.so | awk '/=> \//{print $3}' | sort -u |
  while read -r lib; do
    case $(basename "$lib") in
      libc.so*|libm.so*|libstdc++*|libgcc_s*|ld-linux*|libpthread*|libdl.so*|librt.so*) ;;
      libcuda.so*|libnccl*|libcublas*|libcudart*) ;;
      *) cp -L "$lib" "$out/lib/" ;;
    esac
  done

# OpenBLAS is most of that (36 MB: kernels for every x86-64 CPU); it
# travels xz-compressed (4 MB) and scripts/gpu-check.sh unpacks it.
for lib in "$out"/lib/libopenblas*.so*; do
  python3 -c 'import lzma, shutil, sys
with open(sys.argv[1], "rb") as src, lzma.open(sys.argv[1] + ".xz", "wb", preset=6) as dst:
    shutil.copyfileobj(src, dst)' "$lib"
  rm "$lib"
done

# The artifacts: CUDA; CUDA with the cooperative kernels at any size (the
# kernels --emulate-gpu checks here, on the GPU); and CPU to compare with.
# Host code for a CPU every x86-64 server of the last decade has (the GPU
# machine's CPU is not this one).
programs=(
  python-free-examples/mlp_tp python-free-examples/mlp_tp_typed
  python-free-examples/train_step_dp_tp python-free-examples/transformer_block
  python-free-examples/train_micro_batches python-free-examples/cnn_dp_tp
  test/Execution/collectives test/Execution/dp_step test/Execution/dtypes
  test/Execution/mesh3d test/Execution/op-families test/Execution/partial-inputs
  test/Execution/reductions test/Execution/two_axes test/Execution/uneven
  test/Execution/uneven-2d test/Execution/uneven-nested
  test/Execution/row-kernels test/Execution/row-kernels-large
  test/Execution/row-kernels-wide test/Execution/row-kernels-narrow
  test/Execution/row-kernel-clashes test/Execution/row-kernel-gathers
  test/Execution/matmul-epilogue test/Execution/matmul-transposed
  test/Execution/transposes-into-matmuls
  test/Execution/convolutions test/Execution/grouped-convolutions
  test/Execution/convolution-adjoints
  test/Execution/layer-loop test/Execution/stacked-layers
  test/Execution/micro-batch-outputs test/Execution/grad-accumulation
  test/Execution/embedding test/Execution/lm-loss-grad
  test/Execution/uneven-columns test/Execution/reshape-uneven
  test/Execution/half-matmul test/Execution/llama-block
  test/Execution/loop-ownership test/Execution/predicates
  test/Execution/branches test/Execution/bool-tensors
  test/Execution/mixed-matmul test/Execution/while-loop
  test/Execution/uneven-division test/Execution/grad-accumulation-buffer
  test/Execution/running-max test/Execution/exchange
  test/Execution/exchange-partial)
python3 "$root/bench/gen_gpu_programs.py" "$out/bench"
for p in "${programs[@]}"; do
  "$build/bin/dt-compile" --target=cuda --mcpu=x86-64-v3 "$root/$p.mlir" \
    -o "$out/artifacts/cuda/$(basename "$p").so" &
  "$build/bin/dt-compile" --target=cuda --gpu-kernels-any-size --mcpu=x86-64-v3 \
    "$root/$p.mlir" -o "$out/artifacts/cuda-any-size/$(basename "$p").so" &
  "$build/bin/dt-compile" --mcpu=x86-64-v3 "$root/$p.mlir" \
    -o "$out/artifacts/cpu/$(basename "$p").so" &
  wait
done
# The benchmark programs run on the GPU only (bf16 matmuls as CPU loops
# would take minutes). What a chain step queues: kernels and copies.
# Programs whose CUDA build alone the GPU tests run (bounds-checks.test).
for p in test/Execution/Inputs/gather-ids test/Execution/Inputs/gather-vocab; do
  "$build/bin/dt-compile" --target=cuda --mcpu=x86-64-v3 "$root/$p.mlir" \
    -o "$out/artifacts/cuda/$(basename "$p").so"
done
for src in "$out"/bench/*.mlir; do
  "$build/bin/dt-compile" --target=cuda --mcpu=x86-64-v3 "$src" \
    -o "$out/artifacts/cuda/$(basename "$src" .mlir).so"
done
"$build/bin/dt-compile" --target=cuda --emit=spmd-mlir "$out/bench/bench_chain.mlir" |
  grep -c -E 'gpu.launch_func|llvm.call @mgpuMemcpy' > "$out/bench/bench_chain.ops"

# The hand-written CUDA baseline of the benchmarks.
"$cuda/bin/nvcc" -O3 -std=c++17 -arch=sm_90 -o "$out/bench/gpu-baseline" \
  "$root/bench/gpu_baseline.cu" -lcublasLt

# This machine's C and C++ runtimes, for a GPU machine whose glibc is older
# than the one everything here was built against (Open MPI's libevent needs
# glibc 2.36): scripts/gpu-check.sh then runs dt-run through this loader.
mkdir -p "$out/glibc"
for lib in /lib64/ld-linux-x86-64.so.2 /lib/x86_64-linux-gnu/libc.so.6 \
           /lib/x86_64-linux-gnu/libm.so.6 /lib/x86_64-linux-gnu/libstdc++.so.6 \
           /lib/x86_64-linux-gnu/libgcc_s.so.1 /lib/x86_64-linux-gnu/libpthread.so.0 \
           /lib/x86_64-linux-gnu/libdl.so.2 /lib/x86_64-linux-gnu/librt.so.1; do
  cp -L "$lib" "$out/glibc/"
done
getconf GNU_LIBC_VERSION | cut -d' ' -f2 > "$out/glibc/VERSION"

# lit, which is Python (the GPU machine has no LLVM packages).
cp -r /usr/lib/llvm-22/utils/lit/lit "$out/lit"

# A device call carries the working tree (tracked files, ../shared) and
# the bundle: 64 MiB in all.
size=$(du -sm "$out" | cut -f1)
tree=$(( ($(git -C "$root" ls-files -z | (cd "$root" && xargs -0 cat) | wc -c) + 1048575) / 1048576 ))
echo "gpu-bundle: $out, ${size} MiB (with the working tree, $((size + tree)) MiB)"
if (( size + tree > 62 )); then
  echo "gpu-bundle: over the 64 MiB a device call carries (working tree and bundle, with 2 MiB to spare)" >&2
  exit 1
fi

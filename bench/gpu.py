#!/usr/bin/env python3
"""The GPU benchmarks, measured side by side in one run (needs a GPU;
scripts/gpu-check.sh runs it from the bundle scripts/gpu-bundle.sh makes).

    gpu.py --bundle DIR [--repeat N]

- MLP step (bench_mlp_bf16: forward + backward, bf16, one GPU) and
  transformer block step (bench_transformer_bf16: RMS norms, 16-head
  attention, relu MLP, forward + backward): dt-run against
  bench/gpu_baseline.cu (the same cuBLASLt calls, hand-fused kernels: one
  per norm and softmax row, forward and backward); target: baseline time /
  dt time >= 0.9.
- Elementwise: y = x * 2 + 1 over 64 Mi f32, bytes moved per second against
  a device-to-device copy; target >= 80%.
- Host cost per op: a chain of small dependent kernels and copies, time per
  op; target <= 5 us.
- PyTorch (if installed): the same MLP step eagerly and as DTensors on a
  mesh of one GPU (bench/gpu_torch.py); dt-run must be faster than both.

Every dt-run figure is the best per-call time of --repeat calls, each call
timed to the end of its GPU work; the baseline is timed with CUDA events.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ELEMENTS = 64 * 1024 * 1024
DT_RUN = None  # --dt-run: a wrapper (scripts/gpu-check.sh on an older glibc)


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stdout.write(proc.stdout + proc.stderr)
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return proc.stdout


def dt_seconds(bundle, program, repeat):
    out = run([DT_RUN or os.path.join(bundle, "bin", "dt-run"),
               os.path.join(bundle, "artifacts", "cuda", program + ".so"),
               "--backend=nccl", "--gpus=device-local", "--seed", "0",
               "--repeat", str(repeat)])
    match = re.search(r"min ([0-9.]+) us", out)
    return float(match.group(1)) * 1e-6


def baseline(bundle, *args):
    return run([os.path.join(bundle, "bench", "gpu-baseline"), *args])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bundle", required=True)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--dt-run", help="dt-run to use (default: the bundle's)")
    args = parser.parse_args()
    global DT_RUN
    DT_RUN = args.dt_run
    bundle, repeat = args.bundle, args.repeat
    rows = []

    # MLP step.
    base = float(re.search(r"mlp: best ([0-9.]+)", baseline(bundle, "mlp", str(repeat))).group(1))
    dt = dt_seconds(bundle, "bench_mlp_bf16", repeat)
    rows.append(("MLP fwd+bwd bf16, 1 GPU: baseline / dt (throughput ratio)",
                 f"{base * 1e3:.3f} / {dt * 1e3:.3f} ms = {base / dt:.2f}", base / dt >= 0.9, ">= 0.9"))

    # Transformer block step.
    base = float(re.search(r"transformer: best ([0-9.]+)",
                           baseline(bundle, "transformer", str(repeat))).group(1))
    tdt = dt_seconds(bundle, "bench_transformer_bf16", repeat)
    rows.append(("transformer block fwd+bwd bf16, 1 GPU: baseline / dt",
                 f"{base * 1e3:.3f} / {tdt * 1e3:.3f} ms = {base / tdt:.2f}", base / tdt >= 0.9, ">= 0.9"))

    # Elementwise bandwidth against a copy.
    copy_out = baseline(bundle, "copy", str(ELEMENTS * 4), str(repeat))
    copy_gbs = float(re.search(r"GB/s ([0-9.]+)", copy_out).group(1))
    ew = dt_seconds(bundle, "bench_elementwise", repeat)
    ew_gbs = 2 * ELEMENTS * 4 / ew / 1e9
    rows.append(("elementwise 64 Mi f32 vs device copy (GB/s)",
                 f"{ew_gbs:.0f} vs {copy_gbs:.0f} = {ew_gbs / copy_gbs:.0%}",
                 ew_gbs / copy_gbs >= 0.8, ">= 80%"))

    # Host cost per op.
    ops = int(open(os.path.join(bundle, "bench", "bench_chain.ops")).read())
    chain = dt_seconds(bundle, "bench_chain", repeat)
    rows.append((f"chain of {ops} small kernels and copies: time per op",
                 f"{chain / ops * 1e6:.2f} us", chain / ops <= 5e-6, "<= 5 us"))

    # PyTorch, when the machine has it.
    torch = subprocess.run([sys.executable, os.path.join(HERE, "gpu_torch.py"),
                            str(repeat)], capture_output=True, text=True)
    if torch.returncode == 0:
        eager = float(re.search(r"eager: best ([0-9.]+)", torch.stdout).group(1))
        rows.append(("same MLP step, PyTorch eager / dt", f"{eager * 1e3:.3f} / {dt * 1e3:.3f} ms = "
                     f"{eager / dt:.2f}", eager > dt, "> 1"))
        dtensor = re.search(r"dtensor: best ([0-9.]+)", torch.stdout)
        if dtensor:
            d = float(dtensor.group(1))
            rows.append(("same MLP step, DTensor (mesh of 1) / dt",
                         f"{d * 1e3:.3f} / {dt * 1e3:.3f} ms = {d / dt:.2f}", d > dt, "> 1"))
        else:
            rows.append(("same MLP step, DTensor (mesh of 1)", "not run: " +
                         torch.stdout.strip().splitlines()[-1], False, "> 1"))
    else:
        rows.append(("PyTorch comparison", "not run: " + (torch.stderr.strip().splitlines() or ["?"])[-1],
                     False, "> 1"))

    width = max(len(r[0]) for r in rows)
    for name, figure, ok, target in rows:
        print(f"{name:<{width}}  {figure:<32} target {target:<8} {'met' if ok else 'MISSED'}")
    print(f"bench: {sum(r[2] for r in rows)} of {len(rows)} targets met")


if __name__ == "__main__":
    main()

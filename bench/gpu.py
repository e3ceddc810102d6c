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
TIMEOUT = 120  # seconds per command: a hang costs one row, not the run


class Failed(Exception):
    pass


def run(cmd):
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise Failed(f"{os.path.basename(cmd[0])} ran past {TIMEOUT} s")
    if proc.returncode != 0:
        sys.stdout.write(proc.stdout + proc.stderr)
        raise Failed(f"{os.path.basename(cmd[0])} exited {proc.returncode}")
    return proc.stdout


def figure(pattern, text, what):
    match = re.search(pattern, text)
    if not match:
        raise Failed(f"no '{what}' in the output")
    return float(match.group(1))


def dt_seconds(bundle, program, repeat):
    out = run([DT_RUN or os.path.join(bundle, "bin", "dt-run"),
               os.path.join(bundle, "artifacts", "cuda", program + ".so"),
               "--backend=nccl", "--gpus=device-local", "--seed", "0",
               "--repeat", str(repeat)])
    return figure(r"min ([0-9.]+) us", out, "min ... us") * 1e-6


def baseline(bundle, *args):
    return run([os.path.join(bundle, "bench", "gpu-baseline"), *args])


def step_ratio(bundle, repeat, kind, program):
    base = figure(kind + r": best ([0-9.]+)", baseline(bundle, kind, str(repeat)),
                  kind + ": best")
    dt = dt_seconds(bundle, program, repeat)
    return [(f"{base * 1e3:.3f} / {dt * 1e3:.3f} ms = {base / dt:.2f}", base / dt >= 0.9)]


def elementwise(bundle, repeat):
    copy_out = baseline(bundle, "copy", str(ELEMENTS * 4), str(repeat))
    copy_gbs = figure(r"GB/s ([0-9.]+)", copy_out, "GB/s")
    ew_gbs = 2 * ELEMENTS * 4 / dt_seconds(bundle, "bench_elementwise", repeat) / 1e9
    return [(f"{ew_gbs:.0f} vs {copy_gbs:.0f} = {ew_gbs / copy_gbs:.0%}", ew_gbs / copy_gbs >= 0.8)]


def host_cost(bundle, repeat):
    ops = int(open(os.path.join(bundle, "bench", "bench_chain.ops")).read())
    chain = dt_seconds(bundle, "bench_chain", repeat)
    return [(f"{chain / ops * 1e6:.2f} us per op ({ops} ops)", chain / ops <= 5e-6)]


def pytorch(bundle, repeat):
    dt = dt_seconds(bundle, "bench_mlp_bf16", repeat)
    out = run([sys.executable, os.path.join(HERE, "gpu_torch.py"), str(repeat)])
    eager = figure(r"eager: best ([0-9.]+)", out, "eager: best")
    rows = [(f"eager {eager * 1e3:.3f} / dt {dt * 1e3:.3f} ms = {eager / dt:.2f}", eager > dt)]
    dtensor = re.search(r"dtensor: best ([0-9.]+)", out)
    if dtensor:
        d = float(dtensor.group(1))
        rows.append((f"DTensor {d * 1e3:.3f} / dt {dt * 1e3:.3f} ms = {d / dt:.2f}", d > dt))
    else:
        rows.append(("DTensor not run: " + (out.strip().splitlines() or ["?"])[-1], False))
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bundle", required=True)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--dt-run", help="dt-run to use (default: the bundle's)")
    args = parser.parse_args()
    global DT_RUN
    DT_RUN = args.dt_run
    bundle, repeat = args.bundle, args.repeat

    # Each measurement on its own: one that fails or hangs is reported and
    # the others still run (a GPU is lent for minutes, once).
    measures = [
        ("MLP fwd+bwd bf16, 1 GPU: baseline / dt", ">= 0.9",
         lambda: step_ratio(bundle, repeat, "mlp", "bench_mlp_bf16")),
        ("transformer block fwd+bwd bf16, 1 GPU: baseline / dt", ">= 0.9",
         lambda: step_ratio(bundle, repeat, "transformer", "bench_transformer_bf16")),
        ("elementwise 64 Mi f32 vs device copy (GB/s)", ">= 80%",
         lambda: elementwise(bundle, repeat)),
        ("chain of small kernels and copies: host time", "<= 5 us",
         lambda: host_cost(bundle, repeat)),
        ("same MLP step: PyTorch / dt", "> 1", lambda: pytorch(bundle, repeat)),
    ]
    met = total = 0
    for name, target, measure in measures:
        try:
            rows = measure()
        except (Failed, OSError, ValueError) as error:
            rows = [(f"failed: {error}", False)]
        for figure_text, ok in rows:
            total += 1
            met += ok
            print(f"{name:<54} {figure_text:<44} target {target:<7} {'met' if ok else 'MISSED'}",
                  flush=True)
    print(f"bench: {met} of {total} targets met")
    return 0 if met == total else 1


if __name__ == "__main__":
    sys.exit(main())

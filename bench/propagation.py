#!/usr/bin/env python3
"""Propagation and partitioning benchmark: dt-propagate +
dt-insert-redistribute + dt-check beside upstream's sharding-propagation, and
the whole dt-shard pipeline beside upstream's sharding-propagation +
shard-partition, on the same Megatron-MLP chain; and dt on an L-layer
transformer training step.

Times are pass wall times from -mlir-timing (parsing and printing excluded),
the best of --repeat runs, measured side by side in one run. Both pipelines
run in the same dt-opt binary, so they use the same MLIR build.

Usage: bench/propagation.py [--dt-opt build/bin/dt-opt] [--repeat 5] [--quick]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_mlp_chain  # noqa: E402
import gen_transformer  # noqa: E402

DT_PASSES = ("PropagatePass", "InsertRedistributePass", "CheckPass")
UPSTREAM_PASSES = ("ShardingPropagation",)
DT_SHARD_PASSES = DT_PASSES + ("LowerRedistributePass", "CSE", "PartitionPass")
UPSTREAM_SHARD_PASSES = ("ShardingPropagation", "Partition")


def pass_seconds(dt_opt, text, args, passes, repeat):
    """The best over `repeat` runs of the summed wall time of `passes`."""
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        best = None
        for _ in range(repeat):
            proc = subprocess.run(
                [dt_opt, path, "-o", os.devnull, "-mlir-timing",
                 "-mlir-timing-display=list"] + args,
                capture_output=True, text=True)
            if proc.returncode != 0:
                sys.exit(f"dt-opt failed on {args}:\n{proc.stderr[-3000:]}")
            total = 0.0
            for line in proc.stderr.splitlines():
                m = re.match(r"\s*([0-9.]+) \(\s*[0-9.]+%\)\s+(\S+)\s*$", line)
                if m and m.group(2) in passes:
                    total += float(m.group(1))
            best = total if best is None else min(best, total)
        return best
    finally:
        os.unlink(path)


def dt_chain(dt_opt, layers, tp, repeat):
    return pass_seconds(dt_opt, gen_mlp_chain.generate(layers, tp, "dt"),
                        ["-dt-propagate", "-dt-insert-redistribute", "-dt-check"],
                        DT_PASSES, repeat)


def upstream_chain(dt_opt, layers, tp, repeat):
    return pass_seconds(
        dt_opt, gen_mlp_chain.generate(layers, tp, "shard"),
        ["--pass-pipeline=builtin.module(func.func(sharding-propagation))"],
        UPSTREAM_PASSES, repeat)


def dt_shard_chain(dt_opt, layers, tp, repeat, dp=1):
    return pass_seconds(dt_opt, gen_mlp_chain.generate(layers, tp, "dt", dp),
                        ["-dt-shard"], DT_SHARD_PASSES, repeat)


def upstream_shard_chain(dt_opt, layers, tp, repeat):
    return pass_seconds(
        dt_opt, gen_mlp_chain.generate(layers, tp, "shard"),
        ["--pass-pipeline=builtin.module(func.func(sharding-propagation,shard-partition))"],
        UPSTREAM_SHARD_PASSES, repeat)


def chain_table(chain_layers, dt8_fn, dt4096_fn, upstream_fn, what, failures):
    """Prints dt on 8 and 4096 ranks beside upstream, and checks the targets."""
    print(f"{'L':>6} {'dt 8':>10} {'dt 4096':>11} {'upstream':>10} {'dt/upstream':>12} {'4096/8':>7}")
    per_layer = []
    for layers in chain_layers:
        dt8, dt4096, up = dt8_fn(layers), dt4096_fn(layers), upstream_fn(layers)
        ratio, mesh_ratio = dt8 / up, dt4096 / dt8
        per_layer.append(dt8 / layers)
        print(f"{layers:>6} {dt8 * 1e3:>10.2f} {dt4096 * 1e3:>11.2f} {up * 1e3:>10.2f} {ratio:>12.2f} {mesh_ratio:>7.2f}")
        if ratio > 1.5:
            failures.append(f"{what} L={layers}: dt/upstream {ratio:.2f} > 1.5")
        if mesh_ratio > 1.25:
            failures.append(f"{what} L={layers}: mesh 4096 costs {mesh_ratio:.2f}x mesh 8")
    growth = per_layer[-1] / per_layer[0]
    print(f"time per layer, largest L / smallest L: {growth:.2f} (1.0 is linear)")
    if growth > 1.5:
        failures.append(f"{what} growth is not linear: per-layer time x{growth:.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dt-opt", default=os.path.join(HERE, "..", "build", "bin", "dt-opt"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    args = parser.parse_args()

    chain_layers = [12, 24, 48, 96] if args.quick else [12, 24, 48, 96, 192, 384, 768, 1536]
    transformer_layers = [12, 24] if args.quick else [12, 24, 48, 96]
    failures = []

    print("Megatron-MLP chain (batch 32, hidden 256, ffn 1024), pass time in ms")
    chain_table(chain_layers, lambda l: dt_chain(args.dt_opt, l, 8, args.repeat),
                lambda l: dt_chain(args.dt_opt, l, 4096, args.repeat),
                lambda l: upstream_chain(args.dt_opt, l, 8, args.repeat),
                "chain", failures)
    print()
    print("Transformer training step (seq 128, hidden 256, 8 heads, ffn 1024, tp=8), pass time")
    print(f"{'L':>6} {'dt (ms)':>10} {'per layer (ms)':>15}")
    for layers in transformer_layers:
        t = pass_seconds(args.dt_opt, gen_transformer.generate(layers, 8),
                         ["-dt-propagate", "-dt-insert-redistribute", "-dt-check"],
                         DT_PASSES, args.repeat)
        print(f"{layers:>6} {t * 1e3:>10.2f} {t / layers * 1e3:>15.3f}")
        if layers == 48 and t > 0.5:
            failures.append(f"transformer L=48: {t:.3f} s > 0.5 s")

    print()
    print("Whole pipeline: dt-shard (propagate ... partition) beside upstream "
          "sharding-propagation + shard-partition, pass time in ms")
    print("(the 4096-rank mesh is dp=512 x tp=8, which splits the chain's dims evenly)")
    chain_table(chain_layers, lambda l: dt_shard_chain(args.dt_opt, l, 8, args.repeat),
                lambda l: dt_shard_chain(args.dt_opt, l, 8, args.repeat, dp=512),
                lambda l: upstream_shard_chain(args.dt_opt, l, 8, args.repeat),
                "dt-shard", failures)
    t = pass_seconds(args.dt_opt, gen_transformer.generate(48, 8), ["-dt-shard"],
                     DT_SHARD_PASSES, args.repeat)
    print(f"transformer L=48 (forward and backward), dt-shard: {t * 1e3:.1f} ms")
    if t > 1.0:
        failures.append(f"dt-shard transformer L=48: {t:.3f} s > 1 s")

    print()
    for failure in failures:
        print("MISSED:", failure)
    print("all targets met" if not failures else f"{len(failures)} targets missed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

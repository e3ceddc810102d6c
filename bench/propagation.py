#!/usr/bin/env python3
"""Propagation and partitioning benchmark: dt-propagate +
dt-insert-redistribute + dt-check beside upstream's sharding-propagation, and
the whole dt-shard pipeline beside upstream's sharding-propagation +
shard-partition, on the same Megatron-MLP chain; and dt on an L-layer
transformer training step. Those tables time propagation's rules
(`search=0`), as upstream's propagation has no search; the last two time
the plan search that dt-propagate runs by default (by windows on programs
this large) beside the rules on the transformer step (tp=8), and on the
step accumulating gradients over 4 micro-batches in an scf.for (tp=2: the
windows in the loop's body run in a copy of the loop), and print what it
saves: target, each one's time per layer at the largest L at most 1.5x
the time per layer at the smallest (windows that are the same program,
the layers', are propagated once).

Times are pass wall times from -mlir-timing (parsing and printing excluded),
the best of --repeat runs, measured side by side in one run: the programs of
a table row take turns, so that the machine's slow spells fall on all of
them alike. A row that misses a target takes its turns a second time (each
program keeping its best of both) before the miss counts, marked
"(measured twice)". Both pipelines run in the same dt-opt binary, so they use the
same MLIR build.

Usage: bench/propagation.py [--dt-opt build/bin/dt-opt] [--repeat 7] [--quick]
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


def run_once(dt_opt, path, args, passes):
    """The summed wall time of `passes` in one run of dt-opt on `path`."""
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
    return total


def best_of_turns(dt_opt, jobs, repeat):
    """Each job's best over `repeat` rounds, the jobs taking turns within a
    round: the machine's speed wanders for seconds at a time, and taking
    turns lets every job of a row see the same spells. A job is
    (program text, dt-opt arguments, pass names to sum)."""
    paths = []
    try:
        for text, _, _ in jobs:
            with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
                f.write(text)
                paths.append(f.name)
        bests = [None] * len(jobs)
        for _ in range(repeat):
            for i, (path, (_, args, passes)) in enumerate(zip(paths, jobs)):
                t = run_once(dt_opt, path, args, passes)
                bests[i] = t if bests[i] is None else min(bests[i], t)
        return bests
    finally:
        for path in paths:
            os.unlink(path)


def pass_seconds(dt_opt, text, args, passes, repeat):
    """The best over `repeat` runs of the summed wall time of `passes`."""
    return best_of_turns(dt_opt, [(text, args, passes)], repeat)[0]


DT_ARGS = ["-dt-propagate=search=0", "-dt-insert-redistribute", "-dt-check"]


def chain_jobs(layers):
    """dt on 8 and 4096 ranks and upstream, propagation alone."""
    return [(gen_mlp_chain.generate(layers, 8, "dt"), DT_ARGS, DT_PASSES),
            (gen_mlp_chain.generate(layers, 4096, "dt"), DT_ARGS, DT_PASSES),
            (gen_mlp_chain.generate(layers, 8, "shard"),
             ["--pass-pipeline=builtin.module(func.func(sharding-propagation))"],
             UPSTREAM_PASSES)]


def shard_chain_jobs(layers):
    """dt-shard on tp=8 and on dp=512 x tp=8, and upstream's propagation and
    partition."""
    return [(gen_mlp_chain.generate(layers, 8, "dt"), ["-dt-shard=search=0"], DT_SHARD_PASSES),
            (gen_mlp_chain.generate(layers, 8, "dt", 512), ["-dt-shard=search=0"], DT_SHARD_PASSES),
            (gen_mlp_chain.generate(layers, 8, "shard"),
             ["--pass-pipeline=builtin.module(func.func(sharding-propagation,shard-partition))"],
             UPSTREAM_SHARD_PASSES)]


def chain_table(dt_opt, chain_layers, jobs_fn, repeat, what, failures):
    """Prints dt on 8 and 4096 ranks beside upstream, measured in turns, and
    checks the targets."""
    print(f"{'L':>6} {'dt 8':>10} {'dt 4096':>11} {'upstream':>10} {'dt/upstream':>12} {'4096/8':>7}")
    per_layer = []
    for layers in chain_layers:
        jobs = jobs_fn(layers)
        dt8, dt4096, up = best_of_turns(dt_opt, jobs, repeat)
        ratio, mesh_ratio = dt8 / up, dt4096 / dt8
        note = ""
        if ratio > 1.5 or mesh_ratio > 1.25:
            # This machine slows down for seconds at a time: a row that
            # misses a target takes its turns again, each job keeping its
            # best over both rounds, before the miss counts.
            again = best_of_turns(dt_opt, jobs, repeat)
            dt8, dt4096, up = (min(a, b) for a, b in zip((dt8, dt4096, up), again))
            ratio, mesh_ratio = dt8 / up, dt4096 / dt8
            note = "  (measured twice)"
        per_layer.append(dt8 / layers)
        print(f"{layers:>6} {dt8 * 1e3:>10.2f} {dt4096 * 1e3:>11.2f} {up * 1e3:>10.2f} {ratio:>12.2f} {mesh_ratio:>7.2f}{note}")
        if ratio > 1.5:
            failures.append(f"{what} L={layers}: dt/upstream {ratio:.2f} > 1.5")
        if mesh_ratio > 1.25:
            failures.append(f"{what} L={layers}: mesh 4096 costs {mesh_ratio:.2f}x mesh 8")
    growth = per_layer[-1] / per_layer[0]
    print(f"time per layer, largest L / smallest L: {growth:.2f} (1.0 is linear)")
    if growth > 1.5:
        failures.append(f"{what} growth is not linear: per-layer time x{growth:.2f}")


def search_table(dt_opt, layer_counts, repeat, failures, tp=8, micro_batches=0):
    """dt-propagate with its plan search (the default) beside its rules alone
    on the transformer step (with gradient accumulation over micro_batches
    in an scf.for, if any), taking turns, and the plans' modelled cost from
    the search's explanation."""
    step = (f"the transformer step accumulating {micro_batches} micro-batches in a loop"
            if micro_batches else "the transformer step")
    print(f"Plan search (the default, by windows here) on {step}, tp={tp}: "
          "dt-propagate's time")
    print(f"{'L':>6} {'rules (ms)':>11} {'search (ms)':>12} {'per layer':>10} "
          f"{'plan (rules -> searched)':>28} {'saved':>6}")
    per_layer = []
    for layers in layer_counts:
        text = gen_transformer.generate(layers, tp, micro_batches)
        rules, searched = best_of_turns(
            dt_opt, [(text, ["-dt-propagate=search=0"], ("PropagatePass",)),
                     (text, ["-dt-propagate"], ("PropagatePass",))], repeat)
        with tempfile.NamedTemporaryFile("w", suffix=".mlir") as f:
            f.write(text)
            f.flush()
            proc = subprocess.run([dt_opt, f.name, "-o", os.devnull,
                                   "-dt-propagate=explain"],
                                  capture_output=True, text=True)
        m = re.search(r"plan search: .*the plan costs ([0-9.]+ \S+) instead of "
                      r"([0-9.]+ \S+)", proc.stderr)
        before, after = (m.group(2), m.group(1)) if m else ("-", "-")
        saved = ""
        if m:
            scale = {"us": 1e-6, "ms": 1e-3, "s": 1.0}
            seconds = [float(v.split()[0]) * scale[v.split()[1]] for v in (before, after)]
            saved = f"{1 - seconds[1] / seconds[0]:.1%}"
        search_only = max(searched - rules, 0.0)
        per_layer.append(search_only / layers)
        print(f"{layers:>6} {rules * 1e3:>11.1f} {searched * 1e3:>12.1f} "
              f"{search_only / layers * 1e3:>10.1f} {before + ' -> ' + after:>28} {saved:>6}")
    growth = per_layer[-1] / per_layer[0]
    print(f"search time per layer, largest L / smallest L: {growth:.2f} (1.0 is linear)")
    if growth > 1.5:
        failures.append(f"plan search growth is not linear: per-layer time x{growth:.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dt-opt", default=os.path.join(HERE, "..", "build", "bin", "dt-opt"))
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    args = parser.parse_args()

    chain_layers = [12, 24, 48, 96] if args.quick else [12, 24, 48, 96, 192, 384, 768, 1536]
    transformer_layers = [12, 24] if args.quick else [12, 24, 48, 96]
    failures = []

    print("Megatron-MLP chain (batch 32, hidden 256, ffn 1024), pass time in ms")
    chain_table(args.dt_opt, chain_layers, chain_jobs, args.repeat, "chain",
                failures)
    print()
    print("Transformer training step (seq 128, hidden 256, 8 heads, ffn 1024, tp=8), pass time")
    print(f"{'L':>6} {'dt (ms)':>10} {'per layer (ms)':>15}")
    for layers in transformer_layers:
        t = pass_seconds(args.dt_opt, gen_transformer.generate(layers, 8),
                         DT_ARGS, DT_PASSES, args.repeat)
        print(f"{layers:>6} {t * 1e3:>10.2f} {t / layers * 1e3:>15.3f}")
        if layers == 48 and t > 0.5:
            failures.append(f"transformer L=48: {t:.3f} s > 0.5 s")

    print()
    print("Whole pipeline: dt-shard (propagate ... partition) beside upstream "
          "sharding-propagation + shard-partition, pass time in ms")
    print("(the 4096-rank mesh is dp=512 x tp=8, which splits the chain's dims evenly)")
    chain_table(args.dt_opt, chain_layers, shard_chain_jobs, args.repeat,
                "dt-shard", failures)
    t = pass_seconds(args.dt_opt, gen_transformer.generate(48, 8), ["-dt-shard=search=0"],
                     DT_SHARD_PASSES, args.repeat)
    print(f"transformer L=48 (forward and backward), dt-shard: {t * 1e3:.1f} ms")
    if t > 1.0:
        failures.append(f"dt-shard transformer L=48: {t:.3f} s > 1 s")

    print()
    search_table(args.dt_opt, transformer_layers, args.repeat, failures)
    print()
    search_table(args.dt_opt, [4, 8] if args.quick else [4, 8, 16], args.repeat,
                 failures, tp=2, micro_batches=4)

    print()
    for failure in failures:
        print("MISSED:", failure)
    print("all targets met" if not failures else f"{len(failures)} targets missed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

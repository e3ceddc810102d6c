#!/usr/bin/env python3
"""Compile-time benchmark: dt-compile's wall time on an L-layer transformer
training step (bench/gen_transformer.py, tp=2) for growing L, with LLVM on
one thread (-j1) and on every hardware thread (the default), and the MLIR
passes' share (--emit=spmd-mlir).

The programs take turns, each keeping its best of --repeat runs: the
machine's slow spells fall on all of them alike. Targets: the time per
layer at the largest L at most 1.5x the time per layer at the smallest
(compile time linear in the program's length); and, on a machine with more
than one hardware thread, the default no slower than -j1 at the largest L
(splitting the module must pay for itself). Before dt-outline-kernels put
each loop nest in a function of its own, LLVM's loop passes made it grow
faster than the square of L: 0.94 s a layer at L=2, 2.6 s at L=16, 4.5 s at
L=24. Merging the layers' kernels, which are the same, then left LLVM much
less to do: at L=16, 8.4 s -> 2.1 s on 2 threads, where 2 threads had
saved a third (12.8 s on one).

The last column is a compile the cache serves (--cache-dir, primed by one
compile of each program): target, at most 5% of the compile at the largest
L.

Since the plan search goes by windows on programs too large for a first
round of whole plans (all of these), the MLIR passes include it: at L=16,
1.56 s of MLIR passes and 2.70 s in all (2.83 s with -j1), where the
search did not run before; the per-layer target holds (0.38), since
windows that are the same program, the layers', are propagated once.

With --long, 32 and 64 layers too, and a third target: what one more layer
costs from 32 to 64 layers at most 1.5x what it costs from 16 to 32 (the
smallest programs' fixed costs would hide a growth in the first target).
Before dt-split-deallocations, dt-separate-entry-blocks and the two programs
lowering at once, 64 layers took 14.1 s here (best of 3), now 9.6 s; one
more layer cost 0.98x as much from 32 to 64 layers as from 16 to 32, now
0.79x.

Usage: bench/compile_time.py [--dt-compile build/bin/dt-compile] [--repeat 3] [--quick | --long]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_transformer  # noqa: E402

TP = 2


def compile_seconds(dt_compile, path, extra, output=os.devnull):
    """The wall time of one dt-compile of `path` to `output`."""
    start = time.perf_counter()
    proc = subprocess.run([dt_compile, path, "-o", output] + extra,
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"dt-compile {path} {' '.join(extra)} failed:\n{proc.stderr[-3000:]}")
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dt-compile",
                        default=os.path.join(HERE, "..", "build", "bin", "dt-compile"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="2 and 8 layers only")
    parser.add_argument("--long", action="store_true",
                        help="32 and 64 layers too, and the marginal time per layer")
    args = parser.parse_args()
    layer_counts = [2, 8] if args.quick else [2, 4, 8, 16] + ([32, 64] if args.long else [])

    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for layers in layer_counts:
            path = os.path.join(tmp, f"transformer{layers}.mlir")
            with open(path, "w") as f:
                f.write(gen_transformer.generate(layers, TP))
            paths.append(path)
        # (default, -j1, MLIR passes alone, from the cache) per program,
        # best of the turns. A compile the cache keeps writes a file.
        cached = ["--cache-dir", os.path.join(tmp, "cache")]
        artifact = os.path.join(tmp, "artifact.so")
        runs = ([], ["-j1"], ["--emit=spmd-mlir"], cached)
        for path in paths:
            compile_seconds(args.dt_compile, path, cached, artifact)
        best = [[float("inf")] * len(runs) for _ in paths]
        for _ in range(args.repeat):
            for i, path in enumerate(paths):
                for j, extra in enumerate(runs):
                    output = artifact if extra is cached else os.devnull
                    best[i][j] = min(best[i][j],
                                     compile_seconds(args.dt_compile, path, extra, output))

    threads = os.cpu_count() or 1
    print(f"dt-compile of an L-layer transformer training step (tp={TP}), "
          f"best of {args.repeat} turns; {threads} hardware threads")
    print(f"{'L':>4} {'default (s)':>12} {'-j1 (s)':>8} {'MLIR (s)':>9} {'per layer (s)':>14}"
          f" {'cached (s)':>11}")
    for layers, (total, serial, mlir, hit) in zip(layer_counts, best):
        print(f"{layers:>4} {total:>12.2f} {serial:>8.2f} {mlir:>9.2f} {total / layers:>14.3f}"
              f" {hit:>11.3f}")
    growth = (best[-1][0] / layer_counts[-1]) / (best[0][0] / layer_counts[0])
    parallel = best[-1][0] / best[-1][1]
    hit = best[-1][3] / best[-1][0]
    checks = [(f"time per layer, L={layer_counts[-1]} / L={layer_counts[0]}",
               f"{growth:.2f}", "<= 1.5", growth <= 1.5),
              (f"L={layer_counts[-1]}: cached / default", f"{hit:.3f}", "<= 0.05",
               hit <= 0.05)]
    if threads > 1:
        checks.append((f"L={layer_counts[-1]}: default / -j1", f"{parallel:.2f}",
                       "<= 1.0", parallel <= 1.0))
    if args.long:
        # What one more layer costs, from L/2 to L against L/4 to L/2: the
        # fixed costs of the smallest programs do not hide a growth here.
        (l1, t1), (l2, t2), (l3, t3) = [(n, b[0]) for n, b in zip(layer_counts, best)][-3:]
        marginal = ((t3 - t2) / (l3 - l2)) / ((t2 - t1) / (l2 - l1))
        checks.append((f"per added layer, L={l2}..{l3} / L={l1}..{l2}", f"{marginal:.2f}",
                       "<= 1.5", marginal <= 1.5))
    print()
    for what, value, target, ok in checks:
        print(f"  {what:<32} {value:>6}   target {target:<7} {'ok' if ok else 'MISSED'}")
    return 0 if all(ok for *_, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(main())

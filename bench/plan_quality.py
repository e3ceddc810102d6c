#!/usr/bin/env python3
"""Plan quality: dt's plans against the cheapest plan there is.

Propagation's rules decide one op at a time (with a look-ahead of one op on
ties), so they can miss the cheapest plan; dt-propagate's plan search then
prices whole plans with one value pinned at a time (docs/Design.md). On
small random programs (matmuls,
elementwise ops, transposes, row sums and broadcasts over a 1-D mesh) this
bench tries every placement of every value an op produces (R, S(d) for each
dim, P(sum)), each pinned with dt.constrain, prices each plan with
dt-cost-report (its collectives, combined calls counted once, plus its
contractions' compute and memory-bound ops: the model the plan search
prices by) and compares the
cheapest with the plan dt-propagate makes of the same program left free
(--search N: the search's budget, 0 for the rules alone; default: the
pass's). The pinned plans are priced with the rules alone.
Arguments and results have fixed random shardings, as a user writes them.
The search may also pin an argument to another replicated or sharded
layout (redistributed once at the entry); each pinning of the values is
priced with the arguments as they come and as dt's search pinned them
(read from its explanation), or with --all-argument-pins every way they
could be pinned (about 30 times the plans).
Each op still chooses how to compute between its pinned values, by the same
rules as propagation (with ties, and shared or combined moves, it is not
always the cheapest), so the cheapest found bounds the best plan from above,
and improves when those rules do.

Target: the geometric mean of dt / cheapest over the programs <= 1.05
(30 programs of 6 values: 1.128 by the rules alone, RULES_GEOMEAN_TARGET
below, and 1.000 with the search, 1.035 when it pins no argument, which
the next line prints beside it: dt's plan with pin-arguments=false;
docs/Design.md says where the rest is lost). The worst program is printed
without a target. A plan cheaper than the cheapest found (ratio below 1)
would mean the enumeration misses plans: it is reported and fails.

  python3 bench/plan_quality.py [--dt-opt build/bin/dt-opt] [--programs 30]
                                [--values 6] [--seed 1] [--ranks 4] [--show N]
                                [--search N] [--all-argument-pins]

--show N prints the N worst programs with both plans' costs and pins.
"""

import argparse
import itertools
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
DIMS = (256, 1024, 4096)
MESH = "@mesh"
# Plans within this much of the cheapest (seconds) are equally cheap: the
# model's totals are sums of floating-point terms.
EPSILON = 1e-9
# The geometric mean of dt / cheapest must not exceed this; with --search 0
# (the rules alone), RULES_GEOMEAN_TARGET.
GEOMEAN_TARGET = 1.05
RULES_GEOMEAN_TARGET = 1.15


def ttype(shape):
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def sharding(placement):
    return f"#dt.sharding<{MESH}, [{placement}]>"


def placements(rank, partial=True):
    """Every placement of a value of `rank` dims on a 1-D mesh."""
    return ["R"] + [f"S({d})" for d in range(rank)] + (["P(sum)"] if partial else [])


class Program:
    """A function over `values`: each a shape and either an argument (with
    its placement) or a node (kind, input value indices). Indices are stable:
    an argument made after a node still comes after it in `values`."""

    def __init__(self, rng, nodes):
        self.rng = rng
        self.values = []  # (shape, "arg", placement) or (shape, kind, inputs)
        self.new_arg((rng.choice(DIMS), rng.choice(DIMS)))
        while len(self.nodes()) < nodes:
            self.grow()
        used = {i for _, kind, inputs in self.values if kind != "arg" for i in inputs}
        self.results = [(i, rng.choice(placements(len(shape), partial=False)))
                        for i in self.nodes() if i not in used
                        for shape in [self.values[i][0]]]

    def nodes(self):
        return [i for i, v in enumerate(self.values) if v[1] != "arg"]

    def shape(self, index):
        return self.values[index][0]

    def new_arg(self, shape):
        placement = self.rng.choice(placements(len(shape), partial=False))
        self.values.append((shape, "arg", placement))
        return len(self.values) - 1

    def of_rank(self, rank):
        """Indices of the values of `rank` dims, the latest first."""
        return [i for i in reversed(range(len(self.values))) if len(self.shape(i)) == rank]

    def pick(self, rank):
        """A recent value of `rank` dims, or None."""
        found = self.of_rank(rank)
        return found[min(int(self.rng.expovariate(0.7)), len(found) - 1)] if found else None

    def add(self, kind, inputs, shape):
        self.values.append((shape, kind, inputs))

    def grow(self):
        rng = self.rng
        one = self.pick(1)
        kind = rng.choice(["matmul", "matmul", "add", "exp", "transpose", "reduce"]
                          + (["broadcast"] if one is not None else []))
        if kind == "broadcast":
            (m,) = self.shape(one)
            self.add(kind, [one], (m, rng.choice(DIMS)))
            return
        a = self.pick(2)
        m, k = self.shape(a)
        if kind == "matmul":
            # An activation times a weight, or two values.
            candidates = [i for i in self.of_rank(2) if self.shape(i)[0] == k and i != a]
            if candidates and rng.random() < 0.5:
                b = rng.choice(candidates)
            else:
                b = self.new_arg((k, rng.choice(DIMS)))
            self.add(kind, [a, b], (m, self.shape(b)[1]))
        elif kind == "add":
            candidates = [i for i in self.of_rank(2) if self.shape(i) == (m, k) and i != a]
            b = rng.choice(candidates) if candidates else self.new_arg((m, k))
            self.add(kind, [a, b], (m, k))
        elif kind == "exp":
            self.add(kind, [a], (m, k))
        elif kind == "transpose":
            self.add(kind, [a], (k, m))
        else:
            self.add(kind, [a], (m,))

    def arguments(self):
        return [i for i, v in enumerate(self.values) if v[1] == "arg"]

    def text(self, name, pins, argument_pins=()):
        """The function `name`, its n-th node pinned to pins[n] where not
        None, and its n-th argument to argument_pins[n] where given and not
        None (redistributed at the entry, as dt-propagate's search pins it)."""
        names, lines, args = {}, [], []
        pin_of = dict(zip(self.nodes(), pins))
        pin_of.update(zip(self.arguments(), argument_pins))
        for i, (shape, kind, rest) in enumerate(self.values):
            t = ttype(shape)
            if kind == "arg":
                names[i] = f"%a{i}"
                args.append(f"%a{i}: {t} {{dt.sharding = {sharding(rest)}}}")
                if pin_of.get(i) is not None:
                    lines.insert(0, f"  %c{i} = dt.constrain %a{i} to {sharding(pin_of[i])} : {t}")
                    names[i] = f"%c{i}"
                continue
            ins = [names[j] for j in rest]
            shapes = [ttype(self.shape(j)) for j in rest]
            out = f"%v{i}"
            if kind in ("matmul", "reduce"):
                lines.append(f"  %e{i} = tensor.empty() : {t}")
                lines.append(f"  %z{i} = linalg.fill ins(%zero : f32) outs(%e{i} : {t}) -> {t}")
            if kind == "matmul":
                lines.append(f"  {out} = linalg.matmul ins({ins[0]}, {ins[1]} : "
                             f"{shapes[0]}, {shapes[1]}) outs(%z{i} : {t}) -> {t}")
            elif kind == "add":
                lines.append(f"  {out} = arith.addf {ins[0]}, {ins[1]} : {t}")
            elif kind == "exp":
                lines.append(f"  {out} = math.exp {ins[0]} : {t}")
            elif kind == "transpose":
                lines.append(f"  %e{i} = tensor.empty() : {t}")
                lines.append(f"  {out} = linalg.transpose ins({ins[0]} : {shapes[0]}) "
                             f"outs(%e{i} : {t}) permutation = [1, 0]")
            elif kind == "reduce":
                lines.append(f"  {out} = linalg.reduce ins({ins[0]} : {shapes[0]}) "
                             f"outs(%z{i} : {t}) dimensions = [1]")
                lines.append("    (%in: f32, %acc: f32) {")
                lines.append("      %r = arith.addf %in, %acc : f32")
                lines.append("      linalg.yield %r : f32")
                lines.append("    }")
            elif kind == "broadcast":
                lines.append(f"  %e{i} = tensor.empty() : {t}")
                lines.append(f"  {out} = linalg.broadcast ins({ins[0]} : {shapes[0]}) "
                             f"outs(%e{i} : {t}) dimensions = [1]")
            pin = pin_of[i]
            if pin is not None:
                lines.append(f"  %p{i} = dt.constrain {out} to {sharding(pin)} : {t}")
                out = f"%p{i}"
            names[i] = out
        results = ", ".join(f"{ttype(self.shape(i))} {{dt.sharding = {sharding(p)}}}"
                            for i, p in self.results)
        returned = ", ".join(names[i] for i, _ in self.results)
        types = ", ".join(ttype(self.shape(i)) for i, _ in self.results)
        body = "\n".join(lines)
        return (f"func.func @{name}({', '.join(args)}) -> ({results}) {{\n"
                f"  %zero = arith.constant 0.0 : f32\n{body}\n"
                f"  return {returned} : {types}\n}}\n")

    def choices(self):
        return [placements(len(self.shape(i))) for i in self.nodes()]

    def argument_choices(self):
        """Every pin of each argument: none (its own placement) or another
        replicated or sharded one, as dt-propagate's search tries."""
        return [[None] + [p for p in placements(len(shape), partial=False) if p != own]
                for i in self.arguments() for shape, _, own in [self.values[i]]]


def price(dt_opt, ranks, functions, jobs, search=None, pin_arguments=True):
    """dt-cost-report's seconds (collectives + compute) of each function, by
    name; functions the pipeline rejects are missing. `search`: the plan
    search's budget (None: the pass's default); `pin_arguments`: whether
    it may pin arguments."""
    options = ([] if search is None else [f"search={search}"]) + \
        ([] if pin_arguments else ["pin-arguments=false"])
    propagate = "-dt-propagate" + ("=" + " ".join(options) if options else "")
    def run(chunk):
        with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
            f.write("\n// -----\n".join(f'dt.mesh {MESH} = <["tp" = {ranks}]>\n{text}'
                                        for text in chunk))
            path = f.name
        try:
            proc = subprocess.run(
                [dt_opt, path, "-split-input-file", propagate,
                 "-dt-insert-redistribute", "-dt-cost-report=json=true", "-o", os.devnull],
                capture_output=True, text=True)
        finally:
            os.unlink(path)
        decoder, out, pos, prices = json.JSONDecoder(), proc.stdout, 0, {}
        while True:
            while pos < len(out) and out[pos] != "[":
                pos += 1
            if pos == len(out):
                return prices
            reports, pos = decoder.raw_decode(out, pos)
            for report in reports:
                prices[report["function"]] = (report["total"]["seconds"]
                                              + report["compute_per_rank"]["seconds"])

    size = max(1, math.ceil(len(functions) / jobs))
    chunks = [functions[i:i + size] for i in range(0, len(functions), size)]
    prices = {}
    with ThreadPoolExecutor(jobs) as pool:
        for found in pool.map(run, chunks):
            prices.update(found)
    return prices


def argument_pins(dt_opt, ranks, program, search):
    """The pins dt-propagate's search gave `program`'s arguments, as
    argument_pins of Program.text (read from its explanation)."""
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(f'dt.mesh {MESH} = <["tp" = {ranks}]>\n'
                + program.text("dt", [None] * len(program.nodes())))
        path = f.name
    try:
        options = "explain=true" + ("" if search is None else f" search={search}")
        stderr = subprocess.run([dt_opt, path, f"-dt-propagate={options}", "-o", os.devnull],
                                capture_output=True, text=True).stderr
    finally:
        os.unlink(path)
    pinned = {int(n): p for n, p in re.findall(
        r"pinned argument #(\d+) .* to #dt.sharding<@mesh, \[(.*?)\]>", stderr)}
    return tuple(pinned.get(n) for n in range(len(program.arguments())))


def judge(dt_opt, ranks, program, jobs, search, all_argument_pins):
    """(dt's seconds, the cheapest seconds, the cheapest (pins, argument
    pins), plans priced, plans tried, dt's argument pins, dt's seconds with
    pin-arguments=false)."""
    free = [None] * len(program.nodes())
    dt_pins = argument_pins(dt_opt, ranks, program, search)
    # Arguments: unpinned and as dt pinned them, or (all_argument_pins)
    # every way the search could pin them.
    if all_argument_pins:
        argument_plans = list(itertools.product(*program.argument_choices()))
    else:
        argument_plans = list(dict.fromkeys([(None,) * len(dt_pins), dt_pins]))
    plans = list(itertools.product(itertools.product(*program.choices()), argument_plans))
    prices = price(dt_opt, ranks, [program.text("dt", free)], 1, search)
    prices.update(price(dt_opt, ranks, [program.text("fixed", free)], 1, search, False))
    # Every value is pinned: the rules alone decide between the pins.
    prices.update(price(dt_opt, ranks, [program.text(f"p{i}", *pins)
                                        for i, pins in enumerate(plans)], jobs, 0))
    if "dt" not in prices or "fixed" not in prices:
        sys.exit("plan_quality: dt-opt could not plan the free program:\n"
                 + program.text("dt", free))
    priced = [(prices[f"p{i}"], pins) for i, pins in enumerate(plans) if f"p{i}" in prices]
    best, pins = min(priced, key=lambda p: p[0])
    return prices["dt"], best, pins, len(priced), len(plans), dt_pins, prices["fixed"]


def geometric_mean(ratios):
    return math.exp(sum(math.log(max(r, 1e-12)) for r in ratios) / len(ratios))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dt-opt", default=os.path.join(HERE, "..", "build", "bin", "dt-opt"))
    parser.add_argument("--programs", type=int, default=30)
    parser.add_argument("--values", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--show", type=int, default=0)
    parser.add_argument("--search", type=int, default=None,
                        help="dt-propagate's plan search budget for dt's plan (0: the rules alone)")
    parser.add_argument("--all-argument-pins", action="store_true",
                        help="enumerate every pin of the arguments too (about 30 times the "
                             "plans), not only none and dt's own")
    args = parser.parse_args()
    if not os.access(args.dt_opt, os.X_OK):
        sys.exit(f"plan_quality: no dt-opt at {args.dt_opt}: build first (make), "
                 "or name it with --dt-opt")

    rows, pinned_arguments, fixed_ratios = [], 0, []
    for p in range(args.programs):
        program = Program(random.Random(args.seed * 1000 + p), args.values)
        dt, best, pins, priced, plans, dt_pins, fixed = judge(
            args.dt_opt, args.ranks, program, args.jobs, args.search, args.all_argument_pins)
        moved = sum(p is not None for p in dt_pins)
        pinned_arguments += bool(moved)
        ratio = dt / best if best > 0 else (1.0 if dt <= EPSILON else math.inf)
        if abs(dt - best) <= EPSILON:
            ratio = 1.0
        rows.append((ratio, p, program, dt, best, pins, priced, plans))
        fixed_ratios.append(1.0 if abs(fixed - best) <= EPSILON else fixed / best)
        print(f"program {p:3d}: dt {dt * 1e6:9.2f} us, cheapest {best * 1e6:9.2f} us "
              f"of {priced}/{plans} plans, ratio {ratio:.3f}"
              + (f", {moved} argument{'s' * (moved > 1)} pinned" if moved else ""), flush=True)

    ratios = [r[0] for r in rows]
    target = RULES_GEOMEAN_TARGET if args.search == 0 else GEOMEAN_TARGET
    geomean = geometric_mean(ratios)
    worst = max(ratios)
    below = [r for r in rows if r[0] < 1.0]
    optimal = sum(1 for r in ratios if r == 1.0)
    print(f"\n{len(rows)} programs of {args.values} values on tp={args.ranks}: "
          f"{optimal} planned at the cheapest, geometric mean dt / cheapest {geomean:.3f} "
          f"(target <= {target}), worst {worst:.3f}")
    print(f"dt pinned arguments in {pinned_arguments}; with pin-arguments=false: "
          f"{sum(1 for r in fixed_ratios if r == 1.0)} at the cheapest, geometric mean "
          f"{geometric_mean(fixed_ratios):.3f}, worst {max(fixed_ratios):.3f}")
    for ratio, p, program, dt, best, pins, _, _ in sorted(rows, key=lambda r: -r[0])[:args.show]:
        print(f"\n# program {p}: dt {dt * 1e6:.2f} us, cheapest {best * 1e6:.2f} us "
              f"(ratio {ratio:.3f}); the cheapest pins:")
        print(program.text("cheapest", *pins))
        print(program.text("free", [None] * len(program.nodes())))
    failed = []
    if geomean > target:
        failed.append("geometric mean")
    if below:
        failed.append(f"{len(below)} plans cheaper than every pinned one (the enumeration misses plans)")
    print("plan_quality: " + ("ok" if not failed else "MISSED: " + ", ".join(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

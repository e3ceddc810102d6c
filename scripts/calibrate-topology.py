#!/usr/bin/env python3
"""Fits a topology description (docs/Design.md, Cost model) to the machine
dt-run runs on, so that propagation, dt-cost-report and dt-run --profile's
model column price collectives and contractions as they run there instead
of as on an H200 node.

For each mesh axis it compiles a program of all_reduces (P(sum) -> R) and
all_gathers (S(0) -> R) of several sizes on that axis alone, runs it with
`dt-run --profile` on the chosen backend, and fits the cost model's ring
formulas to the measured times by least squares on relative error:

    all_gather  (n-1) alpha  +  (n-1)/n S / B
    all_reduce 2(n-1) alpha + 2(n-1)/n S / B

(S: bytes of the whole gathered or reduced tensor, n: the axis's size). A
point is the time of the rank that waited least for the others (the
profile's "fastest"), the best of --rounds runs, after a small all_reduce
that brings the ranks together. The
device line comes from an f32 and a bf16 matmul and an elementwise add run
on every rank at once, so a rank's rates are what it gets while the others
compute too, and the memory is the machine's divided among the ranks it
holds (--ranks-per-machine). The cache line comes from the same add on
vectors that fit in half of a core's L2 cache (its size from getconf, or
--cache-bytes): the rate at which the small buffers a bucket of gradients
copies move.

Usage: scripts/calibrate-topology.py --mesh dp=2,tp=2 [--backend threads|mpi]
           [--mpirun "mpirun --oversubscribe"] [--out FILE] [--rounds 3]
           [--repeat 6] [--sizes 4096,65536,...] [--cache-bytes N] [--quick]
       scripts/calibrate-topology.py --fit FILE.json   (fit given points)
"""

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD_BIN = os.path.join(HERE, "..", "build", "bin")

UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
# A profile row: time, (fastest), model, runs, in -> out, share, site.
ROW = re.compile(r"^\s*[0-9.]+ (?:ns|us|ms|s)\s+\(\s*([0-9.]+) (ns|us|ms|s)\)"
                 r"\s+[0-9.]+ (?:ns|us|ms|s)\s+(\d+)\s+.*?%\s+"
                 r"(all_reduce|all_gather) on \[([^\]]+)\]")
PER_CALL = re.compile(r"^\s*rank (\d+): ([0-9.]+) (ns|us|ms|s) per call")


def parse_mesh(text):
    axes = []
    for part in text.split(","):
        name, eq, size = part.partition("=")
        if not eq or not name.strip() or not size.strip().isdigit() or int(size) < 1:
            sys.exit(f"calibrate: --mesh takes NAME=SIZE,..., got '{text}'")
        axes.append((name.strip(), int(size)))
    return axes


def mesh_decl(axes):
    return "dt.mesh @mesh = <[" + ", ".join(f'"{n}" = {s}' for n, s in axes) + "]>"


def placements(axes, axis, placement):
    return "[" + ", ".join(placement if i == axis else "R"
                           for i in range(len(axes))) + "]"


def elements(size, n):
    """The f32 elements of a collective of about `size` bytes on n ranks: a
    multiple of n, at least n."""
    return max(n, size // 4 // n * n)


def collectives_program(axes, axis, sizes):
    """A function returning, for each size S (bytes), an all_reduce and an
    all_gather of S bytes of f32 on mesh axis `axis` alone, in that order,
    after a small all_reduce that brings the ranks together (the first
    collective of a call also waits for the ranks to arrive)."""
    n = axes[axis][1]
    args, results, values = [], [], []
    replicated = placements(axes, axis, "R")
    for i, size in enumerate([4 * n] + sizes):
        elems = elements(size, n)
        for kind, placement in (("r", "P(sum)"), ("g", "S(0)"))[:1 if i == 0 else 2]:
            ty = f"tensor<{elems}xf32>"
            args.append(f"%{kind}{i}: {ty} {{dt.sharding = #dt.sharding<@mesh, "
                        f"{placements(axes, axis, placement)}>}}")
            results.append(f"{ty} {{dt.sharding = #dt.sharding<@mesh, {replicated}>}}")
            values.append((f"%{kind}{i}", ty))
    return "\n".join([
        mesh_decl(axes),
        "func.func @main(" + ",\n    ".join(args) + ")\n    -> (" +
        ",\n        ".join(results) + ") {",
        "  return " + ", ".join(v for v, _ in values) + " : " +
        ", ".join(t for _, t in values),
        "}", ""])


def compute_program(axes, kind, size):
    """Every rank runs the same op, replicated: a size x size matmul of
    `kind` (f32 or bf16) or an add of two f32 vectors of `size` elements."""
    r = placements(axes, 0, "R")
    shard = f"{{dt.sharding = #dt.sharding<@mesh, {r}>}}"
    if kind == "add":
        ty = f"tensor<{size}xf32>"
        body = [f"  %e = tensor.empty() : {ty}",
                f"  %s = linalg.add ins(%a, %b : {ty}, {ty}) outs(%e : {ty}) -> {ty}",
                f"  return %s : {ty}"]
        return "\n".join([mesh_decl(axes),
                          f"func.func @main(%a: {ty} {shard}, %b: {ty} {shard})"
                          f" -> ({ty} {shard}) {{"] + body + ["}", ""])
    ty = f"tensor<{size}x{size}x{kind}>"
    zero = "0.0"
    body = [f"  %z = arith.constant {zero} : {kind}",
            f"  %e = tensor.empty() : {ty}",
            f"  %f = linalg.fill ins(%z : {kind}) outs(%e : {ty}) -> {ty}",
            f"  %m = linalg.matmul ins(%a, %b : {ty}, {ty}) outs(%f : {ty}) -> {ty}",
            f"  return %m : {ty}"]
    return "\n".join([mesh_decl(axes),
                      f"func.func @main(%a: {ty} {shard}, %b: {ty} {shard})"
                      f" -> ({ty} {shard}) {{"] + body + ["}", ""])


class Runner:
    def __init__(self, args, ranks, workdir):
        self.args, self.ranks, self.workdir = args, ranks, workdir

    def run(self, name, text, profile, repeat=None):
        src = os.path.join(self.workdir, name + ".mlir")
        lib = os.path.join(self.workdir, name + ".so")
        with open(src, "w") as f:
            f.write(text)
        compile_cmd = [self.args.dt_compile, src, "-o", lib,
                       "--combine-collectives=false"]
        proc = subprocess.run(compile_cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"calibrate: dt-compile failed on {src}:\n{proc.stderr[-3000:]}")
        cmd = [self.args.dt_run, lib, "--seed", "0", "--repeat",
               str(repeat or self.args.repeat), "--backend", self.args.backend]
        if profile:
            cmd.append("--profile")
        if self.args.backend == "mpi":
            cmd = self.args.mpirun.split() + ["-np", str(self.ranks)] + cmd
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True,
                                  timeout=self.args.timeout)
        except subprocess.TimeoutExpired:
            sys.exit(f"calibrate: {' '.join(cmd)} ran past --timeout "
                     f"{self.args.timeout:g} s")
        if proc.returncode != 0:
            sys.exit(f"calibrate: {' '.join(cmd)} failed:\n"
                     f"{(proc.stdout + proc.stderr)[-3000:]}")
        return proc.stdout + proc.stderr


def profile_rows(output):
    rows = []
    for line in output.splitlines():
        m = ROW.match(line)
        if m:
            seconds = float(m.group(1)) * UNITS[m.group(2)] / int(m.group(3))
            rows.append((m.group(4), m.group(5), seconds))
    return rows


def l2_cache_bytes():
    """A core's L2 cache in bytes (glibc's getconf, then sysfs), or None."""
    try:
        out = subprocess.run(["getconf", "LEVEL2_CACHE_SIZE"], capture_output=True,
                             text=True).stdout.strip()
        if out.isdigit() and int(out) > 0:
            return int(out)
    except OSError:
        pass
    try:
        with open("/sys/devices/system/cpu/cpu0/cache/index2/size") as f:
            text = f.read().strip()
        units = {"K": 1 << 10, "M": 1 << 20}
        return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)
    except (OSError, ValueError, IndexError):
        return None


def seconds_per_call(output):
    """The median over the ranks of each rank's mean time per call."""
    times = sorted(float(m.group(2)) * UNITS[m.group(3)]
                   for m in map(PER_CALL.match, output.splitlines()) if m)
    if not times:
        sys.exit("calibrate: dt-run printed no time per call:\n" + output[-2000:])
    return times[len(times) // 2]


def ring_terms(kind, size, n):
    """The ring formula's latency steps and bytes on the wire per rank for a
    collective of `size` bytes on n ranks: time = steps alpha + wire / B."""
    steps = (n - 1) * (2 if kind == "all_reduce" else 1)
    return steps, steps / n * size


def ring_seconds(kind, size, n, alpha, bandwidth):
    """The cost model's time of a ring collective of `size` bytes on n ranks."""
    steps, wire = ring_terms(kind, size, n)
    return steps * alpha + wire / bandwidth


def fit_link(points, n):
    """alpha (s) and B (bytes/s) minimising the relative error of the ring
    formulas over `points` = [(kind, bytes S, seconds)]. Least squares on
    t = a x + b y with x the latency steps and y the bytes on the wire,
    each row divided by its t; a and b kept >= 0."""
    rows = []
    for kind, size, seconds in points:
        steps, wire = ring_terms(kind, size, n)
        rows.append((steps / seconds, wire / seconds, 1.0))

    def solve(use_a, use_b):
        sxx = sum(x * x for x, _, _ in rows)
        syy = sum(y * y for _, y, _ in rows)
        sxy = sum(x * y for x, y, _ in rows)
        sx = sum(x for x, _, _ in rows)
        sy = sum(y for _, y, _ in rows)
        if use_a and use_b:
            det = sxx * syy - sxy * sxy
            if det <= 0:
                return None
            return ((sx * syy - sy * sxy) / det, (sy * sxx - sx * sxy) / det)
        if use_a:
            return (sx / sxx, 0.0)
        return (0.0, sy / syy)

    candidates = [c for c in (solve(True, True), solve(True, False),
                              solve(False, True))
                  if c and c[0] >= 0 and c[1] >= 0]

    def error(c):
        return sum((c[0] * x + c[1] * y - 1) ** 2 for x, y, _ in rows)

    a, b = min(candidates, key=error)
    # A bandwidth no fit could see (every point latency-bound): 1 PB/s.
    return a, (1.0 / b if b > 0 else 1e15)


def format_link(name, alpha, bandwidth):
    return f"{name:<10} {alpha * 1e6:<12.3f} {bandwidth / 1e9:.4g}"


def fit_file(path):
    """--fit: points from a JSON file {"axes": [[name, n, [[kind, S, t]...]]...]}:
    prints the axes' lines (the fit alone, for tests)."""
    try:
        with open(path) as f:
            data = json.load(f)
        axes = [(str(name), int(n), [(str(k), float(size), float(t))
                                     for k, size, t in points])
                for name, n, points in data["axes"]]
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(f"calibrate: {path}: expected {{\"axes\": [[NAME, N, "
                 f"[[KIND, BYTES, SECONDS], ...]], ...]}}: {e}")
    for name, n, points in axes:
        if n < 2 or len(points) < 2 or any(
                t <= 0 or k not in ("all_reduce", "all_gather")
                for k, _, t in points):
            sys.exit(f"calibrate: {path}: axis {name} needs n >= 2 and at "
                     f"least 2 points, each an all_reduce or all_gather of "
                     f"positive time")
        alpha, bandwidth = fit_link(points, n)
        print(format_link(name, alpha, bandwidth))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mesh", help="NAME=SIZE,... as the programs' dt.mesh")
    parser.add_argument("--backend", default="threads", choices=["threads", "mpi"])
    parser.add_argument("--mpirun", default="mpirun --oversubscribe",
                        help="with --backend=mpi (-np is added)")
    parser.add_argument("--dt-run", default=os.path.join(BUILD_BIN, "dt-run"))
    parser.add_argument("--dt-compile", default=os.path.join(BUILD_BIN, "dt-compile"))
    parser.add_argument("--out", help="the topology file (default: stdout)")
    parser.add_argument("--sizes", default="1024,4096,65536,1048576,4194304",
                        help="bytes of each collective's whole tensor")
    parser.add_argument("--rounds", type=int, default=3,
                        help="runs of each program; each point is the best")
    parser.add_argument("--repeat", type=int, default=6, help="calls per run")
    parser.add_argument("--matmul", type=int, default=512,
                        help="the device's matmuls are N x N x N")
    parser.add_argument("--add", type=int, default=4 << 20,
                        help="elements of the device's add")
    parser.add_argument("--cache-bytes", type=int,
                        help="a core's cache (default: its L2, from getconf)")
    parser.add_argument("--ranks-per-machine", type=int,
                        help="ranks sharing this machine's memory (default: all)")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--quick", action="store_true",
                        help="small sizes and matmuls, one round: a smoke test")
    parser.add_argument("--fit", metavar="FILE.json",
                        help="fit the points of FILE, measure nothing")
    args = parser.parse_args()
    if args.fit:
        fit_file(args.fit)
        return
    if not args.mesh:
        parser.error("--mesh is required")
    axes = parse_mesh(args.mesh)
    if args.cache_bytes is not None and args.cache_bytes <= 0:
        sys.exit(f"calibrate: --cache-bytes must be > 0, got {args.cache_bytes}")
    for tool in (args.dt_run, args.dt_compile):
        if not os.access(tool, os.X_OK):
            sys.exit(f"calibrate: {tool} is not an executable (build dt first, "
                     f"or give --dt-run and --dt-compile)")
    if args.backend == "mpi" and not shutil.which(args.mpirun.split()[0]):
        sys.exit(f"calibrate: --mpirun '{args.mpirun}' is not a command")
    if args.quick:
        args.sizes, args.rounds, args.repeat = "4096,262144", 1, 3
        args.matmul, args.add = 128, 1 << 18
    sizes = [int(s) for s in args.sizes.split(",")]
    ranks = 1
    for _, size in axes:
        ranks *= size

    lines = [f"# dt topology fitted by scripts/calibrate-topology.py on "
             f"{datetime.date.today()}: mesh {args.mesh}, backend {args.backend}, "
             f"{ranks} ranks",
             "# axis    latency(us)  bandwidth(GB/s)"]
    with tempfile.TemporaryDirectory() as workdir:
        runner = Runner(args, ranks, workdir)
        for axis, (name, n) in enumerate(axes):
            if n == 1:
                continue  # No collective runs on an axis of one.
            best = {}
            for _ in range(args.rounds):
                output = runner.run(f"axis{axis}",
                                    collectives_program(axes, axis, sizes), True)
                rows = profile_rows(output)
                if len(rows) != 2 * len(sizes) + 1:
                    sys.exit(f"calibrate: expected {2 * len(sizes) + 1} profile "
                             f"rows on axis {name}, got {len(rows)}:\n"
                             f"{output[-3000:]}")
                rows = rows[1:]  # The barrier.
                for i, (kind, row_axes, seconds) in enumerate(rows):
                    if row_axes != name:
                        sys.exit(f"calibrate: profile row {i} is on [{row_axes}], "
                                 f"expected [{name}]")
                    best[i] = min(best.get(i, seconds), seconds)
            points = []
            for i, size in enumerate(sizes):
                size = elements(size, n) * 4
                points.append(("all_reduce", size, best[2 * i]))
                points.append(("all_gather", size, best[2 * i + 1]))
            alpha, bandwidth = fit_link(points, n)
            lines.append(f"# {name} (n = {n}): measured, and the fit")
            for kind, size, seconds in points:
                fitted = ring_seconds(kind, size, n, alpha, bandwidth)
                lines.append(f"#   {kind:<10} {size:>9} B  {seconds * 1e6:9.1f} us"
                             f"  {fitted * 1e6:9.1f} us")
            lines.append(format_link(name, alpha, bandwidth))

        def rate(kind, size, work, repeat=None):
            times = [seconds_per_call(runner.run(f"{kind}", compute_program(
                axes, kind, size), False, repeat)) for _ in range(args.rounds)]
            return work / min(times)

        n3 = args.matmul
        flops32 = rate("f32", n3, 2.0 * n3 ** 3)
        flops16 = rate("bf16", n3, 2.0 * n3 ** 3)
        memory_rate = rate("add", args.add, 3.0 * 4 * args.add)
        cache = args.cache_bytes or l2_cache_bytes()
        if cache:
            # Three vectors in half the cache, called often enough to time.
            elems = max(256, cache // 24 // 256 * 256)
            cache_rate = rate("add", elems, 3.0 * 4 * elems,
                              max(args.repeat, (64 << 20) // (12 * elems)))
        per_machine = args.ranks_per_machine or ranks
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / per_machine
    lines.append("# device  16-bit TFLOP/s  32-bit TFLOP/s  memory GB/s  memory GB "
                 "(per rank, all ranks computing)")
    lines.append(f"device    {flops16 / 1e12:.4g}  {flops32 / 1e12:.4g}  "
                 f"{memory_rate / 1e9:.4g}  {memory / 1e9:.4g}")
    if not cache:
        lines.append("# no cache line: a core's L2 size is unknown (give --cache-bytes)")
    elif cache_rate <= memory_rate:
        lines.append(f"# no cache line: adds within {cache} B ran at "
                     f"{cache_rate / 1e9:.4g} GB/s, no faster than memory")
    else:
        lines.append("# cache  MB  GB/s (a core's L2; copies of data that fit move at this rate)")
        lines.append(f"cache     {cache / 1e6:.4g}  {cache_rate / 1e9:.4g}")
    text = "\n".join(lines) + "\n"
    if args.out:
        tmp = args.out + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, args.out)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()

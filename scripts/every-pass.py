#!/usr/bin/env python3
"""Runs every dt pass and pipeline alone on each input file; none may crash.

The pipelines run passes in an order that meets their preconditions; a user
running one pass by hand meets none of them. So each pass that `dt-opt
--help` lists (`--dt-...`: the passes, dt-shard and the lowering pipelines,
the test passes) runs alone on every chunk of every file, with
-split-input-file and unregistered ops allowed. It must exit 0, or 1 with a
diagnostic on stderr; a signal, another exit code or silence on failure is
a crash, reported with the file, the pass and the end of stderr.

With --stages, each file is first taken through the start of dt-shard
(after dt-propagate, dt-insert-redistribute, dt-lower-redistribute, and all
of dt-shard), and every pass runs on each of those programs as well: each
pass then also meets the forms the ones before it leave.

A dt-opt process costs about 0.1 s before it reads its input (loading the
MLIR library), far more than most passes take on a test file. So each pass
first runs once on all the programs joined by split markers, which
-split-input-file takes apart again: a failing chunk does not stop the next
one. Only when that run crashes (or times out) does the pass run on each
program alone, to name the programs it crashes on.

Usage: every-pass.py --dt-opt PATH [--jobs J] [--passes REGEX] [--stages]
                     FILE...
"""

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

from dt_opt_verdict import failure_of

# The programs --stages makes of each file: dt-shard's start, step by step.
STAGES = ["dt-propagate",
          "dt-propagate,dt-insert-redistribute",
          "dt-propagate,dt-insert-redistribute,dt-lower-redistribute",
          "dt-shard"]


def dt_passes(dt_opt):
    """Every `--dt-` option at the top level of dt-opt's pass list."""
    out = subprocess.run([dt_opt, "--help"], check=True, capture_output=True,
                         text=True).stdout
    return sorted(set(re.findall(r"^\s+(--dt-[a-z0-9-]+)", out, re.MULTILINE)))


def staged(dt_opt, paths, folder):
    """Each of `paths` after each of STAGES, where that succeeds, written
    to `folder` (chunks kept apart by the split marker): {program: how to
    make it again}. A stage that crashes is reported as a crash."""
    programs, crashes = {}, []
    for n, path in enumerate(paths):
        for i, stage in enumerate(STAGES):
            out = os.path.join(folder, f"{n}-{os.path.basename(path)}.stage{i}.mlir")
            make = [dt_opt, path, "-split-input-file", "-allow-unregistered-dialect",
                    "-output-split-marker=// -----", f"--pass-pipeline=builtin.module({stage})"]
            verdict = failure_of(make + ["-o", out], 120)
            how = shlex.join(make[1:])
            if verdict:
                crashes.append(f"CRASH: dt-opt {how}: {verdict}")
            elif os.path.exists(out):
                programs[out] = f"{how} | dt-opt -"
    return programs, crashes


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dt-opt", required=True)
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--passes", default="",
                        help="only the passes whose flag matches this regex")
    parser.add_argument("--stages", action="store_true",
                        help="also run every pass on each file after each step of dt-shard")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    passes = [p for p in dt_passes(args.dt_opt) if re.search(args.passes, p)]
    if not passes:
        sys.exit("every-pass: dt-opt --help lists no --dt- pass")
    with tempfile.TemporaryDirectory() as folder:
        # Each program, with how to make it again (a file given: its path).
        programs, crashes = {path: path for path in args.files}, []
        if args.stages:
            made, crashes = staged(args.dt_opt, args.files, folder)
            programs.update(made)
        joined = os.path.join(folder, "all-programs.mlir")
        with open(joined, "w") as out:
            out.write("\n// -----\n".join(open(path).read() for path in programs))
        options = ["-split-input-file", "-allow-unregistered-dialect"]

        def run(path, flag, timeout):
            return failure_of([args.dt_opt, path, flag, *options, "-o", os.devnull], timeout)

        def check(flag):
            """How many runs `flag` took, and its crashes on each program
            that the run on all of them together did not clear."""
            if not run(joined, flag, 300):
                return 1, []
            return 1 + len(programs), [
                f"CRASH: dt-opt {programs[path]} {flag} {' '.join(options)}: {verdict}"
                for path in programs for verdict in [run(path, flag, 120)] if verdict]

        runs = 0
        with ThreadPoolExecutor(args.jobs) as pool:
            for taken, found in pool.map(check, passes):
                runs += taken
                crashes += found
    for crash in crashes:
        print(crash)
    print(f"every-pass: {len(passes)} passes on {len(programs)} programs "
          f"({runs} runs), {len(crashes)} crashes")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())

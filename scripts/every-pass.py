#!/usr/bin/env python3
"""Runs every dt pass and pipeline alone on each input file; none may crash.

The pipelines run passes in an order that meets their preconditions; a user
running one pass by hand meets none of them. So each pass that `dt-opt
--help` lists (`--dt-...`: the passes, dt-shard and the lowering pipelines,
the test passes) runs alone on every chunk of every file, with
-split-input-file and unregistered ops allowed. It must exit 0, or 1 with a
diagnostic on stderr; a signal, another exit code or silence on failure is
a crash, reported with the file, the pass and the end of stderr.

Usage: every-pass.py --dt-opt PATH [--jobs J] [--passes REGEX] FILE...
"""

import argparse
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor


def dt_passes(dt_opt):
    """Every `--dt-` option at the top level of dt-opt's pass list."""
    out = subprocess.run([dt_opt, "--help"], check=True, capture_output=True,
                         text=True).stdout
    return sorted(set(re.findall(r"^\s+(--dt-[a-z0-9-]+)", out, re.MULTILINE)))


def run_one(dt_opt, path, flag):
    args = [dt_opt, path, flag, "-split-input-file",
            "-allow-unregistered-dialect", "-o", os.devnull]
    try:
        proc = subprocess.run(args, capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        return "timed out after 120 s"
    stderr = proc.stderr.decode(errors="replace")
    if proc.returncode == 0 or (proc.returncode == 1 and "error:" in stderr):
        return None
    return f"exit code {proc.returncode}:\n{stderr[-1500:]}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dt-opt", required=True)
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--passes", default="",
                        help="only the passes whose flag matches this regex")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    passes = [p for p in dt_passes(args.dt_opt) if re.search(args.passes, p)]
    if not passes:
        sys.exit("every-pass: dt-opt --help lists no --dt- pass")
    jobs = [(path, flag) for path in args.files for flag in passes]
    crashes = 0
    with ThreadPoolExecutor(args.jobs) as pool:
        verdicts = pool.map(lambda job: run_one(args.dt_opt, *job), jobs)
        for (path, flag), verdict in zip(jobs, verdicts):
            if verdict:
                crashes += 1
                print(f"CRASH: dt-opt {path} {flag} -split-input-file "
                      f"-allow-unregistered-dialect: {verdict}")
    print(f"every-pass: {len(passes)} passes on {len(args.files)} files "
          f"({len(jobs)} runs), {crashes} crashes")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())

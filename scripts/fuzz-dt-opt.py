#!/usr/bin/env python3
"""Feeds dt-opt damaged versions of .mlir files; it must never crash.

For each input file: the file cut at N random points, and the file with N
random bytes replaced. dt-opt must exit 0 (the damage was harmless) or 1 with a
diagnostic on stderr; anything else (a signal, an abort, another exit code,
silence on failure) is a crash, and the damaged text is written next to the
report so that it can be minimized into a regression test.

Usage: fuzz-dt-opt.py --dt-opt PATH [--cases N] [--seed S] [--out DIR]
                      [--pass-args "ARGS"] FILE...
"""

import argparse
import os
import random
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

from dt_opt_verdict import failure_of

# Bytes that tend to matter to the parser, mixed with arbitrary ones.
INTERESTING = b"()[]<>{}:,=#@%!\"-0123456789SRPx?\n "


def mutations(text: bytes, cases: int, rng: random.Random):
    for i in range(cases):
        cut = rng.randrange(len(text) + 1)
        yield f"truncate-{i}-at-{cut}", text[:cut]
    for i in range(cases):
        damaged = bytearray(text)
        for _ in range(rng.randint(1, 4)):
            pos = rng.randrange(len(damaged))
            damaged[pos] = rng.choice(INTERESTING) if rng.random() < 0.7 else rng.randrange(256)
        yield f"flip-{i}", bytes(damaged)


def run_case(dt_opt, pass_args, name, data, split, unregistered):
    with tempfile.NamedTemporaryFile(suffix=".mlir", delete=False) as f:
        f.write(data)
        path = f.name
    try:
        args = [dt_opt, path, "-o", os.devnull] + pass_args
        # Half the cases accept unknown ops, so damage to an op name still
        # reaches the verifiers instead of stopping at the parser.
        if unregistered:
            args.append("--allow-unregistered-dialect")
        if split:
            args.append("-split-input-file")
        return name, data, failure_of(args, 60)
    finally:
        os.unlink(path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dt-opt", required=True)
    parser.add_argument("--cases", type=int, default=50)
    parser.add_argument("--seed", type=int, default=20261129)
    parser.add_argument("--out", default=None, help="where crashing inputs go")
    parser.add_argument("--pass-args", default="",
                        help="dt-opt flags to run on each input, e.g. passes")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()

    pass_args = args.pass_args.split()
    rng = random.Random(args.seed)
    jobs = []
    for file in args.files:
        with open(file, "rb") as f:
            text = f.read()
        split = b"// -----" in text
        for name, data in mutations(text, args.cases, rng):
            jobs.append((f"{os.path.basename(file)}:{name}", data, split,
                         len(jobs) % 2 == 0))

    crashes = []
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for name, data, problem in pool.map(lambda j: run_case(args.dt_opt, pass_args, *j), jobs):
            if problem:
                crashes.append((name, data, problem))

    for i, (name, data, problem) in enumerate(crashes):
        print(f"CRASH {name}: {problem}")
        if args.out:
            os.makedirs(args.out, exist_ok=True)
            with open(os.path.join(args.out, f"crash-{i}.mlir"), "wb") as f:
                f.write(data)
    print(f"fuzz: {len(jobs)} damaged inputs from {len(args.files)} files, "
          f"{len(crashes)} crashes")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())

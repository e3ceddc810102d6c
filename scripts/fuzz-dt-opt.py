#!/usr/bin/env python3
"""Feeds dt-opt damaged versions of .mlir files; it must never crash.

For each input file: the file cut at N random points, and the file with N
random bytes replaced. dt-opt must exit 0 (the damage was harmless) or 1 with a
diagnostic on stderr; anything else (a signal, an abort, another exit code,
silence on failure) is a crash, and the damaged text is written next to the
report so that it can be minimized into a regression test.

dt-opt spends about 0.1 s loading the MLIR library before it reads its
input, more than most damaged inputs take. So the cases run in batches, one
dt-opt each, joined by split markers that -split-input-file takes apart
again (a failing chunk does not stop the next one; a file without markers
is one chunk either way); only a batch that crashes or times out runs its
cases one by one, to find the crashing ones.

Usage: fuzz-dt-opt.py --dt-opt PATH [--cases N] [--seed S] [--out DIR]
                      [--pass-args "ARGS"] FILE...
"""

import argparse
import os
import random
import shlex
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


# Cases in one dt-opt run; a crash reruns a batch's cases one by one.
BATCH = 20


def run_case(dt_opt, pass_args, data, split, unregistered, timeout=60):
    """What running dt-opt on `data` came to (None: no crash)."""
    with tempfile.NamedTemporaryFile(suffix=".mlir", delete=False) as f:
        f.write(data)
        path = f.name
    try:
        args = [dt_opt, path, "-o", os.devnull] + pass_args
        if unregistered:
            args.append("--allow-unregistered-dialect")
        if split:
            args.append("-split-input-file")
        return failure_of(args, timeout)
    finally:
        os.unlink(path)


def run_batch(dt_opt, pass_args, batch, unregistered):
    """The crashes among `batch` [(name, data, split)]: one run on all of
    them joined, and only if that crashes, one run each."""
    joined = b"\n// -----\n".join(data for _, data, _ in batch)
    if not run_case(dt_opt, pass_args, joined, True, unregistered, 120):
        return []
    return [(name, data, problem) for name, data, split in batch
            for problem in [run_case(dt_opt, pass_args, data, split, unregistered)] if problem]


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

    pass_args = shlex.split(args.pass_args)
    rng = random.Random(args.seed)
    # Half the cases accept unknown ops, so damage to an op name still
    # reaches the verifiers instead of stopping at the parser.
    cases, count = {False: [], True: []}, 0
    for file in args.files:
        with open(file, "rb") as f:
            text = f.read()
        split = b"// -----" in text
        for name, data in mutations(text, args.cases, rng):
            cases[count % 2 == 0].append((f"{os.path.basename(file)}:{name}", data, split))
            count += 1
    batches = [(group[i:i + BATCH], unregistered) for unregistered, group in cases.items()
               for i in range(0, len(group), BATCH)]

    crashes = []
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for found in pool.map(lambda b: run_batch(args.dt_opt, pass_args, *b), batches):
            crashes += found

    for i, (name, data, problem) in enumerate(crashes):
        print(f"CRASH {name}: {problem}")
        if args.out:
            os.makedirs(args.out, exist_ok=True)
            with open(os.path.join(args.out, f"crash-{i}.mlir"), "wb") as f:
                f.write(data)
    print(f"fuzz: {count} damaged inputs from {len(args.files)} files, "
          f"{len(crashes)} crashes")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""A stand-in for dt-run that fuzz-programs.test gives fuzz-programs.py to
test its own check of float programs against f64, the second opinion on
dt-run's: it runs the real dt-run ($DT_RUN) and, under --verify, reports
whatever happened that results past the tolerance were judged as accurate
as the reference against f64 (as dt-run does for a program that only rounds
differently), so fuzz-programs' judge must agree. With $DT_PERTURB set, the
run of the distributed program (program.mlir) that writes results
(--output-dir) has its result0's first element made 64: a wrong answer
that judge must see, and so disagree."""

import os
import struct
import subprocess
import sys

proc = subprocess.run([os.environ["DT_RUN"]] + sys.argv[1:], capture_output=True, text=True)
sys.stdout.write("".join(l for l in proc.stdout.splitlines(True) if not l.startswith("verify:")))
sys.stderr.write(proc.stderr)
if proc.returncode != 0:
    sys.exit(proc.returncode)
if "--verify" in sys.argv:
    print("against the program in f64 (the same inputs):")
    print("verify: PASS (1 result beyond tolerance, as accurate as the reference against f64)")
    sys.exit(0)
program = sys.argv[1]
if "--output-dir" in sys.argv and os.path.basename(program) == "program.mlir" and os.environ.get("DT_PERTURB"):
    path = os.path.join(sys.argv[sys.argv.index("--output-dir") + 1], "result0.npy")
    with open(path, "r+b") as f:
        data = f.read()
        start = data.index(b"\n") + 1  # the header ends with a newline
        header = data[:start]
        f.seek(start)
        # 64.0 in bf16 is 0x4280; in f16, 0x5400.
        if b"'<f4'" in header:
            f.write(struct.pack("<f", 64.0))
        else:
            f.write(struct.pack("<H", 0x4280 if b"'<V2'" in header else 0x5400))

#!/usr/bin/env python3
"""A stand-in for dt-run that fuzz-programs.test gives fuzz-programs.py to
test its check of 16-bit programs against f64: it runs the real dt-run
($DT_RUN) and, under --verify, reports "verify: FAIL" whatever happened (as
rounding past the tolerance would). With $DT_PERTURB set, the run of the
distributed program (program.mlir) that writes results (--output-dir) has
its result0's first element made 64: a wrong answer the check must see."""

import os
import struct
import subprocess
import sys

proc = subprocess.run([os.environ["DT_RUN"]] + sys.argv[1:])
if proc.returncode != 0:
    sys.exit(proc.returncode)
if "--verify" in sys.argv:
    print("verify: FAIL")
    sys.exit(1)
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

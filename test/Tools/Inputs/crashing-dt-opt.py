#!/usr/bin/env python3
"""A stand-in for dt-opt that scripts-find-crashes.test gives every-pass.py
and fuzz-dt-opt.py: it lists two passes, and --dt-crashy aborts on any chunk
that holds `crash-here`, like a pass that crashes on one program. A chunk
that holds `bad-input` fails with a diagnostic, which is not a crash."""

import os
import sys

if sys.argv[1] == "--help":
    print("  --dt-crashy   - aborts on crash-here\n  --dt-fine     - never crashes")
    sys.exit(0)
path, crashy = sys.argv[1], "--dt-crashy" in sys.argv
failed = False
for chunk in open(path, "rb").read().split(b"// -----"):
    if crashy and b"crash-here" in chunk:
        os.abort()
    if b"bad-input" in chunk:
        print("error: bad input", file=sys.stderr)
        failed = True
sys.exit(1 if failed else 0)

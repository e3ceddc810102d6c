#!/usr/bin/env python3
"""Compares two printMemrefF32 outputs number by number.

Equal up to floating-point reassociation: |a - b| <= atol + rtol * |b|, with
the tolerances of `dt-run --verify` for f32 (rtol 1e-4, atol 1e-5 times the
largest magnitude). Prints the largest errors; exits 1 on a mismatch or a
different shape of output.

Usage: compare-printed.py EXPECTED ACTUAL
"""

import re
import sys

NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|-?nan|-?inf")


def numbers(path):
    values = []
    with open(path) as f:
        for line in f:
            if "base@" in line:
                continue
            values.extend(float(x) for x in NUMBER.findall(line))
    return values


def main():
    expected, actual = numbers(sys.argv[1]), numbers(sys.argv[2])
    if len(expected) != len(actual) or not expected:
        print(f"mismatch: {len(expected)} expected values, {len(actual)} actual")
        return 1
    scale = max(abs(x) for x in expected) or 1.0
    worst_abs = worst_rel = 0.0
    bad = 0
    for e, a in zip(expected, actual):
        err = abs(e - a)
        worst_abs = max(worst_abs, err)
        worst_rel = max(worst_rel, err / max(abs(e), 1e-30))
        if err > 1e-5 * scale + 1e-4 * abs(e):
            bad += 1
    print(f"{len(expected)} values, max abs error {worst_abs:.3g}, "
          f"max rel error {worst_rel:.3g}, {bad} beyond tolerance")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

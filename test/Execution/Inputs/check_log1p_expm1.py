#!/usr/bin/env python3
"""Checks the results of log1p-expm1.mlir against Python's math.log1p and
math.expm1 (libm's, in double precision) of the same inputs: each f32
result within 2 f32 epsilons of the exact value, relative, each f64 one
within 2 f64 epsilons. Prints one line per result.

  check_log1p_expm1.py X.npy Y.npy OUTPUT_DIR
"""
import math
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "scripts"))
import npy  # noqa: E402


def main():
    x32, x64, out = npy.values(sys.argv[1]), npy.values(sys.argv[2]), sys.argv[3]
    results = [("log1p f32", math.log1p, x32, 2.0**-22), ("log1p f64", math.log1p, x64, 2.0**-51),
               ("expm1 f32", math.expm1, x32, 2.0**-22), ("expm1 f64", math.expm1, x64, 2.0**-51)]
    for k, (name, function, inputs, tolerance) in enumerate(results):
        got = npy.values(os.path.join(out, f"result{k}.npy"))
        worst, at = 0.0, None
        for x, y in zip(inputs, got):
            exact = function(x)
            error = abs(y - exact) / abs(exact)
            if error > worst:
                worst, at = error, x
        verdict = "ok" if worst <= tolerance else f"FAIL at {at!r}"
        print(f"{name}: worst relative error {worst:.3g}: {verdict}")


if __name__ == "__main__":
    main()

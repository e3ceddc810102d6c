#!/usr/bin/env python3
"""Prints a program that measures the f32 and bf16 transcendental functions
against the f64 ones, which are libm's in both dt and the oracle: for each
function, how many of N points of its range give a result further than its
tolerance from the f64 result (relative, where that result is a normal f32).

Its one argument (the pattern the tests feed, -5..5) moves each point by up
to a quarter of the step between points.

  math_accuracy.py [more]

With `more`, the functions whose f64 result upstream's own CPU lowering
gets wrong (log1p and expm1, as log(1 + x) and exp(x) - 1: no oracle for
them), and others dt approximates.
"""
import sys

N = 65536
F32_EPSILON = 2.0**-23
# (function, type, range, tolerance relative to the exact result)
FUNCTIONS = [("exp", "f32", -87.0, 88.0, 3 * F32_EPSILON),
             ("log", "f32", 1.0e-4, 50.0, 3 * F32_EPSILON),
             ("tanh", "f32", -10.0, 10.0, 3 * F32_EPSILON),
             ("erf", "f32", -4.0, 4.0, 3 * F32_EPSILON),
             # dt's own reduction and polynomials: at most 0.53 ulps of
             # the exact result at every f32 argument (docs/Runtime.md),
             # held here to one epsilon, across the whole range.
             ("sin", "f32", -100.0, 100.0, F32_EPSILON),
             ("cos", "f32", -100.0, 100.0, F32_EPSILON),
             ("sin", "f32", -1.0e6, 1.0e6, F32_EPSILON),
             ("cos", "f32", -1.0e15, 1.0e15, F32_EPSILON),
             ("sin", "f32", -3.0e38, 3.0e38, F32_EPSILON),
             # bf16: one unit of its 8-bit precision.
             ("exp", "bf16", -80.0, 80.0, 2.0**-7),
             ("tanh", "bf16", -6.0, 6.0, 2.0**-7),
             ("sin", "bf16", -6.0, 6.0, 2.0**-7)]
MORE = [("log1p", "f32", -0.999, 10.0, 3 * F32_EPSILON),
        ("log1p", "f32", -1.0e-3, 1.0e-3, 3 * F32_EPSILON),
        ("log1p", "f32", 10.0, 1.0e30, 3 * F32_EPSILON),
        ("expm1", "f32", -20.0, 88.0, 3 * F32_EPSILON),
        ("expm1", "f32", -1.0e-3, 1.0e-3, 3 * F32_EPSILON),
        ("log2", "f32", 1.0e-30, 1.0e30, 3 * F32_EPSILON),
        ("log2", "f32", 0.5, 2.0, 3 * F32_EPSILON),
        ("erfc", "f32", -4.0, 9.0, 3 * F32_EPSILON),
        ("log1p", "bf16", -0.9, 6.0, 2.0**-7)]


def measure(k, fn, ty, lo, hi, tolerance, acc, functions):
    count = f"tensor<{len(functions)}xf32>"
    if ty == "f32":
        compute = [f"%x = arith.truncf %xd : f64 to f32", f"%y = math.{fn} %x : f32",
                   "%xe = arith.extf %x : f32 to f64"]
    else:
        compute = [f"%x = arith.truncf %xd : f64 to {ty}", f"%yh = math.{fn} %x : {ty}",
                   f"%y = arith.extf %yh : {ty} to f32", f"%xe = arith.extf %x : {ty} to f64"]
    body = [
        "%i = linalg.index 0 : index",
        "%ii = arith.index_cast %i : index to i64",
        "%fi = arith.sitofp %ii : i64 to f64",
        "%pd = arith.extf %p : f32 to f64",
        "%five = arith.constant 5.0 : f64",
        "%forty = arith.constant 40.0 : f64",
        "%ps = arith.addf %pd, %five : f64",
        "%nudge = arith.divf %ps, %forty : f64",
        "%at = arith.addf %fi, %nudge : f64",
        f"%step = arith.constant {(hi - lo) / N:.17e} : f64",
        f"%lo = arith.constant {lo:.17e} : f64",
        "%off = arith.mulf %at, %step : f64",
        "%xd = arith.addf %lo, %off : f64",
        *compute,
        f"%exact = math.{fn} %xe : f64",
        "%ye = arith.extf %y : f32 to f64",
        "%d = arith.subf %ye, %exact : f64",
        "%err = math.absf %d : f64",
        "%mag = math.absf %exact : f64",
        f"%tolerance = arith.constant {tolerance:.17e} : f64",
        "%allowed = arith.mulf %mag, %tolerance : f64",
        "%far = arith.cmpf ugt, %err, %allowed : f64",
        "%smallest = arith.constant 1.1754943508222875e-38 : f64",
        "%normal = arith.cmpf ogt, %mag, %smallest : f64",
        "%bad = arith.andi %far, %normal : i1",
        "%one = arith.constant 1.0 : f32",
        "%none = arith.constant 0.0 : f32",
        "%add = arith.select %bad, %one, %none : f32",
        "%n = arith.addf %acc, %add : f32",
        "linalg.yield %n : f32",
    ]
    return "\n".join([
        f"  // {fn} on {ty} over [{lo}, {hi}], within {tolerance / (F32_EPSILON if ty == 'f32' else 1):g}"
        + (" f32 epsilons" if ty == "f32" else ""),
        f"  %r{k} = linalg.generic {{indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ({k})>],",
        '                        iterator_types = ["reduction"]}',
        f"      ins(%x0 : tensor<{N}xf32>) outs({acc} : {count}) {{",
        "  ^bb0(%p: f32, %acc: f32):",
        *("    " + line for line in body),
        f"  }} -> {count}"])


def main():
    functions = MORE if sys.argv[1:] == ["more"] else FUNCTIONS
    count = f"tensor<{len(functions)}xf32>"
    lines = [f"func.func @main(%x0: tensor<{N}xf32>) -> {count} {{",
             "  %zero = arith.constant 0.0 : f32",
             f"  %e = tensor.empty() : {count}",
             f"  %r = linalg.fill ins(%zero : f32) outs(%e : {count}) -> {count}"]
    acc = "%r"
    for k, function in enumerate(functions):
        lines.append(measure(k, *function, acc, functions))
        acc = f"%r{k}"
    lines += [f"  return {acc} : {count}", "}"]
    print("\n".join(lines))


if __name__ == "__main__":
    main()

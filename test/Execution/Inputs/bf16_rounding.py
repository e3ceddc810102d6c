#!/usr/bin/env python3
"""f64 -> bf16 rounding (dt-expand-bf16-truncation) against exact rounding
in plain Python (fractions), on the inputs a double rounding gets wrong.

  bf16_rounding.py write DIR   writes DIR/prog.mlir, DIR/in.npy (f64) and
                               DIR/expected.txt (the bf16 bits of each)
  bf16_rounding.py check DIR   reads DIR/out/result0.npy and prints how many
                               results differ from the exact rounding

A subnormal bf16 result may come back as a zero of the same sign: the CPU's
own f32 -> bf16 instruction (AVX512-BF16's vcvtneps2bf16) flushes them.
"""

import math
import os
import random
import struct
import sys
from fractions import Fraction

SMALLEST_NORMAL = 2.0**-126


def bits32(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def float32(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def bf16_exact(d):
    """The bf16 bits of d rounded once, to nearest, ties to even (None: NaN)."""
    if math.isnan(d):
        return None
    if math.isinf(d) or d == 0:
        return bits32(d) >> 16
    sign = 0x8000 if d < 0 else 0
    _, e = math.frexp(abs(d))  # |d| = m 2^e, m in [0.5, 1)
    quantum = Fraction(2) ** (max(e - 1, -126) - 7)  # bf16 keeps 8 bits
    value = round(Fraction(abs(d)) / quantum) * quantum  # ties to even
    if value >= Fraction(2) ** 128:
        return sign | 0x7F80
    return sign | (bits32(float(value)) >> 16)


def inputs():
    rng = random.Random(7)
    values = [0.0, -0.0, math.inf, -math.inf, 1e39, -1e39, 3.3895313892515355e38, 3.39e38,
              1e-50, -1e-50, 1e-40, 5e-324, 1.0, -1.0, 1.00390625, 1.0078125, 1.01171875]
    # Midpoints between neighbouring bf16 values, and doubles just beside
    # them: rounded to f32 first (to nearest), these land on the midpoint,
    # and the second rounding goes the wrong way.
    for _ in range(3000):
        low = ((rng.randint(1, 253) << 7) | rng.randrange(128))
        mid = (float32(low << 16) + float32((low + 1) << 16)) / 2  # exact in f64
        for delta in (0.0, 1e-12, -1e-12, 1e-9, -1e-9):
            values += [mid * (1 + delta), -mid * (1 + delta)]
        values += [math.nextafter(mid, math.inf), math.nextafter(mid, -math.inf)]
    for _ in range(20000):
        values.append(rng.choice([-1, 1]) * math.ldexp(rng.random() + 0.5, rng.randint(-140, 130)))
    return values


def write(directory):
    values = inputs()
    n = len(values)
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (%d,), }" % n
    header += " " * (118 - len(header)) + "\n"
    with open(os.path.join(directory, "in.npy"), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack(f"<{n}d", *values))
    with open(os.path.join(directory, "prog.mlir"), "w") as f:
        f.write(f"func.func @main(%d: tensor<{n}xf64>) -> tensor<{n}xbf16> {{\n"
                f"  %b = arith.truncf %d : tensor<{n}xf64> to tensor<{n}xbf16>\n"
                f"  return %b : tensor<{n}xbf16>\n}}\n")
    with open(os.path.join(directory, "expected.txt"), "w") as f:
        f.write("\n".join(str(bf16_exact(v)) for v in values) + "\n")


def check(directory):
    with open(os.path.join(directory, "out", "result0.npy"), "rb") as f:
        data = f.read()
    length = struct.unpack("<H", data[8:10])[0]
    body = data[10 + length:]
    got = struct.unpack(f"<{len(body) // 2}H", body)
    with open(os.path.join(directory, "expected.txt")) as f:
        expected = [None if w == "None" else int(w) for w in f.read().split()]
    flushed, wrong = 0, []
    for i, (g, e) in enumerate(zip(got, expected)):
        if e is None or g == e:
            continue
        subnormal = (e & 0x7F80) == 0
        if subnormal and g == (e & 0x8000):
            flushed += 1
        else:
            wrong.append((i, hex(g), hex(e)))
    if len(got) != len(expected):
        wrong.append(("count", len(got), len(expected)))
    print(f"bf16 rounding: {len(got)} values, {flushed} subnormals flushed to zero, "
          f"{len(wrong)} wrong {wrong[:5]}")


if __name__ == "__main__":
    {"write": write, "check": check}[sys.argv[1]](sys.argv[2])

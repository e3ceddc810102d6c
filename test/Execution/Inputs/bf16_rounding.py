#!/usr/bin/env python3
"""f64 -> bf16 and f32 -> bf16 rounding (dt-expand-bf16-conversions) against
exact rounding in plain Python (fractions), on the inputs a double rounding
or a rounding on the bits gets wrong.

  bf16_rounding.py write DIR   writes DIR/prog.mlir, DIR/in.npy (f64),
                               DIR/in32.npy (f32) and DIR/expected.txt and
                               DIR/expected32.txt (the bf16 bits of each)
  bf16_rounding.py check DIR   reads DIR/out/result0.npy and result1.npy and
                               prints how many results differ from the
                               exact rounding

Subnormal results are rounded as any other (no flush to zero); an f32 NaN
keeps its sign and top payload bits with the quiet bit set.
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


F32_COUNT = 27000


def inputs32():
    """f32 bit patterns: the special values, the bf16 midpoints (ties, to
    even and odd) and their neighbours, NaNs whose payload the rounding's
    carry would turn into an infinity, and random patterns."""
    rng = random.Random(11)
    bits = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F7F8000,
            0x7F7F7FFF, 0x7F7E8000, 0x00000001, 0x80000001, 0x007FFFFF, 0x00008000,
            0x00018000, 0x00007FFF, 0x7F800001, 0xFF800001, 0x7F80FFFF, 0x7FC00000,
            0x7FFFFFFF, 0xFFFFFFFF, 0xFFC00001]
    for _ in range(3000):
        high = rng.randrange(1 << 16)
        bits += [high << 16 | low for low in (0x8000, 0x7FFF, 0x8001, 0x0000, 0xFFFF)]
    while len(bits) < F32_COUNT:
        bits.append(rng.getrandbits(32))
    return bits


def bf16_of_f32(b):
    """The bf16 bits of the f32 with bits b rounded once; a NaN quieted."""
    if (b & 0x7F800000) == 0x7F800000 and b & 0x7FFFFF:
        return (b >> 16) | 0x40
    return bf16_exact(float32(b))


def write_npy(path, descr, fmt, values):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, len(values))
    header += " " * (118 - len(header)) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack(f"<{len(values)}{fmt}", *values))


def write(directory):
    values, bits = inputs(), inputs32()
    n, m = len(values), len(bits)
    write_npy(os.path.join(directory, "in.npy"), "<f8", "d", values)
    write_npy(os.path.join(directory, "in32.npy"), "<f4", "I", bits)
    with open(os.path.join(directory, "prog.mlir"), "w") as f:
        f.write(f"func.func @main(%d: tensor<{n}xf64>, %f: tensor<{m}xf32>) -> "
                f"(tensor<{n}xbf16>, tensor<{m}xbf16>) {{\n"
                f"  %b = arith.truncf %d : tensor<{n}xf64> to tensor<{n}xbf16>\n"
                f"  %c = arith.truncf %f : tensor<{m}xf32> to tensor<{m}xbf16>\n"
                f"  return %b, %c : tensor<{n}xbf16>, tensor<{m}xbf16>\n}}\n")
    with open(os.path.join(directory, "expected.txt"), "w") as f:
        f.write("\n".join(str(bf16_exact(v)) for v in values) + "\n")
    with open(os.path.join(directory, "expected32.txt"), "w") as f:
        f.write("\n".join(str(bf16_of_f32(b)) for b in bits) + "\n")


def check(directory):
    for source, result, expectation in (("f64", "result0.npy", "expected.txt"),
                                        ("f32", "result1.npy", "expected32.txt")):
        with open(os.path.join(directory, "out", result), "rb") as f:
            data = f.read()
        length = struct.unpack("<H", data[8:10])[0]
        body = data[10 + length:]
        got = struct.unpack(f"<{len(body) // 2}H", body)
        with open(os.path.join(directory, expectation)) as f:
            expected = [None if w == "None" else int(w) for w in f.read().split()]
        wrong = [(i, hex(g), hex(e)) for i, (g, e) in enumerate(zip(got, expected))
                 if e is not None and g != e]
        if len(got) != len(expected):
            wrong.append(("count", len(got), len(expected)))
        print(f"bf16 rounding from {source}: {len(got)} values, {len(wrong)} wrong {wrong[:5]}")


if __name__ == "__main__":
    {"write": write, "check": check}[sys.argv[1]](sys.argv[2])

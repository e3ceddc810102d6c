#!/usr/bin/env python3
"""The order of a floating-point row sum on the CPU target
(dt-split-reductions), replayed in plain Python with f32 rounding.

A row of n elements accumulates element j into lane j mod 16 (the lanes start
at -0.0), and the 16 lanes are then added to the row's initial value in lane
order; a row whose length 16 does not divide ends with fewer than 16 elements,
which go into the first lanes by the same rule. The result is the same bits on
every CPU, and differs from the one-element-at-a-time chain on most rows. A
reduction with two outputs (a sum and a sum of squares in one pass) keeps
lanes for each, in the same order.

  reduction_order.py write DIR   writes DIR/prog.mlir and DIR/in<i>.npy
  reduction_order.py check DIR   compares DIR/out/result<i>.npy bit for bit
                                 with the replayed order
  reduction_order.py check-zeros DIR OUT
                                 checks only that the rows of -0.0 sum to -0.0
                                 in DIR/OUT (a target that adds in another order)
"""

import math
import os
import random
import struct
import sys

LANES = 16
# (rows, length, initial value, valid length, with squares, named): a
# length the lanes divide, two they do not, rows of only -0.0 started at
# -0.0 (their sum is -0.0), a row whose elements from 150 on are masked
# off, as an uneven shard's padding is (linalg.index and a select in the
# body), rows whose sum of squares is a second output of the same
# reduction, and a row sum written as linalg.reduce (a generic by the time
# dt-split-reductions runs: dt-generalize-elementwise).
CASES = [(6, 256, 0.0, None, False, False), (6, 200, 0.0, None, False, False),
         (5, 1001, 0.0, None, False, False), (3, 80, -0.0, None, False, False),
         (4, 200, 0.0, 150, False, False), (4, 300, 0.0, None, True, False),
         (5, 1000, 0.0, None, False, True)]


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def lane_sum(row, initial):
    lanes = [-0.0] * LANES
    for j, x in enumerate(row):
        lanes[j % LANES] = f32(lanes[j % LANES] + x)
    total = initial
    for lane in lanes:
        total = f32(total + lane)
    return total


def chain_sum(row, initial):
    total = initial
    for x in row:
        total = f32(total + x)
    return total


def rows(case_index, count, length, initial):
    if initial == -0.0 and math.copysign(1, initial) < 0:
        return [[-0.0] * length for _ in range(count)]
    rng = random.Random(case_index)
    return [[f32(rng.choice([-1, 1]) * math.ldexp(rng.random(), rng.randint(-12, 12)))
             for _ in range(length)] for _ in range(count)]


def write_npy(path, shape, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
        "".join(f"{d}, " for d in shape))
    header += " " * (118 - len(header)) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack(f"<{len(values)}f", *values))


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    length = struct.unpack("<H", data[8:10])[0]
    body = data[10 + length:]
    return struct.unpack(f"<{len(body) // 4}f", body)


def masked(valid, squares):
    """The body: acc + a, or under the mask j < valid; with squares, also
    acc2 + a * a into the second output."""
    if squares:
        return """    %r = arith.addf %acc, %a : f32
    %aa = arith.mulf %a, %a : f32
    %q = arith.addf %acc2, %aa : f32
    linalg.yield %r, %q : f32, f32"""
    if valid is None:
        return "    %r = arith.addf %acc, %a : f32\n    linalg.yield %r : f32"
    return f"""    %s = arith.addf %acc, %a : f32
    %j = linalg.index 1 : index
    %valid = arith.constant {valid} : index
    %in = arith.cmpi ult, %j, %valid : index
    %r = arith.select %in, %s, %acc : f32
    linalg.yield %r : f32"""


def write(directory):
    arguments, results, body, values = [], [], [], []
    for i, (count, length, initial, valid, squares, named) in enumerate(CASES):
        data = rows(i, count, length, initial)
        write_npy(os.path.join(directory, f"in{i}.npy"), (count, length),
                  [x for row in data for x in row])
        arguments.append(f"%x{i}: tensor<{count}x{length}xf32>")
        row = f"tensor<{count}xf32>"
        outs = f"%f{i} : {row}"
        maps = "affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>"
        accs = "%acc: f32"
        made = f"%s{i}"
        if squares:
            outs = f"%f{i}, %f{i} : {row}, {row}"
            maps += ", affine_map<(i, j) -> (i)>"
            accs += ", %acc2: f32"
            made = f"%s{i}:2"
        body.append(f"""  %init{i} = arith.constant {'-0.0' if math.copysign(1, initial) < 0 else '0.0'} : f32
  %e{i} = tensor.empty() : {row}
  %f{i} = linalg.fill ins(%init{i} : f32) outs(%e{i} : {row}) -> {row}""")
        if named:
            body.append(f"  {made} = linalg.reduce {{ arith.addf }} ins(%x{i} : "
                        f"tensor<{count}x{length}xf32>) outs({outs}) dimensions = [1]")
        else:
            body.append(f"""  {made} = linalg.generic {{indexing_maps = [{maps}],
                         iterator_types = ["parallel", "reduction"]}}
      ins(%x{i} : tensor<{count}x{length}xf32>) outs({outs}) {{
  ^bb0(%a: f32, {accs}):
{masked(valid, squares)}
  }} -> {f"({row}, {row})" if squares else row}""")
        results += [row] * (2 if squares else 1)
        values += [f"%s{i}#0", f"%s{i}#1"] if squares else [f"%s{i}"]
    with open(os.path.join(directory, "prog.mlir"), "w") as f:
        f.write(f"func.func @main({', '.join(arguments)}) -> ({', '.join(results)}) {{\n")
        f.write("\n".join(body) + "\n")
        f.write(f"  return {', '.join(values)} : {', '.join(results)}\n}}\n")


def check(directory):
    wrong, chain_differs, total = [], 0, 0
    result = 0
    for i, (count, length, initial, valid, squares, _) in enumerate(CASES):
        data = [row[:valid] for row in rows(i, count, length, initial)]
        # The masked elements leave their lanes as they were.
        outputs = [data]
        if squares:
            outputs.append([[f32(x * x) for x in row] for row in data])
        for terms in outputs:
            got = read_npy(os.path.join(directory, "out", f"result{result}.npy"))
            result += 1
            for r, row in enumerate(terms):
                total += 1
                expected = lane_sum(row, initial)
                chain_differs += bits(chain_sum(row, initial)) != bits(expected)
                if r >= len(got) or bits(got[r]) != bits(expected):
                    wrong.append((i, r, got[r] if r < len(got) else None, expected))
    print(f"row sums: {total} rows, {len(wrong)} not in lane order {wrong[:4]}, "
          f"{chain_differs} where the chain's order gives other bits")


def check_zeros(directory, out):
    rows, wrong = 0, 0
    for i, (count, _, initial, _, _, _) in enumerate(CASES):
        if math.copysign(1, initial) > 0:
            continue
        got = read_npy(os.path.join(directory, out, f"result{i}.npy"))
        rows += len(got)
        wrong += sum(bits(g) != bits(-0.0) for g in got)
    print(f"rows of -0.0: {rows} rows, {wrong} not -0.0")


if __name__ == "__main__":
    if sys.argv[1] == "check-zeros":
        check_zeros(sys.argv[2], sys.argv[3])
    else:
        {"write": write, "check": check}[sys.argv[1]](sys.argv[2])

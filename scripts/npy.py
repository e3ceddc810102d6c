#!/usr/bin/env python3
"""Small .npy helpers for dt's tests, without numpy.

  npy.py print FILE
      Prints the values of FILE one per line (f32, f64, f16, bf16, i32, i64, bool as 0 or 1), in the
      form scripts/compare-printed.py reads.
  npy.py rewrite IN OUT [--descr D] [--shape A,B] [--fortran] [--truncate N]
                        [--poke OFFSET=BYTE]  (BYTE in hex, after the rest)
      Copies IN to OUT with a changed header or N bytes cut off the end:
      the malformed inputs of the fault tests.
  npy.py compare DIR_A DIR_B [RTOL ATOL]
      Compares every resultI.npy of DIR_A with DIR_B's, elementwise:
      |a - b| <= ATOL * max|b| + RTOL * |b| (defaults 1e-4, 1e-5; NaN
      matches NaN only, an infinity the same infinity); prints one line per
      result and "compare: PASS" or "compare: FAIL".
  npy.py pattern OUT SHAPE [I=VALUE...] [--descr D]
      Writes an f32 array (or D: <f8, <i4, <i8, <f2, <V2 for bf16) of SHAPE
      (A,B,...) holding the values dt-test-add-driver feeds
      ((7k mod 11) - 5), element I (row-major) set to VALUE (a float: nan,
      inf, -0.0 are fine).
  npy.py permute IN OUT P,P,...
      Writes IN with its dims permuted (dim i of OUT is dim P[i] of IN), the
      elements' bytes as they are, any dtype: a transpose's expected
      result.
  npy.py array OUT DESCR SHAPE V,V,...
      Writes the values given, row-major, as DESCR (<f4, <i8, ...).
  npy.py mask OUT SHAPE [I=BYTE...]
      Writes a bool array (|b1) of SHAPE: element k is 1 when k mod 3 is 0,
      element I set to the raw BYTE (2 makes a malformed bool).
  npy.py pattern-run DT_RUN PROGRAM [DT_RUN_ARGS...]
      Writes every argument of the entry as a .npy of the values that
      dt-test-add-driver feeds mlir-runner ((7k mod 11) - 5, f32), runs
      DT_RUN on them with --output-dir, and prints every result: the same
      numbers the upstream oracle prints, for compare-printed.py.
"""

import ast
import math
import os
import struct
import subprocess
import sys
import tempfile

FORMATS = {"<f4": "f", "<f8": "d", "<i4": "i", "<i8": "q", "<f2": "e", "|b1": "B"}


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", f"{path}: not a .npy file"
    major = data[6]
    if major == 1:
        length, start = struct.unpack("<H", data[8:10])[0], 10
    else:
        length, start = struct.unpack("<I", data[8:12])[0], 12
    header = ast.literal_eval(data[start:start + length].decode("latin1"))
    return header, data[start + length:]


def write(path, header, payload):
    text = repr(header)
    total = 10 + len(text) + 1
    text += " " * ((64 - total % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)))
        f.write(text.encode("latin1") + payload)


def values(path):
    header, payload = read(path)
    if header["descr"] == "<V2":  # bfloat16, dt's convention
        count = len(payload) // 2
        halves = struct.unpack(f"<{count}H", payload[:2 * count])
        return [struct.unpack("<f", struct.pack("<I", h << 16))[0] for h in halves]
    code = FORMATS[header["descr"]]
    count = len(payload) // struct.calcsize(code)
    return struct.unpack(f"<{count}{code}", payload[:count * struct.calcsize(code)])


def cmd_print(args):
    for v in values(args[0]):
        print(v)


def cmd_rewrite(args):
    source, target, rest = args[0], args[1], args[2:]
    header, payload = read(source)
    pokes = []
    i = 0
    while i < len(rest):
        flag = rest[i]
        if flag == "--descr":
            header["descr"] = rest[i + 1]
            i += 2
        elif flag == "--shape":
            header["shape"] = tuple(int(x) for x in rest[i + 1].split(",") if x)
            i += 2
        elif flag == "--fortran":
            header["fortran_order"] = True
            i += 1
        elif flag == "--truncate":
            payload = payload[:len(payload) - int(rest[i + 1])]
            i += 2
        elif flag == "--poke":
            offset, byte = rest[i + 1].split("=")
            pokes.append((int(offset), int(byte, 16)))
            i += 2
        else:
            sys.exit(f"npy.py rewrite: unknown flag {flag}")
    write(target, header, payload)
    if pokes:
        with open(target, "r+b") as f:
            for offset, byte in pokes:
                f.seek(offset)
                f.write(bytes([byte]))


def cmd_pattern_run(args):
    dt_run, program, extra = args[0], args[1], args[2:]
    entry = "main"
    for i, a in enumerate(extra):
        if a.startswith("--entry="):
            entry = a.split("=", 1)[1]
        elif a == "--entry":
            entry = extra[i + 1]
    with tempfile.TemporaryDirectory() as tmp:
        artifact = program
        if program.endswith(".mlir"):
            artifact = os.path.join(tmp, "program.so")
            compiler = os.path.join(os.path.dirname(dt_run), "dt-compile")
            subprocess.run([compiler, program, "-o", artifact], check=True)
        description = subprocess.run([dt_run, artifact, "--describe"], check=True,
                                      capture_output=True, text=True).stdout
        inputs, current, results = [], None, 0
        for line in description.splitlines():
            words = line.split()
            if words[:1] == ["entry"]:
                current = words[1]
            elif current == entry and words[:1] == ["arg"]:
                index, dtype, shape = int(words[1]), words[3], words[4]
                assert dtype == "f32", "pattern-run feeds f32 arguments only"
                dims = [] if shape == "scalar" else [int(d) for d in shape.split("x")]
                count = 1
                for d in dims:
                    count *= d
                data = struct.pack(f"<{count}f", *[float((7 * k) % 11 - 5) for k in range(count)])
                path = os.path.join(tmp, f"arg{index}.npy")
                write(path, {"descr": "<f4", "fortran_order": False, "shape": tuple(dims)}, data)
                inputs += ["--input", f"{index}={path}"]
            elif current == entry and words[:1] == ["result"]:
                results += 1
        out = os.path.join(tmp, "out")
        subprocess.run([dt_run, artifact, *inputs, "--output-dir", out, *extra],
                       check=True, stdout=sys.stderr)
        for i in range(results):
            cmd_print([os.path.join(out, f"result{i}.npy")])


def cmd_compare(args):
    a_dir, b_dir = args[0], args[1]
    rtol = float(args[2]) if len(args) > 2 else 1e-4
    atol = float(args[3]) if len(args) > 3 else 1e-5
    names = sorted(n for n in os.listdir(b_dir) if n.startswith("result"))
    ok = bool(names)
    for name in names:
        a, b = values(os.path.join(a_dir, name)), values(os.path.join(b_dir, name))
        if len(a) != len(b):
            print(f"{name}: {len(a)} vs {len(b)} elements: MISMATCH")
            ok = False
            continue
        finite = [(x, y) for x, y in zip(a, b) if math.isfinite(x) and math.isfinite(y)]
        scale = max((abs(y) for _, y in finite), default=0.0)
        worst = max((abs(x - y) for x, y in finite), default=0.0)

        def same(x, y):
            if not (math.isfinite(x) and math.isfinite(y)):
                return (math.isnan(x) and math.isnan(y)) or x == y
            return abs(x - y) <= atol * scale + rtol * abs(y)

        bad = sum(1 for x, y in zip(a, b) if not same(x, y))
        print(f"{name}: max abs err {worst:.3g} (max|ref| {scale:.3g}): "
              f"{'ok' if bad == 0 else f'{bad} beyond tolerance: MISMATCH'}")
        ok = ok and bad == 0
    print(f"compare: {'PASS' if ok else 'FAIL'}")
    sys.exit(0 if ok else 1)


def cmd_pattern(args):
    descr = "<f4"
    if "--descr" in args:
        at = args.index("--descr")
        descr = args[at + 1]
        args = args[:at] + args[at + 2:]
    target, shape = args[0], tuple(int(x) for x in args[1].split(",") if x)
    count = 1
    for extent in shape:
        count *= extent
    data = [float((7 * k) % 11 - 5) for k in range(count)]
    for setting in args[2:]:
        index, value = setting.split("=")
        data[int(index)] = float(value)
    header = {"descr": descr, "fortran_order": False, "shape": shape}
    if descr == "<V2":  # bfloat16: the top half of the f32 (exact for these values)
        words = struct.unpack(f"<{count}I", struct.pack(f"<{count}f", *data))
        payload = struct.pack(f"<{count}H", *(w >> 16 for w in words))
    else:
        code = FORMATS[descr]
        cast = float if code in "fde" else int
        payload = struct.pack(f"<{count}{code}", *(cast(v) for v in data))
    write(target, header, payload)


def cmd_permute(args):
    source, target = args[0], args[1]
    order = [int(p) for p in args[2].split(",")]
    header, payload = read(source)
    shape = tuple(header["shape"])
    size = 2 if header["descr"] == "<V2" else struct.calcsize(FORMATS[header["descr"]])
    assert sorted(order) == list(range(len(shape))), f"{args[2]}: not a permutation of {shape}"
    strides = [size] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    permuted = tuple(shape[p] for p in order)
    out = bytearray()
    index = [0] * len(permuted)
    count = 1
    for extent in permuted:
        count *= extent
    for _ in range(count):
        at = sum(index[i] * strides[order[i]] for i in range(len(order)))
        out += payload[at:at + size]
        for d in range(len(index) - 1, -1, -1):  # the next index, row-major
            index[d] += 1
            if index[d] < permuted[d]:
                break
            index[d] = 0
    header["shape"] = permuted
    write(target, header, bytes(out))


def cmd_array(args):
    target, descr = args[0], args[1]
    shape = tuple(int(x) for x in args[2].split(",") if x)
    code = FORMATS[descr]
    cast = float if code in "fde" else int
    data = [cast(v) for v in args[3].split(",")]
    header = {"descr": descr, "fortran_order": False, "shape": shape}
    write(target, header, struct.pack(f"<{len(data)}{code}", *data))


def cmd_mask(args):
    target, shape = args[0], tuple(int(x) for x in args[1].split(",") if x)
    count = 1
    for extent in shape:
        count *= extent
    data = [1 if k % 3 == 0 else 0 for k in range(count)]
    for setting in args[2:]:
        index, value = setting.split("=")
        data[int(index)] = int(value)
    header = {"descr": "|b1", "fortran_order": False, "shape": shape}
    write(target, header, bytes(data))


def main():
    commands = {"print": cmd_print, "rewrite": cmd_rewrite, "pattern-run": cmd_pattern_run,
                "compare": cmd_compare, "pattern": cmd_pattern, "mask": cmd_mask,
                "array": cmd_array, "permute": cmd_permute}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        sys.exit(__doc__)
    commands[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    main()

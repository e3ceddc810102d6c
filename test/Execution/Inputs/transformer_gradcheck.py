"""Finite-difference check of the transformer benchmark's gradients.

    transformer_gradcheck.py DT_RUN PROGRAM_OR_ARTIFACT WORKDIR

Runs the small f32 version of bench/gen_gpu_programs.py's transformer
(gen_gpu_programs.py DIR --small-transformer) on fixed inputs, and compares
some entries of each returned gradient with central finite differences of
the block's loss, computed here in plain Python (no numpy) from the
formulas of transformer()'s docstring. Prints "gradcheck: ... PASS" when
every relative error is below 1e-2.
"""
import math
import os
import random
import struct
import subprocess
import sys

# The sizes of gen_gpu_programs.py --small-transformer.
S, D, NH, F = 16, 16, 2, 32
HD = D // NH
random.seed(1)
def mat(r, c, scale): return [[random.uniform(-1, 1) * scale for _ in range(c)] for _ in range(r)]
P = {"x": mat(S, D, 1), "t": mat(S, D, 1), "wq": mat(D, D, .3), "wk": mat(D, D, .3), "wv": mat(D, D, .3),
     "wo": mat(D, D, .3), "w1": mat(D, F, .3), "w2": mat(F, D, .3)}
def mm(a, b): return [[sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))] for i in range(len(a))]
def rms(x): return [[v / math.sqrt(sum(u * u for u in row) / D + 1e-5) for v in row] for row in x]
def loss(P):
    x = P["x"]; n1 = rms(x)
    q, k, v = mm(n1, P["wq"]), mm(n1, P["wk"]), mm(n1, P["wv"])
    ctx = [[0.0] * D for _ in range(S)]
    for h in range(NH):
        o = h * HD
        for s in range(S):
            sc = [sum(q[s][o + d] * k[t][o + d] for d in range(HD)) / math.sqrt(HD) for t in range(S)]
            m = max(sc); e = [math.exp(z - m) for z in sc]; z = sum(e)
            for d in range(HD):
                ctx[s][o + d] = sum(e[t] / z * v[t][o + d] for t in range(S))
    a_ = mm(ctx, P["wo"]); h1 = [[x[i][j] + a_[i][j] for j in range(D)] for i in range(S)]
    n2 = rms(h1); a = [[max(u, 0.0) for u in row] for row in mm(n2, P["w1"])]
    y = mm(a, P["w2"])
    return 0.5 * sum((h1[i][j] + y[i][j] - P["t"][i][j]) ** 2 for i in range(S) for j in range(D))
def write(path, m):
    data = struct.pack(f"<{len(m) * len(m[0])}f", *[v for row in m for v in row])
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (len(m), len(m[0]))
    header += " " * (63 - len(header) % 64) + "\n"
    open(path, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)
def read(path):
    b = open(path, "rb").read(); hl = struct.unpack("<H", b[8:10])[0]; h = b[10:10 + hl].decode()
    shape = eval(h)["shape"]; vals = struct.unpack(f"<{shape[0] * shape[1]}f", b[10 + hl:])
    return [list(vals[i * shape[1]:(i + 1) * shape[1]]) for i in range(shape[0])]
os.chdir(sys.argv[3])
args = []
for n, m in P.items():
    # Round to f32 so that Python and dt see the same inputs.
    P[n] = [[struct.unpack("<f", struct.pack("<f", v))[0] for v in row] for row in m]
    write(f"{n}.npy", P[n]); args.append(f"--input={n}={n}.npy")
subprocess.run([sys.argv[1], sys.argv[2], *args, "--output-dir=out"], check=True, stdout=subprocess.DEVNULL)
names = ["dx", "dwq", "dwk", "dwv", "dwo", "dw1", "dw2"]
wrt = ["x", "wq", "wk", "wv", "wo", "w1", "w2"]
worst = 0
for i, (g, w) in enumerate(zip(names, wrt)):
    grad = read(f"out/result{i}.npy")
    for _ in range(4):
        r, c = random.randrange(len(grad)), random.randrange(len(grad[0]))
        eps = 1e-3; old = P[w][r][c]
        P[w][r][c] = old + eps; lp = loss(P); P[w][r][c] = old - eps; lm = loss(P); P[w][r][c] = old
        fd = (lp - lm) / (2 * eps)
        err = abs(fd - grad[r][c]) / max(1.0, abs(fd))
        worst = max(worst, err)
        print(f"{g}[{r},{c}]: dt {grad[r][c]:.5f} finite difference {fd:.5f}")
print(f"gradcheck: worst relative error {worst:.2e}", "PASS" if worst < 1e-2 else "FAIL")

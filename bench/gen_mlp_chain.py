#!/usr/bin/env python3
"""Generates a Megatron-MLP chain in dt's input language or with upstream
`shard` annotations.

Each of the L layers: h = tanh(x @ W1) with W1 column-sharded, y = h @ W2 with
W2 row-sharded, x' = y + x (residual). Sizes: batch 32, hidden 256, ffn 1024.
Elementwise ops are linalg.generic (upstream's sharding interface has no
tensor-level arith/math models), the same in both dialects.

Usage: gen_mlp_chain.py --layers L [--tp N] [--dialect dt|shard]
"""

import argparse

BATCH, HIDDEN, FFN = 32, 256, 1024
ID2 = "affine_map<(i, j) -> (i, j)>"


def generic(out, op, args, shape):
    """An elementwise linalg.generic applying `op` (tanh or add)."""
    t = f"tensor<{shape}xf32>"
    n = len(args)
    maps = ", ".join([ID2] * (n + 1))
    ins = ", ".join(args)
    types = ", ".join([t] * n)
    block_args = ", ".join(f"%b{i}: f32" for i in range(n + 1))
    body = ("math.tanh %b0 : f32" if op == "tanh" else "arith.addf %b0, %b1 : f32")
    return [
        f"  %{out}_init = tensor.empty() : {t}",
        f"  %{out} = linalg.generic {{indexing_maps = [{maps}], "
        f"iterator_types = [\"parallel\", \"parallel\"]}} ins({ins} : {types}) "
        f"outs(%{out}_init : {t}) {{",
        f"  ^bb0({block_args}):",
        f"    %r = {body}",
        f"    linalg.yield %r : f32",
        f"  }} -> {t}",
    ]


def matmul(out, a, b, m, k, n):
    return [
        f"  %{out}_init = tensor.empty() : tensor<{m}x{n}xf32>",
        f"  %{out}_zero = linalg.fill ins(%zero : f32) outs(%{out}_init : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>",
        f"  %{out} = linalg.matmul ins({a}, {b} : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) "
        f"outs(%{out}_zero : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>",
    ]


def generate(layers, tp, dialect, dp=1):
    lines = []
    x_t = f"tensor<{BATCH}x{HIDDEN}xf32>"
    w1_t = f"tensor<{HIDDEN}x{FFN}xf32>"
    w2_t = f"tensor<{FFN}x{HIDDEN}xf32>"
    body = []
    # Argument annotations: dt's attributes, or none (upstream annotates
    # with shard.shard ops in the body).
    rep = col = row = ""
    if dialect == "dt":
        # A data-parallel axis in front (replicated everywhere) makes a mesh
        # of dp x tp ranks whose shards stay even.
        lead = "R, " if dp > 1 else ""
        axes = f'"dp" = {dp}, "tp" = {tp}' if dp > 1 else f'"tp" = {tp}'
        lines.append(f"dt.mesh @mesh = <[{axes}]>")
        col = f' {{dt.sharding = #dt.sharding<@mesh, [{lead}S(1)]>}}'
        row = f' {{dt.sharding = #dt.sharding<@mesh, [{lead}S(0)]>}}'
        rep = f' {{dt.sharding = #dt.sharding<@mesh, [{lead}R]>}}'
        result = f"({x_t}{rep})"
        x = "%x"
        weights = {l: (f"%w1_{l}", f"%w2_{l}") for l in range(layers)}
    else:
        lines.append(f"shard.grid @grid(shape = {tp})")
        result = x_t
        body += [
            "  %s_rep = shard.sharding @grid split_axes = [[]] : !shard.sharding",
            "  %s_col = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding",
            "  %s_row = shard.sharding @grid split_axes = [[0]] : !shard.sharding",
            f"  %xs = shard.shard %x to %s_rep : {x_t}",
        ]
        x = "%xs"
        weights = {}
        for l in range(layers):
            body += [
                f"  %w1s_{l} = shard.shard %w1_{l} to %s_col : {w1_t}",
                f"  %w2s_{l} = shard.shard %w2_{l} to %s_row : {w2_t}",
            ]
            weights[l] = (f"%w1s_{l}", f"%w2s_{l}")
    body.append("  %zero = arith.constant 0.0 : f32")
    for l in range(layers):
        w1, w2 = weights[l]
        body += matmul(f"h{l}", x, w1, BATCH, HIDDEN, FFN)
        body += generic(f"a{l}", "tanh", [f"%h{l}"], f"{BATCH}x{FFN}")
        body += matmul(f"y{l}", f"%a{l}", w2, BATCH, FFN, HIDDEN)
        body += generic(f"r{l}", "add", [f"%y{l}", x], f"{BATCH}x{HIDDEN}")
        x = f"%r{l}"
    if dialect == "shard":
        body.append(f"  %out = shard.shard {x} to %s_rep annotate_for_users : {x_t}")
        x = "%out"
    args = [f"%x: {x_t}{rep}"]
    for l in range(layers):
        args += [f"%w1_{l}: {w1_t}{col}", f"%w2_{l}: {w2_t}{row}"]
    lines.append(f"func.func @main({', '.join(args)}) -> {result} {{")
    lines += body
    lines.append(f"  return {x} : {x_t}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, required=True)
    parser.add_argument("--tp", type=int, default=8)
    parser.add_argument("--dp", type=int, default=1,
                        help="a leading replicated data-parallel axis (dt only)")
    parser.add_argument("--dialect", choices=["dt", "shard"], default="dt")
    args = parser.parse_args()
    print(generate(args.layers, args.tp, args.dialect, args.dp), end="")


if __name__ == "__main__":
    main()

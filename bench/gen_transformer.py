#!/usr/bin/env python3
"""Generates an L-layer transformer training step in dt's input language.

Each layer, forward: multi-head attention (Q, K, V projections column-sharded
through the annotated weights, heads as a batch dim, softmax over keys, output
projection row-sharded, residual add) and an MLP (column-parallel, tanh,
row-parallel, residual add). Backward, in reverse layer order: the MLP's
weight and input gradients (with tanh'), the attention output projection's
gradients, and an SGD update of every weight it differentiates. Only the
input, the weights and the updated weights are annotated; dt decides the rest.

With --micro-batches M the input holds M micro-batches and the step is
gradient accumulation: an scf.for runs the forward and backward passes of
each micro-batch, carrying the sum of the weight gradients, and the SGD
update follows the loop.

Usage: gen_transformer.py --layers L [--tp N] [--micro-batches M]
"""

import argparse

SEQ, HIDDEN, HEADS, FFN = 128, 256, 8, 1024
HEAD = HIDDEN // HEADS


class Emitter:
    def __init__(self):
        self.lines = []
        self.count = 0

    def fresh(self, stem):
        self.count += 1
        return f"%{stem}{self.count}"

    def emit(self, line):
        self.lines.append("  " + line)

    def empty(self, shape):
        v = self.fresh("e")
        self.emit(f"{v} = tensor.empty() : tensor<{shape}xf32>")
        return v

    def zeros(self, shape):
        e = self.empty(shape)
        v = self.fresh("z")
        self.emit(f"{v} = linalg.fill ins(%zero : f32) outs({e} : tensor<{shape}xf32>) -> tensor<{shape}xf32>")
        return v

    def matmul(self, a, b, m, k, n):
        init = self.zeros(f"{m}x{n}")
        v = self.fresh("mm")
        self.emit(f"{v} = linalg.matmul ins({a}, {b} : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) "
                  f"outs({init} : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>")
        return v

    def batch_matmul(self, a, b, bt, m, k, n):
        init = self.zeros(f"{bt}x{m}x{n}")
        v = self.fresh("bmm")
        self.emit(f"{v} = linalg.batch_matmul ins({a}, {b} : tensor<{bt}x{m}x{k}xf32>, tensor<{bt}x{k}x{n}xf32>) "
                  f"outs({init} : tensor<{bt}x{m}x{n}xf32>) -> tensor<{bt}x{m}x{n}xf32>")
        return v

    def transpose(self, x, shape, perm):
        out_shape = "x".join(str(shape[p]) for p in perm)
        init = self.empty(out_shape)
        v = self.fresh("tr")
        in_shape = "x".join(map(str, shape))
        self.emit(f"{v} = linalg.transpose ins({x} : tensor<{in_shape}xf32>) outs({init} : tensor<{out_shape}xf32>) "
                  f"permutation = [{', '.join(map(str, perm))}]")
        return v

    def elementwise(self, op, args, shape):
        t = f"tensor<{shape}xf32>"
        v = self.fresh(op)
        self.emit(f"{v} = {op} {', '.join(args)} : {t}")
        return v


def layer_forward(g, x, l):
    s = f"{SEQ}x{HIDDEN}"
    q = g.matmul(x, f"%wq_{l}", SEQ, HIDDEN, HIDDEN)
    k = g.matmul(x, f"%wk_{l}", SEQ, HIDDEN, HIDDEN)
    v = g.matmul(x, f"%wv_{l}", SEQ, HIDDEN, HIDDEN)
    heads = []
    for t in (q, k, v):
        e = g.fresh("heads")
        g.emit(f"{e} = tensor.expand_shape {t} [[0], [1, 2]] output_shape [{SEQ}, {HEADS}, {HEAD}] "
               f": tensor<{s}xf32> into tensor<{SEQ}x{HEADS}x{HEAD}xf32>")
        heads.append(e)
    qh = g.transpose(heads[0], [SEQ, HEADS, HEAD], [1, 0, 2])
    kh = g.transpose(heads[1], [SEQ, HEADS, HEAD], [1, 2, 0])
    vh = g.transpose(heads[2], [SEQ, HEADS, HEAD], [1, 0, 2])
    scores = g.batch_matmul(qh, kh, HEADS, SEQ, HEAD, SEQ)
    pinit = g.empty(f"{HEADS}x{SEQ}x{SEQ}")
    p = g.fresh("probs")
    g.emit(f"{p} = linalg.softmax dimension(2) ins({scores} : tensor<{HEADS}x{SEQ}x{SEQ}xf32>) "
           f"outs({pinit} : tensor<{HEADS}x{SEQ}x{SEQ}xf32>) -> tensor<{HEADS}x{SEQ}x{SEQ}xf32>")
    ctx = g.batch_matmul(p, vh, HEADS, SEQ, SEQ, HEAD)
    ctx_t = g.transpose(ctx, [HEADS, SEQ, HEAD], [1, 0, 2])
    merged = g.fresh("merged")
    g.emit(f"{merged} = tensor.collapse_shape {ctx_t} [[0], [1, 2]] "
           f": tensor<{SEQ}x{HEADS}x{HEAD}xf32> into tensor<{s}xf32>")
    o = g.matmul(merged, f"%wo_{l}", SEQ, HIDDEN, HIDDEN)
    x1 = g.elementwise("arith.addf", [o, x], s)
    h = g.matmul(x1, f"%w1_{l}", SEQ, HIDDEN, FFN)
    a = g.elementwise("math.tanh", [h], f"{SEQ}x{FFN}")
    y = g.matmul(a, f"%w2_{l}", SEQ, FFN, HIDDEN)
    x2 = g.elementwise("arith.addf", [y, x1], s)
    return x2, {"x1": x1, "a": a, "merged": merged}


def layer_backward(g, dx2, saved, l, grads):
    s = f"{SEQ}x{HIDDEN}"
    # MLP: y = a W2, a = tanh(h), h = x1 W1.
    a_t = g.transpose(saved["a"], [SEQ, FFN], [1, 0])
    dw2 = g.matmul(a_t, dx2, FFN, SEQ, HIDDEN)
    w2_t = g.transpose(f"%w2_{l}", [FFN, HIDDEN], [1, 0])
    da = g.matmul(dx2, w2_t, SEQ, HIDDEN, FFN)
    a2 = g.elementwise("arith.mulf", [saved["a"], saved["a"]], f"{SEQ}x{FFN}")
    one_minus = g.elementwise("arith.subf", ["%ones_ffn", a2], f"{SEQ}x{FFN}")
    dh = g.elementwise("arith.mulf", [da, one_minus], f"{SEQ}x{FFN}")
    x1_t = g.transpose(saved["x1"], [SEQ, HIDDEN], [1, 0])
    dw1 = g.matmul(x1_t, dh, HIDDEN, SEQ, FFN)
    w1_t = g.transpose(f"%w1_{l}", [HIDDEN, FFN], [1, 0])
    dx1_mlp = g.matmul(dh, w1_t, SEQ, FFN, HIDDEN)
    dx1 = g.elementwise("arith.addf", [dx2, dx1_mlp], s)
    # Attention output projection: o = merged Wo.
    m_t = g.transpose(saved["merged"], [SEQ, HIDDEN], [1, 0])
    dwo = g.matmul(m_t, dx1, HIDDEN, SEQ, HIDDEN)
    for name, dw, shape in (("w1", dw1, f"{HIDDEN}x{FFN}"),
                            ("w2", dw2, f"{FFN}x{HIDDEN}"),
                            ("wo", dwo, f"{HIDDEN}x{HIDDEN}")):
        grads.append((name, l, dw, shape))
    return dx1


def sgd(g, grads):
    """The updated weights, w - lr dw, for each (name, layer, dw, shape)."""
    updates = []
    for name, l, dw, shape in grads:
        step = g.elementwise("arith.mulf", [dw, "%lr_" + shape], shape)
        updates.append((name, l, g.elementwise("arith.subf", [f"%{name}_{l}", step], shape), shape))
    return updates


def forward_backward(g, x, layers, after_layer=lambda grads: None):
    """One micro-batch's forward and backward passes: its weight gradients.
    after_layer(grads) runs after each layer's backward, with its own."""
    saved = []
    for l in range(layers):
        x, s = layer_forward(g, x, l)
        saved.append(s)
    # The loss 0.5 |x|^2 has gradient x.
    dx = x
    grads = []
    for l in reversed(range(layers)):
        layer_grads = []
        dx = layer_backward(g, dx, saved[l], l, layer_grads)
        after_layer(layer_grads)
        grads += layer_grads
    return grads


def generate(layers, tp, micro_batches=0):
    g = Emitter()
    rep = "{dt.sharding = #dt.sharding<@mesh, [R]>}"
    col = "{dt.sharding = #dt.sharding<@mesh, [S(1)]>}"
    row = "{dt.sharding = #dt.sharding<@mesh, [S(0)]>}"
    x_shape = f"{micro_batches}x{SEQ}x{HIDDEN}" if micro_batches else f"{SEQ}x{HIDDEN}"
    args = [f"%x: tensor<{x_shape}xf32> {rep}"]
    for l in range(layers):
        for w in ("wq", "wk", "wv"):
            args.append(f"%{w}_{l}: tensor<{HIDDEN}x{HIDDEN}xf32> {col}")
        args.append(f"%wo_{l}: tensor<{HIDDEN}x{HIDDEN}xf32> {row}")
        args.append(f"%w1_{l}: tensor<{HIDDEN}x{FFN}xf32> {col}")
        args.append(f"%w2_{l}: tensor<{FFN}x{HIDDEN}xf32> {row}")
    g.emit("%zero = arith.constant 0.0 : f32")
    g.emit(f"%ones_ffn = arith.constant dense<1.0> : tensor<{SEQ}x{FFN}xf32>")
    for shape in (f"{HIDDEN}x{FFN}", f"{FFN}x{HIDDEN}", f"{HIDDEN}x{HIDDEN}"):
        g.emit(f"%lr_{shape} = arith.constant dense<0.01> : tensor<{shape}xf32>")
    if micro_batches:
        updates = sgd(g, accumulate(g, layers, micro_batches))
    else:
        # Each layer's update right after its backward pass.
        updates = []
        forward_backward(g, "%x", layers, lambda grads: updates.extend(sgd(g, grads)))
    results = [(f"tensor<{shape}xf32>", v, {"w1": col, "w2": row, "wo": row}[name])
               for name, l, v, shape in updates]
    result_types = ", ".join(f"{t} {a}" for t, _, a in results)
    out = [f'dt.mesh @mesh = <["tp" = {tp}]>',
           f"func.func @train_step({', '.join(args)}) -> ({result_types}) {{"]
    out += g.lines
    out.append(f"  return {', '.join(v for _, v, _ in results)} : {', '.join(t for t, _, _ in results)}")
    out.append("}")
    return "\n".join(out) + "\n"


def accumulate(g, layers, micro_batches):
    """An scf.for over the micro-batches of %x that sums their weight
    gradients; the sums, as forward_backward's gradients."""
    shapes = {"w1": f"{HIDDEN}x{FFN}", "w2": f"{FFN}x{HIDDEN}", "wo": f"{HIDDEN}x{HIDDEN}"}
    order = [(name, l) for l in reversed(range(layers)) for name in ("w1", "w2", "wo")]
    inits = [g.zeros(shapes[name]) for name, _ in order]
    carries = [f"%acc_{name}_{l}" for name, l in order]
    types = [f"tensor<{shapes[name]}xf32>" for name, _ in order]
    g.emit("%c0 = arith.constant 0 : index")
    g.emit("%c1 = arith.constant 1 : index")
    g.emit(f"%cm = arith.constant {micro_batches} : index")
    g.emit(f"%sums:{len(order)} = scf.for %i = %c0 to %cm step %c1 iter_args("
           + ", ".join(f"{c} = {i}" for c, i in zip(carries, inits))
           + f") -> ({', '.join(types)}) {{")
    body = Emitter()
    body.count = g.count
    s = f"{SEQ}x{HIDDEN}"
    body.emit(f"%xi = tensor.extract_slice %x[%i, 0, 0] [1, {SEQ}, {HIDDEN}] [1, 1, 1] "
              f": tensor<{micro_batches}x{s}xf32> to tensor<{s}xf32>")
    grads = forward_backward(body, "%xi", layers)
    by_name = {(name, l): dw for name, l, dw, _ in grads}
    sums = [body.elementwise("arith.addf", [c, by_name[key]], shapes[key[0]])
            for c, key in zip(carries, order)]
    body.emit(f"scf.yield {', '.join(sums)} : {', '.join(types)}")
    g.count = body.count
    g.lines += ["  " + line for line in body.lines]
    g.emit("}")
    return [(name, l, f"%sums#{k}", shapes[name]) for k, (name, l) in enumerate(order)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, required=True)
    parser.add_argument("--tp", type=int, default=8)
    parser.add_argument("--micro-batches", type=int, default=0,
                        help="accumulate gradients over M micro-batches in an scf.for")
    args = parser.parse_args()
    print(generate(args.layers, args.tp, args.micro_batches), end="")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes the GPU benchmark programs (bench/gpu.py runs them).

    gen_gpu_programs.py OUT_DIR [--small-transformer]

- bench_mlp_bf16.mlir: an MLP training step on one device, bf16: forward
  a = relu(x w1), y = a w2, the gradient of 0.5 |y - t|^2 and backward
  dw2 = a^T dy, da = dy w2^T, dh = da * (a > 0), dw1 = x^T dh. The relu is
  the first GEMM's epilogue and every zero fill its beta = 0
  (dt-convert-matmul-to-blas). bench/gpu_baseline.cu computes the same with
  the same cuBLASLt calls.
- bench_transformer_bf16.mlir: a pre-norm transformer block (RMS norm,
  16-head attention over one sequence, RMS norm, relu MLP, residuals)
  forward and backward, bf16 with f32 norms and softmax statistics, one
  device; see transformer(). bench/gpu_baseline.cu computes the same.
- bench_elementwise.mlir: y = x * 2 + 1 over 64 Mi f32 (one fused kernel;
  bandwidth against a device-to-device copy).
- bench_chain.mlir: N dependent small ops that do not fuse (a row sum, then
  the rows minus their sums), for the host cost per op.

bench/torch_cpu.py takes its CPU programs from here too: mlp() and
transformer() in f32, and cnn(), a small CNN's training step.
"""
import argparse
import os

B, D, H = 4096, 1024, 4096
ELEMENTS = 64 * 1024 * 1024
CHAIN = 200

T = "bf16"


def mlp(T=T, B=B, D=D, H=H, tp=None):
    """The MLP step; with `tp`, annotated for Megatron-style tensor
    parallelism on a mesh of tp ranks (w1 split by columns, w2 by rows, the
    rest replicated: one all_reduce of y)."""
    def ty(r, c):
        return f"tensor<{r}x{c}x{T}>"

    def fill(name, r, c):
        return (f"  %{name}_e = tensor.empty() : {ty(r, c)}\n"
                f"  %{name}_0 = linalg.fill ins(%zero : {T}) outs(%{name}_e : {ty(r, c)}) -> {ty(r, c)}\n")

    ta = ("indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, "
          "affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]")
    tb = ("indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, "
          "affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]")
    def arg(name, placement):
        if tp is None:
            return f'{{dt.name = "{name}"}}'
        return f'{{dt.name = "{name}", dt.sharding = #dt.sharding<@mesh, [{placement}]>}}'

    where = "one device" if tp is None else f"tensor parallel on {tp} ranks"
    mesh = "" if tp is None else f'dt.mesh @mesh = <["tp" = {tp}]>\n'
    return f"""// MLP training step, {T}, {where} (bench/gen_gpu_programs.py).
{mesh}func.func @main(%x: {ty(B, D)} {arg("x", "R")}, %t: {ty(B, D)} {arg("t", "R")},
                %w1: {ty(D, H)} {arg("w1", "S(1)")}, %w2: {ty(H, D)} {arg("w2", "S(0)")})
    -> ({ty(D, H)} {arg("dw1", "S(1)")}, {ty(H, D)} {arg("dw2", "S(0)")}) {{
  %zero = arith.constant 0.0 : {T}
  %zeros = arith.constant dense<0.0> : {ty(B, H)}
{fill("h", B, H)}  %h = linalg.matmul ins(%x, %w1 : {ty(B, D)}, {ty(D, H)}) outs(%h_0 : {ty(B, H)}) -> {ty(B, H)}
  %a = arith.maximumf %h, %zeros : {ty(B, H)}
{fill("y", B, D)}  %y = linalg.matmul ins(%a, %w2 : {ty(B, H)}, {ty(H, D)}) outs(%y_0 : {ty(B, D)}) -> {ty(B, D)}
  %dy = arith.subf %y, %t : {ty(B, D)}
{fill("dw2", H, D)}  %dw2 = linalg.matmul {ta} ins(%a, %dy : {ty(B, H)}, {ty(B, D)}) outs(%dw2_0 : {ty(H, D)}) -> {ty(H, D)}
{fill("da", B, H)}  %da = linalg.matmul {tb} ins(%dy, %w2 : {ty(B, D)}, {ty(H, D)}) outs(%da_0 : {ty(B, H)}) -> {ty(B, H)}
  %on = arith.cmpf ogt, %a, %zeros : {ty(B, H)}
  %dh = arith.select %on, %da, %zeros : tensor<{B}x{H}xi1>, {ty(B, H)}
{fill("dw1", D, H)}  %dw1 = linalg.matmul {ta} ins(%x, %dh : {ty(B, D)}, {ty(B, H)}) outs(%dw1_0 : {ty(D, H)}) -> {ty(D, H)}
  return %dw1, %dw2 : {ty(D, H)}, {ty(H, D)}
}}
"""


def transformer(T="bf16", S=2048, D=1024, NH=16, F=4096):
    """A transformer block's training step: the gradients of
    0.5 |y - t|^2 with respect to x and the six weights, where
        n1 = rms(x); q, k, v = n1 wq, n1 wk, n1 wv  (heads: [S, NH, HD])
        p = softmax(q k^T / sqrt(HD)) per head; c = p v; h1 = x + c wo
        n2 = rms(h1); a = relu(n2 w1); y = h1 + a w2
    rms(x) = x / sqrt(mean(x^2) + 1e-5) per row. Every product is a
    contraction (linalg.matmul, or a generic on the [S, NH, HD] layout for
    the attention); norms and softmax keep f32 statistics."""
    HD = D // NH
    scale = 1.0 / HD ** 0.5
    lines = []
    count = [0]

    def emit(line):
        lines.append("  " + line)

    def fresh(stem):
        count[0] += 1
        return f"%{stem}{count[0]}"

    def ty(*shape, t=T):
        return "tensor<" + "x".join(str(d) for d in shape) + f"x{t}>"

    def filled(shape, t=T, value="%zero"):
        e, f = fresh("e"), fresh("f")
        emit(f"{e} = tensor.empty() : {ty(*shape, t=t)}")
        emit(f"{f} = linalg.fill ins({value} : {t}) outs({e} : {ty(*shape, t=t)}) -> {ty(*shape, t=t)}")
        return f

    def empty(shape, t=T):
        e = fresh("e")
        emit(f"{e} = tensor.empty() : {ty(*shape, t=t)}")
        return e

    def generic(dims, ins, out, out_shape, iters, body, out_t=T, init=None):
        """ins: [(value, shape, map results, type)]; body: lines using %a0.. and %acc."""
        v = fresh("g")
        d = ", ".join(dims)
        maps = [f"affine_map<({d}) -> ({r})>" for _, _, r, _ in ins] + [f"affine_map<({d}) -> ({out})>"]
        init = init or empty(out_shape, out_t)
        args = ", ".join(f"%a{i}: {t}" for i, (_, _, _, t) in enumerate(ins)) + f", %acc: {out_t}"
        its = ", ".join(f'"{i}"' for i in iters)
        emit(f"{v} = linalg.generic {{indexing_maps = [{', '.join(maps)}], iterator_types = [{its}]}}")
        emit(f"    ins({', '.join(x for x, _, _, _ in ins)} : {', '.join(ty(*sh, t=t) for _, sh, _, t in ins)})"
             f" outs({init} : {ty(*out_shape, t=out_t)}) {{")
        emit(f"  ^bb0({args}):")
        for line in body:
            emit("    " + line)
        emit(f"}} -> {ty(*out_shape, t=out_t)}")
        return v

    ext = (lambda x, r: f"%{r} = arith.extf {x} : {T} to f32") if T != "f32" else (lambda x, r: f"%{r} = arith.addf {x}, %fzero : f32")
    trunc = (lambda x, r: f"%{r} = arith.truncf {x} : f32 to {T}") if T != "f32" else (lambda x, r: f"%{r} = arith.addf {x}, %fzero : f32")

    def mm(a, b, m, k, n, ta=False, tb=False, init=None):
        maps = ""
        if ta or tb:
            amap = "(d2, d0)" if ta else "(d0, d2)"
            bmap = "(d1, d2)" if tb else "(d2, d1)"
            maps = (f"indexing_maps = [affine_map<(d0, d1, d2) -> {amap}>, affine_map<(d0, d1, d2) -> {bmap}>, "
                    "affine_map<(d0, d1, d2) -> (d0, d1)>] ")
        init = init or filled((m, n))
        v = fresh("mm")
        emit(f"{v} = linalg.matmul {maps}ins({a}, {b} : {ty(*((k, m) if ta else (m, k)))}, "
             f"{ty(*((n, k) if tb else (k, n)))}) outs({init} : {ty(m, n)}) -> {ty(m, n)}")
        return v

    def rowsumsq(x):
        return generic(["s", "c"], [(x, (S, D), "s, c", T)], "s", (S,), ["parallel", "reduction"],
                       [ext("%a0", "x"), "%sq = arith.mulf %x, %x : f32", "%r = arith.addf %acc, %sq : f32",
                        "linalg.yield %r : f32"], out_t="f32", init=filled((S,), "f32", "%fzero"))

    def rinv():  # r = 1 / sqrt(ss / D + eps), from %a1 (the row's ss)
        return [f"%mean = arith.divf %a1, %width : f32", "%me = arith.addf %mean, %eps : f32",
                "%rr = math.rsqrt %me : f32"]

    def rmsnorm(x, ss):
        return generic(["s", "c"], [(x, (S, D), "s, c", T), (ss, (S,), "s", "f32")], "s, c", (S, D),
                       ["parallel", "parallel"],
                       rinv() + [ext("%a0", "x"), "%n = arith.mulf %x, %rr : f32", trunc("%n", "o"),
                                 f"linalg.yield %o : {T}"])

    def rms_backward(x, ss, dn, dres):
        """dres + d rms(x) given the gradient dn of rms(x)'s output."""
        dot = generic(["s", "c"], [(dn, (S, D), "s, c", T), (x, (S, D), "s, c", T)], "s", (S,),
                      ["parallel", "reduction"],
                      [ext("%a0", "g"), ext("%a1", "x"), "%p = arith.mulf %g, %x : f32",
                       "%r = arith.addf %acc, %p : f32", "linalg.yield %r : f32"],
                      out_t="f32", init=filled((S,), "f32", "%fzero"))
        return generic(["s", "c"], [(x, (S, D), "s, c", T), (ss, (S,), "s", "f32"), (dn, (S, D), "s, c", T),
                                    (dot, (S,), "s", "f32"), (dres, (S, D), "s, c", T)], "s, c", (S, D),
                       ["parallel", "parallel"],
                       [f"%mean = arith.divf %a1, %width : f32", "%me = arith.addf %mean, %eps : f32",
                        "%rr = math.rsqrt %me : f32", ext("%a0", "x"), ext("%a2", "g"), ext("%a4", "d"),
                        "%r2 = arith.mulf %rr, %rr : f32", "%r3 = arith.mulf %r2, %rr : f32",
                        "%k = arith.divf %a3, %width : f32", "%kr = arith.mulf %k, %r3 : f32",
                        "%xk = arith.mulf %x, %kr : f32", "%gr = arith.mulf %g, %rr : f32",
                        "%u = arith.subf %gr, %xk : f32", "%v = arith.addf %u, %d : f32", trunc("%v", "o"),
                        f"linalg.yield %o : {T}"])

    def heads(x):
        v = fresh("h")
        emit(f"{v} = tensor.expand_shape {x} [[0], [1, 2]] output_shape [{S}, {NH}, {HD}] : {ty(S, D)} into {ty(S, NH, HD)}")
        return v

    def flat(x):
        v = fresh("c")
        emit(f"{v} = tensor.collapse_shape {x} [[0], [1, 2]] : {ty(S, NH, HD)} into {ty(S, D)}")
        return v

    mac = ["%m = arith.mulf %a0, %a1 : " + T, "%r = arith.addf %acc, %m : " + T, f"linalg.yield %r : {T}"]
    par3red = ["parallel", "parallel", "parallel", "reduction"]

    def contract(dims, a, amap, ashape, b, bmap, bshape, out, out_shape):
        return generic(dims, [(a, ashape, amap, T), (b, bshape, bmap, T)], out, out_shape, par3red, mac,
                       init=filled(out_shape))

    emit(f"%zero = arith.constant 0.0 : {T}")
    emit("%fzero = arith.constant 0.0 : f32")
    emit("%ninf = arith.constant 0xFF800000 : f32")
    emit(f"%width = arith.constant {float(D)} : f32")
    emit("%eps = arith.constant 1.0e-5 : f32")
    emit(f"%scale = arith.constant {scale} : f32")

    # Forward.
    ss1 = rowsumsq("%in_x")
    n1 = rmsnorm("%in_x", ss1)
    q, k, v = (mm(n1, w, S, D, D) for w in ("%in_wq", "%in_wk", "%in_wv"))
    q3, k3, v3 = heads(q), heads(k), heads(v)
    sc = contract(["h", "s", "t", "d"], q3, "s, h, d", (S, NH, HD), k3, "t, h, d", (S, NH, HD), "h, s, t", (NH, S, S))
    score = ["%e = arith.mulf %x, %scale : f32"]
    mx = generic(["h", "s", "t"], [(sc, (NH, S, S), "h, s, t", T)], "h, s", (NH, S),
                 ["parallel", "parallel", "reduction"],
                 [ext("%a0", "x")] + score + ["%r = arith.maximumf %acc, %e : f32", "linalg.yield %r : f32"],
                 out_t="f32", init=filled((NH, S), "f32", "%ninf"))
    expo = [ext("%a0", "x")] + score + ["%z = arith.subf %e, %a1 : f32", "%ex = math.exp %z : f32"]
    sm = generic(["h", "s", "t"], [(sc, (NH, S, S), "h, s, t", T), (mx, (NH, S), "h, s", "f32")], "h, s", (NH, S),
                 ["parallel", "parallel", "reduction"],
                 expo + ["%r = arith.addf %acc, %ex : f32", "linalg.yield %r : f32"],
                 out_t="f32", init=filled((NH, S), "f32", "%fzero"))
    p = generic(["h", "s", "t"], [(sc, (NH, S, S), "h, s, t", T), (mx, (NH, S), "h, s", "f32"),
                                  (sm, (NH, S), "h, s", "f32")], "h, s, t", (NH, S, S),
                ["parallel", "parallel", "parallel"],
                expo + ["%pr = arith.divf %ex, %a2 : f32", trunc("%pr", "o"), f"linalg.yield %o : {T}"])
    ctx3 = contract(["h", "s", "d", "t"], p, "h, s, t", (NH, S, S), v3, "t, h, d", (S, NH, HD), "s, h, d", (S, NH, HD))
    ctx = flat(ctx3)
    attn = mm(ctx, "%in_wo", S, D, D)
    h1 = generic(["s", "c"], [("%in_x", (S, D), "s, c", T), (attn, (S, D), "s, c", T)], "s, c", (S, D),
                 ["parallel", "parallel"], [f"%r = arith.addf %a0, %a1 : {T}", f"linalg.yield %r : {T}"])
    ss2 = rowsumsq(h1)
    n2 = rmsnorm(h1, ss2)
    u = mm(n2, "%in_w1", S, D, F)
    a = generic(["s", "f"], [(u, (S, F), "s, f", T)], "s, f", (S, F), ["parallel", "parallel"],
                [f"%r = arith.maximumf %a0, %zero : {T}", f"linalg.yield %r : {T}"])
    mo = mm(a, "%in_w2", S, F, D)
    # dy = y - t with y = h1 + a w2.
    dy = generic(["s", "c"], [(h1, (S, D), "s, c", T), (mo, (S, D), "s, c", T), ("%in_t", (S, D), "s, c", T)],
                 "s, c", (S, D), ["parallel", "parallel"],
                 [f"%y = arith.addf %a0, %a1 : {T}", f"%r = arith.subf %y, %a2 : {T}", f"linalg.yield %r : {T}"])

    # Backward: the MLP.
    dw2 = mm(a, dy, F, S, D, ta=True)
    da = mm(dy, "%in_w2", S, D, F, tb=True)
    du = generic(["s", "f"], [(a, (S, F), "s, f", T), (da, (S, F), "s, f", T)], "s, f", (S, F),
                 ["parallel", "parallel"],
                 [f"%on = arith.cmpf ogt, %a0, %zero : {T}", f"%r = arith.select %on, %a1, %zero : {T}",
                  f"linalg.yield %r : {T}"])
    dw1 = mm(n2, du, D, S, F, ta=True)
    dn2 = mm(du, "%in_w1", S, F, D, tb=True)
    dh1 = rms_backward(h1, ss2, dn2, dy)
    # The attention.
    dwo = mm(ctx, dh1, D, S, D, ta=True)
    dctx = heads(mm(dh1, "%in_wo", S, D, D, tb=True))
    dp = contract(["h", "s", "t", "d"], dctx, "s, h, d", (S, NH, HD), v3, "t, h, d", (S, NH, HD), "h, s, t", (NH, S, S))
    dv3 = contract(["h", "t", "d", "s"], p, "h, s, t", (NH, S, S), dctx, "s, h, d", (S, NH, HD), "t, h, d", (S, NH, HD))
    pdp = generic(["h", "s", "t"], [(p, (NH, S, S), "h, s, t", T), (dp, (NH, S, S), "h, s, t", T)], "h, s",
                  (NH, S), ["parallel", "parallel", "reduction"],
                  [ext("%a0", "pp"), ext("%a1", "g"), "%m = arith.mulf %pp, %g : f32",
                   "%r = arith.addf %acc, %m : f32", "linalg.yield %r : f32"],
                  out_t="f32", init=filled((NH, S), "f32", "%fzero"))
    ds = generic(["h", "s", "t"], [(p, (NH, S, S), "h, s, t", T), (dp, (NH, S, S), "h, s, t", T),
                                   (pdp, (NH, S), "h, s", "f32")], "h, s, t", (NH, S, S),
                 ["parallel", "parallel", "parallel"],
                 [ext("%a0", "pp"), ext("%a1", "g"), "%c = arith.subf %g, %a2 : f32", "%m = arith.mulf %pp, %c : f32",
                  "%r = arith.mulf %m, %scale : f32", trunc("%r", "o"), f"linalg.yield %o : {T}"])
    dq3 = contract(["h", "s", "d", "t"], ds, "h, s, t", (NH, S, S), k3, "t, h, d", (S, NH, HD), "s, h, d", (S, NH, HD))
    dk3 = contract(["h", "t", "d", "s"], ds, "h, s, t", (NH, S, S), q3, "s, h, d", (S, NH, HD), "t, h, d", (S, NH, HD))
    dq, dk, dv = flat(dq3), flat(dk3), flat(dv3)
    dwq, dwk, dwv = (mm(n1, g, D, S, D, ta=True) for g in (dq, dk, dv))
    dn1 = mm(dq, "%in_wq", S, D, D, tb=True)
    dn1 = mm(dk, "%in_wk", S, D, D, tb=True, init=dn1)
    dn1 = mm(dv, "%in_wv", S, D, D, tb=True, init=dn1)
    dx = rms_backward("%in_x", ss1, dn1, dh1)

    names = ["dx", "dwq", "dwk", "dwv", "dwo", "dw1", "dw2"]
    values = [dx, dwq, dwk, dwv, dwo, dw1, dw2]
    shapes = [(S, D), (D, D), (D, D), (D, D), (D, D), (D, F), (F, D)]
    emit(f"return {', '.join(values)} : {', '.join(ty(*s) for s in shapes)}")
    weights = [("x", (S, D)), ("t", (S, D)), ("wq", (D, D)), ("wk", (D, D)), ("wv", (D, D)), ("wo", (D, D)),
               ("w1", (D, F)), ("w2", (F, D))]
    params = ",\n    ".join(f'%in_{n}: {ty(*s)} {{dt.name = "{n}"}}' for n, s in weights)
    results = ", ".join(f'{ty(*s)} {{dt.name = "{n}"}}' for n, s in zip(names, shapes))
    head = (f"// Transformer block training step, {T}, one device (bench/gen_gpu_programs.py):\n"
            f"// S={S} tokens, D={D}, {NH} heads of {HD}, MLP width {F}.\n"
            f"func.func @main(\n    {params})\n    -> ({results}) {{")
    return head + "\n" + "\n".join(lines) + "\n}\n"


def cnn(N=32, HW=32, C0=16, C1=64, C2=64, K=10, dp=None):
    """A small CNN's training step, f32, NHWC: the gradients of
    0.5 |y - t|^2 with respect to the three weights, where
        a1 = relu(conv(x, w1)); a2 = relu(conv(a1, w2))  (3x3, no padding)
        p = the mean of a2 over the image; y = p w3
    The filters' gradients are generics of a convolution's shape and the
    gradient of a1 is conv2's adjoint (each product added where the forward
    read a1), as python-free-examples/cnn_dp_tp.mlir writes them. With
    `dp`, x and t are split over a mesh of dp ranks by the batch (data
    parallel: the gradients come back as partial sums over dp)."""
    H1, H2 = HW - 2, HW - 4

    def ty(*shape):
        return "tensor<" + "x".join(str(d) for d in shape) + "xf32>"

    x, t = ty(N, HW, HW, C0), ty(N, K)
    w1, w2, w3 = ty(3, 3, C0, C1), ty(3, 3, C1, C2), ty(C2, K)
    h1, h2, pooled = ty(N, H1, H1, C1), ty(N, H2, H2, C2), ty(N, C2)
    per_pixel = repr(1.0 / (H2 * H2))
    split = ", dt.sharding = #dt.sharding<@mesh, [S(0)]>" if dp else ""

    def conv(result, a, w, out, init):
        return (f"  {result} = linalg.conv_2d_nhwc_hwcf {{dilations = dense<1> : tensor<2xi64>, "
                f"strides = dense<1> : tensor<2xi64>}}\n"
                f"      ins({a}, {w} : {ty_of[a]}, {ty_of[w]}) outs({init} : {out}) -> {out}")

    def filter_gradient(result, a, grad, out, init):
        return f"""  {result} = linalg.generic {{
      indexing_maps = [affine_map<(kh, kw, c, f, n, i, j) -> (n, i + kh, j + kw, c)>,
                       affine_map<(kh, kw, c, f, n, i, j) -> (n, i, j, f)>,
                       affine_map<(kh, kw, c, f, n, i, j) -> (kh, kw, c, f)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel",
                        "reduction", "reduction", "reduction"]}}
      ins({a}, {grad} : {ty_of[a]}, {ty_of[grad]}) outs({init} : {out}) {{
    ^bb0(%in: f32, %g: f32, %acc: f32):
      %m = arith.mulf %in, %g : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
  }} -> {out}"""

    def filled(name, out):
        return (f"  %{name}e = tensor.empty() : {out}\n"
                f"  %{name} = linalg.fill ins(%zero : f32) outs(%{name}e : {out}) -> {out}")

    def relu_backward(result, grad, pre, out, from_pooling=False):
        """grad where pre > 0; from the pooling, grad holds one value per
        image and channel, spread evenly over the pixels."""
        gmap = "(n, f)" if from_pooling else "(n, i, j, f)"
        spread = "      %s = arith.mulf %g, %cst_pixel : f32\n" if from_pooling else ""
        value = "%s" if from_pooling else "%g"
        return f"""  {result} = linalg.generic {{
      indexing_maps = [affine_map<(n, i, j, f) -> {gmap}>, affine_map<(n, i, j, f) -> (n, i, j, f)>,
                       affine_map<(n, i, j, f) -> (n, i, j, f)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
      ins({grad}, {pre} : {ty_of[grad]}, {out}) outs({pre} : {out}) {{
    ^bb0(%g: f32, %pre: f32, %out: f32):
      %positive = arith.cmpf ogt, %pre, %zero : f32
{spread}      %r = arith.select %positive, {value}, %zero : f32
      linalg.yield %r : f32
  }} -> {out}"""

    ty_of = {"%x": x, "%w1": w1, "%w2": w2, "%a1": h1, "%dh2": h2, "%dh1": h1, "%da1": h1, "%dp": pooled}
    mesh = f'dt.mesh @mesh = <["dp" = {dp}]>\n\n' if dp else ""
    return mesh + "\n".join([
        f"// A CNN training step (bench/gen_gpu_programs.py cnn): {N} images of {HW}x{HW}x{C0},",
        f"// 3x3 convolutions to {C1} and {C2} channels, mean pooling, {K} outputs.",
        f'func.func @main(%x: {x} {{dt.name = "x"{split}}}, %t: {t} {{dt.name = "t"{split}}},',
        f'    %w1: {w1} {{dt.name = "w1"}}, %w2: {w2} {{dt.name = "w2"}}, %w3: {w3} {{dt.name = "w3"}})',
        f"    -> ({w1}, {w2}, {w3}) {{",
        "  %zero = arith.constant 0.0 : f32",
        f"  %cst_pixel = arith.constant {per_pixel} : f32",
        filled("h1z", h1),
        conv("%h1", "%x", "%w1", h1, "%h1z"),
        f"  %a1 = arith.maximumf %h1, %h1z : {h1}",
        filled("h2z", h2),
        conv("%h2", "%a1", "%w2", h2, "%h2z"),
        f"  %a2 = arith.maximumf %h2, %h2z : {h2}",
        filled("sz", pooled),
        f"  %sum = linalg.reduce {{ arith.addf }} ins(%a2 : {h2}) outs(%sz : {pooled}) dimensions = [1, 2]",
        f"  %inv_pixels = arith.constant dense<{per_pixel}> : {pooled}",
        f"  %p = arith.mulf %sum, %inv_pixels : {pooled}",
        filled("yz", t),
        f"  %y = linalg.matmul ins(%p, %w3 : {pooled}, {w3}) outs(%yz : {t}) -> {t}",
        f"  %dy = arith.subf %y, %t : {t}",
        filled("g3z", w3),
        f"  %dw3 = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, "
        f"affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]",
        f"      ins(%p, %dy : {pooled}, {t}) outs(%g3z : {w3}) -> {w3}",
        f"  %dp = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, "
        f"affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]",
        f"      ins(%dy, %w3 : {t}, {w3}) outs(%sz : {pooled}) -> {pooled}",
        relu_backward("%dh2", "%dp", "%h2", h2, from_pooling=True),
        filled("g2z", w2),
        filter_gradient("%dw2", "%a1", "%dh2", w2, "%g2z"),
        f"""  %da1 = linalg.generic {{
      indexing_maps = [affine_map<(n, i, j, kh, kw, c, f) -> (n, i, j, f)>,
                       affine_map<(n, i, j, kh, kw, c, f) -> (kh, kw, c, f)>,
                       affine_map<(n, i, j, kh, kw, c, f) -> (n, i + kh, j + kw, c)>],
      iterator_types = ["parallel", "reduction", "reduction", "reduction", "reduction",
                        "parallel", "reduction"]}}
      ins(%dh2, %w2 : {h2}, {w2}) outs(%h1z : {h1}) {{
    ^bb0(%g: f32, %w: f32, %acc: f32):
      %m = arith.mulf %g, %w : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
  }} -> {h1}""",
        relu_backward("%dh1", "%da1", "%h1", h1),
        filled("g1z", w1),
        filter_gradient("%dw1", "%x", "%dh1", w1, "%g1z"),
        f"  return %dw1, %dw2, %dw3 : {w1}, {w2}, {w3}",
        "}", ""])


def elementwise():
    ty = f"tensor<{ELEMENTS}xf32>"
    return f"""// y = x * 2 + 1 over {ELEMENTS} f32 (bench/gen_gpu_programs.py).
func.func @main(%x: {ty}) -> {ty} {{
  %two = arith.constant dense<2.0> : {ty}
  %one = arith.constant dense<1.0> : {ty}
  %m = arith.mulf %x, %two : {ty}
  %y = arith.addf %m, %one : {ty}
  return %y : {ty}
}}
"""


def chain(links=CHAIN, rows=64, cols=64):
    ty, row = f"tensor<{rows}x{cols}xf32>", f"tensor<{rows}xf32>"
    lines = [f"// {links} dependent row sums and broadcasts (bench/gen_gpu_programs.py).",
             f"func.func @main(%x0: {ty}) -> {ty} {{",
             "  %zero = arith.constant 0.0 : f32",
             f"  %re = tensor.empty() : {row}",
             f"  %r0 = linalg.fill ins(%zero : f32) outs(%re : {row}) -> {row}",
             f"  %e = tensor.empty() : {ty}"]
    for i in range(links):
        lines += [
            f"  %s{i} = linalg.reduce {{ arith.addf }} ins(%x{i} : {ty}) outs(%r0 : {row}) dimensions = [1]",
            f"  %b{i} = linalg.broadcast ins(%s{i} : {row}) outs(%e : {ty}) dimensions = [1]",
            f"  %x{i + 1} = arith.subf %x{i}, %b{i} : {ty}",
        ]
    lines += [f"  return %x{links} : {ty}", "}", ""]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description="Writes the GPU benchmark programs.")
    parser.add_argument("out_dir")
    parser.add_argument("--small-transformer", action="store_true",
                        help="write only transformer_small.mlir: f32, small, for tests on the CPU")
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    if args.small_transformer:
        with open(os.path.join(args.out_dir, "transformer_small.mlir"), "w") as f:
            f.write(transformer("f32", S=16, D=16, NH=2, F=32))
        return
    for name, text in (("bench_mlp_bf16", mlp()), ("bench_transformer_bf16", transformer()),
                       ("bench_elementwise", elementwise()), ("bench_chain", chain())):
        with open(os.path.join(args.out_dir, name + ".mlir"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()

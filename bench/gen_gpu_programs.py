#!/usr/bin/env python3
"""Writes the GPU benchmark programs (bench/gpu.py runs them).

    gen_gpu_programs.py OUT_DIR

- bench_mlp_bf16.mlir: an MLP training step on one device, bf16: forward
  a = relu(x w1), y = a w2, the gradient of 0.5 |y - t|^2 and backward
  dw2 = a^T dy, da = dy w2^T, dh = da * (a > 0), dw1 = x^T dh. The relu is
  the first GEMM's epilogue and every zero fill its beta = 0
  (dt-convert-matmul-to-blas). bench/gpu_baseline.cu computes the same with
  the same cuBLASLt calls.
- bench_elementwise.mlir: y = x * 2 + 1 over 64 Mi f32 (one fused kernel;
  bandwidth against a device-to-device copy).
- bench_chain.mlir: N dependent small ops that do not fuse (a row sum, then
  the rows minus their sums), for the host cost per op.
"""
import os
import sys

B, D, H = 4096, 1024, 4096
ELEMENTS = 64 * 1024 * 1024
CHAIN = 200

T = "bf16"


def mlp():
    def ty(r, c):
        return f"tensor<{r}x{c}x{T}>"

    def fill(name, r, c):
        return (f"  %{name}_e = tensor.empty() : {ty(r, c)}\n"
                f"  %{name}_0 = linalg.fill ins(%zero : {T}) outs(%{name}_e : {ty(r, c)}) -> {ty(r, c)}\n")

    ta = ("indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, "
          "affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]")
    tb = ("indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, "
          "affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]")
    return f"""// MLP training step, bf16, one device (bench/gen_gpu_programs.py).
func.func @main(%x: {ty(B, D)} {{dt.name = "x"}}, %t: {ty(B, D)} {{dt.name = "t"}},
                %w1: {ty(D, H)} {{dt.name = "w1"}}, %w2: {ty(H, D)} {{dt.name = "w2"}})
    -> ({ty(D, H)} {{dt.name = "dw1"}}, {ty(H, D)} {{dt.name = "dw2"}}) {{
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


def chain():
    ty, row = "tensor<64x64xf32>", "tensor<64xf32>"
    lines = [f"// {CHAIN} dependent row sums and broadcasts (bench/gen_gpu_programs.py).",
             f"func.func @main(%x0: {ty}) -> {ty} {{",
             "  %zero = arith.constant 0.0 : f32",
             f"  %re = tensor.empty() : {row}",
             f"  %r0 = linalg.fill ins(%zero : f32) outs(%re : {row}) -> {row}",
             f"  %e = tensor.empty() : {ty}"]
    for i in range(CHAIN):
        lines += [
            f"  %s{i} = linalg.reduce {{ arith.addf }} ins(%x{i} : {ty}) outs(%r0 : {row}) dimensions = [1]",
            f"  %b{i} = linalg.broadcast ins(%s{i} : {row}) outs(%e : {ty}) dimensions = [1]",
            f"  %x{i + 1} = arith.subf %x{i}, %b{i} : {ty}",
        ]
    lines += [f"  return %x{CHAIN} : {ty}", "}", ""]
    return "\n".join(lines)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, text in (("bench_mlp_bf16", mlp()), ("bench_elementwise", elementwise()),
                       ("bench_chain", chain())):
        with open(os.path.join(out, name + ".mlir"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()

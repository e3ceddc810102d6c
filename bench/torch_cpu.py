#!/usr/bin/env python3
"""dt-run against PyTorch eager on this machine's CPU, side by side in one
run, printing ratios against the targets. PyTorch is Debian's
python3-torch (1.13, OpenBLAS like dt; installed with apt-get when
missing); bench/torch_cpu_steps.py is its side. Each program and its
PyTorch twin take ROUNDS turns, and each keeps its best call.

  python3 bench/torch_cpu.py [--build build] [--repeat 5]

1. The MLP training step of bench/gen_gpu_programs.py (forward, the
   gradient of 0.5 |y - t|^2, backward; f32, 512x1024 -> 4096 -> 1024):
   dt-run on 1 rank against PyTorch on 1 thread; dt-run tensor parallel on
   2 ranks against PyTorch on 2 threads, and against the same Megatron
   split written by hand with torch.distributed (gloo, 2 processes).
   Target: dt faster than each (ratio < 1). Beside it, one of its GEMMs
   alone in each, since the step is mostly GEMMs.
2. The transformer block training step of bench/gen_gpu_programs.py (f32,
   512 tokens, width 512, 8 heads, MLP 2048): dt-run on 1 rank against
   PyTorch autograd of the same loss on 1 thread. Target: dt faster
   (ratio < 1). The seven gradients must agree with PyTorch's to 1e-4 of
   each one's largest magnitude.
3. The CNN training step of bench/gen_gpu_programs.py (f32, 32 images of
   32x32x16, 3x3 convolutions to 64 and 64 channels, mean pooling, 10
   outputs; convolutions as im2col + sgemm, the input's gradient as sgemm +
   col2im): dt-run on 1 rank against PyTorch on 1 thread, and data
   parallel on 2 ranks against PyTorch on 2 threads and against the same
   split written by hand (gloo, 2 processes, one all_reduce of the
   gradients). The three gradients must agree with PyTorch's as the
   transformer's do (the target). The times are shown without a target:
   PyTorch's convolutions are oneDNN's, which use the widest vector units
   the CPU has (one convolution alone in each shows it: on a Zen 5, with
   AVX-512, 3x dt's, whose sgemm runs the AVX2 kernels that machine's
   OPENBLAS_CORETYPE pins, since older OpenBLAS builds miscompute with the
   others there; on a Zen 3, AVX2 for both, 1.2x before dt made its im2col
   in chunks of images, 0.9x since); and PyTorch's step moves from one
   process to the next (52-124 ms on 1 thread on the Zen 5, 138-165 on the
   Zen 3, where dt's took 105 ms, 140 before the chunks). The same step on
   2 images of 114x114 (ResNet-sized: one image's im2col copy takes 7-14
   MiB, made in chunks of its rows) on 1 rank against 1 thread, shown the
   same way, its gradients checked alike (Zen 3: 99-108 ms against 169-180).
4. Host cost: 200 dependent row sums of a 16x16 tensor, each subtracted
   from the rows (ops that do not fuse into one loop). Target: dt's time per
   link at most a tenth of PyTorch's.
5. 16-bit arithmetic as PyTorch eager rounds it: ((x * y + z) / y - x)^2
   over 65536 random values in bf16 and in f16, one fused kernel in dt.
   Compiled with dt-compile --round-each-half-op, every operation's result
   is rounded to its type as eager rounds it. Target: the same bits as
   eager's everywhere. Compiled without (a fused kernel keeps its 16-bit
   values in f32 and rounds once), the count of elements that differ in
   their last bits is shown, without a target.
6. One rank on every CPU this process may use: the MLP and transformer
   steps of 1 and 2 on dt-run's default (each rank's matmuls and large
   kernels on the CPUs shared out among the ranks: here all of them, for
   one rank) against PyTorch on as many threads. Target: dt faster (ratio
   < 1). Beside it, dt's gain over its matmuls and kernels on one thread
   (the steps of 1 and 2), measured in the same turns, without a target.
   And the kernels' own share: the transformer step with its matmuls on
   every CPU, its kernels on one thread against on every CPU, in one
   process (dt-bench-pair, median of 12 turns' ratios). Target: >= 1.

DTensor itself is not in Debian's PyTorch (torch.distributed._tensor came
with 2.0), so the tensor-parallel baseline is the hand-written split.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_gpu_programs as programs  # noqa: E402
from runtime import (build_tools, compile_program, convolution, side_by_side,  # noqa: E402
                     time_program)

TORCH_PYTHON = "/usr/bin/python3"  # Debian's, where python3-torch lives
STEPS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_cpu_steps.py")
ROUNDS = 3
MLP = (512, 1024, 4096)  # B, D, H
TRANSFORMER = dict(S=512, D=512, NH=8, F=2048)
CNN = dict(N=32, HW=32, C0=16, C1=64, C2=64, K=10)
LARGE_CNN = dict(N=2, HW=114, C0=16, C1=64, C2=64, K=10)  # ResNet-sized images
CHAIN = (200, 16, 16)  # links, rows, cols
HALF_CHAIN = 65536  # elements
GRADIENT_TOLERANCE = 1e-4


def ensure_torch():
    probe = [TORCH_PYTHON, "-c", "import torch, numpy"]
    if subprocess.run(probe, capture_output=True).returncode == 0:
        return
    print("torch_cpu: installing Debian's python3-torch (apt-get)", flush=True)
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "--no-install-recommends",
                           "python3-torch"], check=True, env=env)
    if subprocess.run(probe, capture_output=True).returncode != 0:
        sys.exit("torch_cpu: python3-torch installed, but /usr/bin/python3 cannot import torch")


def torch_run(mode, threads, *args):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
    out = subprocess.run([TORCH_PYTHON, STEPS, mode, str(threads), *map(str, args)],
                         check=True, capture_output=True, text=True, env=env).stdout
    match = re.search(r"best ([\d.]+) s", out)
    if not match:
        sys.exit(f"torch_cpu: no time in the output of {mode}:\n{out}")
    return float(match.group(1))


def against_autograd(tools, tmp, so, mode, names, count, *sizes):
    """The largest difference between the `count` gradients dt-run's `so`
    computes and PyTorch's autograd (torch_cpu_steps.py `mode`, which writes
    fixed inputs, named `names`, and its gradients), relative to each
    gradient's largest magnitude."""
    data = tempfile.mkdtemp(prefix=f"{mode}_data", dir=tmp)
    torch_run(mode, 1, 1, *sizes, data)
    inputs = [f"--input={name}={os.path.join(data, name + '.npy')}" for name in names]
    subprocess.run([os.path.join(tools, "dt-run"), so, *inputs, "--output-dir",
                    os.path.join(data, "out")], check=True, capture_output=True)
    compared = subprocess.run([TORCH_PYTHON, STEPS, "compare", data, str(count)], check=True,
                              capture_output=True, text=True).stdout
    return float(re.search(r"difference ([\d.e+-]+)", compared).group(1))


def half_chain_program(n):
    arguments = ", ".join(f'%{v}: tensor<{n}xf32> {{dt.name = "{v}"}}' for v in "xyz")
    lines = [f"func.func @main({arguments}) -> (tensor<{n}xbf16>, tensor<{n}xf16>) {{"]
    for t in ("bf16", "f16"):
        ty = f"tensor<{n}x{t}>"
        lines += [f"  %x{t} = arith.truncf %x : tensor<{n}xf32> to {ty}",
                  f"  %y{t} = arith.truncf %y : tensor<{n}xf32> to {ty}",
                  f"  %z{t} = arith.truncf %z : tensor<{n}xf32> to {ty}",
                  f"  %m{t} = arith.mulf %x{t}, %y{t} : {ty}",
                  f"  %a{t} = arith.addf %m{t}, %z{t} : {ty}",
                  f"  %d{t} = arith.divf %a{t}, %y{t} : {ty}",
                  f"  %s{t} = arith.subf %d{t}, %x{t} : {ty}",
                  f"  %r{t} = arith.mulf %s{t}, %s{t} : {ty}"]
    lines += [f"  return %rbf16, %rf16 : tensor<{n}xbf16>, tensor<{n}xf16>", "}", ""]
    return "\n".join(lines)


def bits_against_eager(tools, so, data):
    """How many elements of the bf16 and the f16 result of `so` differ from
    PyTorch eager's bits (torch_cpu_steps.py half-chain wrote `data`)."""
    inputs = [f"--input={name}={os.path.join(data, name + '.npy')}" for name in "xyz"]
    subprocess.run([os.path.join(tools, "dt-run"), so, *inputs, "--output-dir",
                    os.path.join(data, "out")], check=True, capture_output=True)
    compared = subprocess.run([TORCH_PYTHON, STEPS, "compare-bits", data, "2"], check=True,
                              capture_output=True, text=True).stdout
    return [int(count) for count in re.findall(r": (\d+) of", compared)]


def turns(timers):
    """Each timer's best over ROUNDS turns taken in order."""
    bests = [[] for _ in timers]
    for _ in range(ROUNDS):
        for i, timer in enumerate(timers):
            bests[i].append(timer())
    return [min(b) for b in bests]


def matmul_program(m, k, n):
    ty = lambda r, c: f"tensor<{r}x{c}xf32>"  # noqa: E731
    return f"""func.func @main(%a: {ty(m, k)}, %b: {ty(k, n)}) -> {ty(m, n)} {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : {ty(m, n)}
  %z = linalg.fill ins(%zero : f32) outs(%e : {ty(m, n)}) -> {ty(m, n)}
  %c = linalg.matmul ins(%a, %b : {ty(m, k)}, {ty(k, n)}) outs(%z : {ty(m, n)}) -> {ty(m, n)}
  return %c : {ty(m, n)}
}}
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    tools = build_tools(args.build, ("dt-compile", "dt-run"))
    repeat = args.repeat
    ensure_torch()
    version = subprocess.run([TORCH_PYTHON, "-c", "import torch; print(torch.__version__)"],
                             check=True, capture_output=True, text=True).stdout.strip()
    failures = []

    def check(name, value, target, ok):
        if not ok:
            failures.append(name)
        print(f"  {name:<46} {value:>10}   target {target:<8} {'ok' if ok else 'MISSED'}")

    def dt(so, calls=repeat, blas_threads=1):
        return lambda: time_program(tools, so, calls, blas_threads)[1]

    with tempfile.TemporaryDirectory() as tmp:
        b, d, h = MLP
        flop = 5 * 2 * b * d * h
        print(f"PyTorch {version} (eager, CPU); {ROUNDS} turns of {repeat} calls, best call kept")
        print(f"MLP step {b}x{d} -> {h} -> {d}, f32, forward and backward "
              f"({flop / 1e9:.1f} GFLOP)")
        mlp1 = compile_program(tools, tmp, "mlp1", programs.mlp("f32", b, d, h))
        mlp2 = compile_program(tools, tmp, "mlp2", programs.mlp("f32", b, d, h, tp=2))
        gemm = compile_program(tools, tmp, "gemm", matmul_program(b, d, h))
        (dt1, torch1, dt2, torch2, torch_tp, dt_gemm, torch_gemm) = turns([
            dt(mlp1), lambda: torch_run("mlp", 1, repeat, b, d, h),
            dt(mlp2), lambda: torch_run("mlp", 2, repeat, b, d, h),
            lambda: torch_run("mlp-tp", 2, repeat, b, d, h),
            dt(gemm), lambda: torch_run("matmul", 1, repeat, b, d, h)])
        for name, seconds in (("dt-run, 1 rank", dt1), ("PyTorch, 1 thread", torch1),
                              ("dt-run, tp=2 (2 ranks, threads)", dt2),
                              ("PyTorch, 2 threads", torch2),
                              ("PyTorch, tp=2 by hand (gloo, 2 processes)", torch_tp)):
            print(f"  {name:<44} {seconds * 1e3:8.1f} ms  {flop / seconds / 1e9:6.1f} GFLOP/s")
        gemm_flop = 2 * b * d * h
        print(f"  one {b}x{d}x{h} GEMM alone, 1 thread: dt {gemm_flop / dt_gemm / 1e9:.1f} "
              f"GFLOP/s, PyTorch {gemm_flop / torch_gemm / 1e9:.1f} GFLOP/s")

        s, dm, nh, f = (TRANSFORMER[k] for k in ("S", "D", "NH", "F"))
        print(f"transformer block step, f32, {s} tokens, width {dm}, {nh} heads, MLP {f}")
        block = compile_program(tools, tmp, "transformer", programs.transformer("f32", **TRANSFORMER))
        difference = against_autograd(tools, tmp, block, "transformer",
                                      ("x", "t", "wq", "wk", "wv", "wo", "w1", "w2"), 7,
                                      s, dm, nh, f)
        dt_block, torch_block = turns([
            dt(block), lambda: torch_run("transformer", 1, repeat, s, dm, nh, f)])
        print(f"  dt-run, 1 rank {dt_block * 1e3:8.1f} ms;  PyTorch autograd, 1 thread "
              f"{torch_block * 1e3:8.1f} ms")
        print(f"  gradients: largest difference from PyTorch's {difference:.2e} of the largest")

        sizes = list(CNN.values())
        n, hw, c0, c1, c2, k = sizes
        convs = [(hw, c0, c1), (hw - 2, c1, c2)]
        conv_flop = sum(2 * n * (side - 2) ** 2 * 9 * c * f for side, c, f in convs)
        cnn_flop = 3 * conv_flop - 2 * n * (hw - 2) ** 2 * 9 * c0 * c1  # no gradient of x
        print(f"CNN step, f32, {n} images of {hw}x{hw}x{c0}, 3x3 convolutions to {c1} and {c2} "
              f"channels ({cnn_flop / 1e9:.1f} GFLOP)")
        cnn1 = compile_program(tools, tmp, "cnn1", programs.cnn(**CNN))
        cnn2 = compile_program(tools, tmp, "cnn2", programs.cnn(**CNN, dp=2))
        cnn_difference = against_autograd(tools, tmp, cnn1, "cnn", ("x", "t", "w1", "w2", "w3"),
                                          3, *sizes)
        one_conv = compile_program(tools, tmp, "conv",
                                   convolution(sizes=(n, hw - 2, hw - 2, c1, c2, 3, 3)))
        (dt_cnn1, torch_cnn1, dt_cnn2, torch_cnn2, torch_cnn_dp, dt_conv, torch_conv) = turns([
            dt(cnn1), lambda: torch_run("cnn", 1, repeat, *sizes),
            dt(cnn2), lambda: torch_run("cnn", 2, repeat, *sizes),
            lambda: torch_run("cnn-dp", 2, repeat, *sizes),
            dt(one_conv), lambda: torch_run("conv", 1, repeat, n, hw - 2, c1, c2)])
        for name, seconds in (("dt-run, 1 rank", dt_cnn1), ("PyTorch, 1 thread", torch_cnn1),
                              ("dt-run, dp=2 (2 ranks, threads)", dt_cnn2),
                              ("PyTorch, 2 threads", torch_cnn2),
                              ("PyTorch, dp=2 by hand (gloo, 2 processes)", torch_cnn_dp)):
            print(f"  {name:<44} {seconds * 1e3:8.1f} ms  {cnn_flop / seconds / 1e9:6.1f} GFLOP/s")
        second = 2 * n * (hw - 4) ** 2 * 9 * c1 * c2
        print(f"  its second convolution alone, 1 thread: dt {second / dt_conv / 1e9:.1f} GFLOP/s "
              f"(im2col + OpenBLAS sgemm), PyTorch {second / torch_conv / 1e9:.1f} GFLOP/s (oneDNN)")
        print(f"  gradients: largest difference from PyTorch's {cnn_difference:.2e} of the largest")

        large = list(LARGE_CNN.values())
        print(f"the same step on {large[0]} images of {large[1]}x{large[1]}x{large[2]} "
              f"(each convolution made in chunks of an image's rows)")
        large_cnn = compile_program(tools, tmp, "large_cnn", programs.cnn(**LARGE_CNN))
        large_difference = against_autograd(tools, tmp, large_cnn, "cnn",
                                            ("x", "t", "w1", "w2", "w3"), 3, *large)
        dt_large, torch_large = turns([
            dt(large_cnn), lambda: torch_run("cnn", 1, repeat, *large)])
        print(f"  dt-run, 1 rank {dt_large * 1e3:8.1f} ms;  PyTorch, 1 thread "
              f"{torch_large * 1e3:8.1f} ms")
        print(f"  gradients: largest difference from PyTorch's {large_difference:.2e} of the largest")

        links, rows, cols = CHAIN
        print(f"{links} dependent row sums of {rows}x{cols}, each subtracted from the rows")
        chain = compile_program(tools, tmp, "chain", programs.chain(links, rows, cols))
        dt_chain, torch_chain = turns([
            dt(chain, 20 * repeat), lambda: torch_run("chain", 1, 20 * repeat, *CHAIN)])
        dt_link, torch_link = dt_chain / links * 1e6, torch_chain / links * 1e6
        print(f"  dt-run {dt_link:.2f} us per link;  PyTorch {torch_link:.2f} us per link")

        print(f"\n((x * y + z) / y - x)^2 over {HALF_CHAIN} values in bf16 and f16, "
              "bits against PyTorch eager's")
        data = tempfile.mkdtemp(prefix="half_chain", dir=tmp)
        subprocess.run([TORCH_PYTHON, STEPS, "half-chain", str(HALF_CHAIN), data], check=True)
        source = half_chain_program(HALF_CHAIN)
        each_op = compile_program(tools, tmp, "half_chain_each_op", source,
                                  flags=("--round-each-half-op",))
        fused = compile_program(tools, tmp, "half_chain_fused", source)
        each_op_differ = bits_against_eager(tools, each_op, data)
        fused_differ = bits_against_eager(tools, fused, data)
        print(f"  --round-each-half-op: bf16 {each_op_differ[0]}, f16 {each_op_differ[1]} "
              f"elements differ; rounded once a kernel: bf16 {fused_differ[0]}, "
              f"f16 {fused_differ[1]}")

        cpus = len(os.sched_getaffinity(0))
        print(f"\none rank on all {cpus} CPUs: dt-run's default against PyTorch on {cpus} threads")
        (dt_mlp_all, dt_mlp_one, torch_mlp_all, dt_block_all, dt_block_one,
         torch_block_all) = turns([
            dt(mlp1, blas_threads=None), dt(mlp1),
            lambda: torch_run("mlp", cpus, repeat, b, d, h),
            dt(block, blas_threads=None), dt(block),
            lambda: torch_run("transformer", cpus, repeat, s, dm, nh, f)])
        for name, on_all, on_one, torch_all in (
                ("MLP step", dt_mlp_all, dt_mlp_one, torch_mlp_all),
                ("transformer step", dt_block_all, dt_block_one, torch_block_all)):
            print(f"  {name}: dt-run {on_all * 1e3:.1f} ms ({on_one / on_all:.2f}x its time "
                  f"with matmuls and kernels on 1 thread);  PyTorch {torch_all * 1e3:.1f} ms")
        # The kernels' share of it, in one process (dt-bench-pair): matmuls on
        # every CPU both times, kernels on one thread or on every CPU.
        kernels_one, kernels_all, kernel_gain = side_by_side(
            tools, block, block, 12, 3, threads=((cpus, 1), (cpus, cpus)))
        print(f"  transformer step, matmuls on {cpus} threads: kernels on 1 thread "
              f"{kernels_one * 1e3:.1f} ms, on {cpus} {kernels_all * 1e3:.1f} ms (best calls)")

        print("\nratios (measured side by side in this run; best of the calls)")
        for name, ratio in (("MLP step: dt 1 rank / PyTorch 1 thread", dt1 / torch1),
                            ("MLP step: dt tp=2 / PyTorch 2 threads", dt2 / torch2),
                            ("MLP step: dt tp=2 / PyTorch tp=2 by hand", dt2 / torch_tp),
                            ("transformer step: dt / PyTorch autograd", dt_block / torch_block)):
            check(name, f"{ratio:.3f}", "< 1", ratio < 1)
        check(f"transformer step: kernels on 1 / on {cpus} threads", f"{kernel_gain:.3f}",
              ">= 1", kernel_gain >= 1)
        check("transformer gradients: |dt - PyTorch|", f"{difference:.1e}",
              f"<= {GRADIENT_TOLERANCE:g}", difference <= GRADIENT_TOLERANCE)
        for name, ratio in (("CNN step: dt 1 rank / PyTorch 1 thread", dt_cnn1 / torch_cnn1),
                            ("CNN step: dt dp=2 / PyTorch 2 threads", dt_cnn2 / torch_cnn2),
                            ("CNN step: dt dp=2 / PyTorch dp=2 by hand", dt_cnn2 / torch_cnn_dp),
                            ("CNN step, large images: dt / PyTorch", dt_large / torch_large)):
            print(f"  {name:<46} {ratio:>10.3f}   (no target: oneDNN's convolutions)")
        for name, difference in (("CNN gradients: |dt - PyTorch|", cnn_difference),
                                 ("CNN gradients, large images", large_difference)):
            check(name, f"{difference:.1e}", f"<= {GRADIENT_TOLERANCE:g}",
                  difference <= GRADIENT_TOLERANCE)
        ratio = dt_link / torch_link
        check("host time per link: dt / PyTorch", f"{ratio:.3f}", "<= 0.1", ratio <= 0.1)
        for name, differ in zip(("bf16", "f16"), each_op_differ):
            check(f"{name} each op rounded: bits unlike eager's", str(differ), "0",
                  differ == 0)
        for name, ratio in (("MLP step: dt 1 rank / PyTorch, every CPU", dt_mlp_all / torch_mlp_all),
                            ("transformer: dt 1 rank / PyTorch, every CPU",
                             dt_block_all / torch_block_all)):
            check(name, f"{ratio:.3f}", "< 1", ratio < 1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""The PyTorch side of bench/torch_cpu.py: the steps of
bench/gen_gpu_programs.py's CPU programs, in PyTorch eager on the CPU
(Debian's python3-torch, so run with /usr/bin/python3). The caller sets
OMP_NUM_THREADS and OPENBLAS_NUM_THREADS to THREADS before it starts.

    torch_cpu_steps.py mlp THREADS REPEAT B D H
        the MLP step as gpu_torch.py writes it (backward written out)
    torch_cpu_steps.py mlp-tp RANKS REPEAT B D H
        the same, Megatron-style on RANKS processes (gloo, one thread each):
        w1 split by columns, w2 by rows, one all_reduce of y
    torch_cpu_steps.py transformer THREADS REPEAT S D NH F [DIR]
        the transformer block's loss, gradients by autograd; with DIR, also
        writes fixed inputs (DIR/NAME.npy) and the gradients
        (DIR/torch_result<i>.npy) for `compare`
    torch_cpu_steps.py cnn THREADS REPEAT N HW C0 C1 C2 K [DIR]
        the CNN step of gen_gpu_programs.cnn(): the weights' gradients by
        autograd, channels_last (oneDNN's convolutions); with DIR, also
        writes fixed inputs and the gradients, as the transformer does
    torch_cpu_steps.py cnn-dp RANKS REPEAT N HW C0 C1 C2 K
        the same, data parallel by hand on RANKS processes (gloo, one
        thread each): N / RANKS images each, one all_reduce of the three
        gradients
    torch_cpu_steps.py compare DIR COUNT
        max |dt - torch| / max |torch| over DIR/out/result<i>.npy
    torch_cpu_steps.py chain THREADS REPEAT LINKS ROWS COLS
        LINKS dependent row sums, each subtracted from the rows
    torch_cpu_steps.py matmul THREADS REPEAT M K N
        one M x K by K x N product
    torch_cpu_steps.py conv THREADS REPEAT N HW C F
        one 3x3 convolution of N channels_last images (no padding)

Each timing mode prints "best S s" (the fastest of REPEAT calls after one
warm-up call); mlp-tp prints the slowest rank's.
"""
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_torch import step as mlp_step  # noqa: E402  (same ops, any device)


def best(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def uniform(gen, *shape, scale=1.0):
    return (torch.rand(*shape, generator=gen) * 2 - 1) * scale


def mlp(repeat, b, d, h):
    gen = torch.Generator().manual_seed(0)
    args = [uniform(gen, *s) for s in ((b, d), (b, d), (d, h), (h, d))]
    return best(lambda: mlp_step(*args), repeat)


def gloo_rank(rank, ranks, port, results, repeat, make_step, sizes):
    """One process of on_gloo_ranks: joins the gloo group on one thread,
    times make_step(rank, ranks, *sizes)'s step and leaves."""
    import torch.distributed as dist
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=ranks)
    step = make_step(rank, ranks, *sizes)
    dist.barrier()
    results[rank] = best(step, repeat)
    dist.destroy_process_group()


def on_gloo_ranks(ranks, repeat, make_step, *sizes):
    """The slowest rank's best time of a step split by hand over RANKS
    processes (gloo, one thread each)."""
    import torch.multiprocessing as mp
    results = mp.Manager().dict()
    port = 29500 + os.getpid() % 1000
    mp.spawn(gloo_rank, args=(ranks, port, results, repeat, make_step, sizes), nprocs=ranks)
    return max(results.values())


def mlp_tp_step(rank, ranks, b, d, h):
    """Megatron's split: w1 by columns, w2 by rows, one all_reduce of y."""
    import torch.distributed as dist
    gen = torch.Generator().manual_seed(0)
    x, t = uniform(gen, b, d), uniform(gen, b, d)
    cols = h // ranks
    w1 = uniform(gen, d, h)[:, rank * cols:(rank + 1) * cols].contiguous()
    w2 = uniform(gen, h, d)[rank * cols:(rank + 1) * cols].contiguous()
    return lambda: mlp_step(x, t, w1, w2, reduce=dist.all_reduce)


TRANSFORMER_INPUTS = ["x", "t", "wq", "wk", "wv", "wo", "w1", "w2"]


def transformer_inputs(s, d, f):
    gen = torch.Generator().manual_seed(1)
    shapes = {"x": (s, d), "t": (s, d), "wq": (d, d), "wk": (d, d), "wv": (d, d),
              "wo": (d, d), "w1": (d, f), "w2": (f, d)}
    scales = {"x": 1.0, "t": 1.0}
    return {n: uniform(gen, *shapes[n], scale=scales.get(n, 0.3 / (shapes[n][0] / 16) ** 0.5))
            for n in TRANSFORMER_INPUTS}


def transformer_gradients(p, nh):
    """The gradients of 0.5 |y - t|^2 as gen_gpu_programs.transformer()
    defines y, with respect to x and the six weights."""
    x, t = p["x"], p["t"]
    s, d = x.shape
    hd = d // nh
    leaves = [x] + [p[n] for n in ("wq", "wk", "wv", "wo", "w1", "w2")]
    for leaf in leaves:
        leaf.requires_grad_(True)

    def rms(v):
        return v * torch.rsqrt((v * v).mean(dim=1, keepdim=True) + 1e-5)

    n1 = rms(x)
    q, k, v = ((n1 @ p[w]).view(s, nh, hd).transpose(0, 1) for w in ("wq", "wk", "wv"))
    attention = torch.softmax(q @ k.transpose(1, 2) / hd ** 0.5, dim=-1)
    context = (attention @ v).transpose(0, 1).reshape(s, d)
    h1 = x + context @ p["wo"]
    y = h1 + torch.relu(rms(h1) @ p["w1"]) @ p["w2"]
    loss = 0.5 * ((y - t) ** 2).sum()
    return torch.autograd.grad(loss, leaves)


def transformer(repeat, s, d, nh, f, out_dir=None):
    p = transformer_inputs(s, d, f)
    if out_dir:
        for name, value in p.items():
            np.save(os.path.join(out_dir, f"{name}.npy"), value.numpy())
        for i, grad in enumerate(transformer_gradients(p, nh)):
            np.save(os.path.join(out_dir, f"torch_result{i}.npy"), grad.numpy())
    return best(lambda: transformer_gradients(p, nh), repeat)


CNN_INPUTS = ["x", "t", "w1", "w2", "w3"]


def cnn_inputs(n, hw, c0, c1, c2, k):
    """NHWC images and HWCF filters, as dt's program takes them."""
    gen = torch.Generator().manual_seed(2)
    shapes = {"x": (n, hw, hw, c0), "t": (n, k), "w1": (3, 3, c0, c1),
              "w2": (3, 3, c1, c2), "w3": (c2, k)}
    fan_in = {"w1": 9 * c0, "w2": 9 * c1, "w3": c2}
    return {name: uniform(gen, *shape, scale=(3 / fan_in[name]) ** 0.5 if name in fan_in else 1.0)
            for name, shape in shapes.items()}


def cnn_step(p):
    """The step on PyTorch's own layouts, made once: the images as a
    channels_last NCHW view, the filters as OIHW (channels_last too).
    Returns the step, which gives the gradients in dt's layouts."""
    import torch.nn.functional as F
    x = p["x"].permute(0, 3, 1, 2)  # NHWC memory is channels_last NCHW
    filters = [p[w].permute(3, 2, 0, 1).contiguous(memory_format=torch.channels_last)
               .requires_grad_(True) for w in ("w1", "w2")]
    w3 = p["w3"].clone().requires_grad_(True)

    def step():
        a1 = torch.relu(F.conv2d(x, filters[0]))
        a2 = torch.relu(F.conv2d(a1, filters[1]))
        y = a2.mean(dim=(2, 3)) @ w3
        loss = 0.5 * ((y - p["t"]) ** 2).sum()
        dw1, dw2, dw3 = torch.autograd.grad(loss, filters + [w3])
        return dw1.permute(2, 3, 1, 0), dw2.permute(2, 3, 1, 0), dw3

    return step


def cnn(repeat, n, hw, c0, c1, c2, k, out_dir=None):
    p = cnn_inputs(n, hw, c0, c1, c2, k)
    step = cnn_step(p)
    if out_dir:
        for name, value in p.items():
            np.save(os.path.join(out_dir, f"{name}.npy"), value.numpy())
        for i, grad in enumerate(step()):
            np.save(os.path.join(out_dir, f"torch_result{i}.npy"), grad.contiguous().numpy())
    return best(step, repeat)


def cnn_dp_step(rank, ranks, *sizes):
    """Data parallelism: N / RANKS images each, one all_reduce of the three
    gradients."""
    import torch.distributed as dist
    p = cnn_inputs(*sizes)
    share = sizes[0] // ranks
    for name in ("x", "t"):
        p[name] = p[name][rank * share:(rank + 1) * share].contiguous()
    step = cnn_step(p)

    def reduced():
        grads = step()
        for grad in grads:
            dist.all_reduce(grad)
        return grads

    return reduced


def compare(out_dir, count):
    worst = 0.0
    for i in range(count):
        ours = np.load(os.path.join(out_dir, "out", f"result{i}.npy")).astype(np.float64)
        theirs = np.load(os.path.join(out_dir, f"torch_result{i}.npy")).astype(np.float64)
        if ours.shape != theirs.shape:
            sys.exit(f"result {i}: dt's shape {ours.shape}, torch's {theirs.shape}")
        worst = max(worst, np.abs(ours - theirs).max() / max(np.abs(theirs).max(), 1e-30))
    print(f"max relative difference {worst:.3e}")


def half_chain(n, out_dir):
    """Inputs x, y, z (f32, written to `out_dir`) and PyTorch eager's
    ((x * y + z) / y - x)^2 in bf16 and in f16, each operation rounded to
    its type, written as the results' bits (torch_bits0.npy, 1.npy)."""
    gen = torch.Generator().manual_seed(0)
    x, y, z = (torch.randn(n, generator=gen) * 3 for _ in range(3))
    y = torch.where(y.abs() < 0.1, torch.full_like(y, 0.5), y)
    for name, value in zip("xyz", (x, y, z)):
        np.save(os.path.join(out_dir, f"{name}.npy"), value.numpy())
    for i, dtype in enumerate((torch.bfloat16, torch.float16)):
        a, b, c = (v.to(dtype) for v in (x, y, z))
        d = (a * b + c) / b - a
        bits = (d * d).view(torch.int16).numpy().view(np.uint16)
        np.save(os.path.join(out_dir, f"torch_bits{i}.npy"), bits)


def payload_bits(path):
    """The 16-bit elements of an .npy file as uint16, whatever its dtype
    says (dt writes bf16, which numpy has no type for)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        sys.exit(f"{path}: not an .npy file")
    header = int.from_bytes(data[8:10], "little") if data[6] == 1 else \
        int.from_bytes(data[8:12], "little")
    start = (10 if data[6] == 1 else 12) + header
    return np.frombuffer(data[start:], dtype=np.uint16)


def compare_bits(out_dir, count):
    for i in range(count):
        ours = payload_bits(os.path.join(out_dir, "out", f"result{i}.npy"))
        theirs = np.load(os.path.join(out_dir, f"torch_bits{i}.npy"))
        if ours.shape != theirs.shape:
            sys.exit(f"result {i}: dt's {ours.shape} elements, torch's {theirs.shape}")
        print(f"result {i}: {int((ours != theirs).sum())} of {ours.size} differ")


def chain(repeat, links, rows, cols):
    x0 = uniform(torch.Generator().manual_seed(0), rows, cols)

    def run():
        x = x0
        for _ in range(links):
            x = x - x.sum(dim=1, keepdim=True)
        return x

    return best(run, repeat)


def matmul(repeat, m, k, n):
    gen = torch.Generator().manual_seed(0)
    a, b = uniform(gen, m, k), uniform(gen, k, n)
    return best(lambda: a @ b, repeat)


def conv(repeat, n, hw, c, f):
    import torch.nn.functional as F
    gen = torch.Generator().manual_seed(0)
    x = uniform(gen, n, hw, hw, c).permute(0, 3, 1, 2)
    w = uniform(gen, f, c, 3, 3).contiguous(memory_format=torch.channels_last)
    return best(lambda: F.conv2d(x, w), repeat)


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "compare":
        compare(args[0], int(args[1]))
        return
    if mode == "half-chain":
        half_chain(int(args[0]), args[1])
        return
    if mode == "compare-bits":
        compare_bits(args[0], int(args[1]))
        return
    threads, repeat = int(args[0]), int(args[1])
    sizes = [int(a) for a in args[2:] if a.isdigit()]
    paths = [a for a in args[2:] if not a.isdigit()]
    torch.set_num_threads(threads)
    if mode == "mlp":
        seconds = mlp(repeat, *sizes)
    elif mode == "mlp-tp":
        seconds = on_gloo_ranks(threads, repeat, mlp_tp_step, *sizes)
    elif mode == "transformer":
        seconds = transformer(repeat, *sizes, out_dir=paths[0] if paths else None)
    elif mode == "cnn":
        seconds = cnn(repeat, *sizes, out_dir=paths[0] if paths else None)
    elif mode == "cnn-dp":
        seconds = on_gloo_ranks(threads, repeat, cnn_dp_step, *sizes)
    elif mode == "chain":
        seconds = chain(repeat, *sizes)
    elif mode == "conv":
        seconds = conv(repeat, *sizes)
    elif mode == "matmul":
        seconds = matmul(repeat, *sizes)
    else:
        sys.exit(f"unknown mode {mode}")
    print(f"best {seconds:.6f} s", flush=True)


if __name__ == "__main__":
    main()

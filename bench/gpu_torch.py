#!/usr/bin/env python3
"""The MLP step of bench_mlp_bf16.mlir in PyTorch: eagerly, and as DTensors
replicated on a device mesh of one GPU. Same shapes, same ops (the
gradient of 0.5 |y - t|^2 written out, as the dt program does).

    gpu_torch.py REPEAT     prints "eager: best S s" and "dtensor: best S s"
"""
import os
import sys

import torch

B, D, H = 4096, 1024, 4096


def step(x, t, w1, w2, reduce=None):
    """With `reduce`, y is a partial sum that reduce() completes in place
    (bench/torch_cpu_steps.py's tensor-parallel split)."""
    h = x @ w1
    a = torch.relu(h)
    y = a @ w2
    if reduce:
        reduce(y)
    dy = y - t
    dw2 = a.t() @ dy
    da = dy @ w2.t()
    dh = da * (a > 0)
    dw1 = x.t() @ dh
    return dw1, dw2


def best(fn, repeat):
    fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repeat):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3)
    return min(times)


def main():
    repeat = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    gen = torch.Generator(device="cuda").manual_seed(0)
    args = [torch.rand(s, generator=gen, device="cuda", dtype=torch.bfloat16) * 2 - 1
            for s in ((B, D), (B, D), (D, H), (H, D))]
    print(f"eager: best {best(lambda: step(*args), repeat):.6f} s", flush=True)

    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Replicate, distribute_tensor
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    dist.init_process_group("nccl", rank=0, world_size=1)
    mesh = init_device_mesh("cuda", (1,))
    dargs = [distribute_tensor(a, mesh, [Replicate()]) for a in args]
    print(f"dtensor: best {best(lambda: step(*dargs), repeat):.6f} s", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

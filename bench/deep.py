"""Benchmark: deep elementwise programs (the Mandelbrot escape count, 14 ops per iteration), the fused
kernel's size against its compile time and speed, and the fusion budget (kernels/caps.py FUSE_BUDGET).

    python bench/deep.py [--backend webgpu] [--n 256] [--sizes 2,4,8,16,32,64] [--budgets 64,128,256,512]
                         [--iters 64] [--repeat 7] [--cpu-n 256] [--cpu-iters 50] [--torch]

Parts (each on its own, skipped where its backend is missing):
  kernel size   one kernel per run (budget off): Mandelbrot of k iterations at n x n, k from --sizes: ops in
                the kernel, first call (plan + compile + run) and the steady run's median, ns per element-op;
                the steady run split into building the expressions, realize (record, plan, submit) and the
                read (which waits for the GPU), and the kernels alone (the loop jitted, replayed, synced)
  budget        --iters iterations at n x n under each of --budgets: kernels, first call, steady median, its
                phases as above, and the fraction of counts that differ from NumPy's (float32 rounding in a
                chaotic map: a contracted multiply-add on a GPU moves points near the set's edge)
  numpy         the numpy backend's Mandelbrot at --cpu-n, --cpu-iters against the same loop in plain NumPy,
                taking turns; medians and the ratio (target: within 1.3x)
  torch         (--torch, where torch with CUDA imports) the same loop in PyTorch eager on the GPU
Timings are wall clock; on a shared machine take several runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from mandelbrot import mandelbrot

import trueno_web as tw
from trueno_web.kernels.caps import FUSE_BUDGET
from trueno_web.runtime import block_on

UNBOUNDED = 1 << 30
OPS = 14  # ops per iteration of mandelbrot()


def grid(n: int) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = np.linspace(-2.0, 1.0, n, dtype=np.float32), np.linspace(-1.5, 1.5, n, dtype=np.float32)
    return np.meshgrid(xs, ys)


def mandelbrot_numpy(cx: np.ndarray, cy: np.ndarray, iters: int) -> np.ndarray:
    """The same loop by hand in NumPy, float32."""
    zx, zy, count = np.zeros_like(cx), np.zeros_like(cx), np.zeros_like(cx)
    four, zero = np.float32(4.0), np.float32(0.0)
    for _ in range(iters):
        zx, zy = zx * zx - zy * zy + cx, np.float32(2) * zx * zy + cy
        inside = (zx * zx + zy * zy) <= four
        count += inside
        zx, zy = np.where(inside, zx, zero), np.where(inside, zy, zero)
    return count


def set_budget(dev, budget: int) -> None:
    """The device's fusion budget (the GPU executor's caps, or a CPU executor's attribute)."""
    caps = getattr(dev.executor, "caps", None)
    if caps is not None:
        caps.fuse_budget = budget
    else:
        dev.executor.fuse_budget = budget


def run(dev, n: int, iters: int, repeat: int) -> tuple[float, float, int, np.ndarray]:
    """(first call s, steady median s, dispatches per run, counts) of the Mandelbrot on resident inputs."""
    cx_h, cy_h = grid(n)
    cx, cy, zeros = dev.tensor(cx_h), dev.tensor(cy_h), dev.tensor(np.zeros((n, n), np.float32))
    block_on(tw.realize(cx, cy, zeros))
    times, out, before = [], None, dev.stats.dispatches
    for r in range(repeat + 1):
        t0 = time.perf_counter()
        out = block_on(mandelbrot(cx, cy, zeros, iters).numpy())
        times.append(time.perf_counter() - t0)
        if r == 0:
            per_run = dev.stats.dispatches - before
    return times[0], statistics.median(times[1:]), per_run, out


def phases(dev, n: int, iters: int, repeat: int) -> tuple[float, float, float, float]:
    """Medians in ms of the steady run's phases (build, realize, read) and of the kernels alone (jit replays,
    then a sync)."""
    cx_h, cy_h = grid(n)
    cx, cy, zeros = dev.tensor(cx_h), dev.tensor(cy_h), dev.tensor(np.zeros((n, n), np.float32))
    block_on(tw.realize(cx, cy, zeros))
    split = []
    for _ in range(repeat + 1):
        t0 = time.perf_counter()
        count = mandelbrot(cx, cy, zeros, iters)
        t1 = time.perf_counter()
        block_on(tw.realize(count))
        t2 = time.perf_counter()
        block_on(count.numpy())
        split.append((t1 - t0, t2 - t1, time.perf_counter() - t2))
    jitted = tw.jit(lambda a, b, z: mandelbrot(a, b, z, iters))
    for _ in range(3):
        block_on(tw.synchronize(block_on(jitted(cx, cy, zeros))))
    t0 = time.perf_counter()
    for _ in range(repeat):
        out = block_on(jitted(cx, cy, zeros))
    block_on(tw.synchronize(out))
    kernels = (time.perf_counter() - t0) / repeat
    return (*(statistics.median(s[i] for s in split[1:]) * 1e3 for i in range(3)), kernels * 1e3)


def kernel_sizes(dev, n: int, sizes: list[int], repeat: int) -> None:
    print(f"\nkernel size: one fused kernel per run, {n}x{n}, {dev.adapter_info.get('device')}")
    print(
        f"{'iters':>6} {'ops':>6} {'kernels':>8} {'first s':>9} {'steady ms':>10} {'ns/elem-op':>11}"
        f" {'build':>7} {'realize':>8} {'read':>6} {'kernels ms':>11}"
    )
    set_budget(dev, UNBOUNDED)
    for k in sizes:
        first, steady, kernels, _ = run(dev, n, k, repeat)
        build, realize, read, alone = phases(dev, n, k, repeat)
        ops = OPS * k
        print(
            f"{k:>6} {ops:>6} {kernels:>8} {first:>9.3f} {steady * 1e3:>10.2f} {steady * 1e9 / (n * n * ops):>11.3f}"
            f" {build:>7.2f} {realize:>8.2f} {read:>6.2f} {alone:>11.2f}"
        )
    set_budget(dev, FUSE_BUDGET)


def budgets(dev, n: int, iters: int, values: list[int], repeat: int) -> None:
    print(f"\nbudget: {iters} iterations ({OPS * iters} ops), {n}x{n}")
    print(
        f"{'budget':>7} {'kernels':>8} {'first s':>9} {'steady ms':>10} {'build':>7} {'realize':>8} {'read':>6}"
        f" {'kernels ms':>11} {'differ':>7}"
    )
    want = mandelbrot_numpy(*grid(n), iters)
    for b in values:
        set_budget(dev, b)
        first, steady, kernels, out = run(dev, n, iters, repeat)
        build, realize, read, alone = phases(dev, n, iters, repeat)
        print(
            f"{b:>7} {kernels:>8} {first:>9.3f} {steady * 1e3:>10.2f} {build:>7.2f} {realize:>8.2f} {read:>6.2f}"
            f" {alone:>11.2f} {np.mean(out != want):>7.1e}"
        )
    set_budget(dev, FUSE_BUDGET)


def numpy_backend(n: int, iters: int, repeat: int) -> None:
    dev = block_on(tw.GpuDevice.create("numpy"))
    cx_h, cy_h = grid(n)
    ours, theirs = [], []
    for _ in range(repeat):  # taking turns
        t0 = time.perf_counter()
        cx, cy, zeros = dev.tensor(cx_h), dev.tensor(cy_h), dev.tensor(np.zeros((n, n), np.float32))
        got = block_on(mandelbrot(cx, cy, zeros, iters).numpy())
        ours.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        want = mandelbrot_numpy(cx_h, cy_h, iters)
        theirs.append(time.perf_counter() - t0)
    assert np.mean(got != want) < 1e-3
    a, b = statistics.median(ours), statistics.median(theirs)
    print(f"\nnumpy backend: Mandelbrot {n}x{n}, {iters} iterations, end to end (tensors built, run, read)")
    print(f"  trueno_web numpy {a * 1e3:8.2f} ms   plain NumPy {b * 1e3:8.2f} ms   ratio {a / b:.2f} (target <= 1.3)")
    dev.close()


def torch_eager(n: int, iters: int, repeat: int) -> None:
    try:
        import torch
    except ImportError:
        print("\ntorch: not importable here")
        return
    if not torch.cuda.is_available():
        print("\ntorch: no CUDA here")
        return
    cx_h, cy_h = grid(n)
    cx, cy = torch.tensor(cx_h, device="cuda"), torch.tensor(cy_h, device="cuda")
    times = []
    for _ in range(repeat + 1):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        zx = zy = count = torch.zeros_like(cx)
        for _ in range(iters):
            zx, zy = zx * zx - zy * zy + cx, 2 * zx * zy + cy
            inside = ((zx * zx + zy * zy) <= 4.0).float()
            count = count + inside
            zx, zy = torch.where(inside != 0, zx, 0.0), torch.where(inside != 0, zy, 0.0)
        out = count.cpu().numpy()
        times.append(time.perf_counter() - t0)
    differ = np.mean(out != mandelbrot_numpy(cx_h, cy_h, iters))
    print(
        f"\ntorch eager on {torch.cuda.get_device_name()}: {iters} iterations {n}x{n}: "
        f"median {statistics.median(times[1:]) * 1e3:.2f} ms; counts that differ from NumPy's {differ:.1e}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="webgpu")
    parser.add_argument("--n", type=int, default=256)
    parser.add_argument("--sizes", default="2,4,8,16,32,64")
    parser.add_argument("--budgets", default="64,128,256,512,1024")
    parser.add_argument("--iters", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--cpu-n", type=int, default=256)
    parser.add_argument("--cpu-iters", type=int, default=50)
    parser.add_argument("--torch", action="store_true")
    parser.add_argument("--skip", default="", help="parts to leave out: size,budget,numpy")
    args = parser.parse_args()
    skip = set(args.skip.split(","))
    ints = lambda text: [int(v) for v in text.split(",") if v]  # noqa: E731
    if not {"size", "budget"} <= skip:
        dev = block_on(tw.GpuDevice.create(args.backend))
        if "size" not in skip:
            kernel_sizes(dev, args.n, ints(args.sizes), args.repeat)
        if "budget" not in skip:
            budgets(dev, args.n, args.iters, ints(args.budgets), args.repeat)
        dev.close()
    if "numpy" not in skip:
        numpy_backend(args.cpu_n, args.cpu_iters, max(args.repeat, 11))
    if args.torch:
        torch_eager(args.n, args.iters, args.repeat)


if __name__ == "__main__":
    main()

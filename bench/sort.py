"""Benchmark: a sort of 2^24 float32 keys (one row), synced (`await tw.synchronize(t)`), against torch.sort.

    python bench/sort.py --backend webgpu --n 16777216 [--rows 1] [--repeat 5] [--argsort] [--radix BITS=4 ...]
        [--gpu-time]

Prints the median ms of `t.sort()` (or `t.argsort()`) on a resident tensor of `rows` rows of n / rows random
float32 keys, the keys per second, whether the result equals NumPy's stable sort, and, where torch imports,
torch.sort of the same keys (on CUDA where there is one, else the CPU) and NumPy's stable sort, for scale.
`--radix NAME=VALUE` (repeatable) sets a constant of kernels/sort_radix.py (rows past 2048) first: BITS,
THREADS, PER, SCAN_PER, STAGED, SUBGROUPS, UNROLL (0 or 1), SG_MIN. `--gpu-time` (webgpu): also the kernels
alone by GPU timestamps (bench/grid.py's Resident), the whole sort and each radix kernel's dispatches of
every pass together (a kernel run apart from the others reads what the last whole sort left).
"""

from __future__ import annotations

import argparse

import numpy as np
from devices import HoldingExecutor, TimedDriver, webgpu
from grid import Resident, wall_ms

import trueno_web as tw
from trueno_web.kernels import sort_radix
from trueno_web.runtime import block_on

KERNELS = ("radix_count", "radix_scan", "radix_carry", "radix_move")  # a pass's dispatches, in order


def gpu_times(dev, t, argsort: bool, reps: int = 10) -> str:
    """GPU ms of the sort's dispatches (timestamps), all of them and each radix kernel's."""
    ex, resident = dev.executor, Resident(dev)
    with ex.holding():
        block_on(tw.realize(t.argsort() if argsort else t.sort()))
        work = list(ex.held)
        resident.gpu_ns(work, 2)  # (pipelines and clocks warm)
        ms = lambda part: sorted(resident.gpu_ns(part, reps) for _ in range(5))[2] / reps / 1e6  # noqa: E731
        parts = [f"all {ms(work):.3f}"]
        if len(work) % len(KERNELS) == 0:  # (a row past BLOCK: the radix sort's passes)
            parts += [f"{name} {ms(work[k :: len(KERNELS)]):.3f}" for k, name in enumerate(KERNELS)]
    return ", ".join(parts)


def ours(backend: str, x: np.ndarray, repeat: int, argsort: bool, gpu_time: bool) -> float:
    dev = webgpu(TimedDriver, HoldingExecutor) if gpu_time else block_on(tw.GpuDevice.create(backend))
    t = tw.asarray(x, dev)
    block_on(tw.realize(t))  # resident: the timing leaves the upload out
    got = block_on((t.argsort() if argsort else t.sort()).numpy())
    want = np.argsort(x, -1, kind="stable") if argsort else np.sort(x, -1, kind="stable")
    print(f"result equals NumPy's stable sort: {np.array_equal(got, want)}")

    def run():
        block_on(tw.synchronize(t.argsort() if argsort else t.sort()))

    try:
        ms = wall_ms(run, repeat)
        if gpu_time:
            print(f"GPU ms (timestamps): {gpu_times(dev, t, argsort)}")
        return ms
    finally:
        dev.close()


def torch_ms(x: np.ndarray, repeat: int) -> tuple[str, float] | None:
    try:
        import torch
    except ImportError:
        return None
    device = "cuda" if torch.cuda.is_available() else "cpu"
    keys = torch.from_numpy(x).to(device)

    def run():
        torch.sort(keys, dim=-1, stable=True)
        if device == "cuda":
            torch.cuda.synchronize()

    return device, wall_ms(run, repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="webgpu")
    parser.add_argument("--n", type=int, default=1 << 24)
    parser.add_argument("--rows", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--argsort", action="store_true")
    parser.add_argument("--radix", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--gpu-time", action="store_true", help="also the kernels alone by GPU timestamps (webgpu)")
    args = parser.parse_args()
    for setting in args.radix:
        name, value = setting.split("=")
        setattr(sort_radix, name, type(getattr(sort_radix, name))(int(value)))
    x = np.random.default_rng(0).standard_normal(args.n, dtype=np.float32).reshape(args.rows, -1)
    what = "argsort" if args.argsort else "sort"
    ms = ours(args.backend, x, args.repeat, args.argsort, args.gpu_time)
    keys_per_s = args.n / ms * 1e3 / 1e9
    print(f"trueno_web {args.backend} {what} {x.shape} {' '.join(args.radix)}: {ms:.2f} ms ({keys_per_s:.3f} G keys/s)")
    other = torch_ms(x, args.repeat)
    if other:
        print(f"torch.sort ({other[0]}) {x.shape}: {other[1]:.2f} ms")
    print(f"numpy sort(kind='stable') {x.shape}: {wall_ms(lambda: np.sort(x, -1, kind='stable'), args.repeat):.2f} ms")


if __name__ == "__main__":
    main()

"""Benchmark: a sort of 2^24 float32 keys (one row), synced (`await tw.synchronize(t)`), against torch.sort.

    python bench/sort.py --backend webgpu --n 16777216 [--rows 1] [--repeat 5] [--argsort] [--radix BITS=4 ...]

Prints the median ms of `t.sort()` (or `t.argsort()`) on a resident tensor of `rows` rows of n / rows random
float32 keys, the keys per second, whether the result equals NumPy's stable sort, and, where torch imports,
torch.sort of the same keys (on CUDA where there is one, else the CPU) and NumPy's stable sort, for scale.
`--radix NAME=VALUE` (repeatable) sets a constant of kernels/sort_radix.py (rows past 2048) first: BITS,
THREADS, PER, SCAN_PER, STAGED (0 or 1).
"""

from __future__ import annotations

import argparse

import numpy as np
from grid import wall_ms

import trueno_web as tw
from trueno_web.kernels import sort_radix
from trueno_web.runtime import block_on


def ours(backend: str, x: np.ndarray, repeat: int, argsort: bool) -> float:
    dev = block_on(tw.GpuDevice.create(backend))
    t = tw.asarray(x, dev)
    block_on(tw.realize(t))  # resident: the timing leaves the upload out
    got = block_on((t.argsort() if argsort else t.sort()).numpy())
    want = np.argsort(x, -1, kind="stable") if argsort else np.sort(x, -1, kind="stable")
    print(f"result equals NumPy's stable sort: {np.array_equal(got, want)}")

    def run():
        block_on(tw.synchronize(t.argsort() if argsort else t.sort()))

    try:
        return wall_ms(run, repeat)
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
    args = parser.parse_args()
    for setting in args.radix:
        name, value = setting.split("=")
        setattr(sort_radix, name, type(getattr(sort_radix, name))(int(value)))
    x = np.random.default_rng(0).standard_normal(args.n, dtype=np.float32).reshape(args.rows, -1)
    what = "argsort" if args.argsort else "sort"
    ms = ours(args.backend, x, args.repeat, args.argsort)
    keys_per_s = args.n / ms * 1e3 / 1e9
    print(f"trueno_web {args.backend} {what} {x.shape} {' '.join(args.radix)}: {ms:.2f} ms ({keys_per_s:.3f} G keys/s)")
    other = torch_ms(x, args.repeat)
    if other:
        print(f"torch.sort ({other[0]}) {x.shape}: {other[1]:.2f} ms")
    print(f"numpy sort(kind='stable') {x.shape}: {wall_ms(lambda: np.sort(x, -1, kind='stable'), args.repeat):.2f} ms")


if __name__ == "__main__":
    main()

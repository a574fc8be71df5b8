"""Benchmark: cumulative_sum (the scan kernel, kernels/scan.py) against a plain copy.

    python bench/scan.py [--backend webgpu] [--n 16777216] [--repeat 20]

Data stays on the device (uploaded once); each run realises the tensor and waits for the device, nothing is
downloaded. Workloads: x * 1 (a copy through the map kernel: the bandwidth floor of one read and one write),
cumulative_sum of the whole float32 and int32 array as one row (a long row: three passes), and along the rows
of it as (1024, n / 1024) and (n / 64, 64) (rows in parallel). Prints ms (median), effective GB/s (n elements
read once and written once) and the fraction of the copy's GB/s; NumPy's np.cumsum for scale.
"""

from __future__ import annotations

import argparse
import platform

import numpy as np
from grid import wall_ms

import trueno_web as tw
from trueno_web.runtime import block_on


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="webgpu")
    ap.add_argument("--n", type=int, default=1 << 24)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    n = args.n
    dev = block_on(tw.GpuDevice.create(args.backend))
    print(f"# bench/scan.py on {dev.backend}: {dev.adapter_info['device']}; host {platform.machine()}; n = {n}")
    print(f"{'workload':>28} {'ours ms':>9} {'GB/s':>7} {'of copy':>8} {'numpy ms':>9}")
    rng = np.random.default_rng(0)
    xf = rng.standard_normal(n, dtype=np.float32)
    xi = rng.integers(-1000, 1000, n, dtype=np.int32)
    f, i = (dev.tensor(block_on(dev.upload(a))) for a in (xf, xi))
    cases = [
        ("copy x*1 float32", lambda: f * 1.0, lambda: xf * 1.0),
        ("cumulative_sum float32", lambda: f.cumulative_sum(), lambda: np.cumsum(xf)),
        ("cumulative_sum int32", lambda: i.cumulative_sum(), lambda: np.cumsum(xi, dtype=np.int32)),
    ]
    for rows in (1024, n // 64):
        if n % rows == 0:
            shape = (rows, n // rows)
            cases.append(
                (
                    f"cumulative_sum {rows}x{n // rows}",
                    lambda s=shape: f.reshape(s).cumulative_sum(axis=1),
                    lambda s=shape: np.cumsum(xf.reshape(s), axis=1),
                )
            )
    copy_gbs = None
    for name, build, host in cases:
        ours = wall_ms(lambda: block_on(tw.realize(build())), args.repeat)
        gbs = 8 * n / ours / 1e6
        copy_gbs = copy_gbs or gbs
        numpy_ms = wall_ms(host, max(3, args.repeat // 5))
        print(f"{name:>28} {ours:9.3f} {gbs:7.1f} {gbs / copy_gbs:8.2f} {numpy_ms:9.3f}")
    dev.close()


if __name__ == "__main__":
    main()

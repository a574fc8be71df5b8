"""Benchmark: reductions along rows and columns and the ops fused with them (the row kernel, kernels/rows.py),
GPU-timed on resident data.

    python bench/rows.py [--shapes 16384x4096,8192x4096,4096x1024,65536x64] [--reps 20] [--row-layout]
        [--set NAME=VALUE ...]

Each workload's dispatches run again on the buffers they left on the device and are timed by GPU timestamps
(bench/grid.py's Resident); torch (CUDA, where importable) by CUDA events. Bandwidth counts the bytes read and
written once each; "of copy" compares with our own copy (x * 1.0, one read and one write) of the same shape.
Workloads: x * 1, layer_norm(x, w, b), x.sum(-1), x.softmax(-1), x.var(-1), x.max(-1), and over the leading axis (columns, read in
place): x.sum(0), x.mean(0), x.var(0); with a 3-D shape such as 64x1024x1024, x.mean(axis=(1, 2)).
`--row-layout` puts every row step's threads along its rows (column_spread 1), the layout before the column
one, to compare. `--set NAME=VALUE` (repeatable) sets a constant of kernels/rows.py first (PER_THREAD,
REGISTER_SLOTS, LIGHT_PER_THREAD, LIGHT_SLOTS, UNROLL, FOLD_RADIX).
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from devices import HoldingExecutor, TimedDriver, webgpu
from grid import Resident, cuda_time, set_constants, torch_cuda

import trueno_web as tw
from trueno_web.backends import gpu as gpu_backend
from trueno_web.kernels import rows
from trueno_web.runtime import block_on


def workloads(shape):
    """name -> (our expression of x, w, b; torch's; elements written)"""
    if len(shape) == 3:
        return {"mean(axis=(1, 2))": (lambda x, w, b: x.mean(axis=(1, 2)), lambda x, w, b: x.mean((1, 2)), shape[0])}
    r, c = shape
    return {
        "copy x*1": (lambda x, w, b: x * 1.0, lambda x, w, b: x * 1.0, r * c),
        "layer_norm": (lambda x, w, b: tw.layer_norm(x, w, b), torch_layer_norm, r * c),
        "sum(-1)": (lambda x, w, b: x.sum(axis=-1), lambda x, w, b: x.sum(-1), r),
        "softmax(-1)": (lambda x, w, b: x.softmax(-1), lambda x, w, b: x.softmax(-1), r * c),
        "var(-1)": (lambda x, w, b: x.var(axis=-1), lambda x, w, b: x.var(-1, correction=0), r),
        "max(-1)": (lambda x, w, b: x.max(axis=-1), lambda x, w, b: x.amax(-1), r),
        "sum(0)": (lambda x, w, b: x.sum(axis=0), lambda x, w, b: x.sum(0), c),
        "mean(0)": (lambda x, w, b: x.mean(axis=0), lambda x, w, b: x.mean(0), c),
        "var(0)": (lambda x, w, b: x.var(axis=0), lambda x, w, b: x.var(0, correction=0), c),
    }


def torch_layer_norm(x, w, b):
    import torch

    return torch.nn.functional.layer_norm(x, x.shape[-1:], w, b)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="16384x4096,8192x4096,4096x1024,65536x64,64x1024x1024")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--row-layout", action="store_true", help="every row step along its rows (no column layout)")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    args = ap.parse_args()
    set_constants(rows, args.set)
    if args.row_layout:
        rows.column_spread = lambda *a: 1
    # the held dispatches run again on the buffers they bound: the pool must not destroy the intermediates it
    # is given back at the end of the execute (var's mean)
    gpu_backend.POOL_BYTES = 8 << 30
    dev = webgpu(TimedDriver, HoldingExecutor)
    res, torch = Resident(dev), torch_cuda()
    print(
        f"# bench/rows.py: {dev.adapter_info['device']}; host {platform.machine()}; torch cuda: {torch is not None}"
        f"{'; row layout only' if args.row_layout else ''} {' '.join(args.set)}"
    )
    print("| shape | workload | ours us | GB/s | of copy | torch us | ours/torch |\n|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    for spec in args.shapes.split(","):
        shape = tuple(int(v) for v in spec.split("x"))
        xh = rng.standard_normal(shape, dtype=np.float32)
        wh, bh = rng.standard_normal(shape[-1], dtype=np.float32), rng.standard_normal(shape[-1], dtype=np.float32)
        x, w, b = (dev.tensor(block_on(dev.upload(a))) for a in (xh, wh, bh))
        if torch is not None:
            xt, wt, bt = (torch.from_numpy(a).cuda() for a in (xh, wh, bh))
        copy = None
        for name, (ours, theirs, written) in workloads(shape).items():
            with dev.executor.holding():
                out = ours(x, w, b)
                block_on(tw.realize(out))
                seconds = res.time(args.reps)
            if name not in ("layer_norm", "softmax(-1)"):  # NumPy has no such methods (the tests check them)
                want = ours(*(a.astype(np.float64) for a in (xh, wh, bh)))
                assert np.allclose(block_on(out.numpy()), want, rtol=1e-3, atol=1e-3), name
            gbs = (math.prod(shape) + written) * 4 / seconds / 1e9
            copy = seconds if name == "copy x*1" else copy
            of_copy = f"{100 * copy / seconds:.0f}%" if copy and name != "copy x*1" else ""
            t_us, ratio = "", ""
            if torch is not None:
                t = cuda_time(torch, lambda: theirs(xt, wt, bt))
                t_us, ratio = f"{t * 1e6:.1f}", f"{seconds / t:.2f}"
            print(f"| {spec} | {name} | {seconds * 1e6:.1f} | {gbs:.0f} | {of_copy} | {t_us} | {ratio} |")
    dev.close()


if __name__ == "__main__":
    main()

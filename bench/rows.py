"""Benchmark: reductions along rows and the ops fused with them (the row kernel, kernels/rows.py).

    python bench/rows.py [--backend webgpu] [--shapes 16384x4096,4096x1024,65536x64,256x65536] [--repeat 20]

Data stays on the device (uploaded once); each run realises the tensor and waits for the GPU, nothing is
downloaded. Workloads: layer_norm(x, w, b) over the last axis, x.sum(-1), x.sum(0) (columns, read in
place), softmax written with tensor ops, and x * 1.0 (a copy through the map kernel: the bandwidth
floor of one read and one write). Prints ms (median), effective GB/s (bytes read once + written once)
and, where PyTorch with CUDA is there, the same ops on cuBLAS/CUDA kernels and our ratio to them.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import numpy as np

import trueno_web as tw
from trueno_web.runtime import block_on


def workloads(x, w, b):
    """name -> (builder of the expression, elements written per row count)"""

    def softmax(t):
        e = (t - t.max(axis=-1, keepdims=True)).exp()
        return e / e.sum(axis=-1, keepdims=True)

    return {
        "copy x*1": (lambda: x * 1.0, "full"),
        "layer_norm": (lambda: tw.layer_norm(x, w, b), "full"),
        "sum(-1)": (lambda: x.sum(axis=-1), "rows"),
        "sum(0)": (lambda: x.sum(axis=0), "cols"),
        "softmax (ops)": (lambda: softmax(x), "full"),
    }


def torch_ops(xt, wt, bt):
    import torch

    return {
        "copy x*1": lambda: xt * 1.0,
        "layer_norm": lambda: torch.nn.functional.layer_norm(xt, (xt.shape[-1],), wt, bt),
        "sum(-1)": lambda: xt.sum(-1),
        "sum(0)": lambda: xt.sum(0),
        "softmax (ops)": lambda: torch.softmax(xt, -1),
    }


def median_ms(fn, repeat: int, sync=lambda: None) -> float:
    fn(), sync()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="webgpu")
    ap.add_argument("--shapes", default="16384x4096,4096x1024,65536x64,256x65536")
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    dev = block_on(tw.GpuDevice.create(args.backend))
    try:
        import torch

        cuda = torch.cuda.is_available()
    except ImportError:
        cuda = False
    print(
        f"# bench/rows.py on {dev.backend}: {dev.adapter_info['device']}; host {platform.machine()}; torch cuda: {cuda}"
    )
    print(
        f"{'shape':>12} {'workload':>14} {'ours ms':>9} {'GB/s':>7} {'numpy ms':>9} {'torch ms':>9} {'ours/torch':>10}"
    )
    rng = np.random.default_rng(0)
    for spec in args.shapes.split(","):
        r, c = (int(v) for v in spec.split("x"))
        xh = rng.standard_normal((r, c), dtype=np.float32)
        wh, bh = rng.standard_normal(c, dtype=np.float32), rng.standard_normal(c, dtype=np.float32)
        x, w, b = (dev.tensor(block_on(dev.upload(a))) for a in (xh, wh, bh))
        host = {
            "copy x*1": lambda: xh * 1.0,
            "layer_norm": lambda: (
                (xh - xh.mean(-1, keepdims=True)) / np.sqrt(xh.var(-1, keepdims=True) + 1e-5) * wh + bh
            ),
            "sum(-1)": lambda: xh.sum(-1),
            "sum(0)": lambda: xh.sum(0),
            "softmax (ops)": lambda: (
                np.exp(xh - xh.max(-1, keepdims=True)) / np.exp(xh - xh.max(-1, keepdims=True)).sum(-1, keepdims=True)
            ),
        }
        if cuda:
            xt, wt, bt = (torch.from_numpy(a).cuda() for a in (xh, wh, bh))
            tops = torch_ops(xt, wt, bt)
        for name, (build, written) in workloads(x, w, b).items():
            ours = median_ms(lambda: block_on(tw.realize(build())), args.repeat)
            out = {"full": r * c, "rows": r, "cols": c}[written]
            gbs = (r * c + out) * 4 / ours / 1e6
            numpy_ms = median_ms(host[name], max(3, args.repeat // 5))
            torch_ms = median_ms(tops[name], args.repeat, torch.cuda.synchronize) if cuda else float("nan")
            print(
                f"{spec:>12} {name:>14} {ours:9.3f} {gbs:7.1f} {numpy_ms:9.3f} {torch_ms:9.3f} {ours / torch_ms:10.2f}"
            )
    dev.close()


if __name__ == "__main__":
    main()

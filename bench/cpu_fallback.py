"""Benchmark: the CPU fallback (the numpy backend) against the same NumPy expressions (the targets in docs/benchmarks.md).

    python bench/cpu_fallback.py [--size 20] [--repeat 41]

At n = 2^size float32 values, end to end (host data in, a host array out), the ways taking turns run by
run in every permutation of their order; medians in ms:

    relu one-shot    await dev.relu(x)                                   vs np.maximum(x, 0)
    chain batch      relu -> scale(2) -> add(b) in one batch (fused)     vs np.maximum(x, 0) * 2 + b

    attention        tw.nn.scaled_dot_product_attention, causal, (4, 4, 1024, 64) (the fused op's blocks)
                     vs NumPy's softmax(q @ k^T / sqrt(E), causal) @ v in float32

Prints the ratios (targets: relu <= 1.25, chain <= 1.3, attention <= 1.3) and, as a second reference, np.maximum with a
float32 zero (NumPy 2 takes a slower loop for a Python int 0). Beside the wall-clock medians, the medians of
the thread's CPU time (time.thread_time): on a shared machine they leave out the time other processes hold
the core (memory bandwidth and caches stay shared).
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import trueno_web as tw
from trueno_web.runtime import block_on


def attention_np(q, k, v):
    """The plain NumPy expression: all L x S scores, causal mask, softmax, @ v."""
    s = q @ np.swapaxes(k, -1, -2) / np.float32(np.sqrt(q.shape[-1]))
    s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, np.float32(-np.inf))
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ v


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=41)
    args = parser.parse_args()
    dev = block_on(tw.GpuDevice.create("numpy"))
    rng = np.random.default_rng(0)
    x, b = (rng.standard_normal(1 << args.size, dtype=np.float32) for _ in range(2))

    async def chain():
        with dev.batch() as bt:
            out = bt.add(bt.scale(bt.relu(bt.upload(x)), 2.0), bt.upload(b))
            await bt.execute()
            return await bt.read(out)

    q, k, v = (rng.standard_normal((4, 4, 1024, 64), dtype=np.float32) for _ in range(3))

    def attention():
        out = tw.nn.scaled_dot_product_attention(dev.tensor(q), dev.tensor(k), dev.tensor(v), causal=True)
        return block_on(out.numpy())

    ways = {
        "attention": attention,
        "np attention": lambda: attention_np(q, k, v),
        "relu one-shot": lambda: block_on(dev.relu(x)),
        "np.maximum(x, 0)": lambda: np.maximum(x, 0),
        "np.maximum(x, float32 0)": lambda: np.maximum(x, np.float32(0)),
        "chain batch": lambda: block_on(chain()),
        "np chain": lambda: np.maximum(x, 0) * np.float32(2) + b,
    }
    assert np.array_equal(ways["relu one-shot"](), ways["np.maximum(x, 0)"]())
    assert np.array_equal(ways["chain batch"](), ways["np chain"]())
    assert np.allclose(ways["attention"](), ways["np attention"](), atol=1e-5)
    runs: dict[str, list[tuple[float, float]]] = {k: [] for k in ways}
    orders = list(itertools.permutations(ways))
    for r in range(args.repeat):
        for name in orders[r * 7 % len(orders)]:  # a stride through the orders
            start, cpu = time.perf_counter(), time.thread_time()
            ways[name]()
            runs[name].append(((time.perf_counter() - start) * 1e3, (time.thread_time() - cpu) * 1e3))
    ms = {k: statistics.median(w for w, _ in v) for k, v in runs.items()}
    cpu_ms = {k: statistics.median(c for _, c in v) for k, v in runs.items()}
    print(
        f"# bench/cpu_fallback.py --size {args.size} --repeat {args.repeat}: {platform.machine()}, "
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}, Python {platform.python_version()}, NumPy {np.__version__}"
    )
    print("| way | ms | CPU ms |\n|---|---|---|")
    for k, v in ms.items():
        print(f"| {k} | {v:.3f} | {cpu_ms[k]:.3f} |")
    for label, t in (("wall clock", ms), ("CPU time", cpu_ms)):
        print(
            f"\n{label}: relu one-shot / np.maximum(x, 0) {t['relu one-shot'] / t['np.maximum(x, 0)']:.2f} "
            f"(target <= 1.25; against the float32 zero: {t['relu one-shot'] / t['np.maximum(x, float32 0)']:.2f}), "
            f"chain batch / NumPy {t['chain batch'] / t['np chain']:.2f} (target <= 1.3), "
            f"attention / NumPy {t['attention'] / t['np attention']:.2f} (target <= 1.3)"
        )


if __name__ == "__main__":
    main()

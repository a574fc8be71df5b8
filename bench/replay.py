"""Benchmark: the host cost of one replayed `tw.jit` call, apart from the submit (encoding the dispatches
into a command buffer and queueing it), for a 100-op chain (one kernel) and a transformer block (many).

    python bench/replay.py [--backend webgpu] [--calls 300] [--rounds 5] [--block 128x256x4]

Each call is `await f(x)` inside one running event loop, its output left on the device; the driver's
submit is timed apart, so "rest" is the Python of a replay: the argument signature, binding the arguments'
and outputs' buffers into the kept schedule, the output tensors. The issue's target: rest <= 40 us per call
whatever the graph's size. Best of --rounds rounds of --calls calls; the GPU is synced after each round.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from transformer import weights_for

import trueno_web as tw
from trueno_web.models import TransformerBlock
from trueno_web.runtime import block_on


def chain(t):
    """100 elementwise ops: one fused kernel."""
    for i in range(50):
        t = (t * 0.5 + 0.25).tanh() if i % 2 else t * 1.01 - 0.01
    return t


def measure(dev, f, x, calls: int, rounds: int) -> tuple[float, float, int]:
    """(per call us, of it outside the submit us, dispatches per call), best round."""
    driver = dev.executor.driver
    submit, spent = driver.submit, [0.0]

    def timed(work):
        t0 = time.perf_counter()
        submit(work)
        spent[0] += time.perf_counter() - t0

    async def loop():
        out = None
        t0 = time.perf_counter()
        for _ in range(calls):
            out = await f(x)
        return time.perf_counter() - t0, out

    for _ in range(3):
        block_on(tw.synchronize(block_on(f(x))))
    driver.submit = timed
    best = None
    try:
        for _ in range(rounds):
            spent[0] = 0.0
            before = dev.stats.dispatches
            total, out = block_on(loop())
            block_on(tw.synchronize(out))
            row = (total / calls * 1e6, (total - spent[0]) / calls * 1e6, (dev.stats.dispatches - before) // calls)
            best = row if best is None or row[1] < best[1] else best
    finally:
        driver.submit = submit
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="webgpu")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--block", default="128x256x4", help="seq x d_model x heads of the transformer block")
    args = parser.parse_args()
    dev = block_on(tw.GpuDevice.create(args.backend))
    print(
        f"# bench/replay.py on {dev.adapter_info.get('device')} ({dev.backend}), best of {args.rounds} x {args.calls}"
    )
    print(f"{'graph':>28} {'dispatches':>11} {'per call us':>12} {'rest us':>8}")
    x = dev.tensor(np.linspace(-1, 1, 1 << 16, dtype=np.float32))
    block_on(tw.realize(x))
    per_call, rest, n = measure(dev, tw.jit(chain), x, args.calls, args.rounds)
    print(f"{'100-op chain, 2^16':>28} {n:>11} {per_call:>12.1f} {rest:>8.1f}")
    seq, d_model, heads = (int(v) for v in args.block.split("x"))
    block = block_on(TransformerBlock.create(dev, weights_for(d_model), n_heads=heads))
    xb = dev.tensor(np.random.default_rng(0).standard_normal((seq, d_model)).astype(np.float32))
    block_on(tw.realize(xb))
    per_call, rest, n = measure(dev, tw.jit(block), xb, max(args.calls // 10, 10), args.rounds)
    print(f"{f'transformer block {args.block}':>28} {n:>11} {per_call:>12.1f} {rest:>8.1f}")
    dev.close()


if __name__ == "__main__":
    main()

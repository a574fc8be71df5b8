"""Benchmark: a jitted call's cost by round size and the desktop driver's QUEUE_MAX, and how soon its
`idle()` check sees the GPU idle (webgpu, wgpu-native's C functions).

    python bench/queue_rounds.py [--rows 8192] [--cols 4096]

For var(axis=-1) and sum(axis=0) of a resident (rows, cols) float32 tensor, jitted: (1) a call through
`block_on` on an idle GPU, then wgpu-native's non-blocking poll until the queue is empty: us after the call
returned and polls taken (quartiles of 20); (2) us a call in rounds of 10 and of 50 awaited calls then one
`tw.synchronize` (best of 7 rounds after 0.3 s of them: bench/workloads.py's `timed_ours`), for QUEUE_MAX 16 (the default), 4, 2 and 1 (every
call submitted at once); (3) a round of 10 in its phases, timed inside the coroutine: the first call, each
next call, the sync (us, medians of 30 rounds after 30), against the kernel's share (10 calls' GPU work).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from workloads import timed_ours

import trueno_web as tw
from trueno_web.backends import wgpu_native
from trueno_web.runtime import block_on


def idle_lags(drv, f, x) -> list[tuple[int, int, int]]:
    """(us from the call's return to an empty queue, polls, us of the call), quartiles of 20 calls."""
    lags = []
    for _ in range(20):
        block_on(tw.synchronize(block_on(f(x))))
        time.sleep(0.002)
        t0 = time.perf_counter()
        out = block_on(f(x))  # the GPU idle: submitted at once
        t1 = time.perf_counter()
        polls = 0
        while not drv._raw.idle():
            polls += 1
        lags.append((round((time.perf_counter() - t1) * 1e6), polls, round((t1 - t0) * 1e6)))
        block_on(tw.synchronize(out))
    return sorted(lags)[::5]


def phases(f, x, rounds: int = 30) -> str:
    """us of a round of 10 awaited calls then one `tw.synchronize`, in its phases (medians)."""
    marks = []

    async def round_of():
        t0 = time.perf_counter()
        out = await f(x)
        t1 = time.perf_counter()
        for _ in range(9):
            out = await f(x)
        t2 = time.perf_counter()
        await tw.synchronize(out)
        marks.append((t1 - t0, (t2 - t1) / 9, time.perf_counter() - t2, (time.perf_counter() - t0) / 10))

    for _ in range(2 * rounds):
        block_on(round_of())
    kept = marks[rounds:]
    first, nxt, sync, per = (statistics.median(m[i] for m in kept) * 1e6 for i in range(4))
    return f"first call {first:.1f}, next calls {nxt:.1f} each, sync {sync:.1f}; {per:.1f} a call"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=8192)
    ap.add_argument("--cols", type=int, default=4096)
    args = ap.parse_args()
    dev = block_on(tw.GpuDevice.create("webgpu"))
    drv = dev.executor.driver
    print(f"# bench/queue_rounds.py on {dev.adapter_info['device']}, ({args.rows}, {args.cols})")
    x = tw.asarray(np.random.default_rng(0).standard_normal((args.rows, args.cols), dtype=np.float32), dev)
    block_on(tw.realize(x))
    for name, fn in (("var(axis=-1)", lambda a: a.var(axis=-1)), ("sum(axis=0)", lambda a: a.sum(axis=0))):
        f = tw.jit(fn)
        for _ in range(100):
            block_on(tw.synchronize(block_on(f(x))))
        print(f"{name}: idle after (us after the call, polls, us of the call): {idle_lags(drv, f, x)}")
        for qmax in (16, 4, 2, 1):
            wgpu_native.QUEUE_MAX = qmax
            rounds = ", ".join(f"rounds of {c} {timed_ours(lambda: f(x), c, 7) * 1e3:.1f}" for c in (10, 50))
            print(f"{name} QUEUE_MAX {qmax}: {rounds}")
        wgpu_native.QUEUE_MAX = 16
        print(f"{name}, a round of 10 (us): {phases(f, x)}")
    dev.close()


if __name__ == "__main__":
    main()

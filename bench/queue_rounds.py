"""Benchmark: where a round of jitted calls and one sync spends the time beyond its kernels (webgpu on the
desktop, wgpu-native's C functions), against torch's round of the same calls.

    python bench/queue_rounds.py [--rows 8192] [--cols 4096] [--rounds 15] [--queue-calls 2,0]

For var(axis=-1), sum(axis=0) and softmax(-1) of a resident (rows, cols) float32 tensor, jitted:
(1) us a call in rounds of n calls then one sync (best of --rounds after 0.3 s of them), n = 1, 3, 10, 30:
    `block_on` around each round (bench/workloads.py's figure), and every round in one running event loop;
    torch's the same way; ours at each of the desktop driver's `queue_calls` given, taking turns twice (a
    submit at the n-th queued call the GPU busy or not; 0: only when the GPU is idle);
(2) a round of 10 inside the running loop in its phases (medians): the first call's host time (and its
    submit's), each next call's, the sync's, the submits;
(3) the parts alone: `block_on` of an empty coroutine, `tw.synchronize` on an idle device awaited and through
    `block_on`, wgpu-native's blocking and non-blocking polls on an idle device (us, medians);
(4) a call through `block_on` on an idle GPU, then wgpu-native's non-blocking poll until the queue is empty: us
    after the call returned and polls taken (quartiles of 20);
(5) the kernels' GPU time (timestamps, the dispatches run again on their buffers).
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

from devices import HoldingExecutor, TimedDriver, webgpu
from grid import Resident, torch_cuda
from workloads import WARM_S, timed, timed_ours

import trueno_web as tw
from trueno_web.backends import wgpu_internals
from trueno_web.backends.wgpu_native import QUEUE_CALLS
from trueno_web.runtime import block_on

SIZES = (1, 3, 10, 30)


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


def in_loop(call, calls: int, rounds: int) -> float:
    """Best us a call over rounds of `calls` awaited calls and one `tw.synchronize`, every round in one running
    event loop (as an asyncio program's main coroutine runs them)."""

    async def main():
        async def round_of():
            for _ in range(calls):
                out = await call()
            await tw.synchronize(out)

        end = time.perf_counter() + WARM_S
        while time.perf_counter() < end:
            await round_of()
        times = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            await round_of()
            times.append((time.perf_counter() - t0) / calls)
        return min(times) * 1e6

    return block_on(main())


def phases(call, raw, rounds: int = 40) -> str:
    """A round of 10 inside a running loop: first call (and the submits within it), each next call, the sync
    (host us, medians)."""
    submits = []
    submit = type(raw).__call__

    def timed_submit(self, work):
        t = time.perf_counter()
        submit(self, work)
        submits.append(time.perf_counter() - t)

    type(raw).__call__ = timed_submit

    async def main():
        marks = []
        for _ in range(2 * rounds):
            submits.clear()
            t0 = time.perf_counter()
            out = await call()
            t1 = time.perf_counter()
            first_submit = sum(submits)
            for _ in range(9):
                out = await call()
            t2 = time.perf_counter()
            await tw.synchronize(out)
            t3 = time.perf_counter()
            marks.append((t1 - t0, first_submit, (t2 - t1) / 9, t3 - t2, (t3 - t0) / 10, len(submits)))
        return marks[rounds:]

    try:
        kept = block_on(main())
    finally:
        type(raw).__call__ = submit
    first, fsub, nxt, sync, per, n = (statistics.median(m[i] for m in kept) * (1 if i == 5 else 1e6) for i in range(6))
    return (
        f"first call {first:.1f} (its submit {fsub:.1f}), next calls {nxt:.1f} each, sync {sync:.1f}; {per:.1f} a call;"
        f" {n:.0f} submits"
    )


def median_us(fn, n: int = 200) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def parts(dev, out) -> str:
    async def noop():
        return None

    async def awaited_syncs(n=200):
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            await tw.synchronize(out)
            times.append(time.perf_counter() - t0)
        return statistics.median(times) * 1e6

    block_on(tw.synchronize(out))
    raw = dev.executor.driver._raw
    return (
        f"block_on(noop) {median_us(lambda: block_on(noop())):.1f}, "
        f"synchronize awaited {block_on(awaited_syncs()):.1f}, "
        f"through block_on {median_us(lambda: block_on(tw.synchronize(out))):.1f}, "
        f"blocking poll {median_us(lambda: wgpu_internals.poll(dev.executor.driver.device)):.1f}, "
        f"non-blocking poll {median_us(raw.idle):.1f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=8192)
    ap.add_argument("--cols", type=int, default=4096)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument(
        "--queue-calls", default=f"{QUEUE_CALLS},0", help="the driver's queue_calls to take turns with (0: no limit)"
    )
    args = ap.parse_args()
    args.queue_calls = [int(v) for v in args.queue_calls.split(",")]
    dev = webgpu(TimedDriver, HoldingExecutor)
    torch = torch_cuda()
    print(f"# bench/queue_rounds.py on {dev.adapter_info['device']}, ({args.rows}, {args.cols}); us a call")
    a = np.random.default_rng(0).standard_normal((args.rows, args.cols), dtype=np.float32)
    x = dev.tensor(a)
    block_on(tw.realize(x))
    xt = torch.tensor(a, device="cuda") if torch is not None else None
    cases = (
        ("var(axis=-1)", lambda t: t.var(axis=-1), lambda t: t.var(dim=-1, unbiased=False)),
        ("sum(axis=0)", lambda t: t.sum(axis=0), lambda t: t.sum(dim=0)),
        ("softmax(-1)", lambda t: t.softmax(-1), lambda t: t.softmax(-1)),
    )
    for name, fn, theirs in cases:
        f = tw.jit(fn)
        call = lambda: f(x)  # noqa: E731
        for _ in range(50):
            block_on(tw.synchronize(block_on(f(x))))
        if torch is not None:
            figures = (timed(lambda: theirs(xt), lambda o: torch.cuda.synchronize(), n, args.rounds) for n in SIZES)
            print(f"{name}, torch: " + ", ".join(f"n={n} {t * 1e3:.1f}" for n, t in zip(SIZES, figures)))
        driver = dev.executor.driver
        raw, default = driver._raw, driver.queue_calls
        for calls in args.queue_calls * 2:
            driver.queue_calls = calls
            rows = [
                f"n={n}: block_on {timed_ours(call, n, args.rounds) * 1e3:.1f}, in loop {in_loop(call, n, args.rounds):.1f}"
                for n in SIZES
            ]
            print(f"{name}, queue_calls {calls}: " + "; ".join(rows))
            print(f"{name}, queue_calls {calls}, a round of 10 in the loop (us): {phases(call, raw)}")
        driver.queue_calls = default
        print(f"{name}, parts (us): {parts(dev, block_on(f(x)))}")
        print(f"{name}, idle after (us after the call, polls, us of the call): {idle_lags(driver, f, x)}")
        dev.executor.pool.clear()
        with dev.executor.holding():
            kept = fn(x)
            block_on(tw.realize(kept))
            print(f"{name}, kernels: {Resident(dev).time(20) * 1e6:.1f} us")
    dev.close()


if __name__ == "__main__":
    main()

"""The workloads of bench/replay.py (desktop) and bench/browser_replay.py (the page), and their per-call timing.

Standard library and trueno_web only: bench/browser_replay.py writes this file into Pyodide's file system (no
NumPy there) and imports it in the page, so both benchmarks build and time the same graphs the same way.

The calls timed apart from the rest are the backend's submit: on a GPU the driver's `submit` (encoding the
dispatches into a command buffer and queueing it) and `settle` (in the browser: awaiting the submit's error
scopes, a round trip to the GPU process; on the desktop a check), on wasm-simd the WASM module's kernel calls
(the compute itself, run on the CPU inside the call). "rest" is the call's Python around them.
"""

from __future__ import annotations

import array
import inspect
import random
import time

import trueno_web as tw
from trueno_web.models import TransformerBlock


def chain(t):
    """100 elementwise ops: one fused kernel."""
    for i in range(50):
        t = (t * 0.5 + 0.25).tanh() if i % 2 else t * 1.01 - 0.01
    return t


def chain_input(dev, n: int):
    """n float32 evenly spaced in [-1, 1], lazy on `dev`."""
    return dev.tensor(array.array("f", [-1.0 + 2.0 * i / (n - 1) for i in range(n)]), (n,), dtype=tw.float32)


async def block_workload(dev, seq: int, d_model: int, heads: int):
    """(a TransformerBlock of seeded weights on `dev`, a lazy (seq, d_model) input of N(0, 1))."""
    block = await TransformerBlock.create(dev, TransformerBlock.random_weights(d_model), n_heads=heads)
    rng = random.Random(1)
    x = array.array("f", [rng.gauss(0.0, 1.0) for _ in range(seq * d_model)])
    return block, dev.tensor(x, (seq, d_model), dtype=tw.float32)


def eager(f, x):
    """The call before tw.jit: the expression built and realised (planned again) every call."""

    async def call():
        out = f(x)
        await tw.realize(out)
        return out

    return call


def jitted(f, x):
    """The call with tw.jit: traced once, replayed after."""
    g = tw.jit(f)
    return lambda: g(x)


def _timed_apart(dev) -> list:
    """(object, method name) of each call timed apart on this backend: none on the numpy backend."""
    if dev.backend == "wasm-simd":
        return [(dev.executor.module, "call")]
    if dev.backend == "webgpu":  # a replay's work goes through queue (Driver.queue), which sends it on its own
        return [(dev.executor.driver, name) for name in ("submit", "queue", "settle")]
    return []


def _patch(owner, name: str, spent: dict) -> object:
    """Time owner.name (a function or a coroutine function) into spent[name]; returns the original."""
    original = getattr(owner, name)

    def timed(*args):
        t0 = time.perf_counter()
        try:
            return original(*args)
        finally:
            spent[name] += time.perf_counter() - t0

    async def timed_async(*args):
        t0 = time.perf_counter()
        try:
            return await original(*args)
        finally:
            spent[name] += time.perf_counter() - t0

    setattr(owner, name, timed_async if inspect.iscoroutinefunction(original) else timed)
    return original


async def measure(dev, call, calls: int, rounds: int) -> dict:
    """`await call()` (its output left on the device) in `rounds` rounds of `calls` calls, the device synced after
    each round; the best round by the rest, in us per call: "call" the whole call, "apart" {name: us} of each call
    timed apart, "rest" the call less those (None where none is), "synced" the call with the round's closing sync
    (on a GPU "call" is the host's cost of issuing a call, whose kernels may still run), "dispatches" per call."""
    for _ in range(3):
        await tw.synchronize(await call())
    apart = _timed_apart(dev)
    spent = {name: 0.0 for _, name in apart}
    originals = [_patch(owner, name, spent) for owner, name in apart]
    best, key = None, lambda row: row["call"] if row["rest"] is None else row["rest"]
    try:
        for _ in range(rounds):
            spent.update({name: 0.0 for name in spent})
            before = dev.stats.dispatches
            t0 = time.perf_counter()
            for _ in range(calls):
                out = await call()
            total, taken = time.perf_counter() - t0, {name: t / calls * 1e6 for name, t in spent.items()}
            await tw.synchronize(out)
            row = {
                "call": total / calls * 1e6,
                "apart": taken,
                "rest": total / calls * 1e6 - sum(taken.values()) if apart else None,
                "synced": (time.perf_counter() - t0) / calls * 1e6,
                "dispatches": (dev.stats.dispatches - before) // calls,
            }
            best = row if best is None or key(row) < key(best) else best
    finally:
        for (owner, name), original in zip(apart, originals):
            setattr(owner, name, original)
    return best

"""Benchmark: #26's table of real tensor workloads, ours (eager and `tw.jit`) against torch on the same GPU and
NumPy on the host, per call with a sync, inputs resident.

    python bench/workloads.py [--backend webgpu] [--scale 1] [--calls 10] [--rounds 5] [--only attention,...]
                              [--no-numpy] [--no-torch]

Per workload, ms per call (best of --rounds rounds of --calls calls then one sync, after warm-up; ours are
awaited one after the other in one coroutine, as an asyncio program calls them):
  ours       the tensor expression built and realised each call (`tw.realize`), the device synced per round
  ours jit   the same function traced once by tw.jit and replayed
  torch      the same computation in torch eager on CUDA (TF32 off), torch.cuda.synchronize per round
  numpy      the same computation in NumPy float32 on the host, one call a round (skipped past --numpy-max
             elements of work)
--anatomy (webgpu) adds, per workload, where a jitted call's time goes: host us a call (calls issued with no sync,
each through block_on as above, and awaited in one coroutine), a sync alone once the queue is idle (ms), and
the kernels' GPU time (ms, timestamps of the dispatches run again on their buffers).
Each of ours is checked against torch's (or NumPy's) result first (max |err| / max |ref|). --scale s divides
every dimension of the table's sizes by s (for a quick look on a CPU backend).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from devices import HoldingExecutor, TimedDriver, webgpu
from grid import Resident, torch_cuda
from transformer import numpy_block, torch_block, weights_for

import trueno_web as tw
from trueno_web.models import TransformerBlock
from trueno_web.runtime import block_on


def _ln_np(x, eps=1e-5):
    m = x.mean(-1, keepdims=True)
    return (x - m) / np.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + eps)


def _softmax_np(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _attention_np(q, k, v):
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    n = s.shape[-1]
    s = np.where(np.tril(np.ones((s.shape[-2], n), bool)), s, -np.inf)
    return _softmax_np(s) @ v


def _gelu_np(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def workloads(s: int):
    """(name, input shapes, ours(*tensors), torch(torch, *tensors), numpy(*arrays)); dims divided by s."""
    d = lambda n: max(n // s, 1)  # noqa: E731
    ff = lambda t: t.nn.functional  # noqa: E731
    return [
        (
            f"attention causal ({d(4)}, 16, {d(1024)}, 64)",
            [(d(4), 16, d(1024), 64)] * 3,
            lambda q, k, v: tw.nn.scaled_dot_product_attention(q, k, v, causal=True),
            lambda t, q, k, v: ff(t).scaled_dot_product_attention(q, k, v, is_causal=True),
            _attention_np,
        ),
        (
            f"layer_norm ({d(8192)}, {d(4096)})",
            [(d(8192), d(4096))],
            lambda x: tw.nn.layer_norm(x),
            lambda t, x: ff(t).layer_norm(x, (x.shape[-1],)),
            _ln_np,
        ),
        (
            f"mean(axis=(1, 2)) ({d(64)}, {d(1024)}, {d(1024)})",
            [(d(64), d(1024), d(1024))],
            lambda x: x.mean(axis=(1, 2)),
            lambda t, x: x.mean(dim=(1, 2)),
            lambda x: x.mean(axis=(1, 2)),
        ),
        (
            f"var(axis=-1) ({d(8192)}, {d(4096)})",
            [(d(8192), d(4096))],
            lambda x: x.var(axis=-1),
            lambda t, x: x.var(dim=-1, unbiased=False),
            lambda x: x.var(axis=-1),
        ),
        (
            f"sum(axis=0) ({d(8192)}, {d(4096)})",
            [(d(8192), d(4096))],
            lambda x: x.sum(axis=0),
            lambda t, x: x.sum(dim=0),
            lambda x: x.sum(axis=0),
        ),
        (
            f"softmax(-1) ({d(8192)}, {d(4096)})",
            [(d(8192), d(4096))],
            lambda x: x.softmax(-1),
            lambda t, x: x.softmax(-1),
            _softmax_np,
        ),
        (
            f"(x * 2 + 1).tanh() * y, 2^{int(math.log2(d(1 << 24)))}",
            [(d(1 << 24),)] * 2,
            lambda x, y: (x * 2 + 1).tanh() * y,
            lambda t, x, y: (x * 2 + 1).tanh() * y,
            lambda x, y: np.tanh(x * 2 + 1) * y,
        ),
        (
            f"x.T @ y, {d(2048)}^3",
            [(d(2048), d(2048))] * 2,
            lambda x, y: x.T @ y,
            lambda t, x, y: x.T @ y,
            lambda x, y: x.T @ y,
        ),
        (
            f"MLP {d(4096)}x{d(1024)}x{d(4096)}",
            [(d(4096), d(1024)), (d(1024), d(4096)), (d(4096),), (d(4096), d(1024)), (d(1024),)],
            lambda x, w1, b1, w2, b2: (x @ w1 + b1).gelu() @ w2 + b2,
            lambda t, x, w1, b1, w2, b2: ff(t).gelu(x @ w1 + b1, approximate="tanh") @ w2 + b2,
            lambda x, w1, b1, w2, b2: _gelu_np(x @ w1 + b1) @ w2 + b2,
        ),
    ]


def realised(build):
    """A call that builds the expression and realises it (eager: every call runs, none waits for the GPU)."""

    async def run():
        out = build()
        await tw.realize(out)
        return out

    return run


def sync_ours(out) -> None:
    block_on(tw.synchronize(out))


WARM_S = 0.3  # each timing first runs its calls this long: the GPU's memory clock ramps up under sustained work


def timed(run, sync, calls: int, rounds: int) -> float:
    """Best ms per call over rounds of `calls` calls and one sync, after WARM_S of them. (The lent GPU's memory
    clock drops when work is bursty: memory-bound kernels then run 2-5x long by their own GPU timestamps for
    a second or more; the best round is the machine's.)"""
    end = time.perf_counter() + WARM_S
    while time.perf_counter() < end:
        sync(run())
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            out = run()
        sync(out)
        times.append((time.perf_counter() - t0) / calls)
    return min(times) * 1e3


def timed_ours(call, calls: int, rounds: int) -> float:
    """timed() of an async call: each round's calls awaited one after the other in one coroutine, as an
    asyncio program calls them, then `tw.synchronize`."""

    async def round_of(n):
        for _ in range(n):
            out = await call()
        await tw.synchronize(out)

    end = time.perf_counter() + WARM_S
    while time.perf_counter() < end:
        block_on(round_of(calls))
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        block_on(round_of(calls))
        times.append((time.perf_counter() - t0) / calls)
    return min(times) * 1e3


def anatomy(dev, jitted, build, tensors, n: int = 200) -> tuple[float, float, float, float]:
    """(host us a jitted call through block_on, host us awaited in one coroutine, sync ms, kernels ms)."""
    out = block_on(jitted(*tensors))
    sync_ours(out)
    t0 = time.perf_counter()
    for _ in range(n):
        out = block_on(jitted(*tensors))
    host = (time.perf_counter() - t0) / n
    sync_ours(out)

    async def many():
        for _ in range(n):
            last = await jitted(*tensors)
        return last

    t0 = time.perf_counter()
    out = block_on(many())
    awaited = (time.perf_counter() - t0) / n
    sync_ours(out)
    t0 = time.perf_counter()
    sync_ours(out)
    sync = time.perf_counter() - t0
    dev.executor.pool.clear()  # room in the idle pool: the intermediates freed by the execute stay, not destroyed
    with dev.executor.holding():
        kept = build()  # its buffers stay alive while timed
        block_on(tw.realize(kept))
        kernels = Resident(dev).time(20)
    return host * 1e6, awaited * 1e6, sync * 1e3, kernels * 1e3


def rel_err(got, ref) -> float:
    ref = np.asarray(ref, np.float64)
    return float(np.abs(np.asarray(got, np.float64) - ref).max() / max(np.abs(ref).max(), 1e-30))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="webgpu")
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", default="", help="comma-separated name prefixes")
    parser.add_argument("--no-numpy", action="store_true")
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--numpy-max", type=float, default=2e9, help="skip NumPy past this many flops/elements")
    parser.add_argument("--anatomy", action="store_true", help="where a jitted call's time goes (webgpu)")
    args = parser.parse_args()
    dev = webgpu(TimedDriver, HoldingExecutor) if args.anatomy else block_on(tw.GpuDevice.create(args.backend))
    parts = []
    torch = None if args.no_torch else torch_cuda()
    rng = np.random.default_rng(0)
    print(
        f"# bench/workloads.py on {dev.adapter_info.get('device')} ({dev.backend}), scale 1/{args.scale}; ms per call"
    )
    print("| workload | ours | ours jit | torch | numpy | jit / torch | err |")
    print("|---|---|---|---|---|---|---|")
    rows = workloads(args.scale)
    rows.append(("transformer block", None, None, None, None))
    for name, shapes, ours, theirs, numpy_fn in rows:
        if args.only and not any(name.startswith(p) for p in args.only.split(",")):
            continue
        if shapes is None:
            block_rows(dev, torch, args, rng)
            continue
        arrays = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
        tensors = [dev.tensor(a) for a in arrays]
        block_on(tw.realize(*tensors))
        eager = timed_ours(realised(lambda: ours(*tensors)), args.calls, args.rounds)
        jitted = tw.jit(ours)
        jit_ms = timed_ours(lambda: jitted(*tensors), args.calls, args.rounds)
        got = block_on(ours(*tensors).numpy())
        torch_ms, numpy_ms, ref = float("nan"), float("nan"), None
        if torch is not None:
            tt = [torch.tensor(a, device="cuda") for a in arrays]
            ref = theirs(torch, *tt).cpu().numpy()
            torch_ms = timed(lambda: theirs(torch, *tt), lambda out: torch.cuda.synchronize(), args.calls, args.rounds)
        work = max(math.prod(s) for s in shapes) * (
            shapes[0][-1] if name.startswith(("attention", "x.T", "MLP")) else 1
        )
        if not args.no_numpy and work <= args.numpy_max:
            np_ref = numpy_fn(*arrays)
            numpy_ms = timed(lambda: numpy_fn(*arrays), lambda out: None, 1, args.rounds)
            ref = np_ref if ref is None else ref
        err = rel_err(got, ref) if ref is not None else float("nan")
        print(
            f"| {name} | {eager:.3f} | {jit_ms:.3f} | {torch_ms:.3f} | {numpy_ms:.1f} | {jit_ms / torch_ms:.2f} |"
            f" {err:.1e} |"
        )
        if args.anatomy:
            parts.append((name, anatomy(dev, jitted, lambda: ours(*tensors), tensors), jit_ms, torch_ms))
    if parts:
        print(
            "\n| workload (jitted) | host us, block_on | host us, awaited | sync ms | kernels ms | per call ms | torch ms |"
        )
        print("|---|---|---|---|---|---|---|")
        for name, (host, awaited, sync, kernels), jit_ms, torch_ms in parts:
            print(
                f"| {name} | {host:.1f} | {awaited:.1f} | {sync:.3f} | {kernels:.3f} | {jit_ms:.3f} | {torch_ms:.3f} |"
            )
    dev.close()


def block_rows(dev, torch, args, rng) -> None:
    """The transformer block (models.TransformerBlock) at seq 128 / d 256 / 4 heads and 1024 / 1024 / 16."""
    for seq, d_model, heads in ((128, 256, 4), (1024, 1024, 16)):
        seq, d_model = max(seq // args.scale, 1), max(d_model // args.scale, heads)
        w = weights_for(d_model)
        block = block_on(TransformerBlock.create(dev, w, n_heads=heads))
        x = rng.standard_normal((seq, d_model)).astype(np.float32)
        xt = dev.tensor(x)
        block_on(tw.realize(xt))
        eager = timed_ours(realised(lambda: block(xt)), args.calls, args.rounds)
        jitted = tw.jit(block)
        jit_ms = timed_ours(lambda: jitted(xt), args.calls, args.rounds)
        got = block_on(block(xt).numpy())
        ref = numpy_block(w, x.astype(np.float64), heads)
        torch_ms = float("nan")
        if torch is not None:
            forward = torch_block(torch, {k: torch.tensor(v, device="cuda") for k, v in w.items()}, heads)
            xc = torch.tensor(x, device="cuda")
            torch_ms = timed(lambda: forward(xc), lambda out: torch.cuda.synchronize(), args.calls, args.rounds)
        numpy_ms = timed(lambda: numpy_block(w, x, heads), lambda out: None, 1, args.rounds)
        print(
            f"| transformer block {seq}/{d_model}/{heads} | {eager:.3f} | {jit_ms:.3f} | {torch_ms:.3f} |"
            f" {numpy_ms:.1f} | {jit_ms / torch_ms:.2f} | {rel_err(got, ref):.1e} |"
        )


if __name__ == "__main__":
    main()

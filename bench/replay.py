"""Benchmark: the host cost of one `tw.jit` call replayed against the same call built and realised eagerly, apart
from the submit (encoding the dispatches into a command buffer and queueing it), for a 100-op chain (one kernel)
and a transformer block (many).

    python bench/replay.py [--backend webgpu] [--calls 300] [--rounds 5] [--block 128x256x4]

Each call is `await f(x)` (jit) or the expression built and `await tw.realize(out)` (eager: planned every call)
inside one running event loop, its output left on the device; the driver's submit, queue and settle are timed apart
(on wasm-simd the kernel calls), so "rest" is the call's Python: for a replay the argument signature, binding the arguments' and outputs' buffers into the kept
schedule, the output tensors. The issue's target: jit rest <= 40 us per call whatever the graph's size. Best of
--rounds rounds of --calls calls (eager: a tenth of them); the GPU is synced after each round. The workloads and
the timing are bench/replay_workloads.py's, shared with bench/browser_replay.py (the same in the page).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from replay_workloads import block_workload, chain, chain_input, eager, jitted, measure

import trueno_web as tw
from trueno_web.runtime import block_on


def row(name: str, dev, f, x, calls: int, rounds: int) -> None:
    """One line: eager and jit per call and rest, dispatches per call."""
    block_on(tw.realize(x))
    e = block_on(measure(dev, eager(f, x), max(calls // 10, 10), rounds))
    j = block_on(measure(dev, jitted(f, x), calls, rounds))
    rests = [f"{v:>8.1f}" if v is not None else f"{'n/a':>8}" for v in (e["rest"], j["rest"])]
    print(f"{name:>28} {j['dispatches']:>11} {e['call']:>12.1f} {rests[0]} {j['call']:>12.1f} {rests[1]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="webgpu")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--block", default="128x256x4", help="seq x d_model x heads of the transformer block")
    parser.add_argument("--no-queue", action="store_true", help="replays submitted at once (Driver.queue as submit)")
    args = parser.parse_args()
    dev = block_on(tw.GpuDevice.create(args.backend))
    if args.no_queue:
        dev.executor.driver.queue = dev.executor.driver.submit
    print(
        f"# bench/replay.py on {dev.adapter_info.get('device')} ({dev.backend}), best of {args.rounds} x {args.calls}"
    )
    print(f"{'graph':>28} {'dispatches':>11} {'eager us':>12} {'rest us':>8} {'jit us':>12} {'rest us':>8}")
    row("100-op chain, 2^16", dev, chain, chain_input(dev, 1 << 16), args.calls, args.rounds)
    seq, d_model, heads = (int(v) for v in args.block.split("x"))
    block, xb = block_on(block_workload(dev, seq, d_model, heads))
    row(f"transformer block {args.block}", dev, block, xb, max(args.calls // 10, 10), args.rounds)
    dev.close()


if __name__ == "__main__":
    main()

"""Benchmark: is `auto` ever much slower than the best single backend?

    python bench/auto.py [--sizes 10,14,16,18,20,22,24] [--repeat 5]

For each op of a grid (elementwise, fused chain, reduction, softmax, matmul, convolution) and size,
one-shot calls (upload, run, read back) on webgpu, numpy and auto; prints ms, the best single backend,
auto's ratio to it (the bound: at most 1.10), the step's work in the units of auto's thresholds, and per
kernel template where the GPU started to win in this run next to auto.GPU_FROM (the data to retune it).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import trueno_web as tw
from trueno_web.backends import auto
from trueno_web.runtime import block_on


def cases(p: int, rng):
    n = 1 << p
    x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    side = max(2, int(round(n ** (1 / 3))))
    a = rng.standard_normal((side, side), dtype=np.float32)
    img = rng.standard_normal((max(5, int(n**0.5)), max(5, int(n**0.5))), dtype=np.float32)
    ker = rng.standard_normal((5, 5), dtype=np.float32)
    rows = max(1, n // 1024)

    async def chain(dev):
        with dev.batch() as b:
            out = b.add(b.scale(b.relu(b.upload(x)), 2.0), b.upload(y))
            await b.execute()
            return await b.read(out)

    return {
        f"relu 2^{p}": lambda dev: dev.relu(x),
        f"add 2^{p}": lambda dev: dev.add(x, y),
        f"gelu 2^{p}": lambda dev: dev.gelu(x),
        f"chain3 batch 2^{p}": chain,
        f"sum 2^{p}": lambda dev: dev.sum(x),
        f"softmax {rows}x{n // rows}": lambda dev: dev.softmax(x.reshape(rows, -1)),
        f"matmul {side}^3": lambda dev: dev.matmul(a, a),
        f"convolve2d {img.shape[0]}^2 * 5x5": lambda dev: dev.convolve2d(img, ker),
    }


def timed(devices: dict, make, repeat: int, warmup: int) -> dict[str, float]:
    """Median ms per backend; the backends take turns in a rotating order, so a busy machine slows them alike."""
    for dev in devices.values():
        for _ in range(warmup):
            block_on(make(dev))
    runs: dict[str, list[float]] = {name: [] for name in devices}
    names = list(devices)
    for r in range(repeat):
        for name in names[r % len(names) :] + names[: r % len(names)]:  # rotate: no backend always goes after another
            dev = devices[name]
            start = time.perf_counter()
            block_on(make(dev))
            runs[name].append(time.perf_counter() - start)
    return {name: sorted(r)[len(r) // 2] * 1e3 for name, r in runs.items()}


def spy_on_work(executor) -> list:
    """The (template, work) of the largest step of every execute() the auto executor routes, as it sees them."""
    seen: list = []
    pick = executor.pick

    def spying(nodes, steps, used):
        seen.append(max((auto.work(s, nodes) for s in steps), key=lambda w: w[1]))
        return pick(nodes, steps, used)

    executor.pick = spying
    return seen


def crossovers(cells: list) -> dict:
    """Per template, the least work from which webgpu was faster in every measured cell of that much work or
    more (None: never), from cells [(template, work, webgpu faster?)]."""
    found = {}
    for kind in sorted({c[0] for c in cells}):
        mine = sorted((w, fast) for k, w, fast in cells if k == kind)
        start = None
        for w, fast in reversed(mine):
            if not fast:
                break
            start = w
        found[kind] = start
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10,14,16,18,20,22,24")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--warmup", type=int, default=2, help="untimed calls per backend and case first")
    parser.add_argument("--passes", type=int, default=1, help="run the grid this many times, report the last")
    args = parser.parse_args()
    devices = {name: block_on(tw.GpuDevice.create(name)) for name in ("webgpu", "numpy", "auto")}
    print(
        f"# webgpu adapter: {devices['webgpu'].adapter_info['device']}; auto is {devices['auto'].backend!r}"
        f" ({devices['auto'].adapter_info.get('device', '')})"
    )
    routed = devices["auto"].backend == "auto"  # a hardware GPU: auto routes each call
    seen = spy_on_work(devices["auto"].executor) if routed else []
    print("| case | webgpu ms | numpy ms | auto ms | best | auto / best | work (template) |")
    print("|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    sizes = [int(s) for s in args.sizes.split(",")]
    for _ in range(args.passes - 1):  # earlier passes only warm: new staging buffers slow a device's first few dozen
        for p in sizes:  # large transfers (docs/benchmarks.md, "the slow state")
            for make in cases(p, rng).values():
                timed(devices, make, 1, 1)
    worst = 0.0
    cells = []
    for p in sizes:
        for label, make in cases(p, rng).items():
            t = timed(devices, make, args.repeat, args.warmup)
            best = min(("webgpu", "numpy"), key=t.get)
            ratio = t["auto"] / t[best]
            worst = max(worst, ratio)
            kind, amount = seen[-1] if seen else ("", 0)
            cells.append((kind, amount, best == "webgpu"))
            print(
                f"| {label} | {t['webgpu']:.3f} | {t['numpy']:.3f} | {t['auto']:.3f} | {best} | {ratio:.2f} | "
                f"{amount} ({kind}) |"
            )
    print(f"\nworst auto / best: {worst:.2f} (bound 1.10)")
    if routed:
        print(
            "GPU faster from (work units, this run) vs auto.GPU_FROM: "
            + ", ".join(
                f"{kind} {start if start is not None else 'never'} vs {auto.GPU_FROM[kind]}"
                for kind, start in crossovers(cells).items()
            )
        )


if __name__ == "__main__":
    main()

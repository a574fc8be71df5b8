"""Benchmark: a sort of 2^24 float32 keys (one row), synced (`await tw.synchronize(t)`), against torch.sort.

    python bench/sort.py --backend webgpu --n 16777216 [--rows 1] [--repeat 5] [--argsort] [--radix BITS=4 ...]
        [--gpu-time] [--no-numpy]

Prints, for `t.sort()` (or `t.argsort()`) on a resident tensor of `rows` rows of n / rows random float32 keys,
jitted (`tw.jit`) and eager: ms a call with a sync after each and ms a call in rounds of 10 calls then one
sync (best of --repeat rounds after 0.3 s of the same calls: bench/workloads.py's `timed`), whether the result
equals NumPy's stable sort, and, where torch imports, torch.sort of the same keys timed the same way (on CUDA
where there is one, else the CPU) and NumPy's stable sort, for scale.
`--radix NAME=VALUE` (repeatable) sets a constant of kernels/sort_radix.py (rows past 2048) first: BITS,
THREADS, PER, SCAN_PER, STAGED, SUBGROUPS, UNROLL (0 or 1), SG_MIN, NARROW. `--gpu-time` (webgpu): also the kernels
alone by GPU timestamps (bench/grid.py's Resident), the whole sort and each radix kernel's dispatches of
every pass together (a kernel run apart from the others reads what the last whole sort left), and a jitted
call's anatomy (bench/workloads.py's).
"""

from __future__ import annotations

import argparse

import numpy as np
from devices import HoldingExecutor, TimedDriver, webgpu
from grid import Resident, set_constants, wall_ms
from workloads import anatomy, sync_ours, timed

import trueno_web as tw
from trueno_web.kernels import sort_radix
from trueno_web.runtime import block_on

KERNELS = ("radix_count", "radix_scan", "radix_carry", "radix_move")  # a pass's dispatches, in order


def gpu_times(dev, t, argsort: bool, reps: int = 10) -> str:
    """GPU ms of the sort's dispatches (timestamps), all of them and each radix kernel's."""
    ex, resident = dev.executor, Resident(dev)
    with ex.holding():
        block_on(tw.realize(t.argsort() if argsort else t.sort()))
        work = list(ex.held)
        resident.gpu_ns(work, 2)  # (pipelines and clocks warm)
        ms = lambda part: sorted(resident.gpu_ns(part, reps) for _ in range(5))[2] / reps / 1e6  # noqa: E731
        parts = [f"all {ms(work):.3f}"]
        if len(work) % len(KERNELS) == 0:  # (a row past BLOCK: the radix sort's passes)
            parts += [f"{name} {ms(work[k :: len(KERNELS)]):.3f}" for k, name in enumerate(KERNELS)]
    return ", ".join(parts)


def ours(backend: str, x: np.ndarray, repeat: int, argsort: bool, gpu_time: bool) -> tuple[float, float]:
    """(ms a call with a sync after each, ms a call in rounds of 10 calls then one sync) of the jitted sort;
    prints the eager call's, and with gpu_time the kernels' GPU time and a jitted call's anatomy."""
    dev = webgpu(TimedDriver, HoldingExecutor) if gpu_time else block_on(tw.GpuDevice.create(backend))
    t = tw.asarray(x, dev)
    block_on(tw.realize(t))  # resident: the timing leaves the upload out
    got = block_on((t.argsort() if argsort else t.sort()).numpy())
    want = np.argsort(x, -1, kind="stable") if argsort else np.sort(x, -1, kind="stable")
    print(f"result equals NumPy's stable sort: {np.array_equal(got, want)}")
    jitted = tw.jit(lambda a: a.argsort() if argsort else a.sort())

    def eager():  # submitted, not waited for
        out = t.argsort() if argsort else t.sort()
        block_on(tw.realize(out))
        return out

    try:
        one, ten = (timed(lambda: block_on(jitted(t)), sync_ours, calls, repeat) for calls in (1, 10))
        eager_ms = [timed(eager, sync_ours, calls, repeat) for calls in (1, 10)]
        print(f"eager (not jitted): {eager_ms[0]:.3f} ms a call synced, {eager_ms[1]:.3f} in rounds of 10")
        if gpu_time:
            print(f"GPU ms (timestamps): {gpu_times(dev, t, argsort)}")
            host, awaited, sync, kernels = anatomy(dev, jitted, lambda: jitted.__wrapped__(t), (t,))
            print(
                f"jitted call: host {host:.0f} us (block_on), {awaited:.0f} us (awaited); sync alone {sync:.3f} ms; "
                f"kernels {kernels:.3f} ms"
            )
        return one, ten
    finally:
        dev.close()


def torch_ms(x: np.ndarray, repeat: int) -> tuple[str, float, float] | None:
    """(device, ms a call synced, ms a call in rounds of 10), or None without torch."""
    try:
        import torch
    except ImportError:
        return None
    device = "cuda" if torch.cuda.is_available() else "cpu"
    keys = torch.from_numpy(x).to(device)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    run = lambda: torch.sort(keys, dim=-1, stable=True)  # noqa: E731
    return device, *(timed(run, lambda _: sync(), calls, repeat) for calls in (1, 10))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="webgpu")
    parser.add_argument("--n", type=int, default=1 << 24)
    parser.add_argument("--rows", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--argsort", action="store_true")
    parser.add_argument("--radix", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--gpu-time", action="store_true", help="also the kernels alone by GPU timestamps (webgpu)")
    parser.add_argument("--no-numpy", action="store_true", help="leave NumPy's sort out (seconds at 2^24)")
    args = parser.parse_args()
    set_constants(sort_radix, args.radix)
    x = np.random.default_rng(0).standard_normal(args.n, dtype=np.float32).reshape(args.rows, -1)
    what = "argsort" if args.argsort else "sort"
    one, ten = ours(args.backend, x, args.repeat, args.argsort, args.gpu_time)
    print(
        f"trueno_web {args.backend} {what} {x.shape} {' '.join(args.radix)}, jitted: {one:.3f} ms a call synced, "
        f"{ten:.3f} in rounds of 10 ({args.n / ten * 1e3 / 1e9:.3f} G keys/s)"
    )
    other = torch_ms(x, args.repeat)
    if other:
        print(
            f"torch.sort ({other[0]}) {x.shape}: {other[1]:.3f} ms a call synced, {other[2]:.3f} in rounds of 10; "
            f"ours / torch {one / other[1]:.2f}, {ten / other[2]:.2f}"
        )
    if not args.no_numpy:
        print(
            f"numpy sort(kind='stable') {x.shape}: {wall_ms(lambda: np.sort(x, -1, kind='stable'), args.repeat):.2f} ms"
        )


if __name__ == "__main__":
    main()

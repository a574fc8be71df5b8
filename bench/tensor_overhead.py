"""Benchmark: what the lazy tensor layer costs over a hand-built GpuCommandBatch doing the same work.

    python bench/tensor_overhead.py [--backend webgpu] [--size 20] [--repeat 15] [--warmup 3] [--profile]

Workloads at n = 2^size elements, each written three ways: (a) a tensor expression realised and read
with `await t.numpy()`, (b) the same graph recorded by hand into a GpuCommandBatch (upload, ops, a
view for the broadcast, execute, read), (c) NumPy on the host.

    chain.sum   ((x * 2 + b).relu() * y).sum()            x, b, y of n elements; one float back
    chain       (x * 2 + b).relu() * y                    n floats back
    bias.relu   (x + bias).relu()                         x (n / 1024, 1024), bias (1024,) broadcast
    rows.sum    (x * y).sum(axis=-1)                      (n / 1024, 1024) -> n / 1024 floats

Inputs: `host` (each run uploads them, as a first call would) and `resident` (uploaded once as
DeviceArrays, each run imports them: what is left is recording, planning, kernels and the download).
The three ways take turns run by run, so a busy machine slows them alike; each figure is the median of
--repeat runs after --warmup untimed ones. Prints ms, tensor/batch (the target: at most 1.10 at 2^20)
and tensor/NumPy, and the dispatches of one run of each (the same work). --profile: after each row, the
phases of both paths in us per run (Phases), so the difference can be placed.
"""

from __future__ import annotations

import argparse
import itertools
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import trueno_web as tw
from trueno_web import ops
from trueno_web.runtime import block_on

COLS = 1024


def workloads(n: int, rng) -> dict:
    """name -> (host inputs, tensor expression of tensors, batch recording of BufferIds, NumPy on arrays);
    each way gets exactly the inputs its workload reads."""
    cols = min(COLS, n)
    rows = n // cols
    x, b, y = (rng.standard_normal(n, dtype=np.float32) for _ in range(3))
    xm, ym = x.reshape(rows, cols), y.reshape(rows, cols)
    bias = rng.standard_normal(cols, dtype=np.float32)

    def chain_batch(bt, x, b, y):
        return bt.mul(bt.relu(bt.add(bt.scale(x, 2.0), b)), y)

    def bias_batch(bt, x, bias):  # the broadcast as the tensor layer makes it: a view of stride 0
        return bt.relu(bt.add(x, bt.view(bias, (rows, cols), (0, 1))))

    def rows_batch(bt, x, y):
        return bt.record(ops.get("sum"), (bt.mul(x, y),), (), {"rows": rows})

    return {
        "chain.sum": (
            (x, b, y),
            lambda x, b, y: ((x * 2 + b).relu() * y).sum(),
            lambda bt, x, b, y: bt.sum(chain_batch(bt, x, b, y)),
            lambda x, b, y: (np.maximum(x * np.float32(2) + b, 0) * y).sum(),
        ),
        "chain": (
            (x, b, y),
            lambda x, b, y: (x * 2 + b).relu() * y,
            chain_batch,
            lambda x, b, y: np.maximum(x * np.float32(2) + b, 0) * y,
        ),
        "bias.relu": (
            (xm, bias),
            lambda x, bias: (x + bias).relu(),
            bias_batch,
            lambda x, bias: np.maximum(x + bias, 0),
        ),
        "rows.sum": ((xm, ym), lambda x, y: (x * y).sum(axis=-1), rows_batch, lambda x, y: (x * y).sum(axis=-1)),
    }


class Runner:
    """One workload on one device, its inputs from the host or resident."""

    def __init__(self, dev, inputs: tuple, expr, record, resident: bool):
        self.dev, self.expr, self.record = dev, expr, record
        self.host = list(inputs)
        self.data = [block_on(dev.upload(a)) for a in self.host] if resident else self.host

    def tensor(self):
        return block_on(self.expr(*(self.dev.tensor(a) for a in self.data)).numpy())

    def batch(self):
        return block_on(self._batch())

    async def _batch(self):
        with self.dev.batch() as bt:
            out = self.record(bt, *(bt.upload(a) for a in self.data))
            await bt.execute()
            return await bt.read(out)

    def dispatches(self, fn) -> int:
        before = self.dev.stats.dispatches
        fn()
        return self.dev.stats.dispatches - before


def timed(fns: dict, repeat: int, warmup: int) -> dict[str, float]:
    """Median ms of each callable; they take turns, each round in the next permutation of their order (a
    plain rotation let the tensor way follow the NumPy way, whose host work cools the caches, in 2 rounds
    of 3, the batch way in 1)."""
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    runs: dict[str, list[float]] = {k: [] for k in fns}
    orders = list(itertools.permutations(fns))  # each way follows each other way equally often
    for r in range(repeat):
        for name in orders[r % len(orders)]:
            start = time.perf_counter()
            fns[name]()
            runs[name].append((time.perf_counter() - start) * 1e3)
    return {k: statistics.median(v) for k, v in runs.items()}


class Phases:
    """Per-run time of the phases of both paths, from wrappers around the library's own steps (only with
    --profile): the tensor path's expression building, recording (tensor.lower._emit: the batch calls the hand-built
    batch makes too), execute, the rest of realize (walks, keep, detach, DeviceArrays) and the read; the
    batch path's recording, execute and read."""

    def __init__(self):
        from trueno_web import batch, resident
        from trueno_web.tensor import lower

        self.acc: dict[str, float] = {}
        self._undo = []
        for owner, attr, key in (
            (batch.GpuCommandBatch, "execute", "execute"),
            (batch.GpuCommandBatch, "read", "read"),
            (resident.DeviceArray, "read", "read"),
            (lower, "_emit", "record"),
        ):
            self._wrap(owner, attr, key)

    def _wrap(self, owner, attr, key):
        import inspect

        fn, acc = getattr(owner, attr), self.acc
        if inspect.iscoroutinefunction(fn):

            async def timed_fn(*a, **k):
                start = time.perf_counter()
                try:
                    return await fn(*a, **k)
                finally:
                    acc[key] = acc.get(key, 0.0) + time.perf_counter() - start
        else:

            def timed_fn(*a, **k):
                start = time.perf_counter()
                try:
                    return fn(*a, **k)
                finally:
                    acc[key] = acc.get(key, 0.0) + time.perf_counter() - start

        setattr(owner, attr, timed_fn)
        self._undo.append((owner, attr, fn))

    def close(self):
        for owner, attr, fn in reversed(self._undo):
            setattr(owner, attr, fn)

    def measure(self, runner: Runner, repeat: int) -> None:
        """Both paths, taking turns run by run; prints the median of each phase, in us per run."""
        for _ in range(max(3, repeat // 5)):
            runner.tensor(), runner.batch()
        tensor_runs, batch_runs = [], []
        for _ in range(repeat):
            self.acc.clear()
            start = time.perf_counter()
            out = runner.expr(*(runner.dev.tensor(a) for a in runner.data))
            built = time.perf_counter()
            block_on(out.numpy())
            done = time.perf_counter()
            a = dict(self.acc)
            tensor_runs.append(
                {
                    "total": done - start,
                    "build": built - start,
                    "record": a["record"],
                    "execute": a["execute"],
                    "read": a["read"],
                    "realize": done - built - a["record"] - a["execute"] - a["read"],
                }
            )
            self.acc.clear()
            start = time.perf_counter()
            runner.batch()
            total = time.perf_counter() - start
            a = dict(self.acc)
            batch_runs.append(
                {"total": total, "execute": a["execute"], "read": a["read"], "record": total - a["execute"] - a["read"]}
            )
        t = {k: statistics.median(r[k] for r in tensor_runs) * 1e6 for k in tensor_runs[0]}
        b = {k: statistics.median(r[k] for r in batch_runs) * 1e6 for k in batch_runs[0]}
        print(
            f"  phases, median us per run: tensor {t['total']:.0f}: build {t['build']:.0f}, record "
            f"{t['record']:.0f}, execute {t['execute']:.0f}, rest of realize {t['realize']:.0f}, read {t['read']:.0f}"
            f" | batch {b['total']:.0f}: record (with batch(), block_on, release) {b['record']:.0f}, execute "
            f"{b['execute']:.0f}, read {b['read']:.0f} | difference {t['total'] - b['total']:+.0f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="webgpu", help="webgpu, numpy, wasm-simd or auto")
    parser.add_argument("--size", type=int, default=20, help="log2 of the element count (default 20)")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated workload names (default: all)")
    parser.add_argument("--inputs", default="host,resident", help="host, resident or host,resident")
    parser.add_argument(
        "--profile", action="store_true", help="after each row, where each path's time goes (us per run)"
    )
    args = parser.parse_args()
    n = 1 << args.size
    dev = block_on(tw.GpuDevice.create(args.backend))
    info = dev.adapter_info
    print(
        f"# bench/tensor_overhead.py --backend {dev.backend} --size {args.size} --repeat {args.repeat}: "
        f"{info.get('device', '')} ({info.get('backend_type', '')}); host {platform.machine()}, "
        f"Python {platform.python_version()}, NumPy {np.__version__}"
    )
    print("| workload | n | inputs | tensor ms | batch ms | numpy ms | tensor/batch | tensor/numpy | dispatches t/b |")
    print("|---|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    ratios = []
    phases = Phases() if args.profile else None
    for name, (inputs, expr, record, host_fn) in workloads(n, rng).items():
        if args.only and name not in args.only.split(","):
            continue
        want = host_fn(*inputs)
        for mode in args.inputs.split(","):
            runner = Runner(dev, inputs, expr, record, mode == "resident")
            for got in (runner.tensor(), runner.batch()):
                got = np.asarray(got)
                tol = 1e-4 * np.abs(inputs[0]).sum() if got.ndim == 0 else 1e-3
                np.testing.assert_allclose(got, want, rtol=1e-4, atol=tol)
            dispatches = f"{runner.dispatches(runner.tensor)}/{runner.dispatches(runner.batch)}"
            t = timed(
                {"tensor": runner.tensor, "batch": runner.batch, "numpy": lambda: host_fn(*inputs)},
                args.repeat,
                args.warmup,
            )
            ratio = t["tensor"] / t["batch"]
            ratios.append(ratio)
            print(
                f"| {name} | 2^{args.size} | {mode} | {t['tensor']:.3f} | {t['batch']:.3f} | {t['numpy']:.3f} | "
                f"{ratio:.3f} | {t['tensor'] / t['numpy']:.2f} | {dispatches} |",
                flush=True,
            )
            if phases is not None:
                phases.measure(runner, args.repeat)
    if phases is not None:
        phases.close()
    if ratios:
        print(
            f"\n# tensor/batch: median {statistics.median(ratios):.3f}, worst {max(ratios):.3f} "
            f"(target <= 1.10 at 2^20)"
        )
    dev.close()


if __name__ == "__main__":
    main()

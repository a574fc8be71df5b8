"""Accuracy sweep: every elementwise op of the catalog on a dense float32 sample (accuracy.sweep_sample:
every exponent of both signs, subnormals, +-0, +-inf, NaN, and a dense grid where activations bend) against
its float64 reference, in ulps of the float32 result; prints the worst case per op next to the catalog's
bound, and the input where it happened.

    python bench/accuracy_sweep.py [--backend webgpu|numpy|wasm-simd] [--log2n 20] [--ops gelu,mish]

The table in docs/accuracy.md comes from this script (2^20 values per op; binary ops: 2^20 pairs).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import trueno_web as tw
from trueno_web import accuracy, ops
from trueno_web.runtime import block_on


def measure(dev, op: ops.Op, n: int, seed: int = 0):
    """(worst ulp error, the inputs there, got, float64 want) of one op on one device."""
    inputs = accuracy.sweep_inputs(op, n, seed)
    kw = accuracy.sweep_params(op)
    got = np.asarray(block_on(getattr(dev, op.name)(*inputs, **kw))).reshape(-1)
    err = accuracy.sweep_errors(op, inputs, got, kw, flush=dev.backend == "webgpu")
    i = int(np.argmax(err))
    want = accuracy.float64_reference(op, inputs, kw)[i]
    return float(err[i]), [float(x[i]) for x in inputs], float(got[i]), float(want)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="numpy")
    ap.add_argument("--log2n", type=int, default=20)
    ap.add_argument("--ops", default="")
    args = ap.parse_args()
    dev = block_on(tw.GpuDevice.create(args.backend))
    names = set(args.ops.split(",")) - {""}
    print(f"{dev.backend}: {dev.adapter_info.get('device', '')}, 2^{args.log2n} values per op")
    print(f"{'op':12} {'bound':>6} {'worst ulp':>10}  at input -> got (float64 want)")
    for op in ops.CATALOG:
        if not op.elementwise or (names and op.name not in names):
            continue
        t = time.perf_counter()
        worst, at, got, w = measure(dev, op, 1 << args.log2n)
        flag = "" if worst <= op.ulp else "  OVER"
        print(f"{op.name:12} {op.ulp:6g} {worst:10.3g}  {at} -> {got!r} ({w!r}) {time.perf_counter() - t:.1f}s{flag}")
    dev.close()


if __name__ == "__main__":
    main()

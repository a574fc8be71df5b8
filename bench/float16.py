"""Check: float16 on a real adapter, bit for bit against NumPy (tests/test_float16.py runs the same on lavapipe).

    python bench/float16.py [--backend webgpu]

Prints the mismatches (NaN counted by class) of: every float16 decoded to float32 and encoded back; 100k
float32 values over every float16 range (subnormal to overflow) and the special values, encoded; add, mul
and a fused x * 3 + y on 2^20 float16 values; a transpose's strided float16 loads into a float16 result
(one element a thread, each writing its half of a shared word). A GPU compiler that assumes finite math or
flushes subnormals would show here.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

import trueno_web as tw
from trueno_web.runtime import block_on


def mismatches(got: np.ndarray, want: np.ndarray) -> int:
    """Elements whose bits differ (two NaNs agree), of two arrays of one dtype."""
    bits = np.uint16 if want.dtype == np.float16 else np.uint32
    nan = np.isnan(got) & np.isnan(want)
    return int(((got.view(bits) != want.view(bits)) & ~nan).sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="webgpu")
    args = parser.parse_args()
    warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's overflow warnings for the reference casts
    dev = block_on(tw.GpuDevice.create(args.backend))
    print(f"# bench/float16.py on {args.backend}: {dev.adapter_info.get('device', '')}")
    halves = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    t = tw.asarray(halves, dev)
    print("decode (all 65536):", mismatches(block_on(t.astype(tw.float32).numpy()), halves.astype(np.float32)))
    print("decode + encode (all 65536):", mismatches(block_on(t.astype(tw.float32).astype(tw.float16).numpy()), halves))
    rng = np.random.default_rng(0)
    special = [-0.0, 0.0, 65504, 65519.99, 65520, -65520, np.inf, -np.inf, np.nan, 2**-25, 2**-24, 6e-5, 1e-45]
    x = np.concatenate([rng.standard_normal(100000) * 10.0 ** rng.integers(-9, 6, 100000), special]).astype(np.float32)
    print(
        "encode (100k + specials):",
        mismatches(block_on(tw.asarray(x, dev).astype(tw.float16).numpy()), x.astype(np.float16)),
    )
    a = (rng.standard_normal(1 << 20) * 100).astype(np.float16)
    b = rng.standard_normal(1 << 20).astype(np.float16)
    ta, tb = tw.asarray(a, dev), tw.asarray(b, dev)
    for name, f in [("add", lambda p, q: p + q), ("mul", lambda p, q: p * q), ("x * 3 + y", lambda p, q: p * 3 + q)]:
        print(f"{name} (2^20):", mismatches(block_on(f(ta, tb).numpy()), f(a, b)))
    square = a.reshape(1024, 1024)
    print(
        "x.T + 0 (strided loads, scalar stores):",
        mismatches(block_on((ta.reshape(1024, 1024).T + 0).numpy()), square.T + 0),
    )
    dev.close()


if __name__ == "__main__":
    main()

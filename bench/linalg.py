"""tw.linalg timings: each function on n x n float32 matrices (n = 64, 256) on one backend, wall time of
the call and its read-back (the lazy ones build the expression, then one batch runs it), against
numpy.linalg in float32 on the host for scale.

    python bench/linalg.py [--backend numpy|webgpu|wasm-simd] [--sizes 64,256] [--only solve,eigh]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import trueno_web as tw
from trueno_web.runtime import block_on

L = tw.linalg


def cases(n: int, rng):
    a = (rng.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32)  # |det| near 1, not past float32
    spd = (a @ a.T + n * np.eye(n)).astype(np.float32)
    b = rng.standard_normal((n, 4)).astype(np.float32)
    return {
        "cholesky": (lambda d: L.cholesky(d["spd"]), lambda: np.linalg.cholesky(spd)),
        "solve": (lambda d: L.solve(d["a"], d["b"]), lambda: np.linalg.solve(a, b)),
        "inv": (lambda d: L.inv(d["a"]), lambda: np.linalg.inv(a)),
        "det": (lambda d: L.det(d["a"]), lambda: np.linalg.det(a)),
        "qr": (lambda d: L.qr(d["a"])[1], lambda: np.linalg.qr(a)),
        "eigh": (lambda d: block_on(L.eigh(d["spd"]))[1], lambda: np.linalg.eigh(spd)),
        "svd": (lambda d: block_on(L.svd(d["a"]))[0], lambda: np.linalg.svd(a)),
        "svdvals": (lambda d: block_on(L.svdvals(d["a"])), lambda: np.linalg.svd(a, compute_uv=False)),
    }, {"a": a, "spd": spd, "b": b}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="numpy")
    ap.add_argument("--sizes", default="64,256")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    dev = block_on(tw.GpuDevice.create(args.backend))
    rng = np.random.default_rng(0)
    print(f"backend {args.backend}: seconds per call (with its read-back), numpy.linalg float32 for scale")
    for n in (int(s) for s in args.sizes.split(",")):
        table, host = cases(n, rng)
        data = {k: tw.asarray(v, dev) for k, v in host.items()}
        for name, (ours, ref) in table.items():
            if args.only and name not in args.only.split(","):
                continue
            t0 = time.perf_counter()
            block_on(ours(data).numpy())
            t1 = time.perf_counter()
            ref()
            t2 = time.perf_counter()
            print(f"n={n:4d} {name:9s} {t1 - t0:9.3f}   numpy {t2 - t1:9.5f}")
    dev.close()


if __name__ == "__main__":
    main()

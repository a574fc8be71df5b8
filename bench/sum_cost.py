"""What the compensated sums cost: the kernels that accumulate float32 pairs (full sums, dot, sums along
rows, layer_norm, softmax's denominator) on resident buffers, against the same kernels with the pair arithmetic
made plain float32 adds (`--plain`: tw_lane_add and tw_pair_add of shaders/functions.wgsl add the first
component and carry a zero error; the pair's storage stays, so this isolates the arithmetic).

    python bench/sum_cost.py [--plain] [--log2n 24]

GPU clocks drift from minute to minute: run it in turns (compensated, plain, compensated, plain) and compare
the GB/s of each row across the runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from devices import HoldingExecutor, TimedDriver, webgpu
from grid import Resident

import trueno_web as tw
from trueno_web import kernels, nn
from trueno_web.kernels import source
from trueno_web.runtime import block_on

PLAIN = {
    "tw_lane_add": "fn tw_lane_add(p: vec2<f32>, x: f32) -> vec2<f32> { return vec2<f32>(p.x + x, 0.0); }",
    "tw_pair_add": "fn tw_pair_add(p: vec2<f32>, q: vec2<f32>) -> vec2<f32> { return vec2<f32>(p.x + q.x, 0.0); }",
}


def plain_functions(text: str) -> str:
    """shaders/functions.wgsl with PLAIN's functions in place of the compensated ones."""
    for name, body in PLAIN.items():
        start = text.index(f"fn {name}(")
        end = text.index("\n}\n", start) + 3
        text = text[:start] + body + "\n" + text[end:]
    return text


def use_plain_sums() -> None:
    """Every kernel module built after this reads the plain functions (before any kernel is generated)."""
    real = source.shader

    def shader(name: str) -> str:
        return plain_functions(real(name)) if name == "functions" else real(name)

    for module in (source, *(getattr(kernels, m) for m in ("reduce", "rows", "softmax", "map"))):
        module.shader = shader


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plain", action="store_true", help="plain float32 accumulation instead of pairs")
    parser.add_argument("--log2n", type=int, default=24)
    args = parser.parse_args()
    if args.plain:
        use_plain_sums()
    dev = webgpu(TimedDriver, HoldingExecutor)
    res = Resident(dev)
    n = 1 << args.log2n
    rng = np.random.default_rng(0)
    x, y = (block_on(dev.upload(rng.standard_normal(n, dtype=np.float32))) for _ in range(2))
    cases = [
        (f"sum 2^{args.log2n}", lambda: dev.tensor(x).sum(), 4 * n),
        (f"dot 2^{args.log2n}", lambda: dev.tensor(x).dot(dev.tensor(y)), 8 * n),
    ]
    for rows in (n // 16384, n // 4096, n // 1024, n // 64):
        cols = n // rows
        cases += [
            (
                f"sum along rows {rows}x{cols}",
                lambda c=cols: dev.tensor(x).reshape(-1, c).sum(-1),
                4 * n + 4 * (n // cols),
            ),
            (f"softmax {rows}x{cols}", lambda c=cols: dev.tensor(x).reshape(-1, c).softmax(), 8 * n),
        ]
    cases.append((f"layer_norm {n // 1024}x1024", lambda: nn.layer_norm(dev.tensor(x).reshape(-1, 1024)), 8 * n))
    print(f"# {'plain float32' if args.plain else 'compensated'} sums; adapter {dev.adapter_info.get('device')}")
    print("| kernel | GB/s | us |\n|---|---|---|")
    for label, build, nbytes in cases:
        expr = build()
        with res.ex.holding():
            block_on(tw.realize(expr))
            t = res.time(reps=50)
        print(f"| {label} | {nbytes / t / 1e9:.0f} | {t * 1e6:.1f} |", flush=True)


if __name__ == "__main__":
    main()

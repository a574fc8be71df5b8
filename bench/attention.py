"""Benchmark: the fused attention kernel alone, GPU-timed on resident inputs, against torch's
scaled_dot_product_attention (CUDA events) on the same card.

    python bench/attention.py [--shapes 4x16x1024x64,1x16x4096x64] [--reps 20] [--set NAME=VALUE ...]

Each shape (batch x heads x length x head dim), causal and not: the kernel (shaders/attention.wgsl) by
bench/grid.py's Resident (GPU timestamps); TFLOPS count the scores and the products with V once (causal:
half). Small shapes are checked against the unfused float64 expression first. `--set NAME=VALUE` (repeatable)
sets a constant of kernels/attention.py first: TILED, TILED_SHUFFLES, THREADS, MAX_BK, GROUP, FULL_GROUPS, or SPLITS,
FULL_SPLITS (comma-separated: 4,1); or of kernels/attention_tiled.py: KEYS, PV_UNROLL.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from devices import HoldingExecutor, TimedDriver, webgpu
from grid import Resident, cuda_time, set_constants, torch_cuda

import trueno_web as tw
from trueno_web.kernels import attention, attention_tiled
from trueno_web.runtime import block_on


def unfused(q, k, v, causal):
    s = q.astype(np.float64) @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.arange(s.shape[-1]) <= np.arange(s.shape[-2])[:, None], s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="4x16x1024x64,1x16x4096x64")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    args = ap.parse_args()
    for setting in args.set:  # a constant of kernels/attention.py, else of kernels/attention_tiled.py
        set_constants(attention if hasattr(attention, setting.split("=")[0]) else attention_tiled, [setting])
    dev = webgpu(TimedDriver, HoldingExecutor)
    res, torch = Resident(dev), torch_cuda()
    print(f"# bench/attention.py: {dev.adapter_info['device']}; torch cuda: {torch is not None} {' '.join(args.set)}")
    print("| shape | causal | ours ms | TFLOPS | torch ms | ours/torch |\n|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    for spec in args.shapes.split(","):
        shape = tuple(int(d) for d in spec.split("x"))
        host = [rng.standard_normal(shape, dtype=np.float32) for _ in range(3)]
        q, k, v = (dev.tensor(block_on(dev.upload(a))) for a in host)
        for causal in (True, False):
            flops = 4 * np.prod(shape) * shape[-2] / (2 if causal else 1)
            t_ms = ""
            if torch is not None:
                qt, kt, vt = (torch.from_numpy(a).cuda() for a in host)
                sdpa = torch.nn.functional.scaled_dot_product_attention
                t_ms = cuda_time(torch, lambda: sdpa(qt, kt, vt, is_causal=causal)) * 1e3
            with dev.executor.holding():
                out = tw.nn.scaled_dot_product_attention(q, k, v, causal=causal)
                block_on(tw.realize(out))
                seconds = res.time(args.reps)
            if shape[0] * shape[1] * shape[2] <= 1 << 16:
                got = block_on(out.numpy())
                assert np.allclose(got, unfused(*host, causal), rtol=1e-4, atol=1e-4), (spec, causal)
            ratio = f"{seconds * 1e3 / t_ms:.2f}" if t_ms else ""
            torch_text = f"{t_ms:.3f}" if t_ms else ""
            print(
                f"| {spec} | {causal} | {seconds * 1e3:.3f} | {flops / seconds / 1e12:.1f} | {torch_text} | {ratio} |"
            )
    dev.close()


if __name__ == "__main__":
    main()

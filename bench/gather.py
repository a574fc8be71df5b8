"""Benchmark: gathers, synced (`await tw.synchronize(t)`), against torch on the same device.

    python bench/gather.py --backend webgpu --n 16777216 [--repeat 20] [--vpt 4] [--gpu-time] [--jit]

Prints the median ms and GB/s (bytes read and written) of
  take:      x[idx] of n random int32 indices into n float32 values (torch: x[idx]);
  embedding: w[ids] of n / 64 random token ids into a (50257, 64) float32 table (n values out; torch:
             torch.nn.functional.embedding),
each on resident inputs (the timing leaves the uploads out); torch on CUDA where there is one, else the CPU.
--vpt: the map kernel's vec4s per thread (Caps.map_vpt; default: the adapter's) on webgpu. --gpu-time: the
kernels alone on the GPU (bench/grid.py's Resident: timestamps; torch by CUDA events) instead of wall clock.
--jit: ours as a `tw.jit` function of (data, indices), replayed each call.
"""

from __future__ import annotations

import argparse

import numpy as np
from devices import HoldingExecutor, TimedDriver, webgpu
from grid import Resident, cuda_time, wall_ms

import trueno_web as tw
from trueno_web.runtime import block_on

VOCAB, WIDTH = 50257, 64


def cases(n: int, rng) -> dict:
    """name -> (data, indices, bytes moved per run)."""
    x = rng.standard_normal(n, dtype=np.float32)
    idx = rng.integers(0, n, n, dtype=np.int32)
    w = rng.standard_normal((VOCAB, WIDTH), dtype=np.float32)
    ids = rng.integers(0, VOCAB, n // WIDTH, dtype=np.int32)
    return {"take": (x, idx, 12 * n), "embedding": (w, ids, 8 * n + 4 * (n // WIDTH))}


def ours(backend: str, data, index, repeat: int, vpt: int, gpu_time: bool, jit: bool) -> float:
    dev = webgpu(TimedDriver, HoldingExecutor) if gpu_time else block_on(tw.GpuDevice.create(backend))
    if vpt and dev.backend == "webgpu":
        dev.executor.caps.map_vpt = vpt
    t, i = tw.asarray(data, dev), tw.asarray(index, dev)
    block_on(tw.realize(t, i))
    try:
        if gpu_time:
            with dev.executor.holding():
                block_on(tw.realize(t[i]))
                return Resident(dev).time(repeat) * 1e3
        if jit:
            gather = tw.jit(lambda a, b: a[b])
            return wall_ms(lambda: block_on(tw.synchronize(block_on(gather(t, i)))), repeat)
        return wall_ms(lambda: block_on(tw.synchronize(t[i])), repeat)
    finally:
        dev.close()


def torch_ms(name: str, data, index, repeat: int, gpu_time: bool) -> tuple[float, str] | None:
    try:
        import torch
    except ImportError:
        return None
    device = "cuda" if torch.cuda.is_available() else "cpu"
    t, i = torch.from_numpy(data).to(device), torch.from_numpy(index.astype(np.int64)).to(device)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)

    def plain():
        torch.nn.functional.embedding(i, t) if name == "embedding" else t[i]
        sync()

    if gpu_time and device == "cuda":
        run = (lambda: torch.nn.functional.embedding(i, t)) if name == "embedding" else (lambda: t[i])
        return cuda_time(torch, run) * 1e3, torch.cuda.get_device_name()
    return wall_ms(plain, repeat), (torch.cuda.get_device_name() if device == "cuda" else "CPU")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="webgpu")
    ap.add_argument("--n", type=int, default=1 << 24)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--vpt", type=int, default=0, help="vec4s per thread of the map kernel (0: the default)")
    ap.add_argument("--gpu-time", action="store_true", help="the kernels alone, by GPU timestamps (webgpu)")
    ap.add_argument("--jit", action="store_true", help="ours jitted (tw.jit), wall clock")
    args = ap.parse_args()
    for name, (data, index, nbytes) in cases(args.n, np.random.default_rng(0)).items():
        ms = ours(args.backend, data, index, args.repeat, args.vpt, args.gpu_time, args.jit)
        line = f"{name:10s} n={args.n}: trueno_web {args.backend} {ms:8.3f} ms ({nbytes / ms / 1e6:7.1f} GB/s)"
        ref = torch_ms(name, data, index, args.repeat, args.gpu_time)
        if ref is not None:
            line += (
                f" | torch {ref[1]} {ref[0]:8.3f} ms ({nbytes / ref[0] / 1e6:7.1f} GB/s), ours/torch {ms / ref[0]:.2f}"
            )
        print(line, flush=True)


if __name__ == "__main__":
    main()

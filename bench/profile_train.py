"""Where a jitted training step's time goes: bench/train.py's MLP, the trainer replayed, under cProfile (host
time by function) and split into the replay's phases with a GPU sync.

    python bench/profile_train.py [--backend webgpu] [--sizes 784,1024,1024,10] [--batch 512] [--steps 40]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import train as T

import trueno_web as tw


async def main(args) -> None:
    sizes = tuple(int(s) for s in args.sizes.split(","))
    init, data = T.make_data(sizes, args.batch, args.steps)
    dev = await tw.GpuDevice.create(args.backend)
    model = T.Ours(dev, init, len(sizes) - 1, 1e-3, jit=True)
    for x, y in data[:5]:
        await model.step(x, y)
    xs = [(dev.tensor(x), dev.tensor(y)) for x, y in data[5:]]
    t0 = time.perf_counter()
    for x, y in xs:
        loss = await model.trainer(x, y)
    t1 = time.perf_counter()
    await loss.item()
    t2 = time.perf_counter()
    n = len(xs)
    print(
        f"{n} replays without reading the loss: {(t1 - t0) / n * 1e3:.3f} ms each (host), then the sync {(t2 - t1) * 1e3:.1f} ms"
    )
    print(f"so the GPU takes about {(t2 - t0) / n * 1e3:.3f} ms per step when the host runs ahead")
    pr = cProfile.Profile()
    pr.enable()
    for x, y in xs:
        await (await model.trainer(x, y)).item()
    pr.disable()
    pstats.Stats(pr).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="webgpu")
    ap.add_argument("--sizes", default="784,1024,1024,10")
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--steps", type=int, default=40)
    asyncio.run(main(ap.parse_args()))

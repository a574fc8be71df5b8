"""Where a jitted training step's time goes: bench/train.py's MLP (or bench/train_gpt.py's char GPT with
--model gpt), the trainer replayed, under cProfile (host time by function) and split into the replay's
phases with a GPU sync.

    python bench/profile_train.py [--backend webgpu] [--model mlp|gpt] [--sizes 784,1024,1024,10] [--batch 512]
                                  [--steps 40]

--model gpt takes train_gpt.py's default sizes (d 128, 4 layers, 4 heads, context 128) and --batch (32 there).
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

import numpy as np
import train as T
import train_gpt as G

import trueno_web as tw


async def main(args) -> None:
    dev = await tw.GpuDevice.create(args.backend)
    model, data = await (gpt if args.model == "gpt" else mlp)(dev, args)
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


async def mlp(dev, args):
    sizes = tuple(int(s) for s in args.sizes.split(","))
    init, data = T.make_data(sizes, args.batch, args.steps)
    return T.Ours(dev, init, len(sizes) - 1, 1e-3, jit=True), data


async def gpt(dev, args):
    config = G.Config(d_model=128, n_layers=4, n_heads=4, context=128)
    text = G.load_text()
    vocab = G.Vocab.from_text(text)
    init_model = G.CharGpt.create(dev, vocab, config, tw.random.key(0))
    init = {k: np.asarray(await t.numpy(), np.float32).reshape(t.shape) for k, t in G.named(init_model.params).items()}
    b, n = args.batch, config.context
    data = [
        (np.asarray(x, np.float32).reshape(b, n), np.asarray(y, np.float32).reshape(b, n))
        for _, (x, y) in zip(range(args.steps), G.windows(vocab.encode(text), b, n, seed=0))
    ]
    return G.Ours(dev, vocab, config, init, 1e-3, jit=True), data


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="webgpu")
    ap.add_argument("--model", choices=("mlp", "gpt"), default="mlp")
    ap.add_argument("--sizes", default="784,1024,1024,10")
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--steps", type=int, default=40)
    asyncio.run(main(ap.parse_args()))

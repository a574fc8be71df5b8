"""Benchmark: one training step (forward, backward, AdamW) of an MLP, ours against PyTorch eager on the same
GPU, with the same initial weights, data and hyperparameters, and their loss curves.

    python bench/train.py [--backend webgpu] [--sizes 784,1024,1024,10] [--batch 512] [--steps 60] [--torch]

The data: seeded normal inputs labelled by a fixed random teacher network; minibatch i is the same for both.
A step of ours is `value_and_grad` + `opt.step(grads, loss)` (one batch) and reading the loss (which waits for
the GPU), and with `opt.trainer(loss_fn)` (the same step traced once by tw.jit and replayed: "ours jit"); torch's is zero_grad, forward, cross_entropy, backward, step and `loss.item()` (a sync too). Both
take turns step by step; each figure is the median over the steps after the first five. TF32 is off for torch.
Prints ms/step and the ratio, and the losses at a few steps and at the end (their relative difference).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from grid import torch_cuda  # TF32 off: cuBLAS computes in float32 as we do

import trueno_web as tw


def make_data(sizes, batch: int, steps: int, seed: int = 0):
    """Initial weights (He normal, zero biases) and `steps` minibatches labelled by a random teacher."""
    rng = np.random.default_rng(seed)
    init = {}
    for i, (a, b) in enumerate(zip(sizes, sizes[1:]), start=1):
        init[f"w{i}"] = (rng.standard_normal((a, b)) * np.sqrt(2 / a)).astype(np.float32)
        init[f"b{i}"] = np.zeros(b, np.float32)
    teacher = [rng.standard_normal((a, b)).astype(np.float32) / np.sqrt(a) for a, b in zip(sizes, sizes[1:])]
    data = []
    for _ in range(steps):
        x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
        h = x
        for w in teacher[:-1]:
            h = np.maximum(h @ w, 0)
        data.append((x, (h @ teacher[-1]).argmax(1).astype(np.float32)))
    return init, data


def loss_fn(p, x, labels, layers: int):
    h = x
    for i in range(1, layers):
        h = tw.nn.linear(h, p[f"w{i}"], p[f"b{i}"]).relu()
    return tw.nn.cross_entropy(tw.nn.linear(h, p[f"w{layers}"], p[f"b{layers}"]), labels)


class Ours:
    """`jit`: the optimizer's trainer (traced once, replayed); else value_and_grad and opt.step each step."""

    def __init__(self, dev, init, layers, lr, jit: bool = False):
        self.dev, self.layers = dev, layers
        self.params = {k: dev.tensor(v) for k, v in init.items()}
        self.opt = tw.optim.AdamW(self.params, lr=lr, weight_decay=0.01)
        self.vg = tw.value_and_grad(loss_fn)
        self.trainer = self.opt.trainer(lambda p, x, y: loss_fn(p, x, y, layers)) if jit else None

    async def step(self, x, y) -> float:
        x, y = self.dev.tensor(x), self.dev.tensor(y)
        if self.trainer is not None:
            return await (await self.trainer(x, y)).item()
        loss, grads = self.vg(self.params, x, y, self.layers)
        await self.opt.step(grads, loss)
        return await loss.item()


class Torch:
    def __init__(self, torch, init, layers, lr):
        self.torch, self.layers = torch, layers
        self.params = {k: torch.tensor(v, device="cuda", requires_grad=True) for k, v in init.items()}
        self.opt = torch.optim.AdamW(self.params.values(), lr=lr, weight_decay=0.01)

    def step(self, x, y) -> float:
        t, p = self.torch, self.params
        self.opt.zero_grad(set_to_none=True)
        h = t.from_numpy(x).cuda()
        for i in range(1, self.layers):
            h = t.relu(h @ p[f"w{i}"] + p[f"b{i}"])
        logits = h @ p[f"w{self.layers}"] + p[f"b{self.layers}"]
        loss = t.nn.functional.cross_entropy(logits, t.from_numpy(y).cuda().long())
        loss.backward()
        self.opt.step()
        return loss.item()


async def main(args) -> None:
    sizes = tuple(int(s) for s in args.sizes.split(","))
    layers = len(sizes) - 1
    init, data = make_data(sizes, args.batch, args.steps)
    dev = await tw.GpuDevice.create(args.backend)
    ours = {"ours": Ours(dev, init, layers, args.lr), "ours jit": Ours(dev, init, layers, args.lr, jit=True)}
    torch = torch_cuda() if args.torch else None
    theirs = Torch(torch, init, layers, args.lr) if torch is not None else None
    times = {name: [] for name in (*ours, "torch")}
    losses = {name: [] for name in (*ours, "torch")}
    for x, y in data:
        for name, model in ours.items():
            t = time.perf_counter()
            losses[name].append(await model.step(x, y))
            times[name].append(time.perf_counter() - t)
        if theirs is not None:
            t = time.perf_counter()
            losses["torch"].append(theirs.step(x, y))
            times["torch"].append(time.perf_counter() - t)
    info = dev.adapter_info
    print(
        f"# bench/train.py: MLP {'-'.join(map(str, sizes))}, batch {args.batch}, {args.steps} steps, AdamW lr {args.lr}"
    )
    print(
        f"# ours: {dev.backend} on {info.get('device', '')} ({info.get('description', '')})"
        + (f"; torch {torch.__version__} on {torch.cuda.get_device_name()}" if torch else "; torch: not run")
    )
    ms = {k: statistics.median(v[5:]) * 1e3 for k, v in times.items() if len(v) > 5}
    print("| | ms/step (median) |" + (" / torch |" if "torch" in ms else ""))
    for k, v in ms.items():
        print(f"| {k} | {v:.3f} |" + (f" {v / ms['torch']:.2f} |" if "torch" in ms else ""))
    for i in sorted({0, 9, args.steps // 2, args.steps - 1} & set(range(args.steps))):
        row = f"step {i:4d}: " + "  ".join(f"{k} {v[i]:.5f}" for k, v in losses.items() if v)
        if losses["torch"]:
            row += f"  (ours / torch - 1: {losses['ours'][i] / losses['torch'][i] - 1:+.2%})"
        print(row)
    dev.close()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="webgpu")
    ap.add_argument("--sizes", default="784,1024,1024,10")
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--torch", action="store_true", help="also PyTorch eager on CUDA where it is installed")
    asyncio.run(main(ap.parse_args()))

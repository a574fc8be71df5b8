"""Benchmark: one training step (forward, backward, AdamW) of the tiny character-level GPT
(trueno_web/char_gpt.py) on Macbeth, ours against the same model in PyTorch eager on the same GPU: the same
initial weights (drawn by ours, copied over), the same batches and hyperparameters, and their loss curves.

    python bench/train_gpt.py [--backend webgpu] [--d-model 128] [--layers 4] [--heads 4] [--context 128]
                              [--batch 32] [--steps 60] [--lr 1e-3] [--torch] [--no-eager]

A step of ours is `opt.trainer(model.loss)` (forward, backward and update traced once by tw.jit and replayed:
"ours jit"), and, unless --no-eager, `value_and_grad` + `opt.step(grads, loss)` built anew every step ("ours");
each reads the loss (which waits for the GPU). torch's is zero_grad, forward, cross_entropy, backward, step and
`loss.item()` (a sync too); its attention is F.scaled_dot_product_attention(is_causal=True), its gelu the tanh
form, as ours. They take turns step by step; each figure is the median over the steps after the first five.
TF32 is off for torch. No clipping, a constant learning rate, AdamW's weight decay 0.01 on every parameter
in both. Runs without torch (ours only), and on any backend (--backend numpy for a quick look on a CPU).
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
from trueno_web.char_gpt import CharGpt, Config, Vocab, load_text, named, windows


class Ours:
    def __init__(self, dev, vocab, config, init: dict, lr: float, jit: bool):
        self.dev = dev
        model = CharGpt.create(dev, vocab, config, tw.random.key(0))  # the structure; the values from `init`
        for name, t in named(model.params).items():
            t.expr = dev.tensor(init[name]).expr
        self.model, self.params = model, model.params
        self.opt = tw.optim.AdamW(self.params, lr=lr, weight_decay=0.01)
        self.vg = tw.value_and_grad(model.loss)
        self.trainer = self.opt.trainer(model.loss) if jit else None

    async def step(self, x, y) -> float:
        x, y = self.dev.tensor(x), self.dev.tensor(y)
        if self.trainer is not None:
            return await (await self.trainer(x, y)).item()
        loss, grads = self.vg(self.params, x, y)
        await self.opt.step(grads, loss)
        return await loss.item()


class Torch:
    """The same model in PyTorch eager: tok_emb[idx] (ours: one_hot @ tok_emb, the same values), pos_emb,
    GPT-2 pre-norm blocks with the weights laid out as ours (x @ w, q/k/v side by side in w_qkv), final
    layer norm, x @ w_out."""

    def __init__(self, torch, init: dict, config: Config, lr: float):
        self.torch, self.config = torch, config
        self.p = {k: torch.tensor(v, device="cuda", requires_grad=True) for k, v in init.items()}
        self.opt = torch.optim.AdamW(self.p.values(), lr=lr, weight_decay=0.01)

    def forward(self, idx):
        t, p, c = self.torch, self.p, self.config
        f = t.nn.functional
        b, n = idx.shape
        d, h = c.d_model, c.n_heads
        x = p["tok_emb"][idx] + p["pos_emb"][:n]
        for i in range(c.n_layers):
            w = {k.split(".")[2]: v for k, v in p.items() if k.startswith(f"blocks.{i}.")}
            qkv = f.layer_norm(x, (d,), w["ln1_w"], w["ln1_b"], 1e-5) @ w["w_qkv"] + w["b_qkv"]
            q, k, v = (z.view(b, n, h, d // h).transpose(1, 2) for z in qkv.split(d, dim=-1))
            att = f.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + att.transpose(1, 2).reshape(b, n, d) @ w["w_o"] + w["b_o"]
            z = f.gelu(f.layer_norm(x, (d,), w["ln2_w"], w["ln2_b"], 1e-5) @ w["w_fc"] + w["b_fc"], approximate="tanh")
            x = x + z @ w["w_proj"] + w["b_proj"]
        return f.layer_norm(x, (d,), p["lnf_w"], p["lnf_b"], 1e-5) @ p["w_out"]

    def step(self, x, y) -> float:
        t = self.torch
        self.opt.zero_grad(set_to_none=True)
        logits = self.forward(t.from_numpy(x).cuda().long())
        loss = t.nn.functional.cross_entropy(logits.flatten(0, 1), t.from_numpy(y).cuda().long().flatten())
        loss.backward()
        self.opt.step()
        return loss.item()


async def main(args) -> None:
    config = Config(d_model=args.d_model, n_layers=args.layers, n_heads=args.heads, context=args.context)
    text = load_text()
    vocab = Vocab.from_text(text)
    dev = await tw.GpuDevice.create(args.backend)
    init_model = CharGpt.create(dev, vocab, config, tw.random.key(args.seed))  # GPT-2's init, drawn on the device
    init = {k: np.asarray(await t.numpy(), np.float32).reshape(t.shape) for k, t in named(init_model.params).items()}
    b, n = args.batch, args.context
    data = [
        (np.asarray(x, np.float32).reshape(b, n), np.asarray(y, np.float32).reshape(b, n))
        for _, (x, y) in zip(range(args.steps), windows(vocab.encode(text), b, n, seed=args.seed))
    ]
    ours = {"ours jit": Ours(dev, vocab, config, init, args.lr, jit=True)}
    if not args.no_eager:
        ours["ours"] = Ours(dev, vocab, config, init, args.lr, jit=False)
    torch = torch_cuda() if args.torch else None
    theirs = Torch(torch, init, config, args.lr) if torch is not None else None
    names = (*ours, "torch") if theirs is not None else tuple(ours)
    times = {name: [] for name in names}
    losses = {name: [] for name in names}
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
        f"# bench/train_gpt.py: char GPT d_model {config.d_model}, {config.n_layers} layers, {config.n_heads} heads, "
        f"context {n}, vocabulary {len(vocab)}, {init_model.n_params():,} parameters; batch {b}, {args.steps} steps, "
        f"AdamW lr {args.lr}"
    )
    print(
        f"# ours: {dev.backend} on {info.get('device', '')} ({info.get('description', '')})"
        + (f"; torch {torch.__version__} on {torch.cuda.get_device_name()}" if torch else "; torch: not run")
    )
    ms = {k: statistics.median(v[5:]) * 1e3 for k, v in times.items() if len(v) > 5}
    print("| | ms/step (median) | tokens/s |" + (" / torch |" if "torch" in ms else ""))
    for k, v in ms.items():
        row = f"| {k} | {v:.3f} | {b * n / v * 1e3:,.0f} |"
        print(row + (f" {v / ms['torch']:.2f} |" if "torch" in ms else ""))
    print("loss curves (" + ", ".join(names) + "):")
    for i in sorted(
        {i for i in (0, 1, 4, 9, *range(0, args.steps, max(1, args.steps // 10))) if i < args.steps} | {args.steps - 1}
    ):
        row = f"step {i:4d}: " + "  ".join(f"{k} {v[i]:.5f}" for k, v in losses.items())
        if theirs is not None:
            row += f"  (ours jit / torch - 1: {losses['ours jit'][i] / losses['torch'][i] - 1:+.3%})"
        print(row)
    dev.close()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="webgpu")
    ap.add_argument("--d-model", type=int, default=128)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--context", type=int, default=128)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--torch", action="store_true", help="also PyTorch eager on CUDA where it is installed")
    ap.add_argument("--no-eager", action="store_true", help="only the jitted trainer of ours")
    asyncio.run(main(ap.parse_args()))

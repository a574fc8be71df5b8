"""Train a tiny character-level GPT from scratch on Shakespeare's Macbeth (shipped with the package), then
sample from it.

    .venv/bin/python examples/train_char_gpt.py --backend numpy --steps 100 --d-model 32 --layers 1 --context 32
    .venv/bin/python examples/train_char_gpt.py --backend webgpu --steps 2000 --d-model 128 --layers 4 --heads 4 \\
        --context 64 --batch 32 --out char_gpt.bin

The first 90% of the text trains, the last 10% is held out. AdamW with a cosine schedule (a short warm-up),
gradients clipped to norm 1; each step is `opt.trainer(model.loss)`: forward, backward and update traced once
and replayed, one batch per step. Prints the loss every --every steps, the held-out loss and a sample at the
end, and writes the weights with the vocabulary, sizes and losses (safetensors) where --out says; --resume
starts from such a file. On a small CPU shared with other work, run the numpy backend with
OPENBLAS_NUM_THREADS=1: these matmuls are small, and OpenBLAS's threads waiting for each other made steps
~7x slower here (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import trueno_web as tw
from trueno_web.char_gpt import CharGpt, Config, Vocab, load_text, windows


async def held_out_loss(dev, model, ids, batch, context, batches=4) -> float:
    """The mean loss of `batches` seeded windows of the held-out text."""
    losses = []
    for _, (x, y) in zip(range(batches), windows(ids, batch, context, seed=1234)):
        losses.append(
            await model.loss(model.params, dev.tensor(x, (batch, context)), dev.tensor(y, (batch, context))).item()
        )
    return statistics.fmean(losses)


async def main(args) -> None:
    dev = await tw.GpuDevice.create(args.backend)
    text = load_text()
    vocab = Vocab.from_text(text)
    ids = vocab.encode(text)
    cut = len(ids) * 9 // 10
    train_ids, test_ids = ids[:cut], ids[cut:]
    if args.resume:  # its sizes and weights (a fresh optimizer state)
        model, _ = CharGpt.from_bytes(dev, Path(args.resume).read_bytes())
        config = model.config
    else:
        config = Config(d_model=args.d_model, n_layers=args.layers, n_heads=args.heads, context=args.context)
        model = CharGpt.create(dev, vocab, config, tw.random.key(args.seed))
    schedule = tw.optim.cosine_schedule(args.lr, args.steps, warmup=max(1, args.steps // 20), end=args.lr / 10)
    opt = tw.optim.AdamW(model.params, lr=schedule, weight_decay=0.01, clip_norm=1.0)
    step = opt.trainer(model.loss)
    print(
        f"{dev.backend}: {model.n_params():,} parameters, vocabulary {len(vocab)}, {config}, batch {args.batch}, "
        f"{len(train_ids):,} training characters"
    )
    b, n = args.batch, config.context
    t0, loss_value, recent = time.perf_counter(), float("nan"), []
    for i, (x, y) in zip(range(args.steps), windows(train_ids, b, n, seed=args.seed)):
        loss = await step(dev.tensor(x, (b, n)), dev.tensor(y, (b, n)))
        loss_value = await loss.item()
        recent.append(loss_value)
        if i % args.every == 0 or i == args.steps - 1:
            print(f"step {i:5d}  loss {statistics.fmean(recent):.4f}  ({time.perf_counter() - t0:.1f} s)", flush=True)
            recent = []
    seconds = time.perf_counter() - t0
    test_loss = await held_out_loss(dev, model, test_ids, b, n)
    print(f"{args.steps} steps in {seconds:.1f} s ({seconds / args.steps * 1e3:.1f} ms/step)")
    print(
        f"final training loss {loss_value:.4f}, held-out loss {test_loss:.4f} (a uniform guess: {math.log(len(vocab)):.4f})"
    )
    sample = await model.sample(args.prompt, args.sample_chars, tw.random.key(args.seed + 1), args.temperature)
    print(f"--- sample (temperature {args.temperature}) ---\n{sample}\n---")
    if args.out:
        meta = {
            "steps": args.steps,
            "resumed_from": args.resume,
            "final_loss": f"{loss_value:.6f}",
            "held_out_loss": f"{test_loss:.6f}",
        }
        meta.update(batch=b, lr=args.lr, seed=args.seed, backend=dev.backend, text="trueno_web/data/macbeth.txt")
        Path(args.out).write_bytes(await model.to_bytes(meta))
        print(f"wrote {args.out} ({Path(args.out).stat().st_size:,} bytes)")
    dev.close()


def parse(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--d-model", type=int, default=32)
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--context", type=int, default=32)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--every", type=int, default=25, help="print the mean loss every N steps")
    ap.add_argument("--prompt", default="MACBETH.\n")
    ap.add_argument("--sample-chars", type=int, default=300)
    ap.add_argument("--temperature", type=float, default=0.8)
    ap.add_argument("--out", default="", help="write the weights here (safetensors)")
    ap.add_argument("--resume", default="", help="start from these weights (--out's file) instead of random ones")
    return ap.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse()))

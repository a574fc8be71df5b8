"""Train a digit classifier from random weights with trueno_web: a 64-32-10 MLP on scikit-learn's 8x8
digits (the training split ships with the package), AdamW, minibatches of 256.

    .venv/bin/python examples/train_digits.py [--backend webgpu|numpy|wasm-simd|auto] [--steps 300]

A progress bar where tqdm is importable, else a line every 50 steps; the held-out accuracy at the end."""

from __future__ import annotations

import argparse
import asyncio
import time

import trueno_web as tw
from trueno_web.app.training import init_mlp
from trueno_web.models import load_digits_data


def loss_fn(p, x, labels):
    h = tw.nn.linear(x, p["w1"], p["b1"]).relu()
    return tw.nn.cross_entropy(tw.nn.linear(h, p["w2"], p["b2"]), labels)


def progress(steps: int):
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=steps, unit="step")


async def main(backend: str, steps: int, batch: int = 256) -> None:
    dev = await tw.GpuDevice.create(backend)
    data = load_digits_data()
    n = data["train_n"]
    x = dev.tensor(data["train_x"], shape=(n, 64)) * (1 / 16)  # pixels 0..16 -> 0..1
    labels = dev.tensor(data["train_y"])
    params = init_mlp(dev, (64, 32, 10), seed=0)
    opt = tw.optim.AdamW(params, lr=1e-2, weight_decay=1e-4)
    loss_and_grads = tw.value_and_grad(loss_fn)
    bar, t0 = progress(steps), time.perf_counter()
    for step in range(steps):
        at = (step * batch) % (n - batch)  # the next window of the training set
        loss, grads = loss_and_grads(params, x[at : at + batch], labels[at : at + batch])
        await opt.step(grads, loss)  # forward, backward and the update: one batch
        value = await loss.item()
        if bar is not None:
            bar.update()
            bar.set_postfix(loss=f"{value:.4f}")
        elif step % 50 == 0 or step == steps - 1:
            print(f"step {step:4d}  loss {value:.4f}")
    if bar is not None:
        bar.close()
    seconds = time.perf_counter() - t0
    test_x = dev.tensor(data["test_x"], shape=(data["test_n"], 64)) * (1 / 16)
    hidden = tw.nn.linear(test_x, params["w1"], params["b1"]).relu()
    predicted = await tw.nn.linear(hidden, params["w2"], params["b2"]).argmax(-1).numpy()
    right = sum(1 for p, y in zip(predicted, data["test_y"]) if p == y)
    print(
        f"{dev.backend}: {steps} steps in {seconds:.1f} s ({seconds / steps * 1e3:.1f} ms/step); "
        f"held-out accuracy {right / data['test_n']:.2%} of {data['test_n']} digits"
    )
    dev.close()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--steps", type=int, default=300)
    args = ap.parse_args()
    asyncio.run(main(args.backend, args.steps))

"""Training the digits MLP from random weights: what `python -m trueno_web demo` and the page's training
panel run, and what tests/test_training.py checks. Standard library only (it runs in the page's worker
without NumPy): the data are the shipped training split (models.load_digits_data), shuffled on the host once
per epoch and uploaded whole; each step trains on the next window of it."""

from __future__ import annotations

import array
import random as host_random

from .. import autodiff, nn, optim, random
from ..models import load_digits_data

PIXEL_SCALE = 1.0 / 16  # load_digits' intensities 0..16 to 0..1


def init_mlp(device, sizes: tuple[int, ...], seed: int) -> dict:
    """He-normal weights drawn on the device from keys split off `seed` (the same on every backend), zero
    biases, for layers of `sizes`."""
    keys = random.split(random.key(seed), len(sizes) - 1)
    params = {}
    for i, (n_in, n_out) in enumerate(zip(sizes, sizes[1:]), start=1):
        params[f"w{i}"] = nn.init.kaiming_normal(keys[i - 1], (n_in, n_out), device=device)
        params[f"b{i}"] = device.tensor(array.array("f", bytes(4 * n_out)))
    return params


def mlp_logits(params: dict, x):
    """relu(x @ w1 + b1) @ w2 + b2."""
    h = nn.linear(x, params["w1"], params["b1"]).relu()
    return nn.linear(h, params["w2"], params["b2"])


def mlp_loss(params: dict, x, labels):
    return nn.cross_entropy(mlp_logits(params, x), labels)


class DigitsTrainer:
    """The digits MLP (64 -> hidden -> 10, relu) trained with AdamW on minibatches; `await step()` runs one
    training step (forward, backward and update in one batch) and returns its loss."""

    def __init__(self, device, hidden: int = 32, batch: int = 256, lr: float = 1e-2, seed: int = 0):
        self.device, self.batch, self.rng = device, batch, host_random.Random(seed)
        data = load_digits_data()
        self.train = [(data["train_x"][i * 64 : (i + 1) * 64], data["train_y"][i]) for i in range(data["train_n"])]
        self.test_x = device.tensor(data["test_x"], shape=(data["test_n"], 64)) * PIXEL_SCALE
        self.test_y = list(data["test_y"])
        self.params = init_mlp(device, (64, hidden, 10), seed)
        self.opt = optim.AdamW(self.params, lr=lr, weight_decay=1e-4)
        self.loss_and_grads = autodiff.value_and_grad(mlp_loss)
        self.steps, self._at, self._x, self._y = 0, len(self.train), None, None

    def _window(self):
        """The next minibatch: a window of this epoch's shuffled copy (a new epoch past its end)."""
        n = len(self.train)
        if self._at + self.batch > n:
            self.rng.shuffle(self.train)
            xs = array.array("f")
            for pixels, _ in self.train:
                xs.extend(pixels)
            self._x = self.device.tensor(xs, shape=(n, 64)) * PIXEL_SCALE
            self._y = self.device.tensor(array.array("f", (label for _, label in self.train)))
            self._at = 0
        at, self._at = self._at, self._at + self.batch
        return self._x[at : at + self.batch], self._y[at : at + self.batch]

    async def step(self) -> float:
        x, y = self._window()
        loss, grads = self.loss_and_grads(self.params, x, y)
        await self.opt.step(grads, loss)
        self.steps += 1
        return await loss.item()

    async def accuracy(self) -> float:
        """The share of the held-out digits classified right."""
        predicted = await mlp_logits(self.params, self.test_x).argmax(-1).numpy()
        hits = sum(1 for p, want in zip(predicted, self.test_y) if p == want)
        return hits / len(self.test_y)

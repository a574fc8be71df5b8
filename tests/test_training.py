"""Training end to end: the digits MLP from random weights (app/training.py: what the demo and the page's
training panel run) reaches at least 95% held-out accuracy in a bounded number of steps on every backend,
each step one batch and one submit."""

from __future__ import annotations

from trueno_web.app.training import DigitsTrainer
from trueno_web.runtime import block_on

STEPS = 300


def test_digits_mlp_trains_from_random_weights(dev):
    trainer = DigitsTrainer(dev, seed=0)
    first = block_on(trainer.step())
    submits = dev.stats.submits
    losses = [block_on(trainer.step()) for _ in range(STEPS - 1)]
    assert dev.stats.submits - submits == STEPS - 1  # forward, backward and update: one submit per step
    assert first > 2.0 and losses[-1] < 0.2, (first, losses[-10:])
    assert block_on(trainer.accuracy()) >= 0.95


def test_the_example_script_runs(capsys):
    import runpy
    from pathlib import Path

    from conftest import device_for

    device_for("numpy")  # skips where NumPy is missing
    example = runpy.run_path(str(Path(__file__).resolve().parent.parent / "examples" / "train_digits.py"))
    block_on(example["main"]("numpy", 60))
    out = capsys.readouterr().out
    assert "numpy: 60 steps" in out and "held-out accuracy" in out

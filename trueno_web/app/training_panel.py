"""The demo page's training panel, its worker side: the digits MLP trained from random weights on the page's
device (app/training.py's DigitsTrainer), a bounded number of steps per call so that the page stays
responsive and Stop takes effect within one message round-trip; the weights it ends with can then classify
the draw-a-digit panel's drawings instead of the shipped ones. Standard library only.

    panel = TrainingPanel(session)          # session: a DemoSession (its device, CPU fallback, classifier)
    await panel.start()                     # new random weights; the held-out accuracy at step 0
    await panel.run(10)                     # up to 10 steps: their losses, any accuracy evaluated on the way
    await panel.stop()                      # ends the run; its weights can now classify the drawings
    await panel.use("trained")              # the digit panel classifies with them ("shipped": the shipped ones)
"""

from __future__ import annotations

import array
import time

from ..models import Mlp
from .training import PIXEL_SCALE, DigitsTrainer

BUDGET = 400  # steps a run ends at by itself
EVAL_EVERY = 25  # steps between two evaluations of the held-out accuracy
HIDDEN, BATCH, LR = 32, 256, 1e-2


def _floats(data) -> array.array:
    """A read-back (NumPy array, or NDResult without NumPy) as a flat float32 array.array."""
    return array.array("f", data.reshape(-1).tolist() if hasattr(data, "reshape") else data)


# The page's "try it" cell loads this (try_it.py): the trainer the panel drives, a few steps of it.
TRY_IT = """\
# Panel 5: the digits MLP from random weights, AdamW on minibatches of 256 (training.py's DigitsTrainer)
from trueno_web.app.training import DigitsTrainer

trainer = DigitsTrainer(dev)  # what the panel drives, 10 steps per message
for step in range(1, 41):
    loss = await trainer.step()  # forward, backward and update: one batch on the device
    if step % 10 == 0:
        print(f"step {step}: loss {loss:.3f}")
print(f"held-out accuracy after {trainer.steps} steps: {await trainer.accuracy():.1%}")
"""


class TrainingPanel:
    """One training run at a time on the session's device; `runs` counts them and seeds each."""

    def __init__(self, session, budget: int = BUDGET, eval_every: int = EVAL_EVERY):
        self.session, self.budget, self.eval_every = session, budget, eval_every
        self.trainer, self.runs, self.done, self.reason = None, 0, False, None
        self.train_s, self.accuracy, self.trained = 0.0, None, None  # trained: {"model", "cpu_model", "steps", ...}

    @property
    def dev(self):
        return self.session.dev

    async def start(self) -> dict:
        """A new run from random weights (seeded by the run's number: the first run in a tab is seed 0). The
        digit panel goes back to the shipped weights: the ones trained before are dropped."""
        await self.use("shipped")
        self.trained = None
        self.trainer = DigitsTrainer(self.dev, hidden=HIDDEN, batch=BATCH, lr=LR, seed=self.runs)
        self.runs += 1
        self.done, self.reason, self.train_s = False, None, 0.0
        self.accuracy = await self.trainer.accuracy()
        return self._report([], [], [[0, self.accuracy]], None)

    async def run(self, steps: int = 10) -> dict:
        """Up to `steps` training steps (not past the budget), each with its loss; the held-out accuracy after
        every `eval_every`-th step. At the budget the run ends (as stop() ends it)."""
        if self.trainer is None or self.done:
            raise RuntimeError("no training run going: start() one first")
        t = self.trainer
        steps = max(0, min(int(steps), self.budget - t.steps))
        at, losses, evals, step_s = [], [], [], 0.0
        for _ in range(steps):
            t0 = time.perf_counter()
            loss = await t.step()
            step_s += time.perf_counter() - t0
            at.append(t.steps)
            losses.append(loss)
            if t.steps % self.eval_every == 0:
                self.accuracy = await t.accuracy()
                evals.append([t.steps, self.accuracy])
        self.train_s += step_s
        if t.steps >= self.budget:
            evals += await self._finish("budget")
        return self._report(at, losses, evals, steps / step_s if step_s > 0 else None)

    async def stop(self) -> dict:
        """End the run now (Stop): the held-out accuracy of the weights it ends with, which can then classify."""
        if self.trainer is None:
            raise RuntimeError("no training run to stop")
        evals = [] if self.done else await self._finish("stopped")
        return self._report([], [], evals, None)

    async def _finish(self, reason: str) -> list:
        """Mark the run done; evaluate it if its last step was not; keep a copy of its weights (on the device
        and on the CPU fallback), the /16 of the pixels folded into w1 as in the shipped model."""
        t, evals = self.trainer, []
        if t.steps % self.eval_every:
            self.accuracy = await t.accuracy()
            evals.append([t.steps, self.accuracy])
        self.done, self.reason = True, reason
        p = t.params
        host = {
            "w1": (_floats(await (p["w1"] * PIXEL_SCALE).numpy()), p["w1"].shape),
            "b1": (_floats(await p["b1"].numpy()), p["b1"].shape),
            "w2": (_floats(await p["w2"].numpy()), p["w2"].shape),
            "b2": (_floats(await p["b2"].numpy()), p["b2"].shape),
        }
        cpu = self.session.cpu
        self.trained = {
            "model": await Mlp.create(self.dev, host),
            "cpu_model": await Mlp.create(cpu, host) if cpu is not None else None,
            "steps": t.steps,
            "accuracy": self.accuracy,
            "run": self.runs,
        }
        return evals

    async def use(self, which: str) -> dict:
        """Which weights the digit panel classifies with: "shipped" or "trained" (the last run's, once it ended)."""
        classifier = await self.session.classifier()
        if which == "shipped":
            classifier.use_shipped()
        elif which == "trained":
            if self.trained is None:
                raise RuntimeError("no trained weights yet: train, then stop (or reach the step budget)")
            tr = self.trained
            label = f"trained in this tab (run {tr['run']}, {tr['steps']} steps)"
            classifier.use(tr["model"], tr["cpu_model"], "trained", label, tr["accuracy"])
        else:
            raise ValueError(f"weights are 'shipped' or 'trained', not {which!r}")
        return classifier.weights_info()

    def _report(self, at: list, losses: list, evals: list, steps_per_s: float | None) -> dict:
        t = self.trainer
        return {
            "run": self.runs,
            "steps": t.steps,
            "budget": self.budget,
            "eval_every": self.eval_every,
            "loss_steps": at,
            "losses": losses,
            "accuracy": evals,  # [[step, held-out accuracy], ...] evaluated in this call
            "last_accuracy": self.accuracy,
            "steps_per_s": steps_per_s,  # this call's steps over their time in the worker
            "train_s": self.train_s,  # every step of the run so far (evaluations not counted)
            "done": self.done,
            "reason": self.reason,
            "backend": self.dev.backend,
            "hidden": HIDDEN,
            "batch": BATCH,
            "lr": LR,
            "train_size": len(t.train),
            "test_size": len(t.test_y),
        }

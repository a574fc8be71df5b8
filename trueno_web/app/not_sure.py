"""The digit panel's "not sure" answer: when the classifier's best guess should not be shown as an answer.

The shipped MLP is overconfident: most random scribbles get a top probability near 1, so a probability
threshold alone does not catch them. Two signals, each with its threshold derived from the held-out digits
(the shipped file's 359 digits never trained on) when the panel loads, on the page's device:

- the top probability: below the value that `CORRECT_FLAGGED` of the right held-out answers fall under
  (computed per set of weights: the shipped ones, or those trained in the tab);
- the distance to the training digits: the root of the mean squared distance of the 8x8 picture to its
  `K` nearest training digits (the 1,438 of the training split), above the `DISTANCE_QUANTILE` quantile of
  the held-out digits' own distances, is a picture unlike any digit the model has seen.

Either one makes the answer "not sure". What they catch is measured in the README's demo page section and
checked by tests/test_not_sure.py. Standard library and tensor ops only: it runs in the page's worker.
"""

from __future__ import annotations

import math

from ..models import load_digits_data

K = 5  # nearest training digits averaged over
CORRECT_FLAGGED = 0.01  # the share of right held-out answers the probability rule may call "not sure"
DISTANCE_QUANTILE = 0.99  # held-out digits farther from the training digits than this quantile are flagged


def order_statistic(values, share: float) -> float:
    """The value below which at most `share` of `values` lie (the floor(share * n)-th smallest)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.floor(share * len(ordered)))]


class NotSure:
    """The training digits on the device, the distance threshold, and the probability threshold per model."""

    def __init__(self, train, train_sq, distance_max: float, test_x, test_y: list[int]):
        self.train, self.train_sq, self.distance_max = train, train_sq, distance_max
        self.test_x, self.test_y = test_x, test_y
        self._p_min: tuple | None = None  # (model, its threshold): the last model asked about

    @classmethod
    async def calibrate(cls, dev) -> NotSure:
        """Upload the digits and derive the distance threshold from the held-out digits' distances."""
        data = load_digits_data()
        train = dev.tensor(data["train_x"], shape=(data["train_n"], 64))
        train_sq = (train * train).sum(axis=1)
        test_x = dev.tensor(data["test_x"], shape=(data["test_n"], 64))
        self = cls(train, train_sq, 0.0, test_x, [int(v) for v in data["test_y"]])
        self.distance_max = order_statistic(await self.distances(test_x), DISTANCE_QUANTILE)
        return self

    async def distances(self, x) -> list[float]:
        """Per row of x (m, 64): the root mean squared distance to its K nearest training digits."""
        d2 = (x * x).sum(axis=1, keepdims=True) + self.train_sq - 2.0 * (x @ self.train.mT)
        nearest, _ = d2.topk(K, largest=False)
        means = await nearest.mean(axis=1).numpy()
        return [math.sqrt(max(float(v), 0.0)) for v in means.reshape(-1).tolist()]

    async def p_min(self, model) -> float:
        """The probability threshold of `model`: CORRECT_FLAGGED of its right held-out answers lie below it."""
        if self._p_min is None or self._p_min[0] is not model:
            probs = (await model(self.test_x).numpy()).tolist()
            right = [max(p) for p, y in zip(probs, self.test_y) if p.index(max(p)) == y]
            self._p_min = (model, order_statistic(right, CORRECT_FLAGGED))
        return self._p_min[1]

    async def judge(self, model, pixels, probabilities) -> dict:
        """{not_sure, reasons (what tripped, in words), distance, distance_max, p_min} for one 8x8 picture
        and the probabilities `model` gave it."""
        x = self.train.device.tensor([float(v) for v in pixels], shape=(1, 64))
        distance = (await self.distances(x))[0]
        p_min, top = await self.p_min(model), max(probabilities)
        reasons = []
        if top < p_min:
            reasons.append(
                f"top probability {top:.2f} is below {p_min:.2f}, "
                f"under which {CORRECT_FLAGGED:.0%} of the right held-out answers fall"
            )
        if distance > self.distance_max:
            reasons.append(
                f"the 8x8 picture is {distance:.1f} from its {K} nearest training digits, farther than "
                f"{DISTANCE_QUANTILE:.0%} of the held-out digits ({self.distance_max:.1f})"
            )
        return {
            "not_sure": bool(reasons),
            "reasons": reasons,
            "distance": distance,
            "distance_max": self.distance_max,
            "p_min": p_min,
        }

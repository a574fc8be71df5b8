"""The demo page's digit panel, its classifier side: the shipped MLP (trueno_web.models.Mlp.digits) on the
page's device and on the CPU fallback, fed the 8x8 pictures digits.py makes of a drawing; or, once the
training panel (training_panel.py) has trained one in the tab, that one (`use`). Each answer says whether it
is "not sure" (not_sure.py: thresholds derived from the held-out digits at load)."""

from __future__ import annotations

import array
import time

from ..models import Mlp, load_digits_file
from .digits import BLOCK, CELLS, INK, SIZE, bitmap_from_strokes, downsample
from .not_sure import NotSure

TRY_IT = """\
# Panel 4: the shipped digit classifier on a held-out digit and on a scribble (digit_classifier.py)
from trueno_web.app.digit_classifier import DigitClassifier
from trueno_web.display import Picture
from trueno_web.models import load_digits_data

classifier = await DigitClassifier.load(dev, None)  # the "not sure" thresholds are derived here
digit = load_digits_data()["test_x"][:64]  # the first held-out digit, 8x8 pixels 0..16
for name, shown in (
    ("held-out digit", await classifier.classify(pixels=digit)),
    ("a scribble", await classifier.classify(strokes=[[30, 40, 250, 200, 60, 230, 220, 30]])),
):
    print(f"{name}: {shown['answer']}", *shown["reasons"], sep="\\n  ")
Picture(digit, 8, 8, scale=12, hi=16)
"""


def answer(result: dict) -> str:
    """What the page writes under the digit: "7 (p = 0.998)", or "not sure (best guess: 8, p = 0.41)"."""
    if result["predicted"] is None:
        return ""
    p = result["probabilities"][result["predicted"]]
    if result["not_sure"]:
        return f"not sure (best guess: {result['predicted']}, p = {p:.2f})"
    return f"{result['predicted']} (p = {p:.3f})"


def _floats(data) -> list[float]:
    """A read-back (NumPy array, or NDResult without NumPy) as a flat list of floats."""
    return [float(v) for v in (data.reshape(-1).tolist() if hasattr(data, "reshape") else data)]


class DigitClassifier:
    """The shipped MLP (or one trained in the tab) on the page's device, and on the CPU fallback to compare with."""

    def __init__(self, dev, cpu, model, cpu_model, meta: dict):
        self.dev, self.cpu, self.model, self.cpu_model, self.meta = dev, cpu, model, cpu_model, meta
        self.shipped = (model, cpu_model)
        self.use_shipped()

    def use(self, model, cpu_model, weights: str, label: str, accuracy: float | None) -> None:
        """Classify with `model` (on the device) and `cpu_model` (on the CPU fallback, or None) from now on;
        `weights` names them for the page ("shipped", "trained"), `label` says what they are."""
        self.model, self.cpu_model = model, cpu_model
        self.weights, self.weights_label, self.weights_accuracy = weights, label, accuracy

    def use_shipped(self) -> None:
        accuracy = float(self.meta.get("test_accuracy", "nan"))
        self.use(*self.shipped, "shipped", "shipped (trained with NumPy by scripts/train_digits.py)", accuracy)

    def weights_info(self) -> dict:
        return {"weights": self.weights, "weights_label": self.weights_label, "weights_accuracy": self.weights_accuracy}

    @classmethod
    async def load(cls, dev, cpu) -> DigitClassifier:

        t0 = time.perf_counter()
        model = await Mlp.digits(dev)
        cpu_model = await Mlp.digits(cpu) if cpu is not None else None
        self = cls(dev, cpu, model, cpu_model, load_digits_file()[1])
        await self._forward(model, [0] * 64)  # the first pass compiles the pipelines: not at the first drawing
        self.not_sure = await NotSure.calibrate(dev)
        self.p_min = await self.not_sure.p_min(model)
        self.load_ms = (time.perf_counter() - t0) * 1e3
        return self

    def info(self) -> dict:
        return {
            "backend": self.dev.backend,
            "cpu_backend": self.cpu.backend if self.cpu else None,
            "test_accuracy": float(self.meta.get("test_accuracy", "nan")),
            "test_size": int(self.meta.get("test_size", 0)),
            "load_ms": self.load_ms,
            "p_min": self.p_min,
            "distance_max": self.not_sure.distance_max,
            "ink": INK,
            "size": SIZE,
            "block": BLOCK,
        }

    @staticmethod
    async def _forward(model, pixels) -> list[float]:

        return _floats(await model(array.array("f", pixels)).numpy())

    async def classify(self, strokes=None, pixels=None) -> dict:
        """strokes ([[x0, y0, x1, y1, ...], ...], any units, y down) or 64 pixels (0..16, row-major) ->
        {pixels, probabilities (10), predicted, backend, ms (the forward pass on the device: upload,
        one batch, read back), prepare_ms (drawing -> 8x8), radius (the pen, bitmap pixels),
        cpu_probabilities, max_abs_diff (device vs CPU fallback), not_sure and its reasons, distance,
        distance_max, p_min (NotSure.judge), answer (in words)}. An empty drawing: predicted None, not_sure False."""

        t0 = time.perf_counter()
        radius = None
        if pixels is None:
            bitmap, radius = bitmap_from_strokes(strokes)
            pixels = downsample(bitmap)
        pixels = [int(v) for v in pixels]
        if len(pixels) != CELLS * CELLS:
            raise ValueError(f"a digit is {CELLS * CELLS} pixels (8x8), got {len(pixels)}")
        prepare_ms = (time.perf_counter() - t0) * 1e3
        out = {
            "pixels": pixels,
            "radius": radius,
            "prepare_ms": prepare_ms,
            "backend": self.dev.backend,
            "cpu_backend": self.cpu.backend if self.cpu else None,
            **self.weights_info(),
            "predicted": None,
            "probabilities": [],
            "ms": 0.0,
            "cpu_probabilities": [],
            "max_abs_diff": 0.0,
            "not_sure": False,
            "reasons": [],
            "answer": "",
        }
        if not any(pixels):
            return out
        t0 = time.perf_counter()
        probs = await self._forward(self.model, pixels)
        out["ms"] = (time.perf_counter() - t0) * 1e3
        out["probabilities"] = probs
        out["predicted"] = max(range(len(probs)), key=probs.__getitem__)
        out.update(await self.not_sure.judge(self.model, pixels, probs))
        out["answer"] = answer(out)
        if self.cpu_model is not None:
            cpu = await self._forward(self.cpu_model, pixels)
            out["cpu_probabilities"] = cpu
            out["max_abs_diff"] = max(abs(a - b) for a, b in zip(probs, cpu))
        return out

"""The Python side of the demo page's (web/) Web Worker: DemoSession runs what demo_workloads.py defines
on the page's two devices, times it and compares the results.

The page's worker loads Pyodide, installs this package's wheel and drives a `DemoSession`; the page's
main thread only draws what comes back. Everything here uses the public API (`GpuDevice`, batches,
`ops.CATALOG`, `stats`) and no NumPy, so the same code runs in the browser (WebGPU or the WASM SIMD
fallback) and on the desktop, where the e2e tests run it to check the numbers the page shows.

    session = await DemoSession.open(webgpu={"navigator_gpu": True, "adapter": True})
    session.environment()                 # backend, adapter, the CPU fallback, why no WebGPU
    await session.activations()           # every activation of the catalog on a grid, GPU and CPU
    await session.filters()               # blur / sharpen / Sobel magnitude of make_image()
    await session.chain(n)                # one-shot vs batch vs fused vs CPU, with stats
    await session.classify(strokes)       # a drawn digit -> 8x8 -> the classifier's probabilities (digits.py)
    await session.training().run(10)      # the training panel: the digits MLP from random weights (training_panel.py)
    await session.gpt().run(4)            # the tiny-GPT panel: the shipped char GPT samples text (gpt_panel.py)
    await session.try_it(code)            # the "try it" cell: a user's code on the page's device (try_it.py)

Float arrays in results are plain flat `array.array('f')` (the worker turns them into Float32Arrays).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from .. import __version__
from ..device import GpuDevice
from ..device import cpu_backend as default_cpu_backend
from ..errors import TruenoError
from .demo_workloads import (
    CHAIN,
    CHAIN_DEFAULT,
    FILTERS,
    GRID_HALF,
    GRID_STEP,
    IMAGE_H,
    IMAGE_W,
    PROBES,
    activation_curves,
    activation_ops,
    chain_batch,
    chain_inputs,
    chain_one_shot,
    f32,
    grid,
    make_image,
    max_abs_diff,
    op_params,
    run_filter,
    stats_delta,
    summary,
    timed,
)
from .digit_classifier import DigitClassifier
from .gpt_panel import GptPanel
from .training_panel import TrainingPanel
from .try_it import examples, run_cell
from .webgpu_advice import advice

Progress = Callable[[str, float], object] | None

# ------------------------------------------------------------------------------ helpers


def _is_swiftshader(info: dict) -> bool:
    return any("swiftshader" in str(v).lower() for v in info.values())


class DemoSession:
    """The page's two devices: `dev` (WebGPU where it opens, else the CPU fallback) and `cpu`."""

    def __init__(self, dev: GpuDevice, cpu: GpuDevice, webgpu: dict, open_error: str | None):
        self.dev = dev
        self.cpu = cpu
        self.webgpu = dict(webgpu)
        self.open_error = open_error
        self._inputs: dict[int, tuple] = {}
        self._digits = None  # the digit classifier, loaded on first use (digits())
        self._training = None  # the training panel's side, made on first use (training())
        self._gpt = None  # the tiny-GPT panel's side, made on first use (gpt())

    @property
    def compare(self) -> bool:
        """Whether the CPU fallback is another backend than the device's (else the page compares nothing)."""
        return self.dev.backend != self.cpu.backend

    @classmethod
    async def open(
        cls, webgpu: dict | None = None, backend: str = "auto", cpu_backend: str | None = None
    ) -> DemoSession:
        """`webgpu`: what the page saw of WebGPU ({"navigator_gpu": bool, "adapter": bool}), for the
        message that explains a fallback. `backend`: the main device (GpuDevice.create's argument);
        `cpu_backend`: the comparison device (default: NumPy where it imports, else wasm-simd)."""
        cpu_backend = cpu_backend or default_cpu_backend()
        open_error = None
        if backend == "auto" and await GpuDevice.is_available():
            backend_wanted = "webgpu"  # the page shows the GPU, even a software one that auto would skip
        else:
            backend_wanted = backend
        try:
            dev = await GpuDevice.create(backend_wanted)
        except (TruenoError, ImportError) as e:  # an adapter that would not open: fall back, and say why
            if backend != "auto":
                raise
            open_error = f"{type(e).__name__}: {e}"
            dev = await GpuDevice.create(cpu_backend)
        cpu = await GpuDevice.create(cpu_backend)
        return cls(dev, cpu, webgpu or {}, open_error)

    # -------------------------------------------------------------------- the badge

    def environment(self) -> dict:
        info = self.dev.adapter_info
        on_gpu = self.dev.backend == "webgpu"
        swiftshader = on_gpu and _is_swiftshader(info)
        software = on_gpu and (swiftshader or bool(info.get("software")))
        if on_gpu:
            note = None
        elif self.webgpu.get("navigator_gpu") is False:
            note = "This browser has no WebGPU (navigator.gpu is missing)."
        elif self.webgpu.get("adapter") is False:
            note = "This browser exposes WebGPU but offers no adapter (WebGPU disabled, or no usable GPU)."
        elif self.open_error:
            note = f"A WebGPU adapter is there, but trueno_web could not open it ({self.open_error})."
        else:
            note = "No WebGPU device here."
        if not on_gpu:
            note += f" Everything on this page runs on the CPU fallback ({self.dev.backend})."
        if swiftshader:
            software_note = (
                "SwiftShader is a software GPU: WebGPU runs on the CPU here, so the 'GPU' timings "
                "show a CPU emulating a GPU, not GPU hardware."
            )
        elif software:
            software_note = "This adapter is a software GPU (it runs on the CPU)."
        else:
            software_note = None
        return {
            "backend": self.dev.backend,
            "adapter": info,
            "on_gpu": on_gpu,
            "software": software,
            "swiftshader": swiftshader,
            "software_note": software_note,
            "fallback_note": note,
            "enable_webgpu": None if on_gpu else advice(),  # the banner's line per browser
            "cpu_backend": self.cpu.backend,
            "compare": self.compare,
            "cpu_adapter": self.cpu.adapter_info,
            "limits": self.dev.limits,
            "trueno_web": __version__,
            "python": sys.version.split()[0],
            "platform": sys.platform,
        }

    # -------------------------------------------------------------------- panel 1

    async def activations(self, progress: Progress = None) -> dict:
        """Every unary op of the catalog over x in [-5, 5], one batch on each device (the CPU fallback
        only where it is another backend): the curves, their differences, and per device the first
        run's ms (pipelines compile in it) apart from the median of the warm runs."""
        xs = grid()
        the_ops = activation_ops()
        curves, ms = {}, {}
        devices = (("gpu", self.dev), ("cpu", self.cpu)) if self.compare else (("gpu", self.dev),)
        for label, dev in devices:
            _report(progress, f"activations on {dev.backend}", 0.1 if label == "gpu" else 0.5)

            async def run(dev=dev):
                return await activation_curves(dev, xs)

            t0 = time.perf_counter()
            curves[label], stats = await run()
            ms[label] = {
                "first": (time.perf_counter() - t0) * 1e3,
                **await timed(run, min_runs=3, max_runs=9, budget_s=0.5),
            }
            if label == "gpu":
                gpu_stats = stats
        probe_index = [round(p * GRID_STEP) + GRID_HALF for p in PROBES]
        rows = []
        for op in the_ops:
            g, c = curves["gpu"][op.name], curves.get("cpu", {}).get(op.name)
            rows.append(
                {
                    "name": op.name,
                    "doc": op.doc,
                    "params": op_params(op),
                    "gpu": g,
                    "cpu": c,
                    "max_abs_diff": None if c is None else max_abs_diff(g, c),
                    "atol": op.atol,
                    "rtol": op.rtol,
                    "probes": [
                        {"x": PROBES[k], "gpu": g[i], "cpu": None if c is None else c[i]}
                        for k, i in enumerate(probe_index)
                    ],
                }
            )
        return {
            "x": xs,
            "ops": rows,
            "probes": list(PROBES),
            "backend": self.dev.backend,
            "cpu_backend": self.cpu.backend,
            "compare": self.compare,
            "ms": ms,
            "stats": gpu_stats,
        }

    # -------------------------------------------------------------------- panel 2

    async def filters(self, progress: Progress = None) -> dict:
        """blur, sharpen and Sobel magnitude of make_image(), on both devices, timed (second run)."""
        _report(progress, "making the test image", 0.0)
        image = make_image()
        h, w = IMAGE_H, IMAGE_W
        results = {}
        for i, name in enumerate(FILTERS):
            _report(progress, f"filter {name} on {self.dev.backend}", (i + 0.2) / len(FILTERS))
            entry = {"name": name, "doc": FILTERS[name]}
            for label, dev in (("gpu", self.dev), ("cpu", self.cpu))[: 2 if self.compare else 1]:
                t0 = time.perf_counter()
                out, shape, stats = await run_filter(dev, name, image, h, w)  # first: pipelines compile
                first = (time.perf_counter() - t0) * 1e3
                t0 = time.perf_counter()
                out, shape, stats = await run_filter(dev, name, image, h, w)
                entry[label] = {
                    "ms": (time.perf_counter() - t0) * 1e3,
                    "first_ms": first,
                    "stats": stats,
                    "backend": dev.backend,
                }
                if label == "gpu":
                    entry["output"] = out
                    entry["shape"] = list(shape)
                    entry["summary"] = summary(out)
                else:
                    entry["max_abs_diff"] = max_abs_diff(entry["output"], out)
            results[name] = entry
        return {
            "image": image,
            "shape": [h, w],
            "filters": results,
            "backend": self.dev.backend,
            "cpu_backend": self.cpu.backend,
            "compare": self.compare,
        }

    # -------------------------------------------------------------------- panel 3

    async def chain(self, n: int = CHAIN_DEFAULT, repeat: int | None = None, progress: Progress = None) -> dict:
        """The chain three ways on the device (and on the CPU fallback where that is another backend) at
        n elements: after one warm-up, the median, fastest and slowest of `repeat` runs (default: 7 to
        41 runs, as many as ~0.4 s allows), the stats of one run, and the largest difference from the
        CPU fallback's result."""
        n = int(n)
        if n <= 0 or n > 1 << 24:
            raise ValueError(f"chain size must be in 1..{1 << 24}, got {n}")
        if n not in self._inputs:
            _report(progress, f"making {n:,} inputs", 0.0)
            self._inputs = {n: chain_inputs(n)}
        x, y = self._inputs[n]
        runs = {
            "one-shot": (self.dev, lambda d: chain_one_shot(d, x, y)),
            "batch": (self.dev, lambda d: chain_batch(d, x, y, fuse=False)),
            "batch + fusion": (self.dev, lambda d: chain_batch(d, x, y, fuse=True)),
        }
        if self.compare:
            runs["CPU fallback"] = (self.cpu, lambda d: chain_batch(d, x, y, fuse=True))
        rows, outputs = [], {}
        for k, (name, (dev, fn)) in enumerate(runs.items()):
            _report(progress, f"{name} on {dev.backend}, {n:,} elements", (k + 0.1) / len(runs))
            await fn(dev)  # warm-up: pipelines compile, buffers get pooled
            before = dev.stats.as_dict()
            outputs[name] = f32(await fn(dev))
            stats = stats_delta(before, dev.stats.as_dict())
            timing = await timed(lambda: fn(dev), min_runs=repeat or 7, max_runs=repeat or 41, budget_s=0.4)
            rows.append({"name": name, "backend": dev.backend, **timing, "stats": stats})
        _report(progress, "comparing results", 0.95)
        reference = outputs["CPU fallback"] if self.compare else f32(await chain_batch(self.cpu, x, y, fuse=True))
        for row in rows:
            row["max_abs_diff"] = await self._max_abs_diff_cpu(outputs[row["name"]], reference)
        checksum = await self.cpu.sum(reference)
        return {
            "n": n,
            "chain": CHAIN,
            "variants": rows,
            "checksum": checksum,
            "backend": self.dev.backend,
            "cpu_backend": self.cpu.backend,
            "compare": self.compare,
        }

    # -------------------------------------------------------------------- panel 4

    async def digits(self) -> dict:
        """Load the digit classifier (trueno_web.models.Mlp.digits) on both devices, warmed up (once);
        returns its held-out accuracy and the backends (app/digit_classifier.py: the panel's Python side)."""
        if self._digits is None:
            self._digits = await DigitClassifier.load(self.dev, self.cpu)
        return self._digits.info()

    async def classifier(self) -> DigitClassifier:
        await self.digits()
        return self._digits

    def training(self) -> TrainingPanel:
        """The training panel's side (app/training_panel.py): one per session, made on first use."""
        if self._training is None:
            self._training = TrainingPanel(self)
        return self._training

    def gpt(self) -> GptPanel:
        """The tiny-GPT panel's side (app/gpt_panel.py): one per session, made on first use."""
        if self._gpt is None:
            self._gpt = GptPanel(self)
        return self._gpt

    async def classify(self, strokes=None, pixels=None) -> dict:
        """A drawing (strokes: [[x0, y0, x1, y1, ...], ...], any units, y down), normalised and counted
        down to 8x8 as load_digits was, or 64 pixels (0..16): the ten probabilities from the device, the
        predicted class, the backend, ms, and the CPU fallback's probabilities (DigitClassifier.classify)."""
        await self.digits()
        return await self._digits.classify(strokes, pixels)

    # -------------------------------------------------------------------- try it

    @staticmethod
    def try_examples() -> list[dict]:
        """The "try it" cell's examples: [{name, label, code}], the panels' own code (try_it.py)."""
        return examples()

    async def try_it(self, code: str, compiling=None) -> dict:
        """Run a user's code on the page's device: output, pictures, an error at the user's line; `compiling(n)`
        hears of the kernels a call waits for (try_it.py)."""
        return await run_cell(str(code), self.dev, compiling)

    async def _max_abs_diff_cpu(self, a, b) -> float:
        """max |a - b| computed by the library itself (on the CPU device: fast at any size)."""
        with self.cpu.batch() as bt:
            d = bt.sub(bt.upload(a), bt.upload(b))
            hi, lo = bt.max(d), bt.min(d)
            await bt.execute()
            return max(abs(await bt.read(hi)), abs(await bt.read(lo)))


def _report(progress: Progress, text: str, fraction: float) -> None:
    if progress is not None:
        progress(text, float(fraction))

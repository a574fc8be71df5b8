"""What the demo page (web/) computes: the Python side of its Web Worker.

The page's worker loads Pyodide, installs this package's wheel and drives a `DemoSession`; the page's
main thread only draws what comes back. Everything here uses the public API (`GpuDevice`, batches,
`ops.CATALOG`, `stats`) and no NumPy, so the same code runs in the browser (WebGPU or the WASM SIMD
fallback) and on the desktop, where the e2e tests run it to check the numbers the page shows.

    session = await DemoSession.open(webgpu={"navigator_gpu": True, "adapter": True})
    session.environment()                 # backend, adapter, the CPU fallback, why no WebGPU
    await session.activations()           # every activation of the catalog on a grid, GPU and CPU
    await session.filters()               # blur / sharpen / Sobel magnitude of make_image()
    await session.chain(n)                # one-shot vs batch vs fused vs CPU, with stats

Float arrays in results are `array.array('f')` (the worker turns them into Float32Arrays).
"""

from __future__ import annotations

import array
import math
import sys
import time
from typing import Callable

from .. import ops
from ..device import GpuDevice, cpu_backend as default_cpu_backend
from ..errors import TruenoError

Progress = Callable[[str, float], object] | None

# ------------------------------------------------------------------------------ activations

GRID_HALF = 200  # x = i / GRID_STEP for i in -GRID_HALF..GRID_HALF: [-5, 5], probes exactly on the grid
GRID_STEP = 40.0
PROBES = (-2.0, -0.5, 0.0, 0.5, 2.0)
# scalar parameters the page uses (the others keep the catalog's defaults)
DEMO_PARAMS = {"clip": {"lo": -1.0, "hi": 1.0}, "scale": {"s": 0.5}}


def activation_ops() -> list[ops.Op]:
    """The catalog's activation-style ops (relu ... clip, scale: the rows of group "activation"), in
    catalog order; the plain math rows (neg, exp, sin, copy, ...) are not plotted."""
    return [op for op in ops.CATALOG if op.group == "activation"]


def op_params(op: ops.Op) -> dict[str, float]:
    return {p.name: p.default for p in op.params} | DEMO_PARAMS.get(op.name, {})


def grid() -> array.array:
    return array.array("f", (i / GRID_STEP for i in range(-GRID_HALF, GRID_HALF + 1)))


# ------------------------------------------------------------------------------ image filtering

IMAGE_H, IMAGE_W = 256, 256
BLUR = [[1, 4, 6, 4, 1], [4, 16, 24, 16, 4], [6, 24, 36, 24, 6], [4, 16, 24, 16, 4], [1, 4, 6, 4, 1]]
BLUR = [[v / 256.0 for v in row] for row in BLUR]
SHARPEN = [[0, -1, 0], [-1, 5, -1], [0, -1, 0]]
SOBEL_X = [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]
SOBEL_Y = [[-1, -2, -1], [0, 0, 0], [1, 2, 1]]
FILTERS = {
    "blur": "5x5 Gaussian blur (binomial, sums to 1)",
    "sharpen": "3x3 sharpen (5 at the centre, -1 at the edges)",
    "edges": "Sobel: gx^2 + gy^2 on the GPU (two convolve2d, then mul/mul/add fused); drawn as its sqrt",
}


def make_image(h: int = IMAGE_H, w: int = IMAGE_W) -> array.array:
    """A deterministic grey-scale test scene in [0, 1], row-major: gradient, disc, ring, checkers,
    stripes, a triangle and a little noise (edges in every direction, flat areas, fine texture)."""
    out = array.array("f", bytes(4 * h * w))
    seed = 12345
    for r in range(h):
        y = r / h
        base = 0.18 + 0.22 * y
        row = r * w
        for c in range(w):
            x = c / w
            v = base + 0.05 * math.sin(12.0 * x)
            dx, dy = c - 82, r - 92
            d2 = dx * dx + dy * dy
            if d2 < 52 * 52:
                v = 0.92 - 0.25 * d2 / (52 * 52)
            dx, dy = c - 186, r - 178
            d2 = dx * dx + dy * dy
            if 38 * 38 <= d2 < 50 * 50:
                v = 0.75
            if 150 <= c < 230 and 18 <= r < 98:
                v = 0.85 if ((c - 150) // 10 + (r - 18) // 10) % 2 == 0 else 0.08
            if 16 <= c < 120 and 170 <= r < 240 and ((c + r) // 6) % 2 == 0:
                v = 0.62
            if r >= 120 and r < 160 and abs(c - 128) < (r - 120) * 0.9:
                v = 1.0
            seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
            out[row + c] = min(1.0, max(0.0, v + ((seed >> 16) / 32768.0 - 0.5) * 0.04))
    return out


def _kernel(rows) -> tuple[array.array, tuple[int, int]]:
    return array.array("f", (float(v) for row in rows for v in row)), (len(rows), len(rows[0]))


async def run_filter(dev: GpuDevice, name: str, image, h: int, w: int):
    """One batch: upload the image and kernel(s), convolve2d, read the result back.
    Returns (flat float32 array, (out_h, out_w), batch stats dict)."""
    if name not in FILTERS:
        raise ValueError(f"unknown filter {name!r}; choose one of {', '.join(FILTERS)}")
    with dev.batch() as b:
        img = b.upload(image, (h, w))
        if name == "edges":
            kx, kshape = _kernel(SOBEL_X)
            ky, _ = _kernel(SOBEL_Y)
            gx = b.convolve2d(img, b.upload(kx, kshape))
            gy = b.convolve2d(img, b.upload(ky, kshape))
            out = b.add(b.mul(gx, gx), b.mul(gy, gy))
        else:
            k, kshape = _kernel(BLUR if name == "blur" else SHARPEN)
            out = b.convolve2d(img, b.upload(k, kshape))
        await b.execute()
        result = await b.read(out)
        return f32(result), out.shape, b.stats.as_dict()


# ------------------------------------------------------------------------------ the batch at work

CHAIN = "relu(x) -> scale(2) -> add(y) -> tanh -> mul(y)"
CHAIN_SIZES = (4096, 65536, 262144, 1048576, 4194304)  # the page's choices
CHAIN_DEFAULT = 65536
VARIANTS = ("one-shot", "batch", "batch + fusion", "CPU fallback")


def chain_inputs(n: int) -> tuple[array.array, array.array]:
    x = array.array("f", (3.0 * math.sin(0.0137 * i) for i in range(n)))
    y = array.array("f", (math.cos(0.0071 * i) for i in range(n)))
    return x, y


async def chain_one_shot(dev: GpuDevice, x, y):
    """Each op its own call: upload, one kernel, read back, five times."""
    t = await dev.relu(x)
    t = await dev.scale(t, 2.0)
    t = await dev.add(t, y)
    t = await dev.tanh(t)
    return await dev.mul(t, y)


async def chain_batch(dev: GpuDevice, x, y, fuse: bool):
    """The chain in one batch: two uploads, one submit, one read back (one kernel when fused)."""
    with dev.batch(fuse=fuse) as b:
        ux, uy = b.upload(x), b.upload(y)
        out = b.mul(b.tanh(b.add(b.scale(b.relu(ux), 2.0), uy)), uy)
        await b.execute()
        return await b.read(out)


def _stats_delta(before: dict, after: dict) -> dict:
    return {k: after[k] - before[k] for k in after}


# ------------------------------------------------------------------------------ helpers

def f32(values) -> array.array:
    """Any float32 result (array.array or NumPy array) as a flat array.array('f')."""
    if isinstance(values, array.array) and values.typecode == "f":
        return values
    out = array.array("f")
    out.frombytes(memoryview(values).cast("B") if hasattr(values, "tobytes") else array.array("f", values).tobytes())
    return out


def _summary(values) -> dict:
    finite = [v for v in values if math.isfinite(v)]
    return {"min": min(finite, default=0.0), "max": max(finite, default=0.0),
            "sum": math.fsum(finite), "count": len(values)}


def _max_abs_diff(a, b) -> float:
    worst = 0.0
    for u, v in zip(a, b):
        if u != v:
            if math.isnan(u) or math.isnan(v):
                return math.inf
            worst = max(worst, abs(u - v))
    return worst


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

    @classmethod
    async def open(cls, webgpu: dict | None = None, backend: str = "auto",
                   cpu_backend: str | None = None) -> "DemoSession":
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
            software_note = ("SwiftShader is a software GPU: WebGPU runs on the CPU here, so the 'GPU' timings "
                             "show a CPU emulating a GPU, not GPU hardware.")
        elif software:
            software_note = "This adapter is a software GPU (it runs on the CPU)."
        else:
            software_note = None
        from .. import __version__

        return {
            "backend": self.dev.backend, "adapter": info, "on_gpu": on_gpu, "software": software,
            "swiftshader": swiftshader, "software_note": software_note, "fallback_note": note,
            "cpu_backend": self.cpu.backend, "cpu_adapter": self.cpu.adapter_info,
            "limits": self.dev.limits, "trueno_web": __version__,
            "python": sys.version.split()[0], "platform": sys.platform,
        }

    # -------------------------------------------------------------------- panel 1

    async def activations(self, progress: Progress = None) -> dict:
        """Every unary op of the catalog over x in [-5, 5]: one batch on each device."""
        xs = grid()
        the_ops = activation_ops()
        curves = {}
        ms = {}
        for label, dev in (("gpu", self.dev), ("cpu", self.cpu)):
            _report(progress, f"activations on {dev.backend}", 0.1 if label == "gpu" else 0.5)
            t0 = time.perf_counter()
            with dev.batch() as b:
                u = b.upload(xs)
                outs = {op.name: getattr(b, op.name)(u, **op_params(op)) for op in the_ops}
                await b.execute()
                curves[label] = {name: f32(await b.read(buf)) for name, buf in outs.items()}
                stats = b.stats.as_dict()
            ms[label] = (time.perf_counter() - t0) * 1e3
            if label == "gpu":
                gpu_stats = stats
        probe_index = [round(p * GRID_STEP) + GRID_HALF for p in PROBES]
        rows = []
        for op in the_ops:
            g, c = curves["gpu"][op.name], curves["cpu"][op.name]
            rows.append({
                "name": op.name, "doc": op.doc, "params": op_params(op), "gpu": g, "cpu": c,
                "max_abs_diff": _max_abs_diff(g, c),
                "probes": [{"x": PROBES[k], "gpu": g[i], "cpu": c[i]} for k, i in enumerate(probe_index)],
            })
        return {"x": xs, "ops": rows, "probes": list(PROBES), "backend": self.dev.backend,
                "cpu_backend": self.cpu.backend, "ms": ms, "stats": gpu_stats}

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
            for label, dev in (("gpu", self.dev), ("cpu", self.cpu)):
                t0 = time.perf_counter()
                out, shape, stats = await run_filter(dev, name, image, h, w)  # first: pipelines compile
                first = (time.perf_counter() - t0) * 1e3
                t0 = time.perf_counter()
                out, shape, stats = await run_filter(dev, name, image, h, w)
                entry[label] = {"ms": (time.perf_counter() - t0) * 1e3, "first_ms": first, "stats": stats,
                                "backend": dev.backend}
                if label == "gpu":
                    entry["output"] = out
                    entry["shape"] = list(shape)
                    entry["summary"] = _summary(out)
                else:
                    entry["max_abs_diff"] = _max_abs_diff(entry["output"], out)
            results[name] = entry
        return {"image": image, "shape": [h, w], "filters": results, "backend": self.dev.backend,
                "cpu_backend": self.cpu.backend}

    # -------------------------------------------------------------------- panel 3

    async def chain(self, n: int = CHAIN_DEFAULT, repeat: int = 3, progress: Progress = None) -> dict:
        """The chain four ways at n elements: median ms of `repeat` runs after one warm-up, the
        stats of one run, and the largest difference from the CPU fallback's result."""
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
            "CPU fallback": (self.cpu, lambda d: chain_batch(d, x, y, fuse=True)),
        }
        rows, outputs = [], {}
        for k, (name, (dev, fn)) in enumerate(runs.items()):
            _report(progress, f"{name} on {dev.backend}, {n:,} elements", (k + 0.1) / len(runs))
            await fn(dev)  # warm-up: pipelines compile, buffers get pooled
            before = dev.stats.as_dict()
            outputs[name] = f32(await fn(dev))
            stats = _stats_delta(before, dev.stats.as_dict())
            times = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                await fn(dev)
                times.append((time.perf_counter() - t0) * 1e3)
            times.sort()
            rows.append({"name": name, "backend": dev.backend, "ms": times[len(times) // 2],
                         "ms_runs": times, "stats": stats})
        _report(progress, "comparing results", 0.95)
        reference = outputs["CPU fallback"]
        for row in rows:
            row["max_abs_diff"] = await self._max_abs_diff_cpu(outputs[row["name"]], reference)
        checksum = await self.cpu.sum(reference)
        return {"n": n, "chain": CHAIN, "variants": rows, "checksum": checksum, "repeat": repeat,
                "backend": self.dev.backend, "cpu_backend": self.cpu.backend}

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

"""What the demo page computes, as data and one-batch recipes: the activation grid, the test image and
its filters, the op chain one-shot and batched. Public API only and no NumPy (it runs under Pyodide);
demo_page.DemoSession runs these on two devices and compares them."""

from __future__ import annotations

import array
import math
import time

from .. import ops
from ..device import GpuDevice

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


async def activation_curves(dev: GpuDevice, xs) -> tuple[dict, dict]:
    """Every activation op of xs in one batch: ({op name: flat float32 values}, the batch's stats)."""
    with dev.batch() as b:
        u = b.upload(xs)
        outs = {op.name: getattr(b, op.name)(u, **op_params(op)) for op in activation_ops()}
        await b.execute()
        return {name: f32(await b.read(buf)) for name, buf in outs.items()}, b.stats.as_dict()


# The page's "try it" cell loads each panel's code from here (try_it.py): the functions the panel runs.
TRY_ACTIVATIONS = """\
# Panel 1: the catalog's activations over [-5, 5] in one batch on the page's device (demo_workloads.py)
from trueno_web.app.demo_workloads import activation_curves, grid

xs = grid()  # 401 points, x = -5, -4.975, ..., 5
curves, stats = await activation_curves(dev, xs)
print(f"{len(curves)} ops in one batch on {dev.backend}: dispatches: {stats['dispatches']}, submits: {stats['submits']}")
for name, ys in curves.items():
    print(f"{name:>11}  f(-2) = {ys[120]:+.4f}  f(0) = {ys[200]:+.4f}  f(2) = {ys[280]:+.4f}")
"""


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
    "edges": "Sobel: gx^2 + gy^2 on the device (two convolve2d, then mul/mul/add fused); drawn as its sqrt",
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


TRY_FILTERS = """\
# Panel 2: convolve2d filters of the page's test image, one batch each (demo_workloads.py)
from trueno_web.app.demo_workloads import make_image, run_filter
from trueno_web.display import Picture

image = make_image(128, 128)
panels = [(image, 128, 128)]
for name in ("blur", "sharpen", "edges"):
    out, (h, w), stats = await run_filter(dev, name, image, 128, 128)
    print(f"{name}: {h}x{w} on {dev.backend}, dispatches: {stats['dispatches']}")
    top = max(out)
    panels.append(([(v / top) ** 0.5 for v in out] if name == "edges" else out, w, h))
Picture.row(panels, scale=1)  # the last expression's value is shown: original, blur, sharpen, edges
"""


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


TRY_CHAIN = """\
# Panel 3: relu -> scale(2) -> add(y) -> tanh -> mul(y), each op its own call, then one fused batch
import time
from trueno_web.app.demo_workloads import chain_batch, chain_inputs, chain_one_shot

x, y = chain_inputs(65536)
runs = {"one-shot": lambda: chain_one_shot(dev, x, y), "batch + fusion": lambda: chain_batch(dev, x, y, fuse=True)}
for name, run in runs.items():
    await run()  # warm-up: the pipelines compile
    before = dev.stats.as_dict()["dispatches"]
    t0 = time.perf_counter()
    out = await run()
    ms = (time.perf_counter() - t0) * 1e3
    dispatches = dev.stats.as_dict()["dispatches"] - before
    print(f"{name:>14}: {ms:7.2f} ms, dispatches: {dispatches}, sum of the result {sum(out):.3f}")
"""


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


# ------------------------------------------------------------------------------ helpers


def f32(values) -> array.array:
    """Any float32 result (NDResult, array.array or NumPy array) as a flat array.array('f')."""
    if type(values) is array.array and values.typecode == "f":  # not an NDResult: the worker wants a plain one
        return values
    out = array.array("f")
    out.frombytes(memoryview(values).cast("B") if hasattr(values, "tobytes") else array.array("f", values).tobytes())
    return out


# ------------------------------------------------------------------------------ measuring


def stats_delta(before: dict, after: dict) -> dict:
    """What each counter of `stats.as_dict()` grew by."""
    return {k: after[k] - before[k] for k in after}


def summary(values) -> dict:
    """min, max, sum of the finite values, and how many values in all."""
    finite = [v for v in values if math.isfinite(v)]
    return {
        "min": min(finite, default=0.0),
        "max": max(finite, default=0.0),
        "sum": math.fsum(finite),
        "count": len(values),
    }


def max_abs_diff(a, b) -> float:
    """max |a - b| elementwise; infinite where one side alone is NaN."""
    worst = 0.0
    for u, v in zip(a, b):
        if u != v:
            if math.isnan(u) or math.isnan(v):
                return math.inf
            worst = max(worst, abs(u - v))
    return worst


async def timed(fn, min_runs: int, max_runs: int, budget_s: float) -> dict:
    """Time `await fn()` at least min_runs and at most max_runs times, stopping once budget_s is
    spent: the median, the fastest and slowest run, and how many runs (ms)."""
    times = []
    start = time.perf_counter()
    while len(times) < max_runs and (len(times) < min_runs or time.perf_counter() - start < budget_s):
        t0 = time.perf_counter()
        await fn()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return {"ms": times[len(times) // 2], "ms_min": times[0], "ms_max": times[-1], "runs": len(times)}

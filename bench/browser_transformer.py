#!/usr/bin/env python3
"""Browser benchmark of the transformer block: ours under Pyodide vs TF.js and jax-js, in ONE page of
headless Chromium (WebGPU on SwiftShader, a CPU rasterizer: see docs/benchmarks.md before reading ratios).

    .venv/bin/python bench/browser_transformer.py [--sizes 128x256x4,64x128x2] [--repeat 7]

Per size (SEQxD_MODELxHEADS), the same pre-norm block (trueno_web.models.TransformerBlock: layer_norm,
causal multi-head attention, gelu (tanh) MLP, residuals; d_ff = 4 d_model, eps 1e-5) runs as

  ours webgpu       TransformerBlock on tw.GpuDevice.create("webgpu") under Pyodide
  ours jit          the same block through tw.jit (traced once, its schedule replayed)
  ours wasm-simd    the same on the WASM SIMD128 executor (no GPU)
  TF.js webgpu      bench/tfjs_block.mjs: the block in TF.js 4.22 core ops (fused.matMul+bias, moments,
                    softmax, tanh, ...; no tf.layers) on @tensorflow/tfjs-backend-webgpu
  TF.js wasm        the same on @tensorflow/tfjs-backend-wasm (SIMD, one thread: the page is not
                    cross-origin isolated, so no SharedArrayBuffer threads)
  jax-js eager      bench/jaxjs_block.mjs: the block in jax-js 0.1.25's numpy and nn (standardize,
                    dotProductAttention with isCausal, gelu) on its webgpu device, each op as it comes
  jax-js jit        the same forward pass through jax.jit (traced once, its kernels fused)

The host makes the weights (TransformerBlock.random_weights, seed 0) and x (seeded N(0, 1)) once and serves
them to the page as one safetensors file: ours, TF.js and jax-js read the same bits. All seven outputs are sent
back and checked against a float64 NumPy forward pass (bench/transformer.py's numpy_block) and against each other
(max |a - b| / max |ref|, must be <= --tol) BEFORE anything is timed. The figure is the median over --repeat
timed runs (after warm-up; ours and the peers on the same kind of device take turns run by run, so that load
from other processes falls on all alike) of one forward pass end to end with x resident: compute, then the result
downloaded (ours `await block(x).numpy()`, TF.js and jax-js `await y.data()`), in ms, timed by performance.now() in
the page. TF.js and jax-js are served from build/web/tfjs/ and build/web/jaxjs/ (scripts/fetch_web_assets.py
fetches them at set-up; nothing is fetched at run time). Prints a markdown table with ratios.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import json
import os
import random
import struct
import subprocess
import sys
import time
from array import array
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from e2e.harness import AssetServer, PyodidePage, launch_chromium, load_script  # noqa: E402
from trueno_web.models import TransformerBlock  # noqa: E402

MODULE_ROUTE = "/bench/tfjs_block.mjs"
MODULE = ROOT / "bench" / "tfjs_block.mjs"
JAXJS_ROUTE = "/bench/jaxjs_block.mjs"  # imports ./jaxjs_train.mjs (loadJaxjs) and ./tfjs_block.mjs (asF32)
ROUTES = {
    f"/bench/{name}": ("text/javascript; charset=utf-8", (ROOT / "bench" / name).read_bytes())
    for name in ("tfjs_block.mjs", "jaxjs_block.mjs", "jaxjs_train.mjs")
}
TFJS_BASE = "/tfjs/"
JAXJS_BASE = "/jaxjs/"
EPS = 1e-5
TOL = 1e-3  # max |err| / max |ref| allowed before timing (what we reach is ~1e-6, printed)


def log(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------------------ data


def block_data(seq: int, d_model: int, heads: int, seed: int = 0) -> tuple[dict, bytes]:
    """({name: (array('f'), shape)} of the weights and "x", and the same as a safetensors file)."""
    arrays = dict(TransformerBlock.random_weights(d_model, seed=seed))
    rng = random.Random(seed + 1)
    arrays["x"] = (array("f", [rng.gauss(0.0, 1.0) for _ in range(seq * d_model)]), (seq, d_model))
    header, blobs, offset = {"__metadata__": {"seq": str(seq), "d_model": str(d_model), "heads": str(heads)}}, [], 0
    for name, (a, shape) in arrays.items():
        raw = a.tobytes() if sys.byteorder == "little" else _swapped(a)
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)
    return arrays, struct.pack("<Q", len(head)) + head + b"".join(blobs)


def _swapped(a: array) -> bytes:
    b = array(a.typecode, a)
    b.byteswap()
    return b.tobytes()


def reference(arrays: dict, heads: int):
    """The float64 NumPy forward pass of bench/transformer.py on these weights and x."""
    import numpy as np

    if str(ROOT / "bench") not in sys.path:
        sys.path.insert(0, str(ROOT / "bench"))
    from transformer import numpy_block

    w = {k: np.frombuffer(a, np.float32).reshape(s).astype(np.float64) for k, (a, s) in arrays.items() if k != "x"}
    a, s = arrays["x"]
    return numpy_block(w, np.frombuffer(a, np.float32).reshape(s).astype(np.float64), heads, EPS)


def agreement(outputs: dict, ref) -> dict:
    """{label: max|out - ref| / max|ref|} and {(a, b): max|a - b| / max|ref|} for every pair of outputs."""
    import numpy as np

    got = {
        k: np.frombuffer(base64.b64decode(v), np.float32).astype(np.float64).reshape(ref.shape)
        for k, v in outputs.items()
    }
    top = float(np.abs(ref).max())
    errs = {k: float(np.abs(v - ref).max()) / top for k, v in got.items()}
    keys = list(got)
    pairs = {(a, b): float(np.abs(got[a] - got[b]).max()) / top for i, a in enumerate(keys) for b in keys[i + 1 :]}
    return {"vs_float64": errs, "pairs": pairs}


# -------------------------------------------------------------------------------- code run in Pyodide

# The page's timing loop (Python run in Pyodide), shared by the browser benchmarks (browser_train.py,
# browser_peers.py): put before each page's SETUP.
TIMED = r"""

async def timed(fns, repeat, warmup, min_ms):
    # {name: async fn} -> {name: median ms per call, ...}. The functions take turns, one timed run each per
    # round, so that a change in the machine's load falls on all of them alike; one timed run repeats its call
    # until it lasts min_ms (performance.now() is coarse)
    inner = {}
    for name, fn in fns.items():
        for _ in range(warmup):
            await fn()
        inner[name], t = 0, time.perf_counter()
        while (time.perf_counter() - t) * 1e3 < min_ms:
            await fn()
            inner[name] += 1
    samples = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t = time.perf_counter()
            for _ in range(inner[name]):
                await fn()
            samples[name].append((time.perf_counter() - t) * 1e3 / inner[name])
    return {name: {"ms": statistics.median(v), "min": min(v), "max": max(v), "inner": inner[name]}
            for name, v in samples.items()}
"""

# The page's peers and devices, shared by the browser benchmarks with peers (browser_train.py): TF.js and jax-js
# loaded from E2E_ARGS' modules, our devices in DEVICES (webgpu; wasm-simd where E2E_ARGS["wasm"]) and TF.js's
# backend for each in TF_BACKENDS. Put before a page's own SETUP.
PEERS_SETUP = r"""
import statistics, time
import js
import trueno_web as tw
from pyodide.code import run_js
from pyodide.ffi import to_js
from pyodide.http import pyfetch
from trueno_web.backends.wasm_simd import WasmExecutor

TFJS = await run_js(f"import({E2E_ARGS['module']!r})")
TFJS_VERSIONS = (await TFJS.loadTfjs(E2E_ARGS["tfjs_base"])).to_py()
JAXJS = await run_js(f"import({E2E_ARGS['jaxjs_module']!r})")
JAXJS_INFO = (await JAXJS.loadJaxjs(E2E_ARGS["jaxjs_base"])).to_py()
DEVICES = {"webgpu": await tw.GpuDevice.create("webgpu")}
assert DEVICES["webgpu"].backend == "webgpu", DEVICES["webgpu"].backend
if E2E_ARGS["wasm"]:
    DEVICES["wasm-simd"] = tw.GpuDevice(await WasmExecutor.create())
    assert "SIMD128" in DEVICES["wasm-simd"].adapter_info["device"], DEVICES["wasm-simd"].adapter_info
TF_BACKENDS = {"webgpu": "webgpu", "wasm-simd": "wasm"}  # ours -> TF.js's counterpart
"""

SETUP = r"""
import array, base64
from trueno_web.models import TransformerBlock, read_safetensors

MIN_MS = E2E_ARGS["min_ms"]


async def ours(dev, jit=False):
    # our block on `dev`, x resident (with `jit`, through tw.jit): a forward pass downloads its result
    # (array('f'), flat)
    block = await TransformerBlock.create(dev, WEIGHTS, n_heads=HEADS, eps=E2E_ARGS["eps"])
    xt = tw.asarray(await dev.upload(X, XSHAPE))
    if not jit:
        return lambda: block(xt).numpy()
    forward = tw.jit(lambda x: block(x))

    async def run():
        return await (await forward(xt)).numpy()

    return run


async def host_part(dev, repeat):
    # ms of `await tw.realize(block(x))` alone: the expression, the plan, encoding and submitting (Python
    # in Pyodide); the GPU's work is waited for (onSubmittedWorkDone) outside the timed part
    block = await TransformerBlock.create(dev, WEIGHTS, n_heads=HEADS, eps=E2E_ARGS["eps"])
    xt = tw.asarray(await dev.upload(X, XSHAPE))
    queue = dev.executor.driver.device.queue
    samples = []
    for i in range(repeat + 2):
        t = time.perf_counter()
        y = await tw.realize(block(xt))
        if i >= 2:
            samples.append((time.perf_counter() - t) * 1e3)
        await queue.onSubmittedWorkDone()
        del y
    return {"ms": statistics.median(samples), "min": min(samples), "max": max(samples), "inner": 1}


async def tfjs(backend):
    # TF.js's block on `backend` (made current): a forward pass downloads its result (a Float32Array)
    info = (await TFJS.useBackend(backend)).to_py()
    blk = TFJS.createBlock(JS_WEIGHTS, to_js(memoryview(X)), XSHAPE[0], XSHAPE[1], HEADS, E2E_ARGS["eps"])
    return blk, info


async def jaxjs(mode):
    # jax-js's block ("eager" or "jit") on its webgpu device: a forward pass downloads its result
    return await JAXJS.createBlock(JS_WEIGHTS, to_js(memoryview(X)), XSHAPE[0], XSHAPE[1], HEADS, E2E_ARGS["eps"], mode)


{"tfjs": TFJS_VERSIONS, "jaxjs": JAXJS_INFO, "adapter": DEVICES["webgpu"].adapter_info,
 "wasm": DEVICES["wasm-simd"].adapter_info["device"] if "wasm-simd" in DEVICES else None}
"""
SETUP = TIMED + PEERS_SETUP + SETUP  # defined first: the SETUP's last expression is what page.run returns

LOAD = r"""
arrays, meta = read_safetensors(await (await pyfetch(E2E_ARGS["data_url"])).bytes())
X, XSHAPE = arrays.pop("x")
WEIGHTS, HEADS = arrays, int(meta["heads"])
JS_WEIGHTS = to_js({k: memoryview(a) for k, (a, s) in WEIGHTS.items()}, dict_converter=js.Object.fromEntries)
del arrays
XSHAPE
"""

# Every output, base64 of its float32 bytes, plus what each side ran on; nothing timed.
OUTPUTS = r"""
outputs, info = {}, {}
for name, dev in DEVICES.items():
    run = await ours(dev)
    before = dev.stats.dispatches
    outputs["ours " + name] = base64.b64encode((await run()).tobytes()).decode()
    info["ours " + name] = {"dispatches": dev.stats.dispatches - before}
    if name == "webgpu":
        outputs["ours jit"] = base64.b64encode((await (await ours(dev, jit=True))()).tobytes()).decode()
    blk, tf_info = await tfjs(TF_BACKENDS[name])
    try:
        y = await blk.run()
        assert y.constructor.name == "Float32Array", y.constructor.name
        outputs["TF.js " + TF_BACKENDS[name]] = base64.b64encode(y.to_bytes()).decode()
        info["TF.js " + TF_BACKENDS[name]] = {**tf_info, "kernels": len((await blk.kernels()).to_py())}
    finally:
        blk.dispose()
for mode in ("eager", "jit"):
    blk = await jaxjs(mode)
    try:
        y = await blk.run()
        assert y.constructor.name == "Float32Array", y.constructor.name
        outputs["jax-js " + mode] = base64.b64encode(y.to_bytes()).decode()
    finally:
        blk.dispose()
{"outputs": outputs, "info": info}
"""

TIMES = r"""
times = {}
for name, dev in DEVICES.items():
    run = await ours(dev)
    blk, _ = await tfjs(TF_BACKENDS[name])
    peers = {"TF.js " + TF_BACKENDS[name]: blk}
    for mode in ("eager", "jit") if name == "webgpu" else ():
        peers["jax-js " + mode] = await jaxjs(mode)
    try:  # ours and the peers on this kind of device take turns
        fns = {"ours " + name: run, **{label: peer.run for label, peer in peers.items()}}
        if name == "webgpu":
            fns["ours jit"] = await ours(dev, jit=True)
        times.update(await timed(fns, E2E_ARGS["repeat"], 2, MIN_MS))
    finally:
        for peer in peers.values():
            peer.dispose()
    if name == "webgpu":
        times["ours webgpu host"] = await host_part(dev, E2E_ARGS["repeat"])
times
"""


# ------------------------------------------------------------------------------------------ running


def ensure_peers() -> None:
    """Fetch TF.js and jax-js into build/web/ where missing (set-up, not run time)."""
    fetch = load_script("fetch_web_assets")
    for present, flag in ((fetch.tfjs_present, "--tfjs-only"), (fetch.jaxjs_present, "--jaxjs-only")):
        if not present():
            log(f"running scripts/fetch_web_assets.py {flag}")
            subprocess.run(
                [sys.executable, str(ROOT / "scripts" / "fetch_web_assets.py"), flag], check=True, stdout=sys.stderr
            )  # stdout is the report


def setup_page(page: PyodidePage, *, wasm: bool = True, min_ms: float = 25.0) -> dict:
    """Load TF.js and jax-js and create our devices in `page` (served by an AssetServer with ROUTES)."""
    return page.run(
        SETUP,
        args={
            "module": MODULE_ROUTE,
            "tfjs_base": TFJS_BASE,
            "jaxjs_module": JAXJS_ROUTE,
            "jaxjs_base": JAXJS_BASE,
            "wasm": wasm,
            "min_ms": min_ms,
            "eps": EPS,
        },
        timeout_s=180,
    )


def check_size(page: PyodidePage, server: AssetServer, seq: int, d_model: int, heads: int, tol: float = TOL) -> dict:
    """Serve this size's weights and x, run every variant once, check them: the agreement dict, with
    "ok" False when anything is off by more than `tol`."""
    arrays, blob = block_data(seq, d_model, heads)
    route = f"/bench/block-{seq}x{d_model}x{heads}.safetensors"
    server.add_route(route, "application/octet-stream", blob)
    page.run(LOAD, args={"data_url": route}, timeout_s=120)
    res = page.run(OUTPUTS, args={"eps": EPS}, timeout_s=600)
    agree = agreement(res["outputs"], reference(arrays, heads))
    worst = max([*agree["vs_float64"].values(), *agree["pairs"].values()])
    return {**agree, "info": res["info"], "worst": worst, "ok": worst <= tol}


def time_size(page: PyodidePage, repeat: int) -> dict:
    return page.run(TIMES, args={"repeat": repeat, "eps": EPS}, timeout_s=600)


def report(sizes: list, setup: dict) -> str:
    gpu = setup["adapter"]
    tv = setup["tfjs"]
    lines = [
        f"Adapter: {gpu.get('vendor')} / {gpu.get('architecture')} / {gpu.get('device')} "
        f"({gpu.get('description')}); ours on wasm: {setup['wasm']}; TF.js: "
        + ", ".join(f"@tensorflow/{k} {v}" for k, v in tv.items())
        + f"; @jax-js/jax {setup['jaxjs']['@jax-js/jax']} (its adapter: {setup['jaxjs']['adapter']}).",
        "",
        "Agreement (max |a - b| / max |ref|; ref: float64 NumPy on the host):",
        "",
    ]
    for s in sizes:
        a = s["agree"]
        f64 = ", ".join(f"{k} {v:.1e}" for k, v in a["vs_float64"].items())
        pairs = ", ".join(f"{x} vs {y} {v:.1e}" for (x, y), v in a["pairs"].items())
        lines.append(f"- {s['size']}: vs float64: {f64}; pairwise: {pairs}")
    lines += [
        "",
        "One forward pass, x resident, result downloaded; ms, median (min-max) of the timed runs:",
        "",
        "| size | ours webgpu | ours jit | TF.js webgpu | jax-js eager | jax-js jit | ours jit / TF.js, / jax-js jit "
        "(webgpu) | ours wasm-simd | TF.js wasm | ours / TF.js (wasm) | ours webgpu: host part, dispatches | TF.js "
        "kernels |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]

    def cell(t):
        return f"{t['ms']:.1f} ({t['min']:.1f}-{t['max']:.1f})" if t else "n/a"

    for s in sizes:
        t = s["times"]

        def ratio(a, b):
            return f"{t[a]['ms'] / t[b]['ms']:.2f}x" if a in t and b in t else "n/a"

        lines.append(
            f"| {s['size']} | {cell(t.get('ours webgpu'))} | {cell(t.get('ours jit'))} | "
            f"{cell(t.get('TF.js webgpu'))} | {cell(t.get('jax-js eager'))} | {cell(t.get('jax-js jit'))} | "
            f"{ratio('ours jit', 'TF.js webgpu')}, {ratio('ours jit', 'jax-js jit')} | {cell(t.get('ours wasm-simd'))} | "
            f"{cell(t.get('TF.js wasm'))} | {ratio('ours wasm-simd', 'TF.js wasm')} | "
            f"{cell(t.get('ours webgpu host'))}, "
            f"{s['info'].get('ours webgpu', {}).get('dispatches', 'n/a')} | "
            f"{s['info'].get('TF.js webgpu', {}).get('kernels', 'n/a')} |"
        )
    lines += [
        "",
        "(ratio < 1: ours is faster. Host part: `await tw.realize(block(x))` with the GPU's work waited "
        "for outside the timing: building the expression, planning, encoding and submitting, in Python under "
        "Pyodide. TF.js kernels: what tf.profile lists for one forward pass on webgpu, reshapes included.)",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sizes", default="128x256x4,64x128x2", help="SEQxD_MODELxHEADS, comma separated")
    ap.add_argument("--repeat", type=int, default=7, help="timed runs per figure (median reported)")
    ap.add_argument(
        "--min-ms",
        type=float,
        default=25.0,
        help="each timed run repeats the forward pass until it lasts this long (ms)",
    )
    ap.add_argument("--no-wasm", action="store_true", help="webgpu only (ours and TF.js)")
    ap.add_argument("--tol", type=float, default=TOL, help="largest max|err|/max|ref| accepted before timing")
    ap.add_argument("--json", type=Path, help="also write the raw figures here")
    args = ap.parse_args(argv)

    sys.path.insert(0, str(ROOT / "bench"))
    from browser import ensure_assets, source_state

    ensure_assets()
    ensure_peers()
    from playwright.sync_api import sync_playwright

    load_before = os.getloadavg()
    if load_before[0] > 0.5 * (os.cpu_count() or 1):
        log(f"warning: load average {load_before[0]:.2f} on {os.cpu_count()} CPUs; the figures will be noisy")
    t0 = time.perf_counter()
    sizes, failed = [], False
    with (
        AssetServer(routes=dict(ROUTES)) as server,
        sync_playwright() as pw,
    ):
        browser = launch_chromium(pw, webgpu=True)
        try:
            page = PyodidePage(browser, server, echo_output=False)
            try:
                setup = setup_page(page, wasm=not args.no_wasm, min_ms=args.min_ms)
                log(f"TF.js {setup['tfjs']}; adapter {setup['adapter']}")
                for spec in args.sizes.split(","):
                    seq, d_model, heads = (int(v) for v in spec.split("x"))
                    size = f"seq {seq}, d_model {d_model}, {heads} heads"
                    log(f"{size}: outputs ...")
                    agree = check_size(page, server, seq, d_model, heads, args.tol)
                    log(f"{size}: vs float64 {agree['vs_float64']}, worst {agree['worst']:.2e}; {agree['info']}")
                    if not agree["ok"]:
                        log(f"{size}: outputs disagree beyond {args.tol:g}; not timed")
                        failed = True
                        times = {}
                    else:
                        log(f"{size}: timing ...")
                        times = time_size(page, args.repeat)
                        log(f"{size}: {times}")
                    sizes.append({"size": size, "agree": agree, "info": agree["info"], "times": times})
                problems = page.log.problems()
                for p in problems:
                    log(f"page problem: {p}")
                browser_version, pyodide = browser.version, page.pyodide_version
            finally:
                page.close()
        finally:
            browser.close()
    load_after = os.getloadavg()
    print(
        f"# trueno_web vs TF.js, transformer block in the browser, {datetime.date.today().isoformat()} "
        f"({time.perf_counter() - t0:.0f} s; {os.cpu_count()} CPUs, 1-min load average {load_before[0]:.2f} before, "
        f"{load_after[0]:.2f} after)\n"
    )
    print(f"Sources: {source_state()}. Chromium {browser_version} headless, --enable-unsafe-webgpu; Pyodide {pyodide}.")
    print(report(sizes, setup))
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "setup": setup,
                    "sizes": [
                        {
                            **s,
                            "agree": {**s["agree"], "pairs": [[a, b, v] for (a, b), v in s["agree"]["pairs"].items()]},
                        }
                        for s in sizes
                    ],
                },
                indent=2,
                default=str,
            )
        )
    return 1 if failed or problems else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Browser benchmark of one MLP training step (forward, backward, AdamW): ours under Pyodide vs TF.js and jax-js,
in ONE page of headless Chromium (WebGPU on SwiftShader, a CPU rasterizer: see docs/benchmarks.md before reading ratios).

    .venv/bin/python bench/browser_train.py [--sizes 784,256,256,10] [--batch 128] [--steps 10] [--repeat 7]

The MLP (relu between the layers, cross-entropy on class-index labels, AdamW lr 1e-3, betas 0.9/0.999, eps 1e-8,
decoupled weight decay 0.01 on every parameter) trains as

  ours jit webgpu       `opt.trainer(loss_fn)`: the whole step traced once by tw.jit and replayed, on
                        tw.GpuDevice.create("webgpu") under Pyodide; `loss = await step(x, y)`, `await loss.item()`
  ours eager webgpu     `tw.value_and_grad(loss_fn)` + `await opt.step(grads, loss)` + `await loss.item()`
  ours jit wasm-simd    the jitted step on the WASM SIMD128 executor (no GPU)
  TF.js webgpu          bench/tfjs_train.mjs: tf.variableGrads of the loss (tf.fused.matMul with bias and relu,
                        tf.losses.softmaxCrossEntropy of tf.oneHot), then the decoupled decay by hand
                        (w.assign(w * (1 - lr * wd)), TF.js has no AdamW) and tf.train.adam's applyGradients;
                        `await loss.data()`; on @tensorflow/tfjs-backend-webgpu 4.22
  TF.js wasm            the same on @tensorflow/tfjs-backend-wasm (SIMD, one thread: the page is not
                        cross-origin isolated)
  jax-js jit webgpu     bench/jaxjs_train.mjs: the loss in jax-js's numpy (matmul, add, nn.relu, nn.logSoftmax,
                        nn.oneHot), jax.valueAndGrad of it and AdamW by hand (the same formula as ours), the
                        whole step under jax.jit; `await loss.data()`; @jax-js/jax 0.1.25 on its own WebGPU device
  jax-js eager webgpu   the same step called without jax.jit

The host makes the initial weights (He normal, zero biases) and --steps minibatches (seeded normal inputs
labelled by a random teacher: bench/train.py's make_data) and serves them to the page as one safetensors file:
ours and the peers start from the same bits and see the same batches. Every variant first trains --steps steps
from the initial weights; its losses come back and are checked against a float64 NumPy training run on the
host and against each other (max over the steps of |a - b| / |ref|, must be <= --tol) BEFORE anything is
timed. Then each variant starts again from the initial weights and is timed: the figure is the median over
--repeat timed runs (after warm-up; the variants on the same kind of device take turns run by run, so that
load from other processes falls on all alike) of one step, cycling through the minibatches (resident on the
device), ending with the loss read back, in ms, timed in the page. TF.js and jax-js are served from
build/web/tfjs/ and build/web/jaxjs/ (scripts/fetch_web_assets.py fetches them at set-up; nothing is fetched at
run time). Each ours is divided by the fastest peer on the same kind of device. Prints a markdown table;
exits 1 when the losses disagree (nothing is then timed) or the page logged problems.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import struct
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from browser_transformer import MODULE as BLOCK_MODULE  # noqa: E402 - after the paths above
from browser_transformer import MODULE_ROUTE as BLOCK_ROUTE  # noqa: E402
from browser_transformer import PEERS_SETUP, TFJS_BASE, TIMED, ensure_peers  # noqa: E402

from e2e.harness import AssetServer, PyodidePage, launch_chromium  # noqa: E402

MODULE_ROUTE = "/bench/tfjs_train.mjs"  # imports ./tfjs_block.mjs (loadTfjs, useBackend): both are served
MODULE = ROOT / "bench" / "tfjs_train.mjs"
JAXJS_ROUTE = "/bench/jaxjs_train.mjs"  # imports jax-js from JAXJS_BASE, asF32 from ./tfjs_block.mjs
JAXJS_MODULE = ROOT / "bench" / "jaxjs_train.mjs"
JAXJS_BASE = "/jaxjs/"
ROUTES = {
    MODULE_ROUTE: ("text/javascript; charset=utf-8", MODULE.read_bytes()),
    BLOCK_ROUTE: ("text/javascript; charset=utf-8", BLOCK_MODULE.read_bytes()),
    JAXJS_ROUTE: ("text/javascript; charset=utf-8", JAXJS_MODULE.read_bytes()),
}
HYPER = {"lr": 1e-3, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weightDecay": 0.01}
TOL = 1e-3  # max over the steps of |loss - ref| / |ref| allowed before timing (printed: ~1e-6 expected)
VARIANTS = {  # label -> the kind of device it runs on: each ours is compared with the peers on the same kind
    "ours jit webgpu": "webgpu",
    "ours eager webgpu": "webgpu",
    "TF.js webgpu": "webgpu",
    "jax-js jit webgpu": "webgpu",
    "jax-js eager webgpu": "webgpu",
    "ours jit wasm-simd": "wasm",
    "TF.js wasm": "wasm",
}


def log(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------------------ data


def train_data(sizes: tuple[int, ...], batch: int, steps: int, seed: int = 0):
    """(init {name: float32 array}, [(x, labels)] float32, and all of it as one safetensors file)."""
    from train import make_data  # bench/train.py: the desktop benchmark's data, the same recipe

    init, data = make_data(sizes, batch, steps, seed)
    arrays = dict(init)
    for i, (x, y) in enumerate(data):
        arrays[f"x{i}"], arrays[f"y{i}"] = x, y
    header = {"__metadata__": {"sizes": ",".join(map(str, sizes)), "batch": str(batch), "steps": str(steps)}}
    blobs, offset = [], 0
    for name, a in arrays.items():
        raw = a.astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)
    return init, data, struct.pack("<Q", len(head)) + head + b"".join(blobs)


def reference_losses(init: dict, data: list, steps: int, hp: dict = HYPER) -> list[float]:
    """The losses of `steps` steps of the same training in float64 NumPy (forward, backward by hand, AdamW as
    torch.optim.AdamW: p *= 1 - lr wd; m, v; p -= lr / (1 - b1^t) m / (sqrt(v / (1 - b2^t)) + eps))."""
    import numpy as np

    layers = len(init) // 2
    p = {k: v.astype(np.float64) for k, v in init.items()}
    m = {k: np.zeros_like(v) for k, v in p.items()}
    v2 = {k: np.zeros_like(v) for k, v in p.items()}
    lr, b1, b2, eps, wd = hp["lr"], hp["beta1"], hp["beta2"], hp["eps"], hp["weightDecay"]
    losses = []
    for t in range(1, steps + 1):
        x, y = data[(t - 1) % len(data)]
        hs, h = [x.astype(np.float64)], x.astype(np.float64)
        for i in range(1, layers + 1):
            h = h @ p[f"w{i}"] + p[f"b{i}"]
            if i < layers:
                h = np.maximum(h, 0.0)
            hs.append(h)
        logits = hs[-1]
        shifted = logits - logits.max(1, keepdims=True)
        logp = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
        rows, labels = np.arange(len(y)), y.astype(np.int64)
        losses.append(float(-logp[rows, labels].mean()))
        d = np.exp(logp)
        d[rows, labels] -= 1.0
        d /= len(y)
        grads = {}
        for i in range(layers, 0, -1):
            grads[f"w{i}"] = hs[i - 1].T @ d
            grads[f"b{i}"] = d.sum(0)
            if i > 1:
                d = (d @ p[f"w{i}"].T) * (hs[i - 1] > 0)
        for k, g in grads.items():
            p[k] *= 1.0 - lr * wd
            m[k] = b1 * m[k] + (1 - b1) * g
            v2[k] = b2 * v2[k] + (1 - b2) * g * g
            p[k] -= lr / (1 - b1**t) * m[k] / (np.sqrt(v2[k] / (1 - b2**t)) + eps)
    return losses


def agreement(losses: dict, ref: list[float]) -> dict:
    """{label: max over steps of |loss - ref| / |ref|}, the same for every pair, and the worst of all."""

    def diff(a, b):
        return max(abs(x - y) / abs(r) for x, y, r in zip(a, b, ref))

    keys = list(losses)
    vs = {k: diff(v, ref) for k, v in losses.items()}
    pairs = {(a, b): diff(losses[a], losses[b]) for i, a in enumerate(keys) for b in keys[i + 1 :]}
    return {"vs_float64": vs, "pairs": pairs, "worst": max([*vs.values(), *pairs.values()], default=float("inf"))}


# -------------------------------------------------------------------------------- code run in Pyodide

SETUP = r"""
from trueno_web.models import read_safetensors

HYPER = E2E_ARGS["hyper"]
MIN_MS = E2E_ARGS["min_ms"]


def loss_fn(p, x, labels, layers):
    h = x
    for i in range(1, layers):
        h = tw.nn.linear(h, p[f"w{i}"], p[f"b{i}"]).relu()
    return tw.nn.cross_entropy(tw.nn.linear(h, p[f"w{layers}"], p[f"b{layers}"]), labels)


async def ours(name, jit):
    # a fresh model on DEVICES[name] from the initial weights: an async step() -> loss (float), cycling
    # through the minibatches (uploaded once per device)
    dev = DEVICES[name]
    if name not in BATCHES:
        BATCHES[name] = [(tw.asarray(await dev.upload(x, xs)), tw.asarray(await dev.upload(y, ys)))
                         for (x, xs), (y, ys) in DATA]
    batches = BATCHES[name]
    params = {k: dev.tensor(a, s) for k, (a, s) in INIT.items()}
    opt = tw.optim.AdamW(params, lr=HYPER["lr"], betas=(HYPER["beta1"], HYPER["beta2"]), eps=HYPER["eps"],
                         weight_decay=HYPER["weightDecay"])
    at = [0]
    if jit:
        trainer = opt.trainer(lambda p, x, y: loss_fn(p, x, y, LAYERS))

        async def step():
            x, y = batches[at[0] % len(batches)]
            at[0] += 1
            return await (await trainer(x, y)).item()
    else:
        loss_and_grads = tw.value_and_grad(loss_fn)

        async def step():
            x, y = batches[at[0] % len(batches)]
            at[0] += 1
            loss, grads = loss_and_grads(params, x, y, LAYERS)
            await opt.step(grads, loss)
            return await loss.item()
    return step


async def tfjs(backend):
    # a fresh TF.js trainer on `backend` (made current) from the initial weights
    info = (await TFJS.useBackend(backend)).to_py()
    trainer = TFJS.createTrainer(JS_INIT, to_js(list(SIZES)), BATCH, JS_XS, JS_YS,
                                 to_js(HYPER, dict_converter=js.Object.fromEntries))
    return trainer, info


async def jaxjs(mode):
    # a fresh jax-js trainer on its webgpu device from the initial weights, its step jitted or eager
    trainer = await JAXJS.createTrainer(JS_INIT, to_js(list(SIZES)), BATCH, JS_XS, JS_YS,
                                        to_js(HYPER, dict_converter=js.Object.fromEntries), mode)
    return trainer, {**JAXJS_INFO, "mode": mode}


def variants(name):
    # ours on DEVICES[name] (jit, and eager on webgpu): [(label, make)]
    out = [(f"ours jit {name}", lambda: ours(name, True))]
    if name == "webgpu":
        out.append((f"ours eager {name}", lambda: ours(name, False)))
    return out


def peers(name):
    # the peers on the kind of device of DEVICES[name]: [(label, make)], make() -> (JS trainer, info)
    out = [("TF.js " + TF_BACKENDS[name], lambda: tfjs(TF_BACKENDS[name]))]
    if name == "webgpu":
        out += [(f"jax-js {mode} webgpu", lambda mode=mode: jaxjs(mode)) for mode in ("jit", "eager")]
    return out


async def work(label, trainer):
    # what one step of a peer runs: TF.js's kernels (tf.profile), jax-js's dispatches (counted in the page)
    if label.startswith("TF.js"):
        return {"kernels": len((await trainer.kernels()).to_py())}
    return {"dispatches": await trainer.dispatches()}


{"tfjs": TFJS_VERSIONS, "jaxjs": JAXJS_INFO, "adapter": DEVICES["webgpu"].adapter_info,
 "wasm": DEVICES["wasm-simd"].adapter_info["device"] if "wasm-simd" in DEVICES else None}
"""
SETUP = TIMED + PEERS_SETUP + SETUP  # defined first: the SETUP's last expression is what page.run returns

LOAD = r"""
arrays, meta = read_safetensors(await (await pyfetch(E2E_ARGS["data_url"])).bytes())
SIZES = tuple(int(s) for s in meta["sizes"].split(","))
BATCH, LAYERS, NBATCH = int(meta["batch"]), len(SIZES) - 1, int(meta["steps"])
DATA = [(arrays.pop(f"x{i}"), arrays.pop(f"y{i}")) for i in range(NBATCH)]
INIT = arrays
BATCHES = {}  # device name -> [(x, y)] resident
JS_INIT = to_js({k: memoryview(a) for k, (a, s) in INIT.items()}, dict_converter=js.Object.fromEntries)
JS_XS = to_js([memoryview(x) for (x, _), _ in DATA])
JS_YS = to_js([memoryview(y) for _, (y, _) in DATA])
del arrays
[SIZES, BATCH, NBATCH]
"""

# Every variant trains `steps` steps from the initial weights; their losses. Nothing timed.
LOSSES = r"""
losses, info = {}, {}
for name, dev in DEVICES.items():
    for label, make in variants(name):
        step = await make()
        before = dev.stats.dispatches
        losses[label] = [await step() for _ in range(E2E_ARGS["steps"])]
        info[label] = {"dispatches/step (incl. first)": (dev.stats.dispatches - before) / E2E_ARGS["steps"]}
    for label, make in peers(name):
        trainer, info[label] = await make()
        try:
            losses[label] = [await trainer.step() for _ in range(E2E_ARGS["steps"])]
        finally:
            trainer.dispose()
{"losses": losses, "info": info}
"""

TIMES = r"""
times, info = {}, {}
for name, dev in DEVICES.items():
    fns = {label: await make() for label, make in variants(name)}
    trainers = {}
    try:  # ours and the peers on the same kind of device take turns
        for label, make in peers(name):
            trainers[label], _ = await make()
            fns[label] = trainers[label].step
        times.update(await timed(fns, E2E_ARGS["repeat"], 2, MIN_MS))
        for label, fn in fns.items():
            if label.startswith("ours"):
                before = dev.stats.dispatches
                await fn()
                info[label] = {"dispatches": dev.stats.dispatches - before}
        for label, trainer in trainers.items():
            info[label] = await work(label, trainer)
    finally:
        for trainer in trainers.values():
            trainer.dispose()
{"times": times, "info": info}
"""


# ------------------------------------------------------------------------------------------ running


def setup_page(page: PyodidePage, *, wasm: bool = True, min_ms: float = 25.0) -> dict:
    """Load TF.js and jax-js and create our devices in `page` (served by an AssetServer with ROUTES)."""
    args = {"module": MODULE_ROUTE, "tfjs_base": TFJS_BASE, "jaxjs_module": JAXJS_ROUTE, "jaxjs_base": JAXJS_BASE}
    return page.run(SETUP, args={**args, "wasm": wasm, "min_ms": min_ms, "hyper": HYPER}, timeout_s=180)


def check(
    page: PyodidePage, server: AssetServer, sizes: tuple[int, ...], batch: int, steps: int, tol: float = TOL
) -> dict:
    """Serve the initial weights and `steps` minibatches, train every variant `steps` steps, check their losses:
    the agreement dict with the losses, the reference, "info" and "ok" (False when anything is off by > tol)."""
    init, data, blob = train_data(sizes, batch, steps)
    route = f"/bench/train-{'-'.join(map(str, sizes))}-b{batch}-s{steps}.safetensors"
    server.add_route(route, "application/octet-stream", blob)
    page.run(LOAD, args={"data_url": route}, timeout_s=120)
    res = page.run(LOSSES, args={"steps": steps}, timeout_s=600)
    ref = reference_losses(init, data, steps)
    agree = agreement(res["losses"], ref)
    return {**agree, "losses": res["losses"], "ref": ref, "info": res["info"], "ok": agree["worst"] <= tol}


def time_steps(page: PyodidePage, repeat: int) -> dict:
    return page.run(TIMES, args={"repeat": repeat}, timeout_s=600)


def report(agree: dict, timed: dict, setup: dict, steps: int) -> str:
    gpu, tv = setup["adapter"], setup["tfjs"]
    lines = [
        f"Adapter: {gpu.get('vendor')} / {gpu.get('architecture')} / {gpu.get('device')} "
        f"({gpu.get('description')}); ours on wasm: {setup['wasm']}; TF.js: "
        + ", ".join(f"@tensorflow/{k} {v}" for k, v in tv.items())
        + f"; @jax-js/jax {setup['jaxjs']['@jax-js/jax']} (adapter {setup['jaxjs']['adapter']}).",
        "",
        f"Losses over {steps} steps from the same weights (max over the steps of |a - b| / |float64 NumPy|):",
        "",
        "- vs float64: " + ", ".join(f"{k} {v:.1e}" for k, v in agree["vs_float64"].items()),
        "- pairwise: " + ", ".join(f"{a} vs {b} {v:.1e}" for (a, b), v in agree["pairs"].items()),
        "",
        "One training step (forward, backward, AdamW; the loss read back), batches resident; ms, median "
        "(min-max) of the timed runs:",
        "",
        f"| variant | ms/step | steps/s | ours / best peer | loss after {steps} steps | dispatches / kernels (TF.js) |",
        "|---|---|---|---|---|---|",
    ]
    t, info = timed.get("times", {}), timed.get("info", {})
    ratio = {}  # ours -> (its ms / the fastest peer's on the same kind of device, that peer)
    for label, kind in VARIANTS.items():
        rivals = [p for p, k in VARIANTS.items() if k == kind and not p.startswith("ours") and p in t]
        if label.startswith("ours") and label in t and rivals:
            best = min(rivals, key=lambda p: t[p]["ms"])
            ratio[label] = (t[label]["ms"] / t[best]["ms"], best)
    for label in VARIANTS:
        if label not in agree["losses"]:
            continue
        cell = f"{t[label]['ms']:.1f} ({t[label]['min']:.1f}-{t[label]['max']:.1f})" if label in t else "n/a"
        rate = f"{1e3 / t[label]['ms']:.1f}" if label in t else "n/a"
        r = f"**{ratio[label][0]:.2f}x** ({ratio[label][1]})" if label in ratio else ""
        work = info.get(label, {})
        work = work.get("dispatches", work.get("kernels", "n/a"))
        lines.append(f"| {label} | {cell} | {rate} | {r} | {agree['losses'][label][-1]:.6f} | {work} |")
    lines += [
        "",
        f"(float64 NumPy's loss after {steps} steps: {agree['ref'][-1]:.6f}. Ratio < 1: ours is faster than every "
        "peer; each ours is divided by the fastest peer on the same kind of device (named). Dispatches: what one "
        "step of ours submits, or jax-js's compute dispatches counted in the page; kernels: what tf.profile lists "
        "for one TF.js step, reshapes and casts included.)",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sizes", default="784,256,256,10", help="layer widths, comma separated")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--steps", type=int, default=10, help="steps checked from the initial weights (and minibatches)")
    ap.add_argument("--repeat", type=int, default=7, help="timed runs per figure (median reported)")
    ap.add_argument("--min-ms", type=float, default=25.0, help="each timed run repeats the step until it lasts this")
    ap.add_argument("--no-wasm", action="store_true", help="webgpu only (ours and the peers)")
    ap.add_argument("--tol", type=float, default=TOL, help="largest loss difference accepted before timing")
    ap.add_argument("--json", type=Path, help="also write the raw figures here")
    args = ap.parse_args(argv)
    sizes = tuple(int(s) for s in args.sizes.split(","))
    if len(sizes) < 2 or args.steps < 1:
        ap.error("--sizes needs at least two widths and --steps at least 1")

    from browser import ensure_assets, source_state

    ensure_assets()
    ensure_peers()
    from playwright.sync_api import sync_playwright

    load_before = os.getloadavg()
    if load_before[0] > 0.5 * (os.cpu_count() or 1):
        log(f"warning: load average {load_before[0]:.2f} on {os.cpu_count()} CPUs; the figures will be noisy")
    t0 = time.perf_counter()
    timed: dict = {}
    with AssetServer(routes=dict(ROUTES)) as server, sync_playwright() as pw:
        browser = launch_chromium(pw, webgpu=True)
        try:
            page = PyodidePage(browser, server, echo_output=False)
            try:
                setup = setup_page(page, wasm=not args.no_wasm, min_ms=args.min_ms)
                log(f"TF.js {setup['tfjs']}; adapter {setup['adapter']}")
                log(f"MLP {args.sizes}, batch {args.batch}: {args.steps} steps per variant ...")
                agree = check(page, server, sizes, args.batch, args.steps, args.tol)
                log(f"losses: {agree['losses']}; float64: {agree['ref']}")
                log(f"vs float64 {agree['vs_float64']}, worst {agree['worst']:.2e}; {agree['info']}")
                if not agree["ok"]:
                    log(f"losses disagree beyond {args.tol:g}; not timed")
                else:
                    log("timing ...")
                    timed = time_steps(page, args.repeat)
                    log(f"{timed}")
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
        f"# trueno_web vs TF.js, MLP {args.sizes} training step (batch {args.batch}) in the browser, "
        f"{datetime.date.today().isoformat()} ({time.perf_counter() - t0:.0f} s; {os.cpu_count()} CPUs, "
        f"1-min load average {load_before[0]:.2f} before, {load_after[0]:.2f} after)\n"
    )
    print(f"Sources: {source_state()}. Chromium {browser_version} headless, --enable-unsafe-webgpu; Pyodide {pyodide}.")
    print(report(agree, timed, setup, args.steps))
    if not agree["ok"]:
        print(f"\nFAILED: the losses disagree beyond {args.tol:g} (worst {agree['worst']:.2e}); nothing was timed.")
    if args.json:
        out = {**agree, "pairs": [[a, b, v] for (a, b), v in agree["pairs"].items()]}
        args.json.write_text(json.dumps({"setup": setup, "check": out, "timed": timed}, indent=2, default=str))
    return 1 if not agree["ok"] or problems else 0


if __name__ == "__main__":
    sys.exit(main())

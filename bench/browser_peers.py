#!/usr/bin/env python3
"""Browser benchmark of ours against two peers, jax-js and TF.js, on one page of headless Chromium (WebGPU
on SwiftShader, a CPU rasterizer: see docs/benchmarks.md before reading ratios).

    .venv/bin/python bench/browser_peers.py [--matmul 512,1024] [--chain 20] [--repeat 5]

Cases, each on resident inputs and timed to a completed read of the result (performance.now() in the page):

  matmul N   C = A @ B of N x N float32 (2 N^3 flops: GFLOPS = 2 N^3 / time)
    ours one-shot    `await dev.matmul(a, b)` on DeviceArrays (one batch: the kernel, then the read)
    ours jit         `await (await f(a, b)).numpy()`, f = tw.jit(lambda a, b: a @ b)
    jax-js eager     np.matmul(a.ref, b.ref).data() on jax-js's webgpu device (bench/peers.mjs)
    jax-js jit       the same through jax.jit
    TF.js            tf.matMul(a, b).data() on @tensorflow/tfjs-backend-webgpu
  chain 2^P  relu(x) * 2 + o of 2^P float32
    ours eager       `await (x.relu() * 2 + o).numpy()` on tensors of DeviceArrays (one fused kernel, planned
                     every call)
    ours jit         the same through tw.jit
    jax-js eager, jax-js jit, TF.js (tf.add(tf.mul(tf.relu(x), 2), o) in a tidy)

The inputs are integers in [-4, 4] (matmul) or on a 1/1024 grid (chain): every result is exact in float32
whatever the order of the sums, so all five outputs must be bit for bit the same, and ours equal to a
pure-Python reference (the chain in full, matmul on 256 seeded entries), before anything is timed. The
variants of one case take turns run by run (load from other processes falls on all alike); the figure is
the median of --repeat timed runs after warm-up. jax-js and TF.js are served from build/web/ (fetched at
set-up by scripts/fetch_web_assets.py; nothing is fetched at run time). Prints a markdown table.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from browser_transformer import MODULE as BLOCK_MODULE  # noqa: E402 - after the paths above
from browser_transformer import MODULE_ROUTE as BLOCK_ROUTE  # noqa: E402
from browser_transformer import TIMED, ensure_peers  # noqa: E402

from e2e.harness import AssetServer, PyodidePage, launch_chromium  # noqa: E402

MODULE_ROUTE = "/bench/peers.mjs"  # imports TF.js's loader and asF32 from ./tfjs_block.mjs: both are served
MODULE = ROOT / "bench" / "peers.mjs"


def log(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


SETUP = r"""
import array, random, statistics, time
import trueno_web as tw
from pyodide.code import run_js
from pyodide.ffi import to_js

PEERS = await run_js(f"import({E2E_ARGS['module']!r})")
VERSIONS = (await PEERS.loadPeers("/jaxjs/", "/tfjs/")).to_py()
DEV = await tw.GpuDevice.create("webgpu")
assert DEV.backend == "webgpu", DEV.backend
MIN_MS = E2E_ARGS["min_ms"]  # this run's arguments: the later runs' E2E_ARGS are their own


def ints(count, seed):
    rng = random.Random(seed)
    return array.array("f", [rng.randint(-4, 4) for _ in range(count)])


def grid(count, seed):
    return array.array("f", [((i * 2654435761 + seed) % 4096) / 1024.0 - 2.0 for i in range(count)])


def raw(result):
    # the bytes of a result: ours (an NDResult or array), a JS Float32Array
    return bytes(result.to_bytes()) if hasattr(result, "to_bytes") else result.tobytes()


async def measure(fns, peers, check, repeat):
    # every variant's result checked (all the same bytes, ours by `check`), then timed; peers disposed after
    outs = {name: raw(await fn()) for name, fn in fns.items()}
    ours = outs["ours " + ("one-shot" if "ours one-shot" in outs else "eager")]
    check(ours)
    differ = [name for name, out in outs.items() if out != ours]
    assert not differ, f"results differ from ours: {differ}"
    try:
        return await timed(fns, repeat, 1, MIN_MS)
    finally:
        for p in peers:
            p.dispose()


{"versions": VERSIONS, "adapter": DEV.adapter_info}
"""
SETUP = TIMED + SETUP  # defined first: the SETUP's last expression is what page.run returns

MATMUL = r"""
size = E2E_ARGS["size"]
A, B = ints(size * size, 1), ints(size * size, 2)
a, b = await DEV.upload(A, (size, size)), await DEV.upload(B, (size, size))
at, bt = tw.asarray(a), tw.asarray(b)
product = tw.jit(lambda x, y: x @ y)
ja, jb = to_js(memoryview(A)), to_js(memoryview(B))
peers = {"jax-js eager": await PEERS.jaxMatmul(ja, jb, size, size, size, "eager"),
         "jax-js jit": await PEERS.jaxMatmul(ja, jb, size, size, size, "jit"),
         "TF.js": await PEERS.tfMatmul(ja, jb, size, size, size)}


def check(got):
    c = memoryview(got).cast("f")
    rng = random.Random(3)
    for _ in range(256):
        i, j = rng.randrange(size), rng.randrange(size)
        want = sum(A[i * size + p] * B[p * size + j] for p in range(size))
        assert c[i * size + j] == want, (i, j, c[i * size + j], want)


async def one_shot():
    return await DEV.matmul(a, b)


async def jitted():
    return await (await product(at, bt)).numpy()


await measure({"ours one-shot": one_shot, "ours jit": jitted, **{k: v.run for k, v in peers.items()}},
              peers.values(), check, E2E_ARGS["repeat"])
"""

CHAIN = r"""
n = E2E_ARGS["n"]
X, O = grid(n, 1), grid(n, 7)
xt, ot = tw.asarray(await DEV.upload(X, (n,))), tw.asarray(await DEV.upload(O, (n,)))
chain = tw.jit(lambda x, o: x.relu() * 2 + o)
jx, jo = to_js(memoryview(X)), to_js(memoryview(O))
peers = {"jax-js eager": await PEERS.jaxChain(jx, jo, "eager"), "jax-js jit": await PEERS.jaxChain(jx, jo, "jit"),
         "TF.js": await PEERS.tfChain(jx, jo)}


def check(got):
    want = array.array("f", [max(u, 0.0) * 2.0 + v for u, v in zip(X, O)])
    assert got == want.tobytes(), "ours differs from the reference"


async def eager():
    return await (xt.relu() * 2 + ot).numpy()


async def jitted():
    return await (await chain(xt, ot)).numpy()


await measure({"ours eager": eager, "ours jit": jitted, **{k: v.run for k, v in peers.items()}},
              peers.values(), check, E2E_ARGS["repeat"])
"""

COLUMNS = {
    "matmul": ("ours one-shot", "ours jit", "jax-js eager", "jax-js jit", "TF.js"),
    "chain": ("ours eager", "ours jit", "jax-js eager", "jax-js jit", "TF.js"),
}


def table(rows: list) -> list[str]:
    """Markdown: per case, each variant's median ms (min-max) and, for matmul, GFLOPS."""
    lines = []
    for kind, cols in COLUMNS.items():
        picked = [r for r in rows if r["kind"] == kind]
        if not picked:
            continue
        lines += ["", f"| {kind} | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
        for r in picked:
            cells = []
            for c in cols:
                t = r["times"][c]
                cell = f"{t['ms']:.1f} ms ({t['min']:.1f}-{t['max']:.1f})"
                if kind == "matmul":
                    cell += f", {2 * r['size'] ** 3 / t['ms'] / 1e6:.2f} GFLOPS"
                cells.append(cell)
            lines.append(f"| {r['label']} | " + " | ".join(cells) + " |")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--matmul", default="512,1024", help="N of the N x N products, comma separated ('' for none)")
    ap.add_argument("--chain", default="20", help="P of the 2^P chains, comma separated ('' for none)")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per figure (median reported)")
    ap.add_argument("--min-ms", type=float, default=25.0, help="a timed run repeats its call for this long (ms)")
    args = ap.parse_args(argv)

    from browser import ensure_assets, source_state

    ensure_assets()
    ensure_peers()
    from playwright.sync_api import sync_playwright

    load_before, sources = os.getloadavg(), source_state()  # the wheel's sources, before anything is committed
    t0 = time.perf_counter()
    cases = [("matmul", int(s)) for s in args.matmul.split(",") if s] + [
        ("chain", int(p)) for p in args.chain.split(",") if p
    ]
    rows = []
    with (
        AssetServer(
            routes={
                route: ("text/javascript; charset=utf-8", path.read_bytes())
                for route, path in ((MODULE_ROUTE, MODULE), (BLOCK_ROUTE, BLOCK_MODULE))
            }
        ) as server,
        sync_playwright() as pw,
    ):
        browser = launch_chromium(pw, webgpu=True)
        try:
            page = PyodidePage(browser, server, echo_output=False)
            try:
                setup = page.run(SETUP, args={"module": MODULE_ROUTE, "min_ms": args.min_ms}, timeout_s=180)
                log(f"{setup['versions']}; ours on {setup['adapter']}")
                for kind, size in cases:
                    label = f"{size}^3" if kind == "matmul" else f"2^{size}"
                    log(f"{kind} {label} ...")
                    code, case_args = (MATMUL, {"size": size}) if kind == "matmul" else (CHAIN, {"n": 1 << size})
                    times = page.run(code, args={**case_args, "repeat": args.repeat}, timeout_s=600)
                    log(f"{kind} {label}: {times}")
                    rows.append({"kind": kind, "size": size, "label": label, "times": times})
                problems = page.log.problems()
                for p in problems:
                    log(f"page problem: {p}")
                version, pyodide = browser.version, page.pyodide_version
            finally:
                page.close()
        finally:
            browser.close()
    gpu = setup["adapter"]
    print(
        f"# ours vs jax-js and TF.js in the browser, {datetime.date.today().isoformat()} "
        f"({time.perf_counter() - t0:.0f} s; {os.cpu_count()} CPUs, 1-min load average {load_before[0]:.2f} before, "
        f"{os.getloadavg()[0]:.2f} after)\n"
    )
    print(f"Sources: {sources}. Chromium {version} headless, --enable-unsafe-webgpu; Pyodide {pyodide}.")
    print(
        f"Adapter (ours): {gpu.get('vendor')} / {gpu.get('architecture')} / {gpu.get('device')}; "
        + ", ".join(f"{k} {v}" for k, v in setup["versions"].items())
        + ". Median ms (min-max) of the timed runs, resident inputs, each to a completed read."
    )
    print("\n".join(table(rows)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

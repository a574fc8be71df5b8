#!/usr/bin/env python3
"""Browser benchmark of #26's replay cost: bench/replay.py's two workloads (a 100-op chain, one kernel; a
transformer block, many) under Pyodide in headless Chromium, on WebGPU (SwiftShader) and on wasm-simd.

    .venv/bin/python bench/browser_replay.py [--n 65536] [--block 128x256x4] [--calls 100] [--rounds 3]

Per workload and backend, in microseconds per call (best round of --rounds rounds of --calls calls, eager: a
tenth of them; the device synced after each round, `await tw.synchronize(out)`):
  eager      the expression built and `await tw.realize(out)`: planned again every call (before tw.jit)
  jit        `await f(x)` replayed (tw.jit)
  (these two are the host's cost of issuing a call, the round's closing sync left out: on WebGPU the kernels
  may still run; "synced" is the same with the round's sync in: the throughput, SwiftShader's kernels included)
  rest       of each, the Python outside the submit, timed apart: on WebGPU the driver's submit and queue (to_js
             of the dispatch list, the JS encoding and queueing; a replay's queue keeps its work until the event
             loop's turn, so its figure is mostly that of the calls that send) and settle (awaiting the submit's two error scopes: a
             round trip to the GPU process), on wasm-simd the WASM module's kernel calls
The page imports bench/replay_workloads.py (written into Pyodide's file system): the same builders and timing
as bench/replay.py on the desktop. The page is served cross-origin isolated (COOP/COEP), so performance.now()
(and Python's perf_counter) is not coarsened to 100 us; the resolution measured in the page is printed.
Prints a markdown table.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from browser import ensure_assets, log, source_state  # noqa: E402 - bench/browser.py's helpers

from e2e.harness import AssetServer, PyodidePage, launch_chromium  # noqa: E402

SHARED = ROOT / "bench" / "replay_workloads.py"
SHARED_DIR = "/home/pyodide/bench"  # where the page's copy of it goes
ISOLATED = {"Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp"}

PAGE = r"""
import sys, time
import js
import trueno_web as tw
from trueno_web.backends.wasm_simd import WasmExecutor

sys.path.insert(0, E2E_ARGS["dir"])
from replay_workloads import block_workload, chain, chain_input, eager, jitted, measure

calls, rounds = E2E_ARGS["calls"], E2E_ARGS["rounds"]
seq, d_model, heads = E2E_ARGS["block"]
tick, t0 = 1.0, time.perf_counter()  # the timer's resolution: the smallest step seen
for _ in range(20000):
    t1 = time.perf_counter()
    if t1 > t0:
        tick, t0 = min(tick, t1 - t0), t1
rows = []
for backend in E2E_ARGS["backends"]:
    dev = await tw.GpuDevice.create("webgpu") if backend == "webgpu" else tw.GpuDevice(await WasmExecutor.create())
    assert dev.backend == backend, dev.backend
    block, xb = await block_workload(dev, seq, d_model, heads)
    for name, f, x, n in (("chain", chain, chain_input(dev, E2E_ARGS["n"]), calls), ("block", block, xb, max(calls // 10, 10))):
        await tw.realize(x)
        e = await measure(dev, eager(f, x), max(n // 10, 5), rounds)
        j = await measure(dev, jitted(f, x), n, rounds)
        rows.append({"workload": name, "backend": backend, "device": dev.adapter_info.get("device"), "eager": e, "jit": j})
    dev.close()
{"rows": rows, "tick_us": tick * 1e6, "isolated": bool(js.crossOriginIsolated)}
"""


def cell(v) -> str:
    return "n/a" if v is None else f"{v:.1f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1 << 16, help="elements of the 100-op chain")
    ap.add_argument("--block", default="128x256x4", help="seq x d_model x heads of the transformer block")
    ap.add_argument("--calls", type=int, default=100, help="jitted chain calls per round (block: a tenth)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--backends", default="webgpu,wasm-simd")
    args = ap.parse_args(argv)
    ensure_assets()
    from playwright.sync_api import sync_playwright

    load = os.getloadavg()[0]
    page_args = {
        "n": args.n,
        "block": [int(v) for v in args.block.split("x")],
        "calls": args.calls,
        "rounds": args.rounds,
        "backends": args.backends.split(","),
        "dir": SHARED_DIR,
    }
    with AssetServer(headers=ISOLATED) as server, sync_playwright() as pw:
        browser = launch_chromium(pw, webgpu=True)
        try:
            page = PyodidePage(browser, server, echo_output=False)
            try:
                page.write_file(f"{SHARED_DIR}/{SHARED.name}", SHARED.read_text())
                log(f"running {args.backends} in the page ...")
                res = page.run(PAGE, args=page_args, timeout_s=900)
                problems = page.log.problems()
            finally:
                page.close()
            version = browser.version
        finally:
            browser.close()
    if problems:
        raise SystemExit("page problems:\n  " + "\n  ".join(problems))
    print(
        f"# tw.jit replay in the page, {datetime.date.today().isoformat()}; {source_state()}; Chromium {version} "
        f"headless, Pyodide; chain of {args.n} elements, "
        f"block {args.block}; best of {args.rounds} rounds; timer step {res['tick_us']:.1f} us "
        f"(cross-origin isolated: {res['isolated']}); {os.cpu_count()} CPUs, load {load:.2f} before\n"
    )
    for r in res["rows"]:
        log(f"{r['backend']}: {r['device']}")
    print(
        "| workload | backend | dispatches | eager us/call | eager rest | eager synced | jit us/call | of it submit"
        " | of it settle | jit rest | jit synced | eager / jit | rest eager / jit |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in res["rows"]:
        e, j = r["eager"], r["jit"]
        rest_ratio = "n/a" if e["rest"] is None or j["rest"] is None else f"{e['rest'] / j['rest']:.1f}"
        apart = j["apart"]  # on webgpu submit and queue (a replay's), on wasm-simd the kernel calls
        submit = apart["submit"] + apart["queue"] if "queue" in apart else apart.get("call")
        print(
            f"| {r['workload']} | {r['backend']} | {j['dispatches']} | {e['call']:.0f} | {cell(e['rest'])}"
            f" | {e['synced']:.0f} | {j['call']:.0f} | {cell(submit)} | {cell(j['apart'].get('settle'))}"
            f" | {cell(j['rest'])} | {j['synced']:.0f} | {e['call'] / j['call']:.2f} | {rest_ratio} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

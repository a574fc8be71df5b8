#!/usr/bin/env python3
"""Browser benchmark of a deep program: bench/deep.py's Mandelbrot (14 ops per iteration, read once at the
end) under Pyodide in headless Chromium (WebGPU on SwiftShader), default fusion budget.

    .venv/bin/python bench/browser_deep.py [--n 256] [--sizes 100,300] [--repeat 5]

Per iteration count, in a fresh browser (no pipeline or shader cache from an earlier size) and a new
GpuDevice: the first call end to end (build the expressions, realize: plan, compile, submit; read) with its
phases, the pipelines it compiled and the time realize awaited their compile (Driver.compile_many), then
the steady call's medians (total and phases) of --repeat. The counts come back to the host and are checked
against bench/deep.py's NumPy loop (the fraction that differs is printed: float32 rounding in a chaotic map
moves a few points near the set's edge) before any figure is reported.
Prints a markdown table.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from browser import ensure_assets, log, source_state  # noqa: E402 - bench/browser.py's helpers
from deep import grid, mandelbrot_numpy  # noqa: E402 - the desktop benchmark's loop and grid

from e2e.harness import AssetServer, PyodidePage, launch_chromium  # noqa: E402

SHARED = Path(__file__).resolve().parent / "mandelbrot.py"  # the program, written into the page
SHARED_DIR = "/home/pyodide/bench"
MAX_DIFFER = 1e-2  # counts that may differ from NumPy's (printed; ~1e-3 expected)

PAGE = r"""
import sys, time
import trueno_web as tw

sys.path.insert(0, E2E_ARGS["dir"])
from mandelbrot import mandelbrot

n, iters, repeat = E2E_ARGS["n"], E2E_ARGS["iters"], E2E_ARGS["repeat"]


async def call(dev, cx, cy, zeros):
    t0 = time.perf_counter()
    count = mandelbrot(cx, cy, zeros, iters)
    t1 = time.perf_counter()
    await tw.realize(count)
    t2 = time.perf_counter()
    out = await count.numpy()
    t3 = time.perf_counter()
    return out, [(t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3, (t3 - t0) * 1e3]


dev = await tw.GpuDevice.create("webgpu")
driver, spent = dev.executor.driver, []
compile_many = driver.compile_many


async def timed(jobs):  # the wall time of each compile_many (its pipelines compiled in the GPU process)
    t0 = time.perf_counter()
    try:
        return await compile_many(jobs)
    finally:
        spent.append((time.perf_counter() - t0) * 1e3)


driver.compile_many = timed
cx = dev.tensor(E2E_ARGS["cx"], (n, n), dtype=tw.float32)
cy = dev.tensor(E2E_ARGS["cy"], (n, n), dtype=tw.float32)
zeros = dev.tensor([0.0] * (n * n), (n, n), dtype=tw.float32)
await tw.realize(cx, cy, zeros)
await dev.synchronize()
compiled, dispatches = dev.stats.pipelines_compiled, dev.stats.dispatches
counts, first = await call(dev, cx, cy, zeros)
compiled, dispatches = dev.stats.pipelines_compiled - compiled, dev.stats.dispatches - dispatches
compile_ms = sum(spent)
steady = [(await call(dev, cx, cy, zeros))[1] for _ in range(repeat)]
info, bindings = dev.adapter_info, dev.limits["max_storage_buffers_per_shader_stage"]
dev.close()
{"first": first, "compiled": compiled, "dispatches": dispatches, "bindings": bindings, "compile_ms": compile_ms, "steady": [sorted(p)[len(p) // 2] for p in zip(*steady)], "counts": counts.tolist(),
 "adapter": f"{info.get('vendor')} / {info.get('architecture')} / {info.get('description')}"}
"""


def measure(pw, server, n: int, iters: int, repeat: int) -> dict:
    """One size in a fresh browser and page; the counts checked against NumPy's."""
    cx, cy = grid(n)
    browser = launch_chromium(pw, webgpu=True)
    try:
        page = PyodidePage(browser, server, echo_output=False)
        try:
            args = {"n": n, "iters": iters, "repeat": repeat, "cx": cx.ravel().tolist(), "cy": cy.ravel().tolist()}
            args["dir"] = SHARED_DIR
            page.write_file(f"{SHARED_DIR}/{SHARED.name}", SHARED.read_text())
            res = page.run(PAGE, args=args, timeout_s=600)
            problems = page.log.problems()
        finally:
            page.close()
        res["browser"] = browser.version
    finally:
        browser.close()
    if problems:
        raise SystemExit("page problems:\n  " + "\n  ".join(problems))
    got = np.asarray(res.pop("counts"), np.float32).reshape(n, n)
    res["differ"] = float(np.mean(got != mandelbrot_numpy(cx, cy, iters)))
    if res["differ"] > MAX_DIFFER:
        raise SystemExit(f"{iters} iterations: {res['differ']:.1e} of the counts differ from NumPy's")
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--sizes", default="100,300")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    ensure_assets()
    from playwright.sync_api import sync_playwright

    load = os.getloadavg()[0]
    rows = []
    with AssetServer() as server, sync_playwright() as pw:
        for iters in [int(v) for v in args.sizes.split(",") if v]:
            log(f"{iters} iterations at {args.n}x{args.n} ...")
            res = measure(pw, server, args.n, iters, args.repeat)
            log(str(res))
            rows.append((iters, res))
    print(
        f"# Mandelbrot in the page, {datetime.date.today().isoformat()}; {source_state()}; "
        f"Chromium {rows[0][1]['browser']} headless, SwiftShader ({rows[0][1]['adapter']}); "
        f"{args.n}x{args.n}, default budget, {rows[0][1]['bindings']} storage bindings per stage; {os.cpu_count()} CPUs, load {load:.2f} before\n"
    )
    print(
        "| iterations | dispatches | pipelines | first call ms | build | realize | (compile) | read | steady ms | build | realize"
        " | read | differ |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for iters, r in rows:
        build, realize, read, total = r["first"]
        print(
            f"| {iters} | {r['dispatches']} | {r['compiled']} | {total:.0f} | {build:.0f} | {realize:.0f} | {r['compile_ms']:.0f} | {read:.0f} "
            f"| {r['steady'][3]:.0f} | {r['steady'][0]:.0f} | {r['steady'][1]:.0f} | {r['steady'][2]:.0f} | {r['differ']:.1e} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

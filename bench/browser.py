#!/usr/bin/env python3
"""Browser benchmark: trueno_web under Pyodide in headless Chromium (WebGPU on SwiftShader).

    .venv/bin/python bench/browser.py [--repeat 7] [--cold-runs 5] [--only chain]

Fetches the browser assets (scripts/fetch_web_assets.py) and builds the scalar WASM module
(`wasm/build.py --scalar` -> build/kernels-scalar.wasm) where missing or stale, serves build/web/ and
the scalar module on 127.0.0.1 (e2e.harness.AssetServer), and measures inside Pyodide:

  1. the chain relu -> scale(2) -> add at 2^16 and 2^20, end to end (upload, compute, read back):
     one-shot ops on webgpu, one fused batch on webgpu, one fused batch on wasm-simd (and, for
     reference, on the scalar build of the same C); and the fused batch's own kernel (its pipeline and
     parameters, taken from a submit) driven by hand-written JS against WebGPU on the same GPUDevice:
     two writes, one dispatch and the copy to a MAP_READ buffer in one submit, mapAsync, one copy into
     the Python result: the floor for the library's overhead, timed in alternation with the
     fused batch (pairs of timed runs; the ratio is the median of the pairs' ratios);
  2. relu, add and dot at 2^20 on the shipped SIMD128 module vs the same C built without -msimd128,
     both through a WasmExecutor: the kernel itself (one export call over the whole array, data
     already in linear memory) and the op through a batch on resident data (chunked, no read);
  3. cold start: in a fresh browser and page, after Pyodide, micropip and the wheel are installed,
     the time from `import trueno_web` to the first GPU result (import, GpuDevice.create("webgpu"),
     a first relu of 1024 floats read back), median of --cold-runs fresh browsers;
  4. the size of the project wheel in build/web/wheels/.

Figures are medians of --repeat runs after a warm-up, in ms per call. The timer is performance.now(),
which Chromium coarsens to 0.1 ms without cross-origin isolation, so each timed run repeats the work
until it lasts --min-ms. Results are checked before they are timed.
Prints markdown tables and the browser targets. `--only chain`: the chain alone (no cold start, no
WASM kernels).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from e2e.harness import (  # noqa: E402 - after the path above
    AssetServer,
    PyodidePage,
    launch_chromium,
    load_script,
    missing_assets,
    read_manifest,
)

SCALAR = ROOT / "build" / "kernels-scalar.wasm"
SCALAR_ROUTE = "/bench/kernels-scalar.wasm"
WEB = ROOT / "build" / "web"

TARGET_SIMD_X = 2.0  # wasm-simd at least 2x the scalar build on relu, add, dot at 2^20
TARGET_FIRST_RESULT_MS = 500.0  # Pyodide ready -> first GPU result
TARGET_WHEEL_BYTES = 150_000  # "under 150 KB" (taken as 150,000 bytes, the stricter reading)


def log(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------------ preparation


def ensure_assets() -> None:
    """Run scripts/fetch_web_assets.py when assets are missing or the project wheel is stale."""
    fetch = load_script("fetch_web_assets")
    if missing_assets() or fetch.project_wheel_stale():
        log("running scripts/fetch_web_assets.py")
        subprocess.run([sys.executable, str(ROOT / "scripts" / "fetch_web_assets.py")], check=True)
    missing = missing_assets()
    if missing:
        raise SystemExit("browser assets still missing: " + ", ".join(missing))


def ensure_scalar() -> None:
    """Build build/kernels-scalar.wasm when it is missing or older than wasm/kernels.c."""
    source = ROOT / "wasm" / "kernels.c"
    if SCALAR.is_file() and SCALAR.stat().st_mtime >= source.stat().st_mtime:
        return
    log("building the scalar module: wasm/build.py --scalar")
    subprocess.run([sys.executable, str(ROOT / "wasm" / "build.py"), "--scalar"], check=True)


def source_state() -> str:
    """The commit the wheel was built from, and whether the package sources differ from it."""

    def git(*a):
        return subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--", "trueno_web", "shaders", "pyproject.toml")
    return f"commit {head}" + (" + uncommitted changes to the package" if dirty else "")


def project_wheel() -> Path:
    return WEB / "wheels" / read_manifest()["wheels"]["trueno_web"]["file"]


# ------------------------------------------------------------------------------- code run in Pyodide

COMMON = r"""
import array, statistics, time
import trueno_web as tw
from trueno_web.backends.wasm_simd import WasmExecutor

MIN_MS = E2E_ARGS["min_ms"]  # one timed run lasts at least this long (performance.now() is coarse)


def i32(v):
    # an unsigned 32-bit offset as the signed i32 a wasm export takes
    return v - (1 << 32) if v >= 1 << 31 else v


def bench_data(n, seed):
    # deterministic values on a 1/1024 grid in [-2, 2): float32 sums of two of them are exact
    return array.array("f", [((i * 2654435761 + seed) % 4096) / 1024.0 - 2.0 for i in range(n)])


def expect_chain(x, o):
    return array.array("f", [max(a, 0.0) * 2.0 + b for a, b in zip(x, o)])


def max_err(got, want):
    return max(abs(a - b) for a, b in zip(got, want))


async def atimed(fn, repeat, warmup=1, min_ms=MIN_MS):
    for _ in range(warmup):
        await fn()
    inner, t = 0, time.perf_counter()  # calibrate: calls per timed run so that one run lasts >= min_ms
    while (time.perf_counter() - t) * 1e3 < min_ms:
        await fn()
        inner += 1
    samples = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(inner):
            await fn()
        samples.append((time.perf_counter() - t) * 1e3 / inner)
    return statistics.median(samples)


async def atimed_pair(fa, fb, repeat, warmup=2, min_ms=MIN_MS):
    # fa and fb in alternation, each timed run repeating its call for >= min_ms: (median a, median b,
    # median of the runs' a/b): load from other processes hits both sides of a pair alike
    for _ in range(warmup):
        await fa()
        await fb()
    inner = 0
    t = time.perf_counter()
    while (time.perf_counter() - t) * 1e3 < min_ms:
        await fa()
        inner += 1
    a, b = [], []
    for _ in range(repeat):
        for fn, out in ((fa, a), (fb, b)):
            t = time.perf_counter()
            for _ in range(inner):
                await fn()
            out.append((time.perf_counter() - t) * 1e3 / inner)
    return statistics.median(a), statistics.median(b), statistics.median(x / y for x, y in zip(a, b))


def timed(fn, repeat, warmup=1, min_ms=MIN_MS):
    for _ in range(warmup):
        fn()
    inner, t = 0, time.perf_counter()
    while (time.perf_counter() - t) * 1e3 < min_ms:
        fn()
        inner += 1
    samples = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - t) * 1e3 / inner)
    return statistics.median(samples)


async def one_shot(dev, x, o):
    return await dev.add(await dev.scale(await dev.relu(x), 2.0), o)


async def fused(dev, x, o):
    with dev.batch() as b:
        out = b.add(b.scale(b.relu(b.upload(x)), 2.0), b.upload(o))
        await b.execute()
        return await b.read(out)
"""

SETUP = r"""
from pyodide.code import run_js
from pyodide.ffi import create_proxy, to_js
from pyodide.http import pyfetch

GPU = await tw.GpuDevice.create("webgpu")
WASM = tw.GpuDevice(await WasmExecutor.create())
SCALAR_BYTES = await (await pyfetch(E2E_ARGS["scalar_url"])).bytes()
WASM_SCALAR = tw.GpuDevice(await WasmExecutor.create(SCALAR_BYTES))
assert GPU.backend == "webgpu"
assert "SIMD128" in WASM.adapter_info["device"], WASM.adapter_info
assert "scalar" in WASM_SCALAR.adapter_info["device"], WASM_SCALAR.adapter_info


async def fused_kernel(n):
    # the fused batch's dispatch at size n as the driver sees it: [pipeline, binds, gx, gy], each bind
    # [binding, role or buffer, offset, size] with role "x" / "o" / "y" for the chain's inputs and output
    drv = GPU.executor.driver
    seen = {"written": []}
    submit, write, read = drv.submit, drv.write_buffer, drv.read_buffer

    def spy_write(raw, data):
        seen["written"].append(raw)
        return write(raw, data)

    def spy_submit(work):
        seen["work"] = work
        return submit(work)

    async def spy_read(raw, nbytes):
        seen["read"] = raw
        return await read(raw, nbytes)

    x, o = bench_data(n, 1), bench_data(n, 7)
    await fused(GPU, x, o)  # a first call writes the kept parameters too
    drv.submit, drv.write_buffer, drv.read_buffer = spy_submit, spy_write, spy_read
    try:
        await fused(GPU, x, o)
    finally:
        del drv.submit, drv.write_buffer, drv.read_buffer
    (pipeline, binds, grid), = seen["work"]
    roles = {id(seen["written"][0]): "x", id(seen["written"][1]): "o", id(seen["read"]): "y"}
    return [pipeline, [[i, roles.get(id(raw), raw), off, size] for i, raw, off, size in binds], grid[0], grid[1]]


RAW_KERNEL = run_js(E2E_ARGS["raw_js"])
RAW_KERNELS = {}  # n -> the JS function


async def raw_webgpu(x, o):
    # the fused batch's own kernel driven by hand-written JS on the same GPUDevice: the library's floor
    n = len(x)
    if n not in RAW_KERNELS:
        RAW_KERNELS[n] = RAW_KERNEL(GPU.executor.driver.device, to_js(await fused_kernel(n), depth=3))
    out = bytearray(n * 4)
    xp, op, outp = create_proxy(x), create_proxy(o), create_proxy(out)
    try:
        await RAW_KERNELS[n](xp, op, outp, n)
    finally:
        xp.destroy(), op.destroy(), outp.destroy()
    return memoryview(out).cast("f")


{"gpu": GPU.adapter_info, "wasm": WASM.adapter_info["device"], "wasm_scalar": WASM_SCALAR.adapter_info["device"],
 "scalar_bytes": len(SCALAR_BYTES)}
"""

# The fused batch's kernel (pipeline, bindings and grid taken from its submit) driven directly from JS:
# buffers of its own for x, o and y (the parameters stay the library's kept buffer), one bind group, two
# writeBuffer, one submit with the dispatch and the copy into a MAP_READ buffer, mapAsync, one copy into the
# Python result.
RAW_JS = r"""
(device, [pipeline, binds, gx, gy]) => {
  const S = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
  const own = {};
  for (const [, role, , size] of binds) {
    if (typeof role === "string") own[role] = device.createBuffer({size, usage: S});
  }
  const entries = binds.map(([binding, role, offset, size]) =>
    ({binding, resource: {buffer: typeof role === "string" ? own[role] : role, offset, size}}));
  const group = device.createBindGroup({layout: pipeline.getBindGroupLayout(0), entries});
  let staging = null;
  return async (xp, op, outp, n) => {
    const nbytes = n * 4;
    if (!staging) staging = device.createBuffer({size: nbytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST});
    for (const [proxy, buf] of [[xp, own.x], [op, own.o]]) {
      const v = proxy.getBuffer("u8");
      try { device.queue.writeBuffer(buf, 0, v.data, 0, nbytes); } finally { v.release(); }
    }
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(gx, gy, 1);
    pass.end();
    enc.copyBufferToBuffer(own.y, 0, staging, 0, nbytes);
    device.queue.submit([enc.finish()]);
    await staging.mapAsync(GPUMapMode.READ, 0, nbytes);
    const v = outp.getBuffer("u8");
    try { v.data.set(new Uint8Array(staging.getMappedRange(0, nbytes))); } finally { v.release(); }
    staging.unmap();
  };
}
"""

CHAIN = r"""
n, repeat = E2E_ARGS["n"], E2E_ARGS["repeat"]
x, o = bench_data(n, 1), bench_data(n, 7)
want = expect_chain(x, o)
errs = {
    "one_shot": max_err(await one_shot(GPU, x, o), want),
    "fused": max_err(await fused(GPU, x, o), want),
    "raw": max_err(await raw_webgpu(x, o), want),
    "wasm": max_err(await fused(WASM, x, o), want),
    "wasm_scalar": max_err(await fused(WASM_SCALAR, x, o), want),
}
assert max(errs.values()) <= 1e-6, errs
fused_ms, raw_ms, fused_raw = await atimed_pair(lambda: fused(GPU, x, o), lambda: raw_webgpu(x, o), repeat)
res = {
    "one_shot": await atimed(lambda: one_shot(GPU, x, o), repeat, warmup=2),
    "fused": fused_ms,
    "raw": raw_ms,
    "fused_raw": fused_raw,
    "wasm": await atimed(lambda: fused(WASM, x, o), repeat, warmup=2),
    "wasm_scalar": await atimed(lambda: fused(WASM_SCALAR, x, o), repeat, warmup=2),
}
del x, o, want
res
"""

KERNELS = r"""
n, repeat = E2E_ARGS["n"], E2E_ARGS["repeat"]
x, o = bench_data(n, 1), bench_data(n, 7)
out = {}
results = {}
for label, dev in (("simd", WASM), ("scalar", WASM_SCALAR)):
    ex = dev.executor
    call = ex.module.call
    xa, oa = await dev.upload(x), await dev.upload(o)
    ya = await dev.upload(array.array("f", bytes(n * 4)))  # the kernels' output
    px, po, py = i32(xa.buffer.ptr), i32(oa.buffer.ptr), i32(ya.buffer.ptr)
    kernels = {
        "relu": lambda: call("tw_relu", px, py, n),
        "add": lambda: call("tw_add", px, po, py, n),
        "dot": lambda: call("tw_dot", px, po, py, 1, n),  # one row of n: the result in y[0]
    }

    async def via_batch(name):
        b = dev.batch()
        b.dot(xa, oa) if name == "dot" else b.add(xa, oa) if name == "add" else b.relu(xa)
        await b.execute()
        b.release()

    kernels["dot"]()
    results[label] = {"dot": ex.module.read(ya.buffer.ptr, 4).cast("f")[0]}
    for name, fn in kernels.items():
        out[(label, name, "kernel")] = timed(fn, repeat, warmup=3)
        out[(label, name, "batch")] = await atimed(lambda: via_batch(name), repeat, warmup=2)
    ya.release()
    xa.release()
    oa.release()
# same answers from both builds
assert abs(results["simd"]["dot"] - results["scalar"]["dot"]) <= 1e-3 * abs(results["scalar"]["dot"]) + 1e-3, results
del x, o
[[k[0], k[1], k[2], v] for k, v in out.items()]
"""

COLD = r"""
import js
first_input = [((i * 37) % 64) / 16.0 - 2.0 for i in range(1024)]
t0 = js.performance.now()
import trueno_web as tw
t1 = js.performance.now()
dev = await tw.GpuDevice.create("webgpu")
t2 = js.performance.now()
first = await dev.relu(first_input)
t3 = js.performance.now()
assert dev.backend == "webgpu"
assert list(first) == [max(v, 0.0) for v in first_input]
{"import_ms": t1 - t0, "device_ms": t2 - t1, "first_relu_ms": t3 - t2, "total_ms": t3 - t0,
 "adapter": dev.adapter_info}
"""


# ------------------------------------------------------------------------------------------ running


def check_page(page: PyodidePage, what: str) -> list[str]:
    problems = page.log.problems()
    for p in problems:
        log(f"page problem ({what}): {p}")
    return problems


def cold_start(pw, server, runs: int) -> tuple[list[dict], dict]:
    """Each run: a new Chromium (fresh profile, no shader cache) and page, booted like the e2e
    tests (Pyodide, micropip, the wheel), then the timed code."""
    out, boot = [], []
    for i in range(runs):
        browser = launch_chromium(pw, webgpu=True)
        try:
            page = PyodidePage(browser, server, echo_output=False)
            try:
                res = page.run(COLD, timeout_s=120)
                check_page(page, "cold start")
                boot.append(dict(page.timings))
            finally:
                page.close()
        finally:
            browser.close()
        log(
            f"cold start {i + 1}/{runs}: {res['total_ms']:.1f} ms (import {res['import_ms']:.1f}, "
            f"device {res['device_ms']:.1f}, first relu {res['first_relu_ms']:.1f})"
        )
        out.append(res)
    boot_median = {k: statistics.median(b[k] for b in boot) for k in ("load_pyodide_ms", "install_project_ms")}
    return out, boot_median


def warm_bench(pw, server, args) -> dict:
    browser = launch_chromium(pw, webgpu=True)
    try:
        page = PyodidePage(browser, server, echo_output=False)
        try:
            page.run(COMMON, args={"min_ms": args.min_ms}, timeout_s=120)
            setup = page.run(SETUP, args={"scalar_url": server.url(SCALAR_ROUTE), "raw_js": RAW_JS}, timeout_s=120)
            log(f"adapter: {setup['gpu']}")
            chain = {}
            for p in (16, 20):
                log(f"chain at 2^{p} ...")
                chain[p] = page.run(CHAIN, args={"n": 1 << p, "repeat": args.repeat}, timeout_s=600)
                log(f"chain at 2^{p}: {chain[p]}")
            kernels = {}
            if args.only != "chain":
                log("wasm kernels at 2^20 ...")
                rows = page.run(KERNELS, args={"n": 1 << 20, "repeat": args.repeat}, timeout_s=600)
                kernels = {(a, b, c): v for a, b, c, v in rows}
            problems = check_page(page, "warm benchmark")
            return {
                "browser_version": browser.version,
                "setup": setup,
                "chain": chain,
                "kernels": kernels,
                "pyodide": page.pyodide_version,
                "problems": problems,
                "user_agent": page.page.evaluate("navigator.userAgent"),
            }
        finally:
            page.close()
    finally:
        browser.close()


def chain_table(warm: dict) -> list[str]:
    """The chain's markdown table, with the adapter line above it."""
    lines = []
    gpu = warm["setup"]["gpu"]
    lines.append(
        f"Chromium {warm['browser_version']} headless, --enable-unsafe-webgpu; Pyodide {warm['pyodide']}; "
        f"adapter: {gpu.get('vendor')} / {gpu.get('architecture')} / {gpu.get('device')} "
        f"({gpu.get('description')}, {gpu.get('adapter_type')})"
    )
    lines.append("")
    lines.append("Chain relu -> scale(2) -> add, end to end (upload, compute, read back), ms, median:")
    lines.append("")
    lines.append(
        "| n | webgpu one-shot | webgpu fused batch | wasm-simd batch | wasm scalar batch "
        "| raw JS WebGPU, same kernel (floor) | one-shot / fused | fused / raw JS | fused / wasm-simd |"
    )
    lines.append("|---|---|---|---|---|---|---|---|---|")
    for p, c in warm["chain"].items():
        lines.append(
            f"| 2^{p} | {c['one_shot']:.2f} | {c['fused']:.2f} | {c['wasm']:.2f} | {c['wasm_scalar']:.2f} "
            f"| {c['raw']:.2f} | {c['one_shot'] / c['fused']:.2f}x | {c['fused_raw']:.2f}x "
            f"| {c['fused'] / c['wasm']:.2f}x |"
        )
    lines.append("")
    return lines


def report(warm: dict, cold: list[dict], boot: dict, wheel: Path) -> tuple[str, dict]:
    lines = chain_table(warm)
    lines.append(
        "WASM SIMD128 vs the same C without -msimd128, 2^20 floats, ms, median (kernel: one export call, "
        "data in linear memory; batch: the op through a GpuCommandBatch on resident data, no read):"
    )
    lines.append("")
    lines.append("| op | SIMD kernel | scalar kernel | speed-up | SIMD batch | scalar batch | speed-up |")
    lines.append("|---|---|---|---|---|---|---|")
    k = warm["kernels"]
    speedups = {}
    for name in ("relu", "add", "dot"):
        sk, ck = k[("simd", name, "kernel")], k[("scalar", name, "kernel")]
        sb, cb = k[("simd", name, "batch")], k[("scalar", name, "batch")]
        speedups[name] = ck / sk
        lines.append(f"| {name} | {sk:.3f} | {ck:.3f} | {ck / sk:.2f}x | {sb:.3f} | {cb:.3f} | {cb / sb:.2f}x |")
    lines.append("")
    totals = [c["total_ms"] for c in cold]
    first = statistics.median(totals)
    parts = {key: statistics.median(c[key] for c in cold) for key in ("import_ms", "device_ms", "first_relu_ms")}
    size = wheel.stat().st_size
    lines.append("Start-up and size:")
    lines.append("")
    lines.append("| figure | value | target | met |")
    lines.append("|---|---|---|---|")
    lines.append(
        f"| Pyodide ready -> first GPU result (import + GpuDevice.create + relu of 1024 read back), "
        f"median of {len(cold)} fresh browsers | {first:.1f} ms (min {min(totals):.1f}, max {max(totals):.1f}; "
        f"import {parts['import_ms']:.1f}, device {parts['device_ms']:.1f}, first relu "
        f"{parts['first_relu_ms']:.1f}) | < {TARGET_FIRST_RESULT_MS:.0f} ms | "
        f"{'yes' if first < TARGET_FIRST_RESULT_MS else 'no'} |"
    )
    for name in ("relu", "add", "dot"):
        s = speedups[name]
        lines.append(
            f"| wasm-simd / scalar kernel, {name} at 2^20 | {s:.2f}x | >= {TARGET_SIMD_X:.0f}x | "
            f"{'yes' if s >= TARGET_SIMD_X else 'no'} |"
        )
    lines.append(
        f"| wheel {wheel.name} | {size} bytes ({size / 1024:.1f} KiB) | < {TARGET_WHEEL_BYTES} bytes | "
        f"{'yes' if size < TARGET_WHEEL_BYTES else 'no'} |"
    )
    lines.append("")
    lines.append(
        f"(For context: loadPyodide {boot['load_pyodide_ms']:.0f} ms, micropip install of the wheel "
        f"{boot['install_project_ms']:.0f} ms, medians of the cold runs; not part of the figure above.)"
    )
    met = {
        "first_result": first < TARGET_FIRST_RESULT_MS,
        "wheel": size < TARGET_WHEEL_BYTES,
        **{f"simd_{n}": s >= TARGET_SIMD_X for n, s in speedups.items()},
    }
    return "\n".join(lines), met


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repeat", type=int, default=7, help="timed runs per figure (median reported)")
    ap.add_argument(
        "--min-ms",
        type=float,
        default=25.0,
        help="each timed run repeats the work until it lasts this long (ms); the figure is per call",
    )
    ap.add_argument("--cold-runs", type=int, default=5, help="fresh browsers for the cold-start figure")
    ap.add_argument("--json", type=Path, help="also write the raw figures here")
    ap.add_argument("--only", choices=("all", "chain"), default="all", help="chain: the chain table alone")
    args = ap.parse_args(argv)

    ensure_assets()
    ensure_scalar()
    wheel = project_wheel()
    from playwright.sync_api import sync_playwright

    load_before = os.getloadavg()
    if load_before[0] > 0.5 * (os.cpu_count() or 1):
        log(f"warning: load average {load_before[0]:.2f} on {os.cpu_count()} CPUs; the figures will be noisy")
    t0 = time.perf_counter()
    with (
        AssetServer(routes={SCALAR_ROUTE: ("application/wasm", SCALAR.read_bytes())}) as server,
        sync_playwright() as pw,
    ):
        cold, boot = cold_start(pw, server, args.cold_runs) if args.only == "all" else ([], {})
        warm = warm_bench(pw, server, args)
    text, met = report(warm, cold, boot, wheel) if args.only == "all" else ("\n".join(chain_table(warm)), {})
    text = f"Sources: {source_state()}.\n" + text
    load_after = os.getloadavg()
    print(
        f"# trueno_web browser benchmark, {datetime.date.today().isoformat()} ({time.perf_counter() - t0:.0f} s; "
        f"{os.cpu_count()} CPUs, 1-min load average {load_before[0]:.2f} before, {load_after[0]:.2f} after)\n"
    )
    print(text)
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "warm": {**warm, "kernels": [[*k, v] for k, v in warm["kernels"].items()]},
                    "cold": cold,
                    "boot": boot,
                    "wheel_bytes": wheel.stat().st_size,
                    "met": met,
                },
                indent=2,
                default=str,
            )
        )
    return 0 if not warm["problems"] else 1


if __name__ == "__main__":
    sys.exit(main())

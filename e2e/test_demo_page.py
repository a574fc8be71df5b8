"""The demo page (web/), served by the real `python -m trueno_web serve`, in headless Chromium with
WebGPU (SwiftShader) and without (no adapter: everything on the WASM SIMD fallback).

Per GPU mode the page loads once (module-scoped); the tests then read it: it reaches
`document.body.dataset.state == "ready"`, makes no failed or off-host request and logs no console
error, every canvas has drawn pixels, the numbers it shows match what the library computes here on
the desktop (same demo code, same kind of backend), and its controls change what is shown.

Screenshots for the README and docs, and the start-up time (not part of the test run):
    .venv/bin/python e2e/test_demo_page.py --screenshot docs/screenshot.png
    .venv/bin/python e2e/test_demo_page.py --phone --screenshot docs/screenshot_phone.png
    .venv/bin/python e2e/test_demo_page.py --digits-panel docs/digits_panel.png
    .venv/bin/python e2e/test_demo_page.py --startup      # first panel and page-ready ms: first load, reload
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import math
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest

if __name__ == "__main__":  # run as a script: make `e2e` and the package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from e2e.harness import ROOT, WEBGPU_WARNING_RE, PageLog, is_local_url, launch_chromium

WEBGPU, NO_WEBGPU = "webgpu", "no-webgpu"
READY_TIMEOUT_S = 180
VIEWPORT = {"width": 1200, "height": 900}
PHONE = {"width": 390, "height": 844}
ARTIFACTS = ROOT / "build" / "e2e"


# ------------------------------------------------------------------------------------ the server


class ServeProcess:
    """`python -m trueno_web serve --port 0` as a subprocess; .url is the URL it printed."""

    def __init__(self, log_path: Path | None = None, env: dict | None = None):
        self._stderr = open(log_path, "w") if log_path else subprocess.DEVNULL
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "trueno_web", "serve", "--port", "0"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        )
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(30)
        m = re.search(r"http://127\.0\.0\.1:\d+/", line[0] if line else "")
        if not m:
            self.stop()
            raise RuntimeError(f"`python -m trueno_web serve` printed no URL: {line!r}")
        self.url = m.group(0)
        self.origin = self.url.rstrip("/")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        if self._stderr is not subprocess.DEVNULL:
            self._stderr.close()


# ------------------------------------------------------------------------------------ the page


class DemoPage:
    """The demo page in a fresh browser context: every request, console message, page error,
    uncaptured WebGPU error and HTTP error status recorded (the worker's included); requests that
    would leave 127.0.0.1 are aborted (and recorded), unless `cache` (Playwright's routing turns the
    HTTP cache off: a context that measures caching cannot block; problems() still lists them)."""

    def __init__(self, browser, server: ServeProcess, viewport=VIEWPORT, cache: bool = False):
        self.server = server
        self.log = PageLog()
        self.bad_status: list[tuple[int, str]] = []
        self.context = browser.new_context(viewport=viewport)
        if not cache:
            self.context.route(lambda url: not is_local_url(url), self._block)
        self.page = self.context.new_page()
        self.page.on("request", lambda r: self.log.requests.append(r.url))
        self.page.on("requestfailed", lambda r: self.log.failed_requests.append((r.url, r.failure)))
        self.page.on("response", lambda r: r.status >= 400 and self.bad_status.append((r.status, r.url)))
        self.page.on("console", self._on_console)
        self.page.on("pageerror", lambda e: self.log.page_errors.append(str(e)))

    def _block(self, route):
        self.log.blocked.append(route.request.url)
        route.abort("blockedbyclient")

    def _on_console(self, msg):
        self.log.console.append((msg.type, msg.text))
        if msg.type == "error":
            self.log.console_errors.append(msg.text)
        elif msg.type == "warning" and WEBGPU_WARNING_RE.search(msg.text):
            self.log.webgpu_errors.append(msg.text)  # Chrome's report of an uncaptured WebGPU error

    def open(self) -> DemoPage:
        self.page.goto(self.server.url)
        self.page.wait_for_function(
            "document.body.dataset.state !== 'loading'", polling=100, timeout=READY_TIMEOUT_S * 1000
        )
        return self

    @property
    def state(self) -> str:
        return self.page.evaluate("document.body.dataset.state")

    def problems(self) -> list[str]:
        out = self.log.problems()
        out += [f"failed request: {u} ({why})" for u, why in self.log.failed_requests]
        out += [f"HTTP {status}: {u}" for status, u in self.bad_status]
        for url in self.log.requests:
            parts = urlsplit(url)
            if parts.scheme in ("http", "https") and f"{parts.scheme}://{parts.netloc}" != self.server.origin:
                out.append(f"request off the page's origin: {url}")
        return out

    def error_text(self) -> str:
        return self.page.evaluate("document.querySelector('#error').textContent")

    def close(self) -> None:
        self.context.close()


def env_of(demo: DemoPage) -> dict:
    return demo.page.evaluate("""() => ({
        backend: document.querySelector('#badge').dataset.backend,
        badge: document.querySelector('#badge').innerText,
        banner: document.querySelector('#no-webgpu').hidden ? null : document.querySelector('#no-webgpu').innerText,
        software: document.querySelector('#software-note').hidden ? null : document.querySelector('#software-note').innerText,
        footer: document.querySelector('#footer-env').innerText,
        compare: document.body.dataset.compare,
    })""")


# ------------------------------------------------------------------------------------ what the library computes here


def _in_thread(coro_fn):
    """Run async desktop work on a private event loop in another thread (Playwright's sync API
    owns this thread's loop)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(coro_fn())).result(timeout=300)


_desktop_cache: dict = {}


def desktop(backend: str) -> dict:
    """The page's computations on the desktop with the same kind of backend as the page's device
    (and wasm-simd as the comparison device, as in the browser): filters, chains at two sizes."""
    if backend in _desktop_cache:
        return _desktop_cache[backend]
    from trueno_web import GpuDevice
    from trueno_web.app.demo_page import FILTERS, IMAGE_H, IMAGE_W, DemoSession, make_image, run_filter

    async def run():
        if backend == "webgpu" and not await GpuDevice.is_available():
            return None
        session = await DemoSession.open(backend=backend, cpu_backend="wasm-simd")
        image = make_image()
        filters = {}
        for name in FILTERS:
            out, shape, stats = await run_filter(session.dev, name, image, IMAGE_H, IMAGE_W)
            filters[name] = {
                "sum": math.fsum(out),
                "min": min(out),
                "max": max(out),
                "shape": list(shape),
                "stats": stats,
            }
        chains = {n: await session.chain(n, repeat=1) for n in (4096, 65536)}
        session.dev.close()
        session.cpu.close()
        return {"filters": filters, "chains": chains}

    _desktop_cache[backend] = _in_thread(run)
    return _desktop_cache[backend]


def desktop_or_skip(demo: DemoPage) -> dict:
    backend = env_of(demo)["backend"]
    ref = desktop(backend)
    if ref is None:
        pytest.skip(f"no desktop {backend} adapter to compare the page's {backend} numbers with")
    return ref


def close(shown: float, want: float, rel: float = 1e-5, abs_: float = 1e-6) -> bool:
    return abs(shown - want) <= abs_ + rel * abs(want)


def number(text: str) -> float:
    text = text.strip()
    return {"inf": math.inf, "-inf": -math.inf, "NaN": math.nan}.get(text, None) or float(text)


# ------------------------------------------------------------------------------------ tests


def test_reaches_ready_without_problems(demo):
    assert demo.state == "ready", demo.error_text()
    assert demo.page.is_hidden("#error")
    assert demo.problems() == []
    # the worker's requests are seen too (Pyodide and the wheel come from this server)
    paths = {urlsplit(u).path for u in demo.log.requests}
    assert {
        "/",
        "/app.mjs",
        "/draw.mjs",
        "/training.mjs",
        "/gpt.mjs",
        "/worker.mjs",
        "/config.mjs",
        "/pyodide/pyodide.asm.wasm",
        "/wheels/manifest.json",
    } <= paths
    assert any(p.startswith("/wheels/trueno_web-") for p in paths)


def test_badge_names_backend_and_adapter(demo):
    env = env_of(demo)
    if demo.mode == NO_WEBGPU:
        assert env["backend"] == "wasm-simd"
        assert env["banner"] and "no adapter" in env["banner"] and "CPU fallback" in env["banner"]
        # and how to get WebGPU: the flag for this Chromium on Linux, the other browsers behind a disclosure
        assert "chrome://flags/#enable-unsafe-webgpu" in env["banner"], env["banner"]
        others = demo.page.text_content("#no-webgpu details")
        assert "Safari" in others and "Firefox" in others and "Android" in others, others
        assert "CPU fallback" in env["badge"] and "wasm-simd" in env["badge"]
    else:
        # WebGPU where trueno_web's browser driver opens the SwiftShader adapter; else the page says why
        if env["backend"] == "webgpu":
            assert env["banner"] is None
            assert "WebGPU" in env["badge"] and "SwiftShader" in env["badge"]
            assert env["software"] and "software GPU" in env["software"]
        else:
            assert env["banner"] and "CPU fallback" in env["banner"]


# navigator stand-ins and the banner advice web/browser.mjs picks for them
BROWSERS = {
    "chrome-linux": {"userAgent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/140.0 Safari/537.36"},
    "chrome-desktop": {
        "userAgent": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/140.0 Safari/537.36 Edg/140.0",
        "userAgentData": {"brands": [{"brand": "Microsoft Edge"}], "platform": "Windows"},
    },
    "chrome-android": {
        "userAgent": "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/140.0 Mobile Safari/537.36"
    },
    "safari": {
        "userAgent": "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 CriOS/140.0 "
        "Mobile/15E148 Safari/604.1",
        "vendor": "Apple Computer, Inc.",
    },
    "firefox": {"userAgent": "Mozilla/5.0 (X11; Linux x86_64; rv:141.0) Gecko/20100101 Firefox/141.0"},
    "other": {"userAgent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15 Epiphany/46 Safari/605.1.15"},
}


def test_no_webgpu_banner_is_one_line_for_this_browser(demo):
    """Without WebGPU the banner is one line: why, and how to turn WebGPU on in this browser; the other
    browsers' instructions stay behind a closed "other browsers" disclosure."""
    from trueno_web.app.webgpu_advice import ENABLE_WEBGPU

    keys = demo.page.evaluate(
        "async (navs) => { const { browserKey } = await import('./browser.mjs');"
        " return Object.fromEntries(Object.entries(navs).map(([k, n]) => [k, browserKey(n)])); }",
        BROWSERS,
    )
    assert keys == {k: k for k in BROWSERS}, keys
    assert {k for k, _, _ in ENABLE_WEBGPU} == set(BROWSERS)
    if demo.mode != NO_WEBGPU:  # with WebGPU there is no banner at all
        assert not demo.page.is_visible("#no-webgpu")
        return
    shown = demo.page.evaluate("""() => {
        const b = document.querySelector('#no-webgpu'), d = b.querySelector('details');
        return {browser: b.dataset.browser, open: d.open, summary: d.querySelector('summary').innerText,
                line: b.querySelector('.banner-line').innerText, text: b.innerText,
                others: [...d.querySelectorAll('li')].map((li) => li.dataset.browser)};
    }""")
    assert shown["browser"] == "chrome-linux" and not shown["open"] and shown["summary"] == "other browsers", shown
    assert "\n" not in shown["line"].strip() and shown["text"].strip() == shown["line"] + "\nother browsers", shown
    assert "(Chrome or Edge on Linux)" in shown["line"], shown
    assert sorted(shown["others"]) == sorted(k for k in BROWSERS if k != "chrome-linux"), shown


def test_every_canvas_has_drawn_pixels(demo):
    canvases = demo.page.evaluate("""() => [...document.querySelectorAll('canvas')].map((c) => {
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let opaque = 0, ink = 0;
        for (let i = 0; i < d.length; i += 4) {
            if (d[i + 3] > 0) opaque++;
            if (d[i + 3] > 0 && (d[i] < 245 || d[i + 1] < 245 || d[i + 2] < 245)) ink++;
        }
        return {name: c.id || c.dataset.op, size: c.width * c.height, opaque, ink};
    })""")
    from trueno_web.app.demo_page import activation_ops

    names = [c["name"] for c in canvases]
    assert names == [op.name for op in activation_ops()] + [
        "img-original",
        "img-filtered",
        "chain-chart",
        "digit-pad",
        "digit-preview",
        "digit-chart",
        "train-loss",
        "train-accuracy",
    ]
    for c in canvases:
        assert c["size"] > 0 and c["opaque"] == c["size"], c
        # the digit pad is blank but for its hint until someone draws, the training charts but for their axes
        # until someone trains (e2e/test_training_panel.py)
        blank = c["name"] in ("digit-pad", "train-loss", "train-accuracy")
        assert c["ink"] > (0 if blank else 0.01 * c["size"]), c


def test_activation_values_match_the_catalog(demo):
    from trueno_web import ops
    from trueno_web.app.demo_page import PROBES, activation_ops, op_params

    rows = demo.page.evaluate("""() => [...document.querySelectorAll('#probe-table tbody tr')].map((tr) => ({
        op: tr.dataset.op,
        cells: [...tr.querySelectorAll('td')].map((td) => ({x: td.dataset.x,
            gpu: td.querySelector('.gpu-value').textContent, cpu: td.querySelector('.cpu-value')?.textContent})),
    }))""")
    compare = env_of(demo)["compare"] == "yes"
    assert [r["op"] for r in rows] == [op.name for op in activation_ops()]
    for row in rows:
        op = ops.get(row["op"])
        params = list(op_params(op).values())
        assert [float(c["x"]) for c in row["cells"]] == list(PROBES)
        for cell in row["cells"]:
            want = op.ref(float(cell["x"]), *params)
            assert (cell["cpu"] is not None) == compare, cell
            for side in ("gpu", "cpu")[: 2 if compare else 1]:
                got = number(cell[side])
                assert close(got, want, rel=op.rtol + 1e-6, abs_=op.atol + 1e-7), (row["op"], cell, want)
    diffs = demo.page.eval_on_selector_all(
        "#activation-grid [data-key=max_abs_diff]", "els => els.map((e) => e.textContent)"
    )
    assert len(diffs) == (len(rows) if compare else 0)
    assert all(number(d.split()[-1]) <= 1e-5 for d in diffs), diffs


def _filter_panel(demo) -> dict:
    return demo.page.evaluate("""() => {
        const dl = document.querySelector('#filter-stats');
        const out = {filter: dl.dataset.filter, canvas: document.querySelector('#img-filtered').dataset.filter,
                     size: [document.querySelector('#img-filtered').height, document.querySelector('#img-filtered').width]};
        dl.querySelectorAll('dd').forEach((dd) => { out[dd.dataset.key] = dd.textContent; });
        return out;
    }""")


def _check_filter(demo, ref: dict, name: str) -> None:
    shown = _filter_panel(demo)
    assert shown["filter"] == shown["canvas"] == name
    want = ref["filters"][name]
    assert shown["size"] == want["shape"]
    for key in ("sum", "min", "max"):
        assert close(number(shown[key]), want[key], rel=1e-5, abs_=1e-5), (name, key, shown[key], want[key])
    if env_of(demo)["compare"] == "yes":
        assert number(shown["max_abs_diff"]) <= 1e-4 and re.match(r"[\d.]+ ms warm", shown["cpu_ms"])
    else:  # the CPU fallback is the device's backend: nothing to compare
        assert "max_abs_diff" not in shown and "cpu_ms" not in shown, shown
    s = want["stats"]
    counts = (
        f"{s['dispatches']} dispatch{'es' * (s['dispatches'] != 1)} · {s['submits']} submit{'s' * (s['submits'] != 1)}"
    )
    if s["uploads"] or s["downloads"]:
        assert shown["stats"] == (
            f"{s['uploads']} upload{'s' * (s['uploads'] != 1)} · {counts} · "
            f"{s['downloads']} download{'s' * (s['downloads'] != 1)}"
        )
    else:  # a CPU backend moves nothing: the page names no transfers
        assert shown["stats"] == f"{counts} · nothing to transfer", shown["stats"]
    assert re.match(r"[\d.]+ ms warm \(first run [\d.]+ ms", shown["gpu_ms"]), shown["gpu_ms"]


def test_filter_numbers_match_the_library(demo):
    ref = desktop_or_skip(demo)
    _check_filter(demo, ref, "blur")


def _chain_panel(demo) -> dict:
    return demo.page.evaluate("""() => ({
        n: document.querySelector('#chain-table').dataset.n,
        checksum: document.querySelector('#chain-meta').dataset.checksum,
        checksum_text: document.querySelector('#chain-meta').textContent,
        rows: [...document.querySelectorAll('#chain-table tbody tr')].map((tr) => {
            const row = {variant: tr.dataset.variant};
            tr.querySelectorAll('td').forEach((td) => { row[td.dataset.key] = td.textContent; });
            return row;
        }),
    })""")


def _check_chain(demo, ref: dict, n: int) -> None:
    shown = _chain_panel(demo)
    want = ref["chains"][n]
    assert int(shown["n"]) == n
    assert [r["variant"] for r in shown["rows"]] == [v["name"] for v in want["variants"]]
    for row, v in zip(shown["rows"], want["variants"]):
        assert row["backend"] == v["backend"]
        for key in ("uploads", "downloads", "bytes_up", "bytes_down", "dispatches", "submits"):
            assert int(row[key]) == v["stats"][key], (n, row["variant"], key, row[key], v["stats"])
        assert 0 <= float(row["ms_min"]) <= float(row["ms"]) <= float(row["ms_max"]), row
        assert int(row["runs"]) >= 7, row  # the page's runs: enough for a median and a spread
        assert ("max_abs_diff" in row) == (env_of(demo)["compare"] == "yes"), row
        assert number(row.get("max_abs_diff", "0")) <= 1e-5
    shown_sum = number(shown["checksum_text"].split(":")[-1])
    assert close(shown_sum, want["checksum"], rel=1e-6, abs_=1e-3), (shown_sum, want["checksum"])
    assert close(float(shown["checksum"]), want["checksum"], rel=1e-6, abs_=1e-3)


def test_chain_numbers_match_the_library(demo):
    ref = desktop_or_skip(demo)
    _check_chain(demo, ref, 65536)
    rows = {r["variant"]: r for r in _chain_panel(demo)["rows"]}
    # what the batch is for: fewer transfers and submits, and one kernel once fused
    assert int(rows["batch"]["submits"]) == int(rows["batch + fusion"]["submits"]) == 1
    assert int(rows["batch + fusion"]["dispatches"]) == 1 < int(rows["batch"]["dispatches"])


def test_comparisons_only_between_two_backends(demo):
    """With WebGPU the page sets the device against the CPU fallback; without, both are wasm-simd and the
    page shows no comparison of a backend with itself (no CPU curve, row, difference or timing)."""
    env = env_of(demo)
    shown = demo.page.evaluate("""() => ({
        variants: [...document.querySelectorAll('#chain-table tbody tr')].map((tr) => tr.dataset.variant),
        strips: document.querySelectorAll('#activation-grid .diff').length,
        meta: document.querySelector('#activations-meta').textContent,
        compareOnly: [...document.querySelectorAll('.compare-only')].filter((e) => e.offsetParent !== null).length,
    })""")
    assert re.search(r"first run [\d.]+ ms, then [\d.]+ ms \(median of \d+\)", shown["meta"]), shown["meta"]
    if env["backend"] == "webgpu":
        assert env["compare"] == "yes" and shown["variants"][-1] == "CPU fallback" and shown["strips"] > 0
        assert "CPU fallback (wasm-simd): first run" in shown["meta"] and shown["compareOnly"] > 0
    else:
        assert env["compare"] == "no", env
        assert shown["variants"] == ["one-shot", "batch", "batch + fusion"], shown
        assert shown["strips"] == 0 and shown["compareOnly"] == 0 and "CPU fallback" not in shown["meta"], shown
    assert ") (" not in env["footer"] and ") (" not in env["badge"], env


# What the fallback page may still say about GPUs: why there is none, and that the GPT's text is the same
# on WebGPU and on the CPU fallback (the library's one-line description in the header is no claim either).
ALLOWED_GPU_MENTIONS = ("no GPU", "WebGPU")


def test_fallback_labels_claim_no_gpu(demo):
    """Without WebGPU nothing visible says the work runs on a GPU, names transfers (uploads) that a CPU
    backend does not make, or sets wasm-simd against itself; the banner explaining why is exempt."""
    if demo.mode != NO_WEBGPU:  # with WebGPU (SwiftShader here) the labels say it is a software GPU
        assert "a software GPU: it runs on the CPU" in demo.page.evaluate("() => document.body.innerText")
        return
    text = demo.page.evaluate("""() => {
        const exempt = [...document.querySelectorAll('#no-webgpu, header .title')];
        exempt.forEach((e) => { e.dataset.display = e.style.display; e.style.display = 'none'; });
        const t = document.body.innerText;
        exempt.forEach((e) => { e.style.display = e.dataset.display; });
        return t;
    }""")
    rest = text
    for allowed in ALLOWED_GPU_MENTIONS:
        rest = rest.replace(allowed, "")
    claims = [rest[max(0, m.start() - 50) : m.end() + 50] for m in re.finditer(r"GPU|upload|read back", rest, re.I)]
    assert not claims, claims
    assert "to compare" not in text and "wasm-simd (wasm-simd" not in text, text


def test_plot_headers_stay_on_one_line(demo):
    """Every activation card's header is one line (leaky_relu's parameters are cut, not wrapped), so the
    plots of a row line up."""
    cards = demo.page.evaluate("""() => [...document.querySelectorAll('#activation-grid .plot-card')].map((f) => ({
        op: f.dataset.op, caption: f.querySelector('figcaption').getBoundingClientRect().height,
        top: f.getBoundingClientRect().top, canvas: f.querySelector('canvas').getBoundingClientRect().top}))""")
    assert len({round(c["caption"]) for c in cards}) == 1, cards
    rows: dict = {}
    for c in cards:
        rows.setdefault(round(c["top"]), set()).add(round(c["canvas"]))
    assert all(len(tops) == 1 for tops in rows.values()), rows


def _pixels(demo, selector: str) -> dict:
    """Counts of the GPU-curve blue and the CPU-curve orange in a canvas, and a digest."""
    return demo.page.evaluate(
        """(sel) => {
        const c = document.querySelector(sel);
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let blue = 0, orange = 0, digest = 0;
        for (let i = 0; i < d.length; i += 4) {
            if (Math.abs(d[i] - 59) < 40 && Math.abs(d[i + 1] - 130) < 40 && d[i + 2] > 200) blue++;
            if (d[i] > 220 && Math.abs(d[i + 1] - 115) < 40 && d[i + 2] < 80) orange++;
            digest = (digest * 31 + d[i] + 7 * d[i + 1] + 13 * d[i + 2]) % 1000000007;
        }
        return {blue, orange, digest};
    }""",
        selector,
    )


def test_controls_change_what_is_shown(demo):
    page = demo.page
    plot = "#activation-grid canvas[data-op='tanh']"
    both = _pixels(demo, plot)
    if env_of(demo)["compare"] == "yes":
        assert both["blue"] > 50 and both["orange"] > 20, both
        page.uncheck("#show-gpu")
        cpu_only = _pixels(demo, plot)
        assert cpu_only["blue"] < 5 and cpu_only["orange"] > 20 and cpu_only["digest"] != both["digest"], cpu_only
        page.check("#show-gpu")
        page.uncheck("#show-cpu")
        gpu_only = _pixels(demo, plot)
        assert gpu_only["orange"] < 5 and gpu_only["blue"] > 50, gpu_only
        page.check("#show-cpu")
        assert _pixels(demo, plot) == both
    else:  # one backend: one curve, no CPU toggle
        assert both["blue"] > 50 and both["orange"] == 0 and page.is_hidden("label:has(#show-cpu)"), both

    ref = desktop_or_skip(demo)
    before = _pixels(demo, "#img-filtered")
    page.check("input[name='filter'][value='edges']")
    assert _pixels(demo, "#img-filtered")["digest"] != before["digest"]
    _check_filter(demo, ref, "edges")
    page.check("input[name='filter'][value='sharpen']")
    _check_filter(demo, ref, "sharpen")

    chart = _pixels(demo, "#chain-chart")["digest"]
    page.select_option("#chain-size", "4096")
    page.click("#chain-run")
    page.wait_for_function(
        "() => { const p = document.querySelector('#panel-chain');"
        " return p.dataset.state !== 'busy' && p.dataset.n === '4096'; }",
        polling=100,
        timeout=120_000,
    )
    assert page.evaluate("document.querySelector('#panel-chain').dataset.state") == "done"
    assert _pixels(demo, "#chain-chart")["digest"] != chart
    _check_chain(demo, ref, 4096)
    assert demo.state == "ready"


# ------------------------------------------------------------------------------------ panel 4: draw a digit


def _held_out_examples(labels=(3, 7), min_p: float = 0.9) -> list[tuple[int, int, list]]:
    """(index, label, strokes in 32x32 bitmap units) of the first held-out digit of each label whose
    strokes (traced from its 8x8 picture, app/digits.py) the desktop pipeline classifies right with
    probability >= min_p: real digits, drawn the way a pen would."""
    import numpy as np

    from trueno_web.app.digits import pixels_from_strokes, strokes_from_pixels
    from trueno_web.models import load_digits_file

    arrays, _ = load_digits_file()
    w1, b1, w2, b2 = (np.asarray(arrays[k][0], np.float64).reshape(arrays[k][1]) for k in ("w1", "b1", "w2", "b2"))
    xs, ys = np.asarray(arrays["test_x"][0]).reshape(arrays["test_x"][1]), arrays["test_y"][0]
    out = []
    for label in labels:
        for i in np.flatnonzero(np.asarray(ys) == label):
            strokes = strokes_from_pixels(xs[i].tolist())
            z = np.maximum(np.asarray(pixels_from_strokes(strokes), np.float64) @ w1 + b1, 0) @ w2 + b2
            p = np.exp(z - z.max())
            if p.argmax() == label and p.max() / p.sum() >= min_p:
                out.append((int(i), label, strokes))
                break
    return out


def _probabilities(pixels) -> list[float]:
    """The classifier's float64 NumPy forward pass (the reference)."""
    import numpy as np

    from trueno_web.models import load_digits_file

    arrays, _ = load_digits_file()
    w1, b1, w2, b2 = (np.asarray(arrays[k][0], np.float64).reshape(arrays[k][1]) for k in ("w1", "b1", "w2", "b2"))
    z = np.maximum(np.asarray(pixels, np.float64) @ w1 + b1, 0) @ w2 + b2
    p = np.exp(z - z.max())
    return (p / p.sum()).tolist()


def _ellipse(cx, cy, rx, ry, n=48):
    return [(cx + rx * math.sin(2 * math.pi * k / n), cy - ry * math.cos(2 * math.pi * k / n)) for k in range(n + 1)]


def draw_on_pad(page, strokes, scale: float = 1.0) -> dict:
    """Draw strokes (lists of (x, y) in pad units times `scale`) with Playwright's mouse, then wait
    for the panel to show their classification; returns what it shows."""
    pad = page.locator("#digit-pad")
    pad.scroll_into_view_if_needed()
    box = pad.bounding_box()
    x0, y0 = box["x"], box["y"]
    for stroke in strokes:
        pts = [(x0 + x * scale, y0 + y * scale) for x, y in stroke]
        page.mouse.move(*pts[0])
        page.mouse.down()
        for p in pts[1:]:
            page.mouse.move(*p)
        page.mouse.up()
    page.wait_for_function(
        "n => { const p = document.querySelector('#panel-digits');"
        " return p.dataset.pending === '0' && p.dataset.strokes === String(n); }",
        arg=len(strokes),
        polling=50,
        timeout=60_000,
    )
    return _digit_panel(page)


def _digit_panel(page) -> dict:
    shown = page.evaluate("""() => {
        const d = document.querySelector('#panel-digits').dataset;
        const nums = (s) => s ? s.split(',').map(Number) : [];
        return {predicted: d.predicted, backend: d.backend, ms: Number(d.ms), pixels: nums(d.pixels),
                probabilities: nums(d.probabilities), cpu: nums(d.cpuProbabilities), strokes: Number(d.strokes),
                big: document.querySelector('#digit-predicted').textContent,
                timing: document.querySelector('#digit-timing').textContent};
    }""")
    return shown


def _check_digit(demo, shown: dict, label: int) -> None:
    assert shown["predicted"] == str(label) == shown["big"], (label, shown)
    assert shown["backend"] == env_of(demo)["backend"]
    assert len(shown["pixels"]) == 64 and 0 <= min(shown["pixels"]) and max(shown["pixels"]) <= 16
    want = _probabilities(shown["pixels"])
    for side in ("probabilities", "cpu"):
        got = shown[side]
        assert len(got) == 10 and abs(sum(got) - 1) < 1e-5, (side, got)
        assert all(close(g, w, rel=1e-4, abs_=1e-6) for g, w in zip(got, want)), (side, got, want)
    assert shown["ms"] > 0 and re.search(r"on (webgpu|wasm-simd): [\d.]+ ms", shown["timing"]), shown["timing"]
    if shown["backend"] != "webgpu":  # the CPU fallback uploads nothing: its label says no such thing
        assert "upload" not in shown["timing"] and "read back" not in shown["timing"], shown["timing"]


def test_digit_panel_classifies_what_the_mouse_draws(demo):
    """A '1' (one vertical stroke), a '0' (an ellipse) and held-out digits traced into strokes, drawn
    with the mouse: the predicted class, and the probabilities against NumPy's forward pass of the
    8x8 picture the page made (on the device and on the CPU fallback)."""
    from trueno_web.app.digits import SIZE, pixels_from_strokes

    page = demo.page
    assert page.evaluate("document.querySelector('#panel-digits').dataset.state") == "done"
    assert "held-out digits" in page.inner_text("#digit-accuracy")
    one = [[(140, 40 + 5 * k) for k in range(41)]]
    _check_digit(demo, draw_on_pad(page, one), 1)

    page.click("#digit-clear")
    cleared = _digit_panel(page)
    assert cleared["predicted"] == "" and cleared["big"] == "–" and cleared["pixels"] == [0] * 64
    assert page.evaluate("document.querySelector('#panel-digits').dataset.pending") == "0"

    zero = [_ellipse(140, 140, 62, 100)]
    shown = draw_on_pad(page, zero)
    _check_digit(demo, shown, 0)
    # the page's 8x8 picture is what the desktop makes of the same strokes (the mouse's coordinates
    # are the points sent, up to the 0.1 px the page rounds to)
    desktop_pixels = pixels_from_strokes([[c for p in zero[0] for c in p]])
    assert sum(abs(a - b) for a, b in zip(shown["pixels"], desktop_pixels)) <= 8, (shown["pixels"], desktop_pixels)

    for index, label, strokes in _held_out_examples():
        page.click("#digit-clear")
        shown = draw_on_pad(page, strokes, scale=280 / SIZE)
        _check_digit(demo, shown, label)
    page.click("#digit-clear")
    assert demo.state == "ready"


def test_still_clean_after_interaction(demo):
    assert demo.problems() == []
    assert demo.state == "ready"


# ------------------------------------------------------------------------------------ a phone, and no Pyodide

LAYOUT = """() => {
    const vw = document.documentElement.clientWidth;
    const outside = [...document.querySelectorAll('body *')].filter((e) => e.offsetParent !== null
        && !e.closest('.table-scroll, .scroll-x') && e.getBoundingClientRect().right > vw + 0.5)
        .map((e) => e.tagName + (e.id ? '#' + e.id : '') + (e.className ? '.' + e.className : ''));
    const canvases = [...document.querySelectorAll('#activation-grid canvas, #chain-chart, #digit-chart, #train-loss, #train-accuracy')]
        .map((c) => ({name: c.id || c.dataset.op, css: c.getBoundingClientRect().width,
                      room: c.parentElement.clientWidth, pixels: c.width}));
    const scrollers = [...document.querySelectorAll('.table-scroll')].filter((e) => e.offsetParent !== null)
        .map((e) => ({right: e.getBoundingClientRect().right, inner: e.scrollWidth, outer: e.clientWidth}));
    return {viewport: vw, document: document.documentElement.scrollWidth, outside, canvases, scrollers};
}"""


STAGES = ("adapter", "first", "pyodide", "install", "import", "device", "panel")


def startup_of(page) -> dict:
    """The start-up stages the page recorded ({name: (start ms, ms)}) and when the first results showed."""
    data = page.evaluate("""() => ({
        stages: JSON.parse(document.body.dataset.stages || '[]'),
        first_result_ms: Number(document.body.dataset.firstResultMs || 0) || null,
        first_panel_ms: Number(document.body.dataset.firstPanelMs || 0) || null,
        ready_ms: Number(document.body.dataset.readyMs || 0) || null,
        snapshot: document.body.dataset.snapshot || null,
    })""")
    return data


SNAPSHOT_SETTLED = "['stored', 'failed', 'unavailable', 'loaded'].includes(document.body.dataset.snapshot)"


def wait_for_snapshot(page, timeout_s: float = READY_TIMEOUT_S) -> str:
    """Wait until the page's start-up snapshot is settled (made after ready on a first visit); its state."""
    page.wait_for_function(SNAPSHOT_SETTLED, polling=100, timeout=timeout_s * 1000)
    return page.evaluate("document.body.dataset.snapshot")


def print_startup(label: str, data: dict) -> None:
    print(f"\nstart-up ({label}), ms since the worker started (stage start + its duration):", file=sys.stderr)
    for s in data["stages"]:
        print(f"  {s['label']:<42} at {s['start']:>6} + {s['ms']:>6}", file=sys.stderr)
    print(
        f"  first JS result on the page at {data['first_result_ms']} ms, first panel at {data['first_panel_ms']} ms, "
        f"ready at {data['ready_ms']} ms (since navigation); snapshot: {data['snapshot']}",
        file=sys.stderr,
    )


def test_startup_stages_and_the_first_result(demo):
    """Where the start-up seconds go (printed, not asserted: the machine sets them): each stage has its own
    bar and time; with WebGPU the adapter and a first result computed in JS show before Python is up."""
    data = startup_of(demo.page)
    print_startup(demo.mode, data)
    names = [s["name"] for s in data["stages"]]
    assert all(s["ms"] is not None for s in data["stages"]), data["stages"]
    assert demo.page.locator("#stages li[data-state='done']").count() == len(names)
    if demo.mode == WEBGPU:
        assert names == list(STAGES)
        shown = json.loads(demo.page.get_attribute("#first-result", "data-output"))
        assert shown == [2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 17.0]
        pyodide = data["stages"][names.index("pyodide")]
        assert data["stages"][names.index("first")]["start"] <= pyodide["start"]  # before Python is up
    else:
        assert names == [n for n in STAGES if n != "first"] and demo.page.is_hidden("#first-result")


SNAPSHOT_KEYS = """async () => (await (await caches.open('trueno-web-snapshots')).keys()).map((r) => r.url)"""
# A snapshot another Pyodide build made (the stored one with its build id, words 4-11, changed) and one of
# an older wheel: the first must not stop the page, the second is deleted when the next one is stored.
SPOIL_SNAPSHOT = """async ([url, stale]) => {
    const cache = await caches.open('trueno-web-snapshots');
    const bytes = new Uint8Array(await (await cache.match(url)).arrayBuffer());
    new Uint32Array(bytes.buffer, 16, 8).fill(0);
    await cache.put(url, new Response(bytes));
    await cache.put(stale, new Response(new Uint8Array(16)));
}"""


def _reload(demo) -> dict:
    demo.page.reload()
    demo.page.wait_for_function(
        "document.body.dataset.state !== 'loading'", polling=100, timeout=READY_TIMEOUT_S * 1000
    )
    assert demo.state == "ready", demo.error_text()
    return startup_of(demo.page)


@pytest.mark.parametrize("demo", [WEBGPU], indirect=True)
def test_a_reload_starts_python_from_the_snapshot(demo):
    """The page stores a memory snapshot of its interpreter after ready, named by Pyodide's version and the
    wheel's sha256; a reload starts Python from it and computes the same numbers. A snapshot this Pyodide
    refuses is dropped (the page starts without it and stores a new one, deleting the older wheel's)."""
    assert wait_for_snapshot(demo.page) == "stored"
    wheel = json.loads((ROOT / "build" / "web" / "wheels" / "manifest.json").read_text())["wheels"]["trueno_web"]
    version = json.loads((ROOT / "build" / "web" / "pyodide" / "package.json").read_text())["version"]
    url = f"{demo.server.url}snapshots/pyodide-{version}-trueno_web-{wheel['sha256']}.bin"
    assert demo.page.evaluate(SNAPSHOT_KEYS) == [url]

    stale = f"{demo.server.url}snapshots/pyodide-{version}-trueno_web-{'0' * 64}.bin"
    demo.page.evaluate(SPOIL_SNAPSHOT, [url, stale])
    spoiled = _reload(demo)
    assert spoiled["stages"][2]["label"] == "Pyodide: fetch, compile, start Python", spoiled["stages"]
    assert wait_for_snapshot(demo.page) == "stored"
    assert demo.page.evaluate(SNAPSHOT_KEYS) == [url]

    restored = _reload(demo)
    assert restored["snapshot"] == "loaded"
    assert [s["name"] for s in restored["stages"]] == list(STAGES)
    assert restored["stages"][2]["label"] == "Pyodide: fetch, compile, start Python from the snapshot"
    test_activation_values_match_the_catalog(demo)
    test_filter_numbers_match_the_library(demo)
    assert demo.problems() == []


def test_phone_layout_fits_the_screen(browser, demo_server):
    """At a phone's 390x844 the document is no wider than the screen (tables scroll inside their card),
    the canvases take their size from their container, and they are drawn again, wider, when the
    window grows."""
    demo = DemoPage(browser, demo_server, viewport=PHONE)
    try:
        assert demo.open().state == "ready", demo.error_text()
        layout = demo.page.evaluate(LAYOUT)
        assert layout["document"] <= layout["viewport"] == PHONE["width"], layout
        assert layout["outside"] == [], layout["outside"]
        assert any(s["inner"] > s["outer"] for s in layout["scrollers"]), "the chain table scrolls in its card"
        assert all(s["right"] <= PHONE["width"] for s in layout["scrollers"]), layout["scrollers"]
        for c in layout["canvases"]:
            assert c["css"] <= c["room"] + 0.5 and c["css"] >= 0.9 * min(c["room"], 320), c
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        demo.page.screenshot(path=str(ARTIFACTS / "demo-phone.png"), full_page=True)

        demo.page.set_viewport_size({"width": 1000, "height": 800})
        demo.page.wait_for_function(
            "w => document.querySelector('#chain-chart').getBoundingClientRect().width > w",
            arg=PHONE["width"],
            polling=50,
            timeout=10_000,
        )
        wide = demo.page.evaluate(LAYOUT)
        assert wide["outside"] == [] and wide["document"] <= wide["viewport"], wide
        before = {c["name"]: c["pixels"] for c in layout["canvases"]}
        assert all(c["pixels"] != before[c["name"]] for c in wide["canvases"] if c["name"] == "chain-chart"), wide
        assert demo.problems() == []
    finally:
        demo.close()


def test_missing_pyodide_says_what_to_put_where(browser, tmp_path):
    """web/ served without pyodide/ beside it: the page says which files go where (and how to get them),
    and the badge says it did not start (it does not hang at "starting")."""
    server = ServeProcess(env={"TRUENO_WEB_ASSETS": str(tmp_path)})
    demo = DemoPage(browser, server)
    try:
        assert demo.open().state == "error"
        text = demo.error_text()
        for needle in (
            "pyodide.mjs",
            "pyodide/ next to index.html",
            "python scripts/fetch_web_assets.py",
            "python -m trueno_web serve",
            "PYODIDE_URL in config.mjs",
        ):
            assert needle in text, (needle, text)
        badge = demo.page.inner_text("#badge")
        assert "not started" in badge and "starting" not in badge, badge
        missing = {urlsplit(u).path for _status, u in demo.bad_status}  # the wheel is asked for at once too
        assert "/pyodide/pyodide.mjs" in missing and missing <= {"/pyodide/pyodide.mjs", "/wheels/manifest.json"}, (
            missing
        )
    finally:
        demo.close()
        server.stop()


# ------------------------------------------------------------------------------------ screenshot


@contextlib.contextmanager
def ready_page(webgpu: bool, viewport=VIEWPORT, serve_log: Path | None = None, cache: bool = False):
    """The demo page served from a fresh wheel, opened and ready; page problems are printed at the end."""
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT / "scripts"))
    import fetch_web_assets

    fetch_web_assets.build_project_wheel(force=False)
    server = ServeProcess(serve_log)
    try:
        with sync_playwright() as pw:
            browser = launch_chromium(pw, webgpu=webgpu)
            try:
                demo = DemoPage(browser, server, viewport, cache).open()
                if demo.state != "ready":
                    raise SystemExit("the page did not reach ready:\n" + demo.error_text())
                yield demo
                problems = demo.problems()
                if problems:
                    print("page problems:\n  " + "\n  ".join(problems), file=sys.stderr)
            finally:
                browser.close()
    finally:
        server.stop()


def take_screenshot(out: Path, webgpu: bool = True, viewport=VIEWPORT) -> Path:
    """Serve the page, wait for ready, run the try-it cell's example, save a full-page PNG."""
    with ready_page(webgpu, viewport) as demo:
        demo.page.check("input[name='filter'][value='edges']")
        demo.page.wait_for_function("document.querySelector('#panel-try').dataset.state === 'ready'", timeout=60_000)
        demo.page.click("#try-run")  # the try-it cell's first example, run
        demo.page.wait_for_function("document.querySelector('#panel-try').dataset.runs === '1'", timeout=60_000)
        out.parent.mkdir(parents=True, exist_ok=True)
        demo.page.screenshot(path=str(out), full_page=True)
    return out


def take_digit_screenshot(out: Path, webgpu: bool = True) -> Path:
    """Serve the page, wait for ready, draw a '2' on the digit pad, save a PNG of that panel."""
    arc = [(140 + 58 * math.cos(math.radians(a)), 92 + 50 * math.sin(math.radians(a))) for a in range(195, 361, 5)]
    diagonal = [(198 - 118 * k / 12, 92 + 150 * k / 12) for k in range(1, 13)]
    two = [arc + diagonal + [(80 + 10 * k, 242) for k in range(1, 13)]]
    with ready_page(webgpu) as demo:
        shown = draw_on_pad(demo.page, two)
        print(f"predicted {shown['predicted']} on {shown['backend']}", file=sys.stderr)
        out.parent.mkdir(parents=True, exist_ok=True)
        demo.page.locator("#panel-digits").screenshot(path=str(out))
    return out


def measure_startup(webgpu: bool = True) -> dict:
    """The first Python result (the first panel drawn) and page-ready time (every panel drawn), ms since
    navigation, on a first load with an empty cache and on a reload in the same browser context (after
    the first load's start-up snapshot is stored), and the HTTP statuses `serve` answered each with."""
    import tempfile

    with tempfile.TemporaryDirectory() as td:
        log = Path(td) / "serve.log"
        with ready_page(webgpu, serve_log=log, cache=True) as demo:
            first = int(demo.page.evaluate("document.body.dataset.readyMs"))
            first_startup = startup_of(demo.page)
            first_startup["snapshot"] = wait_for_snapshot(demo.page)
            first_lines = len(log.read_text().splitlines())
            demo.page.reload()
            demo.page.wait_for_function(
                "document.body.dataset.state === 'ready'", polling=100, timeout=READY_TIMEOUT_S * 1000
            )
            reload = int(demo.page.evaluate("document.body.dataset.readyMs"))
            reload_startup = startup_of(demo.page)
        lines = log.read_text().splitlines()

    def statuses(part):
        out: dict = {}
        for line in part:
            m = re.search(r'"GET \S+ HTTP/1.1" (\d+)', line)
            if m:
                out[m.group(1)] = out.get(m.group(1), 0) + 1
        return out

    return {
        "first_python_result_ms": first_startup["first_panel_ms"],
        "reload_first_python_result_ms": reload_startup["first_panel_ms"],
        "first_load_ms": first,
        "reload_ms": reload,
        "first_load_requests": statuses(lines[:first_lines]),
        "reload_requests": statuses(lines[first_lines:]),
        "first_load_stages": first_startup,
        "reload_stages": reload_startup,
    }


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="screenshot of the demo page (WebGPU on SwiftShader)")
    ap.add_argument("--screenshot", type=Path, default=ROOT / "docs" / "screenshot.png")
    ap.add_argument(
        "--digits-panel",
        type=Path,
        metavar="PNG",
        help="instead: the digit panel with a '2' drawn on it (docs/digits_panel.png)",
    )
    ap.add_argument("--phone", action="store_true", help=f"a {PHONE['width']}x{PHONE['height']} viewport")
    ap.add_argument(
        "--startup", action="store_true", help="instead: print the page-ready time of a first load and of a reload"
    )
    ap.add_argument("--no-webgpu", action="store_true")
    args = ap.parse_args()
    if args.startup:
        got = measure_startup(webgpu=not args.no_webgpu)
        for which in ("first_load", "reload"):
            print_startup(which, got.pop(f"{which}_stages"))
        print(got)
    elif args.digits_panel:
        print(take_digit_screenshot(args.digits_panel, webgpu=not args.no_webgpu))
    else:
        print(take_screenshot(args.screenshot, webgpu=not args.no_webgpu, viewport=PHONE if args.phone else VIEWPORT))

"""The JupyterLite site end to end: build it, open the example notebook in headless Chromium, run
every cell in the real lab app (the Pyodide kernel runs in a web worker), and check what came out.

The site (build/jupyterlite/, from scripts/build_jupyterlite.py) is rebuilt only when one of its inputs
changed (set TRUENO_E2E_NO_REBUILD=1 to use whatever is there). It is served by the harness's stdlib
server on 127.0.0.1; every request the page or its workers make is recorded, and any that is not to
127.0.0.1 is blocked and fails the test. Two runs: with WebGPU (SwiftShader), where the notebook must
run on the `webgpu` backend, and without a WebGPU adapter, where `auto` must fall back to `wasm-simd`.
A screenshot of each run is left in build/e2e/. Timings are printed (-s), never asserted on.
"""

from __future__ import annotations

import base64
import json
import os
import struct
import time
import zlib

import pytest

from e2e.harness import ROOT, WEBGPU_WARNING_RE, AssetServer, is_local_url, load_script

NOTEBOOK = "trueno_web_tour.ipynb"
ARTIFACTS = ROOT / "build" / "e2e"
RUN_TIMEOUT_S = 150

# Runs every cell through the lab app's command registry (window.jupyterapp: exposeAppInBrowser),
# then leaves the notebook model (nbformat JSON) in window.__tour.
_RUN_ALL = """(path) => {
  const tour = window.__tour = {phase: "app", t0: performance.now()};
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  (async () => {
    const app = window.jupyterapp;
    await app.restored;
    let panel = null;
    for (let i = 0; i < 1200 && !panel; i++) {
      const w = app.shell.currentWidget;
      if (w && w.sessionContext && w.context && w.context.path.endsWith(path)) panel = w;
      else await sleep(100);
    }
    if (!panel) throw new Error("the notebook never opened: " + path);
    tour.phase = "session";
    await panel.context.ready;
    await panel.sessionContext.ready;
    tour.kernel_name = panel.sessionContext.session.kernel.name;
    tour.opened_ms = performance.now() - tour.t0;
    tour.phase = "run";
    const t1 = performance.now();
    // when each code cell finished: ms since Run All and since the page opened
    const cells = panel.content.model.cells;
    tour.cells_done = {};
    const poll = setInterval(() => {
      for (let i = 0; i < cells.length; i++) {
        const c = cells.get(i);
        if (c.type === "code" && c.executionCount && !(i in tour.cells_done)) {
          tour.cells_done[i] = {run_all_ms: performance.now() - t1, page_ms: performance.now()};
        }
      }
    }, 20);
    try {
      tour.ok = await app.commands.execute("notebook:run-all-cells");
    } finally {
      clearInterval(poll);
    }
    tour.run_ms = performance.now() - t1;
    for (let i = 0; i < 300 && panel.sessionContext.session.kernel.status !== "idle"; i++) await sleep(100);
    tour.kernel_status = panel.sessionContext.session.kernel.status;
    // completion that needs jedi's inference (a call's result is never evaluated) and its typeshed stubs:
    // their files came with the snapshot's site-packages
    const code = "def word():\\n    return 'x'\\nword().st";
    const reply = await panel.sessionContext.session.kernel.requestComplete({code, cursor_pos: code.length});
    tour.completions = reply.content.matches;
    tour.nb = panel.content.model.toJSON();
    tour.phase = "done";
  })().catch((e) => { tour.error = String((e && (e.stack || e.message)) || e); })
      .finally(() => { tour.done = true; });
}"""


@pytest.fixture(scope="module")
def site():
    mod = load_script("build_jupyterlite")
    if os.environ.get("TRUENO_E2E_NO_REBUILD") == "1" and (mod.OUT / "lab" / "index.html").is_file():
        return mod.OUT
    t0 = time.perf_counter()
    out = mod.build()  # quick when up to date
    print(f"\n[jupyterlite] site ready in {time.perf_counter() - t0:.1f} s")
    return out


@pytest.fixture(scope="module")
def site_server(site):
    with AssetServer(site, mounts={}) as server:
        yield server


def run_notebook(browser, server, label: str) -> dict:
    """Open the notebook in a fresh context, run all cells; the result and everything recorded."""
    rec = {"requests": [], "asked_s": [], "blocked": [], "console": [], "page_errors": [], "bad_status": []}

    def block(route):
        rec["blocked"].append(route.request.url)
        route.abort()

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        context.route(lambda url: not is_local_url(url), block)
        context.on("request", lambda r: (rec["requests"].append(r.url), rec["asked_s"].append(time.perf_counter())))
        context.on("response", lambda r: r.status >= 400 and rec["bad_status"].append((r.status, r.url)))
        context.on("requestfailed", lambda r: rec["bad_status"].append((r.failure, r.url[:200])))
        page = context.new_page()
        page.on("console", lambda m: rec["console"].append((m.type, m.text)))
        page.on("pageerror", lambda e: rec["page_errors"].append(str(e)))
        server.log.clear()
        t0 = time.perf_counter()
        page.goto(server.url(f"lab/index.html?path={NOTEBOOK}"))
        page.wait_for_function("() => window.jupyterapp", timeout=60_000)
        page.evaluate(_RUN_ALL, NOTEBOOK)
        try:
            page.wait_for_function("() => window.__tour.done", timeout=RUN_TIMEOUT_S * 1000, polling=250)
        finally:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            try:
                page.screenshot(path=str(ARTIFACTS / f"jupyterlite-{label}.png"), full_page=True)
            except Exception:
                pass
        tour = page.evaluate("() => window.__tour")
        rec["wall_s"] = time.perf_counter() - t0
        rec["asked_s"] = [t - t0 for t in rec["asked_s"]]
    finally:
        context.close()
    rec["server_log"] = [path for _method, path in server.log]
    rec.update(tour)
    return rec


def first_trueno_cell(rec: dict) -> dict:
    """When the first cell that prints trueno_web's version finished (the notebook's first result)."""
    for i, cell in enumerate(rec["nb"]["cells"]):
        if cell["cell_type"] == "code" and "tw.__version__" in "".join(cell["source"]):
            return rec["cells_done"][str(i)]
    raise AssertionError("no cell prints tw.__version__")


# The kernel's start-up, as the requests that mark its steps show it: (label, a part of the URL path).
KERNEL_STEPS = (
    ("Pyodide asked", "/static/pyodide/pyodide.asm.wasm"),
    ("stdlib asked", "/static/pyodide/python_stdlib.zip"),
    ("kernel snapshot asked", "/static/pyodide/kernel-snapshot-"),
    ("trueno_web wheel asked (%pip)", "/pypi/trueno_web-"),
)


def kernel_timeline(rec: dict) -> str:
    """Where the notebook's first seconds go, s since opening the page: the kernel's steps (first request of
    each), Run All, the first code cell (%pip) and the first trueno_web output done."""
    out = []
    for label, needle in KERNEL_STEPS:
        at = next((t for u, t in zip(rec["requests"], rec["asked_s"]) if needle in u), None)
        out.append(f"{label} {at:.1f}" if at is not None else f"{label} never")
    done = rec["cells_done"]
    first_code = min(done, key=int)
    run_all = done[first_code]["page_ms"] - done[first_code]["run_all_ms"]
    first = first_trueno_cell(rec)
    out += [
        f"Run All {run_all / 1000:.1f}",
        f"first cell done {done[first_code]['page_ms'] / 1000:.1f} ({done[first_code]['run_all_ms'] / 1000:.1f} after Run All)",
        f"first trueno_web output {first['page_ms'] / 1000:.1f}",
    ]
    return ", ".join(out)


def _outputs(nb: dict) -> list[tuple[dict, list[dict]]]:
    return [(c, c.get("outputs", [])) for c in nb["cells"] if c["cell_type"] == "code"]


def _text(outputs: list[dict], stream: str = "stdout") -> str:
    return "".join(
        "".join(o["text"]) if isinstance(o["text"], list) else o["text"]
        for o in outputs
        if o["output_type"] == "stream" and o["name"] == stream
    )


def _decode_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, rows) of an 8-bit grayscale, non-interlaced PNG with filter 0 rows."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        tag, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert zlib.crc32(tag + body) == crc, f"bad CRC in {tag!r}"
        if tag == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif tag == b"IDAT":
            idat += body
        pos += 12 + length
    w, h, depth, color, _c, _f, interlace = ihdr
    assert (depth, color, interlace) == (8, 0, 0), ihdr
    raw = zlib.decompress(idat)
    assert len(raw) == h * (w + 1)
    rows = [raw[r * (w + 1) : (r + 1) * (w + 1)] for r in range(h)]
    assert all(row[0] == 0 for row in rows)
    return w, h, [row[1:] for row in rows]


@pytest.mark.parametrize("mode", ["webgpu", "no-webgpu"])
def test_notebook_runs_every_cell(mode, site_server, request):
    browser = request.getfixturevalue("browser" if mode == "webgpu" else "browser_no_webgpu")
    rec = run_notebook(browser, site_server, mode)
    first = first_trueno_cell(rec)
    print(
        f"\n[jupyterlite:{mode}] notebook open + kernel session {rec.get('opened_ms', 0) / 1000:.1f} s, "
        f"first trueno_web output {first['run_all_ms'] / 1000:.1f} s after Run All "
        f"({first['page_ms'] / 1000:.1f} s after opening the page), "
        f"run all cells {rec.get('run_ms', 0) / 1000:.1f} s, wall {rec['wall_s']:.1f} s, "
        f"{len(rec['requests'])} requests"
    )
    print(f"[jupyterlite:{mode}] s since opening the page: {kernel_timeline(rec)}")

    # --- offline: nothing left 127.0.0.1, and the kernel's own fetches were seen going through ours
    assert rec["blocked"] == [], f"requests off localhost: {rec['blocked']}"
    assert all(is_local_url(u) for u in rec["requests"])
    log = rec["server_log"]
    for needle in (
        "/jupyter-lite.json",
        "/static/pyodide/pyodide.asm.wasm",
        "/static/pyodide/pyodide-lock.json",
        "/static/pyodide/kernel_pyodide.mjs",  # the kernel started from the site's snapshot
        "/static/pyodide/kernel-snapshot-",
        "/static/pyodide/kernel-files-",
        "/pypi/trueno_web-",
    ):
        assert any(needle in p for p in log), f"no request for {needle}: the kernel did not load from the site"
    assert not any("/static/pyodide/ipython-" in p for p in log), "the kernel installed ipython: not from the snapshot"

    # --- the page: no uncaught errors, no console errors, no uncaptured WebGPU errors
    assert rec.get("error") is None, rec["error"]
    assert rec["page_errors"] == []
    bad = [t for kind, t in rec["console"] if kind == "error" or WEBGPU_WARNING_RE.search(t)]
    assert bad == [], f"console errors: {bad}; HTTP errors: {rec['bad_status']}"

    # --- every code cell ran, in order, without an error output or anything on stderr
    assert rec["ok"] is True and rec["kernel_status"] == "idle", (rec.get("ok"), rec.get("kernel_status"))
    assert rec["kernel_name"] == "python"
    cells = _outputs(rec["nb"])
    assert len(cells) >= 9
    for i, (cell, outs) in enumerate(cells, start=1):
        src = "".join(cell["source"])[:60]
        assert cell["execution_count"] == i, f"cell {i} did not run ({src!r})"
        errors = [o for o in outs if o["output_type"] == "error"]
        assert not errors, f"cell {i} ({src!r}) raised:\n" + "\n".join(f"{e['ename']}: {e['evalue']}" for e in errors)
        assert _text(outs, "stderr") == "", f"cell {i} ({src!r}) wrote to stderr: {_text(outs, 'stderr')}"

    assert {"startswith", "strip"} <= set(rec["completions"]), rec["completions"]

    # --- the values
    everything = "".join(_text(outs) for _c, outs in cells)
    for line in (
        "installed trueno_web 0.1.0 from this site's pypi/",  # what %pip installed
        "relu     array([0.0, 0.0, 0.0, 0.5, 2.0], dtype=float32)",  # a tw.NDResult: no NumPy here
        "gelu     [-0.0454, -0.1543, 0.0, 0.3457, 1.9546]",
        "a + b    array([1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5], dtype=float32)",
        "a . b    18.0",
        "softmax  [0.09003, 0.24473, 0.66524]",
        "matmul   shape (2, 2) row 1: [10, 11]",  # int lists: an int32 product, exact
        "array([[ 4,  5],\n       [10, 11]])",
        "without await: <pending relu(...): await it>",
        "in the browser: True",
        "numpy backend: NumPy is not installed here",
        "total_sync([1.0, 2.0, 3.5]) = 6.5",
    ):
        assert line in everything, f"missing output line {line!r}"
    # --- the tour ends with the device open and a "your turn" cell, whose value shows as an array
    last, last_outs = cells[-1]
    assert "dev.tensor" in "".join(last["source"]) and "close()" not in "".join(cells[-2][0]["source"])
    shown = [o["data"]["text/plain"] for o in last_outs if o["output_type"] == "execute_result"]
    shown = ["".join(t) if isinstance(t, list) else t for t in shown]
    assert len(shown) == 1 and shown[0].startswith("array([[") and shown[0].endswith("]], dtype=float32)"), shown
    assert len(shown[0].splitlines()) == 2, shown
    tour_lines = [ln for ln in everything.splitlines() if ln.startswith("TOUR ")]
    assert len(tour_lines) == 1
    tour = json.loads(tour_lines[0][5:])
    assert tour["all_ok"] is True, tour
    for key in ("ops_ok", "batch_ok", "chain_ok", "cpu_ok", "sync_ok", "picture_ok", "digits_ok", "training_ok"):
        assert tour.get(key) is True, (key, tour)
    assert tour["cpu_backend"] == "wasm-simd"
    assert tour["sync_available"] is True  # Chromium has JSPI; notebook cells are async entries
    if mode == "webgpu":
        assert tour["webgpu_available"] is True and tour["backend"] == "webgpu", tour
        stats = tour["batch_stats"]
        assert (stats["uploads"], stats["downloads"], stats["submits"]) == (2, 2, 1), stats
        one_shot, fused = tour["chain_counts"]["one_shot"], tour["chain_counts"]["fused"]
        assert (one_shot["submits"], one_shot["downloads"]) == (5, 5), one_shot
        assert (fused["submits"], fused["downloads"], fused["dispatches"]) == (1, 1, 1), fused
    else:
        assert tour["webgpu_available"] is False and tour["backend"] == "wasm-simd", tour

    # --- the picture: one inline PNG, three panels (96x96 | 92x92 | 94x94, 4 px gaps, 2x scale)
    pngs = [
        o["data"]["image/png"]
        for _c, outs in cells
        for o in outs
        if o["output_type"] in ("display_data", "execute_result") and "image/png" in o.get("data", {})
    ]
    assert len(pngs) == 2  # the filters, then the held-out digits
    png = base64.b64decode("".join(pngs[0]) if isinstance(pngs[0], list) else pngs[0])
    assert len(png) == tour["png_bytes"]
    w, h, rows = _decode_png(png)
    assert (w, h) == (2 * (96 + 4 + 92 + 4 + 94), 2 * 96)
    assert rows[2 * 40][2 * 36] == round(0.95 * 255)  # inside the disc of the original
    assert rows[2 * 10][2 * 96 + 1] == 255  # the white gap between panels
    edges_x0 = 2 * (96 + 4 + 92 + 4)
    edge_panel = [v for r in rows[2:-2] for v in r[edges_x0:]]
    assert edge_panel.count(0) > 0.7 * len(edge_panel)  # mostly flat: black
    assert edge_panel.count(255) > 0.02 * len(edge_panel)  # the outlines: white
    assert len(set(v for r in rows for v in r)) > 50  # gradients and the blur: many grays

    # --- the digit classifier: the accuracy on the 359 held-out digits, and their picture (8 digits of 8x8,
    # 1 px gaps, 8x scale, dark ink on white)
    assert tour["digits_accuracy"] > 0.95, tour
    assert tour["trained_accuracy"] >= 0.95, tour  # the training section, from random weights
    digits = base64.b64decode("".join(pngs[1]) if isinstance(pngs[1], list) else pngs[1])
    w, h, rows = _decode_png(digits)
    assert (w, h) == (8 * (8 * 8 + 7), 8 * 8)
    assert rows[0][8 * 8] == 255  # the white gap after the first digit
    assert min(v for r in rows for v in r) < 64  # ink

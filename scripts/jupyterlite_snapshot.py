"""The notebook kernel's start-up snapshot, made at site build in headless Chromium.

jupyterlite-pyodide-kernel 0.8.6's worker starts Python, then installs micropip, piplite, ipykernel, comm,
pyodide-kernel, jedi and ipython one after the other and imports the kernel: most of the wait from Run All
to the first cell (docs/benchmarks.md). Here that work is done once, at build, by
jupyterlite/kernel_snapshot_maker.mjs in a worker of the built site, and kept as Pyodide's memory snapshot
plus site-packages' files. jupyterlite/kernel_pyodide.mjs, the site's `pyodideUrl`, starts the kernel
from them; the site's `loadPyodideOptions.packages` names the kernel's packages so that the worker skips
installing them (checked against the worker's text, see WORKER_SKIPS).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent / "jupyterlite"
MAKER = HERE / "kernel_snapshot_maker.mjs"
STARTER = HERE / "kernel_pyodide.mjs"
# What jupyterlite-pyodide-kernel 0.8.6's worker installs before its first cell, in its order.
KERNEL_PACKAGES = ("ipykernel", "comm", "pyodide-kernel", "jedi", "ipython")
# The names the site's loadPyodideOptions.packages lists: the worker skips what it names.
SKIPPED = ("micropip", "piplite", *KERNEL_PACKAGES)
# The worker's text that skips them (minified 0.8.6 comlink worker): if the pinned kernel changes, the build
# stops here rather than shipping a site whose kernel installs everything again over the snapshot.
WORKER_SKIPS = (
    'i.includes("micropip")||await this._pyodide.loadPackage(["micropip"])',
    'i.includes("piplite")||await this._pyodide.runPythonAsync(',
    'for(let e of["ipykernel","comm","pyodide-kernel","jedi","ipython"])t.includes(e)||s.push(',
    "...e.loadPyodideOptions})",
)
EXTENSION = "extensions/@jupyterlite/pyodide-kernel-extension/static"
TIMEOUT_S = 300

_PAGE = """<!doctype html><meta charset="utf-8"><script type="module">
const worker = new Worker("./maker.mjs", {type: "module"});
worker.onmessage = (event) => {
  const {snapshot, files, loaded, ms, error} = event.data;
  if (error) { window.__made = {error}; return; }
  for (const [name, bytes] of [["snapshot.bin", snapshot], ["files.bin", files]]) {
    const a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([bytes]));
    a.download = name;
    document.body.append(a);
    a.click();
  }
  window.__made = {ms, loaded, snapshot: snapshot.length, files: files.length};
};
worker.postMessage(%s);
</script>"""


def check_worker(site: Path) -> None:
    """Stop the build unless the site's kernel worker skips installing what SKIPPED names."""
    workers = list((site / EXTENSION).glob("comlink.worker.*.js"))
    if len(workers) != 1:
        raise SystemExit(f"expected one comlink.worker.*.js in {site / EXTENSION}, found {len(workers)}")
    text = workers[0].read_text()
    missing = [s for s in WORKER_SKIPS if s not in text]
    if missing:
        raise SystemExit(
            f"{workers[0].name} lacks {missing}: the pinned jupyterlite-pyodide-kernel changed; "
            "check that its worker still skips the packages named in loadPyodideOptions.packages"
        )


def site_files(site: Path) -> list[str]:
    """The names of static/pyodide/ files the site's kernel starts from: the starter and those it names."""
    starter = site / "static" / "pyodide" / STARTER.name
    if not starter.is_file():
        return [STARTER.name]
    text = starter.read_text()
    return [STARTER.name, *(n for n in re.findall(r'"(kernel-[\w.-]+)"', text))]


def make(site: Path, log=print) -> dict[str, str]:
    """Make the snapshot and site-packages' files into site/static/pyodide/ (content-hashed names) and
    write kernel_pyodide.mjs there, naming them. Returns {"snapshot": name, "files": name}. It runs in a
    thread of its own: Playwright's sync API refuses a thread whose asyncio loop is running, as an e2e test's
    own browser session is when its fixture rebuilds a stale site."""
    names: dict[str, str] = {}
    failed: list[BaseException] = []

    def work():
        try:
            names.update(_make(site, log))
        except BaseException as e:  # (handed to the caller's thread, raised there)
            failed.append(e)

    worker = threading.Thread(target=work, name="kernel-snapshot")
    worker.start()
    worker.join()
    if failed:
        raise failed[0]
    return names


def _make(site: Path, log) -> dict[str, str]:
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout's trueno_web and e2e
    from e2e.harness import launch_chromium
    from trueno_web.app.server import StaticServer

    check_worker(site)
    static = site / "static" / "pyodide"
    ext = site / EXTENSION
    (piplite,) = (ext / "pypi").glob("piplite-*.whl")
    server = StaticServer(("127.0.0.1", 0), {"/": site}, quiet=True, cache_control="no-store")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = server.url
    ask = {
        "pyodideUrl": f"{base}static/pyodide/pyodide.mjs",
        "pipliteWheelUrl": f"{base}{EXTENSION}/pypi/{piplite.name}",
        "pipliteUrls": [f"{base}pypi/all.json", f"{base}{EXTENSION}/pypi/all.json"],
        "packages": list(KERNEL_PACKAGES),
    }
    server.add_route("/__kernel_snapshot__/index.html", "text/html", _PAGE % json.dumps(ask))
    server.add_route("/__kernel_snapshot__/maker.mjs", "text/javascript", MAKER.read_text())
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as td, sync_playwright() as pw:
        browser = launch_chromium(pw, webgpu=False)
        try:
            page = browser.new_page()
            got = {}

            def keep(download):
                path = Path(td) / download.suggested_filename
                download.save_as(path)
                got[download.suggested_filename] = path

            page.on("download", keep)
            page.goto(f"{base}__kernel_snapshot__/index.html")
            page.wait_for_function("() => window.__made", timeout=TIMEOUT_S * 1000, polling=250)
            made = page.evaluate("() => window.__made")
            if "error" in made:
                raise SystemExit(f"the kernel snapshot failed in the browser:\n{made['error']}")
            for _ in range(200):
                if len(got) == 2:
                    break
                page.wait_for_timeout(100)
        finally:
            browser.close()
            server.shutdown()
            server.server_close()
        if len(got) != 2:
            raise SystemExit(f"the kernel snapshot's files did not come back from the browser: got {sorted(got)}")
        names = {}
        for key, fn in (("snapshot", "snapshot.bin"), ("files", "files.bin")):
            data = got[fn].read_bytes()
            stem, dot, suffix = fn.partition(".")
            names[key] = f"kernel-{stem}-{hashlib.sha256(data).hexdigest()[:16]}{dot}{suffix}"
            shutil.copyfile(got[fn], static / names[key])
    log(
        f"kernel snapshot: {made['snapshot'] / 2**20:.1f} MiB + site-packages' files {made['files'] / 2**20:.1f} MiB, "
        f"made in {made['ms'] / 1000:.1f} s in the browser ({time.perf_counter() - t0:.1f} s in all)"
    )
    starter = STARTER.read_text()
    for key, name in names.items():
        marker = f'"{key.upper()}_FILE"'
        if starter.count(marker) != 1:
            raise SystemExit(f"{STARTER.name} must name {marker} once")
        starter = starter.replace(marker, json.dumps(name))
    # where a package came from, as the build's server named it; the site's kernel loads none of them again
    loaded = {name: where.replace(base, "./") for name, where in made["loaded"].items()}
    if starter.count('"LOADED_PACKAGES"') != 1:
        raise SystemExit(f'{STARTER.name} must name "LOADED_PACKAGES" once')
    starter = starter.replace('"LOADED_PACKAGES"', json.dumps(loaded, sort_keys=True))
    (static / STARTER.name).write_text(starter)
    return names

"""Browser test harness: Pyodide in headless Chromium, served from build/web/ on 127.0.0.1.

Pieces (conftest.py wires them into fixtures):

    AssetServer          build/web/ (plus the in-memory test page) on the project's one static
                         server, trueno_web.app.server
    launch_chromium()    Playwright Chromium with WebGPU on SwiftShader (or with WebGPU off)
    PyodidePage          one tab running Pyodide: loads it from localhost, installs micropip and
                         packaging (by URL) and the project wheel (micropip, by URL); records
                         every request (anything not to 127.0.0.1 is blocked, and is a problem),
                         console errors, uncaught page errors and uncaptured WebGPU errors
                         (Chrome logs those as console warnings)
    run_py(page, code)   run Python with pyodide.runPythonAsync; returns the value of the last
                         expression, JSON round-tripped; raises PyodideError with the Python
                         traceback when the code raised, PageBroken when it hung (timeout)
    page.run_pytest()    pytest *inside* Pyodide on files written into its FS; returns counts
    page.run_test_files() a directory of desktop tests copied in and run there, with counts per file

Nothing here needs the network: build/web/ is filled by scripts/fetch_web_assets.py.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import sys
import threading
import time
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from trueno_web.app.server import make_server

ROOT = Path(__file__).resolve().parent.parent
WEB_ROOT = ROOT / "build" / "web"
MANIFEST = WEB_ROOT / "wheels" / "manifest.json"

# GPU modes a PyodidePage can run under.
WEBGPU = "webgpu"  # --enable-unsafe-webgpu: SwiftShader adapter (Vulkan on CPU)
NO_ADAPTER = "no-adapter"  # flag off: navigator.gpu exists, requestAdapter() resolves null
NO_NAVIGATOR_GPU = "no-navigator-gpu"  # flag on, but navigator.gpu deleted before any script runs
GPU_MODES = (WEBGPU, NO_ADAPTER, NO_NAVIGATOR_GPU)

BASE_ARGS = (
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-default-apps",
    "--disable-sync",
    "--disable-domain-reliability",
    "--no-default-browser-check",
)
WEBGPU_ARGS = ("--enable-unsafe-webgpu",)

# Pure-Python test tooling installed on demand by PyodidePage.ensure_pytest().
PYTEST_WHEELS = ("iniconfig", "pluggy", "pygments", "pytest")

TEST_PAGE_PATH = "/__e2e__/index.html"
TEST_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<title>trueno_web e2e</title></head>
<body>
<script type="module">
import { loadPyodide } from "/pyodide/pyodide.mjs";
const results = new Map();
const out = [];
window.__e2e = {
  loadPyodide, results, out,
  async boot(opts) {
    const t0 = performance.now();
    const pyodide = await loadPyodide({
      indexURL: location.origin + "/pyodide/",
      stdout: (s) => out.push(["out", s]),
      stderr: (s) => out.push(["err", s]),
    });
    window.pyodide = pyodide;
    const t1 = performance.now();
    if (opts.preload.length) {
      // by URL: PyPI's wheels do not carry the sha256 that pyodide-lock.json names
      await pyodide.loadPackage(opts.preload, {
        messageCallback: () => {}, errorCallback: (s) => out.push(["err", s]),
      });
    }
    pyodide.runPython(`
def _e2e_dumps(x):
    import json
    from pyodide.ffi import JsProxy
    def default(o):
        if isinstance(o, JsProxy):
            try:
                v = o.to_py()   # plain objects/arrays/maps -> dict/list; others stay a JsProxy
            except Exception:
                v = o
            return repr(o) if isinstance(v, JsProxy) else v
        if hasattr(o, "tolist"):
            return o.tolist()
        if isinstance(o, (set, frozenset)):
            return sorted(o, key=repr)
        if isinstance(o, (bytes, bytearray)):
            return list(o)
        return repr(o)
    return json.dumps(x, default=default)
`);
    window.__e2e.dumps = pyodide.globals.get("_e2e_dumps");
    const t2 = performance.now();
    return {pyodide: pyodide.version, load_ms: t1 - t0, preload_ms: t2 - t1};
  },
  bootStart(opts) {
    window.__e2e.boot(opts).then(
      (r) => { window.__e2e.booted = {ok: true, ...r}; },
      (e) => { window.__e2e.booted = {ok: false, message: String(e && (e.stack || e.message) || e)}; });
  },
  start(id, code, args, sync) {
    const run = async () => {
      const t0 = performance.now();
      let r;
      try {
        if (args !== null) pyodide.globals.set("E2E_ARGS", pyodide.toPy(args));
        r = sync ? pyodide.runPython(code, {filename: "<e2e>"})
                 : await pyodide.runPythonAsync(code, {filename: "<e2e>"});
        const json = window.__e2e.dumps(r);
        return {ok: true, json, ms: performance.now() - t0};
      } catch (e) {
        return {ok: false, type: e.type || e.name || "Error", message: String(e.message ?? e),
                stack: e.type ? "" : String(e.stack ?? ""), ms: performance.now() - t0};
      } finally {
        if (r && pyodide.ffi.PyProxy && r instanceof pyodide.ffi.PyProxy) r.destroy();
      }
    };
    // after this evaluate() returns: a busy loop in Python must not block the caller. The result
    // is pushed to the harness (window.__e2e_done, a Playwright binding): the harness never asks a
    // page that may be spinning, so its deadline cannot depend on the page answering.
    setTimeout(() => run().then((res) => {
      results.set(id, res);
      if (window.__e2e_done) window.__e2e_done(id);
    }), 0);
  },
  take(id) {
    const r = results.get(id);
    results.delete(id);
    const o = out.splice(0, out.length);
    return {result: r, out: o};
  },
};
window.__e2e_ready = true;
</script>
</body></html>
"""


# ------------------------------------------------------------------------------------ server


class AssetServer:
    """Serves `root` (default build/web/) on http://127.0.0.1:<ephemeral port>/, with the project's
    one static-file server (trueno_web.app.server: its MIME table, no traversal, no listings).

    `routes` adds in-memory files ({"/path": (mime, bytes_or_str)}); the test page is always there.
    `headers` are sent with every response (e.g. COOP/COEP for cross-origin isolation).
    `mounts` serves more directories under URL prefixes; default: the repo's web/ (the demo page)
    at /web/, next to /pyodide/ and /wheels/ from build/web/.
    Every request is recorded in `.log` as (method, raw path); nothing is cached (the wheels get
    rebuilt between runs under the same file name).
    """

    def __init__(
        self,
        root: Path = WEB_ROOT,
        *,
        routes: dict | None = None,
        headers: dict | None = None,
        mounts: dict | None = None,
    ):
        self.root = Path(root)
        if mounts is None:
            mounts = {"/web/": ROOT / "web"}
        self.httpd = make_server(
            "127.0.0.1",
            0,
            {**mounts, "/": self.root},
            quiet=True,
            routes=routes,
            headers=headers,
            cache_control="no-store",
            record=True,
        )
        self.add_route(TEST_PAGE_PATH, "text/html; charset=utf-8", TEST_PAGE)
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="e2e-http", daemon=True)

    def add_route(self, path: str, mime: str, body: bytes | str) -> None:
        self.httpd.add_route(path, mime, body)

    @property
    def log(self) -> list:
        return self.httpd.log

    def url(self, path: str) -> str:
        return self.base_url + "/" + path.lstrip("/")

    def start(self) -> AssetServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def load_script(name: str):
    """A script of scripts/ (e.g. "fetch_web_assets") as a module, without running its main()."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def read_manifest() -> dict:
    return json.loads(MANIFEST.read_text())


def missing_assets() -> list[str]:
    """What scripts/fetch_web_assets.py still has to provide (empty when ready)."""
    need = [
        WEB_ROOT / "pyodide" / "pyodide.mjs",
        WEB_ROOT / "pyodide" / "pyodide.asm.wasm",
        WEB_ROOT / "pyodide" / "python_stdlib.zip",
        MANIFEST,
    ]
    missing = [str(p.relative_to(ROOT)) for p in need if not p.is_file()]
    if not missing:
        wheels = read_manifest().get("wheels", {})
        for name in ("micropip", "packaging", "trueno_web", *PYTEST_WHEELS):
            if name not in wheels or not (WEB_ROOT / "wheels" / wheels[name]["file"]).is_file():
                missing.append(f"build/web/wheels/{name}-*.whl")
    return missing


# ----------------------------------------------------------------------------------- browser


def chromium_executable() -> str | None:
    """$TRUENO_E2E_CHROMIUM, else a system chromium, else None (Playwright's own download)."""
    env = os.environ.get("TRUENO_E2E_CHROMIUM")
    if env:
        return env
    for cand in ("/usr/bin/chromium", "/usr/bin/chromium-browser"):
        if os.path.exists(cand):
            return cand
    return shutil.which("chromium") or shutil.which("chromium-browser")


def chromium_args(*, webgpu: bool = True, extra=()) -> list[str]:
    args = list(BASE_ARGS)
    if webgpu:
        args += WEBGPU_ARGS
    args += list(extra)
    extra_env = os.environ.get("TRUENO_E2E_CHROMIUM_ARGS", "").split()
    return args + extra_env


def launch_chromium(playwright, *, webgpu: bool = True, headless: bool = True, extra_args=()):
    return playwright.chromium.launch(
        executable_path=chromium_executable(), headless=headless, args=chromium_args(webgpu=webgpu, extra=extra_args)
    )


# ------------------------------------------------------------------------------------ pyodide


class PyodideError(Exception):
    """Python (or JS) code run in the page raised. .py_type is the exception type name,
    .py_traceback the traceback text as Pyodide formatted it."""

    def __init__(self, py_type: str, message: str, code: str = ""):
        self.py_type = py_type
        self.py_traceback = message
        self.code = code
        super().__init__(f"{py_type} raised inside Pyodide:\n{message.rstrip()}")


class PageBroken(RuntimeError):
    """The tab timed out, crashed or was closed; the fixture replaces it."""


def is_local_url(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme in ("data", "blob", "about", "chrome-error"):
        return True
    return parts.scheme in ("http", "https", "ws", "wss") and parts.hostname == "127.0.0.1"


@dataclass
class PageLog:
    requests: list = field(default_factory=list)  # every URL the page asked for
    blocked: list = field(default_factory=list)  # non-local URLs (aborted)
    console: list = field(default_factory=list)  # (type, text) of every console message
    console_errors: list = field(default_factory=list)  # console.error texts
    webgpu_errors: list = field(default_factory=list)  # uncaptured WebGPU errors (warnings)
    page_errors: list = field(default_factory=list)  # uncaught exceptions
    failed_requests: list = field(default_factory=list)  # (url, failure) of local requests
    allowed_errors: list = field(default_factory=list)  # regexes that excuse console errors

    def reset(self):
        for lst in (
            self.requests,
            self.blocked,
            self.console,
            self.console_errors,
            self.webgpu_errors,
            self.page_errors,
            self.failed_requests,
            self.allowed_errors,
        ):
            lst.clear()

    def problems(self) -> list[str]:
        out = [f"request to a non-local URL: {u}" for u in self.blocked]
        for text in self.console_errors:
            if not any(re.search(p, text) for p in self.allowed_errors):
                out.append(f"console error: {text}")
        for text in self.webgpu_errors:
            if not any(re.search(p, text) for p in self.allowed_errors):
                out.append(f"uncaptured WebGPU error: {text.strip()}")
        for text in self.page_errors:
            if not any(re.search(p, text) for p in self.allowed_errors):
                out.append(f"uncaught page error: {text}")
        return out


_ids = itertools.count(1)

# Chrome reports a WebGPU error that nobody captured (no error scope, no `uncapturederror`
# handler calling preventDefault) as a console *warning* such as
#   "Dispatch workgroup count X (65536) exceeds max ... \n - While encoding [ComputePassEncoder]..."
# and the work is silently dropped. The harness counts these as problems.
WEBGPU_WARNING_RE = re.compile(
    r"\n - While (?:calling|encoding|finishing|validating)|\[Invalid \w+"
    r"|is invalid due to a previous error|no more warnings will be reported"
)


class PyodidePage:
    """One tab with Pyodide loaded from the local server.

    gpu: WEBGPU, NO_ADAPTER (needs a browser launched with webgpu=False) or NO_NAVIGATOR_GPU.
    install_project: micropip.install the project wheel from its localhost URL.
    """

    def __init__(
        self,
        browser,
        server: AssetServer,
        *,
        gpu: str = WEBGPU,
        install_project: bool = True,
        echo_output: bool = True,
        boot_timeout_s: float = 120.0,
    ):
        if gpu not in GPU_MODES:
            raise ValueError(f"gpu must be one of {GPU_MODES}, got {gpu!r}")
        self.server = server
        self.gpu = gpu
        self.echo_output = echo_output
        self.log = PageLog()
        self.broken: str | None = None
        self.output: list[tuple[str, str]] = []  # (stream, line) of everything Pyodide printed
        self.timings: dict[str, float] = {}
        self._installed: set[str] = set()
        self._done: set[int] = set()  # run ids the page reported finished
        self.manifest = read_manifest()

        self.context = browser.new_context()
        self.context.expose_binding("__e2e_done", lambda _source, rid: self._done.add(rid))
        if gpu == NO_NAVIGATOR_GPU:
            # navigator.gpu is an accessor on Navigator.prototype (and WorkerNavigator's, which
            # init scripts do not reach: workers still see it)
            self.context.add_init_script("delete Navigator.prototype.gpu;")
        self.context.route(lambda url: not is_local_url(url), self._block)
        self.page = self.context.new_page()
        self.page.on("request", lambda r: self.log.requests.append(r.url))
        self.page.on("requestfailed", self._on_request_failed)
        self.page.on("console", self._on_console)
        self.page.on("pageerror", lambda e: self.log.page_errors.append(str(e)))
        self.page.on("crash", lambda _p: self._mark_broken("renderer crashed"))
        self.page.on("close", lambda _p: self._mark_broken("page closed"))

        try:
            self._boot(install_project, boot_timeout_s)
        except BaseException:
            self.close()
            raise

    def _boot(self, install_project: bool, boot_timeout_s: float) -> None:
        t0 = time.perf_counter()
        self.page.goto(self.server.url(TEST_PAGE_PATH))
        self.page.wait_for_function("window.__e2e_ready === true", timeout=boot_timeout_s * 1000)
        self.page.evaluate(
            "opts => window.__e2e.bootStart(opts)",
            {"preload": [self.wheel_url("micropip"), self.wheel_url("packaging")]},
        )
        self.page.wait_for_function("window.__e2e.booted !== undefined", polling=20, timeout=boot_timeout_s * 1000)
        info = self.page.evaluate("window.__e2e.booted")
        self._drain()
        if not info["ok"]:
            raise RuntimeError("loading Pyodide failed:\n" + info["message"] + "\n" + "\n".join(self.log.problems()))
        self.pyodide_version = info["pyodide"]
        self.timings["load_pyodide_ms"] = info["load_ms"]
        self.timings["load_micropip_ms"] = info["preload_ms"]
        self._installed.update({"micropip", "packaging"})
        if install_project:
            t1 = time.perf_counter()
            self.micropip_install(["trueno_web"])
            self.timings["install_project_ms"] = (time.perf_counter() - t1) * 1000
        self.timings["boot_total_ms"] = (time.perf_counter() - t0) * 1000

    # -- events
    def _block(self, route):
        self.log.blocked.append(route.request.url)
        route.abort("blockedbyclient")

    def _on_request_failed(self, req):
        if is_local_url(req.url):
            self.log.failed_requests.append((req.url, req.failure))

    def _on_console(self, msg):
        text = msg.text
        self.log.console.append((msg.type, text))
        if msg.type == "error":
            # The aborted non-local request shows up as a console error too; it is reported once,
            # as the request.
            if "net::ERR_BLOCKED_BY_CLIENT" in text and self.log.blocked:
                return
            self.log.console_errors.append(text)
        elif msg.type == "warning" and WEBGPU_WARNING_RE.search(text):
            self.log.webgpu_errors.append(text)

    def _mark_broken(self, why: str):
        if self.broken is None:
            self.broken = why

    # -- helpers
    def wheel_url(self, name: str) -> str:
        return self.server.url("wheels/" + self.manifest["wheels"][name]["file"])

    def expect_console_error(self, pattern: str) -> None:
        """Excuse console errors, uncaptured WebGPU errors and page errors matching `pattern`
        (a regex, re.search) until the log is next reset (the fixtures reset it per test)."""
        self.log.allowed_errors.append(pattern)

    def check_clean(self) -> None:
        """Raise AssertionError listing non-local requests and unexpected console/page errors."""
        problems = self.log.problems()
        if problems:
            raise AssertionError("browser page problems:\n  " + "\n  ".join(problems))

    def _drain(self, taken=None):
        lines = (
            taken
            if taken is not None
            else self.page.evaluate("() => window.__e2e.out.splice(0, window.__e2e.out.length)")
        )
        for stream, text in lines:
            self.output.append((stream, text))
            if self.echo_output:
                print(f"[pyodide {stream}] {text}", file=sys.stderr if stream == "err" else sys.stdout)

    def run(self, code: str, *, args=None, timeout_s: float = 120.0, sync: bool = False):
        """Run `code` with pyodide.runPythonAsync; return its last expression, JSON round-tripped
        (json.loads of json.dumps with a lenient default: numpy arrays and array.array via
        tolist(), JsProxy via to_py(), anything else as repr()). `args` (JSON-able) is bound to
        the Python global E2E_ARGS (as a dict/list) before the code runs.
        sync=True runs it with pyodide.runPython instead: no top-level await, and JSPI's
        run_sync is unavailable (can_run_sync() is False), as in a sync JS -> Python callback.
        All runs share one globals namespace (pyodide.globals) per page.
        Raises PyodideError if the code raised, PageBroken on timeout or crash
        (the tab is then closed at once; the fixtures replace it)."""
        if self.broken:
            raise PageBroken(f"page unusable: {self.broken}")
        rid = next(_ids)
        try:
            self.page.evaluate(
                "([id, code, args, sync]) => window.__e2e.start(id, code, args, sync)", [rid, code, args, sync]
            )
            self._wait_done(rid, timeout_s)
            taken = self.page.evaluate("id => window.__e2e.take(id)", rid)
        except Exception as e:
            self._abandon(f"{type(e).__name__}: {e}")
            raise PageBroken(f"run_py did not finish ({type(e).__name__}): {e}\n--- code ---\n{code}") from None
        self._drain(taken["out"])
        res = taken["result"]
        self.timings["last_run_ms"] = res["ms"]
        if not res["ok"]:
            msg = res["message"] + (("\n" + res["stack"]) if res.get("stack") else "")
            raise PyodideError(res["type"], msg, code)
        return json.loads(res["json"])

    def _wait_done(self, rid: int, timeout_s: float) -> None:
        """Wait until the page reports run `rid` finished (the __e2e_done binding), by this process's
        clock. Nothing here waits on the page's main thread: a page spinning in `while True: pass`
        answers no evaluate() and no wait_for_function() poll (and Playwright's wait_for_function,
        timing out on such a page, then awaits a clean-up evaluate() forever). wait_for_timeout() is a
        timer in Playwright's driver, so the deadline holds however busy the page or the machine."""
        deadline = time.monotonic() + timeout_s
        pause = 0.001
        while rid not in self._done:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no result within {timeout_s:g} s (the page is busy or hung)")
            self.page.wait_for_timeout(min(pause, left) * 1000)
            pause = min(2 * pause, 0.05)
        self._done.discard(rid)

    def _abandon(self, why: str) -> None:
        """Mark the page broken and close its context now: that kills its renderer, which may be
        spinning (a hung tab would otherwise keep a core busy until the pool replaces it)."""
        self._mark_broken(why)
        self.close()

    def micropip_install(self, names, *, deps: bool = True):
        """micropip.install the named wheels from build/web/wheels by their localhost URLs."""
        names = [n for n in names if n not in self._installed]
        if not names:
            return
        urls = [self.wheel_url(n) for n in names]
        self.run(
            "import micropip\nawait micropip.install(E2E_ARGS['urls'], deps=E2E_ARGS['deps'])\ndel E2E_ARGS",
            args={"urls": urls, "deps": deps},
        )
        self._installed.update(names)

    def ensure_pytest(self):
        """Install pytest and its deps (pure wheels from build/web/wheels) if not there yet."""
        if "pytest" in self._installed:
            return
        t0 = time.perf_counter()
        missing = [n for n in PYTEST_WHEELS if n not in self._installed]
        urls = [self.wheel_url(n) for n in missing]
        # loadPackage reports a failed download on stderr/console, it does not throw
        self.page.evaluate("urls => pyodide.loadPackage(urls, {messageCallback: () => {}})", urls)
        self._drain()
        self.run("import pytest, pluggy, iniconfig, pygments")
        self._installed.update(missing)
        self.timings["install_pytest_ms"] = (time.perf_counter() - t0) * 1000

    def run_pytest(
        self,
        files: dict | None = None,
        args=("-q",),
        *,
        rootdir: str = "/home/pyodide/e2e_pytest",
        timeout_s: float = 600.0,
    ) -> dict:
        """Run pytest *inside Pyodide* (installing it first if needed).

        files: {relative path: source text} written under `rootdir` first (use write_tree() for a
        local directory). args: pytest arguments; `rootdir` is appended as the path to collect
        unless args already name a path (anything not starting with "-").
        The call runs under runPythonAsync, so sync test bodies can use pyodide.ffi.run_sync().
        Returns {"exit_code", "passed", "failed", "skipped", "errors", "xfailed", "xpassed",
        "failures": [nodeid, ...], "output": pytest's terminal output}.
        """
        self.ensure_pytest()
        for rel, text in (files or {}).items():
            self.write_file(f"{rootdir.rstrip('/')}/{rel}", text)
        args = list(args)
        if not any(not a.startswith("-") for a in args):
            args.append(rootdir)
        return self.run(_RUN_PYTEST, args={"args": args, "rootdir": rootdir}, timeout_s=timeout_s)

    def run_test_files(
        self, local_dir, files, dest: str, *, select: str, marks: str = "not slow", args=(), timeout_s: float = 900.0
    ) -> dict:
        """Copy `local_dir`'s *.py into Pyodide's FS at `dest` and run pytest there on `files` (names in it)
        with `-m marks -k select` (marks "": every mark) and any more pytest `args`.
        Returns run_pytest's dict plus "per_file" (passed) and "seconds_per_file" (from the JUnit XML
        report), so a file that stops collecting inside Pyodide shows."""
        self.write_tree(local_dir, dest, "*.py")
        report = f"{dest}/junit.xml"
        pytest_args = [
            "-q",
            "-p",
            "no:cacheprovider",
            *(["-m", marks] if marks else []),
            "-k",
            select,
            f"--junitxml={report}",
            *args,
            *[f"{dest}/{f}" for f in files],
        ]
        result = self.run_pytest(args=pytest_args, rootdir=dest, timeout_s=timeout_s)
        cases = list(ET.fromstring(self.run(f"open({report!r}).read()")).iter("testcase"))
        passed, seconds = Counter(), Counter()
        for case in cases:
            name = case.get("classname", "").split(".")[-1] + ".py"
            seconds[name] += float(case.get("time", 0) or 0)
            if not any(child.tag in ("failure", "error", "skipped") for child in case):
                passed[name] += 1
        result["per_file"] = dict(passed)
        result["seconds_per_file"] = {name: round(t, 1) for name, t in seconds.items()}
        return result

    def write_tree(self, local_dir, dest: str, pattern: str = "**/*.py") -> list[str]:
        """Copy files under a local directory (matching `pattern`) into Pyodide's FS at `dest`."""
        local_dir = Path(local_dir)
        written = []
        for f in sorted(local_dir.glob(pattern)):
            if f.is_file() and "__pycache__" not in f.parts:
                target = f"{dest.rstrip('/')}/{f.relative_to(local_dir).as_posix()}"
                self.write_file(target, f.read_text())
                written.append(target)
        return written

    def write_file(self, path: str, text: str) -> None:
        """pyodide.FS.writeFile (creating parent directories)."""
        self.page.evaluate(
            """([path, text]) => {
            const dir = path.substring(0, path.lastIndexOf('/'));
            if (dir) pyodide.FS.mkdirTree(dir);
            pyodide.FS.writeFile(path, text);
        }""",
            [path, text],
        )

    def close(self) -> None:
        try:
            self.context.close()
        except Exception:
            pass


_RUN_PYTEST = r"""
def _e2e_run_pytest(args, rootdir):
    import contextlib, io, sys
    import pytest
    # a second run must re-import the test modules, not reuse the first run's
    for name, mod in list(sys.modules.items()):
        if (getattr(mod, "__file__", None) or "").startswith(rootdir.rstrip("/") + "/"):
            del sys.modules[name]

    class _Count:
        def __init__(self):
            self.c = dict(passed=0, failed=0, skipped=0, errors=0, xfailed=0, xpassed=0)
            self.failures = []

        def pytest_runtest_logreport(self, report):
            xfail = hasattr(report, "wasxfail")
            if report.when == "call":
                key = ("xfailed" if report.skipped else "xpassed") if xfail else report.outcome
            elif report.failed:
                key = "errors"
            elif report.skipped:
                key = "xfailed" if xfail else "skipped"
            else:
                return
            self.c[key] += 1
            if report.failed:
                self.failures.append(report.nodeid)

        def pytest_collectreport(self, report):
            if report.failed:
                self.c["errors"] += 1
                self.failures.append(report.nodeid or "<collection>")

    count = _Count()
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        code = pytest.main(["-p", "no:cacheprovider", f"--rootdir={rootdir}", *args],
                           plugins=[count])
    return dict(exit_code=int(code), failures=count.failures, output=buf.getvalue(), **count.c)

_e2e_run_pytest(E2E_ARGS["args"], E2E_ARGS["rootdir"])
"""


def check_counts(result: dict, at_least: int, per_file: dict) -> None:
    """Assert a run_test_files result: no failure or error, at least `at_least` passed in all and
    per_file[name] passed in each named file."""
    assert result["failed"] == 0 and result["errors"] == 0, result["output"][-6000:]
    assert result["passed"] >= at_least, result["output"][-3000:]
    for name, least in per_file.items():
        assert result["per_file"].get(name, 0) >= least, (name, result["per_file"])


def run_py(page, code: str, *, args=None, timeout_s: float = 120.0, sync: bool = False):
    """Run Python in a PyodidePage (see PyodidePage.run)."""
    return page.run(code, args=args, timeout_s=timeout_s, sync=sync)

"""Fixtures for the browser tests (see e2e/harness.py).

    web_server            session: build/web/ on http://127.0.0.1:<port>/
    browser               session: headless Chromium with WebGPU (SwiftShader)
    browser_no_webgpu     session, started on first use: Chromium without --enable-unsafe-webgpu
    pyodide_page          a PyodidePage with Pyodide + micropip + the project wheel, shared per GPU
                          mode for the whole session (Pyodide loads once per tab, ~2-3 s). The GPU
                          mode is "webgpu" unless parametrized indirectly:
                              @pytest.mark.parametrize("pyodide_page", ["no-adapter"], indirect=True)
                          Per test: the request/console log is reset before, and checked after
                          (a request not to 127.0.0.1, a console error or an uncaptured WebGPU
                          error fails the test at teardown; page.expect_console_error(regex)
                          excuses one). A tab that hung or crashed is replaced for the next test.
    pyodide_page_fallback the same, parametrized over both no-GPU modes ("no-adapter",
                          "no-navigator-gpu"): a fallback test runs once per mode
    fresh_pyodide_page    like pyodide_page, but a new tab for this test only

Before the session the project wheel is rebuilt if its sources changed (set TRUENO_E2E_NO_REBUILD=1
to skip). The third-party assets come from `python scripts/fetch_web_assets.py`; without them every
test errors with that instruction.
"""

from __future__ import annotations

import os

import pytest

from e2e.harness import (
    GPU_MODES,
    NO_ADAPTER,
    NO_NAVIGATOR_GPU,
    WEBGPU,
    AssetServer,
    PyodidePage,
    launch_chromium,
    load_script,
    missing_assets,
)


@pytest.fixture(scope="session")
def web_assets():
    fetch = load_script("fetch_web_assets")
    if (fetch.PYODIDE_DIR / "pyodide.mjs").is_file() and os.environ.get("TRUENO_E2E_NO_REBUILD") != "1":
        fetch.build_project_wheel(force=False)
    missing = missing_assets()
    if missing:
        pytest.fail(
            "browser assets missing: " + ", ".join(missing) + "\n  run: python scripts/fetch_web_assets.py",
            pytrace=False,
        )
    return fetch.WEB


@pytest.fixture(scope="session")
def web_server(web_assets):
    with AssetServer(web_assets) as server:
        yield server


@pytest.fixture(scope="session")
def playwright_driver():
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    yield pw
    pw.stop()


@pytest.fixture(scope="session")
def browser(playwright_driver):
    b = launch_chromium(playwright_driver, webgpu=True)
    yield b
    b.close()


@pytest.fixture(scope="session")
def browser_no_webgpu(playwright_driver):
    b = launch_chromium(playwright_driver, webgpu=False)
    yield b
    b.close()


class _PagePool:
    """One live PyodidePage per GPU mode, replaced when it broke."""

    def __init__(self, request, server):
        self.request = request
        self.server = server
        self.pages: dict[str, PyodidePage] = {}

    def browser_for(self, mode: str):
        name = "browser_no_webgpu" if mode == NO_ADAPTER else "browser"
        return self.request.getfixturevalue(name)

    def new(self, mode: str) -> PyodidePage:
        return PyodidePage(self.browser_for(mode), self.server, gpu=mode)

    def get(self, mode: str) -> PyodidePage:
        page = self.pages.get(mode)
        if page is None or page.broken:
            if page is not None:
                page.close()
            page = self.pages[mode] = self.new(mode)
        return page

    def close(self):
        for page in self.pages.values():
            page.close()


@pytest.fixture(scope="session")
def _pyodide_pool(request, web_server):
    pool = _PagePool(request, web_server)
    yield pool
    pool.close()


def _mode(request) -> str:
    mode = getattr(request, "param", WEBGPU)
    if mode not in GPU_MODES:
        raise ValueError(f"unknown GPU mode {mode!r}; use one of {GPU_MODES}")
    return mode


def _checked(page: PyodidePage):
    page.log.reset()
    yield page
    problems = page.log.problems()
    page.log.reset()
    if problems:
        pytest.fail("browser page problems:\n  " + "\n  ".join(problems), pytrace=False)


@pytest.fixture
def pyodide_page(request, _pyodide_pool):
    yield from _checked(_pyodide_pool.get(_mode(request)))


@pytest.fixture(params=[NO_ADAPTER, NO_NAVIGATOR_GPU])
def pyodide_page_fallback(request, _pyodide_pool):
    yield from _checked(_pyodide_pool.get(request.param))


@pytest.fixture
def fresh_pyodide_page(request, _pyodide_pool):
    page = _pyodide_pool.new(_mode(request))
    try:
        yield from _checked(page)
    finally:
        page.close()


@pytest.fixture(scope="module")
def demo_server(web_assets, tmp_path_factory):
    """`python -m trueno_web serve` for one test module (e2e/test_demo_page.py's ServeProcess)."""
    from e2e.test_demo_page import ServeProcess

    server = ServeProcess(tmp_path_factory.mktemp("serve") / "serve.log")
    yield server
    server.stop()


@pytest.fixture(scope="module", params=["webgpu", "no-webgpu"])
def demo(request, demo_server):
    """The demo page opened once per test module, with WebGPU and without (e2e/test_demo_page.py's DemoPage)."""
    from e2e.test_demo_page import WEBGPU, DemoPage

    browser = request.getfixturevalue("browser" if request.param == WEBGPU else "browser_no_webgpu")
    page = DemoPage(browser, demo_server)
    page.mode = request.param
    try:
        page.open()
        yield page
    finally:
        page.close()

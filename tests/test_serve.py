"""`python -m trueno_web serve`: only the page's files, no traversal, right MIME types, 127.0.0.1."""

from __future__ import annotations

import http.client
import inspect
import os
import re
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from trueno_web.app import server as serve
from trueno_web.app.server import Layout, make_server, resolve

ROOT = Path(__file__).resolve().parent.parent
SECRET = b"TOP-SECRET-OUTSIDE-THE-SERVED-FOLDERS"


@pytest.fixture(scope="module")
def layout(tmp_path_factory) -> Layout:
    tmp_path = tmp_path_factory.mktemp("serve")
    (tmp_path / "secret.txt").write_bytes(SECRET)
    web = tmp_path / "site" / "web"
    assets = tmp_path / "site" / "assets"
    for d in (web, assets / "pyodide", assets / "wheels"):
        d.mkdir(parents=True)
    files = {
        web / "index.html": b"<!doctype html><title>page</title>",
        web / "app.mjs": b"export {};",
        web / "style.css": b"body{}",
        web / ".hidden": b"dot",
        assets / "pyodide" / "pyodide.mjs": b"export {};",
        assets / "pyodide" / "pyodide.asm.wasm": b"\0asm\1\0\0\0",
        assets / "pyodide" / "pyodide-lock.json": b"{}",
        assets / "pyodide" / "python_stdlib.zip": b"PK",
        assets / "pyodide" / ".fetched": b"314.0.7",
        assets / "wheels" / "manifest.json": b"{}",
        assets / "wheels" / "trueno_web-0.1.0-py3-none-any.whl": b"PK",
        assets / "wheels" / "micropip-0.11.1-py3-none-any.whl": b"PK",
        assets / "secret.txt": SECRET,  # next to pyodide/ and wheels/, but not under either
    }
    for path, body in files.items():
        path.write_bytes(body)
    (web / "sub").mkdir()
    (web / "sub" / "a.txt").write_bytes(b"a")
    try:
        (web / "escape.txt").symlink_to(tmp_path / "secret.txt")
        (web / "escape_dir").symlink_to(tmp_path)
    except OSError:
        pass
    return Layout(web=web, pyodide=assets / "pyodide", wheels=assets / "wheels")


@pytest.fixture(scope="module")
def server(layout):
    srv = make_server("127.0.0.1", 0, layout, quiet=True)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def get(srv, raw_path: str, method: str = "GET", headers: dict | None = None):
    """Send the path exactly as given (http.client does not normalise it)."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.server_address[1], timeout=10)
    try:
        conn.putrequest(method, raw_path, skip_accept_encoding=True)
        for k, v in (headers or {}).items():
            conn.putheader(k, v)
        conn.endheaders()
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()


# --------------------------------------------------------------------------------- what is served


@pytest.mark.parametrize(
    "path, mime",
    [
        ("/", "text/html; charset=utf-8"),
        ("/index.html", "text/html; charset=utf-8"),
        ("/app.mjs", "text/javascript; charset=utf-8"),
        ("/style.css", "text/css; charset=utf-8"),
        ("/pyodide/pyodide.mjs", "text/javascript; charset=utf-8"),
        ("/pyodide/pyodide.asm.wasm", "application/wasm"),
        ("/pyodide/pyodide-lock.json", "application/json"),
        ("/pyodide/python_stdlib.zip", "application/zip"),
        ("/wheels/manifest.json", "application/json"),
        ("/wheels/trueno_web-0.1.0-py3-none-any.whl", "application/zip"),
        ("/sub/a.txt", "text/plain; charset=utf-8"),
        ("/app.mjs?v=2#x", "text/javascript; charset=utf-8"),
    ],
)
def test_serves_files_with_mime_types(server, path, mime):
    status, headers, body = get(server, path)
    assert status == 200
    assert headers["Content-Type"] == mime
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert int(headers["Content-Length"]) == len(body) > 0


def test_head_and_conditional_get(server):
    status, headers, body = get(server, "/pyodide/pyodide.asm.wasm", method="HEAD")
    assert (status, body, headers["Content-Type"]) == (200, b"", "application/wasm")
    old = "Thu, 01 Jan 1970 00:00:00 GMT"
    assert get(server, "/app.mjs", headers={"If-Modified-Since": old})[0] == 200
    assert get(server, "/app.mjs", headers={"If-Modified-Since": "garbage"})[0] == 200
    last = get(server, "/app.mjs")[1]["Last-Modified"]
    assert get(server, "/app.mjs", headers={"If-Modified-Since": last})[0] == 304


@pytest.mark.parametrize(
    "path, policy",
    [
        ("/pyodide/pyodide.asm.wasm", serve.IMMUTABLE),
        ("/pyodide/pyodide.mjs", serve.IMMUTABLE),
        ("/pyodide/python_stdlib.zip", serve.IMMUTABLE),
        ("/wheels/micropip-0.11.1-py3-none-any.whl", serve.IMMUTABLE),
        ("/", "no-cache"),
        ("/index.html", "no-cache"),
        ("/app.mjs", "no-cache"),
        ("/style.css", "no-cache"),
        ("/wheels/manifest.json", "no-cache"),
        ("/wheels/trueno_web-0.1.0-py3-none-any.whl", "no-cache"),
    ],
)
def test_pinned_assets_are_cached_and_the_page_revalidated(server, path, policy):
    """Pyodide and the pinned wheels: a year, immutable (a reload asks for nothing); the page, its code,
    the manifest and the project wheel (rebuilt under one name): revalidated, 304 while unchanged."""
    status, headers, _ = get(server, path)
    assert (status, headers["Cache-Control"]) == (200, policy)
    assert serve.IMMUTABLE == "public, max-age=31536000, immutable"
    if policy == "no-cache":
        assert get(server, path, headers={"If-Modified-Since": headers["Last-Modified"]})[0] == 304


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
def test_only_get_and_head(server, method):
    assert get(server, "/index.html", method=method)[0] in (405, 501)


# --------------------------------------------------------------------------------- what is refused

TRAVERSALS = [
    "/../secret.txt",
    "/../../secret.txt",
    "/pyodide/../../secret.txt",
    "/wheels/../secret.txt",
    "/pyodide/../../../secret.txt",
    "/./index.html",
    "/pyodide/./pyodide.mjs",
    "/%2e%2e/secret.txt",
    "/%2E%2E/secret.txt",
    "/.%2e/secret.txt",
    "/%2e./secret.txt",
    "/pyodide/%2e%2e/%2e%2e/secret.txt",
    "/%2e%2e%2fsecret.txt",
    "/..%2fsecret.txt",
    "/..%2Fsecret.txt",
    "/pyodide/..%2f..%2fsecret.txt",
    "/pyodide%2f..%2f..%2fsecret.txt",
    "/..\\secret.txt",
    "/..%5csecret.txt",
    "/..%5Csecret.txt",
    "/pyodide\\..\\..\\secret.txt",
    "/%00",
    "/index.html%00.png",
]
NOT_FOUND = [
    "/secret.txt",
    "/%252e%252e/secret.txt",
    "/%252e%252e%252fsecret.txt",
    "//secret.txt",
    "//etc/passwd",
    "/pyodide/",
    "/wheels",
    "/wheels/",
    "/sub/",
    "/sub",
    "/.hidden",
    "/pyodide/.fetched",
    "/escape.txt",
    "/escape_dir/secret.txt",
    "/nope.html",
    "/%ff%fe",
    "/pyodide//pyodide.mjs",
]


@pytest.mark.parametrize("path", TRAVERSALS)
def test_traversal_is_refused(server, path):
    status, _, body = get(server, path)
    assert status in (403, 404), (path, status)
    assert SECRET not in body


@pytest.mark.parametrize("path", TRAVERSALS)
def test_traversal_resolves_to_nothing(layout, path):
    status, target = resolve(layout, path)
    assert target is None and status in (400, 403, 404)


@pytest.mark.parametrize(
    "path",
    [
        "/../secret.txt",
        "/%2e%2e/secret.txt",
        "/..%2fsecret.txt",
        "/..\\secret.txt",
        "/%2e%2e%2fsecret.txt",
        "/..%5csecret.txt",
    ],
)
def test_traversal_is_forbidden_not_just_missing(server, path):
    assert get(server, path)[0] == 403


@pytest.mark.parametrize("path", NOT_FOUND)
def test_only_the_pages_files(server, path):
    status, _, body = get(server, path)
    assert status == 404, (path, status)
    assert SECRET not in body


def test_absolute_form_and_odd_request_targets(server):
    assert get(server, "*")[0] in (400, 404)
    status, _, body = get(server, "http://127.0.0.1/../secret.txt")
    assert status in (400, 403, 404) and SECRET not in body


# --------------------------------------------------------------------------------- binding


def test_binds_loopback_by_default():
    assert inspect.signature(serve.serve_forever).parameters["host"].default == "127.0.0.1"
    assert inspect.signature(make_server).parameters["host"].default == "127.0.0.1"
    from trueno_web import __main__ as cli

    src = inspect.getsource(cli.main)
    assert re.search(r'"--host",\s*default="127\.0\.0\.1"', src)


def _start_cli(env=None, args=("-m", "trueno_web", "serve", "--port", "0")):
    return subprocess.Popen(
        [sys.executable, *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.skipif(not (ROOT / "web" / "index.html").is_file(), reason="needs the checkout's web/")
def test_cli_prints_a_loopback_url_and_serves_the_page():
    proc = _start_cli()
    try:
        line = proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert m, line
        port = int(m.group(1))
        assert port > 0
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/")
        resp = conn.getresponse()
        assert resp.status == 200 and b"trueno_web" in resp.read()
        for path, mime in (
            ("/app.mjs", "text/javascript"),
            ("/worker.mjs", "text/javascript"),
            ("/config.mjs", "text/javascript"),
        ):
            conn.request("GET", path)
            resp = conn.getresponse()
            resp.read()
            assert resp.status == 200 and resp.getheader("Content-Type").startswith(mime), path
        if (ROOT / "build" / "web" / "pyodide" / "pyodide.asm.wasm").is_file():
            conn.request("HEAD", "/pyodide/pyodide.asm.wasm")
            resp = conn.getresponse()
            resp.read()
            assert resp.status == 200 and resp.getheader("Content-Type") == "application/wasm"
            assert resp.getheader("Cache-Control") == serve.IMMUTABLE
        conn.request("GET", "/pyproject.toml")  # the checkout is not served, only web/ and build/web/...
        resp = conn.getresponse()
        resp.read()
        assert resp.status == 404
        conn.close()
    finally:
        proc.terminate()
        proc.wait(10)


def test_cli_without_the_page_says_what_is_missing(tmp_path):
    proc = _start_cli({"TRUENO_WEB_DIR": str(tmp_path / "nowhere")})
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 2
    assert "index.html" in err and "web/" in err and "checkout" in err
    assert "http://" not in out


def test_layout_missing_lists_assets(tmp_path):
    lay = Layout(web=tmp_path, pyodide=tmp_path / "p", wheels=tmp_path / "w")
    missing = lay.missing()
    assert len(missing) == 3 and any("pyodide.mjs" in m for m in missing)


def test_the_jupyterlite_site_is_mounted_at_lite(tmp_path):
    """The try-it cell's link: /lite/<file> is the JupyterLite site's file, where a Layout names one; without
    one, /lite/ is the page's folder like any other path."""
    web, lite = tmp_path / "web", tmp_path / "lite"
    (lite / "lab").mkdir(parents=True)
    web.mkdir()
    (lite / "lab" / "index.html").write_bytes(b"lab")
    with_lite = Layout(web=web, pyodide=tmp_path / "p", wheels=tmp_path / "w", lite=lite)
    assert resolve(with_lite, "/lite/lab/index.html?path=trueno_web_tour.ipynb") == (200, lite / "lab" / "index.html")
    assert resolve(with_lite, "/lite/../web/x") == (403, None)
    without = Layout(web=web, pyodide=tmp_path / "p", wheels=tmp_path / "w")
    assert resolve(without, "/lite/lab/index.html") == (404, None)
    (web / "lite").mkdir()
    (web / "lite" / "x.txt").write_bytes(b"x")
    assert resolve(without, "/lite/x.txt") == (200, web / "lite" / "x.txt")


# --------------------------------------------------------------------------------- one server for all


def test_a_mount_table_with_routes_headers_and_a_log(tmp_path):
    """The same server serves the e2e harness (build/web/ + in-memory pages, no-store, a request log)
    and the JupyterLite site (one folder; a folder's URL serves its index.html)."""
    site = tmp_path / "site"
    (site / "lab").mkdir(parents=True)
    (site / "lab" / "index.html").write_bytes(b"<!doctype html>lab")
    (site / "tour.ipynb").write_bytes(b"{}")
    (site / "font.woff2").write_bytes(b"wOF2")
    (site / "manifest.webmanifest").write_bytes(b"{}")
    (site / ".hidden").write_bytes(b"dot")
    (tmp_path / "secret.txt").write_bytes(SECRET)
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "page.mjs").write_bytes(b"export {};")
    srv = make_server(
        "127.0.0.1",
        0,
        {"/": site, "x": extra},
        quiet=True,
        cache_control="no-store",
        routes={"/__e2e__/index.html": ("text/html; charset=utf-8", "<p>test page</p>")},
        headers={"Cross-Origin-Opener-Policy": "same-origin"},
        record=True,
    )
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        for path, mime in (
            ("/lab/", "text/html; charset=utf-8"),
            ("/lab/index.html", "text/html; charset=utf-8"),
            ("/tour.ipynb", "application/json"),
            ("/font.woff2", "font/woff2"),
            ("/manifest.webmanifest", "application/manifest+json"),
            ("/x/page.mjs", "text/javascript; charset=utf-8"),
            ("/__e2e__/index.html", "text/html; charset=utf-8"),
        ):
            status, headers, body = get(srv, path)
            assert (status, headers["Content-Type"]) == (200, mime), path
            assert headers["Cache-Control"] == "no-store" and headers["Cross-Origin-Opener-Policy"] == "same-origin"
        assert get(srv, "/__e2e__/index.html")[2] == b"<p>test page</p>"
        assert get(srv, "/__e2e__/index.html", method="HEAD")[2] == b""
        for path in ("/.hidden", "/lab", "/x/", "/x/../secret.txt", "/../secret.txt", "/%2e%2e/secret.txt"):
            status, _, body = get(srv, path)
            assert status in (403, 404) and SECRET not in body, path
        assert ("GET", "/tour.ipynb") in srv.log and ("HEAD", "/__e2e__/index.html") in srv.log
    finally:
        srv.shutdown()
        srv.server_close()


def test_there_is_one_static_server():
    """The demo page, the e2e harness and the JupyterLite site all use trueno_web/app/server.py:
    no other http.server handler, and no second MIME table, in the project's code."""
    own = ROOT / "trueno_web" / "app" / "server.py"
    files = [p for d in ("trueno_web", "e2e", "scripts", "bench", "tests") for p in (ROOT / d).rglob("*.py")]
    assert own in files
    for path in files:
        if path == own or path == Path(__file__).resolve():
            continue
        text = path.read_text()
        assert not re.search(r"\bhttp\.server\b|\bSimpleHTTPRequestHandler\b|\bmimetypes\b|extensions_map", text), path


def _busy_port():
    """A listening socket on a free loopback port (the other server), and its port."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock, sock.getsockname()[1]


def test_a_busy_port_moves_to_the_next_free_one(layout):
    sock, port = _busy_port()
    with sock:
        server, note = serve.make_server_near("127.0.0.1", port, layout, quiet=True)
        with server:
            got = server.server_address[1]
            assert got != port and port < got <= port + serve.PORT_TRIES
            assert note == f"port {port} is in use (another server?); using {got} instead"
        server, note = serve.make_server_near("127.0.0.1", 0, layout, quiet=True)
        with server:
            assert note is None and server.server_address[1] not in (0, port)


@pytest.mark.skipif(not (ROOT / "web" / "index.html").is_file(), reason="needs the checkout's web/")
@pytest.mark.parametrize(
    "args",
    [("-m", "trueno_web", "serve"), (str(ROOT / "scripts" / "build_jupyterlite.py"), "--serve", "--no-build")],
    ids=["serve", "build_jupyterlite"],
)
def test_a_second_server_says_so_in_one_line_and_serves(args):
    """Two servers on one port (the demo page and the notebook site both default to 8000): the second
    says it moved, in one line, and serves on the next port; no traceback."""
    sock, port = _busy_port()
    with sock:
        proc = _start_cli(args=(*args, "--port", str(port)))
        try:
            lines, urls = [], []
            while not urls and len(lines) < 5:  # up to the line with the URL
                lines.append(proc.stdout.readline())
                urls = [int(m) for m in re.findall(r"http://127\.0\.0\.1:(\d+)/", lines[-1])]
            moved = [line for line in lines if "in use" in line]
            assert urls and urls[0] != port, lines
            conn = http.client.HTTPConnection("127.0.0.1", urls[0], timeout=10)
            conn.request("HEAD", "/")
            assert conn.getresponse().status in (200, 404)
            conn.close()
        finally:
            proc.terminate()
            _, err = proc.communicate(timeout=10)
        # less the request log, and the warning about missing browser assets where they are not built
        said = [line for line in err.splitlines() if not line.startswith(("[serve]", "warning:", "  "))]
        note = moved[0].strip() if moved else said[0]
        assert note.endswith(f"port {port} is in use (another server?); using {urls[0]} instead"), (lines, err)
        assert "Traceback" not in err and len(said) <= 1, err

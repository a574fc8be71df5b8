"""`python -m trueno_web serve [--port N] [--host H]`: the static demo page on http://127.0.0.1:N/.

What is served, and nothing else:

    /                 web/index.html          the page (web/ of the checkout: index.html, *.mjs, style.css)
    /<file>           web/<file>
    /pyodide/<file>   build/web/pyodide/      Pyodide's core (scripts/fetch_web_assets.py puts it there)
    /wheels/<file>    build/web/wheels/       the project wheel + manifest.json (same script)

No directory listings, no dotfiles, GET and HEAD only. A path with `..` or `.` segments, a backslash,
a NUL, or an encoded slash/backslash (`%2f`, `%5c`) is refused with 403 (percent-encoding is decoded
once, so `%2e%2e` is `..`); anything else that does not name a file under one of the three folders
(symlinks included, checked after resolving) is 404. Binds 127.0.0.1 unless told otherwise; the page
makes no request that leaves the origin it was served from (with the default web/config.mjs).

The files live in a git checkout (web/ and build/web/ next to the package). Installed from a wheel,
there is no web/: the server says so and how to get it. TRUENO_WEB_DIR and TRUENO_WEB_ASSETS point
it at other folders (the page's files; the folder holding pyodide/ and wheels/).
"""

from __future__ import annotations

import email.utils
import http.server
import os
import shutil
import socketserver
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

CHECKOUT = Path(__file__).resolve().parent.parent

MIME = {
    ".html": "text/html; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".map": "application/json",
    ".wasm": "application/wasm",
    ".whl": "application/zip",
    ".zip": "application/zip",
    ".tar": "application/x-tar",
    ".png": "image/png",
    ".svg": "image/svg+xml",
    ".ico": "image/x-icon",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/plain; charset=utf-8",
    ".py": "text/x-python; charset=utf-8",
    ".wgsl": "text/plain; charset=utf-8",
}
FORBIDDEN_RAW = ("\\", "%5c", "%2f", "%00")  # checked case-insensitively on the raw path


def mime_type(path: Path | str) -> str:
    return MIME.get(Path(path).suffix.lower(), "application/octet-stream")


@dataclass(frozen=True)
class Layout:
    """Where the three served folders are."""

    web: Path
    pyodide: Path
    wheels: Path

    def mounts(self) -> tuple[tuple[str, Path], ...]:
        return (("/pyodide/", self.pyodide), ("/wheels/", self.wheels), ("/", self.web))

    def missing(self) -> list[str]:
        """What the page needs and is not there (empty when complete)."""
        out = []
        if not (self.web / "index.html").is_file():
            out.append(f"{self.web}/index.html (the demo page's files)")
        if not (self.pyodide / "pyodide.mjs").is_file():
            out.append(f"{self.pyodide}/pyodide.mjs (Pyodide; needed unless web/config.mjs points at a CDN)")
        if not (self.wheels / "manifest.json").is_file():
            out.append(f"{self.wheels}/manifest.json and the trueno_web wheel")
        return out


def default_layout() -> Layout:
    web = Path(os.environ.get("TRUENO_WEB_DIR") or CHECKOUT / "web")
    assets = Path(os.environ.get("TRUENO_WEB_ASSETS") or CHECKOUT / "build" / "web")
    return Layout(web=web, pyodide=assets / "pyodide", wheels=assets / "wheels")


def resolve(layout: Layout, raw_path: str) -> tuple[int, Path | None]:
    """(HTTP status, file) for a request path: (200, file), or (403 | 404 | 400, None)."""
    path = urlsplit(raw_path).path
    if not path.startswith("/"):
        return 400, None
    lowered = path.lower()
    if any(bad in lowered for bad in FORBIDDEN_RAW):
        return 403, None
    try:
        decoded = unquote(path, errors="strict")
    except UnicodeDecodeError:
        return 404, None
    if "\\" in decoded or "\x00" in decoded:
        return 403, None
    parts = decoded.split("/")[1:]
    if any(p in ("..", ".") for p in parts):
        return 403, None
    if decoded == "/":
        decoded = "/index.html"
    for prefix, folder in layout.mounts():
        if decoded.startswith(prefix):
            rel = [p for p in decoded[len(prefix):].split("/")]
            break
    else:  # pragma: no cover - "/" matches everything
        return 404, None
    if not rel or any(p == "" or p.startswith(".") for p in rel):
        return 404, None  # directories, empty segments, dotfiles
    try:
        base = folder.resolve(strict=True)
        target = base.joinpath(*rel).resolve(strict=True)
    except (OSError, RuntimeError, ValueError):
        return 404, None
    if not target.is_relative_to(base) or not target.is_file():
        return 404, None
    return 200, target


class DemoHandler(http.server.BaseHTTPRequestHandler):
    """Static files of one Layout (the server's `.layout`); see the module docstring."""

    server_version = "trueno_web-serve"
    sys_version = ""
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # one short line per request on stderr, unless quiet
        if not getattr(self.server, "quiet", False):
            sys.stderr.write(f"[serve] {self.address_string()} {fmt % args}\n")

    def _error(self, status: int) -> None:
        body = f"{status} {http.HTTPStatus(status).phrase}\n".encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _serve(self, with_body: bool) -> None:
        status, target = resolve(self.server.layout, self.path)
        if target is None:
            return self._error(status)
        stat = target.stat()
        mtime = int(stat.st_mtime)
        since = self.headers.get("If-Modified-Since")
        if since:
            try:
                if int(email.utils.parsedate_to_datetime(since).timestamp()) >= mtime:
                    self.send_response(304)
                    self.send_header("Cache-Control", "no-cache")
                    self.end_headers()
                    return
            except (TypeError, ValueError, IndexError, OverflowError):
                pass
        self.send_response(200)
        self.send_header("Content-Type", mime_type(target))
        self.send_header("Content-Length", str(stat.st_size))
        self.send_header("Last-Modified", email.utils.formatdate(mtime, usegmt=True))
        self.send_header("Cache-Control", "no-cache")  # wheels are rebuilt under the same name
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        if with_body:
            with open(target, "rb") as f:
                shutil.copyfileobj(f, self.wfile)

    def do_GET(self):
        self._serve(True)

    def do_HEAD(self):
        self._serve(False)


class DemoServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, layout: Layout, quiet: bool = False):
        import socket

        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.layout = layout
        self.quiet = quiet
        super().__init__(address, DemoHandler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def make_server(host: str = "127.0.0.1", port: int = 8000, layout: Layout | None = None,
                quiet: bool = False) -> DemoServer:
    """A DemoServer bound to (host, port) (port 0: any free one); call serve_forever() on it."""
    return DemoServer((host, port), layout or default_layout(), quiet=quiet)


def serve_forever(host: str = "127.0.0.1", port: int = 8000) -> int:
    """Serve the demo page until interrupted; prints its URL first. Returns the exit status."""
    layout = default_layout()
    if not (layout.web / "index.html").is_file():
        print(f"error: the demo page's files are not here: {layout.web}/index.html is missing.\n"
              "The page lives in web/ of a trueno_web git checkout and is not part of the wheel. Serve it from "
              "a checkout (git clone, then `python scripts/fetch_web_assets.py` and `python -m trueno_web serve`), "
              "or set TRUENO_WEB_DIR to a copy of web/ and TRUENO_WEB_ASSETS to a folder with pyodide/ and wheels/.",
              file=sys.stderr)
        return 2
    missing = layout.missing()
    if missing:
        print("warning: the page will not load without these (run `python scripts/fetch_web_assets.py` "
              "in the checkout):\n  " + "\n  ".join(missing), file=sys.stderr, flush=True)
    try:
        server = make_server(host, port, layout)
    except OSError as e:
        print(f"error: cannot listen on {host}:{port}: {e}", file=sys.stderr)
        return 1
    if host not in ("127.0.0.1", "localhost", "::1"):
        print(f"warning: listening on {host}, not only on this machine's loopback", file=sys.stderr, flush=True)
    print(f"trueno_web demo page: {server.url}  (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0

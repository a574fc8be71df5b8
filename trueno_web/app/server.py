"""The one static-file server of the project, on 127.0.0.1: the demo page (`python -m trueno_web serve`),
the browser tests' assets (e2e/harness.py) and the JupyterLite site (scripts/build_jupyterlite.py).

A server is a table of mounts, URL prefix -> folder (the longest prefix wins), plus optional in-memory
routes (exact path -> (MIME type, bytes)). The demo page's mounts (`Layout`):

    /                 web/index.html          the page (web/ of the checkout: index.html, *.mjs, style.css)
    /<file>           web/<file>
    /pyodide/<file>   build/web/pyodide/      Pyodide's core (scripts/fetch_web_assets.py puts it there)
    /wheels/<file>    build/web/wheels/       the project wheel + manifest.json (same script)
    /lite/<file>      build/jupyterlite/      the JupyterLite site, where scripts/build_jupyterlite.py built it
                                              (the page's "try it" cell links to its notebook)

Caching (`Layout.cache_control`): Pyodide and the pinned wheels never change under their URL (a new one is a
new pin in scripts/fetch_web_assets.py), so they are `public, max-age=31536000, immutable`; the page, its
code, manifest.json and the trueno_web wheel (rebuilt under one name) are `no-cache` (304 while unchanged).

Only files under the mounts: no directory listings (a path ending in `/` serves that folder's index.html),
no dotfiles, GET and HEAD only. A path with `..` or `.` segments, a backslash, a NUL, or an encoded slash or
backslash (`%2f`, `%5c`) is 403 (percent-encoding is decoded once: `%2e%2e` is `..`); anything else that
names no file under a mount (symlinks resolved first) is 404. Content types come from one table (`MIME`).
Binds 127.0.0.1 unless told otherwise; the page makes no request off its origin (default web/config.mjs).

The page's files live in a git checkout (web/ and build/web/ next to the package); installed from a wheel,
there is no web/, and the server says how to get it. TRUENO_WEB_DIR, TRUENO_WEB_ASSETS and TRUENO_WEB_LITE point
it at other folders (the page's files; the folder holding pyodide/ and wheels/; the JupyterLite site).
"""

from __future__ import annotations

import email.utils
import errno
import http.server
import os
import shutil
import socket
import socketserver
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

CHECKOUT = Path(__file__).resolve().parents[2]

# fmt: off
MIME = {  # several kinds per line: the table reads as one
    ".html": "text/html; charset=utf-8", ".mjs": "text/javascript; charset=utf-8",
    ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
    ".json": "application/json", ".map": "application/json", ".ipynb": "application/json",
    ".webmanifest": "application/manifest+json", ".wasm": "application/wasm",
    ".whl": "application/zip",  # what PyPI serves them as; micropip/pyodide only fetch bytes
    ".zip": "application/zip", ".tar": "application/x-tar", ".gz": "application/gzip",
    ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
    ".svg": "image/svg+xml", ".ico": "image/x-icon",
    ".woff": "font/woff", ".woff2": "font/woff2", ".ttf": "font/ttf", ".otf": "font/otf",
    ".eot": "application/vnd.ms-fontobject",
    ".txt": "text/plain; charset=utf-8", ".md": "text/plain; charset=utf-8", ".py": "text/x-python; charset=utf-8",
    ".wgsl": "text/plain; charset=utf-8",
}
# fmt: on
FORBIDDEN_RAW = ("\\", "%5c", "%2f", "%00")  # checked case-insensitively on the raw path
IMMUTABLE, REVALIDATE = "public, max-age=31536000, immutable", "no-cache"  # Cache-Control values (Layout)

Mounts = tuple[tuple[str, Path], ...]


def mime_type(path: Path | str) -> str:
    return MIME.get(Path(path).suffix.lower(), "application/octet-stream")


@dataclass(frozen=True)
class Layout:
    """Where the demo page's three served folders are."""

    web: Path
    pyodide: Path
    wheels: Path
    lite: Path | None = None

    def mounts(self) -> Mounts:
        lite = (("/lite/", self.lite),) if self.lite is not None else ()
        return (("/pyodide/", self.pyodide), ("/wheels/", self.wheels), *lite, ("/", self.web))

    @staticmethod
    def cache_control(url_path: str) -> str:
        """Long-lived for Pyodide and the pinned wheels, revalidated for everything else (see above)."""
        name = url_path.rsplit("/", 1)[-1]
        pinned_wheel = url_path.startswith("/wheels/") and name.endswith(".whl") and not name.startswith("trueno_web-")
        return IMMUTABLE if url_path.startswith("/pyodide/") or pinned_wheel else REVALIDATE

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
    lite = Path(os.environ.get("TRUENO_WEB_LITE") or CHECKOUT / "build" / "jupyterlite")
    return Layout(web=web, pyodide=assets / "pyodide", wheels=assets / "wheels", lite=lite)


MountSpec = Layout | Mapping[str, "Path | str"] | Iterable[tuple[str, "Path | str"]]


def as_mounts(spec: MountSpec) -> Mounts:
    """A Layout, {prefix: folder} or [(prefix, folder)] as ((prefix, folder), ...), each prefix of the
    form "/" or "/name/", longest first (so the most specific mount wins)."""
    if isinstance(spec, Layout):
        pairs = spec.mounts()
    elif isinstance(spec, Mapping):
        pairs = spec.items()
    else:
        pairs = spec
    out = {}
    for prefix, folder in pairs:
        inner = str(prefix).strip("/")
        out["/" + inner + "/" if inner else "/"] = Path(folder)
    return tuple(sorted(out.items(), key=lambda kv: -len(kv[0])))


def resolve(mounts: MountSpec, raw_path: str) -> tuple[int, Path | None]:
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
    if decoded.endswith("/"):
        decoded += "index.html"
    for prefix, folder in as_mounts(mounts):
        if decoded.startswith(prefix):
            rel = decoded[len(prefix) :].split("/")
            break
    else:
        return 404, None
    if not rel or any(p == "" or p.startswith(".") for p in rel):
        return 404, None  # empty segments, dotfiles
    try:
        base = folder.resolve(strict=True)
        target = base.joinpath(*rel).resolve(strict=True)
    except (OSError, RuntimeError, ValueError):
        return 404, None
    if not target.is_relative_to(base) or not target.is_file():
        return 404, None
    return 200, target


class StaticHandler(http.server.BaseHTTPRequestHandler):
    """Static files of the server's mounts and routes; see the module docstring."""

    server_version = "trueno_web-serve"
    sys_version = ""
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # one short line per request on stderr, unless quiet
        if not self.server.quiet:
            sys.stderr.write(f"[serve] {self.address_string()} {fmt % args}\n")

    def end_headers(self):
        policy = self.server.cache_control
        self.send_header("Cache-Control", policy if isinstance(policy, str) else policy(urlsplit(self.path).path))
        self.send_header("X-Content-Type-Options", "nosniff")
        for k, v in self.server.extra_headers.items():
            self.send_header(k, v)
        super().end_headers()

    def _error(self, status: int) -> None:
        body = f"{status} {http.HTTPStatus(status).phrase}\n".encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _serve(self, with_body: bool) -> None:
        if self.server.log is not None:
            self.server.log.append((self.command, self.path))
        route = self.server.routes.get(urlsplit(self.path).path)
        if route is not None:
            mime, body = route
            self.send_response(200)
            self.send_header("Content-Type", mime)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if with_body:
                self.wfile.write(body)
            return
        status, target = resolve(self.server.mounts, self.path)
        if target is None:
            return self._error(status)
        stat = target.stat()
        mtime = int(stat.st_mtime)
        since = self.headers.get("If-Modified-Since")
        if since:
            try:
                if int(email.utils.parsedate_to_datetime(since).timestamp()) >= mtime:
                    self.send_response(304)
                    self.end_headers()
                    return
            except (TypeError, ValueError, IndexError, OverflowError):
                pass
        self.send_response(200)
        self.send_header("Content-Type", mime_type(target))
        self.send_header("Content-Length", str(stat.st_size))
        self.send_header("Last-Modified", email.utils.formatdate(mtime, usegmt=True))
        self.end_headers()
        if with_body:
            with open(target, "rb") as f:
                shutil.copyfileobj(f, self.wfile)

    def do_GET(self):
        self._serve(True)

    def do_HEAD(self):
        self._serve(False)


class StaticServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    """A threaded StaticHandler server. `mounts`: a Layout, {prefix: folder} or [(prefix, folder)].
    `routes`: {"/path": (mime, bytes or str)} served from memory (before the mounts); `headers` are
    sent with every response (e.g. COOP/COEP); `cache_control` is every response's Cache-Control
    ("no-cache": revalidate by Last-Modified; "no-store": never cache, for files rebuilt under the
    same name within a second), or a function of the URL path giving it (Layout.cache_control);
    `record=True` keeps (method, raw path) of every request in `.log`."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self,
        address,
        mounts: MountSpec,
        *,
        routes: Mapping | None = None,
        headers: Mapping[str, str] | None = None,
        cache_control: str | Callable[[str], str] = REVALIDATE,
        quiet: bool = False,
        record: bool = False,
    ):
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.mounts = as_mounts(mounts)
        self.routes: dict[str, tuple[str, bytes]] = {}
        for path, (mime, body) in (routes or {}).items():
            self.add_route(path, mime, body)
        self.extra_headers = dict(headers or {})
        self.cache_control = cache_control
        self.quiet = quiet
        self.log: list[tuple[str, str]] | None = [] if record else None
        super().__init__(address, StaticHandler)

    def add_route(self, path: str, mime: str, body: bytes | str) -> None:
        self.routes[path] = (mime, body.encode() if isinstance(body, str) else bytes(body))

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def make_server(
    host: str = "127.0.0.1", port: int = 8000, layout: MountSpec | None = None, quiet: bool = False, **options
) -> StaticServer:
    """A StaticServer bound to (host, port) (port 0: any free one) serving `layout` (the demo page's
    default_layout() unless given; any mount table works); `options` as StaticServer's. Call
    serve_forever() on it (or run_until_interrupted). A Layout's files are cached as
    Layout.cache_control says, unless `cache_control` is given."""
    layout = default_layout() if layout is None else layout
    if isinstance(layout, Layout):
        options.setdefault("cache_control", layout.cache_control)
    return StaticServer((host, port), layout, quiet=quiet, **options)


PORT_TRIES = 20  # a busy port: try this many after it


def make_server_near(
    host: str = "127.0.0.1", port: int = 8000, layout: MountSpec | None = None, **options
) -> tuple[StaticServer, str | None]:
    """make_server() on `port`, or on the next free port after it where it is taken (another server, a
    second `serve`): (server, a one-line note saying so, or None). Other errors raise OSError."""
    last = port + PORT_TRIES - 1 if port else port
    for candidate in range(port, last + 1):
        try:
            server = make_server(host, candidate, layout, **options)
        except OSError as e:
            if e.errno != errno.EADDRINUSE or candidate == last:
                raise
            continue
        note = None if candidate == port else f"port {port} is in use (another server?); using {candidate} instead"
        return server, note


def run_until_interrupted(server: StaticServer) -> None:
    """serve_forever() until Ctrl-C, then close the socket."""
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def serve_forever(host: str = "127.0.0.1", port: int = 8000) -> int:
    """Serve the demo page until interrupted; prints its URL first. Returns the exit status."""
    layout = default_layout()
    if not (layout.web / "index.html").is_file():
        print(
            f"error: the demo page's files are not here: {layout.web}/index.html is missing.\n"
            "The page lives in web/ of a trueno_web git checkout and is not part of the wheel. Serve it from "
            "a checkout (git clone, then `python scripts/fetch_web_assets.py` and `python -m trueno_web serve`), "
            "or set TRUENO_WEB_DIR to a copy of web/ and TRUENO_WEB_ASSETS to a folder with pyodide/ and wheels/.",
            file=sys.stderr,
        )
        return 2
    missing = layout.missing()
    if missing:
        print(
            "warning: the page will not load without these (run `python scripts/fetch_web_assets.py` "
            "in the checkout):\n  " + "\n  ".join(missing),
            file=sys.stderr,
            flush=True,
        )
    try:
        server, note = make_server_near(host, port, layout)
    except OSError as e:
        print(f"error: cannot listen on {host}:{port}: {e}; pick another with --port N", file=sys.stderr)
        return 1
    if note:
        print(note, file=sys.stderr, flush=True)
    if host not in ("127.0.0.1", "localhost", "::1"):
        print(f"warning: listening on {host}, not only on this machine's loopback", file=sys.stderr, flush=True)
    print(f"trueno_web demo page: {server.url}  (Ctrl-C stops)", flush=True)
    run_until_interrupted(server)
    return 0

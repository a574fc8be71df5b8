#!/usr/bin/env python3
"""Build a JupyterLite site with trueno_web and the example notebook, offline after the downloads.

    python scripts/build_jupyterlite.py            # build build/jupyterlite/ if missing or stale
    python scripts/build_jupyterlite.py --force    # build it again from scratch
    python scripts/build_jupyterlite.py --check    # exit 0 if up to date, 1 if a build is needed
    python scripts/build_jupyterlite.py --serve    # build if needed, then serve on 127.0.0.1:8000
    python scripts/build_jupyterlite.py --serve --port 8765 --no-build

Open http://127.0.0.1:8000/lab/index.html?path=trueno_web_tour.ipynb (Chrome/Edge for WebGPU).

What it does (everything pinned; downloads only from PyPI and the npm registry):

  1. scripts/fetch_web_assets.py: Pyodide 314.0.7 (npm core), micropip/packaging/pygments wheels,
     and the project wheel (rebuilt when its sources changed) in build/web/.
  2. build/jlite-venv/: a separate venv with jupyterlite-core + jupyterlite-pyodide-kernel 0.8.6 and
     jupyter_server (needed to add notebooks), every package pinned (JLITE_PINS).
  3. build/jupyterlite-cache/wheels/: the other pure wheels the Pyodide kernel loads from Pyodide's
     lock (ipython and its deps, jedi, parso, ...) and comm, from PyPI, pinned by sha256.
  4. build/jupyterlite-src/: the lite dir, staged fresh each build:
       static/pyodide/   Pyodide's core files, those wheels, and a pyodide-lock.json cut down to the
                         packages shipped, with PyPI's sha256 (Pyodide re-packs its wheels, so the
                         upstream lock's hashes do not match PyPI's files)
       pypi/             trueno_web's wheel and comm (piplite's index: `%pip install trueno_web`)
       files/            examples/trueno_web_tour.ipynb
       jupyter-lite.json a local pyodideUrl and disablePyPIFallback: without an explicit local
                         pyodideUrl a kernel may reach for a CDN and never start
  5. `jupyter lite build` (clean: no _output, no .jupyterlite.doit.db) into build/jupyterlite/.
  6. The kernel's start-up snapshot (scripts/jupyterlite_snapshot.py, in headless Chromium): the
     kernel's worker installs micropip, piplite, ipykernel, comm, pyodide-kernel, jedi and ipython one
     after the other before its first cell, most of the wait after Run All; done once at build instead,
     kept as Pyodide's memory snapshot + site-packages' files in static/pyodide/, and pyodideUrl points
     at static/pyodide/kernel_pyodide.mjs, which starts Pyodide from them (before/after in
     docs/benchmarks.md). `%pip install trueno_web` still installs from pypi/. The kernel's worker is not patched: loadPyodideOptions.packages names
     what the snapshot holds, which the pinned worker skips (its text is checked; the build stops if not).
  7. A stamp (.trueno_build.json) with the fingerprint of every input, so a second run is quick.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fetch_web_assets as fetch
import jupyterlite_snapshot as kernel_snapshot

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"
VENV = BUILD / "jlite-venv"
CACHE = BUILD / "jupyterlite-cache"
WHEEL_CACHE = CACHE / "wheels"
SRC = BUILD / "jupyterlite-src"
OUT = BUILD / "jupyterlite"
STAMP = OUT / ".trueno_build.json"
NOTEBOOKS = (ROOT / "examples" / "trueno_web_tour.ipynb",)

JUPYTERLITE_VERSION = "0.8.6"
# The build tool and everything it pulls in, pinned (pip freeze of a working venv, Python 3.11).
JLITE_PINS = """
jupyterlite-core==0.8.6
jupyterlite-pyodide-kernel==0.8.6
jupyter_server==2.21.1
anyio==4.16.0
argon2-cffi==25.1.0
argon2-cffi-bindings==26.2.0
arrow==1.4.0
attrs==26.1.0
beautifulsoup4==4.15.0
bleach==6.4.0
cffi==2.1.1
defusedxml==0.7.1
doit==0.37.0
fastjsonschema==2.22.3
fqdn==1.6.0
idna==3.20
isoduration==20.11.0
Jinja2==3.1.6
jsonpointer==3.12
jsonschema==4.26.0
jsonschema-specifications==2025.9.1
jupyter-events==0.12.1
jupyter_client==8.10.0
jupyter_core==5.9.1
jupyter_server_terminals==0.5.4
jupyterlab_pygments==0.3.0
lark==1.3.1
MarkupSafe==3.0.4
mistune==3.4.0
nbclient==0.11.0
nbconvert==7.17.2
nbformat==5.11.1
overrides==7.7.0
packaging==26.3
pandocfilters==1.5.1
pkginfo==2.0
platformdirs==4.14.5
prometheus_client==0.26.0
ptyprocess==0.7.0
pycparser==3.12
Pygments==2.21.0
python-dateutil==4.0.0
python-json-logger==4.2.0
PyYAML==6.0.3
pyzmq==27.3.0
referencing==0.37.0
rfc3339-validator==0.1.4
rfc3986-validator==0.1.1
rfc3987-syntax==1.1.0
rpds-py==2026.9.1
Send2Trash==2.2.0
six==1.17.0
soupsieve==4.1.1
terminado==0.18.1
tinycss2==1.5.1
tornado==6.6.1
traitlets==5.16.1
typing_extensions==4.16.0
tzdata==2026.6
uri-template==1.3.0
webcolors==25.10.0
websocket-client==1.9.2
webencodings==0.6.1
"""

# Pure wheels the kernel loads through Pyodide's lock (same versions as the 314.0.7 lock), plus comm
# (not in the lock: piplite finds it in the site's pypi/). name -> (version, file, PyPI sha256).
KERNEL_WHEELS = {
    "ipython": (
        "9.12.0",
        "ipython-9.12.0-py3-none-any.whl",
        "0f2701e8ee86e117e37f50563205d36feaa259d2e08d4a6bc6b6d74b18ce128d",
    ),
    "jedi": (
        "0.19.2",
        "jedi-0.19.2-py2.py3-none-any.whl",
        "a8ef22bde8490f57fe5c7681a3c83cb58874daf72b4784de3cce5b6ef6edb5b9",
    ),
    "parso": (
        "0.8.6",
        "parso-0.8.6-py2.py3-none-any.whl",
        "2c549f800b70a5c4952197248825584cb00f033b29c692671d3bf08bf380baff",
    ),
    "traitlets": (
        "5.14.3",
        "traitlets-5.14.3-py3-none-any.whl",
        "b74e89e397b1ed28cc831db7aea759ba6640cb3de13090ca145426688ff1ac4f",
    ),
    "asttokens": (
        "3.0.1",
        "asttokens-3.0.1-py3-none-any.whl",
        "15a3ebc0f43c2d0a50eeafea25e19046c68398e487b9f1f5b517f7c0f40f976a",
    ),
    "decorator": (
        "5.2.1",
        "decorator-5.2.1-py3-none-any.whl",
        "d316bb415a2d9e2d2b3abcc4084c6502fc09240e292cd76a76afc106a1c8e04a",
    ),
    "executing": (
        "2.2.1",
        "executing-2.2.1-py2.py3-none-any.whl",
        "760643d3452b4d777d295bb167ccc74c64a81df23fb5e08eff250c425a4b2017",
    ),
    "matplotlib-inline": (
        "0.2.1",
        "matplotlib_inline-0.2.1-py3-none-any.whl",
        "d56ce5156ba6085e00a9d54fead6ed29a9c47e215cd1bba2e976ef39f5710a76",
    ),
    "prompt_toolkit": (
        "3.0.52",
        "prompt_toolkit-3.0.52-py3-none-any.whl",
        "9aac639a3bbd33284347de5ad8d68ecc044b91a762dc39b7c21095fcd6a19955",
    ),
    "pure-eval": (
        "0.2.3",
        "pure_eval-0.2.3-py3-none-any.whl",
        "1db8e35b67b3d218d818ae653e27f06c3aa420901fa7b081ca98cbedc874e0d0",
    ),
    "six": (
        "1.17.0",
        "six-1.17.0-py2.py3-none-any.whl",
        "4721f391ed90541fddacab5acf947aa0d3dc7d27b2e1e8eda2be8970586c3274",
    ),
    "stack-data": (
        "0.6.3",
        "stack_data-0.6.3-py3-none-any.whl",
        "d5558e0c25a4cb0853cddad3d77da9891a08cb85dd9f9f91b9f8cd66e511e695",
    ),
    "wcwidth": (
        "0.6.0",
        "wcwidth-0.6.0-py3-none-any.whl",
        "1a3a1e510b553315f8e146c54764f4fb6264ffad731b3d78088cdb1478ffbdad",
    ),
    "comm": (
        "0.2.3",
        "comm-0.2.3-py3-none-any.whl",
        "c615d91d75f7f04f095b30d1c1711babd43bdc6419c1be9886a85f2f4e489417",
    ),
}
# Shipped in the site's pypi/ (piplite's index) rather than through Pyodide's lock.
PIPLITE_ONLY = ("comm",)
# Wheels scripts/fetch_web_assets.py already provides (build/web/wheels/) that the lock names.
FROM_WEB_WHEELS = ("micropip", "packaging", "pygments")
PYODIDE_CORE = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide.js", "package.json")
APPS = ("lab", "notebooks", "repl", "tree")

PLUGIN_ID = "@jupyterlite/pyodide-kernel-extension:kernel"
LITE_CONFIG = {
    "jupyter-lite-schema-version": 0,
    "jupyter-config-data": {
        "appName": "trueno_web notebooks",
        # window.jupyterapp: lets the e2e test drive the lab app through its command registry
        "exposeAppInBrowser": "true",
        "litePluginSettings": {
            PLUGIN_ID: {
                # the pyodide addon sets this to its pyodide.mjs at build; use_kernel_snapshot() then
                # points it at the snapshot's starter
                "pyodideUrl": "./static/pyodide/pyodide.mjs",
                "disablePyPIFallback": True,
                "loadPyodideOptions": {"packages": list(kernel_snapshot.SKIPPED)},
            },
        },
    },
}


def log(msg: str) -> None:
    print(f"[build_jupyterlite] {msg}", flush=True)


# ------------------------------------------------------------------------------- fingerprint


def fingerprint() -> str:
    """Everything the site is made of: this script (pins included), the notebooks, the project
    sources (as the project wheel is built from them) and the Pyodide version."""
    h = hashlib.sha256()
    for script in (Path(__file__), Path(kernel_snapshot.__file__), kernel_snapshot.MAKER, kernel_snapshot.STARTER):
        h.update(script.read_bytes())
    for nb in NOTEBOOKS:
        h.update(nb.name.encode() + b"\0" + nb.read_bytes())
    h.update(fetch.project_fingerprint().encode())
    h.update(fetch.PYODIDE_VERSION.encode())
    return h.hexdigest()


def up_to_date() -> bool:
    try:
        stamp = json.loads(STAMP.read_text())
    except (OSError, ValueError):
        return False
    return (
        stamp.get("fingerprint") == fingerprint()
        and (OUT / "lab" / "index.html").is_file()
        and any((OUT / "pypi").glob("trueno_web-*.whl"))
        and all((OUT / "static" / "pyodide" / name).is_file() for name in kernel_snapshot.site_files(OUT))
    )


# -------------------------------------------------------------------------------------- steps


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_venv() -> Path:
    """build/jlite-venv with the pinned JupyterLite packages (quick when already there)."""
    marker = VENV / ".trueno-pins"
    want = hashlib.sha256(JLITE_PINS.encode()).hexdigest()
    py = venv_python()
    if py.is_file() and marker.is_file() and marker.read_text().strip() == want:
        return py
    log(f"venv: installing jupyterlite {JUPYTERLITE_VERSION} into {VENV.relative_to(ROOT)}")
    if not py.is_file():
        base = getattr(sys, "_base_executable", None) or sys.executable
        subprocess.run([base, "-m", "venv", str(VENV)], check=True)
    with tempfile.TemporaryDirectory() as td:
        req = Path(td) / "requirements.txt"
        req.write_text(JLITE_PINS.strip() + "\n")
        subprocess.run(
            [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-r", str(req)], check=True
        )
    marker.write_text(want + "\n")
    return py


def ensure_kernel_wheels() -> None:
    """The pure wheels of KERNEL_WHEELS in build/jupyterlite-cache/wheels/, checked by sha256."""
    WHEEL_CACHE.mkdir(parents=True, exist_ok=True)
    missing = [
        n
        for n, (_v, fn, sha) in KERNEL_WHEELS.items()
        if not (WHEEL_CACHE / fn).is_file() or fetch.sha256_file(WHEEL_CACHE / fn) != sha
    ]
    if not missing:
        return
    log(f"wheels: downloading {', '.join(missing)}")
    with tempfile.TemporaryDirectory() as td:
        req = Path(td) / "requirements.txt"
        req.write_text("".join(f"{n}=={KERNEL_WHEELS[n][0]} --hash=sha256:{KERNEL_WHEELS[n][2]}\n" for n in missing))
        dl = Path(td) / "dl"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--require-hashes",
                "--python-version",
                "3.14",
                "--only-binary=:all:",
                "--platform",
                "any",
                "--disable-pip-version-check",
                "-q",
                "-d",
                str(dl),
                "-r",
                str(req),
            ],
            check=True,
        )
        for n in missing:
            fn = KERNEL_WHEELS[n][1]
            shutil.copy2(dl / fn, WHEEL_CACHE / fn)


def web_assets() -> dict:
    """Pyodide and the wheels of scripts/fetch_web_assets.py (fetched/rebuilt if needed)."""
    fetch.fetch_pyodide()
    fetch.fetch_wheels()
    fetch.build_project_wheel()
    fetch.write_manifest()
    return fetch.read_manifest()


def cut_lock(lock: dict, wheels: dict[str, Path]) -> dict:
    """Pyodide's lock, cut down to the packages in `wheels` (lock name -> file), with their sha256."""
    packages = {}
    for key, path in wheels.items():
        entry = dict(lock["packages"][key])
        if entry["file_name"] != path.name:
            raise SystemExit(f"lock names {entry['file_name']} for {key}, we ship {path.name}")
        entry["sha256"] = fetch.sha256_file(path)
        packages[key] = entry
    for key, entry in packages.items():
        for dep in entry.get("depends", []):
            if dep.lower().replace("_", "-") not in packages:
                raise SystemExit(f"lock entry {key} depends on {dep}, which is not shipped")
    return {**lock, "packages": packages}


def lock_key(lock: dict, name: str) -> str:
    norm = name.lower().replace("_", "-")
    for key, entry in lock["packages"].items():
        if key == norm or entry["name"].lower().replace("_", "-") == norm:
            return key
    raise SystemExit(f"{name} is not in pyodide-lock.json")


def stage(manifest: dict) -> None:
    """Fill build/jupyterlite-src/ (the lite dir) from scratch."""
    shutil.rmtree(SRC, ignore_errors=True)
    static = SRC / "static" / "pyodide"
    static.mkdir(parents=True)
    for name in PYODIDE_CORE:
        shutil.copy2(fetch.PYODIDE_DIR / name, static / name)

    lock = json.loads((fetch.PYODIDE_DIR / "pyodide-lock.json").read_text())
    shipped: dict[str, Path] = {}
    for name in FROM_WEB_WHEELS:
        shipped[lock_key(lock, name)] = fetch.WHEELS_DIR / manifest["wheels"][name]["file"]
    for name, (_v, fn, _sha) in KERNEL_WHEELS.items():
        if name not in PIPLITE_ONLY:
            shipped[lock_key(lock, name)] = WHEEL_CACHE / fn
    for path in shipped.values():
        shutil.copy2(path, static / path.name)
    (static / "pyodide-lock.json").write_text(json.dumps(cut_lock(lock, shipped), indent=1) + "\n")

    pypi = SRC / "pypi"
    pypi.mkdir()
    shutil.copy2(fetch.WHEELS_DIR / manifest["wheels"]["trueno_web"]["file"], pypi)
    for name in PIPLITE_ONLY:
        shutil.copy2(WHEEL_CACHE / KERNEL_WHEELS[name][1], pypi)

    files = SRC / "files"
    files.mkdir()
    for nb in NOTEBOOKS:
        shutil.copy2(nb, files / nb.name)
    (SRC / "jupyter-lite.json").write_text(json.dumps(LITE_CONFIG, indent=2) + "\n")


def jupyter_lite_build(py: Path) -> None:
    shutil.rmtree(OUT, ignore_errors=True)
    for p in (SRC / "_output", SRC / ".jupyterlite.doit.db"):
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()
    # hermetic: no user-level Jupyter config or extensions, never a remote Pyodide
    empty = SRC / ".jupyter-empty"
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("JUPYTERLITE_PYODIDE_URL", "JUPYTER_PATH", "JUPYTER_CONFIG_PATH")
    }
    env.update(
        PYTHONUTF8="1",
        JUPYTER_CONFIG_DIR=str(empty / "config"),
        JUPYTER_DATA_DIR=str(empty / "data"),
        JUPYTER_RUNTIME_DIR=str(empty / "runtime"),
    )
    cmd = [str(py), "-m", "jupyterlite_core", "build", "--lite-dir", str(SRC), "--output-dir", str(OUT)]
    for app in APPS:
        cmd += ["--apps", app]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=SRC, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stdout.write(proc.stdout[-6000:])
        sys.stderr.write(proc.stderr[-6000:])
        raise SystemExit(f"jupyter lite build failed ({proc.returncode})")
    log(f"jupyter lite build: {time.perf_counter() - t0:.1f} s")


STARTER_URL = f"./static/pyodide/{kernel_snapshot.STARTER.name}"


def use_kernel_snapshot() -> None:
    """Make the kernel's snapshot and point the site's pyodideUrl at its starter."""
    kernel_snapshot.make(OUT, log)
    path = OUT / "jupyter-lite.json"
    cfg = json.loads(path.read_text())
    cfg["jupyter-config-data"]["litePluginSettings"][PLUGIN_ID]["pyodideUrl"] = STARTER_URL
    path.write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")


def check_site() -> None:
    """The things a kernel needs to start without the network."""
    cfg = json.loads((OUT / "jupyter-lite.json").read_text())
    settings = cfg["jupyter-config-data"]["litePluginSettings"][PLUGIN_ID]
    problems = []
    if settings.get("pyodideUrl") != STARTER_URL:
        problems.append(f"pyodideUrl is {settings.get('pyodideUrl')!r}")
    if settings.get("loadPyodideOptions", {}).get("packages") != list(kernel_snapshot.SKIPPED):
        problems.append("loadPyodideOptions.packages does not name the snapshot's packages")
    if settings.get("disablePyPIFallback") is not True:
        problems.append("disablePyPIFallback is not true")
    for name in (*PYODIDE_CORE, "pyodide-lock.json", *kernel_snapshot.site_files(OUT)):
        if not (OUT / "static" / "pyodide" / name).is_file():
            problems.append(f"static/pyodide/{name} missing")
    lock = json.loads((OUT / "static" / "pyodide" / "pyodide-lock.json").read_text())
    for key, entry in lock["packages"].items():
        f = OUT / "static" / "pyodide" / entry["file_name"]
        if not f.is_file() or fetch.sha256_file(f) != entry["sha256"]:
            problems.append(f"lock entry {key}: {entry['file_name']} missing or sha256 differs")
    index = json.loads((OUT / "pypi" / "all.json").read_text())
    for name in ("trueno-web", "comm"):
        if name not in index and name.replace("-", "_") not in index:
            problems.append(f"pypi/all.json lacks {name}")
    for nb in NOTEBOOKS:
        if not (OUT / "files" / nb.name).is_file():
            problems.append(f"files/{nb.name} missing")
    if problems:
        raise SystemExit("site check failed:\n  " + "\n  ".join(problems))


def build(force: bool = False) -> Path:
    """Build build/jupyterlite/ if missing or stale (or always, with force). Returns its path."""
    t0 = time.perf_counter()
    manifest = web_assets()
    if not force and up_to_date():
        log(f"site: up to date ({OUT.relative_to(ROOT)})")
        return OUT
    py = ensure_venv()
    ensure_kernel_wheels()
    stage(manifest)
    jupyter_lite_build(py)
    use_kernel_snapshot()
    check_site()
    STAMP.write_text(
        json.dumps(
            {"fingerprint": fingerprint(), "jupyterlite": JUPYTERLITE_VERSION, "pyodide": fetch.PYODIDE_VERSION},
            indent=2,
        )
        + "\n"
    )
    log(f"site: built {OUT.relative_to(ROOT)} in {time.perf_counter() - t0:.1f} s")
    return OUT


# --------------------------------------------------------------------------------------- serve


def cache_control(url_path: str) -> str:
    """The kernel's snapshot files (large, content-hashed names) kept by the browser; the rest never
    cached (rebuilt under the same names)."""
    if url_path.startswith("/static/pyodide/kernel-"):
        return "public, max-age=31536000, immutable"
    return "no-store"


def serve(host: str, port: int) -> int:
    """Serve the site with the project's one static-file server (trueno_web.app.server)."""
    sys.path.insert(0, str(ROOT))  # the checkout's package, also when it is not installed
    from trueno_web.app.server import make_server_near, run_until_interrupted

    try:
        httpd, note = make_server_near(host, port, {"/": OUT}, quiet=True, cache_control=cache_control)
    except OSError as e:
        log(f"error: cannot listen on {host}:{port}: {e}; pick another with --port N")
        return 1
    if note:
        log(note)
    url = httpd.url.rstrip("/")
    log(f"serving {OUT.relative_to(ROOT)} on {url}/")
    log(f"  notebook: {url}/lab/index.html?path={NOTEBOOKS[0].name}")
    log(f"  REPL:     {url}/repl/index.html?kernel=python")
    run_until_interrupted(httpd)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--force", action="store_true", help="rebuild even if up to date")
    ap.add_argument("--check", action="store_true", help="exit 1 if the site is missing or stale")
    ap.add_argument("--serve", action="store_true", help="serve the site after building it")
    ap.add_argument("--no-build", action="store_true", help="with --serve: serve what is there")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    args = ap.parse_args(argv)
    if args.check:
        ok = up_to_date()
        log("site: up to date" if ok else "site: missing or stale")
        return 0 if ok else 1
    if not (args.serve and args.no_build):
        build(force=args.force)
    if args.serve:
        return serve(args.host, args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())

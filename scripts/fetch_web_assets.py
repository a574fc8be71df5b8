#!/usr/bin/env python3
"""Fetch the pinned browser assets into build/web/ (stdlib only, idempotent).

    build/web/pyodide/   the npm `pyodide` package (core: pyodide.mjs, pyodide.asm.wasm, stdlib, lock)
    build/web/wheels/    pure wheels for Pyodide (micropip, packaging, pytest and its deps),
                         the project wheel, and manifest.json (name -> file, version, sha256)
    build/web/tfjs/      TF.js for the browser benchmarks (bench/browser_transformer.py, browser_train.py):
                         the UMD builds of @tensorflow/tfjs-core, -backend-webgpu and -backend-wasm
                         (with its .wasm binaries) and the union bundle's tf.min.js (core with its
                         gradients, for training), from the npm registry
    build/web/jaxjs/     jax-js for the browser peers benchmark (bench/browser_peers.py): the ES modules of
                         @jax-js/jax (index.js and the chunks it imports), from the npm registry

Usage:
    python scripts/fetch_web_assets.py                 # fetch what is missing, rebuild a stale project wheel
    python scripts/fetch_web_assets.py --wheel-only    # only (re)build the project wheel if stale
    python scripts/fetch_web_assets.py --no-wheel      # only fetch the third-party assets
    python scripts/fetch_web_assets.py --force         # re-download everything
    python scripts/fetch_web_assets.py --tfjs-only     # only fetch TF.js (build/web/tfjs/)
    python scripts/fetch_web_assets.py --jaxjs-only    # only fetch jax-js (build/web/jaxjs/)

Every third-party file is pinned by version and hash. The wheels are PyPI's, whose sha256 differs
from the entries in Pyodide's pyodide-lock.json (Pyodide re-packs its pure wheels), so the browser
side loads them by URL (pyodide.loadPackage(url) / micropip.install(url)), never by lock name.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WEB = ROOT / "build" / "web"
PYODIDE_DIR = WEB / "pyodide"
WHEELS_DIR = WEB / "wheels"
MANIFEST = WHEELS_DIR / "manifest.json"

PYODIDE_VERSION = "314.0.7"
NPM_REGISTRY = os.environ.get("NPM_REGISTRY", "https://registry.npmjs.org").rstrip("/")
PYODIDE_TARBALL = f"{NPM_REGISTRY}/pyodide/-/pyodide-{PYODIDE_VERSION}.tgz"
# `npm view pyodide@314.0.7 dist.integrity`
PYODIDE_INTEGRITY = "sha512-0YvXxEhfEdpLfb/XkM2BFAeMROq0iMUX2bzzH9pOttyMcWkwq+HbE5uyuGD82LN7y2q+SNvi/6V5JEsOlD2R1A=="
# Files of the npm package we need at runtime (the rest are .d.ts, maps, consoles, README).
PYODIDE_REQUIRED = (
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
    "pyodide.js",
    "package.json",
)

# Pure wheels for Pyodide's CPython 3.14. Same versions as pyodide-lock.json of 314.0.7 (so nothing
# the lock ships gets shadowed by a different version); sha256 of the PyPI wheel.
WHEELS = {
    "micropip": ("0.11.1", "768de165adb8e66906039d8fec4127a57f522dfdf8e6fbff877a4616941ecfd3"),
    "packaging": ("26.1", "5d9c0669c6285e491e0ced2eee587eaf67b670d94a19e94e3984a481aba6802f"),
    # pytest 9.0.2 Requires-Dist on 3.14 / emscripten: iniconfig, packaging, pluggy, pygments
    "pytest": ("9.0.2", "711ffd45bf766d5264d487b917733b453d917afd2b0ad65223959f59089f875b"),
    "pluggy": ("1.6.0", "e920276dd6813095e9377c0bc5566d94c932c33b27a3e3945d8389c374dd4746"),
    "iniconfig": ("2.3.0", "f631c04d2c48c52b84d0d0549c99ff3859c98df65b3101406327ecc7d53fbf12"),
    "pygments": ("2.20.0", "81a9e26dd42fd28a23a2d169d86d7ac03b46e2f8b59ed4698fb4785f946d0176"),
}

# TF.js, for the browser benchmarks' comparisons (bench/tfjs_block.mjs, bench/tfjs_train.mjs). Exact versions; the sha512
# is the registry's `npm view @tensorflow/<name>@4.22.0 dist.integrity`. The UMD builds: tf-core sets the
# global `tf`, the backends extend it (the webgpu build carries the CPU kernels it shares; the wasm build
# loads its .wasm from the URL given to tf.wasm.setWasmPaths).
TFJS_VERSION = "4.22.0"
TFJS_DIR = WEB / "tfjs"
TFJS_PACKAGES = {
    # the union bundle, for bench/tfjs_train.mjs: tf-core's UMD build registers no gradients (tf.variableGrads
    # fails), tf.min.js is tf-core with all of them (plus layers, converter and the cpu/webgl backends)
    "tfjs": (
        "sha512-0TrIrXs6/b7FLhLVNmfh8Sah6JgjBPH4mZ8JGb7NU6WW+cx00qK5BcAZxw7NCzxj6N8MRAIfHq+oNbPUNG5VAg==",
        ("tf.min.js",),
    ),
    "tfjs-core": (
        "sha512-LEkOyzbknKFoWUwfkr59vSB68DMJ4cjwwHgicXN0DUi3a0Vh1Er3JQqCI1Hl86GGZQvY8ezVrtDIvqR1ZFW55A==",
        ("tf-core.min.js",),
    ),
    "tfjs-backend-webgpu": (
        "sha512-lvIc7Af4Tl2BCdYp43iQmSCRq3asaKT0q2xaErphXiUZ+jqeB0bQa0ZvQys1Xatvto0U4/c90DVsHPfvkn5ftg==",
        ("tf-backend-webgpu.min.js",),
    ),
    "tfjs-backend-wasm": (
        "sha512-/IYhReRIp4jg/wYW0OwbbJZG8ON87mbz0PgkiP3CdcACRSvUN0h8rvC0O3YcDtkTQtFWF/tcXq/KlVDyV49wmA==",
        (
            "tf-backend-wasm.min.js",
            "tfjs-backend-wasm.wasm",
            "tfjs-backend-wasm-simd.wasm",
            "tfjs-backend-wasm-threaded-simd.wasm",
        ),
    ),
}
TFJS_FILES = tuple(f for _sha, files in TFJS_PACKAGES.values() for f in files)

# jax-js, the second peer of the browser benchmark (bench/browser_peers.py). Exact version; the sha512 is the
# registry's `dist.integrity` of @jax-js/jax@0.1.25. Its ES modules: index.js imports the backend chunk and
# rolldown's runtime; the backend chunk imports the webgpu and webgl chunks when that device starts.
JAXJS_VERSION = "0.1.25"
JAXJS_DIR = WEB / "jaxjs"
JAXJS_INTEGRITY = "sha512-g6PxWa6ZLjeQdDAM0ImBSqpdYnC6InCUTCCbMLxhMHMsMNu+JbHRjIQZ/anjBcP69of6hiqfGmTl+3gBn1qu/A=="
JAXJS_FILES = (
    "index.js",
    "backend-CnjgxpXq.js",
    "rolldown-runtime-D7D4PA-g.js",
    "webgpu-D5edCWOx.js",
    "webgl-d1MbwhuX.js",
)

PROJECT_NAME = "trueno_web"
PROJECT_SOURCES = ("pyproject.toml", "README.md", "trueno_web", "shaders")


def log(msg: str) -> None:
    print(f"[fetch_web_assets] {msg}", flush=True)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def fetched(directory: Path, version: str, files) -> bool:
    """Is `version` of a package fetched into `directory` (its .fetched marker says so) with all of `files`?"""
    marker = directory / ".fetched"
    return marker.is_file() and marker.read_text().strip() == version and all((directory / f).is_file() for f in files)


# ---------------------------------------------------------------------------------------- pyodide


def pyodide_present() -> bool:
    return fetched(PYODIDE_DIR, PYODIDE_VERSION, PYODIDE_REQUIRED)


def fetch_pyodide(force: bool = False) -> None:
    if not force and pyodide_present():
        log(f"pyodide {PYODIDE_VERSION}: present")
        return
    log(f"pyodide {PYODIDE_VERSION}: downloading {PYODIDE_TARBALL}")
    with urllib.request.urlopen(PYODIDE_TARBALL, timeout=120) as r:
        data = r.read()
    algo, _, want = PYODIDE_INTEGRITY.partition("-")
    got = base64.b64encode(hashlib.new(algo, data).digest()).decode()
    if got != want:
        raise SystemExit(f"pyodide tarball integrity mismatch: {algo}-{got} != {PYODIDE_INTEGRITY}")
    tmp = PYODIDE_DIR.with_name("pyodide.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tf:
        for m in tf.getmembers():
            if not m.isfile():
                continue
            name = m.name.split("/", 1)[1] if "/" in m.name else m.name  # strip "package/"
            if name.startswith("/") or ".." in Path(name).parts:
                raise SystemExit(f"refusing odd path in tarball: {m.name}")
            dest = tmp / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            with tf.extractfile(m) as src, open(dest, "wb") as out:
                shutil.copyfileobj(src, out)
    (tmp / ".fetched").write_text(PYODIDE_VERSION + "\n")
    shutil.rmtree(PYODIDE_DIR, ignore_errors=True)
    tmp.rename(PYODIDE_DIR)
    log(f"pyodide {PYODIDE_VERSION}: extracted into {PYODIDE_DIR.relative_to(ROOT)}")


# ------------------------------------------------------------------------------------------ tf.js


def tfjs_present() -> bool:
    return fetched(TFJS_DIR, TFJS_VERSION, TFJS_FILES)


def download_npm(url: str, integrity: str, what: str) -> bytes:
    """The tarball at `url`, checked against its npm `dist.integrity` (sha512-<base64>); exits with a
    clear message when the download or the check fails."""
    try:
        with urllib.request.urlopen(url, timeout=120) as r:
            data = r.read()
    except OSError as e:  # URLError, timeouts, refused connections
        raise SystemExit(
            f"[fetch_web_assets] {what}: download of {url} failed: {e}\n"
            f"  (the npm registry is needed at set-up time; NPM_REGISTRY picks a mirror)"
        ) from None
    algo, _, want = integrity.partition("-")
    got = base64.b64encode(hashlib.new(algo, data).digest()).decode()
    if got != want:
        raise SystemExit(f"[fetch_web_assets] {what}: integrity mismatch for {url}: {algo}-{got} != {integrity}")
    return data


def fetch_tfjs(force: bool = False) -> None:
    """The pinned TF.js files into build/web/tfjs/ (served at /tfjs/ by the bench's AssetServer)."""
    if not force and tfjs_present():
        log(f"tfjs {TFJS_VERSION}: present")
        return
    tmp = TFJS_DIR.with_name("tfjs.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        for name, (integrity, files) in TFJS_PACKAGES.items():
            url = f"{NPM_REGISTRY}/@tensorflow/{name}/-/{name}-{TFJS_VERSION}.tgz"
            log(f"tfjs {TFJS_VERSION}: downloading {url}")
            data = download_npm(url, integrity, f"@tensorflow/{name}@{TFJS_VERSION}")
            wanted = {f"package/dist/{f}": f for f in files}
            wanted["package/package.json"] = f"{name}.package.json"  # version and licence (Apache-2.0)
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tf:
                for m in tf.getmembers():
                    if m.isfile() and m.name in wanted:
                        with tf.extractfile(m) as src, open(tmp / wanted.pop(m.name), "wb") as out:
                            shutil.copyfileobj(src, out)
            if wanted:
                raise SystemExit(
                    f"[fetch_web_assets] @tensorflow/{name}@{TFJS_VERSION}: not in the tarball: "
                    + ", ".join(sorted(wanted))
                )
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    (tmp / ".fetched").write_text(TFJS_VERSION + "\n")
    shutil.rmtree(TFJS_DIR, ignore_errors=True)
    tmp.rename(TFJS_DIR)
    log(f"tfjs {TFJS_VERSION}: {len(TFJS_FILES)} files in {TFJS_DIR.relative_to(ROOT)}")


# ----------------------------------------------------------------------------------------- jax-js


def jaxjs_present() -> bool:
    return fetched(JAXJS_DIR, JAXJS_VERSION, JAXJS_FILES)


def fetch_jaxjs(force: bool = False) -> None:
    """The pinned jax-js modules into build/web/jaxjs/ (served at /jaxjs/ by the bench's AssetServer)."""
    if not force and jaxjs_present():
        log(f"jax-js {JAXJS_VERSION}: present")
        return
    url = f"{NPM_REGISTRY}/@jax-js/jax/-/jax-{JAXJS_VERSION}.tgz"
    log(f"jax-js {JAXJS_VERSION}: downloading {url}")
    data = download_npm(url, JAXJS_INTEGRITY, f"@jax-js/jax@{JAXJS_VERSION}")
    tmp = JAXJS_DIR.with_name("jaxjs.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    wanted = {f"package/dist/{f}": f for f in JAXJS_FILES}
    wanted["package/package.json"] = "package.json"  # version and licence (MIT)
    wanted["package/LICENSE"] = "LICENSE"
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tf:
            for m in tf.getmembers():
                if m.isfile() and m.name in wanted:
                    with tf.extractfile(m) as src, open(tmp / wanted.pop(m.name), "wb") as out:
                        shutil.copyfileobj(src, out)
        if wanted:
            raise SystemExit(
                f"[fetch_web_assets] @jax-js/jax@{JAXJS_VERSION}: not in the tarball: " + ", ".join(sorted(wanted))
            )
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    (tmp / ".fetched").write_text(JAXJS_VERSION + "\n")
    shutil.rmtree(JAXJS_DIR, ignore_errors=True)
    tmp.rename(JAXJS_DIR)
    log(f"jax-js {JAXJS_VERSION}: {len(JAXJS_FILES)} modules in {JAXJS_DIR.relative_to(ROOT)}")


# ----------------------------------------------------------------------------------------- wheels


def wheel_filename(name: str, version: str) -> str:
    return f"{name}-{version}-py3-none-any.whl"


def fetch_wheels(force: bool = False) -> None:
    WHEELS_DIR.mkdir(parents=True, exist_ok=True)
    missing = []
    for name, (version, sha) in WHEELS.items():
        path = WHEELS_DIR / wheel_filename(name, version)
        if force or not path.is_file() or sha256_file(path) != sha:
            missing.append(name)
    if not missing:
        log(f"wheels: present ({', '.join(WHEELS)})")
        return
    log(f"wheels: downloading {', '.join(missing)}")
    with tempfile.TemporaryDirectory() as td:
        req = Path(td) / "requirements.txt"
        req.write_text("".join(f"{n}=={WHEELS[n][0]} --hash=sha256:{WHEELS[n][1]}\n" for n in missing))
        dl = Path(td) / "dl"
        cmd = [
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
            "-d",
            str(dl),
            "-r",
            str(req),
        ]
        subprocess.run(cmd, check=True)
        for name in missing:
            fn = wheel_filename(name, WHEELS[name][0])
            shutil.copy2(dl / fn, WHEELS_DIR / fn)


# -------------------------------------------------------------------------------- project wheel


def project_fingerprint() -> str:
    """sha256 over the wheel's sources (paths and contents): changes when any file changes,
    appears or goes away."""
    h = hashlib.sha256()
    for rel in PROJECT_SOURCES:
        p = ROOT / rel
        files = [p] if p.is_file() else sorted(p.rglob("*")) if p.is_dir() else []
        for f in files:
            if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc":
                h.update(f.relative_to(ROOT).as_posix().encode() + b"\0")
                h.update(hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()


def project_wheels() -> list[Path]:
    return sorted(WHEELS_DIR.glob(f"{PROJECT_NAME}-*.whl"))


def read_manifest() -> dict:
    try:
        return json.loads(MANIFEST.read_text())
    except (OSError, ValueError):
        return {}


def project_wheel_stale() -> bool:
    wheels = project_wheels()
    return len(wheels) != 1 or read_manifest().get("project_fingerprint") != project_fingerprint()


def build_project_wheel(force: bool = False) -> Path:
    """Build the project's pure wheel into build/web/wheels/ (replacing older ones).

    Builds from a temporary copy of the sources, so the checkout stays untouched and a README.md
    that pyproject.toml names but that does not exist yet gets a stub instead of failing the build.
    """
    if not force and not project_wheel_stale():
        log(f"project wheel: up to date ({project_wheels()[0].name})")
        return project_wheels()[0]
    WHEELS_DIR.mkdir(parents=True, exist_ok=True)
    fingerprint = project_fingerprint()
    with tempfile.TemporaryDirectory() as td:
        src = Path(td) / "src"
        src.mkdir()
        for rel in PROJECT_SOURCES:
            p = ROOT / rel
            if p.is_dir():
                shutil.copytree(p, src / rel, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            elif p.is_file():
                shutil.copy2(p, src / rel)
        if not (src / "README.md").exists():
            log("project wheel: README.md missing in the checkout, building with a stub")
            (src / "README.md").write_text(f"# {PROJECT_NAME}\n")
        out = Path(td) / "out"
        try:
            import hatchling  # noqa: F401

            isolation = ["--no-build-isolation"]
        except ImportError:
            isolation = []
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            *isolation,
            "--disable-pip-version-check",
            "-q",
            "-w",
            str(out),
            str(src),
        ]
        subprocess.run(cmd, check=True)
        built = sorted(out.glob(f"{PROJECT_NAME}-*.whl"))
        if len(built) != 1:
            raise SystemExit(f"expected one {PROJECT_NAME} wheel, got {built}")
        for old in project_wheels():
            old.unlink()
        dest = WHEELS_DIR / built[0].name
        shutil.copy2(built[0], dest)
    log(f"project wheel: built {dest.relative_to(ROOT)}")
    write_manifest(project_fingerprint=fingerprint)
    return dest


def write_manifest(project_fingerprint: str | None = None) -> None:
    old = read_manifest()
    manifest = {
        "pyodide": PYODIDE_VERSION,
        "wheels": {},
        "project_fingerprint": project_fingerprint or old.get("project_fingerprint"),
    }
    for name, (version, _sha) in WHEELS.items():
        fn = wheel_filename(name, version)
        if (WHEELS_DIR / fn).is_file():
            manifest["wheels"][name] = {"file": fn, "version": version, "sha256": sha256_file(WHEELS_DIR / fn)}
    for w in project_wheels():
        manifest["wheels"][PROJECT_NAME] = {"file": w.name, "version": w.name.split("-")[1], "sha256": sha256_file(w)}
    text = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    if not MANIFEST.is_file() or MANIFEST.read_text() != text:
        MANIFEST.write_text(text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--force", action="store_true", help="re-download and rebuild even if present and up to date")
    ap.add_argument("--wheel-only", action="store_true", help="only rebuild the project wheel")
    ap.add_argument("--no-wheel", action="store_true", help="do not build the project wheel")
    ap.add_argument("--tfjs-only", action="store_true", help="only fetch TF.js into build/web/tfjs/")
    ap.add_argument("--jaxjs-only", action="store_true", help="only fetch jax-js into build/web/jaxjs/")
    args = ap.parse_args(argv)
    if args.tfjs_only:
        fetch_tfjs(args.force)
        return 0
    if args.jaxjs_only:
        fetch_jaxjs(args.force)
        return 0
    if not args.wheel_only:
        fetch_pyodide(args.force)
        fetch_wheels(args.force)
        fetch_tfjs(args.force)
        fetch_jaxjs(args.force)
    if not args.no_wheel:
        build_project_wheel(force=args.force)
    write_manifest()
    return 0


if __name__ == "__main__":
    sys.exit(main())

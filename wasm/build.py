"""Build the WASM kernels: `python wasm/build.py` rebuilds trueno_web/kernels.wasm (shipped in the wheel)
and trueno_web/kernels.wasm.sha256 from wasm/kernels.c; `python wasm/build.py --scalar` builds the same
source without -msimd128 into build/kernels-scalar.wasm (for benchmarks; not shipped).

Needs clang with the wasm32 target and wasm-ld (Debian: `apt-get install clang lld`); set CLANG to pick
a compiler. The .sha256 file records the hash of the source plus the flags and the hash of the built
module, so a test can tell, without clang, that the shipped module was built from the current source.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "wasm" / "kernels.c"
SHIPPED = ROOT / "trueno_web" / "kernels.wasm"
HASH_FILE = ROOT / "trueno_web" / "kernels.wasm.sha256"
SCALAR = ROOT / "build" / "kernels-scalar.wasm"

COMMON_FLAGS = (
    "--target=wasm32",
    "-O3",
    "-nostdlib",
    "-ffreestanding",
    "-fno-strict-aliasing",
    "-mbulk-memory",
    "-Wall",
    "-Wextra",
    "-Wno-unused-parameter",
    "-Wl,--no-entry",
    "-Wl,--export-dynamic",
    "-Wl,--strip-all",
    "-Wl,--stack-first",
    "-Wl,-z,stack-size=65536",
)
SIMD_FLAGS = ("-msimd128", *COMMON_FLAGS)
SCALAR_FLAGS = COMMON_FLAGS


def clang() -> str | None:
    """The clang to use: $CLANG, else clang on PATH (or a versioned clang-NN)."""
    if os.environ.get("CLANG"):
        return os.environ["CLANG"]
    for name in ["clang"] + [f"clang-{v}" for v in range(30, 13, -1)]:
        if shutil.which(name):
            return name
    return None


def clang_version(cc: str) -> str:
    out = subprocess.run([cc, "--version"], capture_output=True, text=True, check=True).stdout
    match = re.search(r"clang version (\d+)", out)
    return match.group(1) if match else "unknown"


def source_hash(flags=SIMD_FLAGS) -> str:
    """sha256 of the C source and the flags it is built with."""
    h = hashlib.sha256(SOURCE.read_bytes())
    h.update(b"\0" + " ".join(flags).encode())
    return h.hexdigest()


def read_hash_file(path: Path = HASH_FILE) -> dict[str, str]:
    """The recorded hashes: {'source': ..., 'wasm': ..., 'clang': major version}."""
    out = {}
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) >= 2:
            out[parts[1]] = parts[0]
    return out


def compile_wasm(out: Path, flags=SIMD_FLAGS, cc: str | None = None) -> Path:
    """Compile kernels.c to `out` with `flags`; raises RuntimeError without clang or on errors."""
    cc = cc or clang()
    if cc is None:
        raise RuntimeError("clang not found: install clang and lld (Debian: apt-get install clang lld) or set CLANG")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp_out = Path(tmp) / out.name
        cmd = [cc, *flags, "-o", str(tmp_out), str(SOURCE)]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0 or run.stderr.strip():
            raise RuntimeError(f"{' '.join(cmd)}\n{run.stderr}")
        shutil.copyfile(tmp_out, out)
    return out


def build(scalar: bool = False, out: Path | None = None) -> Path:
    cc = clang()
    if scalar:
        return compile_wasm(out or SCALAR, SCALAR_FLAGS, cc)
    target = compile_wasm(out or SHIPPED, SIMD_FLAGS, cc)
    if out is None:
        wasm_hash = hashlib.sha256(target.read_bytes()).hexdigest()
        HASH_FILE.write_text(
            f"{source_hash()}  source\n{wasm_hash}  wasm\n{clang_version(cc)}  clang\n"
            "# source: sha256 of wasm/kernels.c + NUL + the build flags; wasm: sha256 of kernels.wasm;\n"
            "# clang: the major version that built it. Rebuild with: python wasm/build.py\n"
        )
    return target


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scalar", action="store_true", help="build without -msimd128 into build/ (not shipped)")
    parser.add_argument("-o", "--out", type=Path, help="write the module here instead (no hash file)")
    args = parser.parse_args(argv)
    try:
        path = build(args.scalar, args.out)
    except RuntimeError as e:
        print(e, file=sys.stderr)
        return 1
    print(f"{path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

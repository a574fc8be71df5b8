"""Run the official array API test suite (data-apis/array-api-tests, vendored outside the repository: see
docs/array_api.md) against `trueno_web` on one backend, with the failures we know of in array_api_xfails.txt.

    .venv/bin/python scripts/array_api_suite.py                      # numpy backend, 5 examples a test
    .venv/bin/python scripts/array_api_suite.py --backend wasm-simd --no-xfails --failures out.txt

The suite is copied to a temporary folder first (pytest and Hypothesis write next to the tests, and the
vendored copy is read-only in CI), its spec stubs' package trimmed to the 2024.12 version kept, and a few
lines patched (PATCHES): no shrinking of failing examples, three lines that assume complex dtypes (and
float64, which webgpu and wasm-simd lack) exist, and the complex special cases skipped where there are none.
The dtypes it tests are the backend's own (`__array_namespace_info__().dtypes(device=...)`: float64, int64,
complex64 and complex128 on numpy); a backend without complex dtypes runs with the fft extension disabled
(its transforms take or give complex numbers: skipped, as the suite skips the dtypes a backend lacks). Hypothesis runs derandomized: the same
examples every run, so a failure is reproducible and CI never flakes on a rare draw.
tests/test_array_api_suite.py runs it file by file in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
XFAILS = ROOT / "array_api_xfails.txt"
API_VERSION = "2024.12"
STANDARD_DTYPES = "bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float32 float64 complex64 complex128"
# (file, text, replacement): Hypothesis without its shrink phase; the suite reads its widest complex dtype and
# float64 unguarded, and webgpu and wasm-simd hold neither; its complex special cases and test_vecdot_conj use
# complex numbers without the skip its other complex tests have (they would fail, not skip, without them)
PATCHES = (
    (  # no shrinking: a failing test reports its first failing example at once, not minutes later
        "conftest.py",
        "        deadline=deadline,\n",
        "        deadline=deadline,\n        phases=[Phase.explicit, Phase.reuse, Phase.generate],\n",
    ),
    ("conftest.py", "from hypothesis import settings\n", "from hypothesis import Phase, settings\n"),
    (
        "array_api_tests/dtype_helpers.py",
        "[(dt, dtype_nbits[dt]) for dt in complex_dtypes], key=lambda x: x[1]\n)[0]",
        "[(dt, dtype_nbits[dt]) for dt in complex_dtypes], key=lambda x: x[1], default=(None,)\n)[0]",
    ),
    (
        "array_api_tests/dtype_helpers.py",
        '{"complex64": xp.float32, "complex128": xp.float64}',
        '{"complex64": xp.float32, "complex128": getattr(xp, "float64", None)}',
    ),
    (
        "array_api_tests/test_signatures.py",
        "cmplx_name = dh.dtype_to_name[dh.widest_complex_dtype]",
        'cmplx_name = dh.dtype_to_name.get(dh.widest_complex_dtype, "complex128")',
    ),
    (
        "array_api_tests/test_special_cases.py",
        "        if case.is_complex:\n            dtype = dh.widest_complex_dtype\n",
        "        if case.is_complex:\n            if dh.widest_complex_dtype is None:\n"
        '                pytest.skip("no complex dtypes on this backend (ARRAY_API_TESTS_SKIP_DTYPES)")\n'
        "            dtype = dh.widest_complex_dtype\n",
    ),
    (
        "array_api_tests/test_linalg.py",
        "    # no-hypothesis test to check that the 1st argument is in fact conjugated\n",
        '    if not dh.complex_dtypes:\n        pytest.skip("no complex dtypes on this backend (ARRAY_API_TESTS_SKIP_DTYPES)")\n',
    ),
)


def suite_source() -> Path | None:
    """The vendored suite: $ARRAY_API_TESTS_DIR, else shared/array-api-tests beside or inside the checkout."""
    candidates = [os.environ.get("ARRAY_API_TESTS_DIR", "")]
    candidates += [str(ROOT.parent / "shared" / "array-api-tests"), str(ROOT / "shared" / "array-api-tests")]
    return next((Path(c) for c in candidates if c and (Path(c) / "array_api_tests").is_dir()), None)


def xfail_ids(path: Path = XFAILS) -> dict[str, str]:
    """{test id: reason} of the xfails file (one `id  # reason` a line; `#` lines are comments)."""
    out = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            test_id, _, reason = line.partition("  # ")
            out[test_id.strip()] = reason.strip()
    return out


def prepare(dest: Path, xfails: bool = True) -> Path:
    """A writable copy of the suite in `dest`, patched (PATCHES), with the suite's xfails.txt made from ours."""
    source = suite_source()
    if source is None:
        raise FileNotFoundError("array-api-tests not found: set ARRAY_API_TESTS_DIR (see docs/array_api.md)")
    work = dest / "array-api-tests"
    shutil.copytree(source, work, ignore=shutil.ignore_patterns("__pycache__"))
    for p in [work, *work.rglob("*")]:
        p.chmod(p.stat().st_mode | stat.S_IWUSR)
    stubs = work / "array-api" / "src" / "array_api_stubs" / "__init__.py"
    stubs.write_text(f"from . import _{API_VERSION.replace('.', '_')}\n")  # the only version vendored
    for name, text, replacement in PATCHES:
        path = work / name
        source_text = path.read_text()
        if text not in source_text:
            raise RuntimeError(f"{name} no longer has the line PATCHES changes; update scripts/array_api_suite.py")
        path.write_text(source_text.replace(text, replacement))
    if xfails:
        (work / "xfails.txt").write_text("".join(f"{test_id}\n" for test_id in xfail_ids()))
    return work


def environment(backend: str) -> dict[str, str]:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))  # run as a script: the checkout's trueno_web
    import trueno_web as tw

    device = tw.runtime.block_on(tw.GpuDevice.create(backend))
    have = set(tw.__array_namespace_info__().dtypes(device=device))  # the backend's own: float64 on numpy
    device.close()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    env.update(
        ARRAY_API_TESTS_MODULE="trueno_web",
        ARRAY_API_TESTS_VERSION=API_VERSION,
        ARRAY_API_TESTS_SKIP_DTYPES=",".join(d for d in STANDARD_DTYPES.split() if d not in have),
        TRUENO_WEB_BACKEND=backend,
        ARRAY_API_TESTS_XFAIL_MARK="skip",  # a known failure is not run: Hypothesis would shrink it (minutes)
    )
    return env


def run(work: Path, targets: list[str], backend: str = "numpy", max_examples: int = 5, report: Path | None = None):
    """pytest on `targets` (paths or ids inside the suite) in a subprocess: the CompletedProcess."""
    cmd = [sys.executable, "-m", "pytest", *targets, "-q", "--tb=line", "-p", "no:cacheprovider", "-rfE"]
    cmd += ["--max-examples", str(max_examples), "--disable-deadline", "--derandomize", "-W", "ignore::UserWarning"]
    if report is not None:
        cmd += ["--json-report", f"--json-report-file={report}", "--json-report-omit", "collectors", "log", "traceback"]
    env = environment(backend)
    if "complex64" in env["ARRAY_API_TESTS_SKIP_DTYPES"].split(","):
        cmd += ["--disable-extension", "fft"]  # complex numbers in or out: a dtype the backend lacks
    return subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)


def outcomes(report: Path) -> dict[str, str]:
    """{test id: "passed" | "failed" | "error" | "skipped" | "xfailed" | "xpassed"} from a pytest-json-report file."""
    return {t["nodeid"]: t["outcome"] for t in json.loads(report.read_text())["tests"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="numpy", choices=("numpy", "wasm-simd", "webgpu", "auto"))
    parser.add_argument("--max-examples", type=int, default=5)
    parser.add_argument("--no-xfails", action="store_true", help="run the listed failures too (the pass rate)")
    parser.add_argument(
        "--failures", type=Path, help="write the ids of the failing tests here"
    )  # other options go to pytest
    parser.add_argument("--report", type=Path, help="keep pytest-json-report's report here")
    parser.add_argument("targets", nargs="*", default=["array_api_tests"])
    args, extra = parser.parse_known_args()
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        work = prepare(Path(tmp), xfails=not args.no_xfails)
        report = Path(tmp) / "report.json"
        proc = run(work, args.targets + extra, args.backend, args.max_examples, report)
        print(proc.stdout[-3000:], proc.stderr[-2000:], sep="\n")
        results = outcomes(report)
        if args.report:
            shutil.copy(report, args.report)
    counts = {
        k: sum(v == k for v in results.values()) for k in ("passed", "failed", "error", "xfailed", "xpassed", "skipped")
    }
    ran = len(results) - counts["skipped"]
    print(
        f"{args.backend}: {counts} of {len(results)} collected; passed {counts['passed']}/{ran} run "
        f"({100 * counts['passed'] / max(ran, 1):.1f}%)"
    )
    if args.failures:
        args.failures.write_text(
            "".join(f"{t}\n" for t, v in sorted(results.items()) if v in ("failed", "error", "xfailed"))
        )
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())

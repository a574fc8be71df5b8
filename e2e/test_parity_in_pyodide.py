"""The desktop parity suite (tests/), run unchanged inside Pyodide in headless Chromium.

The test bodies are sync and drive async code with `trueno_web.runtime.block_on`, which uses JSPI's
`run_sync` in the browser; NumPy is absent there, so references come from the catalog's pure-Python
`op.ref` (tensors: tests/_pyref.py's Ref, built on it). Passed counts are checked per file too (from
pytest's JUnit XML), so a file that stops collecting here fails the test. With WebGPU the suite runs on webgpu
(navigator.gpu) and wasm-simd; without an adapter `auto` must fall back to wasm-simd, and the suite's files of
the batch, its errors, float16, joins, the host and WASM views (FALLBACK) run on it there: its other wasm-simd
runs are the first test's, whose code does not depend on an adapter.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from e2e.harness import NO_ADAPTER, check_counts

TESTS = Path(__file__).resolve().parent.parent / "tests"
SUITE = [
    "test_ops.py",
    "test_batch.py",
    "test_errors.py",
    "test_float16.py",
    "test_host.py",
    "test_ndresult.py",
    "test_tensor.py",
    "test_tensor_fusion.py",
    "test_tensor_join.py",
    "test_tensor_matmul.py",
    "test_synchronize.py",
    "test_wasm_views.py",
]
FALLBACK = [
    "test_batch.py",
    "test_errors.py",
    "test_float16.py",
    "test_host.py",
    "test_tensor_join.py",
    "test_wasm_views.py",
]
DEST = "/home/pyodide/parity"
# desktop-only: 1<<17-element pure-Python references and 64 MiB inputs take minutes without NumPy.
# Tests that need NumPy itself (np.asarray, the cross-checks of the references against NumPy) are
# marked skipif(not HAVE_NUMPY, reason=...) and are not parametrized over a backend, so the backend
# filter below leaves them out here.
DESELECT = "not slow and not 131072 and not random_graphs"


def run_suite(page, backend_expr: str, files: list[str] = SUITE) -> dict:
    return page.run_test_files(TESTS, files, DEST, select=f"({DESELECT}) and ({backend_expr})")


def test_parity_suite_on_webgpu_and_wasm_simd(pyodide_page):
    page = pyodide_page
    info = page.run(
        "import trueno_web as tw\n"
        "dev = await tw.GpuDevice.create('webgpu')\n"
        "{'backend': dev.backend, 'software': dev.adapter_info['software'], 'sync': tw.runtime.sync_available()}"
    )
    assert info == {"backend": "webgpu", "software": True, "sync": True}
    result = run_suite(page, "webgpu or wasm")
    print(
        f"\nparity in Pyodide (webgpu + wasm-simd): {result['passed']} passed, {result['skipped']} skipped; "
        f"per file: {result['per_file']}; seconds per file: {result['seconds_per_file']}"
    )
    check_counts(
        result,
        at_least=1550,
        per_file={
            "test_float16.py": 48,
            "test_tensor.py": 200,
            "test_tensor_fusion.py": 50,
            "test_tensor_join.py": 36,
            "test_tensor_matmul.py": 48,
            "test_synchronize.py": 2,
        },
    )


@pytest.mark.parametrize("pyodide_page", [NO_ADAPTER], indirect=True)
def test_without_webgpu_auto_falls_back_and_its_files_pass(pyodide_page):
    page = pyodide_page
    info = page.run(
        "import trueno_web as tw\n"
        "dev = await tw.GpuDevice.create()\n"
        "{'backend': dev.backend, 'available': await tw.GpuDevice.is_available()}"
    )
    assert info == {"backend": "wasm-simd", "available": False}
    result = run_suite(page, "wasm", FALLBACK)
    print(
        f"\nparity in Pyodide without WebGPU (wasm-simd): {result['passed']} passed, {result['skipped']} skipped; "
        f"per file: {result['per_file']}; seconds per file: {result['seconds_per_file']}"
    )
    check_counts(
        result,
        at_least=230,
        per_file={"test_errors.py": 23, "test_float16.py": 24, "test_tensor_join.py": 18, "test_wasm_views.py": 150},
    )


def test_block_on_uses_jspi_and_refuses_without_it(pyodide_page):
    """Under runPythonAsync, sync_available() is True and block_on works; under runPython it is False
    and block_on raises UnavailableError (a TruenoError) that says to use await."""
    page = pyodide_page
    code = (
        "import trueno_web as tw\n"
        "dev = tw.runtime.block_on(tw.GpuDevice.create('wasm-simd'))\n"
        "r = tw.runtime.block_on(dev.sum([1.0, 2.0, 3.5]))\n"
        "{'sync': tw.runtime.sync_available(), 'sum': r, 'browser': tw.runtime.is_browser()}"
    )
    assert page.run(code) == {"sync": True, "sum": 6.5, "browser": True}
    refused = page.run(
        "import trueno_web as tw\n"
        "async def work():\n    return 1\n"
        "try:\n    tw.runtime.block_on(work())\n    out = 'ran'\n"
        "except tw.UnavailableError as exc:\n    out = str(exc)\n"
        "{'sync': tw.runtime.sync_available(), 'out': out}",
        sync=True,
    )
    assert refused["sync"] is False
    assert "use `await`" in refused["out"]


LONG_SORT = """
import math, random, struct
import trueno_web as tw
from trueno_web.sort_kinds import py_argsort, py_sort

rng = random.Random(5)
def f32(v):
    return struct.unpack("f", struct.pack("f", v))[0]
specials = [math.nan, math.inf, -math.inf, -0.0, 0.0, 3.4e38, -3.4e38, 1e-45]
row = [f32(rng.choice([rng.uniform(-9, 9), float(rng.randint(-20, 20))])) for _ in range(5003)]
for i in range(0, 5003, 211):
    row[i] = specials[i % len(specials)]

def bits(values):
    return [struct.pack("f", v) if v == v else b"nan" for v in values]

out = {}
for backend in ("webgpu", "wasm-simd"):
    dev = await tw.GpuDevice.create(backend)
    t = tw.asarray(row, dev)
    for descending in (False, True):
        got = (await t.sort(descending=descending).numpy()).tolist()
        idx = (await t.argsort(descending=descending).numpy()).tolist()
        out[f"{backend} {descending}"] = [
            bits(got) == bits(py_sort(row, descending)), idx == py_argsort(row, descending)
        ]
    if backend == "webgpu":
        out["subgroups"] = dev.executor.caps.subgroups
out
"""


def test_a_long_row_sorts_in_the_browser(pyodide_page):
    """A row of 5003 float32 values (ties, NaN, +-inf, -0.0, the extremes), past the GPU's workgroup block: the
    radix sort's kernels as the browser's WGSL compiler builds them (ballots where its adapter has subgroups of
    32 lanes, else masks), and wasm-simd's merge sort, equal bit for bit to Python's stable sort, both ways,
    argsort too."""
    got = pyodide_page.run(LONG_SORT)
    print(f"\nsort in the page: {got}")
    assert all(v == [True, True] for k, v in got.items() if k != "subgroups"), got

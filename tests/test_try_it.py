"""The demo page's "try it" cell, its Python side (trueno_web/app/try_it.py) on the desktop: a user's code runs
on the page's device with top-level await, its prints and last value come back in order (the printed tensor
against NumPy's softmax), pictures come back as PNGs, an error names the user's line with a traceback trimmed
to the user's code, the device still works after it, and every example the cell offers (the panels' own code)
runs without an error."""

from __future__ import annotations

import base64

import pytest
from _cases import HAVE_NUMPY

from trueno_web import GpuDevice
from trueno_web.app.try_it import EXAMPLES, FILENAME, run_cell
from trueno_web.runtime import block_on


@pytest.fixture(scope="module", params=["numpy", "wasm-simd"])
def dev(request):
    if request.param == "numpy" and not HAVE_NUMPY:
        pytest.skip("NumPy is not installed")
    d = block_on(GpuDevice.create(request.param))
    yield d
    d.close()


def test_prints_and_the_last_value_in_order(dev):
    np = pytest.importorskip("numpy")
    code = (
        "x = dev.tensor([[1.0, 2.0, 3.0, -7.5, 0.25], [0.5, -1.0, 4.0, 1e-3, 30.0], [0, 0, 0, 0, 0]])\n"
        "print('before')\n"
        "import sys; print('to stderr', file=sys.stderr)\n"
        "got = await x.softmax(-1).numpy()\n"
        "print(got.shape)\n"
        "got.tolist()"
    )
    shown = block_on(run_cell(code, dev))
    assert shown["error"] is None and shown["backend"] == dev.backend
    kinds = [item["kind"] for item in shown["output"]]
    assert kinds == ["stdout", "stderr", "stdout", "result"], shown["output"]
    assert shown["output"][0]["text"] == "before\n" and shown["output"][1]["text"] == "to stderr\n"
    assert shown["output"][2]["text"] == "(3, 5)\n"
    x = np.array([[1.0, 2.0, 3.0, -7.5, 0.25], [0.5, -1.0, 4.0, 1e-3, 30.0], [0, 0, 0, 0, 0]])
    want = np.exp(x - x.max(-1, keepdims=True))
    want /= want.sum(-1, keepdims=True)
    got = np.array(eval(shown["output"][3]["text"]))
    assert np.allclose(got, want, rtol=1e-5, atol=1e-7), (got, want)


def test_a_picture_comes_back_as_png(dev):
    code = "from trueno_web.display import Picture\ndisplay(Picture([0.0, 0.5, 1.0, 0.25], 2, 2, scale=3))\nNone"
    shown = block_on(run_cell(code, dev))
    assert shown["error"] is None
    (item,) = shown["output"]
    assert item["kind"] == "picture" and (item["width"], item["height"]) == (2, 2)
    assert base64.b64decode(item["png"]).startswith(b"\x89PNG\r\n\x1a\n")


@pytest.mark.parametrize(
    "code, line, kind",
    [
        ("x = dev.tensor([1.0, 2.0, 3.0])\n\ny = x.reshape(2, 2)\nprint(y)", 3, "TruenoValueError"),
        ("def f(v):\n    return v / 0\n\nprint('ran')\nf(1)", 2, "ZeroDivisionError"),
        ("a = 1\nb = (a +\n", 2, "SyntaxError"),
        ("print(undefined_name)", 1, "NameError"),
    ],
)
def test_an_error_names_the_users_line(dev, code, line, kind):
    shown = block_on(run_cell(code, dev))
    error = shown["error"]
    assert error["type"] == kind and error["line"] == line, error
    assert f'File "{FILENAME}", line {line}' in error["traceback"], error["traceback"]
    assert "try_it.py" not in error["traceback"] and "trueno_web" not in error["traceback"].split("\n")[1]
    if kind == "ZeroDivisionError":
        assert shown["output"] == [{"kind": "stdout", "text": "ran\n"}]  # what ran before the error is kept
    after = block_on(run_cell("await (dev.tensor([1.0, -2.0]).relu() + 1).numpy()", dev))
    assert after["error"] is None and after["output"][0]["text"].replace(" ", "").startswith("array([2.,1.]")


def test_each_run_starts_afresh(dev):
    block_on(run_cell("leftover = 1", dev))
    assert block_on(run_cell("leftover", dev))["error"]["type"] == "NameError"


def test_every_example_runs():
    """Once, on the page's fallback backend (they take seconds)."""
    dev = block_on(GpuDevice.create("wasm-simd"))
    for name, (_label, code) in EXAMPLES.items():
        shown = block_on(run_cell(code, dev))
        assert shown["error"] is None, (name, shown["error"])
        assert shown["output"], name
    text = block_on(run_cell(EXAMPLES["activations"][1], dev))["output"][0]["text"]
    assert "      relu  f(-2) = +0.0000  f(0) = +0.0000  f(2) = +2.0000" in text, text
    dev.close()


def test_compiling_hears_of_the_kernels_a_webgpu_run_waits_for(fresh_gpu):
    """The page's note: `compiling(n)` is called with the kernels a call compiles, then 0; a second run of the
    same code compiles nothing and hears nothing; the device forgets the listener after the run."""
    heard = []
    code = "x = dev.tensor([3.0, -4.0, 0.0])\nawait ((x * x).sum().sqrt() - x.abs().max()).item()"
    first = block_on(run_cell(code, fresh_gpu, heard.append))
    assert first["error"] is None and abs(float(first["output"][0]["text"]) - 1.0) <= 1e-6, first
    assert len(heard) >= 2 and heard[-1] == 0 and heard[0] > 0 and sum(heard) == fresh_gpu.stats.pipelines_compiled
    heard.clear()
    assert block_on(run_cell(code, fresh_gpu, heard.append))["output"] == first["output"]
    assert heard == [] and fresh_gpu.executor.on_compile is None

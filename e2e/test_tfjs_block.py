"""TF.js's and jax-js's transformer blocks (bench/tfjs_block.mjs and bench/jaxjs_block.mjs, the comparison of
bench/browser_transformer.py) compute what ours computes: in one page, on a tiny size, ours on webgpu and
wasm-simd, TF.js on webgpu and wasm and jax-js eager and jitted on webgpu all agree with a float64 NumPy forward
pass on the same weights (ours through tw.jit too) (max |err| / max |ref| <= 1e-4; ~2e-7 here). Needs build/web/tfjs/ and build/web/jaxjs/
(scripts/fetch_web_assets.py fetches them at set-up)."""

from __future__ import annotations

import importlib.util

import pytest

from e2e.harness import ROOT, load_script


def _bench():
    spec = importlib.util.spec_from_file_location("browser_transformer", ROOT / "bench" / "browser_transformer.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_tfjs_block_agrees_with_ours(fresh_pyodide_page, web_server):
    fetch = load_script("fetch_web_assets")
    if not (fetch.tfjs_present() and fetch.jaxjs_present()):
        pytest.fail("TF.js or jax-js missing in build/web/\n  run: python scripts/fetch_web_assets.py", pytrace=False)
    bench = _bench()
    for route, (mime, body) in bench.ROUTES.items():
        web_server.add_route(route, mime, body)
    setup = bench.setup_page(fresh_pyodide_page, wasm=True)
    assert set(setup["tfjs"].values()) == {"4.22.0"}, setup["tfjs"]
    assert setup["jaxjs"]["@jax-js/jax"] == "0.1.25", setup["jaxjs"]
    agree = bench.check_size(fresh_pyodide_page, web_server, 12, 16, 2, tol=1e-4)
    assert set(agree["vs_float64"]) == {
        "ours webgpu",
        "ours jit",
        "TF.js webgpu",
        "ours wasm-simd",
        "TF.js wasm",
        "jax-js eager",
        "jax-js jit",
    }
    assert agree["ok"], agree
    assert agree["info"]["TF.js webgpu"]["backend"] == "webgpu"
    assert agree["info"]["TF.js wasm"]["backend"] == "wasm"

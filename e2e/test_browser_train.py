"""The browser training benchmark's correctness check (bench/browser_train.py with bench/tfjs_train.mjs and
bench/jaxjs_train.mjs): in one page, at a tiny size, a few steps of the MLP from the same weights and minibatches
give the same losses for ours (jit on webgpu and wasm-simd, eager on webgpu), TF.js (variableGrads + Adam + the
decoupled decay by hand, on webgpu and wasm) and jax-js (valueAndGrad + AdamW by hand, jit and eager on webgpu)
as a float64 NumPy training run (max |loss - ref| / |ref| over the steps <= 1e-4; ~2e-7 here). No timing.
Needs build/web/tfjs/ with tf.min.js and build/web/jaxjs/ (scripts/fetch_web_assets.py fetches them at set-up)."""

from __future__ import annotations

import importlib.util

import pytest

from e2e.harness import ROOT, load_script


def _bench():
    spec = importlib.util.spec_from_file_location("browser_train", ROOT / "bench" / "browser_train.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_browser_train_losses_agree(fresh_pyodide_page, web_server):
    fetch = load_script("fetch_web_assets")
    if not fetch.tfjs_present() or not fetch.jaxjs_present():
        pytest.fail("TF.js or jax-js missing in build/web/\n  run: python scripts/fetch_web_assets.py", pytrace=False)
    bench = _bench()
    for route, (mime, body) in bench.ROUTES.items():
        web_server.add_route(route, mime, body)
    setup = bench.setup_page(fresh_pyodide_page, wasm=True)
    assert set(setup["tfjs"].values()) == {"4.22.0"}, setup["tfjs"]
    assert setup["jaxjs"]["@jax-js/jax"] == "0.1.25", setup["jaxjs"]
    agree = bench.check(fresh_pyodide_page, web_server, (12, 8, 8, 4), 6, 3, tol=1e-4)
    assert set(agree["losses"]) == set(bench.VARIANTS), agree["losses"]
    assert all(len(v) == 3 for v in agree["losses"].values()), agree["losses"]
    assert agree["ok"], agree
    assert agree["ref"][0] > 0, agree["ref"]
    assert agree["info"]["TF.js webgpu"]["backend"] == "webgpu"
    assert agree["info"]["TF.js wasm"]["backend"] == "wasm"
    assert [agree["info"][f"jax-js {m} webgpu"]["mode"] for m in ("jit", "eager")] == ["jit", "eager"]
    # the report renders from the check alone (nothing timed)
    assert "TF.js wasm" in bench.report(agree, {}, setup, 3)

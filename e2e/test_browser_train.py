"""The browser training benchmark's correctness check (bench/browser_train.py with bench/tfjs_train.mjs): in one
page, at a tiny size, a few steps of the MLP from the same weights and minibatches give the same losses for ours
(jit on webgpu and wasm-simd, eager on webgpu) and TF.js (variableGrads + Adam + the decoupled decay by hand, on
webgpu and wasm) as a float64 NumPy training run (max |loss - ref| / |ref| over the steps <= 1e-4; ~2e-7 here).
No timing. Needs build/web/tfjs/ with tf.min.js (scripts/fetch_web_assets.py fetches it at set-up)."""

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
    if not load_script("fetch_web_assets").tfjs_present():
        pytest.fail("TF.js missing in build/web/tfjs/\n  run: python scripts/fetch_web_assets.py", pytrace=False)
    bench = _bench()
    for route, (mime, body) in bench.ROUTES.items():
        web_server.add_route(route, mime, body)
    setup = bench.setup_page(fresh_pyodide_page, wasm=True)
    assert set(setup["tfjs"].values()) == {"4.22.0"}, setup["tfjs"]
    agree = bench.check(fresh_pyodide_page, web_server, (12, 8, 8, 4), 6, 3, tol=1e-4)
    assert set(agree["losses"]) == set(bench.VARIANTS), agree["losses"]
    assert all(len(v) == 3 for v in agree["losses"].values()), agree["losses"]
    assert agree["ok"], agree
    assert agree["ref"][0] > 0, agree["ref"]
    assert agree["info"]["TF.js webgpu"]["backend"] == "webgpu"
    assert agree["info"]["TF.js wasm"]["backend"] == "wasm"
    # the report renders from the check alone (nothing timed)
    assert "TF.js wasm" in bench.report(agree, {}, setup, 3)

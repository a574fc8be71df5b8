"""scikit-learn on trueno tensors (`set_config(array_api_dispatch=True)`): the estimators and metrics give NumPy's
results, on the webgpu and numpy backends. scikit-learn computes in float64 where the device holds it: on the
numpy backend StandardScaler, r2_score, mean_squared_error, PCA and Ridge run on float64 tensors and match
scikit-learn on float64 NumPy arrays to float64's precision; on webgpu they run in float32. StandardScaler counts
samples in `xp.int64` unless given sample weights (sklearn/preprocessing/_data.py), and webgpu holds no int64:
there it runs with unit weights, and without them raises trueno_web's TruenoTypeError naming backend='numpy'
(both tested below)."""

from __future__ import annotations

import os

os.environ.setdefault("SCIPY_ARRAY_API", "1")  # SciPy's array API support: read when SciPy is first imported

import numpy as np
import pytest

import trueno_web as tw

sklearn = pytest.importorskip("sklearn", reason="scikit-learn (the test extra) runs on trueno tensors here")
from sklearn import config_context  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402
from sklearn.metrics import mean_squared_error, r2_score  # noqa: E402
from sklearn.metrics.pairwise import euclidean_distances  # noqa: E402
from sklearn.preprocessing import MinMaxScaler, Normalizer, StandardScaler  # noqa: E402

from trueno_web.errors import TruenoTypeError  # noqa: E402

CASES = {
    "MinMaxScaler": lambda x: MinMaxScaler().fit_transform(x),
    "Normalizer": lambda x: Normalizer().fit_transform(x),
    "euclidean_distances": lambda x: euclidean_distances(x),
}


@pytest.mark.parametrize("name", CASES)
def test_sklearn_on_trueno_tensors_matches_numpy(dev2, name):
    x = np.random.default_rng(0).standard_normal((50, 4)).astype(np.float32)
    x[3] = 0.0  # a zero row (Normalizer) and a constant-free column range
    want = CASES[name](x)
    with config_context(array_api_dispatch=True):
        got = CASES[name](tw.asarray(x, dev2))
    assert isinstance(got, tw.Tensor) and got.device is dev2
    np.testing.assert_allclose(got.numpy_sync(), want, rtol=2e-5, atol=2e-5)


WIDE = {  # (x, y) -> what scikit-learn computes in float64 where the device holds it
    "StandardScaler": lambda x, y: StandardScaler().fit_transform(x),
    "r2_score": lambda x, y: r2_score(y, x[:, 0] + 0.9 * y),
    "mean_squared_error": lambda x, y: mean_squared_error(y, x[:, 0]),
    "PCA": lambda x, y: PCA(n_components=3, svd_solver="full").fit_transform(x),
    "Ridge": lambda x, y: Ridge(alpha=1.0, solver="svd").fit(x, y).predict(x),
}


def _data(dtype):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((40, 5)) * [1.0, 10.0, 0.1, 3.0, 1.0] + [0.0, 5.0, -2.0, 0.0, 100.0]
    y = x @ rng.standard_normal(5) + 0.1 * rng.standard_normal(40)
    return x.astype(dtype), y.astype(dtype)


def _read(got):
    return got.numpy_sync() if isinstance(got, tw.Tensor) else np.asarray(got)


@pytest.mark.parametrize("name", WIDE)
def test_sklearn_in_float64_on_the_numpy_backend(cpu, name):
    x, y = _data(np.float64)
    want = WIDE[name](x, y)
    with config_context(array_api_dispatch=True):
        got = WIDE[name](tw.asarray(x, cpu, dtype=tw.float64), tw.asarray(y, cpu, dtype=tw.float64))
    assert not isinstance(got, tw.Tensor) or (got.dtype == tw.float64 and got.device is cpu)
    eps = np.finfo(np.float64).eps  # float64 results: a few hundred roundings of float64 at most
    np.testing.assert_allclose(_read(got), want, rtol=1000 * eps, atol=1000 * eps * np.abs(want).max())


@pytest.mark.parametrize("name", [n for n in WIDE if n != "StandardScaler"])
def test_sklearn_in_float32_on_webgpu(gpu, name):
    x, y = _data(np.float32)
    want = WIDE[name](x, y)
    with config_context(array_api_dispatch=True):
        got = WIDE[name](tw.asarray(x, gpu), tw.asarray(y, gpu))
    assert not isinstance(got, tw.Tensor) or (got.dtype == tw.float32 and got.device is gpu)
    np.testing.assert_allclose(_read(got), want, rtol=2e-5, atol=2e-5 * np.abs(want).max())


def test_standard_scaler_on_webgpu_with_unit_sample_weights(gpu):
    """With sample_weight=, scikit-learn counts samples in X's dtype (float32) instead of int64: StandardScaler
    then runs on webgpu and gives NumPy's result."""
    x, _ = _data(np.float32)
    want = StandardScaler().fit_transform(x)
    t = tw.asarray(x, gpu)
    with config_context(array_api_dispatch=True):
        got = StandardScaler().fit(t, sample_weight=tw.ones(len(x), device=gpu)).transform(t)
    assert isinstance(got, tw.Tensor) and got.dtype == tw.float32 and got.device is gpu
    np.testing.assert_allclose(_read(got), want, rtol=2e-5, atol=2e-5 * np.abs(want).max())


def test_standard_scaler_needs_int64_which_webgpu_does_not_hold(gpu):
    x, _ = _data(np.float32)
    with config_context(array_api_dispatch=True), pytest.raises(TruenoTypeError, match="int64 needs backend='numpy'"):
        StandardScaler().fit(tw.asarray(x, gpu))
    assert _read(tw.asarray(x, gpu).mean(axis=0)).dtype == np.float32  # the device is still usable


def test_linear_discriminant_analysis(dev2):
    """LDA's class probabilities on trueno tensors with integer labels (three classes): scikit-learn's own,
    in float64 on the numpy backend, float32 on webgpu."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((60, 4))
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).astype(np.int64) + (x[:, 2] > 1)
    wide = dev2.backend == "numpy"
    dtype, labels, tol = (np.float64, np.int64, 1e-12) if wide else (np.float32, np.int32, 2e-5)
    xx = x.astype(dtype)
    want = LinearDiscriminantAnalysis().fit(xx, y).predict_proba(xx)
    t = tw.asarray(xx, dev2, dtype=dtype)
    with config_context(array_api_dispatch=True):
        got = LinearDiscriminantAnalysis().fit(t, tw.asarray(y.astype(labels), dev2)).predict_proba(t)
    assert isinstance(got, tw.Tensor) and got.device is dev2 and got.dtype == np.dtype(dtype).name
    np.testing.assert_allclose(_read(got), want, rtol=tol, atol=tol)

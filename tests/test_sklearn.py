"""scikit-learn on trueno tensors (`set_config(array_api_dispatch=True)`): the estimators and metrics that run on
trueno_web's array API today give NumPy's results, on the webgpu and numpy backends. (Those that need float64
or int64, which trueno_web does not hold, are listed in docs/array_api.md.)"""

from __future__ import annotations

import os

os.environ.setdefault("SCIPY_ARRAY_API", "1")  # SciPy's array API support: read when SciPy is first imported

import numpy as np
import pytest

import trueno_web as tw

sklearn = pytest.importorskip("sklearn", reason="scikit-learn (the test extra) runs on trueno tensors here")
from sklearn import config_context  # noqa: E402
from sklearn.metrics.pairwise import euclidean_distances  # noqa: E402
from sklearn.preprocessing import MinMaxScaler, Normalizer  # noqa: E402

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

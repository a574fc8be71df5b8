"""The digit panel's "not sure" answer (trueno_web/app/not_sure.py) on the desktop: the distances against a
float64 NumPy brute force on every CPU backend, and what the two thresholds, derived from the held-out digits,
catch: few right held-out answers are called "not sure", most random scribbles are (the shipped model alone
is sure of most scribbles). The measured shares print with -s; docs/accuracy.md has them."""

from __future__ import annotations

import random

import pytest
from _cases import HAVE_NUMPY

from trueno_web import GpuDevice
from trueno_web.app.digit_classifier import DigitClassifier
from trueno_web.app.not_sure import CORRECT_FLAGGED, DISTANCE_QUANTILE, K, order_statistic
from trueno_web.models import load_digits_data
from trueno_web.runtime import block_on

DATA = load_digits_data()
TEST_N = DATA["test_n"]


def scribbles(n: int, seed: int = 0) -> list[list[list[float]]]:
    """Random drawings on a 280-px pad: 1 to 3 strokes of 3 to 8 random points each."""
    rng = random.Random(seed)
    return [
        [[rng.uniform(20, 260) for _ in range(2 * rng.randint(3, 8))] for _ in range(rng.randint(1, 3))]
        for _ in range(n)
    ]


@pytest.fixture(scope="module", params=["numpy", "wasm-simd"])
def classifier(request):
    if request.param == "numpy" and not HAVE_NUMPY:
        pytest.skip("NumPy is not installed")
    dev = block_on(GpuDevice.create(request.param))
    yield block_on(DigitClassifier.load(dev, None))
    dev.close()


def test_order_statistic_leaves_at_most_the_share_below():
    values = [5.0, 1.0, 4.0, 2.0, 3.0, 9.0, 7.0, 8.0, 6.0, 10.0]
    assert order_statistic(values, 0.0) == 1.0 and order_statistic(values, 0.25) == 3.0
    assert order_statistic(values, 0.99) == 10.0 and order_statistic(values, 1.0) == 10.0
    for share in (0.0, 0.1, 0.25, 0.5, 0.99):
        assert sum(v < order_statistic(values, share) for v in values) <= share * len(values)


def test_distances_match_a_brute_force(classifier):
    np = pytest.importorskip("numpy")
    train = np.asarray(DATA["train_x"], np.float64).reshape(-1, 64)
    rows = np.asarray(DATA["test_x"], np.float64).reshape(-1, 64)[[0, 7, 358]]
    rows[1, :5] = 16.0  # awkward: a digit with ink where none is
    want = [np.sqrt(np.sort(((train - r) ** 2).sum(1))[:K].mean()) for r in rows]
    ns = classifier.not_sure
    got = block_on(ns.distances(ns.train.device.tensor(rows.astype(np.float32).ravel().tolist(), shape=(3, 64))))
    assert np.allclose(got, want, rtol=1e-4, atol=1e-3), (got, want)


def test_held_out_digits_pass_and_scribbles_are_flagged(classifier):
    """The thresholds: the right held-out answers called "not sure" stay near CORRECT_FLAGGED + (1 -
    DISTANCE_QUANTILE); random scribbles (which the model mostly calls a digit with p > 0.98) mostly are."""
    ns = classifier.not_sure
    held_out = [block_on(classifier.classify(pixels=DATA["test_x"][i * 64 : (i + 1) * 64])) for i in range(TEST_N)]
    right = [r for r, y in zip(held_out, ns.test_y) if r["predicted"] == y]
    flagged = [r for r in right if r["not_sure"]]
    held_out_share = len(flagged) / len(right)
    assert held_out_share <= CORRECT_FLAGGED + (1 - DISTANCE_QUANTILE) + 1e-9, (len(flagged), len(right))

    shown = [block_on(classifier.classify(s)) for s in scribbles(40)]
    sure_by_p = sum(max(r["probabilities"]) > 0.98 for r in shown)
    not_sure = [r for r in shown if r["not_sure"]]
    print(
        f"\n{ns.train.device.backend}: p_min {classifier.p_min:.3f}, distance_max {ns.distance_max:.2f}; "
        f"right held-out answers not sure: {len(flagged)}/{len(right)} ({held_out_share:.1%}); "
        f"scribbles not sure: {len(not_sure)}/{len(shown)} (p > 0.98 for {sure_by_p})"
    )
    assert len(not_sure) >= 0.9 * len(shown)
    assert all(r["reasons"] and r["predicted"] is not None for r in not_sure)
    sure = [r for r in shown if not r["not_sure"]]
    assert all(r["reasons"] == [] and max(r["probabilities"]) >= r["p_min"] for r in sure)


def test_a_held_out_digit_is_sure_and_nothing_is_not_sure(classifier):
    ns = classifier.not_sure
    probs = block_on(classifier.model(ns.test_x).numpy()).tolist()
    best = max(range(TEST_N), key=lambda i: max(probs[i]))  # the surest held-out answer
    pixels = DATA["test_x"][best * 64 : (best + 1) * 64]
    shown = block_on(classifier.classify(pixels=pixels))
    assert shown["predicted"] == ns.test_y[best] and not shown["not_sure"] and shown["reasons"] == []
    assert shown["distance"] <= shown["distance_max"] and shown["p_min"] == classifier.p_min
    empty = block_on(classifier.classify(pixels=[0] * 64))
    assert empty["predicted"] is None and empty["not_sure"] is False

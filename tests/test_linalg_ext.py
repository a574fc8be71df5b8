"""tw.linalg (the array API's linear algebra extension) on every backend against numpy.linalg in float64.

Inputs are float32 matrices built with a chosen condition number (well: 10, moderately ill: 1e3) from
random orthogonal factors; sizes 1, 2, 3, 5, 33 and a batch (4, 8, 8). The reference runs in float64
on the same float32 values. Bounds are first-order perturbation bounds, scaled by the condition number
`cond` and the size n: EPS * n * cond * C for solutions, inverses and determinants (relative), EPS * n * C
(times ||A||) for residuals, reconstructions, orthogonality and eigenvalues (Weyl: backward stable ->
absolute error of order EPS * ||A||). Eigenvectors and singular vectors are checked through A V = V diag(w),
U diag(S) Vh = A and orthogonality (they are unique only up to sign). Then the non-finite results the
docs promise (singular, not positive definite), and the errors, the device usable after."""

from __future__ import annotations

import math

import numpy as np
import pytest

import trueno_web as tw
from trueno_web.errors import TruenoTypeError, TruenoValueError
from trueno_web.runtime import block_on

L = tw.linalg
EPS = 2.0**-23
C = 8.0  # the constant of every bound
SHAPES = [(1, 1), (2, 2), (3, 3), (5, 5), (33, 33), (4, 8, 8)]
CONDS = [10.0, 1e3]


def read(t):
    return np.asarray(block_on(t.numpy()), dtype=np.float64)


def orthogonal(rng, n, batch=()):
    q, _ = np.linalg.qr(rng.standard_normal((*batch, n, n)))
    return q


def matrix(shape, cond, seed=0, spd=False):
    """float32 matrices of `shape` with singular values log-spaced from 1 to 1/cond (eigenvalues, spd)."""
    rng = np.random.default_rng(seed + shape[-1])
    *batch, m, n = shape
    k = min(m, n)
    s = np.logspace(0, -math.log10(cond), k) if k > 1 else np.ones(1)
    u = orthogonal(rng, m, batch)[..., :, :k]
    v = u if spd else orthogonal(rng, n, batch)[..., :, :k]
    return ((u * s) @ np.swapaxes(v, -1, -2)).astype(np.float32)


def t(dev, a):
    return tw.asarray(np.ascontiguousarray(a), dev)


def near(got, want, bound):
    err = np.max(np.abs(got - want)) if want.size else 0.0
    assert err <= bound, f"error {err:.3g} > bound {bound:.3g}"


@pytest.mark.parametrize("cond", CONDS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_solve_inv_det_slogdet(dev, shape, cond):
    """Gauss-Jordan solve (matrix and vector right-hand sides, a broadcast batch), inv, det and slogdet."""
    a = matrix(shape, cond)
    n = shape[-1]
    a64 = a.astype(np.float64)
    b = np.random.default_rng(1).standard_normal((*shape[:-1], 2)).astype(np.float32)
    x64 = np.linalg.solve(a64, b.astype(np.float64))
    rel = EPS * n * cond * C
    near(read(L.solve(t(dev, a), t(dev, b))), x64, rel * np.abs(x64).max())
    vec = b[..., 0] if len(shape) == 2 else b[0, :, 0]  # (n,): one vector for the whole stack
    want = np.linalg.solve(a64, vec.astype(np.float64)[..., None])[..., 0]
    near(read(L.solve(t(dev, a), t(dev, vec))), want, rel * np.abs(want).max())
    inv64 = np.linalg.inv(a64)
    near(read(L.inv(t(dev, a))), inv64, rel * np.abs(inv64).max())
    det64 = np.linalg.det(a64)
    got = read(L.det(t(dev, a)))
    small = np.abs(det64) < 1e-30  # past float32's range: the pivots' product underflows to 0 (slogdet holds it)
    assert np.all(np.where(small, got == 0, np.abs(got - det64) <= rel * np.abs(det64))), (got, det64)
    sign, logabs = L.slogdet(t(dev, a))
    sign64, logabs64 = np.linalg.slogdet(a64)
    np.testing.assert_array_equal(read(sign), sign64)
    near(read(logabs), logabs64, rel)


@pytest.mark.parametrize("cond", CONDS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_cholesky(dev, shape, cond):
    """L of a symmetric positive definite matrix (its lower triangle read) and upper=True's L^T."""
    a = matrix(shape, cond, spd=True)
    low64 = np.linalg.cholesky(np.tril(a.astype(np.float64)) + np.swapaxes(np.tril(a, -1), -1, -2))
    upper = np.triu(a) + 100.0 * np.tril(np.ones(shape[-2:], np.float32), -1)  # above-diagonal junk: unread
    bound = EPS * shape[-1] * cond * C * np.abs(low64).max()
    near(read(L.cholesky(t(dev, np.swapaxes(upper, -1, -2)))), low64, bound)
    near(read(L.cholesky(t(dev, a), upper=True)), np.swapaxes(low64, -1, -2), bound)


QR_SHAPES = [(1, 1), (2, 2), (3, 3), (5, 5), (33, 33), (4, 8, 8), (5, 3), (3, 5), (1, 4), (4, 1)]


@pytest.mark.parametrize("mode", ["reduced", "complete"])
@pytest.mark.parametrize("shape", QR_SHAPES, ids=str)
def test_qr(dev, shape, mode):
    """Q R = A, Q orthonormal columns, R upper triangular (exact zeros below), NumPy's shapes."""
    a = matrix(shape, 1e3)
    q, r = (read(x) for x in L.qr(t(dev, a), mode=mode))
    q64, r64 = np.linalg.qr(a.astype(np.float64), mode=mode)
    assert q.shape == q64.shape and r.shape == r64.shape
    bound = EPS * max(shape[-2:]) * C
    near(q @ r, a, bound * np.abs(a).max())
    near(np.swapaxes(q, -1, -2) @ q, np.eye(q.shape[-1]), bound)
    assert not np.any(np.tril(r, -1))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_eigh(dev, shape):
    """Eigenvalues ascending against eigvalsh, A V = V diag(w), V^T V = I; eigvalsh alike."""
    rng = np.random.default_rng(shape[-1])
    w_true = np.sort(rng.uniform(-2.0, 3.0, shape[-1]))
    q = orthogonal(rng, shape[-1], shape[:-2])
    a = ((q * w_true) @ np.swapaxes(q, -1, -2)).astype(np.float32)
    w, v = L.eigh(t(dev, a))
    w, v = read(w), read(v)
    a64 = a.astype(np.float64)
    norm = np.abs(np.linalg.eigvalsh(a64)).max()
    bound = EPS * shape[-1] * C * norm
    near(w, np.linalg.eigvalsh(a64), bound)
    near(a64 @ v, v * w[..., None, :], bound)
    near(np.swapaxes(v, -1, -2) @ v, np.eye(shape[-1]), EPS * shape[-1] * C)
    assert np.all(np.diff(w, axis=-1) >= 0)
    near(read(L.eigvalsh(t(dev, a))), w, bound)


SVD_SHAPES = SHAPES + [(5, 3), (3, 5), (2, 6, 4), (1, 4), (7, 1)]


@pytest.mark.parametrize(  # full_matrices changes nothing for square matrices: one run of those
    "shape,full", [(s, f) for s in SVD_SHAPES for f in ((True, False) if s[-1] != s[-2] else (True,))], ids=str
)
def test_svd(dev, shape, full):
    """Singular values descending against NumPy's, U diag(S) Vh = A, U and Vh orthonormal; svdvals alike."""
    a = matrix(shape, 1e3)
    u, s, vh = (read(x) for x in (L.svd(t(dev, a), full_matrices=full)))
    u64, s64, vh64 = np.linalg.svd(a.astype(np.float64), full_matrices=full)
    assert (u.shape, s.shape, vh.shape) == (u64.shape, s64.shape, vh64.shape)
    k = s.shape[-1]
    bound = EPS * max(shape[-2:]) * C
    near(s, s64, bound * s64.max())
    near((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a, bound * s64.max())
    near(np.swapaxes(u, -1, -2) @ u, np.eye(u.shape[-1]), bound)
    near(vh @ np.swapaxes(vh, -1, -2), np.eye(vh.shape[-2]), bound)
    near(read(L.svdvals(t(dev, a))), s, bound * s64.max())


def test_pinv_rank_and_norms(dev):
    """A rank-3 (5, 6) stack: matrix_rank, pinv; every matrix_norm and vector_norm ord against NumPy."""
    rng = np.random.default_rng(7)
    a = (rng.standard_normal((2, 5, 3)) @ rng.standard_normal((2, 3, 6))).astype(np.float32)
    a64 = a.astype(np.float64)
    np.testing.assert_array_equal(read(L.matrix_rank(t(dev, a))), [3, 3])
    assert (L.matrix_rank(t(dev, a))).dtype is tw.int32
    want = np.linalg.pinv(a64, rtol=6 * EPS)  # the standard's default cutoff, max(M, N) * eps: float32 rounding dropped
    near(read(L.pinv(t(dev, a))), want, 64 * EPS * np.abs(want).max())
    cut = np.array([1e-3, 0.9], np.float32)  # per matrix (the standard's array rtol): the second keeps its largest
    np.testing.assert_array_equal(
        read(L.matrix_rank(t(dev, a), rtol=t(dev, cut))), np.linalg.matrix_rank(a64, rtol=cut)
    )
    want = np.linalg.pinv(a64, rtol=cut)
    near(read(L.pinv(t(dev, a), rtol=t(dev, cut))), want, 64 * EPS * np.abs(want).max())
    for ord in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf):
        want = np.linalg.norm(a64, ord=ord, axis=(-2, -1))
        scale = np.abs(a64).sum((-2, -1)).max()  # above every norm: absolute error of order eps * ||A||
        near(read(L.matrix_norm(t(dev, a), ord=ord)), want, 64 * EPS * scale)
    assert (L.matrix_norm(t(dev, a), keepdims=True)).shape == (2, 1, 1)
    x = np.array([[3.0, -4.0, 0.0, 1e-3], [0.0, 0.0, 0.0, -2.0]], np.float32)
    for ord in (2, 1, math.inf, -math.inf, 0, 3, 0.5):
        for axis in (None, 0, 1, (0, 1)):
            axes = (0, 1) if axis is None else np.atleast_1d(axis)  # over these axes flattened: a vector norm
            kept = [x.shape[d] for d in range(2) if d not in axes]
            flat = np.moveaxis(x.astype(np.float64), axes, range(-len(axes), 0)).reshape(*kept, -1)
            want = np.linalg.norm(flat, ord=ord, axis=-1)
            got = read(L.vector_norm(t(dev, x), axis=axis, ord=ord))
            np.testing.assert_allclose(got, want, rtol=8 * EPS, atol=0)


def test_diagonal_trace_cross_matrix_power(dev):
    a = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    for offset in (-3, -1, 0, 1, 3, 4):
        np.testing.assert_array_equal(read(L.diagonal(t(dev, a), offset=offset)), np.diagonal(a, offset, -2, -1))
        np.testing.assert_array_equal(read(L.trace(t(dev, a), offset=offset)), np.trace(a, offset, -2, -1))
    assert L.trace(t(dev, a), dtype=tw.int32).dtype is tw.int32
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((3,)).astype(np.float32)
    near(read(L.cross(t(dev, x), t(dev, y))), np.cross(x, y), 4 * EPS * 8)
    near(read(L.cross(t(dev, x.T), t(dev, x.T), axis=0)), np.zeros((3, 4)), 0.0)
    near(read(L.cross(t(dev, x.T), t(dev, x[::-1].T), axis=0)), np.cross(x.T, x[::-1].T, axis=0), 4 * EPS * 8)
    m = matrix((3, 5, 5), 10.0)
    for p in (0, 1, 2, 5, -1, -3):
        want = np.linalg.matrix_power(m.astype(np.float64), p)
        near(read(L.matrix_power(t(dev, m), p)), want, EPS * 5 * 10.0 ** abs(p) * C * np.abs(want).max())


def test_integers_convert_to_float32(dev):
    a = np.array([[2, 1], [1, 3]], np.int32)
    out = L.det(t(dev, a))
    assert out.dtype is tw.float32
    near(read(out), np.float64(5.0), 4 * EPS * 5)
    near(read(L.cholesky(t(dev, a))), np.linalg.cholesky(a.astype(np.float64)), 8 * EPS)


def test_singular_and_not_positive_definite(dev):
    """As docs/linalg.md says: det 0 and slogdet (0, -inf) of a singular matrix, solve and inv not finite;
    cholesky of a matrix that is not positive definite NaN from the failing column on."""
    s = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], np.float32)
    assert read(L.det(t(dev, s))) == 0.0
    sign, logabs = L.slogdet(t(dev, s))
    assert read(sign) == 0.0 and read(logabs) == -math.inf
    assert not np.all(np.isfinite(read(L.inv(t(dev, s)))))
    assert not np.all(np.isfinite(read(L.solve(t(dev, s), t(dev, np.ones(3, np.float32))))))
    low = read(L.cholesky(t(dev, np.array([[4.0, 2.0, 0.0], [2.0, -1.0, 0.0], [0.0, 0.0, 1.0]], np.float32))))
    np.testing.assert_array_equal(low[:, 0], [2.0, 1.0, 0.0])
    assert np.all(np.isnan(low[1:, 1]))


def test_errors_say_what_to_do_and_the_device_stays_usable(dev):
    sq, rect = t(dev, np.eye(3, dtype=np.float32)), t(dev, np.ones((3, 4), np.float32))
    with pytest.raises(TruenoTypeError, match="bool"):
        L.det(t(dev, np.eye(2, dtype=bool)))
    with pytest.raises(TruenoTypeError, match="Tensor"):
        L.inv(np.eye(2))
    for fn in (L.solve, L.inv, L.cholesky, L.det, L.slogdet):
        with pytest.raises(TruenoValueError, match="square"):
            fn(rect, sq) if fn is L.solve else fn(rect)
    for fn in (L.inv, L.qr, L.diagonal):
        with pytest.raises(TruenoValueError, match="stack of matrices"):
            fn(t(dev, np.ones(3, np.float32)))
    with pytest.raises(TruenoValueError, match="square"):
        (L.eigh(rect))
    with pytest.raises(TruenoValueError, match="differ"):
        L.solve(sq, t(dev, np.ones((4, 2), np.float32)))
    with pytest.raises(TruenoValueError, match="broadcast"):
        L.solve(t(dev, np.ones((2, 3, 3), np.float32)), t(dev, np.ones((3, 3, 1), np.float32)))
    with pytest.raises(TruenoValueError, match="mode"):
        L.qr(sq, mode="r")
    with pytest.raises(TruenoValueError, match="ord"):
        (L.matrix_norm(sq, ord=3))
    with pytest.raises(TruenoTypeError, match="int"):
        L.matrix_power(sq, 1.5)
    with pytest.raises(TruenoValueError, match="size 3"):
        L.cross(rect, rect)
    np.testing.assert_array_equal(read(L.inv(sq)), np.eye(3))


def test_empty_matrices_and_nan(dev):
    """0 x 0 stacks as NumPy (det 1, empty factors, an identity Q and U); NaN input ends the sweeps: NaN."""
    z, zb = t(dev, np.zeros((0, 0), np.float32)), t(dev, np.zeros((2, 0, 0), np.float32))
    np.testing.assert_array_equal(read(L.det(zb)), [1.0, 1.0])
    np.testing.assert_array_equal(read(L.slogdet(zb).logabsdet), [0.0, 0.0])
    assert read(L.inv(zb)).shape == (2, 0, 0) and read(L.cholesky(z)).shape == (0, 0)
    assert read(L.solve(z, t(dev, np.zeros((0, 2), np.float32)))).shape == (0, 2)
    np.testing.assert_array_equal(read(L.qr(t(dev, np.zeros((3, 0), np.float32)), mode="complete").Q), np.eye(3))
    np.testing.assert_array_equal(read((L.svd(t(dev, np.zeros((3, 0), np.float32)))).U), np.eye(3))
    assert read((L.eigh(zb)).eigenvectors).shape == (2, 0, 0) and read(L.svdvals(z)).shape == (0,)
    np.testing.assert_array_equal(read(L.trace(zb)), [0.0, 0.0])
    w, v = L.eigh(t(dev, np.array([[np.nan, 1.0], [1.0, 2.0]], np.float32)))
    assert np.all(np.isnan(read(w))) and np.all(np.isnan(read(v)))


def test_gradients_flow_through_the_lazy_functions(dev):
    """Written with tensor ops, they differentiate: d sum(solve(A, b)) / db = A^-T 1, d det(A) / dA =
    det(A) A^-T (through the pivoting)."""
    a = np.array([[3.0, 1.0, 0.0], [1.0, 4.0, 1.0], [0.0, 2.0, 5.0]], np.float32)
    a64 = a.astype(np.float64)
    g = tw.grad(lambda b: L.solve(t(dev, a), b).sum())(t(dev, np.array([1.0, 2.0, 3.0], np.float32)))
    near(read(g), np.linalg.solve(a64.T, np.ones(3)), 16 * EPS)
    g = tw.grad(L.det)(t(dev, a))
    want = np.linalg.det(a64) * np.linalg.inv(a64).T
    near(read(g), want, 16 * EPS * np.abs(want).max())


def test_iterative_functions_wait_or_are_awaited(dev):
    """The array API's eigh returns its results (it waits for its reads); async code awaits eigh_async, and
    the waiting form inside a running event loop says so."""
    import asyncio

    a = np.array([[2.0, 1.0], [1.0, 3.0]], np.float32)
    w = read(L.eigvalsh(t(dev, a)))
    near(w, np.linalg.eigvalsh(a.astype(np.float64)), 64 * EPS * 3)
    near(read(block_on(L.eigvalsh_async(t(dev, a)))), w, 0.0)

    async def inside_a_loop():
        with pytest.raises(tw.UnavailableError, match="eigvalsh_async"):
            L.eigvalsh(t(dev, a))
        return np.asarray(await (await L.eigvalsh_async(t(dev, a))).numpy(), np.float64)

    near(asyncio.run(inside_a_loop()), w, 0.0)

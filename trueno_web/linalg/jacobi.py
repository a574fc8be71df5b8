"""eigh, eigvalsh, svd and svdvals by parallel Jacobi methods written with tensor ops. The matrix is kept in
an order where round r's n/2 disjoint pairs (p, q) are (i, i + n/2): a round computes the n/2 angles with
elementwise ops, applies the rotations J to the two halves (eigh: A <- J^T A J, two-sided, each rotation
zeroes a_pq; svd: U <- U J, one-sided (Hestenes), each makes columns p and q orthogonal; V <- V J), then
moves the indices for the next round (round-robin: n - 1 rounds a sweep pair every index with every other)
by slices joined: O(n^2) a round, no matmul. V carries the moves too, so A = V diag(w) V^T in any order.
The off-diagonal norm is read back once per sweep (so these are coroutines) and the sweeps stop below tol.
Odd n gets a zero row/column first, which no rotation touches and no move moves. Results are sorted on the
device by ranks (a permutation matrix), ascending for eigenvalues and descending for singular values."""

from __future__ import annotations

from collections import namedtuple

from ..tensor import Tensor, concatenate, realize
from .args import eps, floats, identity, rows, square, symmetric
from .basics import diagonal
from .factor import qr

EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])
MAX_SWEEPS = 30  # float32 converges in about 6-10; a sweep past this many ends the loop (see docs/linalg.md)
STALLED = 1e-3  # an off-norm this small that stops falling is float32's noise: no sweep would lower it
REALIZE_EVERY = 8  # rounds per batch: bounds the expression graph a sweep builds


def _angles(app: Tensor, aqq: Tensor, apq: Tensor):
    """(c, s) of each pair's rotation from its 2 x 2 block [[app, apq], [apq, aqq]]: tau = (aqq - app) / (2 apq),
    t = sign(tau) / (|tau| + hypot(1, tau)), c = 1 / sqrt(1 + t^2), s = t c (Golub and Van Loan's symmetric
    Schur step: the rotated block is diagonal); apq = 0: no rotation."""
    tau = (aqq - app) / (2.0 * apq)
    t = (tau >= 0.0).where(1.0, -1.0) / (tau.abs() + tau.hypot(1.0))
    t = (apq == 0.0).where(0.0, t)
    c = (t * t + 1.0).rsqrt()
    return c, t * c


def _halves(x: Tensor, axis: int):
    k = x.shape[axis] // 2
    return (x[..., :k], x[..., k:]) if axis == -1 else (x[..., :k, :], x[..., k:, :])


def _rotate(x: Tensor, c: Tensor, s: Tensor, axis: int) -> Tensor:
    """x J along `axis` (-1: columns) or J^T x (-2: rows), J rotating index i of the first half with index i
    of the second (p and q of pair i) by (c_i, s_i), then the round-robin's move to the next round's order:
    top_0 stays, the others turn one place (the last top -> the last bottom, the first bottom -> the second
    top), so n - 1 rounds pair every index with every other once. Elementwise on slices joined: one fused
    kernel, O(size of x)."""
    c, s = (c[..., None, :], s[..., None, :]) if axis == -1 else (c[..., :, None], s[..., :, None])
    p, q = _halves(x, axis)
    top, bottom = p * c - q * s, p * s + q * c
    k = top.shape[axis]
    if k < 2:
        return concatenate([top, bottom], axis)
    at = (lambda t, a, b: t[..., a:b]) if axis == -1 else (lambda t, a, b: t[..., a:b, :])
    parts = [at(top, 0, 1), at(bottom, 0, 1), at(top, 1, k - 1), at(bottom, 1, k), at(top, k - 1, k)]
    return concatenate([t for t in parts if t.shape[axis]], axis)


def _padded(a: Tensor, rows_too: bool) -> Tensor:
    """a with a zero column (and row) put FIRST where its column count is odd, so n is even for the pairing;
    index 0 never moves (_rotate) and no rotation touches it (its a_pq are 0)."""
    if a.shape[-1] % 2 == 0:
        return a
    lead = [(0, 0)] * (a.ndim - 2)
    return a.pad([*lead, (1 if rows_too else 0, 0), (1, 0)]).contiguous()


async def _sweeps(step, off, state: list[Tensor], n: int, tol: float) -> list[Tensor]:
    """Sweeps of n - 1 rounds (`step(state)` -> the next round's state) until `off(state)` (a 0-d tensor, read back once a
    sweep) is at most tol, stops falling below STALLED, or MAX_SWEEPS pass."""
    last = float("inf")
    for _ in range(MAX_SWEEPS):
        for r in range(n - 1):
            state = step(state)
            if r % REALIZE_EVERY == REALIZE_EVERY - 1:
                await realize(*state)
        value = await off(state).item()
        if not value > tol or (value >= last and value < STALLED):  # NaN input: stop at once
            break
        last = value
    return state


def _off_diagonal(a: Tensor) -> Tensor:
    """a with its diagonal zeroed."""
    n = a.shape[-1]
    return (rows(a, n)[:, None] != rows(a, n)[None, :]).where(a, 0.0)


def _ranks(w: Tensor, descending: bool) -> Tensor:
    """The permutation matrix S (S[k, i] = 1 where w_i is k-th in order; ties by index) sorting w."""
    n = w.shape[-1]
    key = -w if descending else w
    i = rows(w, n)
    before = (key[..., None, :] < key[..., :, None]) | (
        (key[..., None, :] == key[..., :, None]) & (i[None, :] < i[:, None])
    )
    rank = before.astype("float32").sum(-1)
    return (rank[..., None, :] == i.astype("float32")[:, None]).astype("float32")


async def _eigh(x: Tensor, vectors: bool):
    a = symmetric(x)
    n = a.shape[-1]
    if n <= 1:
        return a.reshape(*a.shape[:-1]), identity(a, n)
    a = _padded(a, True)
    size = a.shape[-1]
    scale = (a * a).sum((-2, -1))

    def step(state):
        a, v = state
        d = diagonal(a)
        k = size // 2
        app, aqq = d[..., :k], d[..., k:]
        c, s = _angles(app, aqq, diagonal(a[..., :k, k:]))
        return [_rotate(_rotate(a, c, s, -1), c, s, -2), _rotate(v, c, s, -1) if vectors else v]

    def off(state):
        rest = _off_diagonal(state[0]).square().sum((-2, -1))
        return (scale > 0.0).where(rest / scale, 0.0).max().sqrt()

    a, v = await _sweeps(step, off, [a, identity(a, size) + 0.0], size, size * eps(a))
    drop = size - n  # the padding's index: 0
    w = diagonal(a)[..., drop:]
    order = _ranks(w, descending=False)
    w = (order * w[..., None, :]).sum(-1)
    return w, (v[..., drop:, drop:] @ order.mT if vectors else None)


async def eigh(x, /) -> EighResult:
    """Eigenvalues (ascending) and orthonormal eigenvectors (columns) of symmetric matrices (..., n, n),
    the lower triangle read (NumPy's default): cyclic parallel Jacobi. Await it."""
    w, v = await _eigh(square(x, "eigh"), True)
    return EighResult(w, v)


async def eigvalsh(x, /) -> Tensor:
    """The eigenvalues (ascending) of symmetric matrices; see eigh. Await it."""
    return (await _eigh(square(x, "eigvalsh"), False))[0]


async def _one_sided(a: Tensor, vectors: bool):
    """One-sided Jacobi on the columns of a (..., m, n), m >= n: (sigma descending, U = a V with columns
    sigma-scaled, V), each sorted."""
    n = a.shape[-1]
    u = _padded(a, False)
    size = u.shape[-1]
    drop = size - n
    v = identity(u, size) + 0.0

    def step(state):
        u, v = state
        p, q = _halves(u, -1)
        c, s = _angles((p * p).sum(-2), (q * q).sum(-2), (p * q).sum(-2))
        return [_rotate(u, c, s, -1), _rotate(v, c, s, -1) if vectors else v]

    def off(state):
        g = state[0].mT @ state[0]
        d = diagonal(g)
        norm = (d[..., :, None] * d[..., None, :]).sqrt()
        return _off_diagonal((norm > 0.0).where(g.abs() / norm, 0.0)).max()

    if size > 1:
        u, v = await _sweeps(step, off, [u, v], size, max(a.shape[-2], size) * eps(a))
    sigma = (u * u).sum(-2)[..., drop:].sqrt()
    order = _ranks(sigma, descending=True)
    back = order.mT
    return (order * sigma[..., None, :]).sum(-1), u[..., :, drop:] @ back, v[..., drop:, drop:] @ back


async def _svd(a: Tensor, full: bool):
    m, n = a.shape[-2:]
    if m < n:
        u, s, vh = await _svd(a.mT, full)
        return vh.mT, s, u.mT
    s, us, v = await _one_sided(a, True)
    unit = (s[..., None, :] > 0.0).where(us / s[..., None, :], 0.0)
    q, r = qr(unit, mode="complete" if full else "reduced")
    flip = (diagonal(r) < 0.0).where(-1.0, 1.0)
    if full and m > n:
        flip = (rows(q, m) < n).where(flip.pad([*[(0, 0)] * (flip.ndim - 1), (0, m - n)]), 1.0)
    return q * flip[..., None, :], s, v.mT


async def svd(x, /, *, full_matrices: bool = True) -> SVDResult:
    """U, S (descending), Vh with x = U diag(S) Vh: one-sided Jacobi on the columns (of x^T where wider
    than tall), U's columns orthonormalised and completed by Householder QR. Await it."""
    return SVDResult(*(await _svd(floats(x, "svd"), bool(full_matrices))))


async def svdvals(x, /) -> Tensor:
    """The singular values (descending) of each matrix; see svd. Await it."""
    a = floats(x, "svdvals")
    if a.shape[-2] < a.shape[-1]:
        a = a.mT
    return (await _one_sided(a, False))[0]

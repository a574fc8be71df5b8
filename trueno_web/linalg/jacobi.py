"""eigh, eigvalsh, svd and svdvals by parallel Jacobi methods written with tensor ops. Each round rotates
n/2 disjoint index pairs (p, q) at once (round-robin: n - 1 rounds a sweep touch every pair): J is the
identity with c at (p, p) and (q, q), s at (p, q) and -s at (q, p), built from the angles with elementwise
ops and a permutation matrix of the round's pairing. eigh: A <- J^T A J (two-sided, each rotation zeroes
a_pq); svd: U <- U J (one-sided, Hestenes: each rotation makes columns p and q orthogonal), V <- V J. The
off-diagonal norm is read back once per sweep (so these are coroutines) and the sweeps stop below tol.
Odd n is padded with a zero row/column, which no rotation touches. Results are sorted on the device by
ranks (a permutation matrix), ascending for eigenvalues and descending for singular values."""

from __future__ import annotations

import array
from collections import namedtuple

from ..tensor import Tensor, asarray, realize
from .args import EPS, floats, identity, rows, square, symmetric
from .basics import diagonal
from .factor import qr

EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])
MAX_SWEEPS = 30  # float32 converges in about 6-10; a sweep past this many ends the loop (see docs/linalg.md)
STALLED = 1e-3  # an off-norm this small that stops falling is float32's noise: no sweep would lower it
REALIZE_EVERY = 8  # rounds per batch: bounds the expression graph a sweep builds


def _pairing(index: Tensor, r: int):
    """Round r of the round-robin on the n (even) indices `index` (an iota): the permutation matrix P
    (P[i, partner(i)] = 1) and the orientation o (+1 where i is the pair's smaller index, else -1)."""
    n = index.shape[0]
    m = n - 1
    partner = [(2 * r - i) % m for i in range(m)]
    partner = [m if j == i else j for i, j in enumerate(partner)] + [r % m]
    pt = asarray(array.array("i", partner), index.device)
    o = asarray(array.array("f", [1.0 if j > i else -1.0 for i, j in enumerate(partner)]), index.device)
    return (index[None, :] == pt[:, None]).astype("float32"), o


def _rotation(pair, app: Tensor, aqq: Tensor, apq: Tensor) -> Tensor:
    """J of the pairs from each index's 2 x 2 block [[app, apq], [apq, aqq]] (partner's values at q):
    tau = (aqq - app) / (2 apq) of the pair, t = sign(tau) / (|tau| + hypot(1, tau)), c = 1 / sqrt(1 + t^2),
    s = t c (Golub and Van Loan's symmetric Schur step); apq = 0: no rotation. `pair`: (P, o, the identity's
    mask)."""
    p, o, diag = pair
    tau = o * (aqq - app) / (2.0 * apq)
    t = (tau >= 0.0).where(1.0, -1.0) / (tau.abs() + tau.hypot(1.0))
    t = (apq == 0.0).where(0.0, t)
    c = (t * t + 1.0).rsqrt()
    return diag.where(c[..., None, :], p * (o * t * c)[..., :, None])


def _rounds(x: Tensor, n: int):
    """The pairing of round r (P, o, the identity's mask) on n indices, as a function of r."""
    index = rows(x, n)
    diag = index[:, None] == index[None, :]
    return lambda r: (*_pairing(index, r), diag)


def _padded(a: Tensor, rows_too: bool) -> Tensor:
    """a with a zero column (and row) appended where its column count is odd: n even for the pairing."""
    if a.shape[-1] % 2 == 0:
        return a
    lead = [(0, 0)] * (a.ndim - 2)
    return a.pad([*lead, (0, 1 if rows_too else 0), (0, 1)]).contiguous()


async def _sweeps(step, off, state: list[Tensor], n: int, tol: float) -> list[Tensor]:
    """Sweeps of n - 1 rounds (`step(state, r)` -> state) until `off(state)` (a 0-d tensor, read back once a
    sweep) is at most tol, stops falling below STALLED, or MAX_SWEEPS pass."""
    last = float("inf")
    for _ in range(MAX_SWEEPS):
        for r in range(n - 1):
            state = step(state, r)
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
    pairing = _rounds(a, size)

    def step(state, r):
        a, v = state
        pair = pairing(r)
        d, p = diagonal(a), pair[0]
        j = _rotation(pair, d, (d[..., None, :] * p).sum(-1), (a * p).sum(-1))
        a = j.transpose(-1, -2) @ (a @ j)
        return [(a + a.transpose(-1, -2)) * 0.5, v @ j if vectors else v]

    def off(state):
        rest = _off_diagonal(state[0]).square().sum((-2, -1))
        return (scale > 0.0).where(rest / scale, 0.0).max().sqrt()

    a, v = await _sweeps(step, off, [a, identity(a, size) + 0.0], size, size * EPS)
    w = diagonal(a)[..., :n]
    order = _ranks(w, descending=False)
    w = (order * w[..., None, :]).sum(-1)
    return w, (v[..., :n, :n] @ order.transpose(-1, -2) if vectors else None)


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
    v = identity(u, size) + 0.0
    pairing = _rounds(u, size)

    def step(state, r):
        u, v = state
        pair = pairing(r)
        alpha, p = (u * u).sum(-2), pair[0]
        j = _rotation(pair, alpha, (alpha[..., None, :] * p).sum(-1), ((u @ p) * u).sum(-2))
        return [u @ j, v @ j if vectors else v]

    def off(state):
        g = state[0].transpose(-1, -2) @ state[0]
        d = diagonal(g)
        norm = (d[..., :, None] * d[..., None, :]).sqrt()
        ratio = (norm > 0.0).where(g.abs() / norm, 0.0)
        return _off_diagonal(ratio).max()

    if size > 1:
        u, v = await _sweeps(step, off, [u, v], size, max(a.shape[-2], size) * EPS)
    sigma = (u * u).sum(-2)[..., :n].sqrt()
    order = _ranks(sigma, descending=True)
    back = order.transpose(-1, -2)
    return (order * sigma[..., None, :]).sum(-1), u[..., :, :n] @ back, v[..., :n, :n] @ back


async def _svd(a: Tensor, full: bool):
    m, n = a.shape[-2:]
    if m < n:
        u, s, vh = await _svd(a.transpose(-1, -2), full)
        return vh.transpose(-1, -2), s, u.transpose(-1, -2)
    s, us, v = await _one_sided(a, True)
    unit = (s[..., None, :] > 0.0).where(us / s[..., None, :], 0.0)
    q, r = qr(unit, mode="complete" if full else "reduced")
    flip = (diagonal(r) < 0.0).where(-1.0, 1.0)
    if full and m > n:
        flip = (rows(q, m) < n).where(flip.pad([*[(0, 0)] * (flip.ndim - 1), (0, m - n)]), 1.0)
    return q * flip[..., None, :], s, v.transpose(-1, -2)


async def svd(x, /, *, full_matrices: bool = True) -> SVDResult:
    """U, S (descending), Vh with x = U diag(S) Vh: one-sided Jacobi on the columns (of x^T where wider
    than tall), U's columns orthonormalised and completed by Householder QR. Await it."""
    return SVDResult(*(await _svd(floats(x, "svd"), bool(full_matrices))))


async def svdvals(x, /) -> Tensor:
    """The singular values (descending) of each matrix; see svd. Await it."""
    a = floats(x, "svdvals")
    if a.shape[-2] < a.shape[-1]:
        a = a.transpose(-1, -2)
    return (await _one_sided(a, False))[0]

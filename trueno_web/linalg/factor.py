"""Factorisations written with tensor ops (every backend, fused, differentiable where the ops are): Cholesky
(right-looking, one column per step), Gauss-Jordan elimination with partial pivoting for solve and inv, LU's
forward elimination for det and slogdet, Householder QR. Each runs n lazy steps on the whole stack of
matrices: the pivot row is chosen on the device (argmax of the column below the diagonal) and swapped with
a one-hot row update, never read back. Singular matrices give inf/NaN as NumPy's arithmetic would (no
error: detecting it would need a read); see docs/linalg.md."""

from __future__ import annotations

from collections import namedtuple

from ..errors import TruenoTypeError, TruenoValueError
from ..tensor import Tensor, ones
from .args import batch_of, floats, identity, rows, square, symmetric

SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
QRResult = namedtuple("QRResult", ["Q", "R"])


def cholesky(x, /, *, upper: bool = False) -> Tensor:
    """L with x = L L^T (lower triangle of x read, as NumPy), or U = L^T with upper=True. A matrix that is
    not positive definite gives NaN from the first failing pivot's column on (NumPy raises)."""
    a = symmetric(square(x, "cholesky"))
    n = a.shape[-1]
    r = rows(a, n)
    low = a * 0.0
    for k in range(n):
        col = (r >= k).where(a[..., :, k] / a[..., k, k, None].sqrt(), 0.0)
        low = (r == k).where(col[..., :, None], low)
        a = a - col[..., :, None] * col[..., None, :]
    return low.mT if upper else low


def _pivot(a: Tensor, others: list[Tensor], k: int, r: Tensor):
    """Rows k and p swapped in `a` and each of `others`, p the row at or below k of the largest |a[:, k]|
    (chosen on the device); returns them and whether a swap happened (p != k, a bool per matrix)."""
    p = (r >= k).where(a[..., :, k].abs(), -1.0).argmax(-1)
    onehot = (r == p[..., None]).astype("float32")
    move = (r == k).astype("float32") - onehot  # +1 at row k, -1 at row p: row k gets row p, row p row k
    out = []
    for t in (a, *others):
        diff = (onehot[..., :, None] * t).sum(-2) - t[..., k, :]
        out.append(t + move[..., :, None] * diff[..., None, :])
    return out[0], out[1:], p != k


def _eliminate(a: Tensor, b: Tensor | None, jordan: bool):
    """Gaussian elimination with partial pivoting of the stack `a` (..., n, n), the same row operations on
    `b` (..., n, k) where given; `jordan`: above the pivot too (a ends diagonal). Returns (a, b, the
    determinant (the pivots' product, signed), its sign and log |det|). A zero pivot eliminates nothing."""
    n = a.shape[-1]
    r = rows(a, n)
    sign = det = swaps = ones(a.shape[:-2], device=a.device)
    logabs = det * 0.0
    for k in range(n):
        a, others, swapped = _pivot(a, [] if b is None else [b], k, r)
        b = others[0] if others else None
        piv = a[..., k, k]
        sign = swapped.where(-sign, sign) * piv.sign()
        det = det * piv
        swaps = swapped.where(-swaps, swaps)
        logabs = logabs + piv.abs().log()
        below = (r != k) if jordan else (r > k)
        f = (below & (piv[..., None] != 0.0)).where(a[..., :, k] / piv[..., None], 0.0)
        a = a - f[..., :, None] * a[..., k, None, :]
        if b is not None:
            b = b - f[..., :, None] * b[..., k, None, :]
    return a, b, det * swaps, sign, logabs


def solve(x1, x2, /) -> Tensor:
    """X with x1 X = x2: x1 (..., n, n), x2 (..., n, k) or (n,) (a vector: the result is (..., n)); batch
    dimensions broadcast. Gauss-Jordan with partial pivoting on the device; singular x1: inf/NaN."""
    a = square(x1, "solve")
    b = floats(x2, "solve", 1)
    vector = b.ndim == 1
    b = b[:, None] if vector else b
    if b.shape[-2] != a.shape[-1]:
        raise TruenoValueError(f"linalg.solve: x1 {a.shape} and x2 {tuple(x2.shape)} differ in n (rows of x2)")
    if a.device is not b.device:
        raise TruenoValueError("linalg.solve: x1 and x2 are on different devices; move one to the other's")
    batch = batch_of(a.shape, b.shape)
    a, b = a.expand(*batch, *a.shape[-2:]), b.expand(*batch, *b.shape[-2:])
    a, b, *_ = _eliminate(a, b, jordan=True)
    n = a.shape[-1]
    diag = a.reshape(*batch, n * n)[..., :: n + 1] if n else a.reshape(*batch, 0)
    out = b / diag[..., :, None]
    return out[..., 0] if vector else out


def inv(x, /) -> Tensor:
    """The inverse of each square matrix: solve(x, I). Singular: inf/NaN."""
    a = square(x, "inv")
    return solve(a, identity(a, a.shape[-1]))


def slogdet(x, /) -> SlogdetResult:
    """(sign, log|det|) of each square matrix from LU's pivots; singular: (0, -inf), as NumPy."""
    a = square(x, "slogdet")
    if a.shape[-1] == 0:
        one = a.reshape(*a.shape[:-2], 0).sum(-1) + 1.0
        return SlogdetResult(one, one * 0.0)
    _, _, _, sign, logabs = _eliminate(a, None, jordan=False)
    return SlogdetResult(sign, logabs)


def det(x, /) -> Tensor:
    """The determinant of each square matrix: the product of LU's pivots, signed by the row permutation."""
    a = square(x, "det")
    if a.shape[-1] == 0:
        return a.reshape(*a.shape[:-2], 0).sum(-1) + 1.0
    return _eliminate(a, None, jordan=False)[2]


def qr(x, /, *, mode: str = "reduced") -> QRResult:
    """Q R = x by Householder reflections on the device: Q orthogonal, R upper triangular; "reduced": Q
    (..., m, k), R (..., k, n) with k = min(m, n); "complete": Q (..., m, m), R (..., m, n)."""
    if mode not in ("reduced", "complete"):
        raise TruenoValueError(f'linalg.qr: mode must be "reduced" or "complete"; got {mode!r:.40}')
    a = floats(x, "qr")
    m, n = a.shape[-2:]
    r = rows(a, m)
    q = identity(a, m)
    for j in range(min(m - 1, n)):
        col = (r >= j).where(a[..., :, j], 0.0)
        s = (a[..., j, j] >= 0.0).where(1.0, -1.0)
        v = col + (r == j).where((s * col.norm_l2(-1))[..., None], 0.0)
        size = v.norm_l2(-1)[..., None]
        v = (size > 0.0).where(v / size, 0.0)
        a = a - 2.0 * v[..., :, None] * (v[..., :, None] * a).sum(-2)[..., None, :]
        q = q - 2.0 * (q * v[..., None, :]).sum(-1)[..., :, None] * v[..., None, :]
    a = (r[:, None] <= rows(a, n)[None, :]).where(a, 0.0)
    if mode == "complete" or m <= n:
        return QRResult(q, a)
    return QRResult(q[..., :, :n], a[..., :n, :])


def matrix_power(x, n, /) -> Tensor:
    """x to the integer power n by repeated squaring (matmul); n = 0: the identity; n < 0: inv(x) ** -n."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TruenoTypeError(f"linalg.matrix_power: n must be an int; got {type(n).__name__}")
    a = square(x, "matrix_power")
    if n < 0:
        a, n = inv(a), -n
    out = None
    while n:
        if n & 1:
            out = a if out is None else out @ a
        n >>= 1
        if n:
            a = a @ a
    return identity(a, a.shape[-1]) if out is None else out

"""matrix_norm, pinv and matrix_rank: from the singular values (svd.py's one-sided Jacobi) where the
standard asks for them, else from reductions. Coroutines, like svd: `await` them."""

from __future__ import annotations

import math

from ..dtypes import real_dtype
from ..errors import TruenoTypeError, TruenoValueError
from ..tensor import Tensor
from .args import eps, floats
from .jacobi import svd, svdvals

NORMS = ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)


async def matrix_norm(x, /, *, keepdims: bool = False, ord="fro") -> Tensor:
    """The `ord` norm of each matrix: "fro", "nuc" (sum of singular values), 1/-1 (largest/smallest column
    sum of |x|), inf/-inf (row sums), 2/-2 (largest/smallest singular value). Await it."""
    a = floats(x, "matrix_norm")
    if isinstance(ord, bool) or ord not in NORMS:
        raise TruenoValueError(f"linalg.matrix_norm: ord must be one of {NORMS}; got {ord!r:.40}")
    if ord == "fro":
        out = a.norm_l2((-2, -1))
    elif ord in (1, -1, math.inf, -math.inf):
        sums = a.abs().sum(-2 if ord in (1, -1) else -1)
        out = sums.max(-1) if ord > 0 else sums.min(-1)
    else:
        s = await svdvals(a)
        out = s.sum(-1) if ord == "nuc" else s.max(-1) if ord == 2 else s.min(-1)
    return out.reshape(*out.shape, 1, 1) if keepdims else out


def _rtol(a: Tensor, rtol):
    """The cutoff factor of each matrix, to multiply its largest singular value (keepdims): a number, or a
    tensor broadcast against the batch shape (the standard's per-matrix rtol)."""
    if rtol is None:
        return max(a.shape[-2:]) * eps(a)
    if isinstance(rtol, Tensor):
        if rtol.dtype.kind != "float" and not rtol.dtype.integral:
            raise TruenoTypeError(f"linalg: rtol must be real numbers, got a {rtol.dtype} tensor")
        return rtol.astype(real_dtype(a.dtype))[..., None]  # the singular values' dtype
    if isinstance(rtol, bool) or not isinstance(rtol, (int, float)):
        raise TruenoTypeError(f"linalg: rtol must be a number or a tensor, got {rtol!r:.40}")
    return float(rtol)


async def pinv(x, /, *, rtol=None) -> Tensor:
    """The Moore-Penrose pseudo-inverse V diag(1/s) U^T, singular values at most rtol * max(s) dropped
    (rtol: max(M, N) * eps by default, as the standard). Await it."""
    a = floats(x, "pinv")
    u, s, vh = await svd(a, full_matrices=False)
    keep = s > s.max(-1, keepdims=True) * _rtol(a, rtol)
    inv_s = keep.where(1.0 / s, 0.0)
    return vh.mT @ (inv_s[..., :, None] * u.mT)


async def matrix_rank(x, /, *, rtol=None) -> Tensor:
    """The number of singular values above rtol * max(s), int32 (
    rtol: max(M, N) * eps by default). Await it."""
    a = floats(x, "matrix_rank")
    s = await svdvals(a)
    return (s > s.max(-1, keepdims=True) * _rtol(a, rtol)).astype("float32").sum(-1).astype("int32")

"""diagonal, trace, cross and vector_norm: views, elementwise ops and reductions of the array API's
linear algebra extension."""

from __future__ import annotations

import math

from ..errors import TruenoTypeError, TruenoValueError
from ..tensor import Tensor, concatenate
from ..tensor.views import axes_tuple, axis_index
from .args import floats, tensor


def diagonal(x, /, *, offset: int = 0) -> Tensor:
    """Diagonal `offset` (> 0 above the main one) of each matrix (..., M, N): a strided view of the flattened
    matrix, (..., k), of any dtype."""
    a = tensor(x, "diagonal")
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise TruenoTypeError(f"linalg.diagonal: offset must be an int; got {type(offset).__name__}")
    m, n = a.shape[-2:]
    k = max(0, min(m, n - offset) if offset >= 0 else min(m + offset, n))
    flat = a.reshape(*a.shape[:-2], m * n)
    if k == 0:
        return flat[..., :0]
    start = offset if offset >= 0 else -offset * n
    return flat[..., start : start + (k - 1) * (n + 1) + 1 : n + 1]


def trace(x, /, *, offset: int = 0, dtype=None) -> Tensor:
    """The sum of diagonal `offset` of each matrix, in x's dtype (bool: int32), or `dtype`."""
    out = diagonal(x, offset=offset).sum(-1)
    return out if dtype is None else out.astype(dtype)


def cross(x1, x2, /, *, axis: int = -1) -> Tensor:
    """The cross product of 3-vectors along `axis` (sizes 3 there; other dimensions broadcast)."""
    a, b = floats(x1, "cross", 1), floats(x2, "cross", 1)
    ax1, ax2 = axis_index(axis, a.ndim, "linalg.cross"), axis_index(axis, b.ndim, "linalg.cross")
    if a.shape[ax1] != 3 or b.shape[ax2] != 3:
        raise TruenoValueError(f"linalg.cross needs size 3 along axis {axis}; got shapes {a.shape} and {b.shape}")
    if axis >= 0 and a.ndim != b.ndim:
        raise TruenoValueError("linalg.cross: a non-negative axis needs inputs of one rank; pass a negative axis")
    a, b = _last(a, ax1), _last(b, ax2)
    pairs = ((1, 2), (2, 0), (0, 1))
    out = concatenate([a[..., i, None] * b[..., j, None] - a[..., j, None] * b[..., i, None] for i, j in pairs], -1)
    return _last(out, out.ndim - 1, back=axis)


def _last(t: Tensor, axis: int, back: int | None = None) -> Tensor:
    """t with `axis` moved last (or, with `back`, the last axis moved to `back`)."""
    order = list(range(t.ndim))
    if back is None:
        order.append(order.pop(axis))
    else:
        order.insert(back % t.ndim, order.pop())
    return t.permute(order)


def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2) -> Tensor:
    """The `ord`-norm over `axis` (None: all of it): 2 (default), 1, inf, -inf, 0 (count of non-zeros), any
    other p: sum(|x|^p)^(1/p). No rescaling: |x|^p past float32's range overflows (see docs/linalg.md)."""
    a = floats(x, "vector_norm", 0)
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TruenoTypeError(f"linalg.vector_norm: ord must be a number; got {type(ord).__name__}")
    axes = axes_tuple(axis, a.ndim, "linalg.vector_norm")
    if ord == 2:
        return a.norm_l2(axes, keepdims)
    if ord == 1:
        return a.norm_l1(axes, keepdims)
    if ord == math.inf:
        return a.abs().max(axes, keepdims)
    if ord == -math.inf:
        return a.abs().min(axes, keepdims)
    if ord == 0:
        return (a != 0.0).astype("float32").sum(axes, keepdims)
    return (a.abs() ** float(ord)).sum(axes, keepdims) ** (1.0 / ord)

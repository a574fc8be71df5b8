"""Scans and logical reductions of tensors, as the array API names them: cumulative_sum and cumulative_prod
(the catalog's SCAN rows along one axis), all, any and count_nonzero (the catalog's max, min and sum of the
input read as bool: one reduction kernel with the conversion fused in), and diff (views and a `sub`, no
kernel of its own). The Tensor class mixes these in."""

from __future__ import annotations

import math

from .. import ops
from ..dtypes import bool_, can_cast, dtype_of
from ..errors import TruenoTypeError, TruenoValueError
from .views import axes_tuple, axis_index


class Scans:
    """The scan methods of Tensor. Besides the Views and Reductions mixins' needs, the class supplies the hooks
    `_apply(op, inputs, params, options)`, `_const(value)` and `_tensors(args)`."""

    __slots__ = ()

    def cumulative_sum(self, axis=None, dtype=None, include_initial: bool = False):
        """The running sum along `axis` (needed past 1-D); `dtype`: the input converted to it first (of the same
        kind); `include_initial`: a leading 0 (the axis one longer). bool sums as int32; float32 partial sums
        may round in another order than NumPy's sequential one."""
        return _scan("cumulative_sum", self, axis, dtype, include_initial)

    def cumulative_prod(self, axis=None, dtype=None, include_initial: bool = False):
        """The running product along `axis`; see cumulative_sum (the initial value is 1)."""
        return _scan("cumulative_prod", self, axis, dtype, include_initial)

    def all(self, axis=None, keepdims=False):
        """Is every element along `axis` (None: all of it) nonzero (NaN counts)? bool; True where the axis is
        empty."""
        return _logical(self, "min", axis, keepdims, True)

    def any(self, axis=None, keepdims=False):
        """Is any element along `axis` nonzero (NaN counts)? bool; False where the axis is empty."""
        return _logical(self, "max", axis, keepdims, False)

    def count_nonzero(self, axis=None, keepdims=False):
        """How many elements along `axis` are nonzero (NaN counts), as int32."""
        axes_tuple(axis, self.ndim, "count_nonzero")  # its own name in an axis error
        return self.astype(bool_, copy=False).sum(axis, keepdims)

    def diff(self, axis: int = -1, n: int = 1, prepend=None, append=None):
        """The n-th forward difference along `axis` (x[1:] - x[:-1], n times; bool: x[1:] != x[:-1]), after
        joining `prepend` and `append` (numbers or tensors, their length 1 along the axis where numbers) at
        either end of the axis, as NumPy's diff."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise TruenoValueError(f"diff: n is a non-negative int, got {n!r}")
        if self.ndim == 0:
            raise TruenoValueError("diff needs at least one dimension; got a 0-d tensor")
        a = axis_index(axis, self.ndim, "diff")
        before = [] if prepend is None else [_along(self._tensors([self, prepend])[1], self, a)]
        after = [] if append is None else [_along(self._tensors([self, append])[1], self, a)]
        out = _join([*before, self, *after], a) if before or after else self
        for _ in range(n):
            if out.shape[a] == 0:
                break
            hi, lo = ((slice(None),) * a + (slice(1, None),), (slice(None),) * a + (slice(0, -1),))
            out = out[hi] != out[lo] if out.dtype == bool_ else out[hi] - out[lo]
        return out


def _scan(name: str, t, axis, dtype, include_initial: bool):
    """The catalog's scan along `axis`: that axis moved last, the tensor as rows of it (row-major: the scan
    kernel reads rows flat), scanned, and moved back (a view)."""
    op = ops.get(name)
    if t.ndim == 0:
        raise TruenoValueError(f"{name} needs at least one dimension; got a 0-d tensor")
    if axis is None:
        if t.ndim > 1:
            raise TruenoValueError(f"{name} of a {t.ndim}-d tensor needs axis= (an int): which axis to run along")
        axis = 0
    a = axis_index(axis, t.ndim, name)
    if dtype is not None:
        target = dtype_of(dtype)
        if target not in op.dtypes or not can_cast(t.dtype, target):
            have = ", ".join(d.name for d in op.dtypes)
            raise TruenoTypeError(
                f"{name} of {t.dtype.name} with dtype={target.name}: the array API casts only within a kind "
                f"(bool to any) and {name} computes in {have}; convert first, e.g. x.astype(tw.{target.name})"
            )
        t = t.astype(target, copy=False)
    order = [d for d in range(t.ndim) if d != a] + [a]
    moved = t if a == t.ndim - 1 else t.permute(order)
    rows = math.prod(moved.shape[:-1])
    out = t._apply(op, [moved.contiguous()], (), {"rows": rows})
    if include_initial:
        widths = [(0, 0)] * out.ndim
        widths[-1] = (1, 0)
        padded = out.pad(widths)  # reads 0 before the row: cumulative_sum's initial value
        if name == "cumulative_prod":
            padded = out._const(True).expand(out.shape).pad(widths).where(padded, 1)
        out = padded
    if a == t.ndim - 1:
        return out
    back = [0] * t.ndim
    for d, o in enumerate(order):
        back[o] = d
    return out.permute(back)


def _logical(t, extreme: str, axis, keepdims: bool, empty: bool):
    """max (any) or min (all) of t read as bool, fused into one reduction kernel; `empty`: the value along an
    empty axis (max and min have none of their own)."""
    name = "any" if extreme == "max" else "all"
    axes = axes_tuple(axis, t.ndim, name)
    if all(t.shape[d] for d in axes):
        return getattr(t.astype(bool_, copy=False), extreme)(axis, keepdims)
    shape = tuple(1 if d in axes else n for d, n in enumerate(t.shape) if keepdims or d not in axes)
    value = t._const(empty)
    return value.reshape((1,) * len(shape)).expand(shape) if shape else value


def _along(p, x, a: int):
    """prepend/append `p` as diff joins it: a 0-d one broadcast to x's shape with length 1 along axis `a`."""
    if p.ndim == 0:
        return p.reshape((1,) * x.ndim).expand(tuple(1 if d == a else n for d, n in enumerate(x.shape)))
    if p.ndim != x.ndim:
        raise TruenoValueError(f"diff: prepend/append of shape {p.shape} does not join {x.shape} along axis {a}")
    return p


def _join(parts: list, a: int):
    """The tensors joined along axis `a` (join.concatenate's padded views, combined with | for bools so that
    they stay bool)."""
    rest = {p.shape[:a] + p.shape[a + 1 :] for p in parts}
    if len(rest) > 1:
        raise TruenoValueError(f"diff: prepend/append must match x but along axis {a}; got shapes {sorted(rest)}")
    total, before, out = sum(p.shape[a] for p in parts), 0, None
    for p in parts:
        widths = [(0, 0)] * p.ndim
        widths[a] = (before, total - before - p.shape[a])
        padded = p.pad(widths)
        out = padded if out is None else (out | padded if out.dtype == padded.dtype == bool_ else out + padded)
        before += p.shape[a]
    return out

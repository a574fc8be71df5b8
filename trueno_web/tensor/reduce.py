"""Reductions of tensors: the catalog's reductions along axes, mean/var/std, argmax/argmin and
softmax/log_softmax, written with the catalog's reductions and elementwise ops so they fuse with what
feeds them and what uses them. The Tensor class mixes these in."""

from __future__ import annotations

import array
import math

from .. import ops
from ..dtypes import INDEX, float32, float64, int64
from ..errors import TruenoValueError
from ..kinds import Kind
from .views import axes_tuple, axis_index

ONE_ROW_MAX = 1 << 16  # a single row longer than this reduces as a full reduction (many workgroups, no loop limit)


class Reductions:
    """The reduction methods of Tensor. Besides the Views mixin's needs, the class supplies the hook
    `_apply(op, inputs, params, options)`: a tensor of a catalog op on tensors, its shape from the op's
    kind (which checks it)."""

    __slots__ = ()

    def mean(self, axis=None, keepdims=False):
        n = _count(self, axis)
        total = _floats(self).sum(axis, keepdims)
        return total * (1.0 / n) if n else total * math.nan

    def var(self, axis=None, keepdims=False, *, correction: float = 0.0):
        """The variance: sum((x - mean)^2) / (n - correction) (the standard's correction is NumPy's ddof);
        NaN where n - correction <= 0. The reduced axes are moved last first (a view of the input), so the
        centring happens in the rows' own layout: one row step, not a view of the centred values copied."""
        axes = axes_tuple(axis, self.ndim, "var")
        kept = [d for d in range(self.ndim) if d not in axes]
        x, last = _floats(self), tuple(range(len(kept), self.ndim))
        if tuple(sorted(axes)) != last:
            x = x.permute(kept + sorted(axes))
        centred = x - x.mean(last, keepdims=True)
        n = _count(self, axis) - correction
        total = (centred * centred).sum(last)
        if keepdims:
            total = total.reshape(tuple(1 if d in axes else size for d, size in enumerate(self.shape)))
        return total * (1.0 / n) if n > 0 else total * math.nan

    def std(self, axis=None, keepdims=False, *, correction: float = 0.0):
        """sqrt(var): see var."""
        return self.var(axis, keepdims, correction=correction).sqrt()

    def argmax(self, axis=None, keepdims=False):
        """Index of the first largest element along `axis` (None: of the flattened tensor), as int32; the
        first NaN where there is one, as NumPy."""
        return _arg(self, axis, keepdims, "max")

    def argmin(self, axis=None, keepdims=False):
        """Index of the first smallest element along `axis`; see argmax."""
        return _arg(self, axis, keepdims, "min")

    def softmax(self, axis: int = -1):
        return _softmax("softmax", self, axis)

    def log_softmax(self, axis: int = -1):
        return _softmax("log_softmax", self, axis)


def _floats(t):
    """t as a float: mean, var and std of bools and 32-bit integers are float32, of int64 float64 (NumPy's)
    (an integer sum would wrap); a complex mean is complex."""
    return t if t.dtype.kind in ("float", "complex") else t.astype(float64 if t.dtype is int64 else float32)


def _count(t, axis) -> int:
    return math.prod(t.shape[a] for a in axes_tuple(axis, t.ndim, "mean"))


def _reduce(name: str, t, axis, keepdims: bool):
    """A reduction over `axis` (None: all): rows of the reduced axes, one per element of the kept ones."""
    op = ops.get(name)
    axes = axes_tuple(axis, t.ndim, name)
    kept = [d for d in range(t.ndim) if d not in axes]
    out_shape = (
        tuple(1 if d in axes else t.shape[d] for d in range(t.ndim)) if keepdims else tuple(t.shape[d] for d in kept)
    )
    if not axes:
        return t.contiguous().reshape(out_shape)
    rows = math.prod(t.shape[d] for d in kept)
    if not kept or (rows == 1 and t.size > ONE_ROW_MAX):  # all of it: the full reduction reads row-major memory
        out = t._apply(op, [t.contiguous()])
    else:  # rows of the reduced axes: the row kernel reads any view, and the chain feeding it
        order = kept + list(axes)
        out = t._apply(op, [t if order == sorted(order) else t.permute(order)], (), {"rows": rows})
    return out if out.shape == out_shape else out.reshape(out_shape)


def _arg(t, axis, keepdims: bool, extreme: str):
    """min over `axis` of where(t is the extreme or NaN, its index, n): two reductions, one row kernel (in
    float32: exact for axes shorter than 2^24), as int32."""
    if axis is None:
        out = _arg(t.reshape(-1), 0, False, extreme)
        return out.reshape((1,) * t.ndim) if keepdims else out
    a = axis_index(axis, t.ndim, f"arg{extreme}")
    n = t.shape[a]
    if n == 0:
        raise TruenoValueError(f"arg{extreme} along an empty axis (axis {axis} of {t.shape}) has no value")
    index = t._const(array.array("f", range(n))).reshape([n if d == a else 1 for d in range(t.ndim)])
    hit = (t == _reduce(extreme, t, a, True)) | (t != t)
    return hit.where(index, float(n)).min(a, keepdims=keepdims).astype(INDEX)


def _softmax(name: str, t, axis: int):
    """Written with tensor ops, so it is one row kernel with what feeds it and what uses it (the catalog's
    softmax kernel serves one-shot calls and batches): exp(x - max) / sum, or x - max - log(sum(exp))."""
    if t.ndim == 0:
        raise TruenoValueError(f"{name} needs at least one dimension; got a 0-d tensor")
    a = axis_index(axis, t.ndim, name)
    if t.shape[a] == 0:
        return t
    shifted = t - t.max(a, keepdims=True)
    if name == "softmax":
        e = shifted.exp()
        return e / e.sum(a, keepdims=True)
    return shifted - shifted.exp().sum(a, keepdims=True).log()


ACCUMULATING = ("sum", "prod")  # the standard's reductions with dtype=: the input converted to it first


def _along_axes(op: ops.Op):
    """The Tensor method of a one-input catalog reduction: over `axis` (None: all of it), keepdims as NumPy;
    sum and prod take the standard's `dtype=` too."""

    def method(self, axis=None, keepdims=False):
        return _reduce(op.name, self, axis, keepdims)

    def accumulating(self, axis=None, keepdims=False, *, dtype=None):
        return _reduce(op.name, self if dtype is None else self.astype(dtype, copy=False), axis, keepdims)

    method = accumulating if op.name in ACCUMULATING else method

    method.__name__ = method.__qualname__ = op.name
    method.__doc__ = f"{op.doc}, along `axis` (an int, a tuple, or None: all of it); keepdims as in NumPy."
    return method


for _op in ops.CATALOG:  # sum, max, min, prod, norm_l1, norm_l2: one method per row
    if _op.kind == Kind.REDUCE and _op.arity == 1:
        setattr(Reductions, _op.name, _along_axes(_op))

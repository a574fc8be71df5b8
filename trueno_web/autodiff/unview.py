"""The adjoint of a view: a cotangent of a view's shape back onto its base's shape.

A view (layout.View) reads its base's flat storage at offset + sum(i_d * stride_d), inside a valid box
(`mask`; outside it reads 0.0). Its adjoint sends each valid element's cotangent to the base element it
read: broadcast dimensions (stride 0) sum, masked-out elements send nothing, every other element has one
base element (views never overlap otherwise). One rule for every movement op (reshape, permute, expand,
slicing, indexing, pad, concatenate's padded inputs), since they all end as a View.

Where the view is a box of its base (slices with step 1, integer indices, permutes, pads) the adjoint is
a view again: the cotangent permuted into the base's order and zero-padded around the box, which fuses
into what reads it. Otherwise (steps other than 1, reshapes of slices) the cotangent is spread out with
pad and reshape, one dimension at a time, as tinygrad builds strided views.
"""

from __future__ import annotations

import math

from ..errors import TruenoError
from ..layout import contiguous_strides


def unview(g, view, base_shape: tuple[int, ...], zeros_like):
    """The cotangent of the base of `view`, given `g`, the cotangent of the view (a Tensor of view.shape).
    `zeros_like(shape)` makes a zero tensor on g's device."""
    if math.prod(view.shape) == 0 or math.prod(base_shape) == 0:
        return zeros_like(base_shape)
    if view.identity and math.prod(view.shape) == math.prod(base_shape):  # a reshape (a prefix is a box)
        return g.reshape(base_shape)
    shape, strides, offset = list(view.shape), list(view.strides), view.offset
    if view.mask is not None:
        if any(lo >= hi for lo, hi in view.mask):
            return zeros_like(base_shape)
        g = g[tuple(slice(lo, hi) for lo, hi in view.mask)]
        offset += sum(lo * s for (lo, _), s in zip(view.mask, strides))
        shape = [hi - lo for lo, hi in view.mask]
    broadcast = tuple(d for d in range(len(shape)) if strides[d] == 0 and shape[d] > 1)
    if broadcast:
        g = g.sum(broadcast, keepdims=True)
        for d in broadcast:
            shape[d] = 1
    ones = tuple(d for d in range(len(shape)) if shape[d] == 1)
    if ones:
        g = g.squeeze(ones)
    dims = [(n, s) for n, s in zip(shape, strides) if n != 1]
    flips = tuple(slice(None, None, -1) if s < 0 else slice(None) for _, s in dims)
    if any(s < 0 for _, s in dims):
        g = g[flips]
        offset += sum((n - 1) * s for n, s in dims if s < 0)
        dims = [(n, abs(s)) for n, s in dims]
    order = sorted(range(len(dims)), key=lambda d: -dims[d][1])
    if order != list(range(len(dims))):
        g = g.permute(order)
        dims = [dims[d] for d in order]
    boxed = _box(g, dims, offset, base_shape)
    if boxed is not None:
        return boxed
    merged = _merge(dims)
    if len(merged) < len(dims):
        g = g.reshape([n for n, _ in merged])
        boxed = _box(g, merged, offset, base_shape)
        if boxed is not None:
            return boxed
    return _spread(g, merged, offset, base_shape)


def _merge(dims: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Neighbouring dimensions that step through storage as one (stride_d = n_{d+1} * stride_{d+1}) joined."""
    out = []
    for n, s in dims:
        if out and out[-1][1] == n * s:
            out[-1] = (out[-1][0] * n, s)
        else:
            out.append((n, s))
    return out


def _box(g, dims, offset: int, base_shape):
    """The base's cotangent as a padded view of g, where the view reads a box of the base (each dimension
    one of the base's, with the base's own stride); else None."""
    cs = contiguous_strides(tuple(base_shape))
    total = math.prod(base_shape)
    if not 0 <= offset < total:
        return None
    starts = [(offset // c) % n if n else 0 for n, c in zip(base_shape, cs)]
    of_base, j = [], 0
    for n, s in dims:
        while j < len(base_shape) and (cs[j] != s or base_shape[j] == 1):
            j += 1
        if j == len(base_shape) or starts[j] + n > base_shape[j]:
            return None
        of_base.append(j)
        j += 1
    if sum(st * c for st, c in zip(starts, cs)) != offset:
        return None
    for j in range(len(base_shape)):
        if j not in of_base:
            g = g.unsqueeze(j)
    widths = []
    for j, n in enumerate(base_shape):
        extent = dims[of_base.index(j)][0] if j in of_base else 1
        widths.append((starts[j], n - starts[j] - extent))
    return g.pad(widths) if any(w != (0, 0) for w in widths) else g


def _spread(g, dims, offset: int, base_shape):
    """The base's cotangent built from the innermost dimension out: each block of a dimension padded to its
    stride, the blocks joined, then the whole placed at `offset` in the flat base."""
    t, length = g.unsqueeze(-1), 1
    for d in range(len(dims) - 1, -1, -1):
        n, s = dims[d]
        if length > s:
            raise TruenoError("this view reads some base elements more than once; its gradient is not defined")
        t = t.pad([(0, 0)] * (t.ndim - 1) + [(0, s - length)])
        t = t.reshape(t.shape[:-2] + (n * s,))[..., : (n - 1) * s + length]
        length = (n - 1) * s + length
    total = math.prod(base_shape)
    return t.pad([(offset, total - offset - length)]).reshape(base_shape)
